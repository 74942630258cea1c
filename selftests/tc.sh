#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# tc over an external STT device: the "tunnel_key set" / "flower enc_key_id
# ... tunnel_key unset" example of Documentation/networking/stt.rst, in
# both directions, over IPv4 and IPv6 underlays, with pings and
# sha256-checked TCP transfers between the two "VMs"; flower's
# enc_src_ip/enc_dst_ip, enc_dst_port, enc_tos and enc_ttl matches against
# what tunnel_key set, and other values that must not match; "tc -s"
# counters; the 32-bit limit of tc's key ids; and one tunnel_key action
# (one route cache) shared by three external devices: one bound to an
# underlay device, one that is not, one that routes in another namespace;
# and an IPv4-mapped source to an IPv6 remote, refused by a bound device
# as by an unbound one.
#
#   +- $VA ------+   +- $HA -----------------+   +- $HB -----------------+   +- $VB ------+
#   | eth0       +---+ vm0: matchall ->      |   |      <- matchall: vm0 +---+ eth0       |
#   | 10.1.0.1   |   |  tunnel_key set id 42 |   | tunnel_key set id 42  |   | 10.1.0.2   |
#   +------------+   |  -> mirred stt0       |   |       mirred stt0 <-  |   +------------+
#                    | stt0 external: flower |   | stt0 external: flower |
#                    |  enc_key_id 42 ->     |   |  enc_key_id 42 ->     |
#                    |  unset, mirred vm0    |   |  unset, mirred vm0    |
#                    | ua 192.0.2.1          +---+ ub 192.0.2.2          |
#                    |    2001:db8::1        |   |    2001:db8::2        |
#                    +-----------------------+   | sttp external, 7472   |
#                                                +-----------------------+
#
# The hosts $HA and $HB have no address on the inner network: everything
# between $VA and $VB crosses the tunnel only through the tc rules.
#
# Run in the VM:  scripts/vm/run.sh -- selftests/run.sh tc.sh
# Environment: TC_BYTES (bytes per transfer, default 10 MB), TESTS="...".

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	underlay_ipv4
	underlay_ipv6
	enc_addrs
	enc_dst_port
	enc_tos_ttl
	key_32bit
	shared_cache
"

TC_BYTES=${TC_BYTES:-10000000}
KEY=42
UL4_A=192.0.2.1
UL4_B=192.0.2.2
UL6_A=2001:db8::1
UL6_B=2001:db8::2
VM_A=10.1.0.1
VM_B=10.1.0.2

topo()
{
	local ns

	setup_ns VA HA HB VB || return
	# IPv6 only on the underlay: router solicitations and MLD reports on
	# the tunnel devices and the VMs would move the counters tests read.
	for ns in "$VA" "$HA" "$HB" "$VB"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	done
	ip -n "$HA" -b - <<-EOF || return
		link add vm0 type veth peer name eth0 netns $VA
		link add ua type veth peer name ub netns $HB
		link add stt0 type stt external
	EOF
	ip -n "$HB" -b - <<-EOF || return
		link add vm0 type veth peer name eth0 netns $VB
		link add stt0 type stt external
		link add sttp type stt external dstport 7472
	EOF
	ip netns exec "$HA" sysctl -qw net.ipv6.conf.ua.disable_ipv6=0 &&
	ip netns exec "$HB" sysctl -qw net.ipv6.conf.ub.disable_ipv6=0 || return
	ip -n "$HA" -b - <<-EOF || return
		addr add $UL4_A/24 dev ua
		addr add $UL6_A/64 dev ua nodad
		link set ua up
		link set vm0 up
		link set stt0 up
	EOF
	ip -n "$HB" -b - <<-EOF || return
		addr add $UL4_B/24 dev ub
		addr add $UL6_B/64 dev ub nodad
		link set ub up
		link set vm0 up
		link set stt0 up
		link set sttp up
	EOF
	ip -n "$VA" -b - <<-EOF || return
		addr add $VM_A/24 dev eth0
		link set eth0 up
	EOF
	ip -n "$VB" -b - <<-EOF || return
		addr add $VM_B/24 dev eth0
		link set eth0 up
	EOF
	{
		echo "qdisc add dev vm0 ingress"
		echo "qdisc add dev stt0 ingress"
	} | tc -n "$HA" -b - || return
	{
		echo "qdisc add dev vm0 ingress"
		echo "qdisc add dev stt0 ingress"
		echo "qdisc add dev sttp ingress"
	} | tc -n "$HB" -b - || return
	server_start "$VA" && server_start "$VB"
}

