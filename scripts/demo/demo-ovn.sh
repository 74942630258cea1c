#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo-ovn: install what is needed, build, boot a VM and run the
# three-chassis OVN network over STT of selftests/ovn.sh, showing the
# northbound and southbound views, one chassis's bridges and tunnels, and
# the checks and figures (convergence time, STT/Geneve throughput).

set -e
cd "$(dirname "$0")/../.."

echo "demo-ovn: checking dependencies (scripts/setup.sh)"
scripts/setup.sh
echo "demo-ovn: building stt.ko, vport-stt.ko and the iproute2 plugin"
make -s module plugin >/dev/null
exec scripts/vm/run.sh --timeout 1200 --env OVN_VERBOSE=1 -- selftests/ovn.sh
