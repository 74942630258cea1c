// SPDX-License-Identifier: GPL-2.0
/*
 * STT network device: netdev and ethtool operations, and the device's life
 * (configure, reconfigure, delete) on its receive port (port.c).
 */

#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_vlan.h>
#include <net/ipv6.h>
#include <net/rtnetlink.h>

#include "stt_private.h"

static const char stt_dev_stat_names[STT_DEV_STAT_MAX][ETH_GSTRING_LEN] = {
	[STT_DEV_RX_WHOLE]		= "rx_frames_whole",
	[STT_DEV_RX_REASM]		= "rx_frames_reassembled",
	[STT_DEV_RX_REASM_SEGS]		= "rx_reassembled_segments",
	[STT_DEV_RX_GSO]		= "rx_frames_gso",
	[STT_DEV_RX_FRAGLIST_FIXUP]	= "rx_fraglist_reshaped",
	[STT_DEV_RX_LINEARIZED]		= "rx_linearized",
	[STT_DEV_RX_MSS_CLAMPED]	= "rx_mss_clamped",
	[STT_DEV_TX_FRAMES]		= "tx_frames",
	[STT_DEV_TX_GSO]		= "tx_frames_gso",
	[STT_DEV_TX_SW_SEGMENTED]	= "tx_sw_segmented",
	[STT_DEV_TX_CSUM_HELP]		= "tx_sw_checksummed",
	[STT_DEV_TX_FRAGLIST_UNFIT]	= "tx_fraglist_unfit",
	[STT_DEV_TX_LOOP]		= "tx_drop_loop",
	[STT_DEV_TX_NO_ROUTE]		= "tx_drop_no_route",
	[STT_DEV_TX_NO_MD]		= "tx_drop_no_metadata",
	[STT_DEV_TX_TOO_BIG]		= "tx_drop_too_big",
};

/* Namespace-wide counters: the device is not known yet when these happen. */
static const char stt_ns_stat_names[STT_NS_STAT_MAX][ETH_GSTRING_LEN] = {
	[STT_NS_RX_SEGS]		= "ns_rx_segments",
	[STT_NS_DROP_TRUNCATED]		= "ns_drop_truncated",
	[STT_NS_DROP_CSUM]		= "ns_drop_bad_csum",
	[STT_NS_DROP_TCP_FLAGS]		= "ns_drop_tcp_flags",
	[STT_NS_DROP_EMPTY]		= "ns_drop_empty",
	[STT_NS_DROP_BAD_LEN]		= "ns_drop_bad_frame_len",
	[STT_NS_DROP_BAD_OFFSET]	= "ns_drop_bad_offset",
	[STT_NS_DROP_LEN_MISMATCH]	= "ns_drop_len_mismatch",
	[STT_NS_DROP_OVERLAP]		= "ns_drop_overlap",
	[STT_NS_DROP_DUP]		= "ns_drop_duplicate",
	[STT_NS_DROP_REASM_TIMEOUT]	= "ns_drop_reasm_timeout",
	[STT_NS_DROP_REASM_MEM]		= "ns_drop_reasm_mem",
	[STT_NS_DROP_VERSION]		= "ns_drop_bad_version",
	[STT_NS_DROP_FLAGS]		= "ns_drop_bad_flags",
	[STT_NS_DROP_OFFLOAD]		= "ns_drop_bad_offload",
	[STT_NS_DROP_VLAN]		= "ns_drop_bad_vlan",
	[STT_NS_DROP_NO_DEV]		= "ns_drop_no_device",
	[STT_NS_DROP_OUTER_FRAG]	= "ns_drop_outer_fragment",
	[STT_NS_DROP_OUTER_EXTHDR]	= "ns_drop_outer_exthdr",
	[STT_NS_DROP_ECN]		= "ns_drop_ecn",
	[STT_NS_DROP_NOMEM]		= "ns_drop_nomem",
	[STT_NS_DROP_POLICY]		= "ns_drop_xfrm_policy",
	[STT_NS_RX_OUTER_REASM]		= "ns_rx_outer_reassembled",
	[STT_NS_PMTU_LEARNED]		= "ns_pmtu_learned",
	[STT_NS_PMTU_IGNORED]		= "ns_pmtu_ignored",
	[STT_NS_REASM_FRAMES]		= "ns_reasm_frames",
	[STT_NS_REASM_SEGS]		= "ns_reasm_segments",
};

/* Gauges after the counters. */
static const char stt_gauge_names[][ETH_GSTRING_LEN] = {
	"ns_reasm_mem_bytes",
	"ns_reasm_mem_limit",
	"ns_reasm_pending_frames",
	"ns_reasm_chain_max",
};

