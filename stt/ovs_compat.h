/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parts of Open vSwitch's kernel datapath that vport-stt uses.
 *
 * net/openvswitch/vport.h and datapath.h are private to openvswitch.ko and
 * not shipped in linux-headers, so the layouts are declared here from the
 * documented 6.1 (x86-64) offsets, each one pinned by a static_assert.  A
 * different kernel fails the build instead of corrupting memory.
 * scripts/ovs-layout-check compares these declarations with the real
 * headers of a kernel source tree, when one is at hand.  A kernel built
 * from its full source (make check-debug's) uses the real headers instead
 * (STT_OVS_LAYOUT_FROM_SOURCE, set by Kbuild).
 *
 * Only the fields vport-stt touches carry meaning; the others keep the
 * offsets right.
 */
#ifndef _STT_OVS_COMPAT_H
#define _STT_OVS_COMPAT_H

#include <linux/build_bug.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/openvswitch.h>
#include <linux/rcupdate.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <net/net_namespace.h>

/* Built against a full kernel source tree (Kbuild adds its
 * net/openvswitch to the include path): openvswitch.ko's own headers
 * declare everything, whatever the configuration.
 */
#ifdef STT_OVS_LAYOUT_FROM_SOURCE
#include "datapath.h"
#include "vport.h"
#include "vport-netdev.h"
#define STT_OVS_LAYOUT_REAL
#endif

/* OVS_VPORT_TYPE_STT of the out-of-tree datapath; Open vSwitch userspace
 * still sends it, openvswitch.ko loads "vport-type-106" on demand.
 */
#define STT_OVS_VPORT_TYPE	106

struct datapath;
struct vport;
struct vport_parms;

/* When scripts/ovs-layout-check compiles this header after the real
 * vport.h, only the prototypes below are seen: the compiler then proves
 * that they match openvswitch.ko's own declarations.
 */
#ifndef STT_OVS_LAYOUT_REAL

struct vport_ops {
	enum ovs_vport_type	type;
	struct vport		*(*create)(const struct vport_parms *parms);
	void			(*destroy)(struct vport *vport);
	int			(*set_options)(struct vport *vport,
					       struct nlattr *options);
	int			(*get_options)(const struct vport *vport,
					       struct sk_buff *skb);
	int			(*send)(struct sk_buff *skb);
	struct module		*owner;	/* set before registering */
	struct list_head	list;	/* owned by openvswitch.ko */
};

struct vport_parms {
	const char		*name;	/* name of the port and its netdev */
	enum ovs_vport_type	type;
	int			desired_ifindex;
	struct nlattr		*options;	/* OVS_VPORT_ATTR_OPTIONS or NULL */
	struct datapath		*dp;
	u16			port_no;
	struct nlattr		*upcall_portids;
};

struct vport {
	struct net_device	*dev;	/* set by ovs_netdev_link() */
	netdevice_tracker	dev_tracker;
	struct datapath		*dp;
	void __rcu		*upcall_portids;
	u16			port_no;
	struct hlist_node	hash_node;
	struct hlist_node	dp_hash_node;
	const struct vport_ops	*ops;
	struct list_head	detach_list;
	struct rcu_head		rcu;
};

/* Private area of ovs_vport_alloc(priv_size, ...), as vport_priv() finds
 * it.
 */
#define STT_OVS_VPORT_ALIGN	8

static inline void *stt_ovs_vport_priv(const struct vport *vport)
{
	return (u8 *)vport + ALIGN(sizeof(struct vport), STT_OVS_VPORT_ALIGN);
}

/* struct datapath: only the namespace (ovs_dp_get_net() is inline). */
#define STT_OVS_DP_NET_OFFSET	96

struct stt_ovs_datapath {
	u8			opaque[STT_OVS_DP_NET_OFFSET];
	possible_net_t		net;
};

static inline struct net *stt_ovs_dp_net(const struct datapath *dp)
{
	return read_pnet(&((const struct stt_ovs_datapath *)dp)->net);
}

#if defined(CONFIG_X86_64) && !IS_ENABLED(CONFIG_NET_DEV_REFCNT_TRACKER)
static_assert(sizeof(struct vport_ops) == 72);
static_assert(offsetof(struct vport_ops, type) == 0);
static_assert(offsetof(struct vport_ops, create) == 8);
static_assert(offsetof(struct vport_ops, destroy) == 16);
static_assert(offsetof(struct vport_ops, set_options) == 24);
static_assert(offsetof(struct vport_ops, get_options) == 32);
static_assert(offsetof(struct vport_ops, send) == 40);
static_assert(offsetof(struct vport_ops, owner) == 48);
static_assert(offsetof(struct vport_ops, list) == 56);

static_assert(sizeof(struct vport_parms) == 48);
static_assert(offsetof(struct vport_parms, name) == 0);
static_assert(offsetof(struct vport_parms, type) == 8);
static_assert(offsetof(struct vport_parms, desired_ifindex) == 12);
static_assert(offsetof(struct vport_parms, options) == 16);
static_assert(offsetof(struct vport_parms, dp) == 24);
static_assert(offsetof(struct vport_parms, port_no) == 32);
static_assert(offsetof(struct vport_parms, upcall_portids) == 40);

static_assert(sizeof(struct vport) == 104);
static_assert(offsetof(struct vport, dev) == 0);
static_assert(offsetof(struct vport, dp) == 8);
static_assert(offsetof(struct vport, ops) == 64);
static_assert(offsetof(struct vport, rcu) == 88);

static_assert(offsetof(struct stt_ovs_datapath, net) == 96);
static_assert(sizeof(possible_net_t) == sizeof(void *));
#else
#error "Open vSwitch layouts are only known for x86-64 without NET_DEV_REFCNT_TRACKER"
#endif

#else /* STT_OVS_LAYOUT_REAL */

static inline void *stt_ovs_vport_priv(const struct vport *vport)
{
	return vport_priv(vport);
}

static inline struct net *stt_ovs_dp_net(const struct datapath *dp)
{
	return ovs_dp_get_net(dp);
}

#endif /* STT_OVS_LAYOUT_REAL */

/* Exported (GPL) by openvswitch.ko. */
int __ovs_vport_ops_register(struct vport_ops *ops);
void ovs_vport_ops_unregister(struct vport_ops *ops);
struct vport *ovs_vport_alloc(int priv_size, const struct vport_ops *ops,
			      const struct vport_parms *parms);
void ovs_vport_free(struct vport *vport);
struct vport *ovs_netdev_link(struct vport *vport, const char *name);
void ovs_netdev_tunnel_destroy(struct vport *vport);

#endif /* _STT_OVS_COMPAT_H */
