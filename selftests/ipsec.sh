#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# STT inside IPsec. STT authenticates nothing: whoever reaches the port
# with a known key and a peer's address injects frames. Operators who need
# more protect the tunnel's traffic with ESP, and the receive hook must
# then honour the input policy as TCP or a UDP tunnel would.
#
#   +--- A ----------------+   veth  +--- B ----------------+
#   | stt4 -> 10.0.0.2     +---------+ stt4 -> 10.0.0.1     |
#   | stt6 -> fd00::2      |  ESP    | stt6 -> fd00::1      |
#   | sttx (external)      |         | stt8 -> 10.0.0.1     |
#   +----------------------+         +----------------------+
#
# Transport-mode ESP, rfc4106(gcm(aes)), for "proto tcp dport 7471" both
# ways, and an input policy on each host that requires it. Checked, both
# families: ping and a checksummed transfer over STT (point-to-point, and
# external over IPv4); the wire shows ESP and no plaintext STT; the
# segments arrive one by one (GRO cannot merge ESP) and reassembly carries
# every frame; a forged plaintext STT frame with the peer's address is
# dropped and counted (ns_drop_xfrm_policy); without a policy, plaintext
# STT is taken as before. Then tunnel-mode ESP between two gateways that
# carry STT between hosts behind them (the gateways' ESP overhead makes
# their path narrower: A learns it from ICMP).

# shellcheck disable=SC2317 # the tests run through tests_run
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	esp_v4
	esp_v6
	esp_external
	forged_plaintext
	no_policy_plaintext
	esp_tunnel_gateways
"

CRAFT=$STT_MODULE_DIR/selftests/stt_craft.py
BYTES=${IPSEC_BYTES:-5000000}
FORGED=${IPSEC_FORGED:-20}
ALG="rfc4106(gcm(aes))"
KEY_AB=0x0123456789abcdef0123456789abcdef01234567
KEY_BA=0x89abcdef0123456789abcdef0123456789abcdef

# esp_cmds LOCAL REMOTE SPI_OUT SPI_IN: ip -b lines for transport-mode ESP
# of STT between LOCAL and REMOTE, input required.
esp_cmds()
{
	local l=$1 r=$2 so=$3 si=$4 ko=$KEY_AB ki=$KEY_BA

	# the two hosts agree on which key goes which way
	[[ $so -gt $si ]] && { ko=$KEY_BA; ki=$KEY_AB; }
	echo "xfrm state add src $l dst $r proto esp spi $so mode transport aead $ALG $ko 128"
	echo "xfrm state add src $r dst $l proto esp spi $si mode transport aead $ALG $ki 128"
	echo "xfrm policy add src $l dst $r proto tcp dport 7471 dir out tmpl src $l dst $r proto esp mode transport"
	echo "xfrm policy add src $r dst $l proto tcp dport 7471 dir in tmpl src $r dst $l proto esp mode transport level required"
}

topo()
{
	setup_ns NS_A NS_B && stt_pair_underlay || return 1
	{
		echo "link add stt4 type stt remote 10.0.0.2 key 4"
		echo "link add stt6 type stt remote fd00::2 key 6"
		echo "link add sttx type stt external"
		echo "addr add 192.168.4.1/24 dev stt4"
		echo "addr add 192.168.6.1/24 dev stt6"
		echo "addr add 192.168.8.1/24 dev sttx noprefixroute"
		esp_cmds 10.0.0.1 10.0.0.2 0x100 0x200
		esp_cmds fd00::1 fd00::2 0x300 0x400
	} | ip -n "$NS_A" -b - || return 1
	{
		echo "link add stt4 type stt remote 10.0.0.1 key 4"
		echo "link add stt6 type stt remote fd00::1 key 6"
		echo "link add stt8 type stt remote 10.0.0.1 key 8"
		echo "addr add 192.168.4.2/24 dev stt4"
		echo "addr add 192.168.6.2/24 dev stt6"
		echo "addr add 192.168.8.2/24 dev stt8"
		esp_cmds 10.0.0.2 10.0.0.1 0x200 0x100
		esp_cmds fd00::2 fd00::1 0x400 0x300
	} | ip -n "$NS_B" -b - || return 1
	for ns in "$NS_A" "$NS_B"; do
		for d in $(stt_devices "$ns"); do
			ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
			ip -n "$ns" link set "$d" up || return 1
		done
	done
	ip -n "$NS_A" route add 192.168.8.0/24 encap ip id 8 dst 10.0.0.2 \
		dev sttx src 192.168.8.1 || return 1
	server_start "$NS_B"
}

