#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What transmit reallocates. pskb_expand_head() copies a packet's head and
# takes a reference on every page fragment: work per packet that nothing
# requires when the headroom is there and the shared info is not
# rewritten. Counted with a kprobe (stack traces tell who called it):
#
#   - request/response over STT: TCP's clones of small segments fit one
#     outer segment, so stt_xmit must not copy them (it did, every one);
#   - a TCP stream: TCP's clones of GSO packets share their head with an
#     original that keeps only its payload, so stt_xmit may rewrite the
#     GSO fields without a copy, as UDP tunnels do (it copied every one),
#     and neither may the receiver, to which veth hands the same clone
#     (it copied every one once transmit stopped doing so);
#   - over transport-mode ESP: the route's transform needs room in front
#     (dst.header_len); transmit reserves it, so the ESP output path must
#     not expand the head of what STT sends to make room. (It still copies
#     TCP's clones, which it may not encrypt in place: reported, not
#     judged. Counting those too made the check fail when few frames were
#     sent: 4 copies for 68 frames.) (It held before transmit
#     counted header_len too: TCP's headroom and the slack of our own
#     expansion covered ESP's 16 bytes; a check that it stays so.)
#
#   +--- A --------------+  veth  +--- B --------------+
#   | stt0 192.168.0.1   +--------+ stt0 192.168.0.2   |
#   | 10.0.0.1 (ESP: 2nd |        | 10.0.0.2           |
#   |  test only)        |        |                    |
#   +--------------------+        +--------------------+

# shellcheck disable=SC2317 # the tests run through tests_run
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	rr_no_copy
	stream_no_copy
	esp_no_expand
"

T=/sys/kernel/tracing
RR=${COPIES_RR:-200}
ALG="rfc4106(gcm(aes))"
KEY_AB=0x0123456789abcdef0123456789abcdef01234567
KEY_BA=0x89abcdef0123456789abcdef0123456789abcdef

cleanup()
{
	echo 0 >"$T/events/stt_copies/expand/enable" 2>/dev/null
	echo '-:stt_copies/expand' >>"$T/kprobe_events" 2>/dev/null
}

# probe_start: trace every pskb_expand_head() call with its stack.
probe_start()
{
	echo 'p:stt_copies/expand pskb_expand_head' >>"$T/kprobe_events" &&
		echo stacktrace >"$T/events/stt_copies/expand/trigger" &&
		echo 1 >"$T/events/stt_copies/expand/enable" && : >"$T/trace"
}

# expands_from PATTERN [CALLER [list]]: traced calls whose stack has a
# frame matching PATTERN (awk regex), since probe_start or the last clear;
# with CALLER, only those whose frame right above pskb_expand_head (its
# caller) matches CALLER too. With "list", each such call's caller, one
# per line, instead of the count ("stack": and its whole stack). A stack
# taken at a kprobe that does not sit on the function tracer (a kernel
# without it) starts with the tracing frames and has no pskb_expand_head
# frame: the caller is the frame after the trap (asm_exc_int3) or, for an
# optimized kprobe, after its trampoline's bare address.
expands_from()
{
	awk -v pat="$1" -v caller="${2:-}" -v list="${3:-}" '
		function done() {
			if (!own)
				top = trapped
			if (hit && top ~ caller) {
				n++
				if (list)
					print top (list == "stack" ? ":" stack : "")
			}
		}
		/ expand: / {
			done(); hit = 0; top = trapped = stack = ""
			above = own = trap = 0
			next
		}
		/^ => / {
			stack = stack "<" $2
			if (trap) { trapped = $2; trap = 0 }
			if ($2 == "asm_exc_int3" || $2 ~ /^0x/) trap = 1
			if (above) { top = $2; above = 0 }
			if ($2 == "pskb_expand_head") above = own = 1
			if ($2 ~ pat) hit = 1
		}
		END { done(); if (!list) print n + 0 }
	' "$T/trace"
}

# expand_callers PATTERN: "caller:count ..." of the calls expands_from
# PATTERN counts (for messages).
expand_callers()
{
	expands_from "$1" "" list | sort | uniq -c |
		awk '{ printf "%s%s:%d", (NR > 1 ? " " : ""), $2, $1 }'
}

# rr NS ADDR N: N 64-byte request/response exchanges over TCP.
rr()
{
	ip netns exec "$1" "$PY" - "$2" "$3" <<-'EOF'
	import socket, sys
	s = socket.create_connection((sys.argv[1], 5002), timeout=60)
	for _ in range(int(sys.argv[2])):
	    s.sendall(b"x" * 64)
	    got = 0
	    while got < 64:
	        got += len(s.recv(64 - got))
	s.close()
	EOF
}

rr_server()
{
	ip netns exec "$NS_B" "$PY" - "$XFER_DIR/rr.ready" <<-'EOF' &
	import socket, sys
	s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(("", 5002))
	s.listen(1)
	open(sys.argv[1], "w").close()
	c, _ = s.accept()
	while True:
	    d = c.recv(64)
	    if not d:
	        break
	    c.sendall(d)
	EOF
	SERVER_PID[rr]=$!
	busywait 30000 test -e "$XFER_DIR/rr.ready"
}

