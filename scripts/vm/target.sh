#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# target.sh: the kernels and userlands the tree is built and tested on, each
# made ready from Debian's archive, built for, and run in QEMU.
#
#   scripts/vm/target.sh list                       names, one a line, and what they are
#   scripts/vm/target.sh prepare NAME               fetch the kernel (and root); print
#                                             KEY=VALUE lines: root, release, kdir,
#                                             source (linux-source tarball, as the
#                                             target sees it), host_source, dir
#   scripts/vm/target.sh build NAME                 build a copy of the tree for it; print its path
#   scripts/vm/target.sh exec NAME CMD...           run CMD in that copy, in the target's
#                                             userland (chroot), with KDIR= its kernel
#   scripts/vm/target.sh run NAME [VM-RUN OPTS] -- CMD...
#                                             vm-run CMD in that copy, on that kernel
#   scripts/vm/target.sh vmargs NAME                the vm-run options of that kernel and
#                                             root, one a line (for scripts/vm/net.sh)
#
# Targets:
#   deb12       Debian 12: the host's root and its kernel (linux-image-amd64,
#               6.1), built in the checkout itself
#   deb12-6.12  Debian 12 with bookworm-security's linux-image-6.12-amd64,
#               the host's root
#   deb13       Debian 13: a trixie root (scripts/vm/root.sh) with trixie's
#               kernel (6.12), iproute2 6.15, Open vSwitch 3.5, OVN 25.03
#   deb13-new   the same root with the newest kernel trixie-backports has
#               (7.x)
#   sid         userland only (no kernel): a sid root for the iproute2
#               plugin's test against the newest ip; "build" makes the
#               plugin alone, "run" is refused
#
# Kernels that are not the host's are unpacked (dpkg -x) into
# $STT_CACHE/kernels/R, never installed on the host. Every target but deb12
# builds in a copy of the tree, $STT_CACHE/build/<checkout>/NAME/stt
# (sources synced, build products kept; one per checkout), made inside
# the trixie root (chroot, with the copy bind-mounted at its own path)
# where the kernel's kbuild needs trixie's libc. Runs as root for the
# trixie targets.

set -e

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${STT_CACHE:-/var/tmp/stt-cache}
ME=target
TARGETS="deb12 deb12-6.12 deb13 deb13-new"

say() { echo "$ME: $*" >&2; }
die() { say "$*"; exit 1; }

# ---- kernels unpacked into the cache ---------------------------------------

# Resolve a metapackage of the host's suites (e.g. linux-image-6.12-amd64)
# to the kernel release it depends on.
meta_release() {
	apt-cache depends "$1" 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*\)$/\1/p' |
		grep -v -- '-unsigned$' | sort -V | tail -n 1
}

