#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A userspace NFQUEUE verdict program that accepts everything.

  stt_nfq.py QUEUE OUT     bind to NFQUEUE number QUEUE, create OUT.ready,
                           accept every packet queued (metadata only, one
                           batch verdict per read) until SIGTERM, then
                           write "<packets> <batches>" to OUT

The kernel reinjects accepted packets from the verdict's sendmsg(), in
process context with bottom halves enabled: the netfilter hooks after
the queue rule run there (as under Suricata inline or any "queue" rule).
Raw nfnetlink (NETLINK_NETFILTER, subsystem NFNL_SUBSYS_QUEUE) with
struct: pyroute2 0.7 has no NFQUEUE client.
"""

import errno
import os
import signal
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stt_uapi import attr  # noqa: E402

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET = 0
NFQNL_MSG_CONFIG = 2
NFQNL_MSG_VERDICT_BATCH = 3
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NFQA_CFG_CMD = 1
NFQA_CFG_PARAMS = 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2
NF_ACCEPT = 1


def msg(typ, queue, attrs, flags=NLM_F_REQUEST):
    body = struct.pack('=BBH', socket.AF_UNSPEC, 0, socket.htons(queue)) + \
        b''.join(attrs)
    return struct.pack('=IHHII', 16 + len(body),
                       (NFNL_SUBSYS_QUEUE << 8) | typ, flags, 0, 0) + body


def config(sock, queue, attrs):
    sock.send(msg(NFQNL_MSG_CONFIG, queue, attrs, NLM_F_REQUEST | NLM_F_ACK))
    data = sock.recv(65536)
    _, typ, _, _, _ = struct.unpack_from('=IHHII', data)
    if typ == NLMSG_ERROR:
        err = struct.unpack_from('=i', data, 16)[0]
        if err:
            raise OSError(-err, 'NFQNL_MSG_CONFIG: %s' % errno.errorcode.get(-err))


def main():
    queue, out = int(sys.argv[1]), sys.argv[2]
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((0, 0))
    config(sock, queue, [attr(NFQA_CFG_CMD, struct.pack(
        '=BxH', NFQNL_CFG_CMD_BIND, socket.htons(socket.AF_UNSPEC)))])
    config(sock, queue, [attr(NFQA_CFG_PARAMS,
                              struct.pack('>IB', 0, NFQNL_COPY_META))])
    sock.settimeout(0.2)
    open(out + '.ready', 'w').close()
    packets = batches = 0
    while not stop[0]:
        try:
            data = sock.recv(1 << 20)
        except socket.timeout:
            continue
        except OSError as e:
            if e.errno in (errno.ENOBUFS, errno.EINTR):
                continue
            raise
        last = None
        off = 0
        while off + 16 <= len(data):
            ln, typ, _, _, _ = struct.unpack_from('=IHHII', data, off)
            if ln < 16:
                break
            if typ == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                a = off + 20
                while a + 4 <= off + ln:
                    alen, atyp = struct.unpack_from('=HH', data, a)
                    if alen < 4:
                        break
                    if atyp & 0x7fff == NFQA_PACKET_HDR:
                        last = struct.unpack_from('>I', data, a + 4)[0]
                        packets += 1
                    a += (alen + 3) & ~3
            off += (ln + 3) & ~3
        if last is not None:
            # Every packet up to this ID: accepted.
            sock.send(msg(NFQNL_MSG_VERDICT_BATCH, queue, [attr(
                NFQA_VERDICT_HDR, struct.pack('>II', NF_ACCEPT, last))]))
            batches += 1
    with open(out, 'w') as f:
        f.write('%d %d\n' % (packets, batches))
    return 0


if __name__ == '__main__':
    sys.exit(main())
