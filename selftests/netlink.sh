#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Control plane of the STT device: every IFLA_STT_* attribute given to
# "ip link add ... type stt" comes back in "ip -j -d link show"; a change
# ("ip link set NAME type stt ...") touches only what it names; every invalid
# request is refused with its message and leaves the devices as they were.
#
# Requests the plugin (link_stt.so) already refuses are also sent to the
# kernel directly (raw rtnetlink from python3), so that the kernel's own
# checks and extack messages are tested as well.
#
# Devices only, in one namespace; a dummy device serves as underlay:
#
#   +---- $NS ------------------------------------------+
#   | ul0 (dummy, 192.0.2.1/24, 2001:db8::1/64)         |
#   | s0, s1, ... (kind stt, created and deleted here)  |
#   +---------------------------------------------------+
#
# Run in the VM:  scripts/vm/run.sh -- selftests/run.sh netlink.sh

# shellcheck disable=SC2317 # the tests run through tests_run
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	help
	defaults
	rt_id
	rt_remote_local
	rt_dstport
	rt_ttl
	rt_tos
	rt_df
	rt_external
	rt_dev
	rt_mtu
	change_only_named
	change_noop
	del_notified
	bad_no_remote
	bad_external_remote
	bad_external_id
	bad_families
	bad_remote
	bad_linklocal
	bad_dstport
	bad_ttl_inherit
	bad_clash
	bad_external_twice
	bad_change_dstport
	bad_change_external
	bad_external_change_p2p
	bad_port_in_use
	bad_late_port
	bad_underlay
	bad_mtu
"

MAX_MTU=65463
U64_MAX=18446744073709551615
NS=

# Debian's python3 directly: a python3 shim (pyenv) may cost a second a call.
PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON=python3
TMPD=$(mktemp -d)
PY_JSON=$TMPD/stt_dump.py
PY_NL=$(cd "$(dirname "$0")" && pwd)/stt_nl.py

# "ip -j -d link show" on stdin -> "NAME mtu=N key=value..." per stt device
# (only DEV if given as argument), keys of info_data sorted. Python keeps
# 64-bit integers exact (jq does not).
cat >"$PY_JSON" <<'EOF'
import json
import sys

for link in json.load(sys.stdin):
    info = link.get('linkinfo', {})
    if info.get('info_kind') != 'stt':
        continue
    if len(sys.argv) > 1 and link['ifname'] != sys.argv[1]:
        continue
    data = info.get('info_data', {})
    words = ['mtu=%s' % link.get('mtu')]
    for key in sorted(data):
        val = data[key]
        if not isinstance(val, str):
            val = json.dumps(val)
        words.append('%s=%s' % (key, val))
    print(link['ifname'], ' '.join(words))
EOF

ipn()
{
	ip -n "$NS" "$@"
}

# Raw rtnetlink request in $NS: "nl add|set NAME ARGS" (selftests/stt_nl.py
# for the words), its error on stderr and status 1 if refused. One
# stt_nl.py serves the whole script (nl_start): under TCG its start,
# importing pyroute2, costs seconds.
nl()
{
	local reply

	# Not a write to a pipe nobody reads: SIGPIPE would end the script.
	if [[ -z "${NL[1]:-}" ]] || ! kill -0 "${NL_PID:-}" 2>/dev/null; then
		echo "stt_nl.py is not running" >&2
		return 1
	fi
	echo "$*" >&"${NL[1]}"
	if ! read -r -t 60 reply <&"${NL[0]}"; then
		echo "stt_nl.py: no reply to '$*' within 60 s" >&2
		return 1
	fi
	[[ "$reply" == ok ]] && return 0
	echo "$reply" >&2
	return 1
}

nl_start()
{
	coproc NL { ip netns exec "$NS" "$PYTHON" -I "$PY_NL" --serve; }
}

# nl_stop: end of input ends stt_nl.py.
nl_stop()
{
	local fd=${NL[1]:-}

	[[ -n "$fd" ]] && exec {fd}>&-
	[[ -n "${NL_PID:-}" ]] && wait "$NL_PID" 2>/dev/null
	return 0
}

