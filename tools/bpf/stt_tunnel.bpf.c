// SPDX-License-Identifier: GPL-2.0
/*
 * tc BPF programs for an external ("ip link add ... type stt external")
 * STT device, loaded with
 *
 *   tc filter add dev PORT ingress bpf da obj stt_tunnel.bpf.o sec stt_tx
 *   tc filter add dev STT ingress bpf da obj stt_tunnel.bpf.o sec stt_rx
 *
 * stt_tx, on the ingress of a port (a VM's or a container's veth), gives
 * each packet the tunnel key of its port (bpf_skb_set_tunnel_key) and
 * redirects it into the STT device: map stt_tx, keyed by the port's
 * ifindex. stt_rx, on the STT device's ingress, reads the key of each
 * received frame (bpf_skb_get_tunnel_key, IPv4 or IPv6 underlay) and
 * redirects the frame to the port of that key: map stt_rx, keyed by the
 * key. Frames with a key nobody has are dropped.
 *
 * The maps are pinned by name (tc pins them in its bpffs directory,
 * TC_BPF_MNT/tc/globals), so every program loaded from this object in
 * one bpffs shares them; fill them with bpftool.
 *
 * struct bpf_tunnel_key carries a 32-bit tunnel_id: set_tunnel_key can
 * only send context IDs below 2^32, and get_tunnel_key returns the low 32
 * bits of a larger one.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#ifndef EPROTO
#define EPROTO		71
#endif

#define STT_BPF_IPV6	1	/* stt_tx_entry.flags: IPv6 underlay */

/* What stt_tx gives the packets of one port. */
struct stt_tx_entry {
	__u32 key;		/* context ID (low 32 bits; see above) */
	__u32 ifindex;		/* the external STT device */
	__u32 flags;		/* STT_BPF_IPV6 */
	__u8 tos;		/* outer TOS / traffic class */
	__u8 ttl;		/* outer TTL / hop limit, 0: the route's */
	__u8 pad[2];
	__u8 remote[16];	/* network order; IPv4: the first 4 bytes */
};

/* Where stt_rx sends the frames of one key, and how many it sent. */
struct stt_rx_entry {
	__u32 ifindex;		/* the port */
	__u32 pad;
	__u64 packets;
};

/* Counters, and what stt_rx saw last. */
struct stt_stats {
	__u64 tx_set;		/* packets given a key and redirected */
	__u64 tx_no_port;	/* packets from a port not in stt_tx */
	__u64 tx_error;		/* set_tunnel_key or redirect failed */
	__u64 rx_steered;	/* frames redirected to their port */
	__u64 rx_no_key;	/* frames without tunnel metadata */
	__u64 rx_unknown;	/* frames with a key not in stt_rx */
	__u32 last_key;		/* tunnel_id of the last frame */
	__u8 last_tos;
	__u8 last_ttl;
	__u16 last_ipv6;	/* 1: it came over IPv6 */
	__u8 last_remote[16];	/* its outer source, network order */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct stt_tx_entry);
	__uint(max_entries, 1024);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} stt_tx_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct stt_rx_entry);
	__uint(max_entries, 1024);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} stt_rx_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct stt_stats);
	__uint(max_entries, 1);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} stt_stats_map SEC(".maps");

static __always_inline struct stt_stats *stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stt_stats_map, &zero);
}

SEC("stt_tx")
int stt_tx_set_key(struct __sk_buff *skb)
{
	struct stt_stats *s = stats();
	struct bpf_tunnel_key k = {};
	struct stt_tx_entry *e;
	__u32 port = skb->ifindex;
	__u64 flags = 0;

	if (!s)		/* cannot happen: an array has all its entries */
		return TC_ACT_SHOT;
	e = bpf_map_lookup_elem(&stt_tx_map, &port);
	if (!e) {
		__sync_fetch_and_add(&s->tx_no_port, 1);
		return TC_ACT_OK;
	}
	k.tunnel_id = e->key;
	k.tunnel_tos = e->tos;
	k.tunnel_ttl = e->ttl;
	if (e->flags & STT_BPF_IPV6) {
		__builtin_memcpy(k.remote_ipv6, e->remote, sizeof(k.remote_ipv6));
		flags = BPF_F_TUNINFO_IPV6;
	} else {
		__u32 a;

		__builtin_memcpy(&a, e->remote, sizeof(a));
		k.remote_ipv4 = bpf_ntohl(a);
	}
	if (bpf_skb_set_tunnel_key(skb, &k, sizeof(k), flags)) {
		__sync_fetch_and_add(&s->tx_error, 1);
		return TC_ACT_SHOT;
	}
	__sync_fetch_and_add(&s->tx_set, 1);
	return bpf_redirect(e->ifindex, 0);
}

SEC("stt_rx")
int stt_rx_steer(struct __sk_buff *skb)
{
	struct stt_stats *s = stats();
	struct bpf_tunnel_key k = {};
	struct stt_rx_entry *e;
	__u16 ipv6 = 0;
	__u32 key;
	int err;

	if (!s)
		return TC_ACT_SHOT;
	err = bpf_skb_get_tunnel_key(skb, &k, sizeof(k), 0);
	if (err == -EPROTO) {	/* the metadata is IPv6 */
		ipv6 = 1;
		err = bpf_skb_get_tunnel_key(skb, &k, sizeof(k),
					     BPF_F_TUNINFO_IPV6);
	}
	if (err) {
		__sync_fetch_and_add(&s->rx_no_key, 1);
		return TC_ACT_SHOT;
	}
	key = k.tunnel_id;
	s->last_key = key;
	s->last_tos = k.tunnel_tos;
	s->last_ttl = k.tunnel_ttl;
	s->last_ipv6 = ipv6;
	if (ipv6) {
		__builtin_memcpy(s->last_remote, k.remote_ipv6,
				 sizeof(s->last_remote));
	} else {
		__u32 a = bpf_htonl(k.remote_ipv4);

		__builtin_memset(s->last_remote, 0, sizeof(s->last_remote));
		__builtin_memcpy(s->last_remote, &a, sizeof(a));
	}
	e = bpf_map_lookup_elem(&stt_rx_map, &key);
	if (!e) {
		__sync_fetch_and_add(&s->rx_unknown, 1);
		return TC_ACT_SHOT;
	}
	__sync_fetch_and_add(&e->packets, 1);
	__sync_fetch_and_add(&s->rx_steered, 1);
	return bpf_redirect(e->ifindex, 0);
}

char _license[] SEC("license") = "GPL";
