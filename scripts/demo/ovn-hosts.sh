#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ovn-hosts.sh: OVN over STT across separate QEMU guests (make demo-ovn-hosts).
#
#   scripts/demo/ovn-hosts.sh [options]
#
# Builds the modules, boots three guests with scripts/vm/net.sh (each its own
# kernel, stt.ko and vport-stt.ko, virtio-net NICs on a private bridge of
# MTU 1600) and runs scripts/demo/ovn-hosts-guest.sh in them: guest 1 holds the
# central NB/SB databases, ovn-northd and chassis 1, guests 2 and 3 one
# chassis each, two VMs (network namespaces) per chassis on two logical
# switches joined by a logical router. Guest 1 runs the checks and the
# figures; see scripts/demo/ovn-hosts-guest.sh for what they are.
#
# Prints the TEST lines, "N passed, N failed, N skipped" and the report of
# the figures (scripts/bench/report.py: STT against Geneve, convergence,
# reassembly memory); keeps everything in results/ovn-hosts-STAMP/ (each
# guest's output g1.log..., the control channel's ctl.log, the capture
# keys.pcap, raw.jsonl, report.txt). Exit status 1 if a check failed,
# 124/125 on a guest's timeout or kernel problem.

set -e
cd "$(dirname "$0")/../.."
SRCDIR=$PWD

usage() {
	cat <<-EOF
	Usage: scripts/demo/ovn-hosts.sh [options]     (make demo-ovn-hosts OVN_HOSTS_ARGS="...")

	  --figures          the figures only (setup, tunnels, pings, STT/Geneve,
	                     reassembly, teardown): what make bench runs
	  --tests LIST       the guest's tests to run, in order (names of
	                     scripts/demo/ovn-hosts-guest.sh without "test_", comma-separated)
	  --reps N           repetitions per encapsulation and NIC mode (default 3)
	  --duration S       seconds per measurement (default 8)
	  --modes LIST       NIC modes measured: virtio (rx-gro-hw on, as make
	                     bench's two guests) and virtio-mtu (rx-gro-hw off:
	                     MTU-sized segments, software GRO); default both
	  --guests N         chassis = guests (default 3)
	  --mem MB           memory per guest (default 1024)
	  --target NAME      kernel and userland (scripts/vm/target.sh list; default
	                     deb12, this host's); built with scripts/vm/target.sh build
	  --timeout S        per guest (default 5400)
	  --out DIR          results directory (default results/ovn-hosts-STAMP)
	  --modules-from DIR take stt.ko and vport-stt.ko from DIR, build nothing
	  --no-build         use the modules already built
	  --verbose          show the NB/SB views and ch1's bridge
	  -h, --help         this text
	EOF
}

say() { echo "ovn-hosts: $*" >&2; }
die() { say "$*"; exit 1; }

tests=
reps=3
duration=8
modes="virtio,virtio-mtu"
guests=3
mem=1024
target=deb12
timeout_s=5400
out=
modfrom=
build=1
verbose=
while [ "$#" -gt 0 ]; do
	case $1 in
	-h|--help) usage; exit 0 ;;
	--figures) tests=tunnels,pings,figures,reasm,teardown; shift; continue ;;
	--no-build) build=; shift; continue ;;
	--verbose) verbose=1; shift; continue ;;
	esac
	[ "$#" -ge 2 ] || die "$1 needs an argument"
	case $1 in
	--tests) tests=$2 ;;
	--reps) reps=$2 ;;
	--duration) duration=$2 ;;
	--modes) modes=$2 ;;
	--guests) guests=$2 ;;
	--mem) mem=$2 ;;
	--target) target=$2 ;;
	--timeout) timeout_s=$2 ;;
	--out) out=$2 ;;
	--modules-from) modfrom=$2; build= ;;
	*) die "unknown option '$1' (try --help)" ;;
	esac
	shift 2
