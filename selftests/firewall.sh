#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# STT beside a stateful firewall and conntrack. The receiver's INPUT holds a
# typical rule set (ct state established,related accept; tcp dport 7471
# accept; drop the rest); the sender's OUTPUT uses conntrack too. Checks:
# the tunnel carries ping and a checksummed transfer; outer STT segments
# leave no conntrack entry on either side (TX marks them untracked, RX
# steals them before conntrack confirms) while inner flows are tracked;
# dropping the STT port in INPUT blocks the tunnel (the receive hook runs
# after the filter table); with nf_conntrack_tcp_loose=0 a
# "ct state invalid drop" rule blocks STT and a notrack rule restores it;
# outer IPv6 fragments, which nf_defrag_ipv6 reassembles before LOCAL_IN
# once conntrack is on, are still dropped as fragments; segments waiting
# in reassembly hold no conntrack entry (else deleting the namespace hangs
# in conntrack's cleanup, which waits for every entry to go), and the
# namespace is deleted at the end with such segments queued.
#
#   +---- $NS_A (sender) ---------+     +---- $NS_B (receiver, firewall) --+
#   | stt0 192.168.0.1/24         |     | stt0 192.168.0.2/24              |
#   | nft: ct in output           |     | nft inet filter input:           |
#   |                             |     |   ct state established,related   |
#   |                             |     |   iifname stt0 accept            |
#   |                             |     |   tcp dport 7471 accept; drop    |
#   | vA 10.0.0.1/24 fd00::1 -----+-----+-- vB 10.0.0.2/24 fd00::2         |
#   +-----------------------------+     +----------------------------------+
#
# Run in the VM:  scripts/vm/run.sh --timeout 1500 -- selftests/firewall.sh
# Needs nft (Debian package nftables); conntrack (package conntrack) for
# the conntrack table checks.

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	stateful_ruleset
	no_conntrack_entries
	drop_stt_port
	loose_off_invalid_drop
	ipv6_fragments_with_defrag
	queued_segments_no_conntrack
"

CRAFT=$(cd "$(dirname "$0")" && pwd)/stt_craft.py
TMP=$(mktemp -d)

cleanup()
{
	rm -rf "$TMP"
}

setup()
{
	stt_pair_setup || return 1
	B_MAC=$(b cat /sys/class/net/vB/address)

	# Sender: conntrack on (a ct expression in output and input).
	a nft -f - <<-EOF || return 1
		table inet stt_fw {
			chain output {
				type filter hook output priority filter; policy accept;
				ct state new counter
			}
			chain input {
				type filter hook input priority filter; policy accept;
				ct state established,related counter accept
			}
		}
	EOF
	# Receiver: the typical stateful rule set. The overlay's own traffic
	# (iifname stt0) has a policy of its own; ARP is not in "inet".
	b nft -f - <<-EOF || return 1
		table inet stt_fw {
			chain input {
				type filter hook input priority filter; policy drop;
				ct state established,related counter accept
				iif lo accept
				iifname "stt0" counter accept
				tcp dport 7471 counter accept
				counter drop
			}
		}
	EOF
}

# reading NAME: one of B's ethtool -S counters, or nf_conntrack_count.
reading()
{
	case $1 in
	nf_conntrack_count) b sysctl -n net.netfilter.nf_conntrack_count ;;
	*) stat_of "$1" ;;
	esac
}

# craft_deltas CLASS N NAME...: A sends N crafted CLASS segments
# (stt_craft.py); once B's first reading has grown by N (at most 10 s) and
# none has changed for half a second, DELTA[NAME] is how much each grew.
declare -A DELTA
craft_deltas()
{
	local class=$1 n=$2 name out now last=
	local -A before cur

	shift 2
	for name; do
		before[$name]=$(reading "$name")
	done
	out=$(a python3 "$CRAFT" --dev vA --dst-mac "$B_MAC" --count "$n" \
		send "$class")
	check_err $? "stt_craft.py send $class failed: $out"
	for _ in $(seq 20); do
		now=
		for name; do
			cur[$name]=$(reading "$name")
			now+=" ${cur[$name]}"
		done
		[[ $now == "$last" ]] && ((cur[$1] - before[$1] >= n)) && break
		last=$now
		sleep 0.5
	done
	for name; do
		DELTA[$name]=$((cur[$name] - before[$name]))
	done
}

