// SPDX-License-Identifier: GPL-2.0
/*
 * STT receive: take STT segments away from TCP, validate them, reassemble
 * what GRO did not merge, and hand the inner frame to its device with the
 * offload state (checksum, GSO, VLAN, ECN) the sender described.
 *
 * Hook point: NF_INET_LOCAL_IN, IPv4 and IPv6, registered per namespace at
 * namespace creation.  LOCAL_IN sees only packets routed to this host,
 * after IPv4 reassembly and after the filter table, so an operator's
 * INPUT rules apply to STT like to any service; the priority is just
 * before conntrack confirmation, so STT segments never occupy conntrack
 * entries.  Everything addressed to an STT port is stolen here, whether
 * or not a device is up: TCP never sees it and so never answers.  As TCP
 * would, every segment first passes the IPsec input policy (the hook runs
 * before TCP's own check, and after ESP was taken off).  ICMP errors are
 * looked at on their way (icmp.c: path MTU) and passed on.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/dst_metadata.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/tcp.h>
#include <net/xfrm.h>

#include "stt_private.h"

/* Smallest inner gso_size a received frame gets: see stt_apply_offloads. */
#define STT_MIN_RX_MSS		TCP_MIN_SND_MSS

/* Outer header facts, read before the outer headers are discarded. */
struct stt_outer {
	bool		ipv6;
	__be32		saddr4, daddr4;
	struct in6_addr	saddr6, daddr6;
	__be32		label;
	u8		tos;
	u8		ttl;
};

static void stt_read_outer(const struct sk_buff *skb, struct stt_outer *o)
{
	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		o->ipv6 = true;
		o->saddr6 = ip6h->saddr;
		o->daddr6 = ip6h->daddr;
		o->label = ip6_flowlabel(ip6h);
		o->tos = ipv6_get_dsfield(ip6h);
		o->ttl = ip6h->hop_limit;
	} else {
		const struct iphdr *iph = ip_hdr(skb);

		o->ipv6 = false;
		o->saddr4 = iph->saddr;
		o->daddr4 = iph->daddr;
		o->tos = iph->tos;
		o->ttl = iph->ttl;
	}
}

/* The ethertype the inner frame carries, looking through its in-band tags
 * as the sender's vlan_get_protocol() did when it described the offloads:
 * a QinQ frame keeps both tags in-band (the STT header carries one 802.1Q
 * tag, never an 802.1ad one), so its L3 header is two tags in.  At most
 * VLAN_MAX_DEPTH tags, like the sender.
 */
static __be16 stt_inner_proto(struct sk_buff *skb, unsigned int *l3off)
{
	__be16 proto = ((struct ethhdr *)skb->data)->h_proto;
	unsigned int depth = 0;

	*l3off = ETH_HLEN;
	while (eth_type_vlan(proto)) {
		struct vlan_hdr *vh;

		if (++depth > VLAN_MAX_DEPTH ||
		    !pskb_may_pull(skb, *l3off + VLAN_HLEN))
			return 0;
		vh = (struct vlan_hdr *)(skb->data + *l3off);
		proto = vh->h_vlan_encapsulated_proto;
		*l3off += VLAN_HLEN;
	}
	return proto;
}

/* Check the offload description against the frame it describes and apply
 * it to @skb (data at the inner Ethernet header).
 */
