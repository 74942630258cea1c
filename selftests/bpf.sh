#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# tc BPF over an external STT device: tools/bpf/stt_tunnel.bpf.o, loaded
# with "tc filter ... bpf da obj ... sec stt_tx|stt_rx". stt_tx gives each
# packet from a VM port its tenant's key and remote
# (bpf_skb_set_tunnel_key) and redirects it into stt0; stt_rx reads the key
# of each received frame (bpf_skb_get_tunnel_key) and steers it to the
# port of that key. Two tenants with the same addresses, one over an IPv4
# underlay (key 100), one over IPv6 (key 200, TOS 0x28, TTL 42): pings
# and sha256-checked transfers both ways, steering by key, what stt_rx
# reads (key, remote, TOS, TTL), unknown keys dropped, and the 32-bit
# tunnel_id of struct bpf_tunnel_key against STT's 64-bit context ID.
#
#   +- $VA1 ----+   +- $HA ------------------+   +- $HB ------------------+   +- $VB1 ----+
#   | 10.1.0.1  +---+ vm1 (stt_tx)           |   |           (stt_tx) vm1 +---+ 10.1.0.2  |
#   +-----------+   |                        |   |                        |   +-----------+
#   +- $VA2 ----+   |                        |   |                        |   +- $VB2 ----+
#   | 10.1.0.1  +---+ vm2 (stt_tx)           |   |           (stt_tx) vm2 +---+ 10.1.0.2  |
#   +-----------+   | stt0 external (stt_rx) |   | stt0 external (stt_rx) |   +-----------+
#                   | ua 192.0.2.1           +---+ ub 192.0.2.2           |
#                   |    2001:db8::1         |   |    2001:db8::2         |
#                   +------------------------+   +------------------------+
#
# Each host has its own bpffs (TC_BPF_MNT), where tc pins the maps that
# its programs share; bpftool fills them.
#
# Run in the VM:  scripts/vm/run.sh -- selftests/run.sh bpf.sh
# Environment: BPF_BYTES (bytes per transfer, default 10 MB), TESTS="...".

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	tenants_ping
	tenants_transfer
	rx_metadata
	unknown_key
	key_64bit
"

BPF_BYTES=${BPF_BYTES:-10000000}
OBJ=$STT_MODULE_DIR/tools/bpf/stt_tunnel.bpf.o
KEY1=100
KEY2=200
VM_A=10.1.0.1
VM_B=10.1.0.2
BPFD=