ping_ok() { a ping -c1 -W1 192.168.0.2 >/dev/null; }

# transfer BYTES: A -> B over the tunnel, sha256 compared.
transfer()
{
	XFER_TIMEOUT=120 xfer_once "$NS_B" "$NS_A" "$1" 192.168.0.2
	local rc=$?

	log_info "transfer: $XFER_INFO"
	return "$rc"
}

# rule_packets COMMENT_PATTERN: packets counted by the receiver's rule
# whose text matches.
rule_packets()
{
	b nft list chain inet stt_fw input |
		awk -v pat="$1" 'index($0, pat) { for (i = 1; i < NF; i++)
			if ($i == "packets") { print $(i + 1); exit } }'
}

stateful_ruleset()
{
	local n0 n1 p

	RET=0
	n0=$(stat_of ns_rx_segments)
	busywait 10000 ping_ok
	check_err $? "ping over the tunnel fails behind the rule set"
	transfer 5000000
	check_err $? "transfer over the tunnel failed or differs"
	n1=$(stat_of ns_rx_segments)
	p=$(rule_packets "tcp dport 7471")
	log_info "STT segments received $((n1 - n0)); 'tcp dport 7471 accept' matched ${p:-?} packets"
	((${p:-0} > 0))
	check_err $? "no packet went through the 'tcp dport 7471 accept' rule"
	log_test "stateful INPUT rule set: ping and transfer over STT"
}

# ct_list NS ARGS: conntrack -L in NS, entries only.
ct_list()
{
	local ns=$1

	shift
	ip netns exec "$ns" conntrack -L "$@" 2>/dev/null | grep -v '^conntrack'
}

no_conntrack_entries()
{
	local ns out inner n

	RET=0
	if [[ ! -x "$(command -v conntrack)" ]]; then
		log_skip "STT segments create no conntrack entries" \
			"conntrack not installed (Debian package conntrack)"
		return
	fi
	# Traffic that would have created entries, still in flight.
	transfer 2000000
	check_err $? "transfer failed"
	a ping -c3 -i 0.2 192.168.0.2 >/dev/null
	for ns in "$NS_A" "$NS_B"; do
		out=$(ct_list "$ns" -p tcp --dport 7471; ct_list "$ns" -p tcp --sport 7471)
		n=$(grep -c . <<<"$out")
		[[ -z "$out" ]]
		check_err $? "$n STT conntrack entries in $ns: $(head -2 <<<"$out")"
	done
	# Conntrack is on and sees the inner flows: the check is not vacuous.
	inner=$(ct_list "$NS_B" -s 192.168.0.1 | grep -c .)
	log_info "conntrack in $NS_B: $(ct_list "$NS_B" | grep -c .) entries, $inner inner ones, 0 for port 7471"
	((inner > 0))
	check_err $? "conntrack does not track the inner flows: is it on?"
	log_test "STT segments create no conntrack entries (TX and RX)"
}

drop_stt_port()
{
	local n0 n1 h

	RET=0
	b nft insert rule inet stt_fw input tcp dport 7471 counter drop
	check_err $? "cannot insert the drop rule"
	n0=$(stat_of ns_rx_segments)
	a ping -c3 -i 0.3 -W1 192.168.0.2 >/dev/null
	check_fail $? "ping passes although INPUT drops tcp dport 7471"
	n1=$(stat_of ns_rx_segments)
	((n1 == n0))
	check_err $? "the STT hook saw $((n1 - n0)) segments the filter dropped"
	log_info "dropped by the rule: $(rule_packets "tcp dport 7471 counter packets") packets"

	h=$(b nft -a list chain inet stt_fw input |
		awk '/tcp dport 7471 counter packets [0-9]+ bytes [0-9]+ drop/ { print $NF; exit }')
	b nft delete rule inet stt_fw input handle "$h"
	check_err $? "cannot delete the drop rule"
	busywait 10000 ping_ok
	check_err $? "ping fails after removing the drop rule"
	log_test "dropping the STT port in INPUT blocks the tunnel"
}

