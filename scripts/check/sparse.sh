#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/check/sparse.sh [KDIR]: build the module with sparse on every source file
# (make -C KDIR M=<repo> C=2 modules) and fail if sparse reports anything
# about our files.  KDIR defaults to the build tree of scripts/build/find-kernel.sh.
#
# Only diagnostics located in this repository count: Debian's kernel headers
# make sparse complain about themselves now and then, which is neither ours
# to fix nor a reason to fail; those lines are counted and left out.  (A
# problem of ours that sparse reports at a kernel header's line is filtered
# too; in practice sparse points at the expansion site in our file.)  The
# compiler's warnings go through the same filter, so a gcc warning located
# in our files fails this check as well.
# Exit 1 on findings or a failed build, 2 on missing tools.
set -u

repo=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
kdir=${1:-/lib/modules/$("$repo/scripts/build/find-kernel.sh")/build}

command -v sparse >/dev/null || {
	echo "sparse: sparse is not installed (apt-get install sparse)" >&2
	exit 2
}
[ -d "$kdir" ] || {
	echo "sparse: no kernel build tree at '$kdir'" >&2
	exit 2
}
if ! compgen -G "$repo/stt/*.c" >/dev/null; then
	echo "sparse: no sources in $repo/stt, nothing to check"
	exit 0
fi

# $repo as a literal in extended regular expressions
# shellcheck disable=SC2001 # sed says it more plainly than ${//}
re=$(sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"$repo")

# vport-stt too, where its Open vSwitch headers are at hand.
ovs=$("$repo/scripts/build/ovs-source.sh" "$kdir" "$repo/.ovs-src" 2>/dev/null)
# Serialized with "make module": both write the same objects.
out=$(flock "$repo/.build.lock" make -C "$kdir" M="$repo" STT_OVS_SRC="$ovs" \
	C=2 modules 2>&1)
rc=$?

# Sparse writes "<file>:<line>:<col>: warning|error: ..." and continuation
# lines ("<file>:<line>:<col>:    expected ...") with the same prefix.
ours=$(grep -E "^$re/[^:]+:[0-9]+:[0-9]+: " <<<"$out")
findings=$(grep -cE "^$re/[^:]+:[0-9]+:[0-9]+: (warning|error):" <<<"$ours")
noise=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' <<<"$out" |
	grep -cvE "^$re/")

if [ $rc -ne 0 ]; then
	printf '%s\n' "$out"
	echo "sparse: build failed (make exit $rc)"
	exit 1
fi
[ -n "$ours" ] && sed -E "s|^$re/||" <<<"$ours"
echo "sparse: $findings findings in our files ($noise outside the repository ignored)"
[ "$findings" -eq 0 ]
