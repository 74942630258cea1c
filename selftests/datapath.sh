#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# STT datapath: traffic through point-to-point and external STT devices
# over IPv4 and IPv6 underlays, checked end to end (ping, sha256-checked
# TCP transfers), through both receive paths (whole frames from TSO/GRO,
# software reassembly), under underlay impairment (netem), with a VLAN on
# top, large inner MTUs, wrong keys and remotes, on the wire (tshark's STT
# dissector) and for silence of the STT port towards TCP probes.
#
# Shared topology (most tests):
#
#   +---- $NSA ----------------------+         +---- $NSB ----------------------+
#   | stt4: id 42, remote 192.0.2.2  |         | stt4: id 42, remote 192.0.2.1  |
#   |   10.4.0.1/24  fd04::1/64      |         |   10.4.0.2/24  fd04::2/64      |
#   | stt6: id 42, remote 2001:db8::2|         | stt6: id 42, remote 2001:db8::1|
#   |   10.6.0.1/24  fd06::1/64      |         |   10.6.0.2/24  fd06::2/64      |
#   | sttmon (port 7999: shows the   |         | stt_tcp.py server, port 5000   |
#   |   namespace counters)          |         |                                |
#   | va 192.0.2.1/24 2001:db8::1/64 +---------+ vb 192.0.2.2/24 2001:db8::2/64 |
#   |                                |         +--------------------------------+
#   | vac 198.51.100.1/24            |         +---- $NSC ----------------------+
#   |     2001:db8:c::1/64           +---------+ vc 198.51.100.3/24             |
#   +--------------------------------+         |    2001:db8:c::3/64            |
#                                              | (stt4/stt6: wrong remote test) |
#                                              +--------------------------------+
#
# impairment() puts a router between two peers (netem on its egress, see
# there); external() has an external device reach two remotes (see there).
#
# Run in the VM:  scripts/vm/run.sh --timeout 1500 -- selftests/datapath.sh
# Environment: BIG (bytes of the main transfers, default 50 MB), SMALL
# (bytes of the transfers on slow paths, default 10 MB), IMPAIR_BYTES
# (default 5 MB), TESTS="..." for a subset.
#
# Under TCG every program start costs a second or more: the topologies
# are built with "ip -batch", counters are read once per snapshot, and one
# Python process serves (or sends) many transfers.

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	transfer_offloads
	transfer_tso_off
	transfer_gro_off
	reasm_consumed
	reasm_forward
	cloned_segments
	mtu_large
	mtu_reassembled
	vlan
	wrong_key_remote
	wire_ipv4
	wire_ipv6
	port_silence
	impairment
	external
"

BIG=${BIG:-50000000}
SMALL=${SMALL:-10000000}
IMPAIR_BYTES=${IMPAIR_BYTES:-5000000}
HERE=$(cd "$(dirname "$0")" && pwd)
WIRE=$HERE/stt_wire.py
HOLD=$HERE/stt_hold.py
TMPD=$(mktemp -d /tmp/stt-datapath-XXXXXX)
MONPORT=7999
STT_PORT=7471
WIRE_ID6=$((0x123456789a))	# above 2^32

cleanup()
{
	local p

	for p in $(jobs -p); do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMPD"
}

# ---- topology ---------------------------------------------------------------

# stt_cmds DEV ARGS N HOST: "ip -batch" lines for an STT device DEV made
# with ARGS, inner addresses 10.N.0.HOST/24 and fd0N::HOST/64, up.
stt_cmds()
{
	echo "link add $1 type stt $2"
	echo "addr add 10.$3.0.$4/24 dev $1"
	echo "addr add fd0$3::$4/64 dev $1 nodad"
	echo "link set $1 up"
}

# veth_cmds DEV PEER PEER_NS ADDR4 ADDR6: lines for a veth with its peer in
# PEER_NS, the local end addressed and up (the peer is done by its own
# namespace's batch with addr_cmds).
veth_cmds()
{
	echo "link add $1 type veth peer name $2 netns $3"
	addr_cmds "$1" "$4" "$5"
}

addr_cmds()
{
	echo "addr add $2/24 dev $1"
	echo "addr add $3/64 dev $1 nodad"
	echo "link set $1 up"
}

topo_shared()
{
	if [[ -n "$SHARED_UP" ]] && ns_exists "$NSA"; then
		return 0
	fi
	setup_ns NSA NSB NSC || return
	{
		veth_cmds va vb "$NSB" 192.0.2.1 2001:db8::1
		veth_cmds vac vc "$NSC" 198.51.100.1 2001:db8:c::1
		stt_cmds stt4 "id 42 remote 192.0.2.2" 4 1
		stt_cmds stt6 "id 42 remote 2001:db8::2" 6 1
		echo "link add sttmon type stt id 1 remote 203.0.113.99 dstport $MONPORT"
	} | ip -n "$NSA" -b - || return
	{
		addr_cmds vb 192.0.2.2 2001:db8::2
		stt_cmds stt4 "id 42 remote 192.0.2.1" 4 2
		stt_cmds stt6 "id 42 remote 2001:db8::1" 6 2
	} | ip -n "$NSB" -b - || return
	addr_cmds vc 198.51.100.3 2001:db8:c::3 | ip -n "$NSC" -b - || return
	GRO_STATE=
	server_start "$NSB" || return
	SHARED_UP=1
}

