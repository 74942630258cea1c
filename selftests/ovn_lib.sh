#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ovn_lib.sh: the logical network selftests/ovn.sh (chassis in one kernel)
# and scripts/demo/ovn-hosts-guest.sh (chassis on separate guests) build,
# so that both test the same one. Sourced after lib.sh, with NCH (chassis)
# set and nbctl defined (ovn-nbctl against the caller's NB database)
# before its functions run.
#
# NCH chassis and 2 * NCH VMs: vmN runs on chassis ((N - 1) % NCH) + 1;
# vm1..vmNCH are on logical switch ls1 (10.1.0.0/24), the others on ls2
# (10.2.0.0/24); router lr1 joins the two (.254 on each). vmN has address
# 10.S.0.N and MAC 02:00:00:00:0S:NN.

ch_of() { echo $(( ($1 - 1) % NCH + 1 )); }
sw_of() { if (($1 <= NCH)); then echo 1; else echo 2; fi; }
vm_ip() { echo "10.$(sw_of "$1").0.$1"; }
vm_mac() { printf '02:00:00:00:%02x:%02x' "$(sw_of "$1")" "$1"; }
vm_gw() { echo "10.$(sw_of "$1").0.254"; }
vms_of() { echo "$1" $(($1 + NCH)); }	# the VMs of chassis $1

# The switches, the router and a logical port per VM (not yet bound: the
# VMs' interfaces are added to br-int afterwards).
ovn_logical_up() {
	local s n

	nbctl lr-add lr1 || return 1
	for s in 1 2; do
		nbctl ls-add "ls$s" \
		-- lrp-add lr1 "lr1-ls$s" "02:00:00:00:0$s:fe" "10.$s.0.254/24" \
		-- lsp-add "ls$s" "ls$s-lr1" \
		-- lsp-set-type "ls$s-lr1" router \
		-- lsp-set-addresses "ls$s-lr1" router \
		-- lsp-set-options "ls$s-lr1" "router-port=lr1-ls$s" || return 1
	done
	for ((n = 1; n <= 2 * NCH; n++)); do
		nbctl lsp-add "ls$(sw_of "$n")" "vm$n" \
		-- lsp-set-addresses "vm$n" "$(vm_mac "$n") $(vm_ip "$n")" ||
			return 1
	done
}
