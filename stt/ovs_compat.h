/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parts of Open vSwitch's kernel datapath that vport-stt uses.
 *
 * net/openvswitch/vport.h and datapath.h are private to openvswitch.ko and
 * not shipped in linux-headers.  Their layouts change between kernels
 * (struct vport grew upcall_stats in 6.2) and with the configuration
 * (the netdev refcount tracker), so vport-stt is only ever compiled
 * against openvswitch.ko's own headers of the kernel's exact version:
 * scripts/build/ovs-source.sh finds them (a full source tree, or Debian's
 * linux-source-X.Y of the same version) and Kbuild puts their directory on
 * the include path.  Without them vport-stt.ko is not built at all.
 */
#ifndef _STT_OVS_COMPAT_H
#define _STT_OVS_COMPAT_H

#include <linux/netdevice.h>
#include <linux/openvswitch.h>

#include "datapath.h"
#include "vport.h"
#include "vport-netdev.h"

/* OVS_VPORT_TYPE_STT of the out-of-tree datapath; Open vSwitch userspace
 * still sends it, openvswitch.ko loads "vport-type-106" on demand.
 */
#define STT_OVS_VPORT_TYPE	106

#endif /* _STT_OVS_COMPAT_H */
