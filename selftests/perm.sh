#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# Permissions: creating, changing or deleting an STT device needs
# CAP_NET_ADMIN over the device's network namespace (ordinary rtnetlink
# rules). An unprivileged user (uid 65534) and root without CAP_NET_ADMIN
# cannot; reading (ip -d link, ethtool -S) is allowed. A user namespace's
# root (unshare -Urn, started by an unprivileged user) can create and use
# an STT device in its own network namespace, cannot touch the initial
# namespace's devices, cannot change the module parameters (the
# reassembly bound is global), and its port reservation stays in its
# namespace.
#
#   +---- init netns ----------------------+   +---- user ns + netns -----+
#   | sttp0 (root's)                       |   | stt0 dstport 7999        |
#   | uid 65534, root w/o CAP_NET_ADMIN:   |   |   (user-ns root's)       |
#   |   add/set/del refused, reads allowed |   +--------------------------+
#   | 127.0.0.1:7999 TCP still answers     |
#   +--------------------------------------+
#
# Run in the VM:  scripts/vm/run.sh --timeout 1500 -- selftests/perm.sh

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	unpriv_create
	unpriv_change_delete
	unpriv_read
	no_cap_net_admin
	userns_own_netns
	userns_not_init_netns
	userns_module_params
	userns_port_isolated
"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
TMP=$(mktemp -d)
chmod 755 "$TMP"

cleanup()
{
	ip link del sttp0 2>/dev/null
	[[ -n "$LISTENER" ]] && kill "$LISTENER" 2>/dev/null
	rm -rf "$TMP"
}

nobody() { "${NOBODY[@]}" "$@"; }

# userns CMD...: run a shell command as root of a fresh user + network
# namespace created by uid 65534.
userns()
{
	nobody unshare -Urn sh -c "$*"
}

unpriv_create()
{
	local out

	RET=0
	out=$(nobody ip link add sttp1 type stt remote 10.9.0.2 key 7 2>&1)
	check_fail $? "uid 65534 created an stt device"
	[[ $out == *"Operation not permitted"* ]]
	check_err $? "unexpected error: $out"
	ip link show dev sttp1 &>/dev/null
	check_fail $? "sttp1 exists"
	log_info "uid 65534: ip link add: $out"
	log_test "unprivileged user cannot create a device"
}

ttl_of() { ip -d -j link show dev sttp0 | jq -r '.[0].linkinfo.info_data.ttl'; }

unpriv_change_delete()
{
	local t0 t1

	RET=0
	ip link add sttp0 type stt remote 10.9.0.2 key 7 ttl 33
	check_err $? "root cannot create sttp0"
	t0=$(ttl_of)
	nobody ip link set sttp0 type stt ttl 5 &>/dev/null
	check_fail $? "uid 65534 changed ttl"
	nobody ip link set sttp0 type stt remote 10.9.0.3 &>/dev/null
	check_fail $? "uid 65534 changed remote"
	nobody ip link set sttp0 up &>/dev/null
	check_fail $? "uid 65534 set sttp0 up"
	nobody ip link set sttp0 mtu 1400 &>/dev/null
	check_fail $? "uid 65534 changed the MTU"
	nobody ip link del sttp0 &>/dev/null
	check_fail $? "uid 65534 deleted sttp0"
	t1=$(ttl_of)
	[[ "$t0" == "$t1" ]] && ip link show dev sttp0 &>/dev/null
	check_err $? "sttp0 changed or vanished (ttl $t0 -> $t1)"
	log_test "unprivileged user cannot change or delete a device"
}

unpriv_read()
{
	local out

	RET=0
	out=$(nobody ip -d link show dev sttp0 2>&1)
	check_err $? "uid 65534 cannot read sttp0: $out"
	[[ $out == *stt* ]]
	check_err $? "no stt details: $out"
	out=$(nobody ethtool -S sttp0 2>&1)
	check_err $? "uid 65534 cannot read ethtool -S: $out"
	[[ $out == *ns_rx_segments* ]]
	check_err $? "ethtool -S lacks ns_rx_segments: $(head -3 <<<"$out")"
	log_test "unprivileged user can read the device and its counters"
}

no_cap_net_admin()
{
	local out

	RET=0
	if [[ ! -x "$(command -v capsh)" ]]; then
		log_skip "root without CAP_NET_ADMIN is refused" "capsh missing"
		return
	fi
	out=$(capsh --drop=cap_net_admin -- -c \
		'ip link add sttp2 type stt remote 10.9.0.2 key 8' 2>&1)
	check_fail $? "root without CAP_NET_ADMIN created a device"
	[[ $out == *"Operation not permitted"* ]]
	check_err $? "unexpected error: $out"
	out=$(capsh --drop=cap_net_admin -- -c \
		'ip link set sttp0 type stt ttl 9' 2>&1)
	check_fail $? "root without CAP_NET_ADMIN changed a device"
	out=$(capsh --drop=cap_net_admin -- -c 'ip link del sttp0' 2>&1)
	check_fail $? "root without CAP_NET_ADMIN deleted a device"
	ip link del sttp2 2>/dev/null
	log_test "root without CAP_NET_ADMIN cannot create/change/delete"

	# The port is reserved by binding it, and binding a privileged port
	# needs CAP_NET_BIND_SERVICE: the refusal says so.
	RET=0
	out=$(capsh --drop=cap_net_bind_service -- -c \
		'ip link add sttp3 type stt remote 10.9.0.2 dstport 80' 2>&1)
	check_fail $? "root without CAP_NET_BIND_SERVICE created a device on port 80"
	[[ $out == *"needs CAP_NET_BIND_SERVICE"* ]]
	check_err $? "no 'needs CAP_NET_BIND_SERVICE' in: $out"
	ip link del sttp3 2>/dev/null
	log_test "dstport 80 without CAP_NET_BIND_SERVICE: refused, and why"
}

