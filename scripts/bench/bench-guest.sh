#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The measurements of make bench, run as root inside a guest started by
# scripts/bench/bench.sh (through scripts/vm/run.sh or scripts/vm/pair.sh).
#
#   bench-guest onevm [options]   one VM, two hosts = network namespaces:
#
#       netns a                                        netns b
#       stt0 10.10.0.1 / vx0 10.20.0.1 / gnv0 10.30.0.1   (.2 on b)
#       wire 192.0.2.1 ============ veth ============ 192.0.2.2 wire
#
#     the veth's offloads are switched per --offloads mode:
#       full   TSO and UDP-tunnel segmentation (veth's default)
#       tso    TSO, no UDP-tunnel segmentation (the NIC STT was made for)
#       notso  no TSO at all (software GSO only)
#       esp    "tso", plus transport-mode ESP (rfc4106(gcm(aes)), 128-bit
#              key) for everything between 192.0.2.1 and .2: every tunnel
#              and no tunnel alike go through IPsec
#       espnull  the same with ESP's null cipher and null authentication:
#              what ESP's framing costs each tunnel (no GRO before
#              decryption) without the cipher, which under TCG costs far
#              more than everything else
#     then, with --scale, one STT tunnel among 1, 100, 1000 STT devices in
#     netns a (distinct keys and remotes), over the "tso" wire.
#
#   bench-guest pair [options]    two guests from scripts/vm/pair.sh, one vCPU
#     each; the same tunnels over their virtio-net NICs (TSO, GRO, no
#     UDP-tunnel offload). Guest b runs the servers and a small agent that
#     reports its /proc/stat, guest a drives the tests and tells b when to
#     stop.
#
# Options:
#   --tunnels LIST     none,vxlan,geneve,stt
#   --tests LIST       tcp1,tcp5,tcp50,udp64,udp1400,tcp_rr,udp_rr
#   --offloads LIST    onevm: full,tso,notso,esp,espnull
#   --offload-tests M=LIST
#                      tests for mode M instead of --tests (repeatable)
#   --scale LIST       device counts for the scale phase (e.g. 1,100,1000)
#   --scale-tests LIST tests of the scale phase (default tcp1,tcp_rr)
#   --duration S       seconds per test (default 4)
#   --reps N           repetitions (default 3), interleaved: every tunnel
#                      is measured once before any is measured again
#   --tool T           auto (netperf if installed, else iperf3 + sockperf),
#                      netperf, or iperf3
#   --perf             after the measurements, each test runs once more per
#                      tunnel under a system-wide "perf record" on the
#                      sending host (not recorded as a measurement: perf
#                      perturbs it); the top kernel and user symbols are
#                      printed as "bench-perf: ..." lines
#   --multi-tool T     TCP streams with more than one session: iperf3
#                      (default: one process, all streams in one interval)
#                      or netperf (one netperf process per session, the
#                      seed's way; their start is skewed by process start-up)
#
# Output, on stdout: "BENCH {json}" per measurement, "BENCH-INFO {json}"
# for the set-up, "bench: ..." progress lines. CPU is whole-guest
# /proc/stat deltas, user+nice+system+irq+softirq, in % of one CPU.

set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export IP_LIB_DIR=${IP_LIB_DIR:-$REPO/tools/iproute2}

MODE=${1:-}
shift || true
TUNNELS=none,vxlan,geneve,stt
TESTS=tcp1,tcp5,tcp50,udp64,udp1400,tcp_rr,udp_rr
OFFLOADS=full,tso,notso
SCALE=
SCALE_TESTS=tcp1,tcp_rr
DURATION=4
REPS=3
TOOL=auto
MULTI_TOOL=iperf3
PERF=
declare -A MODE_TESTS=()

while [ "$#" -gt 0 ]; do
	case $1 in
	--perf) PERF=1; shift; continue ;;
	--tunnels) TUNNELS=$2 ;;
	--tests) TESTS=$2 ;;
	--offloads) OFFLOADS=$2 ;;
	--offload-tests) MODE_TESTS[${2%%=*}]=${2#*=} ;;
	--scale) SCALE=$2 ;;
	--scale-tests) SCALE_TESTS=$2 ;;
	--duration) DURATION=$2 ;;
	--reps) REPS=$2 ;;
	--tool) TOOL=$2 ;;
	--multi-tool) MULTI_TOOL=$2 ;;
	*) echo "bench-guest: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift 2
done