static int stt_apply_offloads(struct stt_dev *stt, struct sk_buff *skb,
			      const struct stthdr *sh, bool *gso)
{
	unsigned int l4 = sh->l4_offset, l3off, l4min, csum_off, hlen;
	u16 mss = ntohs(sh->mss);
	__be16 proto;

	*gso = false;
	if (!(sh->flags & STT_F_CSUM_PARTIAL)) {
		if (mss || l4)
			return -EINVAL;
		if (sh->flags & STT_F_CSUM_VERIFIED) {
			skb->ip_summed = CHECKSUM_UNNECESSARY;
			skb->csum_level = 0;
		} else if (skb->ip_summed == CHECKSUM_COMPLETE) {
			/* The outer segments' sums, pulled past every header
			 * so far, cover the inner frame: the inner stack
			 * validates its own checksum from them without a
			 * pass over the data.  That the outer sum was valid
			 * says nothing about the inner one.
			 */
			skb->csum_valid = 0;
		} else {
			/* The outer segments were validated (by the NIC, by
			 * GRO or by the hook) and the validation left
			 * csum_valid set, which the inner stack would take
			 * for its own checksum's: nothing checked that one.
			 */
			skb->ip_summed = CHECKSUM_NONE;
			skb->csum_valid = 0;
		}
		return 0;
	}

	proto = stt_inner_proto(skb, &l3off);
	if (sh->flags & STT_F_IPV4) {
		if (proto != htons(ETH_P_IP))
			return -EINVAL;
		l4min = l3off + sizeof(struct iphdr);
	} else {
		if (proto != htons(ETH_P_IPV6))
			return -EINVAL;
		l4min = l3off + sizeof(struct ipv6hdr);
	}
	csum_off = (sh->flags & STT_F_TCP) ? offsetof(struct tcphdr, check) :
					     offsetof(struct udphdr, check);
	hlen = l4 + ((sh->flags & STT_F_TCP) ? sizeof(struct tcphdr) :
					       sizeof(struct udphdr));
	if (l4 < l4min || hlen > skb->len || !pskb_may_pull(skb, hlen))
		return -EINVAL;
	if (!skb_partial_csum_set(skb, l4, csum_off))
		return -EINVAL;
	skb_set_network_header(skb, l3off);
	skb_set_transport_header(skb, l4);

	if (mss) {
		unsigned int thlen;

		if (!(sh->flags & STT_F_TCP))
			return -EINVAL;
		thlen = tcp_hdrlen(skb);
		if (thlen < sizeof(struct tcphdr) || l4 + thlen > skb->len ||
		    !pskb_may_pull(skb, l4 + thlen))
			return -EINVAL;
		hlen = l4 + thlen;
		/* The sender controls the MSS: one 64 KB frame with MSS 1
		 * would become 65,000 segments wherever the stack segments
		 * it (forwarding, a NIC).  Nothing Linux TCP sends is below
		 * TCP_MIN_SND_MSS, the floor it set itself for the same
		 * reason (CVE-2019-11477).
		 */
		if (mss < STT_MIN_RX_MSS) {
			mss = STT_MIN_RX_MSS;
			stt_dev_inc(stt, STT_DEV_RX_MSS_CLAMPED);
		}
		if (skb->len - hlen > mss) {
			skb_shinfo(skb)->gso_size = mss;
			skb_shinfo(skb)->gso_type = SKB_GSO_DODGY |
				((sh->flags & STT_F_IPV4) ? SKB_GSO_TCPV4 :
							    SKB_GSO_TCPV6);
			skb_shinfo(skb)->gso_segs =
				DIV_ROUND_UP(skb->len - hlen, mss);
			*gso = true;
		}
	}
	return 0;
}

static enum stt_ns_stat stt_errno_reason(int err)
{
	return err == -ENOMEM ? STT_NS_DROP_NOMEM : STT_NS_DROP_OFFLOAD;
}

/* A whole STT frame: skb->data at the STT header, skb->len = frame length,
 * the network header still at the outer IP header of its first segment.
 */
