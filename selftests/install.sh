#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installing like a driver: "make install DESTDIR=<scratch root>" puts the
# modules under lib/modules/R/updates, runs depmod on that root, installs the
# iproute2 plugin and the uapi header; modprobe resolves "stt" and the alias
# "rtnl-link-stt" there; "make uninstall" removes it all again. DKMS builds
# the module from "make dkms-install" sources (scratch trees, nothing is
# registered on the machine).
#
# In the VM (STT_VM=1, / is a throw-away overlay) also the real thing:
# "make install", then with stt unloaded "ip link add ... type stt" loads it
# by its alias and works with the installed plugin (no IP_LIB_DIR).
#
#   +---- scratch root ($ROOT) -----------------------------+
#   | lib/modules/R/updates/stt.ko, modules.dep, alias ...  |
#   | usr/lib/x86_64-linux-gnu/ip/link_stt.so               |
#   | usr/include/linux/stt.h                               |
#   | usr/src/stt-VERSION, var/lib/dkms (DKMS test)         |
#   +-------------------------------------------------------+
#
# On the host:  selftests/install.sh (as root: depmod, dkms; loads nothing)
#               = the DESTDIR tests and the DKMS build
# In the VM:    scripts/vm/run.sh -- selftests/run.sh install.sh
#               = the DESTDIR tests and the real install (STT_DKMS=1: DKMS too)

# shellcheck disable=SC2317 # the tests run through tests_run
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

ALL_TESTS="
	destdir_install
	destdir_modprobe
	destdir_header
	destdir_plugin
	destdir_uninstall
"
# The DKMS build is slow under TCG and the same build as on the host: host
# only unless STT_DKMS=1. The real install needs the throw-away VM.
if [[ -z "$STT_VM" || -n "$STT_DKMS" ]]; then
	ALL_TESTS+=" dkms_build"
fi
if [[ -n "$STT_VM" ]]; then
	ALL_TESTS+=" real_install_autoload tree_modules_kept"
fi

TOP=$STT_MODULE_DIR
# In the VM the release is the one the tree's modules were built for (the
# debug kernel's under make check-debug, not the newest Debian kernel's).
if [[ -n "$STT_VM" && -z "${KERNELRELEASE:-}" && -f "$TOP/stt.ko" ]]; then
	KERNELRELEASE=$(modinfo -F vermagic "$TOP/stt.ko" | cut -d' ' -f1)
fi
R=${KERNELRELEASE:-$("$TOP/scripts/build/find-kernel.sh")}
# What the later tests will load: it must be the same after these tests.
TREE_KOS=$(cd "$TOP" && sha256sum ./*.ko 2>/dev/null)
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$TOP/dkms.conf")
ROOT=$(mktemp -d)
LOG=$ROOT.log
REAL_INSTALLED=
UNLOADED=()

# Our make, without the test environment's plugin directory. In the VM the
# tree is already built (vm-run loaded it): "-o module -o plugin" installs
# what is there. Rebuilding would be slow under TCG and, for another
# kernel, would replace the stt.ko the later tests load (check-debug:
# "Invalid module format" after install.sh).
tmake()
{
	env -u IP_LIB_DIR make -s -C "$TOP" ${STT_VM:+-o module -o plugin} \
		KERNELRELEASE="$R" "$@" >"$LOG" 2>&1
}

# Modules of the last build (modules.order), as file names.
built_modules()
{
	sed 's|.*/||; s|\.o$|.ko|' "$TOP/modules.order"
}

destdir_install()
{
	local f

	RET=0
	tmake install DESTDIR="$ROOT"
	check_err $? "make install DESTDIR=$ROOT failed: $(tail -n 3 "$LOG")"
	for f in $(built_modules); do
		[[ -f "$ROOT/lib/modules/$R/updates/$f" ]]
		check_err $? "no lib/modules/$R/updates/$f"
	done
	[[ -f "$ROOT/usr/lib/x86_64-linux-gnu/ip/link_stt.so" ]]
	check_err $? "no usr/lib/x86_64-linux-gnu/ip/link_stt.so"
	[[ -f "$ROOT/usr/include/linux/stt.h" ]]
	check_err $? "no usr/include/linux/stt.h"
	grep -q "^updates/stt.ko:" "$ROOT/lib/modules/$R/modules.dep"
	check_err $? "depmod -b did not list updates/stt.ko in modules.dep"
	log_test "make install DESTDIR=: module, plugin, header, depmod"
}

# modprobe -n -v prints nothing for a module that is already loaded (as in
# the VM): then ask with --show-depends, which resolves the same way.
mprobe()
{
	if [[ -d /sys/module/stt ]]; then
		modprobe -d "$ROOT" -S "$R" --show-depends "$@"
	else
		modprobe -d "$ROOT" -S "$R" -n -v "$@"
	fi
}

