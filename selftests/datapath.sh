#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# STT datapath: traffic through point-to-point and external STT devices
# over IPv4 and IPv6 underlays, checked end to end (ping, checksummed TCP
# transfers), through the receive paths (whole frames from TSO/GRO,
# software reassembly), under underlay impairment (netem), with VLANs,
# large MTUs, wrong keys/remotes, on the wire (tshark's STT dissector) and
# for silence of the STT port towards TCP probes.
#
#   +---- $NSA ----------------------+         +---- $NSB ----------------------+
#   | stt4: id 42, remote 192.0.2.2  |         | stt4: id 42, remote 192.0.2.1  |
#   |   10.4.0.1/24  fd04::1/64      |         |   10.4.0.2/24  fd04::2/64      |
#   | stt6: id 42, remote 2001:db8::2|         | stt6: id 42, remote 2001:db8::1|
#   |   10.6.0.1/24  fd06::1/64      |         |   10.6.0.2/24  fd06::2/64      |
#   |                                |         |                                |
#   | va 192.0.2.1/24 2001:db8::1/64 +---------+ vb 192.0.2.2/24 2001:db8::2/64 |
#   |                                |         +--------------------------------+
#   | vac 198.51.100.1/24            |         +---- $NSC ----------------------+
#   |     2001:db8:c::1/64           +---------+ vc 198.51.100.3/24             |
#   +--------------------------------+         |    2001:db8:c::3/64            |
#                                              +--------------------------------+
#
# $NSC (wrong remote, external mode) is only made by the tests that use it.
# The impairment test puts a router $NSR between $NSA and $NSB (netem on
# the router's egress towards $NSB; see impairment()).
#
# Run in the VM:  scripts/vm-run --timeout 1500 -- selftests/datapath.sh
# Environment: BIG (bytes for the main transfers, default 50 MB), SMALL
# (bytes for the slow paths, default 10 MB), TESTS="..." for a subset.

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	transfer_offloads
	transfer_tso_off
	transfer_gro_off
	impairment
	vlan
	wrong_key_remote
	external
	mtu_large
	port_silence
	wire_ipv4
	wire_ipv6
"

BIG=${BIG:-50000000}
SMALL=${SMALL:-10000000}
PY=/usr/bin/python3
HERE=$(cd "$(dirname "$0")" && pwd)
TCPX=$HERE/stt_tcp.py
WIRE=$HERE/stt_wire.py
TMPD=$(mktemp -d /tmp/stt-datapath-XXXXXX)
XPORT=5000
MONPORT=7999
STT_PORT=7471

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

# stt_link NS NAME ARGS...: add an STT device, bring it up.
stt_link()
{
	local ns=$1 name=$2

	shift 2
	ip -n "$ns" link add "$name" type stt "$@" &&
		ip -n "$ns" link set "$name" up
}

# A monitor device on another port: shows the namespace counters with
# ethtool -S even when the device under test is down or deleted.
stt_monitor()
{
	ip -n "$1" link add sttmon type stt id 1 remote 203.0.113.99 \
		dstport "$MONPORT"
}

# veth_pair NS1 DEV1 ADDR4/ADDR6 NS2 DEV2 ADDR4/ADDR6
veth_pair()
{
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" || return
	ip -n "$1" addr add "${3%%/*}/24" dev "$2"
	ip -n "$1" addr add "${3##*/}/64" dev "$2" nodad
	ip -n "$4" addr add "${6%%/*}/24" dev "$5"
	ip -n "$4" addr add "${6##*/}/64" dev "$5" nodad
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}

# inner_addr NS DEV N4 N6 HOST: 10.N4.0.HOST/24 and fdN6::HOST/64
inner_addr()
{
	ip -n "$1" addr add "10.$3.0.$5/24" dev "$2"
	ip -n "$1" addr add "fd$4::$5/64" dev "$2" nodad
}