void stt_rcv_frame(struct stt_net *sn, struct sk_buff *skb,
		   unsigned int nsegs)
{
	__be16 dport = STT_SEG_CB(skb)->dport;
	__be16 sport = STT_SEG_CB(skb)->sport;
	bool ce = STT_SEG_CB(skb)->ecn_ce;
	const struct stt_config *cfg;
	enum stt_ns_stat why;
	struct stt_outer o;
	struct stt_dev *stt;
	struct stt_port *sp;
	const void *remote;
	struct stthdr sh;
	u16 tci;
	bool gso;
	u8 inner_ds;
	int err;

	stt_read_outer(skb, &o);
	if (ce)
		o.tos |= INET_ECN_CE;

	/* No longer a TCP packet: whatever GRO or the sender set up for the
	 * outer segments does not describe the inner frame.  A frame that
	 * shares its head with another owner is copied first, unless that
	 * owner keeps only its payload (skb_header_release()): a sending
	 * TCP on this host (veth), which refills these fields itself on
	 * every transmission, as stt_prepare_skb() relies on too.
	 */
	if (skb_header_unclone(skb, GFP_ATOMIC)) {
		why = STT_NS_DROP_NOMEM;
		goto drop;
	}
	skb_shinfo(skb)->gso_size = 0;
	skb_shinfo(skb)->gso_type = 0;
	skb_shinfo(skb)->gso_segs = 0;

	if (!pskb_may_pull(skb, STT_MIN_FRAME_LEN)) {
		why = STT_NS_DROP_BAD_LEN;
		goto drop;
	}
	memcpy(&sh, skb->data, sizeof(sh));
	if (sh.version != STT_VERSION) {
		why = STT_NS_DROP_VERSION;
		goto drop;
	}
	if (sh.flags & STT_F_RESERVED) {
		why = STT_NS_DROP_FLAGS;
		goto drop;
	}
	tci = ntohs(sh.vlan_tci);
	if (tci && !(tci & STT_VLAN_VALID)) {
		why = STT_NS_DROP_VLAN;
		goto drop;
	}

	/* The frame's remote is the outer source address. */
	remote = o.ipv6 ? (const void *)&o.saddr6 : &o.saddr4;
	sp = stt_port_lookup(sn, dport);
	stt = sp ? stt_port_find_dev(sp, sh.key, o.ipv6, remote) : NULL;
	if (!stt || !netif_running(stt->dev)) {
		why = STT_NS_DROP_NO_DEV;
		goto drop;
	}

	skb_postpull_rcsum(skb, skb->data, STT_HLEN);
	__skb_pull(skb, STT_HLEN);
	skb_reset_mac_header(skb);
	err = stt_apply_offloads(stt, skb, &sh, &gso);
	if (err) {
		why = stt_errno_reason(err);
		goto drop;
	}
	if (gso && skb_has_frag_list(skb)) {
		err = stt_fraglist_fit(skb);
		if (err < 0) {
			why = stt_errno_reason(err);
			goto drop;
		}
		if (err == 1)
			stt_dev_inc(stt, STT_DEV_RX_FRAGLIST_FIXUP);
		else if (err == 2)
			stt_dev_inc(stt, STT_DEV_RX_LINEARIZED);
	}

	skb_scrub_packet(skb, !net_eq(sn->net, dev_net(stt->dev)));
	/* The underlay's receive queue is not one of ours (RPS would look
	 * it up among the STT device's queues and WARN): none recorded.
	 */
	skb_set_queue_mapping(skb, 0);
	if (tci & STT_VLAN_VALID)
		__vlan_hwaccel_put_tag(skb, htons(ETH_P_8021Q),
				       tci & ~STT_VLAN_VALID);

	cfg = rcu_dereference(stt->cfg);
	if (unlikely(!cfg)) {	/* being deleted */
		why = STT_NS_DROP_NO_DEV;
		goto drop;
	}
	if (cfg->collect_md) {
		struct metadata_dst *md;

		if (o.ipv6)
			md = stt_tun_dst6(&o.saddr6, &o.daddr6, o.tos, o.ttl,
					  dport, o.label, sh.key);
		else
			md = stt_tun_dst4(o.saddr4, o.daddr4, o.tos, o.ttl,
					  dport, sh.key);
		if (!md) {
			why = STT_NS_DROP_NOMEM;
			goto drop;
		}
		md->u.tun_info.key.tp_src = sport;
		skb_dst_set(skb, &md->dst);
	}

	skb->protocol = eth_type_trans(skb, stt->dev);
	skb_postpull_rcsum(skb, eth_hdr(skb), ETH_HLEN);
	skb_reset_network_header(skb);

	/* RFC 6040 decapsulation; CE on any segment marks the frame. */
	inner_ds = 0;
	if (skb->protocol == htons(ETH_P_IP) &&
	    pskb_may_pull(skb, sizeof(struct iphdr)))
		inner_ds = ipv4_get_dsfield(ip_hdr(skb));
	else if (skb->protocol == htons(ETH_P_IPV6) &&
		 pskb_may_pull(skb, sizeof(struct ipv6hdr)))
		inner_ds = ipv6_get_dsfield(ipv6_hdr(skb));
	if ((skb->protocol == htons(ETH_P_IP) ||
	     skb->protocol == htons(ETH_P_IPV6)) &&
	    INET_ECN_decapsulate(skb, o.tos, inner_ds) > 1) {
		DEV_STATS_INC(stt->dev, rx_frame_errors);
		why = STT_NS_DROP_ECN;
		goto drop;
	}

	if (nsegs > 1) {
		stt_dev_inc(stt, STT_DEV_RX_REASM);
		stt_dev_add(stt, STT_DEV_RX_REASM_SEGS, nsegs);
	} else {
		stt_dev_inc(stt, STT_DEV_RX_WHOLE);
	}
	if (gso)
		stt_dev_inc(stt, STT_DEV_RX_GSO);
	dev_sw_netstats_rx_add(stt->dev, skb->len);
	gro_cells_receive(&stt->gro_cells, skb);
	return;

drop:
	stt_ns_inc(sn, why);
	kfree_skb(skb);
}