# shared_down: the shared topology goes (before tests that build their
# own with the same variable names).
shared_down()
{
	[[ -n "$SHARED_UP" ]] && topo_down "$NSA" "$NSB" "$NSC"
	return 0
}

topo_down()
{
	local ns

	for ns in "$@"; do
		servers_stop "$ns"
		[[ "$ns" == "$NSA" ]] && SHARED_UP=
	done
	cleanup_ns "$@"
}

# offloads TSO GRO [TXCSUM]: the sender's (va) TSO and checksum offload,
# the receiver's (vb) GRO. veth merges (NAPI mode) only once GRO has been
# turned on by the user, so GRO goes off and on again the first time.
offloads()
{
	ip netns exec "$NSA" ethtool -K va tx "${3:-on}" tso "$1" >/dev/null ||
		return
	if [[ "$GRO_STATE" != "$2" ]]; then
		if [[ -z "$GRO_STATE" && "$2" == on ]]; then
			ip netns exec "$NSB" ethtool -K vb gro off >/dev/null ||
				return
		fi
		ip netns exec "$NSB" ethtool -K vb gro "$2" >/dev/null || return
		GRO_STATE=$2
	fi
}

# ---- transfers --------------------------------------------------------------

# "device,inner address,label" for the four underlay x inner cases
COMBOS="stt4,10.4.0.2,IPv4/IPv4 stt4,fd04::2,IPv4/IPv6 stt6,10.6.0.2,IPv6/IPv4 stt6,fd06::2,IPv6/IPv6"

# run_combos WHAT BYTES: ping each combo's peer address, then one client
# run transfers BYTES to each; one TEST line per combo.
run_combos()
{
	local what=$1 bytes=$2 c dev addr label addrs=() pinged=()

	for c in $COMBOS; do
		IFS=, read -r dev addr label <<<"$c"
		addrs+=("$addr")
		ping_ok "$NSA" "$addr"
		pinged+=($?)
	done
	xfer "$NSB" "$NSA" "$bytes" "${addrs[@]}"
	for c in $COMBOS; do
		IFS=, read -r dev addr label <<<"$c"
		RET=0
		check_err "${pinged[0]}" "ping $addr failed"
		pinged=("${pinged[@]:1}")
		xfer_check "$addr"
		log_test "$what: underlay/inner $label" "${XINFO[$addr]}"
	done
}

# Frames per receive path at $NSB: rx_paths_before, traffic,
# rx_paths_after sets RXP[dev.whole], RXP[dev.reasm] and RXP_INFO.
declare -A RXP
rx_paths_before()
{
	local -A c4 c6

	dev_stats c4 "$NSB" stt4
	dev_stats c6 "$NSB" stt6
	RXP=([stt4.whole]=${c4[rx_frames_whole]} [stt4.reasm]=${c4[rx_frames_reassembled]}
	     [stt6.whole]=${c6[rx_frames_whole]} [stt6.reasm]=${c6[rx_frames_reassembled]})
}

rx_paths_after()
{
	local -A c
	local dev

	RXP_INFO=
	for dev in stt4 stt6; do
		dev_stats c "$NSB" "$dev"
		RXP[$dev.whole]=$((c[rx_frames_whole] - RXP[$dev.whole]))
		RXP[$dev.reasm]=$((c[rx_frames_reassembled] - RXP[$dev.reasm]))
		RXP_INFO+="$dev whole +${RXP[$dev.whole]} reassembled +${RXP[$dev.reasm]}, "
	done
	RXP_INFO=${RXP_INFO%, }
}

transfer_offloads()
{
	RET=0
	topo_shared && offloads on on
	check_err $? "topology setup failed"
	if [[ $RET -ne 0 ]]; then
		log_test "ping + TCP transfer with offloads"
		return
	fi
	run_combos "ping + sha256 TCP transfer, offloads on" "$BIG"
}

# sw_gso_transfer GRO: sender TSO off, so the underlay veth segments in
# software, receiver GRO on or off. With GRO on the receiver merges the
# segments back (whole frames, no reassembly); with it off every
# multi-segment frame goes through reassembly. The transfers must come
# through and the counters must show the path taken.
sw_gso_transfer()
{
	local gro=$1 dev desc

	if [[ $gro == on ]]; then
		desc="TSO off, GRO on: GRO merges segments into whole frames"
	else
		desc="TSO off, GRO off: frames arrive through reassembly"
	fi
	RET=0
	topo_shared && offloads off "$gro"
	check_err $? "topology setup failed"
	if [[ $RET -ne 0 ]]; then
		log_test "$desc"
		return
	fi
	rx_paths_before
	run_combos "sender TSO off (sw GSO), receiver GRO $gro" "$SMALL"
	rx_paths_after
	RET=0
	for dev in stt4 stt6; do
		if [[ $gro == on ]]; then
			((RXP[$dev.whole] > 100))
			check_err $? "$dev: few whole frames: $RXP_INFO"
		else
			((RXP[$dev.reasm] > 100 &&
			  RXP[$dev.reasm] > 10 * RXP[$dev.whole]))
			check_err $? "$dev: few reassembled frames: $RXP_INFO"
		fi
	done
	log_test "$desc" "$RXP_INFO"
}

