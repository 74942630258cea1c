#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ovs-layout.sh KDIR...: vport-stt.ko is built only against
# openvswitch.ko's own headers of each kernel's exact version.
#
# For every kernel build tree given (host side, nothing is loaded):
#   - scripts/build/ovs-source.sh finds the Open vSwitch headers of its version and
#     a probe compiled against them (with that kernel's configuration)
#     prints the layouts vport-stt depends on;
#   - the source of another given kernel is refused for it, and "make
#     module" with that source builds stt.ko but no vport-stt.ko.
# With two or more kernels whose struct vport differs (6.1 and 6.12: 6.2
# added upcall_stats), this shows what one fixed copy of the layouts would
# have corrupted.
#
# Sources: as scripts/build/ovs-source.sh finds them; STT_LINUX_SOURCE_<N> (N = 1,
# 2, ... in the order of the KDIRs) names one per kernel.
# Exit 0 all good, 1 a failure, 2 usage or missing tree.
set -u

repo=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
[ "$#" -ge 1 ] || { echo "usage: $0 KDIR..." >&2; exit 2; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "ovs-layout-check: FAIL: $*"; fail=1; }

cat >"$tmp/probe.c" <<'EOF'
#include "datapath.h"
#include "vport.h"
#include "vport-netdev.h"
#define SHOW(name, val) \
	asm volatile("\n.ascii \"@@layout " #name " %c0@@\"" : : "i" (val))
void stt_ovs_layout_probe(void);
void stt_ovs_layout_probe(void)
{
	SHOW(vport.size, sizeof(struct vport));
	SHOW(vport.ops, offsetof(struct vport, ops));
	SHOW(vport.rcu, offsetof(struct vport, rcu));
	SHOW(vport.priv, ALIGN(sizeof(struct vport), VPORT_ALIGN));
	SHOW(vport_ops.size, sizeof(struct vport_ops));
	SHOW(vport_parms.size, sizeof(struct vport_parms));
	SHOW(datapath.net, offsetof(struct datapath, net));
}
EOF

# layout KDIR OVSDIR OUT: probe the layouts, one "name value" a line.
layout() {
	local d=$tmp/p$RANDOM

	mkdir -p "$d"
	cp "$tmp/probe.c" "$d/"
	printf 'CFLAGS_probe.o := -I%s/net/openvswitch\nobj-m := probe.o\n' "$2" >"$d/Kbuild"
	make -s -C "$1" M="$d" probe.s >"$d/log" 2>&1 || { cat "$d/log"; return 1; }
	grep -o '@@layout [^@]*@@' "$d/probe.s" | sed 's/^@@layout //; s/@@$//' >"$3"
	[ -s "$3" ]
}

kdirs=("$@")
srcs=()
n=0
for k in "${kdirs[@]}"; do
	n=$((n + 1))
	var=STT_LINUX_SOURCE_$n
	[ -d "$k" ] || { echo "ovs-layout-check: no kernel tree '$k'" >&2; exit 2; }
	ovs=$(STT_LINUX_SOURCE=${!var:-${STT_LINUX_SOURCE:-}} \
		"$repo/scripts/build/ovs-source.sh" "$k" "$repo/.ovs-src") ||
		{ bad "no Open vSwitch headers for $k"; srcs+=(""); continue; }
	srcs+=("${!var:-$ovs}")
	if layout "$k" "$ovs" "$tmp/layout$n"; then
		echo "ovs-layout-check: $k: $(tr ' ' = <"$tmp/layout$n" | paste -sd' ')"
	else
		bad "probe build failed for $k"
	fi
done

# Every kernel's source, tried on every other kernel.
for ((i = 0; i < ${#kdirs[@]}; i++)); do
	for ((j = 0; j < ${#kdirs[@]}; j++)); do
		{ [ "$i" -ne "$j" ] && [ -n "${srcs[j]}" ]; } || continue
		k=${kdirs[i]}
		if STT_LINUX_SOURCE=${srcs[j]} "$repo/scripts/build/ovs-source.sh" "$k" \
			"$repo/.ovs-src" >/dev/null 2>"$tmp/why"; then
			# Same version (two builds of one kernel): allowed.
			echo "ovs-layout-check: ${srcs[j]} accepted for $k (same version)"
			continue
		fi
		echo "ovs-layout-check: refused for $k: $(sed 's/^ovs-source: //' "$tmp/why")"
		b=$tmp/build$i$j
		mkdir -p "$b"
		# dkms.conf too: Kbuild takes the version from it.
		cp -r "$repo/Kbuild" "$repo/Makefile" "$repo/dkms.conf" \
			"$repo/stt" "$repo/include" "$repo/scripts" "$b/"
		STT_LINUX_SOURCE=${srcs[j]} make -s -C "$b" module KDIR="$k" \
			>"$b/log" 2>&1 || { cat "$b/log"; bad "make module failed for $k"; continue; }
		[ -f "$b/stt.ko" ] || bad "no stt.ko for $k"
		[ -f "$b/vport-stt.ko" ] && bad "vport-stt.ko built for $k with ${srcs[j]}"
	done
done

if [ "${#kdirs[@]}" -ge 2 ] && [ -s "$tmp/layout1" ] && [ -s "$tmp/layout2" ]; then
	if cmp -s "$tmp/layout1" "$tmp/layout2"; then
		echo "ovs-layout-check: the first two kernels have the same layouts"
	else
		echo "ovs-layout-check: layouts differ between the first two kernels:"
		join <(sort "$tmp/layout1") <(sort "$tmp/layout2") | awk '$2 != $3 { printf "  %s %s -> %s\n", $1, $2, $3 }'
	fi
fi
[ "$fail" -eq 0 ] && echo "ovs-layout-check: OK"
exit "$fail"