/* One STT segment, skb->data at the outer TCP header (transport header
 * set), skb->len covering TCP header and payload.  Consumes @skb.
 */
static void stt_rcv_segment(struct stt_net *sn, struct sk_buff *skb,
			    bool ipv6)
{
	unsigned int nsegs = 1, payload;
	enum stt_ns_stat why;
	struct tcphdr *th;
	u32 seq;
	u8 tos;

	stt_ns_inc(sn, STT_NS_RX_SEGS);
	if (!pskb_may_pull(skb, sizeof(struct tcphdr))) {
		why = STT_NS_DROP_TRUNCATED;
		goto drop;
	}

	/* TCP fraglist GRO (6.10 on, rx-gro-list) validated every segment
	 * it chained, and leaves a CHECKSUM_COMPLETE head's sum covering
	 * the head alone: what it validated is valid, the sum is not.
	 */
	if (skb->ip_summed == CHECKSUM_COMPLETE && skb_is_gso(skb) &&
	    (skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST))
		skb->ip_summed = CHECKSUM_UNNECESSARY;

	/* The checksum first: nothing in the segment is trusted before. */
	if (ipv6) {
		if (skb_checksum_init(skb, IPPROTO_TCP, ip6_compute_pseudo))
			goto bad_csum;
	} else {
		if (skb_checksum_init(skb, IPPROTO_TCP, inet_compute_pseudo))
			goto bad_csum;
	}
	if (skb_checksum_complete(skb))
		goto bad_csum;

	th = tcp_hdr(skb);
	if (th->doff != sizeof(*th) / 4 || !th->ack ||
	    th->syn || th->rst || th->fin || th->urg) {
		why = STT_NS_DROP_TCP_FLAGS;
		goto drop;
	}
	payload = skb->len - sizeof(*th);
	if (!payload) {
		why = STT_NS_DROP_EMPTY;
		goto drop;
	}
	seq = ntohl(th->seq);
	STT_SEG_CB(skb)->frame_len = seq >> 16;
	STT_SEG_CB(skb)->offset = seq & 0xffff;
	STT_SEG_CB(skb)->frame_id = th->ack_seq;
	STT_SEG_CB(skb)->sport = th->source;
	STT_SEG_CB(skb)->dport = th->dest;
	tos = ipv6 ? ipv6_get_dsfield(ipv6_hdr(skb)) : ip_hdr(skb)->tos;
	STT_SEG_CB(skb)->ecn_ce = INET_ECN_is_ce(tos);

	if (STT_SEG_CB(skb)->frame_len < STT_MIN_FRAME_LEN) {
		why = STT_NS_DROP_BAD_LEN;
		goto drop;
	}
	if (STT_SEG_CB(skb)->offset + payload > STT_SEG_CB(skb)->frame_len) {
		why = STT_NS_DROP_BAD_OFFSET;
		goto drop;
	}

	/* A CHECKSUM_COMPLETE sum, the NIC's or the one the validation
	 * above computed, then covers the payload alone: reassembly adds
	 * the segments' sums up and the inner frame can use them.
	 */
	skb_postpull_rcsum(skb, th, sizeof(*th));
	__skb_pull(skb, sizeof(*th));
	if (payload != STT_SEG_CB(skb)->frame_len) {
		skb = stt_reasm_add(sn, skb, &nsegs);
		if (!skb)
			return;
	}
	stt_rcv_frame(sn, skb, nsegs);
	return;

bad_csum:
	why = STT_NS_DROP_CSUM;
drop:
	stt_ns_inc(sn, why);
	kfree_skb(skb);
}

