#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh stage 2: PID 1 in the guest after switch_root into the overlay root.
# Mounts the API file systems, loads the modules, runs the job's command,
# unloads the modules, reports on the result channel and powers off.
#
# Job file (written by scripts/vm/run.sh, path from stt.job= on the command
# line): bash assignments of JOB_CWD, JOB_SRCDIR, JOB_MODULES (array of .ko
# paths), JOB_ENV (array of NAME=VAL) and JOB_CMD (array).
#
# Result channel (/dev/ttyS2), one record a line:
#   STT-BOOTED <uptime>           stage 2 runs (nothing of ours loaded yet)
#   STT-RUNNING <uptime>          about to run the command
#   STT-INSMOD-FAIL <text>        a module did not load (the command is skipped)
#   STT-STATUS <n>                the command's exit status
#   STT-RMMOD-FAIL <text>         a module did not unload
#   STT-KMEMLEAK-BEGIN/END        kmemleak report (kernels with kmemleak)
#   STT-DMESG-BEGIN/END           the kernel log
#   STT-DONE                      all of the above was sent
# Command output goes to /dev/ttyS1; the kernel console is /dev/ttyS0.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

OUT=/dev/ttyS1
RES=/dev/ttyS2

power_off() {
	sync
	busybox poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 60
}

# Stage 1 normally did all this already (see scripts/vm/run.sh).
if [ ! -e /proc/self ]; then
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	[ -e /dev/null ] || mount -t devtmpfs devtmpfs /dev
	mkdir -p /dev/pts /dev/shm
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
	mount -t tmpfs -o mode=1777 shm /dev/shm
	mount -t tmpfs -o mode=0755 run /run
	mkdir -p /run/lock /run/netns
	mount -t debugfs debugfs /sys/kernel/debug
	ln -sf /proc/self/fd /dev/fd
	hostname stt-vm
	ip link set lo up
	stty -F "$OUT" raw -echo
	stty -F "$RES" raw -echo
fi
exec 3>"$RES"
read -r up _ </proc/uptime
echo "STT-BOOTED $up" >&3

job=
read -r -a args </proc/cmdline
for arg in "${args[@]}"; do
	case $arg in
	stt.job=*) job=${arg#stt.job=} ;;
	esac
done
# shellcheck source=/dev/null
if [ -z "$job" ] || ! . "$job"; then
	echo "vm-init: no job file '$job'" >/dev/console
	power_off
fi

modname() {
	local n

	n=$(modinfo -F name "$1" 2>/dev/null)
	[ -n "$n" ] || { n=${1##*/}; n=${n%%.ko*}; }
	echo "${n//-/_}"
}

# In-tree dependencies (e.g. openvswitch) come from modprobe; ours are
# loaded in the order given.
ours=" "
for ko in "${JOB_MODULES[@]}"; do
	ours+="$(modname "$ko") "
done

loaded=()
load_ok=1
for ko in "${JOB_MODULES[@]}"; do
	deps=$(modinfo -F depends "$ko" 2>/dev/null)
	for dep in ${deps//,/ }; do
		[[ $ours == *" $dep "* ]] || modprobe -q "$dep"
	done
	if err=$(insmod "$ko" 2>&1); then
		loaded+=("$(modname "$ko")")
	else
		echo "STT-INSMOD-FAIL insmod $ko failed: $err" >&3
		load_ok=
		break
	fi
done

status=125
if [ -n "$load_ok" ]; then
	cd "$JOB_CWD" 2>/dev/null || cd /
	read -r up _ </proc/uptime
	echo "STT-RUNNING $up" >&3
	env -i PATH="$PATH" HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
		LANG=C.UTF-8 STT_VM=1 "${JOB_ENV[@]}" "${JOB_CMD[@]}" \
		</dev/null >"$OUT" 2>&1
	status=$?
else
	echo "STT-RUNNING -" >&3
fi
echo "STT-STATUS $status" >&3

# Leftover processes could pin the modules.
kill -TERM -1 2>/dev/null && sleep 0.5
kill -KILL -1 2>/dev/null
cd /

for ((i = ${#loaded[@]} - 1; i >= 0; i--)); do
	m=${loaded[i]}
	[ -d "/sys/module/$m" ] || continue	# the command unloaded it
	if ! err=$(timeout 120 rmmod "$m" 2>&1); then
		echo "STT-RMMOD-FAIL rmmod $m failed: $err" >&3
	fi
done

if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 5
	echo scan >/sys/kernel/debug/kmemleak
	echo STT-KMEMLEAK-BEGIN >&3
	cat /sys/kernel/debug/kmemleak >&3
	echo STT-KMEMLEAK-END >&3
fi

echo STT-DMESG-BEGIN >&3
dmesg --color=never >&3
echo STT-DMESG-END >&3
echo STT-DONE >&3
exec 3>&-	# the last close waits for the UART to drain
power_off
