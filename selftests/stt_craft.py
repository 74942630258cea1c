#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Craft hostile and flooding STT segments for the STT selftests.

  stt_craft.py [OPTIONS] send CLASS...   send COUNT packets of each class
  stt_craft.py [OPTIONS] flood SECONDS   incomplete frames from many frame
                                         IDs and source ports until SECONDS
                                         pass (or SIGTERM)
  stt_craft.py list                      the classes, one per line

Packets are built with struct (no scapy: its import alone takes seconds
under TCG) and written to an AF_PACKET socket on --dev, so they reach the
receiver exactly as crafted: checksums, lengths and flags are ours. Outer
IPv4 goes from --src to --dst, outer IPv6 from --src6 to --dst6, Ethernet
from --dev's address to --dst-mac. A "good" frame is one the receiving
point-to-point device (--key, remote --src) accepts.

Each class prints one line: "<class> <packets sent> <units>", units being
what the counter the class aims at should count (pairs, frames, packets).
--seed S makes what a class sends depend on S and the class's name alone,
so a failing run can be repeated; frame IDs and IP IDs are always fresh
(reusing them across runs would let one run's segments meet another's in
reassembly).
Wire format: /work/shared/docs/stt-wire-format.md (flags 0x01 verified,
0x02 partial, 0x04 IPv4, 0x08 TCP; 0xF0 reserved).
"""

import argparse
import random
import signal
import socket
import struct
import sys
import time

from stt_wire import csum_fold as fold, csum_partial as csum

ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
ETH_P_ARP = 0x0806

F_VERIFIED = 0x01
F_PARTIAL = 0x02
F_IPV4 = 0x04
F_TCP = 0x08

TH_FIN, TH_SYN, TH_RST, TH_PSH, TH_ACK, TH_URG = 1, 2, 4, 8, 16, 32


# Identifiers, not contents: never seeded (see --seed).
IDS = random.SystemRandom()


class Crafter:
    def __init__(self, a):
        self.a = a
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.bind((a.dev, 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        self.smac = self.sock.getsockname()[4]
        self.dmac = bytes.fromhex(a.dst_mac.replace(':', ''))
        self.s4 = socket.inet_pton(socket.AF_INET, a.src)
        self.d4 = socket.inet_pton(socket.AF_INET, a.dst)
        self.s6 = socket.inet_pton(socket.AF_INET6, a.src6)
        self.d6 = socket.inet_pton(socket.AF_INET6, a.dst6)
        self.ipid = IDS.randrange(65536)
        self.fid = IDS.randrange(1 << 32)
        self.sent = 0

    # ---- building blocks -------------------------------------------------

    def next_fid(self):
        self.fid = (self.fid + 1) & 0xffffffff
        return self.fid

    def eth(self, proto):
        return self.dmac + self.smac + struct.pack('!H', proto)

    def ip4(self, payload, proto=6, tos=0, frag=0x4000, ipid=None):
        if ipid is None:
            self.ipid = (self.ipid + 1) & 0xffff
            ipid = self.ipid
        h = struct.pack('!BBHHHBBH4s4s', 0x45, tos, 20 + len(payload), ipid,
                        frag, 64, proto, 0, self.s4, self.d4)
        h = h[:10] + struct.pack('!H', fold(csum(h))) + h[12:]
        return h + payload

    def ip6(self, payload, nh=6, tc=0):
        return struct.pack('!IHBB16s16s', (6 << 28) | (tc << 20),
                           len(payload), nh, 64, self.s6, self.d6) + payload

    def tcp(self, payload, seq, ack, flags=TH_ACK | TH_PSH, sport=None,
            doff=5, v6=False, bad_csum=False, opts=b''):
        sport = self.a.sport if sport is None else sport
        th = struct.pack('!HHIIBBHHH', sport, self.a.port, seq & 0xffffffff,
                         ack & 0xffffffff, doff << 4, flags, 0xffff, 0, 0)
        seg = th + opts + payload
        if v6:
            ph = self.s6 + self.d6 + struct.pack('!IxxxB', len(seg), 6)
        else:
            ph = self.s4 + self.d4 + struct.pack('!xBH', 6, len(seg))
        c = fold(csum(ph + seg))
        if bad_csum:
            c ^= 1 + random.randrange(0xfffe)
        return seg[:16] + struct.pack('!H', c) + seg[18:]

    def stt_hdr(self, flags=0, l4=0, mss=0, vlan=0, key=None, version=0,
                rsvd=0, pad=0):
        key = self.a.key if key is None else key
        return struct.pack('!BBBBHHQH', version, flags, l4, rsvd, mss, vlan,
                           key, pad)

    def inner_ip4(self, size=100, tos=0, proto=17):
        """An inner Ethernet/IPv4/UDP frame of @size bytes (from Ethernet)."""
        eth = b'\x02\x00\x00\x00\xee\x01' + b'\x02\x00\x00\x00\xee\x02' + \
            struct.pack('!H', ETH_P_IP)
        ilen = size - 14
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, tos, ilen, 1, 0, 64, proto,
                         0, bytes([198, 51, 100, 1]), bytes([198, 51, 100, 2]))
        ip = ip[:10] + struct.pack('!H', fold(csum(ip))) + ip[12:]
        l4 = struct.pack('!HHHH', 9, 9, ilen - 20, 0)
        body = l4 + bytes(ilen - 20 - len(l4))
        return eth + ip + body

    def inner_ip6(self, size=100):
        eth = b'\x02\x00\x00\x00\xee\x01' + b'\x02\x00\x00\x00\xee\x02' + \
            struct.pack('!H', ETH_P_IPV6)
        plen = size - 14 - 40
        ip = struct.pack('!IHBB16s16s', 6 << 28, plen, 17, 64,
                         b'\xfd' + bytes(14) + b'\x01',
                         b'\xfd' + bytes(14) + b'\x02')
        return eth + ip + struct.pack('!HHHH', 9, 9, plen, 0) + \
            bytes(plen - 8)

    def inner_arp(self, size=60):
        eth = b'\xff' * 6 + b'\x02\x00\x00\x00\xee\x01' + \
            struct.pack('!H', ETH_P_ARP)
        return eth + bytes(size - 14)

    def frame(self, inner=None, **kw):
        """STT header + inner frame (a "good" one by default)."""
        return self.stt_hdr(**kw) + (self.inner_ip4() if inner is None
                                     else inner)

    # ---- packets -----------------------------------------------------------

    def seg4(self, stt_payload, frame_len, offset, fid=None, tos=0, **kw):
        fid = self.next_fid() if fid is None else fid
        t = self.tcp(stt_payload, (frame_len << 16) | offset, fid, **kw)
        return self.eth(ETH_P_IP) + self.ip4(t, tos=tos)

    def whole4(self, frame, **kw):
        return self.seg4(frame, len(frame), 0, **kw)

    def segs4(self, frame, size, fid=None, **kw):
        """The frame cut into segments of @size bytes."""
        fid = self.next_fid() if fid is None else fid
        return [self.seg4(frame[o:o + size], len(frame), o, fid=fid, **kw)
                for o in range(0, len(frame), size)]

    def reasm_frame(self):
        """A 300-byte IPv4 frame and a frame ID of its own: what the
        reassembly classes cut up."""
        return self.frame(self.inner_ip4(300)), self.next_fid()

    def split_frame(self):
        """reasm_frame() and its three 110-byte segments."""
        f, fid = self.reasm_frame()
        return f, fid, self.segs4(f, 110, fid=fid)

    def piece(self, f, fid, start, end=None):
        """Bytes [@start, @end) of frame @f as one segment of frame @fid."""
        return self.seg4(f[start:end], len(f), start, fid=fid)

    def send(self, pkts):
        for p in pkts:
            while True:
                try:
                    self.sock.send(p)
                    break
                except BlockingIOError:
                    time.sleep(0.001)
                except OSError as e:
                    if e.errno != 105:	# ENOBUFS: the queue is full
                        raise
                    time.sleep(0.001)
            self.sent += 1
            if self.a.pace and self.sent % self.a.pace == 0:
                time.sleep(0.001)


# ---- the classes -------------------------------------------------------------
#
# Each returns (packets, units). The expected counter deltas live in
# hostile.sh, next to the checks, so the test reads as a table.

def c_good(c, n):
    """well-formed whole frames: delivered (rx_frames_whole)"""
    return [c.whole4(c.frame()) for _ in range(n)], n


def c_good6(c, n):
    """well-formed whole frames over IPv6 (--src6 to --dst6): delivered"""
    return [c.eth(ETH_P_IPV6) + c.ip6(v6_tcp_seg(c, c.frame()))
            for _ in range(n)], n


def c_good_reasm(c, n):
    """well-formed frames in 3 segments: reassembled (ns_reasm_frames)"""
    pkts = []
    for _ in range(n):
        pkts += c.split_frame()[2]
    return pkts, n


def c_trunc_tcp(c, n):
    """IPv4 with 4..19 bytes of TCP header: ns_drop_truncated"""
    pkts = []
    for i in range(n):
        t = c.tcp(b'', 1 << 16, 1)[:4 + i % 16]
        pkts.append(c.eth(ETH_P_IP) + c.ip4(t))
    return pkts, n


def c_bad_csum(c, n):
    """whole frames with a wrong outer TCP checksum: ns_drop_bad_csum"""
    return [c.whole4(c.frame(), bad_csum=True) for _ in range(n)], n


def c_tcp_flags(c, n):
    """SYN, RST, FIN, URG, no ACK, options (doff 6/15), doff < 5"""
    variants = [dict(flags=TH_ACK | TH_SYN), dict(flags=TH_ACK | TH_RST),
                dict(flags=TH_ACK | TH_FIN), dict(flags=TH_ACK | TH_URG),
                dict(flags=TH_PSH), dict(flags=0),
                dict(doff=6, opts=b'\x01\x01\x01\x01'),
                dict(doff=15, opts=b'\x01' * 40), dict(doff=4),
                dict(flags=0xff)]
    pkts = []
    for i in range(n):
        f = c.frame()
        pkts.append(c.whole4(f, **variants[i % len(variants)]))
    return pkts, n


def c_empty(c, n):
    """no payload after the TCP header: ns_drop_empty"""
    return [c.seg4(b'', 100, 0) for _ in range(n)], n


def c_len_below_18(c, n):
    """frame length 1..17 (a truncated STT header): ns_drop_bad_frame_len"""
    pkts = []
    for i in range(n):
        ln = 1 + i % 17
        pkts.append(c.whole4(c.frame()[:ln]))
    return pkts, n


def c_len_below_32(c, n):
    """frame length 18..31 (no whole Ethernet header): bad_frame_len"""
    pkts = []
    for i in range(n):
        ln = 18 + i % 14
        pkts.append(c.whole4(c.frame()[:ln]))
    return pkts, n


def c_len_zero_partial(c, n):
    """frame length 0..31 on a partial segment: ns_drop_bad_frame_len"""
    pkts = []
    for i in range(n):
        pkts.append(c.seg4(c.frame()[:8], i % 32, 0))
    return pkts, n


def c_offset_over(c, n):
    """offset + payload > frame length: ns_drop_bad_offset"""
    pkts = []
    for i in range(n):
        f = c.frame(c.inner_ip4(200))		# 218 bytes
        off = 100 + i % 100
        pkts.append(c.seg4(f[off - 100:off], 150 + i % 50, off))
    return pkts, n


def c_offset_65535(c, n):
    """frame length 65535, offset + payload past 65535: bad_offset"""
    pkts = []
    for i in range(n):
        off = 65535 - 50 + i % 50
        pkts.append(c.seg4(bytes(100), 65535, off))
    return pkts, n


def c_offset_past(c, n):
    """offset at or past the frame length: ns_drop_bad_offset"""
    pkts = []
    for i in range(n):
        ln = 200
        off = ln + (0 if i % 2 == 0 else random.randrange(65535 - ln))
        pkts.append(c.seg4(bytes(10), ln, off))
    return pkts, n


def c_len_mismatch(c, n):
    """two segments of one frame with different lengths: len_mismatch"""
    pkts = []
    for _ in range(n):
        f, fid = c.reasm_frame()
        pkts.append(c.piece(f, fid, 0, 100))
        pkts.append(c.seg4(f[100:200], len(f) + 1 + random.randrange(100),
                           100, fid=fid))
    return pkts, n


def c_overlap(c, n):
    """segment overlapping an earlier one of its frame: ns_drop_overlap"""
    pkts = []
    for i in range(n):
        f, fid = c.reasm_frame()
        a, b = 0, 50 + i % 50
        if i % 2:
            a, b = b, a		# the later segment first
        pkts += [c.piece(f, fid, a, a + 100), c.piece(f, fid, b, b + 100)]
    return pkts, n


def c_duplicate(c, n):
    """a segment sent twice, then the rest: duplicate + 1 frame each"""
    pkts = []
    for _ in range(n):
        s = c.split_frame()[2]
        pkts += [s[0], s[0]] + s[1:]
    return pkts, n


def c_dup_inside(c, n):
    """two segments as GRO merged them, then each again: 2 duplicates and
    1 frame each"""
    pkts = []
    for _ in range(n):
        f, fid, s = c.split_frame()
        pkts += [c.piece(f, fid, 0, 220)] + s
    return pkts, n


def c_dup_around(c, n):
    """two segments held, then both again as GRO merged them: the merged
    one replaces them (2 duplicates), 1 frame each"""
    pkts = []
    for _ in range(n):
        f, fid, s = c.split_frame()
        pkts += s[:2] + [c.piece(f, fid, 0, 220)] + s[2:]
    return pkts, n


def c_dup_around_mid(c, n):
    """two segments held, then the second again merged with the third:
    it replaces the second (1 duplicate), 1 frame each"""
    pkts = []
    for _ in range(n):
        f, fid, s = c.split_frame()
        pkts += s[:2] + [c.piece(f, fid, 110)]
    return pkts, n


def c_overlap_past_inside(c, n):
    """first and last segment held, then one that covers the first and
    part of the last: the frame dies, nothing counted as a duplicate"""
    pkts = []
    for _ in range(n):
        f, fid, s = c.split_frame()
        pkts += [s[0], s[2], c.piece(f, fid, 0, 250)]
    return pkts, n


def c_l4_past(c, n):
    """checksum partial, L4 offset past the frame: ns_drop_bad_offload"""
    pkts = []
    for i in range(n):
        fl = F_PARTIAL | F_IPV4 | (F_TCP if i % 2 else 0)
        pkts.append(c.whole4(c.frame(c.inner_ip4(60), flags=fl,
                                     l4=60 + i % 196)))
    return pkts, n


def c_l4_hdr_out(c, n):
    """L4 offset inside the frame, its L4 header not: bad_offload"""
    pkts = []
    for i in range(n):
        tcp = i % 2
        fl = F_PARTIAL | F_IPV4 | (F_TCP if tcp else 0)
        hl = 20 if tcp else 8
        size = 60
        l4 = size - hl + 1 + (i // 2) % (hl - 1)	# l4 + hl > size > l4
        pkts.append(c.whole4(c.frame(c.inner_ip4(size), flags=fl, l4=l4)))
    return pkts, n


def c_l4_small(c, n):
    """L4 offset below 14+20 (IPv4) or 14+40 (IPv6): bad_offload"""
    pkts = []
    for i in range(n):
        if i % 2:
            f = c.frame(c.inner_ip4(100), flags=F_PARTIAL | F_IPV4,
                        l4=i % 34)
        else:
            f = c.frame(c.inner_ip6(100), flags=F_PARTIAL, l4=i % 54)
        pkts.append(c.whole4(f))
    return pkts, n


def c_mss_no_csum(c, n):
    """MSS without checksum partial (and L4 offset alone): bad_offload"""
    pkts = []
    for i in range(n):
        if i % 3 == 2:
            f = c.frame(flags=F_IPV4 | F_TCP, l4=34)
        else:
            f = c.frame(flags=(F_VERIFIED if i % 2 else 0) | F_IPV4 | F_TCP,
                        mss=1 + random.randrange(65535))
        pkts.append(c.whole4(f))
    return pkts, n


def c_mss_udp(c, n):
    """MSS with checksum partial but UDP: ns_drop_bad_offload"""
    return [c.whole4(c.frame(c.inner_ip4(300), flags=F_PARTIAL | F_IPV4,
                             l4=34, mss=100)) for _ in range(n)], n


def c_csum_nonip(c, n):
    """checksum partial on an ARP frame or the wrong IP family"""
    pkts = []
    for i in range(n):
        k = i % 3
        if k == 0:
            f = c.frame(c.inner_arp(), flags=F_PARTIAL | F_IPV4, l4=34)
        elif k == 1:
            f = c.frame(c.inner_ip6(100), flags=F_PARTIAL | F_IPV4, l4=34)
        else:
            f = c.frame(c.inner_ip4(100), flags=F_PARTIAL, l4=54)
        pkts.append(c.whole4(f))
    return pkts, n


def c_vlan_no_v(c, n):
    """VLAN field nonzero without V (0x1000): ns_drop_bad_vlan"""
    pkts = []
    for i in range(n):
        tci = 1 + random.randrange(0xffff)
        tci &= ~0x1000
        pkts.append(c.whole4(c.frame(vlan=tci or 1)))
    return pkts, n


def c_version(c, n):
    """STT version 1..255: ns_drop_bad_version"""
    return [c.whole4(c.frame(version=1 + i % 255)) for i in range(n)], n


def c_rsvd_flags(c, n):
    """reserved flag bits 0xF0: ns_drop_bad_flags"""
    return [c.whole4(c.frame(flags=(0x10 << (i % 4)) | (i & 0x0d)))
            for i in range(n)], n


def c_rsvd_byte(c, n):
    """reserved byte or padding nonzero: ignored, frame delivered"""
    return [c.whole4(c.frame(rsvd=1 + i % 255) if i % 2 else
                     c.frame(pad=1 + i % 65535)) for i in range(n)], n


def c_unknown_key(c, n):
    """a context ID no device has: ns_drop_no_device"""
    return [c.whole4(c.frame(key=c.a.key + 1 + i)) for i in range(n)], n


def c_ecn(c, n):
    """CE outside, not-ECT inside (RFC 6040): ns_drop_ecn"""
    return [c.whole4(c.frame(), tos=3) for _ in range(n)], n


def v6_tcp_seg(c, frame):
    return c.tcp(frame, len(frame) << 16, c.next_fid(), v6=True)


def c_v6_exthdr(c, n):
    """IPv6 hop-by-hop / destination / routing header before TCP"""
    pkts = []
    for i in range(n):
        t = v6_tcp_seg(c, c.frame())
        k = i % 3
        if k == 0:	# hop-by-hop, PadN
            eh, nh = struct.pack('!BBBB4x', 6, 0, 1, 4), 0
        elif k == 1:	# destination options, PadN
            eh, nh = struct.pack('!BBBB4x', 6, 0, 1, 4), 60
        else:		# routing type 0... deprecated: use type 253 (RFC 4727)
            eh, nh = struct.pack('!BBBB4x', 6, 0, 253, 0), 43
        pkts.append(c.eth(ETH_P_IPV6) + c.ip6(eh + t, nh=nh))
    return pkts, n


def c_v6_frag(c, n):
    """IPv6 fragments: first (stolen, dropped) and second (IPv6's)"""
    pkts = []
    for _ in range(n):
        t = v6_tcp_seg(c, c.frame(c.inner_ip4(200)))
        ident = random.randrange(1 << 32)
        cut = 64
        f1 = struct.pack('!BBHI', 6, 0, 0x0001, ident) + t[:cut]
        f2 = struct.pack('!BBHI', 6, 0, cut, ident) + t[cut:]
        pkts.append(c.eth(ETH_P_IPV6) + c.ip6(f1, nh=44))
        pkts.append(c.eth(ETH_P_IPV6) + c.ip6(f2, nh=44))
    return pkts, n


def c_v6_atomic_frag(c, n):
    """IPv6 atomic fragments (offset 0, M clear) before TCP"""
    pkts = []
    for _ in range(n):
        t = v6_tcp_seg(c, c.frame())
        f = struct.pack('!BBHI', 6, 0, 0, random.randrange(1 << 32)) + t
        pkts.append(c.eth(ETH_P_IPV6) + c.ip6(f, nh=44))
    return pkts, n


def c_v4_frag(c, n):
    """good whole frames in two outer IPv4 fragments (IP reassembles,
    the hook takes them: a router fragments what is sent without DF)"""
    pkts = []
    for _ in range(n):
        f = c.frame(c.inner_ip4(200))
        t = c.tcp(f, len(f) << 16, c.next_fid())
        c.ipid = (c.ipid + 1) & 0xffff
        cut = 96
        p1 = c.ip4(t[:cut], frag=0x2000, ipid=c.ipid)
        p2 = c.ip4(t[cut:], frag=cut // 8, ipid=c.ipid)
        # ip4() sizes the header from the piece, as a fragment wants
        pkts.append(c.eth(ETH_P_IP) + p1)
        pkts.append(c.eth(ETH_P_IP) + p2)
    return pkts, n


def c_incomplete(c, n):
    """first segments of frames that never complete: reasm_timeout"""
    return [c.seg4(c.frame(c.inner_ip4(300))[:100], 318, 0)
            for _ in range(n)], n


def c_fuzz(c, n):
    """random STT headers, SEQ and lengths with valid outer checksums"""
    pkts = []
    for _ in range(n):
        f = bytearray(c.frame(c.inner_ip4(42 + random.randrange(400))))
        for _ in range(1 + random.randrange(4)):
            f[random.randrange(20)] = random.randrange(256)
        if random.randrange(2):
            f[1] &= 0x0f		# get past the flags check more often
            f[0] = 0
        if random.randrange(3):		# whole: the header checks
            pkts.append(c.seg4(bytes(f), len(f), 0,
                               fid=random.randrange(1 << 32)))
            continue
        fl = random.randrange(65536)	# anything: reassembly, offsets
        off = 0 if random.randrange(3) else random.randrange(65536)
        pkts.append(c.seg4(bytes(f[:random.randrange(1, len(f) + 1)]),
                           fl, off, fid=random.randrange(1 << 32)))
    return pkts, n


def inner_tcp_partial(i, payload):
    """the i-th inner Ethernet/IPv4/TCP packet of a stream 198.51.100.1 ->
    203.0.113.2 (sequence numbers follow on), with checksum partial: the
    TCP field holds the pseudo-header sum, as the sender's stack leaves it
    for TSO"""
    src, dst = bytes([198, 51, 100, 1]), bytes([203, 0, 113, 2])
    tl = 20 + len(payload)
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + tl, i & 0xffff,
                     0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack('!H', fold(csum(ip))) + ip[12:]
    ph = fold(csum(src + dst + struct.pack('!xBH', 6, tl)))
    th = struct.pack('!HHIIBBHHH', 9, 9, 1 + i * len(payload), 1, 5 << 4,
                     TH_ACK | TH_PSH, 0xffff, ~ph & 0xffff, 0)
    eth = b'\x02\x00\x00\x00\xee\x02' + b'\x02\x00\x00\x00\xee\x01' + \
        struct.pack('!H', ETH_P_IP)
    return eth + ip + th + payload


def c_mss_tiny(c, n):
    """inner TCP (198.51.100.1 -> 203.0.113.2, 1000 bytes) with checksum
    partial and MSS 1..47: the receiver raises it (rx_mss_clamped)"""
    pkts = []
    for i in range(n):
        f = c.frame(inner_tcp_partial(i, bytes(1000)),
                    flags=F_PARTIAL | F_IPV4 | F_TCP, l4=34, mss=1 + i % 47)
        pkts.append(c.whole4(f))
    return pkts, n


def c_gso_small_segs(c, n):
    """inner TCP frames of 3 MSS of 1,400 bytes (198.51.100.1 ->
    203.0.113.2) with checksum partial, cut into 64-byte segments: 22
    pieces to an MSS, more than a skb's page fragments, so the receiver
    linearizes each frame (rx_linearized) and delivers it; (n + 19) // 20
    frames of 67 segments"""
    pkts = []
    frames = (n + 19) // 20
    for i in range(frames):
        f = c.frame(inner_tcp_partial(i, random.randbytes(3 * 1400)),
                    flags=F_PARTIAL | F_IPV4 | F_TCP, l4=34, mss=1400)
        pkts += c.segs4(f, 64)
    return pkts, frames


def inner_udp(c, i, good):
    """Frame @i of c_inner_udp*: an inner IPv4/UDP datagram of 259 random
    bytes from --inner-src to --inner-dst (port 9, nothing listens), its
    UDP checksum right or wrong, without checksum flags: even @i whole,
    odd @i in segments of 111 bytes (offsets 111 and 222: the segments'
    sums meet at odd offsets)."""
    body = random.randbytes(259)
    src = socket.inet_pton(socket.AF_INET, c.a.inner_src)
    dst = socket.inet_pton(socket.AF_INET, c.a.inner_dst)
    ulen = 8 + len(body)
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + ulen, i & 0xffff, 0x4000,
                     64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack('!H', fold(csum(ip))) + ip[12:]
    uh = struct.pack('!HHHH', 40000, 9, ulen, 0)
    uc = fold(csum(src + dst + struct.pack('!xBH', 17, ulen) + uh + body))
    uc = uc or 0xffff
    if not good:
        # Any value of 1..0xffff but @uc.  Never 0: over IPv4 that says
        # "no checksum" (RFC 768) and the stack takes the datagram (the
        # old XOR gave 0 for one datagram in 65534).  Of the nonzero
        # values only 0xffff has a second form (0), so none is @uc again.
        uc = (uc + random.randrange(0xfffe)) % 0xffff + 1
    eth = bytes.fromhex(c.a.inner_dst_mac.replace(':', '')) + \
        b'\x02\x00\x00\x00\xee\x01' + struct.pack('!H', ETH_P_IP)
    f = c.frame(eth + ip + uh[:6] + struct.pack('!H', uc) + body)
    return [c.whole4(f)] if i % 2 == 0 else c.segs4(f, 111)


def c_inner_udp(c, n):
    """inner UDP, right checksum, no flags: validated by the inner stack
    (UdpNoPorts); half whole, half in 3 segments"""
    return [p for i in range(n) for p in inner_udp(c, i, True)], n


def c_inner_udp_bad(c, n):
    """inner UDP, wrong checksum, no flags: the inner stack drops it
    (UdpInCsumErrors); half whole, half in 3 segments"""
    return [p for i in range(n) for p in inner_udp(c, i, False)], n


CLASSES = {k[2:]: v for k, v in globals().items() if k.startswith('c_')}


def flood(c, secs):
    """Incomplete frames: first segment of a 60000-byte frame, a fresh
    frame ID and source port each time."""
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    body = bytes(1400)
    end = time.monotonic() + secs
    n = 0
    pkts = []
    for i in range(512):
        c.a.sport = 1024 + random.randrange(64000)
        pkts.append(c.seg4(body, 60000, 1400 * (i % 8)))
    while not stop[0] and time.monotonic() < end:
        c.send(pkts)
        n += len(pkts)
        pkts = []
        for i in range(512):
            c.a.sport = 1024 + random.randrange(64000)
            pkts.append(c.seg4(body, 60000, 1400 * (i % 8)))
    print('flood', n)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--dev', default='veth0')
    p.add_argument('--dst-mac')
    p.add_argument('--inner-dst-mac', default='02:00:00:00:ee:02',
                   help='inner Ethernet destination of the inner_* classes')
    # No host has it: the ICMP errors the receiver answers with draw no
    # ARP reply over the tunnel that the counters would see.
    p.add_argument('--inner-src', default='192.168.0.99')
    p.add_argument('--inner-dst', default='192.168.0.2')
    p.add_argument('--src', default='10.0.0.1')
    p.add_argument('--dst', default='10.0.0.2')
    p.add_argument('--src6', default='fd00::1')
    p.add_argument('--dst6', default='fd00::2')
    p.add_argument('--port', type=int, default=7471)
    p.add_argument('--sport', type=int, default=40000)
    p.add_argument('--key', type=int, default=1)
    p.add_argument('--count', type=int, default=100)
    p.add_argument('--pace', type=int, default=200,
                   help='sleep 1 ms every PACE packets (0: never)')
    p.add_argument('--seed', type=int,
                   help="what a class sends depends on this and the class's "
                   'name (default: drawn)')
    p.add_argument('cmd', choices=['send', 'flood', 'list'])
    p.add_argument('args', nargs='*')
    a = p.parse_args()

    if a.cmd == 'list':
        for k, v in CLASSES.items():
            print('%-18s %s' % (k, v.__doc__))
        return 0
    if a.seed is None:
        a.seed = IDS.randrange(1 << 32)
    c = Crafter(a)
    if a.cmd == 'flood':
        random.seed('%d/flood' % a.seed)
        flood(c, float(a.args[0]) if a.args else 10)
        return 0
    for name in a.args:
        random.seed('%d/%s' % (a.seed, name))
        pkts, units = CLASSES[name](c, a.count)
        c.send(pkts)
        print(name, len(pkts), units)
        sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main())
