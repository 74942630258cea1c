#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What "make check" runs, on every kernel and userland of scripts/vm/target.sh:
# set up, lint the scripts, build with warnings fatal (module, plugin, BPF
# programs), style and sparse on each kernel, the vport layout check, the
# iproute2 plugin against each release's ip, the host install test, the
# Debian packages (make deb with lintian on Debian 12, scripts/build/deb.sh in the
# Debian 13 root), then the selftests in one QEMU guest per kernel and
# selftests/deb.sh in a Debian 13 guest of its own, two guests at a time;
# one summary for all of it.
#
#   scripts/check/check.sh
#
# Guests: deb12 (Debian 12, 6.1) and deb13 (Debian 13, 6.12, trixie's
# userland) run the whole suite; deb12-6.12 (bookworm-security's 6.12 with
# Debian 12's userland) and deb13-new (trixie-backports' 7.x) run
# $STT_CHECK_SHORT (basic, netlink, datapath, pmtu and ipsec).
#
# Host phases print a "TEST: ... [ OK ]/[FAIL]/[SKIP]" line each and count
# like selftest cases; each guest's "N passed, N failed, N skipped" is added
# in. A kernel problem or a timeout in a guest (vm-run exit 125/124), or a
# guest run without a summary, counts as one more failure. The last line is
# "N passed, N failed, N skipped"; the exit status is 1 on any failure.
#
# Environment: KERNELRELEASE/KDIR (the deb12 kernel, as for make),
# STT_CHECK_TIMEOUT (seconds per guest run, default 2700), STT_CHECK_TESTS
# (selftests of the full runs, default all), STT_CHECK_SHORT (selftests of
# the short runs), STT_CHECK_TARGETS (targets, default all), VMRUN_ARGS
# (extra scripts/vm/run.sh options), STT_CHECK_DEB=0 (no deb.sh guest),
# STT_CHECK_DEB_TIMEOUT (its timeout, default 2400), STT_CHECK_LANES=1 (one
# guest at a time).

cd "$(dirname "$0")/../.." || exit 1

passed=0
failed=0
skipped=0
timings=()
failures=()

result()
{
	local what=$1
	local verdict=$2

	case $verdict in
	ok) passed=$((passed + 1)); printf "TEST: %-60s  [ OK ]\n" "$what" ;;
	fail) failed=$((failed + 1)); failures+=("$what")
		printf "TEST: %-60s  [FAIL]\n" "$what" ;;
	skip) skipped=$((skipped + 1)); printf "TEST: %-60s  [SKIP]\n" "$what" ;;
	esac
}

# phase NAME DESCRIPTION CMD...: run CMD, time it, count it as a TEST line.
phase()
{
	local name=$1
	local what=$2
	local start rc

	shift 2
	echo "check: $name: $*" >&2
	start=$(date +%s)
	"$@"
	rc=$?
	timings+=("$(printf '%-18s %5ss' "$name" $(($(date +%s) - start)))")
	if [ "$rc" -eq 0 ]; then
		result "$what" ok
	else
		result "$what (exit $rc)" fail
	fi
	return "$rc"
}

TARGETS=${STT_CHECK_TARGETS:-deb12 deb13 deb12-6.12 deb13-new}
SHORT=${STT_CHECK_SHORT:-basic.sh netlink.sh datapath.sh pmtu.sh ipsec.sh}
declare -A built=()

has_target() { [[ " $TARGETS " == *" $1 "* ]]; }

total_start=$(date +%s)

if ! phase setup "setup: scripts/setup.sh" scripts/setup.sh; then
	echo "check: setup failed; not going further" >&2
fi

# The scripts themselves: shellcheck and pyflakes3, on the host.
if [ "$failed" -eq 0 ]; then
	phase "lint shell" "lint: shellcheck of every shell script" scripts/check/lint.sh shell
	phase "lint python" "lint: pyflakes3 of every Python file" scripts/check/lint.sh python
	phase "lint rst" "lint: docutils of every reStructuredText document" scripts/check/lint.sh rst
fi

# Kernels, roots and the builds, one target after the other.
if [ "$failed" -eq 0 ]; then
	for t in $TARGETS; do
		# shellcheck disable=SC2016 # expanded by sh -c
		phase "build $t" "build $t: make module plugin bpf STT_WERROR=y" \
			sh -c 'scripts/vm/target.sh build "$1" >/dev/null' sh "$t" &&
			built[$t]=1
	done
fi

# tinfo TARGET KEY: one fact of scripts/vm/target.sh prepare.
tinfo() { scripts/vm/target.sh prepare "$1" 2>/dev/null | sed -n "s/^$2=//p"; }

# checkpatch of each kernel the tree builds for (newer ones check more).
for t in deb12 deb12-6.12 deb13-new; do
	if ! has_target "$t" || [ -z "${built[$t]:-}" ]; then continue; fi
	src=$(tinfo "$t" host_source)
	if [ ! -f "$src" ]; then
		result "style: checkpatch of $t (no linux-source)" skip
		continue
	fi
	phase "style $t" "style: checkpatch --strict of $t ($(basename "$src" .tar.xz))" \
		env LINUX_SOURCE_TARBALL="$src" scripts/check/style.sh
