#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh: run a command as root inside a throwaway QEMU guest booting a
# Debian kernel, with freshly built modules loaded, and fail on any kernel
# problem.
#
#   scripts/vm/run.sh [options] -- CMD [ARGS...]
#
# The guest's root file system is the host's "/" (virtio-9p, read-only) under
# an overlay with a tmpfs upper layer: every host tool is there, the checkout
# is at the same path, writes are thrown away at power off. CMD runs in the
# caller's working directory with a clean environment.
#
# Output: CMD's stdout and stderr (merged) stream live to our stdout; the
# kernel console goes to a log file (see --keep-log); progress lines go to
# stderr, all starting with "vm-run: ".
#
# Exit status: CMD's exit status, or
#   124  timeout (the guest did not power off in time)
#   125  kernel problem: WARNING/BUG/oops/panic/leak in the kernel log, a
#        module failed to load or unload, or the guest died before reporting
#   2    usage error; 1 set-up error on the host
# With STT_VMRUN_PROBLEMS=FILE in the environment, each problem found is
# also appended to FILE, a line each (scripts/check/check.sh's summary).
#
# Channels: ttyS0 kernel console (file), ttyS1 CMD output (file, followed
# live), ttyS2 results (booted, status, module load/unload, kmemleak,
# dmesg).
# Stage 1 (scripts/vm/stage1.sh) is a cached busybox initramfs that mounts the
# root; stage 2 is scripts/vm/init.sh (PID 1 after switch_root), which reads a
# job file that we write to a temporary directory (visible to the guest
# through the 9p root, or through a share of its own with --root).

set -e

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${STT_CACHE:-/var/tmp/stt-cache}
ME=vm-run

usage() {
	cat <<-EOF
	Usage: scripts/vm/run.sh [options] -- CMD [ARGS...]

	Boot a Debian kernel in QEMU, load the module(s), run CMD as root in the
	current directory, unload the module(s), check the kernel log.

	Options:
	  --root DIR           the guest's root file system (default: the host's
	                       /); e.g. a Debian 13 root from scripts/vm/root.sh.
	                       The repository and the job are shared in at their
	                       host paths; run from inside the repository
	  --kernel R           kernel release (default: \$KERNELRELEASE, else
	                       scripts/build/find-kernel.sh with the host's root, else
	                       the newest in DIR/boot: $(default_release))
	  --kernel-image PATH  kernel image (default: ROOT/boot/vmlinuz-R)
	  --modules-dir PATH   module tree for R (default: ROOT/lib/modules/R;
	                       another one is linked there in the guest, so
	                       modprobe uses the booted kernel's own modules)
	  --modules "A.ko B.ko"
	                       modules to insmod, in order, unloaded in reverse
	                       (relative paths: current directory, else the
	                       repository top; default: every *.ko at the top)
	  --no-load            load no module
	  --env NAME=VAL       set a variable for CMD (repeatable); --env NAME
	                       passes the host's value
	  --smp N              guest CPUs (default 2)
	  --mem MB             guest memory (default 2048)
	  --timeout SEC        whole-run timeout (default 1200)
	  --append ARGS        extra kernel command line
	  --keep-log FILE      save the full kernel console log to FILE (and that of
	                       a boot that crashed and was retried to FILE.bootN)
	  --qemu-arg ARG       append ARG to QEMU's command line (repeatable;
	                       e.g. a NIC, see scripts/vm/net.sh)
	  --tcg-multi          TCG with a host thread per vCPU, faster with
	                       --smp 2 and more; the default is one thread for
	                       all vCPUs (they run in turn) because under
	                       QEMU 7.2's multi-threaded TCG a vCPU can run
	                       kernel code another one is patching (kprobes,
	                       static keys, BPF), and the guest dies: see
	                       scripts/vm/tcg-hazard.sh
	  --icount SHIFT       TCG, one thread, guest time counted in executed
	                       instructions (2^SHIFT ns each): timings that do
	                       not depend on the host's load (benchmarks)
	  -h, --help           this text

	CMD's environment: PATH, HOME=/root, LANG=C.UTF-8, STT_VM=1,
	STT_MODULE_DIR=<repository top>, STT_MODULES=<loaded .ko paths>, plus --env.
	Set STT_VM_KVM=1 to try KVM first (falls back to TCG).

	Exit: CMD's status; 124 timeout; 125 kernel problem (WARNING, BUG, oops,
	panic, leak, failed insmod/rmmod, guest died); 1/2 host or usage error.
	EOF
}

