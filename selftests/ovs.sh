#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Open vSwitch with type=stt ports on the kernel datapath (vport-stt.ko),
# talking to plain "ip link ... type stt" devices, in the manner of OVS's
# own system tests: a private ovsdb-server and ovs-vswitchd (run, db and
# log directories in a temporary directory), datapath system@ovs-system.
#
#   +--------- ns vm1 ---------+
#   | p0 10.1.{1,2,3,4}.1/24   |
#   +-----------|--------------+
#               | veth
#   +-----------|---------- root namespace (OVS) ---------------------+
#   |  br0: ovs-p0, stt0 (type=stt), stt7 (type=stt, dst_port=7472)  |
#   |  ul0 172.31.1.100/24 fc00::100/64 (underlay)                    |
#   +-----------|-----------------------------------------------------+
#               | veth
#   +-----------|---------------- ns far -----------------------------+
#   |  ul 172.31.1.1/24 fc00::1/64                                    |
#   |  stt1 key K1 10.1.1.2     stt2 key K2 10.1.2.2   (IPv4, 7471)   |
#   |  stt3 key 7 10.1.3.2 (dstport 7472)  stt4 key 6 10.1.4.2 (IPv6) |
#   +-----------------------------------------------------------------+
#
# vport-stt.ko is loaded and unloaded here (insmod from the module
# directory) so that adding a port can first be seen failing without it.
# Run in the VM:  scripts/vm/run.sh --modules stt.ko -- selftests/ovs.sh
# (if the runner loaded vport-stt.ko too, it is reloaded before exiting).

SELFDIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$SELFDIR/.." && pwd)
MODDIR=${STT_MODULE_DIR:-$REPO}
# shellcheck source=selftests/lib.sh
source "$SELFDIR/lib.sh"

ALL_TESTS="
	test_no_module
	test_add_port
	test_ping_fixed
	test_tcp
	test_tos_ttl_df
	test_ipfix_egress
	test_key_flow
	test_dst_port
	test_restart
	test_remove
	test_log
"

K1=0xfedcba9876543210		# above 2^32, top bit set
K1_DEC=18364758544493064720
K2=0x2a
DSCP_RULE=(pref 100 tos 0x10 lookup 100)	# test_ipfix_egress
OVS_LOG=

skip_all() {
	echo "SKIP: $*"
	exit $ksft_skip
}

require_root
for c in ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-ofctl \
	 ovs-appctl ip python3 sha256sum jq; do
	require_command "$c"
done
[ -f "$MODDIR/vport-stt.ko" ] ||
	skip_all "no $MODDIR/vport-stt.ko: not built (make module), or not for this kernel (it is built only against the kernel's own net/openvswitch headers, from linux-source of its version, and 7.3's openvswitch.ko exports no vport API; make says which)"
[ -f "$REPO/tools/iproute2/link_stt.so" ] ||
	skip_all "no tools/iproute2/link_stt.so (make plugin)"
export IP_LIB_DIR=$REPO/tools/iproute2

T=$(mktemp -d /tmp/stt-ovs.XXXXXX)
export OVS_RUNDIR=$T/run OVS_DBDIR=$T/db OVS_LOGDIR=$T/log
export OVS_SYSCONFDIR=$T/etc OVS_PKGDATADIR=/usr/share/openvswitch
mkdir -p "$OVS_RUNDIR" "$OVS_DBDIR" "$OVS_LOGDIR" "$OVS_SYSCONFDIR"

modloaded() {
	grep -q "^$1 " /proc/modules
}

# Modules present before the test, restored on exit.
had_vport=
modloaded vport_stt && had_vport=1
had_ovs=
modloaded openvswitch && had_ovs=1
had_vxlan=1
our_stt=

vsctl() {
	ovs-vsctl --timeout=20 -vtimeval:console:off "$@"
}

ofctl() {
	ovs-ofctl "$@"
}

appctl() {
	ovs-appctl --timeout=20 "$@"
}

vm1() {
	ip netns exec "$VM1" "$@"
}

