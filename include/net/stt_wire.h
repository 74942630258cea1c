/* SPDX-License-Identifier: GPL-2.0 */
/*
 * STT (draft-davie-stt-08): wire format and the interface stt.ko offers to
 * other modules (the Open vSwitch vport).
 */
#ifndef _NET_STT_WIRE_H
#define _NET_STT_WIRE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/tcp.h>

/* The 18-byte STT frame header that follows the TCP-shaped outer header. */
struct stthdr {
	__u8	version;	/* STT_VERSION; anything else is discarded */
	__u8	flags;		/* STT_F_* */
	__u8	l4_offset;	/* inner L4 header from the inner Ethernet header */
	__u8	reserved;
	__be16	mss;		/* inner gso_size, 0 when not segmented */
	__be16	vlan_tci;	/* PCP, V (STT_VLAN_VALID), VID */
	__be64	key;		/* context ID */
	__u8	pad[2];		/* aligns the inner IP header */
} __packed;

#define STT_VERSION		0

/* Flag values as every implementation and Wireshark use them (the draft's
 * figure numbers the bits MSB first; see stt-wire-format.md).
 */
#define STT_F_CSUM_VERIFIED	0x01
#define STT_F_CSUM_PARTIAL	0x02
#define STT_F_IPV4		0x04
#define STT_F_TCP		0x08
#define STT_F_RESERVED		0xf0

#define STT_VLAN_VALID		0x1000

#define STT_HLEN		sizeof(struct stthdr)	/* 18 */
/* Frame length counts the STT header and the inner frame (16-bit field). */
#define STT_MAX_FRAME_LEN	0xffff
#define STT_MIN_FRAME_LEN	(STT_HLEN + ETH_HLEN)
/* Outer TCP header + STT header. */
#define STT_ENCAP_HLEN		(sizeof(struct tcphdr) + STT_HLEN)

/* Largest MTU.  The STT length field would allow 65517 bytes of inner
 * frame, but the outer IPv4 total length (16 bits) must also cover the
 * outer IP, TCP and STT headers: 65535 - 20 - 20 - 18 - 14 = 65463.  The
 * same bound is used over IPv6 so that a device can change family.
 */
#define STT_MAX_MTU		(0xffff - 20 - STT_ENCAP_HLEN - ETH_HLEN)
/* Largest inner packet (L3 and up) the stack may hand us as one GSO
 * packet: the same arithmetic without the Ethernet header.
 */
#define STT_MAX_GSO_SIZE	(STT_MAX_MTU)

struct net;
struct net_device;

/* Create an external (flow-based) STT device for Open vSwitch: up, with a
 * large MTU, receiving on @dst_port (network order) in @net.
 */
struct net_device *stt_dev_create_fb(struct net *net, const char *name,
				     u8 name_assign_type, __be16 dst_port);

#endif /* _NET_STT_WIRE_H */