transfer_tso_off() { sw_gso_transfer on; }
transfer_gro_off() { sw_gso_transfer off; }

# Reassembly consumes the segments a frame is built from: freeing them is
# no drop. Drop monitors (dropwatch, perf on skb:kfree_skb, pwru) report
# every kfree_skb() as a packet lost, so a transfer through reassembly
# (sender TSO off, receiver GRO off) must show no kfree_skb() from where
# a complete frame takes its segments' place (stt_fraglist_fit). Counted
# with the skb:kfree_skb tracepoint and a stack trace per event. Real
# drops with STT on the stack (a full backlog under the sender's
# stt_xmit, an expired frame) may happen on a loaded host: reported,
# not judged.
reasm_consumed()
{
	local t=/sys/kernel/tracing ev total stt fit frames desc
	local -A c0 c1

	desc="reassembled segments are consumed, not dropped"
	ev=$t/events/skb/kfree_skb
	if [[ ! -w $ev/enable ]]; then
		log_skip "$desc" "no skb:kfree_skb tracepoint in $t"
		return
	fi
	RET=0
	topo_shared && offloads off off
	check_err $? "topology setup failed"
	if [[ $RET -ne 0 ]]; then
		log_test "$desc"
		return
	fi
	dev_stats c0 "$NSB" stt4
	echo stacktrace >"$ev/trigger" && : >"$t/trace" &&
		echo 1 >"$ev/enable"
	check_err $? "cannot trace skb:kfree_skb"
	xfer "$NSB" "$NSA" "$SMALL" 10.4.0.2
	echo 0 >"$ev/enable"
	# events in all; with an stt_ frame on the stack; with stt_fraglist_fit
	read -r total stt fit < <(awk '
		function done() {
			if (!ev) return
			t++; s += (hit > 0); f += (fit > 0)
		}
		/ kfree_skb: / { done(); ev = 1; hit = 0; fit = 0; next }
		/^ => stt_/ { hit = 1 }
		/^ => stt_fraglist_fit/ { fit = 1 }
		END { done(); print t + 0, s + 0, f + 0 }
	' "$t/trace")
	echo '!stacktrace' >"$ev/trigger"
	: >"$t/trace"
	dev_stats c1 "$NSB" stt4
	frames=$((c1[rx_frames_reassembled] - c0[rx_frames_reassembled]))
	xfer_check 10.4.0.2
	((frames > 100))
	check_err $? "only $frames frames went through reassembly"
	((fit == 0))
	check_err $? "$fit kfree_skb() events came from stt_fraglist_fit ($frames frames reassembled)"
	log_test "$desc" "${XINFO[10.4.0.2]}; $frames frames reassembled; kfree_skb(): $total events, $fit from stt_fraglist_fit, $stt with STT on the stack (figure, not judged)"
}

# A reassembled frame forwarded and cut again: B sends to C through A
# (sender TSO off, A's GRO off: A reassembles every multi-segment frame
# and reshapes it, its old segments' skbs reused as the new frag_list
# members), and A routes the inner packets out of vac without TSO or
# frag_list support, as a real NIC, so skb_segment() cuts each reshaped
# frame. The data must reach C intact.
#
#   B (sender) --STT over vb/va--> A stt4 (reassembly, reshape)
#       --ip_forward, vac: tso off, tx-scatter-gather-fraglist off--> C
reasm_forward()
{
	local desc="reassembled, reshaped frames forwarded and segmented" tx0 tx1
	local -A c0 c1

	RET=0
	topo_shared
	check_err $? "topology setup failed"
	if [[ $RET -ne 0 ]]; then
		log_test "$desc"
		return
	fi
	ip netns exec "$NSB" ethtool -K vb tso off >/dev/null &&
		ip netns exec "$NSA" ethtool -K va gro off >/dev/null &&
		ip netns exec "$NSA" ethtool -K vac tso off \
			tx-scatter-gather-fraglist off >/dev/null &&
		ip netns exec "$NSA" sysctl -qw net.ipv4.ip_forward=1 &&
		ip -n "$NSB" route add 198.51.100.0/24 via 10.4.0.1 dev stt4 &&
		ip -n "$NSC" route add 10.4.0.0/24 via 198.51.100.1 dev vc &&
		server_start "$NSC"
	check_err $? "forwarding setup failed"
	dev_stats c0 "$NSA" stt4
	tx0=$(link_packets "$NSA" vac tx)
	xfer "$NSC" "$NSB" "$SMALL" 198.51.100.3
	tx1=$(link_packets "$NSA" vac tx)
	dev_stats c1 "$NSA" stt4
	servers_stop "$NSC"
	ip -n "$NSC" route del 10.4.0.0/24
	ip -n "$NSB" route del 198.51.100.0/24
	ip netns exec "$NSA" sysctl -qw net.ipv4.ip_forward=0
	ip netns exec "$NSA" ethtool -K vac tso on \
		tx-scatter-gather-fraglist on >/dev/null
	ip netns exec "$NSB" ethtool -K vb tso on >/dev/null
	xfer_check 198.51.100.3
	c1[rx_fraglist_reshaped]=$((c1[rx_fraglist_reshaped] - c0[rx_fraglist_reshaped]))
	((c1[rx_fraglist_reshaped] > 100))
	check_err $? "A reshaped only ${c1[rx_fraglist_reshaped]} frames"
	# every forwarded segment at most one inner MSS (1448 bytes)
	((tx1 - tx0 >= SMALL / 1448))
	check_err $? "vac sent $((tx1 - tx0)) packets for $SMALL bytes: not segmented"
	log_test "$desc" "${XINFO[198.51.100.3]}; A: reshaped +${c1[rx_fraglist_reshaped]}, vac sent $((tx1 - tx0)) packets"
}

# Segments that are clones: a packet socket on the receiver's underlay
# holds a clone of every one of them until the transfers end, so the
# receive path reassembles (receiver GRO off) and reshapes frames, some
# merged in part by GRO (on), whose data and shared info another skb
# still owns, as under netem duplication. Sender TSO off: real segments.
# The data must come through intact; leaks and use-after-free show in
# make check-debug.
cloned_segments()
{
	local gro hold out n b segs
	local -A c0 c1

	for gro in off on; do
		RET=0
		topo_shared && offloads off "$gro"
		check_err $? "topology setup failed"
		ip netns exec "$NSB" "$PY" "$HOLD" vb >"$TMPD/hold.out" &
		hold=$!
		busywait 30000 file_has "$TMPD/hold.out" ready
		check_err $? "stt_hold.py did not start"
		dev_stats c0 "$NSB" stt4
		xfer "$NSB" "$NSA" "$SMALL" 10.4.0.2 fd04::2
		dev_stats c1 "$NSB" stt4
		kill -USR1 "$hold"
		wait "$hold"
		read -r n b < <(sed -n 2p "$TMPD/hold.out")
		segs=$((c1[ns_rx_segments] - c0[ns_rx_segments]))
		xfer_check 10.4.0.2
		xfer_check fd04::2
		((${n:-0} >= segs && segs > 0))
		check_err $? "the packet socket held ${n:-no} packets for $segs STT segments"
		log_test "receiver GRO $gro, every segment cloned: transfers intact" \
			 "held $n packets, ${b:-0} bytes; STT segments +$segs, reassembled +$((c1[ns_reasm_frames] - c0[ns_reasm_frames]))"
	done
}

# mtu_case MTU: pings of exactly MTU bytes with DF over both underlays,
# IPv4 and IPv6 inside (and one byte more fails), TCP transfers.
mtu_case()
{
	local mtu=$1 ns dev a

	RET=0
	for ns in "$NSA" "$NSB"; do
		printf 'link set %s mtu %s\n' stt4 "$mtu" stt6 "$mtu" |
			ip -n "$ns" -b -
		check_err $? "ip link set mtu $mtu failed in $ns"
	done
	for a in 10.4.0.2 10.6.0.2; do
		ping_ok "$NSA" -Mdo -s $((mtu - 28)) "$a"
		check_err $? "ping -s $((mtu - 28)) -M do $a failed"
	done
	for a in fd04::2 fd06::2; do
		ping_ok "$NSA" -Mdo -s $((mtu - 48)) "$a"
		check_err $? "ping -s $((mtu - 48)) -M do $a failed"
	done
	ping_none "$NSA" -Mdo -s $((mtu - 27)) 10.4.0.2
	check_err $? "ping -s $((mtu - 27)) -M do (one byte too big) got through"
	xfer "$NSB" "$NSA" "$SMALL" 10.4.0.2 fd06::2
	xfer_check 10.4.0.2
	xfer_check fd06::2
	log_test "inner MTU $mtu: ping at MTU with DF, TCP transfers" \
		 "v4/v4: ${XINFO[10.4.0.2]}; v6/v6: ${XINFO[fd06::2]}"
}

mtu_large()
{
	local ns

	RET=0
	topo_shared && offloads on on
	check_err $? "topology setup failed"
	if [[ $RET -ne 0 ]]; then
		log_test "large inner MTU"
		return
	fi
	mtu_case 9000
	mtu_case 65463
	for ns in "$NSA" "$NSB"; do
		printf 'link set %s mtu 1500\n' stt4 stt6 | ip -n "$ns" -b -
	done
}

# An inner MTU far above the underlay's, every frame reassembled (sender
# TSO off, receiver GRO off): an inner MSS of 29,948 bytes spans 21 outer
# segments of at most 1,448 bytes, more pieces than one skb's page
# fragments hold (MAX_SKB_FRAGS, 17 unless the kernel was configured
# otherwise), so a frame of two MSS cannot take GRO's frag_list shape
# without a copy: every such GSO frame must be linearized and delivered,
# with nothing dropped. How many GSO frames the inner TCP sends depends
# on timing (none when each write goes out on its own); hostile.sh's
# gso_small_segs class sends them for certain.
mtu_reassembled()
{
	local desc="inner MTU 30000 over MTU 1500, every frame reassembled"
	local ns dev k bad='' info=''
	local -A c0 c1

	RET=0
	topo_shared && offloads off off
	check_err $? "topology setup failed"
	for ns in "$NSA" "$NSB"; do
		printf 'link set %s mtu 30000\n' stt4 stt6 | ip -n "$ns" -b -
		check_err $? "ip link set mtu 30000 failed in $ns"
	done
	if [[ $RET -ne 0 ]]; then
		log_test "$desc"
		return
	fi
	# (dev_stats empties the array first)
	dev_stats c0 "$NSB" stt4
	for dev in stt4 stt6; do
		for k in rx_frames_gso rx_linearized; do
			c0[$dev.$k]=$(dev_stat "$NSB" "$dev" "$k")
		done
	done
	xfer "$NSB" "$NSA" "$SMALL" 10.4.0.2 10.6.0.2
	dev_stats c1 "$NSB" stt4
	for dev in stt4 stt6; do
		for k in rx_frames_gso rx_linearized; do
			c1[$dev.$k]=$(($(dev_stat "$NSB" "$dev" "$k") - c0[$dev.$k]))
		done
	done
	for ns in "$NSA" "$NSB"; do
		printf 'link set %s mtu 1500\n' stt4 stt6 | ip -n "$ns" -b -
	done
	offloads on on
	xfer_check 10.4.0.2
	xfer_check 10.6.0.2
	for k in "${!c1[@]}"; do
		[[ $k == ns_drop_* ]] || continue
		((c1[$k] == c0[$k])) || bad+=" $k+$((c1[$k] - c0[$k]))"
	done
	[[ -z "$bad" ]]
	check_err $? "dropped:$bad"
	for dev in stt4 stt6; do
		((c1[$dev.rx_linearized] == c1[$dev.rx_frames_gso]))
		check_err $? "$dev: ${c1[$dev.rx_frames_gso]} GSO frames, ${c1[$dev.rx_linearized]} linearized"
		info+="; $dev: GSO frames +${c1[$dev.rx_frames_gso]}, linearized +${c1[$dev.rx_linearized]}"
	done
	log_test "$desc" "v4: ${XINFO[10.4.0.2]}; v6: ${XINFO[10.6.0.2]}$info"
}

# ---- VLAN -------------------------------------------------------------------

vlan()
{
	local out line ns h n=0 total=0 bad=

	RET=0
	topo_shared
	check_err $? "topology setup failed"
	for line in "$NSA 1" "$NSB 2"; do
		read -r ns h <<<"$line"
		printf '%s\n' "link add link stt4 name stt4.100 type vlan id 100" \
			"addr add 10.100.0.$h/24 dev stt4.100" \
			"link set stt4.100 up" | ip -n "$ns" -b -
		check_err $? "VLAN device on stt4 in $ns failed"
	done
	if [[ $RET -ne 0 ]]; then
		log_test "VLAN over stt"
		return
	fi
	capture_start "$NSB" vb "$TMPD/vlan.pcap" \
		"src host 192.0.2.1 and tcp dst port $STT_PORT"
	check_err $? "tcpdump did not start"
	ping_ok "$NSA" 10.100.0.2
	check_err $? "ping over stt4.100 failed"
	capture_stop
	# The VLAN device's frames (ARP, ICMP to 10.100.0.2) carry TCI 0x1064
	# (V + VID 100) in the STT header and no in-band tag; stt4's own
	# frames (IPv6 ND, ...) carry no TCI.
	out=$(tshark -n -r "$TMPD/vlan.pcap" -o ip.try_heuristic_first:TRUE \
		-Y stt.context_id -T fields -E separator=, -E occurrence=l \
		-e ip.dst -e stt.vlan -e stt.vlan.v -e stt.vlan.id -e vlan.id \
		2>/dev/null)
	while read -r line; do
		[[ -z "$line" ]] && continue
		total=$((total + 1))
		case $line in
		10.100.0.2,0x1064,1,100,) n=$((n + 1)) ;;
		*,0x1064,1,100,|*,0x0000,0,0,) ;;
		*) bad+="$line " ;;
		esac
	done <<<"$out"
	((n >= 3))
	check_err $? "$n frames to 10.100.0.2 with TCI V=1 VID=100 (of $total), not >= 3"
	[[ -z "$bad" ]]
	check_err $? "unexpected STT VLAN fields (ip.dst,tci,V,id,inner tag): $bad"
	log_test "VLAN 100 on stt4: ping; STT header TCI V=1 VID=100" \
		 "$n tagged ICMP of $total frames"
	ip -n "$NSA" link del stt4.100
	ip -n "$NSB" link del stt4.100
}