# topo_ab [c]: $NSA and $NSB joined by a veth, stt4 (IPv4 underlay) and
# stt6 (IPv6 underlay) on both; with "c", $NSC joined to $NSA too.
topo_ab()
{
	setup_ns NSA NSB || return
	veth_pair "$NSA" va 192.0.2.1/2001:db8::1 "$NSB" vb 192.0.2.2/2001:db8::2 ||
		return
	stt_link "$NSA" stt4 id 42 remote 192.0.2.2 &&
	stt_link "$NSB" stt4 id 42 remote 192.0.2.1 &&
	stt_link "$NSA" stt6 id 42 remote 2001:db8::2 &&
	stt_link "$NSB" stt6 id 42 remote 2001:db8::1 || return
	inner_addr "$NSA" stt4 4 04 1
	inner_addr "$NSB" stt4 4 04 2
	inner_addr "$NSA" stt6 6 06 1
	inner_addr "$NSB" stt6 6 06 2
	if [[ "$1" == c ]]; then
		setup_ns NSC || return
		veth_pair "$NSA" vac 198.51.100.1/2001:db8:c::1 \
			  "$NSC" vc 198.51.100.3/2001:db8:c::3 || return
	fi
}

topo_down()
{
	local ns

	for ns in "$@"; do
		if [[ -n "${SERVER_PID[$ns]}" ]]; then
			kill "${SERVER_PID[$ns]}" 2>/dev/null
			wait "${SERVER_PID[$ns]}" 2>/dev/null
			unset "SERVER_PID[$ns]"
		fi
		[[ "$ns" == "$NSA" ]] && SHARED_UP=
	done
	cleanup_ns "$@"
}

# ---- measuring --------------------------------------------------------------

# stat NS DEV NAME: one ethtool -S counter.
stat()
{
	ip netns exec "$1" ethtool -S "$2" |
		awk -v n="$3:" '$1 == n { print $2; f = 1 } END { if (!f) print -1 }'
}

# link_stat NS DEV rx_packets|tx_packets...
link_stat()
{
	ip -n "$1" -s -j link show dev "$2" |
		jq -r ".[0].stats64.${3%%_*}.${3#*_}"
}

# Ping 3 times, allowing the first to go to ARP/ND.
ping_ok()
{
	local ns=$1

	shift
	ip netns exec "$ns" ping -q -c 3 -i 0.2 -w 5 "$@" 2>&1 |
		grep -q ' [1-3] received'
}

port_listening()
{
	ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q LISTEN
}

# server_start NS: the transfer server of NS (stt_tcp.py: one per
# namespace, killed by topo_down).
declare -A SERVER_PID
server_start()
{
	local ns=$1

	: >"$TMPD/srv-$ns.out"
	ip netns exec "$ns" "$PY" "$TCPX" --timeout 120 server "$XPORT" \
		"$TMPD/srv-$ns.out" 2>"$TMPD/srv-$ns.err" &
	SERVER_PID[$ns]=$!
	busywait 60000 port_listening "$ns" "$XPORT"
}

