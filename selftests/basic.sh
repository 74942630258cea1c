#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# Basic life cycle of the stt module and its devices: the module is loaded,
# "ip link add ... type stt" creates a device of kind "stt", "ip link del"
# removes it, create/delete loops and namespace removal leave nothing behind,
# and the module unloads (with devices present) and loads again. A
# namespace without STT devices pays no STT hook, and refused requests
# for its first device leave it as they found it.
#
# Devices only, in the initial namespace and in one netns; one test
# (refused_then_used) sends pings over stt_pair_setup's two namespaces.
#
#   +---- init netns ----+     +---- $NS1 ----------------+
#   | stt0 (kind stt)    |     | stt1 stt2 stt3 (deleted  |
#   +--------------------+     |  with the namespace)     |
#                              +--------------------------+
#
# Run in the VM:  scripts/vm/run.sh -- selftests/run.sh basic.sh
# STT_LINK_ARGS: the arguments a device needs (default "external").

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	module_loaded
	create
	delete
	create_delete_loop
	netns_delete
	no_stt_no_hook
	refused_then_used
	module_reload
"

STT_LINK_ARGS=${STT_LINK_ARGS-external}

# stt_add NAME [NS [ARGS...]]: ip link add NAME type stt ARGS (default
# $STT_LINK_ARGS), in netns NS if not empty.
stt_add()
{
	local name=$1
	local ns=$2

	shift 2 2>/dev/null || shift $#
	# shellcheck disable=SC2086 # STT_LINK_ARGS is a list of words
	[[ $# -gt 0 ]] || set -- $STT_LINK_ARGS
	ip ${ns:+-n "$ns"} link add "$name" type stt "$@"
}

module_loaded()
{
	RET=0

	lsmod | grep -qw '^stt'
	check_err $? "lsmod does not list stt"
	log_test "stt module is loaded"
}

create()
{
	local kind

	RET=0

	stt_add stt0
	check_err $? "ip link add stt0 type stt $STT_LINK_ARGS failed"

	kind=$(ip -d -j link show dev stt0 2>/dev/null |
		jq -r '.[0].linkinfo.info_kind')
	[[ "$kind" == stt ]]
	check_err $? "info_kind of stt0 is '$kind', not 'stt'"
	log_test "ip link add creates a device of kind stt"
}

delete()
{
	RET=0

	ip link show dev stt0 &>/dev/null || stt_add stt0
	ip link del dev stt0
	check_err $? "ip link del stt0 failed"

	ip link show dev stt0 &>/dev/null
	check_fail $? "stt0 still exists after ip link del"
	log_test "ip link del removes the device"
}

create_delete_loop()
{
	local i left

	RET=0

	# One ip process (ip -batch): exec'ing ip 200 times is slow under TCG.
	for ((i = 0; i < 100; i++)); do
		echo "link add stt0 type stt $STT_LINK_ARGS"
		echo "link del dev stt0"
	done | ip -batch -
	check_err $? "ip -batch of 100 add/del failed"

	left=$(stt_devices)
	[[ -z "$left" ]]
	check_err $? "stt devices left behind: $left"
	log_test "100 create/delete cycles leave no device behind"
}

netns_delete()
{
	local i left

	RET=0

	setup_ns NS1
	check_err $? "cannot create a netns"
	# One external device per port; a point-to-point one besides.
	stt_add stt1 "$NS1"
	check_err $? "ip link add stt1 in $NS1 failed"
	stt_add stt2 "$NS1" external dstport 7482
	check_err $? "ip link add stt2 external dstport 7482 in $NS1 failed"
	stt_add stt3 "$NS1" remote 192.0.2.3 key 3
	check_err $? "ip link add stt3 remote 192.0.2.3 key 3 in $NS1 failed"
	[[ $(stt_devices "$NS1" | wc -l) -eq 3 ]]
	check_err $? "expected 3 stt devices in $NS1"

	cleanup_ns "$NS1"
	ns_exists "$NS1"
	check_fail $? "$NS1 still listed after ip netns del"

	left=$(ip -d link show | grep -w stt)
	[[ -z "$left" ]]
	check_err $? "stt devices visible after netns removal: $left"
	log_test "deleting a netns holding stt devices"
}

# hook_calls NS: how often the IPv4 receive hook (traced by the kprobe
# stt/stt_hook4) runs for 5 pings of 127.0.0.1 in NS (10 packets).
hook_calls()
{
	local t=/sys/kernel/tracing

	: >"$t/trace"
	ip netns exec "$1" ping -q -c 5 -i 0.2 127.0.0.1 >/dev/null
	grep -c ' stt_hook4:' "$t/trace"
}

# A namespace that never had an STT device has no STT hook: its locally
# delivered packets never enter stt.ko (counted with a kprobe on the IPv4
# hook). Its first device registers them; a first request that is
# refused leaves none behind.
no_stt_no_hook()
{
	local t=/sys/kernel/tracing before refused after ns

	RET=0
	if ! echo 'p:stt/stt_hook4 stt_nf_hook4' >"$t/kprobe_events" 2>/dev/null; then
		log_skip "namespace without STT: no hook on its packets" \
			"no kprobes (tracefs at $t)"
		return
	fi
	echo 1 >"$t/events/stt/stt_hook4/enable"
	setup_ns ns
	before=$(hook_calls "$ns")
	# Refused first requests leave the namespace as they found it: one
	# refused early (a local socket holds the port), one late
	# (register_netdevice() rejects the name).
	refused_first_requests "$ns"
	refused=$(hook_calls "$ns")
	stt_add stt5 "$ns" id 5 remote 192.0.2.9
	check_err $? "cannot create a device in $ns"
	after=$(hook_calls "$ns")
	echo 0 >"$t/events/stt/stt_hook4/enable"
	echo '-:stt/stt_hook4' >>"$t/kprobe_events"
	cleanup_ns "$ns"
	[[ "$before" == 0 ]]
	check_err $? "$before hook calls for 10 packets in a namespace without STT"
	[[ "$refused" == 0 ]]
	check_err $? "$refused hook calls for 10 packets after two refused requests"
	[[ "$after" -ge 10 ]]
	check_err $? "only $after hook calls for 10 packets once the namespace has a device"
	log_test "namespace without STT: no hook on its packets" \
		"hook calls for 10 local packets: $before without a device, $refused after two refused requests, $after with one"
}

# refused_first_requests NS: two requests for the first STT device of NS
# that fail, one before the port is reserved and one after.
refused_first_requests()
{
	local ns=$1 out

	tcp_listen "$ns" 7471
	check_err $? "the TCP listener on port 7471 did not start"
	out=$(stt_add stt5 "$ns" id 5 remote 192.0.2.9 2>&1)
	check_fail $? "a device was created on a port a local socket holds"
	[[ $out == *"Cannot reserve the STT port"* ]]
	check_err $? "port held: no 'Cannot reserve the STT port' in: $out"
	tcp_listen_stop
	out=$(ip netns exec "$ns" python3 -I "$STT_MODULE_DIR/selftests/stt_nl.py" \
	      add bad/name remote=192.0.2.9 2>&1)
	check_fail $? "a device named bad/name was created"
}

# The first device of a namespace after refused requests for it works:
# the refusals tore the namespace's STT state down again (hooks,
# reassembly, statistics), and the device must find it set up anew.
# Under the debug kernel this is also the teardown path's leak and
# use-after-free check, which no_stt_no_hook cannot be without kprobes.
refused_then_used()
{
	local rx

	RET=0
	setup_ns NS_A NS_B
	stt_pair_underlay
	check_err $? "cannot set up the underlay"
	refused_first_requests "$NS_B"
	stt_pair_tunnel "$NS_A" 192.168.0.1 10.0.0.2 &&
		stt_pair_tunnel "$NS_B" 192.168.0.2 10.0.0.1
	check_err $? "cannot create the tunnel after two refused requests"
	ping_ok "$NS_A" 192.168.0.2
	check_err $? "no answer through the tunnel: $PING_OUT"
	rx=$(link_packets "$NS_B" stt0 rx)
	[[ $rx -ge 1 ]]
	check_err $? "stt0 of $NS_B received $rx packets"
	cleanup_ns "$NS_A" "$NS_B"
	log_test "first device after two refused requests receives" \
		"$rx packets received"
}

module_reload()
{
	local left

	RET=0

	if [[ -z "$(stt_ko)" ]] && ! modinfo stt &>/dev/null; then
		log_skip "module unloads and loads again" "no stt.ko in $STT_MODULE_DIR"
		return
	fi

	stt_add stt0
	check_err $? "ip link add stt0 failed"
	setup_ns NS2
	stt_add stt1 "$NS2"
	check_err $? "ip link add stt1 in $NS2 failed"

	stt_unload
	check_err $? "rmmod stt failed with devices present"
	! stt_loaded
	check_err $? "stt still loaded after rmmod"

	left=$(ip -d link show; ip -n "$NS2" -d link show)
	! grep -qw stt <<<"$left"
	check_err $? "stt devices survive rmmod"

	stt_reload
	check_err $? "loading stt again failed"
	stt_loaded
	check_err $? "stt not loaded after insmod"

	stt_add stt0 && ip link del dev stt0
	check_err $? "cannot create a device after reloading"
	cleanup_ns "$NS2"
	log_test "module unloads with devices present and loads again"
}

cleanup()
{
	ip link del dev stt0 2>/dev/null
	# The runner unloads the module: leave it loaded.
	stt_load 2>/dev/null
}

require_root
require_command ip
require_command jq
stt_loaded || stt_load 2>/dev/null

tests_run
tests_exit