# ---- wrong key, wrong remote ------------------------------------------------

# no_delivery NS_SENDER ADDR DEV [rx|SENDER_ADDR]: pings from NS_SENDER
# to ADDR (an IPv4 address of DEV in $NSA) get no answer, $NSA counts
# ns_drop_no_device and receives no echo request; with "rx", DEV receives
# nothing at all (when no other peer may legitimately send); with
# SENDER_ADDR, $NSA has not learnt that address from an ARP request.
no_delivery()
{
	local ns=$1 addr=$2 dev=$3 rx0 ie0 nd rx ie
	local -A c0 c1

	dev_stats c0 "$NSA" "$dev"
	rx0=$(link_packets "$NSA" "$dev" rx)
	ie0=$(snmp_stat "$NSA" IcmpInEchos)
	ping_none "$ns" "$addr"
	check_err $? "ping $addr got answers"
	dev_stats c1 "$NSA" "$dev"
	nd=$((c1[ns_drop_no_device] - c0[ns_drop_no_device]))
	rx=$(($(link_packets "$NSA" "$dev" rx) - rx0))
	ie=$(($(snmp_stat "$NSA" IcmpInEchos) - ie0))
	((nd >= 3))
	check_err $? "ns_drop_no_device grew by $nd, not >= 3"
	((ie == 0))
	check_err $? "$NSA received $ie echo requests"
	if [[ "$4" == rx ]]; then
		((rx == 0))
		check_err $? "$dev received $rx packets"
	elif [[ -n "$4" ]]; then
		[[ -z "$(ip -n "$NSA" neigh show "$4" dev "$dev")" ]]
		check_err $? "$NSA learnt $4 on $dev (an ARP request got through)"
	fi
	NO_DELIVERY_INFO+="$dev: no_device +$nd, echo requests +$ie, rx +$rx; "
}

