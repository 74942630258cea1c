# SPDX-License-Identifier: GPL-2.0
#
# STT tunnel driver: out-of-tree build, install and test entry points.
#
#   make                  build stt.ko, the iproute2 plugin and the tc BPF programs
#   make check            set up, build (-Werror), style, sparse, selftests in QEMU
#   make check-debug      selftests in QEMU on a KASAN/kmemleak/lockdep/UBSAN
#                         kernel built from linux-source-6.1 (slow; cached)
#   make demo             two hosts, an STT tunnel, traffic, a summary
#   make demo-ovn-hosts   OVN over STT across three QEMU guests: checks, faults,
#                         STT/Geneve figures (about 12 minutes)
#   make install          module + plugin + uapi header (DESTDIR= honoured)
#   make dkms-install     register the sources with DKMS
#   make deb              Debian packages stt-dkms and stt-tools in results/deb/
#
# KERNELRELEASE defaults to the newest Debian kernel with both an image and a
# build tree installed (never the host's uname -r); KDIR= overrides the tree.

KERNELRELEASE ?= $(shell $(CURDIR)/scripts/build/find-kernel.sh)
KDIR ?= /lib/modules/$(KERNELRELEASE)/build
PREFIX ?= /usr
DEPMOD ?= depmod
MODDIR := /lib/modules/$(KERNELRELEASE)/updates
# Where Debian's ip looks for link_<kind>.so. Not named IP_LIB_DIR: the tests
# export that one (pointing at tools/iproute2) and make would take it.
PLUGINDIR ?= $(PREFIX)/lib/x86_64-linux-gnu/ip
INCDIR ?= $(PREFIX)/include/linux
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

# Every module Kbuild may build; install takes those of the last build
# (modules.order), uninstall removes any of them.
MODULES := stt.ko vport-stt.ko
PLUGIN := tools/iproute2/link_stt.so
DKMS_SRC := $(DESTDIR)/usr/src/stt-$(VERSION)

.PHONY: all module plugin bpf check check-debug style sparse demo demo-ovn \
	demo-ovn-hosts bench setup install uninstall dkms-install \
	dkms-uninstall deb clean

all: module plugin bpf

# vport-stt.ko needs openvswitch.ko's own headers for this kernel's version
# (scripts/build/ovs-source.sh says why when there are none); STT_OVS_SRC=DIR
# names them, STT_OVS_SRC=none builds stt.ko alone.
module:
	@test -d "$(KDIR)" || { echo "no kernel build tree at '$(KDIR)'; run scripts/setup.sh or set KDIR=" >&2; exit 1; }
	@ovs='$(STT_OVS_SRC)'; \
	[ -n "$$ovs" ] || ovs=$$(scripts/build/ovs-source.sh "$(KDIR)" "$(CURDIR)/.ovs-src"); \
	[ "$$ovs" != none ] || ovs=; \
	echo "flock $(CURDIR)/.build.lock $(MAKE) -C $(KDIR) M=$(CURDIR) STT_OVS_SRC=$$ovs modules"; \
	flock $(CURDIR)/.build.lock $(MAKE) -C $(KDIR) M=$(CURDIR) STT_OVS_SRC=$$ovs modules
	@# The selftests' own helpers (not in a DKMS or install copy).
	if [ -f selftests/helpers/Makefile ]; then \
		$(MAKE) -C selftests/helpers KDIR=$(KDIR); fi

plugin:
	$(MAKE) -C tools/iproute2

# tc BPF programs for external devices (clang's BPF target, libbpf-dev)
bpf:
	$(MAKE) -C tools/bpf

check:
	scripts/check/check.sh

check-debug:
	scripts/debug/check-debug.sh $(STT_CHECK_TESTS)

style:
	scripts/check/style.sh

sparse:
	scripts/check/sparse.sh "$(KDIR)"

demo:
	scripts/demo/demo.sh

demo-ovn:
	scripts/demo/demo-ovn.sh

# OVN_HOSTS_ARGS: scripts/demo/ovn-hosts.sh options, e.g. "--target deb13" or
# "--reps 5"; "scripts/demo/ovn-hosts.sh --help" lists them.
demo-ovn-hosts:
	scripts/setup.sh
	scripts/demo/ovn-hosts.sh --verbose $(OVN_HOSTS_ARGS)

bench:
	scripts/bench/bench.py $(BENCH_ARGS)

setup:
	scripts/setup.sh

install: module plugin
	install -d $(DESTDIR)$(MODDIR)
	install -m 644 $$(sed 's|.*/||; s|\.o$$|.ko|' modules.order) $(DESTDIR)$(MODDIR)/
	install -D -m 644 $(PLUGIN) $(DESTDIR)$(PLUGINDIR)/link_stt.so
	install -D -m 644 include/uapi/linux/stt.h $(DESTDIR)$(INCDIR)/stt.h
	$(DEPMOD) $(if $(DESTDIR),-b $(DESTDIR)) -a $(KERNELRELEASE)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(MODDIR)/,$(MODULES)) \
		$(DESTDIR)$(PLUGINDIR)/link_stt.so $(DESTDIR)$(INCDIR)/stt.h
	-rmdir $(DESTDIR)$(MODDIR) $(DESTDIR)$(PLUGINDIR) 2>/dev/null
	$(DEPMOD) $(if $(DESTDIR),-b $(DESTDIR)) -a $(KERNELRELEASE)

# Sources only (no build products), then add, build and install with DKMS.
# With DESTDIR= only the sources are copied.
dkms-install:
	install -d $(DKMS_SRC)/stt $(DKMS_SRC)/scripts/build
	cp Kbuild Makefile dkms.conf $(DKMS_SRC)/
	cp stt/*.c stt/*.h $(DKMS_SRC)/stt/
	cp -r include $(DKMS_SRC)/
	cp scripts/build/find-kernel.sh scripts/build/ovs-source.sh $(DKMS_SRC)/scripts/build/
	$(if $(DESTDIR),,dkms add stt/$(VERSION) && dkms build stt/$(VERSION) -k $(KERNELRELEASE) && dkms install stt/$(VERSION) -k $(KERNELRELEASE))

dkms-uninstall:
	$(if $(DESTDIR),,-dkms remove stt/$(VERSION) --all)
	rm -rf $(DKMS_SRC)

# With dpkg-buildpackage, debhelper and dh-dkms (scripts/build/deb.sh --help)
deb:
	scripts/build/deb.sh $(DEB_ARGS)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-[ ! -f selftests/helpers/Makefile ] || $(MAKE) -C selftests/helpers KDIR=$(KDIR) clean
	$(MAKE) -C tools/iproute2 clean
	$(MAKE) -C tools/bpf clean
