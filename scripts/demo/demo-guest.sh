#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo itself, run inside the VM by scripts/demo/demo.sh (stt.ko is loaded).
#
#   host-a                                        host-b
#   stt0  10.10.0.1  ---- STT, key 1000 ----  10.10.0.2  stt0
#   vx0   10.20.0.1  ---- VXLAN, VNI 1000 ---  10.20.0.2  vx0
#   wire  192.0.2.1  ======== veth ========   192.0.2.2  wire
#
# The wire has TSO and GRO but no UDP-tunnel segmentation offload: the NIC
# STT was designed for.

set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export IP_LIB_DIR=$REPO/tools/iproute2
A=host-a
B=host-b
SECS=${DEMO_SECONDS:-5}
OUT=$(mktemp -d)

bold() { printf '\n== %s\n' "$*"; }
run() { printf '  $ %s\n' "$*"; "$@" 2>&1 | sed 's/^/    /'; }
fail() { echo "demo: $*" >&2; exit 1; }

cleanup() {
	ip netns del $A 2>/dev/null
	ip netns del $B 2>/dev/null
	rm -rf "$OUT"
}
trap cleanup EXIT

modprobe vxlan || fail "cannot load vxlan"

bold "Two hosts joined by a wire"
ip netns add $A || fail "netns"
ip netns add $B || fail "netns"
ip link add wire netns $A type veth peer name wire netns $B
ip -n $A addr add 192.0.2.1/24 dev wire
ip -n $B addr add 192.0.2.2/24 dev wire
for n in $A $B; do
	ip -n "$n" link set lo up
	ip -n "$n" link set wire up
	# A NIC with TSO but no UDP-tunnel segmentation offload.
	ip netns exec "$n" ethtool -K wire tx-udp_tnl-segmentation off \
		tx-udp_tnl-csum-segmentation off >/dev/null
done
echo "  veth 'wire': TSO on, GRO on, tx-udp_tnl-segmentation off"

bold "An STT tunnel, configured with ip link (Debian's iproute2 + link_stt.so)"
run ip -n $A link add stt0 type stt id 1000 remote 192.0.2.2 local 192.0.2.1
ip -n $B link add stt0 type stt id 1000 remote 192.0.2.1 local 192.0.2.2
ip -n $A addr add 10.10.0.1/24 dev stt0
ip -n $B addr add 10.10.0.2/24 dev stt0
ip -n $A link set stt0 up
ip -n $B link set stt0 up
run ip -n $A -d link show stt0

bold "The same over VXLAN, for comparison"
for n in $A $B; do
	if [ "$n" = "$A" ]; then me=1 peer=2; else me=2 peer=1; fi
	ip -n "$n" link add vx0 type vxlan id 1000 remote 192.0.2.$peer \
		local 192.0.2.$me dstport 4789
	ip -n "$n" addr add 10.20.0.$me/24 dev vx0
	ip -n "$n" link set vx0 up
done
echo "  vx0: VNI 1000, port 4789, MTU $(cat /sys/class/net/lo/mtu >/dev/null; ip netns exec $A cat /sys/class/net/vx0/mtu)"

bold "Ping through STT"
run ip netns exec $A ping -c 3 -i 0.3 10.10.0.2
ip netns exec $A ping -c 1 -W 2 10.10.0.2 >/dev/null || fail "STT ping failed"
ip netns exec $A ping -c 1 -W 2 10.20.0.2 >/dev/null || fail "VXLAN ping failed"

iperf() {	# $1 = server address, $2 = label
	local json=$OUT/$2.json

	ip netns exec $B iperf3 -s -1 -D -B "$1" >/dev/null 2>&1
	for _ in $(seq 50); do
		ip netns exec $B ss -ltn | grep -q ":5201 " && break
		sleep 0.1
	done
	ip netns exec $A iperf3 -c "$1" -t "$SECS" -J >"$json" 2>&1 ||
		{ cat "$json"; fail "iperf3 over $2 failed"; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("%.2f" % (d["end"]["sum_received"]["bits_per_second"] / 1e9))' "$json"
}

bold "Capture: tcpdump on host-b's wire while STT carries a transfer"
ip netns exec $B tcpdump -i wire -s 200 -c 400 -w "$OUT/stt.pcap" \
	"tcp port 7471" >/dev/null 2>&1 &
dump=$!
sleep 1

bold "iperf3, ${SECS} s each, one TCP stream"
stt=$(iperf 10.10.0.2 stt)
vx=$(iperf 10.20.0.2 vxlan)
wait $dump 2>/dev/null

printf '  %-8s %8s Gbit/s\n' STT "$stt" VXLAN "$vx"
ratio=$(python3 -c "print('%.1f' % ($stt / $vx if $vx > 0 else 0))")
echo "  STT / VXLAN = ${ratio}x"

bold "STT counters on host-b (ethtool -S stt0, non-zero)"
ip netns exec $B ethtool -S stt0 | awk -F: '$2 + 0 != 0 && NR > 1 {
	printf "    %-28s %s\n", $1, $2 }'
echo "  rx_frames_whole: frames GRO merged whole; rx_frames_gso: delivered"
echo "  as 64 KB inner GSO packets (the inner stack never saw MSS-sized ones)"

bold "A few STT frames as tshark decodes them (receiver side)"
printf '    %-18s %-6s %-6s %-5s %-9s %-7s %s\n' context_id flags mss l4off \
	frame_len seg_off frame_id
decode() {	# $1 = display filter, $2 = how many
	tshark -r "$OUT/stt.pcap" -o ip.try_heuristic_first:TRUE -Y "$1" \
		-T fields -E occurrence=f -e stt.context_id -e stt.flags \
		-e stt.mss -e stt.l4offset -e stt.pkt_len -e stt.seg_off \
		-e stt.pkt_id 2>/dev/null | awk 'NF >= 7' | head -"$2" |
		awk '{ printf "    %-18s %-6s %-6s %-5s %-9s %-7s %s\n",
			$1, $2, $3, $4, $5, $6, $7 }'
}
decode "stt && stt.mss == 0" 2
decode "stt.mss > 0" 4
echo "  flags 0x0e = checksum partial + inner IPv4 + inner TCP; mss = the"
echo "  inner TCP segment size the receiver restores; l4off 34 = inner TCP"
echo "  header offset; frames carrying 64 KB arrived whole (GRO on the wire)"

bold "Summary"
echo "  STT:   $stt Gbit/s    VXLAN: $vx Gbit/s    (STT ${ratio}x VXLAN)"
echo "  Emulated CPUs (QEMU TCG): compare the ratio, not the absolute figures."
