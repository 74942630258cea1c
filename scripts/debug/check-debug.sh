#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What "make check-debug" runs: the selftests in one QEMU guest booting a
# debug kernel (KASAN, kmemleak, lockdep, UBSAN, net refcount trackers; see
# scripts/debug/kernel.config), with stt.ko and vport-stt.ko built against
# it (vport-stt.c against the kernel source's own net/openvswitch headers).
#
#   scripts/debug/check-debug.sh [TEST.sh...]
#
# 1. scripts/debug/build-kernel.sh: builds the kernel once into
#    $STT_CACHE/debug-kernel (default /var/tmp/stt-cache); later runs skip it.
# 2. The sources are copied to $STT_CACHE/debug-module (build products there
#    are kept, so the rebuild is incremental) and the modules and the
#    iproute2 plugin are built there: the repository's own .ko's, built for
#    Debian's kernel, are not touched. In the guest STT_MODULE_DIR points at
#    that copy.
# 3. scripts/vm/run.sh boots the debug kernel, loads the debug modules, runs
#    selftests/run.sh of that copy (tests and modules of one moment: the
#    tree may change while the run goes on); at the end (after rmmod) the
#    guest scans kmemleak (scripts/vm/init.sh) and vm-run fails on any leak,
#    WARNING, BUG (KASAN, lockdep, sleeping in atomic), ref_tracker
#    report, oops or panic. The console log is kept and also searched for
#    UBSAN/KASAN/lockdep reports.
#
# Exit status: 0 if the selftests passed and the kernel log is clean; 1 on
# test failures or a build failure; 124 timeout; 125 kernel problem.
#
# Environment: STT_CACHE, STT_DEBUG_TIMEOUT (seconds for the guest run,
# default 10800), STT_DEBUG_MEM (guest MB, default 3072), FUZZ_COUNT
# (segments for selftests/fuzz.sh, default 1000000), VMRUN_ARGS (extra
# scripts/vm/run.sh options), STT_JOBS (make -j, default: number of CPUs).
# Builds run under nice -n 19.
#
# Internal: scripts/debug/check-debug.sh --guest MODDIR CMD... is the command run in
# the guest: it makes MODDIR the guest's /lib/modules/$(uname -r) (modprobe
# then knows the built-in modules) and runs CMD.

ME=check-debug
say() { echo "$ME: $*" >&2; }

# ---- in the guest -----------------------------------------------------------

if [ "${1:-}" = --guest ]; then
	moddir=$2
	shift 2
	rel=$(uname -r)
	# The guest's root is an overlay with a tmpfs upper layer: this does
	# not touch the host.
	if [ ! -e "/lib/modules/$rel" ]; then
		mkdir -p /lib/modules
		ln -s "$moddir" "/lib/modules/$rel"
	fi
	echo "$ME: guest kernel $rel:" \
		"kmemleak $([ -e /sys/kernel/debug/kmemleak ] && echo on || echo OFF)," \
		"lockdep $([ -e /proc/lockdep ] && echo on || echo OFF)"
	exec "$@"
fi

# ---- on the host ------------------------------------------------------------

# Not the jobserver or variables of a calling make (make check-debug).
unset MAKEFLAGS MFLAGS MAKELEVEL
cd "$(dirname "$0")/../.." || exit 1
CACHE=${STT_CACHE:-/var/tmp/stt-cache}
MOD=$CACHE/debug-module
JOBS=${STT_JOBS:-$(nproc)}
total_start=$(date +%s)
timings=()
lap() { timings+=("$(printf '%-10s %6ss' "$1" $(($(date +%s) - $2)))"); }

start=$(date +%s)
vars=$(scripts/debug/build-kernel.sh --print-vars) || { say "debug kernel build failed"; exit 1; }
eval "$vars"
lap kernel "$start"

start=$(date +%s)
say "copying the sources to $MOD"
mkdir -p "$MOD"
exec 9>"$MOD.lock"
flock 9
# The working tree's files (tracked and untracked, not ignored) with their
# mtimes, so that kbuild rebuilds only what changed; files gone from the tree
# are removed, build products are kept.
want=$(mktemp)
have=$(mktemp)
trap 'rm -f "$want" "$have"' EXIT
git ls-files -co --exclude-standard | while IFS= read -r f; do
	[ -f "$f" ] && echo "$f"
done | LC_ALL=C sort -u >"$want"
tar -cf - -T "$want" | tar -xpf - -C "$MOD" || { say "copy failed"; exit 1; }
(cd "$MOD" && find . -type f ! -name '*.o' ! -name '*.ko' ! -name '*.mod' \
	! -name '*.mod.c' ! -name '*.cmd' ! -name '*.so' ! -name Module.symvers \
	! -name modules.order ! -name '.*' -printf '%P\n') | LC_ALL=C sort >"$have"