# wire_count FILE FILTER: packets of a capture that match a pcap filter.
wire_count()
{
	tcpdump -nr "$1" "$2" 2>/dev/null | wc -l
}

# wire_start NS DEV: capture ESP and STT on DEV of NS until wire_stop.
wire_start()
{
	WIRE_PCAP=$(mktemp /tmp/stt-ipsec-XXXXXX.pcap)
	capture_start "$1" "$2" "$WIRE_PCAP" 'esp or tcp port 7471' 128
}

# wire_stop: end the capture; WIRE_ESP and WIRE_PLAIN are its ESP packets
# and plaintext STT segments.
wire_stop()
{
	capture_stop
	WIRE_ESP=$(wire_count "$WIRE_PCAP" esp)
	WIRE_PLAIN=$(wire_count "$WIRE_PCAP" 'tcp port 7471')
	rm -f "$WIRE_PCAP" "$WIRE_PCAP.log"
}

# over_esp WHAT INNER DEV PEERDEV: ping and a transfer A -> B over INNER,
# captured on B's underlay: ESP only, frames reassembled on B.
over_esp()
{
	local what=$1 inner=$2 dev=$3 peer=$4 r0 r1

	RET=0
	wire_start "$NS_B" vB
	r0=$(dev_stat "$NS_B" "$peer" rx_frames_reassembled)
	ping_ok "$NS_A" "$inner"
	check_err $? "ping to $inner over $dev failed: $PING_OUT"
	xfer "$NS_B" "$NS_A" "$BYTES" "$inner"
	xfer_check "$inner"
	r1=$(dev_stat "$NS_B" "$peer" rx_frames_reassembled)
	wire_stop
	((WIRE_ESP > 0 && WIRE_PLAIN == 0))
	check_err $? "on the wire: $WIRE_ESP ESP packets, $WIRE_PLAIN plaintext STT segments"
	((r1 > r0))
	check_err $? "no frame was reassembled on B ($r0 -> $r1): did ESP segments get merged?"
	log_test "$what over transport-mode ESP" \
		"${XINFO[$inner]}; wire: $WIRE_ESP ESP, $WIRE_PLAIN plain; $((r1 - r0)) frames reassembled"
}

esp_v4()
{
	over_esp "IPv4 underlay, point-to-point" 192.168.4.2 stt4 stt4
}

esp_v6()
{
	over_esp "IPv6 underlay, point-to-point" 192.168.6.2 stt6 stt6
}

esp_external()
{
	over_esp "IPv4 underlay, external" 192.168.8.2 sttx stt8
}

# forged_seen DEV BASE: B's DEV has counted FORGED more frames, refused
# or delivered, than BASE.
forged_seen()
{
	local d w

	d=$(dev_stat "$NS_B" "$1" ns_drop_xfrm_policy)
	w=$(dev_stat "$NS_B" "$1" rx_frames_whole)
	((d + w - $2 >= FORGED))
}

# forged FAMILY: FORGED good plaintext frames with A's address, sent from
# A's side of the wire, bypassing A's IPsec. Prints "drops delivered".
forged()
{
	local fam=$1 mac cls d0 w0 d1 w1 dev

	mac=$(ip -n "$NS_B" -j link show vB | jq -r '.[0].address')
	if [[ $fam == 4 ]]; then
		cls=good dev=stt4
	else
		cls=good6 dev=stt6
	fi
	d0=$(dev_stat "$NS_B" "$dev" ns_drop_xfrm_policy)
	w0=$(dev_stat "$NS_B" "$dev" rx_frames_whole)
	ip netns exec "$NS_A" "$PY" "$CRAFT" --dev vA --dst-mac "$mac" \
		--key "$([[ $fam == 4 ]] && echo 4 || echo 6)" \
		--count "$FORGED" send "$cls" >/dev/null || return 1
	BUSYWAIT_SLEEP=0.2 busywait 10000 forged_seen "$dev" $((d0 + w0))
	d1=$(dev_stat "$NS_B" "$dev" ns_drop_xfrm_policy)
	w1=$(dev_stat "$NS_B" "$dev" rx_frames_whole)
	echo "$((d1 - d0)) $((w1 - w0))"
}