say() { echo "$ME: $*" >&2; }
die() { say "$*"; exit 1; }

default_release() {
	if [ "${root:-/}" = / ]; then
		"$SRCDIR/scripts/build/find-kernel.sh"
	else
		for img in "$root"/boot/vmlinuz-*; do
			[ -f "$img" ] && echo "${img##*/vmlinuz-}"
		done | sort -V | tail -n 1
	fi
}

# ---- options ---------------------------------------------------------------

release=${KERNELRELEASE:-}
root=/
kimage=
moddir=
modules=
modules_set=
noload=
smp=2
mem=2048
timeout_s=1200
append=
keep_log=
envs=()
qemu_extra=()
icount=
tcg_multi=

need_arg() { [ "$#" -ge 2 ] || { say "$1 needs an argument"; exit 2; }; }

while [ "$#" -gt 0 ]; do
	case $1 in
	--root) need_arg "$@"; root=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--kernel) need_arg "$@"; release=$2; shift 2 ;;
	--kernel-image) need_arg "$@"; kimage=$2; shift 2 ;;
	--modules-dir) need_arg "$@"; moddir=$2; shift 2 ;;
	--modules) need_arg "$@"; modules=$2; modules_set=1; shift 2 ;;
	--no-load) noload=1; shift ;;
	--env)
		need_arg "$@"
		case $2 in
		*=*) envs+=("$2") ;;
		*) [ -n "${!2+x}" ] && envs+=("$2=${!2}") ;;
		esac
		shift 2 ;;
	--smp) need_arg "$@"; smp=$2; shift 2 ;;
	--mem) need_arg "$@"; mem=$2; shift 2 ;;
	--timeout) need_arg "$@"; timeout_s=$2; shift 2 ;;
	--append) need_arg "$@"; append="$append $2"; shift 2 ;;
	--keep-log) need_arg "$@"; keep_log=$2; shift 2 ;;
	--qemu-arg) need_arg "$@"; qemu_extra+=("$2"); shift 2 ;;
	--icount) need_arg "$@"; icount=$2; shift 2 ;;
	--tcg-multi) tcg_multi=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	*) say "unknown option '$1' (try --help)"; exit 2 ;;
	esac
done
[ "$#" -gt 0 ] || { usage >&2; exit 2; }