far() {
	ip netns exec "$FAR" "$@"
}

start_vswitchd() { ovs_vswitchd_start "$T/stderr"; }

stop_vswitchd() {
	[ -f "$OVS_RUNDIR/ovs-vswitchd.pid" ] || return 0
	appctl -t ovs-vswitchd exit "$@" 2>/dev/null
	busywait 10000 test ! -e "$OVS_RUNDIR/ovs-vswitchd.pid"
}

start_ovs() {
	ovsdb-tool create "$OVS_DBDIR/conf.db" \
		"$OVS_PKGDATADIR/vswitch.ovsschema" || return 1
	ovsdb-server --detach --no-chdir --pidfile --log-file \
		--remote="punix:$OVS_RUNDIR/db.sock" \
		-vconsole:off -vsyslog:off "$OVS_DBDIR/conf.db" \
		2>>"$T/stderr" || return 1
	vsctl --no-wait init || return 1
	vsctl --no-wait set Open_vSwitch . other_config:max-idle=5000 ||
		return 1
	start_vswitchd
}

cleanup() {
	set +e
	if [ -f "$OVS_RUNDIR/ovs-vswitchd.pid" ]; then
		vsctl --if-exists del-br br0 2>/dev/null
		stop_vswitchd --cleanup
	fi
	if [ -f "$OVS_RUNDIR/ovsdb-server.pid" ]; then
		appctl -t ovsdb-server exit 2>/dev/null
		busywait 5000 test ! -e "$OVS_RUNDIR/ovsdb-server.pid"
	fi
	ip rule del "${DSCP_RULE[@]}" 2>/dev/null
	ip link del ul0 2>/dev/null
	ip link del ovs-p0 2>/dev/null
	cleanup_all_ns
	if modloaded openvswitch; then
		ip link del ovs-system 2>/dev/null
		ovs-dpctl del-dp system@ovs-system 2>/dev/null
	fi
	[ -z "$had_vxlan" ] && modprobe -r vport_vxlan 2>/dev/null
	modloaded vport_stt && [ -z "$had_vport" ] && rmmod vport_stt
	[ -n "$had_vport" ] && ! modloaded vport_stt &&
		insmod "$MODDIR/vport-stt.ko"
	[ -z "$had_ovs" ] && [ -z "$had_vport" ] &&
		modprobe -r openvswitch 2>/dev/null
	[ -n "$our_stt" ] && rmmod stt
	rm -rf "$T"
}

# ---- setup -----------------------------------------------------------------

if ! modloaded stt; then
	insmod "$MODDIR/stt.ko" || skip_all "cannot load stt.ko"
	our_stt=1
fi
modprobe openvswitch || skip_all "cannot load openvswitch.ko"
# The negative test needs the type unregistered.
if modloaded vport_stt && ! rmmod vport_stt; then
	skip_all "vport-stt is in use"
fi

# cleanup() runs at exit (lib.sh's trap).
setup_ns VM1 FAR || exit 1

setup_net() {
	ip link add ovs-p0 type veth peer name p0 netns "$VM1" &&
	ip link set ovs-p0 up &&
	vm1 ip link set lo up &&
	vm1 sysctl -qw net.ipv6.conf.p0.disable_ipv6=1 &&
	vm1 ip link set p0 up &&
	vm1 ip addr add 10.1.1.1/24 dev p0 &&
	vm1 ip addr add 10.1.2.1/24 dev p0 &&
	vm1 ip addr add 10.1.3.1/24 dev p0 &&
	vm1 ip addr add 10.1.4.1/24 dev p0 &&
	ip link add ul0 type veth peer name ul netns "$FAR" &&
	ip addr add 172.31.1.100/24 dev ul0 &&
	ip addr add fc00::100/64 dev ul0 nodad &&
	ip link set ul0 up &&
	far ip link set lo up &&
	far ip addr add 172.31.1.1/24 dev ul &&
	far ip addr add fc00::1/64 dev ul nodad &&
	far ip link set ul up &&
	far_dev stt1 10.1.1.2/24 key "$K1_DEC" remote 172.31.1.100 \
		local 172.31.1.1 &&
	far_dev stt2 10.1.2.2/24 key $((K2)) remote 172.31.1.100 \
		local 172.31.1.1 &&
	far_dev stt3 10.1.3.2/24 key 7 remote 172.31.1.100 \
		local 172.31.1.1 dstport 7472 &&
	far_dev stt4 10.1.4.2/24 key 6 remote fc00::100 local fc00::1
}

