#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh stage 1 (/init of the initramfs that scripts/vm/run.sh builds, run
# by the static busybox): load the modules a 9p root needs, mount the root
# (9p tag "hostroot", read-only) under a tmpfs overlay, mount the extra
# shares, and hand over to stage 2 (stt.init= on the kernel command line).
#
# Kernel command line:
#   stt.init=PATH        stage 2, a path inside the new root
#   stt.mnt=TAG:PATH     also mount 9p share TAG at PATH of the new root,
#                        under an overlay of its own (repeatable): the
#                        checkout and the job directory when the root is
#                        not the host's
#   stt.modlink=PATH     the booted kernel's modules are at PATH, not at
#                        /lib/modules/$(uname -r) of the root: link them
#                        there, so that modprobe finds the kernel's own

/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /dev /proc /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
fail() {
	echo "vm-run stage 1: $*"
	echo o >/proc/sysrq-trigger || echo o >/root/proc/sysrq-trigger
	sleep 60
}
# shellcheck disable=SC2013 # one module name per line, no spaces
for m in $(cat /modules.order); do
	insmod "/lib/modules/$m" || fail "insmod $m failed"
done

init=
mnts=
modlink=
# shellcheck disable=SC2013 # the command line is words
for arg in $(cat /proc/cmdline); do
	case $arg in
	stt.init=*) init=${arg#stt.init=} ;;
	stt.mnt=*) mnts="$mnts ${arg#stt.mnt=}" ;;
	stt.modlink=*) modlink=${arg#stt.modlink=} ;;
	esac
done

ninep=trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose
mkdir -p /lower /rw /root
mount -t 9p -o $ninep hostroot /lower || fail "cannot mount the 9p root"
mount -t tmpfs -o mode=0755 rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work \
	overlay /root || fail "cannot mount the overlay"

n=0
for m in $mnts; do
	n=$((n + 1))
	tag=${m%%:*}
	path=${m#*:}
	mkdir -p "/lower$n" "/rw/upper$n" "/rw/work$n" "/root$path"
	mount -t 9p -o $ninep "$tag" "/lower$n" || fail "cannot mount 9p share $tag"
	mount -t overlay -o "lowerdir=/lower$n,upperdir=/rw/upper$n,workdir=/rw/work$n" \
		overlay "/root$path" || fail "cannot mount the overlay on $path"
done
[ -x "/root$init" ] || fail "no stage 2 init '$init'"

if [ -n "$modlink" ]; then
	r=$(uname -r)
	mkdir -p /root/lib/modules
	[ -e "/root/lib/modules/$r" ] || ln -s "$modlink" "/root/lib/modules/$r"
fi

# The API file systems, mounted here by the static busybox in RAM:
# cheaper than exec'ing the root's tools over 9p under TCG.
r=/root
mount --move /dev $r/dev
mount --move /proc $r/proc
mount -t sysfs sysfs $r/sys
mkdir -p $r/dev/pts $r/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $r/dev/pts
mount -t tmpfs -o mode=1777 shm $r/dev/shm
mount -t tmpfs -o mode=0755 run $r/run
mkdir -p $r/run/lock $r/run/netns
mount -t debugfs debugfs $r/sys/kernel/debug
mount -t tracefs tracefs $r/sys/kernel/tracing 2>/dev/null
mount -t cgroup2 cgroup2 $r/sys/fs/cgroup 2>/dev/null
for f in fd:/proc/self/fd stdin:/proc/self/fd/0 stdout:/proc/self/fd/1 \
	stderr:/proc/self/fd/2; do
	ln -sf ${f#*:} $r/dev/${f%%:*}
done
hostname stt-vm
echo stt-vm >$r/etc/hostname
ip link set lo up
stty -F $r/dev/ttyS1 raw -echo
stty -F $r/dev/ttyS2 raw -echo
exec switch_root /root "$init"
