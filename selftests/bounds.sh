#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# Bounds an STT sender controls, and frame IDs:
#
# - frame IDs: every CPU starts at a random value on every module load
#   (as at boot), so IDs do not repeat after a restart; IDs of different
#   CPUs never collide (pings pinned to each CPU, IDs read on the wire);
# - inner MSS: a frame whose STT header says MSS 1..47 becomes a GSO
#   packet of at least TCP_MIN_SND_MSS (48) bytes per segment: forwarded
#   by the receiver to a third host over a veth without TSO, 1000 bytes
#   of payload arrive in 21 segments, not up to 1000 (rx_mss_clamped);
# - reassembly hash: incomplete frames whose keys all share one bucket
#   under a known seed (helpers/stt_send collide, jhash2 seed 0) must
#   spread over the table: the longest chain walked (ns_reasm_chain_max)
#   stays short.
#
#   +---- $NS_A -----------------+     +---- $NS_B -------------+     +-- $NS_C ------+
#   | stt0 192.168.0.1 (key 1)   |     | stt0 192.168.0.2       |     |               |
#   | stt_craft.py / stt_send    |     |   02:00:00:00:ee:02    |     |               |
#   | vA 10.0.0.1 ---------------+-----+-- vB 10.0.0.2          |     |               |
#   +----------------------------+     | vBC 203.0.113.1 -------+-----+- vC .2        |
#                                      +------------------------+     +---------------+
#
# Run in the VM:  scripts/vm/run.sh -- selftests/run.sh bounds.sh

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	frame_ids
	mss_floor
	reasm_hash_collisions
"

HERE=$(cd "$(dirname "$0")" && pwd)
CRAFT=$HERE/stt_craft.py
SEND=$HERE/helpers/stt_send
PARAMS=/sys/module/stt/parameters
B_STT_MAC=02:00:00:00:ee:02
TMP=$(mktemp -d)
ORIG_MAX_MEM=
ORIG_TIMEOUT=

cleanup()
{
	[[ -n "$ORIG_MAX_MEM" ]] && echo "$ORIG_MAX_MEM" >"$PARAMS/reasm_max_mem"
	[[ -n "$ORIG_TIMEOUT" ]] && echo "$ORIG_TIMEOUT" >"$PARAMS/reasm_timeout_ms"
	rm -rf "$TMP"
}

tunnels()
{
	stt_pair_tunnel "$NS_A" 192.168.0.1 10.0.0.2 &&
		stt_pair_tunnel "$NS_B" 192.168.0.2 10.0.0.1 address $B_STT_MAC
}

setup()
{
	setup_ns NS_A NS_B NS_C && stt_pair_underlay && tunnels || return 1
	B_MAC=$(b cat /sys/class/net/vB/address)
	ip link add vBC netns "$NS_B" type veth peer name vC netns "$NS_C" ||
		return 1
	b ip addr add 203.0.113.1/24 dev vBC
	c ip addr add 203.0.113.2/24 dev vC
	b ip link set vBC up
	c ip link set vC up
	b sysctl -qw net.ipv4.ip_forward=1
	b sysctl -qw net.ipv4.conf.all.rp_filter=0
	b sysctl -qw net.ipv4.conf.stt0.rp_filter=0
	ORIG_MAX_MEM=$(cat $PARAMS/reasm_max_mem)
	ORIG_TIMEOUT=$(cat $PARAMS/reasm_timeout_ms)
	busywait 10000 a ping -c1 -W1 192.168.0.2 >/dev/null
}

# ---- frame IDs ---------------------------------------------------------------

# frame_ids_sample OUT: pings pinned to each CPU, OUT gets "cpu id" lines
# (frame IDs of the STT frames from A, read from the ACK field on vB).
frame_ids_sample()
{
	local out=$1 cpu n pid

	n=$(nproc)

	a ip neigh replace 192.168.0.2 lladdr "$B_STT_MAC" nud permanent dev stt0
	: >"$out"
	for ((cpu = 0; cpu < n; cpu++)); do
		b tcpdump -i vB -n -S -l -c 3 \
			"src host 10.0.0.1 and tcp dst port 7471" \
			>"$TMP/td" 2>"$TMP/td.err" &
		pid=$!
		busywait 10000 grep -q 'listening on' "$TMP/td.err" ||
			return 1
		a taskset -c "$cpu" ping -q -c 3 -i 0.2 192.168.0.2 >/dev/null
		timeout 10 tail --pid="$pid" -f /dev/null
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		grep -o 'ack [0-9]*' "$TMP/td" | awk -v c="$cpu" '{ print c, $2 }' \
			>>"$out"
	done
}

