#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests and c_* functions are called indirectly
# shellcheck disable=SC2153 # STT_NET_* come from scripts/vm/net.sh
#
# OVN over STT across separate guests: the guest side of scripts/demo/ovn-hosts.sh,
# run in every guest of scripts/vm/net.sh (one kernel, one stt.ko and
# vport-stt.ko each; Debian's OVN and Open vSwitch, kernel datapath).
#
#   guest 1 192.0.2.1           guest 2 192.0.2.2        guest 3 192.0.2.3
#   NB + SB ovsdb-server,       ovsdb-server,            ovsdb-server,
#   ovn-northd (SB tcp:6642)    ovs-vswitchd,            ovs-vswitchd,
#   ovsdb-server, vswitchd,     ovn-controller (ch2)     ovn-controller (ch3)
#   ovn-controller (ch1),
#   the tests (the driver)      vm-net-agent             vm-net-agent
#     vm1 vm4                     vm2 vm5                  vm3 vm6
#   ---- virtio-net, taps, bridge br0 (MTU 1600) of vm-net; 192.0.2.254 is
#        vm-net-ctl on the host side: kill/boot a guest, tcpdump/tshark ----
#
#   ls1 10.1.0.0/24: vm1 vm2 vm3      ls2 10.2.0.0/24: vm4 vm5 vm6
#   lr1 joins them (10.1.0.254, 10.2.0.254); a VM is a network namespace
#   with a veth on its chassis's br-int. With N guests: vm c and vm N+c on
#   chassis c.
#
# Every chassis is ovn-encap-type=stt, ovn-encap-ip its NIC's address.
# Guest 1 drives: it runs the checks and figures below and reaches the other
# guests through their vm-net-agent ("on I FUNC ARGS" runs the c_FUNC of
# this script there) and the host through vm-net-ctl ("ctl kill 3").
#
# Checks (TEST lines): STT tunnels (key=flow) between every pair of chassis
# and no other encapsulation, in OVS and in the southbound database; ping
# and a checksummed TCP transfer between every pair of VMs; the context
# IDs on the wire (tcpdump on the bridge, tshark's STT decoder) are the
# 64-bit keys OVN computes from the southbound tunnel keys (ingress port
# << 40 | egress port << 24 | datapath), above 2^32; the reassembly table
# drains; one chassis's ovs-vswitchd stopped and started again, then its
# whole guest killed and booted again: only that chassis's traffic stops
# (continuous pings between the others lose nothing) and all of it comes
# back; teardown leaves no STT device and no module reference.
#
# Figures ("BENCH" records, read by scripts/bench/report.py): vm1 -> vm2 (chassis
# 1 -> 2) TCP throughput, sender and receiver CPU (whole-guest /proc/stat)
# over STT and over Geneve in the same topology (ovn-encap-type switched
# live), repetitions in the order stt geneve geneve stt stt geneve...;
# convergence after the last port binds; reassembly memory on the busiest
# chassis (two chassis sending to the third at once, ns_reasm_* sampled).
#
# Environment: OVN_HOSTS_TESTS (a subset of the tests, in order),
# OVN_HOSTS_REPS (3), OVN_HOSTS_DURATION (seconds per measurement, 8),
# OVN_HOSTS_XBYTES (bytes per checked transfer, 1000000), OVN_VERBOSE=1
# (the NB/SB views). Run it through scripts/demo/ovn-hosts.sh.

set -u
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
REPO=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=selftests/lib.sh
source "$REPO/selftests/lib.sh"
# shellcheck source=selftests/ovn_lib.sh
source "$REPO/selftests/ovn_lib.sh"

ALL_TESTS="
	test_tunnels
	test_pings
	test_transfers
	test_wire_keys
	test_figures
	test_reasm
	test_vswitchd_restart
	test_guest_reboot
	test_teardown
"

IDX=${STT_NET_INDEX:-}
NCH=${STT_NET_GUESTS:-0}
read -r -a _addrs <<<"${STT_NET_ADDRS:-}"
ADDR=(x "${_addrs[@]}")
CEN_IP=${ADDR[1]:-}
NVM=$((2 * NCH))
D=/tmp/ovn-hosts
AGENT_PORT=5990
XPORT=5000
IPERF_PORT=5201
TCPX=$REPO/selftests/stt_tcp.py
PY=/usr/bin/python3
OVS_SCHEMA=/usr/share/openvswitch/vswitch.ovsschema
NB_SCHEMA=/usr/share/ovn/ovn-nb.ovsschema
SB_SCHEMA=/usr/share/ovn/ovn-sb.ovsschema
STTDEV=stt_sys_7471
REPS=${OVN_HOSTS_REPS:-3}
MODES=${OVN_HOSTS_MODES:-virtio virtio-mtu}
DURATION=${OVN_HOSTS_DURATION:-8}
XBYTES=${OVN_HOSTS_XBYTES:-1000000}
ON_TIMEOUT=300
TESTS=${OVN_HOSTS_TESTS:-${TESTS:-}}
export OVS_RUNDIR=$D/ovs OVS_DBDIR=$D/ovs OVS_LOGDIR=$D/ovs \
	OVS_SYSCONFDIR=$D/ovs OVN_RUNDIR=$D/ovs OVN_DBDIR=$D/ovs \
	OVN_LOGDIR=$D/ovs OVN_SYSCONFDIR=$D/ovs

say() { echo "ovn-hosts: $*"; }

# ---- remote execution ------------------------------------------------------

# on I FUNC [ARGS...]: c_FUNC ARGS on guest I (through its agent; here
# directly); its output, its status (255: no agent).
on() {
	local i=$1 line l rc='' fd

	shift
	if [ "$i" = "$IDX" ]; then
		timeout "$ON_TIMEOUT" "$SELF" call "$@"
		return
	fi
	printf -v line '%q ' "$SELF" call "$@"
	if ! exec {fd}<>"/dev/tcp/${ADDR[i]}/$AGENT_PORT"; then
		echo "guest $i (${ADDR[i]}): no agent"
		return 255
	fi 2>/dev/null
	printf '%s %s\n' "$ON_TIMEOUT" "$line" >&"$fd"
	while IFS= read -r l <&"$fd"; do
		if [[ $l == "STT-AGENT-RC "* ]]; then
			rc=${l#STT-AGENT-RC }
			break
		fi
		printf '%s\n' "$l"
	done
	exec {fd}>&-
	return "${rc:-255}"
}

agent_up() {
	timeout 5 bash -c "exec 7<>/dev/tcp/${ADDR[$1]}/$AGENT_PORT" 2>/dev/null
}

agent_quit() {
	timeout 10 bash -c "exec 7<>/dev/tcp/${ADDR[$1]}/$AGENT_PORT && echo quit >&7 && cat <&7" \
		>/dev/null 2>&1
}

# ctl WORDS...: a request to vm-net-ctl on the host; its answer (without
# the END line) on stdout, its status.
ctl() {
	local l rc='' fd

	if ! exec {fd}<>"/dev/tcp/${STT_NET_CTL%:*}/${STT_NET_CTL#*:}"; then
		echo "no vm-net-ctl at $STT_NET_CTL"
		return 255
	fi 2>/dev/null
	echo "$*" >&"$fd"
	while IFS= read -r l <&"$fd"; do
		if [[ $l == "END "* ]]; then
			rc=${l#END }
			break
		fi
		printf '%s\n' "$l"
	done
	exec {fd}>&-
	return "${rc:-255}"
}

now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }

# ---- chassis side (c_*: run on any guest through "on") ---------------------

vsctl() { ovs-vsctl --timeout=60 -vtimeval:console:off "$@"; }

c_nic_up() {
	local d dev=

	modprobe -q virtio_net
	for _ in $(seq 100); do
		for d in /sys/class/net/*; do
			[ "$(cat "$d/address")" = "$STT_NET_MAC" ] && dev=${d##*/}
		done
		[ -n "$dev" ] && break
		sleep 0.1
	done
	[ -n "$dev" ] || { echo "no NIC with MAC $STT_NET_MAC"; return 1; }
	ip link set "$dev" mtu "$STT_NET_MTU" up &&
	ip addr add "$STT_NET_LOCAL/24" dev "$dev" || return 1
	echo "$dev" >"$D/nic"
}

