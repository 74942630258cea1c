#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# OVN over STT: three chassis, each a network namespace with its own
# ovsdb-server, ovs-vswitchd (kernel datapath) and ovn-controller with
# ovn-encap-type=stt, joined by an underlay bridge; a central namespace runs
# the northbound and southbound databases and ovn-northd. Debian's OVN
# 23.03 and Open vSwitch 3.1, openvswitch.ko, vport-stt.ko.
#
#   +-- ns cen ---------------+   NB/SB ovsdb-server (SB on tcp:6642), northd
#   | ul 172.31.0.254         |
#   +-----------|-------------+
#   +-----------|------------------ ns ul: bridge br0 (MTU 1600) ----------+
#   +------|-------------------------|-------------------------|-----------+
#   +-- ns ch1 (172.31.0.1) -+ +-- ns ch2 (172.31.0.2) -+ +-- ns ch3 ... -+
#   | br-int, stt tunnels    | | ovsdb, vswitchd,       | |               |
#   | to ch2 and ch3         | | ovn-controller         | |               |
#   +---|-------------|------+ +---|-------------|------+ +--|---------|--+
#      vm1          vm4           vm2          vm5          vm3       vm6
#   ls1 10.1.0.0/24: vm1 vm2 vm3   ls2 10.2.0.0/24: vm4 vm5 vm6
#   lr1 joins them (10.1.0.254, 10.2.0.254)
#
# Checks: every chassis has a type=stt key=flow tunnel to each other one
# and no other encapsulation; ping and a checksummed TCP transfer between
# every pair of VMs (same switch and across the router); the datapath's
# tunnel IDs use the upper 32 bits of the key (OVN puts the logical
# ingress port at bit 40); stopping one chassis's vswitchd breaks only the
# traffic to it, restarting restores it; teardown leaves no stt device and
# no module reference. Figures: convergence time after the last port binds
# (ovn-nbctl --wait=hv) and vm1->vm2 throughput over STT against the same
# topology with ovn-encap-type=geneve, in the same run.
#
# Run in the VM:  scripts/vm/run.sh -- selftests/ovn.sh
# make demo-ovn (scripts/demo/demo-ovn.sh) runs it alone with OVN_VERBOSE=1, which
# also shows the NB/SB views and one chassis's bridges and STT device.

SELFDIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$SELFDIR/.." && pwd)
MODDIR=${STT_MODULE_DIR:-$REPO}
# shellcheck source=selftests/lib.sh
source "$SELFDIR/lib.sh"
# shellcheck source=selftests/ovn_lib.sh
source "$SELFDIR/ovn_lib.sh"

ALL_TESTS="
	test_tunnels
	test_pings
	test_transfers
	test_tun_id
	test_logs
	test_chassis_down
	test_geneve_ratio
	test_teardown
"

PY=/usr/bin/python3
TCPX=$SELFDIR/stt_tcp.py
XPORT=5000
XBYTES=${OVN_XBYTES:-1000000}
RATE_BYTES=${OVN_RATE_BYTES:-20000000}
NCH=3					# chassis; VMs: ovn_lib.sh

skip_all() {
	echo "SKIP: $*"
	exit $ksft_skip
}

require_root
for c in ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-appctl \
	 ovn-northd ovn-controller ovn-nbctl ovn-sbctl ip python3; do
	require_command "$c"
done
[ -f "$MODDIR/vport-stt.ko" ] ||
	skip_all "no $MODDIR/vport-stt.ko: not built (make module), or not for this kernel"

T=$(mktemp -d /tmp/stt-ovn.XXXXXX)
OVS_SCHEMA=/usr/share/openvswitch/vswitch.ovsschema
NB_SCHEMA=/usr/share/ovn/ovn-nb.ovsschema
SB_SCHEMA=/usr/share/ovn/ovn-sb.ovsschema
our_stt=
our_vport=

modloaded() {
	grep -q "^$1 " /proc/modules
}

# ch I CMD...: CMD in chassis I's namespace with its OVS/OVN directories.
ch() {
	local d=$T/ch$1 ns=${CH[$1]}

	shift
	OVS_RUNDIR=$d OVS_DBDIR=$d OVS_LOGDIR=$d OVS_SYSCONFDIR=$d \
	OVN_RUNDIR=$d OVN_DBDIR=$d OVN_LOGDIR=$d OVN_SYSCONFDIR=$d \
		ip netns exec "$ns" "$@"
}

vsctl() {
	local i=$1

	shift
	ch "$i" ovs-vsctl --timeout=30 -vtimeval:console:off "$@"
}