done
[ "$(id -u)" -eq 0 ] || die "needs root (scripts/vm/net.sh: network namespace, taps)"
for c in qemu-system-x86_64 tcpdump tshark; do
	command -v "$c" >/dev/null || die "no $c: run scripts/setup.sh"
done

# The tree to run: this checkout (deb12) or the target's build copy.
vmargs=()
dir=$SRCDIR
if [ "$target" != deb12 ]; then
	[ -z "$modfrom" ] || die "--modules-from: only with the deb12 target"
	say "building for $target (scripts/vm/target.sh build $target)"
	dir=$(scripts/vm/target.sh build "$target")
	mapfile -t vmargs < <(scripts/vm/target.sh vmargs "$target")
	[ "${#vmargs[@]}" -gt 0 ] || die "no vm-run options for $target"
elif [ -n "$build" ]; then
	say "building stt.ko, vport-stt.ko and the iproute2 plugin"
	make -s module plugin >/dev/null
fi
moddir=${modfrom:-$dir}
[ -f "$moddir/vport-stt.ko" ] ||
	die "no $moddir/vport-stt.ko: it needs Debian's linux-source of the kernel (scripts/setup.sh; make module says why)"

stamp=$(date +%Y%m%d-%H%M%S)
out=${out:-results/ovn-hosts-$stamp}
mkdir -p "$out"
out=$(cd "$out" && pwd)
case $out in
"$SRCDIR"/results/*) ln -sfn "$out" "$SRCDIR/results/ovn-hosts-latest" ;;
esac

envs=(--env "OVN_HOSTS_REPS=$reps" --env "OVN_HOSTS_DURATION=$duration"
	--env "OVN_HOSTS_MODES=${modes//,/ }")
if [ -n "$tests" ]; then
	t=
	for x in ${tests//,/ }; do t+="test_$x "; done
	envs+=(--env "OVN_HOSTS_TESTS=${t% }")
fi
[ -n "$verbose" ] && envs+=(--env OVN_VERBOSE=1)

read -r load_start _ </proc/loadavg
t_start=$(date +%s)
say "$guests guests ($target), results in $out"
set +e
# Staggered boots: booting is the guests' busiest time, and a vCPU starved
# for 20 s makes the kernel report a soft lockup or an RCU stall.
(cd "$dir" && "$dir/scripts/vm/net.sh" --guests "$guests" --mtu 1600 --mem "$mem" \
	--stagger 15 \
	--log-dir "$out" --timeout "$timeout_s" "${vmargs[@]}" \
	--modules "$moddir/stt.ko $moddir/vport-stt.ko" "${envs[@]}" \
	-- scripts/demo/ovn-hosts-guest.sh)
rc=$?
set -e
read -r load_end _ </proc/loadavg
elapsed=$(($(date +%s) - t_start))

grep -a '^BENCH' "$out/g1.log" >"$out/raw.jsonl" || true
python3 - "$out/meta.json" <<-EOF
	import json, sys
	json.dump({
	    "date": "$stamp", "commit": "$(git describe --always --dirty 2>/dev/null)",
	    "kernel": "$(sed -n 's/^vm-run: booting \([^ ]*\) .*/\1/p' "$out/g1.log" | head -n 1)",
	    "target": "$target", "scenarios": "ovn", "guests": $guests,
	    "duration": $duration, "reps": $reps, "modes": "$modes",
	    "host_cpus": $(nproc), "loadavg_start": "$load_start",
	    "loadavg_end": "$load_end", "elapsed_s": $elapsed,
	}, open(sys.argv[1], "w"), indent=1)
EOF
echo
if [ -s "$out/raw.jsonl" ]; then
	python3 scripts/bench/report.py "$out" >/dev/null || true
	cat "$out/report.txt" 2>/dev/null || true
fi
summary=$(grep -aE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out/g1.log" | tail -n 1)
echo
grep -a '^TEST: ' "$out/g1.log" || true
say "${summary:-no summary}; vm-net status $rc; $elapsed s; results in $out"
exit "$rc"
