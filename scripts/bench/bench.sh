#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: STT against no tunnel, VXLAN and Geneve, in the terms of the
# STT proposal's netperf figures (throughput, sender and receiver CPU, CPU
# per Gbit) and its reviewer's question (small packets, UDP, request/
# response), plus the cost of many devices. Runs in QEMU guests:
#
#   pair    two guests of one vCPU each, virtio-net NICs on taps bridged in
#           a private netns (scripts/vm/pair.sh): TSO, GRO, no UDP-tunnel
#           offload -- the seed's two machines
#   onevm   one guest, two netns joined by veth, the underlay's offloads
#           switched: full / TSO without UDP-tunnel segmentation / no TSO
#   scale   in the onevm guest: one STT tunnel among 1, 100, 1000 STT
#           devices (creation and deletion time per device, throughput and
#           TCP_RR as a ratio to the tunnel alone)
#   ovn     OVN across three guests (scripts/demo/ovn-hosts.sh --figures): one TCP
#           stream between VMs on different chassis over
#           ovn-encap-type=stt against geneve, convergence, reassembly
#           memory on the busiest chassis
#
# Prints a table (median of N interleaved repetitions, [min-max]), ratios
# against VXLAN and against no tunnel, PASS/MISS per target; writes
# results/bench-STAMP/{raw.jsonl,results.json,report.txt,chart.png,*.log}
# (results/latest points at the newest).

set -e
cd "$(dirname "$0")/../.."
SRCDIR=$PWD

usage() {
	cat <<-EOF
	Usage: scripts/bench/bench.sh [options]     (make bench BENCH_ARGS="...")

	  --quick             one VM only (onevm + scale), 2 s x 3, fewer tests:
	                      under 10 minutes
	  --scenario LIST     pair,onevm,scale,ovn (default: all; ovn needs
	                      vport-stt.ko and takes about 15 minutes)
	  --tunnel LIST       none,vxlan,geneve,stt (default: all)
	  --test LIST         tcp1,tcp5,tcp50,udp64,udp1400,tcp_rr,udp_rr
	                      (default: all for pair and onevm's "tso" mode,
	                      tcp1,tcp5 for onevm's other modes)
	  --offload LIST      onevm underlay modes: full,tso,notso,esp,espnull
	                      (esp: tso with transport-mode ESP, AES-GCM,
	                      between the hosts; espnull: the same with ESP's
	                      null cipher; default: all)
	  --devices LIST      scale: STT device counts (default 1,100,1000)
	  --duration S        seconds per test (default 4; --quick 2)
	  --reps N            repetitions (default 3)
	  --tool T            auto|netperf|iperf3 (iperf3 + sockperf stand in
	                      for netperf; auto = netperf when installed)
	  --multi-tool T      TCP with 5/50 sessions: iperf3 (default, one
	                      process, one interval) or netperf (a process each)
	  --cpu MODEL         QEMU CPU model of the onevm guest (default: QEMU's,
	                      qemu64, without AES-NI; "max" emulates AES-NI and
	                      PCLMUL, so ESP's AES-GCM is not software AES)
	  --smp N             vCPUs of the onevm guest (default 1: no cross-vCPU
	                      wake-ups, which TCG on a busy host makes slow)
	  --icount N|off      onevm guest time = executed instructions x 2^N ns
	                      (default 5): its figures do not depend on the
	                      host's load; "off" measures in real time
	  --pair-icount N|off the same for the two guests (default off: two
	                      guests' clocks would drift apart)
	  --out DIR           results directory (default results/bench-STAMP)
	  --perf              then profile each test once per tunnel on the
	                      sending side (perf record; not a measurement):
	                      "bench-perf:" lines in the logs
	  --no-build          use the stt.ko and plugin already built
	  --report DIR        only print the report of an earlier run again
	  -h, --help          this text
	EOF
}

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }

quick=
scenarios=
tunnels=none,vxlan,geneve,stt
tests=
offloads=full,tso,notso,esp,espnull
devices=1,100,1000
duration=
reps=3
tool=auto
multi_tool=iperf3
cpu=
smp=1
icount=5
pair_icount=off
out=
build=1
perf=()

while [ "$#" -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift; continue ;;
	--no-build) build=; shift; continue ;;
	--perf) perf=(--perf); shift; continue ;;
	-h|--help) usage; exit 0 ;;
	--report)
		[ -f "$2/raw.jsonl" ] || die "no $2/raw.jsonl"
		exec python3 "$SRCDIR/scripts/bench/report.py" "$2" ;;
	esac
	[ "$#" -ge 2 ] || die "$1 needs an argument"
	case $1 in
	--scenario) scenarios=$2 ;;
	--tunnel) tunnels=$2 ;;
	--test) tests=$2 ;;
	--offload) offloads=$2 ;;
	--devices) devices=$2 ;;
	--duration) duration=$2 ;;
	--reps) reps=$2 ;;
	--tool) tool=$2 ;;
	--multi-tool) multi_tool=$2 ;;
	--smp) smp=$2 ;;
	--cpu) cpu=$2 ;;
	--icount) icount=$2 ;;
	--pair-icount) pair_icount=$2 ;;
	--out) out=$2 ;;
	*) die "unknown option '$1' (try --help)" ;;
	esac
	shift 2