wrong_key_remote()
{
	local dev

	RET=0
	topo_shared
	check_err $? "topology setup failed"
	ping_ok "$NSB" 10.4.0.1 && ping_ok "$NSB" 10.6.0.1
	check_err $? "control ping with matching keys failed"
	printf 'link set %s type stt id 43\n' stt4 stt6 | ip -n "$NSB" -b -
	check_err $? "ip link set ... type stt id 43 failed"
	NO_DELIVERY_INFO=
	for dev in stt4 stt6; do
		no_delivery "$NSB" "10.${dev#stt}.0.1" "$dev" rx
	done
	log_test "wrong key (peer id 43, ours 42): dropped, counted" \
		 "${NO_DELIVERY_INFO%; }"

	RET=0
	printf 'link set %s type stt id 42\n' stt4 stt6 | ip -n "$NSB" -b -
	ping_ok "$NSB" 10.4.0.1 && ping_ok "$NSB" 10.6.0.1
	check_err $? "control ping from the right remote failed"
	{
		stt_cmds stt4 "id 42 remote 198.51.100.1" 4 3
		stt_cmds stt6 "id 42 remote 2001:db8:c::1" 6 3
	} | ip -n "$NSC" -b -
	check_err $? "stt devices in $NSC failed"
	NO_DELIVERY_INFO=
	for dev in stt4 stt6; do
		no_delivery "$NSC" "10.${dev#stt}.0.1" "$dev" "10.${dev#stt}.0.3"
	done
	log_test "wrong remote (third host with our id): dropped, counted" \
		 "${NO_DELIVERY_INFO%; }"
	printf 'link del %s\n' stt4 stt6 | ip -n "$NSC" -b -
}

