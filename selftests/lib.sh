#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the STT selftests, in the style of the kernel's
# tools/testing/selftests/net/forwarding/lib.sh. Source it from a test:
#
#   source "$(dirname "$0")/lib.sh"
#   ALL_TESTS="first second"
#   first() { RET=0; cmd; check_err $? "cmd failed"; log_test "first"; }
#   ...
#   setup_ns NS1 NS2          # creates "$NS1" and "$NS2", removed at exit
#   tests_run
#   tests_exit                # 1 if a test failed, 4 if all skipped, else 0
#
# Results:   RET=0 at the start of each test; check_err ERR MSG records ERR if
#            nonzero, check_fail ERR MSG records a failure if ERR is zero;
#            log_test DESC [OPT] prints "TEST: <DESC padded to 60>  [ OK ]" or
#            "[FAIL]" plus the first failure message; log_skip DESC REASON
#            prints "[SKIP]" plus the reason. selftests/run.sh counts these
#            lines.
# Guards:    require_command CMD, require_root, require_stt (skip the whole
#            script with status 4 when missing).
# Waiting:   busywait TIMEOUT_MS CMD... (run CMD until it succeeds or
#            TIMEOUT_MS passes; returns CMD's last status, prints its output;
#            BUSYWAIT_SLEEP=S between tries, default 0.05, for slow CMDs).
# Netns:     setup_ns VAR... (unique names from mktemp -u, lo up),
#            cleanup_ns NS..., ns_exists NS. Every namespace made by setup_ns
#            is deleted at exit, after the script's own cleanup() if defined.
# Pair:      stt_pair_setup (namespaces NS_A/NS_B, veth underlay 10.0.0.x and
#            fd00::x, stt0 key 1 with 192.168.0.1 and .2); its parts
#            stt_pair_underlay and stt_pair_tunnel NS INNER REMOTE [ARGS].
#            a/b/c CMD... (CMD in NS_A/NS_B/NS_C).
# Counters:  dev_stat NS DEV NAME (one "ethtool -S" counter), dev_stats
#            ARRAY NS DEV (all of them into an associative array), stat_of
#            NAME (one of stt0's in NS_B, the receiver of most tests),
#            link_packets NS DEV rx|tx (the core's packet count),
#            reasm_sampler NS DEV SECONDS FILE (reassembly memory over
#            time, in the background; SAMPLER_PID), reasm_samples_check
#            FILE [LIMIT] (check_err on samples above the bound; REASM_MAX).
# STT:       STT_MODULE_DIR (the tree; the runner exports it), IP_LIB_DIR
#            (set to the tree's iproute2 plugin if built), stt_loaded,
#            stt_ko (path of stt.ko), stt_unload (stt and its users),
#            stt_load (stt, then the rest of STT_MODULES), stt_reload,
#            stt_devices [NS] (names of the devices of kind "stt").
# Traffic:   ping_ok NS ARGS... (a ping answered), ping_none NS ARGS...;
#            server_start NS (stt_tcp.py server on XPORT, 5000), xfer NS_SRV
#            NS_CLI BYTES ADDR... (checksummed transfers, XFER_TIMEOUT
#            seconds each, 120 by default; XOK[ADDR] and XINFO[ADDR]),
#            xfer_once NS_SRV NS_CLI BYTES ADDR (the same with a server
#            of its own; XFER_INFO),
#            xfer_check ADDR (check_err on it), servers_stop NS...|--all.
#            tcp_listen NS PORT (a local TCP listener; LISTEN_PID),
#            tcp_listen_stop.
#            Files go to
#            XFER_DIR (a temporary directory, removed at exit).
# OVS:       geneve_opts_warn (this kernel's openvswitch.ko WARNs when a
#            flow sets Geneve options: no Geneve under panic_on_warn).
# Options:   TESTS="a b" runs a subset; VERBOSE=1 echoes run_cmd commands.
#
# Safe with "set -u". lib.sh installs an EXIT trap; a script that sets its
# own trap replaces it (and should call cleanup_all_ns itself).