# far_dev NAME ADDR STT-OPTIONS...: a classic STT device in the far netns.
far_dev() {
	local name=$1 addr=$2

	shift 2
	# No IPv6 autoconfiguration: router solicitations with keys that
	# no OVS port expects would only make vswitchd log warnings.
	far ip link add "$name" type stt "$@" &&
	far sysctl -qw "net.ipv6.conf.$name.disable_ipv6=1" &&
	far ip addr add "$addr" dev "$name" &&
	far ip link set "$name" up
}

# Permanent neighbours across the tunnels: no ARP (and no neighbour probe
# racing with a port removal) once the test runs.
static_neigh() {
	local n p0mac

	p0mac=$(vm1 cat /sys/class/net/p0/address) || return 1
	for n in 1 2 3 4; do
		far ip neigh replace "10.1.$n.1" lladdr "$p0mac" dev "stt$n" \
			nud permanent || return 1
		vm1 ip neigh replace "10.1.$n.2" dev p0 nud permanent \
			lladdr "$(far cat "/sys/class/net/stt$n/address")" ||
			return 1
	done
}

{ setup_net && static_neigh; } ||
	{ echo "SKIP: network setup failed"; exit $ksft_skip; }
start_ovs || { echo "FAIL: cannot start Open vSwitch"; exit 1; }
{ vsctl add-br br0 -- set bridge br0 datapath_type=system &&
	vsctl add-port br0 ovs-p0; } || { echo "FAIL: cannot make br0"; exit 1; }

# ---- tests -----------------------------------------------------------------

iface_error() {
	vsctl get interface "$1" error 2>/dev/null
}

iface_has_error() {
	[ "$(iface_error "$1")" != "[]" ]
}

iface_ok() {
	local ofport

	ofport=$(vsctl get interface "$1" ofport 2>/dev/null)
	[ "$(iface_error "$1")" = "[]" ] && [ -n "$ofport" ] &&
		[ "$ofport" -gt 0 ] 2>/dev/null
}

ifindex() {
	cat "/sys/class/net/$1/ifindex" 2>/dev/null
}

dev_gone() {
	[ ! -e "/sys/class/net/$1" ]
}

# ping_ok NS-CMD DST: one warm-up (upcalls, ARP), then three must answer.
ping_ok() {
	local ns=$1 dst=$2

	$ns ping -q -c 1 -W 5 "$dst" >/dev/null
	$ns ping -q -c 3 -i 0.3 -W 3 "$dst" >/dev/null
}

# Datapath flows that came in through a tunnel port outlive the port, and
# revalidating them then logs "receive tunnel port not found" (OVS does
# this for every tunnel type).  Traffic has stopped: let them expire
# (max-idle is 5 s here) before a tunnel port goes.
no_dp_flows() {
	[ -z "$(appctl dpctl/dump-flows 2>/dev/null)" ]
}

flush_flows() {
	busywait 30000 no_dp_flows
}

test_no_module() {
	local err

	RET=0
	if modprobe -n -q vport-type-106 2>/dev/null; then
		log_skip "OVS: type=stt fails without vport-stt.ko" \
			"vport-type-106 is installed: the datapath would load it"
		return
	fi
	vsctl add-port br0 stt0 -- set interface stt0 type=stt \
		options:remote_ip=172.31.1.1 options:key="$K1_DEC" 2>/dev/null
	busywait 30000 iface_has_error stt0
	check_err $? "no error in the Interface table"
	err=$(iface_error stt0)
	[[ $err == *"Address family not supported"* ]]
	check_err $? "error column: $err"
	dev_gone stt_sys_7471
	check_err $? "stt_sys_7471 exists"
	modloaded vport_stt
	check_fail $? "vport_stt got loaded"
	vsctl del-port br0 stt0
	log_info "Interface stt0 error: $err"
	log_test "OVS: type=stt fails without vport-stt.ko"
}