# Everything "ip -d link show" says about the devices of $NS: a refused
# request must not change a word of it.
ns_state()
{
	ipn -d link show
}

# Device names in "ip link show" output.
link_names()
{
	sed -n 's/^[0-9]*: \([^:@]*\)[:@].*/\1/p'
}

# The "key=value" words of stt device $1 (mtu and info_data), one per line.
dev_words()
{
	local words

	words=$(ipn -j -d link show dev "$1" 2>/dev/null |
		"$PYTHON" -I "$PY_JSON" "$1")
	[[ -n "$words" ]] || return 1
	# shellcheck disable=SC2086 # one word per line
	printf '%s\n' ${words#* }
}

# expect_attrs DEV KEY=VALUE...: each KEY of DEV has VALUE ("KEY=" means the
# key is absent). Records the first mismatch.
expect_attrs()
{
	local dev=$1; shift
	local -A have=()
	local words kv key want got

	if ! words=$(dev_words "$dev"); then
		check_err 1 "$dev: no such stt device"
		return
	fi
	for kv in $words; do
		have[${kv%%=*}]=${kv#*=}
	done
	for kv in "$@"; do
		key=${kv%%=*}
		want=${kv#*=}
		got=${have[$key]}
		[[ "$got" == "$want" ]]
		check_err $? "$dev: $key is '${got:-<absent>}', expected '${want:-<absent>}'"
	done
}

# roundtrip "ARGS" KEY=VALUE...: ip link add with ARGS, check the values,
# delete the device again.
roundtrip()
{
	local args=$1; shift

	# shellcheck disable=SC2086 # ARGS is a list of words
	ipn link add s0 type stt $args
	check_err $? "ip link add s0 type stt $args failed"
	expect_attrs s0 "$@"
	ipn link del s0 2>/dev/null
}

# refused MESSAGE CMD...: CMD fails, MESSAGE is in its stderr, and the
# devices of $NS (names, MTU, every attribute) are exactly as before.
refused()
{
	local msg=$1; shift
	local before after err rc dev

	before=$(ns_state)
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	check_fail "$rc" "'$*' succeeded"
	if ((rc)); then
		[[ "$err" == *"$msg"* ]]
		check_err $? "'$*': no '$msg' in: $err"
	fi
	after=$(ns_state)
	[[ "$before" == "$after" ]]
	check_err $? "'$*' changed the devices: '$before' -> '$after'"
	# Do not let a wrongly accepted request spoil the next ones.
	if [[ "$before" != "$after" ]]; then
		for dev in $(comm -13 <(link_names <<<"$before" | sort) \
				      <(link_names <<<"$after" | sort)); do
			ipn link del "$dev"
		done
	fi
}

# changes DEV "SET ARGS" KEY=VALUE...: ip link set DEV type stt SET ARGS
# changes exactly the KEYs given (to VALUE) and nothing else.
changes()
{
	local dev=$1 args=$2; shift 2
	local before after expected kv key

	before=$(dev_words "$dev")
	# shellcheck disable=SC2086 # ARGS is a list of words
	ipn link set "$dev" type stt $args
	check_err $? "ip link set $dev type stt $args failed"
	after=$(dev_words "$dev")

	expected=$before
	for kv in "$@"; do
		key=${kv%%=*}
		expected=$(grep -v "^$key=" <<<"$expected")
		[[ -n "${kv#*=}" ]] && expected+=$'\n'$kv
	done
	expected=$(sort <<<"$expected")
	after=$(sort <<<"$after")
	[[ "$expected" == "$after" ]]
	check_err $? "set $args: got '${after//$'\n'/ }', expected '${expected//$'\n'/ }'"
}

# ---- help ----------------------------------------------------------------

help()
{
	local out

	RET=0
	out=$(ip link help stt 2>&1)
	grep -q '^Usage: \.\.\. stt ' <<<"$out" &&
		grep -q 'KEY   := 0-18446744073709551615' <<<"$out" &&
		grep -q 'DF    := { unset | set | inherit }' <<<"$out"
	check_err $? "ip link help stt: $out"

	out=$(ipn link add x type stt help 2>&1)
	grep -q '^Usage: \.\.\. stt ' <<<"$out" && grep -q 'dstport PORT' <<<"$out"
	check_err $? "ip link add x type stt help: $out"
	ipn link show x &>/dev/null
	check_fail $? "ip link add x type stt help created x"
	log_test "ip link help stt / type stt help print the grammar"
}

# ---- round trips ---------------------------------------------------------

# In JSON the plugin prints ttl_inherit only when it is true, tos as "%#x"
# (so 0 is "0").
defaults()
{
	RET=0
	roundtrip "remote 192.0.2.2" mtu=1500 id=0 remote=192.0.2.2 local= \
		port=7471 ttl=0 ttl_inherit= tos=0 df=set external=false \
		link=
	log_test "defaults: id 0, dstport 7471, ttl auto, tos 0, df set, mtu 1500"
}

rt_id()
{
	local id

	RET=0
	for id in 1 42 4294967295 4294967296 9223372036854775808 "$U64_MAX"; do
		roundtrip "remote 192.0.2.2 id $id" id="$id"
	done
	roundtrip "remote 192.0.2.2 key 0x123456789abcdef0" id=1311768467463790320
	roundtrip "remote 192.0.2.2 key 0xffffffffffffffff" id="$U64_MAX"
	log_test "id / key round trip, incl. > 2^32 and 2^64-1"
}

rt_remote_local()
{
	RET=0
	roundtrip "remote 192.0.2.2 local 192.0.2.1" remote=192.0.2.2 \
		local=192.0.2.1 remote6= local6=
	roundtrip "remote 2001:db8::2" remote6=2001:db8::2 local6= remote=
	roundtrip "remote 2001:db8::2 local 2001:db8::1" remote6=2001:db8::2 \
		local6=2001:db8::1 remote= local=
	log_test "remote and local, IPv4 and IPv6, round trip"
}

rt_dstport()
{
	RET=0
	roundtrip "remote 192.0.2.2 dstport 1" port=1
	roundtrip "remote 192.0.2.2 dstport 8000" port=8000
	roundtrip "remote 192.0.2.2 dstport 65535" port=65535
	log_test "dstport round trips"
}

rt_ttl()
{
	RET=0
	roundtrip "remote 192.0.2.2 ttl 64" ttl=64 ttl_inherit=
	roundtrip "remote 192.0.2.2 ttl 255" ttl=255 ttl_inherit=
	roundtrip "remote 192.0.2.2 ttl inherit" ttl=0 ttl_inherit=true
	roundtrip "remote 192.0.2.2 ttl auto" ttl=0 ttl_inherit=
	roundtrip "remote 2001:db8::2 hoplimit 9" ttl=9 ttl_inherit=
	log_test "ttl N / inherit / auto round trip"
}

rt_tos()
{
	RET=0
	roundtrip "remote 192.0.2.2 tos 0x10" tos=0x10
	roundtrip "remote 192.0.2.2 tos 0xb8" tos=0xb8
	roundtrip "remote 192.0.2.2 tos inherit" tos=0x1
	log_test "tos N / inherit round trip"
}

rt_df()
{
	RET=0
	roundtrip "remote 192.0.2.2 df set" df=set
	roundtrip "remote 192.0.2.2 df unset" df=unset
	roundtrip "remote 192.0.2.2 df inherit" df=inherit
	log_test "df set / unset / inherit round trip"
}

rt_external()
{
	RET=0
	roundtrip "external" external=true port=7471 id= remote= remote6= \
		local= ttl= tos= df=
	roundtrip "external dstport 9000" external=true port=9000
	log_test "external round trips (no id, remote, ttl, tos, df)"
}

rt_dev()
{
	local out ifindex

	RET=0
	roundtrip "remote 192.0.2.2 dev ul0" link=ul0
	roundtrip "external dev ul0" link=ul0 external=true
	# The same underlay by number, through the kernel alone.
	ifindex=$(ipn -j link show ul0 |
		"$PYTHON" -I -c 'import json, sys; print(json.load(sys.stdin)[0]["ifindex"])')
	nl add s0 remote=192.0.2.2 link="$ifindex"
	check_err $? "raw add with IFLA_STT_LINK failed"
	expect_attrs s0 link=ul0
	ipn link del s0 2>/dev/null
	# The underlay is deleted under the device: the dump must not break.
	ipn link add ul1 type dummy &&
		ipn link add s0 type stt remote 192.0.2.2 dev ul1 &&
		ipn link del ul1
	check_err $? "cannot set up s0 over ul1"
	out=$(ipn -d link show s0 2>&1)
	check_err $? "ip link show s0 after deleting its underlay: $out"
	ipn link del s0 2>/dev/null
	log_test "dev (underlay) round trips"
}

rt_mtu()
{
	RET=0
	ipn link add s0 mtu "$MAX_MTU" type stt remote 192.0.2.2
	check_err $? "ip link add s0 mtu $MAX_MTU failed"
	expect_attrs s0 mtu="$MAX_MTU"
	ipn link set s0 mtu 68
	check_err $? "ip link set s0 mtu 68 failed"
	expect_attrs s0 mtu=68
	ipn link set s0 mtu "$MAX_MTU"
	check_err $? "ip link set s0 mtu $MAX_MTU failed"
	expect_attrs s0 mtu="$MAX_MTU"
	ipn link del s0
	log_test "mtu 68 .. $MAX_MTU accepted"
}

# ---- changes -------------------------------------------------------------

change_only_named()
{
	RET=0
	ipn link add s0 type stt id 42 remote 192.0.2.2 local 192.0.2.1 \
		dstport 7471 ttl 64 tos 0x10 df unset dev ul0
	check_err $? "ip link add s0 failed"

	changes s0 "ttl 32" ttl=32
	changes s0 "ttl inherit" ttl=0 ttl_inherit=true
	changes s0 "ttl auto" ttl_inherit=
	changes s0 "ttl 7" ttl=7
	changes s0 "id $U64_MAX" id="$U64_MAX"
	changes s0 "key 7" id=7
	changes s0 "remote 192.0.2.3" remote=192.0.2.3
	changes s0 "local 192.0.2.9" local=192.0.2.9
	changes s0 "tos inherit" tos=0x1
	changes s0 "tos 0x20" tos=0x20
	changes s0 "df inherit" df=inherit
	changes s0 "df set" df=set
	changes s0 "dev lo" link=lo
	changes s0 "dev ul0" link=ul0
	changes s0 "remote 2001:db8::3 local 2001:db8::9" remote= local= \
		remote6=2001:db8::3 local6=2001:db8::9
	changes s0 "remote 2001:db8::4" remote6=2001:db8::4
	changes s0 "local 2001:db8::5" local6=2001:db8::5
	changes s0 "remote 192.0.2.4 local 192.0.2.1" remote6= local6= \
		remote=192.0.2.4 local=192.0.2.1
	ipn link del s0
	log_test "ip link set type stt changes only what it names"
}

change_noop()
{
	RET=0
	ipn link add s0 type stt id 5 remote 192.0.2.2 ttl 3
	check_err $? "ip link add s0 failed"
	changes s0 ""
	changes s0 "dstport 7471"
	changes s0 "id 5 remote 192.0.2.2"
	ipn link set s0 mtu 1400
	check_err $? "ip link set s0 mtu 1400 failed"
	expect_attrs s0 mtu=1400 id=5 remote=192.0.2.2 ttl=3
	ipn link set s0 down
	check_err $? "ip link set s0 down failed"
	expect_attrs s0 mtu=1400 id=5 remote=192.0.2.2 ttl=3 port=7471
	ipn link del s0

	ipn link add s0 type stt external
	check_err $? "ip link add s0 external failed"
	changes s0 "external"
	changes s0 "external dstport 7471"
	ipn link del s0
	log_test "a change to the current values, or none, is accepted"
}

# The RTM_DELLINK that deleting a device sends carries its configuration,
# as RTM_NEWLINK does: a listener ("ip monitor", a controller) learns
# which tunnel went away.
del_notified()
{
	local pid out

	RET=0
	ipn link add s0 type stt id 5 remote 192.0.2.2
	check_err $? "ip link add s0 failed"
	# Not through ipn(): $! must be ip itself, not a subshell.
	ip -n "$NS" -d monitor link >"$TMPD/monitor" 2>&1 &
	pid=$!
	# The monitor has subscribed once it reports a change (an MTU: a
	# down device's alias or state changes are not notified).
	busywait 10000 bash -c "ip -n $NS link set s0 mtu \$((1300 + RANDOM % 100));
		grep -q 'mtu 1[34]' '$TMPD/monitor'" >/dev/null
	check_err $? "ip monitor reported no change of s0"
	ipn link del s0
	busywait 10000 grep -q '^Deleted' "$TMPD/monitor" >/dev/null
	check_err $? "ip monitor reported no deletion of s0"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	out=$(sed -n '/^Deleted/,$p' "$TMPD/monitor")
	grep -q 'stt id 5 remote 192.0.2.2 ' <<<"$out"
	check_err $? "RTM_DELLINK without the configuration: $(tail -n 2 <<<"$out")"
	log_test "deleting a device notifies its configuration"
}

# ---- refusals ------------------------------------------------------------

bad_no_remote()
{
	RET=0
	refused "remote link partner not specified" \
		ipn link add s9 type stt id 1
	refused "STT needs a remote address (remote ADDR) or external mode" \
		ipn link add s9 type stt
	refused "STT needs a remote address (remote ADDR) or external mode" \
		nl add s9 id=1 ttl=3
	refused "STT needs a remote address (remote ADDR) or external mode" \
		nl add s9 local=192.0.2.1
	log_test "no remote without external: refused, nothing created"
}

bad_external_remote()
{
	local msg="External mode takes remote, local, id, ttl, tos and df from each packet's metadata; do not set them"

	RET=0
	refused "both 'external' and remote cannot be specified" \
		ipn link add s9 type stt external remote 192.0.2.2
	refused "$msg" nl add s9 external remote=192.0.2.2
	refused "$msg" nl add s9 external remote=2001:db8::2
	refused "$msg" nl add s9 external local=192.0.2.1
	refused "$msg" nl add s9 external ttl=5
	refused "$msg" nl add s9 external tos=0x10
	refused "$msg" nl add s9 external df=0
	log_test "external + remote/local/ttl/tos/df: refused, nothing created"
}

bad_external_id()
{
	RET=0
	refused "both 'external' and id cannot be specified" \
		ipn link add s9 type stt external id 5
	refused "External mode takes remote, local, id, ttl, tos and df" \
		nl add s9 external id=5
	log_test "external + id: refused, nothing created"
}

bad_families()
{
	local msg="Local and remote address must be of the same family"

	RET=0
	refused "remote and local addresses must be of the same family" \
		ipn link add s9 type stt remote 192.0.2.2 local 2001:db8::1
	refused "remote and local addresses must be of the same family" \
		ipn link add s9 type stt remote 2001:db8::2 local 192.0.2.1
	refused "$msg" nl add s9 remote=192.0.2.2 local=2001:db8::1
	refused "$msg" nl add s9 remote=2001:db8::2 local=192.0.2.1
	# A local and no remote: the remote is what is missing, whatever
	# the local's family.
	refused "STT needs a remote address" nl add s9 local=192.0.2.1
	refused "STT needs a remote address" nl add s9 local=2001:db8::1

	# On a change, against the device's current remote.
	ipn link add s0 type stt remote 192.0.2.2
	check_err $? "ip link add s0 failed"
	refused "$msg" ipn link set s0 type stt local 2001:db8::1
	refused "$msg" nl set s0 local=2001:db8::1
	ipn link del s0

	# A remote of the other family would silently lose the local.
	ipn link add s0 type stt remote 192.0.2.2 local 192.0.2.1
	check_err $? "ip link add s0 (IPv4 local) failed"
	refused "An IPv6 remote needs an IPv6 local to replace the IPv4 one" \
		ipn link set s0 type stt remote 2001:db8::2
	ipn link del s0
	ipn link add s0 type stt remote 2001:db8::2 local 2001:db8::1
	check_err $? "ip link add s0 (IPv6 local) failed"
	refused "An IPv4 remote needs an IPv4 local to replace the IPv6 one" \
		ipn link set s0 type stt remote 192.0.2.2
	ipn link del s0
	log_test "local and remote of different families: refused"
}

bad_remote()
{
	local a

	RET=0
	for a in 224.0.0.1 239.1.2.3 0.0.0.0 ff02::1 ::; do
		refused "invalid remote address" \
			ipn link add s9 type stt remote "$a"
	done
	# 0.1.2.3 is allowed: since 5.3 only 0.0.0.0 of 0/8 is "zeronet".
	for a in 224.0.0.1 239.1.2.3 0.0.0.0 255.255.255.255; do
		refused "Remote must be a unicast IPv4 address" \
			nl add s9 remote="$a"
	done
	refused "Remote must be a unicast IPv4 address" \
		ipn link add s9 type stt remote 255.255.255.255
	for a in ff02::1 ff0e::5 ::; do
		refused "Remote must be a unicast IPv6 address" \
			nl add s9 remote="$a"
	done
	refused "Local must be a unicast IPv4 address" \
		nl add s9 remote=192.0.2.2 local=224.0.0.5
	refused "invalid local address" \
		ipn link add s9 type stt remote 2001:db8::2 local ff02::1
	refused "Local must be a unicast IPv6 address" \
		nl add s9 remote=2001:db8::2 local=ff02::1
	refused "Local must be a unicast IPv4 address" \
		nl add s9 remote=192.0.2.2 local=255.255.255.255
	refused "Local must be a unicast IPv4 address" \
		ipn link add s9 type stt remote 192.0.2.2 local 255.255.255.255
	# An IPv4-mapped IPv6 address: such a device would send by IPv4 and
	# wait for IPv6 frames that never come.
	refused "Remote must not be an IPv4-mapped IPv6 address" \
		nl add s9 remote=::ffff:192.0.2.2
	refused "Local must not be an IPv4-mapped IPv6 address" \
		nl add s9 remote=2001:db8::2 local=::ffff:192.0.2.1
	log_test "multicast / zero / broadcast / IPv4-mapped remote or local: refused"
}

# A link-local address names no device: without one the route lookup
# takes whichever device has an fe80::/64 route (VXLAN refuses the same).
# With "dev" it is taken; a change that would leave a link-local address
# without a device is refused.
bad_linklocal()
{
	local msg="A link-local local or remote address needs the underlay device"

	RET=0
	refused "$msg" ipn link add s9 type stt remote fe80::2
	refused "$msg" nl add s9 remote=fe80::2
	refused "$msg" ipn link add s9 type stt remote 2001:db8::2 local fe80::1
	ipn link add s9 type stt remote fe80::2 dev ul0
	check_err $? "ip link add s9 type stt remote fe80::2 dev ul0 failed"
	expect_attrs s9 remote6=fe80::2 link=ul0
	refused "$msg" nl set s9 link=0
	ipn link del s9 2>/dev/null
	ipn link add s9 type stt remote 2001:db8::2
	check_err $? "ip link add s9 type stt remote 2001:db8::2 failed"
	refused "$msg" ipn link set s9 type stt remote fe80::2
	refused "$msg" ipn link set s9 type stt local fe80::1
	ipn link del s9 2>/dev/null
	log_test "link-local remote or local without an underlay device: refused"
}

bad_dstport()
{
	RET=0
	refused 'argument "0" is wrong: dstport' \
		ipn link add s9 type stt remote 192.0.2.2 dstport 0
	refused "Destination port must not be 0" \
		nl add s9 remote=192.0.2.2 port=0
	refused "Destination port must not be 0" nl add s9 external port=0
	log_test "dstport 0: refused, nothing created"
}

bad_ttl_inherit()
{
	RET=0
	# ip cannot say both: "ttl" takes one value.
	refused 'either "ttl" is duplicate' \
		ipn link add s9 type stt remote 192.0.2.2 ttl 5 ttl inherit
	refused "TTL cannot be both fixed and inherited" \
		nl add s9 remote=192.0.2.2 ttl=5 ttl_inherit=1
	ipn link add s0 type stt remote 192.0.2.2
	check_err $? "ip link add s0 failed"
	refused "TTL cannot be both fixed and inherited" \
		nl set s0 ttl=5 ttl_inherit=1
	ipn link del s0
	log_test "ttl N + ttl inherit: refused"
}

bad_clash()
{
	local msg="An STT device with this port, key and remote already exists"

	RET=0
	ipn link add s0 type stt id 7 remote 192.0.2.2
	check_err $? "ip link add s0 failed"
	ipn link add s1 type stt id 7 remote 2001:db8::2
	check_err $? "ip link add s1 failed"

	refused "$msg" ipn link add s9 type stt id 7 remote 192.0.2.2
	refused "$msg" ipn link add s9 type stt key 7 remote 192.0.2.2 \
		local 192.0.2.1 ttl 9
	refused "$msg" ipn link add s9 type stt id 7 remote 2001:db8::2

	# Another key, remote or port is no clash.
	ipn link add s2 type stt id 8 remote 192.0.2.2 &&
		ipn link add s3 type stt id 7 remote 192.0.2.3 &&
		ipn link add s4 type stt id 7 remote 192.0.2.2 dstport 8000
	check_err $? "devices differing in key, remote or port were refused"

	# A change into an existing (port, key, remote) is refused too.
	refused "$msg" ipn link set s2 type stt id 7
	refused "$msg" ipn link set s3 type stt remote 192.0.2.2
	refused "$msg" ipn link set s3 type stt remote 2001:db8::2

	ipn link del s0
	ipn link add s9 type stt id 7 remote 192.0.2.2
	check_err $? "the key is not free again after deleting s0"
	ipn link del s9 2>/dev/null
	for d in s1 s2 s3 s4; do ipn link del "$d" 2>/dev/null; done
	log_test "same port+key+remote as an existing device: refused"
}

bad_external_twice()
{
	local msg="An external STT device already uses this destination port"

	RET=0
	ipn link add s0 type stt external
	check_err $? "ip link add s0 external failed"
	refused "$msg" ipn link add s9 type stt external
	refused "$msg" ipn link add s9 type stt external dstport 7471
	ipn link add s1 type stt external dstport 8000
	check_err $? "an external device on another port was refused"
	# Point-to-point devices share the port with the external one.
	ipn link add s2 type stt remote 192.0.2.2
	check_err $? "a point-to-point device next to the external one was refused"
	ipn link del s0
	ipn link add s9 type stt external
	check_err $? "port not free again for external after deleting s0"
	for d in s1 s2 s9; do ipn link del "$d" 2>/dev/null; done
	log_test "second external device on the same port: refused"
}

bad_change_dstport()
{
	local msg="Destination port cannot be changed on an existing device"

	RET=0
	ipn link add s0 type stt remote 192.0.2.2
	check_err $? "ip link add s0 failed"
	refused "$msg" ipn link set s0 type stt dstport 8000
	refused "$msg" ipn link set s0 type stt ttl 9 dstport 8000
	refused "$msg" nl set s0 port=8000
	ipn link add s1 type stt external dstport 8001
	check_err $? "ip link add s1 external failed"
	refused "$msg" ipn link set s1 type stt dstport 8002
	ipn link del s0
	ipn link del s1
	log_test "changing dstport of an existing device: refused"
}

bad_change_external()
{
	RET=0
	ipn link add s0 type stt remote 192.0.2.2
	check_err $? "ip link add s0 failed"
	refused "External mode cannot be changed on an existing device" \
		ipn link set s0 type stt external
	refused "External mode cannot be changed on an existing device" \
		nl set s0 external
	ipn link add s1 type stt external
	check_err $? "ip link add s1 external failed"
	refused "'noexternal' cannot be changed on an existing device" \
		ipn link set s1 type stt noexternal
	ipn link del s0
	ipn link del s1
	log_test "changing external of an existing device: refused"
}

bad_external_change_p2p()
{
	local msg="Device is in external mode: its addresses, id, ttl, tos and df come from packet metadata"

	RET=0
	ipn link add s0 type stt external
	check_err $? "ip link add s0 external failed"
	refused "$msg" ipn link set s0 type stt id 5
	refused "$msg" ipn link set s0 type stt remote 192.0.2.2
	refused "$msg" ipn link set s0 type stt ttl 5
	refused "$msg" ipn link set s0 type stt tos 0x10
	refused "$msg" ipn link set s0 type stt df unset
	refused "$msg" nl set s0 local=192.0.2.1
	ipn link del s0
	log_test "setting id/remote/ttl/tos/df on an external device: refused"
}

bad_port_in_use()
{
	RET=0
	# A local TCP socket holds the port: the device cannot reserve it.
	tcp_listen "$NS" 7990
	check_err $? "the TCP listener on port 7990 did not start"
	refused "Cannot reserve the STT port" \
		ipn link add s9 type stt remote 192.0.2.2 dstport 7990
	refused "Cannot reserve the STT port" \
		ipn link add s9 type stt external dstport 7990
	tcp_listen_stop
	log_test "dstport held by a local TCP socket: refused"
}

# A request the kernel refuses late (here: register_netdevice() rejects the
# name "bad/name") must not leave the port it asked for reserved.
bad_late_port()
{
	local out

	RET=0
	refused "Invalid argument" nl add bad/name remote=192.0.2.2 port=7991
	out=$(ip netns exec "$NS" "$PYTHON" -I -c '
import socket
s = socket.socket()
s.bind(("0.0.0.0", 7991))' 2>&1)
	check_err $? "port 7991 still reserved after the refused request: $out"
	log_test "a request refused by register_netdevice reserves no port"
}

bad_underlay()
{
	RET=0
	refused 'Cannot find device "nosuch0"' \
		ipn link add s9 type stt remote 192.0.2.2 dev nosuch0
	refused "Underlay device not found" nl add s9 remote=192.0.2.2 link=99999
	refused "Underlay device not found" nl add s9 external link=99999
	ipn link add s0 type stt remote 192.0.2.2 dev ul0
	check_err $? "ip link add s0 dev ul0 failed"
	refused "Underlay device not found" nl set s0 link=99999
	ipn link del s0
	log_test "unknown underlay device: refused, nothing created"
}

bad_mtu()
{
	RET=0
	refused "MTU must be between 68 and $MAX_MTU" \
		ipn link add s9 mtu $((MAX_MTU + 1)) type stt remote 192.0.2.2
	refused "MTU must be between 68 and $MAX_MTU" \
		ipn link add s9 mtu 65535 type stt external
	refused "MTU must be between 68 and $MAX_MTU" \
		nl add s9 mtu=67 remote=192.0.2.2
	ipn link add s0 type stt remote 192.0.2.2
	check_err $? "ip link add s0 failed"
	refused "mtu greater than device maximum" \
		ipn link set s0 mtu $((MAX_MTU + 1))
	refused "MTU must be between 68 and $MAX_MTU" \
		nl set s0 mtu=$((MAX_MTU + 1))
	ipn link del s0
	log_test "MTU above $MAX_MTU: refused"
}

cleanup()
{
	nl_stop
	rm -rf "$TMPD"
}

require_root
require_command ip
require_command "$PYTHON"
require_stt
if [[ ! -f "$IP_LIB_DIR/link_stt.so" ]]; then
	echo "SKIP: no link_stt.so (make plugin)"
	exit "$ksft_skip"
fi

setup_ns NS || exit 1
ipn link add ul0 type dummy &&
	ipn addr add 192.0.2.1/24 dev ul0 &&
	ipn addr add 2001:db8::1/64 dev ul0 nodad &&
	ipn link set ul0 up || exit 1
nl_start

tests_run
tests_exit