# The daemons' stderr (a line or two before they detach) goes to a file.
c_vswitchd_start() { ovs_vswitchd_start "$D/daemons.err"; }

c_vswitchd_stop() {
	[ -f "$D/ovs/ovs-vswitchd.pid" ] || return 0
	ovs-appctl --timeout=60 -t ovs-vswitchd exit --cleanup 2>/dev/null
	BUSYWAIT_SLEEP=0.2 busywait 60000 test ! -e "$D/ovs/ovs-vswitchd.pid"
}

# c_chassis_up ENCAP: this guest's ovsdb-server, ovs-vswitchd and
# ovn-controller, chassis "chI".
c_chassis_up() {
	mkdir -p "$D/ovs"
	rm -f "$D/ovs/conf.db"
	ovsdb-tool create "$D/ovs/conf.db" "$OVS_SCHEMA" &&
	ovsdb-server --detach --no-chdir --pidfile --log-file \
		--remote="punix:$D/ovs/db.sock" -vconsole:off -vsyslog:off \
		"$D/ovs/conf.db" 2>>"$D/daemons.err" &&
	vsctl --no-wait init &&
	c_vswitchd_start &&
	vsctl -- set Open_vSwitch . \
		external_ids:system-id="ch$IDX" \
		external_ids:hostname="ch$IDX" \
		external_ids:ovn-remote="tcp:$CEN_IP:6642" \
		external_ids:ovn-encap-type="$1" \
		external_ids:ovn-encap-ip="${ADDR[IDX]}" \
		external_ids:ovn-bridge=br-int \
		-- add-br br-int \
		-- set bridge br-int fail-mode=secure \
		   other-config:disable-in-band=true &&
	ovn-controller --detach --no-chdir --pidfile --log-file \
		-vconsole:off -vsyslog:off 2>>"$D/daemons.err"
}

# This chassis's VMs: namespaces vmN with eth0, its peer vmN-p here.
c_vms_up() {
	local n

	for n in $(vms_of "$IDX"); do
		ip netns add "vm$n" &&
		ip -n "vm$n" link set lo up &&
		ip link add "vm$n-p" type veth peer name eth0 netns "vm$n" &&
		ip -n "vm$n" link set eth0 address "$(vm_mac "$n")" &&
		ip -n "vm$n" addr add "$(vm_ip "$n")/24" dev eth0 &&
		ip -n "vm$n" link set eth0 up &&
		ip -n "vm$n" route add default via "$(vm_gw "$n")" &&
		ip link set "vm$n-p" up || return 1
	done
}

c_ports_add() {
	local n

	for n in $(vms_of "$IDX"); do
		vsctl add-port br-int "vm$n-p" \
			-- set interface "vm$n-p" external_ids:iface-id="vm$n" ||
			return 1
	done
}

# c_rx_lro on|off: the NIC's rx-gro-hw (virtio-net's guest offloads, set
# through its control queue): on, the tap hands this guest the sender's
# TSO frames whole, like a NIC with LRO (as in the benchmark's pair); off,
# the host's tap cuts them to the wire's MTU first, and the guest's
# software GRO merges what it can, like a NIC without LRO.
c_rx_lro() {
	local dev

	dev=$(cat "$D/nic") &&
	ethtool -K "$dev" rx-gro-hw "$1" &&
	ethtool -k "$dev" | grep -qx "rx-gro-hw: $1"
}

c_encap() {
	vsctl set Open_vSwitch . external_ids:ovn-encap-type="$1"
}

# c_tunnels TYPE: "remote_ip,key" of br-int's interfaces of TYPE.
c_tunnels() {
	vsctl --bare --columns=options find interface type="$1" |
		sed -n 's/.*key=\([^ ,]*\).*remote_ip="\{0,1\}\([0-9.]*\).*/\2,\1/p' |
		sort
}

# c_other_tunnels TYPE: br-int's tunnel interfaces not of TYPE.
c_other_tunnels() {
	local t

	for t in stt geneve vxlan gre; do
		[ "$t" = "$1" ] && continue
		vsctl --bare --columns=name find interface type="$t"
	done
}

c_stt_devices() {
	ip -o link show type stt | awk -F': ' '{ print $2 }' | sed 's/@.*//'
}

# c_ping WAIT SRC DST...: vm SRC pings each vm DST (in parallel), at most
# WAIT seconds each; "DST ok" or "DST fail" per DST.
c_ping() {
	local w=$1 src=$2 dst

	shift 2
	for dst; do
		(
			if ip netns exec "vm$src" ping -q -c 2 -i 0.3 -w "$w" \
				"$(vm_ip "$dst")" 2>&1 | grep -q ' [1-9][0-9]* received'; then
				echo "$dst ok"
			else
				echo "$dst fail"
			fi
		) &
	done
	wait
}

c_srv_start() {	# VM: its checksummed-transfer server, once
	local n=$1

	if [ -f "$D/srv-$n.pid" ] && kill -0 "$(cat "$D/srv-$n.pid")" 2>/dev/null; then
		return 0
	fi
	rm -f "$D/srv-$n.out.ready"
	touch "$D/srv-$n.out"
	setsid ip netns exec "vm$n" "$PY" "$TCPX" --timeout 120 server "$XPORT" \
		"$D/srv-$n.out" </dev/null >/dev/null 2>"$D/srv-$n.err" &
	echo $! >"$D/srv-$n.pid"
	BUSYWAIT_SLEEP=0.2 busywait 60000 test -e "$D/srv-$n.out.ready"
}

c_srv_lines() { cat "$D/srv-$1.out"; }

c_xfer() {	# VM BYTES ADDR...: the transfer client's lines
	local n=$1 bytes=$2

	shift 2
	ip netns exec "vm$n" "$PY" "$TCPX" --timeout 120 client "$XPORT" \
		"$bytes" "$@" 2>&1
}

c_cpu() { head -n 1 /proc/stat; }

