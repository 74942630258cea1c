// SPDX-License-Identifier: GPL-2.0
/*
 * STT receive ports and the table frames are dispatched with: per
 * namespace, one record per destination port, each holding its
 * point-to-point devices hashed by context ID (and told apart by remote)
 * and at most one external device, which takes every frame no
 * point-to-point device matches.  Written under RTNL, read under RCU on
 * receive.
 */

#include <linux/hash.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "stt_private.h"

static struct hlist_head *stt_port_chain(struct stt_port *sp, __be64 key)
{
	return &sp->keys[hash_64((__force u64)key, STT_KEY_HASH_BITS)];
}

/* Does @cfg send to @addr (a struct in6_addr or a __be32)? */
static bool stt_cfg_remote_is(const struct stt_config *cfg, bool ipv6,
			      const void *addr)
{
	if (cfg->ipv6 != ipv6)
		return false;
	if (ipv6)
		return ipv6_addr_equal(&cfg->key.u.ipv6.dst, addr);
	return cfg->key.u.ipv4.dst == *(const __be32 *)addr;
}

static const void *stt_cfg_remote(const struct stt_config *cfg)
{
	return cfg->ipv6 ? (const void *)&cfg->key.u.ipv6.dst :
			   &cfg->key.u.ipv4.dst;
}

/* Reserve @port for STT: a bound TCP socket that never listens makes local
 * bind() fail with EADDRINUSE; the receive hook makes sure nothing that
 * arrives for the port reaches TCP (which would answer with RST).
 */
static int stt_port_sock(struct net *net, int family, __be16 port,
			 struct socket **sockp)
{
	struct sockaddr_storage ss = {};
	struct socket *sock;
	int err, len;

	err = sock_create_kern(net, family, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (err)
		return err;

	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		ip6_sock_set_v6only(sock->sk);	/* IPv4 has its own socket */
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = port;
		len = sizeof(*sin);
	}

	err = stt_kernel_bind(sock, &ss, len);
	if (err) {
		sock_release(sock);
		return err;
	}
	*sockp = sock;
	return 0;
}

static void stt_port_sock_release(struct stt_port *sp)
{
	if (sp->sock6)
		sock_release(sp->sock6);
	sock_release(sp->sock4);
}

/* RCU (receive, ICMP) or RTNL (configuration) held. */
struct stt_port *stt_port_lookup(struct stt_net *sn, __be16 port)
{
	struct stt_port *sp;

	list_for_each_entry_rcu(sp, &sn->port_list, list, lockdep_rtnl_is_held())
		if (sp->port == port)
			return sp;
	return NULL;
}

/* Find or create the port record; *@created says which.  RTNL held. */
struct stt_port *stt_port_get(struct stt_net *sn, __be16 port, bool *created)
{
	struct stt_port *sp;
	int err, i;

	ASSERT_RTNL();
	*created = false;
	sp = stt_port_lookup(sn, port);
	if (sp)
		return sp;

	sp = kzalloc_obj(*sp, GFP_KERNEL);
	if (!sp)
		return ERR_PTR(-ENOMEM);
	sp->port = port;
	for (i = 0; i < STT_KEY_HASH_SIZE; i++)
		INIT_HLIST_HEAD(&sp->keys[i]);

	err = stt_port_sock(sn->net, AF_INET, port, &sp->sock4);
	if (err)
		goto err_free;
#if IS_ENABLED(CONFIG_IPV6)
	err = stt_port_sock(sn->net, AF_INET6, port, &sp->sock6);
	if (err && err != -EAFNOSUPPORT)
		goto err_sock;
#endif
	/* The namespace's first port: hooks, counters, reassembly.  Only
	 * once the port is reserved, so that a port in use costs nothing.
	 */
	err = stt_net_activate(sn);
	if (err)
		goto err_sock;
	list_add_rcu(&sp->list, &sn->port_list);
	*created = true;
	return sp;

err_sock:
	stt_port_sock_release(sp);	/* sock6 is still NULL if it failed */
err_free:
	kfree(sp);
	return ERR_PTR(err);
}

/* Call @fn(cfg, @arg) with the configuration of every device on @sp that
 * sends to @addr (an external device sends anywhere) and return how many
 * there were.  For ICMP about our segments, so rare that a walk of the
 * table is fine.  RCU held.
 */
