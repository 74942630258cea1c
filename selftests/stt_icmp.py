#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Send one ICMP "fragmentation needed" or ICMPv6 "packet too big".

  stt_icmp.py [--src ADDR] --to ADDR --quote-src ADDR --quote-dst ADDR
              --dport PORT --mtu MTU

The message goes to --to (from --src, default: the route's choice) and
quotes the IP header and the first 20 bytes of a TCP segment from
--quote-src to --quote-dst, destination port --dport, as a router that
could not forward that segment would. The address family follows --to.
A raw socket sends it: the kernel adds the outer IP header and, for
ICMPv6, the checksum; the ICMPv4 checksum is ours.
"""

import argparse
import socket
import struct

from stt_wire import csum16 as csum


def tcp_quote(dport):
    # sport, dport, seq (frame length 4000, offset 0), ack (frame ID),
    # data offset 5, ACK|PSH, window, checksum, urgent pointer
    return struct.pack('!HHIIBBHHH', 40000, dport, 4000 << 16, 0x1234,
                       5 << 4, 0x18, 0xffff, 0, 0)


def icmp4(a):
    qsrc = socket.inet_pton(socket.AF_INET, a.quote_src)
    qdst = socket.inet_pton(socket.AF_INET, a.quote_dst)
    tcp = tcp_quote(a.dport)
    iph = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 1500, 1, 0x4000, 64, 6, 0,
                      qsrc, qdst)
    iph = iph[:10] + struct.pack('!H', csum(iph)) + iph[12:]
    body = iph + tcp
    # type 3 code 4, checksum, unused, next-hop MTU
    msg = struct.pack('!BBHHH', 3, 4, 0, 0, a.mtu) + body
    msg = msg[:2] + struct.pack('!H', csum(msg)) + msg[4:]
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    if a.src:
        s.bind((a.src, 0))
    s.sendto(msg, (a.to, 0))


def icmp6(a):
    qsrc = socket.inet_pton(socket.AF_INET6, a.quote_src)
    qdst = socket.inet_pton(socket.AF_INET6, a.quote_dst)
    tcp = tcp_quote(a.dport)
    ip6h = struct.pack('!IHBB16s16s', 6 << 28, 1440, 6, 64, qsrc, qdst)
    # type 2 code 0, checksum (the kernel's), MTU
    msg = struct.pack('!BBHI', 2, 0, 0, a.mtu) + ip6h + tcp
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW,
                      socket.IPPROTO_ICMPV6)
    if a.src:
        s.bind((a.src, 0))
    s.sendto(msg, (a.to, 0))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--src')
    p.add_argument('--to', required=True)
    p.add_argument('--quote-src', required=True)
    p.add_argument('--quote-dst', required=True)
    p.add_argument('--dport', type=int, default=7471)
    p.add_argument('--mtu', type=int, required=True)
    a = p.parse_args()
    if ':' in a.to:
        icmp6(a)
    else:
        icmp4(a)


if __name__ == '__main__':
    main()
