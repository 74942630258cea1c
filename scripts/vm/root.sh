#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# root.sh: make (once) a Debian root file system for scripts/vm/run.sh --root,
# from Debian's archive with mmdebstrap, and print its path.
#
#   scripts/vm/root.sh SUITE
#
# SUITE "sid" is a small root without a kernel, for the iproute2 plugin's
# test against the newest ip (scripts/vm/target.sh's plugin-test).
# SUITE is "trixie" (Debian 13): trixie's kernel, headers, source,
# toolchain, iproute2, Open vSwitch and OVN, plus the newest kernel
# trixie-backports packages (image, headers, source), so that one root
# serves both kernels.
# The root is cached in $STT_CACHE/roots/SUITE-<key>, where the key covers
# the suite's package list and FORMAT (bumped when the steps change); a
# changed list makes a new root; older ones are removed once no call has
# used them for a day (another checkout may still boot one). Building takes
# a few minutes (the archive is fast here); later calls only print the path.
# The trixie root also holds the .deb of its backports kernel's headers
# in /var/cache/stt-debs/second-kernel (selftests/deb.sh installs it).
#
# Runs as root (mmdebstrap --mode=root, chroot). Modules for the root's
# kernels are built inside it (scripts/vm/target.sh), as its kbuild binaries need
# its own libc.

set -e

CACHE=${STT_CACHE:-/var/tmp/stt-cache}
ME=vm-root

say() { echo "$ME: $*" >&2; }
die() { say "$*"; exit 1; }

suite=${1:-}
[ -n "$suite" ] || die "usage: scripts/vm/root.sh SUITE (trixie, sid)"

# What the selftests and the in-root module build need. Recommends are
# off, as in scripts/setup.sh.
case $suite in
trixie)
	PACKAGES="linux-image-amd64 linux-headers-amd64 gcc make bc flex bison
		libelf-dev libssl-dev xz-utils cpio kmod dkms sparse
		iproute2 ethtool iputils-ping iperf3 tcpdump tshark python3
		python3-scapy python3-pyroute2 openvswitch-switch ovn-central
		ovn-host procps nftables conntrack libcap2-bin strace util-linux
		socat jq busybox-static linux-source-6.12 gdb clang libbpf-dev
		bpftool build-essential debhelper dh-dkms"
	# Kernels from backports, as "image headers" package name patterns;
	# the newest version of each is taken.
	BACKPORTS="trixie-backports"
	BACKPORT_KERNELS='^linux-image-[0-9.]+\+deb13-amd64$'
	;;
sid)
	# Only for the iproute2 plugin's test against the newest ip: no
	# kernel, no VM.
	PACKAGES="iproute2 gcc make libc6-dev python3 strace gdb binutils"
	BACKPORTS=
	BACKPORT_KERNELS=
	;;
*) die "unknown suite '$suite' (known: trixie, sid)" ;;
esac

sources() {
	local m=http://deb.debian.org/debian
	local k=/usr/share/keyrings/debian-archive-keyring.gpg

	echo "deb [signed-by=$k] $m $suite main non-free"
	[ "$suite" = sid ] && return 0
	echo "deb [signed-by=$k] $m $suite-updates main"
	echo "deb [signed-by=$k] http://deb.debian.org/debian-security $suite-security main"
	[ -n "$BACKPORTS" ] && echo "deb [signed-by=$k] $m $BACKPORTS main"
	return 0
}

# Bump when the way roots are made changes (hooks, options, steps).
FORMAT=1
# shellcheck disable=SC2086 # the package list is words
key=$(printf '%s\n' "$FORMAT" "$suite" $PACKAGES "$BACKPORTS" "$BACKPORT_KERNELS" |
	sha1sum | cut -c1-12)
root=$CACHE/roots/$suite-$key
if [ -f "$root/.stt-root-complete" ]; then
	touch "$root/.stt-root-used"
	echo "$root"
	exit 0
fi

[ "$(id -u)" -eq 0 ] || die "building the $suite root needs root"
command -v mmdebstrap >/dev/null || die "no mmdebstrap; run scripts/setup.sh"

mkdir -p "$CACHE/roots"
for old in "$CACHE/roots/$suite"-*; do
	if [ ! -d "$old" ] || [ "$old" = "$root" ]; then
		continue
	fi
	[ -n "$(find "$old/.stt-root-used" -mmin -1440 2>/dev/null)" ] && continue
	say "removing old root $old"
	rm -rf "$old"
done
rm -rf "$root" "$root.tmp"

list=$(mktemp)
trap 'rm -f "$list"' EXIT
sources >"$list"

say "building the $suite root in $root (a few minutes)"
# - the archive here is a snapshot whose sid Release has expired: do not
#   refuse it for that;
# - no initramfs: vm-run boots the kernel with its own stage 1;
# - keep the configuration files we write (no conffile prompts);
# - no documentation, to keep the root small.
# shellcheck disable=SC2016,SC2086 # the hooks are expanded by mmdebstrap's shell; the package list is words
mmdebstrap --variant=apt --mode=root \
	--aptopt='APT::Install-Recommends "false"' \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--dpkgopt=force-confold --dpkgopt=force-confdef \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--setup-hook='mkdir -p "$1/etc/initramfs-tools" && echo update_initramfs=no >"$1/etc/initramfs-tools/update-initramfs.conf"' \
	--essential-hook='echo "wireshark-common wireshark-common/install-setuid boolean false" | chroot "$1" debconf-set-selections' \
	--include="$(echo $PACKAGES | tr ' ' ,)" \
	"$suite" "$root.tmp" "$list" >&2

if [ -n "$BACKPORTS" ]; then
	chroot "$root.tmp" apt-get update -qq >&2
	img=$(chroot "$root.tmp" apt-cache pkgnames linux-image- |
		grep -E "$BACKPORT_KERNELS" | sort -V | tail -n 1)
	[ -n "$img" ] || die "no kernel in $BACKPORTS matching $BACKPORT_KERNELS"
	hdr=linux-headers-${img#linux-image-}
	# its source too (checkpatch.pl of that kernel)
	src=linux-source-$(echo "${img#linux-image-}" | cut -d. -f1-2)
	say "adding $img, $hdr and $src from $BACKPORTS"
	# pkg/suite, not -t: the metapackages must stay trixie's own.
	chroot "$root.tmp" env DEBIAN_FRONTEND=noninteractive apt-get install \
		-y -q --no-install-recommends -o Dpkg::Options::=--force-confold \
		"$img/$BACKPORTS" "$hdr/$BACKPORTS" "$src/$BACKPORTS" >&2
	# its headers once more as a .deb, for selftests/deb.sh
	# shellcheck disable=SC2016 # expanded by the inner shell
	chroot "$root.tmp" sh -c 'mkdir -p /var/cache/stt-debs/second-kernel &&
		cd /var/cache/stt-debs/second-kernel && apt-get download -q "$1"' \
		sh "$hdr/$BACKPORTS" >&2
fi

# Nothing in the root may start services or wait for a login.
chroot "$root.tmp" apt-get clean
echo "stt-vm" >"$root.tmp/etc/hostname"
date -u +%FT%TZ >"$root.tmp/.stt-root-complete"
touch "$root.tmp/.stt-root-used"
mv "$root.tmp" "$root"
echo "$root"
