// SPDX-License-Identifier: GPL-2.0
/*
 * STT transmit: one inner packet (up to a 64 KB GSO packet) becomes one STT
 * frame behind a TCP-shaped header.  The frame is handed to IP as a TCP
 * GSO packet, so the underlay NIC's plain TSO (or software GSO) cuts it
 * into MTU-sized segments and writes SEQ offsets and checksums.  The inner
 * packet's own offload state (checksum partial, MSS) rides in the STT
 * header; nothing here copies or linearizes the payload.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/log2.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <net/dst_metadata.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ip_tunnels.h>
#include <net/route.h>
#include <net/tcp.h>
#include <net/udp.h>
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
#include <net/netfilter/nf_conntrack.h>
#endif

#include "stt_private.h"

/* Frame IDs only need to differ between frames in flight on one tunnel.
 * Each CPU counts on its own (no shared atomic) from a random start drawn
 * at module load, so after a restart the IDs are not those of frames a
 * receiver may still hold from before.  The CPU number fills the low
 * bits, as many as nr_cpu_ids needs, so no two CPUs send the same ID;
 * the counter has the other 32 - order_base_2(nr_cpu_ids) bits.
 */
static DEFINE_PER_CPU(u32, stt_frame_seq);
static unsigned int stt_frame_cpu_bits __read_mostly;

void stt_xmit_init(void)
{
	int cpu;

	stt_frame_cpu_bits = order_base_2(nr_cpu_ids);
	for_each_possible_cpu(cpu)
		per_cpu(stt_frame_seq, cpu) = get_random_u32();
}

static __be32 stt_next_frame_id(void)
{
	u32 seq = this_cpu_inc_return(stt_frame_seq);

	return htonl((seq << stt_frame_cpu_bits) | smp_processor_id());
}

/* What the receiver needs to rebuild the inner packet's offload state. */
struct stt_offload {
	u8	flags;
	u8	l4_offset;
	u16	mss;
};

/* Can the STT header describe @skb's checksum offload?  It names the L4
 * header by an 8-bit offset and knows only TCP and UDP over IPv4/IPv6.
 */
static bool stt_csum_describable(struct sk_buff *skb)
{
	__be16 proto;
	int start;

	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return true;
	if (skb->csum_not_inet)
		return false;
	proto = vlan_get_protocol(skb);
	if (proto != htons(ETH_P_IP) && proto != htons(ETH_P_IPV6))
		return false;
	start = skb_checksum_start_offset(skb);
	if (start < ETH_HLEN || start > U8_MAX)
		return false;
	return skb->csum_offset == offsetof(struct tcphdr, check) ||
	       skb->csum_offset == offsetof(struct udphdr, check);
}

/* Outer IPv4 total length is 16 bits: the whole outer packet must fit. */
#define STT_MAX_INNER_LEN \
	(IP_MAX_MTU - sizeof(struct iphdr) - STT_ENCAP_HLEN)

/* Can the STT header describe @skb's segmentation offload?  Only TCP over
 * IPv4/IPv6; TCP_ECN needs CWR on the first segment only, which is the
 * ECN-preserving segmentation the draft leaves to the sender.
 */
static bool stt_gso_describable(struct sk_buff *skb)
{
	unsigned int type = skb_shinfo(skb)->gso_type;

	if (type & ~(SKB_GSO_TCPV4 | SKB_GSO_TCPV6 | SKB_GSO_DODGY |
		     SKB_GSO_TCP_FIXEDID))
		return false;
	if (skb->ip_summed != CHECKSUM_PARTIAL ||
	    skb->csum_offset != offsetof(struct tcphdr, check))
		return false;
	if (!!(type & SKB_GSO_TCPV4) != (vlan_get_protocol(skb) == htons(ETH_P_IP)))
		return false;
	return skb->len <= STT_MAX_INNER_LEN;
}

/* Can the underlay cut @skb at any MSS, frag_list and all?  The outer
 * packet is segmented at the underlay's MSS, on which GRO's frag_list
 * members do not end, and in software (no NIC takes frag_lists).
 * skb_segment() splits page fragments anywhere, but takes a member with
 * linear data as one piece and BUG()s where that does not fit (kmalloc'ed
 * heads, as from a sender without scatter-gather).  Members with page
 * fragments only, which GRO builds from SG senders, are fine.
 */
