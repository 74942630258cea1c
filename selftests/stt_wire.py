#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Wire-level helpers for the STT selftests (no scapy: it takes ~30 s to
import under TCG).

  stt_wire.py probe PORT SRC,DST... [--wait S]
      For each pair, send a TCP SYN and a bare ACK from SRC to DST:PORT
      through a raw socket and listen WAIT seconds for any TCP segment
      DST:PORT sends back to the probes' source ports. Prints
      "sent N replies M" and a line per reply; exit 0 when nothing
      answered, 1 otherwise. With --bind-ns /run/netns/NAME, go on in
      that namespace with "bind PORT" (addresses: --bind, default
      0.0.0.0 and ::): one Python start instead of two.

  stt_wire.py bind PORT ADDR...
      Try to bind a TCP socket to each ADDR:PORT; print the result ("ok"
      or the errno name). Exit 0 when every bind() failed with
      EADDRINUSE.

  stt_wire.py check PCAP --id ID --mss MSS --l4off OFF --flags FLAGS
                    [--port 7471] [--ipv6]
      Decode PCAP (segments of STT frames sent by one peer, captured on
      the receiving side, sender TSO and checksum offload on the underlay
      off) with tshark and check every segment and every frame against
      the draft and the expected values; verify outer TCP checksums; print
      a summary and one line per problem; exit 0 when there was none.
"""

import argparse
import collections
import errno
import ipaddress
import os
import random
import select
import socket
import struct
import subprocess
import sys
import time


# The Internet checksum, for every selftest that builds packets (stt_craft,
# stt_icmp import it): csum_partial sums, csum_fold complements, csum16 does
# both.
def csum_partial(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def csum_fold(s):
    return ~s & 0xffff


def csum16(data):
    return csum_fold(csum_partial(data))


def tcp_segment(src, dst, sport, dport, seq, ack, flags, v6):
    hdr = struct.pack('!HHIIBBHHH', sport, dport, seq, ack, 5 << 4, flags,
                      65535, 0, 0)
    if v6:
        return hdr  # the kernel fills the checksum (IPV6_CHECKSUM)
    pseudo = (ipaddress.ip_address(src).packed +
              ipaddress.ip_address(dst).packed +
              struct.pack('!BBH', 0, socket.IPPROTO_TCP, len(hdr)))
    c = csum16(pseudo + hdr)
    return hdr[:16] + struct.pack('!H', c) + hdr[18:]


def probe_one(src, dst, port, wait):
    v6 = ':' in dst
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_TCP)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, 7, 16)  # IPV6_CHECKSUM
    s.bind((src, 0))
    sports = {}
    for name, flags in (('SYN', 0x02), ('ACK', 0x10)):
        sport = random.randint(20000, 60000)
        sports[sport] = name
        seg = tcp_segment(src, dst, sport, port, random.getrandbits(32),
                          random.getrandbits(32), flags, v6)
        s.sendto(seg, (dst, 0))
    replies = []
    deadline = time.monotonic() + wait
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        data, addr = s.recvfrom(65535)
        if not v6:  # IPv4 raw sockets see the IP header
            data = data[(data[0] & 0xf) * 4:]
        if addr[0] != dst or len(data) < 20:
            continue
        sp, dp, _, _, _, fl = struct.unpack('!HHIIBB', data[:14])
        if sp == port and dp in sports:
            replies.append('%s:%d answered %s with flags 0x%02x' %
                           (dst, port, sports[dp], fl))
    s.close()
    return replies


def probe(args):
    replies = []
    for pair in args.pairs:
        src, dst = pair.split(',')
        replies += probe_one(src, dst, args.port, args.wait)
    print('sent %d replies %d' % (2 * len(args.pairs), len(replies)))
    for r in replies:
        print(r)
    rc = 1 if replies else 0
    if args.bind_ns:
        setns(args.bind_ns)
        args.addrs = args.bind
        rc |= try_bind(args)
    return rc


def setns(path):
    """Enter the network namespace at path (os.setns needs Python 3.12)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, 0x40000000) != 0:   # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), 'setns ' + path)
    finally:
        os.close(fd)


