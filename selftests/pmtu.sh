#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# STT over a path narrower than the hosts' links: two hosts joined by a
# router whose link to B has a 1400-byte MTU (1280 for the IPv6 tests).
#
#   +--- A ---------------+      +--- R ---------+      +--- B ----------------+
#   | sttp4 -> 10.2.0.1   |      |               | 1400 | sttp4 <- 10.1.0.1    |
#   | sttx (external)     | vA --+ rA         rB +------+ vB  10.2.0.1 .3 .5 .9|
#   | sttdf (df unset)    | 1500 | forwarding    | 1280 |     fd02::1 ::3 ::9  |
#   | sttp6 -> fd02::1    |      |               |  (v6)| stt8/stt9 <- A       |
#   | sttl4/sttl6 dev vA2 | vA2 -+ rA2           |      | sttl4/sttl6 <- vA2   |
#   +---------------------+ 1500 +---------------+      +----------------------+
#
# With DF set (the default) R drops the segments A sends at 1500 and
# answers with ICMP "fragmentation needed" / ICMPv6 "packet too big"; A's
# receive hook applies them to the route (stt/icmp.c), and the next frames
# are segmented to fit. Checked: checksummed transfers A -> B through the
# narrow link complete, point-to-point and external, TSO on and off, both
# families; "ip route get" shows the learned MTU; ns_pmtu_learned counts;
# forged ICMP cannot push the MTU below the kernel's floor (min_pmtu 552,
# 1280 for IPv6); ICMP about other TCP traffic or not sent to the
# segment's source is not acted on. With "df unset" R fragments instead,
# and B takes the segments IP reassembled (ns_rx_outer_reassembled).
# sttl4 and sttl6 are bound to vA2 (dev), a second path to R that is not
# A's preferred route to B: what their ICMP teaches must go to the route
# they use, looked up as they look it up.

# shellcheck disable=SC2317 # the tests run through tests_run
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	pmtu_v4
	pmtu_v4_forged
	pmtu_v4_df_unset
	pmtu_v4_link
	pmtu_v6
	pmtu_v6_forged
	pmtu_v6_link
	route_mtu_tiny
"

ICMPX=$STT_MODULE_DIR/selftests/stt_icmp.py
# Enough frames to stall for good without PMTU discovery, little enough
# to take seconds under TCG with it.
BYTES=${PMTU_BYTES:-4000000}
# A transfer that has not finished by then has stalled.
XFER_TIMEOUT=${PMTU_XFER_TIMEOUT:-60}