#define STT_N_STATS (STT_DEV_STAT_MAX + STT_NS_STAT_MAX + \
		     ARRAY_SIZE(stt_gauge_names))

static void stt_cfg_free(struct stt_config *cfg)
{
	dst_cache_destroy(&cfg->dst_cache);
	kfree(cfg);
}

static void stt_cfg_free_rcu(struct rcu_head *head)
{
	stt_cfg_free(container_of(head, struct stt_config, rcu));
}

static int stt_init(struct net_device *dev)
{
	struct stt_dev *stt = netdev_priv(dev);
	int err;

	stt->stats = netdev_alloc_pcpu_stats(struct stt_dev_stats);
	if (!stt->stats)
		return -ENOMEM;

	err = gro_cells_init(&stt->gro_cells, dev);
	if (err)
		goto err_stats;

	netdev_lockdep_set_classes(dev);
	return 0;

err_stats:
	free_percpu(stt->stats);
	return err;
}

/* The configuration outlives stt_dellink() up to here: unregistering
 * reports it in RTM_DELLINK, which is built just before this.
 */
static void stt_uninit(struct net_device *dev)
{
	struct stt_dev *stt = netdev_priv(dev);
	struct stt_config *cfg = rtnl_dereference(stt->cfg);

	if (cfg) {
		RCU_INIT_POINTER(stt->cfg, NULL);
		call_rcu(&cfg->rcu, stt_cfg_free_rcu);
	}
	gro_cells_destroy(&stt->gro_cells);
	free_percpu(stt->stats);
}

static int stt_open(struct net_device *dev)
{
	netif_carrier_on(dev);
	return 0;
}

static int stt_stop(struct net_device *dev)
{
	return 0;
}

static int stt_get_iflink(const struct net_device *dev)
{
	struct stt_dev *stt = netdev_priv(dev);
	const struct stt_config *cfg;
	int link;

	rcu_read_lock();
	cfg = rcu_dereference(stt->cfg);
	link = cfg ? cfg->link : 0;
	rcu_read_unlock();
	return link ?: dev->ifindex;
}

static const struct net_device_ops stt_netdev_ops = {
	.ndo_init		= stt_init,
	.ndo_uninit		= stt_uninit,
	.ndo_open		= stt_open,
	.ndo_stop		= stt_stop,
	.ndo_start_xmit		= stt_xmit,
	.ndo_features_check	= stt_features_check,
	.ndo_get_stats64	= dev_get_tstats64,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_get_iflink		= stt_get_iflink,
	.ndo_fill_metadata_dst	= stt_fill_metadata_dst,
};

static void stt_get_drvinfo(struct net_device *dev,
			    struct ethtool_drvinfo *drvinfo)
{
	strscpy(drvinfo->driver, STT_DRV_NAME, sizeof(drvinfo->driver));
	strscpy(drvinfo->version, STT_DRV_VERSION, sizeof(drvinfo->version));
}

static int stt_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? STT_N_STATS : -EOPNOTSUPP;
}

static void stt_get_strings(struct net_device *dev, u32 sset, u8 *buf)
{
	if (sset != ETH_SS_STATS)
		return;
	memcpy(buf, stt_dev_stat_names, sizeof(stt_dev_stat_names));
	buf += sizeof(stt_dev_stat_names);
	memcpy(buf, stt_ns_stat_names, sizeof(stt_ns_stat_names));
	buf += sizeof(stt_ns_stat_names);
	memcpy(buf, stt_gauge_names, sizeof(stt_gauge_names));
}

static void stt_get_ethtool_stats(struct net_device *dev,
				  struct ethtool_stats *stats, u64 *data)
{
	struct stt_dev *stt = netdev_priv(dev);
	struct stt_net *sn = stt_pernet(stt->net);
	unsigned int start, i;
	int cpu;

