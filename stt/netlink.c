// SPDX-License-Identifier: GPL-2.0
/*
 * rtnetlink interface of the STT device: policy, validation, create,
 * change, delete and dump of the IFLA_STT_* attributes.
 */

#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <net/ipv6.h>
#include <net/rtnetlink.h>

#include "stt_private.h"

static const struct nla_policy stt_policy[IFLA_STT_MAX + 1] = {
	[IFLA_STT_UNSPEC]	= { .strict_start_type = IFLA_STT_ID },
	[IFLA_STT_ID]		= { .type = NLA_U64 },
	[IFLA_STT_REMOTE]	= NLA_POLICY_EXACT_LEN(sizeof(struct in_addr)),
	[IFLA_STT_REMOTE6]	= NLA_POLICY_EXACT_LEN(sizeof(struct in6_addr)),
	[IFLA_STT_LOCAL]	= NLA_POLICY_EXACT_LEN(sizeof(struct in_addr)),
	[IFLA_STT_LOCAL6]	= NLA_POLICY_EXACT_LEN(sizeof(struct in6_addr)),
	[IFLA_STT_PORT]		= { .type = NLA_BE16 },
	[IFLA_STT_TTL]		= { .type = NLA_U8 },
	[IFLA_STT_TTL_INHERIT]	= NLA_POLICY_MAX(NLA_U8, 1),
	[IFLA_STT_TOS]		= { .type = NLA_U8 },
	[IFLA_STT_DF]		= NLA_POLICY_MAX(NLA_U8, STT_DF_MAX),
	[IFLA_STT_COLLECT_METADATA] = { .type = NLA_FLAG },
	[IFLA_STT_LINK]		= { .type = NLA_U32 },
	[IFLA_STT_PAD]		= { .type = NLA_REJECT },
};

/* Attributes that make no sense in external mode: the packet's metadata
 * provides them.
 */
static const int stt_p2p_only[] = {
	IFLA_STT_ID, IFLA_STT_REMOTE, IFLA_STT_REMOTE6, IFLA_STT_LOCAL,
	IFLA_STT_LOCAL6, IFLA_STT_TTL, IFLA_STT_TTL_INHERIT, IFLA_STT_TOS,
	IFLA_STT_DF,
};

static int stt_validate(struct nlattr *tb[], struct nlattr *data[],
			struct netlink_ext_ack *extack)
{
	unsigned int i;

