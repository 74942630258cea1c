#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# Paths real NICs and real networks take and veth alone does not:
#
# - a NIC that hands packets up as CHECKSUM_COMPLETE (mlx5, sfc, nfp...),
#   emulated on the receiver's veth by a test-only module
#   (helpers/stt_csum_complete.ko): STT segments over IPv4 and IPv6 must
#   validate from skb->csum, in O(1), without "hw csum failure" and
#   without a software checksum pass (counted with a kprobe on
#   __skb_checksum_complete where the kernel has kprobe events);
# - QinQ: an 802.1Q VLAN on an 802.1ad VLAN on stt0 sends frames with two
#   in-band tags and offloads (checksum partial, TSO): a checksummed
#   transfer must arrive, nothing dropped as ns_drop_bad_offload;
# - GRO-built frag_list packets routed into stt0: from a sender without
#   scatter-gather (every GRO member a linear, kmalloc'ed skb) and from
#   one with it, while the underlay cannot take frag_lists: the transfer
#   must arrive and the kernel must not BUG in skb_segment();
# - the same NIC with rx-gro-list on (TCP fraglist GRO, 6.10 and later),
#   emulated by the module as a wire in a namespace between two others
#   (W1 -> WM -> W2): a transfer, no checksum drops;
# - a multi-queue underlay under a tunnel device with fewer queues, RPS
#   on: no frame arrives marked with a queue the device lacks.
#
#   +---- $NS_S -------+   +---- $NS_A (router) ---------+   +---- $NS_B ------------+
#   | vS 10.50.0.1/24 -+---+ vR 10.50.0.2/24 (GRO on)    |   |                       |
#   +------------------+   | stt0 192.168.0.1  (key 1) ---- IPv4 ---- stt0 192.168.0.2 |
#                          | stt6 192.168.6.1  (key 6) ---- IPv6 ---- stt6 192.168.6.2 |
#                          | vA 10.0.0.1 fd00::1 --------+---+ vB 10.0.0.2 fd00::2   |
#                          +-----------------------------+   +-----------------------+
#
# Run in the VM:  scripts/vm/run.sh -- selftests/run.sh realnic.sh
# XFER_BYTES: bytes per transfer (default 4 MB).

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	csum_complete_ipv4
	csum_complete_ipv6
	csum_complete_inner
	qinq_offloads
	nfqueue_process_context
	fraglist_forward_sg
	fraglist_forward_linear
	multiqueue_underlay
	fraglist_gro_complete
"

HERE=$(cd "$(dirname "$0")" && pwd)
CSUM_KO=$HERE/helpers/stt_csum_complete.ko
XFER_BYTES=${XFER_BYTES:-4000000}
TRACEFS=/sys/kernel/tracing
CC_STATS=/sys/kernel/debug/stt_csum_complete
TMP=$(mktemp -d)
KPROBE=

s() { ip netns exec "$NS_S" "$@"; }

cleanup()
{
	if [[ -n "$KPROBE" ]]; then
		echo 0 >"$TRACEFS/events/stt_realnic/enable" 2>/dev/null
		echo "-:stt_realnic/csum_sw" >>"$TRACEFS/kprobe_events" 2>/dev/null
		echo "-:stt_realnic/gro" >>"$TRACEFS/kprobe_events" 2>/dev/null
		# kprobe_setup turned the ring buffer off: a later script
		# that traces in the same guest needs it on (the default)
		echo 1 >"$TRACEFS/tracing_on" 2>/dev/null
	fi
	[[ -d /sys/module/stt_csum_complete ]] && rmmod stt_csum_complete
	rm -rf "$TMP"
}

setup()
{
	local ns h r

	stt_pair_setup || return 1
	for ns in "$NS_A 1 fd00::2" "$NS_B 2 fd00::1"; do
		read -r ns h r <<<"$ns"
		printf '%s\n' "link add stt6 type stt remote $r key 6" \
			"addr add 192.168.6.$h/24 dev stt6" "link set stt6 up" |
			ip -n "$ns" -b - || return 1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.stt6.disable_ipv6=1
	done
	busywait 10000 a ping -c1 -W1 192.168.0.2 >/dev/null &&
		busywait 10000 a ping -c1 -W1 192.168.6.2 >/dev/null
}