nbctl() {
	ovn-nbctl --db="unix:$T/cen/nb.sock" --timeout=120 "$@"
}

sbctl() {
	ovn-sbctl --db="unix:$T/cen/sb.sock" --timeout=60 "$@"
}

vm() {
	local n=$1

	shift
	ip netns exec "${VM[$n]}" "$@"
}

start_vswitchd() { ovs_vswitchd_start "$T/stderr" ch "$1"; }

stop_vswitchd() {
	local i=$1

	shift
	[ -f "$T/ch$i/ovs-vswitchd.pid" ] || return 0
	ch "$i" ovs-appctl --timeout=30 -t ovs-vswitchd exit "$@" 2>/dev/null
	busywait 30000 test ! -e "$T/ch$i/ovs-vswitchd.pid"
}

# ---- setup -----------------------------------------------------------------

setup_central() {
	local d=$T/cen

	mkdir -p "$d"
	ovsdb-tool create "$d/nb.db" "$NB_SCHEMA" &&
	ovsdb-tool create "$d/sb.db" "$SB_SCHEMA" || return 1
	ip netns exec "$CEN" ovsdb-server --detach --no-chdir \
		--pidfile="$d/nb.pid" --log-file="$d/nb.log" \
		--unixctl="$d/nb.ctl" --remote="punix:$d/nb.sock" \
		-vconsole:off -vsyslog:off "$d/nb.db" 2>>"$T/stderr" &&
	ip netns exec "$CEN" ovsdb-server --detach --no-chdir \
		--pidfile="$d/sb.pid" --log-file="$d/sb.log" \
		--unixctl="$d/sb.ctl" --remote="punix:$d/sb.sock" \
		--remote=ptcp:6642:172.31.0.254 \
		-vconsole:off -vsyslog:off "$d/sb.db" 2>>"$T/stderr" &&
	ip netns exec "$CEN" ovn-northd --detach --no-chdir \
		--pidfile="$d/northd.pid" --log-file="$d/northd.log" \
		--unixctl="$d/northd.ctl" \
		--ovnnb-db="unix:$d/nb.sock" --ovnsb-db="unix:$d/sb.sock" \
		-vconsole:off -vsyslog:off 2>>"$T/stderr"
}

setup_chassis() {
	local i=$1 d=$T/ch$1

	mkdir -p "$d"
	ovsdb-tool create "$d/conf.db" "$OVS_SCHEMA" || return 1
	ch "$i" ovsdb-server --detach --no-chdir --pidfile --log-file \
		--remote="punix:$d/db.sock" -vconsole:off -vsyslog:off \
		"$d/conf.db" 2>>"$T/stderr" || return 1
	vsctl "$i" --no-wait init || return 1
	start_vswitchd "$i" || return 1
	vsctl "$i" -- set Open_vSwitch . \
		external_ids:system-id="ch$i" \
		external_ids:ovn-remote=tcp:172.31.0.254:6642 \
		external_ids:ovn-encap-type=stt \
		external_ids:ovn-encap-ip="172.31.0.$i" \
		external_ids:ovn-bridge=br-int \
		-- add-br br-int \
		-- set bridge br-int fail-mode=secure \
		   other-config:disable-in-band=true || return 1
	ch "$i" ovn-controller --detach --no-chdir --pidfile --log-file \
		-vconsole:off -vsyslog:off 2>>"$T/stderr"
}

setup_underlay() {
	local i

	ip -n "$UL" link add br0 type bridge &&
	ip -n "$UL" link set br0 up || return 1
	for i in 1 2 3 254; do
		local ns=${CH[$i]:-$CEN}

		ip -n "$UL" link add "p$i" mtu 1600 type veth peer name ul \
			mtu 1600 netns "$ns" &&
		ip -n "$UL" link set "p$i" master br0 up &&
		ip -n "$ns" addr add "172.31.0.$i/24" dev ul &&
		ip -n "$ns" link set ul up || return 1
	done
}

# The VMs' ports bind last: CONVERGE_MS is from the last binding to all
# chassis having caught up (ovn-nbctl --wait=hv).
setup_vms() {
	local n c t0 t1

	for ((n = 1; n <= 2 * NCH; n++)); do
		c=$(ch_of "$n")
		ip -n "${VM[$n]}" link add eth0 type veth peer name "vm$n-p" \
			netns "${CH[$c]}" &&
		ip -n "${VM[$n]}" link set eth0 address "$(vm_mac "$n")" &&
		ip -n "${VM[$n]}" addr add "$(vm_ip "$n")/24" dev eth0 &&
		ip -n "${VM[$n]}" link set eth0 up &&
		ip -n "${VM[$n]}" route add default via "$(vm_gw "$n")" &&
		ip -n "${CH[$c]}" link set "vm$n-p" up || return 1
	done
	t0=$(date +%s%N)
	for ((n = 1; n <= 2 * NCH; n++)); do
		vsctl "$(ch_of "$n")" add-port br-int "vm$n-p" \
			-- set interface "vm$n-p" external_ids:iface-id="vm$n" ||
			return 1
	done
	nbctl --wait=hv sync || return 1
	t1=$(date +%s%N)
	CONVERGE_MS=$(((t1 - t0) / 1000000))
}