done

# sparse with each kernel's headers, in its own userland.
for t in $TARGETS; do
	[ -n "${built[$t]:-}" ] || continue
	# shellcheck disable=SC2016 # expanded in the target
	phase "sparse $t" "sparse: $t ($(tinfo "$t" release))" \
		scripts/vm/target.sh exec "$t" sh -c 'scripts/check/sparse.sh "$KDIR"'
done

# vport-stt.ko only against openvswitch.ko's own headers of each kernel's
# version; another version's source is refused (the Debian 12 kernels on
# the host, trixie's in its root).
if [ -n "${built[deb12]:-}" ]; then
	args=("$(tinfo deb12 kdir)")
	envs=("STT_LINUX_SOURCE_1=$(tinfo deb12 host_source)")
	if [ -n "${built[deb12-6.12]:-}" ]; then
		args+=("$(tinfo deb12-6.12 kdir)")
		envs+=("STT_LINUX_SOURCE_2=$(tinfo deb12-6.12 host_source)")
	fi
	phase "ovs-layout" "build: vport-stt only with its kernel's own OVS headers (Debian 12)" \
		env "${envs[@]}" scripts/check/ovs-layout.sh "${args[@]}"
fi
if [ -n "${built[deb13]:-}" ]; then
	# shellcheck disable=SC2016 # expanded in the target
	phase "ovs-layout 13" "build: vport-stt only with its kernel's own OVS headers (Debian 13)" \
		scripts/vm/target.sh exec deb13 sh -c 'scripts/check/ovs-layout.sh "$KDIR"'
fi

# The plugin against each iproute2: Debian 12's 6.1, trixie's 6.15 and
# sid's, the newest.
for t in deb12 deb13 sid; do
	if [ "$t" != sid ] && ! has_target "$t"; then
		continue
	fi
	if [ "$t" = sid ]; then
		phase "build sid" "build sid: make plugin (sid's iproute2)" \
			sh -c 'scripts/vm/target.sh build sid >/dev/null' || continue
	fi
	[ "$t" = sid ] || [ -n "${built[$t]:-}" ] || continue
	ipv=$(scripts/vm/target.sh exec "$t" ip -V 2>/dev/null | sed -n 's/.*iproute2-\([^ ,]*\).*/\1/p')
	phase "plugin $t" "plugin: tools/iproute2/test-plugin.py with $t's ip ${ipv:-?}" \
		scripts/vm/target.sh exec "$t" tools/iproute2/test-plugin.py
done

# Installation into a scratch root and the DKMS build run on the host (the
# guest repeats the install part and adds module autoloading).
if [ -n "${built[deb12]:-}" ] && [ -x selftests/install.sh ]; then
	phase install "host: selftests/install.sh (DESTDIR install, DKMS build)" \
		selftests/install.sh
fi
# The same on a Debian 13 host: its root, its kernel's headers, its DKMS.
if [ -n "${built[deb13]:-}" ]; then
	phase "install 13" "Debian 13 root: selftests/install.sh (DESTDIR install, DKMS build)" \
		scripts/vm/target.sh exec deb13 selftests/install.sh
fi

# The Debian packages: make deb (lintian) on the host, Debian 12; the
# same in the Debian 13 root, for selftests/deb.sh to install there.
if [ -n "${built[deb12]:-}" ]; then
	phase deb "deb: make deb (dpkg-buildpackage, dh-dkms, lintian)" make deb
fi
if [ -n "${built[deb13]:-}" ]; then
	phase "deb 13" "deb 13: scripts/build/deb.sh in the Debian 13 root" \
		sh -c 'scripts/vm/target.sh exec deb13 scripts/build/deb.sh >/dev/null'
fi

# Guests run in two lanes side by side: each runs its vCPUs on one TCG
# thread, so two of them fill a 2-core host without starving each other,
# and the guest phases take about half the time. A lane runs its guests in
# order. Lane 1's output streams; lane 2's is printed when both are done.
# STT_CHECK_LANES=1 runs every guest in lane 1, one after the other.
gdir=$(mktemp -d)
trap 'rm -rf "$gdir"' EXIT
lane1=()
lane2=()