# c_nic_stats: "rx_packets rx_bytes tx_packets tx_bytes" of the NIC
# (virtio-net's queue 0, what the guest's driver saw: TSO/LRO frames
# count once), as ethtool prints them: awk's "+ 0" would make mawk print
# a number above 2^31 as "2.63419e+09", which bash's arithmetic refuses.
c_nic_stats() {
	ethtool -S "$(cat "$D/nic")" | awk '
		function n(v) { return v == "" ? 0 : v }
		$1 == "rx_queue_0_packets:" { rp = $2 } $1 == "rx_queue_0_bytes:" { rb = $2 }
		$1 == "tx_queue_0_packets:" { tp = $2 } $1 == "tx_queue_0_bytes:" { tb = $2 }
		END { print n(rp), n(rb), n(tp), n(tb) }'
}

# c_stt_stats: the STT device's ethtool counters, "name=value ...".
c_stt_stats() {
	ethtool -S "$STTDEV" 2>/dev/null |
		awk -F': *' 'NR > 1 { gsub(/ /, "", $1); printf "%s=%s ", $1, $2 } END { print "" }'
}

c_iperf_srv() {
	local n=$1

	[ -f "$D/iperf-$n.pid" ] && kill -0 "$(cat "$D/iperf-$n.pid")" 2>/dev/null &&
		return 0
	ip netns exec "vm$n" iperf3 -s -D -p "$IPERF_PORT" -I "$D/iperf-$n.pid" \
		>/dev/null 2>&1
	BUSYWAIT_SLEEP=0.2 busywait 30000 test -s "$D/iperf-$n.pid"
}

# c_iperf VM DST SECS: one TCP stream from vm VM to vm DST; Gbit/s received.
c_iperf() {
	local out

	out=$(ip netns exec "vm$1" iperf3 -c "$(vm_ip "$2")" -p "$IPERF_PORT" \
		-t "$3" -J 2>&1)
	jq -er '.end.sum_received.bits_per_second / 1e9' <<<"$out" 2>/dev/null ||
		{ echo "iperf3 failed: $(head -c 300 <<<"$out")"; return 1; }
}

# Continuous pings: c_cping_start NAME SRC DST, then c_cping_stop NAME:
# "sent received lost_inside longest_gap_s unanswered_at_end" from the
# icmp_seq of the replies (5 per second): losses between replies count,
# the last requests, still in flight when ping is stopped, do not.
c_cping_start() {
	setsid ip netns exec "vm$2" ping -i 0.2 -W 2 "$(vm_ip "$3")" \
		</dev/null >"$D/cping-$1.out" 2>&1 &
	echo $! >"$D/cping-$1.pid"
}

c_cping_stop() {
	local pid

	pid=$(cat "$D/cping-$1.pid") || return 1
	kill -INT "$pid" 2>/dev/null
	BUSYWAIT_SLEEP=0.2 busywait 10000 test ! -e "/proc/$pid"
	awk '
		/icmp_seq=/ { s = $0; sub(/.*icmp_seq=/, "", s); sub(/ .*/, "", s)
			if (!(s in got)) { got[s] = 1; n++ }
			if (s + 0 > max) max = s + 0 }
		/packets transmitted/ { sent = $1 }
		END {
			gap = 0; run = 0
			for (i = 1; i <= max; i++) {
				if (i in got) run = 0; else { run++; if (run > gap) gap = run }
			}
			printf "%d %d %d %.1f %d\n", sent, n, max - n, gap * 0.2, sent - max
		}' "$D/cping-$1.out"
}

# Reassembly memory: ns_reasm_mem_bytes and ns_reasm_pending_frames
# sampled every 0.2 s until c_sampler_stop, which prints "max_mem_bytes
# max_pending samples".
c_sampler_start() {
	# shellcheck disable=SC2016 # for the inner shell
	setsid bash -c 'while :; do ethtool -S "$1" | awk -F": *" \
		"/ns_reasm_mem_bytes:|ns_reasm_pending_frames:/ { printf \"%s \", \$2 } END { print \"\" }"
		sleep 0.2; done' sampler "$STTDEV" </dev/null >"$D/sampler.out" 2>&1 &
	echo $! >"$D/sampler.pid"
}

c_sampler_stop() {
	kill "$(cat "$D/sampler.pid")" 2>/dev/null
	awk 'NF == 2 { n++; if ($1 > m) m = $1; if ($2 > p) p = $2 }
		END { printf "%d %d %d\n", m, p, n }' "$D/sampler.out"
}

c_dpflows() { ovs-appctl dpctl/dump-flows 2>&1; }

# What a failed check needs to say why, a line each: this chassis's
# OpenFlow table and SB connection; its daemons' warnings (but timeval's
# reports of a slow poll loop: TCG's pace); how many upcall handlers
# ovs-vswitchd runs (0 loses every datapath miss: ovs_boot_settle); the
# datapath's hit/missed/lost counts; each VM's neighbours (an unresolved
# gateway or peer shows there) and what OpenFlow does with its ARP request
# for its gateway.
c_diag() {
	local n

	echo "ch$IDX: br-int flows $(ovs-ofctl dump-flows br-int 2>/dev/null | grep -c 'table=')," \
		"ovn-controller SB $(ovs-appctl -t ovn-controller connection-status 2>&1)"
	grep -hE '\|(WARN|ERR|EMER)\|' "$D/ovs/ovn-controller.log" \
		"$D/ovs/ovs-vswitchd.log" 2>/dev/null | grep -v '|timeval|' |
		tail -n 8 | sed "s/^/ch$IDX: /"
	echo "ch$IDX: vswitchd: $(grep -h 'n-handler-threads' "$D/ovs/ovs-vswitchd.log" | tail -n 1)"
	echo "ch$IDX: datapath: $(ovs-appctl dpctl/show 2>&1 | grep -E 'lookups' | tr -s ' \n' ' ')"
	for n in $(vms_of "$IDX"); do
		echo "ch$IDX: vm$n neighbours: $(ip -n "vm$n" neigh show 2>&1 | tr '\n' ';')"
		echo "ch$IDX: vm$n ARP for its gateway, traced: $(ovs-appctl ofproto/trace br-int \
			"in_port=vm$n-p,arp,dl_src=$(vm_mac "$n"),dl_dst=ff:ff:ff:ff:ff:ff,arp_op=1,arp_spa=$(vm_ip "$n"),arp_tpa=$(vm_gw "$n")" 2>&1 |
			grep -E '^Datapath actions' | tr '\n' ';')"
	done
}

c_kernel_log() { dmesg --color=never | grep -E 'WARNING:|BUG:|RIP:|Call Trace:' | head -n 5; }

# Everything of this chassis down; "stt_devices=N vport_users=M".
c_teardown() {
	local f n

	[ -f "$D/ovs/ovn-controller.pid" ] &&
		ovs-appctl --timeout=30 -t ovn-controller exit 2>/dev/null
	if [ -f "$D/ovs/ovs-vswitchd.pid" ]; then
		vsctl --if-exists del-br br-int 2>/dev/null
		c_vswitchd_stop
	fi
	[ -f "$D/ovs/ovsdb-server.pid" ] &&
		ovs-appctl --timeout=30 -t ovsdb-server exit 2>/dev/null
	for f in "$D"/srv-*.pid "$D"/cping-*.pid "$D"/iperf-*.pid "$D/sampler.pid"; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
		rm -f "$f"
	done
	for n in $(vms_of "$IDX"); do
		ip netns del "vm$n" 2>/dev/null
	done
	n=$(awk '$1 == "vport_stt" { print $3 }' /proc/modules)
	echo "stt_devices=$(c_stt_devices | grep -c .) vport_users=${n:-none}"
}