cleanup() {
	local i

	set +e
	for i in 1 2 3; do
		[ -f "$T/ch$i/ovn-controller.pid" ] &&
			ch "$i" ovs-appctl -t ovn-controller exit 2>/dev/null
		if [ -f "$T/ch$i/ovs-vswitchd.pid" ]; then
			vsctl "$i" --if-exists del-br br-int 2>/dev/null
			stop_vswitchd "$i" --cleanup
		fi
		[ -f "$T/ch$i/ovsdb-server.pid" ] &&
			ch "$i" ovs-appctl -t ovsdb-server exit 2>/dev/null
	done
	for i in northd nb sb; do
		[ -e "$T/cen/$i.ctl" ] &&
			ovs-appctl -t "$T/cen/$i.ctl" exit 2>/dev/null
	done
	for i in "${SRV_PID[@]}"; do kill "$i" 2>/dev/null; done
	pkill -f "$TCPX --timeout 120 server $XPORT $T/" 2>/dev/null
	cleanup_all_ns
	[ -n "$our_vport" ] && modloaded vport_stt && rmmod vport_stt
	[ -n "$our_stt" ] && modloaded stt && rmmod stt
	rm -rf "$T"
}

if ! modloaded stt; then
	insmod "$MODDIR/stt.ko" || skip_all "cannot load stt.ko"
	our_stt=1
fi
modprobe openvswitch || skip_all "cannot load openvswitch.ko"
if ! modloaded vport_stt; then
	insmod "$MODDIR/vport-stt.ko" || skip_all "cannot load vport-stt.ko"
	our_vport=1
fi

# cleanup() runs at exit (lib.sh's trap).
declare -a CH VM
declare -A SRV_PID
setup_ns CEN UL C1 C2 C3 V1 V2 V3 V4 V5 V6 || skip_all "netns setup failed"
CH=(x "$C1" "$C2" "$C3")
VM=(x "$V1" "$V2" "$V3" "$V4" "$V5" "$V6")

t_setup=$(date +%s)
if ! setup_underlay || ! setup_central ||
   ! setup_chassis 1 || ! setup_chassis 2 || ! setup_chassis 3 ||
   ! ovn_logical_up || ! setup_vms; then
	cat "$T/stderr" 2>/dev/null
	tail -n 5 "$T"/ch*/ovn-controller.log "$T"/cen/northd.log 2>/dev/null
	echo "FAIL: OVN setup failed"
	exit 1
fi
if [ -n "${OVN_VERBOSE:-}" ]; then
	echo "---- ovn-nbctl show"; nbctl show
	echo "---- ovn-sbctl show"; sbctl show
	echo "---- ch1: ovs-vsctl show"; vsctl 1 show
	echo "---- ch1: ip -d link show type stt"
	ch 1 env IP_LIB_DIR="$REPO/tools/iproute2" ip -d link show type stt
	echo "----"
fi
log_info "3 chassis, 6 VMs: set up in $(($(date +%s) - t_setup)) s; converged ${CONVERGE_MS} ms after the last port bound"

# ---- tests -----------------------------------------------------------------

# tunnels_of I TYPE: "remote_ip,key" of chassis I's br-int interfaces of TYPE.
tunnels_of() {
	vsctl "$1" --bare --columns=options find interface type="$2" |
		sed -n 's/.*key=\([^ ,]*\).*remote_ip="\{0,1\}\([0-9.]*\).*/\2,\1/p' |
		sort
}

# all_tunnels TYPE: every chassis has tunnels of TYPE to the two others.
all_tunnels() {
	local i j want

	for i in 1 2 3; do
		want=
		for j in 1 2 3; do
			[ "$i" = "$j" ] || want+="172.31.0.$j,flow"$'\n'
		done
		[ "$(tunnels_of "$i" "$1")" = "${want%$'\n'}" ] || return 1
	done
}