static bool stt_fraglist_cuttable(const struct sk_buff *skb)
{
	const struct sk_buff *m;

	skb_walk_frags(skb, m)
		if (skb_headlen(m) || !skb_shinfo(m)->nr_frags ||
		    skb_has_frag_list(m))
			return false;
	return true;
}

/* Called by the core before xmit: strip what the STT header cannot carry
 * so that validate_xmit_skb() segments or checksums in software first.
 */
netdev_features_t stt_features_check(struct sk_buff *skb,
				     struct net_device *dev,
				     netdev_features_t features)
{
	struct stt_dev *stt = netdev_priv(dev);

	/* Then the core segments it (GSO: into GSO packets where the
	 * members allow) or linearizes it: the inner packet stays whole
	 * only where the outer one can be cut.
	 */
	if (skb_has_frag_list(skb) && !stt_fraglist_cuttable(skb)) {
		stt_dev_inc(stt, STT_DEV_TX_FRAGLIST_UNFIT);
		features &= ~NETIF_F_FRAGLIST;
	}
	if (!stt_csum_describable(skb)) {
		stt_dev_inc(stt, skb_is_gso(skb) ? STT_DEV_TX_SW_SEGMENTED :
						   STT_DEV_TX_CSUM_HELP);
		return features & ~(NETIF_F_CSUM_MASK | NETIF_F_GSO_MASK);
	}
	if (skb_is_gso(skb) && !stt_gso_describable(skb)) {
		stt_dev_inc(stt, STT_DEV_TX_SW_SEGMENTED);
		return features & ~NETIF_F_GSO_MASK;
	}
	return features;
}

static void stt_describe(const struct sk_buff *skb, struct stt_offload *o)
{
	o->flags = 0;
	o->l4_offset = 0;
	o->mss = 0;

	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		o->flags |= STT_F_CSUM_PARTIAL;
		if (skb->csum_offset == offsetof(struct tcphdr, check))
			o->flags |= STT_F_TCP;
		if (vlan_get_protocol((struct sk_buff *)skb) == htons(ETH_P_IP))
			o->flags |= STT_F_IPV4;
		o->l4_offset = skb_checksum_start_offset(skb);
	} else if (skb->ip_summed == CHECKSUM_UNNECESSARY) {
		o->flags |= STT_F_CSUM_VERIFIED;
	}
	if (skb_is_gso(skb))
		o->mss = skb_shinfo(skb)->gso_size;
}

/* Outer parameters of one packet, resolved before the skb is rewritten
 * (in external mode the tunnel info lives in the dst we are about to drop).
 */
struct stt_tx_params {
	struct ip_tunnel_key	key;
	bool			ipv6;
	bool			ttl_inherit;
	bool			use_cache;
	enum ifla_stt_df	df;
	int			link;
	struct dst_cache	*dst_cache;
	__be16			sport;
};

static u8 stt_inner_dsfield(struct sk_buff *skb)
{
	__be16 proto = vlan_get_protocol(skb);
	int off = skb_network_offset(skb);
	u8 ds = 0;

	if (proto == htons(ETH_P_IP)) {
		struct iphdr _iph;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
		if (iph)
			ds = ipv4_get_dsfield(iph);
	} else if (proto == htons(ETH_P_IPV6)) {
		struct ipv6hdr _ip6h;
		const struct ipv6hdr *ip6h;

		ip6h = skb_header_pointer(skb, off, sizeof(_ip6h), &_ip6h);
		if (ip6h)
			ds = ipv6_get_dsfield(ip6h);
	}
	return ds;
}

static u8 stt_inner_ttl(struct sk_buff *skb, u8 dflt)
{
	__be16 proto = vlan_get_protocol(skb);
	int off = skb_network_offset(skb);

	if (proto == htons(ETH_P_IP)) {
		struct iphdr _iph;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
		if (iph)
			return iph->ttl;
	} else if (proto == htons(ETH_P_IPV6)) {
		struct ipv6hdr _ip6h;
		const struct ipv6hdr *ip6h;

		ip6h = skb_header_pointer(skb, off, sizeof(_ip6h), &_ip6h);
		if (ip6h)
			return ip6h->hop_limit;
	}
	return dflt;
}