done

if [ -n "$quick" ]; then
	scenarios=${scenarios:-onevm,scale}
	duration=${duration:-2}
else
	scenarios=${scenarios:-pair,onevm,scale,ovn}
	duration=${duration:-4}
fi
has() { [[ ",$scenarios," == *",$1,"* ]]; }

# Tests per onevm offload mode and for the pair.
all_tests=tcp1,tcp5,tcp50,udp64,udp1400,tcp_rr,udp_rr
if [ -n "$tests" ]; then
	pair_tests=$tests
	mode_args=(--tests "$tests")
elif [ -n "$quick" ]; then
	pair_tests=tcp1,tcp5,udp64,tcp_rr
	mode_args=(--tests "tcp1" --offload-tests "tso=tcp1,tcp5,udp64,tcp_rr")
else
	pair_tests=$all_tests
	mode_args=(--tests "tcp1,tcp5" --offload-tests "tso=$all_tests")
fi
has onevm || offloads=
has scale || devices=

command -v qemu-system-x86_64 >/dev/null || die "no QEMU: run scripts/setup.sh"
command -v netperf >/dev/null || say "netperf not installed: iperf3 and sockperf stand in"
command -v gnuplot >/dev/null || say "no gnuplot: no chart (scripts/setup.sh installs gnuplot-nox)"

if [ -n "$build" ]; then
	say "building stt.ko and the iproute2 plugin"
	make -s module plugin >/dev/null
fi