test_tunnels() {
	local i t out

	RET=0
	BUSYWAIT_SLEEP=0.5 busywait 60000 all_tunnels stt
	check_err $? "chassis without type=stt key=flow tunnels to both others: $(for i in 1 2 3; do echo -n "ch$i: $(tunnels_of "$i" stt | tr '\n' ' ');"; done)"
	for i in 1 2 3; do
		for t in geneve vxlan gre; do
			out=$(vsctl "$i" --bare --columns=name find interface type="$t")
			[ -z "$out" ]
			check_err $? "ch$i has $t interfaces: $out"
		done
		out=$(ch "$i" ip -o link show type stt | grep -c .)
		((out == 1))
		check_err $? "ch$i: $out stt devices (want the one vport-stt made)"
	done
	log_test "every chassis has STT (key=flow) tunnels to the two others, nothing else"
}

# ping_pair A B: vm A pings vm B.
ping_pair() {
	vm "$1" ping -q -c 2 -i 0.3 -w 10 "$(vm_ip "$2")" 2>&1 |
		grep -q ' [1-9][0-9]* received'
}

test_pings() {
	local a b bad=

	RET=0
	for a in 1 2 3 4 5 6; do
		for ((b = a + 1; b <= 6; b++)); do
			ping_pair "$a" "$b" || bad+=" vm$a->vm$b"
		done
	done
	[ -z "$bad" ]
	check_err $? "no reply:$bad"
	log_test "ping between all 15 VM pairs (same switch and across lr1)"
}

# The server is started without a shell function in between, so that $!
# is its own PID, and with its output away from ours: run.sh reads this
# script's output to the end, which a leftover process holding it would
# postpone forever.
server_start() {
	: >"$T/srv-$1.out"
	ip netns exec "${VM[$1]}" "$PY" "$TCPX" --timeout 120 server "$XPORT" \
		"$T/srv-$1.out" >/dev/null 2>"$T/srv-$1.err" &
	SRV_PID[$1]=$!
	busywait 60000 test -e "$T/srv-$1.out.ready"
}

# xfer_to A BYTES B...: vm A sends BYTES to each vm B; XBAD collects
# the pairs whose server did not get the client's bytes and sha256,
# XRATE[A-B] the client's Mbit/s.
declare -A XRATE
xfer_to() {
	local a=$1 bytes=$2 out b addr laddr cb ch_ rate

	shift 2
	local addrs=()
	for b; do addrs+=("$(vm_ip "$b")"); done
	out=$(vm "$a" "$PY" "$TCPX" --timeout 120 client "$XPORT" "$bytes" \
		"${addrs[@]}" 2>&1)
	for b; do
		addr=$(vm_ip "$b")
		read -r _ laddr cb ch_ _ rate < <(grep "^$addr " <<<"$out")
		if [[ "$laddr" == error || -z "$ch_" ]] ||
		   ! grep -q "^$cb $ch_ .*$(vm_ip "$a")" "$T/srv-$b.out"; then
			XBAD+=" vm$a->vm$b"
			continue
		fi
		XRATE[$a-$b]=$rate
	done
}

test_transfers() {
	local a b n=0

	RET=0
	XBAD=
	for a in 2 3 4 5 6; do
		server_start "$a"
		check_err $? "transfer server in vm$a did not start"
	done
	for a in 1 2 3 4 5; do
		local dst=()
		for ((b = a + 1; b <= 6; b++)); do dst+=("$b"); n=$((n + 1)); done
		xfer_to "$a" "$XBYTES" "${dst[@]}"
	done
	[ -z "$XBAD" ]
	check_err $? "transfers not received intact:$XBAD"
	log_test "checksummed TCP transfers between all $n VM pairs ($XBYTES bytes each)"
}

test_tun_id() {
	local out ids big

	RET=0
	vm 1 ping -q -c 2 -i 0.2 "$(vm_ip 2)" >/dev/null 2>&1
	out=$(ch 1 ovs-appctl dpctl/dump-flows 2>&1)
	ids=$(grep -o 'tun_id=0x[0-9a-f]*' <<<"$out" | sort -u)
	big=$(grep -cE 'tun_id=0x[0-9a-f]{9,}' <<<"$ids")
	log_info "ch1 datapath tunnel IDs: $(tr '\n' ' ' <<<"$ids")"
	((big > 0))
	check_err $? "no tunnel ID above 32 bits in ch1's datapath flows"
	log_test "datapath tunnel IDs use the key's upper 32 bits"
}

