/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences between the kernels the driver builds for, in one
 * place.  Each is decided from the kernel's own headers: a macro test here,
 * or, where C cannot tell (a new header, a changed prototype or a new
 * struct), a look at the header by Kbuild that defines STT_HAVE_* (see the
 * "Compatibility probes" block of Kbuild).  No kernel version is tested.
 *
 * The rest of the driver calls the stt_* helpers below and never the
 * changed interfaces themselves.
 */
#ifndef _STT_COMPAT_H
#define _STT_COMPAT_H

#include <linux/netdevice.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/dst_metadata.h>
#include <net/flow.h>
#include <net/ip_tunnels.h>
#include <net/rtnetlink.h>

/* 6.11: skb_frag_unref() moved to <linux/skbuff_ref.h> (Kbuild probe:
 * sparse and checkpatch do not know __has_include).
 */
#ifdef STT_HAVE_SKBUFF_REF_H
#include <linux/skbuff_ref.h>
#endif

/* 7.0: kzalloc_obj(VAR_OR_TYPE, GFP) allocates one object of its type
 * (and 7.x's checkpatch asks for it).
 */
#ifndef kzalloc_obj
#define kzalloc_obj(P, GFP)	kzalloc(sizeof(P), GFP)
#endif

/* 6.12: NETIF_F_LLTX became the dev->lltx flag. */
static inline void stt_set_lltx(struct net_device *dev)
{
#ifdef NETIF_F_LLTX
	dev->features |= NETIF_F_LLTX;
#else
	dev->lltx = true;
#endif
}

/* 6.10: tunnel flags became a bitmap (IP_TUNNEL_DECLARE_FLAGS, *_BIT). */
#ifdef IP_TUNNEL_DECLARE_FLAGS
static inline bool stt_tun_dont_fragment(const struct ip_tunnel_key *key)
{
	return test_bit(IP_TUNNEL_DONT_FRAGMENT_BIT, key->tun_flags);
}

static inline struct metadata_dst *
stt_tun_dst4(__be32 saddr, __be32 daddr, u8 tos, u8 ttl, __be16 tp_dst,
	     __be64 id)
{
	IP_TUNNEL_DECLARE_FLAGS(flags) = { };

	__set_bit(IP_TUNNEL_KEY_BIT, flags);
	return __ip_tun_set_dst(saddr, daddr, tos, ttl, tp_dst, flags, id, 0);
}

static inline struct metadata_dst *
stt_tun_dst6(const struct in6_addr *saddr, const struct in6_addr *daddr,
	     u8 tos, u8 ttl, __be16 tp_dst, __be32 label, __be64 id)
{
	IP_TUNNEL_DECLARE_FLAGS(flags) = { };

	__set_bit(IP_TUNNEL_KEY_BIT, flags);
	return __ipv6_tun_set_dst(saddr, daddr, tos, ttl, tp_dst, label,
				  flags, id, 0);
}
#else
static inline bool stt_tun_dont_fragment(const struct ip_tunnel_key *key)
{
	return key->tun_flags & TUNNEL_DONT_FRAGMENT;
}

static inline struct metadata_dst *
stt_tun_dst4(__be32 saddr, __be32 daddr, u8 tos, u8 ttl, __be16 tp_dst,
	     __be64 id)
{
	return __ip_tun_set_dst(saddr, daddr, tos, ttl, tp_dst, TUNNEL_KEY,
				id, 0);
}

static inline struct metadata_dst *
stt_tun_dst6(const struct in6_addr *saddr, const struct in6_addr *daddr,
	     u8 tos, u8 ttl, __be16 tp_dst, __be32 label, __be64 id)
{
	return __ipv6_tun_set_dst(saddr, daddr, tos, ttl, tp_dst, label,
				  TUNNEL_KEY, id, 0);
}
#endif

/* 7.0: flowi4_tos gave way to flowi4_dscp (the ECN bits are not part of
 * a route lookup any more).
 */
static inline void stt_fl4_set_tos(struct flowi4 *fl4, u8 tos)
{
#ifdef flowi4_dscp
	fl4->flowi4_dscp = inet_dsfield_to_dscp(tos);
#else
	fl4->flowi4_tos = RT_TOS(tos);
#endif
}

/* 6.19: kernel_bind() takes a struct sockaddr_unsized (Kbuild probe). */
static inline int stt_kernel_bind(struct socket *sock,
				  struct sockaddr_storage *ss, int len)
{
#ifdef STT_HAVE_SOCKADDR_UNSIZED
	return kernel_bind(sock, (struct sockaddr_unsized *)ss, len);
#else
	return kernel_bind(sock, (struct sockaddr *)ss, len);
#endif
}

/* 6.15: rtnl_link_ops.newlink takes struct rtnl_newlink_params (Kbuild
 * probe).  STT_NEWLINK_ARGS declares the arguments of our newlink;
 * stt_newlink_args() gives the namespace and attributes from them.
 */
#ifdef STT_HAVE_RTNL_NEWLINK_PARAMS
#define STT_NEWLINK_ARGS \
	struct net_device *dev, struct rtnl_newlink_params *params, \
	struct netlink_ext_ack *extack
#define stt_newlink_net()	rtnl_newlink_link_net(params)
#define stt_newlink_tb()	(params->tb)
#define stt_newlink_data()	(params->data)
#else
#define STT_NEWLINK_ARGS \
	struct net *src_net, struct net_device *dev, struct nlattr *tb[], \
	struct nlattr *data[], struct netlink_ext_ack *extack
#define stt_newlink_net()	(src_net)
#define stt_newlink_tb()	(tb)
#define stt_newlink_data()	(data)
#endif

#endif /* _STT_COMPAT_H */