stamp=$(date +%Y%m%d-%H%M%S)
out=${out:-results/bench-$stamp}
mkdir -p "$out/snap"
out=$(cd "$out" && pwd)
case $out in
"$SRCDIR"/results/*) ln -sfn "$out" "$SRCDIR/results/latest" ;;
esac
# The module and plugin measured: a snapshot, so that a rebuild during the
# run changes nothing.
cp stt.ko "$out/snap/"
if has ovn; then
	[ -f vport-stt.ko ] || die "scenario ovn: no vport-stt.ko (make module says why); --scenario pair,onevm,scale runs without it"
	cp vport-stt.ko "$out/snap/"
fi
cp tools/iproute2/link_stt.so "$out/snap/"

t_start=$(date +%s)
read -r load_start _ </proc/loadavg
common=(--duration "$duration" --reps "$reps" --tool "$tool"
	--multi-tool "$multi_tool" --tunnels "$tunnels" "${perf[@]}")
vmopts=(--modules "$out/snap/stt.ko" --env "IP_LIB_DIR=$out/snap")
ntun=$(tr ',' '\n' <<<"$tunnels" | grep -c .)
count() { tr ',' '\n' <<<"$1" | grep -c .; }

# Live progress: the guest's "bench: " lines.
progress() { tee "$1" | sed -un 's/^bench: /  /p; s/^\(vm-run\|vm-pair\|vm-net\|ovn-hosts\): /  \1: /p; s/^\(TEST: \)/  \1/p'; }

status=0
timings=()
if has pair; then
	n=$(( $(count "$pair_tests") * ntun * reps ))
	say "two guests: $n measurements of ${duration} s"
	t0=$(date +%s)
	set +e
	pairopts=()
	[ "$pair_icount" = off ] || pairopts=(--icount "$pair_icount")
	tmo=$((300 + n * (duration + 15)))
	# --perf: one more run per test and tunnel, and perf's start-up.
	[ ${#perf[@]} -eq 0 ] || tmo=$((300 + (n + n / reps) * (duration + 30)))
	scripts/vm/pair.sh "${vmopts[@]}" "${pairopts[@]}" --timeout "$tmo" \
		--b-log "$out/pair-b.log" -- scripts/bench/bench-guest.sh pair "${common[@]}" \
		--tests "$pair_tests" 2>&1 | progress "$out/pair.log"
	rc=${PIPESTATUS[0]}
	set -e
	[ "$rc" -eq 0 ] || { say "two guests: failed (status $rc), see $out/pair.log"; status=1; }
	timings+=("pair=$(($(date +%s) - t0))")
fi
if [ -n "$offloads" ] || [ -n "$devices" ]; then
	n=0
	for m in ${offloads//,/ }; do
		if [ -z "$tests" ] && [ "$m" = tso ]; then
			n=$((n + $(count "${mode_args[3]#tso=}") * ntun * reps))
		else
			n=$((n + $(count "${mode_args[1]}") * ntun * reps))
		fi
	done
	[ -n "$devices" ] && n=$((n + 2 * $(count "$devices") * reps))
	say "one VM: $n measurements of ${duration} s"
	t0=$(date +%s)
	set +e
	vmopts1=()
	[ "$icount" = off ] || vmopts1=(--icount "$icount")
	[ -z "$cpu" ] || vmopts1+=(--qemu-arg -cpu --qemu-arg "$cpu")
	scripts/vm/run.sh "${vmopts[@]}" "${vmopts1[@]}" --smp "$smp" \
		--timeout $((300 + n * (duration + 15))) -- \
		scripts/bench/bench-guest.sh onevm "${common[@]}" "${mode_args[@]}" \
		--offloads "$offloads" --scale "$devices" 2>&1 |
		progress "$out/onevm.log"
	rc=${PIPESTATUS[0]}
	set -e
	[ "$rc" -eq 0 ] || { say "one VM: failed (status $rc), see $out/onevm.log"; status=1; }
	timings+=("onevm=$(($(date +%s) - t0))")
fi

if has ovn; then
	say "OVN across three guests: ${reps} x STT and Geneve, two NIC modes, ${duration} s each"
	t0=$(date +%s)
	set +e
	scripts/demo/ovn-hosts.sh --figures --modules-from "$out/snap" --reps "$reps" \
		--duration "$duration" --out "$out/ovn" 2>&1 | progress "$out/ovn.log"
	rc=${PIPESTATUS[0]}
	set -e
	[ "$rc" -eq 0 ] || { say "OVN: failed (status $rc), see $out/ovn.log and $out/ovn/"; status=1; }
	timings+=("ovn=$(($(date +%s) - t0))")
fi

cat "$out"/pair.log "$out"/onevm.log "$out"/ovn/raw.jsonl 2>/dev/null |
	grep -a '^BENCH' >"$out/raw.jsonl" || true
read -r load_end _ </proc/loadavg
python3 - "$out/meta.json" <<-EOF
	import json, sys
	json.dump({
	    "date": "$stamp", "commit": "$(git describe --always --dirty 2>/dev/null)",
	    "kernel": "$(scripts/build/find-kernel.sh)", "quick": bool("$quick"),
	    "scenarios": "$scenarios", "tunnels": "$tunnels",
	    "duration": $duration, "reps": $reps, "tool": "$tool",
	    "multi_tool": "$multi_tool", "onevm_smp": $smp,
	    "onevm_icount": "$icount", "pair_icount": "$pair_icount",
	    "guests": 3, "host_cpus": $(nproc), "loadavg_start": "$load_start",
	    "loadavg_end": "$load_end", "elapsed_s": $(($(date +%s) - t_start)),
	    "timings_s": dict(x.split("=") for x in "${timings[*]}".split()),
	}, open(sys.argv[1], "w"), indent=1)
EOF
echo
python3 scripts/bench/report.py "$out"
say "results in $out ($(($(date +%s) - t_start)) s; ${timings[*]})"
exit "$status"
