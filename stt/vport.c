// SPDX-License-Identifier: GPL-2.0
/*
 * vport-stt: STT ports for the Open vSwitch kernel datapath.
 *
 * Open vSwitch userspace still knows "type=stt".  With the upstream
 * datapath it asks for vport type 106 (OVS_VPORT_TYPE_STT of the
 * out-of-tree datapath) over generic netlink, and openvswitch.ko loads
 * "vport-type-106" when no such type is registered.  This module answers:
 * each port is an external (collect_md) STT device made by stt.ko, linked
 * to the datapath like any netdev, so the tunnel metadata of the flows
 * (tun_id = 64-bit context ID, addresses, tos, ttl, df) travels through
 * the skb's metadata dst both ways.
 */

#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/openvswitch.h>
#include <linux/rtnetlink.h>
#include <net/netlink.h>
#include <net/rtnetlink.h>
#include <net/stt_wire.h>
#include <uapi/linux/stt.h>

#include "ovs_compat.h"

struct stt_vport {
	u16	dst_port;	/* host order, as OVS_TUNNEL_ATTR_DST_PORT */
};

static struct vport_ops stt_vport_ops;

static struct stt_vport *stt_vport(const struct vport *vport)
{
	return vport_priv(vport);
}

static int stt_vport_get_options(const struct vport *vport,
				 struct sk_buff *skb)
{
	/* The port only: the reply reserves 20 bytes for the options. */
	if (nla_put_u16(skb, OVS_TUNNEL_ATTR_DST_PORT,
			stt_vport(vport)->dst_port))
		return -EMSGSIZE;
	return 0;
}

static int stt_vport_dst_port(const struct vport_parms *parms, u16 *port)
{
	const struct nlattr *a = NULL;

	if (parms->options)
		a = nla_find_nested(parms->options, OVS_TUNNEL_ATTR_DST_PORT);
	if (!a) {
		*port = STT_DST_PORT;
		return 0;
	}
	if (nla_len(a) != sizeof(u16) || !nla_get_u16(a))
		return -EINVAL;
	*port = nla_get_u16(a);
	return 0;
}

static struct vport *stt_vport_create(const struct vport_parms *parms)
{
	struct net *net = ovs_dp_get_net(parms->dp);
	netdevice_tracker tracker;
	struct net_device *dev;
	struct vport *vport;
	u16 dst_port;
	int err;

	err = stt_vport_dst_port(parms, &dst_port);
	if (err)
		return ERR_PTR(err);

	vport = ovs_vport_alloc(sizeof(struct stt_vport), &stt_vport_ops,
				parms);
	if (IS_ERR(vport))
		return vport;
	stt_vport(vport)->dst_port = dst_port;

	rtnl_lock();
	dev = stt_dev_create_fb(net, parms->name, NET_NAME_USER,
				htons(dst_port));
	if (IS_ERR(dev)) {
		err = PTR_ERR(dev);
		goto err_unlock;
	}
	err = dev_change_flags(dev, dev->flags | IFF_UP, NULL);
	if (err < 0)
		goto err_del;
	/* Keep our device, not whatever bears its name, for the unwind. */
	netdev_hold(dev, &tracker, GFP_KERNEL);
	rtnl_unlock();

	/* Frees the vport on failure. */
	vport = ovs_netdev_link(vport, parms->name);

	if (!IS_ERR(vport)) {
		netdev_put(dev, &tracker);
		return vport;
	}
	rtnl_lock();
	if (dev->reg_state == NETREG_REGISTERED)
		rtnl_delete_link(dev, 0, NULL);
	/* before rtnl_unlock(), which waits for the last reference */
	netdev_put(dev, &tracker);
	rtnl_unlock();
	return vport;

err_del:
	rtnl_delete_link(dev, 0, NULL);
err_unlock:
	rtnl_unlock();
	ovs_vport_free(vport);
	return ERR_PTR(err);
}

static struct vport_ops stt_vport_ops = {
	.type		= STT_OVS_VPORT_TYPE,
	.create		= stt_vport_create,
	.destroy	= ovs_netdev_tunnel_destroy,
	.get_options	= stt_vport_get_options,
	.send		= dev_queue_xmit,
};

static int __init stt_vport_init(void)
{
	stt_vport_ops.owner = THIS_MODULE;
	return __ovs_vport_ops_register(&stt_vport_ops);
}

static void __exit stt_vport_exit(void)
{
	ovs_vport_ops_unregister(&stt_vport_ops);
}

module_init(stt_vport_init);
module_exit(stt_vport_exit);

MODULE_DESCRIPTION("Open vSwitch STT vport (over stt.ko)");
MODULE_LICENSE("GPL");
MODULE_ALIAS("vport-type-" __stringify(STT_OVS_VPORT_TYPE));