destdir_modprobe()
{
	local out want=$ROOT/lib/modules/$R/updates/stt.ko

	RET=0
	out=$(mprobe stt 2>&1)
	[[ "$out" == *"insmod $want"* ]]
	check_err $? "modprobe -n -v stt: $out"
	out=$(mprobe rtnl-link-stt 2>&1)
	[[ "$out" == *"insmod $want"* ]]
	check_err $? "modprobe -n -v rtnl-link-stt: $out"
	if built_modules | grep -qx vport-stt.ko; then
		out=$(mprobe vport-type-106 2>&1)
		[[ "$out" == *"insmod $ROOT/lib/modules/$R/updates/vport-stt.ko"* ]]
		check_err $? "modprobe -n -v vport-type-106: $out"
	fi
	log_test "modprobe -d DESTDIR resolves stt and rtnl-link-stt"
}

destdir_header()
{
	local out

	RET=0
	out=$(printf '#include <linux/stt.h>\nint x = IFLA_STT_MAX + STT_DST_PORT;\n' |
		cc -I"$ROOT/usr/include" -Wall -Werror -x c -fsyntax-only - 2>&1)
	check_err $? "installed stt.h does not compile alone: $out"
	log_test "installed <linux/stt.h> compiles on its own"
}

destdir_plugin()
{
	local out

	RET=0
	out=$(IP_LIB_DIR=$ROOT/usr/lib/x86_64-linux-gnu/ip ip link help stt 2>&1)
	[[ "$out" == *"Usage: ... stt "* ]]
	check_err $? "ip link help stt with the installed plugin: $out"
	log_test "installed plugin serves ip link help stt"
}

destdir_uninstall()
{
	local left out

	RET=0
	tmake uninstall DESTDIR="$ROOT"
	check_err $? "make uninstall DESTDIR=$ROOT failed: $(tail -n 3 "$LOG")"
	# depmod's index files may stay; nothing else.
	left=$(cd "$ROOT" && find . -type f ! -path "./lib/modules/$R/modules.*")
	[[ -z "$left" ]]
	check_err $? "left behind: $left"
	out=$(mprobe rtnl-link-stt 2>&1)
	check_fail $? "rtnl-link-stt still resolves after uninstall: $out"
	log_test "make uninstall DESTDIR= removes module, plugin, header"
}

dkms_build()
{
	local src=$ROOT/usr/src dtree=$ROOT/var/lib/dkms ko f vermagic left

	RET=0
	if ! command -v dkms >/dev/null; then
		log_skip "DKMS builds the module from make dkms-install" "no dkms"
		return
	fi
	if [[ ! -d "/lib/modules/$R/build" ]]; then
		log_skip "DKMS builds the module from make dkms-install" "no headers for $R"
		return
	fi

	tmake dkms-install DESTDIR="$ROOT"
	check_err $? "make dkms-install DESTDIR= failed: $(tail -n 3 "$LOG")"
	[[ -f "$src/stt-$VERSION/dkms.conf" ]]
	check_err $? "no usr/src/stt-$VERSION/dkms.conf"
	left=$(find "$src/stt-$VERSION" -name '*.o' -o -name '*.ko' -o -name '*.cmd')
	[[ -z "$left" ]]
	check_err $? "build products copied into the DKMS sources: $left"

	# Scratch source and DKMS trees; the signing key too (dkms would
	# otherwise create /var/lib/dkms/mok.key).
	mkdir -p "$dtree"
	export mok_signing_key=$ROOT/mok.key mok_certificate=$ROOT/mok.pub
	dkms add -m stt -v "$VERSION" --sourcetree "$src" --dkmstree "$dtree" \
		>"$LOG" 2>&1
	check_err $? "dkms add failed: $(tail -n 3 "$LOG")"
	dkms build -m stt -v "$VERSION" -k "$R" --sourcetree "$src" \
		--dkmstree "$dtree" >"$LOG" 2>&1
	check_err $? "dkms build failed: $(tail -n 5 "$LOG"; tail -n 20 "$dtree/stt/$VERSION/build/make.log" 2>/dev/null)"

	ko=$dtree/stt/$VERSION/$R/$(uname -m)/module/stt.ko
	# DKMS 3.1+ (Debian 13) keeps the module as the kernel compresses its
	# own: stt.ko.xz.
	[[ -f "$ko" ]] || for f in "$ko".*; do [[ -f "$f" ]] && { ko=$f; break; }; done
	vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null)
	[[ "$vermagic" == "$R "* ]]
	check_err $? "DKMS stt.ko missing or built for '$vermagic'"
	[[ "$(modinfo -F alias "$ko" 2>/dev/null)" == *rtnl-link-stt* ]]
	check_err $? "DKMS stt.ko lacks the rtnl-link-stt alias"

	dkms remove -m stt -v "$VERSION" --all --sourcetree "$src" \
		--dkmstree "$dtree" >"$LOG" 2>&1
	check_err $? "dkms remove --all failed: $(tail -n 3 "$LOG")"
	unset mok_signing_key mok_certificate
	tmake dkms-uninstall DESTDIR="$ROOT"
	[[ ! -e "$src/stt-$VERSION" ]]
	check_err $? "make dkms-uninstall DESTDIR= left $src/stt-$VERSION"
	log_test "DKMS builds the module from make dkms-install"
}