topo()
{
	setup_ns NS_A NS_R NS_B || return 1
	ip link add vA netns "$NS_A" type veth peer name rA netns "$NS_R" &&
	ip link add rB netns "$NS_R" type veth peer name vB netns "$NS_B" &&
	ip link add vA2 netns "$NS_A" type veth peer name rA2 netns "$NS_R" ||
		return 1
	{
		echo "addr add 10.1.0.1/24 dev vA"
		echo "addr add fd01::1/64 dev vA nodad"
		echo "link set vA up"
		echo "route add default via 10.1.0.2"
		echo "route add default via fd01::2"
		echo "addr add 10.3.0.1/24 dev vA2"
		echo "addr add fd03::1/64 dev vA2 nodad"
		echo "link set vA2 up"
		# second choice (IPv6 routes default to metric 1024), for what is
		# bound to vA2
		echo "route add default via 10.3.0.2 dev vA2 metric 2000"
		echo "route add default via fd03::2 dev vA2 metric 2000"
		echo "link add sttl4 type stt remote 10.2.0.9 local 10.3.0.1 key 11 dev vA2"
		# local: with a source address, IPv6 alone only prefers the link
		echo "link add sttl6 type stt remote fd02::9 local fd03::1 key 12 dev vA2"
		echo "addr add 192.168.11.1/24 dev sttl4"
		echo "addr add 192.168.12.1/24 dev sttl6"
		echo "link add sttp4 type stt remote 10.2.0.1 key 4"
		echo "link add sttdf type stt remote 10.2.0.5 key 5 df unset"
		echo "link add sttp6 type stt remote fd02::1 key 6"
		echo "link add sttx type stt external"
		# devices that never carry traffic: remotes for forged ICMP
		echo "link add sttq4 type stt remote 10.2.0.7 key 7"
		echo "link add sttq6 type stt remote fd02::7 key 7"
		echo "addr add 192.168.4.1/24 dev sttp4"
		echo "addr add 192.168.5.1/24 dev sttdf"
		echo "addr add 192.168.6.1/24 dev sttp6"
		echo "addr add 192.168.8.1/24 dev sttx noprefixroute"
		echo "addr add 192.168.9.1/24 dev sttx noprefixroute"
	} | ip -n "$NS_A" -b - || return 1
	{
		echo "addr add 10.1.0.2/24 dev rA"
		echo "addr add fd01::2/64 dev rA nodad"
		echo "addr add 10.2.0.2/24 dev rB"
		echo "addr add fd02::2/64 dev rB nodad"
		echo "link set rA up"
		echo "addr add 10.3.0.2/24 dev rA2"
		echo "addr add fd03::2/64 dev rA2 nodad"
		echo "link set rA2 up"
		echo "link set rB mtu 1400 up"
	} | ip -n "$NS_R" -b - || return 1
	ip netns exec "$NS_R" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1 || return 1
	# B answers vA2 by A's preferred path's router: loose source check.
	ip netns exec "$NS_A" sysctl -qw net.ipv4.conf.vA2.rp_filter=2 ||
		return 1
	{
		echo "addr add 10.2.0.1/24 dev vB"
		echo "addr add 10.2.0.3/24 dev vB"
		echo "addr add 10.2.0.5/24 dev vB"
		echo "addr add fd02::1/64 dev vB nodad"
		echo "addr add fd02::3/64 dev vB nodad"
		echo "addr add 10.2.0.9/24 dev vB"
		echo "addr add fd02::9/64 dev vB nodad"
		echo "link set vB mtu 1400 up"
		echo "route add default via 10.2.0.2"
		echo "route add default via fd02::2"
		echo "link add sttp4 type stt remote 10.1.0.1 local 10.2.0.1 key 4"
		echo "link add sttdf type stt remote 10.1.0.1 local 10.2.0.5 key 5"
		echo "link add sttp6 type stt remote fd01::1 local fd02::1 key 6"
		echo "link add stt8 type stt remote 10.1.0.1 local 10.2.0.3 key 8"
		echo "link add stt9 type stt remote fd01::1 local fd02::3 key 9"
		echo "addr add 192.168.4.2/24 dev sttp4"
		echo "addr add 192.168.5.2/24 dev sttdf"
		echo "addr add 192.168.6.2/24 dev sttp6"
		echo "addr add 192.168.8.2/24 dev stt8"
		echo "addr add 192.168.9.2/24 dev stt9"
		echo "link add sttl4 type stt remote 10.3.0.1 local 10.2.0.9 key 11"
		echo "link add sttl6 type stt remote fd03::1 local fd02::9 key 12"
		echo "addr add 192.168.11.2/24 dev sttl4"
		echo "addr add 192.168.12.2/24 dev sttl6"
	} | ip -n "$NS_B" -b - || return 1
	for ns in "$NS_A" "$NS_B"; do
		for d in $(stt_devices "$ns"); do
			ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
			ip -n "$ns" link set "$d" up || return 1
		done
	done
	{
		echo "route add 192.168.8.0/24 encap ip id 8 dst 10.2.0.3 dev sttx src 192.168.8.1"
		echo "route add 192.168.9.0/24 encap ip6 id 9 dst fd02::3 dev sttx src 192.168.9.1"
	} | ip -n "$NS_A" -b - || return 1
	server_start "$NS_B"
}

# counter NS NAME: one ethtool -S counter of sttp4 in NS.
counter() { dev_stat "$1" sttp4 "$2"; }

