#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-symbols.sh PLUGIN.so IP LIBC: every symbol that PLUGIN.so needs (strong
# undefined dynamic symbols) must be defined by the ip binary or by libc,
# and each one ip provides must be listed in ip-imports.txt (its prototype
# compared with iproute2's headers of every release we meet: a stripped ip
# cannot show a changed prototype, only a name).  Weak undefined symbols
# (__cxa_finalize, __gmon_start__, ...) may stay unresolved and are
# skipped.  Exit 1 naming each missing or unreviewed symbol.
set -eu

so=$1 ip=$2 libc=$3

for f in "$so" "$ip" "$libc"; do
	[ -r "$f" ] || { echo "check-symbols.sh: cannot read '$f'" >&2; exit 1; }
done

defined() {
	nm -D --defined-only "$1" | awk '{ sub(/@.*/, "", $3); print $3 }'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
defined "$ip" >"$tmp/have"
defined "$libc" >>"$tmp/have"
sort -u -o "$tmp/have" "$tmp/have"
nm -D --undefined-only "$so" |
	awk '$1 == "U" { sub(/@.*/, "", $2); print $2 }' | sort -u >"$tmp/need"

missing=$(comm -23 "$tmp/need" "$tmp/have")
if [ -n "$missing" ]; then
	for s in $missing; do
		echo "check-symbols.sh: $so needs '$s', which $ip does not export" >&2
	done
	exit 1
fi

# Of the symbols ip (not libc) provides, the reviewed ones only.
defined "$libc" | sort -u >"$tmp/libc"
sed 's/#.*//; /^[[:space:]]*$/d' "$(dirname "$0")/ip-imports.txt" | sort -u >"$tmp/reviewed"
unreviewed=$(comm -23 "$tmp/need" "$tmp/libc" | comm -23 - "$tmp/reviewed")
if [ -n "$unreviewed" ]; then
	for s in $unreviewed; do
		echo "check-symbols.sh: $so calls ip's '$s', which ip-imports.txt does not list (compare its prototype in every iproute2 release first)" >&2
	done
	exit 1
fi
echo "check-symbols.sh: $(wc -l <"$tmp/need") symbols of $so resolved by $ip and libc"