# rules NS LOCAL REMOTE "SET ARGS" "MATCH ARGS" [DEV]: the example of
# stt.rst in NS: what enters from vm0 gets key 42 from LOCAL to REMOTE
# (plus SET ARGS) and goes to stt0; what stt0 receives with key 42 from
# REMOTE to LOCAL (plus MATCH ARGS) loses its metadata and goes to vm0. DEV (default
# stt0) is the device whose ingress has the flower filter.
rules()
{
	local ns=$1 l=$2 r=$3 set=$4 match=$5 dev=${6:-stt0}

	tc -n "$ns" filter del dev vm0 ingress
	tc -n "$ns" filter del dev "$dev" ingress
	# shellcheck disable=SC2086 # SET ARGS and MATCH ARGS are lists of words
	tc -n "$ns" filter add dev vm0 ingress matchall \
		action tunnel_key set id $KEY src_ip "$l" dst_ip "$r" $set \
		action mirred egress redirect dev stt0 &&
	tc -n "$ns" filter add dev "$dev" ingress flower enc_key_id $KEY \
		enc_src_ip "$r" enc_dst_ip "$l" $match \
		action tunnel_key unset \
		action mirred egress redirect dev vm0
}

# both FAMILY "SET ARGS" "MATCH ARGS": rules on both hosts.
both()
{
	if [[ $1 == 4 ]]; then
		rules "$HA" "$UL4_A" "$UL4_B" "$2" "$3" &&
			rules "$HB" "$UL4_B" "$UL4_A" "$2" "$3"
	else
		rules "$HA" "$UL6_A" "$UL6_B" "$2" "$3" &&
			rules "$HB" "$UL6_B" "$UL6_A" "$2" "$3"
	fi
}

# pkts NS DEV [DIR [KIND]]: packets counted ("tc -s") by the actions of
# kind KIND (default mirred) of DEV's DIR (default ingress) filters.
pkts()
{
	tc -n "$1" -s -j filter show dev "$2" "${3:-ingress}" |
		jq --arg kind "${4:-mirred}" \
			'[.[] | .options.actions[]? | select(.kind == $kind) |
			  .stats.packets] | add // 0'
}

# no_match DEV WHAT: pings from VM_A get no answer and the filters of
# DEV's ingress on HB count no frame (WHAT names the filter in messages).
no_match()
{
	local c0 c1

	c0=$(pkts "$HB" "$1")
	ping_none "$VA" "$VM_B"
	check_err $? "ping answered through $2: $PING_OUT"
	c1=$(pkts "$HB" "$1")
	((c1 == c0))
	check_err $? "$2 counted $((c1 - c0)) frames"
}