LC_ALL=C comm -23 "$have" "$want" | (cd "$MOD" && xargs -r -d '\n' rm -f --)

say "building the modules against $DEBUG_KDIR"
# A module Kbuild leaves out for this kernel (vport-stt.ko) must not
# survive from an older build.
rm -f "$MOD"/*.ko
# vport-stt.ko against the kernel source's own Open vSwitch headers
# (scripts/build/ovs-source.sh finds them in the full tree).
ovs=$(scripts/build/ovs-source.sh "$DEBUG_KDIR" "$MOD/.ovs-src")
if ! nice -n 19 make -C "$DEBUG_KDIR" M="$MOD" STT_OVS_SRC="$ovs" -j"$JOBS" \
	modules >"$MOD.build.log" 2>&1; then
	cat "$MOD.build.log" >&2
	say "module build failed"
	exit 1
fi
grep -E 'warning:|error:' "$MOD.build.log" >&2
# The selftests' helpers (a test-only module, a sender) for this kernel.
if [ -f "$MOD/selftests/helpers/Makefile" ] &&
	! nice -n 19 make -C "$MOD/selftests/helpers" KDIR="$DEBUG_KDIR" \
		>>"$MOD.build.log" 2>&1; then
	tail -n 20 "$MOD.build.log" >&2
	say "selftest helpers build failed"
	exit 1
fi
if [ -f "$MOD/tools/iproute2/Makefile" ] &&
	! nice -n 19 make -C "$MOD/tools/iproute2" >>"$MOD.build.log" 2>&1; then
	tail -n 20 "$MOD.build.log" >&2
	say "plugin build failed"
	exit 1
fi
# The tc BPF programs (bpf.sh), as make bpf builds them.
if [ -f "$MOD/tools/bpf/Makefile" ] &&
	! nice -n 19 make -C "$MOD/tools/bpf" >>"$MOD.build.log" 2>&1; then
	tail -n 20 "$MOD.build.log" >&2
	say "BPF programs build failed"
	exit 1
fi
kos=()
# modules.order names objects (stt.o) or, from some kbuild versions on,
# modules with their path: take the module's name either way.
while read -r o; do
	o=${o##*/}
	kos+=("$MOD/${o%.*}.ko")
done <"$MOD/modules.order"
lap modules "$start"

logdir=$CACHE/debug-run
mkdir -p "$logdir"
console=$logdir/console.log
out=$logdir/output.log
rm -f "$console" "$out"

say "selftests under $DEBUG_RELEASE (log: $out, console: $console)"
start=$(date +%s)
# The vmlinux vm-run extracts from a bzImage to save decompression time
# does not boot for this kernel (no console output at all): boot the
# bzImage itself.
# shellcheck disable=SC2086 # lists of words
STT_VM_BZIMAGE=1 scripts/vm/run.sh --kernel "$DEBUG_RELEASE" --kernel-image "$DEBUG_IMAGE" \
	--modules-dir "$DEBUG_MODDIR" --modules "${kos[*]}" \
	--mem "${STT_DEBUG_MEM:-3072}" --timeout "${STT_DEBUG_TIMEOUT:-10800}" \
	--env STT_MODULE_DIR="$MOD" --env SELFTEST_TIMEOUT="${SELFTEST_TIMEOUT:-3600}" \
	--env FUZZ_COUNT="${FUZZ_COUNT:-1000000}" \
	--keep-log "$console" ${VMRUN_ARGS:-} \
	-- "$MOD/scripts/debug/check-debug.sh" --guest "$DEBUG_MODDIR" \
	"$MOD/selftests/run.sh" "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
lap selftests "$start"

# vm-run already fails (125) on these; the whole console is searched again
# with the same patterns so that the report names every line (vm-run shows
# the first).
reports=$(grep -aEf scripts/vm/kernel-problems.txt "$console" 2>/dev/null |
	sort -u | head -n 20)

summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -n 1)
lap total "$total_start"
echo
echo "$ME: wall time per phase:"
printf '  %s\n' "${timings[@]}"
if [ -n "$reports" ]; then
	echo "$ME: kernel reports in $console:"
	while IFS= read -r line; do echo "  $line"; done <<<"$reports"
	[ "$rc" -eq 0 ] && rc=125
fi
echo "$ME: ${summary:-no selftest summary} (vm-run exit $rc)"
exit "$rc"
