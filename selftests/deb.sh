#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # tests are called through ALL_TESTS
#
# The Debian packages, as a user gets them: "make deb" builds stt-dkms and
# stt-tools, "apt-get install ./*.deb" installs them (DKMS builds stt.ko
# for the running kernel), "ip link add ... type stt" loads the module
# DKMS installed and uses the plugin from /usr/lib/<multiarch>/ip, a second
# kernel's packages make DKMS build for that kernel too, and purging the
# packages leaves no file behind.
#
# It changes the system (packages, /lib/modules, /usr/src), so it only
# runs in the throwaway guest of scripts/vm/run.sh (STT_VM=1), best without
# the tree's modules (--no-load; loaded ones are unloaded first and loaded
# again at the end). apt needs no network: the dependencies (dkms,
# debhelper...) are in the guest's root, and the second kernel's packages
# are downloaded beforehand: by scripts/setup.sh for Debian 12 (bookworm-
# security's 6.12) and by scripts/vm/root.sh for Debian 13 (the headers of
# its backports kernel), into /var/cache/stt-debs/second-kernel.
#
#   make deb && scripts/vm/run.sh --no-load --timeout 3600 --env STT_DEB_TEST=1 \
#       --env SELFTEST_TIMEOUT=3300 -- selftests/run.sh deb.sh
#
# (make check runs it so, in a guest of its own). Without STT_DEB_TEST=1
# it skips: it does not belong in the guest of the other selftests, whose
# system it would change. It takes long: DKMS compiles the module in the
# guest, under TCG (for Debian 12's 6.1 vport-stt.ko too, from Open
# vSwitch headers extracted from linux-source-6.1's tarball), and the
# second kernel of Debian 12 is a whole linux-image package. Measured on
# the shared 2-core host (load 5-7): install + DKMS for 6.1 545 s, the
# 6.12 kernel + DKMS 887 s, purge 215 s; "make deb" in the guest 299 s
# when results/deb/ has no fresh packages (make check builds them on the
# host first). Debian 13 only installs the headers of its second kernel.
# Environment: DEB_DIR (packages to install; default results/deb/ when
# newer than the sources, else "make deb" in the guest), SECOND_KERNEL_DEBS
# (default /var/cache/stt-debs/second-kernel).

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	build
	pkg_install
	autoload
	second_kernel
	purge
"

SECOND_KERNEL_DEBS=${SECOND_KERNEL_DEBS:-/var/cache/stt-debs/second-kernel}
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$STT_MODULE_DIR/dkms.conf")
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
PLUGIN=/usr/lib/$MULTIARCH/ip/link_stt.so
R=$(uname -r)
R2=
R2_PKGS=()
SECOND_REMOVE=()
RELOAD=
TMPD=$(mktemp -d /tmp/stt-deb-XXXXXX)
LOG=$TMPD/log
DEBS=
# unsafe-io: no fsync per file (the root is a throwaway tmpfs overlay)
APT=(apt-get -y -q --no-install-recommends -o Dpkg::Options::=--force-confold
     -o Dpkg::Options::=--force-unsafe-io)
export DEBIAN_FRONTEND=noninteractive