[ -n "$release" ] || release=$(default_release)
[ -n "$release" ] || die "no kernel found (need $root/boot/vmlinuz-R and /lib/modules/R/build); run scripts/setup.sh"
rootp=${root%/}
kimage=${kimage:-$rootp/boot/vmlinuz-$release}
moddir=${moddir:-$rootp/lib/modules/$release}
moddir=$(cd "$moddir" 2>/dev/null && pwd) || die "no module directory for $release"
if [ "$root" != / ]; then
	[ -x "$root/bin/bash" ] || die "--root $root: no /bin/bash in it"
	case $PWD/ in
	"$SRCDIR"/*) ;;
	*) die "--root: run from inside the repository ($SRCDIR)" ;;
	esac
fi
[ -r "$kimage" ] || die "no kernel image '$kimage'"
[ -d "$moddir" ] || die "no module directory '$moddir'"
[ -x /bin/busybox ] || die "no /bin/busybox (package busybox-static); run scripts/setup.sh"
command -v qemu-system-x86_64 >/dev/null || die "no qemu-system-x86_64; run scripts/setup.sh"

# Module paths, absolute (the guest sees the host's paths).
kos=()
if [ -z "$noload" ]; then
	if [ -z "$modules_set" ]; then
		for f in "$SRCDIR"/*.ko; do
			[ -f "$f" ] && kos+=("$f")
		done
		[ "${#kos[@]}" -gt 0 ] ||
			die "no *.ko in $SRCDIR: build first (make module) or use --no-load"
	else
		for m in $modules; do
			case $m in
			/*) f=$m ;;
			*) if [ -f "$PWD/$m" ]; then f=$PWD/$m; else f=$SRCDIR/$m; fi ;;
			esac
			[ -f "$f" ] || die "no module '$m'"
			kos+=("$f")
		done
	fi
fi

# ---- stage-1 initramfs -----------------------------------------------------

# The =m modules stage 1 needs to mount a 9p root with an overlay on top,
# in load order.
stage1_modules() {
	local base=$1 tmp out

	# modprobe wants <dir>/lib/modules/<R>: point one at the module tree.
	tmp=$(mktemp -d)
	mkdir -p "$tmp/lib/modules"
	ln -s "$(cd "$moddir" && pwd)" "$tmp/lib/modules/$release"
	out=$(modprobe -d "$tmp" -S "$release" -a --show-depends \
		virtio_pci 9pnet_virtio 9p overlay) || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp"
	echo "$out" | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
		sed "s|^$tmp/lib/modules/$release|$base|"
}

# A kernel with all of those built in (scripts/debug/build-kernel.sh's) needs
# none of them in stage 1.
stage1_builtin() {
	local m

	for m in virtio_pci 9pnet_virtio 9p overlay; do
		grep -qE "/$m\.ko\$" "$moddir/modules.builtin" 2>/dev/null || return 1
	done
}

stage1_init() {
	cat "$SRCDIR/scripts/vm/stage1.sh"
}

build_initramfs() {
	local out=$1 dir m n=0 f

	dir=$(mktemp -d)
	mkdir -p "$dir/bin" "$dir/lib/modules"
	cp /bin/busybox "$dir/bin/busybox"
	stage1_init >"$dir/init"
	chmod 755 "$dir/init"
	: >"$dir/modules.order"
	for m in $(stage1_modules "$moddir"); do
		n=$((n + 1))
		f=$(printf '%02d-%s' "$n" "$(basename "$m")")
		case $m in
		*.ko.xz) f=${f%.xz}; xz -dc "$m" >"$dir/lib/modules/$f" ;;
		*.ko.zst) f=${f%.zst}; zstd -qdc "$m" >"$dir/lib/modules/$f" ;;
		*.ko.gz) f=${f%.gz}; gzip -dc "$m" >"$dir/lib/modules/$f" ;;
		*) cp "$m" "$dir/lib/modules/$f" ;;
		esac
		echo "$f" >>"$dir/modules.order"
	done
	[ "$n" -gt 0 ] || stage1_builtin ||
		{ rm -rf "$dir"; die "no 9p/overlay modules found in $moddir"; }
	(cd "$dir" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) |
		gzip -1 >"$out.tmp.$$"
	mv "$out.tmp.$$" "$out"
	rm -rf "$dir"
}

# Cached per kernel release; the key also covers stage 1 and the inputs.
initramfs_path() {
	local key

	key=$( {
		stage1_init
		echo "$moddir"
		stat -L -c '%s %Y' "$moddir/modules.dep" /bin/busybox
	} | sha1sum | cut -c1-12)
	echo "$CACHE/initramfs-$release-$key.cpio.gz"
}

# ---- kernel image ----------------------------------------------------------

# Under TCG, decompressing an xz bzImage takes seconds. QEMU boots an
# uncompressed ELF vmlinux with a PVH note directly: extract it once, cache it
# next to the initramfs, and fall back to the bzImage if that fails.
extract_vmlinux() {
	local in=$1 out=$2 magic cmd off

	for magic in '\xfd7zXZ\x00:xz -dc --single-stream' \
		'\x28\xb5\x2f\xfd:zstd -qdc' \
		'\x1f\x8b\x08:gzip -dc'; do
		cmd=${magic#*:}
		off=$(LC_ALL=C grep -obUaP "${magic%%:*}" "$in" 2>/dev/null |
			head -n 1 | cut -d: -f1)
		[ -n "$off" ] || continue
		tail -c +$((off + 1)) "$in" | $cmd >"$out.tmp.$$" 2>/dev/null
		if [ "$(head -c 4 "$out.tmp.$$" | od -An -c | tr -d ' ')" = '177ELF' ] &&
			readelf -n "$out.tmp.$$" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
			mv "$out.tmp.$$" "$out"
			return 0
		fi
		rm -f "$out.tmp.$$"
	done
	return 1
}

boot_image() {
	local key out

	[ "${STT_VM_BZIMAGE:-0}" = 1 ] && { echo "$kimage"; return; }
	key=$(stat -L -c '%n %s %Y' "$kimage" | sha1sum | cut -c1-12)
	out=$CACHE/vmlinux-$release-$key
	if [ -f "$out" ] || extract_vmlinux "$kimage" "$out"; then
		echo "$out"
	else
		echo "$kimage"
	fi
}

# ---- QEMU ------------------------------------------------------------------

# Print QEMU's command line, one argument per line, for one guest.
# Globals: bootimage initrd cmdline smp mem accel_args; $1: directory for the
# serial files. Extra arguments are appended (e.g. NICs for a second guest).
qemu_cmd() {
	local dir=$1

	shift
	printf '%s\n' qemu-system-x86_64 \
		-nodefaults -no-user-config -display none -no-reboot \
		"${accel_args[@]}" \
		-smp "$smp" -m "$mem" \
		-kernel "$bootimage" -initrd "$initrd" -append "$cmdline" \
		-fsdev "local,id=root,path=$root,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
		"${share_args[@]}" \
		-serial "file:$dir/console.log" \
		-serial "file:$dir/output" \
		-serial "file:$dir/result" \
		"$@"
}

# Does a kernel get to its root mount under KVM? The stock kernel can hang
# or QEMU can assert under the host's paravirtual KVM: boot without an
# initrd for at most 20 s and look for the VFS panic. Cached per release.
kvm_works() {
	local mark=$CACHE/kvm-$release d ok=

	[ -w /dev/kvm ] || return 1
	if [ ! -f "$mark" ]; then
		d=$(mktemp -d)
		(timeout -k 5 20 qemu-system-x86_64 -nodefaults -no-user-config \
			-display none -no-reboot -accel kvm -cpu host -smp 1 -m 512 \
			-kernel "$bootimage" -append "console=ttyS0 panic=-1" \
			-serial "file:$d/con" </dev/null; true) >/dev/null 2>&1
		grep -q 'VFS: Unable to mount root' "$d/con" && ok=1
		rm -rf "$d"
		echo "${ok:-0}" >"$mark"
	fi
	[ "$(cat "$mark")" = 1 ]
}

# ---- job -------------------------------------------------------------------

mkdir -p "$CACHE"
initrd=$(initramfs_path)
if [ ! -f "$initrd" ]; then
	say "building initramfs for $release"
	build_initramfs "$initrd"
fi

bootimage=$(boot_image)

accel_args=(-accel "tcg,thread=single")
accel_name="TCG one thread"
if [ -n "$icount" ]; then
	accel_args=(-accel "tcg,thread=single" -icount "shift=$icount,sleep=on")
	accel_name="TCG icount"
elif [ -n "$tcg_multi" ]; then
	accel_args=(-accel "tcg,thread=multi")
	accel_name="TCG multi-threaded"
elif [ "${STT_VM_KVM:-0}" = 1 ]; then
	if kvm_works; then
		accel_args=(-accel kvm -cpu host)
		accel_name=KVM
	else
		say "KVM does not boot a kernel here: using TCG"
	fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vm-run.XXXXXX")
qpid=
tpid=
wpid=
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local p

	for p in "$wpid" "$tpid" "$qpid"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
touch "$work/console.log" "$work/output" "$work/result"

# The job file is sourced by scripts/vm/init.sh (bash) in the guest.
{
	printf 'JOB_CWD=%q\n' "$PWD"
	printf 'JOB_SRCDIR=%q\n' "$SRCDIR"
	printf 'JOB_MODULES=('
	[ "${#kos[@]}" -gt 0 ] && printf ' %q' "${kos[@]}"
	printf ' )\n'
	printf 'JOB_ENV=('
	printf ' %q' "STT_MODULE_DIR=$SRCDIR" "STT_MODULES=${kos[*]}" "${envs[@]}"
	printf ' )\n'
	printf 'JOB_CMD=('
	printf ' %q' "$@"
	printf ' )\n'
} >"$work/job"

cmdline="console=ttyS0 loglevel=5 panic_on_warn=1 oops=panic panic=-1 printk.devkmsg=on"
cmdline="$cmdline stt.init=$SRCDIR/scripts/vm/init.sh stt.job=$work/job"

# Another root: the repository and the job directory come in as shares of
# their own, at the same paths. Modules outside ROOT/lib/modules get linked.
share_args=()
if [ "$root" != / ]; then
	# shellcheck disable=SC2054 # QEMU option values are comma lists
	share_args=(-fsdev "local,id=src,path=$SRCDIR,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=src,mount_tag=sttsrc
		-fsdev "local,id=job,path=$work,security_model=none,readonly=on"
		-device virtio-9p-pci,fsdev=job,mount_tag=sttjob)
	cmdline="$cmdline stt.mnt=sttsrc:$SRCDIR stt.mnt=sttjob:$work"
fi
if [ "$moddir" != "$rootp/lib/modules/$release" ]; then
	case $moddir in
	"$rootp"/*) cmdline="$cmdline stt.modlink=${moddir#"$rootp"}" ;;
	*) die "--modules-dir $moddir: not inside the root $root" ;;
	esac
fi
cmdline="$cmdline${append}"

mapfile -t qemu < <(qemu_cmd "$work" "${qemu_extra[@]}")

rootmsg=
[ "$root" = / ] || rootmsg=", root $root"
say "booting $release ($accel_name, $smp CPUs$rootmsg)"
# A kernel that dies while booting, before stage 2 runs (no module of ours
# is loaded yet), is booted again, twice at most: the stock kernels hit an
# int3 text-patching oops now and then under multi-threaded TCG.
for attempt in 1 2 3; do
	start=$(date +%s.%N)
	timeout -k 10 "$timeout_s" "${qemu[@]}" </dev/null >"$work/qemu.err" 2>&1 &
	qpid=$!

	# CMD's output, live, until QEMU is gone.
	tail -n +1 -s 0.1 -f --pid="$qpid" "$work/output" &
	tpid=$!

	# Progress from the result channel.
	(
		shown=
		while :; do
			if [ -z "$shown" ] && grep -q '^STT-RUNNING' "$work/result"; then
				up=$(sed -n 's/^STT-RUNNING //p' "$work/result")
				now=$(date +%s.%N)
				[ "$up" = - ] && say "not running CMD: a module failed to load" && break
				say "running: $* (boot $(printf '%.1f' "$(echo "$now - $start" | bc)") s, guest uptime ${up}s)"
				shown=1
			fi
			if grep -q '^STT-STATUS' "$work/result"; then
				say "collecting"
				break
			fi
			sleep 0.2
		done
	) &
	wpid=$!

	set +e
	wait "$qpid"
	qrc=$?
	set -e
	qpid=
	wait "$tpid" 2>/dev/null || true
	tpid=
	sleep 0.3
	kill "$wpid" 2>/dev/null || true
	wait "$wpid" 2>/dev/null || true
	wpid=
	end=$(date +%s.%N)

	if grep -q '^STT-BOOTED' "$work/result" || [ "$attempt" -eq 3 ] ||
		! grep -qE 'Kernel panic|Oops|BUG:' "$work/console.log"; then
		break
	fi
	# Kept, so that a crash the retry hides can still be read.
	crashlog=
	if [ -n "$keep_log" ]; then
		crashlog=$keep_log.boot$attempt
		cp "$work/console.log" "$crashlog"
	fi
	say "the kernel crashed while booting, before stage 2 ran: booting again ($(grep -m1 -E 'Oops|BUG:|Kernel panic' "$work/console.log" | sed 's/^\[[ 0-9.]*\] //'); $(grep -m1 'RIP:' "$work/console.log" | sed 's/^\[[ 0-9.]*\] //')${crashlog:+; console: $crashlog})"
	: >"$work/console.log"
	: >"$work/output"
	: >"$work/result"
done

[ -n "$keep_log" ] && cp "$work/console.log" "$keep_log"

# ---- verdict ---------------------------------------------------------------

res=$work/result
status=$(sed -n 's/^STT-STATUS \([0-9]*\).*/\1/p' "$res" | tail -n 1)
problems=()