static bool stt_inner_df(struct sk_buff *skb)
{
	struct iphdr _iph;
	const struct iphdr *iph;

	if (vlan_get_protocol(skb) != htons(ETH_P_IP))
		return false;
	iph = skb_header_pointer(skb, skb_network_offset(skb), sizeof(_iph),
				 &_iph);
	return iph && (iph->frag_off & htons(IP_DF));
}

/* RFC 6040 normal mode: the outer ECN field is a copy of the inner one. */
static u8 stt_outer_tos(u8 dscp_tos, u8 inner)
{
	return (dscp_tos & ~INET_ECN_MASK) | (inner & INET_ECN_MASK);
}

/* Make room for the outer headers.  stt_push_headers() rewrites the GSO
 * fields of the shared info in place, as UDP tunnels do after
 * skb_header_unclone(): TCP transmits clones whose head it shares only
 * with an original that keeps its payload alone (skb_header_release())
 * and refills those fields itself on every transmission, so such a
 * clone is written as it is.  A head another owner holds whole (a packet
 * tap's clone, a bridge's flood) is copied first.
 */
static int stt_prepare_skb(struct sk_buff *skb, unsigned int headroom)
{
	return skb_cow_head(skb, headroom);
}

static int stt_route_error(struct stt_dev *stt, int err)
{
	stt_dev_inc(stt, err == -ELOOP ? STT_DEV_TX_LOOP : STT_DEV_TX_NO_ROUTE);
	if (err != -ELOOP)
		DEV_STATS_INC(stt->dev, tx_carrier_errors);
	return err;
}

/* ip_local_out() took the skb; account what it said. */
static void stt_xmit_done(struct stt_dev *stt, int err, unsigned int pkt_len,
			  bool gso)
{
	if (unlikely(net_xmit_eval(err))) {
		DEV_STATS_INC(stt->dev, tx_dropped);
		return;
	}
	stt_dev_inc(stt, STT_DEV_TX_FRAMES);
	if (gso)
		stt_dev_inc(stt, STT_DEV_TX_GSO);
	iptunnel_xmit_stats(stt->dev, pkt_len);
}

/* The outer MSS over a route of @mtu bytes with @hlen bytes of IP and TCP
 * headers. A route's MTU metric has no lower bound ("ip route add ... mtu
 * 40" is accepted, for IPv6 too): without a floor the MSS would be zero
 * (a division by zero below) or a few bytes (a frame cut into thousands of
 * segments). TCP's own floor serves; what then exceeds the route's MTU is
 * IP's to fragment or refuse, as for any packet.
 */
static unsigned int stt_outer_mss(unsigned int mtu, unsigned int hlen)
{
	return max_t(int, (int)mtu - (int)hlen, TCP_MIN_SND_MSS);
}

/* Describe the inner packet (offloads, VLAN tag) in an STT header, push
 * it and the outer TCP header, and mark the result for TSO with @mss.
 */