	if (tb[IFLA_ADDRESS]) {
		if (nla_len(tb[IFLA_ADDRESS]) != ETH_ALEN) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_ADDRESS],
					    "Provided link layer address is not Ethernet");
			return -EINVAL;
		}
		if (!is_valid_ether_addr(nla_data(tb[IFLA_ADDRESS]))) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_ADDRESS],
					    "Provided Ethernet address is not unicast");
			return -EADDRNOTAVAIL;
		}
	}
	if (tb[IFLA_MTU]) {
		u32 mtu = nla_get_u32(tb[IFLA_MTU]);

		if (mtu < ETH_MIN_MTU || mtu > STT_MAX_MTU) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_MTU],
					    "MTU must be between 68 and 65463");
			return -EINVAL;
		}
	}
	if (!data)
		return 0;

	if (data[IFLA_STT_REMOTE] && data[IFLA_STT_REMOTE6]) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_REMOTE6],
				    "Only one of remote and remote6 may be given");
		return -EINVAL;
	}
	if (data[IFLA_STT_LOCAL] && data[IFLA_STT_LOCAL6]) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_LOCAL6],
				    "Only one of local and local6 may be given");
		return -EINVAL;
	}
	if ((data[IFLA_STT_REMOTE] && data[IFLA_STT_LOCAL6]) ||
	    (data[IFLA_STT_REMOTE6] && data[IFLA_STT_LOCAL])) {
		NL_SET_ERR_MSG(extack,
			       "Local and remote address must be of the same family");
		return -EINVAL;
	}
	if (data[IFLA_STT_REMOTE]) {
		__be32 a = nla_get_in_addr(data[IFLA_STT_REMOTE]);

		if (ipv4_is_multicast(a) || ipv4_is_zeronet(a) ||
		    ipv4_is_lbcast(a)) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_REMOTE],
					    "Remote must be a unicast IPv4 address");
			return -EINVAL;
		}
	}
	if (data[IFLA_STT_REMOTE6]) {
		struct in6_addr a = nla_get_in6_addr(data[IFLA_STT_REMOTE6]);
		int type = ipv6_addr_type(&a);

		if (!IS_ENABLED(CONFIG_IPV6)) {
			NL_SET_ERR_MSG(extack, "IPv6 support not enabled");
			return -EPFNOSUPPORT;
		}
		if (type == IPV6_ADDR_ANY || (type & IPV6_ADDR_MULTICAST)) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_REMOTE6],
					    "Remote must be a unicast IPv6 address");
			return -EINVAL;
		}
		/* Sent by IPv4, answered by IPv4: never an IPv6 frame. */
		if (type & IPV6_ADDR_MAPPED) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_REMOTE6],
					    "Remote must not be an IPv4-mapped IPv6 address: give the IPv4 address");
			return -EINVAL;
		}
	}
	if (data[IFLA_STT_LOCAL6]) {
		struct in6_addr a = nla_get_in6_addr(data[IFLA_STT_LOCAL6]);

		if (!IS_ENABLED(CONFIG_IPV6)) {
			NL_SET_ERR_MSG(extack, "IPv6 support not enabled");
			return -EPFNOSUPPORT;
		}
		if (ipv6_addr_type(&a) & IPV6_ADDR_MULTICAST) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_LOCAL6],
					    "Local must be a unicast IPv6 address");
			return -EINVAL;
		}
		if (ipv6_addr_type(&a) & IPV6_ADDR_MAPPED) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_LOCAL6],
					    "Local must not be an IPv4-mapped IPv6 address: give the IPv4 address");
			return -EINVAL;
		}
	}
	/* 0.0.0.0 is no local address: the route chooses one (the default). */
	if (data[IFLA_STT_LOCAL]) {
		__be32 a = nla_get_in_addr(data[IFLA_STT_LOCAL]);

		if (ipv4_is_multicast(a) || ipv4_is_lbcast(a)) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_LOCAL],
					    "Local must be a unicast IPv4 address");
			return -EINVAL;
		}
	}
	if (data[IFLA_STT_PORT] && !nla_get_be16(data[IFLA_STT_PORT])) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_PORT],
				    "Destination port must not be 0");
		return -EINVAL;
	}
	if (data[IFLA_STT_TTL] && data[IFLA_STT_TTL_INHERIT] &&
	    nla_get_u8(data[IFLA_STT_TTL]) &&
	    nla_get_u8(data[IFLA_STT_TTL_INHERIT])) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_TTL],
				    "TTL cannot be both fixed and inherited");
		return -EINVAL;
	}
	if (data[IFLA_STT_COLLECT_METADATA]) {
		for (i = 0; i < ARRAY_SIZE(stt_p2p_only); i++) {
			if (!data[stt_p2p_only[i]])
				continue;
			NL_SET_ERR_MSG_ATTR(extack, data[stt_p2p_only[i]],
					    "External mode takes remote, local, id, ttl, tos and df from each packet's metadata; do not set them");
			return -EINVAL;
		}
	}
	return 0;
}