TMP=$(mktemp -d)
AGENT_PORT=5990
PEER=
SND=()		# prefix running a command on the sending host
RCV=()		# same, receiving host (onevm only)
SCENARIO=$MODE

say() { echo "bench: $*"; }
fail() { echo "bench: error: $*"; exit 1; }

# shellcheck disable=SC2048 # the lists are words: split them
for test in ${TESTS//,/ } ${SCALE_TESTS//,/ } ${MODE_TESTS[*]//,/ }; do
	case $test in
	tcp[0-9]*|udp[0-9]*|tcp_rr|udp_rr) ;;
	*) fail "unknown test '$test'" ;;
	esac
done

if [ "$TOOL" = auto ]; then
	if command -v netperf >/dev/null && command -v netserver >/dev/null; then
		TOOL=netperf
	else
		TOOL=iperf3
	fi
fi
case $TOOL in
netperf) command -v netperf >/dev/null || fail "no netperf" ;;
iperf3) command -v iperf3 >/dev/null || fail "no iperf3"
	command -v sockperf >/dev/null || say "no sockperf: no RR tests" ;;
*) fail "unknown tool '$TOOL'" ;;
esac

# ---- JSON ------------------------------------------------------------------

# json key=value...: JSON in $JSON; numbers and null bare, the rest quoted.
json() {
	local kv k v out='' sep=''

	for kv in "$@"; do
		k=${kv%%=*}
		v=${kv#*=}
		if [[ $v =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] || [ "$v" = null ]; then
			:
		else
			v=${v//\\/\\\\}
			v=${v//\"/\\\"}
			v="\"$v\""
		fi
		out+="$sep\"$k\": $v"
		sep=", "
	done
	JSON="{$out}"
}

# ---- CPU accounting --------------------------------------------------------

# Forks cost ~0.1 s in a loaded TCG guest: the measurement path uses bash
# builtins only. cpu_snap VAR LINE: VAR="busy total" jiffies of the machine
# from the "cpu ..." line of /proc/stat.
cpu_snap() {
	local _c us ni sy id io irq si st _rest

	read -r _c us ni sy id io irq si st _rest <<<"$2"
	printf -v "$1" '%s %s' "$((us + ni + sy + irq + si))" \
		"$((us + ni + sy + id + io + irq + si + st))"
}
cpu_local() {	# $1 = variable
	local l

	read -r l </proc/stat
	cpu_snap "$1" "$l"
}
NCPU=$(nproc)

# cpu_pct VAR BEFORE AFTER CPUS: % of one CPU, one decimal (or null).
cpu_pct() {
	local b0 t0 b1 t1 x

	read -r b0 t0 <<<"$2"
	read -r b1 t1 <<<"$3"
	if [ -z "$t1" ] || [ $((t1 - t0)) -le 0 ]; then
		printf -v "$1" null
		return
	fi
	x=$((1000 * $4 * (b1 - b0) / (t1 - t0)))
	printf -v "$1" '%d.%d' $((x / 10)) $((x % 10))
}

# One request to guest b's agent; its one-line answer in REPLY.
agent() {
	REPLY=
	exec 7<>"/dev/tcp/$PEER/$AGENT_PORT" || return 1
	echo "$*" >&7
	read -r REPLY <&7
	exec 7>&-
}
cpu_remote() {	# $1 = variable
	agent stat
	cpu_snap "$1" "$REPLY"
}

now_us() { printf -v "$1" '%s' "${EPOCHREALTIME/./}"; }

# ---- topology --------------------------------------------------------------

# tunnels_add IPCMD... : in the host "ip" reaches, given ME and PEER_IP
tunnel_addrs() {	# $1 = tunnel, $2 = host index (1, 2): address in REPLY
	case $1 in
	none) REPLY=192.0.2.$2 ;;
	stt) REPLY=10.10.0.$2 ;;
	vxlan) REPLY=10.20.0.$2 ;;
	geneve) REPLY=10.30.0.$2 ;;
	esac
}
tunnel_dev() {
	case $1 in
	none) echo "$UNDERLAY" ;;
	stt) echo stt0 ;;
	vxlan) echo vx0 ;;
	geneve) echo gnv0 ;;
	esac
}

