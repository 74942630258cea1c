// SPDX-License-Identifier: GPL-2.0
/*
 * STT and ICMP: path MTU discovery for the outer segments.
 *
 * A router that cannot forward an outer segment (DF set) answers its
 * sender with ICMP "fragmentation needed" or ICMPv6 "packet too big",
 * quoting the segment's IP header and the start of its TCP header.  The
 * stack hands those to TCP, which finds no socket for an STT flow and
 * ignores them: the path MTU never shrinks and every large frame is lost.
 * So the receive hooks look at them first.  One that quotes a segment of
 * ours (TCP to an STT port this namespace serves, towards a remote a
 * device sends to, from the address the ICMP was sent to, with a valid
 * ICMP checksum, allowed by the IPsec input policy) updates the path MTU
 * of the route to that remote, once for every device that sends there,
 * looked up by that device's underlay link as xmit.c does: a device bound
 * with "dev" to a link that is not the preferred way to its remote has a
 * route (next hop, exception) of its own.  The kernel's own rules apply:
 * min_pmtu (552 by default) is a floor, IPv6 ignores values below 1280,
 * learned values expire after mtu_expires.
 *
 * The next frames are then cut by TSO or GSO to the smaller outer MSS,
 * which xmit.c takes from the route.  The inner MTU does not change and
 * the inner sender is never told: an STT frame of any size up to 64 KB
 * crosses any path that carries the IP minimum, in more segments.
 *
 * The ICMP message itself always continues to the stack.
 */

#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/netfilter.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/xfrm.h>

#include "stt_private.h"

#if IS_ENABLED(CONFIG_IPV6)
#include <net/addrconf.h>
#endif

/* The start of the quoted TCP header: all an ICMP message must carry. */
struct stt_icmp_quote {
	__be16		sport;
	__be16		dport;
};

/* What an ICMP message teaches, for stt_port_walk_senders(). */
struct stt_pmtu {
	struct net	*net;
	struct sk_buff	*skb;	/* data (v4) or network header (v6): the quote */
	u32		mtu;
};

/* Is the ICMP message at @off of @skb intact (checksum)? */
static bool stt_icmp_csum_ok(struct sk_buff *skb, unsigned int off, u8 proto,
			     u8 family)
{
	return !nf_checksum(skb, NF_INET_LOCAL_IN, off, proto, family);
}

/* The IPv4 route lookup binds to the link whatever the source address,
 * as transmit's does.
 */
static void stt_pmtu4_learn(const struct stt_config *cfg, void *arg)
{
	const struct stt_pmtu *u = arg;

	ipv4_update_pmtu(u->skb, u->net, u->mtu, cfg->link, IPPROTO_TCP);
}

void stt_icmp4_rcv(struct stt_net *sn, struct sk_buff *skb)
{
	unsigned int off = skb_network_offset(skb) + ip_hdrlen(skb);
	const struct stt_icmp_quote *q;
	struct stt_icmp_quote _q;
	const struct icmphdr *ih;
	const struct iphdr *qiph;
	struct icmphdr _ih;
	struct iphdr _qiph;
	struct stt_port *sp;
	struct stt_pmtu u;
	unsigned int qoff;
	unsigned int n;

	ih = skb_header_pointer(skb, off, sizeof(_ih), &_ih);
	if (!ih || ih->type != ICMP_DEST_UNREACH ||
	    ih->code != ICMP_FRAG_NEEDED)
		return;
	qoff = off + sizeof(_ih);
	qiph = skb_header_pointer(skb, qoff, sizeof(_qiph), &_qiph);
	if (!qiph || qiph->version != 4 || qiph->ihl < 5 ||
	    qiph->protocol != IPPROTO_TCP || (qiph->frag_off & htons(IP_OFFSET)))
		return;
	q = skb_header_pointer(skb, qoff + qiph->ihl * 4, sizeof(_q), &_q);
	if (!q)
		return;
	sp = stt_port_lookup(sn, q->dport);
	if (!sp)
		return;	/* some other TCP's: not ours to judge */

	u.mtu = ntohs(ih->un.frag.mtu);
	if (!u.mtu || qiph->saddr != ip_hdr(skb)->daddr ||
	    !xfrm4_policy_check(NULL, XFRM_POLICY_IN, skb) ||
	    !stt_icmp_csum_ok(skb, off, IPPROTO_ICMP, NFPROTO_IPV4) ||
	    !pskb_may_pull(skb, qoff + qiph->ihl * 4)) {
		stt_ns_inc(sn, STT_NS_PMTU_IGNORED);
		return;
	}

	/* ipv4_update_pmtu() reads the quoted header at skb->data. */
	qiph = (const struct iphdr *)(skb->data + qoff);
	u.net = sn->net;
	u.skb = skb;
	__skb_pull(skb, qoff);
	n = stt_port_walk_senders(sp, false, &qiph->daddr, stt_pmtu4_learn,
				  &u);
	__skb_push(skb, qoff);
	stt_ns_inc(sn, n ? STT_NS_PMTU_LEARNED : STT_NS_PMTU_IGNORED);
}

