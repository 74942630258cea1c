#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold every packet of a device in a packet socket until told to stop.

  stt_hold.py DEV     prints "ready" once bound; on SIGUSR1 (or SIGTERM)
                      reads what it holds and prints "<packets> <bytes>"

A packet socket that does not read keeps a clone of each received skb
(packet_rcv clones shared skbs): the STT receive path then works on
segments whose data and shared info another skb still owns, as it does
under tcpdump without a ring or under netem duplication.
"""

import signal
import socket
import sys

SO_RCVBUFFORCE = 33
ETH_P_ALL = 0x0003


def main():
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 512 << 20)
    s.bind((sys.argv[1], 0))
    sigs = [signal.SIGUSR1, signal.SIGTERM]
    signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    print('ready', flush=True)
    signal.sigwait(sigs)
    s.setblocking(False)
    n = b = 0
    while True:
        try:
            d = s.recv(65536)
        except BlockingIOError:
            break
        n += 1
        b += len(d)
    print(n, b, flush=True)


if __name__ == '__main__':
    main()