tunnels_add() {	# $1 = our index, $2 = peer index; "ipc" runs ip there
	local me=$1 peer=$2 t dev

	for t in ${TUNNELS//,/ }; do
		dev=$(tunnel_dev "$t")
		case $t in
		none) continue ;;
		stt) ipc link add stt0 type stt id 42 remote "192.0.2.$peer" \
			local "192.0.2.$me" || fail "cannot create an STT device" ;;
		vxlan) ipc link add vx0 type vxlan id 42 remote "192.0.2.$peer" \
			local "192.0.2.$me" dstport 4789 || fail "vxlan"
			# Without a lower device VXLAN defaults to 1500 and
			# its outer packets would be IP fragments.
			ipc link set vx0 mtu 1450 ;;
		geneve) ipc link add gnv0 type geneve id 42 \
			remote "192.0.2.$peer" || fail "geneve" ;;
		esac
		tunnel_addrs "$t" "$me"
		ipc addr add "$REPLY/24" dev "$dev"
		ipc link set "$dev" up
	done
}

servers_start() {	# "$@" = prefix for the receiving host
	"$@" netserver -D -4 >/dev/null 2>&1 &
	"$@" iperf3 -s -D >/dev/null 2>&1
	if command -v sockperf >/dev/null; then
		"$@" sockperf sr -p 11111 >/dev/null 2>&1 &
		"$@" sockperf sr --tcp -p 11112 >/dev/null 2>&1 &
	fi
	sleep 1
}

# Every tunnel carries a ping before anything is measured.
warm_up() {
	local t ip

	for t in ${TUNNELS//,/ }; do
		tunnel_addrs "$t" 2
		ip=$REPLY
		for _ in $(seq 30); do
			"${SND[@]}" ping -c 1 -W 1 "$ip" >/dev/null 2>&1 && continue 2
			sleep 0.5
		done
		fail "no ping through $t to $ip"
	done
	# A first second of traffic over each (not recorded): the first test
	# after set-up otherwise pays for ARP, route and code caches.
	for t in ${TUNNELS//,/ }; do
		tunnel_addrs "$t" 2
		if [ "$TOOL" = netperf ]; then
			"${SND[@]}" netperf -H "$REPLY" -t TCP_STREAM -l 1 -P 0 >/dev/null 2>&1
		else
			"${SND[@]}" iperf3 -c "$REPLY" -t 1 >/dev/null 2>&1
		fi
	done
}

# ---- tests -----------------------------------------------------------------

# Each test leaves "key=value" lines in $TMP/res: value (the figure), tool,
# and whatever else it knows; on failure a few lines of the tool's output.

kv() {	# $1 = file, $2 = key: the value in REPLY
	local k v

	REPLY=
	while IFS='=' read -r k v; do
		[ "$k" = "$2" ] && { REPLY=$v; return 0; }
	done <"$1"
	return 1
}

iperf3_json() {	# $1 = file, $2 = jq expression
	jq -r "$2" "$1" 2>/dev/null
}

t_tcp_stream() {	# $1 = address, $2 = sessions
	local ip=$1 n=$2 i sum pids=()

	if [ "$TOOL" = netperf ] && { [ "$n" -eq 1 ] || [ "$MULTI_TOOL" = netperf ]; }; then
		for ((i = 1; i <= n; i++)); do
			"${SND[@]}" netperf -H "$ip" -t TCP_STREAM -l "$DURATION" \
				-f m -c -C -P 0 -- -k \
				THROUGHPUT,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,ELAPSED_TIME \
				>"$TMP/s$i" 2>&1 &
			pids+=($!)
		done
		wait "${pids[@]}"	# not the servers started in the background
		sum=0
		for ((i = 1; i <= n; i++)); do
			kv "$TMP/s$i" THROUGHPUT || { head -n 3 "$TMP/s$i"; return 1; }
			sum=$(awk -v a="$sum" -v b="$REPLY" 'BEGIN { print a + b }')
		done
		{
			echo "tool=netperf"
			kv "$TMP/s1" LOCAL_CPU_UTIL && echo "np_cpu_snd=$REPLY"
			kv "$TMP/s1" REMOTE_CPU_UTIL && echo "np_cpu_rcv=$REPLY"
		} >"$TMP/res"
	else
		# One process: every stream starts together, one common interval.
		"${SND[@]}" iperf3 -c "$ip" -t "$DURATION" -P "$n" -J >"$TMP/i" 2>&1
		sum=$(iperf3_json "$TMP/i" '.end.sum_received.bits_per_second / 1e6')
		case $sum in
		''|null) head -n 5 "$TMP/i"; return 1 ;;
		esac
		echo "tool=iperf3" >"$TMP/res"
	fi
	awk -v s="$sum" -v n="$n" 'BEGIN {
		printf "value=%.4f\nper_stream=%.4f\n", s / 1000, s / 1000 / n }' >>"$TMP/res"
}