test_add_port() {
	local link

	RET=0
	insmod "$MODDIR/vport-stt.ko"
	check_err $? "insmod vport-stt.ko failed"
	# Only what happens from now on must leave the log clean.
	OVS_LOG=$(wc -l <"$OVS_LOGDIR/ovs-vswitchd.log")
	vsctl add-port br0 stt0 -- set interface stt0 type=stt \
		options:remote_ip=172.31.1.1 options:key="$K1_DEC"
	check_err $? "add-port failed"
	busywait 30000 iface_ok stt0
	check_err $? "stt0: error $(iface_error stt0)"
	link=$(ip -d link show stt_sys_7471 2>&1)
	check_err $? "no kernel device stt_sys_7471"
	[[ $link == *"master ovs-system"* && $link == *",UP,"* ]]
	check_err $? "stt_sys_7471 not up in the datapath: $link"
	[[ $link == *"external"* ]]
	check_err $? "stt_sys_7471 not external: $link"
	[[ $link == *"dstport 7471"* ]]
	check_err $? "stt_sys_7471 not on port 7471: $link"
	log_test "OVS: add type=stt port (datapath port stt_sys_7471)"
}

test_ping_fixed() {
	RET=0
	ping_ok vm1 10.1.1.2
	check_err $? "vm1 -> far"
	ping_ok far 10.1.1.1
	check_err $? "far -> vm1"
	log_test "OVS: ping both ways, fixed key $K1"
}

test_tcp() {
	RET=0
	xfer_once "$FAR" "$VM1" $((4 << 20)) 10.1.1.2
	check_err $? "vm1 -> far: $XFER_INFO"
	xfer_once "$VM1" "$FAR" $((4 << 20)) 10.1.1.1
	check_err $? "far -> vm1: $XFER_INFO"
	log_test "OVS: TCP 4 MiB both ways, SHA-256 matches"
}

# The outer header as the far end receives it.
outer_header() {
	capture_start "$FAR" ul "$T/cap" 'ip and tcp dst port 7471'
	vm1 ping -q -c 2 -i 0.3 -W 2 10.1.1.2 >/dev/null
	capture_stop
	tcpdump -n -v -r "$T/cap" 2>/dev/null | head -n 1
}

test_tos_ttl_df() {
	local hdr

	RET=0
	if ! command -v tcpdump >/dev/null; then
		log_skip "OVS: options tos, ttl, df_default" "no tcpdump"
		return
	fi
	vsctl set interface stt0 options:tos=0x28 options:ttl=33 \
		options:df_default=false
	hdr=$(outer_header)
	[[ $hdr == *"tos 0x28,"* && $hdr == *"ttl 33,"* &&
	   $hdr != *"[DF]"* ]]
	check_err $? "tos=0x28 ttl=33 df_default=false: $hdr"
	vsctl remove interface stt0 options tos ttl df_default
	hdr=$(outer_header)
	[[ $hdr == *"tos 0x0,"* && $hdr == *"ttl 64,"* &&
	   $hdr == *"[DF]"* ]]
	check_err $? "defaults (tos 0, ttl 64, DF): $hdr"
	log_test "OVS: options tos, ttl, df_default reach the outer header"
}

