/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private header of the STT driver: shared structs, per-netns state and the
 * prototypes that cross files (device/netlink, transmit, receive hook,
 * reassembly).
 */
#ifndef _STT_PRIVATE_H
#define _STT_PRIVATE_H

#include <linux/netdevice.h>
#include <linux/percpu_counter.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>
#include <net/gro_cells.h>
#include <net/ip_tunnels.h>
#include <net/netns/generic.h>
#include <net/stt_wire.h>
#include <uapi/linux/stt.h>

#include "compat.h"

#define STT_DRV_NAME		"stt"
/* STT_DRV_VERSION comes from Kbuild (dkms.conf's PACKAGE_VERSION). */

#define STT_KEY_HASH_BITS	8
#define STT_KEY_HASH_SIZE	BIT(STT_KEY_HASH_BITS)

/* Drops and events counted per network namespace: most happen before the
 * receiving device is known (checksum, header, reassembly).  Keep in sync
 * with stt_ns_stat_names[] in device.c.
 */
enum stt_ns_stat {
	STT_NS_RX_SEGS,		/* STT segments taken from TCP */
	STT_NS_DROP_TRUNCATED,	/* shorter than the TCP header */
	STT_NS_DROP_CSUM,	/* outer TCP checksum wrong */
	STT_NS_DROP_TCP_FLAGS,	/* SYN/RST/FIN/URG, no ACK, or TCP options */
	STT_NS_DROP_EMPTY,	/* no payload */
	STT_NS_DROP_BAD_LEN,	/* frame length too small for a frame */
	STT_NS_DROP_BAD_OFFSET,	/* segment ends past the frame length */
	STT_NS_DROP_LEN_MISMATCH, /* segments disagree on the frame length */
	STT_NS_DROP_OVERLAP,	/* segment overlaps another one */
	STT_NS_DROP_DUP,	/* segment already received */
	STT_NS_DROP_REASM_TIMEOUT, /* frames expired incomplete */
	STT_NS_DROP_REASM_MEM,	/* reassembly over its memory bound */
	STT_NS_DROP_VERSION,	/* STT version not 0 */
	STT_NS_DROP_FLAGS,	/* reserved flag bits set */
	STT_NS_DROP_OFFLOAD,	/* inconsistent L4 offset / MSS / flags */
	STT_NS_DROP_VLAN,	/* VLAN field set without V */
	STT_NS_DROP_NO_DEV,	/* no device for (key, remote), or device down */
	STT_NS_DROP_OUTER_FRAG,	/* outer IP fragment, or reassembled one */
	STT_NS_DROP_OUTER_EXTHDR, /* outer IPv6 extension header */
	STT_NS_DROP_ECN,	/* CE outside, not-ECT inside (RFC 6040) */
	STT_NS_DROP_NOMEM,	/* allocation failure */
	STT_NS_DROP_POLICY,	/* refused by the IPsec input policy */
	STT_NS_RX_OUTER_REASM,	/* segments IPv4 reassembled (DF unset) */
	STT_NS_PMTU_LEARNED,	/* ICMP "too big" for our segments, applied */
	STT_NS_PMTU_IGNORED,	/* ... claiming our port, not applied */
	STT_NS_REASM_FRAMES,	/* frames completed by reassembly */
	STT_NS_REASM_SEGS,	/* segments those frames were made of */
	STT_NS_STAT_MAX
};

struct stt_ns_stats {
	u64_stats_t		cnt[STT_NS_STAT_MAX];
	struct u64_stats_sync	syncp;
};

/* Per-device events, shown by ethtool -S beside the namespace counters. */
enum stt_dev_stat {
	STT_DEV_RX_WHOLE,	/* frames that arrived whole (GRO, TSO peer) */
	STT_DEV_RX_REASM,	/* frames reassembled from segments */
	STT_DEV_RX_REASM_SEGS,	/* segments those frames were made of */
	STT_DEV_RX_GSO,		/* frames delivered as inner GSO packets */
	STT_DEV_RX_FRAGLIST_FIXUP, /* frag_list reshaped to fit inner MSS */
	STT_DEV_RX_LINEARIZED,	/* ... or, failing that, linearized */
	STT_DEV_RX_MSS_CLAMPED,	/* inner MSS below the floor, raised */
	STT_DEV_TX_FRAMES,	/* STT frames sent */
	STT_DEV_TX_GSO,		/* ... of which carried an inner GSO packet */
	STT_DEV_TX_SW_SEGMENTED, /* inner packets segmented in software */
	STT_DEV_TX_CSUM_HELP,	/* inner checksums completed in software */
	STT_DEV_TX_FRAGLIST_UNFIT, /* frag_list resolved by the core first */
	STT_DEV_TX_LOOP,	/* route pointed back at the device */
	STT_DEV_TX_NO_ROUTE,	/* no route to the remote */
	STT_DEV_TX_NO_MD,	/* external mode without tunnel metadata */
	STT_DEV_TX_TOO_BIG,	/* frame would not fit in 65535 bytes */
	STT_DEV_STAT_MAX
};