/* Merge @data into @cfg (a copy of the current configuration on change). */
static int stt_nl2cfg(struct net *net, struct nlattr *tb[],
		      struct nlattr *data[], struct stt_config *cfg,
		      bool changelink, struct netlink_ext_ack *extack)
{
	if (!data)
		goto check;

	if (data[IFLA_STT_COLLECT_METADATA]) {
		if (changelink && !cfg->collect_md) {
			NL_SET_ERR_MSG_ATTR(extack,
					    data[IFLA_STT_COLLECT_METADATA],
					    "External mode cannot be changed on an existing device");
			return -EOPNOTSUPP;
		}
		cfg->collect_md = true;
	}
	if (changelink && cfg->collect_md) {
		unsigned int i;

		for (i = 0; i < ARRAY_SIZE(stt_p2p_only); i++) {
			if (!data[stt_p2p_only[i]])
				continue;
			NL_SET_ERR_MSG_ATTR(extack, data[stt_p2p_only[i]],
					    "Device is in external mode: its addresses, id, ttl, tos and df come from packet metadata");
			return -EINVAL;
		}
	}
	if (data[IFLA_STT_PORT]) {
		__be16 port = nla_get_be16(data[IFLA_STT_PORT]);

		if (changelink && port != cfg->key.tp_dst) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_PORT],
					    "Destination port cannot be changed on an existing device");
			return -EOPNOTSUPP;
		}
		cfg->key.tp_dst = port;
	}
	if (data[IFLA_STT_ID])
		cfg->key.tun_id = cpu_to_be64(nla_get_u64(data[IFLA_STT_ID]));

	/* A remote of the other family replaces the addresses; a local of the
	 * old family would be lost without a word, so it takes a new local
	 * (or none before).  VXLAN and Geneve refuse family changes at all.
	 */
	if (data[IFLA_STT_REMOTE]) {
		if (cfg->ipv6 && !data[IFLA_STT_LOCAL]) {
			if (!ipv6_addr_any(&cfg->key.u.ipv6.src)) {
				NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_REMOTE],
						    "An IPv4 remote needs an IPv4 local to replace the IPv6 one");
				return -EINVAL;
			}
			memset(&cfg->key.u, 0, sizeof(cfg->key.u));
		}
		cfg->ipv6 = false;
		cfg->key.u.ipv4.dst = nla_get_in_addr(data[IFLA_STT_REMOTE]);
	}
	if (data[IFLA_STT_REMOTE6]) {
		if (!cfg->ipv6 && !data[IFLA_STT_LOCAL6]) {
			if (cfg->key.u.ipv4.src) {
				NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_REMOTE6],
						    "An IPv6 remote needs an IPv6 local to replace the IPv4 one");
				return -EINVAL;
			}
			memset(&cfg->key.u, 0, sizeof(cfg->key.u));
		}
		cfg->ipv6 = true;
		cfg->key.u.ipv6.dst = nla_get_in6_addr(data[IFLA_STT_REMOTE6]);
	}
	if (data[IFLA_STT_LOCAL]) {
		if (cfg->ipv6) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_LOCAL],
					    "Local and remote address must be of the same family");
			return -EINVAL;
		}
		cfg->key.u.ipv4.src = nla_get_in_addr(data[IFLA_STT_LOCAL]);
	}
	if (data[IFLA_STT_LOCAL6]) {
		/* With no address yet, a local makes the configuration IPv6:
		 * what is missing is then reported as the remote.
		 */
		if (!cfg->ipv6 && !cfg->key.u.ipv4.dst && !cfg->key.u.ipv4.src)
			cfg->ipv6 = true;
		if (!cfg->ipv6) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_LOCAL6],
					    "Local and remote address must be of the same family");
			return -EINVAL;
		}
		cfg->key.u.ipv6.src = nla_get_in6_addr(data[IFLA_STT_LOCAL6]);
	}
	if (data[IFLA_STT_TTL]) {
		cfg->key.ttl = nla_get_u8(data[IFLA_STT_TTL]);
		if (cfg->key.ttl)
			cfg->ttl_inherit = false;
	}
	if (data[IFLA_STT_TTL_INHERIT]) {
		cfg->ttl_inherit = nla_get_u8(data[IFLA_STT_TTL_INHERIT]);
		if (cfg->ttl_inherit)
			cfg->key.ttl = 0;
	}
	if (data[IFLA_STT_TOS])
		cfg->key.tos = nla_get_u8(data[IFLA_STT_TOS]);
	if (data[IFLA_STT_DF])
		cfg->df = nla_get_u8(data[IFLA_STT_DF]);
	if (data[IFLA_STT_LINK]) {
		u32 ifindex = nla_get_u32(data[IFLA_STT_LINK]);

		if (ifindex && !__dev_get_by_index(net, ifindex)) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_STT_LINK],
					    "Underlay device not found");
			return -ENODEV;
		}
		cfg->link = ifindex;
	}

check:
	if (cfg->collect_md)
		return 0;
	if (cfg->ipv6 ? ipv6_addr_any(&cfg->key.u.ipv6.dst) :
			!cfg->key.u.ipv4.dst) {
		NL_SET_ERR_MSG(extack,
			       "STT needs a remote address (remote ADDR) or external mode");
		return -EINVAL;
	}
	/* A link-local address is one only on a given link: without it the
	 * route lookup picks any device with an fe80::/64 route.
	 */
	if (cfg->ipv6 && !cfg->link &&
	    ((ipv6_addr_type(&cfg->key.u.ipv6.dst) & IPV6_ADDR_LINKLOCAL) ||
	     (ipv6_addr_type(&cfg->key.u.ipv6.src) & IPV6_ADDR_LINKLOCAL))) {
		NL_SET_ERR_MSG(extack,
			       "A link-local local or remote address needs the underlay device (dev NAME)");
		return -EINVAL;
	}
	return 0;
}

static int stt_newlink(STT_NEWLINK_ARGS)
{
	struct net *net = stt_newlink_net();
	struct stt_config cfg = {
		.df = STT_DF_SET,
	};
	int err;

	cfg.key.tp_dst = htons(STT_DST_PORT);
	err = stt_nl2cfg(net, stt_newlink_tb(), stt_newlink_data(), &cfg,
			 false, extack);
	if (err)
		return err;
	return stt_configure(net, dev, &cfg, extack);
}