#if IS_ENABLED(CONFIG_IPV6)
/* ip6_update_pmtu() would look the route up from the quoted source
 * address, and with a source address the IPv6 lookup only prefers the
 * link; transmit binds to it strictly (stt_route6_bound()).  So the route
 * is looked up as transmit does, with its key (an external device's
 * source is per packet: the quoted one), and the MTU given to that route.
 */
static void stt_pmtu6_learn(const struct stt_config *cfg, void *arg)
{
	const struct stt_pmtu *u = arg;
	const struct ipv6hdr *qip6h = ipv6_hdr(u->skb);
	struct flowi6 fl6 = {
		.flowi6_oif = cfg->link,
		.flowi6_mark = IP6_REPLY_MARK(u->net, u->skb->mark),
		.flowi6_proto = IPPROTO_TCP,
		.daddr = qip6h->daddr,
		.saddr = cfg->collect_md ? qip6h->saddr : cfg->key.u.ipv6.src,
		.flowi6_uid = sock_net_uid(u->net, NULL),
	};
	struct dst_entry *dst;

	dst = ip6_route_output_flags(u->net, NULL, &fl6,
				     cfg->link ? RT6_LOOKUP_F_IFACE : 0);
	if (!dst->error && dst->ops->update_pmtu)
		dst->ops->update_pmtu(dst, NULL, u->skb, u->mtu, true);
	dst_release(dst);
}

void stt_icmp6_rcv(struct stt_net *sn, struct sk_buff *skb, unsigned int off)
{
	const struct stt_icmp_quote *q;
	const struct ipv6hdr *qip6h;
	struct stt_icmp_quote _q;
	const struct icmp6hdr *ih;
	struct ipv6hdr _qip6h;
	struct icmp6hdr _ih;
	struct stt_port *sp;
	struct stt_pmtu u;
	unsigned int qoff;
	unsigned int n;
	int noff;

	ih = skb_header_pointer(skb, off, sizeof(_ih), &_ih);
	if (!ih || ih->icmp6_type != ICMPV6_PKT_TOOBIG || ih->icmp6_code)
		return;
	u.mtu = ntohl(ih->icmp6_mtu);
	qoff = off + sizeof(_ih);
	qip6h = skb_header_pointer(skb, qoff, sizeof(_qip6h), &_qip6h);
	/* Our senders put TCP right after the IPv6 header. */
	if (!qip6h || qip6h->version != 6 || qip6h->nexthdr != IPPROTO_TCP)
		return;
	q = skb_header_pointer(skb, qoff + sizeof(_qip6h), sizeof(_q), &_q);
	if (!q)
		return;
	sp = stt_port_lookup(sn, q->dport);
	if (!sp)
		return;

	if (!u.mtu ||
	    !ipv6_addr_equal(&qip6h->saddr, &ipv6_hdr(skb)->daddr) ||
	    !xfrm6_policy_check(NULL, XFRM_POLICY_IN, skb) ||
	    !stt_icmp_csum_ok(skb, off, IPPROTO_ICMPV6, NFPROTO_IPV6) ||
	    !pskb_may_pull(skb, qoff + sizeof(_qip6h))) {
		stt_ns_inc(sn, STT_NS_PMTU_IGNORED);
		return;
	}

	/* The route's update_pmtu reads the quoted header at the network
	 * header; the stack gets the ICMP message back as it was.
	 */
	noff = skb_network_offset(skb);
	skb_set_network_header(skb, qoff);
	u.net = sn->net;
	u.skb = skb;
	n = stt_port_walk_senders(sp, true, &ipv6_hdr(skb)->daddr,
				  stt_pmtu6_learn, &u);
	skb_set_network_header(skb, noff);
	stt_ns_inc(sn, n ? STT_NS_PMTU_LEARNED : STT_NS_PMTU_IGNORED);
}
#endif