rr_no_copy()
{
	local n f0 f1

	RET=0
	f0=$(dev_stat "$NS_A" stt0 tx_frames)
	: >"$T/trace"
	rr "$NS_A" 192.168.0.2 "$RR"
	check_err $? "request/response over STT failed"
	n=$(expands_from '^stt_xmit')
	f1=$(dev_stat "$NS_A" stt0 tx_frames)
	# A few allowed: an ARP, the handshake's first segments.
	((n <= RR / 20))
	check_err $? "stt_xmit expanded $n heads for $RR exchanges"
	log_test "request/response over STT: TCP's clones not copied" \
		"$n expansions for $((f1 - f0)) frames sent by A (both sides: $RR exchanges)"
}

# A TCP stream: TCP transmits a clone of every GSO packet and keeps the
# original (its payload only: skb_header_release()) for retransmission.
# It fills the shared info's GSO fields itself on every transmission, as
# a UDP tunnel rewrites them after skb_header_unclone(), so stt_xmit need
# not copy the head to rewrite them either (it did, every GSO packet).
# veth delivers that very clone to B, whose receive path rewrites the
# GSO fields for the inner frame: no copy there either.
stream_no_copy()
{
	local n rx f0 f1 g0 g1

	RET=0
	f0=$(dev_stat "$NS_A" stt0 tx_frames)
	g0=$(dev_stat "$NS_A" stt0 tx_frames_gso)
	: >"$T/trace"
	xfer "$NS_B" "$NS_A" 10000000 192.168.0.2
	xfer_check 192.168.0.2
	n=$(expands_from '^stt_xmit')
	rx=$(expands_from '^stt_rcv')
	f1=$(dev_stat "$NS_A" stt0 tx_frames)
	g1=$(dev_stat "$NS_A" stt0 tx_frames_gso)
	((g1 - g0 > 50))
	check_err $? "only $((g1 - g0)) GSO frames sent"
	((n <= (f1 - f0) / 20))
	check_err $? "stt_xmit expanded $n heads for $((f1 - f0)) frames ($((g1 - g0)) GSO)"
	((rx <= (f1 - f0) / 20))
	check_err $? "the receive path expanded $rx heads for $((f1 - f0)) frames ($((g1 - g0)) GSO)"
	log_test "TCP stream over STT: TCP's GSO clones not copied" \
		"${XINFO[192.168.0.2]}; $n expansions in transmit, $rx in receive, for $((f1 - f0)) frames sent by A, $((g1 - g0)) of them GSO"
}

esp_no_expand()
{
	local n ns l r so si ko ki f0 f1

	RET=0
	for ns in "$NS_A" "$NS_B"; do
		if [[ $ns == "$NS_A" ]]; then
			l=10.0.0.1 r=10.0.0.2 so=0x100 si=0x200 ko=$KEY_AB ki=$KEY_BA
		else
			l=10.0.0.2 r=10.0.0.1 so=0x200 si=0x100 ko=$KEY_BA ki=$KEY_AB
		fi
		{
			echo "xfrm state add src $l dst $r proto esp spi $so mode transport aead $ALG $ko 128"
			echo "xfrm state add src $r dst $l proto esp spi $si mode transport aead $ALG $ki 128"
			echo "xfrm policy add src $l dst $r proto tcp dport 7471 dir out tmpl src $l dst $r proto esp mode transport"
			echo "xfrm policy add src $r dst $l proto tcp dport 7471 dir in tmpl src $r dst $l proto esp mode transport level required"
		} | ip -n "$ns" -b -
		check_err $? "ESP setup in $ns failed"
	done
	f0=$(dev_stat "$NS_A" stt0 tx_frames)
	: >"$T/trace"
	xfer "$NS_B" "$NS_A" 2000000 192.168.0.2
	xfer_check 192.168.0.2
	# ESP encrypts in place, so it copies what it may not write: TCP's
	# clones of segments that fit one outer segment (stt_xmit passes those
	# on uncopied, see rr_no_copy). That copy (skb_cow_data) is ESP's own
	# and is only reported; what this test judges is the room in front,
	# which xfrm_output makes itself if transmit did not reserve it.
	n=$(expands_from '^xfrm_output')
	cow=$(expands_from '^xfrm_output' '^(__pskb_pull_tail|skb_cow_data)$')
	room=$(expands_from '^xfrm_output' '^xfrm_')
	f1=$(dev_stat "$NS_A" stt0 tx_frames)
	((room == 0))
	check_err $? "xfrm_output expanded $room heads for room in front ($((f1 - f0)) frames)"
	((n == cow + room))
	check_err $? "$((n - cow - room)) of the ESP path's $n expansions came from elsewhere (callers: $(expand_callers '^xfrm_output'); first: $(expands_from '^xfrm_output' '' stack | head -n 1))"
	log_test "over transport-mode ESP: room for the ESP header reserved" \
		"${XINFO[192.168.0.2]}; $room expansions for room by xfrm for $((f1 - f0)) frames sent by A; $cow copies of shared data for ESP (figure, not judged)"
}

require_root
require_command ethtool
require_command "$PY"
require_stt
if ! probe_start 2>/dev/null; then
	log_skip "what transmit reallocates" "no kprobes in $T"
	tests_exit
fi

RET=0
stt_pair_setup && server_start "$NS_B" && rr_server
check_err $? "topology setup failed"
if [[ $RET -ne 0 ]]; then
	log_test "two hosts, one tunnel"
	tests_exit
fi
ping_ok "$NS_A" 192.168.0.2
tests_run
tests_exit
