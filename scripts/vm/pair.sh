#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pair.sh: run a command in two QEMU guests joined by a private wire.
#
#   scripts/vm/pair.sh [options] -- CMD [ARGS...]
#
#   guest a  virtio-net --- tap-a ---+
#                                      bridge "br0"   (netns stt-pair-PID,
#   guest b  virtio-net --- tap-b ---+               created and deleted here)
#
# Each guest is a scripts/vm/run.sh guest (same root, modules, kernel checks)
# with one vCPU and one virtio-net NIC on a tap device (vnet_hdr, vhost off):
# TSO and GRO, no UDP-tunnel segmentation offload. The taps and the bridge
# live in a network namespace this script creates for the run and deletes
# afterwards, and QEMU runs inside it, so no traffic touches the host's own
# interfaces. CMD runs in both guests; it tells them apart by its
# environment:
#
#   STT_PAIR_ROLE   a or b
#   STT_PAIR_MAC    the MAC address of this guest's NIC
#   STT_PAIR_LOCAL  192.0.2.1 (a) or 192.0.2.2 (b): CMD assigns it (/24)
#   STT_PAIR_PEER   the other guest's address
#
# Guest a's output streams to stdout; guest b's goes to --b-log FILE, else it
# is printed afterwards with a "b: " prefix. Exit status: b's if b failed
# with a kernel problem or timeout (124/125), else a's.

set -e

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
ME=vm-pair

say() { echo "$ME: $*" >&2; }

usage() {
	cat <<-EOF
	Usage: scripts/vm/pair.sh [options] -- CMD [ARGS...]

	Two guests (a, b), one vCPU each, each with a virtio-net NIC on a tap
	device; the taps are bridged inside a network namespace of our own.

	Options:
	  --smp N          vCPUs per guest (default 1)
	  --mem MB         memory per guest (default 1024)
	  --b-log FILE     write guest b's output to FILE
	  --b-delay SEC    start guest a SEC seconds after b (default 0)
	  other options    passed to scripts/vm/run.sh for both guests
	                   (--modules, --env, --timeout, --kernel, ...)
	EOF
}

smp=1
mem=1024
blog=
bdelay=0
pass=()
while [ "$#" -gt 0 ]; do
	case $1 in
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--b-log) blog=$2; shift 2 ;;
	--b-delay) bdelay=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	--no-load) pass+=("$1"); shift ;;
	-*) [ "$#" -ge 2 ] || { say "$1 needs an argument"; exit 2; }
		pass+=("$1" "$2"); shift 2 ;;
	*) say "unknown argument '$1' (try --help)"; exit 2 ;;
	esac
done
[ "$#" -gt 0 ] || { usage >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { say "needs root (network namespace, taps)"; exit 1; }

ns=stt-pair-$$
work=$(mktemp -d "${TMPDIR:-/tmp}/vm-pair.XXXXXX")
apid=
bpid=

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local p

	for p in $apid $bpid; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}

ip netns add "$ns" || { say "cannot create netns $ns"; exit 1; }
trap cleanup EXIT
trap 'exit 130' INT TERM

ip -n "$ns" link add br0 type bridge stp_state 0 forward_delay 0
for g in a b; do
	ip -n "$ns" tuntap add dev "tap-$g" mode tap vnet_hdr
	ip -n "$ns" link set dev "tap-$g" master br0 up
done
ip -n "$ns" link set br0 up

guest() {	# $1 = role, $2 = our address, $3 = peer, $4 = MAC, then CMD
	local role=$1 local_ip=$2 peer=$3 mac=$4

	shift 4
	ip netns exec "$ns" "$SRCDIR/scripts/vm/run.sh" --smp "$smp" --mem "$mem" \
		--qemu-arg -netdev \
		--qemu-arg "tap,id=n0,ifname=tap-$role,script=no,downscript=no,vhost=off" \
		--qemu-arg -device \
		--qemu-arg "virtio-net-pci,netdev=n0,mac=$mac" \
		--env STT_PAIR_ROLE="$role" --env STT_PAIR_MAC="$mac" \
		--env STT_PAIR_LOCAL="$local_ip" --env STT_PAIR_PEER="$peer" \
		"${pass[@]}" -- "$@"
}

say "guests a and b on bridge br0 in netns $ns"
ma=52:54:00:57:70:0a
mb=52:54:00:57:70:0b
guest b 192.0.2.2 192.0.2.1 "$mb" "$@" >"$work/b.out" 2>&1 &
bpid=$!
sleep "$bdelay"
guest a 192.0.2.1 192.0.2.2 "$ma" "$@" &
apid=$!

set +e
wait "$apid"
arc=$?
apid=
wait "$bpid"
brc=$?
bpid=
set -e

if [ -n "$blog" ]; then
	cp "$work/b.out" "$blog"
else
	sed 's/^/b: /' "$work/b.out"
fi
say "guest a: status $arc, guest b: status $brc"
case $brc in
124|125) exit "$brc" ;;
esac
exit "$arc"