static void stt_push_headers(struct sk_buff *skb,
			     const struct stt_tx_params *p, unsigned int mss)
{
	unsigned int frame_len;
	struct stt_offload o;
	struct stthdr *sh;
	struct tcphdr *th;
	u16 vlan_tci = 0;

	if (skb_vlan_tag_present(skb)) {
		vlan_tci = (skb_vlan_tag_get(skb) & ~VLAN_CFI_MASK) |
			   STT_VLAN_VALID;
		__vlan_hwaccel_clear_tag(skb);
	}
	stt_describe(skb, &o);
	skb_reset_inner_headers(skb);

	frame_len = skb->len + STT_HLEN;
	sh = __skb_push(skb, STT_HLEN);
	sh->version = STT_VERSION;
	sh->flags = o.flags;
	sh->l4_offset = o.l4_offset;
	sh->reserved = 0;
	sh->mss = htons(o.mss);
	sh->vlan_tci = htons(vlan_tci);
	sh->key = p->key.tun_id;
	sh->pad[0] = 0;
	sh->pad[1] = 0;

	th = __skb_push(skb, sizeof(*th));
	skb_reset_transport_header(skb);
	memset(th, 0, sizeof(*th));
	th->source = p->sport;
	th->dest = p->key.tp_dst;
	th->seq = htonl(frame_len << 16);	/* length | offset 0 */
	th->ack_seq = stt_next_frame_id();
	th->doff = sizeof(*th) / 4;
	th->ack = 1;
	th->psh = 1;	/* TSO keeps PSH on the last segment only */
	th->window = htons(0xffff);

	skb->encapsulation = 0;
	skb->csum_not_inet = 0;
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct tcphdr, check);

	if (frame_len > mss) {
		skb_shinfo(skb)->gso_type = p->ipv6 ? SKB_GSO_TCPV6 :
						      SKB_GSO_TCPV4;
		skb_shinfo(skb)->gso_size = mss;
		skb_shinfo(skb)->gso_segs = DIV_ROUND_UP(frame_len, mss);
	} else if (skb_is_gso(skb)) {
		/* shared info is writable (stt_prepare_skb) */
		skb_shinfo(skb)->gso_type = 0;
		skb_shinfo(skb)->gso_size = 0;
		skb_shinfo(skb)->gso_segs = 0;
	}
}

/* The outer packet is ours, not a connection: keep it out of conntrack so
 * STT flows do not fill the table (see stt.rst, "Firewalls").
 */
static void stt_untrack(struct sk_buff *skb)
{
	nf_reset_ct(skb);
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
	nf_ct_set(skb, NULL, IP_CT_UNTRACKED);
#endif
}

static struct rtable *stt_route4(struct stt_dev *stt, struct sk_buff *skb,
				 const struct stt_tx_params *p, u8 tos,
				 struct flowi4 *fl4)
{
	struct rtable *rt = NULL;

	memset(fl4, 0, sizeof(*fl4));
	fl4->flowi4_oif = p->link;
	fl4->flowi4_mark = skb->mark;
	fl4->flowi4_proto = IPPROTO_TCP;
	stt_fl4_set_tos(fl4, tos);
	fl4->flowi4_flags = p->key.flow_flags;
	fl4->daddr = p->key.u.ipv4.dst;
	fl4->saddr = p->key.u.ipv4.src;
	fl4->fl4_sport = p->sport;
	fl4->fl4_dport = p->key.tp_dst;

	if (p->use_cache) {
		rt = dst_cache_get_ip4(p->dst_cache, &fl4->saddr);
		if (rt)
			return rt;
	}
	rt = ip_route_output_key(stt->net, fl4);
	if (IS_ERR(rt))
		return rt;
	if (rt->dst.dev == stt->dev) {
		ip_rt_put(rt);
		return ERR_PTR(-ELOOP);
	}
	if (p->use_cache)
		dst_cache_set_ip4(p->dst_cache, &rt->dst, fl4->saddr);
	return rt;
}