# ---- wire conformance -------------------------------------------------------

# wire_case DEV ADDR SRC CHECK-ARGS...: STT frames of a 1 MB TCP transfer
# from $NSA to ADDR, captured on $NSB's veth (sender TSO and checksum
# offload off, receiver GRO off: MTU-sized segments with real checksums),
# decoded by tshark and checked by stt_wire.py.
wire_case()
{
	local dev=$1 addr=$2 src=$3 out

	shift 3
	offloads off off off
	check_err $? "ethtool -K failed"
	ping_ok "$NSA" "$addr"
	check_err $? "ping $addr failed"
	capture_start "$NSB" vb "$TMPD/wire-$dev.pcap" \
		"src host $src and tcp dst port $STT_PORT"
	check_err $? "tcpdump did not start"
	xfer "$NSB" "$NSA" 1000000 "$addr"
	xfer_check "$addr"
	ping_ok "$NSA" "$addr"
	capture_stop
	out=$("$PY" "$WIRE" check "$TMPD/wire-$dev.pcap" "$@" 2>&1)
	check_err $? "$(grep -m3 problem <<<"$out" | tr '\n' ';')"
	log_info "${out%%$'\n'*}"
	if [[ -n "$DUMP_PCAP" ]]; then
		echo "PCAP-BEGIN $dev"
		base64 -w0 "$TMPD/wire-$dev.pcap"
		echo
		echo "PCAP-END"
	fi
}

wire_ipv4()
{
	RET=0
	topo_shared
	check_err $? "topology setup failed"
	wire_case stt4 10.4.0.2 192.0.2.1 --id 42 --mss 1448 --l4off 34 \
		--flags 0x0e
	log_test "wire: IPv4/IPv4 id 42: tshark decodes, fields match"
}