# flow FAMILY: pings both ways, one transfer each way, and the counters of
# the four filters that carried them.
flow()
{
	local fam=$1 what="IPv$1 underlay" a0 a1 b0 b1 m0 m1 s0 s1 dir c
	local cli srv addr label ns dev c0 c1

	RET=0
	both "$fam" "" ""
	check_err $? "tc rules for the IPv$fam underlay failed"
	if ((RET)); then
		log_test "$what: tc rules"
		return
	fi
	m0=$(pkts "$HA" vm0) s0=$(pkts "$HA" stt0)
	a0=$(pkts "$HB" vm0) b0=$(pkts "$HB" stt0)

	PING_WAIT=10 ping_ok "$VA" "$VM_B"
	check_err $? "ping $VM_A -> $VM_B: $PING_OUT"
	ping_ok "$VB" "$VM_A"
	check_err $? "ping $VM_B -> $VM_A: $PING_OUT"
	log_test "$what: tunnel_key set / flower enc_key_id: ping both ways"

	for dir in "$VA $VB $VM_B A->B" "$VB $VA $VM_A B->A"; do
		read -r cli srv addr label <<<"$dir"
		RET=0
		xfer "$srv" "$cli" "$TC_BYTES" "$addr"
		xfer_check "$addr"
		log_test "$what: transfer $label, sha256 checked" "${XINFO[$addr]}"
	done

	RET=0
	m1=$(pkts "$HA" vm0) s1=$(pkts "$HA" stt0)
	a1=$(pkts "$HB" vm0) b1=$(pkts "$HB" stt0)
	# Each transfer is at least TC_BYTES / 65536 data packets one way
	# and some ACKs the other way, through both hosts' filters.
	for c in "$HA vm0 $m0 $m1" "$HA stt0 $s0 $s1" "$HB vm0 $a0 $a1" \
		 "$HB stt0 $b0 $b1"; do
		read -r ns dev c0 c1 <<<"$c"
		((c1 - c0 >= TC_BYTES / 65536))
		check_err $? "tc -s: $dev's filter of ${ns%%-*} counted $((c1 - c0)) packets"
	done
	log_test "$what: tc -s counters of both hosts' filters move" \
		"A +$((m1 - m0))/+$((s1 - s0)), B +$((a1 - a0))/+$((b1 - b0))"
}

underlay_ipv4()
{
	flow 4
}

underlay_ipv6()
{
	flow 6
}

# flower enc_src_ip and enc_dst_ip match the outer addresses (every rule
# above has both); a filter for another source or destination takes
# nothing.
enc_addrs()
{
	local fam l r w rule ll rr what

	for fam in 4 6; do
		if [[ $fam == 4 ]]; then
			l=$UL4_B r=$UL4_A w=192.0.2.99
		else
			l=$UL6_B r=$UL6_A w=2001:db8::99
		fi
		for rule in "$w $r enc_dst_ip" "$l $w enc_src_ip"; do
			read -r ll rr what <<<"$rule"
			RET=0
			both "$fam" "" "" && rules "$HB" "$ll" "$rr" "" ""
			check_err $? "tc rules with $what $w failed"
			no_match stt0 "flower $what $w"
			log_test "IPv$fam: flower $what $w does not match $r -> $l"
		done
	done
}

# tunnel_key set dst_port sends to another port, where another external
# device receives; flower enc_dst_port matches the port a frame came to.
enc_dst_port()
{
	local p0 p1 s0 s1

	RET=0
	rules "$HA" "$UL4_A" "$UL4_B" "dst_port 7472" "enc_dst_port 7471" &&
	rules "$HB" "$UL4_B" "$UL4_A" "" "enc_dst_port 7471" &&
	rules "$HB" "$UL4_B" "$UL4_A" "" "enc_dst_port 7472" sttp
	check_err $? "tc rules with dst_port/enc_dst_port failed"
	s0=$(pkts "$HB" stt0) p0=$(pkts "$HB" sttp)
	ping_ok "$VA" "$VM_B"
	check_err $? "ping $VM_A -> $VM_B (requests to port 7472): $PING_OUT"
	s1=$(pkts "$HB" stt0) p1=$(pkts "$HB" sttp)
	((p1 - p0 >= 1))
	check_err $? "enc_dst_port 7472 filter of sttp counted $((p1 - p0)) packets"
	((s1 == s0))
	check_err $? "stt0 (port 7471) of $HB got $((s1 - s0)) frames sent to 7472"
	log_test "tunnel_key set dst_port 7472, flower enc_dst_port 7472/7471" \
		"sttp +$((p1 - p0)), stt0 +$((s1 - s0))"

	RET=0
	rules "$HB" "$UL4_B" "$UL4_A" "" "enc_dst_port 7473" sttp
	check_err $? "tc rules with enc_dst_port 7473 failed"
	no_match sttp "enc_dst_port 7473 (frames go to 7472)"
	log_test "flower enc_dst_port 7473 does not match frames to 7472"
	tc -n "$HB" filter del dev sttp ingress
}