static int stt_changelink(struct net_device *dev, struct nlattr *tb[],
			  struct nlattr *data[],
			  struct netlink_ext_ack *extack)
{
	struct stt_dev *stt = netdev_priv(dev);
	struct stt_config cfg;
	int err;

	memcpy(&cfg, rtnl_dereference(stt->cfg), sizeof(cfg));
	err = stt_nl2cfg(stt->net, tb, data, &cfg, true, extack);
	if (err)
		return err;
	return stt_reconfigure(dev, &cfg, extack);
}

static size_t stt_get_size(const struct net_device *dev)
{
	return nla_total_size_64bit(sizeof(u64)) +	/* IFLA_STT_ID */
	       nla_total_size(sizeof(struct in6_addr)) + /* REMOTE(6) */
	       nla_total_size(sizeof(struct in6_addr)) + /* LOCAL(6) */
	       nla_total_size(sizeof(__be16)) +	/* IFLA_STT_PORT */
	       nla_total_size(sizeof(u8)) +	/* IFLA_STT_TTL */
	       nla_total_size(sizeof(u8)) +	/* IFLA_STT_TTL_INHERIT */
	       nla_total_size(sizeof(u8)) +	/* IFLA_STT_TOS */
	       nla_total_size(sizeof(u8)) +	/* IFLA_STT_DF */
	       nla_total_size(0) +		/* IFLA_STT_COLLECT_METADATA */
	       nla_total_size(sizeof(u32));	/* IFLA_STT_LINK */
}

static int stt_fill_info(struct sk_buff *skb, const struct net_device *dev)
{
	struct stt_dev *stt = netdev_priv(dev);
	const struct stt_config *cfg = rtnl_dereference(stt->cfg);

	if (!cfg)
		return 0;
	if (nla_put_be16(skb, IFLA_STT_PORT, cfg->key.tp_dst))
		return -EMSGSIZE;
	if (cfg->link && nla_put_u32(skb, IFLA_STT_LINK, cfg->link))
		return -EMSGSIZE;
	if (cfg->collect_md)
		return nla_put_flag(skb, IFLA_STT_COLLECT_METADATA) ?
		       -EMSGSIZE : 0;

	if (nla_put_u64_64bit(skb, IFLA_STT_ID, be64_to_cpu(cfg->key.tun_id),
			      IFLA_STT_PAD))
		return -EMSGSIZE;
	if (cfg->ipv6) {
		if (nla_put_in6_addr(skb, IFLA_STT_REMOTE6,
				     &cfg->key.u.ipv6.dst))
			return -EMSGSIZE;
		if (!ipv6_addr_any(&cfg->key.u.ipv6.src) &&
		    nla_put_in6_addr(skb, IFLA_STT_LOCAL6,
				     &cfg->key.u.ipv6.src))
			return -EMSGSIZE;
	} else {
		if (nla_put_in_addr(skb, IFLA_STT_REMOTE, cfg->key.u.ipv4.dst))
			return -EMSGSIZE;
		if (cfg->key.u.ipv4.src &&
		    nla_put_in_addr(skb, IFLA_STT_LOCAL, cfg->key.u.ipv4.src))
			return -EMSGSIZE;
	}
	if (nla_put_u8(skb, IFLA_STT_TTL, cfg->key.ttl) ||
	    nla_put_u8(skb, IFLA_STT_TTL_INHERIT, cfg->ttl_inherit) ||
	    nla_put_u8(skb, IFLA_STT_TOS, cfg->key.tos) ||
	    nla_put_u8(skb, IFLA_STT_DF, cfg->df))
		return -EMSGSIZE;
	return 0;
}

static struct net *stt_get_link_net(const struct net_device *dev)
{
	struct stt_dev *stt = netdev_priv(dev);

	return stt->net;
}

struct rtnl_link_ops stt_link_ops __read_mostly = {
	.kind		= STT_DRV_NAME,
	.maxtype	= IFLA_STT_MAX,
	.policy		= stt_policy,
	.priv_size	= sizeof(struct stt_dev),
	.setup		= stt_setup,
	.validate	= stt_validate,
	.newlink	= stt_newlink,
	.changelink	= stt_changelink,
	.dellink	= stt_dellink,
	.get_size	= stt_get_size,
	.fill_info	= stt_fill_info,
	.get_link_net	= stt_get_link_net,
};

int stt_netlink_init(void)
{
	return rtnl_link_register(&stt_link_ops);
}

void stt_netlink_exit(void)
{
	rtnl_link_unregister(&stt_link_ops);
}