# transfer FROM_NS TO_NS ADDR [BYTES]: BYTES (default XFER_BYTES) over
# TCP, sha256 compared. XFER_INFO says what happened.
transfer()
{
	XFER_TIMEOUT=600 xfer_once "$2" "$1" "${4:-$XFER_BYTES}" "$3"
}

hw_csum_failures() { dmesg | grep -c 'hw csum failure'; }

# ---- CHECKSUM_COMPLETE -------------------------------------------------------

# kprobe_setup: probes on __skb_checksum_complete (software checksum
# passes, counted) and gro_cells_receive (the context it runs in, read
# from the trace), if the kernel has kprobe events.
kprobe_setup()
{
	[[ -n "$KPROBE" ]] && return 0
	mountpoint -q "$TRACEFS" || mount -t tracefs nodev "$TRACEFS" 2>/dev/null
	[[ -w "$TRACEFS/kprobe_events" ]] || return 1
	echo "p:stt_realnic/csum_sw __skb_checksum_complete" \
		>>"$TRACEFS/kprobe_events" 2>/dev/null || return 1
	KPROBE=1
	echo "p:stt_realnic/gro gro_cells_receive" \
		>>"$TRACEFS/kprobe_events" 2>/dev/null || return 1
	echo 0 >"$TRACEFS/tracing_on"
	echo 1 >"$TRACEFS/events/stt_realnic/csum_sw/enable" || return 1
}

kprobe_hits()
{
	[[ -n "$KPROBE" ]] || return 0
	awk '$1 == "stt_realnic/csum_sw" || $1 == "csum_sw" { print $2 }' \
		"$TRACEFS/kprobe_profile"
}

cc_stat()
{
	awk -v k="$1" '$1 == k { print $2 }' "$CC_STATS"
}

# cc_prepare: vB turned into a CHECKSUM_COMPLETE NIC, every segment on its
# own: sender TSO off (the underlay segments in software), receiver GRO off
# (what GRO does not merge; GRO would also turn the sum into
# CHECKSUM_UNNECESSARY).
cc_prepare()
{
	if [[ ! -d /sys/module/stt_csum_complete ]]; then
		insmod "$CSUM_KO" ifnames=vB
		check_err $? "insmod $CSUM_KO failed"
	fi
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	a ethtool -K vA tso off >/dev/null
	b ethtool -K vB gro off >/dev/null
	# Conntrack, when on, validates TCP at PRE_ROUTING itself and marks
	# the segment CHECKSUM_UNNECESSARY: the hook would never see
	# CHECKSUM_COMPLETE. Keep STT out of it, as stt.rst recommends.
	b nft list table inet stt_notrack >/dev/null 2>&1 ||
		b nft -f - <<-EOF
		table inet stt_notrack {
			chain pre {
				type filter hook prerouting priority raw;
				tcp dport 7471 notrack
			}
		}
		EOF
	check_err $? "cannot add the notrack rule"
}

csum_complete()
{
	local fam=$1 dev=$2 addr=$3 c0 c1 k0 k1 f0 f1 bad0 bad1 segs0 segs1 sw
	local desc="CHECKSUM_COMPLETE receiver, $fam underlay: O(1) validation"

	RET=0
	if [[ ! -f "$CSUM_KO" ]]; then
		log_skip "$desc" "no $CSUM_KO (make module builds it)"
		return
	fi
	cc_prepare
	kprobe_setup || log_info "no kprobe events: software checksum passes not counted"
	c0=$(cc_stat converted)
	k0=$(kprobe_hits)
	f0=$(hw_csum_failures)
	bad0=$(dev_stat "$NS_B" "$dev" ns_drop_bad_csum)
	segs0=$(dev_stat "$NS_B" "$dev" ns_rx_segments)

	transfer "$NS_A" "$NS_B" "$addr"
	check_err $? "transfer over $dev failed: $XFER_INFO"

	c1=$(cc_stat converted)
	k1=$(kprobe_hits)
	f1=$(hw_csum_failures)
	bad1=$(dev_stat "$NS_B" "$dev" ns_drop_bad_csum)
	segs1=$(dev_stat "$NS_B" "$dev" ns_rx_segments)
	a ethtool -K vA tso on >/dev/null

	# (Not exactly one each: the counts are read at slightly different
	# times while ARP, ND and ACKs come and go.)
	((100 * (c1 - c0) >= 99 * (segs1 - segs0) && segs1 - segs0 > 1000))
	check_err $? "$((c1 - c0)) packets made CHECKSUM_COMPLETE for $((segs1 - segs0)) STT segments"
	((f1 == f0))
	check_err $? "$((f1 - f0)) 'hw csum failure' reports"
	((bad1 == bad0))
	check_err $? "ns_drop_bad_csum +$((bad1 - bad0))"
	if [[ -n "$KPROBE" ]]; then
		# A few non-STT packets may need one (none should, but the
		# bound is what matters: not one per segment).
		((k1 - k0 <= (segs1 - segs0) / 100))
		check_err $? "$((k1 - k0)) software checksum completions for $((segs1 - segs0)) segments"
	fi
	sw=n/a
	[[ -n "$KPROBE" ]] && sw=$((k1 - k0))
	log_test "$desc" "segments +$((segs1 - segs0)), converted +$((c1 - c0)), sw checksums $sw"
}