forged_plaintext()
{
	local fam drops got

	for fam in 4 6; do
		RET=0
		read -r drops got < <(forged "$fam")
		[[ "$drops" == "$FORGED" && "$got" == 0 ]]
		check_err $? "of $FORGED forged frames: ${drops:-?} refused by the policy, ${got:-?} delivered"
		log_test "IPv$fam forged plaintext STT under a required policy: refused" \
			"$drops of $FORGED counted as ns_drop_xfrm_policy"
	done
}

no_policy_plaintext()
{
	local fam drops got ns

	for ns in "$NS_A" "$NS_B"; do
		ip -n "$ns" xfrm policy flush
		ip -n "$ns" xfrm state flush
	done
	for fam in 4 6; do
		RET=0
		read -r drops got < <(forged "$fam")
		[[ "$drops" == 0 && "$got" == "$FORGED" ]]
		check_err $? "of $FORGED plaintext frames without any policy: ${drops:-?} refused, ${got:-?} delivered"
		log_test "IPv$fam plaintext STT without a policy: taken as before" \
			"$got of $FORGED delivered"
	done
	RET=0
	xfer "$NS_B" "$NS_A" "$BYTES" 192.168.4.2
	xfer_check 192.168.4.2
	log_test "plaintext transfer without a policy" "${XINFO[192.168.4.2]}"
}