struct stt_dev_stats {
	u64_stats_t		cnt[STT_DEV_STAT_MAX];
	struct u64_stats_sync	syncp;
};

/* Configuration of a device.  Replaced as a whole (RCU) on changelink so
 * the datapath never sees half of an update.  The route cache belongs to
 * the configuration, not to the device: a transmit that read one
 * configuration can only find routes looked up for that configuration's
 * remote, even while a change is being published.  dst_cache and rcu are
 * only valid in the published copy (device.c); netlink's working copies
 * leave them alone.
 */
struct stt_config {
	struct ip_tunnel_key	key;	/* remote/local, id, tos, ttl, tp_dst */
	bool			ipv6;	/* underlay family of remote/local */
	bool			collect_md;	/* external mode */
	bool			ttl_inherit;
	enum ifla_stt_df	df;
	int			link;	/* underlay ifindex, 0 = any */
	struct dst_cache	dst_cache;	/* point-to-point route cache */
	struct rcu_head		rcu;
};

struct stt_port;

struct stt_dev {
	struct hlist_node	hnode;	/* in stt_port key hash (RCU) */
	struct list_head	next;	/* in stt_net dev_list (RTNL) */
	struct net_device	*dev;
	struct net		*net;	/* namespace of the underlay (I/O) */
	struct stt_port		*port;	/* receive port, set while up or down */
	struct stt_config __rcu	*cfg;
	struct gro_cells	gro_cells;
	struct stt_dev_stats __percpu *stats;
};

/* A destination port that carries STT in a namespace.  Created with the
 * first device on that port and kept until the namespace goes away (or the
 * module is unloaded): the port stays silent (no RST, no SYN-ACK) even
 * after its last device is deleted.
 */
struct stt_port {
	struct list_head	list;	/* in stt_net port_list (RCU) */
	__be16			port;
	struct socket		*sock4;	/* bound, never listening: reserves */
	struct socket		*sock6;	/* the port against local users */
	struct hlist_head	keys[STT_KEY_HASH_SIZE]; /* point-to-point */
	struct stt_dev __rcu	*md_dev;	/* the external device, if any */
	struct rcu_head		rcu;
};

struct stt_reasm_bucket;

/* Reassembly state of a namespace.  Nothing in it is written by every
 * segment but the bucket it hashes to and this CPU's share of @mem, so
 * receive queues on different CPUs do not contend (reasm.c).
 */
struct stt_reasm {
	struct stt_reasm_bucket	*buckets;	/* STT_REASM_HASH_SIZE */
	u32			hash_rnd;	/* jhash seed, random */
	struct percpu_counter	mem;	/* truesize held, bytes */
	unsigned int		evict_next;	/* bucket eviction looks at */
	unsigned int		chain_max;	/* longest hash chain walked */
	struct delayed_work	expire_work;
};

struct stt_net {
	struct net		*net;
	bool			active;	/* has a port: hooks, stats, reasm */
	struct list_head	dev_list;	/* devices doing I/O here */
	struct list_head	port_list;	/* struct stt_port (RCU) */
	struct stt_ns_stats __percpu *stats;	/* from stt_net_activate() */
	struct stt_reasm	reasm;		/* likewise */
};

extern unsigned int stt_net_id;

/* main.c */
int stt_net_activate(struct stt_net *sn);
void stt_net_deactivate_unused(struct stt_net *sn);

extern unsigned int stt_reasm_max_mem;
extern unsigned int stt_reasm_timeout_ms;

static inline struct stt_net *stt_pernet(const struct net *net)
{
	return net_generic(net, stt_net_id);
}

/* The per-CPU statistics are written in softirq context (receive,
 * transmit) and elsewhere only with bottom halves or interrupts off: where
 * 64-bit counters are not atomic (32-bit: a seqcount and plain adds), a
 * softirq on the same CPU must not interrupt an update.  Lockdep kernels
 * check it on every architecture.
 */
static inline void stt_stats_assert_bh(void)
{
	lockdep_assert_once(in_softirq() || irqs_disabled());
}

