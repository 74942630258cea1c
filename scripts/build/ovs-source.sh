#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ovs-source.sh: find openvswitch.ko's own private headers for the kernel at
# KDIR, so that vport-stt.ko is compiled against the exact layouts of the
# module it links to, never against a guess.
#
#   scripts/build/ovs-source.sh KDIR OUTDIR
#
# Prints a directory holding net/openvswitch/*.h of that kernel's version
# and exits 0; or prints nothing, says on stderr why vport-stt.ko cannot be
# built, and exits 1. The reasons, checked in this order:
#   - the kernel has no Open vSwitch datapath (CONFIG_OPENVSWITCH unset);
#   - openvswitch.ko exports no vport API (removed in Linux 7.3): no
#     out-of-tree vport can exist there;
#   - no source of that exact version: a full source tree at KDIR (a kernel
#     built from source), $STT_LINUX_SOURCE (a tree or a .tar.xz), or
#     Debian's /usr/src/linux-source-X.Y.tar.xz; a source whose
#     VERSION.PATCHLEVEL.SUBLEVEL differs from the kernel's is refused.
# Headers taken from a tarball are extracted once into OUTDIR (keyed by the
# tarball), as the whole archive must be read to find them.

set -u

kdir=${1:-}
out=${2:-}
ME=ovs-source

no() { echo "$ME: vport-stt.ko not built: $*" >&2; exit 1; }

{ [ -d "$kdir" ] && [ -n "$out" ]; } || { echo "usage: $0 KDIR OUTDIR" >&2; exit 2; }

grep -qs '^CONFIG_OPENVSWITCH=[ym]' "$kdir/.config" ||
	no "the kernel at $kdir has no Open vSwitch datapath (CONFIG_OPENVSWITCH)"
grep -qsw __ovs_vport_ops_register "$kdir/Module.symvers" ||
	no "openvswitch.ko of $kdir exports no vport API (__ovs_vport_ops_register; removed in Linux 7.3)"

# x.y.z of a tree's top Makefile (the headers' -common one for Debian).
tree_version() {
	sed -n 's/^\(VERSION\|PATCHLEVEL\|SUBLEVEL\) = \([0-9]*\)$/\2/p' "$1" |
		head -n 3 | paste -sd.
}

kmake=$kdir/Makefile
# Debian's headers: a one-line Makefile including the -common one.
inc=$(sed -n 's/^include \(.*\/Makefile\)$/\1/p' "$kmake" | head -n 1)
[ -n "$inc" ] && [ -f "$inc" ] && kmake=$inc
kver=$(tree_version "$kmake")
[ -n "$kver" ] || no "cannot read the kernel version from $kmake"

# A full source tree (the debug kernel's) is its own source.
src=$(dirname "$kmake")
if [ -f "$src/net/openvswitch/vport.h" ]; then
	echo "$src"
	exit 0
fi

cand=${STT_LINUX_SOURCE:-/usr/src/linux-source-${kver%.*}.tar.xz}
if [ -d "$cand" ]; then
	[ -f "$cand/net/openvswitch/vport.h" ] || no "$cand has no net/openvswitch/vport.h"
	sver=$(tree_version "$cand/Makefile")
	[ "$sver" = "$kver" ] ||
		no "$cand is Linux $sver, the kernel is $kver: its Open vSwitch layouts may differ"
	echo "$cand"
	exit 0
fi
[ -r "$cand" ] ||
	no "no source of Linux $kver for openvswitch.ko's private headers (install linux-source-${kver%.*}, or set STT_LINUX_SOURCE)"

key=$(stat -L -c '%n %s %Y' "$cand" | sha1sum | cut -c1-12)
dir=$out/$key
if [ ! -f "$dir/.complete" ]; then
	echo "$ME: extracting net/openvswitch from $cand" >&2
	rm -rf "$dir"
	mkdir -p "$dir" || no "cannot create $dir"
	top=$(tar -tJf "$cand" 2>/dev/null | head -n 1)
	top=${top%%/*}
	tar -xJf "$cand" -C "$dir" --strip-components=1 --wildcards \
		"$top/Makefile" "$top/net/openvswitch/*.h" ||
		{ rm -rf "$dir"; no "cannot extract net/openvswitch from $cand"; }
	touch "$dir/.complete"
fi
sver=$(tree_version "$dir/Makefile")
[ "$sver" = "$kver" ] ||
	no "$cand is Linux $sver, the kernel is $kver: its Open vSwitch layouts may differ"
echo "$dir"