# route_mtu NS ADDR [OIF]: the MTU "ip route get" reports for ADDR (looked
# up as a device bound to OIF does), if any.
route_mtu()
{
	ip -n "$1" route get "$2" ${3:+oif "$3"} |
		sed -n 's/.* mtu \(lock \)\{0,1\}\([0-9]*\).*/\2/p'
}

# tso NS DEV on|off
tso()
{
	ip netns exec "$1" ethtool -K "$2" tso "$3" >/dev/null 2>&1
}

# transfer ADDR WHAT: a checksummed transfer A -> B to ADDR, with a limit.
transfer()
{
	XFER_TIMEOUT=$XFER_TIMEOUT xfer "$NS_B" "$NS_A" "$BYTES" "$1"
	xfer_check "$1"
}

# narrow_transfers FAMILY: the transfers that cross the narrow link, with
# the route MTU and counters they should leave behind.
narrow_transfers()
{
	local fam=$1 mtu learned0 learned1 reasm0 reasm1 tso_state what m inner remote
	local -A to via

	if [[ $fam == 4 ]]; then
		mtu=1400
		to=([p2p]=192.168.4.2 [external]=192.168.8.2)
		via=([p2p]=10.2.0.1 [external]=10.2.0.3)
	else
		mtu=1280
		to=([p2p]=192.168.6.2 [external]=192.168.9.2)
		via=([p2p]=fd02::1 [external]=fd02::3)
	fi
	for tso_state in on off; do
		for what in p2p external; do
			RET=0
			inner=${to[$what]} remote=${via[$what]}
			tso "$NS_A" vA "$tso_state"
			learned0=$(counter "$NS_A" ns_pmtu_learned)
			reasm0=$(counter "$NS_B" ns_rx_outer_reassembled)
			transfer "$inner"
			m=$(route_mtu "$NS_A" "$remote")
			learned1=$(counter "$NS_A" ns_pmtu_learned)
			reasm1=$(counter "$NS_B" ns_rx_outer_reassembled)
			if [[ $fam == 4 && $what == external ]]; then
				# DF comes from the packet's metadata, and
				# lwtunnel routes cannot ask for it: R
				# fragments, B reassembles.
				[[ -z "$m" ]] && ((reasm1 > reasm0))
				check_err $? "without DF: route mtu '${m:-none}' (expected none), ns_rx_outer_reassembled $reasm0 -> $reasm1 on B"
				log_test "IPv$fam underlay, $mtu-byte link, $what (no DF), TSO $tso_state" \
					"${XINFO[$inner]}; $((reasm1 - reasm0)) reassembled"
				continue
			fi
			[[ "$m" == "$mtu" ]]
			check_err $? "ip route get $remote shows mtu '${m:-none}', not $mtu"
			if [[ $tso_state == on ]]; then
				# the first transfer to a remote learns its path
				((learned1 > learned0))
				check_err $? "ns_pmtu_learned did not move ($learned0 -> $learned1)"
			fi
			log_test "IPv$fam underlay, $mtu-byte link, $what, TSO $tso_state" \
				"${XINFO[$inner]}; $((learned1 - learned0)) ICMP applied"
		done
	done
	tso "$NS_A" vA on
}

pmtu_v4()
{
	narrow_transfers 4
}

