#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the newest installed Debian kernel release that has both an image in
# /boot and a build tree (headers) in /lib/modules: the module's target.
# The host's own "uname -r" is deliberately not used: it is not the target.
for img in /boot/vmlinuz-*; do
	r=${img#/boot/vmlinuz-}
	[ -f "$img" ] && [ -d "/lib/modules/$r/build" ] && echo "$r"
done | sort -V | tail -n 1