# queue LANE NAME TARGET TIMEOUT [VM-RUN OPTIONS] -- TESTS...: add one guest
# of TARGET to LANE (1 or 2).
queue()
{
	local lane=$1 id

	shift
	id=$(( ${#lane1[@]} + ${#lane2[@]} ))
	[ "${STT_CHECK_LANES:-2}" = 1 ] && lane=1
	printf '%s\0' "$@" >"$gdir/$id.args"
	echo "$1" >"$gdir/$id.name"
	if [ "$lane" = 1 ]; then lane1+=("$id"); else lane2+=("$id"); fi
}

# run_guest ID: run the queued guest ID; its output into ID.log (and to
# stdout with "tee"), vm-run's exit status into ID.rc, its time into
# ID.time, vm-run's kernel problems into ID.why.
run_guest()
{
	local id=$1 tee=${2:-} name t timeout start rc args=()

	mapfile -d '' args <"$gdir/$id.args"
	name=${args[0]} t=${args[1]} timeout=${args[2]}
	args=("${args[@]:3}")
	start=$(date +%s)
	{
		echo "check: $name: scripts/vm/target.sh run $t --timeout $timeout ${args[*]}"
		STT_VMRUN_PROBLEMS=$gdir/$id.why scripts/vm/target.sh run "$t" \
			--timeout "$timeout" "${args[@]}" 2>&1
		echo $? >"$gdir/$id.rc"
	} | if [ "$tee" = tee ]; then tee "$gdir/$id.log"; else cat >"$gdir/$id.log"; fi
	echo $(($(date +%s) - start)) >"$gdir/$id.time"
}

# account ID: add guest ID's "N passed, N failed, N skipped" in, list its
# [FAIL] lines; a timeout, kernel problem or missing summary is one more
# failure.
account()
{
	local id=$1 name log rc summary p f s line

	name=$(cat "$gdir/$id.name")
	log=$gdir/$id.log
	rc=$(cat "$gdir/$id.rc" 2>/dev/null || echo 1)
	timings+=("$(printf '%-18s %5ss' "$name" "$(cat "$gdir/$id.time")")")
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" |
		tail -n 1)
	if [ -n "$summary" ]; then
		read -r p _ f _ s _ <<<"$summary"
		passed=$((passed + p))
		failed=$((failed + f))
		skipped=$((skipped + s))
		[ "$f" -gt 0 ] && failures+=("$name: $f failed")
		# each [FAIL] line and the message lines (a tab in) under it
		while read -r line; do
			failures+=("  $line")
		done < <(awk '/^# TEST: .*\[FAIL\]$/ { sub(/ *\[FAIL\]$/, ""); print substr($0, 3); m = 1; next }
			m && /^# ?\t/ { sub(/^# ?\t/, ""); if (m++ <= 3) print "  " $0; next }
			{ m = 0 }' "$log")
	fi
	case $rc in
	124) result "$name: VM run timeout" fail ;;
	125) result "$name: kernel problem (see vm-run above)" fail ;;
	*) [ -n "$summary" ] || result "$name: no summary (exit $rc)" fail ;;
	esac
	# vm-run's own words, for the summary at the end: the console excerpt
	# it printed may be far up a long log.
	while read -r line; do
		failures+=("    $line")
	done < <(head -n 3 "$gdir/$id.why" 2>/dev/null)
}

# The selftests: the whole suite on each release, the short list on the
# other kernels; then deb.sh in a Debian 13 guest of its own (it installs
# packages and a second kernel's headers: a system the others must not
# share). Lane 1: deb12, then the short lists; lane 2: deb13, then deb.sh
# (each lane about half of the guests' time).
for t in $TARGETS; do
	if [ -z "${built[$t]:-}" ]; then
		result "selftests on $t (not built)" skip
		continue
	fi
	case $t in
	deb12|deb13) tests=${STT_CHECK_TESTS:-} ;;
	*) tests=$SHORT ;;
	esac
	lane=1
	[ "$t" = deb13 ] && lane=2
	# shellcheck disable=SC2086 # lists of words
	queue "$lane" "selftests $t" "$t" "${STT_CHECK_TIMEOUT:-2700}" ${VMRUN_ARGS:-} \
		-- selftests/run.sh $tests
done
if [ -n "${built[deb13]:-}" ] && [ -z "${STT_CHECK_TESTS:-}" ] &&
   [ "${STT_CHECK_DEB:-1}" != 0 ]; then
	# shellcheck disable=SC2086 # lists of words
	queue 2 "deb.sh deb13" deb13 "${STT_CHECK_DEB_TIMEOUT:-2400}" ${VMRUN_ARGS:-} \
		--no-load --env STT_DEB_TEST=1 --env SELFTEST_TIMEOUT=2300 \
		-- selftests/run.sh deb.sh
fi
lane2_pid=
if [ "${#lane2[@]}" -gt 0 ]; then
	echo "check: lane 2 in the background: $(for id in "${lane2[@]}"; do
		cat "$gdir/$id.name"; done | paste -sd, -)" >&2
	( for id in "${lane2[@]}"; do run_guest "$id"; done ) &
	lane2_pid=$!
fi
for id in "${lane1[@]}"; do
	run_guest "$id" tee
done
if [ -n "$lane2_pid" ]; then
	wait "$lane2_pid"
	for id in "${lane2[@]}"; do
		echo
		echo "check: lane 2's $(cat "$gdir/$id.name"), as it ran:"
		cat "$gdir/$id.log"
	done
fi
for id in "${lane1[@]}" "${lane2[@]}"; do
	account "$id"
done

timings+=("$(printf '%-18s %5ss' total $(($(date +%s) - total_start)))")
echo
echo "check: wall time per phase:"
printf '  %s\n' "${timings[@]}"
if [ "${#failures[@]}" -gt 0 ]; then
	echo "check: failures:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