# Tunnel-mode ESP between gateways GA and GB; the STT hosts H1 and H2 know
# nothing of it. The capture is on a bridge between the gateways (W): on a
# gateway's own interface it would also show the packets ESP decapsulated,
# which re-enter there.
#   H1 10.1.0.1 -- 10.1.0.2 GA 10.9.0.1 ==ESP== (W) ==ESP== 10.9.0.2 GB 10.2.0.2 -- 10.2.0.1 H2
esp_tunnel_gateways()
{
	local learned

	RET=0
	setup_ns H1 GA W GB H2 || { log_test "tunnel-mode topology"; return; }
	ip link add h1 netns "$H1" type veth peer name ga1 netns "$GA" &&
	ip link add ga2 netns "$GA" type veth peer name wa netns "$W" &&
	ip link add gb2 netns "$GB" type veth peer name wb netns "$W" &&
	ip link add gb1 netns "$GB" type veth peer name h2 netns "$H2" &&
	ip -n "$W" link add br0 type bridge &&
	ip -n "$W" link set wa master br0 up &&
	ip -n "$W" link set wb master br0 up &&
	ip -n "$W" link set br0 up
	check_err $? "veth/bridge setup failed"
	{
		echo "addr add 10.1.0.1/24 dev h1"
		echo "link set h1 up"
		echo "route add default via 10.1.0.2"
		echo "link add stt0 type stt remote 10.2.0.1 key 1"
		echo "addr add 192.168.1.1/24 dev stt0"
	} | ip -n "$H1" -b -
	check_err $? "H1 setup failed"
	{
		echo "addr add 10.2.0.1/24 dev h2"
		echo "link set h2 up"
		echo "route add default via 10.2.0.2"
		echo "link add stt0 type stt remote 10.1.0.1 key 1"
		echo "addr add 192.168.1.2/24 dev stt0"
	} | ip -n "$H2" -b -
	check_err $? "H2 setup failed"
	{
		echo "addr add 10.1.0.2/24 dev ga1"
		echo "addr add 10.9.0.1/24 dev ga2"
		echo "link set ga1 up"
		echo "link set ga2 up"
		echo "route add 10.2.0.0/24 via 10.9.0.2"
		echo "xfrm state add src 10.9.0.1 dst 10.9.0.2 proto esp spi 0x500 mode tunnel aead $ALG $KEY_AB 128"
		echo "xfrm state add src 10.9.0.2 dst 10.9.0.1 proto esp spi 0x600 mode tunnel aead $ALG $KEY_BA 128"
		echo "xfrm policy add src 10.1.0.0/24 dst 10.2.0.0/24 dir out tmpl src 10.9.0.1 dst 10.9.0.2 proto esp mode tunnel"
		echo "xfrm policy add src 10.2.0.0/24 dst 10.1.0.0/24 dir fwd tmpl src 10.9.0.2 dst 10.9.0.1 proto esp mode tunnel level required"
		echo "xfrm policy add src 10.2.0.0/24 dst 10.1.0.0/24 dir in tmpl src 10.9.0.2 dst 10.9.0.1 proto esp mode tunnel level required"
	} | ip -n "$GA" -b -
	check_err $? "GA setup failed"
	{
		echo "addr add 10.2.0.2/24 dev gb1"
		echo "addr add 10.9.0.2/24 dev gb2"
		echo "link set gb1 up"
		echo "link set gb2 up"
		echo "route add 10.1.0.0/24 via 10.9.0.1"
		echo "xfrm state add src 10.9.0.1 dst 10.9.0.2 proto esp spi 0x500 mode tunnel aead $ALG $KEY_AB 128"
		echo "xfrm state add src 10.9.0.2 dst 10.9.0.1 proto esp spi 0x600 mode tunnel aead $ALG $KEY_BA 128"
		echo "xfrm policy add src 10.2.0.0/24 dst 10.1.0.0/24 dir out tmpl src 10.9.0.2 dst 10.9.0.1 proto esp mode tunnel"
		echo "xfrm policy add src 10.1.0.0/24 dst 10.2.0.0/24 dir fwd tmpl src 10.9.0.1 dst 10.9.0.2 proto esp mode tunnel level required"
		echo "xfrm policy add src 10.1.0.0/24 dst 10.2.0.0/24 dir in tmpl src 10.9.0.1 dst 10.9.0.2 proto esp mode tunnel level required"
	} | ip -n "$GB" -b -
	check_err $? "GB setup failed"
	ip netns exec "$GA" sysctl -qw net.ipv4.ip_forward=1 &&
	ip netns exec "$GB" sysctl -qw net.ipv4.ip_forward=1
	check_err $? "forwarding setup failed"
	for ns in "$H1" "$H2"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.stt0.disable_ipv6=1
		ip -n "$ns" link set stt0 up
	done
	if [[ $RET -ne 0 ]]; then
		log_test "STT through tunnel-mode ESP gateways"
		return
	fi
	server_start "$H2"
	wire_start "$W" br0
	ping_ok "$H1" 192.168.1.2
	check_err $? "ping over STT through the gateways failed: $PING_OUT"
	xfer "$H2" "$H1" "$BYTES" 192.168.1.2
	xfer_check 192.168.1.2
	wire_stop
	((WIRE_ESP > 0 && WIRE_PLAIN == 0))
	check_err $? "between the gateways: $WIRE_ESP ESP packets, $WIRE_PLAIN plaintext STT segments"
	learned=$(dev_stat "$H1" stt0 ns_pmtu_learned)
	log_test "STT through tunnel-mode ESP gateways" \
		"${XINFO[192.168.1.2]}; wire: $WIRE_ESP ESP, $WIRE_PLAIN plain; H1 learned the path MTU ${learned:-0} times ($(ip -n "$H1" route get 10.2.0.1 | sed -n 's/.*\(mtu [0-9]*\).*/\1/p'))"
}

require_root
require_command ethtool
require_command tcpdump
require_command jq
require_command "$PY"
require_stt
# ip xfrm talks NETLINK_XFRM (CONFIG_XFRM_USER): a kernel without it has no
# IPsec to test here.
if ! out=$(unshare -n ip xfrm state list 2>&1); then
	echo "SKIP: this kernel has no IPsec configuration interface (ip xfrm: $out)"
	exit "$ksft_skip"
fi

RET=0
topo
check_err $? "topology setup failed"
if [[ $RET -ne 0 ]]; then
	log_test "two hosts with transport-mode ESP"
	tests_exit
fi
tests_run
tests_exit