# xfer NS_SRV NS_CLI BYTES ADDR...: one client run in NS_CLI sends BYTES
# to each ADDR (the server of NS_SRV), one after the other. Sets, per
# ADDR, XOK[ADDR] (1 when the server received BYTES with the sha256 the
# client sent) and XINFO[ADDR] ("N MB in S s, R Mbit/s" or the error).
declare -A XOK XINFO
xfer()
{
	local srv=$1 cli=$2 bytes=$3 out n0 addr cb ch csec crate sb sh peer
	local -A got

	shift 3
	n0=$(wc -l <"$TMPD/srv-$srv.out")
	out=$(ip netns exec "$cli" "$PY" "$TCPX" --timeout 120 client \
		"$XPORT" "$bytes" "$@" 2>&1)
	# Server lines "<bytes> <sha256> <peer>", keyed by the client address.
	while read -r sb sh peer; do
		got[$peer]="$sb $sh"
	done < <(tail -n +$((n0 + 1)) "$TMPD/srv-$srv.out")
	for addr in "$@"; do
		XOK[$addr]=0
		XINFO[$addr]="no client result: ${out//$'\n'/ }"
		while read -r a local cb ch csec crate; do
			[[ "$a" == "$addr" ]] || continue
			if [[ "$local" == error ]]; then
				XINFO[$addr]="$cb $ch $csec $crate"
				break
			fi
			read -r sb sh <<<"${got[$local]}"
			if [[ "$sb" == "$bytes" && "$cb" == "$bytes" && "$sh" == "$ch" ]]; then
				XOK[$addr]=1
				XINFO[$addr]="$((bytes / 1000000)) MB in ${csec}s, $crate Mbit/s"
			else
				XINFO[$addr]="sent $cb bytes sha256 ${ch:0:16}.., received ${sb:-nothing} sha256 ${sh:0:16}.."
			fi
		done <<<"$out"
	done
}

# xfer_check ADDR: check_err on the result of the last xfer to ADDR.
xfer_check()
{
	((XOK[$1]))
	check_err $? "transfer to $1: ${XINFO[$1]}"
}

# "device,inner address,label" for the four underlay x inner cases
COMBOS="stt4,10.4.0.2,IPv4/IPv4 stt4,fd04::2,IPv4/IPv6 stt6,10.6.0.2,IPv6/IPv4 stt6,fd06::2,IPv6/IPv6"

# run_combos WHAT BYTES: ping each combo's peer address, one client run
# transfers BYTES to each; one TEST line per combo.
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

# The transfer tests share one topology with a server in $NSB; each sets
# the offloads it needs.
topo_shared()
{
	if [[ -n "$SHARED_UP" ]] && ns_exists "$NSA"; then
		return 0
	fi
	topo_ab && server_start "$NSB" && SHARED_UP=1
}

