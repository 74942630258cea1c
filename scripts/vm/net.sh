#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# net.sh: run a command in N QEMU guests joined by a private wire, with a
# control channel through which a guest can have another one killed and
# booted again, or the wire captured.
#
#   scripts/vm/net.sh [options] -- CMD [ARGS...]
#
#   guest 1  virtio-net --- tap-1 ---+
#   guest 2  virtio-net --- tap-2 ---+--- bridge "br0" 192.0.2.254
#   ...                              |    (netns stt-net-PID, created and
#   guest N  virtio-net --- tap-N ---+     deleted here; vm-net-ctl on it)
#
# Each guest is a scripts/vm/run.sh guest (same root, modules, kernel checks,
# its own kernel) with one vCPU and one virtio-net NIC on a tap device
# (vnet_hdr, vhost off): TSO and GRO, no UDP-tunnel segmentation offload
# (the benchmark's two guests are two of these). The taps and the bridge
# live in a network namespace of this run and QEMU runs inside it, so no
# traffic touches the host's own interfaces. CMD runs in every guest; it
# tells them apart by its environment:
#
#   STT_NET_INDEX   1..N
#   STT_NET_GUESTS  N
#   STT_NET_BOOT    1, then 2, 3... when the guest was killed and booted again
#   STT_NET_MAC     the MAC address of this guest's NIC
#   STT_NET_LOCAL   192.0.2.INDEX: CMD assigns it (/24) to the NIC
#   STT_NET_ADDRS   every guest's address, in index order
#   STT_NET_MTU     the wire's MTU (--mtu): CMD sets it on the NIC
#   STT_NET_CTL     192.0.2.254:PORT, the control channel (scripts/vm/net-ctl.py:
#                   "kill I", "boot I", "capture-start NAME [FILTER]",
#                   "capture-stop NAME", "stt-fields NAME", ...)
#
# Guest --main's output (default 1) streams to stdout; every guest's output
# (all boots) goes to LOGDIR/gI.log, and the others' are printed afterwards
# with a "gI: " prefix unless --log-dir is given. Captures are kept as
# LOGDIR/NAME.pcap.
#
# A guest killed through the control channel has its QEMU stopped (SIGTERM:
# the guest just stops, as on a power cut); vm-run still scans the kernel
# log of that boot, and anything there but "the guest died" fails the run.
# Exit status: 124/125 if any boot of any guest timed out or had a kernel
# problem (other than a requested kill), else the main guest's status.

set -e

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
ME=vm-net

say() { echo "$ME: $*" >&2; }

usage() {
	cat <<-EOF
	Usage: scripts/vm/net.sh [options] -- CMD [ARGS...]

	N guests, one vCPU each, each with a virtio-net NIC on a tap device;
	the taps are bridged inside a network namespace of our own.

	Options:
	  --guests N       number of guests (default 3, at most 200)
	  --smp N          vCPUs per guest (default 1)
	  --mem MB         memory per guest (default 1024)
	  --mtu MTU        MTU of the taps and the bridge (default 1500)
	  --main I         the guest whose output streams and whose status is
	                   ours (default 1)
	  --log-dir DIR    keep every guest's output (gI.log) and the captures
	                   (NAME.pcap) there
	  --grace SEC      after the main guest is done, how long the others
	                   may take to finish before they are killed (default 600)
	  --ctl-port PORT  TCP port of the control channel (default 7999)
	  --stagger SEC    start the guests SEC seconds apart (default 0)
	  other options    passed to scripts/vm/run.sh for every guest (--root,
	                   --kernel, --kernel-image, --modules-dir, --modules,
	                   --env, --timeout, --append, --no-load, ...)
	EOF
}

