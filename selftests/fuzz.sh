#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# Mutation fuzzer: helpers/stt_send builds valid STT frames over IPv4 and
# IPv6 (inner IPv4/IPv6, TCP/UDP, with and without checksum and TSO
# descriptions, VLAN tags), cuts them into segments and mutates them at
# random (bit flips, truncation, frame length and offset fields, TCP and
# STT flags, frame IDs, reordering, duplication, loss, bad checksums),
# FUZZ_COUNT segments in all, from the seed FUZZ_SEED (random if unset;
# a failure prints it: FUZZ_SEED=N reproduces the run). Meanwhile the
# receiver's reassembly memory must stay within its bound; afterwards
# pending frames drain, and a checksummed transfer still works. The
# runner fails the run on any kernel complaint.
#
#   +---- $NS_A (fuzzer) --------+     +---- $NS_B (receiver) -------------+
#   | stt0 192.168.0.1 (key 1)   |     | stt0 192.168.0.2, remote 10.0.0.1 |
#   | stt_send fuzz -> vA        |     | stt6 192.168.6.2, remote fd00::1  |
#   | vA 10.0.0.1 fd00::1 -------+-----+-- vB 10.0.0.2 fd00::2             |
#   +----------------------------+     +-----------------------------------+
#
# Run in the VM:  scripts/vm/run.sh -- selftests/run.sh fuzz.sh
# FUZZ_COUNT: segments (default 100000; make check-debug sets 1000000).

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	fuzz_segments
"

HERE=$(cd "$(dirname "$0")" && pwd)
SEND=$HERE/helpers/stt_send
COUNT=${FUZZ_COUNT:-100000}
SEED=${FUZZ_SEED:-}
B_STT_MAC=02:00:00:00:ee:02
TMP=$(mktemp -d)
SAMPLER=

cleanup()
{
	[[ -n "$SAMPLER" ]] && kill "$SAMPLER" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}

setup()
{
	setup_ns NS_A NS_B && stt_pair_underlay &&
		stt_pair_tunnel "$NS_A" 192.168.0.1 10.0.0.2 &&
		stt_pair_tunnel "$NS_B" 192.168.0.2 10.0.0.1 address $B_STT_MAC ||
		return 1
	printf '%s\n' "link add stt6 address $B_STT_MAC type stt remote fd00::1 key 1" \
		"addr add 192.168.6.2/24 dev stt6" "link set stt6 up" |
		ip -n "$NS_B" -b - || return 1
	b sysctl -qw net.ipv6.conf.stt6.disable_ipv6=1
	B_MAC=$(b cat /sys/class/net/vB/address)
	busywait 10000 a ping -c1 -W1 192.168.0.2 >/dev/null
}

# transfer: 4 MB A -> B over stt0, sha256 compared.
transfer()
{
	XFER_TIMEOUT=200 xfer_once "$NS_B" "$NS_A" 4000000 192.168.0.2
}

fuzz_segments()
{
	local out start secs seen0 seen1 pending rc

	RET=0
	if [[ ! -x "$SEND" ]]; then
		log_skip "mutation fuzzer" "no $SEND (make module builds it)"
		return
	fi
	[[ -n "$SEED" ]] || SEED=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	reasm_sampler "$NS_B" stt0 0.5 "$TMP/samples"
	SAMPLER=$SAMPLER_PID
	seen0=$(stat_of ns_rx_segments)
	start=$(date +%s)
	out=$(a "$SEND" --dev vA --dst-mac "$B_MAC" --inner-mac "$B_STT_MAC" \
		--seed "$SEED" fuzz "$COUNT" 2>&1)
	rc=$?
	check_err "$rc" "stt_send failed: $out"
	# The receiver may still be working through its backlog.
	# shellcheck disable=SC2016 # busywait evaluates it on each try
	BUSYWAIT_SLEEP=0.5 busywait 120000 eval \
		'(($(stat_of ns_rx_segments) - seen0 >= COUNT * 9 / 10))'
	secs=$(($(date +%s) - start))
	seen1=$(stat_of ns_rx_segments)
	kill "$SAMPLER"
	wait "$SAMPLER" 2>/dev/null
	SAMPLER=

	reasm_samples_check "$TMP/samples"
	# Segments that are not STT to the hook (mutated ports, headers)
	# never reach it; most do.
	((seen1 - seen0 >= COUNT / 2))
	check_err $? "the hook saw only $((seen1 - seen0)) of $COUNT segments"
	# shellcheck disable=SC2016 # busywait evaluates it on each try
	BUSYWAIT_SLEEP=0.5 busywait 30000 eval \
		'(($(stat_of ns_reasm_pending_frames) == 0 && $(stat_of ns_reasm_mem_bytes) == 0))'
	pending=$(stat_of ns_reasm_pending_frames)
	check_err $? "reassembly did not drain: $pending frames, $(stat_of ns_reasm_mem_bytes) bytes"
	transfer
	check_err $? "transfer after the fuzzing failed: $XFER_INFO"
	log_info "stt_send: $(tail -n 1 <<<"$out"); hook saw $((seen1 - seen0)) segments in ${secs}s; max ns_reasm_mem_bytes $REASM_MAX"
	log_info "drops: $(b ethtool -S stt0 | awk '$1 ~ /^ns_drop_/ && $2 > 0 { printf "%s%s ", $1, $2 }')"
	log_info "delivered: stt0 $(b ethtool -S stt0 | awk '$1 ~ /^rx_(frames|mss|fraglist|linear)/ && $2 > 0 { printf "%s%s ", $1, $2 }')"
	log_info "delivered: stt6 $(b ethtool -S stt6 | awk '$1 ~ /^rx_(frames|mss|fraglist|linear)/ && $2 > 0 { printf "%s%s ", $1, $2 }')"
	[[ $RET -ne 0 ]] && log_info "reproduce with FUZZ_SEED=$SEED FUZZ_COUNT=$COUNT"
	log_test "mutation fuzzer: $COUNT segments, seed $SEED" \
		 "max reassembly memory $REASM_MAX bytes"
}

require_root
require_stt
require_command ethtool
require_command python3

if ! setup; then
	echo "SKIP: setup failed (stt devices or veth)"
	exit $ksft_skip
fi
tests_run
tests_exit