static int stt_xmit4(struct stt_dev *stt, struct sk_buff *skb,
		     const struct stt_tx_params *p)
{
	unsigned int pkt_len = skb->len - skb_network_offset(skb);
	bool gso = skb_is_gso(skb);
	struct net_device *dev = stt->dev;
	u8 inner_ds = stt_inner_dsfield(skb);
	struct flowi4 fl4;
	struct tcphdr *th;
	struct rtable *rt;
	struct iphdr *iph;
	unsigned int mss;
	u8 tos, ttl;
	__be16 df;
	int err;

	tos = p->key.tos;
	rt = stt_route4(stt, skb, p, tos & ~INET_ECN_MASK, &fl4);
	if (IS_ERR(rt))
		return stt_route_error(stt, PTR_ERR(rt));

	tos = stt_outer_tos(tos, inner_ds);
	ttl = p->ttl_inherit ? stt_inner_ttl(skb, 0) : p->key.ttl;
	if (!ttl)
		ttl = ip4_dst_hoplimit(&rt->dst);
	if (p->df == STT_DF_SET)
		df = htons(IP_DF);
	else if (p->df == STT_DF_INHERIT && stt_inner_df(skb))
		df = htons(IP_DF);
	else
		df = 0;

	/* header_len: what an IPsec transform adds in front (ESP). */
	mss = stt_outer_mss(dst_mtu(&rt->dst),
			    sizeof(*iph) + sizeof(struct tcphdr));
	err = stt_prepare_skb(skb, LL_RESERVED_SPACE(rt->dst.dev) +
			      rt->dst.header_len + sizeof(*iph) +
			      STT_ENCAP_HLEN);
	if (err)
		goto err_rt;

	stt_push_headers(skb, p, mss);
	th = tcp_hdr(skb);
	th->check = ~tcp_v4_check(skb->len, fl4.saddr, fl4.daddr, 0);

	skb_scrub_packet(skb, !net_eq(stt->net, dev_net(dev)));
	skb_clear_hash_if_not_l4(skb);
	skb_dst_set(skb, &rt->dst);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	stt_untrack(skb);

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->frag_off = ip_mtu_locked(&rt->dst) ? 0 : df;
	iph->protocol = IPPROTO_TCP;
	iph->tos = tos;
	iph->daddr = fl4.daddr;
	iph->saddr = fl4.saddr;
	iph->ttl = ttl;
	/* As iptunnel_xmit() does: a DF packet is atomic (RFC 6864) and
	 * takes ID 0, which TSO counts up per segment; only a packet that
	 * may be fragmented needs the hashed generator's unique IDs.
	 */
	ip_select_ident_segs(stt->net, skb, NULL,
			     skb_shinfo(skb)->gso_segs ?: 1);
	skb->protocol = htons(ETH_P_IP);

	stt_xmit_done(stt, ip_local_out(stt->net, NULL, skb), pkt_len, gso);
	return 0;

err_rt:
	ip_rt_put(rt);
	return err;
}

#if IS_ENABLED(CONFIG_IPV6)
/* With a source address given, IPv6 takes flowi6_oif as a preference:
 * ip6_route_output_flags_noref() asks strictly only for an unspecified
 * source, a link-local, multicast or loopback destination or a bound
 * socket, so a better route through another device would win. The
 * underlay device (dev) is a must: ask strictly, then for the transform,
 * as ip6_dst_lookup_flow() does, and refuse what its
 * ip6_dst_lookup_tail() refuses: an IPv4-mapped source to a native IPv6
 * destination.
 */
static struct dst_entry *stt_route6_bound(struct net *net, struct flowi6 *fl6)
{
	struct dst_entry *dst;
	int err;

	if (ipv6_addr_v4mapped(&fl6->saddr) &&
	    !ipv6_addr_v4mapped(&fl6->daddr) && !ipv6_addr_any(&fl6->daddr))
		return ERR_PTR(-EAFNOSUPPORT);
	dst = ip6_route_output_flags(net, NULL, fl6, RT6_LOOKUP_F_IFACE);
	err = dst->error;
	if (err) {
		dst_release(dst);
		return ERR_PTR(err);
	}
	return xfrm_lookup_route(net, dst, flowi6_to_flowi(fl6), NULL, 0);
}

static struct dst_entry *stt_route6(struct stt_dev *stt, struct sk_buff *skb,
				    const struct stt_tx_params *p, u8 tos,
				    struct flowi6 *fl6)
{
	struct dst_entry *dst = NULL;

	memset(fl6, 0, sizeof(*fl6));
	fl6->flowi6_oif = p->link;
	fl6->flowi6_mark = skb->mark;
	fl6->flowi6_proto = IPPROTO_TCP;
	fl6->daddr = p->key.u.ipv6.dst;
	fl6->saddr = p->key.u.ipv6.src;
	fl6->flowlabel = ip6_make_flowinfo(tos, p->key.label);
	fl6->fl6_sport = p->sport;
	fl6->fl6_dport = p->key.tp_dst;