def try_bind(args):
    rc = 0
    for addr in args.addrs:
        fam = socket.AF_INET6 if ':' in addr else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        try:
            s.bind((addr, args.port))
            res = 'ok'
        except OSError as e:
            res = errno.errorcode.get(e.errno, str(e.errno))
        s.close()
        print('bind %s:%d: %s' % (addr, args.port, res))
        if res != 'EADDRINUSE':
            rc = 1
    return rc


def tshark(pcap, fields, extra=(), heuristic=True):
    cmd = ['tshark', '-n', '-r', pcap, '-T', 'fields', '-E', 'separator=|',
           '-E', 'occurrence=a', '-E', 'aggregator=,']
    if heuristic:
        cmd += ['-o', 'ip.try_heuristic_first:TRUE',
                '-o', 'ipv6.try_heuristic_first:TRUE']
    cmd += list(extra)
    for f in fields:
        cmd += ['-e', f]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    rows = []
    for line in out.splitlines():
        vals = line.split('|')
        rows.append({f: (v.split(',') if v else [])
                     for f, v in zip(fields, vals)})
    return rows


def num(v):
    return int(v, 0)


def pcap_tcp_checksums(path):
    """Yield (frame number, checksum ok) for each TCP segment in a classic
    pcap of Ethernet frames, verifying the outer TCP checksum ourselves
    (tshark 4.0's STT dissector cannot, and the TCP dissector would need a
    second slow tshark run)."""
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack('<I', data[:4])[0]
    endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    pos, no = 24, 0
    while pos + 16 <= len(data):
        _, _, caplen, _ = struct.unpack(endian + 'IIII', data[pos:pos + 16])
        pkt = data[pos + 16:pos + 16 + caplen]
        pos += 16 + caplen
        no += 1
        etype = struct.unpack('!H', pkt[12:14])[0]
        if etype == 0x0800:
            ihl = (pkt[14] & 0xf) * 4
            tot = struct.unpack('!H', pkt[16:18])[0]
            if pkt[23] != 6:
                continue
            seg = pkt[14 + ihl:14 + tot]
            pseudo = pkt[26:34] + struct.pack('!BBH', 0, 6, len(seg))
        elif etype == 0x86dd:
            plen = struct.unpack('!H', pkt[18:20])[0]
            if pkt[20] != 6:
                continue
            seg = pkt[54:54 + plen]
            pseudo = pkt[22:54] + struct.pack('!IxxxB', len(seg), 6)
        else:
            continue
        yield no, csum16(pseudo + seg) == 0


FIELDS = ['frame.number', 'frame.len', 'stt.dport', 'stt.stream_id',
          'stt.pkt_len', 'stt.seg_off', 'stt.pkt_id', 'stt.tcp.data_offset',
          'stt.tcp.flags', 'stt.tcp.window', 'stt.tcp.urg_ptr', 'stt.version',
          'stt.flags', 'stt.l4offset', 'stt.reserved', 'stt.mss', 'stt.vlan',
          'stt.context_id', 'stt.padding', 'ip.len', 'ipv6.plen', 'ip.proto',
          'ipv6.nxt', 'tcp.len', 'vlan.id']