/* An outer packet to our port that is no STT segment we accept: count it
 * as a segment and as @why, and keep it from TCP.
 */
static unsigned int stt_hook_drop(struct stt_net *sn, struct sk_buff *skb,
				  enum stt_ns_stat why)
{
	stt_ns_inc(sn, STT_NS_RX_SEGS);
	stt_ns_inc(sn, why);
	kfree_skb(skb);
	return NF_STOLEN;
}

static unsigned int stt_hook4(struct sk_buff *skb,
			      const struct nf_hook_state *state)
{
	struct stt_net *sn = stt_pernet(state->net);
	const struct iphdr *iph = ip_hdr(skb);
	__be16 _ports[2];
	const __be16 *ports;
	unsigned int thoff;

	if (list_empty(&sn->port_list))
		return NF_ACCEPT;
	if (iph->protocol == IPPROTO_ICMP) {
		stt_icmp4_rcv(sn, skb);
		return NF_ACCEPT;
	}
	if (iph->protocol != IPPROTO_TCP)
		return NF_ACCEPT;
	thoff = skb_network_offset(skb) + ip_hdrlen(skb);
	ports = skb_header_pointer(skb, thoff, sizeof(_ports), _ports);
	if (!ports || !stt_port_lookup(sn, ports[1]))
		return NF_ACCEPT;

	/* Ours from here on: TCP must never see it.  IP reassembled it
	 * when a router fragmented a segment sent without DF ("df unset"):
	 * IP's own limits bound that, the checksum covers it, take it.
	 */
	if (IPCB(skb)->frag_max_size)
		stt_ns_inc(sn, STT_NS_RX_OUTER_REASM);
	/* The IPsec input policy TCP or a UDP tunnel would apply: a
	 * plaintext segment where ESP is required goes no further.
	 */
	if (!xfrm4_policy_check(NULL, XFRM_POLICY_IN, skb))
		return stt_hook_drop(sn, skb, STT_NS_DROP_POLICY);
	__skb_pull(skb, thoff);
	skb_reset_transport_header(skb);
	stt_rcv_segment(sn, skb, false);
	return NF_STOLEN;
}

#if IS_ENABLED(CONFIG_IPV6)
/* Is there a fragment header (even an atomic one) before the L4 header? */
static bool stt_ipv6_has_frag_hdr(const struct sk_buff *skb, int off)
{
	u8 nexthdr = ipv6_hdr(skb)->nexthdr;

	while (ipv6_ext_hdr(nexthdr) && nexthdr != NEXTHDR_NONE) {
		struct ipv6_opt_hdr _hdr;
		const struct ipv6_opt_hdr *hp;

		if (nexthdr == NEXTHDR_FRAGMENT)
			return true;
		hp = skb_header_pointer(skb, off, sizeof(_hdr), &_hdr);
		if (!hp)
			return false;
		if (nexthdr == NEXTHDR_AUTH)
			off += ipv6_authlen(hp);
		else
			off += ipv6_optlen(hp);
		nexthdr = hp->nexthdr;
	}
	return false;
}