	memset(data, 0, sizeof(u64) * STT_N_STATS);
	for_each_possible_cpu(cpu) {
		const struct stt_dev_stats *ds = per_cpu_ptr(stt->stats, cpu);
		const struct stt_ns_stats *ns = per_cpu_ptr(sn->stats, cpu);
		u64 v[STT_DEV_STAT_MAX + STT_NS_STAT_MAX];

		do {
			start = u64_stats_fetch_begin(&ds->syncp);
			for (i = 0; i < STT_DEV_STAT_MAX; i++)
				v[i] = u64_stats_read(&ds->cnt[i]);
		} while (u64_stats_fetch_retry(&ds->syncp, start));
		for (i = 0; i < STT_DEV_STAT_MAX; i++)
			data[i] += v[i];

		do {
			start = u64_stats_fetch_begin(&ns->syncp);
			for (i = 0; i < STT_NS_STAT_MAX; i++)
				v[i] = u64_stats_read(&ns->cnt[i]);
		} while (u64_stats_fetch_retry(&ns->syncp, start));
		for (i = 0; i < STT_NS_STAT_MAX; i++)
			data[STT_DEV_STAT_MAX + i] += v[i];
	}
	data += STT_DEV_STAT_MAX + STT_NS_STAT_MAX;
	data[0] = stt_reasm_mem(sn);
	data[1] = READ_ONCE(stt_reasm_max_mem);
	data[2] = stt_reasm_pending(sn);
	data[3] = READ_ONCE(sn->reasm.chain_max);
}

static const struct ethtool_ops stt_ethtool_ops = {
	.get_drvinfo		= stt_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_strings		= stt_get_strings,
	.get_sset_count		= stt_get_sset_count,
	.get_ethtool_stats	= stt_get_ethtool_stats,
};

static const struct device_type stt_type = {
	.name = STT_DRV_NAME,
};

/* Inner packets keep their offloads: STT carries checksum-partial and MSS
 * to the far end, so the stack may hand us 64 KB TSO packets of any
 * checksum kind.  What the header cannot describe is resolved in xmit.c,
 * and so are frag_lists the underlay could not cut (stt_features_check).
 */
#define STT_FEATURES (NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_FRAGLIST | \
		      NETIF_F_RXCSUM | NETIF_F_GSO_SOFTWARE | \
		      NETIF_F_HIGHDMA | NETIF_F_HW_VLAN_CTAG_TX)

void stt_setup(struct net_device *dev)
{
	ether_setup(dev);

	dev->netdev_ops = &stt_netdev_ops;
	dev->ethtool_ops = &stt_ethtool_ops;
	dev->needs_free_netdev = true;
	SET_NETDEV_DEVTYPE(dev, &stt_type);

	dev->features |= STT_FEATURES;
	stt_set_lltx(dev);
	/* The core allocates and reads dev->tstats; iptunnel_xmit_stats()
	 * insists on it (a WARN from 6.12.117 on).
	 */
	dev->pcpu_stat_type = NETDEV_PCPU_STAT_TSTATS;
	dev->hw_features |= STT_FEATURES;
	dev->vlan_features = dev->features & ~NETIF_F_HW_VLAN_CTAG_TX;

	/* Default 1500: inner frames stay bridgeable to ordinary hosts, and
	 * TCP still hands us 64 KB GSO packets, which travel as one frame.
	 */
	dev->mtu = ETH_DATA_LEN;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = STT_MAX_MTU;
	/* One inner GSO packet must fit one outer IPv4 packet. */
	netif_set_tso_max_size(dev, STT_MAX_GSO_SIZE);

	netif_keep_dst(dev);
	dev->priv_flags &= ~IFF_TX_SKB_SHARING;
	dev->priv_flags |= IFF_LIVE_ADDR_CHANGE | IFF_NO_QUEUE;
	eth_hw_addr_random(dev);
}

static unsigned int stt_needed_headroom(const struct stt_config *cfg)
{
	unsigned int ip = cfg->ipv6 || cfg->collect_md ?
			  sizeof(struct ipv6hdr) : sizeof(struct iphdr);

	return LL_MAX_HEADER + ip + STT_ENCAP_HLEN;
}

/* The copy of @cfg that the device publishes, with its own route cache. */
static struct stt_config *stt_cfg_dup(const struct stt_config *cfg)
{
	struct stt_config *ncfg;

	ncfg = kmemdup(cfg, sizeof(*cfg), GFP_KERNEL);
	if (!ncfg)
		return NULL;
	if (dst_cache_init(&ncfg->dst_cache, GFP_KERNEL)) {
		kfree(ncfg);
		return NULL;
	}
	return ncfg;
}