# tunnel_key set tos/ttl puts them in the outer header; flower enc_tos and
# enc_ttl match them on receive; a wrong TTL does not match.
enc_tos_ttl()
{
	local fam c0 c1

	for fam in 4 6; do
		RET=0
		both "$fam" "tos 0x28 ttl 42" "enc_tos 0x28 enc_ttl 42"
		check_err $? "tc rules with tos/ttl failed"
		c0=$(pkts "$HB" stt0)
		ping_ok "$VA" "$VM_B"
		check_err $? "ping with enc_tos 0x28 enc_ttl 42: $PING_OUT"
		c1=$(pkts "$HB" stt0)
		((c1 - c0 >= 1))
		check_err $? "enc_tos/enc_ttl filter counted $((c1 - c0)) packets"
		log_test "IPv$fam: tunnel_key set tos 0x28 ttl 42, flower enc_tos/enc_ttl match"

		RET=0
		both "$fam" "tos 0x28 ttl 42" "enc_tos 0x28 enc_ttl 41"
		check_err $? "tc rules with enc_ttl 41 failed"
		no_match stt0 "enc_ttl 41 (frames have TTL 42)"
		log_test "IPv$fam: flower enc_ttl 41 does not match TTL 42"
	done
}

# tc's key ids are 32 bits: tunnel_key set refuses more, and flower's
# enc_key_id compares the low 32 bits of STT's 64-bit context ID only.
key_32bit()
{
	local big=$(((1 << 32) + KEY)) c0 c1

	RET=0
	tc -n "$HA" filter add dev vm0 ingress pref 99 matchall \
		action tunnel_key set id "$big" src_ip "$UL4_A" dst_ip "$UL4_B" \
		action mirred egress redirect dev stt0 2>/dev/null
	check_fail $? "tunnel_key set id $big was accepted"
	tc -n "$HA" filter del dev vm0 ingress pref 99 2>/dev/null
	log_test "tc tunnel_key set refuses id 2^32+$KEY"

	# A lightweight tunnel route sends all 64 bits from $HA itself.
	RET=0
	both 4 "" ""
	check_err $? "tc rules failed"
	ip -n "$HA" -b - <<-EOF
		addr add 10.1.0.100/32 dev lo
		route add $VM_B/32 encap ip id $big dst $UL4_B dev stt0 src 10.1.0.100
	EOF
	check_err $? "lwt route with id $big failed"
	c0=$(pkts "$HB" stt0)
	ip netns exec "$HA" ping -q -c 3 -i 0.2 -w 3 "$VM_B" >/dev/null 2>&1
	c1=$(pkts "$HB" stt0)
	((c1 - c0 >= 3))
	check_err $? "flower enc_key_id $KEY counted $((c1 - c0)) frames of context ID $big"
	log_test "flower enc_key_id $KEY also matches context ID 2^32+$KEY" \
		"+$((c1 - c0))"
	ip -n "$HA" route del "$VM_B"/32
	ip -n "$HA" addr del 10.1.0.100/32 dev lo

	# And a filter for another key does not take key 42.
	RET=0
	tc -n "$HB" filter del dev stt0 ingress &&
	tc -n "$HB" filter add dev stt0 ingress flower enc_key_id $((KEY + 1)) \
		action tunnel_key unset action mirred egress redirect dev vm0
	check_err $? "flower enc_key_id $((KEY + 1)) failed"
	no_match stt0 "enc_key_id $((KEY + 1)) (frames have key $KEY)"
	log_test "flower enc_key_id $((KEY + 1)) does not match key $KEY"
}

# count_tcp NS DEV...: egress filters of each DEV of NS that count the
# TCP packets it sends, IPv4 and IPv6 (read with "pkts NS DEV egress gact").
count_tcp()
{
	local ns=$1 dev

	shift
	for dev; do
		echo "qdisc add dev $dev clsact"
		echo "filter add dev $dev egress protocol ip flower ip_proto tcp action pass"
		echo "filter add dev $dev egress protocol ipv6 flower ip_proto tcp action pass"
	done | tc -n "$ns" -b -
}