frame_ids()
{
	local l1 l2 n dup common cross

	RET=0
	if [[ -z "$(stt_ko)" ]]; then
		log_skip "frame IDs" "no stt.ko to load again"
		return
	fi
	if ! command -v tcpdump >/dev/null; then
		log_skip "frame IDs" "no tcpdump"
		return
	fi
	for l in 1 2; do
		stt_reload && tunnels
		check_err $? "reload $l: cannot load stt or recreate the tunnel"
		frame_ids_sample "$TMP/ids$l"
		check_err $? "reload $l: tcpdump did not start"
	done
	l1=$(awk '{ print $2 }' "$TMP/ids1" | sort)
	l2=$(awk '{ print $2 }' "$TMP/ids2" | sort)
	n=$(wc -l <"$TMP/ids1")
	((n >= 3 * $(nproc)))
	check_err $? "only $n frame IDs seen after the first load"
	dup=$(cat "$TMP/ids1" "$TMP/ids2" | awk '{ print $2 }' | sort | uniq -d |
	      head -5 | tr '\n' ' ')
	common=$(comm -12 <(echo "$l1" | sort -u) <(echo "$l2" | sort -u) |
		 wc -l)
	((common == 0))
	check_err $? "$common frame IDs repeat after a module reload: $dup"
	# One ID sent from two CPUs, in either load?
	cross=$(cat "$TMP/ids1" "$TMP/ids2" | sort -u |
		awk '{ print $2 }' | sort | uniq -d | wc -l)
	((cross == 0))
	check_err $? "$cross frame IDs sent from more than one CPU"
	log_info "load 1: $(awk '{ printf "cpu%s:%08x ", $1, $2 }' "$TMP/ids1")"
	log_info "load 2: $(awk '{ printf "cpu%s:%08x ", $1, $2 }' "$TMP/ids2")"
	log_test "frame IDs: random per CPU and load, distinct across CPUs" \
		 "$n IDs per load on $(nproc) CPUs"
}

# ---- MSS floor ---------------------------------------------------------------

# drops_of: the sum of B's STT drop counters.
drops_of() { b ethtool -S stt0 | awk '$1 ~ /drop/ { n += $2 } END { print n + 0 }'; }