cleanup()
{
	ip link del stt0 2>/dev/null
	ip link del stt1 2>/dev/null
	# the second kernel goes again (the guest's later tests pick the
	# newest kernel with headers)
	if [[ ${#SECOND_REMOVE[@]} -gt 0 ]]; then
		"${APT[@]}" purge "${SECOND_REMOVE[@]}" >/dev/null 2>&1
	fi
	dpkg -s stt-dkms >/dev/null 2>&1 &&
		"${APT[@]}" purge stt-dkms stt-tools >/dev/null 2>&1
	[[ -n "$RELOAD" ]] && stt_load
	rm -rf "$TMPD"
}

# ko_of KERNEL MODULE: the DKMS-installed module file, if any.
ko_of()
{
	local f

	for f in /lib/modules/"$1"/updates/dkms/"$2".ko*; do
		[[ -e $f ]] && { echo "$f"; return 0; }
	done
	return 1
}

# dkms_installed KERNEL: dkms status says stt is installed for KERNEL.
dkms_installed()
{
	dkms status -m stt -v "$VERSION" -k "$1" 2>/dev/null | grep -q ': installed'
}

# fresh DIR: DIR has this version's packages, newer than every source.
fresh()
{
	local deb=$1/stt-dkms_${VERSION}_all.deb newer

	[[ -f $deb ]] || return 1
	newer=$(cd "$STT_MODULE_DIR" && find Kbuild Makefile dkms.conf stt \
		include tools/iproute2 tools/debian scripts/build/find-kernel.sh \
		scripts/build/ovs-source.sh -newer "$deb" -type f -print -quit)
	[[ -z $newer ]]
}

build()
{
	local t0=$SECONDS

	RET=0
	if [[ -n "${DEB_DIR:-}" ]]; then
		DEBS=$DEB_DIR
		log_info "packages from DEB_DIR=$DEB_DIR"
	elif fresh "$STT_MODULE_DIR/results/deb"; then
		DEBS=$STT_MODULE_DIR/results/deb
		log_info "packages from make deb: $DEBS"
	else
		DEBS=$TMPD/debs
		(cd "$STT_MODULE_DIR" && scripts/build/deb.sh --out "$DEBS" --no-lintian) \
			>"$LOG" 2>&1
		check_err $? "scripts/build/deb.sh failed: $(tail -n 5 "$LOG")"
	fi
	[[ -f "$DEBS/stt-dkms_${VERSION}_all.deb" &&
	   -f $(echo "$DEBS"/stt-tools_"$VERSION"_*.deb) ]]
	check_err $? "no stt-dkms/stt-tools $VERSION in $DEBS: $(ls "$DEBS" 2>&1)"
	log_test "make deb: stt-dkms and stt-tools $VERSION" "$((SECONDS - t0)) s"

}

# Before anything is installed: the second kernel's packages that are
# installed already (the trixie root has its backports kernel's headers)
# are removed, so that installing them later is the event DKMS handles.
second_prepare()
{
	local deb pkg

	for deb in "$SECOND_KERNEL_DEBS"/*.deb; do
		[[ -f $deb ]] || continue
		pkg=$(dpkg-deb -f "$deb" Package)
		R2_PKGS+=("$deb")
		if [[ $pkg == linux-headers-*-* && $pkg != *-common ]]; then
			R2=${pkg#linux-headers-}
		fi
	done
	[[ -n "$R2" && "$R2" != "$R" ]] || return 0
	for deb in "${R2_PKGS[@]}"; do
		pkg=$(dpkg-deb -f "$deb" Package)
		if dpkg -s "$pkg" >/dev/null 2>&1; then
			[[ $pkg == linux-headers-"$R2" ]] && dpkg -r "$pkg" >/dev/null
		else
			SECOND_REMOVE+=("$pkg")
		fi
	done
}

pkg_install()
{
	local t0=$SECONDS ko vm f

	RET=0
	[[ -n "$DEBS" ]] || { log_skip "apt-get install ./*.deb" "no packages"; return; }
	"${APT[@]}" install "$DEBS"/stt-dkms_"$VERSION"_all.deb \
		"$DEBS"/stt-tools_"$VERSION"_*.deb >"$LOG" 2>&1
	check_err $? "apt-get install failed: $(tail -n 8 "$LOG")"
	dkms_installed "$R"
	check_err $? "dkms status: $(dkms status 2>&1 | tr '\n' ' ')"
	ko=$(ko_of "$R" stt)
	check_err $? "no /lib/modules/$R/updates/dkms/stt.ko"
	vm=$(modinfo -F vermagic "$ko" 2>/dev/null)
	[[ $vm == "$R "* ]]
	check_err $? "DKMS stt.ko built for '$vm', not $R"
	for f in "$PLUGIN" /usr/include/linux/stt.h \
		 "/usr/src/stt-$VERSION/dkms.conf"; do
		[[ -f $f ]]
		check_err $? "$f not installed"
	done
	echo '#include <linux/stt.h>
int main(void) { return IFLA_STT_MAX > 0 ? 0 : 1; }' |
		gcc -x c -o "$TMPD/uapi" - 2>"$LOG" && "$TMPD/uapi"
	check_err $? "<linux/stt.h> does not compile: $(head -n 3 "$LOG")"
	vm=
	ko_of "$R" vport-stt >/dev/null && vm=", vport-stt.ko too"
	log_test "apt-get install ./*.deb: DKMS builds stt.ko for $R" \
		"$((SECONDS - t0)) s$vm"
}

# The module DKMS installed, loaded by "ip link add" (rtnl-link-stt), and
# the plugin from /usr/lib: no path into the tree.
autoload()
{
	local path kind id

	RET=0
	if ! dkms_installed "$R"; then
		log_skip "ip link add ... type stt loads the DKMS module" "not installed"
		return
	fi
	stt_loaded && stt_unload
	(
		unset IP_LIB_DIR
		ip link add stt0 type stt external &&
			ip link add stt1 type stt id 0x123456789 remote 192.0.2.2
	) 2>"$LOG"
	check_err $? "ip link add ... type stt failed: $(cat "$LOG")"
	stt_loaded
	check_err $? "stt is not loaded"
	path=$(modinfo -n stt 2>/dev/null)
	[[ $path == /lib/modules/$R/updates/dkms/stt.ko* ]]
	check_err $? "modprobe's stt is $path, not DKMS's"
	[[ "$(cat /sys/module/stt/srcversion 2>/dev/null)" == \
	   "$(modinfo -F srcversion "$path" 2>/dev/null)" ]]
	check_err $? "the loaded stt is not the DKMS module"
	kind=$(env -u IP_LIB_DIR ip -d -j link show dev stt0 |
		jq -r '.[0].linkinfo | "\(.info_kind) \(.info_data.external)"')
	[[ $kind == "stt true" ]]
	check_err $? "ip -d shows stt0 as '$kind'"
	id=$(env -u IP_LIB_DIR ip -d -j link show dev stt1 |
		jq -r '.[0].linkinfo.info_data.id')
	[[ $id == 4886718345 || $id == 0x123456789 ]]
	check_err $? "ip -d shows the id of stt1 as '$id'"
	ip link del stt0
	ip link del stt1
	stt_unload
	log_test "ip link add ... type stt loads DKMS's stt.ko, plugin from /usr/lib"
}

second_kernel()
{
	local t0=$SECONDS ko vm

	RET=0
	if [[ -z "$R2" ]]; then
		log_skip "a second kernel's packages: DKMS builds for it" \
			"no kernel packages in $SECOND_KERNEL_DEBS (scripts/setup.sh, scripts/vm/root.sh)"
		return
	fi
	if [[ "$R2" == "$R" ]]; then
		log_skip "a second kernel's packages: DKMS builds for it" \
			"$SECOND_KERNEL_DEBS holds the running kernel $R"
		return
	fi
	if ! dkms_installed "$R"; then
		log_skip "a second kernel ($R2): DKMS builds for it" "stt-dkms not installed"
		return
	fi
	dkms_installed "$R2"
	check_fail $? "stt already installed for $R2 before its headers"
	# INITRD=No: no initramfs for a kernel nobody boots (minutes under TCG)
	INITRD=No "${APT[@]}" install "${R2_PKGS[@]}" >"$LOG" 2>&1
	check_err $? "apt-get install of $R2 failed: $(tail -n 8 "$LOG")"
	dkms_installed "$R2"
	check_err $? "dkms status: $(dkms status 2>&1 | tr '\n' ' ')"
	ko=$(ko_of "$R2" stt)
	check_err $? "no /lib/modules/$R2/updates/dkms/stt.ko"
	vm=$(modinfo -F vermagic "$ko" 2>/dev/null)
	[[ $vm == "$R2 "* ]]
	check_err $? "DKMS stt.ko for $R2 built for '$vm'"
	log_test "installing kernel $R2's packages: DKMS builds stt.ko for it" \
		"$((SECONDS - t0)) s"
}

purge()
{
	local left f

	RET=0
	if ! dpkg -s stt-dkms >/dev/null 2>&1; then
		log_skip "apt-get purge leaves nothing" "not installed"
		return
	fi
	"${APT[@]}" purge stt-dkms stt-tools >"$LOG" 2>&1
	check_err $? "apt-get purge failed: $(tail -n 5 "$LOG")"
	left=$(
		shopt -s nullglob
		for f in /usr/src/stt-* /var/lib/dkms/stt \
			 /lib/modules/*/updates/dkms/stt.ko* \
			 /lib/modules/*/updates/dkms/vport-stt.ko* \
			 "$PLUGIN" /usr/include/linux/stt.h; do
			[[ -e $f ]] && echo "$f"
		done)
	[[ -z $left ]]
	check_err $? "left behind: ${left//$'\n'/ }"
	modinfo -n stt >/dev/null 2>&1
	check_fail $? "modinfo still finds stt: $(modinfo -n stt 2>&1)"
	dpkg -l 'stt-*' 2>/dev/null | grep -q '^[a-z][a-z] '
	check_fail $? "dpkg still knows: $(dpkg -l 'stt-*' 2>&1 | tail -n 2)"
	log_test "apt-get purge stt-dkms stt-tools leaves nothing" \
		"${R2:+modules of $R and $R2 gone}"
}

require_root
if [[ -z "${STT_VM:-}" ]]; then
	echo "SKIP: installs packages and kernels: runs only in scripts/vm/run.sh's guest"
	exit "$ksft_skip"
fi
if [[ -z "${STT_DEB_TEST:-}" ]]; then
	echo "SKIP: takes its own guest (it installs a kernel, and DKMS builds take minutes):"
	echo "      scripts/vm/run.sh --no-load --timeout 3600 --env STT_DEB_TEST=1 --env SELFTEST_TIMEOUT=3300 -- selftests/run.sh deb.sh"
	exit "$ksft_skip"
fi
require_command apt-get
require_command dkms
require_command jq
if dpkg -s stt-dkms >/dev/null 2>&1; then
	echo "SKIP: stt-dkms is already installed"
	exit "$ksft_skip"
fi
if stt_loaded; then
	stt_unload || { echo "SKIP: cannot unload the loaded stt"; exit "$ksft_skip"; }
	RELOAD=1
fi

second_prepare
tests_run
tests_exit