# ---- central (guest 1) -----------------------------------------------------

nbctl() { ovn-nbctl --db="unix:$D/cen/nb.sock" --timeout=180 -vtimeval:console:off "$@"; }
sbctl() { ovn-sbctl --db="unix:$D/cen/sb.sock" --timeout=60 -vtimeval:console:off "$@"; }

central_up() {
	local d=$D/cen

	mkdir -p "$d"
	ovsdb-tool create "$d/nb.db" "$NB_SCHEMA" &&
	ovsdb-tool create "$d/sb.db" "$SB_SCHEMA" &&
	ovsdb-server --detach --no-chdir --pidfile="$d/nb.pid" \
		--log-file="$d/nb.log" --unixctl="$d/nb.ctl" \
		--remote="punix:$d/nb.sock" -vconsole:off -vsyslog:off "$d/nb.db" \
		2>>"$D/daemons.err" &&
	ovsdb-server --detach --no-chdir --pidfile="$d/sb.pid" \
		--log-file="$d/sb.log" --unixctl="$d/sb.ctl" \
		--remote="punix:$d/sb.sock" --remote="ptcp:6642:$CEN_IP" \
		-vconsole:off -vsyslog:off "$d/sb.db" 2>>"$D/daemons.err" &&
	ovn-northd --detach --no-chdir --pidfile="$d/northd.pid" \
		--log-file="$d/northd.log" --unixctl="$d/northd.ctl" \
		--ovnnb-db="unix:$d/nb.sock" --ovnsb-db="unix:$d/sb.sock" \
		-vconsole:off -vsyslog:off 2>>"$D/daemons.err"
}

central_down() {
	local i

	for i in northd nb sb; do
		[ -e "$D/cen/$i.ctl" ] && ovs-appctl -t "$D/cen/$i.ctl" exit 2>/dev/null
	done
	return 0
}

# Every VM port bound to its chassis in the southbound database?
all_bound() {
	local n uuid name port ch
	local -A names=() at=()

	while IFS=, read -r uuid name; do
		names[$uuid]=$name
	done < <(sbctl --format=csv --data=bare --no-headings \
		--columns=_uuid,name list chassis)
	while IFS=, read -r port ch; do
		[ -n "$ch" ] && at[$port]=${names[$ch]:-}
	done < <(sbctl --format=csv --data=bare --no-headings \
		--columns=logical_port,chassis list port_binding)
	for ((n = 1; n <= NVM; n++)); do
		[ "${at[vm$n]:-}" = "ch$(ch_of "$n")" ] || return 1
	done
}

# ---- driver helpers --------------------------------------------------------

# all_tunnels TYPE: every chassis has key=flow tunnels of TYPE to every
# other chassis and to nothing else.
all_tunnels() {
	local i j want

	for ((i = 1; i <= NCH; i++)); do
		want=
		for ((j = 1; j <= NCH; j++)); do
			[ "$i" = "$j" ] || want+="${ADDR[j]},flow"$'\n'
		done
		[ "$(on "$i" tunnels "$1")" = "${want%$'\n'}" ] || return 1
	done
}

# ping_check WAIT "A-B ...": the pairs that do not answer in BAD, those
# that do in GOOD.
ping_check() {
	local w=$1 p a b line
	local -A dsts=()

	BAD=
	GOOD=
	for p in $2; do
		dsts[${p%-*}]+=" ${p#*-}"
	done
	for a in "${!dsts[@]}"; do
		# shellcheck disable=SC2086 # a list of VMs
		while read -r b line; do
			if [ "$line" = ok ]; then
				GOOD+=" vm$a->vm$b"
			else
				BAD+=" vm$a->vm$b"
			fi
		done < <(on "$(ch_of "$a")" ping "$w" "$a" ${dsts[$a]})
	done
}

# Every chassis's c_diag, as INFO lines, after a check failed.
diag_all() {
	local i

	for ((i = 1; i <= NCH; i++)); do
		on "$i" diag | sed 's/^/INFO: /'
	done
}

# pairs_all: every pair A-B, A < B; pairs_with C: those with a VM on
# chassis C; pairs_without C: the others.
pairs_all() {
	local a b

	for ((a = 1; a <= NVM; a++)); do
		for ((b = a + 1; b <= NVM; b++)); do
			echo -n "$a-$b "
		done
	done
}

