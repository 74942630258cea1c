#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# Hostile input: a peer crafts malformed STT segments (stt_craft.py, raw
# AF_PACKET socket on its veth) class by class; each class must land on its
# own ethtool -S drop reason with the exact expected count, and every other
# counter must stay put. Then a reassembly flood (incomplete frames from
# thousands of frame IDs and source ports) runs beside a legitimate
# transfer, with GRO off and on at the receiver: reassembly memory stays
# within reasm_max_mem, the transfer arrives intact, memory drains to zero
# after the expiry time. The runner fails the run on any kernel complaint.
#
#   +---- $NS_A (peer, attacker) ------+     +---- $NS_B (receiver) -------+
#   | stt0 192.168.0.1/24              |     | stt0 192.168.0.2/24         |
#   |   remote 10.0.0.2 key 1          |     |   remote 10.0.0.1 key 1     |
#   | stt_craft.py -> AF_PACKET on vA  |     |   ethtool -S stt0           |
#   | vA 10.0.0.1/24 fd00::1/64  ------+-----+-- vB 10.0.0.2/24 fd00::2/64 |
#   +----------------------------------+     +-----------------------------+
#
# Run in the VM:  scripts/vm/run.sh --timeout 1500 -- selftests/hostile.sh
# HOSTILE_COUNT: packets per class (default 400; ~33 classes, ~17,000
# packets). XFER_BYTES: size of each checksummed transfer (default 8 MB).
# STT_CRAFT_SEED: what every class sends (random contents, bad checksums)
# follows from it; drawn and logged when unset, so a failure repeats.

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	baseline_transfer
	malformed_classes
	inner_checksums
	inner_checksums_gro
	outer_ipv6_fragments
	transfer_after_hostile
	reasm_flood_gro_off
	reasm_flood_gro_on
"

CRAFT=$(cd "$(dirname "$0")" && pwd)/stt_craft.py
HOLD=$(cd "$(dirname "$0")" && pwd)/stt_hold.py
COUNT=${HOSTILE_COUNT:-400}
XFER_BYTES=${XFER_BYTES:-8000000}
SEED=${STT_CRAFT_SEED:-$((RANDOM << 15 | RANDOM))}
PARAMS=/sys/module/stt/parameters
TOTAL_SENT=0
declare -A C0 C1

setup()
{
	stt_pair_setup || return 1
	B_MAC=$(b cat /sys/class/net/vB/address)
	log_info "crafted contents: STT_CRAFT_SEED=$SEED repeats them"
	ORIG_MAX_MEM=$(cat $PARAMS/reasm_max_mem)
	ORIG_TIMEOUT=$(cat $PARAMS/reasm_timeout_ms)
	# The tunnel must pass traffic before anything else means something.
	busywait 10000 a ping -c1 -W1 192.168.0.2 >/dev/null || return 1
	# Then no ARP over it: the classes count every frame B receives, and
	# B's probe of A's entry, 5 s after that ping, drew a reply into the
	# count of whichever test ran then (inner_checksums run alone).
	b ip neigh replace 192.168.0.1 dev stt0 nud permanent \
		lladdr "$(a cat /sys/class/net/stt0/address)" &&
		a ip neigh replace 192.168.0.2 dev stt0 nud permanent \
			lladdr "$(b cat /sys/class/net/stt0/address)"
}

cleanup()
{
	[[ -n "$FLOOD_PID" ]] && kill "$FLOOD_PID" 2>/dev/null
	[[ -n "$ORIG_MAX_MEM" ]] && echo "$ORIG_MAX_MEM" >"$PARAMS/reasm_max_mem"
	[[ -n "$ORIG_TIMEOUT" ]] &&
		echo "$ORIG_TIMEOUT" >"$PARAMS/reasm_timeout_ms"
	wait 2>/dev/null
	[[ -n "$TMP" ]] && rm -rf "$TMP"
}

# CRAFT_ARGS: more stt_craft.py options, for one call.
craft()
{
	# shellcheck disable=SC2086 # CRAFT_ARGS is a list of words
	a python3 "$CRAFT" --dev vA --dst-mac "$B_MAC" --seed "$SEED" \
		$CRAFT_ARGS "$@"
}

# snap ARRAY: the receiver's ethtool -S stt0 into associative array ARRAY.
snap() { dev_stats "$1" "$NS_B" stt0; }

delta() { echo $((${C1[$1]:-0} - ${C0[$1]:-0})); }

# rx_done N: the receiver's hook has seen N more segments than in C0.
rx_done()
{
	local n

	n=$(stat_of ns_rx_segments)
	((n - C0[ns_rx_segments] >= $1))
}