t_udp_stream() {	# $1 = address, $2 = datagram size
	local ip=$1 size=$2 rx='' el='' tx=''

	if [ "$TOOL" = netperf ]; then
		"${SND[@]}" netperf -H "$ip" -t UDP_STREAM -l "$DURATION" -P 0 -- \
			-R 1 -m "$size" -k REMOTE_RECV_CALLS,LOCAL_SEND_CALLS,ELAPSED_TIME \
			>"$TMP/u" 2>&1
		kv "$TMP/u" REMOTE_RECV_CALLS && rx=$REPLY
		kv "$TMP/u" LOCAL_SEND_CALLS && tx=$REPLY
		kv "$TMP/u" ELAPSED_TIME && el=$REPLY
		echo "tool=netperf" >"$TMP/res"
	else
		"${SND[@]}" iperf3 -c "$ip" -u -b 0 -l "$size" -t "$DURATION" -J \
			>"$TMP/u" 2>&1
		read -r rx tx el < <(iperf3_json "$TMP/u" \
			'"\(.end.sum.packets - .end.sum.lost_packets) \(.end.sum.packets) \(.end.sum.seconds)"')
		echo "tool=iperf3" >"$TMP/res"
	fi
	case "$rx/$el" in
	/*|*/|null*|*/null) head -n 3 "$TMP/u"; return 1 ;;
	esac
	awk -v r="$rx" -v t="${tx:-0}" -v e="$el" 'BEGIN {
		printf "value=%.1f\nsent_pps=%.1f\n", r / e, t / e }' >>"$TMP/res"
}

t_rr() {	# $1 = address, $2 = tcp|udp
	local ip=$1 proto=$2 v=

	if [ "$TOOL" = netperf ]; then
		"${SND[@]}" netperf -H "$ip" -t "${proto^^}_RR" -l "$DURATION" -c -C \
			-P 0 -- -k THROUGHPUT,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL >"$TMP/r" 2>&1
		kv "$TMP/r" THROUGHPUT && v=$REPLY
		{
			echo "tool=netperf"
			kv "$TMP/r" LOCAL_CPU_UTIL && echo "np_cpu_snd=$REPLY"
			kv "$TMP/r" REMOTE_CPU_UTIL && echo "np_cpu_rcv=$REPLY"
		} >"$TMP/res"
	else
		command -v sockperf >/dev/null || { echo "no sockperf"; return 1; }
		if [ "$proto" = tcp ]; then
			"${SND[@]}" sockperf ping-pong --tcp -i "$ip" -p 11112 \
				-t "$DURATION" >"$TMP/r" 2>&1
		else
			"${SND[@]}" sockperf ping-pong -i "$ip" -p 11111 \
				-t "$DURATION" >"$TMP/r" 2>&1
		fi
		v=$(sed -n 's/.*\[Valid Duration\] RunTime=\([0-9.]*\) sec;.*ReceivedMessages=\([0-9]*\).*/\2 \1/p' \
			"$TMP/r" | tail -n 1 | awk '$2 > 0 { printf "%.1f", $1 / $2 }')
		echo "tool=sockperf" >"$TMP/res"
	fi
	[ -n "$v" ] || { head -n 3 "$TMP/r"; return 1; }
	echo "value=$v" >>"$TMP/res"
}

# run_test ADDRESS TEST: one test against ADDRESS; its figures in $TMP/res.
run_test() {
	case $2 in
	tcp[0-9]*) t_tcp_stream "$1" "${2#tcp}" ;;
	udp[0-9]*) t_udp_stream "$1" "${2#udp}" ;;
	tcp_rr) t_rr "$1" tcp ;;
	udp_rr) t_rr "$1" udp ;;
	*) return 1 ;;	# not reached: the tests are checked at start-up
	esac
}