def check(args):
    problems = []
    v6 = args.ipv6
    iphl = 40 if v6 else 20
    inner4 = bool(args.flags & 0x04)

    # One tshark run (its start-up alone takes many seconds under TCG):
    # two passes so that every segment row knows its frame, STT
    # reassembly on, so the header fields and the inner packet show on the
    # segment that completes the frame.
    rows = tshark(args.pcap, FIELDS, ['-2'])
    frames = collections.defaultdict(list)
    headers = {}
    nsegs = 0
    for r in rows:
        fno = r['frame.number'][0]
        if not r['stt.pkt_id']:
            problems.append('frame %s: not decoded as STT' % fno)
            continue
        nsegs += 1
        seglen = num(r['frame.len'][0]) - 14 - iphl - 20
        seg = {'no': fno, 'len': seglen,
               'pkt_len': num(r['stt.pkt_len'][0]),
               'off': num(r['stt.seg_off'][0]),
               'sport': num(r['stt.stream_id'][0]),
               'dport': num(r['stt.dport'][0]),
               'doff': num(r['stt.tcp.data_offset'][0]),
               'tflags': num(r['stt.tcp.flags'][0]),
               'win': num(r['stt.tcp.window'][0]),
               'urg': num(r['stt.tcp.urg_ptr'][0])}
        key = (num(r['stt.pkt_id'][0]), seg['sport'])
        frames[key].append(seg)
        if r['stt.context_id']:
            if key in headers:
                problems.append('frame %s: second STT header for id 0x%08x'
                                % (fno, key[0]))
            headers[key] = r
        if seg['dport'] != args.port:
            problems.append('frame %s: dport %d' % (fno, seg['dport']))
        if seg['doff'] != 20:
            problems.append('frame %s: data offset %d bytes' %
                            (fno, seg['doff']))
        if seg['tflags'] & 0xfff & ~0x18 or not seg['tflags'] & 0x10:
            problems.append('frame %s: TCP flags 0x%x (want ACK[,PSH])' %
                            (fno, seg['tflags']))
        if seg['urg']:
            problems.append('frame %s: urgent pointer %d' % (fno, seg['urg']))
        if seg['off'] + seglen > seg['pkt_len']:
            problems.append('frame %s: offset %d + %d past frame length %d'
                            % (fno, seg['off'], seglen, seg['pkt_len']))

    windows = set()
    stats = collections.Counter()
    sports = set()
    for key, segs in frames.items():
        segs.sort(key=lambda s: s['off'])
        where = 'frame id 0x%08x (segment %s)' % (key[0], segs[0]['no'])
        plen = segs[0]['pkt_len']
        stats['frames'] += 1
        for s in segs:
            windows.add(s['win'])
            if s['pkt_len'] != plen:
                problems.append('%s: segments disagree on frame length' %
                                where)
        covered = sum(s['len'] for s in segs)
        ends = [s['off'] + s['len'] for s in segs]
        gaps_only = all(a['off'] + a['len'] <= b['off']
                        for a, b in zip(segs, segs[1:]))
        if covered < plen and gaps_only and max(ends) <= plen:
            # Segments lost before the capture point (a full backlog
            # under load): the frame is incomplete on the wire, not
            # malformed; TCP resends its data in a new frame.
            stats['incomplete'] += 1
            continue
        if covered != plen or segs[0]['off'] != 0 or max(ends) != plen:
            problems.append('%s: segments cover %d bytes of %d' %
                            (where, covered, plen))
            continue
        if len(segs) > 1:
            stats['multi_segment'] += 1
        last = segs[-1]
        if not last['tflags'] & 0x08:
            problems.append('%s: last segment without PSH' % where)
        if any(s['tflags'] & 0x08 for s in segs[:-1]):
            problems.append('%s: PSH before the last segment' % where)
        r = headers.get(key)
        if r is None:
            if last['len'] <= 20:   # tshark 4.0 cannot reassemble those
                stats['short_tail'] += 1
            else:
                problems.append('%s: tshark did not decode the frame' %
                                where)
            continue
        stats['decoded'] += 1
        ver = num(r['stt.version'][0])
        flags = num(r['stt.flags'][0])
        l4 = num(r['stt.l4offset'][0])
        mss = num(r['stt.mss'][0])
        ctx = num(r['stt.context_id'][0])
        rsvd = num(r['stt.reserved'][0]) if r['stt.reserved'] else 0
        pad = num(r['stt.padding'][0]) if r['stt.padding'] else 0
        if ver != 0 or rsvd or pad:
            problems.append('%s: version %d reserved %d padding %d' %
                            (where, ver, rsvd, pad))
        if ctx != args.id:
            problems.append('%s: context id %d, want %d' %
                            (where, ctx, args.id))
        if r['vlan.id']:
            problems.append('%s: inner frame carries a VLAN tag' % where)
        # The inner IP header follows the outer one in field order.
        ilen = (r['ipv6.plen'] if v6 else r['ip.len'])[1:]
        other = r['ip.len'] if v6 else r['ipv6.plen']
        if inner4 == (not v6):
            inner_len = ilen
        else:
            inner_len = other
        proto = (r['ipv6.nxt'] if v6 else r['ip.proto'])[1:] + \
            (r['ip.proto'] if v6 else r['ipv6.nxt'])
        if not inner_len:
            stats['other'] += 1
            if flags & 0x0e:
                problems.append('%s: non-IP frame with flags 0x%02x' %
                                (where, flags))
            continue
        inner = 14 + num(inner_len[0]) + (0 if inner4 else 40)
        if plen != 18 + inner:
            problems.append('%s: frame length %d, 18 + inner frame %d' %
                            (where, plen, inner))
        if proto[:1] != ['6']:
            stats['other'] += 1
            if flags & 0x0e:
                problems.append('%s: non-TCP frame with flags 0x%02x' %
                                (where, flags))
            continue
        sports.add(key[1])
        stats['tcp'] += 1
        if flags != args.flags:
            problems.append('%s: flags 0x%02x, want 0x%02x' %
                            (where, flags, args.flags))
        if l4 != args.l4off:
            problems.append('%s: L4 offset %d, want %d' %
                            (where, l4, args.l4off))
        # Inner TCP payload: frame - STT - Ethernet - IP - TCP header
        # (with timestamps, 32 bytes).
        payload = inner - 14 - (20 if inner4 else 40) - 32
        if payload > args.mss:
            stats['gso'] += 1
            if mss != args.mss:
                problems.append('%s: inner payload %d, MSS %d, want %d' %
                                (where, payload, mss, args.mss))
        elif mss not in (0, args.mss):
            problems.append('%s: MSS %d on a %d-byte payload' %
                            (where, mss, payload))
    if len(windows) > 1:
        problems.append('window not constant: %s' % sorted(windows))
    if not stats['gso']:
        problems.append('no frame carried an inner GSO packet')
    if stats['incomplete'] * 4 > stats['frames']:
        problems.append('%d of %d frames incomplete on the wire' %
                        (stats['incomplete'], stats['frames']))

    for no, ok in pcap_tcp_checksums(args.pcap):
        if not ok:
            stats['bad_csum'] += 1
            if stats['bad_csum'] <= 3:
                problems.append('frame %d: outer TCP checksum wrong' % no)

    print('segments %d frames %d (multi-segment %d, decoded %d, tcp %d, '
          'gso %d, other %d, short tail not decodable %d, incomplete %d) '
          'bad checksums %d inner-flow source ports %d windows %s' %
          (nsegs, stats['frames'], stats['multi_segment'], stats['decoded'],
           stats['tcp'], stats['gso'], stats['other'], stats['short_tail'],
           stats['incomplete'], stats['bad_csum'], len(sports),
           sorted(windows)))
    for p in problems[:20]:
        print('problem:', p)
    if len(problems) > 20:
        print('problem: ... %d more' % (len(problems) - 20))
    return 1 if problems or not nsegs else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    pp = sub.add_parser('probe')
    pp.add_argument('port', type=int)
    pp.add_argument('pairs', nargs='+', metavar='SRC,DST')
    pp.add_argument('--wait', type=float, default=1.5)
    pp.add_argument('--bind-ns', metavar='PATH',
                    help='then enter this netns and run "bind PORT ADDR..."')
    pp.add_argument('--bind', nargs='+', default=['0.0.0.0', '::'],
                    metavar='ADDR')
    pb = sub.add_parser('bind')
    pb.add_argument('port', type=int)
    pb.add_argument('addrs', nargs='+')
    pc = sub.add_parser('check')
    pc.add_argument('pcap')
    pc.add_argument('--id', type=lambda v: int(v, 0), required=True)
    pc.add_argument('--mss', type=int, required=True)
    pc.add_argument('--l4off', type=int, required=True)
    pc.add_argument('--flags', type=lambda v: int(v, 0), required=True)
    pc.add_argument('--port', type=int, default=7471)
    pc.add_argument('--ipv6', action='store_true')
    args = p.parse_args()
    return {'probe': probe, 'bind': try_bind, 'check': check}[args.cmd](args)


if __name__ == '__main__':
    sys.exit(main())
