// SPDX-License-Identifier: GPL-2.0
/*
 * stt_csum_complete: test-only module that makes chosen network devices
 * deliver what they receive as a CHECKSUM_COMPLETE NIC (mlx5, sfc, nfp...)
 * does: skb->csum is the ones' complement sum of the packet from the
 * network header to its end, ip_summed CHECKSUM_COMPLETE.  veth never
 * does that, so without this the receive path for such NICs is untested.
 *
 *   insmod stt_csum_complete.ko ifnames=vB[,vA...]
 *
 *   insmod stt_csum_complete.ko ifnames=vW1 wire=vW1,vW2
 *
 * With "wire", the two devices (of one namespace) are joined as by a
 * cable: what either receives leaves by the other, converted first if
 * its name is in ifnames.  The receiver behind the wire then runs GRO
 * over CHECKSUM_COMPLETE packets, as a NIC driver's NAPI does (the
 * rx_handler alone comes after GRO).
 *
 * Every device with one of those names, in any namespace, present or
 * registered later, gets an rx_handler.  Non-GSO packets are converted
 * (a CHECKSUM_PARTIAL one, from a local sender on the veth peer, gets its
 * checksum filled in first, as it would on a wire); GSO packets (veth
 * hands a TSO sender's packets over whole, which no NIC does) and
 * CHECKSUM_UNNECESSARY ones are left alone and counted.  Counters:
 * /sys/kernel/debug/stt_csum_complete.
 *
 * Built for the selftests only (selftests/helpers), never installed.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/string.h>

static char *ifnames;
module_param(ifnames, charp, 0444);
MODULE_PARM_DESC(ifnames, "Comma-separated device names to convert");

static char *wire;
module_param(wire, charp, 0444);
MODULE_PARM_DESC(wire, "Two device names, comma-separated: joined by a wire");

static atomic_long_t cc_converted, cc_skipped_gso, cc_skipped_other;
static struct dentry *cc_debugfs;

/* The place of @name in the comma-separated @list, or -1. */
static int cc_index(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;
	int i = 0;

	while (p && *p) {
		const char *end = strchrnul(p, ',');

		if (end - p == len && !strncmp(p, name, len))
			return i;
		p = *end ? end + 1 : end;
		i++;
	}
	return -1;
}

static bool cc_wanted(const struct net_device *dev)
{
	return cc_index(ifnames, dev->name) >= 0;
}

/* @dev's end of the wire: 0 or 1, or -1 if it is not on it. */
static int cc_wire_index(const struct net_device *dev)
{
	return cc_index(wire, dev->name);
}

/* The device wired to @dev, if any (RCU). */
static struct net_device *cc_wire_peer(const struct net_device *dev)
{
	int end = cc_wire_index(dev);
	char name[IFNAMSIZ];
	const char *comma;

	if (end < 0)
		return NULL;
	comma = strchr(wire, ',');
	if (!comma)
		return NULL;
	if (end == 0)
		strscpy(name, comma + 1, sizeof(name));
	else
		strscpy(name, wire, min_t(size_t, comma - wire + 1,
					  sizeof(name)));
	return dev_get_by_name_rcu(dev_net(dev), name);
}

/* Convert *@pskb if it is a packet a NIC would sum; on error it is
 * freed and *@pskb NULL.
 */
static void cc_convert(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;

	if (skb_is_gso(skb)) {
		atomic_long_inc(&cc_skipped_gso);
		return;
	}
	if (skb->ip_summed != CHECKSUM_NONE &&
	    skb->ip_summed != CHECKSUM_PARTIAL) {
		atomic_long_inc(&cc_skipped_other);
		return;
	}
	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb)) {
		kfree_skb(skb);
		*pskb = NULL;
		return;
	}
	/* As a NIC's fresh skb: nothing validated yet.  veth passes on
	 * whatever the sender's skb carried.
	 */
	skb->csum_valid = 0;
	skb->csum_complete_sw = 0;
	skb->csum_level = 0;
	skb->csum = skb_checksum(skb, 0, skb->len, 0);
	skb->ip_summed = CHECKSUM_COMPLETE;
	atomic_long_inc(&cc_converted);
}

static rx_handler_result_t cc_rx(struct sk_buff **pskb)
{
	struct net_device *peer = cc_wire_peer((*pskb)->dev);
	struct sk_buff *skb;

	skb = skb_share_check(*pskb, GFP_ATOMIC);
	*pskb = skb;
	if (!skb)
		return RX_HANDLER_CONSUMED;
	if (cc_wanted(skb->dev)) {
		cc_convert(pskb);
		skb = *pskb;
		if (!skb)
			return RX_HANDLER_CONSUMED;
	}
	if (!peer)
		return RX_HANDLER_PASS;
	/* Out by the peer, Ethernet header and all: the sum then covers it,
	 * and the receiver's eth_type_trans() takes it out again.
	 */
	skb_push_rcsum(skb, skb->data - skb_mac_header(skb));
	skb->dev = peer;
	dev_queue_xmit(skb);
	return RX_HANDLER_CONSUMED;
}

static int cc_netdev_event(struct notifier_block *nb, unsigned long event,
			   void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	int err;

	switch (event) {
	case NETDEV_REGISTER:
		if (!cc_wanted(dev) && cc_wire_index(dev) < 0)
			break;
		err = netdev_rx_handler_register(dev, cc_rx, NULL);
		if (err)
			netdev_warn(dev, "stt_csum_complete: cannot attach: %d\n",
				    err);
		else
			netdev_info(dev, "stt_csum_complete: attached\n");
		break;
	case NETDEV_UNREGISTER:
		if (rtnl_dereference(dev->rx_handler) == cc_rx)
			netdev_rx_handler_unregister(dev);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block cc_notifier = {
	.notifier_call = cc_netdev_event,
};

static int cc_show(struct seq_file *m, void *v)
{
	seq_printf(m, "converted %ld\nskipped_gso %ld\nskipped_other %ld\n",
		   atomic_long_read(&cc_converted),
		   atomic_long_read(&cc_skipped_gso),
		   atomic_long_read(&cc_skipped_other));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(cc);

static int __init cc_init(void)
{
	int err;

	if (!ifnames || !*ifnames)
		return -EINVAL;
	cc_debugfs = debugfs_create_file("stt_csum_complete", 0444, NULL, NULL,
					 &cc_fops);
	err = register_netdevice_notifier(&cc_notifier);
	if (err)
		debugfs_remove(cc_debugfs);
	return err;
}

static void __exit cc_exit(void)
{
	/* Replays NETDEV_UNREGISTER for every device: handlers go. */
	unregister_netdevice_notifier(&cc_notifier);
	debugfs_remove(cc_debugfs);
}

module_init(cc_init);
module_exit(cc_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("STT selftests: emulate a CHECKSUM_COMPLETE NIC on chosen devices");
