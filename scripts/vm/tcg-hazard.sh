#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tcg-hazard.sh: inside a guest, patch kernel text under traffic until
# SECONDS have passed (default 60): kprobes on ip_rcv and
# __netif_receive_skb_core armed and disarmed, network namespaces with an
# STT device (netfilter hooks: static keys) created and deleted, while both
# vCPUs ping over loopback. Not a test of STT: a check of the VM runner.
#
#   scripts/vm/target.sh run TARGET [--tcg-multi] -- scripts/vm/tcg-hazard.sh [SECONDS]
#
# Under QEMU 7.2's multi-threaded TCG (--tcg-multi) a vCPU can run code
# another one is patching, and the guest dies: a call to address 0 from
# __netif_receive_skb_one_core, on 6.1 and 6.12 alike, within a minute.
# On one TCG thread, scripts/vm/run.sh's default, the same run ends clean.

set -u
t=/sys/kernel/tracing
end=$((SECONDS + ${1:-60}))
n=0
pids=()

ip link set lo up
ip netns add tcgh
ip -n tcgh link set lo up
taskset -c 0 ping -f -q 127.0.0.1 >/dev/null 2>&1 &
pids+=($!)
taskset -c "$(($(nproc) - 1))" ip netns exec tcgh ping -f -q 127.0.0.1 >/dev/null 2>&1 &
pids+=($!)
while [ "$SECONDS" -lt "$end" ]; do
	n=$((n + 1))
	echo 'p:tcgh/k1 ip_rcv' >"$t/kprobe_events"
	echo 'p:tcgh/k2 __netif_receive_skb_core' >>"$t/kprobe_events"
	echo 1 >"$t/events/tcgh/enable"
	ip netns add "tcgh$n"
	ip -n "tcgh$n" link set lo up
	ip -n "tcgh$n" link add s0 type stt id 1 remote 192.0.2.8
	ip netns exec "tcgh$n" ping -c 1 -q 127.0.0.1 >/dev/null
	echo 0 >"$t/events/tcgh/enable"
	: >"$t/kprobe_events"
	ip netns del "tcgh$n"
done
kill "${pids[@]}"
ip netns del tcgh
echo "tcg-hazard: $n rounds in ${1:-60} s, the guest survived"