mss_floor()
{
	local n=20 m0 m1 d0 d1 dump seg48 seg40 other frames

	RET=0
	# B segments what it forwards to C in software.
	b ethtool -K vBC tso off >/dev/null
	busywait 5000 b ping -c1 -W1 203.0.113.2 >/dev/null
	check_err $? "B cannot reach C"
	m0=$(stat_of rx_mss_clamped)
	d0=$(drops_of)
	# The TCP payload of every segment C receives.
	rm -f "$TMP/mss.err"
	c timeout 120 tcpdump -i vC -nn -q -l 'tcp port 9' \
		>"$TMP/mss.tcpdump" 2>"$TMP/mss.err" &
	dump=$!
	busywait 30000 grep -q 'listening on' "$TMP/mss.err"
	check_err $? "tcpdump on vC did not start: $(cat "$TMP/mss.err")"
	out=$(a python3 "$CRAFT" --dev vA --dst-mac "$B_MAC" --count "$n" \
		send mss_tiny 2>&1)
	check_err $? "stt_craft.py send mss_tiny: $out"
	# 1000 bytes in 48-byte segments: 20 of 48 and one of 40 per frame
	# (a debug kernel forwards them slowly).
	# shellcheck disable=SC2016 # busywait evaluates it on each try
	BUSYWAIT_SLEEP=0.5 busywait 60000 \
		eval '(($(grep -c " tcp 40$" "$TMP/mss.tcpdump") >= n))'
	file_settled "$TMP/mss.tcpdump"
	kill "$dump" 2>/dev/null
	wait "$dump" 2>/dev/null
	m1=$(stat_of rx_mss_clamped)
	d1=$(drops_of)
	seg48=$(grep -c ' tcp 48$' "$TMP/mss.tcpdump")
	seg40=$(grep -c ' tcp 40$' "$TMP/mss.tcpdump")
	other=$(grep -c ' tcp ' "$TMP/mss.tcpdump")
	other=$((other - seg48 - seg40))
	frames=$seg40
	((m1 - ${m0:-0} == n))
	check_err $? "rx_mss_clamped +$((m1 - ${m0:-0})), want $n"
	# The floor: every segment forwarded carries 48 bytes but the last of
	# each frame, 21 per frame, none smaller (the sender asked for 1..20).
	((other == 0 && seg48 == 20 * frames && frames > 0))
	check_err $? "segments C received: $seg48 of 48 bytes, $seg40 of 40, $other of other sizes; want 20 of 48 and one of 40 per frame"
	# A frame that did not reach C was not dropped by STT (a debug kernel
	# has lost one of the 20 on the forwarding path after B's stt0).
	((frames == n || d1 == d0))
	check_err $? "$((n - frames)) frames did not reach C and B's STT drop counters rose by $((d1 - d0))"
	log_test "inner MSS 1..47 raised to 48 (forwarded in 21 segments, not 1000)" \
		 "$frames of $n frames at C, ${seg48}x48 + ${seg40}x40 bytes; rx_mss_clamped +$((m1 - ${m0:-0}))"
}

# ---- reassembly hash ---------------------------------------------------------

reasm_hash_collisions()
{
	local n=3000 out chain pending

	RET=0
	if [[ ! -x "$SEND" ]]; then
		log_skip "reassembly hash under colliding keys" "no $SEND (make module builds it)"
		return
	fi
	# Hold every frame: room for all of them, no expiry meanwhile.
	echo $((32 << 20)) >"$PARAMS/reasm_max_mem"
	echo 120000 >"$PARAMS/reasm_timeout_ms"
	out=$(a "$SEND" --dev vA --dst-mac "$B_MAC" collide "$n" 2>&1)
	check_err $? "stt_send collide failed: $out"
	# A debug kernel takes a while for 3000 segments.
	# shellcheck disable=SC2016 # busywait evaluates it on each try
	BUSYWAIT_SLEEP=0.5 busywait 120000 \
		eval '(($(stat_of ns_reasm_pending_frames) >= n * 9 / 10))'
	pending=$(stat_of ns_reasm_pending_frames)
	chain=$(stat_of ns_reasm_chain_max)
	((pending >= n * 9 / 10))
	check_err $? "only $pending of $n incomplete frames held"
	# 3000 keys over 1024 buckets: a random seed gives chains of a
	# dozen or so; a known one, one chain of 3000.
	((chain <= 32))
	check_err $? "longest hash chain walked: $chain (of $pending frames)"
	# Each frame keeps its expiry time: evict them instead. With no
	# memory allowed, one more segment pushes out every older frame.
	echo 0 >"$PARAMS/reasm_max_mem"
	a "$SEND" --dev vA --dst-mac "$B_MAC" collide 1 >/dev/null 2>&1
	# shellcheck disable=SC2016 # busywait evaluates it on each try
	BUSYWAIT_SLEEP=0.5 busywait 30000 \
		eval '(($(stat_of ns_reasm_pending_frames) == 0))'
	check_err $? "frames still pending after eviction: $(stat_of ns_reasm_pending_frames)"
	echo "$ORIG_MAX_MEM" >"$PARAMS/reasm_max_mem"
	echo "$ORIG_TIMEOUT" >"$PARAMS/reasm_timeout_ms"
	log_test "reassembly hash: $n keys aimed at one bucket spread out" \
		 "pending $pending, longest chain $chain"
}

require_root
require_stt
require_command ethtool
require_command python3
require_command taskset

if ! setup; then
	echo "SKIP: setup failed (stt devices or veth)"
	exit $ksft_skip
fi
tests_run
tests_exit
