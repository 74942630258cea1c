// SPDX-License-Identifier: GPL-2.0
/*
 * STT: Stateless Transport Tunneling (draft-davie-stt-08).
 *
 * Module init/exit and per-network-namespace state.  A namespace gets its
 * receive hooks, reassembly state and counters with its first STT port
 * (stt_net_activate(), from the netlink request that creates the first
 * device, under RTNL): namespaces without STT, most containers' among
 * them, pay nothing, neither a hook on every packet they deliver nor a
 * grace period when they go.  Per-namespace netfilter registration takes
 * no RTNL (the old global nf_register_hook() did, which is how earlier STT
 * code deadlocked when it registered from a request).
 */

#include <linux/module.h>
#include <linux/netdevice.h>
#include <net/net_namespace.h>
#include <net/rtnetlink.h>

#include "stt_private.h"

unsigned int stt_net_id __read_mostly;

unsigned int stt_reasm_max_mem __read_mostly = 4 << 20;
module_param_named(reasm_max_mem, stt_reasm_max_mem, uint, 0644);
MODULE_PARM_DESC(reasm_max_mem,
		 "Reassembly memory bound per network namespace, bytes (default 4 MiB)");

unsigned int stt_reasm_timeout_ms __read_mostly = 2000;
module_param_named(reasm_timeout_ms, stt_reasm_timeout_ms, uint, 0644);
MODULE_PARM_DESC(reasm_timeout_ms,
		 "Incomplete frames expire after this many ms (default 2000)");

static int __net_init stt_net_init(struct net *net)
{
	struct stt_net *sn = stt_pernet(net);

	sn->net = net;
	INIT_LIST_HEAD(&sn->dev_list);
	INIT_LIST_HEAD(&sn->port_list);
	return 0;
}

/* Free what stt_net_activate() set up, but for the hooks, which must be
 * gone with the packets inside them.  Reassembly first: its expiry work
 * counts into the statistics until it is cancelled.  Safe on a
 * half-activated namespace.
 */
static void stt_net_free_state(struct stt_net *sn)
{
	stt_reasm_exit(sn);
	free_percpu(sn->stats);
	sn->stats = NULL;
}

/* What a namespace needs once it has an STT port: counters, reassembly,
 * then the hooks, which use both.  RTNL held.
 */
int stt_net_activate(struct stt_net *sn)
{
	int err;

	ASSERT_RTNL();
	if (sn->active)
		return 0;

	sn->stats = netdev_alloc_pcpu_stats(struct stt_ns_stats);
	if (!sn->stats)
		return -ENOMEM;

	err = stt_reasm_init(sn);
	if (!err)
		err = stt_hooks_register(sn->net);
	if (err) {
		stt_net_free_state(sn);
		return err;
	}
	sn->active = true;
	return 0;
}

/* Undo stt_net_activate() when the request that activated the namespace
 * failed and left it without a port: it must not keep paying a hook on
 * every packet it delivers.  A namespace that has a port keeps it all
 * until it exits.  RTNL held.
 */
void stt_net_deactivate_unused(struct stt_net *sn)
{
	ASSERT_RTNL();
	if (!sn->active || !list_empty(&sn->port_list))
		return;
	stt_hooks_unregister(sn->net);
	/* Packets inside the hooks may have seen the refused port. */
	synchronize_net();
	stt_net_free_state(sn);
	sn->active = false;
}

/* Devices whose underlay is this namespace go with it, wherever they live.
 * Through stt_dellink(), as for any other deletion: it unhooks the device
 * from its port, which ndo_uninit does not.
 * (The core has already deleted the devices living in the namespace;
 * the first loop only catches what it may leave.)
 */
static void stt_destroy_tunnels(struct net *net, struct list_head *head)
{
	struct stt_net *sn = stt_pernet(net);
	struct net_device *dev, *aux;
	struct stt_dev *stt, *next;

	for_each_netdev_safe(net, dev, aux)
		if (dev->rtnl_link_ops == &stt_link_ops)
			stt_dellink(dev, head);

	list_for_each_entry_safe(stt, next, &sn->dev_list, next)
		if (!net_eq(dev_net(stt->dev), net))
			stt_dellink(stt->dev, head);
}

static void __net_exit stt_net_exit_batch(struct list_head *net_list)
{
	bool hooked = false;
	struct net *net;
	LIST_HEAD(list);

	rtnl_lock();
	list_for_each_entry(net, net_list, exit_list)
		stt_destroy_tunnels(net, &list);
	unregister_netdevice_many(&list);
	rtnl_unlock();

	list_for_each_entry(net, net_list, exit_list) {
		if (stt_pernet(net)->active) {
			stt_hooks_unregister(net);
			hooked = true;
		}
	}
	/* The hooks are gone; wait once for packets still inside them. */
	if (hooked)
		synchronize_net();

	list_for_each_entry(net, net_list, exit_list) {
		struct stt_net *sn = stt_pernet(net);

		if (!sn->active)
			continue;
		stt_net_free_state(sn);
		stt_ports_free(sn);
	}
}

static struct pernet_operations stt_net_ops = {
	.init = stt_net_init,
	.exit_batch = stt_net_exit_batch,
	.id   = &stt_net_id,
	.size = sizeof(struct stt_net),
};

static int __init stt_init_module(void)
{
	int err;

	stt_xmit_init();
	err = register_pernet_subsys(&stt_net_ops);
	if (err)
		return err;

	err = stt_netlink_init();
	if (err)
		goto err_pernet;

	pr_info("STT tunnel driver %s\n", STT_DRV_VERSION);
	return 0;

err_pernet:
	unregister_pernet_subsys(&stt_net_ops);
	return err;
}

static void __exit stt_cleanup_module(void)
{
	/* Unregistering the link ops deletes every device first. */
	stt_netlink_exit();
	unregister_pernet_subsys(&stt_net_ops);
	/* Route caches and metadata dsts are freed after a grace period. */
	rcu_barrier();
}

module_init(stt_init_module);
module_exit(stt_cleanup_module);

MODULE_LICENSE("GPL");
MODULE_VERSION(STT_DRV_VERSION);
MODULE_AUTHOR("The STT driver authors");
MODULE_DESCRIPTION("STT (Stateless Transport Tunneling) network device");
MODULE_ALIAS_RTNL_LINK(STT_DRV_NAME);