# measure TUNNEL TEST REP [key=value...]: one measurement, one record.
measure() {
	local t=$1 test=$2 rep=$3 ip c0 c1 r0='' r1='' t0 t1 rc metric k v \
		cpu_snd=null cpu_rcv=null cpu_total=null value=null fields=()

	shift 3
	case $test in
	tcp[0-9]*) metric=gbps ;;
	udp[0-9]*) metric=pps ;;
	*) metric=tps ;;
	esac
	tunnel_addrs "$t" 2
	ip=$REPLY
	: >"$TMP/res"
	cpu_local c0
	[ "$SCENARIO" = pair ] && cpu_remote r0
	now_us t0
	run_test "$ip" "$test" >"$TMP/err" 2>&1
	rc=$?
	now_us t1
	cpu_local c1
	if [ "$SCENARIO" = pair ]; then
		cpu_remote r1
		cpu_pct cpu_snd "$c0" "$c1" "$NCPU"
		cpu_pct cpu_rcv "$r0" "$r1" 1
	else
		cpu_pct cpu_total "$c0" "$c1" "$NCPU"
	fi
	while IFS='=' read -r k v; do
		case $k in
		value) [ "$rc" -eq 0 ] && value=$v ;;
		?*) fields+=("$k=$v") ;;
		esac
	done <"$TMP/res"
	[ "$value" = null ] && sed 's/^/bench:   /' "$TMP/err" | head -n 5
	printf -v k '%d.%02d' $(((t1 - t0) / 1000000)) $(((t1 - t0) % 1000000 / 10000))
	json scenario="$SCENARIO" offload="$OFFLOAD" tunnel="$t" \
		test="$test" rep="$rep" duration="$DURATION" wall="$k" \
		cpu_snd="$cpu_snd" cpu_rcv="$cpu_rcv" cpu_total="$cpu_total" \
		ncpu="$NCPU" metric="$metric" value="$value" "$@" "${fields[@]}"
	echo "BENCH $JSON"
	printf 'bench: %-6s %-6s %-7s %-7s rep %s: %s %s (cpu %s/%s/%s, %ss)\n' \
		"$SCENARIO" "$OFFLOAD" "$t" "$test" "$rep" "$value" "$metric" \
		"$cpu_snd" "$cpu_rcv" "$cpu_total" "$k"
}

# nic_tx VAR: "packets bytes kicks" of the underlay's first TX queue
# (virtio-net's ethtool -S; empty elsewhere).
nic_tx() {
	printf -v "$1" '%s' "$(ethtool -S "$UNDERLAY" 2>/dev/null | awk '
		$1 == "tx_queue_0_packets:" { p = $2 }
		$1 == "tx_queue_0_bytes:" { b = $2 }
		$1 == "tx_queue_0_kicks:" { k = $2 }
		END { if (k != "") print p, b, k }')"
}

# profile TUNNEL TEST: the test once more under a system-wide sampling
# profile of the sending host (this guest's CPUs; under TCG perf falls
# back to the cpu-clock software event). perf starts with its events
# disabled and is switched on through its control FIFO only once it is
# ready: under TCG its start-up alone can outlast a test. Prints where the
# samples fell (kernel, modules, user) and the symbols above 0.5%.
profile() {
	local t=$1 test=$2 data=$TMP/perf.data ip pid k0 k1 p0 b0 n0 p1 b1 n1

	tunnel_addrs "$t" 2
	ip=$REPLY
	rm -f "$TMP/perf.ctl" "$TMP/perf.ack"
	mkfifo "$TMP/perf.ctl" "$TMP/perf.ack" || return
	perf record -q -a -F 499 -D -1 \
		--control "fifo:$TMP/perf.ctl,$TMP/perf.ack" -o "$data" \
		-- sleep 3600 >"$TMP/perf.err" 2>&1 &
	pid=$!
	# Read-write opens of a FIFO do not block, whatever perf does.
	exec 8<>"$TMP/perf.ctl" 9<>"$TMP/perf.ack"
	echo enable >&8
	if ! read -r -t 120 -u 9 _; then
		say "--perf: perf did not start: $(head -n 2 "$TMP/perf.err")"
		kill "$pid" 2>/dev/null
		exec 8>&- 9>&-
		return
	fi
	nic_tx k0
	run_test "$ip" "$test" >/dev/null 2>&1
	nic_tx k1
	echo disable >&8
	read -r -t 30 -u 9 _
	exec 8>&- 9>&-
	read -r p0 b0 n0 <<<"$k0"
	read -r p1 b1 n1 <<<"$k1"
	[ -n "$p1" ] && echo "bench-perf: $t $test: underlay tx: $((p1 - p0)) packets, $((b1 - b0)) bytes, $((n1 - n0)) kicks ($UNDERLAY queue 0, ethtool -S)"
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	perf report -i "$data" --stdio --no-children --sort dso \
		2>/dev/null | awk -v p="bench-perf: $t $test: dso" \
		'/^ *[0-9.]+%/ { print p, $0 }' | head -n 10
	perf report -i "$data" --stdio --no-children --sort sym \
		--percent-limit 0.5 2>/dev/null | awk -v p="bench-perf: $t $test:" \
		'/^ *[0-9.]+%/ { print p, $0 }' | head -n 60
	rm -f "$data" "$TMP/perf.ctl" "$TMP/perf.ack"
}

