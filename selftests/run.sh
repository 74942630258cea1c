#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the STT selftests and report in KTAP style.
#
#   selftests/run.sh [TEST.sh...]
#
# Runs every selftests/*.sh but run.sh and the libraries (lib.sh,
# *_lib.sh), or the scripts named, one after the other, as root (normally
# inside scripts/vm/run.sh). Each
# script's output is shown prefixed with "# "; each script gives one
# "ok N name" / "not ok N name" line (exit 4: "ok N name # SKIP").
#
# Every "TEST: ... [ OK ]/[FAIL]/[SKIP]" line counts once. A script that
# fails without printing a [FAIL] line counts as one failure; one that skips
# (exit 4) without any TEST line counts as one skip. The last line is always
# "N passed, N failed, N skipped"; the exit status is 1 if anything failed.
#
# Environment: STT_MODULE_DIR (default: the repository top, exported to the
# tests), SELFTEST_TIMEOUT seconds per script (default 900).

cd "$(dirname "$0")" || exit 1
STT_MODULE_DIR=${STT_MODULE_DIR:-$(cd .. && pwd)}
export STT_MODULE_DIR
timeout_s=${SELFTEST_TIMEOUT:-900}

tests=()
if [ "$#" -gt 0 ]; then
	for t in "$@"; do
		tests+=("${t##*/}")
	done
else
	for t in *.sh; do
		case $t in
		lib.sh|*_lib.sh|run.sh) ;;
		*) tests+=("$t") ;;
		esac
	done
fi

passed=0
failed=0
skipped=0
n=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Load the in-tree modules the tests pull in (netfilter for firewall.sh,
# VLAN, netem, other tunnels) before any test creates or dismantles
# namespaces: a module's pernet registration waits for namespace cleanup.
# A modprobe once stayed blocked for over ten minutes that way: cleanup
# spun in conntrack's, waiting for entries that STT segments queued for
# reassembly held (fixed in stt/reasm.c, checked by firewall.sh). Loading
# nf_conntrack after stt.ko, as here, is the order that exposed it.
if [[ -n "${STT_VM:-}" ]]; then
	modprobe -a -q nf_conntrack nf_defrag_ipv4 nf_defrag_ipv6 nf_tables \
		nft_ct nft_reject_inet nft_chain_nat nfnetlink 8021q sch_netem \
		vxlan geneve veth 2>/dev/null
fi

# reap_leftovers TEST: a process a test left running in a network
# namespace other than the initial one (its namespace deleted, or not)
# keeps that namespace and its devices alive, and its traffic reaches the
# next tests' counters (realnic.sh's checksum counts once tripled that
# way). Name and kill them, so that each test starts from a clean guest.
reap_leftovers()
{
	local t=$1 init p ns cmd

	init=$(readlink /proc/1/ns/net)
	for p in /proc/[0-9]*; do
		ns=$(readlink "$p/ns/net" 2>/dev/null) || continue
		[[ -n "$ns" && "$ns" != "$init" ]] || continue
		cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-100)
		[[ -n "$cmd" ]] || continue	# a kernel thread
		echo "# INFO: $t left pid ${p#/proc/} ($cmd) in another netns: killed"
		kill -9 "${p#/proc/}" 2>/dev/null
	done
}

echo "TAP version 13"
echo "1..${#tests[@]}"
for t in "${tests[@]}"; do
	n=$((n + 1))
	echo "# selftests: stt: $t"
	if [ ! -f "$t" ]; then
		echo "# no such test: $t"
		echo "not ok $n selftests: stt: $t"
		failed=$((failed + 1))
		continue
	fi
	start=$(date +%s)
	timeout -k 10 "$timeout_s" bash "./$t" </dev/null 2>&1 | tee "$log" | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - start))
	[[ -n "${STT_VM:-}" ]] && reap_leftovers "$t"

	ok=$(grep -c '^TEST: .*\[ OK \]$' "$log")
	fail=$(grep -c '^TEST: .*\[FAIL\]$' "$log")
	skip=$(grep -c '^TEST: .*\[SKIP\]$' "$log")
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$fail" -eq 0 ]; then
		[ "$rc" -eq 124 ] && echo "# $t: timeout after ${timeout_s}s"
		echo "# $t: exit status $rc without a [FAIL] line: counted as a failure"
		fail=1
	fi
	if [ "$rc" -eq 4 ] && [ $((ok + fail + skip)) -eq 0 ]; then
		skip=1
	fi
	passed=$((passed + ok))
	failed=$((failed + fail))
	skipped=$((skipped + skip))

	if [ "$fail" -gt 0 ]; then
		echo "not ok $n selftests: stt: $t # exit=$rc, ${secs}s"
	elif [ "$rc" -eq 4 ]; then
		echo "ok $n selftests: stt: $t # SKIP"
	else
		echo "ok $n selftests: stt: $t # ${secs}s"
	fi
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
