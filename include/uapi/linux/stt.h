/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * STT (Stateless Transport Tunneling, draft-davie-stt-08) link attributes.
 *
 * An STT device is created with "ip link add NAME type stt ..."; its
 * configuration travels in IFLA_INFO_DATA as the attributes below.  The enum
 * is append-only: never renumber, never reuse a value.
 *
 * IFLA_STT_ID (u64)
 *	Context ID: the 64-bit virtual network identifier carried in every STT
 *	frame.  Frames received with another ID are not delivered to this
 *	device.  Default 0.  Not allowed with IFLA_STT_COLLECT_METADATA.
 * IFLA_STT_REMOTE (struct in_addr, network order)
 * IFLA_STT_REMOTE6 (struct in6_addr)
 *	Far end of a point-to-point tunnel.  Exactly one of the two is needed
 *	unless IFLA_STT_COLLECT_METADATA is set, in which case neither is
 *	allowed.  Only frames from this address reach the device.  Unicast;
 *	an IPv4-mapped IPv6 address is refused (give the IPv4 address).
 * IFLA_STT_LOCAL (struct in_addr, network order)
 * IFLA_STT_LOCAL6 (struct in6_addr)
 *	Source address of transmitted frames.  Optional (default: chosen by the
 *	route to the remote, also for 0.0.0.0 and ::); must be unicast, not
 *	IPv4-mapped, and of the remote's family.
 * IFLA_STT_PORT (__be16)
 *	Destination TCP port of the outer header, and the port the device
 *	receives on.  Default 7471 (IANA).  Port 0 is refused.
 * IFLA_STT_TTL (u8)
 *	Outer IP TTL / hop limit.  0 means the route's default hop limit.
 * IFLA_STT_TTL_INHERIT (u8, flag)
 *	Copy the outer TTL from the inner IPv4 TTL / IPv6 hop limit.
 * IFLA_STT_TOS (u8)
 *	Outer TOS / traffic class (DSCP bits; ECN is always handled per
 *	RFC 6040).  The value 1 means "inherit": copy DSCP from the inner
 *	packet (the same convention as VXLAN and Geneve).
 * IFLA_STT_DF (u8, enum ifla_stt_df)
 *	Don't Fragment bit of the outer IPv4 header: unset, set, or inherited
 *	from the inner IPv4 header.  Default: set.
 * IFLA_STT_COLLECT_METADATA (flag)
 *	External (flow-based) mode: destination, context ID, TOS and TTL come
 *	from each packet's tunnel metadata (lightweight tunnels, tc
 *	tunnel_key, Open vSwitch); received frames carry them as metadata.
 * IFLA_STT_LINK (u32)
 *	Ifindex of the underlay device: the outer route must leave through it.
 *	Optional.
 * IFLA_STT_PAD
 *	Alignment padding for IFLA_STT_ID in dumps; never sent by users.
 *
 * Changing IFLA_STT_PORT or IFLA_STT_COLLECT_METADATA on an existing device
 * is refused: both decide how received frames are dispatched.
 */
#ifndef _UAPI_LINUX_STT_H
#define _UAPI_LINUX_STT_H

#include <linux/types.h>

#define STT_DST_PORT		7471	/* IANA-assigned TCP port */

enum ifla_stt_df {
	STT_DF_UNSET = 0,
	STT_DF_SET,
	STT_DF_INHERIT,
	__STT_DF_END,
	STT_DF_MAX = __STT_DF_END - 1,
};

enum {
	IFLA_STT_UNSPEC,
	IFLA_STT_ID,
	IFLA_STT_REMOTE,
	IFLA_STT_REMOTE6,
	IFLA_STT_LOCAL,
	IFLA_STT_LOCAL6,
	IFLA_STT_PORT,
	IFLA_STT_TTL,
	IFLA_STT_TTL_INHERIT,
	IFLA_STT_TOS,
	IFLA_STT_DF,
	IFLA_STT_COLLECT_METADATA,
	IFLA_STT_LINK,
	IFLA_STT_PAD,
	__IFLA_STT_MAX
};

#define IFLA_STT_MAX	(__IFLA_STT_MAX - 1)

#endif /* _UAPI_LINUX_STT_H */