if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	problems+=("timeout after ${timeout_s}s")
elif [ "$qrc" -ne 0 ]; then
	problems+=("qemu exited with status $qrc: $(tail -n 3 "$work/qemu.err" | tr '\n' ' ')")
fi
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	:	# said above
elif ! grep -q '^STT-RUNNING' "$res"; then
	problems+=("the guest never started CMD")
elif [ -z "$status" ]; then
	problems+=("the guest died before CMD finished")
elif ! grep -q '^STT-DONE' "$res"; then
	problems+=("the guest died while unloading/collecting")
fi
while read -r _ what; do
	problems+=("$what")
done < <(grep -E '^STT-(INSMOD|RMMOD)-FAIL ' "$res")

# The kernel log: the console (complete, even after a panic) and dmesg.
sed -n '/^STT-DMESG-BEGIN/,/^STT-DMESG-END/{/^STT-DMESG-/d;p}' "$res" >"$work/dmesg"
[ -s "$work/dmesg" ] || cp "$work/console.log" "$work/dmesg"
# What counts as a kernel problem: one extended regular expression a line
# in kernel-problems.txt (scripts/debug/check-debug.sh reads it too).
hits=$(grep -ahEf "$SRCDIR/scripts/vm/kernel-problems.txt" "$work/console.log" \
	"$work/dmesg" | sort -u | head -n 20)