pairs_with() {
	local p

	for p in $(pairs_all); do
		if [ "$(ch_of "${p%-*}")" = "$1" ] || [ "$(ch_of "${p#*-}")" = "$1" ]; then
			echo -n "$p "
		fi
	done
}

pairs_without() {
	local p

	for p in $(pairs_all); do
		if [ "$(ch_of "${p%-*}")" != "$1" ] && [ "$(ch_of "${p#*-}")" != "$1" ]; then
			echo -n "$p "
		fi
	done
}

# xfer_pairs "A-B ...": vm A sends XBYTES to vm B for each pair (one client
# run per A); the pairs whose server did not log the client's byte count
# and sha256 with A's address are in XBAD, the count in XN.
xfer_pairs() {
	local p a b out addr laddr cb csum srv
	local -A dsts=() srvs=()

	XBAD=
	XN=0
	for p in $1; do
		dsts[${p%-*}]+=" $(vm_ip "${p#*-}")"
		srvs[${p#*-}]=1
	done
	for b in "${!srvs[@]}"; do
		on "$(ch_of "$b")" srv_start "$b" >/dev/null ||
			XBAD+=" (no server in vm$b)"
	done
	for a in "${!dsts[@]}"; do
		# shellcheck disable=SC2086 # a list of addresses
		out=$(on "$(ch_of "$a")" xfer "$a" "$XBYTES" ${dsts[$a]})
		for addr in ${dsts[$a]}; do
			b=${addr##*.}
			XN=$((XN + 1))
			read -r _ laddr cb csum _ < <(grep "^$addr " <<<"$out")
			srv=$(on "$(ch_of "$b")" srv_lines "$b")
			if [[ "${laddr:-error}" == error || "$cb" != "$XBYTES" ]] ||
			   ! grep -q "^$XBYTES $csum $(vm_ip "$a")\$" <<<"$srv"; then
				XBAD+=" vm$a->vm$b"
			fi
		done
	done
}

cpu_pct() {	# BEFORE AFTER: busy % of one CPU ("cpu" lines of /proc/stat)
	awk -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		busy = (y[2] + y[3] + y[4] + y[7] + y[8]) - (x[2] + x[3] + x[4] + x[7] + x[8])
		tot = 0; for (i = 2; i <= 9; i++) tot += y[i] - x[i]
		if (tot > 0) printf "%.1f", 100 * busy / tot; else print "null" }'
}

json() {	# key=value...: one JSON object (numbers and null bare)
	local kv k v out='' sep=''

	for kv in "$@"; do
		k=${kv%%=*}
		v=${kv#*=}
		if ! [[ $v =~ ^-?[0-9]+(\.[0-9]+)?$ || $v == null ]]; then
			v=${v//\\/\\\\}
			v="\"${v//\"/\\\"}\""
		fi
		out+="$sep\"$k\": $v"
		sep=", "
	done
	echo "{$out}"
}

stat_of() {	# NAME "k=v k=v ...": the value of NAME (0 if absent)
	local kv

	for kv in $2; do
		[ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }
	done
	echo 0
}

# ---- tests -----------------------------------------------------------------

test_tunnels() {
	local i out bad='' enc

	RET=0
	BUSYWAIT_SLEEP=1 busywait 120000 all_tunnels stt >/dev/null
	check_err $? "not every chassis has type=stt key=flow tunnels to every other one: $(for ((i = 1; i <= NCH; i++)); do echo -n "ch$i: $(on "$i" tunnels stt | tr '\n' ' ');"; done)"
	for ((i = 1; i <= NCH; i++)); do
		out=$(on "$i" other_tunnels stt)
		[ -z "$out" ] || bad+=" ch$i has other tunnels: $out;"
		out=$(on "$i" stt_devices)
		[ "$out" = "$STTDEV" ] || bad+=" ch$i's STT devices: '$out' (want $STTDEV);"
		enc=$(sbctl --bare --columns=type,ip find encap chassis_name="ch$i" | grep . | tr '\n' ' ')
		[ "$enc" = "stt ${ADDR[i]} " ] || bad+=" ch$i's encaps in the SB: '$enc';"
	done
	[ -z "$bad" ]
	check_err $? "$bad"
	log_test "STT tunnels (key=flow) between all $NCH chassis, nothing else (OVS, SB)"
}

test_pings() {
	local p

	RET=0
	p=$(pairs_all)
	ping_check 10 "$p"
	[ -z "$BAD" ]
	check_err $? "no answer:$BAD"
	[ -z "$BAD" ] || diag_all
	log_test "ping between all $(wc -w <<<"$p") VM pairs (same switch and across lr1)"
}

test_transfers() {
	RET=0
	xfer_pairs "$(pairs_all)"
	[ -z "$XBAD" ]
	check_err $? "not received intact:$XBAD"
	log_test "checksummed TCP transfers between all $XN VM pairs ($XBYTES bytes each)"
}

# The 64-bit key of a packet from logical port IN to OUT on datapath DP.
key_of() {	# IN OUT DP (names): "0x%016x"
	local i o d

	i=$(sbctl --bare --columns=tunnel_key find port_binding logical_port="$1")
	o=$(sbctl --bare --columns=tunnel_key find port_binding logical_port="$2")
	d=$(sbctl --bare --columns=tunnel_key find datapath_binding external_ids:name="$3")
	[ -n "$i" ] && [ -n "$o" ] && [ -n "$d" ] || return 1
	printf '0x%016x' $(( (i << 40) | (o << 24) | d ))
}

# ping_keys A B: the "key src dst" lines a ping from vm A to vm B and its
# reply must show on the wire.
ping_keys() {
	local a=$1 b=$2 sa sb ca cb

	sa=ls$(sw_of "$a")
	sb=ls$(sw_of "$b")
	ca=${ADDR[$(ch_of "$a")]}
	cb=${ADDR[$(ch_of "$b")]}
	if [ "$sa" = "$sb" ]; then
		echo "$(key_of "vm$a" "vm$b" "$sa") $ca $cb"
		echo "$(key_of "vm$b" "vm$a" "$sa") $cb $ca"
	else	# routed on the sender's chassis: in from the router port
		echo "$(key_of "$sb-lr1" "vm$b" "$sb") $ca $cb"
		echo "$(key_of "$sa-lr1" "vm$a" "$sa") $cb $ca"
	fi
}

test_wire_keys() {
	local out want got norm big=0 n=0 bad='' pairs="1-2 1-$((2 * NCH))" p k v src dst

	RET=0
	((NCH >= 3)) && pairs+=" $((NCH + 2))-3"	# vm5 -> vm3: ch2 -> ch3, routed
	ctl capture-start keys tcp port 7471 >/dev/null
	check_err $? "capture on the bridge did not start"
	for p in $pairs; do
		on "$(ch_of "${p%-*}")" ping 10 "${p%-*}" "${p#*-}" >/dev/null
	done
	out=$(ctl capture-stop keys)
	log_info "capture: $(tr '\n' ' ' <<<"$out")"
	got=$(ctl stt-fields keys)
	check_err $? "tshark: $got"
	want=$(for p in $pairs; do ping_keys "${p%-*}" "${p#*-}"; done)
	# Every context ID: reserved bits (55-63) clear; count those above 2^32.
	while read -r k _; do
		[ -n "$k" ] || continue
		v=$((k))
		n=$((n + 1))
		((v >> 32)) && big=$((big + 1))
		((v >> 55)) && bad+=" reserved bits set in $k;"
	done <<<"$got"
	norm=$(while read -r k src dst _; do
		[ -n "$k" ] && printf '0x%016x %s %s\n' "$k" "$src" "$dst"
	done <<<"$got")
	while read -r k src dst; do
		[ -n "$k" ] || continue
		grep -qx "$k $src $dst" <<<"$norm" || bad+=" no $k from $src to $dst;"
	done <<<"$want"
	log_info "STT frames on the wire: $n, context IDs above 2^32: $big; expected (key src dst): $(tr '\n' ';' <<<"$want")"
	log_info "seen (frames key src dst): $(sort <<<"$norm" | uniq -c | sed 's/^ *//' | tr '\n' ';')"
	((n > 0)) || bad+=" no STT frame captured;"
	((big == n)) || bad+=" $((n - big)) context IDs below 2^32;"
	[ -z "$bad" ]
	check_err $? "$bad"
	log_test "64-bit context IDs on the wire are OVN's keys (tshark, $n frames)"
}

# set_encap TYPE: every chassis to ovn-encap-type TYPE; waits for the
# tunnels and for vm1 -> vm2 to answer; ENCAP_MS, the time it took.
set_encap() {
	local i t0

	t0=$(now_ms)
	for ((i = 1; i <= NCH; i++)); do
		on "$i" encap "$1" || return 1
	done
	BUSYWAIT_SLEEP=1 busywait 180000 all_tunnels "$1" >/dev/null || return 1
	nbctl --wait=hv sync || return 1
	BUSYWAIT_SLEEP=0.5 busywait 120000 ping_ok_pair 1 2 || return 1
	ENCAP_MS=$(($(now_ms) - t0))
}

ping_ok_pair() { [ "$(on "$(ch_of "$1")" ping 3 "$1" "$2")" = "$2 ok" ]; }

# set_mode virtio|virtio-mtu: every chassis's NIC with rx-gro-hw on (the
# receiver gets TSO frames whole) or off (MTU-sized segments, software GRO).
set_mode() {
	local i v=on

	[ "$1" = virtio-mtu ] && v=off
	for ((i = 1; i <= NCH; i++)); do
		on "$i" rx_lro "$v" || return 1
	done
}

# measure TUNNEL MODE REP: vm1 -> vm2, one iperf3 stream, DURATION seconds;
# CPU of guest 1 (sender) and guest 2 (receiver) around it. A BENCH line.
measure() {
	local t=$1 mode=$2 rep=$3 c0 c1 r0 r1 g s0 s1 rc n0 n1 b0 b1 t0 t1 u0 u1

	s0=$(on 2 stt_stats)
	read -r n0 b0 _ <<<"$(on 2 nic_stats)"
	read -r _ _ t0 u0 <<<"$(c_nic_stats)"
	c0=$(c_cpu)
	r0=$(on 2 cpu)
	g=$(on 1 iperf 1 2 "$DURATION")
	rc=$?
	r1=$(on 2 cpu)
	c1=$(c_cpu)
	read -r _ _ t1 u1 <<<"$(c_nic_stats)"
	read -r n1 b1 _ <<<"$(on 2 nic_stats)"
	s1=$(on 2 stt_stats)
	if [ "$rc" -ne 0 ]; then
		log_info "$t $mode rep $rep: $g"
		g=null
		MEASURE_BAD+=" $t/$mode/$rep"
	fi
	echo "BENCH $(json scenario=ovn offload="$mode" tunnel="$t" test=tcp1 \
		rep="$rep" duration="$DURATION" metric=gbps value="$g" \
		cpu_snd="$(cpu_pct "$c0" "$c1")" cpu_rcv="$(cpu_pct "$r0" "$r1")" \
		ncpu=1 tool=iperf3 pair=vm1-vm2 chassis=ch1-ch2 \
		rcv_nic_rx_packets=$((n1 - n0)) rcv_nic_rx_bytes=$((b1 - b0)) \
		snd_nic_tx_packets=$((t1 - t0)) snd_nic_tx_bytes=$((u1 - u0)) \
		rx_frames_whole="$(($(stat_of rx_frames_whole "$s1") - $(stat_of rx_frames_whole "$s0")))" \
		rx_frames_reassembled="$(($(stat_of rx_frames_reassembled "$s1") - $(stat_of rx_frames_reassembled "$s0")))" \
		ns_rx_segments="$(($(stat_of ns_rx_segments "$s1") - $(stat_of ns_rx_segments "$s0")))")"
	log_info "$(printf '%-6s %-10s rep %s: %.3f Gbit/s, CPU sender %s%%, receiver %s%%' "$t" "$mode" "$rep" "${g/null/0}" "$(cpu_pct "$c0" "$c1")" "$(cpu_pct "$r0" "$r1")")"
}

test_figures() {
	local order=() t rep cur=stt k m modes

	RET=0
	MEASURE_BAD=
	if geneve_opts_warn; then
		log_skip "vm1->vm2 (ch1->ch2) throughput and CPU, STT / Geneve" \
			"openvswitch.ko of $(uname -r) WARNs on Geneve options (FORTIFY field-spanning memcpy in ip_tunnel_info_opts_set, fixed by the options[] member of 7.x); Geneve cannot run under panic_on_warn"
		return
	fi
	on 2 iperf_srv 2 >/dev/null
	check_err $? "iperf3 server in vm2 did not start"
	# A first second of traffic, not recorded.
	on 1 iperf 1 2 1 >/dev/null
	# ABBA: stt geneve, geneve stt, stt geneve...: each encapsulation is
	# measured as often early as late, with one switch per repetition.
	for ((rep = 1; rep <= REPS; rep++)); do
		if ((rep % 2)); then order+=("stt:$rep" "geneve:$rep"); else order+=("geneve:$rep" "stt:$rep"); fi
	done
	for k in "${order[@]}"; do
		t=${k%:*}
		rep=${k#*:}
		if [ "$t" != "$cur" ]; then
			set_encap "$t"
			check_err $? "switching every chassis to $t failed"
			[ "$RET" -eq 0 ] || break
			cur=$t
			log_info "all chassis switched to $t in $ENCAP_MS ms (tunnels, --wait=hv, vm1->vm2 answers)"
			echo "BENCH-INFO $(json scenario=ovn what=encap_switch tunnel="$t" ms="$ENCAP_MS")"
			on 1 iperf 1 2 1 >/dev/null
		fi
		# Both NIC modes at each visit, in alternating order too.
		modes=$MODES
		((rep % 2)) || modes=$(tr ' ' '\n' <<<"$MODES" | tac | tr '\n' ' ')
		for m in $modes; do
			set_mode "$m"
			check_err $? "rx-gro-hw for $m could not be set"
			measure "$t" "$m" "$rep"
		done
	done
	set_mode virtio
	if [ "$cur" != stt ]; then
		set_encap stt
		check_err $? "switching back to stt failed"
	fi
	[ -z "$MEASURE_BAD" ]
	check_err $? "measurements failed:$MEASURE_BAD"
	log_test "vm1->vm2 (ch1->ch2) throughput and CPU, STT and Geneve, $REPS repetitions each, NIC modes: $MODES" \
		"figures in the BENCH lines; judged by scripts/bench/report.py"
}

# Two chassis send to the third at once (vm1 -> vm2 and vm3 -> vm5: ch1 and
# ch3 to ch2) over STT; ns_reasm_* sampled on every chassis meanwhile. The
# busiest chassis is the one that received the most STT segments. Judged:
# the table never exceeds its limit and drains (no pending frame, no
# memory) once the traffic stops.
test_reasm() {
	local i s0=() s1=() smp=() c3=$((NCH >= 3 ? 3 : 1)) pid busiest=0 most=-1 seg lim bad='' desc='' m p n

	RET=0
	on 2 iperf_srv 2 >/dev/null && on 2 iperf_srv $((NCH + 2)) >/dev/null
	check_err $? "iperf3 servers on ch2 did not start"
	# With rx-gro-hw on, every STT frame arrives whole (rx_frames_whole
	# in the figures' records): the wire's MTU-sized segments instead.
	set_mode virtio-mtu
	check_err $? "rx-gro-hw off could not be set"
	for ((i = 1; i <= NCH; i++)); do
		s0[i]=$(on "$i" stt_stats)
		on "$i" sampler_start
	done
	on "$c3" iperf "$c3" $((NCH + 2)) "$DURATION" >"/tmp/reasm-$$.out" 2>&1 &
	pid=$!
	on 1 iperf 1 2 "$DURATION" >/dev/null
	wait "$pid"
	for ((i = 1; i <= NCH; i++)); do
		smp[i]=$(on "$i" sampler_stop)
		s1[i]=$(on "$i" stt_stats)
		seg=$(($(stat_of ns_rx_segments "${s1[i]}") - $(stat_of ns_rx_segments "${s0[i]}")))
		((seg > most)) && { most=$seg; busiest=$i; }
		read -r m p n <<<"${smp[i]}"
		lim=$(stat_of ns_reasm_mem_limit "${s1[i]}")
		((m <= lim)) || bad+=" ch$i: ${m} bytes above the limit $lim;"
		desc+="ch$i: rx segments $seg, frames whole $(($(stat_of rx_frames_whole "${s1[i]}") - $(stat_of rx_frames_whole "${s0[i]}"))), reassembled $(($(stat_of rx_frames_reassembled "${s1[i]}") - $(stat_of rx_frames_reassembled "${s0[i]}"))) ($(($(stat_of ns_reasm_segments "${s1[i]}") - $(stat_of ns_reasm_segments "${s0[i]}"))) segments), reassembly memory peak ${m} B / limit $lim B, pending frames peak $p ($n samples); "
		echo "BENCH-INFO $(json scenario=ovn what=reasm offload=virtio-mtu chassis="ch$i" rx_segments="$seg" \
			frames_whole="$(($(stat_of rx_frames_whole "${s1[i]}") - $(stat_of rx_frames_whole "${s0[i]}")))" \
			frames_reassembled="$(($(stat_of rx_frames_reassembled "${s1[i]}") - $(stat_of rx_frames_reassembled "${s0[i]}")))" \
			reasm_segments="$(($(stat_of ns_reasm_segments "${s1[i]}") - $(stat_of ns_reasm_segments "${s0[i]}")))" \
			mem_peak_bytes="$m" pending_peak="$p" samples="$n" mem_limit="$lim" \
			drop_reasm_mem="$(($(stat_of ns_drop_reasm_mem "${s1[i]}") - $(stat_of ns_drop_reasm_mem "${s0[i]}")))" \
			drop_reasm_timeout="$(($(stat_of ns_drop_reasm_timeout "${s1[i]}") - $(stat_of ns_drop_reasm_timeout "${s0[i]}")))")"
	done
	log_info "fan-in ch1+ch$c3 -> ch2 over STT, NICs with rx-gro-hw off, $DURATION s: ${desc% }"
	log_info "busiest chassis: ch$busiest"
	echo "BENCH-INFO $(json scenario=ovn what=reasm_busiest offload=virtio-mtu chassis="ch$busiest" \
		mem_peak_bytes="$(cut -d' ' -f1 <<<"${smp[busiest]}")" \
		pending_peak="$(cut -d' ' -f2 <<<"${smp[busiest]}")" duration="$DURATION")"
	set_mode virtio
	sleep 3	# reasm_timeout_ms is 2000
	for ((i = 1; i <= NCH; i++)); do
		s1[i]=$(on "$i" stt_stats)
		[ "$(stat_of ns_reasm_pending_frames "${s1[i]}")" = 0 ] &&
		[ "$(stat_of ns_reasm_mem_bytes "${s1[i]}")" = 0 ] ||
			bad+=" ch$i: $(stat_of ns_reasm_pending_frames "${s1[i]}") frames / $(stat_of ns_reasm_mem_bytes "${s1[i]}") bytes still queued 3 s later;"
	done
	grep -qE '^[0-9.]+$' "/tmp/reasm-$$.out" || bad+=" vm$c3->vm$((NCH + 2)): $(head -c 200 "/tmp/reasm-$$.out");"
	rm -f "/tmp/reasm-$$.out"
	[ -z "$bad" ]
	check_err $? "$bad"
	log_test "reassembly table within its limit under fan-in, drained after" \
		"busiest ch$busiest: peak $(cut -d' ' -f1 <<<"${smp[busiest]}") B, figure not judged"
}

# During a fault of chassis C: continuous pings between chassis other than
# C (must lose nothing) and towards C (must stop, then come back).
FAULT_PINGS=()
fault_pings_start() {
	local c=$1 o1 o2 p a b

	# Between two chassis that are not C: vm o1 -> vm o2 (same switch),
	# vm o1 -> vm o2+N and back (across lr1); towards C: vm o1 -> vm C and
	# vm o2 -> vm C+N.
	o1=$(( c % NCH + 1 ))
	o2=$(( o1 % NCH + 1 ))
	FAULT_PINGS=("keep:$o1:$o2" "keep:$o1:$((o2 + NCH))"
		"keep:$((o2 + NCH)):$o1" "lose:$o1:$c" "lose:$o2:$((c + NCH))")
	for p in "${FAULT_PINGS[@]}"; do
		IFS=: read -r _ a b <<<"$p"
		on "$(ch_of "$a")" cping_start "$a-$b" "$a" "$b"
	done
}

# fault_pings_stop: FBAD gets what went wrong, FINFO the ping figures.
fault_pings_stop() {
	local p kind a b sent rcv lost gap tail

	FBAD=
	FINFO=
	for p in "${FAULT_PINGS[@]}"; do
		IFS=: read -r kind a b <<<"$p"
		read -r sent rcv lost gap tail < <(on "$(ch_of "$a")" cping_stop "$a-$b")
		FINFO+=" vm$a->vm$b: $rcv/$sent answered, $lost lost, longest gap ${gap}s, $tail in flight at the end;"
		if [ "$kind" = keep ]; then
			[ "${lost:-1}" = 0 ] && [ "${rcv:-0}" -gt 0 ] &&
			[ "${tail:-99}" -le 10 ] ||
				FBAD+=" vm$a->vm$b lost ${lost:-?} of ${sent:-?}, ${tail:-?} unanswered at the end;"
		else
			[ "${lost:-0}" -gt 0 ] || FBAD+=" vm$a->vm$b was never interrupted;"
			[ "${tail:-99}" -le 10 ] ||
				FBAD+=" vm$a->vm$b: the last $tail pings unanswered;"
		fi
	done
}

# down_checks C: pairs with a VM on C do not answer, the others do.
down_checks() {
	local c=$1 bad=

	ping_check 3 "$(pairs_with "$c")"
	[ -z "$GOOD" ] || bad+=" pairs with ch$c still answering:$GOOD;"
	ping_check 10 "$(pairs_without "$c")"
	[ -z "$BAD" ] || bad+=" broken without ch$c:$BAD;"
	DBAD=$bad
}

# restored_checks C: every pair answers again; transfers with C's VMs.
restored_checks() {
	local c=$1 bad=

	ping_check 10 "$(pairs_all)"
	[ -z "$BAD" ] || bad+=" no answer:$BAD;"
	xfer_pairs "$(pairs_with "$c")"
	[ -z "$XBAD" ] || bad+=" transfers not intact:$XBAD;"
	all_tunnels stt || bad+=" STT tunnels not all back;"
	RBAD=$bad
}

# fault_end C: once C's traffic is back, the verdict: the pings of the
# fault (kept running 2 s more) and restored_checks.
fault_end() {
	sleep 2
	fault_pings_stop
	log_info "during the fault:$FINFO"
	[ -z "$FBAD" ]
	check_err $? "$FBAD"
	restored_checks "$1"
	[ -z "$RBAD" ]
	check_err $? "$RBAD"
}

test_vswitchd_restart() {
	local c=$NCH t0 ms

	RET=0
	fault_pings_start "$c"
	sleep 2
	on "$c" vswitchd_stop
	check_err $? "ch$c's vswitchd did not stop"
	down_checks "$c"
	[ -z "$DBAD" ]
	check_err $? "ch$c's vswitchd down:$DBAD"
	log_test "ch$c's ovs-vswitchd stopped: only the traffic of ch$c stops"

	RET=0
	t0=$(now_ms)
	on "$c" vswitchd_start
	check_err $? "ch$c's vswitchd did not start again"
	BUSYWAIT_SLEEP=0.5 busywait 180000 ping_ok_pair 1 "$c"
	check_err $? "vm1->vm$c does not answer 180 s after the restart"
	ms=$(($(now_ms) - t0))
	fault_end "$c"
	echo "BENCH-INFO $(json scenario=ovn what=vswitchd_restart chassis="ch$c" restored_ms="$ms")"
	log_test "ch$c's ovs-vswitchd restarted: all traffic back, none lost elsewhere" \
		"vm1->vm$c again after $((ms / 1000)) s"
}

test_guest_reboot() {
	local c=$NCH t0 t1 ms out

	RET=0
	if [ -z "${STT_NET_CTL:-}" ] || ! ctl ping >/dev/null; then
		log_skip "guest $c killed and booted again" "no vm-net control channel"
		return
	fi
	fault_pings_start "$c"
	sleep 2
	out=$(ctl kill "$c")
	check_err $? "vm-net-ctl could not kill guest $c: $out"
	log_info "$out"
	down_checks "$c"
	[ -z "$DBAD" ]
	check_err $? "guest $c down:$DBAD"
	[ -n "$(sbctl --bare --columns=name find chassis name="ch$c")" ]
	check_err $? "ch$c vanished from the southbound database"
	log_test "guest $c killed: only the traffic of ch$c stops"

	RET=0
	t0=$(now_ms)
	out=$(ctl boot "$c")
	check_err $? "vm-net-ctl could not boot guest $c: $out"
	BUSYWAIT_SLEEP=2 busywait 900000 agent_up "$c"
	check_err $? "guest $c's agent not back within 900 s"
	t1=$(now_ms)
	# The guest comes back empty (tmpfs root): provision it as at the start.
	on "$c" chassis_up stt >/dev/null && on "$c" vms_up >/dev/null &&
		on "$c" ports_add >/dev/null
	check_err $? "ch$c could not be set up again"
	BUSYWAIT_SLEEP=0.5 busywait 300000 ping_ok_pair 1 "$c"
	check_err $? "vm1->vm$c does not answer 300 s after the boot"
	ms=$(($(now_ms) - t0))
	fault_end "$c"
	echo "BENCH-INFO $(json scenario=ovn what=guest_reboot chassis="ch$c" boot_ms=$((t1 - t0)) restored_ms="$ms")"
	log_test "guest $c booted and set up again: all traffic back, none lost elsewhere" \
		"booted in $(((t1 - t0) / 1000)) s, vm1->vm$c after $((ms / 1000)) s"
}

test_teardown() {
	local i out bad=

	RET=0
	for ((i = NCH; i >= 1; i--)); do
		out=$(on "$i" teardown | tail -n 1)
		[ "$out" = "stt_devices=0 vport_users=0" ] || bad+=" ch$i: $out;"
	done
	TORN=1
	[ -z "$bad" ]
	check_err $? "$bad"
	log_test "teardown: no STT device, vport_stt unused, on every chassis"
}

# ---- roles -----------------------------------------------------------------

# shellcheck disable=SC2329 # lib.sh's EXIT trap calls it
cleanup() {
	local i

	[ -n "${DRIVER:-}" ] || return 0	# not in "call" mode
	if [ -z "${TORN:-}" ]; then
		for ((i = NCH; i >= 1; i--)); do
			on "$i" teardown >/dev/null 2>&1
		done
	fi
	central_down
	for ((i = 2; i <= NCH; i++)); do
		agent_quit "$i"
	done
}

setup_all() {
	local i t0 t1 t2 pids=()

	central_up || { say "central databases did not start"; return 1; }
	on 1 chassis_up stt || { say "ch1 did not start"; return 1; }
	for ((i = 2; i <= NCH; i++)); do
		BUSYWAIT_SLEEP=2 busywait 900000 agent_up "$i" ||
			{ say "guest $i's agent never answered"; return 1; }
		on "$i" chassis_up stt || { say "ch$i did not start"; return 1; }
	done
	ovn_logical_up || { say "logical network setup failed"; return 1; }
	for ((i = 1; i <= NCH; i++)); do
		on "$i" vms_up || { say "ch$i: VM namespaces failed"; return 1; }
	done
	BUSYWAIT_SLEEP=1 busywait 180000 all_tunnels stt >/dev/null
	t0=$(now_ms)
	for ((i = 1; i <= NCH; i++)); do
		on "$i" ports_add &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || { say "adding ports failed"; return 1; }
	done
	BUSYWAIT_SLEEP=0.2 busywait 300000 all_bound ||
		{ say "ports not bound: $(sbctl --columns=logical_port,chassis list port_binding | tr '\n' ' ')"; return 1; }
	t1=$(now_ms)
	nbctl --wait=hv sync || return 1
	t2=$(now_ms)
	CONVERGE="$((t2 - t1)) ms after the last port bound ($((t1 - t0)) ms from adding the ports to all bound; $((t2 - t0)) ms in all)"
	echo "BENCH-INFO $(json scenario=ovn what=converge chassis="$NCH" ports="$NVM" \
		bind_ms=$((t1 - t0)) converge_ms=$((t2 - t1)) total_ms=$((t2 - t0)))"
}

driver() {
	local t_setup

	DRIVER=1
	t_setup=$(date +%s)
	say "guest 1: central databases, northd, ch1; waiting for $((NCH - 1)) more chassis"
	if ! setup_all; then
		tail -n 5 "$D"/ovs/ovn-controller.log "$D"/cen/northd.log 2>/dev/null
		echo "TEST: $(printf '%-60s' "OVN over $NCH guests set up")  [FAIL]"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
	if [ -n "${OVN_VERBOSE:-}" ]; then
		echo "---- ovn-nbctl show"; nbctl show
		echo "---- ovn-sbctl show"; sbctl show
		echo "---- ch1: ovs-vsctl show"; vsctl show
		echo "---- ch1: ip -d link show $STTDEV"; ip -d link show "$STTDEV"
		echo "----"
	fi
	log_info "$NCH chassis on $NCH guests, $NVM VMs: set up in $(($(date +%s) - t_setup)) s; converged $CONVERGE"
	tests_run
	echo "$TESTS_OK passed, $TESTS_FAIL failed, $TESTS_SKIP skipped"
	tests_exit
}

chassis() {
	local pid

	say "guest $IDX (boot ${STT_NET_BOOT:-1}): chassis ch$IDX, agent on :$AGENT_PORT"
	python3 "$REPO/scripts/vm/net-agent.py" --port "$AGENT_PORT" \
		</dev/null >"$D/agent.log" 2>&1 &
	pid=$!
	# The driver says quit when done; the timeout covers a driver that died.
	timeout "${OVN_HOSTS_WAIT:-7200}" tail --pid="$pid" -f /dev/null
	kill "$pid" 2>/dev/null
	c_teardown >/dev/null 2>&1
	say "guest $IDX: done"
}

case ${1:-} in
call)
	shift
	f=${1:-}
	shift
	declare -F "c_$f" >/dev/null || { echo "no function c_$f"; exit 2; }
	"c_$f" "$@"
	exit
	;;
'')
	if [ -z "$IDX" ] || [ "$NCH" -lt 2 ] || [ -z "${STT_NET_MTU:-}" ]; then
		echo "ovn-hosts-guest: run it through scripts/vm/net.sh (STT_NET_*)"
		exit 2
	fi
	for c in ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-appctl \
		 ovn-northd ovn-controller ovn-nbctl ovn-sbctl iperf3 jq ethtool; do
		require_command "$c"
	done
	[ -d /sys/module/vport_stt ] || { echo "SKIP: vport-stt.ko is not loaded"; exit 4; }
	mkdir -p "$D"
	c_nic_up || exit 1
	if [ "$IDX" = 1 ]; then
		driver
	else
		chassis
	fi
	;;
*)
	echo "usage: ovn-hosts-guest [call FUNC ARGS...]" >&2
	exit 2
	;;
esac
