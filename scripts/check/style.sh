#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/check/style.sh [FILE...]: checkpatch.pl --strict --no-tree -f over the
# driver (stt/*.[ch]), the headers (include/**/*.h), the iproute2 plugin
# (tools/iproute2/*.[ch]), the tc BPF programs (tools/bpf/*.c) and the
# selftests' test-only kernel modules (selftests/helpers/stt_csum_complete.c,
# stt_slow_route.c),
# or over the given files.  No check is ignored.
# Exit 1 on any ERROR, WARNING or CHECK, 2 if checkpatch cannot be found.
#
# checkpatch.pl comes from a Debian linux-source-X.Y tarball
# ($LINUX_SOURCE_TARBALL, default /usr/src/linux-source-6.1.tar.xz; make
# check runs it with each kernel's) and is kept outside the repository:
# $CHECKPATCH if set, else the three files it needs, extracted once into
# $STT_CACHE/checkpatch-<tarball> (default /var/tmp/stt-cache).
set -u
shopt -s nullglob globstar

cd "$(dirname "$0")/../.." || exit 2

CACHE=${STT_CACHE:-/var/tmp/stt-cache}
TARBALL=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
NEEDED="checkpatch.pl spelling.txt const_structs.checkpatch"
DEST=$CACHE/checkpatch-$(basename "$TARBALL" .tar.xz)

complete() {
	local f

	for f in $NEEDED; do
		[ -f "$1/$f" ] || return 1
	done
}

find_checkpatch() {
	local top tmp f

	if [ -n "${CHECKPATCH:-}" ]; then
		echo "$CHECKPATCH"
		return
	fi
	if complete "$DEST"; then
		echo "$DEST/checkpatch.pl"
		return
	fi
	[ -r "$TARBALL" ] || {
		echo "style: no checkpatch.pl and no $TARBALL (apt-get install linux-source-6.1)" >&2
		return 1
	}
	echo "style: extracting checkpatch.pl from $TARBALL" >&2
	top=$(tar -tJf "$TARBALL" | head -n 1)
	top=${top%%/*}
	mkdir -p "$CACHE" || return 1
	tmp=$(mktemp -d "$CACHE/checkpatch.XXXXXX") || return 1
	set --
	for f in $NEEDED; do
		set -- "$@" "$top/scripts/$f"
	done
	if ! tar -xJf "$TARBALL" -C "$tmp" --strip-components=2 "$@" ||
	   ! complete "$tmp"; then
		rm -rf "$tmp"
		echo "style: cannot extract checkpatch.pl from $TARBALL" >&2
		return 1
	fi
	chmod 755 "$tmp"
	# another run may have won the race; either copy is the same
	mv -T "$tmp" "$DEST" 2>/dev/null || rm -rf "$tmp"
	echo "$DEST/checkpatch.pl"
}

checkpatch=$(find_checkpatch) || exit 2

if [ $# -gt 0 ]; then
	files=("$@")
else
	files=(stt/*.c stt/*.h include/**/*.h tools/iproute2/*.c
	       tools/iproute2/*.h tools/bpf/*.c
	       selftests/helpers/stt_csum_complete.c
	       selftests/helpers/stt_slow_route.c)
fi
if [ ${#files[@]} -eq 0 ]; then
	echo "style: no files to check"
	exit 0
fi

out=$(perl "$checkpatch" --strict --no-tree --quiet --show-types \
	--color=never -f "${files[@]}" 2>&1)
rc=$?
# checkpatch caches the CamelCase identifiers of include/ in the cwd
rm -f .checkpatch-camelcase.*
[ -n "$out" ] && printf '%s\n' "$out"

errors=$(grep -c '^ERROR:' <<<"$out")
warnings=$(grep -c '^WARNING:' <<<"$out")
checks=$(grep -c '^CHECK:' <<<"$out")
echo "style: $(basename "$TARBALL" .tar.xz): ${#files[@]} files, $errors errors, $warnings warnings, $checks checks"
if [ "$errors$warnings$checks" != 000 ] || [ $rc -ne 0 ]; then
	exit 1
fi
exit 0