static inline void stt_ns_inc(struct stt_net *sn, enum stt_ns_stat s)
{
	struct stt_ns_stats *st = get_cpu_ptr(sn->stats);

	stt_stats_assert_bh();
	u64_stats_update_begin(&st->syncp);
	u64_stats_inc(&st->cnt[s]);
	u64_stats_update_end(&st->syncp);
	put_cpu_ptr(sn->stats);
}

static inline void stt_ns_add(struct stt_net *sn, enum stt_ns_stat s, u64 v)
{
	struct stt_ns_stats *st = get_cpu_ptr(sn->stats);

	stt_stats_assert_bh();
	u64_stats_update_begin(&st->syncp);
	u64_stats_add(&st->cnt[s], v);
	u64_stats_update_end(&st->syncp);
	put_cpu_ptr(sn->stats);
}

static inline void stt_dev_add(struct stt_dev *stt, enum stt_dev_stat s,
			       u64 v)
{
	struct stt_dev_stats *st = get_cpu_ptr(stt->stats);

	stt_stats_assert_bh();
	u64_stats_update_begin(&st->syncp);
	u64_stats_add(&st->cnt[s], v);
	u64_stats_update_end(&st->syncp);
	put_cpu_ptr(stt->stats);
}

static inline void stt_dev_inc(struct stt_dev *stt, enum stt_dev_stat s)
{
	stt_dev_add(stt, s, 1);
}

/* device.c */
extern struct rtnl_link_ops stt_link_ops;
void stt_setup(struct net_device *dev);
int stt_configure(struct net *net, struct net_device *dev,
		  const struct stt_config *cfg, struct netlink_ext_ack *extack);
int stt_reconfigure(struct net_device *dev, const struct stt_config *cfg,
		    struct netlink_ext_ack *extack);
void stt_dellink(struct net_device *dev, struct list_head *head);

/* port.c */
struct stt_port *stt_port_get(struct stt_net *sn, __be16 port, bool *created);
void stt_port_put_new(struct stt_net *sn, struct stt_port *sp);
void stt_ports_free(struct stt_net *sn);
int stt_port_check_clash(struct stt_port *sp, struct stt_dev *self,
			 const struct stt_config *cfg,
			 struct netlink_ext_ack *extack);
void stt_port_link(struct stt_dev *stt, struct stt_port *sp,
		   const struct stt_config *cfg);
void stt_port_unlink(struct stt_dev *stt, const struct stt_config *cfg);
struct stt_port *stt_port_lookup(struct stt_net *sn, __be16 port);
struct stt_dev *stt_port_find_dev(struct stt_port *sp, __be64 key, bool ipv6,
				  const void *remote);
unsigned int stt_port_walk_senders(struct stt_port *sp, bool ipv6,
				   const void *addr,
				   void (*fn)(const struct stt_config *cfg,
					      void *arg),
				   void *arg);

/* netlink.c */
int stt_netlink_init(void);
void stt_netlink_exit(void);

/* xmit.c */
void stt_xmit_init(void);
netdev_tx_t stt_xmit(struct sk_buff *skb, struct net_device *dev);
netdev_features_t stt_features_check(struct sk_buff *skb,
				     struct net_device *dev,
				     netdev_features_t features);
int stt_fill_metadata_dst(struct net_device *dev, struct sk_buff *skb);

/* recv.c */
int stt_hooks_register(struct net *net);
void stt_hooks_unregister(struct net *net);
void stt_rcv_frame(struct stt_net *sn, struct sk_buff *skb,
		   unsigned int nsegs);

/* icmp.c */
void stt_icmp4_rcv(struct stt_net *sn, struct sk_buff *skb);
void stt_icmp6_rcv(struct stt_net *sn, struct sk_buff *skb, unsigned int off);

/* reasm.c: segments arrive with skb->data at the STT payload and the
 * outer network header set; the control block carries what was parsed.
 */
struct stt_seg_cb {
	u16	frame_len;	/* from SEQ high half */
	u16	offset;		/* from SEQ low half */
	__be32	frame_id;	/* ACK number */
	__be16	sport, dport;
	u8	ecn_ce;		/* outer CE seen (sticky over segments) */
};

#define STT_SEG_CB(skb)	((struct stt_seg_cb *)(skb)->cb)

int stt_reasm_init(struct stt_net *sn);
void stt_reasm_exit(struct stt_net *sn);
s64 stt_reasm_mem(struct stt_net *sn);
unsigned int stt_reasm_pending(struct stt_net *sn);
struct sk_buff *stt_reasm_add(struct stt_net *sn, struct sk_buff *skb,
			      unsigned int *nsegs);
int stt_fraglist_fit(struct sk_buff *skb);

#endif /* _STT_PRIVATE_H */