# check_counters "name=value ..." [IGNORE_REGEX]: every counted statistic
# (ns_* counters, per-device rx_frames_* / rx_reassembled_segments) moved
# by exactly the given value, 0 when not named. "a+b=v" checks a sum.
check_counters()
{
	local spec=$1 ignore=${2:-^$}
	local -A want summed
	local item k v sum n bad=

	for item in $spec; do
		want[${item%%=*}]=${item#*=}
	done
	for k in "${!want[@]}"; do
		[[ $k == *+* ]] || continue
		sum=0
		for n in ${k//+/ }; do
			sum=$((sum + $(delta "$n")))
			summed[$n]=1
		done
		((sum == want[$k])) || bad+=" $k=$sum(want ${want[$k]})"
	done
	for k in "${!C1[@]}"; do
		case $k in
		ns_reasm_mem_bytes | ns_reasm_mem_limit | ns_reasm_pending_frames | \
		ns_reasm_chain_max)
			continue ;;
		ns_* | rx_frames_* | rx_reassembled_segments) ;;
		*) continue ;;
		esac
		[[ $k =~ $ignore || -n "${summed[$k]}" ]] && continue
		v=$(delta "$k")
		((v == ${want[$k]:-0})) || bad+=" $k=$v(want ${want[$k]:-0})"
	done
	[[ -z "$bad" ]] && return 0
	echo "${bad# }"
	return 1
}

# transfer DESC: XFER_BYTES from A to B over the tunnel, sha256 compared.
transfer()
{
	XFER_TIMEOUT=200 xfer_once "$NS_B" "$NS_A" "$XFER_BYTES" 192.168.0.2
	local rc=$?

	log_info "transfer: $XFER_INFO"
	return "$rc"
}

baseline_transfer()
{
	RET=0
	transfer
	check_err $? "transfer over the tunnel failed or differs"
	log_test "checksummed transfer before hostile input"
}

# class NAME SEEN EXPECT...: send COUNT packets of class NAME; the hook
# must see SEEN segments (an expression in N = COUNT) and the counters
# must move as EXPECT says (value expressions in N).
class()
{
	local name=$1 seen=$2 spec=$3 ignore=$4
	# shellcheck disable=SC2034 # N is read by the $((...)) below
	local N=$COUNT item out exp='' bad

	for item in $spec; do
		exp+=" ${item%%=*}=$((${item#*=}))"
	done
	seen=$((seen))