# The runner's modules (stt last), unloaded for the autoload test.
unload_ours()
{
	local m

	for m in vport_stt stt; do
		[[ -d /sys/module/$m ]] || continue
		rmmod "$m" || return 1
		UNLOADED=("$m" "${UNLOADED[@]}")
	done
}

# Back to the runner's state: its own stt.ko (and vport-stt.ko) loaded.
reload_ours()
{
	local ko

	[[ ${#UNLOADED[@]} -gt 0 ]] || return 0
	[[ -d /sys/module/vport_stt ]] && rmmod vport_stt
	[[ -d /sys/module/stt ]] && rmmod stt
	for ko in $STT_MODULES; do
		insmod "$ko" || return 1
	done
	UNLOADED=()
}

# tree_modules_kept: the tree's modules are the ones vm-run loaded, and the
# tests after this one load them again.
tree_modules_kept()
{
	local now

	RET=0
	now=$(cd "$TOP" && sha256sum ./*.ko 2>/dev/null)
	[[ -n "$TREE_KOS" && "$now" == "$TREE_KOS" ]]
	check_err $? "the tree's modules changed: $(diff <(echo "$TREE_KOS") <(echo "$now") | tr '\n' ' ')"
	log_test "the tree's modules are as vm-run loaded them"
}

real_install_autoload()
{
	local out moddir=/lib/modules/$R/updates

	RET=0
	if [[ "$(uname -r)" != "$R" ]]; then
		log_skip "real make install: ip link add autoloads stt" \
			"running $(uname -r), built for $R"
		return
	fi

	tmake install
	check_err $? "make install failed: $(tail -n 3 "$LOG")"
	REAL_INSTALLED=1
	[[ -f "$moddir/stt.ko" && -f /usr/lib/x86_64-linux-gnu/ip/link_stt.so &&
	   -f /usr/include/linux/stt.h ]]
	check_err $? "make install did not install module, plugin and header"

	unload_ours
	check_err $? "cannot unload the runner's modules"

	out=$(env -u IP_LIB_DIR ip link add sttauto0 type stt external 2>&1)
	check_err $? "ip link add sttauto0 type stt external: $out"
	[[ -d /sys/module/stt ]]
	check_err $? "stt was not loaded by ip link add"
	[[ "$(cat /sys/module/stt/srcversion 2>/dev/null)" == \
	   "$(modinfo -F srcversion "$moddir/stt.ko")" ]]
	check_err $? "the loaded stt is not the installed one"

	out=$(env -u IP_LIB_DIR ip -d link show sttauto0 2>&1)
	[[ "$out" == *"stt"*"dstport 7471"*"external"* ]]
	check_err $? "installed plugin does not print the device: $out"
	out=$(env -u IP_LIB_DIR ip link help stt 2>&1)
	[[ "$out" == *"Usage: ... stt "* ]]
	check_err $? "ip link help stt without IP_LIB_DIR: $out"
	ip link del sttauto0
	check_err $? "ip link del sttauto0 failed"

	tmake uninstall
	check_err $? "make uninstall failed: $(tail -n 3 "$LOG")"
	[[ ! -e "$moddir/stt.ko" && ! -e /usr/lib/x86_64-linux-gnu/ip/link_stt.so &&
	   ! -e /usr/include/linux/stt.h ]]
	check_err $? "make uninstall left files behind"
	modinfo stt &>/dev/null
	check_fail $? "modinfo still finds stt after make uninstall"
	REAL_INSTALLED=

	reload_ours
	check_err $? "cannot load the runner's modules again"
	log_test "real make install: ip link add autoloads stt"
}

cleanup()
{
	ip link del sttauto0 2>/dev/null
	[[ -n "$REAL_INSTALLED" ]] && tmake uninstall
	reload_ours
	rm -rf "$ROOT" "$LOG"
}

require_command make
require_command modprobe
require_command depmod
if [[ -z "$R" || ! -d "/lib/modules/$R/build" ]]; then
	echo "SKIP: no kernel build tree (scripts/setup.sh)"
	exit "$ksft_skip"
fi
if [[ -n "$STT_VM" || $(id -u) -eq 0 ]]; then
	:
else
	# depmod and dkms want root even for scratch trees.
	echo "SKIP: need root"
	exit "$ksft_skip"
fi

tests_run
tests_exit