# offloads TSO GRO: the sender's (va) TSO and the receiver's (vb) GRO.
# GRO goes through off first: veth only merges (NAPI mode) when GRO was
# turned on by the user.
offloads()
{
	ip netns exec "$NSA" ethtool -K va tso "$1" >/dev/null &&
	ip netns exec "$NSB" ethtool -K vb gro off >/dev/null &&
	ip netns exec "$NSB" ethtool -K vb gro "$2" >/dev/null
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

# rx_paths_before / rx_paths_after: frames per receive path at $NSB.
declare -A RXP
rx_paths_before()
{
	local dev

	for dev in stt4 stt6; do
		RXP[$dev.whole]=$(stat "$NSB" "$dev" rx_frames_whole)
		RXP[$dev.reasm]=$(stat "$NSB" "$dev" rx_frames_reassembled)
	done
}

rx_paths_after()
{
	local dev

	RXP_INFO=
	for dev in stt4 stt6; do
		RXP[$dev.whole]=$(($(stat "$NSB" "$dev" rx_frames_whole) - RXP[$dev.whole]))
		RXP[$dev.reasm]=$(($(stat "$NSB" "$dev" rx_frames_reassembled) - RXP[$dev.reasm]))
		RXP_INFO+="$dev whole +${RXP[$dev.whole]} reassembled +${RXP[$dev.reasm]}, "
	done
	RXP_INFO=${RXP_INFO%, }
}

transfer_tso_off()
{
	RET=0
	topo_shared && offloads off on
	check_err $? "topology setup failed"
	if [[ $RET -ne 0 ]]; then
		log_test "ping + TCP transfer, sender TSO off"
		return
	fi
	rx_paths_before
	run_combos "sender TSO off (sw GSO), receiver GRO on" "$SMALL"
	rx_paths_after
	log_info "receive paths with GRO on: $RXP_INFO"
}

transfer_gro_off()
{
	local dev

	RET=0
	topo_shared && offloads off off
	check_err $? "topology setup failed"
	if [[ $RET -ne 0 ]]; then
		log_test "ping + TCP transfer, receiver GRO off"
		return
	fi
	rx_paths_before
	run_combos "sender TSO off, receiver GRO off" "$SMALL"
	rx_paths_after
	RET=0
	for dev in stt4 stt6; do
		((RXP[$dev.reasm] > 100 && RXP[$dev.reasm] > 10 * RXP[$dev.whole]))
		check_err $? "$dev: $RXP_INFO"
	done
	log_test "GRO off: frames arrive through reassembly" "$RXP_INFO"
	offloads on on
}

# Underlay impairment. netem on the sender's own veth sees the outer GSO
# skb (segmentation happens after the qdisc), so it would drop, reorder
# and duplicate whole STT frames and reassembly would never see a partial
# frame. A router between the peers sees the segments one by one (sender
# TSO off, router GRO off) and impairs them on its egress towards $NSB:
#
#   $NSA va 192.0.2.1 ---- ra 192.0.2.254 [$NSR] rb 198.51.100.254 ---- vb 198.51.100.2 $NSB
#        2001:db8::1        2001:db8::fe          2001:db8:b::fe          2001:db8:b::2
#        TSO off            GRO off              netem                   GRO off
IMPAIR_BYTES=${IMPAIR_BYTES:-5000000}
NETEM="delay 1ms reorder 25% loss 1% duplicate 1%"

impairment()
{
	local addr label c dup0 to0 dup to

	RET=0
	setup_ns NSA NSR NSB
	veth_pair "$NSA" va 192.0.2.1/2001:db8::1 "$NSR" ra 192.0.2.254/2001:db8::fe &&
	veth_pair "$NSR" rb 198.51.100.254/2001:db8:b::fe "$NSB" vb 198.51.100.2/2001:db8:b::2
	check_err $? "veth setup failed"
	ip netns exec "$NSR" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	ip -n "$NSA" route add default via 192.0.2.254
	ip -n "$NSA" -6 route add default via 2001:db8::fe
	ip -n "$NSB" route add default via 198.51.100.254
	ip -n "$NSB" -6 route add default via 2001:db8:b::fe
	stt_link "$NSA" stt4 id 42 remote 198.51.100.2 &&
	stt_link "$NSB" stt4 id 42 remote 192.0.2.1 &&
	stt_link "$NSA" stt6 id 42 remote 2001:db8:b::2 &&
	stt_link "$NSB" stt6 id 42 remote 2001:db8::1
	check_err $? "stt setup failed"
	inner_addr "$NSA" stt4 4 04 1
	inner_addr "$NSB" stt4 4 04 2
	inner_addr "$NSA" stt6 6 06 1
	inner_addr "$NSB" stt6 6 06 2
	ip netns exec "$NSA" ethtool -K va tso off >/dev/null &&
	ip netns exec "$NSR" ethtool -K ra gro off >/dev/null &&
	ip netns exec "$NSB" ethtool -K vb gro off >/dev/null
	check_err $? "ethtool -K failed"
	modprobe -q sch_netem
	# shellcheck disable=SC2086 # NETEM is a list of words
	ip netns exec "$NSR" tc qdisc add dev rb root netem $NETEM
	check_err $? "tc qdisc add netem failed"
	if [[ $RET -ne 0 ]]; then
		log_test "netem impairment"
		topo_down "$NSA" "$NSR" "$NSB"
		return
	fi

	server_start "$NSB"
	check_err $? "transfer server did not start"
	# Neighbours first, so that the counters see only the transfers.
	ping_ok "$NSA" 10.4.0.2 && ping_ok "$NSA" fd06::2
	check_err $? "ping through the router failed"
	dup0=$(stat "$NSB" stt4 ns_drop_duplicate)
	to0=$(stat "$NSB" stt4 ns_drop_reasm_timeout)
	xfer "$NSB" "$NSA" "$IMPAIR_BYTES" 10.4.0.2 fd06::2
	for c in "10.4.0.2,IPv4/IPv4" "fd06::2,IPv6/IPv6"; do
		IFS=, read -r addr label <<<"$c"
		xfer_check "$addr"
		log_test "netem $NETEM: transfer $label" "${XINFO[$addr]}"
		RET=0
	done

	RET=0
	# Incomplete frames expire after reasm_timeout_ms (2 s default).
	sleep $(($(cat /sys/module/stt/parameters/reasm_timeout_ms) / 1000 + 1))
	dup=$(($(stat "$NSB" stt4 ns_drop_duplicate) - dup0))
	to=$(($(stat "$NSB" stt4 ns_drop_reasm_timeout) - to0))
	((to > 0))
	check_err $? "ns_drop_reasm_timeout did not grow"
	((dup > 0))
	check_err $? "ns_drop_duplicate did not grow"
	log_info "netem on rb: $(ip netns exec "$NSR" tc -s qdisc show dev rb | grep -o 'Sent.*)')"
	log_test "netem: reassembly counts timeouts and duplicates" \
		 "timeouts $to, duplicates $dup, reassembled $(stat "$NSB" stt4 ns_reasm_frames)"
	topo_down "$NSA" "$NSR" "$NSB"
}

# capture_start NS DEV FILE FILTER: tcpdump in the background until
# capture_stop; returns when tcpdump is listening.
capture_start()
{
	ip netns exec "$1" tcpdump -i "$2" -s 0 -U -w "$3" "$4" \
		2>"$3.log" &
	CAPTURE_PID=$!
	busywait 20000 grep -q "listening on" "$3.log"
}

capture_stop()
{
	sleep 0.2
	kill -INT "$CAPTURE_PID" 2>/dev/null
	wait "$CAPTURE_PID" 2>/dev/null
}

vlan()
{
	local out n bad

	RET=0
	topo_ab
	check_err $? "topology setup failed"
	ip -n "$NSA" link add link stt4 name stt4.100 type vlan id 100 &&
	ip -n "$NSB" link add link stt4 name stt4.100 type vlan id 100
	check_err $? "ip link add ... type vlan on stt4 failed"
	ip -n "$NSA" addr add 10.100.0.1/24 dev stt4.100
	ip -n "$NSB" addr add 10.100.0.2/24 dev stt4.100
	ip -n "$NSA" link set stt4.100 up
	ip -n "$NSB" link set stt4.100 up
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
	# Frames of the VLAN device (inner 10.100.0.x) carry TCI 0x1064 (V +
	# VID 100) in the STT header and no in-band tag; the other frames
	# (stt4's own, e.g. IPv6 ND) carry no TCI.
	out=$(tshark -n -r "$TMPD/vlan.pcap" -o ip.try_heuristic_first:TRUE \
		-Y stt.context_id -T fields -E separator=, -E occurrence=l \
		-e ip.dst -e stt.vlan -e stt.vlan.v -e stt.vlan.id -e vlan.id \
		2>/dev/null)
	n=$(grep -c '^10\.100\.0\.2,0x1064,1,100,$' <<<"$out")
	((n >= 3))
	check_err $? "$n frames to 10.100.0.2 with TCI V=1 VID=100, not >= 3"
	bad=$(grep -v -e '^[^,]*,0x1064,1,100,$' -e '^[^,]*,0x0000,0,0,$' <<<"$out")
	[[ -z "$bad" ]]
	check_err $? "unexpected STT VLAN fields (ip.dst,tci,V,id,inner tag): ${bad//$'\n'/ }"
	log_test "VLAN 100 on stt4: ping; STT header TCI V=1 VID=100" \
		 "$n tagged of $(wc -l <<<"$out") frames"
	topo_down "$NSA" "$NSB"
}

# no_delivery NS_SENDER ADDR RECV_DEV: ping from NS_SENDER to ADDR fails,
# $NSA counts ns_drop_no_device, RECV_DEV in $NSA receives nothing.
no_delivery()
{
	local ns=$1 addr=$2 dev=$3 nd0 rx0 nd rx

	nd0=$(stat "$NSA" "$dev" ns_drop_no_device)
	rx0=$(link_stat "$NSA" "$dev" rx_packets)
	ip netns exec "$ns" ping -q -c 3 -i 0.2 -w 2 "$addr" >/dev/null 2>&1
	check_fail $? "ping $addr succeeded"
	nd=$(($(stat "$NSA" "$dev" ns_drop_no_device) - nd0))
	rx=$(($(link_stat "$NSA" "$dev" rx_packets) - rx0))
	((nd >= 3))
	check_err $? "ns_drop_no_device grew by $nd, not >= 3"
	((rx == 0))
	check_err $? "$dev received $rx packets"
	NO_DELIVERY_INFO="no_device +$nd, rx +$rx"
}

wrong_key_remote()
{
	local dev

	RET=0
	topo_ab c
	check_err $? "topology setup failed"
	ping_ok "$NSB" 10.4.0.1 && ping_ok "$NSB" 10.6.0.1
	check_err $? "control ping with matching keys failed"
	ip -n "$NSB" link set stt4 type stt id 43 &&
		ip -n "$NSB" link set stt6 type stt id 43
	check_err $? "ip link set ... type stt id 43 failed"
	for dev in stt4 stt6; do
		no_delivery "$NSB" "10.${dev#stt}.0.1" "$dev"
		INFO+="$dev: $NO_DELIVERY_INFO "
	done
	log_test "wrong key (peer id 43, ours 42) is dropped and counted" \
		 "${INFO% }"
	INFO=

	RET=0
	stt_link "$NSC" stt4 id 42 remote 198.51.100.1 &&
		stt_link "$NSC" stt6 id 42 remote 2001:db8:c::1
	check_err $? "stt devices in $NSC failed"
	ip -n "$NSC" addr add 10.4.0.3/24 dev stt4
	ip -n "$NSC" addr add 10.6.0.3/24 dev stt6
	for dev in stt4 stt6; do
		no_delivery "$NSC" "10.${dev#stt}.0.1" "$dev"
		INFO+="$dev: $NO_DELIVERY_INFO "
	done
	log_test "wrong remote (a third host with our id) is dropped" \
		 "${INFO% }"
	INFO=
	topo_down "$NSA" "$NSB" "$NSC"
}

# One external device on $NSA reaching three point-to-point peers with
# lightweight-tunnel routes: $NSB id 42 over IPv4, $NSC id 43 over IPv4,
# $NSB id 44 over IPv6.
external()
{
	local a

	RET=0
	setup_ns NSA NSB NSC
	veth_pair "$NSA" va 192.0.2.1/2001:db8::1 "$NSB" vb 192.0.2.2/2001:db8::2 &&
	veth_pair "$NSA" vac 198.51.100.1/2001:db8:c::1 "$NSC" vc 198.51.100.3/2001:db8:c::3
	check_err $? "veth setup failed"
	stt_link "$NSA" stt0 external &&
	stt_link "$NSB" stt0 id 42 remote 192.0.2.1 &&
	stt_link "$NSC" stt0 id 43 remote 198.51.100.1 &&
	stt_link "$NSB" stt1 id 44 remote 2001:db8::1
	check_err $? "stt setup failed"
	ip -n "$NSA" addr add 10.1.0.1/24 dev stt0 noprefixroute
	ip -n "$NSA" addr add 10.2.0.1/24 dev stt0 noprefixroute
	ip -n "$NSA" addr add 10.3.0.1/24 dev stt0 noprefixroute
	ip -n "$NSA" route add 10.1.0.0/24 encap ip id 42 dst 192.0.2.2 dev stt0 src 10.1.0.1 &&
	ip -n "$NSA" route add 10.2.0.0/24 encap ip id 43 dst 198.51.100.3 dev stt0 src 10.2.0.1 &&
	ip -n "$NSA" route add 10.3.0.0/24 encap ip6 id 44 dst 2001:db8::2 dev stt0 src 10.3.0.1
	check_err $? "ip route add ... encap failed"
	ip -n "$NSB" addr add 10.1.0.2/24 dev stt0
	ip -n "$NSC" addr add 10.2.0.3/24 dev stt0
	ip -n "$NSB" addr add 10.3.0.2/24 dev stt1
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

# mtu_case MTU: ping at MTU size with DF over both underlays, then a
# TCP transfer per underlay.
mtu_case()
{
	local mtu=$1 ns dev

	RET=0
	for ns in "$NSA" "$NSB"; do
		for dev in stt4 stt6; do
			ip -n "$ns" link set "$dev" mtu "$mtu"
			check_err $? "ip link set $dev mtu $mtu failed"
		done
	done
	ping_ok "$NSA" -Mdo -s $((mtu - 28)) 10.4.0.2
	check_err $? "ping -s $((mtu - 28)) -Mdo over stt4 (IPv4) failed"
	ping_ok "$NSA" -Mdo -s $((mtu - 48)) fd04::2
	check_err $? "ping -s $((mtu - 48)) -Mdo over stt4 (IPv6) failed"
	ping_ok "$NSA" -Mdo -s $((mtu - 28)) 10.6.0.2
	check_err $? "ping -s $((mtu - 28)) -Mdo over stt6 (IPv4) failed"
	ping_ok "$NSA" -Mdo -s $((mtu - 48)) fd06::2
	check_err $? "ping -s $((mtu - 48)) -Mdo over stt6 (IPv6) failed"
	ping_ok "$NSA" -Mdo -s $((mtu - 27)) 10.4.0.2
	check_fail $? "ping -s $((mtu - 27)) -Mdo (one byte too big) succeeded"
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
		ip -n "$ns" link set stt4 mtu 1500
		ip -n "$ns" link set stt6 mtu 1500
	done
}

# silence STATE: TCP probes from $NSB to $NSA's STT port get no answer,
# reach the hook (namespace counters on the monitor device) and no
# socket can bind the port in $NSA.
silence()
{
	local state=$1 fl0 em0 fl em out

	RET=0
	fl0=$(stat "$NSA" sttmon ns_drop_tcp_flags)
	em0=$(stat "$NSA" sttmon ns_drop_empty)
	out=$(ip netns exec "$NSB" "$PY" "$WIRE" probe "$STT_PORT" \
		192.0.2.2,192.0.2.1 2001:db8::2,2001:db8::1 2>&1)
	check_err $? "${out//$'\n'/; }"
	fl=$(($(stat "$NSA" sttmon ns_drop_tcp_flags) - fl0))
	em=$(($(stat "$NSA" sttmon ns_drop_empty) - em0))
	((fl >= 2 && em >= 2))
	check_err $? "probes not seen by the STT hook (tcp_flags +$fl, empty +$em)"
	out=$(ip netns exec "$NSA" "$PY" "$WIRE" bind "$STT_PORT" 0.0.0.0 :: 2>&1)
	check_err $? "${out//$'\n'/; } (want EADDRINUSE)"
	log_test "SYN/ACK to the STT port: no reply, bind fails; device $state" \
		 "ns_drop_tcp_flags +$fl, ns_drop_empty +$em"
}

port_silence()
{
	local out

	RET=0
	topo_ab && stt_monitor "$NSA"
	check_err $? "topology setup failed"
	# The probe itself: a port nobody uses answers with RSTs.
	out=$(ip netns exec "$NSB" "$PY" "$WIRE" probe $((STT_PORT + 1)) \
		192.0.2.2,192.0.2.1 2>&1)
	[[ "$out" == *"replies 2"* ]]
	check_err $? "control probe to a closed port: ${out//$'\n'/; }"
	log_test "probe control: a closed TCP port answers SYN and ACK"
	if [[ $RET -ne 0 ]]; then
		topo_down "$NSA" "$NSB"
		return
	fi

	silence up
	ip -n "$NSA" link set stt4 down
	ip -n "$NSA" link set stt6 down
	silence down
	ip -n "$NSA" link del stt4
	ip -n "$NSA" link del stt6
	silence deleted
	topo_down "$NSA" "$NSB"
}

# wire_case DEV ID ADDR CHECK-ARGS...: STT frames of a TCP transfer from
# $NSA, captured at $NSB's veth (sender TSO off, receiver GRO off, so
# MTU-sized segments), decoded by tshark and checked by stt_wire.py.
wire_case()
{
	local dev=$1 id=$2 addr=$3 src=$4 out ns

	shift 4
	RET=0
	for ns in "$NSA" "$NSB"; do
		ip -n "$ns" link del "$dev"
	done
	if [[ $dev == stt4 ]]; then
		stt_link "$NSA" stt4 id "$id" remote 192.0.2.2 &&
			stt_link "$NSB" stt4 id "$id" remote 192.0.2.1
	else
		stt_link "$NSA" stt6 id "$id" remote 2001:db8::2 &&
			stt_link "$NSB" stt6 id "$id" remote 2001:db8::1
	fi
	check_err $? "stt devices with id $id failed"
	inner_addr "$NSA" "$dev" "${dev#stt}" "0${dev#stt}" 1
	inner_addr "$NSB" "$dev" "${dev#stt}" "0${dev#stt}" 2
	ping_ok "$NSA" "$addr"
	check_err $? "ping $addr failed"
	capture_start "$NSB" vb "$TMPD/wire.pcap" \
		"src host $src and tcp dst port $STT_PORT"
	check_err $? "tcpdump did not start"
	xfer "$NSB" "$NSA" 1000000 "$addr"
	xfer_check "$addr"
	ping_ok "$NSA" "$addr"
	capture_stop
	out=$("$PY" "$WIRE" check "$TMPD/wire.pcap" --id "$id" "$@" 2>&1)
	check_err $? "$(grep -m3 problem <<<"$out" | tr '\n' ';')"
	log_info "$(head -1 <<<"$out")"
	if [[ -n "$DUMP_PCAP" ]]; then
		echo "PCAP-BEGIN $dev"
		base64 -w0 "$TMPD/wire.pcap"
		echo
		echo "PCAP-END"
	fi
}

wire_setup()
{
	topo_ab && server_start "$NSB" || return
	# Checksums in software too: veth would pass them on partial.
	ip netns exec "$NSA" ethtool -K va tx off tso off >/dev/null &&
		ip netns exec "$NSB" ethtool -K vb gro off >/dev/null
}

wire_ipv4()
{
	RET=0
	wire_setup
	check_err $? "topology setup failed"
	wire_case stt4 42 10.4.0.2 192.0.2.1 --mss 1448 --l4off 34 --flags 0x0e
	log_test "wire: IPv4/IPv4 id 42: tshark decodes, fields match"
	topo_down "$NSA" "$NSB"
}

wire_ipv6()
{
	local id=$((0x123456789a))

	RET=0
	wire_setup
	check_err $? "topology setup failed"
	wire_case stt6 "$id" fd06::2 2001:db8::1 --ipv6 --mss 1428 --l4off 54 \
		--flags 0x0a
	log_test "wire: IPv6/IPv6 id 2^36+: tshark decodes, fields match"
	topo_down "$NSA" "$NSB"
}

require_root
require_command jq
require_command ethtool
require_command tshark
require_command tcpdump
require_command ping
require_command "$PY"
require_stt

# tests_run, with the time each test took (TCG budgets matter).
for t in ${TESTS:-$ALL_TESTS}; do
	start=$SECONDS
	RET=0
	retmsg=
	$t
	log_info "$t: $((SECONDS - start)) s"
done
tests_exit