csum_complete_ipv4() { csum_complete IPv4 stt0 192.168.0.2; }
csum_complete_ipv6() { csum_complete IPv6 stt6 192.168.6.2; }

# Frames that carry neither checksum flag (A's stt0 checksums in software,
# tx off) hand the inner stack the segments' CHECKSUM_COMPLETE sums: the
# inner TCP validates from them, with no software pass of its own. A's
# underlay MTU 1499 puts every frame's second segment at an odd offset,
# which the sums must be added at; a wrong sum would show as "hw csum
# failure" (the helper's sums are a NIC's) and as a software pass.
csum_complete_inner()
{
	local desc="CHECKSUM_COMPLETE receiver, frames without checksum flags: inner TCP validated from the sum"
	local k0 k1 f0 f1 segs0 segs1 fr0 fr1 e0 e1

	RET=0
	if [[ ! -f "$CSUM_KO" ]]; then
		log_skip "$desc" "no $CSUM_KO (make module builds it)"
		return
	fi
	if ! kprobe_setup; then
		log_skip "$desc" "no kprobe events: software checksum passes cannot be counted"
		return
	fi
	cc_prepare
	a ethtool -K stt0 tx off >/dev/null
	check_err $? "ethtool -K stt0 tx off failed"
	a ip link set vA mtu 1499

	k0=$(kprobe_hits)
	f0=$(hw_csum_failures)
	e0=$(snmp_stat "$NS_B" TcpInCsumErrors)
	segs0=$(dev_stat "$NS_B" stt0 ns_rx_segments)
	fr0=$(dev_stat "$NS_B" stt0 rx_frames_reassembled)

	transfer "$NS_A" "$NS_B" 192.168.0.2
	check_err $? "transfer failed: $XFER_INFO"

	k1=$(kprobe_hits)
	f1=$(hw_csum_failures)
	e1=$(snmp_stat "$NS_B" TcpInCsumErrors)
	segs1=$(dev_stat "$NS_B" stt0 ns_rx_segments)
	fr1=$(dev_stat "$NS_B" stt0 rx_frames_reassembled)
	a ip link set vA mtu 1500
	a ethtool -K stt0 tx on >/dev/null
	a ethtool -K vA tso on >/dev/null

	((fr1 - fr0 > 1000))
	check_err $? "only $((fr1 - fr0)) frames reassembled"
	((k1 - k0 <= (segs1 - segs0) / 100))
	check_err $? "$((k1 - k0)) software checksum passes for $((fr1 - fr0)) frames"
	((f1 == f0))
	check_err $? "$((f1 - f0)) 'hw csum failure' reports"
	((e1 == e0))
	check_err $? "TcpInCsumErrors +$((e1 - e0))"
	log_test "$desc" "frames reassembled +$((fr1 - fr0)) from $((segs1 - segs0)) segments, sw checksums $((k1 - k0))"
}

# ---- QinQ --------------------------------------------------------------------