# Unpack image, headers, kbuild and the matching linux-source of release
# $1 into $CACHE/kernels/$1 (once) and print the directory.
unpack_kernel() {
	local r=$1 dir=$CACHE/kernels/$1 ver pkgs d deb flavour

	if [ -f "$dir/.complete" ]; then
		echo "$dir"
		return
	fi
	flavour=${r##*-}
	ver=$(apt-cache show "linux-image-$r" 2>/dev/null |
		sed -n 's/^Version: //p' | sort -V | tail -n 1)
	[ -n "$ver" ] || die "no package linux-image-$r in the host's apt sources"
	pkgs="linux-image-$r linux-headers-$r linux-headers-${r%-"$flavour"}-common
		linux-kbuild-${r%-"$flavour"} linux-source-$(echo "$r" | cut -d. -f1-2)"
	say "unpacking $pkgs into $dir"
	rm -rf "$dir" "$dir.debs"
	mkdir -p "$dir.debs"
	# shellcheck disable=SC2046 # a list of package names
	(cd "$dir.debs" && apt-get download -q $(for p in $pkgs; do echo "$p=$ver"; done)) >&2 ||
		die "cannot download $pkgs ($ver)"
	for deb in "$dir.debs"/*.deb; do
		dpkg -x "$deb" "$dir"
	done
	rm -rf "$dir.debs"
	# Debian's headers include the -common Makefile by absolute path.
	d=$dir/usr/src/linux-headers-$r
	sed -i "s|^include /usr/src/|include $dir/usr/src/|" "$d/Makefile"
	depmod -b "$dir" "$r"
	touch "$dir/.complete"
	echo "$dir"
}

# ---- target definitions ----------------------------------------------------

# Set T_* for target $1:
#   T_ROOT      the guest's root (/ for the host's)
#   T_RELEASE   kernel release
#   T_KDIR      kernel build tree, as seen from T_ROOT
#   T_VMARGS    extra vm-run options (array)
#   T_SOURCE    linux-source tarball for vport-stt (path from T_ROOT), or empty
#   T_DIR       where the tree is built (host path)
define() {
	local k trixie

	T_VMARGS=()
	T_SOURCE=
	T_DIR=$CACHE/build/$(basename "$SRCDIR")-$(echo "$SRCDIR" | sha1sum | cut -c1-8)/$1/stt
	case $1 in
	deb12)
		T_ROOT=/
		T_RELEASE=${KERNELRELEASE:-$("$SRCDIR/scripts/build/find-kernel.sh")}
		[ -n "$T_RELEASE" ] || die "no Debian 12 kernel with headers; run scripts/setup.sh"
		T_KDIR=/lib/modules/$T_RELEASE/build
		T_DIR=$SRCDIR
		;;
	deb12-6.12)
		T_ROOT=/
		T_RELEASE=$(meta_release linux-image-6.12-amd64)
		[ -n "$T_RELEASE" ] || die "no linux-image-6.12-amd64 in the host's apt sources (bookworm-security)"
		k=$(unpack_kernel "$T_RELEASE")
		T_KDIR=$k/usr/src/linux-headers-$T_RELEASE
		T_SOURCE=$(find "$k/usr/src" -maxdepth 1 -name 'linux-source-*.tar.xz' | head -n 1)
		T_VMARGS=(--kernel "$T_RELEASE" --kernel-image "$k/boot/vmlinuz-$T_RELEASE"
			--modules-dir "$k/lib/modules/$T_RELEASE")
		;;
	deb13|deb13-new)
		trixie=$("$SRCDIR/scripts/vm/root.sh" trixie) || die "no trixie root"
		T_ROOT=$trixie
		if [ "$1" = deb13 ]; then
			# trixie's own kernel: what linux-image-amd64 points at
			# shellcheck disable=SC2016 # a dpkg-query format
			T_RELEASE=$(chroot "$T_ROOT" dpkg-query -W -f='${Depends}' linux-image-amd64 |
				sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
		else
			T_RELEASE=$(for img in "$T_ROOT"/boot/vmlinuz-*; do
				echo "${img##*/vmlinuz-}"; done | sort -V | tail -n 1)
		fi
		if [ -z "$T_RELEASE" ] || [ ! -f "$T_ROOT/boot/vmlinuz-$T_RELEASE" ]; then
			die "no kernel for $1 in $T_ROOT"
		fi
		T_KDIR=/usr/src/linux-headers-$T_RELEASE
		T_SOURCE=/usr/src/linux-source-$(echo "$T_RELEASE" | cut -d. -f1-2).tar.xz
		[ -f "$T_ROOT$T_SOURCE" ] || T_SOURCE=
		T_VMARGS=(--root "$T_ROOT" --kernel "$T_RELEASE")
		;;
	sid)
		T_ROOT=$("$SRCDIR/scripts/vm/root.sh" sid) || die "no sid root"
		T_RELEASE=
		T_KDIR=
		;;
	*) die "unknown target '$1' (known: $TARGETS sid)" ;;
	esac
}

# ---- build -----------------------------------------------------------------