ksft_pass=0
ksft_fail=1
ksft_skip=4

RET=0
retmsg=
EXIT_STATUS=0
TESTS_OK=0
TESTS_FAIL=0
TESTS_SKIP=0
NS_LIST=()

STT_MODULE_DIR=${STT_MODULE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
export STT_MODULE_DIR
# The "ip link ... type stt" plugin, when built in the tree.
if [[ -z "${IP_LIB_DIR:-}" && -f "$STT_MODULE_DIR/tools/iproute2/link_stt.so" ]]; then
	export IP_LIB_DIR=$STT_MODULE_DIR/tools/iproute2
fi

# ---- results ---------------------------------------------------------------

check_err()
{
	local err=$1
	local msg=${2:-}

	if [[ $RET -eq 0 && $err -ne 0 ]]; then
		RET=$err
		retmsg=$msg
	fi
}

check_fail()
{
	local err=$1
	local msg=${2:-}

	if [[ $RET -eq 0 && $err -eq 0 ]]; then
		RET=1
		retmsg=$msg
	fi
}

check_err_fail()
{
	local should_fail=$1; shift
	local err=$1; shift
	local what=$1; shift

	if ((should_fail)); then
		check_fail "$err" "$what succeeded, but should have failed"
	else
		check_err "$err" "$what failed"
	fi
}

log_test()
{
	local test_name=$1
	local opt_str=${2:+ ($2)}

	if [[ $RET -ne 0 ]]; then
		EXIT_STATUS=$ksft_fail
		TESTS_FAIL=$((TESTS_FAIL + 1))
		printf "TEST: %-60s  [FAIL]\n" "$test_name$opt_str"
		[[ -n "$retmsg" ]] && printf "\t%s\n" "$retmsg"
		RET=0
		retmsg=
		return 1
	fi

	TESTS_OK=$((TESTS_OK + 1))
	printf "TEST: %-60s  [ OK ]\n" "$test_name$opt_str"
	return 0
}

log_skip()
{
	local test_name=$1
	local reason=${2:-}

	TESTS_SKIP=$((TESTS_SKIP + 1))
	printf "TEST: %-60s  [SKIP]\n" "$test_name"
	[[ -n "$reason" ]] && printf "\t%s\n" "$reason"
	RET=0
	retmsg=
	return 0
}

log_info()
{
	echo "INFO: $1"
}

# tests_run: each of TESTS (default ALL_TESTS), with the time it took
# (TCG budgets matter).
tests_run()
{
	local current_test start

	for current_test in ${TESTS:-${ALL_TESTS:-}}; do
		start=$SECONDS
		RET=0
		retmsg=
		$current_test
		log_info "$current_test: $((SECONDS - start)) s"
	done
}

# 1 if any test failed, 4 if every test was skipped, else 0.
tests_status()
{
	if ((TESTS_FAIL || EXIT_STATUS == ksft_fail)); then
		echo $ksft_fail
	elif ((TESTS_SKIP && !TESTS_OK)); then
		echo $ksft_skip
	else
		echo $ksft_pass
	fi
}

tests_exit()
{
	exit "$(tests_status)"
}

# ---- guards ----------------------------------------------------------------

require_command()
{
	local cmd=$1

	if [[ ! -x "$(command -v "$cmd")" ]]; then
		echo "SKIP: $cmd not installed"
		exit $ksft_skip
	fi
}

require_root()
{
	if [[ $(id -u) -ne 0 ]]; then
		echo "SKIP: need root"
		exit $ksft_skip
	fi
}

require_stt()
{
	if ! stt_loaded && ! stt_load 2>/dev/null; then
		echo "SKIP: stt module not loaded"
		exit $ksft_skip
	fi
}

# ---- helpers ---------------------------------------------------------------

run_cmd()
{
	[[ -n "${VERBOSE:-}" ]] && echo "COMMAND: $*"
	"$@"
}

busywait()
{
	local timeout=$1; shift
	local start_time now out ret

	start_time=$(date -u +%s%3N)
	while true; do
		out=$("$@")
		ret=$?
		if ((!ret)); then
			echo -n "$out"
			return 0
		fi
		now=$(date -u +%s%3N)
		if ((now - start_time > timeout)); then
			echo -n "$out"
			return $ret
		fi
		sleep "${BUSYWAIT_SLEEP:-0.05}"
	done
}

# ---- network namespaces ----------------------------------------------------

# setup_ns NS1 NS2...: create one namespace per variable name, store its
# unique name in the variable, bring lo up.
setup_ns()
{
	local var name

	for var in "$@"; do
		name=$(mktemp -u "${var,,}-XXXXXX")
		ip netns add "$name" || return 1
		NS_LIST+=("$name")
		ip -n "$name" link set lo up
		printf -v "$var" '%s' "$name"
	done
}

ns_exists()
{
	ip netns list | grep -qw -- "$1"
}

cleanup_ns()
{
	local ns i

	for ns in "$@"; do
		ip netns del "$ns" 2>/dev/null
		for i in "${!NS_LIST[@]}"; do
			[[ ${NS_LIST[i]} == "$ns" ]] && unset 'NS_LIST[i]'
		done
	done
	return 0
}

cleanup_all_ns()
{
	[[ ${#NS_LIST[@]} -gt 0 ]] && cleanup_ns "${NS_LIST[@]}"
	return 0
}

__lib_exit()
{
	local rc=$?

	if declare -F cleanup >/dev/null; then
		cleanup
	fi
	servers_stop --all
	tcp_listen_stop
	cleanup_all_ns
	[[ -n "$XFER_DIR" && "$XFER_DIR" == /tmp/stt-xfer-* ]] && rm -rf "$XFER_DIR"
	exit $rc
}
trap __lib_exit EXIT

# ---- traffic ---------------------------------------------------------------

PY=${PY:-/usr/bin/python3}
TCPX=$STT_MODULE_DIR/selftests/stt_tcp.py
XPORT=${XPORT:-5000}
XFER_DIR=${XFER_DIR:-}

# xfer_dir: make XFER_DIR on first use (the exit trap removes it).
xfer_dir()
{
	[[ -n "$XFER_DIR" ]] || XFER_DIR=$(mktemp -d /tmp/stt-xfer-XXXXXX)
}

# ping_ok NS ARGS...: at least one ping answered within PING_WAIT seconds
# (5 by default; the first may go to ARP/ND). ping -c 3 -w stops after 3
# replies, but late replies, duplicates and resends can make it count more.
# PING_OUT keeps ping's summary line for a failure message.
ping_ok()
{
	local ns=$1 out

	shift
	out=$(ip netns exec "$ns" ping -q -c 3 -i 0.2 -w "${PING_WAIT:-5}" \
	      "$@" 2>&1)
	# shellcheck disable=SC2034 # for the caller's messages
	PING_OUT=$(grep -m1 -e 'transmitted' -e 'ping:' <<<"$out")
	[[ $out =~ \ [1-9][0-9]*\ received ]]
}

# ping_none NS ARGS...: none of 3 pings answered.
ping_none()
{
	local ns=$1 out

	shift
	out=$(ip netns exec "$ns" ping -q -c 3 -i 0.2 -w 2 "$@" 2>&1)
	[[ $out == *" 0 received"* ]]
}

# tcp_listen NS PORT: a TCP socket of NS listening on PORT (any address),
# in the background until tcp_listen_stop (or exit); its PID goes to
# LISTEN_PID. Returns 1 if it did not start: a caller that wants the port
# held must check.
LISTEN_PID=
tcp_listen()
{
	local ready

	xfer_dir
	ready=$XFER_DIR/listen-$1-$2
	: >"$ready"
	ip netns exec "$1" "$PY" -I -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen()
print("ready", flush=True)
time.sleep(300)' "$2" >"$ready" &
	LISTEN_PID=$!
	busywait 10000 grep -q ready "$ready" >/dev/null
}

tcp_listen_stop()
{
	[[ -n "$LISTEN_PID" ]] || return 0
	kill "$LISTEN_PID" 2>/dev/null
	wait "$LISTEN_PID" 2>/dev/null
	LISTEN_PID=
	return 0
}

# server_start NS: the transfer server of NS (one per namespace), until
# servers_stop NS... or servers_stop --all (the exit trap calls that: a
# server left running would hold run.sh's output open, and deleting its
# namespace does not end it).
declare -A SERVER_PID
servers_stop()
{
	local ns

	[[ "${1:-}" == --all ]] && set -- "${!SERVER_PID[@]}"
	for ns in "$@"; do
		[[ -n "${SERVER_PID[$ns]:-}" ]] || continue
		kill "${SERVER_PID[$ns]}" 2>/dev/null
		wait "${SERVER_PID[$ns]}" 2>/dev/null
		unset "SERVER_PID[$ns]"
	done
	return 0
}

server_start()
{
	local ns=$1

	xfer_dir
	: >"$XFER_DIR/srv-$ns.out"
	# A server that ran before in NS left its .ready: not this one's.
	rm -f "$XFER_DIR/srv-$ns.out.ready"
	ip netns exec "$ns" "$PY" "$TCPX" --timeout 120 server "$XPORT" \
		"$XFER_DIR/srv-$ns.out" 2>"$XFER_DIR/srv-$ns.err" &
	# shellcheck disable=SC2034 # the caller kills it
	SERVER_PID[$ns]=$!
	busywait 60000 test -e "$XFER_DIR/srv-$ns.out.ready"
}

# xfer NS_SRV NS_CLI BYTES ADDR...: one client run in NS_CLI sends BYTES
# to each ADDR (the server of NS_SRV), one after the other. Sets, per
# ADDR, XOK[ADDR] (1 when the server received BYTES with the sha256 the
# client sent) and XINFO[ADDR] ("N MB in S s, R Mbit/s" or the error).
declare -A XOK XINFO
xfer()
{
	local srv=$1 cli=$2 bytes=$3 out addr a laddr cb ch csec crate
	local sb sh peer n0 i lines=()
	local -A got

	xfer_dir
	shift 3
	mapfile -t lines <"$XFER_DIR/srv-$srv.out"
	n0=${#lines[@]}
	out=$(ip netns exec "$cli" "$PY" "$TCPX" --timeout "${XFER_TIMEOUT:-120}" client \
		"$XPORT" "$bytes" "$@" 2>&1)
	# Server lines "<bytes> <sha256> <peer>", keyed by the client address.
	mapfile -t lines <"$XFER_DIR/srv-$srv.out"
	for ((i = n0; i < ${#lines[@]}; i++)); do
		read -r sb sh peer <<<"${lines[i]}"
		got[$peer]="$sb $sh"
	done
	for addr in "$@"; do
		XOK[$addr]=0
		XINFO[$addr]="no client result: ${out//$'\n'/ }"
		while read -r a laddr cb ch csec crate; do
			[[ "$a" == "$addr" ]] || continue
			if [[ "$laddr" == error ]]; then
				XINFO[$addr]="$cb $ch $csec $crate"
				break
			fi
			read -r sb sh <<<"${got[$laddr]}"
			if [[ "$sb" == "$bytes" && "$cb" == "$bytes" &&
			      "$sh" == "$ch" ]]; then
				XOK[$addr]=1
				XINFO[$addr]="$((bytes / 1000000)) MB in ${csec}s, $crate Mbit/s"
			else
				XINFO[$addr]="sent $cb bytes sha256 ${ch:0:16}.., received ${sb:-nothing} sha256 ${sh:0:16}.."
			fi
		done <<<"$out"
	done
}

# xfer_once NS_SRV NS_CLI BYTES ADDR: one transfer (xfer) to a server
# of its own in NS_SRV, stopped after it. XFER_INFO says what happened;
# the status is 0 when the bytes arrived intact.
xfer_once()
{
	local srv=$1 cli=$2 bytes=$3 addr=$4

	XFER_INFO="no transfer server in $srv"
	if ! server_start "$srv"; then
		servers_stop "$srv"
		return 1
	fi
	xfer "$srv" "$cli" "$bytes" "$addr"
	servers_stop "$srv"
	# shellcheck disable=SC2034 # for the caller
	XFER_INFO=${XINFO[$addr]}
	((XOK[$addr]))
}

# xfer_check ADDR: check_err on the last transfer to ADDR.
xfer_check()
{
	((XOK[$1]))
	check_err $? "transfer to $1: ${XINFO[$1]}"
}

# ---- packet captures --------------------------------------------------------

# file_settled FILE: wait (up to 20 s) until FILE has not grown for 3 s: a
# capture's writer (tcpdump -U, or -l to a file) has written out what it
# had read. libpcap reads the kernel's ring a block at a time, and the
# kernel hands a block over up to two of tcpdump's 1 s timeouts after its
# last packet; what is still in the ring when tcpdump is interrupted is
# lost. (--immediate-mode hands over each packet, but its ring of one
# slot per packet overflows in bursts unless enlarged, and in Debian 13's
# guest its captures of datapath.sh and bounds.sh missed segments even
# with -B 65536, for a reason not found.)
file_settled()
{
	local size=-1 now same=0

	for _ in $(seq 40); do
		now=$(stat -c %s "$1" 2>/dev/null)
		if [[ $now == "$size" ]]; then
			same=$((same + 1))
			((same >= 6)) && return 0
		else
			same=0
		fi
		size=$now
		sleep 0.5
	done
	return 1
}

# capture_start NS DEV FILE FILTER [SNAPLEN]: tcpdump on DEV in netns NS
# into the pcap FILE (SNAPLEN bytes of each packet, default all) until
# capture_stop; returns once tcpdump listens (status 1 if it never did).
# One capture at a time.
capture_start()
{
	ip netns exec "$1" tcpdump -i "$2" -s "${5:-0}" -U -w "$3" "$4" 2>"$3.log" &
	CAPTURE_PID=$!
	CAPTURE_FILE=$3
	busywait 30000 file_has "$3.log" "listening on"
}

# capture_stop: end it once the file stops growing (interrupted, tcpdump
# drops what it has not read from its ring yet, and a loaded TCG guest
# schedules it late).
capture_stop()
{
	file_settled "$CAPTURE_FILE"
	kill -INT "$CAPTURE_PID" 2>/dev/null
	wait "$CAPTURE_PID" 2>/dev/null
}

file_has()
{
	[[ -f "$1" && "$(<"$1")" == *"$2"* ]]
}

# ---- Open vSwitch and OVN logs ---------------------------------------------

# ovs_boot_settle: wait until this kernel has been up 11 s; call it before
# starting ovs-vswitchd. Open vSwitch 3.1.0 (Debian 12's 3.1.0-2+deb12u1)
# caches "no CPU" when it first counts CPUs less than 10 s after boot
# (fixed upstream in 3.1.1, fff04b838 "ovs-thread: Fix cpus not read for
# the first 10s"); with the kernel's per-CPU upcall dispatch it then runs
# no handler thread ("Overriding n-handler-threads to 0") and every
# datapath miss is lost until a reconfiguration after the 10 s happens to
# recount. A guest started straight into a test is that young.
ovs_boot_settle()
{
	local up

	read -r up _ </proc/uptime
	up=${up%.*}
	((up >= 11)) || sleep $((11 - up))
}

# ovs_vswitchd_start ERRFILE [WRAPPER...]: ovs-vswitchd, detached, its log
# in its own file at level info (nothing on the console or syslog), started
# through WRAPPER (e.g. a function entering a chassis's namespace); what it
# prints before it detaches is appended to ERRFILE.
ovs_vswitchd_start()
{
	local err=$1

	shift
	ovs_boot_settle
	"$@" ovs-vswitchd --detach --no-chdir --pidfile --log-file \
		-vconsole:off -vsyslog:off -vfile:info 2>>"$err"
}

# ovs_log_problems FILE [FROM_LINE]: the WARN/ERR/EMER lines of an Open
# vSwitch or OVN log (from line FROM_LINE on), but for kinds that are
# expected here:
#   - timing: timeval's reports of slow poll intervals and ovs_rcu's of a
#     thread that took seconds to quiesce (TCG, and more so a debug kernel,
#     make every main loop slow; they are about the machine);
#   - the notice that STT is deprecated (Open vSwitch 3.5: "'stt' port
#     type is deprecated", OVN 25.03: "STT encapsulation type is
#     deprecated"; both dropped STT in the next release);
#   - ovs-vswitchd's "br-int<->unix#N: connection dropped (Broken pipe)":
#     a local OpenFlow client (ovn-controller opens and closes such
#     connections as it starts) closed its connection while vswitchd was
#     still writing to it; seen under the debug kernel, where everything is
#     slow. Nothing of the tunnels; a daemon that died fails the traffic
#     checks instead;
#   - on a kernel without devlink (the debug kernel's configuration),
#     ovn-controller's representor plug provider, which needs it, failing
#     to start;
#   - a rate limiter's "Dropped N log messages ... due to excessive rate",
#     in a module whose every other such line is one of the above: the
#     summary comes at the level and in the module of what it dropped, and
#     OVN 25.03's chassis module repeats its deprecation notice often
#     enough under TCG to be limited (make check on a loaded host).
ovs_log_problems()
{
	local nodevlink='^$' lines

	devlink dev show >/dev/null 2>&1 ||
		nodevlink='\|vif_plug_provider\|WARN\|failed to initialize representor VIF plug provider class: '
	lines=$(tail -n +"${2:-1}" "$1" | grep -E '\|(WARN|ERR|EMER)\|')
	[[ -n "$lines" ]] || return 0
	ovs_log_unexpected <<<"$lines" |
		awk -F'|' -v dropped='^Dropped [0-9]+ log messages in last [0-9]+ seconds \\(most recently, [0-9]+ seconds ago\\) due to excessive rate$' '
			# first input: every line; second: the unexpected ones.
			# A summary stays if its module and level had nothing
			# else, or something else unexpected.
			NR == FNR { seen[$3 "|" $4]++; next }
			{ line[++n] = $0; mod[n] = $3 "|" $4; msg[n] = $5
			  if ($5 !~ dropped) bad[$3 "|" $4]++
			  else nd[$3 "|" $4]++ }
			END { for (i = 1; i <= n; i++)
				if (msg[i] !~ dropped || bad[mod[i]] ||
				    seen[mod[i]] == nd[mod[i]])
					print line[i] }' <(printf '%s\n' "$lines") -
}

# ovs_log_unexpected: ovs_log_problems' filters, standard input to output
# (its caller's $nodevlink).
ovs_log_unexpected()
{
	grep -vE '\|timeval(\([a-z0-9_]+\))?\|WARN\|(Unreasonably long [0-9]+ms poll interval|faults: |disk: |context switches: )' |
		grep -vE '\|ovs_rcu(\([a-z0-9_]+\))?\|WARN\|blocked [0-9]+ ms waiting for [a-z0-9_]+ to quiesce$' |
		grep -vE '\|rconn\|WARN\|br-int<->unix#[0-9]+: connection dropped \(Broken pipe\)$' |
		grep -vE "\|WARN\|(.*: 'stt' port type is deprecated\.|STT encapsulation type is deprecated)$" |
		grep -vE "$nodevlink"
}

# Does this kernel's openvswitch.ko WARN when a flow sets Geneve options?
# From 6.10 until the options[] flexible array (7.x), ip_tunnel_info_opts()
# is a macro over "(info) + 1", and FORTIFY_SOURCE sees the options copy
# in validate_and_copy_set_tun() as a field-spanning memcpy: a WARNING
# (a panic under vm-run) on Debian 13's 6.12 as soon as OVN uses Geneve.
# A bug of that kernel, nothing of STT's; read from its own headers.
geneve_opts_warn() {
	local k h c

	k=/lib/modules/$(uname -r)/build
	# Debian's headers: the -common tree, named by the Makefile
	c=$(sed -n 's|^include \(.*\)/Makefile$|\1|p' "$k/Makefile" 2>/dev/null)
	h=${c:-$k}/include/net/ip_tunnels.h
	[ -r "$h" ] || return 1
	grep -q '((info) + 1))' "$h" && ! grep -q 'options\[\]' "$h"
}

# ---- two hosts, one tunnel -------------------------------------------------

a() { ip netns exec "$NS_A" "$@"; }
b() { ip netns exec "$NS_B" "$@"; }
c() { ip netns exec "$NS_C" "$@"; }

# dev_stat NS DEV NAME: one "ethtool -S DEV" counter of NS, empty if DEV
# has no such counter.
dev_stat()
{
	ip netns exec "$1" ethtool -S "$2" | awk -v n="$3:" '$1 == n { print $2 }'
}

# dev_stats ARRAY NS DEV: every "ethtool -S DEV" counter of NS into the
# associative array ARRAY[name].
dev_stats()
{
	local -n __dev_stats=$1
	local k v

	__dev_stats=()
	while read -r k v; do
		# shellcheck disable=SC2034 # a nameref
		[[ $k == *: && $v =~ ^[0-9]+$ ]] && __dev_stats[${k%:}]=$v
	done < <(ip netns exec "$2" ethtool -S "$3")
}

stat_of() { dev_stat "$NS_B" stt0 "$1"; }

# snmp_stat NS NAME: the SNMP or netstat counter NAME of NS as nstat
# names it (UdpNoPorts, TcpInCsumErrors, IcmpInEchos), absolute: nstat's
# history file is neither read nor written.
snmp_stat()
{
	ip netns exec "$1" nstat -asz "$2" | awk -v k="$2" '$1 == k { print $2 }'
}

# link_packets NS DEV rx|tx: DEV's packet count in that direction, as the
# core counts it (rtnl_link_stats64), empty if DEV is missing.
link_packets()
{
	ip -n "$1" -s -j link show dev "$2" 2>/dev/null |
		jq -r --arg d "$3" '.[0].stats64[$d].packets // empty'
}

# reasm_sampler NS DEV SECONDS FILE: in the background until killed, a
# line "bytes limit" of DEV's reassembly memory every SECONDS into FILE.
# Its PID goes to SAMPLER_PID.
reasm_sampler()
{
	(
		while :; do
			ip netns exec "$1" ethtool -S "$2" | awk '
				$1 == "ns_reasm_mem_bytes:" { m = $2 }
				$1 == "ns_reasm_mem_limit:" { l = $2 }
				END { print m, l }'
			sleep "$3"
		done
	) >"$4" &
	# shellcheck disable=SC2034 # for the caller
	SAMPLER_PID=$!
}

# A segment is charged before it evicts (stt-internals.rst), so a sample
# taken meanwhile counts the segment each CPU has in flight; the sampler
# sums per-CPU shares read at different moments, so the slack is one
# segment per CPU (nproc), not per other CPU.  A charge is one skb's
# truesize and a queue's bookkeeping; GRO merges at most 64 KB of
# payload, and the truesize of such an skb stays well under 256 KiB.  A
# bound that failed would let a flood grow by megabytes a second.
REASM_INFLIGHT_MAX=$((256 * 1024))

# reasm_samples_check FILE [LIMIT]: check_err on each sample of
# reasm_sampler's FILE above its limit plus a segment in flight per CPU,
# or whose limit is not LIMIT; the largest sample goes to REASM_MAX.
reasm_samples_check()
{
	local m lim slack=$(($(nproc) * REASM_INFLIGHT_MAX))

	REASM_MAX=0
	while read -r m lim; do
		[[ -z "$m" ]] && continue
		((m > REASM_MAX)) && REASM_MAX=$m
		((m <= lim + slack)) ||
			check_err 1 "ns_reasm_mem_bytes $m > limit $lim + $slack in flight"
		[[ -z "${2:-}" ]] || ((lim == $2)) ||
			check_err 1 "ns_reasm_mem_limit $lim, want $2"
	done <"$1"
}

# stt_pair_underlay: NS_A and NS_B (from setup_ns) joined by veth vA/vB,
# 10.0.0.1/24 + fd00::1/64 and 10.0.0.2/24 + fd00::2/64.
stt_pair_underlay()
{
	ip link add vA netns "$NS_A" type veth peer name vB netns "$NS_B" ||
		return 1
	ip -n "$NS_A" addr add 10.0.0.1/24 dev vA
	ip -n "$NS_B" addr add 10.0.0.2/24 dev vB
	ip -n "$NS_A" addr add fd00::1/64 dev vA nodad
	ip -n "$NS_B" addr add fd00::2/64 dev vB nodad
	ip -n "$NS_A" link set vA up
	ip -n "$NS_B" link set vB up
}

# stt_pair_tunnel NS INNER REMOTE [ARGS...]: stt0 in NS to REMOTE with key
# 1 (ARGS go before "type", e.g. "address MAC"), INNER/24 on it, up. No
# IPv6 on stt0: its chatter (RS, MLD) would move the counters tests read.
stt_pair_tunnel()
{
	local ns=$1 inner=$2 remote=$3

	shift 3
	ip -n "$ns" link add stt0 "$@" type stt remote "$remote" key 1 ||
		return 1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.stt0.disable_ipv6=1
	ip -n "$ns" addr add "$inner"/24 dev stt0
	ip -n "$ns" link set stt0 up
}

# stt_pair_setup: NS_A and NS_B, the underlay and a tunnel, 192.168.0.1
# (A) to 192.168.0.2 (B).
stt_pair_setup()
{
	setup_ns NS_A NS_B && stt_pair_underlay &&
		stt_pair_tunnel "$NS_A" 192.168.0.1 10.0.0.2 &&
		stt_pair_tunnel "$NS_B" 192.168.0.2 10.0.0.1
}

# ---- STT -------------------------------------------------------------------

stt_loaded()
{
	[[ -d /sys/module/stt ]]
}

# Path of stt.ko: the one vm-run loaded (STT_MODULES), else the tree's.
stt_ko()
{
	local ko

	for ko in ${STT_MODULES:-}; do
		[[ ${ko##*/} == stt.ko ]] && { echo "$ko"; return; }
	done
	[[ -f "$STT_MODULE_DIR/stt.ko" ]] && echo "$STT_MODULE_DIR/stt.ko"
	return 0
}

# Unload stt and the modules using it (vport-stt).
stt_unload()
{
	local h

	stt_loaded || return 0
	for h in /sys/module/stt/holders/*; do
		[[ -e $h ]] && { rmmod "${h##*/}" || return 1; }
	done
	rmmod stt
}

# Load stt.ko (stt_ko, else modprobe), then the other modules vm-run had
# loaded (STT_MODULES), in order.
stt_load()
{
	local ko name

	if ! stt_loaded; then
		ko=$(stt_ko)
		if [[ -n "$ko" ]]; then
			insmod "$ko" || return 1
		else
			modprobe stt || return 1
		fi
	fi
	for ko in ${STT_MODULES:-}; do
		name=${ko##*/}
		name=${name%%.ko*}
		[[ -d /sys/module/${name//-/_} ]] || insmod "$ko" || return 1
	done
}

stt_reload()
{
	stt_unload && stt_load
}

# Names of the devices of kind "stt" in the current netns (or in NS).
stt_devices()
{
	local ns=${1:-}

	ip ${ns:+-n "$ns"} -d -j link show |
		jq -r '.[] | select(.linkinfo.info_kind == "stt") | .ifname'
}