# out3: the TCP packets $HA's ua and ux and $HN's un sent, as "ua ux un".
out3()
{
	echo "$(pkts "$HA" ua egress gact) $(pkts "$HA" ux egress gact)" \
		"$(pkts "$HN" un egress gact)"
}

# far_end NS DEV PEER: NS reaches $HB's underlay addresses through DEV, a
# veth whose peer PEER drops what it gets (permanent neighbours: nothing
# resolves them).
far_end()
{
	local mac

	mac=$(ip -n "$1" -j link show "$3" | jq -r '.[0].address') &&
	ip -n "$1" -b - <<-EOF
		neigh add $UL4_B lladdr $mac dev $2 nud permanent
		neigh add $UL6_B lladdr $mac dev $2 nud permanent
	EOF
}

# shared_action L R: one tunnel_key action (index 7) from L to R for what
# $HA's d0 sends to 10.9.0.2, .3 and .4, then mirred to stt0, sttb and
# sttn (shared_cache's addr).
shared_action()
{
	local dev

	tc -n "$HA" filter del dev d0 egress 2>/dev/null
	tc -n "$HA" actions del action tunnel_key index 7 2>/dev/null
	{
		echo "actions add action tunnel_key set id $KEY src_ip $1 dst_ip $2 index 7"
		for dev in stt0 sttb sttn; do
			echo "filter add dev d0 egress protocol ip flower dst_ip ${addr[$dev]} action tunnel_key index 7 action mirred egress redirect dev $dev"
		done
	} | tc -n "$HA" -b -
}

# ping_through DEV: pings from $HA, on CPU 0, that the shared action sends
# to DEV; what ua, ux and un sent meanwhile goes to DELTA (0 1 2).
DELTA=()
ping_through()
{
	local o0 o1 d

	read -r -a o0 <<<"$(out3)"
	ip netns exec "$HA" taskset -c 0 \
		ping -q -c 3 -i 0.2 -w 2 "${addr[$1]}" >/dev/null 2>&1
	read -r -a o1 <<<"$(out3)"
	for d in 0 1 2; do
		DELTA[d]=$((o1[d] - o0[d]))
	done
}

