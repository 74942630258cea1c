#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Checksummed one-way TCP transfers for the STT selftests.

  stt_tcp.py server PORT OUT
      Listen on [::]:PORT (IPv4 too), create OUT.ready, take connections
      one after the other, read each to EOF and append "<bytes> <sha256> <peer>" to OUT
      before closing it. Runs until killed. Prints nothing.

  stt_tcp.py client PORT BYTES ADDR...
      For each ADDR in turn: connect to ADDR:PORT, send BYTES of random
      data, wait for the server to close, print
      "<addr> <local addr> <bytes> <sha256> <seconds> <Mbit/s>" (or
      "<addr> error <reason>" and go on with the next address).

The server's line for a connection is written before the client sees the
close, so after the client is done OUT holds one line per transfer, in
order. Python starts slowly under TCG (seconds): one server per namespace
and one client run for several transfers keep that cost down.
"""

import argparse
import hashlib
import os
import socket
import sys
import time

CHUNK = 256 * 1024


def server(args):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(('::', args.port))
    s.listen(4)
    open(args.out + '.ready', 'w').close()
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    while True:
        conn, peer = s.accept()
        conn.settimeout(args.timeout)
        h = hashlib.sha256()
        total = 0
        try:
            while True:
                n = conn.recv_into(buf)
                if not n:
                    break
                h.update(view[:n])
                total += n
            res = '%d %s' % (total, h.hexdigest())
        except OSError as e:
            res = '%d error:%s' % (total, e.__class__.__name__)
        peer = peer[0]
        if peer.startswith('::ffff:'):
            peer = peer[7:]
        with open(args.out, 'a') as f:
            f.write('%s %s\n' % (res, peer))
        conn.close()


def send_one(addr, port, nbytes, timeout):
    fam = socket.AF_INET6 if ':' in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect((addr, port))
    local = s.getsockname()[0]
    h = hashlib.sha256()
    left = nbytes
    start = time.monotonic()
    while left > 0:
        data = os.urandom(min(CHUNK, left))
        h.update(data)
        s.sendall(data)
        left -= len(data)
    s.shutdown(socket.SHUT_WR)
    while s.recv(4096):   # the server closes once it has it all
        pass
    secs = time.monotonic() - start
    s.close()
    return '%s %d %s %.2f %.0f' % (local, nbytes, h.hexdigest(), secs,
                                   nbytes * 8 / secs / 1e6)


def client(args):
    rc = 0
    for addr in args.addrs:
        try:
            res = send_one(addr, args.port, args.bytes, args.timeout)
        except OSError as e:
            res = 'error %s' % e
            rc = 1
        print(addr, res, flush=True)
    return rc


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--timeout', type=float, default=120)
    sub = p.add_subparsers(dest='cmd', required=True)
    ps = sub.add_parser('server')
    ps.add_argument('port', type=int)
    ps.add_argument('out')
    pc = sub.add_parser('client')
    pc.add_argument('port', type=int)
    pc.add_argument('bytes', type=int)
    pc.add_argument('addrs', nargs='+')
    args = p.parse_args()
    if args.cmd == 'server':
        server(args)
        return 0
    return client(args)


if __name__ == '__main__':
    sys.exit(main())