qinq_offloads()
{
	local ns h bad0 bad1 gso0 gso1 line

	RET=0
	[[ -d /sys/module/stt_csum_complete ]] && rmmod stt_csum_complete
	b nft delete table inet stt_notrack 2>/dev/null
	for line in "$NS_A 1" "$NS_B 2"; do
		read -r ns h <<<"$line"
		printf '%s\n' \
			"link add link stt0 name stt0.100 type vlan proto 802.1ad id 100" \
			"link add link stt0.100 name q200 type vlan proto 802.1Q id 200" \
			"addr add 10.200.0.$h/24 dev q200" \
			"link set stt0.100 up" "link set q200 up" |
			ip -n "$ns" -b -
		check_err $? "QinQ devices in $ns failed"
	done
	bad0=$(dev_stat "$NS_B" stt0 ns_drop_bad_offload)
	gso0=$(dev_stat "$NS_B" stt0 rx_frames_gso)
	busywait 10000 a ping -c1 -W1 10.200.0.2 >/dev/null
	check_err $? "ping over QinQ failed"
	transfer "$NS_A" "$NS_B" 10.200.0.2
	check_err $? "checksummed transfer over QinQ failed: $XFER_INFO"
	bad1=$(dev_stat "$NS_B" stt0 ns_drop_bad_offload)
	gso1=$(dev_stat "$NS_B" stt0 rx_frames_gso)
	((bad1 == bad0))
	check_err $? "ns_drop_bad_offload +$((bad1 - bad0))"
	((gso1 > gso0))
	check_err $? "no frame arrived as an inner GSO packet"
	log_test "QinQ (802.1ad + 802.1Q) over stt0 with checksum/TSO offloads" \
		 "bad_offload +$((bad1 - bad0)), rx_frames_gso +$((gso1 - gso0))"
}

# ---- NFQUEUE: receive in process context -------------------------------------

# A queue rule on INPUT and a userspace verdict program (stt_nfq.py):
# accepted segments are reinjected from the verdict's sendmsg(), and the
# STT hook (after the filter table) runs in process context with bottom
# halves enabled. What assumes softirq there (gro_cells, per-CPU
# statistics) shows as pending softirqs reported by the idle loop
# ("NOHZ tick-stop error"), preemption warnings on kernels that check,
# or a stalled transfer.
nfqueue_process_context()
{
	local out pid n d0 bad ctx bh_on

	RET=0
	if ! modprobe -q nfnetlink_queue || ! modprobe -q nft_queue; then
		log_skip "NFQUEUE on INPUT, verdicts from userspace" \
			"no nfnetlink_queue/nft_queue in this kernel"
		return
	fi
	b nft -f - <<-EOF
	table inet stt_queue {
		chain input {
			type filter hook input priority filter;
			tcp dport 7471 queue num 3
		}
	}
	EOF
	check_err $? "cannot add the queue rule"
	out=$TMP/nfq
	rm -f "$out" "$out.ready"
	# exec: $! is python itself, so kill stops it.
	(exec ip netns exec "$NS_B" python3 "$HERE/stt_nfq.py" 3 "$out" \
		>/dev/null 2>"$out.err") &
	pid=$!
	busywait 30000 test -e "$out.ready"
	check_err $? "stt_nfq.py did not start: $(cat "$out.err")"
	d0=$(dmesg | wc -l)
	# Where gro_cells_receive() runs: the trace's context column says
	# 's' (softirq), 'b' (bottom halves off) or '.' (neither).
	if kprobe_setup; then
		echo >"$TRACEFS/trace"
		echo 1 >"$TRACEFS/events/stt_realnic/gro/enable"
		echo 1 >"$TRACEFS/tracing_on"
	else
		log_info "no kprobe events: the context of gro_cells_receive is not traced"
	fi

	# Every segment goes to userspace and back: a smaller transfer.
	transfer "$NS_A" "$NS_B" 192.168.0.2 $((XFER_BYTES / 4))
	check_err $? "transfer through NFQUEUE failed: $XFER_INFO"

	if [[ -n "$KPROBE" ]]; then
		echo 0 >"$TRACEFS/tracing_on"
		echo 0 >"$TRACEFS/events/stt_realnic/gro/enable"
		# "comm-pid [cpu] flags ts: gro: ...": the flags' first
		# character is b/D with bottom halves off, the third s/h/H
		# in softirq/hardirq.
		awk '$0 ~ /gro: / {
			for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) break
			f = $(i + 1); c1 = substr(f, 1, 1); c3 = substr(f, 3, 1)
			if (c3 ~ /[shHzZ]/) print "softirq"
			else if (c1 ~ /[bD]/) print "bh-off"
			else if (c1 == "d") print "irqs-off"
			else print "bh-on"
		}' "$TRACEFS/trace" | sort | uniq -c >"$TMP/gro_ctx"
		ctx=$(awk '{ printf "%s %s, ", $2, $1 }' "$TMP/gro_ctx")
		ctx=${ctx%, }
		bh_on=$(awk '$2 == "bh-on" { print $1 }' "$TMP/gro_ctx")
		((${bh_on:-0} == 0))
		check_err $? "gro_cells_receive entered $bh_on times with bottom halves enabled ($ctx)"
	fi
	kill "$pid"
	wait "$pid"
	read -r n _ <"$out" 2>/dev/null
	b nft delete table inet stt_queue
	((${n:-0} > 100))
	check_err $? "only ${n:-no} packets went through the queue"
	bad=$(dmesg | tail -n +$((d0 + 1)) |
	      grep -E 'softirq work is pending|NOHZ|smp_processor_id|BUG:|WARNING:' |
	      head -3)
	[[ -z "$bad" ]]
	check_err $? "kernel log: $bad"
	log_test "NFQUEUE on INPUT, verdicts from userspace: transfer over stt0" \
		 "${n:-0} packets queued and accepted; gro_cells_receive contexts: ${ctx:-not traced}"
}