# One tunnel_key action's metadata carries one route cache for every
# packet it sets, whichever device the packet then goes to. Here it feeds
# three external devices of $HA: stt0 (no underlay device: routes through
# ua), sttb (dev ux; ux also has a route to the far end, worse than ua's)
# and sttn (made in $HN, moved to $HA: it routes in $HN, through un). A
# route one of them looked up must not send another's packets: each
# device's packets must leave through its own underlay device, in either
# order. Pings from $HA to a dummy device's neighbours 10.9.0.2 (-> stt0),
# .3 (-> sttb) and .4 (-> sttn) carry them; nothing answers. Each
# device has its own port (one external device per port receives). The
# pings run on one CPU: the cache is per CPU.
shared_cache()
{
	local fam l r order dev d got ok desc c0 c1 seen=
	local -A addr=([stt0]=10.9.0.2 [sttb]=10.9.0.3 [sttn]=10.9.0.4)
	local -A via=([stt0]=0 [sttb]=1 [sttn]=2)

	RET=0
	# Only the pings below may reach stt0: $VA's neighbour probes, left
	# by the pings of earlier tests, would cross it and ua for seconds.
	tc -n "$HA" filter del dev vm0 ingress
	setup_ns HN
	check_err $? "cannot add a namespace"
	ip -n "$HA" -b - <<-EOF
		link add d0 type dummy
		link add ux type veth peer name uxp
		link add sttb type stt external dev ux dstport 7473
		addr add 10.9.0.1/24 dev d0
		link set d0 up
		link set uxp up
		link set ux up
		link set sttb up
		route add 192.0.2.0/24 dev ux metric 100
	EOF
	check_err $? "cannot add d0, ux or sttb"
	ip netns exec "$HA" sysctl -qw net.ipv6.conf.ux.disable_ipv6=0 &&
	ip -n "$HA" route add 2001:db8::/64 dev ux metric 2000 &&
	far_end "$HA" ux uxp
	check_err $? "cannot route through ux"
	ip -n "$HN" -b - <<-EOF
		link add un type veth peer name unp
		addr add $UL4_A/24 dev un
		addr add $UL6_A/64 dev un nodad
		link set unp up
		link set un up
		link add sttn type stt external dstport 7474
		link set sttn netns $HA
	EOF
	check_err $? "cannot add un or sttn in $HN"
	far_end "$HN" un unp
	check_err $? "cannot add un's neighbours"
	ip -n "$HA" link set sttn up
	check_err $? "cannot set sttn up in $HA"
	tc -n "$HA" qdisc add dev d0 clsact &&
	count_tcp "$HA" ua ux && count_tcp "$HN" un
	check_err $? "cannot add the counting filters"

	# IPv4: the bound device first; IPv6: the unbound one first.
	for fam in 4 6; do
		if [[ $fam == 4 ]]; then
			l=$UL4_A r=$UL4_B order="sttb stt0 sttn stt0"
		else
			l=$UL6_A r=$UL6_B order="stt0 sttb sttn stt0"
		fi
		shared_action "$l" "$r"
		check_err $? "IPv$fam: cannot add the shared action and its filters"
		for dev in $order; do
			ping_through "$dev"
			got="" ok=1
			for d in 0 1 2; do
				got+=" +${DELTA[d]}"
				if ((d == ${via[$dev]} ? DELTA[d] < 3 : DELTA[d])); then
					ok=0
				fi
			done
			((ok))
			check_err $? "IPv$fam, $order: $dev's packets out of ua, ux, un:$got"
			seen+=" IPv$fam $dev:$got;"
		done
	done
	desc="one tunnel_key action, external devices unbound, bound (dev) and routing in another netns: each one's packets leave through its own underlay"
	log_info "packets out of ua, ux, un:${seen%;}"
	log_test "$desc"

	# An IPv4-mapped source to an IPv6 remote is refused by the kernel's
	# IPv6 output lookup (ip6_dst_lookup_flow(): EAFNOSUPPORT): dropped
	# and counted as no route, by a bound device as by an unbound one.
	RET=0
	seen=
	shared_action "::ffff:$UL4_A" "$UL6_B"
	check_err $? "cannot add the shared action from ::ffff:$UL4_A"
	for dev in stt0 sttb; do
		c0=$(dev_stat "$HA" "$dev" tx_drop_no_route)
		ping_through "$dev"
		c1=$(dev_stat "$HA" "$dev" tx_drop_no_route)
		got="+${DELTA[0]} +${DELTA[1]} +${DELTA[2]}"
		[[ $got == "+0 +0 +0" ]] && ((c1 - c0 >= 3))
		check_err $? "$dev: packets out of ua, ux, un: $got; tx_drop_no_route +$((c1 - c0))"
		seen+=" $dev: $got, +$((c1 - c0));"
	done
	log_info "packets out of ua, ux, un, tx_drop_no_route:${seen%;}"
	log_test "tunnel_key src_ip ::ffff:$UL4_A dst_ip $UL6_B: stt0 and sttb (dev ux) send nothing, count no route"

	tc -n "$HA" filter del dev d0 egress
	tc -n "$HA" actions del action tunnel_key index 7
	for dev in ua ux d0; do
		tc -n "$HA" qdisc del dev "$dev" clsact
	done
	ip -n "$HA" link del sttb
	ip -n "$HA" link del sttn
	ip -n "$HA" link del ux
	ip -n "$HA" link del d0
	cleanup_ns "$HN"
}

require_root
require_command tc
require_command jq
require_command ethtool
require_command ping
require_command python3
require_stt

if ! topo; then
	RET=1
	retmsg="setting up the namespaces, devices, qdiscs or servers failed"
	log_test "topology: 4 namespaces, 3 external STT devices, tc"
	tests_exit
fi
tests_run
tests_exit