guests=3
smp=1
mem=1024
mtu=1500
main=1
logdir=
grace=600
ctlport=7999
stagger=0
pass=()
while [ "$#" -gt 0 ]; do
	case $1 in
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	--no-load) pass+=("$1"); shift; continue ;;
	esac
	[ "$#" -ge 2 ] || { say "$1 needs an argument"; exit 2; }
	case $1 in
	--guests) guests=$2 ;;
	--smp) smp=$2 ;;
	--mem) mem=$2 ;;
	--mtu) mtu=$2 ;;
	--main) main=$2 ;;
	--log-dir) logdir=$2 ;;
	--grace) grace=$2 ;;
	--ctl-port) ctlport=$2 ;;
	--stagger) stagger=$2 ;;
	-*) pass+=("$1" "$2") ;;
	*) say "unknown argument '$1' (try --help)"; exit 2 ;;
	esac
	shift 2
done
[ "$#" -gt 0 ] || { usage >&2; exit 2; }
case $guests in
''|*[!0-9]*) say "--guests: not a number"; exit 2 ;;
esac
if [ "$guests" -lt 1 ] || [ "$guests" -gt 200 ]; then
	say "--guests: 1 to 200"; exit 2
fi
if [ "$main" -lt 1 ] || [ "$main" -gt "$guests" ]; then
	say "--main: 1 to $guests"; exit 2
fi
[ "$(id -u)" -eq 0 ] || { say "needs root (network namespace, taps)"; exit 1; }

ns=stt-net-$$
work=$(mktemp -d "${TMPDIR:-/tmp}/vm-net.XXXXXX")
if [ -n "$logdir" ]; then
	mkdir -p "$logdir"
	logdir=$(cd "$logdir" && pwd)
else
	logdir=$work/logs
	mkdir -p "$logdir"
fi
sup=()		# supervisor PID per guest
ctlpid=

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local p f

	# The supervisors stop booting; the guests' QEMUs go.
	: >"$work/stop"
	for f in "$work"/g*.qemu.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	for p in "${sup[@]}" $ctlpid; do
		[ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}

ip netns add "$ns" || { say "cannot create netns $ns"; exit 1; }
trap cleanup EXIT
trap 'exit 130' INT TERM

ip -n "$ns" link set lo up
ip -n "$ns" link add br0 mtu "$mtu" type bridge stp_state 0 forward_delay 0
addrs=
for ((i = 1; i <= guests; i++)); do
	ip -n "$ns" tuntap add dev "tap-$i" mode tap vnet_hdr
	ip -n "$ns" link set dev "tap-$i" mtu "$mtu" master br0 up
	addrs+="${addrs:+ }192.0.2.$i"
done
ip -n "$ns" addr add 192.0.2.254/24 dev br0
ip -n "$ns" link set br0 up

ip netns exec "$ns" python3 "$SRCDIR/scripts/vm/net-ctl.py" --work "$work" \
	--log-dir "$logdir" --addr 192.0.2.254 --port "$ctlport" \
	--guests "$guests" --main "$main" >>"$logdir/ctl.log" 2>&1 &
ctlpid=$!

mac_of() { printf '52:54:00:57:71:%02x' "$1"; }

# boot I K: one vm-run of guest I, its K-th boot, in the foreground.
boot() {
	local i=$1 k=$2 mac

	shift 2
	mac=$(mac_of "$i")
	ip netns exec "$ns" "$SRCDIR/scripts/vm/run.sh" --smp "$smp" --mem "$mem" \
		--qemu-arg -netdev \
		--qemu-arg "tap,id=n0,ifname=tap-$i,script=no,downscript=no,vhost=off" \
		--qemu-arg -device \
		--qemu-arg "virtio-net-pci,netdev=n0,mac=$mac" \
		--qemu-arg -pidfile --qemu-arg "$work/g$i.qemu.pid" \
		--env STT_NET_INDEX="$i" --env STT_NET_GUESTS="$guests" \
		--env STT_NET_BOOT="$k" --env STT_NET_MAC="$mac" \
		--env STT_NET_LOCAL="192.0.2.$i" --env STT_NET_ADDRS="$addrs" \
		--env STT_NET_MTU="$mtu" --env STT_NET_CTL="192.0.2.254:$ctlport" \
		"${pass[@]}" -- "$@"
}

