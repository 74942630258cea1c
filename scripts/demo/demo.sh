#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: install what is needed, build, boot a VM, bring up an STT
# tunnel between two hosts (network namespaces) and show traffic over it,
# side by side with VXLAN.

set -e
cd "$(dirname "$0")/../.."

echo "demo: checking build dependencies (scripts/setup.sh)"
scripts/setup.sh
echo "demo: building stt.ko and the iproute2 plugin"
make -s module plugin >/dev/null
exec scripts/vm/run.sh --modules stt.ko --timeout 600 -- scripts/demo/demo-guest.sh