loose_off_invalid_drop()
{
	local h

	RET=0
	b sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0
	b nft insert rule inet stt_fw input ct state invalid counter drop
	a ping -c3 -i 0.3 -W1 192.168.0.2 >/dev/null
	check_fail $? "ping passes with tcp_loose=0 and 'ct state invalid drop'"
	log_info "with nf_conntrack_tcp_loose=0, 'ct state invalid drop' drops STT (conntrack sees a mid-stream TCP segment)"

	# The cure: do not track STT at all.
	b nft -f - <<-EOF
		table inet stt_raw {
			chain prerouting {
				type filter hook prerouting priority raw;
				tcp dport 7471 notrack
			}
		}
	EOF
	check_err $? "cannot add the notrack rule"
	busywait 10000 ping_ok
	check_err $? "ping fails with 'tcp dport 7471 notrack' in prerouting"
	transfer 2000000
	check_err $? "transfer fails with the notrack rule"

	b nft delete table inet stt_raw
	h=$(b nft -a list chain inet stt_fw input |
		awk '/ct state invalid counter/ { print $NF; exit }')
	b nft delete rule inet stt_fw input handle "$h"
	b sysctl -qw net.netfilter.nf_conntrack_tcp_loose=1
	log_test "tcp_loose=0 + 'ct state invalid drop' blocks, notrack cures"
}

ipv6_fragments_with_defrag()
{
	local n=200 f d

	RET=0
	# Conntrack is on for IPv6 in B (the inet table), so nf_defrag_ipv6
	# reassembles at PRE_ROUTING, before the STT hook at LOCAL_IN.
	craft_deltas v6_frag "$n" ns_drop_outer_fragment ns_rx_segments \
		ns_drop_no_device
	f=${DELTA[ns_drop_outer_fragment]} d=${DELTA[ns_drop_no_device]}
	log_info "$n fragmented IPv6 segments: ns_rx_segments +${DELTA[ns_rx_segments]}, ns_drop_outer_fragment +$f, ns_drop_no_device +$d"
	((f == n))
	check_err $? "outer IPv6 fragments not dropped as fragments with conntrack on: outer_fragment +$f, no_device +$d (nf_defrag_ipv6 reassembled them before the hook)"
	log_test "outer IPv6 fragments dropped with nf_defrag_ipv6 active"
}

# A segment waiting in reassembly must not pin the (unconfirmed) conntrack
# entry conntrack gave it before the hook stole it: nf_conntrack_count
# counts such entries though conntrack -L does not list them, and a netns
# whose count never reaches zero hangs its own deletion (and with it every
# later netns deletion and rmmod). The frames stay queued until the
# namespace goes at the end of the script, which vm-run's final rmmod
# checks.
queued_segments_no_conntrack()
{
	local n=50 q c param=/sys/module/stt/parameters/reasm_timeout_ms
	local timeout

	RET=0
	timeout=$(<"$param")
	echo 600000 >"$param"
	craft_deltas incomplete "$n" ns_reasm_pending_frames nf_conntrack_count
	echo "$timeout" >"$param"
	q=${DELTA[ns_reasm_pending_frames]} c=${DELTA[nf_conntrack_count]}
	log_info "$n incomplete frames: ns_reasm_pending_frames +$q, nf_conntrack_count +$c"
	((q == n))
	check_err $? "the incomplete frames are not queued: pending +$q"
	((c <= 0))
	check_err $? "queued segments hold conntrack entries: nf_conntrack_count +$c"
	log_test "segments queued for reassembly hold no conntrack entry"
}

require_root
require_stt
require_command ethtool
require_command ping
require_command python3
if [[ ! -x "$(command -v nft)" ]]; then
	echo "SKIP: nft not installed (Debian package nftables)"
	exit $ksft_skip
fi

if ! setup; then
	echo "SKIP: setup failed (stt device, veth or nft rule set)"
	exit $ksft_skip
fi
tests_run
tests_exit