# OVS asks the tunnel device where a packet will leave from
# (ndo_fill_metadata_dst) when it samples one that goes out of a tunnel
# port to IPFIX: the exported tunnel source address and port must be
# those of the packet itself. Here a rule picks the underlay source by
# DSCP (tos 0x10: table 100, source 172.31.1.200) and the inner packets
# are ECN-capable, which OVS copies into the key (tos 0x12). Both
# lookups share the key's route cache: a wrong answer here sends the
# packet wrong too (tried: a lookup without the tos sent both from
# 172.31.1.100). The far end drops these packets (its stt1 expects
# 172.31.1.100); only what leaves matters. IPv4 only: OVS's IPFIX tunnel
# record has IPv4 address fields only (ofproto-dpif-ipfix.c).
test_ipfix_egress() {
	local desc="OVS: IPFIX egress tunnel info is the packet's own source (DSCP rule, ECN inner)"
	local port=4739 rec line src sport want='172.31.1.200'

	RET=0
	if ! command -v tcpdump >/dev/null; then
		log_skip "$desc" "no tcpdump"
		return
	fi
	ip addr add "$want/24" dev ul0 &&
		ip route add 172.31.1.1/32 dev ul0 src "$want" table 100 &&
		ip rule add "${DSCP_RULE[@]}"
	check_err $? "cannot set up the DSCP rule"

	# The collector first: OVS sends its templates with its first
	# export only (and then every 10 minutes).
	rm -f "$T/ipfix" "$T/ipfix.err"
	"$PY" "$SELFDIR/stt_ipfix.py" --port "$port" --timeout 60 \
		>"$T/ipfix" 2>"$T/ipfix.err" &
	local collector=$!
	capture_start "$FAR" ul "$T/cap" 'ip and tcp dst port 7471' &&
		busywait 15000 grep -q 'listening' "$T/ipfix.err"
	check_err $? "collector or capture did not start"
	vsctl set interface stt0 options:tos=0x10 -- set bridge br0 \
		ipfix=@i -- --id=@i create IPFIX \
		"targets=\"127.0.0.1:$port\"" sampling=1 \
		other_config:enable-tunnel-sampling=true >/dev/null
	check_err $? "cannot turn IPFIX on"
	# No datapath flow of an earlier test (made without tos or IPFIX).
	appctl revalidator/purge
	# -Q 2: ECT(0), as from an ECN-capable TCP.
	vm1 ping -q -c 3 -i 0.3 -W 1 -Q 2 10.1.1.2 >/dev/null
	busywait 15000 test -s "$T/ipfix"
	check_err $? "no IPFIX record with a tunnel: $(cat "$T/ipfix.err")"
	# The exporter first: it would log every message it cannot send.
	vsctl clear bridge br0 ipfix -- remove interface stt0 options tos
	kill "$collector" 2>/dev/null
	capture_stop
	rec=$(head -n 1 "$T/ipfix")
	line=$(tcpdump -n -r "$T/cap" 2>/dev/null | head -n 1)
	# "IP 172.31.1.200.40000 > 172.31.1.1.7471: Flags ..."
	[[ $line =~ IP\ ([0-9.]+)\.([0-9]+)\ \> ]]
	check_err $? "no outer packet captured: $line"
	src=${BASH_REMATCH[1]} sport=${BASH_REMATCH[2]}
	[[ $src == "$want" ]]
	check_err $? "the packet left from $src, not $want: the rule did not apply"
	jq -e --arg s "$src" --argjson p "${sport:-0}" \
		'.src == $s and .sport == $p and .dport == 7471' \
		<<<"${rec:-null}" >/dev/null
	check_err $? "IPFIX says $rec, the packet came from $src port $sport"

	ip rule del "${DSCP_RULE[@]}"
	ip route flush table 100
	ip addr del "$want/24" dev ul0
	log_info "IPFIX: $rec; packet: $src port $sport"
	log_test "$desc"
}