# forged FAMILY TINY: forged ICMP from B's side of R (any host could send
# them) about A's segments.
forged()
{
	local fam=$1 tiny=$2 floor q r a other l0 i0 l1 m0 m1 mo

	if [[ $fam == 4 ]]; then
		floor=$(ip netns exec "$NS_A" sysctl -n net.ipv4.route.min_pmtu)
		q=10.2.0.7 r=10.2.0.2 other=10.2.0.8 a=10.1.0.1
	else
		floor=1280
		q=fd02::7 r=fd02::2 other=fd02::8 a=fd01::1
	fi
	RET=0
	l0=$(counter "$NS_A" ns_pmtu_learned)
	i0=$(counter "$NS_A" ns_pmtu_ignored)
	m0=$(route_mtu "$NS_A" "$q")
	ip netns exec "$NS_R" "$PY" "$ICMPX" --src "$r" --to "$a" \
		--quote-src "$a" --quote-dst "$q" --mtu "$tiny"
	check_err $? "sending the forged ICMP failed"
	busywait 5000 test "$(counter "$NS_A" ns_pmtu_learned)" -gt "$l0"
	check_err $? "the ICMP about our segments was not applied"
	m1=$(route_mtu "$NS_A" "$q")
	# IPv4 locks the route at min_pmtu; IPv6 ignores a value below 1280.
	[[ -z "$m1" || "$m1" -ge "$floor" ]]
	check_err $? "route to $q: mtu '${m0:-none}' -> '${m1:-none}' after a forged MTU of $tiny, below the floor $floor"
	log_test "IPv$fam forged ICMP, MTU $tiny: route not below $floor" \
		"mtu ${m0:-none} -> ${m1:-none}"

	# About somebody else's TCP (port 5201), and about our port but not
	# sent to the segment's source: nothing learned, no route changed.
	RET=0
	l1=$(counter "$NS_A" ns_pmtu_learned)
	ip netns exec "$NS_R" "$PY" "$ICMPX" --src "$r" --to "$a" \
		--quote-src "$a" --quote-dst "$other" --dport 5201 --mtu "$tiny" &&
	ip netns exec "$NS_R" "$PY" "$ICMPX" --src "$r" --to "$a" \
		--quote-src "$r" --quote-dst "$q" --mtu "$tiny"
	check_err $? "sending the forged ICMP failed"
	busywait 5000 test "$(counter "$NS_A" ns_pmtu_ignored)" -gt "$i0"
	check_err $? "ns_pmtu_ignored did not count the ICMP not sent to the segment's source"
	[[ "$(counter "$NS_A" ns_pmtu_learned)" == "$l1" ]]
	check_err $? "an ICMP that is not about our segments was applied"
	mo=$(route_mtu "$NS_A" "$other")
	[[ -z "$mo" ]]
	check_err $? "route to $other got mtu $mo from an ICMP about other TCP traffic"
	log_test "IPv$fam ICMP about other TCP, or not to the sender: ignored"

	# And traffic goes on.
	RET=0
	if [[ $fam == 4 ]]; then
		transfer 192.168.4.2
		log_test "IPv$fam transfer after forged ICMP" "${XINFO[192.168.4.2]}"
	else
		transfer 192.168.6.2
		log_test "IPv$fam transfer after forged ICMP" "${XINFO[192.168.6.2]}"
	fi
}

pmtu_v4_forged()
{
	forged 4 68
}

# DF unset: R fragments what does not fit, B's IP reassembles, the hook
# takes the reassembled segments.
pmtu_v4_df_unset()
{
	local r0 r1 f0 f1

	RET=0
	r0=$(counter "$NS_B" ns_rx_outer_reassembled)
	f0=$(counter "$NS_B" ns_drop_outer_fragment)
	transfer 192.168.5.2
	r1=$(counter "$NS_B" ns_rx_outer_reassembled)
	f1=$(counter "$NS_B" ns_drop_outer_fragment)
	((r1 > r0))
	check_err $? "ns_rx_outer_reassembled did not move ($r0 -> $r1)"
	[[ "$f1" == "$f0" ]]
	check_err $? "ns_drop_outer_fragment moved ($f0 -> $f1)"
	[[ -z "$(route_mtu "$NS_A" 10.2.0.5)" ]]
	check_err $? "a path MTU was learned with DF unset"
	log_test "IPv4 df unset: R fragments, B takes the reassembled segments" \
		"${XINFO[192.168.5.2]}; $((r1 - r0)) reassembled"
}

