#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold every packet of a device in a packet socket until told to stop.

  stt_hold.py [--udp-port PORT] DEV
      prints "ready" once bound; on SIGUSR1 (or SIGTERM) reads what it
      holds and prints "<packets> <bytes>", with --udp-port followed by
      "<IPv4 UDP datagrams to PORT> <those marked TP_STATUS_CSUM_VALID>"

A packet socket that does not read keeps a clone of each received skb
(packet_rcv clones shared skbs): the STT receive path then works on
segments whose data and shared info another skb still owns, as it does
under tcpdump without a ring or under netem duplication.

TP_STATUS_CSUM_VALID (PACKET_AUXDATA) is what the kernel tells packet
sockets when skb_csum_unnecessary() holds: that a checksum of the packet
was verified. Capture tools (Suricata, Zeek) skip their own check on it.
"""

import argparse
import signal
import socket
import struct

SO_RCVBUFFORCE = 33
ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_CSUM_VALID = 1 << 7


def udp_dport(d):
    """The destination port of an Ethernet/IPv4/UDP frame, else None."""
    if len(d) < 34 or d[12:14] != b'\x08\x00' or d[23] != 17:
        return None
    l4 = 14 + (d[14] & 0x0f) * 4
    if len(d) < l4 + 4:
        return None
    return struct.unpack_from('!H', d, l4 + 2)[0]


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--udp-port', type=int)
    p.add_argument('dev')
    a = p.parse_args()
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 512 << 20)
    if a.udp_port is not None:
        s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.bind((a.dev, 0))
    sigs = [signal.SIGUSR1, signal.SIGTERM]
    signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    print('ready', flush=True)
    signal.sigwait(sigs)
    s.setblocking(False)
    n = b = udp = valid = 0
    while True:
        try:
            d, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(32))
        except BlockingIOError:
            break
        n += 1
        b += len(d)
        if a.udp_port is None or udp_dport(d) != a.udp_port:
            continue
        udp += 1
        for level, kind, data in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA and \
                    struct.unpack_from('I', data)[0] & TP_STATUS_CSUM_VALID:
                valid += 1
    print(n, b, *((udp, valid) if a.udp_port is not None else ()),
          flush=True)


if __name__ == '__main__':
    main()
