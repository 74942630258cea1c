# SPDX-License-Identifier: GPL-2.0
#
# STT tunnel driver: out-of-tree build, install and test entry points.
#
#   make                  build stt.ko and the iproute2 plugin
#   make check            set up, build (-Werror), style, sparse, selftests in QEMU
#   make demo             two hosts, an STT tunnel, traffic, a summary
#   make install          module + plugin + uapi header (DESTDIR= honoured)
#   make dkms-install     register the sources with DKMS
#
# KERNELRELEASE defaults to the newest Debian kernel with both an image and a
# build tree installed (never the host's uname -r); KDIR= overrides the tree.

KERNELRELEASE ?= $(shell $(CURDIR)/scripts/find-kernel)
KDIR ?= /lib/modules/$(KERNELRELEASE)/build
PREFIX ?= /usr
DEPMOD ?= depmod
MODDIR := /lib/modules/$(KERNELRELEASE)/updates
IP_LIB_DIR ?= $(PREFIX)/lib/x86_64-linux-gnu/ip
INCDIR ?= $(PREFIX)/include/linux
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

MODULES := stt.ko
PLUGIN := tools/iproute2/link_stt.so

.PHONY: all module plugin check style sparse demo bench setup install \
	uninstall dkms-install dkms-uninstall clean

all: module plugin

module:
	@test -d "$(KDIR)" || { echo "no kernel build tree at '$(KDIR)'; run scripts/setup or set KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

plugin:
	$(MAKE) -C tools/iproute2

check:
	scripts/check

style:
	scripts/style

sparse:
	scripts/sparse "$(KDIR)"

demo:
	scripts/demo

bench:
	scripts/bench $(BENCH_ARGS)

setup:
	scripts/setup

install: all
	install -D -m 644 stt.ko $(DESTDIR)$(MODDIR)/stt.ko
	install -D -m 644 $(PLUGIN) $(DESTDIR)$(IP_LIB_DIR)/link_stt.so
	install -D -m 644 include/uapi/linux/stt.h $(DESTDIR)$(INCDIR)/stt.h
	$(DEPMOD) $(if $(DESTDIR),-b $(DESTDIR)) -a $(KERNELRELEASE)

uninstall:
	rm -f $(DESTDIR)$(MODDIR)/stt.ko $(DESTDIR)$(IP_LIB_DIR)/link_stt.so \
		$(DESTDIR)$(INCDIR)/stt.h
	-rmdir $(DESTDIR)$(IP_LIB_DIR) 2>/dev/null
	$(DEPMOD) $(if $(DESTDIR),-b $(DESTDIR)) -a $(KERNELRELEASE)

dkms-install:
	install -d $(DESTDIR)/usr/src/stt-$(VERSION)
	cp -r Kbuild Makefile dkms.conf stt include scripts $(DESTDIR)/usr/src/stt-$(VERSION)/
	$(if $(DESTDIR),,dkms add stt/$(VERSION) && dkms build stt/$(VERSION) -k $(KERNELRELEASE) && dkms install stt/$(VERSION) -k $(KERNELRELEASE))

dkms-uninstall:
	-dkms remove stt/$(VERSION) --all
	rm -rf $(DESTDIR)/usr/src/stt-$(VERSION)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools/iproute2 clean