# bound_transfer FAMILY: a transfer through sttl4 or sttl6, bound to vA2,
# whose remote A prefers to reach by vA: the path MTU is learned for the
# route the device uses. (The preferred path's route may learn it too: the
# external device on the port could send there.)
bound_transfer()
{
	local fam=$1 mtu inner remote m learned0 learned1

	if [[ $fam == 4 ]]; then
		mtu=1400 inner=192.168.11.2 remote=10.2.0.9
	else
		mtu=1280 inner=192.168.12.2 remote=fd02::9
	fi
	RET=0
	learned0=$(counter "$NS_A" ns_pmtu_learned)
	transfer "$inner"
	learned1=$(counter "$NS_A" ns_pmtu_learned)
	m=$(route_mtu "$NS_A" "$remote" vA2)
	[[ "$m" == "$mtu" ]]
	check_err $? "ip route get $remote oif vA2 shows mtu '${m:-none}', not $mtu (ns_pmtu_learned $learned0 -> $learned1)"
	log_test "IPv$fam device bound to a second path (dev vA2): path MTU learned for its route" \
		"${XINFO[$inner]}; $((learned1 - learned0)) ICMP applied"
}

pmtu_v4_link()
{
	bound_transfer 4
}

pmtu_v6()
{
	RET=0
	ip -n "$NS_R" link set rB mtu 1280 &&
	ip -n "$NS_B" link set vB mtu 1280
	check_err $? "cannot set the 1280-byte link"
	if [[ $RET -ne 0 ]]; then
		log_test "IPv6 path MTU topology"
		return
	fi
	narrow_transfers 6
}

pmtu_v6_forged()
{
	forged 6 500
}

pmtu_v6_link()
{
	bound_transfer 6
}

# A route's MTU metric has no lower bound ("ip route add ... mtu 40" is
# accepted, for IPv6 too), and the outer MSS is that MTU less 40 or 60
# bytes of headers. Over such routes: with DF unset IP fragments the
# segments and B still answers. With DF set IP refuses them (IPv4 until
# the ICMP it sends itself locks the path MTU, below min_pmtu, and it
# fragments after all; IPv6 throughout): reported, not judged. Either
# way the host stays up, and once the route is gone the tunnel works
# again.
route_mtu_tiny()
{
	local r0 r1 dev info=
	local -A to=([sttp4]=192.168.4.2 [sttdf]=192.168.5.2 [sttp6]=192.168.6.2)

	RET=0
	ip -n "$NS_A" route add 10.2.0.5/32 via 10.1.0.2 mtu 40 &&
		ip -n "$NS_A" route add 10.2.0.1/32 via 10.1.0.2 mtu 40 &&
		ip -n "$NS_A" -6 route add fd02::1/128 via fd01::2 mtu 60
	check_err $? "cannot add routes with MTU 40 (IPv4) and 60 (IPv6)"
	r0=$(counter "$NS_B" ns_rx_outer_reassembled)
	PING_WAIT=10 ping_ok "$NS_A" "${to[sttdf]}"
	check_err $? "df unset, route MTU 40: no answer: $PING_OUT"
	r1=$(counter "$NS_B" ns_rx_outer_reassembled)
	((r1 > r0))
	check_err $? "ns_rx_outer_reassembled did not move on B ($r0 -> $r1)"
	info+="df unset: answered, $((r1 - r0)) reassembled; "
	for dev in sttp4 sttp6; do
		ping_ok "$NS_A" "${to[$dev]}"
		info+="$dev over the tiny route: ${PING_OUT:-no summary}; "
	done
	ip -n "$NS_A" route del 10.2.0.5/32 &&
		ip -n "$NS_A" route del 10.2.0.1/32 &&
		ip -n "$NS_A" -6 route del fd02::1/128
	check_err $? "cannot delete the routes"
	# What the lost frames' ICMP taught (route exceptions) went with the
	# routes.
	for dev in sttp4 sttdf sttp6; do
		ping_ok "$NS_A" "${to[$dev]}"
		check_err $? "$dev: no answer after the routes were deleted: $PING_OUT"
	done
	log_test "route MTU 40 / 60: df unset still delivers, the host stays up" "$info"
}

require_root
require_command ethtool
require_command ping
require_command "$PY"
require_stt

RET=0
topo
check_err $? "topology setup failed"
if [[ $RET -ne 0 ]]; then
	log_test "router topology with a 1400-byte link"
	tests_exit
fi
tests_run
tests_exit