	if (p->use_cache) {
		dst = dst_cache_get_ip6(p->dst_cache, &fl6->saddr);
		if (dst)
			return dst;
	}
	if (p->link && !ipv6_addr_any(&fl6->saddr))
		dst = stt_route6_bound(stt->net, fl6);
	else
		dst = ip6_dst_lookup_flow(stt->net, NULL, fl6, NULL);
	if (IS_ERR(dst))
		return dst;
	if (dst->dev == stt->dev) {
		dst_release(dst);
		return ERR_PTR(-ELOOP);
	}
	if (p->use_cache)
		dst_cache_set_ip6(p->dst_cache, dst, &fl6->saddr);
	return dst;
}

static int stt_xmit6(struct stt_dev *stt, struct sk_buff *skb,
		     const struct stt_tx_params *p)
{
	unsigned int pkt_len = skb->len - skb_network_offset(skb);
	bool gso = skb_is_gso(skb);
	struct net_device *dev = stt->dev;
	u8 inner_ds = stt_inner_dsfield(skb);
	struct ipv6hdr *ip6h;
	struct dst_entry *dst;
	struct flowi6 fl6;
	struct tcphdr *th;
	unsigned int mss;
	u8 tos, ttl;
	int err;

	dst = stt_route6(stt, skb, p, p->key.tos & ~INET_ECN_MASK, &fl6);
	if (IS_ERR(dst))
		return stt_route_error(stt, PTR_ERR(dst));

	tos = stt_outer_tos(p->key.tos, inner_ds);
	ttl = p->ttl_inherit ? stt_inner_ttl(skb, 0) : p->key.ttl;
	if (!ttl)
		ttl = ip6_dst_hoplimit(dst);

	mss = stt_outer_mss(dst_mtu(dst), sizeof(*ip6h) + sizeof(struct tcphdr));
	err = stt_prepare_skb(skb, LL_RESERVED_SPACE(dst->dev) +
			      dst->header_len + sizeof(*ip6h) +
			      STT_ENCAP_HLEN);
	if (err)
		goto err_dst;

	stt_push_headers(skb, p, mss);
	th = tcp_hdr(skb);
	th->check = ~tcp_v6_check(skb->len, &fl6.saddr, &fl6.daddr, 0);

	skb_scrub_packet(skb, !net_eq(stt->net, dev_net(dev)));
	skb_clear_hash_if_not_l4(skb);
	skb_dst_set(skb, dst);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	stt_untrack(skb);

	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, tos, ip6_make_flowlabel(stt->net, skb,
						   fl6.flowlabel, true, &fl6));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_TCP;
	ip6h->hop_limit = ttl;
	ip6h->saddr = fl6.saddr;
	ip6h->daddr = fl6.daddr;
	skb->protocol = htons(ETH_P_IPV6);

	stt_xmit_done(stt, ip6_local_out(stt->net, NULL, skb), pkt_len, gso);
	return 0;

err_dst:
	dst_release(dst);
	return err;
}
#endif

/* Fill @p from the device configuration or, in external mode, from the
 * packet's tunnel metadata.
 */
static int stt_tx_params(struct stt_dev *stt, const struct stt_config *cfg,
			 struct sk_buff *skb, struct stt_tx_params *p)
{
	if (cfg->collect_md) {
		const struct ip_tunnel_info *info = skb_tunnel_info(skb);

		if (!info || !(info->mode & IP_TUNNEL_INFO_TX))
			return -EINVAL;
		p->key = info->key;
		p->ipv6 = ip_tunnel_info_af(info) == AF_INET6;
		p->ttl_inherit = false;
		p->df = stt_tun_dont_fragment(&info->key) ? STT_DF_SET :
							      STT_DF_UNSET;
		p->link = cfg->link;
		/* This cache is the metadata's (a tc action's, a route's): every
		 * device its packets reach shares it, and all of them live in
		 * this namespace. Only a device that routes here without an
		 * underlay device of its own looks up what the others would;
		 * one bound to a device or routing in another namespace does
		 * its own lookups (a route cached by another device would send
		 * its packets out of the wrong device, or namespace).
		 */
		p->dst_cache = (struct dst_cache *)&info->dst_cache;
		p->use_cache = !cfg->link &&
			       net_eq(stt->net, dev_net(stt->dev)) &&
			       ip_tunnel_dst_cache_usable(skb, info);
		if (!p->key.tp_dst)
			p->key.tp_dst = cfg->key.tp_dst;
	} else {
		p->key = cfg->key;
		p->ipv6 = cfg->ipv6;
		p->ttl_inherit = cfg->ttl_inherit;
		p->df = cfg->df;
		p->link = cfg->link;
		p->dst_cache = (struct dst_cache *)&cfg->dst_cache;
		p->use_cache = !skb->mark;
		if (p->key.tos == 1) {	/* inherit */
			p->key.tos = stt_inner_dsfield(skb) & ~INET_ECN_MASK;
			p->use_cache = false;
		}
	}
	p->sport = p->key.tp_src ?:
		   udp_flow_src_port(stt->net, skb, 0, 0, true);
	return 0;
}