cleanup()
{
	local d

	# nothing mounted yet (a skip before topo): "$BPFD"/* would be /*
	[[ -n "$BPFD" ]] || return 0
	for d in "$BPFD"/*; do
		mountpoint -q "$d" && umount "$d"
	done
	rm -rf "$BPFD"
}

# hex32 N: N as 4 bytes in host (little-endian) order, for bpftool.
hex32()
{
	printf '%02x %02x %02x %02x' $(($1 & 255)) $(($1 >> 8 & 255)) \
		$(($1 >> 16 & 255)) $(($1 >> 24 & 255))
}

# hexaddr ADDR: 16 bytes, network order, IPv4 in the first 4.
hexaddr()
{
	python3 -c 'import ipaddress, sys
a = ipaddress.ip_address(sys.argv[1]).packed
print(" ".join("%02x" % b for b in a.ljust(16, b"\0")))' "$1"
}

ifindex()
{
	ip -n "$1" -j link show dev "$2" | jq '.[0].ifindex'
}

# htc HOST ARGS...: tc in host namespace HOST ($HA or $HB) with its bpffs.
htc()
{
	local h=$1

	shift
	TC_BPF_MNT=$BPFD/${h%%-*} tc -n "$h" "$@"
}

# map HOST NAME: the pinned map NAME of HOST's programs.
map()
{
	echo "$BPFD/${1%%-*}/tc/globals/$2"
}

# port HOST DEV KEY REMOTE FLAGS TOS TTL: packets from DEV get KEY to
# REMOTE, and frames with KEY go to DEV.
port()
{
	local h=$1 dev=$2 key=$3 remote=$4 flags=$5 tos=$6 ttl=$7 idx stt

	idx=$(ifindex "$h" "$dev") && stt=$(ifindex "$h" stt0) || return
	# shellcheck disable=SC2046 # lists of bytes
	bpftool map update pinned "$(map "$h" stt_tx_map)" \
		key hex $(hex32 "$idx") \
		value hex $(hex32 "$key") $(hex32 "$stt") $(hex32 "$flags") \
		$(printf '%02x %02x 00 00' "$tos" "$ttl") $(hexaddr "$remote") ||
		return
	# shellcheck disable=SC2046 # lists of bytes
	bpftool map update pinned "$(map "$h" stt_rx_map)" \
		key hex $(hex32 "$key") \
		value hex $(hex32 "$idx") 00 00 00 00 $(hex32 0) $(hex32 0)
}

# rx_pkts HOST KEY: frames stt_rx of HOST steered for KEY.
rx_pkts()
{
	# shellcheck disable=SC2046
	bpftool -j map lookup pinned "$(map "$1" stt_rx_map)" \
		key hex $(hex32 "$2") | jq '.formatted.value.packets'
}

# stat HOST FIELD: a field of HOST's stt_stats.
stat()
{
	# shellcheck disable=SC2046
	bpftool -j map lookup pinned "$(map "$1" stt_stats_map)" \
		key hex $(hex32 0) | jq -c ".formatted.value.$2"
}

# host HOST UL ADDR4 ADDR6 VM1 VM2: the ports vm1/vm2 to the namespaces
# VM1/VM2, stt0, the underlay UL addressed, the programs attached.
host()
{
	local h=$1 n=$2 ul4=$3 ul6=$4 va1=$5 va2=$6

	ip -n "$h" -b - <<-EOF || return
		link add vm1 type veth peer name eth0 netns $va1
		link add vm2 type veth peer name eth0 netns $va2
		link add stt0 type stt external
	EOF
	ip netns exec "$h" sysctl -qw "net.ipv6.conf.$n.disable_ipv6=0" || return
	ip -n "$h" -b - <<-EOF || return
		addr add $ul4/24 dev $n
		addr add $ul6/64 dev $n nodad
		link set $n up
		link set vm1 up
		link set vm2 up
		link set stt0 up
	EOF
	mkdir -p "$BPFD/${h%%-*}" && mount -t bpf bpf "$BPFD/${h%%-*}" || return
	htc "$h" -b - <<-EOF || return
		qdisc add dev vm1 clsact
		qdisc add dev vm2 clsact
		qdisc add dev stt0 clsact
		filter add dev vm1 ingress bpf da obj $OBJ sec stt_tx
		filter add dev vm2 ingress bpf da obj $OBJ sec stt_tx
		filter add dev stt0 ingress bpf da obj $OBJ sec stt_rx
	EOF
}

vm()
{
	ip -n "$1" -b - <<-EOF
		addr add $2/24 dev eth0
		link set eth0 up
	EOF
}

topo()
{
	local ns

	BPFD=$(mktemp -d /tmp/stt-bpf-XXXXXX) || return
	setup_ns VA1 VA2 HA HB VB1 VB2 || return
	# IPv6 only on the underlay (no RS/MLD chatter in the counters).
	for ns in "$VA1" "$VA2" "$HA" "$HB" "$VB1" "$VB2"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	done
	ip -n "$HA" link add ua type veth peer name ub netns "$HB" || return
	host "$HA" ua 192.0.2.1 2001:db8::1 "$VA1" "$VA2" &&
	host "$HB" ub 192.0.2.2 2001:db8::2 "$VB1" "$VB2" || return
	vm "$VA1" $VM_A && vm "$VA2" $VM_A && vm "$VB1" $VM_B &&
		vm "$VB2" $VM_B || return
	port "$HA" vm1 $KEY1 192.0.2.2 0 0 0 &&
	port "$HB" vm1 $KEY1 192.0.2.1 0 0 0 &&
	port "$HA" vm2 $KEY2 2001:db8::2 1 0x28 42 &&
	port "$HB" vm2 $KEY2 2001:db8::1 1 0x28 42 || return
	server_start "$VB1" && server_start "$VB2" && server_start "$VA1" &&
		server_start "$VA2"
}

# mac NS: the MAC address of eth0 in NS.
mac()
{
	ip -n "$1" -j link show dev eth0 | jq -r '.[0].address'
}

# neigh NS ADDR: the MAC address NS has learnt for ADDR.
neigh()
{
	ip -n "$1" -j neigh show dev eth0 "$2" | jq -r '.[0].lladdr'
}

# Tenant 1 (key 100, IPv4 underlay) and tenant 2 (key 200, IPv6) each
# reach their own peer at the same address: stt_rx counts per key, and
# each VM has learnt its own peer's MAC address, not the other tenant's.
tenants_ping()
{
	local t ns peer key c0 c1 what m

	for t in "1 $VA1 $VB1 $KEY1 IPv4" "2 $VA2 $VB2 $KEY2 IPv6"; do
		read -r t ns peer key what <<<"$t"
		RET=0
		c0=$(rx_pkts "$HB" "$key")
		PING_WAIT=10 ping_ok "$ns" "$VM_B"
		check_err $? "ping $VM_A -> $VM_B of tenant $t: $PING_OUT"
		ping_ok "$peer" "$VM_A"
		check_err $? "ping $VM_B -> $VM_A of tenant $t: $PING_OUT"
		c1=$(rx_pkts "$HB" "$key")
		((c1 - c0 >= 3))
		check_err $? "stt_rx of $HB steered $((c1 - c0)) frames of key $key"
		m=$(neigh "$ns" "$VM_B")
		[[ $m == "$(mac "$peer")" ]]
		check_err $? "$VM_B of tenant $t is at $m, not at its own VM's MAC"
		m=$(neigh "$peer" "$VM_A")
		[[ $m == "$(mac "$ns")" ]]
		check_err $? "$VM_A of tenant $t is at $m, not at its own VM's MAC"
		log_test "BPF tenant $t (key $key, $what underlay): ping both ways, steered by key" \
			"+$((c1 - c0)) for key $key"
	done
}

tenants_transfer()
{
	local x cli srv addr label t dir fam

	for x in "$VA1 $VB1 $VM_B 1,A->B,IPv4" "$VB1 $VA1 $VM_A 1,B->A,IPv4" \
		 "$VA2 $VB2 $VM_B 2,A->B,IPv6" "$VB2 $VA2 $VM_A 2,B->A,IPv6"; do
		read -r cli srv addr label <<<"$x"
		IFS=, read -r t dir fam <<<"$label"
		RET=0
		xfer "$srv" "$cli" "$BPF_BYTES" "$addr"
		xfer_check "$addr"
		log_test "BPF tenant $t ($fam underlay): transfer $dir, sha256 checked" \
			"${XINFO[$addr]}"
	done
}

# What bpf_skb_get_tunnel_key gave stt_rx for tenant 2's last frame.
rx_metadata()
{
	local key v6 tos ttl remote want

	RET=0
	ping_ok "$VA2" "$VM_B"
	check_err $? "ping of tenant 2: $PING_OUT"
	key=$(stat "$HB" last_key) v6=$(stat "$HB" last_ipv6)
	tos=$(stat "$HB" last_tos) ttl=$(stat "$HB" last_ttl)
	remote=$(bpftool -j map lookup pinned "$(map "$HB" stt_stats_map)" \
		key hex 00 00 00 00 |
		jq -r '.formatted.value.last_remote | map(tostring) | join(" ")')
	want=$(python3 -c 'import ipaddress
print(" ".join(str(b) for b in ipaddress.ip_address("2001:db8::1").packed))')
	[[ $key == "$KEY2" && $v6 == 1 && $tos == 40 && $ttl == 42 ]]
	check_err $? "stt_rx read key $key, ipv6 $v6, tos $tos, ttl $ttl"
	[[ $remote == "$want" ]]
	check_err $? "stt_rx read remote '$remote', not 2001:db8::1"
	log_test "bpf_skb_get_tunnel_key: key, IPv6 remote, TOS 0x28, TTL 42" \
		"key $key, tos $tos, ttl $ttl"
}

# A frame whose key no port has is dropped and counted.
unknown_key()
{
	local u0 u1 s0 s1

	RET=0
	ip -n "$HA" -b - <<-EOF
		addr add 10.1.0.100/32 dev lo
		route add $VM_B/32 encap ip id 300 dst 192.0.2.2 dev stt0 src 10.1.0.100
	EOF
	check_err $? "lwt route with id 300 failed"
	u0=$(stat "$HB" rx_unknown) s0=$(stat "$HB" rx_steered)
	ip netns exec "$HA" ping -q -c 3 -i 0.2 -w 3 "$VM_B" >/dev/null 2>&1
	u1=$(stat "$HB" rx_unknown) s1=$(stat "$HB" rx_steered)
	((u1 - u0 >= 3))
	check_err $? "rx_unknown grew by $((u1 - u0))"
	((s1 == s0))
	check_err $? "rx_steered grew by $((s1 - s0)) for frames of key 300"
	log_test "BPF stt_rx drops frames of a key no port has" \
		"rx_unknown +$((u1 - u0))"
	ip -n "$HA" route del "$VM_B"/32
}

# struct bpf_tunnel_key's tunnel_id is a __u32: a 64-bit context ID
# reaches the program as its low 32 bits (here: steered as key 100).
key_64bit()
{
	local big=$(((1 << 32) + KEY1)) c0 c1 key

	RET=0
	ip -n "$HA" route add "$VM_B"/32 encap ip id "$big" dst 192.0.2.2 dev stt0 \
		src 10.1.0.100
	check_err $? "lwt route with id $big failed"
	c0=$(rx_pkts "$HB" "$KEY1")
	ip netns exec "$HA" ping -q -c 3 -i 0.2 -w 3 "$VM_B" >/dev/null 2>&1
	c1=$(rx_pkts "$HB" "$KEY1")
	key=$(stat "$HB" last_key)
	((c1 - c0 >= 3))
	check_err $? "stt_rx steered $((c1 - c0)) frames of context ID $big as key $KEY1"
	[[ $key == "$KEY1" ]]
	check_err $? "bpf_skb_get_tunnel_key gave tunnel_id $key for $big"
	log_test "bpf_skb_get_tunnel_key: context ID 2^32+$KEY1 reads as $KEY1" \
		"+$((c1 - c0))"
	ip -n "$HA" route del "$VM_B"/32
	ip -n "$HA" addr del 10.1.0.100/32 dev lo
}

require_root
require_command tc
require_command bpftool
require_command jq
require_command ping
require_command python3
require_stt
if [[ ! -f "$OBJ" ]]; then
	echo "SKIP: no $OBJ (make bpf)"
	exit "$ksft_skip"
fi
if ! grep -qw bpf /proc/filesystems; then
	echo "SKIP: this kernel has no BPF (no bpf filesystem: CONFIG_BPF_SYSCALL)"
	exit "$ksft_skip"
fi
if ! tc -V | grep -q libbpf; then
	echo "SKIP: this tc is built without libbpf ($(tc -V))"
	exit "$ksft_skip"
fi

if ! topo; then
	RET=1
	retmsg="setting up namespaces, devices, BPF programs, maps or servers failed"
	log_test "topology: 6 namespaces, 2 external STT devices, tc BPF"
	tests_exit
fi
tests_run
tests_exit
