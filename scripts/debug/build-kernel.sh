#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh: build a debug kernel (KASAN, kmemleak, lockdep, UBSAN,
# net refcount trackers) from Debian's linux-source-6.1 for `make
# check-debug`, with everything the selftests need built in.
#
#   scripts/debug/build-kernel.sh [--force] [--print-vars]
#
# Config: x86_64_defconfig + scripts/debug/kernel.config (merge_config.sh),
# then olddefconfig; every option the fragment asks for is checked and the
# ones that did not stick are printed (the required ones are fatal).
#
# Everything lives outside the repository, in $STT_CACHE/debug-kernel
# (default /var/tmp/stt-cache/debug-kernel):
#   src/      the tarball, extracted (kept pristine: O= builds)
#   build/    the O= build tree: arch/x86/boot/bzImage, Module.symvers
#   root/     modules_install output: root/lib/modules/<release>/
#   key       hash of FORMAT, tarball, fragment (settings), gcc version;
#             written on success
# A run whose key matches does nothing (seconds). --force rebuilds anyway
# (incrementally). The build runs under `nice -n 19`, -j$STT_JOBS (default:
# number of CPUs).
#
# On success prints, with --print-vars, shell assignments:
#   DEBUG_KDIR= DEBUG_RELEASE= DEBUG_IMAGE= DEBUG_MODDIR=

set -e

# Not the jobserver or variables of a calling make (make check-debug).
unset MAKEFLAGS MFLAGS MAKELEVEL
SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${STT_CACHE:-/var/tmp/stt-cache}
TARBALL=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
FRAGMENT=$SRCDIR/scripts/debug/kernel.config
TOP=$CACHE/debug-kernel
JOBS=${STT_JOBS:-$(nproc)}
ME=build-debug-kernel

say() { echo "$ME: $*" >&2; }
die() { say "$*"; exit 1; }

force=
print_vars=
for arg; do
	case $arg in
	--force) force=1 ;;
	--print-vars) print_vars=1 ;;
	-h|--help) sed -n '3,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) die "unknown argument '$arg'" ;;
	esac
done

# Options that must end up =y, or the run is not what it claims to be.
REQUIRED="KASAN KASAN_GENERIC KASAN_INLINE DEBUG_KMEMLEAK PROVE_LOCKING
PROVE_RCU DEBUG_ATOMIC_SLEEP UBSAN UBSAN_BOUNDS UBSAN_SHIFT
NET_DEV_REFCNT_TRACKER NET_NS_REFCNT_TRACKER DEBUG_NET DEBUG_FS KALLSYMS
MODULES MODULE_UNLOAD VIRTIO_PCI VIRTIO_NET VIRTIO_CONSOLE NET_9P
NET_9P_VIRTIO 9P_FS 9P_FS_POSIX_ACL OVERLAY_FS TMPFS DEVTMPFS VETH VXLAN
GENEVE TUN BRIDGE VLAN_8021Q IPV6 NETFILTER NF_CONNTRACK NF_TABLES
NF_TABLES_INET NFT_CT IP_NF_IPTABLES IP_NF_FILTER
NETFILTER_XT_MATCH_CONNTRACK NET_SCH_NETEM NET_CLS_FLOWER NET_CLS_MATCHALL
NET_ACT_TUNNEL_KEY NET_ACT_MIRRED OPENVSWITCH OPENVSWITCH_VXLAN
OPENVSWITCH_GENEVE LWTUNNEL DST_CACHE NET_UDP_TUNNEL XFRM_USER INET_ESP
INET6_ESP CRYPTO_GCM CRYPTO_SEQIV KPROBES KPROBE_EVENTS"
# ... and must not be on.
FORBIDDEN="UBSAN_ALIGNMENT DEBUG_INFO DEBUG_INFO_BTF"

[ -r "$TARBALL" ] || die "no $TARBALL (apt-get install linux-source-6.1)"
[ -r "$FRAGMENT" ] || die "no $FRAGMENT"
mkdir -p "$TOP"

exec 9>"$TOP/.lock"
flock 9

tarkey() {
	# Hashing 130 MB takes a second; cache it per size and mtime.
	local id cached

	id=$(stat -L -c '%s %Y' "$TARBALL")
	cached=$(cat "$TOP/tarball.sha" 2>/dev/null || true)
	if [ "${cached%% *}" != "$(echo "$id" | tr ' ' :)" ]; then
		echo "$(echo "$id" | tr ' ' :) $(sha256sum <"$TARBALL" | cut -d' ' -f1)" \
			>"$TOP/tarball.sha"
	fi
	cut -d' ' -f2 "$TOP/tarball.sha"
}