netdev_tx_t stt_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct stt_dev *stt = netdev_priv(dev);
	const struct stt_config *cfg;
	struct stt_tx_params p;
	int err;

	cfg = rcu_dereference_bh(stt->cfg);
	if (unlikely(!cfg))
		goto drop;

	err = stt_tx_params(stt, cfg, skb, &p);
	if (unlikely(err)) {
		stt_dev_inc(stt, STT_DEV_TX_NO_MD);
		goto drop;
	}

	/* features_check already sent what we cannot describe through
	 * software GSO/checksumming; this is the backstop.
	 */
	if (unlikely(!stt_csum_describable(skb) && skb_checksum_help(skb)))
		goto drop;
	if (unlikely(skb_has_frag_list(skb) && !stt_fraglist_cuttable(skb) &&
		     (skb_is_gso(skb) || __skb_linearize(skb)))) {
		stt_dev_inc(stt, STT_DEV_TX_FRAGLIST_UNFIT);
		goto drop;
	}
	if (unlikely(skb->len + STT_HLEN > STT_MAX_INNER_LEN + STT_HLEN ||
		     (skb_is_gso(skb) && !stt_gso_describable(skb)))) {
		stt_dev_inc(stt, STT_DEV_TX_TOO_BIG);
		goto drop;
	}

	skb->dev = dev;
	if (p.ipv6) {
#if IS_ENABLED(CONFIG_IPV6)
		err = stt_xmit6(stt, skb, &p);
#else
		err = -EAFNOSUPPORT;
#endif
	} else {
		err = stt_xmit4(stt, skb, &p);
	}
	if (err)	/* not sent: the skb is still ours */
		goto drop;
	return NETDEV_TX_OK;

drop:
	DEV_STATS_INC(dev, tx_dropped);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

int stt_fill_metadata_dst(struct net_device *dev, struct sk_buff *skb)
{
	struct ip_tunnel_info *info = skb_tunnel_info(skb);
	struct stt_dev *stt = netdev_priv(dev);
	const struct stt_config *cfg;
	struct stt_tx_params p;
	int err = 0;

	if (!info || ip_tunnel_info_af(info) == AF_UNSPEC)
		return -EINVAL;

	rcu_read_lock();
	cfg = rcu_dereference(stt->cfg);
	if (!cfg || !cfg->collect_md) {
		err = -EINVAL;
		goto out;
	}
	err = stt_tx_params(stt, cfg, skb, &p);
	if (err)
		goto out;

	if (!p.ipv6) {
		struct flowi4 fl4;
		struct rtable *rt;

		rt = stt_route4(stt, skb, &p, p.key.tos, &fl4);
		if (IS_ERR(rt)) {
			err = PTR_ERR(rt);
			goto out;
		}
		ip_rt_put(rt);
		info->key.u.ipv4.src = fl4.saddr;
#if IS_ENABLED(CONFIG_IPV6)
	} else {
		struct dst_entry *dst;
		struct flowi6 fl6;

		dst = stt_route6(stt, skb, &p, p.key.tos, &fl6);
		if (IS_ERR(dst)) {
			err = PTR_ERR(dst);
			goto out;
		}
		dst_release(dst);
		info->key.u.ipv6.src = fl6.saddr;
#endif
	}
	info->key.tp_src = p.sport;
	info->key.tp_dst = p.key.tp_dst;
out:
	rcu_read_unlock();
	return err;
}