test_chassis_down() {
	local bad=

	RET=0
	stop_vswitchd 3 --cleanup
	check_err $? "ch3's vswitchd did not stop"
	ping_pair 1 3 && bad+=" vm1->vm3 still answers;"
	ping_pair 4 6 && bad+=" vm4->vm6 still answers;"
	ping_pair 1 2 || bad+=" vm1->vm2 broken;"
	ping_pair 4 5 || bad+=" vm4->vm5 broken;"
	ping_pair 1 5 || bad+=" vm1->vm5 broken;"
	[ -z "$bad" ]
	check_err $? "ch3 down:$bad"
	log_test "ch3's vswitchd stopped: only the traffic to ch3 breaks"

	RET=0
	bad=
	start_vswitchd 3
	check_err $? "ch3's vswitchd did not start again"
	BUSYWAIT_SLEEP=0.5 busywait 120000 ping_pair 1 3 || bad+=" vm1->vm3;"
	ping_pair 4 6 || bad+=" vm4->vm6;"
	ping_pair 3 5 || bad+=" vm3->vm5;"
	[ -z "$bad" ]
	check_err $? "not restored:$bad"
	log_test "ch3's vswitchd restarted: its traffic is back"
}

test_geneve_ratio() {
	local i stt gen

	RET=0
	if geneve_opts_warn; then
		log_skip "vm1->vm2 (ch1->ch2) over Geneve and back to STT, transfers intact" \
			"openvswitch.ko of $(uname -r) WARNs on Geneve options (FORTIFY field-spanning memcpy in ip_tunnel_info_opts_set, fixed by the options[] member of 7.x); the comparison would only show that"
		return
	fi
	XBAD=
	xfer_to 1 "$RATE_BYTES" 2
	stt=${XRATE[1-2]}
	for i in 1 2 3; do
		vsctl "$i" set Open_vSwitch . external_ids:ovn-encap-type=geneve
	done
	BUSYWAIT_SLEEP=0.5 busywait 90000 all_tunnels geneve
	check_err $? "tunnels did not become geneve"
	nbctl --wait=hv sync
	BUSYWAIT_SLEEP=0.5 busywait 120000 ping_pair 1 2
	check_err $? "vm1->vm2 over geneve does not answer"
	xfer_to 1 "$RATE_BYTES" 2
	gen=${XRATE[1-2]}
	[ -z "$XBAD" ]
	check_err $? "transfers not received intact:$XBAD"
	for i in 1 2 3; do
		vsctl "$i" set Open_vSwitch . external_ids:ovn-encap-type=stt
	done
	BUSYWAIT_SLEEP=0.5 busywait 90000 all_tunnels stt
	check_err $? "tunnels did not go back to stt"
	# One kernel, veth between the chassis: veth segments UDP tunnels as
	# well, so this ratio is not STT's case (make bench and ovn-hosts
	# measure that). A figure, not a verdict.
	log_info "figure (not judged): vm1->vm2 (ch1->ch2) STT ${stt:-?} Mbit/s, Geneve ${gen:-?} Mbit/s, ratio $(awk -v a="${stt:-0}" -v b="${gen:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')"
	log_test "vm1->vm2 (ch1->ch2) over Geneve and back to STT, transfers intact"
}

# Before the faults (which make the daemons log their peers' loss): no
# warning or error in any vswitchd or ovn-controller log but the expected
# (lib.sh's ovs_log_problems).
test_logs() {
	local i f p bad='' dep=0

	RET=0
	for i in 1 2 3; do
		for f in "$T/ch$i"/ovs-vswitchd.log "$T/ch$i"/ovn-controller.log; do
			[ -f "$f" ] || continue
			p=$(ovs_log_problems "$f" | sed "s|^|ch$i ${f##*/}: |")
			[ -n "$p" ] && bad+="${bad:+ / }$p"
			dep=$((dep + $(grep -cE "'stt' port type is deprecated|STT encapsulation type is deprecated" "$f")))
		done
	done
	[ -z "$bad" ]
	check_err $? "$bad"
	log_test "OVN: no warnings or errors in vswitchd and ovn-controller logs" \
		"$dep deprecation notices"
}

test_teardown() {
	local i n

	RET=0
	for i in 1 2 3; do
		ch "$i" ovs-appctl -t ovn-controller exit 2>/dev/null
		vsctl "$i" --if-exists del-br br-int
		stop_vswitchd "$i" --cleanup
		check_err $? "ch$i's vswitchd did not stop"
	done
	n=0
	for i in 1 2 3; do
		n=$((n + $(ch "$i" ip -o link show type stt | grep -c .)))
	done
	((n == 0))
	check_err $? "$n stt devices left in the chassis"
	n=$(awk '$1 == "vport_stt" { print $3 }' /proc/modules)
	[ "${n:-0}" = 0 ]
	check_err $? "vport_stt still has $n users"
	log_test "teardown leaves no stt device and no module in use"
}

tests_run
tests_exit