test_key_flow() {
	local flows

	RET=0
	vsctl set interface stt0 options:remote_ip=flow options:key=flow
	check_err $? "cannot set key=flow"
	ofctl del-flows br0
	ofctl add-flows br0 - <<-EOF
	priority=100,ip,in_port=ovs-p0,nw_dst=10.1.1.0/24,actions=set_field:$K1->tun_id,set_field:172.31.1.1->tun_dst,output:stt0
	priority=100,arp,in_port=ovs-p0,arp_tpa=10.1.1.0/24,actions=set_field:$K1->tun_id,set_field:172.31.1.1->tun_dst,output:stt0
	priority=100,ip,in_port=ovs-p0,nw_dst=10.1.2.0/24,actions=set_field:$K2->tun_id,set_field:172.31.1.1->tun_dst,output:stt0
	priority=100,arp,in_port=ovs-p0,arp_tpa=10.1.2.0/24,actions=set_field:$K2->tun_id,set_field:172.31.1.1->tun_dst,output:stt0
	priority=100,ip,in_port=ovs-p0,nw_dst=10.1.4.0/24,actions=set_field:6->tun_id,set_field:fc00::1->tun_ipv6_dst,output:stt0
	priority=100,arp,in_port=ovs-p0,arp_tpa=10.1.4.0/24,actions=set_field:6->tun_id,set_field:fc00::1->tun_ipv6_dst,output:stt0
	priority=100,in_port=stt0,tun_id=$K1,actions=output:ovs-p0
	priority=100,in_port=stt0,tun_id=$K2,actions=output:ovs-p0
	priority=100,in_port=stt0,tun_id=6,actions=output:ovs-p0
	priority=0,actions=drop
	EOF
	check_err $? "cannot add flows"
	busywait 30000 iface_ok stt0
	check_err $? "stt0: error $(iface_error stt0)"

	ping_ok vm1 10.1.1.2
	check_err $? "key $K1: vm1 -> far stt1"
	ping_ok vm1 10.1.2.2
	check_err $? "key $K2: vm1 -> far stt2"
	# Datapath flows idle out after 5 s: dump after each exchange.
	flows=$(appctl dpctl/dump-flows)
	ping_ok far 10.1.1.1
	check_err $? "key $K1: far stt1 -> vm1"
	flows+=$'\n'$(appctl dpctl/dump-flows)
	grep -q "tunnel(tun_id=$K1,src=172.31.1.1,dst=172.31.1.100," <<<"$flows"
	check_err $? "no received flow with tun_id=$K1: $flows"
	grep -q "tunnel(tun_id=$K2,src=172.31.1.1,dst=172.31.1.100," <<<"$flows"
	check_err $? "no received flow with tun_id=$K2: $flows"
	grep -q "set(tunnel(tun_id=$K1,dst=172.31.1.1," <<<"$flows"
	check_err $? "no sent flow with tun_id=$K1: $flows"
	grep -q "set(tunnel(tun_id=$K2,dst=172.31.1.1," <<<"$flows"
	check_err $? "no sent flow with tun_id=$K2: $flows"
	log_test "OVS: key=flow, tun_id $K1 and $K2 reach two devices"

	RET=0
	ping_ok vm1 10.1.4.2
	check_err $? "IPv6 underlay: vm1 -> far stt4"
	ping_ok far 10.1.4.1
	check_err $? "IPv6 underlay: far stt4 -> vm1"
	flows=$(appctl dpctl/dump-flows)
	grep -q "tunnel(tun_id=0x6,ipv6_src=fc00::1,ipv6_dst=fc00::100," <<<"$flows"
	check_err $? "no received IPv6 flow with tun_id=0x6: $flows"
	log_test "OVS: key=flow, remote_ip=flow over an IPv6 underlay"
}