# ---- frag_list packets into stt0 ---------------------------------------------

fraglist_setup()
{
	[[ -n "$NS_S" ]] && return 0
	setup_ns NS_S || return 1
	ip link add vS netns "$NS_S" type veth peer name vR netns "$NS_A" ||
		return 1
	s ip addr add 10.50.0.1/24 dev vS
	a ip addr add 10.50.0.2/24 dev vR
	s ip link set vS up
	a ip link set vR up
	s ip route add default via 10.50.0.2
	a sysctl -qw net.ipv4.ip_forward=1
	b ip route add 10.50.0.0/24 via 192.168.0.1
	# veth merges only in NAPI mode, which turning GRO on enables.
	a ethtool -K vR gro off >/dev/null
	a ethtool -K vR gro on >/dev/null
	# The underlay cannot take frag_lists: it segments in software.
	a ethtool -K vA tx-scatter-gather-fraglist off >/dev/null
}

# fraglist_forward SG: S sends to B through A, whose GRO builds frag_list
# packets that A routes into stt0; the underlay (vA) cannot take
# frag_lists, so the outer packets are segmented in software at the
# underlay MSS. With SG at S, GRO's members hold page fragments only:
# those packets cross whole (as inner GSO packets). Without SG, every
# member is a linear kmalloc'ed skb, which skb_segment() cannot cut at
# another MSS (before the fix: BUG in skb_segment): the core segments
# them before stt0 (tx_fraglist_unfit).
fraglist_forward()
{
	local sg=$1 desc u0 u1 g0 g1 f0 f1

	desc="GRO frag_list packets (sender sg $sg) routed into stt0"
	RET=0
	fraglist_setup
	check_err $? "topology setup failed"
	s ethtool -K vS sg "$sg" tso off >/dev/null
	u0=$(dev_stat "$NS_A" stt0 tx_fraglist_unfit)
	g0=$(dev_stat "$NS_A" stt0 tx_frames_gso)
	f0=$(dev_stat "$NS_A" stt0 tx_frames)
	transfer "$NS_S" "$NS_B" 192.168.0.2
	check_err $? "transfer S -> B failed: $XFER_INFO"
	u1=$(dev_stat "$NS_A" stt0 tx_fraglist_unfit)
	g1=$(dev_stat "$NS_A" stt0 tx_frames_gso)
	f1=$(dev_stat "$NS_A" stt0 tx_frames)
	if [[ $sg == on ]]; then
		((u1 == u0 && 2 * (g1 - g0) > f1 - f0))
		check_err $? "frag_list packets not kept whole: tx_fraglist_unfit +$((u1 - u0)), GSO frames $((g1 - g0)) of $((f1 - f0))"
	else
		((u1 > u0))
		check_err $? "no linear frag_list packet reached stt0 (tx_fraglist_unfit +0)"
	fi
	log_test "$desc" "tx_frames +$((f1 - f0)), of which GSO +$((g1 - g0)); tx_fraglist_unfit +$((u1 - u0))"
}