# The problems vm-run reported for the boot whose output starts at line $2
# of log $1, but those a requested kill explains.
unexplained() {
	tail -n +"$2" "$1" | sed -n 's/^vm-run: kernel problem: //p' |
		grep -v -e '^the guest died before CMD finished$' \
			-e '^the guest never started CMD$' \
			-e '^the guest died while unloading/collecting$' || true
}

# supervise I CMD...: boot guest I; when it was killed through the control
# channel, wait for its boot request and boot it again. The verdict of
# every boot goes to gI.verdict, the last status to gI.rc.
supervise() {
	local i=$1 k=1 rc log start bad

	log=$logdir/g$i.log
	shift
	: >"$log"
	while :; do
		echo "$ME: guest $i boot $k" >>"$log"
		start=$(($(wc -l <"$log") + 1))
		set +e
		if [ "$i" = "$main" ]; then
			boot "$i" "$k" "$@" > >(tee -a "$log") 2>&1
		else
			boot "$i" "$k" "$@" >>"$log" 2>&1
		fi
		rc=$?
		set -e
		rm -f "$work/g$i.qemu.pid"
		if [ -e "$work/g$i.killed" ]; then
			rm -f "$work/g$i.killed"
			bad=$(unexplained "$log" "$start")
			if [ -n "$bad" ]; then
				echo "$k killed-with-problems 125 ${bad//$'\n'/; }" >>"$work/g$i.verdict"
			else
				echo "$k killed 0" >>"$work/g$i.verdict"
			fi
			echo "$ME: guest $i boot $k: killed on request (vm-run status $rc)" >>"$log"
			while [ ! -e "$work/g$i.boot" ] && [ ! -e "$work/stop" ]; do
				sleep 0.5
			done
			[ -e "$work/stop" ] && break
			rm -f "$work/g$i.boot"
			k=$((k + 1))
			continue
		fi
		echo "$k exited $rc" >>"$work/g$i.verdict"
		echo "$rc" >"$work/g$i.rc"
		break
	done
}

say "$guests guests on bridge br0 (MTU $mtu) in netns $ns, control on 192.0.2.254:$ctlport, logs in $logdir"
for ((i = 1; i <= guests; i++)); do
	supervise "$i" "$@" &
	sup[i]=$!
	[ "$i" -lt "$guests" ] && sleep "$stagger"
done

set +e
wait "${sup[main]}"
deadline=$(($(date +%s) + grace))
for ((i = 1; i <= guests; i++)); do
	[ "$i" = "$main" ] && continue
	while kill -0 "${sup[i]}" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
		sleep 1
	done
	if kill -0 "${sup[i]}" 2>/dev/null; then
		say "guest $i still running ${grace}s after guest $main: killing it"
		: >"$work/stop"
		[ -f "$work/g$i.qemu.pid" ] && kill "$(cat "$work/g$i.qemu.pid")" 2>/dev/null
		echo "0 left-running 124" >>"$work/g$i.verdict"
	fi
	wait "${sup[i]}"
done
sup=()
set -e

status=
worst=
for ((i = 1; i <= guests; i++)); do
	if [ "$i" != "$main" ] && [ "$logdir" = "$work/logs" ]; then
		sed "s/^/g$i: /" "$logdir/g$i.log"
	fi
	while read -r k what rc rest; do
		case $what in
		killed) say "guest $i boot $k: killed on request, kernel log clean" ;;
		killed-with-problems) say "guest $i boot $k: killed on request; kernel problems: $rest"
			worst=125 ;;
		left-running) say "guest $i: killed after the grace period"
			worst=${worst:-124} ;;
		exited) say "guest $i boot $k: status $rc"
			case $rc in
			124|125) worst=${worst:-$rc} ;;
			esac ;;
		esac
	done <"$work/g$i.verdict"
	if [ "$i" = "$main" ]; then
		status=$(cat "$work/g$i.rc" 2>/dev/null || true)
	fi
done
exit "${worst:-${status:-1}}"