	# The previous class's final snapshot is this one's start.
	if ((${#C1[@]})); then
		for item in "${!C1[@]}"; do
			C0[$item]=${C1[$item]}
		done
	else
		snap C0
	fi
	out=$(craft --count "$COUNT" send "$name")
	check_err $? "stt_craft.py send $name failed: $out"
	TOTAL_SENT=$((TOTAL_SENT + $(awk '{ print $2 }' <<<"$out")))
	busywait 10000 rx_done "$seen"
	snap C1
	exp+=" ns_rx_segments=$seen"
	bad=$(check_counters "$exp" "$ignore")
	check_err $? "$name: $bad"
	[[ -z "$bad" ]] && echo "    $name: $out ->$exp" || echo "    $name: $bad"
}

malformed_classes()
{
	local t

	RET=0
	C1=()
	echo "$ORIG_TIMEOUT" >"$PARAMS/reasm_timeout_ms"

	class good		N	"rx_frames_whole=N"
	class good_reasm	3*N	"ns_reasm_frames=N ns_reasm_segments=3*N
				 rx_frames_reassembled=N
				 rx_reassembled_segments=3*N"
	class trunc_tcp		N	"ns_drop_truncated=N"
	class bad_csum		N	"ns_drop_bad_csum=N"
	class tcp_flags		N	"ns_drop_tcp_flags=N"
	class empty		N	"ns_drop_empty=N"
	class len_below_18	N	"ns_drop_bad_frame_len=N"
	class len_below_32	N	"ns_drop_bad_frame_len=N"
	class len_zero_partial	N	"ns_drop_bad_frame_len=N"
	class offset_over	N	"ns_drop_bad_offset=N"
	class offset_65535	N	"ns_drop_bad_offset=N"
	class offset_past	N	"ns_drop_bad_offset=N"
	class len_mismatch	2*N	"ns_drop_len_mismatch=N"
	class overlap		2*N	"ns_drop_overlap=N"
	class duplicate		4*N	"ns_drop_duplicate=N ns_reasm_frames=N
				 ns_reasm_segments=3*N rx_frames_reassembled=N
				 rx_reassembled_segments=3*N"
	# A segment inside one held already (GRO merged it with the next
	# one before its duplicate came): dropped alone, the frame kept.
	class dup_inside	4*N	"ns_drop_duplicate=2*N ns_reasm_frames=N
				 ns_reasm_segments=2*N rx_frames_reassembled=N
				 rx_reassembled_segments=2*N"
	# The reverse: two segments held, then their duplicates merged
	# into one: it replaces them, the frame kept.
	class dup_around	4*N	"ns_drop_duplicate=2*N ns_reasm_frames=N
				 ns_reasm_segments=2*N rx_frames_reassembled=N
				 rx_reassembled_segments=2*N"
	class dup_around_mid	3*N	"ns_drop_duplicate=N ns_reasm_frames=N
				 ns_reasm_segments=2*N rx_frames_reassembled=N
				 rx_reassembled_segments=2*N"
	class overlap_past_inside 3*N	"ns_drop_overlap=N"
	class l4_past		N	"ns_drop_bad_offload=N"
	class l4_hdr_out	N	"ns_drop_bad_offload=N"
	class l4_small		N	"ns_drop_bad_offload=N"
	class mss_no_csum	N	"ns_drop_bad_offload=N"
	class mss_udp		N	"ns_drop_bad_offload=N"
	class csum_nonip	N	"ns_drop_bad_offload=N"
	# Legal, if odd: frames of 3 MSS in 64-byte segments, more pieces
	# to an MSS than a skb has fragments: linearized and delivered.
	class gso_small_segs	"67*((N+19)/20)" \
		"ns_reasm_frames=(N+19)/20 ns_reasm_segments=67*((N+19)/20)
		 rx_frames_reassembled=(N+19)/20 rx_frames_gso=(N+19)/20
		 rx_reassembled_segments=67*((N+19)/20)"
	t=$(delta rx_linearized)
	((t == (COUNT + 19) / 20))
	check_err $? "gso_small_segs: rx_linearized +$t for $(((COUNT + 19) / 20)) frames"
	class vlan_no_v		N	"ns_drop_bad_vlan=N"
	class version		N	"ns_drop_bad_version=N"
	class rsvd_flags	N	"ns_drop_bad_flags=N"
	# The reserved byte and the padding are not checked (the draft asks
	# senders for zeros; receivers ignore them): delivered.
	class rsvd_byte		N	"rx_frames_whole=N"
	class unknown_key	N	"ns_drop_no_device=N"
	class ecn		N	"ns_drop_ecn=N"
	class v6_exthdr		N	"ns_drop_outer_exthdr=N"
	# IPv4 reassembles before LOCAL_IN: a router fragments segments
	# sent without DF ("df unset"), the hook takes what IP put together.
	class v4_frag		N	"ns_rx_outer_reassembled=N rx_frames_whole=N"

	# Incomplete frames, then random ones: wait for the expiry.
	echo 500 >"$PARAMS/reasm_timeout_ms"
	class incomplete	N	"" "^ns_drop_reasm_timeout$"
	t=$(busywait 5000 pending_zero)
	check_err $? "incomplete frames still pending after 5 s: $t"
	snap C1
	bad=$(check_counters "ns_drop_reasm_timeout=$COUNT
			      ns_rx_segments=$COUNT")
	check_err $? "incomplete: $bad"

	C1=()
	snap C0
	out=$(craft --count $((COUNT * 5)) send fuzz)
	check_err $? "stt_craft.py send fuzz failed: $out"
	TOTAL_SENT=$((TOTAL_SENT + COUNT * 5))
	busywait 10000 rx_done $((COUNT * 5))
	check_err $? "fuzz: the hook did not see every segment"
	t=$(busywait 5000 pending_zero)
	check_err $? "fuzz: frames still pending after 5 s: $t"
	snap C1
	log_info "fuzz: $(for k in "${!C1[@]}"; do
		[[ $k == ns_* && $(delta "$k") != 0 ]] &&
			echo -n "$k+$(delta "$k") "; done)"
	echo "$ORIG_TIMEOUT" >"$PARAMS/reasm_timeout_ms"

	log_info "$TOTAL_SENT crafted packets sent"
	((TOTAL_SENT >= 10000))
	check_err $? "only $TOTAL_SENT packets sent"
	log_test "malformed segments: each class under its own counter"
}

udp_stat() { snmp_stat "$NS_B" "Udp$1"; }

# udp_counted N OK0 ERR0: the receiver's UDP has judged N more datagrams.
udp_counted()
{
	(($(udp_stat NoPorts) + $(udp_stat InCsumErrors) - $2 - $3 >= $1))
}

# Frames without checksum flags leave the inner checksum to the inner
# stack, which may take the outer segments' sums for it (the hook's
# software validation leaves them CHECKSUM_COMPLETE): a datagram with a
# wrong UDP checksum must still be dropped, a right one accepted, whole or
# reassembled from segments at odd offsets.
inner_checksums()
{
	local cls mac ok0 ok1 err0 err1 whole=$((COUNT / 2)) reasm=$((COUNT - COUNT / 2))

	RET=0
	C1=()
	mac=$(b cat /sys/class/net/stt0/address)
	for cls in inner_udp inner_udp_bad; do
		ok0=$(udp_stat NoPorts)
		err0=$(udp_stat InCsumErrors)
		CRAFT_ARGS="--inner-dst-mac $mac" class "$cls" \
			"$whole + 3 * $reasm" "rx_frames_whole=$whole
			ns_reasm_frames=$reasm ns_reasm_segments=3*$reasm
			rx_frames_reassembled=$reasm
			rx_reassembled_segments=3*$reasm"
		busywait 5000 udp_counted "$COUNT" "$ok0" "$err0"
		ok1=$(udp_stat NoPorts)
		err1=$(udp_stat InCsumErrors)
		if [[ $cls == inner_udp ]]; then
			((ok1 - ok0 == COUNT && err1 == err0))
		else
			((err1 - err0 == COUNT && ok1 == ok0))
		fi
		check_err $? "$cls: UdpNoPorts +$((ok1 - ok0)), UdpInCsumErrors +$((err1 - err0)) for $COUNT datagrams"
		log_info "$cls: UdpNoPorts +$((ok1 - ok0)), UdpInCsumErrors +$((err1 - err0))"
	done
	log_test "inner checksums without flags: wrong ones dropped by the inner stack, right ones taken"
}

# The same datagrams with GRO on the receiver's underlay. GRO checks each
# outer segment's checksum and marks it CHECKSUM_UNNECESSARY, or merges
# segments into one CHECKSUM_PARTIAL packet, as a NIC that validates TCP
# does: the hook's validation then takes the outer sum on trust and sets
# csum_valid. That the outer sum was right says nothing about the inner
# one. UDP and TCP reset csum_valid before they look; a packet socket
# does not: it must not be told (TP_STATUS_CSUM_VALID) that a datagram
# with a wrong checksum was verified, and the inner stack must drop it.
inner_checksums_gro()
{
	local cls mac out ok0 ok1 err0 err1 hold n bytes udp valid

	RET=0
	mac=$(b cat /sys/class/net/stt0/address)
	# veth hands a TSO-capable peer's packets past GRO (it would only
	# have them whole again): vA's TSO off puts vB's GRO on their path.
	a ethtool -K vA tso off >/dev/null &&
		b ethtool -K vB gro on >/dev/null
	check_err $? "ethtool -K vA tso off / vB gro on failed"
	for cls in inner_udp inner_udp_bad; do
		ip netns exec "$NS_B" "$PY" "$HOLD" --udp-port 9 stt0 \
			>"$TMP/hold.out" &
		hold=$!
		busywait 30000 file_has "$TMP/hold.out" ready
		check_err $? "stt_hold.py did not start"
		ok0=$(udp_stat NoPorts)
		err0=$(udp_stat InCsumErrors)
		out=$(CRAFT_ARGS="--inner-dst-mac $mac" craft --count "$COUNT" \
			send "$cls")
		check_err $? "stt_craft.py send $cls failed: $out"
		busywait 5000 udp_counted "$COUNT" "$ok0" "$err0"
		ok1=$(udp_stat NoPorts)
		err1=$(udp_stat InCsumErrors)
		kill -USR1 "$hold"
		wait "$hold"
		read -r n bytes udp valid < <(sed -n 2p "$TMP/hold.out")
		if [[ $cls == inner_udp ]]; then
			((ok1 - ok0 == COUNT && err1 == err0))
		else
			((err1 - err0 == COUNT && ok1 == ok0))
		fi
		check_err $? "$cls: UdpNoPorts +$((ok1 - ok0)), UdpInCsumErrors +$((err1 - err0)) for $COUNT datagrams"
		((${udp:-0} == COUNT))
		check_err $? "$cls: the packet socket on stt0 saw ${udp:-no} of $COUNT datagrams"
		if [[ $cls == inner_udp_bad ]]; then
			((${valid:-1} == 0))
			check_err $? "$cls: ${valid:-?} of ${udp:-?} datagrams with wrong checksums reported TP_STATUS_CSUM_VALID"
		fi
		log_info "$cls: UdpNoPorts +$((ok1 - ok0)), UdpInCsumErrors +$((err1 - err0)), TP_STATUS_CSUM_VALID ${valid:-?} of ${udp:-?} (packets $n, $bytes bytes)"
	done
	b ethtool -K vB gro off >/dev/null
	a ethtool -K vA tso on >/dev/null
	log_test "inner checksums without flags, underlay GRO on: wrong ones dropped and never reported verified"
}

# First fragments are stolen and dropped; the others go to IPv6
# reassembly (after LOCAL_IN), wait there for a first fragment that never
# comes and expire. Unless nf_defrag_ipv6 is active in the namespace
# (conntrack rules; seen also with openvswitch.ko loaded): then IPv6
# reassembles at PRE_ROUTING and the hook never sees a fragment. A test
# of its own, so that this known driver issue does not hide the rest.
outer_ipv6_fragments()
{
	RET=0
	C1=()
	class v6_frag		N	"ns_drop_outer_fragment=N"
	# An atomic fragment (offset 0, M clear) is a fragment header all the
	# same; the driver counts it as an extension header today.
	class v6_atomic_frag	N	"ns_drop_outer_fragment+ns_drop_outer_exthdr=N"
	lsmod | grep -q '^nf_defrag_ipv6' &&
		log_info "nf_defrag_ipv6 is loaded: $(lsmod | awk '$1 == "nf_defrag_ipv6" { print $4 }')"
	log_test "outer IPv6 fragments dropped as fragments"
}

# pending_zero: no frame pending and no memory held in reassembly.
pending_zero()
{
	local m p

	m=$(stat_of ns_reasm_mem_bytes)
	p=$(stat_of ns_reasm_pending_frames)
	echo "mem $m pending $p"
	((m == 0 && p == 0))
}

transfer_after_hostile()
{
	RET=0
	snap C0
	transfer
	check_err $? "transfer over the tunnel failed or differs"
	log_test "checksummed transfer after hostile input"
}

# reasm_flood GRO: flood while a legitimate transfer runs, the sender
# without TSO (so its frames leave as MTU-sized segments) and the
# receiver's GRO on or off.
reasm_flood()
{
	local gro=$1 limit=1048576 out sampler reasm

	RET=0
	a ethtool -K vA tso off gso off >/dev/null
	b ethtool -K vB gro "$gro" >/dev/null
	echo "$limit" >"$PARAMS/reasm_max_mem"
	echo "$ORIG_TIMEOUT" >"$PARAMS/reasm_timeout_ms"
	snap C0

	# exec: $! is python itself, so kill stops the flood.
	(exec ip netns exec "$NS_A" python3 "$CRAFT" --dev vA --dst-mac "$B_MAC" \
		--pace 0 flood 300 >"$TMP/flood" 2>&1) &
	FLOOD_PID=$!
	reasm_sampler "$NS_B" stt0 0.1 "$TMP/samples"
	sampler=$SAMPLER_PID
	sleep 2

	transfer
	check_err $? "transfer under flood failed or differs"

	kill "$FLOOD_PID"
	wait "$FLOOD_PID"
	FLOOD_PID=
	kill "$sampler"
	wait "$sampler" 2>/dev/null
	snap C1

	reasm_samples_check "$TMP/samples" "$limit"
	reasm=$(delta rx_frames_reassembled)
	log_info "gro $gro: $(cat "$TMP/flood"), $(wc -l <"$TMP/samples") samples, max ns_reasm_mem_bytes $REASM_MAX of $limit, ns_drop_reasm_mem +$(delta ns_drop_reasm_mem), ns_drop_reasm_timeout +$(delta ns_drop_reasm_timeout), legit frames reassembled +$reasm, whole +$(delta rx_frames_whole)"
	(($(delta ns_drop_reasm_mem) > 0))
	check_err $? "the flood never hit the memory bound"
	if [[ $gro == off ]]; then
		((reasm > 0))
		check_err $? "the legitimate transfer did not use reassembly"
	fi

	out=$(busywait $((ORIG_TIMEOUT + 5000)) pending_zero)
	check_err $? "after the expiry time: $out"

	a ethtool -K vA tso on gso on >/dev/null
	b ethtool -K vB gro off >/dev/null
	echo "$ORIG_MAX_MEM" >"$PARAMS/reasm_max_mem"
	log_test "reassembly flood beside a transfer, receiver GRO $gro"
}

reasm_flood_gro_off() { reasm_flood off; }
reasm_flood_gro_on() { reasm_flood on; }

require_root
require_stt
require_command ethtool
require_command python3
require_command ping

TMP=$(mktemp -d)
if ! setup; then
	echo "SKIP: setup failed (stt device or veth)"
	exit $ksft_skip
fi
tests_run
tests_exit