fraglist_forward_sg() { fraglist_forward on; }
fraglist_forward_linear() { fraglist_forward off; }

# ---- multi-queue underlay ----------------------------------------------------

# A multi-queue NIC records the queue a packet came in on (veth: the
# queue its peer sent it on). The tunnel device has queues of its own,
# "numrxqueues 2" here: a frame must not arrive there marked with the
# underlay's queue 5, or RPS, when it is on anywhere on the host, finds
# no such queue ("received packet on queue 5, but number of RX queues
# is 2", a WARN). UDP from 64 source ports spreads the outer packets
# over the sender's 8 queues (an mq qdisc counts them per queue); RPS is
# turned on at the tunnel device's queue 0.
multiqueue_underlay()
{
	local desc="8-queue underlay, 2-queue tunnel, RPS on: frames delivered"
	local ns h r rx0 rx1 high n=64 q class pkts
	local -a sent=()

	RET=0
	setup_ns NS_Q1 NS_Q2
	ip link add vq numtxqueues 8 numrxqueues 8 netns "$NS_Q1" type veth \
		peer name vq numtxqueues 8 numrxqueues 8 netns "$NS_Q2"
	check_err $? "cannot create an 8-queue veth pair"
	for ns in "$NS_Q1 1 2" "$NS_Q2 2 1"; do
		read -r ns h r <<<"$ns"
		ip -n "$ns" addr add "10.60.0.$h/24" dev vq &&
			ip -n "$ns" link set vq up &&
			stt_pair_tunnel "$ns" "192.168.60.$h" "10.60.0.$r" \
				numrxqueues 2 numtxqueues 2
		check_err $? "cannot set up $ns"
	done
	ip -n "$NS_Q1" link set vq down &&
		tc -n "$NS_Q1" qdisc replace dev vq root handle 1: mq &&
		ip -n "$NS_Q1" link set vq up
	check_err $? "cannot count per queue (mq qdisc on vq)"
	ip netns exec "$NS_Q2" sh -c 'echo 1 >/sys/class/net/stt0/queues/rx-0/rps_cpus'
	check_err $? "cannot turn RPS on"
	busywait 10000 ip netns exec "$NS_Q1" ping -c1 -W1 192.168.60.2 >/dev/null
	check_err $? "no answer through the tunnel"
	rx0=$(link_packets "$NS_Q2" stt0 rx)
	ip netns exec "$NS_Q1" "$PY" -I -c '
import socket, sys
for i in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("192.168.60.1", 0))
    for _ in range(4):
        s.sendto(b"x" * 64, ("192.168.60.2", 9))
    s.close()' "$n"
	check_err $? "the UDP sender failed"
	busywait 5000 test "$(link_packets "$NS_Q2" stt0 rx)" -ge $((rx0 + 4 * n))
	rx1=$(link_packets "$NS_Q2" stt0 rx)
	mapfile -t sent < <(tc -n "$NS_Q1" -s -j qdisc show dev vq |
		jq -r '.[] | select(.parent != null and (.parent | startswith("1:"))) |
		       "\(.parent) \(.packets)"')
	high=0
	for q in "${sent[@]}"; do
		read -r class pkts <<<"$q"
		# mq's class 1:N is queue N-1, which the receiver records as
		# its queue N-2: beyond stt0's two from class 1:4 on.
		((0x${class#1:} >= 4)) && high=$((high + pkts))
	done
	((high > 0))
	check_err $? "no packet left by queues 3-7 (packets per mq class: ${sent[*]})"
	((rx1 - rx0 >= 4 * n))
	check_err $? "stt0 received $((rx1 - rx0)) of $((4 * n)) datagrams"
	cleanup_ns "$NS_Q1" "$NS_Q2"
	log_test "$desc" "received $((rx1 - rx0)), $high sent on queues 3-7"
}

# ---- fraglist GRO over CHECKSUM_COMPLETE -------------------------------------

# A NIC that sums (CHECKSUM_COMPLETE) with rx-gro-list on: since 6.10 TCP
# GRO chains segments of a flow without a local socket, as STT's are,
# into a frag_list instead of merging them. It validates each segment
# first, but the head's sum still covers the head alone. Emulated: W1's
# segments cross a wire in WM (the helper, which sums them as a NIC
# would) to W2, whose veth runs GRO over them. Every frame that took
# more than one segment must still arrive: a transfer W1 -> W2, nothing
# dropped as ns_drop_bad_csum.
fraglist_gro_complete()
{
	local desc="CHECKSUM_COMPLETE receiver with rx-gro-list: transfer, no checksum drops"
	local ns h r dev k info='' c0 c1 bad0 bad1 segs0 segs1 fr0 fr1 conv
	local -A d0 d1

	RET=0
	if [[ ! -f "$CSUM_KO" ]]; then
		log_skip "$desc" "no $CSUM_KO (make module builds it)"
		return
	fi
	[[ -d /sys/module/stt_csum_complete ]] && rmmod stt_csum_complete
	setup_ns NS_W1 NS_WM NS_W2
	ip link add wa netns "$NS_W1" type veth peer name vW1 netns "$NS_WM" &&
		ip link add vW2 netns "$NS_WM" type veth peer name wb netns "$NS_W2"
	check_err $? "cannot create the veth pairs"
	insmod "$CSUM_KO" ifnames=vW1 wire=vW1,vW2
	check_err $? "insmod $CSUM_KO ifnames=vW1 wire=vW1,vW2 failed"
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	ip -n "$NS_WM" link set vW1 up && ip -n "$NS_WM" link set vW2 up
	# W1 segments in software (the wire takes one segment at a time);
	# veth hands W2 a packet for GRO only from a peer without TSO.
	ip netns exec "$NS_W1" ethtool -K wa tso off >/dev/null &&
		ip netns exec "$NS_WM" ethtool -K vW2 tso off >/dev/null
	check_err $? "cannot turn TSO off"
	for ns in "$NS_W1 1 2 wa" "$NS_W2 2 1 wb"; do
		read -r ns h r dev <<<"$ns"
		ip -n "$ns" addr add "10.70.0.$h/24" dev "$dev" &&
			ip -n "$ns" link set "$dev" up &&
			stt_pair_tunnel "$ns" "192.168.70.$h" "10.70.0.$r"
		check_err $? "cannot set up $ns"
	done
	# veth runs GRO in NAPI mode, which turning GRO on enables.
	ip netns exec "$NS_W2" ethtool -K wb gro off >/dev/null
	ip netns exec "$NS_W2" ethtool -K wb gro on rx-gro-list on >/dev/null
	check_err $? "cannot turn GRO and rx-gro-list on"
	busywait 10000 ip netns exec "$NS_W1" ping -c1 -W1 192.168.70.2 >/dev/null
	check_err $? "no answer through the tunnel"

	dev_stats d0 "$NS_W2" stt0
	c0=$(cc_stat converted)
	xfer_once "$NS_W2" "$NS_W1" "$XFER_BYTES" 192.168.70.2
	check_err $? "transfer W1 -> W2 failed: $XFER_INFO"
	dev_stats d1 "$NS_W2" stt0
	c1=$(cc_stat converted)
	rmmod stt_csum_complete
	cleanup_ns "$NS_W1" "$NS_WM" "$NS_W2"

	conv=$((c1 - c0))
	((conv > 1000))
	check_err $? "only $conv segments summed by the wire"
	bad0=${d0[ns_drop_bad_csum]} bad1=${d1[ns_drop_bad_csum]}
	((bad1 == bad0))
	check_err $? "ns_drop_bad_csum +$((bad1 - bad0))"
	segs0=${d0[ns_rx_segments]} segs1=${d1[ns_rx_segments]}
	fr0=${d0[rx_frames_reassembled]} fr1=${d1[rx_frames_reassembled]}
	for k in "${!d1[@]}"; do
		((d1[$k] != ${d0[$k]:-0})) && info+="$k +$((d1[$k] - ${d0[$k]:-0})) "
	done
	log_info "W2 stt0: $info"
	log_test "$desc" "summed $conv, hook segments +$((segs1 - segs0)), reassembled frames +$((fr1 - fr0))"
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