int stt_configure(struct net *net, struct net_device *dev,
		  const struct stt_config *cfg, struct netlink_ext_ack *extack)
{
	struct stt_net *sn = stt_pernet(net);
	struct stt_dev *stt = netdev_priv(dev);
	struct stt_config *ncfg;
	struct stt_port *sp;
	bool created;
	int err;

	stt->net = net;
	stt->dev = dev;
	INIT_HLIST_NODE(&stt->hnode);

	sp = stt_port_get(sn, cfg->key.tp_dst, &created);
	if (IS_ERR(sp)) {
		if (PTR_ERR(sp) == -EADDRINUSE)
			NL_SET_ERR_MSG(extack,
				       "Cannot reserve the STT port: a local socket uses it");
		else if (PTR_ERR(sp) == -EACCES)
			NL_SET_ERR_MSG(extack,
				       "Reserving a port below net.ipv4.ip_unprivileged_port_start needs CAP_NET_BIND_SERVICE");
		else
			NL_SET_ERR_MSG(extack, "Cannot reserve the STT port");
		return PTR_ERR(sp);
	}

	err = stt_port_check_clash(sp, stt, cfg, extack);
	if (err)
		goto err_port;

	ncfg = stt_cfg_dup(cfg);
	if (!ncfg) {
		err = -ENOMEM;
		goto err_port;
	}
	RCU_INIT_POINTER(stt->cfg, ncfg);

	dev->needed_headroom = stt_needed_headroom(cfg);

	err = register_netdevice(dev);
	if (err) {
		/* Unless it failed after ndo_init, whose undoing freed it. */
		if (rtnl_dereference(stt->cfg)) {
			RCU_INIT_POINTER(stt->cfg, NULL);
			stt_cfg_free(ncfg);
		}
		goto err_port;
	}

	stt_port_link(stt, sp, ncfg);
	list_add(&stt->next, &sn->dev_list);
	return 0;

err_port:
	if (created)
		stt_port_put_new(sn, sp);
	return err;
}

/* Apply a complete new configuration.  Port and mode never change here
 * (netlink.c refuses that), so the device stays on the same port record.
 */
int stt_reconfigure(struct net_device *dev, const struct stt_config *cfg,
		    struct netlink_ext_ack *extack)
{
	struct stt_dev *stt = netdev_priv(dev);
	struct stt_config *old = rtnl_dereference(stt->cfg);
	struct stt_port *sp = stt->port;
	struct stt_config *ncfg;
	int err;

	err = stt_port_check_clash(sp, stt, cfg, extack);
	if (err)
		return err;

	ncfg = stt_cfg_dup(cfg);
	if (!ncfg)
		return -ENOMEM;

	if (ncfg->key.tun_id == old->key.tun_id) {
		/* Same chain (or the port's external device): receive reads
		 * the remote from the configuration, so publishing it is all.
		 * Off the table even briefly, the device would lose the
		 * frames that arrive meanwhile.
		 */
		rcu_assign_pointer(stt->cfg, ncfg);
	} else {
		stt_port_unlink(stt, old);
		/* Readers may still walk the old hash chain: let them
		 * finish before the node joins another one.
		 */
		synchronize_net();
		rcu_assign_pointer(stt->cfg, ncfg);
		stt_port_link(stt, sp, ncfg);
	}
	dev->needed_headroom = stt_needed_headroom(ncfg);
	/* Transmits that read the old configuration may still be using its
	 * route cache: it goes with the configuration, after them.
	 */
	call_rcu(&old->rcu, stt_cfg_free_rcu);
	return 0;
}

void stt_dellink(struct net_device *dev, struct list_head *head)
{
	struct stt_dev *stt = netdev_priv(dev);
	struct stt_config *cfg = rtnl_dereference(stt->cfg);

	stt_port_unlink(stt, cfg);
	list_del(&stt->next);
	unregister_netdevice_queue(dev, head);
}

struct net_device *stt_dev_create_fb(struct net *net, const char *name,
				     u8 name_assign_type, __be16 dst_port)
{
	struct stt_config cfg = {
		.collect_md = true,
		.df = STT_DF_UNSET,
	};
	struct nlattr *tb[IFLA_MAX + 1];
	struct net_device *dev;
	LIST_HEAD(list_kill);
	int err;

	cfg.key.tp_dst = dst_port;
	memset(tb, 0, sizeof(tb));
	dev = rtnl_create_link(net, name, name_assign_type, &stt_link_ops,
			       tb, NULL);
	if (IS_ERR(dev))
		return dev;

	err = stt_configure(net, dev, &cfg, NULL);
	if (err) {
		free_netdev(dev);
		return ERR_PTR(err);
	}

	/* Open vSwitch expects tunnel ports not to limit packet sizes. */
	err = dev_set_mtu(dev, STT_MAX_MTU);
	if (err)
		goto err_del;

	err = rtnl_configure_link(dev, NULL, 0, NULL);
	if (err < 0)
		goto err_del;

	return dev;

err_del:
	stt_dellink(dev, &list_kill);
	unregister_netdevice_many(&list_kill);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_GPL(stt_dev_create_fb);