sync_tree() {
	mkdir -p "$T_DIR"
	# Sources follow the checkout (uncommitted changes included); what
	# .gitignore names (build products, caches) stays, for make to reuse.
	rsync -a --delete --filter=':- .gitignore' --exclude=/.git \
		"$SRCDIR/" "$T_DIR/"
}

# Run a command in T_DIR, inside T_ROOT when it is not the host's, with
# KDIR, KERNELRELEASE and STT_LINUX_SOURCE in its environment.
target_exec() {
	local envs=(KDIR="$T_KDIR" KERNELRELEASE="$T_RELEASE")

	[ -n "$T_SOURCE" ] && envs+=(STT_LINUX_SOURCE="$T_SOURCE")
	if [ "$T_ROOT" = / ]; then
		(cd "$T_DIR" && env "${envs[@]}" "$@")
	else
		mkdir -p "$T_ROOT$T_DIR"
		# shellcheck disable=SC2016 # expanded by the inner shells
		unshare -m sh -c 'set -e
			mount --bind "$1" "$2$1"
			mount -t proc proc "$2/proc"
			mount -t sysfs sysfs "$2/sys"
			cd "$2$1"
			root=$2
			shift 2
			exec chroot "$root" "$@"' sh "$T_DIR" "$T_ROOT" \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LANG=C.UTF-8 "${envs[@]}" sh -c 'cd "$0" && exec "$@"' \
			"$T_DIR" "$@"
	fi
}

cmd=${1:-}
[ "$#" -gt 0 ] && shift
case $cmd in
list)
	for t in $TARGETS; do echo "$t"; done
	;;
prepare)
	[ "$#" -eq 1 ] || die "usage: scripts/vm/target.sh prepare NAME"
	define "$1"
	[ "$1" = deb12 ] && [ -z "$T_SOURCE" ] && [ -f /usr/src/linux-source-6.1.tar.xz ] &&
		T_SOURCE=/usr/src/linux-source-6.1.tar.xz
	r=${T_ROOT%/}
	printf '%s\n' "root=$T_ROOT" "release=$T_RELEASE" "kdir=$T_KDIR" \
		"source=$T_SOURCE" "host_source=${T_SOURCE:+$r$T_SOURCE}" "dir=$T_DIR"
	;;
build)
	[ "$#" -eq 1 ] || die "usage: scripts/vm/target.sh build NAME"
	define "$1"
	[ "$T_DIR" = "$SRCDIR" ] || sync_tree
	if [ -z "$T_KDIR" ]; then
		say "building $1 (iproute2 plugin only) in $T_DIR"
		target_exec make plugin >&2
	else
		say "building $1 ($T_RELEASE) in $T_DIR"
		target_exec make module plugin bpf STT_WERROR=y >&2
	fi
	echo "$T_DIR"
	;;
exec)
	[ "$#" -ge 2 ] || die "usage: scripts/vm/target.sh exec NAME CMD..."
	define "$1"
	shift
	target_exec "$@"
	;;
run)
	[ "$#" -ge 1 ] || die "usage: scripts/vm/target.sh run NAME [VM-RUN OPTIONS] -- CMD..."
	define "$1"
	[ -n "$T_KDIR" ] || die "$1 has no kernel to run"
	[ -f "$T_DIR/stt.ko" ] || die "$1 is not built: scripts/vm/target.sh build $1"
	T_VMARGS+=(--env "KERNELRELEASE=$T_RELEASE")
	shift
	cd "$T_DIR"
	exec "$T_DIR/scripts/vm/run.sh" "${T_VMARGS[@]}" "$@"
	;;
vmargs)
	[ "$#" -eq 1 ] || die "usage: scripts/vm/target.sh vmargs NAME"
	define "$1"
	[ -n "$T_KDIR" ] || die "$1 has no kernel to run"
	printf '%s\n' "${T_VMARGS[@]}" --env "KERNELRELEASE=$T_RELEASE"
	;;
*)
	die "usage: scripts/vm/target.sh list|prepare NAME|build NAME|run NAME [OPTS] -- CMD|vmargs NAME"
	;;
esac
