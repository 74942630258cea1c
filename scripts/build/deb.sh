#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb: build the Debian packages of this tree with Debian's own tools
# (dpkg-buildpackage, debhelper, dh-dkms) and check them with lintian.
#
#   scripts/build/deb.sh [--out DIR] [--no-lintian]      ("make deb")
#
#   stt-dkms_VERSION_all.deb     the module sources, registered with DKMS
#   stt-tools_VERSION_ARCH.deb   the iproute2 plugin and <linux/stt.h>
#
# The packaging lives in tools/debian/. dpkg-buildpackage wants debian/
# at the top of a source tree, so the sources (what git tracks, without
# build products) are copied into a temporary directory with
# tools/debian/ as its debian/, and built there. The packages, .buildinfo
# and .changes go to DIR (default results/deb/, emptied first). lintian,
# if installed (scripts/setup.sh installs it), runs over the .changes and
# fails the build on any error (its warnings are shown).
#
# VERSION is PACKAGE_VERSION of dkms.conf; tools/debian/changelog must
# have the same version (a native package).

set -e

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$SRCDIR/results/deb
LINTIAN=1
ME=deb

say() { echo "$ME: $*" >&2; }
die() { say "$*"; exit 1; }

while [ "$#" -gt 0 ]; do
	case $1 in
	--out) OUT=$2; shift 2 ;;
	--no-lintian) LINTIAN=; shift ;;
	-h|--help) sed -n '3,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
done

for t in dpkg-buildpackage dh dh_dkms; do
	command -v "$t" >/dev/null ||
		die "no $t: run scripts/setup.sh (dpkg-dev, debhelper, dh-dkms)"
done

version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$SRCDIR/dkms.conf")
chver=$(dpkg-parsechangelog -l "$SRCDIR/tools/debian/changelog" -S Version)
[ -n "$version" ] || die "no PACKAGE_VERSION in dkms.conf"
[ "$chver" = "$version" ] ||
	die "tools/debian/changelog is at $chver, dkms.conf at $version: add a changelog entry (dch -v $version)"

tmp=$(mktemp -d /tmp/stt-deb-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/stt-$version
mkdir -p "$src"
# Sources only: what .gitignore names (build products, results/) stays
# out. tar reads its file patterns; the directory ones ("name/") become
# --exclude options. No git or rsync needed (a guest's root may lack them).
excl=(--exclude=./results)
while read -r pat; do
	pat=${pat#/}
	excl+=("--exclude=${pat%/}")
done < <(grep -E '^[^#].*/$' "$SRCDIR/.gitignore")
tar -C "$SRCDIR" --exclude-vcs --exclude-vcs-ignores "${excl[@]}" -cf - . |
	tar -C "$src" -xf -
rm -rf "$src/debian"
cp -a "$SRCDIR/tools/debian" "$src/debian"

say "building stt-dkms and stt-tools $version in $src"
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$tmp/build.log" 2>&1 || {
	tail -n 40 "$tmp/build.log" >&2
	die "dpkg-buildpackage failed"
}

mkdir -p "$OUT"
rm -f "$OUT"/*.deb "$OUT"/*.buildinfo "$OUT"/*.changes
cp "$tmp"/*.deb "$tmp"/*.buildinfo "$tmp"/*.changes "$OUT/"
cp "$tmp/build.log" "$OUT/build.log"

if [ -n "$LINTIAN" ] && ! command -v lintian >/dev/null; then
	say "lintian is not installed: the packages are not checked (apt-get install lintian)"
elif [ -n "$LINTIAN" ]; then
	say "lintian $(lintian --version | awk '{print $2}')"
	lintian --fail-on error "$OUT"/*.changes || die "lintian reports errors"
fi
for f in "$OUT"/*.deb; do
	echo "$f"
done