# The measurement loop: reps outermost, so drift in a noisy host hits every
# tunnel alike.
run_matrix() {	# $1 = tests
	local rep test t

	for ((rep = 1; rep <= REPS; rep++)); do
		for test in ${1//,/ }; do
			for t in ${TUNNELS//,/ }; do
				measure "$t" "$test" "$rep"
			done
		done
	done
	[ -n "$PERF" ] || return 0
	command -v perf >/dev/null || { say "--perf: no perf (linux-perf)"; return 0; }
	for test in ${1//,/ }; do
		for t in ${TUNNELS//,/ }; do
			profile "$t" "$test"
		done
	done
}

info() {	# BENCH-INFO record about the set-up
	json scenario="$SCENARIO" "$@"
	echo "BENCH-INFO $JSON"
}

offloads_of() {	# "$@" = ethtool -k prefix
	"$@" ethtool -k "$UNDERLAY" | awk -F': ' '
		/^tcp-segmentation-offload|^generic-receive-offload|^tx-udp_tnl-segmentation|^generic-segmentation-offload/ {
			gsub(/ \[fixed\]/, "", $2); printf "%s%s=%s", s, $1, $2; s = " " }'
}

# ---- one VM ----------------------------------------------------------------

set_offload() {	# $1 = full|tso|notso|esp|espnull, on both ends of the wire
	local n tso utnl

	case $1 in
	full) tso=on utnl=on ;;
	tso|esp|espnull) tso=on utnl=off ;;
	notso) tso=off utnl=off ;;
	*) fail "unknown offload mode '$1'" ;;
	esac
	for n in a b; do
		ip netns exec $n ethtool -K wire tso "$tso" \
			tx-udp_tnl-segmentation "$utnl" \
			tx-udp_tnl-csum-segmentation "$utnl" >/dev/null 2>&1
	done
	set_esp "$1"
	OFFLOAD=$1
	info offload="$1" underlay="$(offloads_of ip netns exec a)" \
		esp="$(ip -n a xfrm state | sed -n 's/^[[:space:]]*\(aead\|enc\|auth\) \([^ ]*\) .*/\2/p' | sort -u | paste -sd+)" \
		vxlan_mtu="$(ip netns exec a cat /sys/class/net/vx0/mtu 2>/dev/null)"
}