# Bump when the way the kernel is built changes (steps, options, make
# arguments): the key no longer hashes this script, so moving it or editing
# a comment does not rebuild the kernel (nor does a comment in the
# fragment: only its CONFIG_ lines and "is not set" lines are hashed).
FORMAT=1
key=$( {
	echo "$FORMAT"
	tarkey
	grep -E '^(CONFIG_|# CONFIG_.* is not set)' "$FRAGMENT" | sha256sum
	gcc --version | head -n 1
} | sha256sum | cut -c1-16)

src=$TOP/src
out=$TOP/build
root=$TOP/root

emit_vars() {
	local rel

	rel=$(cat "$out/include/config/kernel.release")
	if [ -n "$print_vars" ]; then
		printf 'DEBUG_KDIR=%q\n' "$out"
		printf 'DEBUG_RELEASE=%q\n' "$rel"
		printf 'DEBUG_IMAGE=%q\n' "$out/arch/x86/boot/bzImage"
		printf 'DEBUG_MODDIR=%q\n' "$root/lib/modules/$rel"
	fi
}

if [ -z "$force" ] && [ "$(cat "$TOP/key" 2>/dev/null)" = "$key" ] &&
	[ -f "$out/arch/x86/boot/bzImage" ] && [ -f "$out/Module.symvers" ]; then
	say "up to date ($key): $out/arch/x86/boot/bzImage"
	emit_vars
	exit 0
fi
rm -f "$TOP/key"

start=$(date +%s)

# ---- source ---------------------------------------------------------------

tkey=$(tarkey)
if [ "$(cat "$src/.stt-tarball" 2>/dev/null)" != "$tkey" ]; then
	say "extracting $TARBALL"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$TARBALL" -C "$src.tmp" --strip-components=1
	echo "$tkey" >"$src.tmp/.stt-tarball"
	mv "$src.tmp" "$src"
	rm -rf "$out"	# objects of another source
fi

# ---- config ---------------------------------------------------------------

mk() { nice -n 19 make -C "$src" O="$out" -j"$JOBS" "$@"; }

mkdir -p "$out"
say "configuring: x86_64_defconfig + ${FRAGMENT#"$SRCDIR"/}"
mk -s x86_64_defconfig >/dev/null
(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -m -O "$out" \
	"$out/.config" "$FRAGMENT" >/dev/null)
mk -s olddefconfig >/dev/null

declare -A config
while IFS='=' read -r opt val; do
	config[${opt#CONFIG_}]=$val
done < <(grep '^CONFIG_' "$out/.config")
value() { echo "${config[$1]:-}"; }

# Every line of the fragment: did it stick?
missed=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		opt=${line%%=*}; opt=${opt#CONFIG_}; want=${line#*=} ;;
	"# CONFIG_"*" is not set")
		opt=${line#"# CONFIG_"}; opt=${opt%" is not set"}; want=n ;;
	*) continue ;;
	esac
	got=$(value "$opt")
	[ -n "$got" ] || got=n
	if [ "$got" != "$want" ]; then
		say "note: CONFIG_$opt=$got (fragment: $want)"
		missed=$((missed + 1))
	fi
done <"$FRAGMENT"

bad=0
for opt in $REQUIRED; do
	if [ "$(value "$opt")" != y ]; then
		say "ERROR: CONFIG_$opt is '$(value "$opt")', not y"
		bad=$((bad + 1))
	fi
done
for opt in $FORBIDDEN; do
	if [ -n "$(value "$opt")" ]; then
		say "ERROR: CONFIG_$opt=$(value "$opt") must be off"
		bad=$((bad + 1))
	fi
done
[ "$bad" -eq 0 ] || die "$bad required option(s) wrong in $out/.config"
say "config ok ($missed fragment line(s) not as written, see notes)"

# ---- build ----------------------------------------------------------------

say "building (nice -n 19 make -j$JOBS; log: $TOP/build.log)"
if ! mk all >"$TOP/build.log" 2>&1; then
	tail -n 40 "$TOP/build.log" >&2
	die "kernel build failed (see $TOP/build.log)"
fi
rm -rf "$root"
mk -s INSTALL_MOD_PATH="$root" modules_install >>"$TOP/build.log" 2>&1 ||
	die "modules_install failed (see $TOP/build.log)"

echo "$key" >"$TOP/key"
say "built $(cat "$out/include/config/kernel.release") in $(($(date +%s) - start)) s"
emit_vars