unsigned int stt_port_walk_senders(struct stt_port *sp, bool ipv6,
				   const void *addr,
				   void (*fn)(const struct stt_config *cfg,
					      void *arg),
				   void *arg)
{
	const struct stt_config *cfg;
	unsigned int n = 0;
	struct stt_dev *stt;
	int i;

	stt = rcu_dereference(sp->md_dev);
	cfg = stt ? rcu_dereference(stt->cfg) : NULL;
	if (cfg) {
		fn(cfg, arg);
		n++;
	}
	for (i = 0; i < STT_KEY_HASH_SIZE; i++) {
		hlist_for_each_entry_rcu(stt, &sp->keys[i], hnode) {
			cfg = rcu_dereference(stt->cfg);
			if (cfg && stt_cfg_remote_is(cfg, ipv6, addr)) {
				fn(cfg, arg);
				n++;
			}
		}
	}
	return n;
}

/* Undo a port record created by a request that then failed: a refused
 * request must not leave the port reserved, nor, if it was the
 * namespace's first, the namespace hooked.  RTNL held, no device on it.
 */
void stt_port_put_new(struct stt_net *sn, struct stt_port *sp)
{
	list_del_rcu(&sp->list);
	stt_port_sock_release(sp);
	kfree_rcu(sp, rcu);
	stt_net_deactivate_unused(sn);
}

/* Namespace exit: hooks are unregistered and no device is left. */
void stt_ports_free(struct stt_net *sn)
{
	struct stt_port *sp, *tmp;

	list_for_each_entry_safe(sp, tmp, &sn->port_list, list) {
		list_del(&sp->list);
		stt_port_sock_release(sp);
		kfree(sp);
	}
}

/* Would @cfg clash with a device already on its port?  RTNL held. */
int stt_port_check_clash(struct stt_port *sp, struct stt_dev *self,
			 const struct stt_config *cfg,
			 struct netlink_ext_ack *extack)
{
	struct stt_dev *other;

	if (cfg->collect_md) {
		other = rtnl_dereference(sp->md_dev);
		if (other && other != self) {
			NL_SET_ERR_MSG(extack,
				       "An external STT device already uses this destination port");
			return -EBUSY;
		}
		return 0;
	}

	hlist_for_each_entry(other, stt_port_chain(sp, cfg->key.tun_id),
			     hnode) {
		const struct stt_config *ocfg = rtnl_dereference(other->cfg);

		if (other == self || ocfg->key.tun_id != cfg->key.tun_id)
			continue;
		if (stt_cfg_remote_is(ocfg, cfg->ipv6, stt_cfg_remote(cfg))) {
			NL_SET_ERR_MSG(extack,
				       "An STT device with this port, key and remote already exists");
			return -EBUSY;
		}
	}
	return 0;
}

void stt_port_link(struct stt_dev *stt, struct stt_port *sp,
		   const struct stt_config *cfg)
{
	stt->port = sp;
	if (cfg->collect_md)
		rcu_assign_pointer(sp->md_dev, stt);
	else
		hlist_add_head_rcu(&stt->hnode,
				   stt_port_chain(sp, cfg->key.tun_id));
}

void stt_port_unlink(struct stt_dev *stt, const struct stt_config *cfg)
{
	struct stt_port *sp = stt->port;

	if (!sp)
		return;
	if (cfg->collect_md) {
		if (rtnl_dereference(sp->md_dev) == stt)
			RCU_INIT_POINTER(sp->md_dev, NULL);
	} else {
		hlist_del_init_rcu(&stt->hnode);
	}
	/* stt->port stays valid: ports live as long as the namespace. */
}

/* The device a frame for context ID @key from @remote (the outer source
 * address, as in stt_cfg_remote_is()) belongs to.  RCU held.
 */
struct stt_dev *stt_port_find_dev(struct stt_port *sp, __be64 key, bool ipv6,
				  const void *remote)
{
	struct stt_dev *stt;

	hlist_for_each_entry_rcu(stt, stt_port_chain(sp, key), hnode) {
		const struct stt_config *cfg = rcu_dereference(stt->cfg);

		if (cfg && cfg->key.tun_id == key &&
		    stt_cfg_remote_is(cfg, ipv6, remote))
			return stt;
	}
	return rcu_dereference(sp->md_dev);
}