# set_esp MODE: transport-mode ESP between the two hosts in modes "esp"
# and "espnull", none otherwise. Fixed keys: a benchmark, not a deployment. The UDP
# tunnels' inner MTU loses ESP's overhead (up to 40 bytes with this
# algorithm) so that their outer packets still fit the wire unfragmented,
# as a deployment would configure them; STT and no tunnel learn it from
# the route (the xfrm bundle's MTU).
set_esp() {
	local n l r k1=0x0102030405060708090a0b0c0d0e0f1011121314
	local k2=0x1112131415161718191a1b1c1d1e1f2021222324 mtu=1450 d alg alg2

	for n in a b; do
		ip -n $n xfrm state flush
		ip -n $n xfrm policy flush
	done
	case $1 in
	esp) alg=(aead 'rfc4106(gcm(aes))' "$k1" 128)
	     alg2=(aead 'rfc4106(gcm(aes))' "$k2" 128) ;;
	espnull) alg=(enc cipher_null "" auth digest_null "")
	     alg2=("${alg[@]}") ;;
	*) alg=() ;;
	esac
	if [ ${#alg[@]} -gt 0 ]; then
		for n in a b; do
			if [ $n = a ]; then l=192.0.2.1 r=192.0.2.2; else l=192.0.2.2 r=192.0.2.1; fi
			{ ip -n $n xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp \
				spi 0x100 mode transport "${alg[@]}" &&
			ip -n $n xfrm state add src 192.0.2.2 dst 192.0.2.1 proto esp \
				spi 0x200 mode transport "${alg2[@]}" &&
			ip -n $n xfrm policy add src $l dst $r dir out \
				tmpl src $l dst $r proto esp mode transport &&
			ip -n $n xfrm policy add src $r dst $l dir in \
				tmpl src $r dst $l proto esp mode transport level required; } ||
				fail "ESP between the hosts"
		done
		mtu=1410
	fi
	for n in a b; do
		for d in vx0 gnv0; do
			ip -n $n link show $d >/dev/null 2>&1 || continue
			ip -n $n link set $d mtu $mtu
		done
	done
	return 0
}

# ms per device between two now_us stamps, over n devices: in REPLY.
per_dev() {	# $1 = t0, $2 = t1, $3 = n
	local x=$(( ($2 - $1) / $3 ))

	printf -v REPLY '%d.%03d' $((x / 1000)) $((x % 1000))
}

# One STT tunnel (stt0, the one measured) among n STT devices in netns a:
# per repetition and count, create stt0 and n-1 others in one ip -batch
# (distinct keys and remotes, all up), measure, delete them all in one
# request (a device group) and time that too.
scale_phase() {
	local n rep test i t0 t1 batch=$TMP/batch

	SCENARIO=scale
	set_offload tso
	for ((rep = 1; rep <= REPS; rep++)); do
		for n in ${SCALE//,/ }; do
			ip -n a link del stt0 2>/dev/null
			{
				echo "link add stt0 type stt id 42 remote 192.0.2.2 local 192.0.2.1"
				echo "link set stt0 group 42 up"
				for ((i = 1; i < n; i++)); do
					echo "link add sx$i type stt id $((100000 + i)) remote 198.18.$((i / 250)).$((i % 250 + 1))"
					echo "link set sx$i group 42 up"
				done
			} >"$batch"
			now_us t0
			ip -n a -batch "$batch" || fail "ip -batch creating $n devices"
			now_us t1
			per_dev "$t0" "$t1" "$n"
			json scenario=scale offload=tso tunnel=stt test=create rep="$rep" \
				devices="$n" metric=ms_per_device value="$REPLY"
			echo "BENCH $JSON"
			say "scale rep $rep: $n STT devices created, $REPLY ms each"
			ip -n a addr add 10.10.0.1/24 dev stt0
			for _ in $(seq 30); do
				ip netns exec a ping -c 1 -W 1 10.10.0.2 >/dev/null 2>&1 && break
				sleep 0.5
			done
			for test in ${SCALE_TESTS//,/ }; do
				measure stt "$test" "$rep" devices="$n"
			done
			now_us t0
			ip -n a link del group 42 || fail "deleting $n devices"
			now_us t1
			per_dev "$t0" "$t1" "$n"
			json scenario=scale offload=tso tunnel=stt test=delete rep="$rep" \
				devices="$n" metric=ms_per_device value="$REPLY"
			echo "BENCH $JSON"
			say "scale rep $rep: $n STT devices deleted, $REPLY ms each"
		done
	done
	# Leave stt0 as it was for anything after us.
	ip -n a link add stt0 type stt id 42 remote 192.0.2.2 local 192.0.2.1
	ip -n a addr add 10.10.0.1/24 dev stt0
	ip -n a link set stt0 up
}

onevm() {
	local m

	modprobe -q vxlan
	modprobe -q geneve
	UNDERLAY=wire
	SND=(ip netns exec a)
	RCV=(ip netns exec b)
	cleanup() { ip netns del a 2>/dev/null; ip netns del b 2>/dev/null; rm -rf "$TMP"; }
	trap cleanup EXIT
	{ ip netns add a && ip netns add b; } || fail "netns"
	ip link add wire netns a type veth peer name wire netns b
	for m in a b; do
		ip -n $m link set lo up
		ip -n $m link set wire up
	done
	ip -n a addr add 192.0.2.1/24 dev wire
	ip -n b addr add 192.0.2.2/24 dev wire
	ipc() { ip -n a "$@"; }
	tunnels_add 1 2
	ipc() { ip -n b "$@"; }
	tunnels_add 2 1
	servers_start "${RCV[@]}"
	OFFLOAD=tso
	warm_up
	info tool="$TOOL" ncpu="$NCPU" duration="$DURATION" reps="$REPS" \
		kernel="$(uname -r)" stt_mtu="$(ip netns exec a cat /sys/class/net/stt0/mtu 2>/dev/null)" \
		vxlan_mtu="$(ip netns exec a cat /sys/class/net/vx0/mtu 2>/dev/null)" \
		geneve_mtu="$(ip netns exec a cat /sys/class/net/gnv0/mtu 2>/dev/null)"
	if [ -n "$OFFLOADS" ]; then
		for m in ${OFFLOADS//,/ }; do
			set_offload "$m"
			run_matrix "${MODE_TESTS[$m]:-$TESTS}"
		done
	fi
	[ -n "$SCALE" ] && scale_phase
	info stt_stats_a="$(ip netns exec a ethtool -S stt0 2>/dev/null | awk -F': *' 'NR > 1 && $2 + 0 { gsub(/ /, "", $1); printf "%s=%s ", $1, $2 }')" \
		stt_stats_b="$(ip netns exec b ethtool -S stt0 2>/dev/null | awk -F': *' 'NR > 1 && $2 + 0 { gsub(/ /, "", $1); printf "%s=%s ", $1, $2 }')"
	return 0
}

# ---- two guests ------------------------------------------------------------

pair_underlay() {
	local d

	modprobe -q virtio_net
	modprobe -q vxlan
	modprobe -q geneve
	UNDERLAY=
	for _ in $(seq 100); do
		for d in /sys/class/net/*; do
			[ "$(cat "$d/address")" = "$STT_PAIR_MAC" ] && UNDERLAY=${d##*/}
		done
		[ -n "$UNDERLAY" ] && break
		sleep 0.1
	done
	[ -n "$UNDERLAY" ] || fail "no NIC with MAC $STT_PAIR_MAC"
	ip addr add "$STT_PAIR_LOCAL/24" dev "$UNDERLAY"
	ip link set "$UNDERLAY" up
	ipc() { ip "$@"; }
}

AGENT='
import os, socket, sys, subprocess
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(8)
while True:
    c, _ = s.accept()
    f = c.makefile("rw")
    cmd = f.readline().strip()
    if cmd == "stat":
        f.write(open("/proc/stat").readline())
    elif cmd == "sttstats":
        out = subprocess.run(["ethtool", "-S", "stt0"], capture_output=True, text=True).stdout
        f.write(" ".join(l.strip().replace(": ", "=") for l in out.splitlines()[1:]
                         if not l.strip().endswith(": 0")) + "\n")
    elif cmd == "quit":
        f.write("bye\n"); f.flush(); c.close(); break
    else:
        f.write("?\n")
    f.flush()
    c.close()
'

pair_b() {
	pair_underlay
	tunnels_add 2 1
	servers_start
	say "guest b: $UNDERLAY $STT_PAIR_LOCAL, servers up, agent on :$AGENT_PORT"
	# Guest a says quit when done; the timeout covers a guest a that died.
	timeout "${BENCH_AGENT_TIMEOUT:-3000}" python3 -c "$AGENT" "$AGENT_PORT"
	say "guest b: done"
}

pair_a() {
	local up=

	pair_underlay
	PEER=$STT_PAIR_PEER
	tunnels_add 1 2
	OFFLOAD=virtio
	say "guest a: $UNDERLAY $STT_PAIR_LOCAL, waiting for guest b"
	for _ in $(seq 300); do
		if [ "$(timeout 3 bash -c "exec 7<>/dev/tcp/$PEER/$AGENT_PORT && echo ok" 2>/dev/null)" = ok ]; then
			up=1
			break
		fi
		sleep 1
	done
	[ -n "$up" ] || fail "guest b's agent never answered"
	trap 'agent quit >/dev/null 2>&1; rm -rf "$TMP"' EXIT
	warm_up
	info tool="$TOOL" ncpu="$NCPU" duration="$DURATION" reps="$REPS" \
		kernel="$(uname -r)" offload=virtio underlay="$(offloads_of)" \
		stt_mtu="$(cat /sys/class/net/stt0/mtu 2>/dev/null)" \
		vxlan_mtu="$(cat /sys/class/net/vx0/mtu 2>/dev/null)" \
		geneve_mtu="$(cat /sys/class/net/gnv0/mtu 2>/dev/null)"
	run_matrix "$TESTS"
	info stt_stats_a="$(ethtool -S stt0 2>/dev/null | awk -F': *' 'NR > 1 && $2 + 0 { gsub(/ /, "", $1); printf "%s=%s ", $1, $2 }')" \
		stt_stats_b="$(agent sttstats)"
}

case $MODE in
onevm) onevm ;;
pair)
	SCENARIO=pair
	case ${STT_PAIR_ROLE:-} in
	a) pair_a ;;
	b) pair_b ;;
	*) fail "pair: STT_PAIR_ROLE is not set (run through scripts/vm/pair.sh)" ;;
	esac ;;
*) echo "usage: bench-guest onevm|pair [options]" >&2; exit 2 ;;
esac
