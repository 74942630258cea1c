#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install from Debian what building and testing the STT module need.
# Idempotent and silent when everything is already there; non-interactive
# (CI runs it as root without a terminal). Usage: scripts/setup.sh
#
# netperf lives in Debian's non-free component: if apt has no candidate for
# it, a sources file adding "non-free" (same mirrors and keys as
# debian.sources) is written to $NONFREE_SOURCES. netperf is optional: if
# it still cannot be installed we say so once and carry on.

set -e

cd "$(dirname "$0")/.."

PACKAGES="qemu-system-x86 linux-image-amd64 linux-headers-amd64 clang libbpf-dev bpftool
	busybox-static kmod iproute2 ethtool iputils-ping iperf3 tcpdump tshark
	python3-scapy python3-pyroute2 openvswitch-switch ovn-central ovn-host sparse
	linux-source-6.1 dkms xz-utils bc flex bison libelf-dev libssl-dev cpio
	socat gcc make procps jq gnuplot-nox sockperf nftables conntrack
	libcap2-bin strace util-linux mmdebstrap rsync debhelper dh-dkms
	lintian shellcheck pyflakes3 linux-perf
	python3-docutils dwarves"
# dwarves: pahole, which linux-kbuild-6.12 depends on. Its headers (from
# 6.12.117) ship a vmlinux, so kbuild adds BTF to every module with pahole;
# the 6.12 tree scripts/vm/target.sh unpacks is not installed, so nothing
# pulls pahole in for it.
OPTIONAL="netperf"
NONFREE_SOURCES=/etc/apt/sources.list.d/stt-nonfree.sources
DEBIAN_SOURCES=/etc/apt/sources.list.d/debian.sources
CACHE=${STT_CACHE:-/var/tmp/stt-cache}
# A second kernel's packages for selftests/deb.sh (DKMS on a kernel
# upgrade), downloaded, never installed on the host.
SECOND_KERNEL_META=linux-image-6.12-amd64
SECOND_KERNEL_DEBS=/var/cache/stt-debs/second-kernel
# Set when netperf could not be installed, so later runs stay silent.
NETPERF_MARK=$CACHE/netperf-unavailable

export DEBIAN_FRONTEND=noninteractive
APT_OPTS="-y -q --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"
updated=

say() { echo "setup: $*" >&2; }

installed() {
	[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
}

missing_of() {
	local p

	for p in "$@"; do
		installed "$p" || printf '%s ' "$p"
	done
}

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		say "missing packages: $*; run scripts/setup.sh as root"
		exit 1
	fi
}

apt_update() {
	[ -n "$updated" ] && return 0
	apt-get update -qq </dev/null >/dev/null
	updated=1
}

apt_install() {
	# shellcheck disable=SC2086
	apt-get install $APT_OPTS "$@" </dev/null
}

preseed() {
	# tshark pulls in wireshark-common, which asks about setuid dumpcap.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections
}

has_candidate() {
	apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [^(]'
}

# Copy each stanza of debian.sources with Components set to non-free.
write_nonfree_sources() {
	if [ -f "$DEBIAN_SOURCES" ]; then
		awk '
			/^#/ { next }
			/^Components:/ { print "Components: non-free"; next }
			{ print }
		' "$DEBIAN_SOURCES" >"$NONFREE_SOURCES"
	else
		cat >"$NONFREE_SOURCES" <<-EOF
			Types: deb
			URIs: http://deb.debian.org/debian
			Suites: bookworm bookworm-updates
			Components: non-free
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
	fi
}

install_netperf() {
	installed netperf && return 0
	[ -e "$NETPERF_MARK" ] && return 0
	need_root netperf
	apt_update
	if ! has_candidate netperf && [ ! -e "$NONFREE_SOURCES" ]; then
		say "netperf is in non-free: adding $NONFREE_SOURCES"
		write_nonfree_sources
		updated=
		apt_update
	fi
	if ! apt_install netperf >/dev/null 2>&1; then
		say "netperf could not be installed (optional), continuing"
		mkdir -p "$CACHE"
		: >"$NETPERF_MARK"
	fi
}

# Make sure some kernel release has both an image and a build tree.
check_kernel() {
	local img r

	[ -n "$(scripts/build/find-kernel.sh)" ] && return 0
	need_root "linux-headers (matching /boot/vmlinuz-*)"
	apt_update
	for img in /boot/vmlinuz-*; do
		[ -f "$img" ] || continue
		r=${img#/boot/vmlinuz-}
		apt_install "linux-headers-$r" >&2 || true
	done
	if [ -z "$(scripts/build/find-kernel.sh)" ]; then
		say "no kernel release R with both /boot/vmlinuz-R and /lib/modules/R/build"
		exit 1
	fi
}

# shellcheck disable=SC2086
missing=$(missing_of $PACKAGES)
if [ -n "$missing" ]; then
	need_root "$missing"
	say "installing: ${missing% }"
	preseed
	apt_update
	# shellcheck disable=SC2086
	apt_install $missing >&2
fi

check_kernel

# Download (once) image, headers and kbuild of the kernel release that
# SECOND_KERNEL_META (bookworm-security) depends on, all of one version.
download_second_kernel() {
	local r ver flavour pkgs p

	r=$(apt-cache depends "$SECOND_KERNEL_META" 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*\)$/\1/p' |
		grep -v -- '-unsigned$' | sort -V | tail -n 1)
	if [ -z "$r" ]; then
		say "no $SECOND_KERNEL_META in apt's sources: selftests/deb.sh will skip its second kernel"
		return 0
	fi
	[ -f "$SECOND_KERNEL_DEBS/.complete-$r" ] && return 0
	need_root "the packages of kernel $r (download only)"
	flavour=${r##*-}
	ver=$(apt-cache show "linux-image-$r" | sed -n 's/^Version: //p' |
		sort -V | tail -n 1)
	pkgs="linux-image-$r linux-headers-$r linux-headers-${r%-"$flavour"}-common
		linux-kbuild-${r%-"$flavour"}"
	say "downloading kernel $r ($ver) into $SECOND_KERNEL_DEBS"
	rm -rf "$SECOND_KERNEL_DEBS"
	mkdir -p "$SECOND_KERNEL_DEBS"
	# shellcheck disable=SC2046 # a list of package names
	(cd "$SECOND_KERNEL_DEBS" &&
		apt-get download -q $(for p in $pkgs; do echo "$p=$ver"; done)) >&2
	touch "$SECOND_KERNEL_DEBS/.complete-$r"
}

download_second_kernel

for p in $OPTIONAL; do
	case $p in
	netperf) install_netperf ;;
	esac
done