if [ -n "$hits" ]; then
	problems+=("kernel log: $(echo "$hits" | head -n 1 | sed 's/^\[[ 0-9.]*\] //')")
fi
if grep -q '^unreferenced object' "$res"; then
	problems+=("kmemleak reports leaks")
fi

printf -v took '%.1f' "$(echo "$end - $start" | bc)"
if [ "${#problems[@]}" -gt 0 ]; then
	for p in "${problems[@]}"; do
		say "kernel problem: $p"
	done
	if [ -n "${STT_VMRUN_PROBLEMS:-}" ]; then
		printf '%s\n' "${problems[@]}" >>"$STT_VMRUN_PROBLEMS"
	fi
	{
		echo "---- console tail ($release) ----"
		tail -n 60 "$work/console.log"
		if [ -n "$hits" ]; then
			echo "---- kernel log excerpt ----"
			grep -ahEf "$SRCDIR/scripts/vm/kernel-problems.txt" -B 2 -A 25 "$work/dmesg" 2>/dev/null | head -n 120 ||
				true
		fi
		if grep -q '^unreferenced object' "$res"; then
			echo "---- kmemleak ----"
			sed -n '/^STT-KMEMLEAK-BEGIN/,/^STT-KMEMLEAK-END/p' "$res" | head -n 80
		fi
		echo "----"
	} >&2
	say "done in ${took}s: CMD status ${status:-none}, failing"
	if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
		exit 124
	fi
	exit 125
fi

say "done in ${took}s: status $status"
exit "$status"