wire_ipv6()
{
	local ns

	RET=0
	topo_shared
	check_err $? "topology setup failed"
	for ns in "$NSA" "$NSB"; do
		ip -n "$ns" link set stt6 type stt id "$WIRE_ID6"
		check_err $? "ip link set stt6 type stt id $WIRE_ID6 failed"
	done
	wire_case stt6 fd06::2 2001:db8::1 --ipv6 --id "$WIRE_ID6" \
		--mss 1428 --l4off 54 --flags 0x0a
	log_test "wire: IPv6/IPv6 id 0x123456789a: tshark decodes, fields match"
	for ns in "$NSA" "$NSB"; do
		ip -n "$ns" link set stt6 type stt id 42
	done
}

# ---- silence of the STT port ------------------------------------------------

# silence STATE: a SYN and a bare ACK from $NSB to $NSA's STT port (IPv4
# and IPv6) get no answer, reach the STT hook (namespace counters, read
# on the monitor device) and no socket can bind the port in $NSA.
silence()
{
	local state=$1 fl em out
	local -A c0 c1

	RET=0
	dev_stats c0 "$NSA" sttmon
	out=$(ip netns exec "$NSB" "$PY" "$WIRE" probe "$STT_PORT" \
		192.0.2.2,192.0.2.1 2001:db8::2,2001:db8::1 \
		--bind-ns "/run/netns/$NSA" 2>&1)
	check_err $? "${out//$'\n'/; } (want no reply, EADDRINUSE)"
	dev_stats c1 "$NSA" sttmon
	fl=$((c1[ns_drop_tcp_flags] - c0[ns_drop_tcp_flags]))
	em=$((c1[ns_drop_empty] - c0[ns_drop_empty]))
	((fl >= 2 && em >= 2))
	check_err $? "probes not seen by the STT hook (tcp_flags +$fl, empty +$em)"
	log_test "SYN/ACK to the STT port: no reply, bind fails; device $state" \
		 "ns_drop_tcp_flags +$fl, ns_drop_empty +$em"
}

port_silence()
{
	local out

	RET=0
	topo_shared
	check_err $? "topology setup failed"
	# The probe itself: a port nobody uses answers with RSTs.
	out=$(ip netns exec "$NSB" "$PY" "$WIRE" probe $((STT_PORT + 1)) \
		192.0.2.2,192.0.2.1 2>&1)
	[[ "$out" == *"replies 2"* ]]
	check_err $? "control probe to a closed port: ${out//$'\n'/; }"
	log_test "probe control: a closed TCP port answers SYN and ACK"
	if [[ $RET -ne 0 ]]; then
		return
	fi

	silence up
	printf 'link set %s down\n' stt4 stt6 | ip -n "$NSA" -b -
	silence down
	printf 'link del %s\n' stt4 stt6 | ip -n "$NSA" -b -
	silence deleted
	topo_down "$NSA" "$NSB" "$NSC"
}

# ---- underlay impairment ----------------------------------------------------

# netem on the sender's own veth would see the outer GSO skb (segmentation
# happens after the qdisc): it would drop, reorder and duplicate whole STT
# frames, and reassembly would never see a partial frame. A router sees
# the segments one by one (sender TSO off, router GRO off) and impairs
# them on its egress towards $NSB:
#
#   $NSA va 192.0.2.1 ---- ra 192.0.2.254 [$NSR] rb 198.51.100.254 ---- vb 198.51.100.2 $NSB
#        2001:db8::1        2001:db8::fe          2001:db8:b::fe          2001:db8:b::2
#        TSO off            GRO off               netem                   GRO off
NETEM="delay 1ms reorder 25% loss 1% duplicate 1%"