userns_ok()
{
	nobody unshare -Urn true 2>/dev/null
}

userns_own_netns()
{
	local out

	RET=0
	if ! userns_ok; then
		log_skip "user-ns root creates a device in its own netns" \
			"unprivileged user namespaces disabled"
		return
	fi
	out=$(userns '
		set -e
		ip link set lo up
		ip link add stt0 type stt remote 10.9.0.2 key 9 ttl 7
		ip link set stt0 type stt ttl 8
		ip link set stt0 up
		ip link add stt1 type stt external dstport 7999
		ip link set stt1 up
		ip -d -j link show dev stt0 | jq -r ".[0].linkinfo.info_data.ttl"
		ethtool -S stt0 | grep -c ns_rx_segments
		ip link del stt1
		ip link del stt0
		echo done' 2>&1)
	check_err $? "user-ns root could not: $out"
	[[ $(tr '\n' ' ' <<<"$out") == "8 1 done " ]]
	check_err $? "unexpected output: $out"
	log_info "uid 65534 in unshare -Urn: add/set/up/del of stt devices work"
	log_test "user-ns root manages devices in its own netns"
}

userns_not_init_netns()
{
	local out

	RET=0
	if ! userns_ok; then
		log_skip "user-ns root cannot touch the initial netns" \
			"unprivileged user namespaces disabled"
		return
	fi
	# A user namespace alone: the network namespace is still the initial
	# one, owned by the initial user namespace.
	out=$(nobody unshare -Ur ip link add sttp3 type stt remote 10.9.0.2 key 3 2>&1)
	check_fail $? "user-ns root created a device in the initial netns"
	out=$(nobody unshare -Ur ip link set sttp0 type stt ttl 3 2>&1)
	check_fail $? "user-ns root changed a device of the initial netns"
	out=$(nobody unshare -Ur ip link del sttp0 2>&1)
	check_fail $? "user-ns root deleted a device of the initial netns"
	# From its own netns, into the initial one (IFLA_NET_NS_PID 1).
	out=$(userns 'ip link add sttp4 netns 1 type stt remote 10.9.0.2 key 4' 2>&1)
	check_fail $? "user-ns root created a device in netns of pid 1"
	ip link show dev sttp3 &>/dev/null || ip link show dev sttp4 &>/dev/null
	check_fail $? "a device appeared in the initial netns"
	ip link show dev sttp0 &>/dev/null
	check_err $? "sttp0 is gone"
	log_info "refusals: $out"
	log_test "user-ns root cannot touch the initial netns"
}

userns_module_params()
{
	local p=/sys/module/stt/parameters/reasm_max_mem v0 v1

	RET=0
	if ! userns_ok; then
		log_skip "user-ns root cannot change module parameters" \
			"unprivileged user namespaces disabled"
		return
	fi
	v0=$(cat "$p")
	userns "echo 1 > $p" 2>/dev/null
	check_fail $? "user-ns root wrote $p"
	nobody sh -c "echo 1 > $p" 2>/dev/null
	check_fail $? "uid 65534 wrote $p"
	v1=$(cat "$p")
	[[ $v0 == "$v1" ]]
	check_err $? "reasm_max_mem changed: $v0 -> $v1"
	log_test "user-ns root cannot change the global reassembly bound"
}

listening() { ss -ltnH "sport = :7999" | grep -q .; }

userns_port_isolated()
{
	local out

	RET=0
	if ! userns_ok; then
		log_skip "a user-ns device's port stays in its netns" \
			"unprivileged user namespaces disabled"
		return
	fi
	python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 7999))
s.listen(8)
while True:
    c, _ = s.accept()
    c.sendall(b"hello\n")
    c.close()
' &
	LISTENER=$!
	busywait 5000 listening
	# The user-ns device takes port 7999 in its netns (hook + socket)
	# and holds it for 3 s from "up" on, while the initial netns connects
	# to its own 7999.
	userns '
		ip link add stt0 type stt external dstport 7999 &&
		ip link set stt0 up && echo up && sleep 3 && echo userns-ok' \
		>"$TMP/userns.out" 2>&1 &
	local upid=$!
	busywait 30000 file_has "$TMP/userns.out" up
	out=$(python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", 7999), timeout=5)
print(s.recv(16).decode().strip())' 2>&1)
	[[ $out == hello ]]
	check_err $? "TCP 7999 in the initial netns broken: $out"
	wait "$upid"
	check_err $? "user-ns device on 7999 failed: $(cat "$TMP/userns.out")"
	kill "$LISTENER"
	wait "$LISTENER" 2>/dev/null
	LISTENER=
	log_test "a user-ns device's port stays in its netns"
}

require_root
require_stt
require_command setpriv
require_command unshare
require_command jq

tests_run
tests_exit