test_dst_port() {
	local out

	RET=0
	vsctl add-port br0 stt7 -- set interface stt7 type=stt \
		options:remote_ip=172.31.1.1 options:key=7 options:dst_port=7472
	check_err $? "add-port failed"
	busywait 30000 iface_ok stt7
	check_err $? "stt7: error $(iface_error stt7)"
	out=$(ip -d link show stt_sys_7472 2>&1)
	[[ $out == *"dstport 7472"* ]]
	check_err $? "stt_sys_7472: $out"
	out=$(appctl dpctl/show)
	[[ $out == *"stt_sys_7472 (stt: dst_port=7472"* ]]
	check_err $? "dpctl/show: $out"
	ofctl add-flows br0 - <<-EOF
	priority=100,ip,in_port=ovs-p0,nw_dst=10.1.3.0/24,actions=output:stt7
	priority=100,arp,in_port=ovs-p0,arp_tpa=10.1.3.0/24,actions=output:stt7
	priority=100,in_port=stt7,actions=output:ovs-p0
	EOF
	ping_ok vm1 10.1.3.2
	check_err $? "vm1 -> far stt3 (port 7472)"
	ping_ok far 10.1.3.1
	check_err $? "far stt3 -> vm1 (port 7472)"
	flush_flows
	vsctl del-port br0 stt7
	busywait 10000 dev_gone stt_sys_7472
	check_err $? "stt_sys_7472 still exists after del-port"
	log_test "OVS: options:dst_port=7472"
}

# Open vSwitch deletes the datapath ports of tunnels on start-up and adds
# them again (they are named after the port, not the interface): a VXLAN
# port next to the STT port shows what the stock vports do.
test_restart() {
	local stt0 stt1 vx0 vx1 vxlan=1

	RET=0
	vsctl set interface stt0 options:remote_ip=172.31.1.1 \
		options:key="$K1_DEC"
	ofctl del-flows br0
	ofctl add-flow br0 actions=NORMAL
	modloaded vport_vxlan || had_vxlan=
	vsctl add-port br0 vx0 -- set interface vx0 type=vxlan \
		options:remote_ip=172.31.1.1 options:key=5 &&
		busywait 30000 iface_ok vx0 || vxlan=
	busywait 30000 iface_ok stt0
	check_err $? "stt0: error $(iface_error stt0)"
	stt0=$(ifindex stt_sys_7471)
	vx0=$(ifindex vxlan_sys_4789)
	flush_flows
	stop_vswitchd
	check_err $? "vswitchd did not exit"
	start_vswitchd
	check_err $? "vswitchd did not start"
	busywait 30000 iface_ok stt0
	check_err $? "stt0 after restart: $(iface_error stt0)"
	stt1=$(ifindex stt_sys_7471)
	[ -n "$stt1" ]
	check_err $? "no stt_sys_7471 after restart"
	if [ -n "$vxlan" ]; then
		busywait 30000 iface_ok vx0
		vx1=$(ifindex vxlan_sys_4789)
		[ "$((stt0 == stt1))" = "$((vx0 == vx1))" ]
		check_err $? "stt ifindex $stt0 -> $stt1, vxlan $vx0 -> $vx1"
		vsctl del-port br0 vx0
	fi
	ping_ok vm1 10.1.1.2
	check_err $? "vm1 -> far after restart"
	log_test "OVS: vswitchd restart brings the port back (as VXLAN's)"
}

test_remove() {
	RET=0
	rmmod vport_stt 2>/dev/null
	check_fail $? "vport-stt unloaded while ports use it"
	flush_flows
	vsctl del-port br0 stt0
	check_err $? "del-port stt0 failed"
	busywait 10000 dev_gone stt_sys_7471
	check_err $? "stt_sys_7471 still exists after del-port"
	log_test "OVS: del-port removes the kernel device"

	RET=0
	vsctl del-br br0
	check_err $? "del-br failed"
	busywait 10000 dev_gone br0
	rmmod vport_stt
	check_err $? "rmmod vport-stt failed"
	log_test "OVS: rmmod vport-stt after the bridge is gone"
}

test_log() {
	local bad

	RET=0
	bad=$(ovs_log_problems "$OVS_LOGDIR/ovs-vswitchd.log" "$((OVS_LOG + 1))")
	[ -z "$bad" ]
	check_err $? "$bad"
	log_test "OVS: no warnings or errors in ovs-vswitchd.log" \
		"$(grep -c "'stt' port type is deprecated" "$OVS_LOGDIR/ovs-vswitchd.log") deprecation notices"
}

tests_run
tests_exit