impairment()
{
	local addr label c dup to
	local -A c0 c1

	RET=0
	shared_down
	setup_ns NSA NSR NSB
	check_err $? "netns setup failed"
	{
		veth_cmds va ra "$NSR" 192.0.2.1 2001:db8::1
		echo "route add default via 192.0.2.254"
		echo "route add default via 2001:db8::fe"
		stt_cmds stt4 "id 42 remote 198.51.100.2" 4 1
		stt_cmds stt6 "id 42 remote 2001:db8:b::2" 6 1
	} | ip -n "$NSA" -b -
	check_err $? "setup of $NSA failed"
	{
		addr_cmds ra 192.0.2.254 2001:db8::fe
		veth_cmds rb vb "$NSB" 198.51.100.254 2001:db8:b::fe
	} | ip -n "$NSR" -b -
	check_err $? "setup of $NSR failed"
	{
		addr_cmds vb 198.51.100.2 2001:db8:b::2
		echo "route add default via 198.51.100.254"
		echo "route add default via 2001:db8:b::fe"
		stt_cmds stt4 "id 42 remote 192.0.2.1" 4 2
		stt_cmds stt6 "id 42 remote 2001:db8::1" 6 2
	} | ip -n "$NSB" -b -
	check_err $? "setup of $NSB failed"
	ip netns exec "$NSR" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1
	ip netns exec "$NSA" ethtool -K va tso off >/dev/null &&
	ip netns exec "$NSR" ethtool -K ra gro off >/dev/null &&
	ip netns exec "$NSB" ethtool -K vb gro off >/dev/null
	check_err $? "ethtool -K failed"
	modprobe -q sch_netem
	# shellcheck disable=SC2086 # NETEM is a list of words
	ip netns exec "$NSR" tc qdisc add dev rb root netem $NETEM
	check_err $? "tc qdisc add netem failed"
	server_start "$NSB"
	check_err $? "transfer server did not start"
	if [[ $RET -ne 0 ]]; then
		log_test "netem impairment"
		topo_down "$NSA" "$NSR" "$NSB"
		return
	fi

	# The router's link-local addresses may still be tentative and netem
	# drops 1% of what it forwards: give ARP/ND retries time.
	for addr in 10.4.0.2 fd06::2; do
		PING_WAIT=15 ping_ok "$NSA" "$addr"
		check_err $? "ping $addr through the router failed: $PING_OUT"
	done
	dev_stats c0 "$NSB" stt4
	xfer "$NSB" "$NSA" "$IMPAIR_BYTES" 10.4.0.2 fd06::2
	for c in "10.4.0.2,IPv4/IPv4" "fd06::2,IPv6/IPv6"; do
		IFS=, read -r addr label <<<"$c"
		xfer_check "$addr"
		log_test "netem $NETEM: transfer $label" "${XINFO[$addr]}"
		RET=0
	done

	# Incomplete frames expire after reasm_timeout_ms (2 s by default).
	sleep $(($(</sys/module/stt/parameters/reasm_timeout_ms) / 1000 + 1))
	dev_stats c1 "$NSB" stt4
	dup=$((c1[ns_drop_duplicate] - c0[ns_drop_duplicate]))
	to=$((c1[ns_drop_reasm_timeout] - c0[ns_drop_reasm_timeout]))
	((to > 0))
	check_err $? "ns_drop_reasm_timeout did not grow"
	((dup > 0))
	check_err $? "ns_drop_duplicate did not grow"
	log_test "netem: reassembly counts timeouts and duplicates" \
		 "timeouts +$to, duplicates +$dup, reassembled +$((c1[ns_reasm_frames] - c0[ns_reasm_frames]))"
	topo_down "$NSA" "$NSR" "$NSB"
}

# ---- external mode ----------------------------------------------------------

# One external device in $NSA reaches three point-to-point peers through
# lightweight-tunnel routes: $NSB id 42 over IPv4 (stt0), $NSC id 43 over
# IPv4 (stt0), $NSB id 44 over IPv6 (stt1). The routes also carry the
# replies to what the peers send.
external()
{
	local a

	RET=0
	shared_down
	setup_ns NSA NSB NSC
	check_err $? "netns setup failed"
	{
		veth_cmds va vb "$NSB" 192.0.2.1 2001:db8::1
		veth_cmds vac vc "$NSC" 198.51.100.1 2001:db8:c::1
		echo "link add stt0 type stt external"
		echo "link set stt0 up"
		for a in 1 2 3; do
			echo "addr add 10.$a.0.1/24 dev stt0 noprefixroute"
		done
		echo "route add 10.1.0.0/24 encap ip id 42 dst 192.0.2.2 dev stt0 src 10.1.0.1"
		echo "route add 10.2.0.0/24 encap ip id 43 dst 198.51.100.3 dev stt0 src 10.2.0.1"
		echo "route add 10.3.0.0/24 encap ip6 id 44 dst 2001:db8::2 dev stt0 src 10.3.0.1"
	} | ip -n "$NSA" -b -
	check_err $? "setup of $NSA (external device, encap routes) failed"
	{
		addr_cmds vb 192.0.2.2 2001:db8::2
		stt_cmds stt0 "id 42 remote 192.0.2.1" 1 2
		stt_cmds stt1 "id 44 remote 2001:db8::1" 3 2
	} | ip -n "$NSB" -b -
	check_err $? "setup of $NSB failed"
	{
		addr_cmds vc 198.51.100.3 2001:db8:c::3
		stt_cmds stt0 "id 43 remote 198.51.100.1" 2 3
	} | ip -n "$NSC" -b -
	check_err $? "setup of $NSC failed"
	if [[ $RET -ne 0 ]]; then
		log_test "external device with lwtunnel routes"
		topo_down "$NSA" "$NSB" "$NSC"
		return
	fi
	for a in 10.1.0.2 10.2.0.3 10.3.0.2; do
		ping_ok "$NSA" "$a"
		check_err $? "ping from the external device to $a failed"
	done
	ping_ok "$NSB" 10.1.0.1
	check_err $? "ping from $NSB (id 42) to 10.1.0.1 failed"
	ping_ok "$NSC" 10.2.0.1
	check_err $? "ping from $NSC (id 43) to 10.2.0.1 failed"
	ping_ok "$NSB" 10.3.0.1
	check_err $? "ping from $NSB (id 44, IPv6 underlay) to 10.3.0.1 failed"
	log_test "external: lwt routes to 2 remotes/3 keys, pings both ways"
	topo_down "$NSA" "$NSB" "$NSC"
}

require_root
require_command ethtool
require_command tshark
require_command tcpdump
require_command ping
require_command "$PY"
require_stt

tests_run
tests_exit