static unsigned int stt_hook6(struct sk_buff *skb,
			      const struct nf_hook_state *state)
{
	struct stt_net *sn = stt_pernet(state->net);
	u8 nexthdr = ipv6_hdr(skb)->nexthdr;
	unsigned int thoff = skb_network_offset(skb) + sizeof(struct ipv6hdr);
	__be16 _ports[2], frag_off = 0;
	const __be16 *ports;
	int off;

	if (list_empty(&sn->port_list))
		return NF_ACCEPT;
	if (nexthdr == IPPROTO_ICMPV6) {
		stt_icmp6_rcv(sn, skb, thoff);
		return NF_ACCEPT;
	}
	if (nexthdr != IPPROTO_TCP) {
		if (!ipv6_ext_hdr(nexthdr))
			return NF_ACCEPT;
		off = ipv6_skip_exthdr(skb, thoff, &nexthdr, &frag_off);
		if (off < 0 || nexthdr != IPPROTO_TCP)
			return NF_ACCEPT;
		ports = skb_header_pointer(skb, off, sizeof(_ports), _ports);
		if (!ports || !stt_port_lookup(sn, ports[1]))
			return NF_ACCEPT;
		/* Senders put TCP right after the IPv6 header and never
		 * fragment; after our hook IPv6 would reassemble and hand
		 * the result to TCP, which would answer.  Drop.
		 */
		return stt_hook_drop(sn, skb,
				     stt_ipv6_has_frag_hdr(skb, thoff) ?
				     STT_NS_DROP_OUTER_FRAG :
				     STT_NS_DROP_OUTER_EXTHDR);
	}
	ports = skb_header_pointer(skb, thoff, sizeof(_ports), _ports);
	if (!ports || !stt_port_lookup(sn, ports[1]))
		return NF_ACCEPT;
	if (IP6CB(skb)->flags & IP6SKB_FRAGMENTED) {
		/* nf_defrag_ipv6 reassembled it before us: same verdict as
		 * for fragments seen one by one.
		 */
		return stt_hook_drop(sn, skb, STT_NS_DROP_OUTER_FRAG);
	}
	if (!xfrm6_policy_check(NULL, XFRM_POLICY_IN, skb))
		return stt_hook_drop(sn, skb, STT_NS_DROP_POLICY);

	/* A CHECKSUM_COMPLETE sum covers the IPv6 header too; IPv6 takes
	 * it out only on delivery, after this hook.  (IPv4 need not: a
	 * valid IPv4 header sums to zero.)
	 */
	skb_postpull_rcsum(skb, skb->data, thoff);
	__skb_pull(skb, thoff);
	skb_reset_transport_header(skb);
	stt_rcv_segment(sn, skb, true);
	return NF_STOLEN;
}
#endif

/* The hooks run in softirq context, except after an NFQUEUE verdict:
 * nf_reinject() runs the remaining hooks from the verdict's sendmsg(), in
 * process context with bottom halves enabled.  Everything behind them
 * assumes softirq: gro_cells' per-CPU queue and its NAPI poll, and the
 * per-CPU statistics, whose writers a softirq on the same CPU must not
 * interrupt where 64-bit counters are not atomic (32-bit: a seqcount and
 * plain adds; the ICMP and drop counts as much as receive's).  Nested in
 * softirq context, local_bh_disable() costs next to nothing.
 */
static unsigned int stt_nf_hook4(void *priv, struct sk_buff *skb,
				 const struct nf_hook_state *state)
{
	unsigned int verdict;

	local_bh_disable();
	verdict = stt_hook4(skb, state);
	local_bh_enable();
	return verdict;
}

#if IS_ENABLED(CONFIG_IPV6)
static unsigned int stt_nf_hook6(void *priv, struct sk_buff *skb,
				 const struct nf_hook_state *state)
{
	unsigned int verdict;

	local_bh_disable();
	verdict = stt_hook6(skb, state);
	local_bh_enable();
	return verdict;
}
#endif

static const struct nf_hook_ops stt_nf_ops[] = {
	{
		.hook		= stt_nf_hook4,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_LOCAL_IN,
		.priority	= NF_IP_PRI_CONNTRACK_CONFIRM - 1,
	},
#if IS_ENABLED(CONFIG_IPV6)
	{
		.hook		= stt_nf_hook6,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_LOCAL_IN,
		.priority	= NF_IP6_PRI_LAST - 1,
	},
#endif
};

int stt_hooks_register(struct net *net)
{
	return nf_register_net_hooks(net, stt_nf_ops, ARRAY_SIZE(stt_nf_ops));
}

void stt_hooks_unregister(struct net *net)
{
	nf_unregister_net_hooks(net, stt_nf_ops, ARRAY_SIZE(stt_nf_ops));
}
