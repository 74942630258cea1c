#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Collect IPFIX (RFC 7011) over UDP; print the tunnel of each flow record.

  stt_ipfix.py --port PORT [--addr ADDR] [--timeout SECONDS]

Open vSwitch's bridge exporter, with enable-tunnel-sampling, describes
a packet sent out of a tunnel port with VMware's enterprise elements
(PEN 6876): tunnel type, key, IPv4 source and destination, transport
ports. Its source address and port are what the tunnel device's
ndo_fill_metadata_dst() found. One JSON object per data record that
carries them goes to standard output, {"src", "dst", "sport", "dport",
"type"}, as it comes, until the time runs out (or a signal ends the
script); the exit status then is 0 if there was one. Templates are
learnt as they come (OVS sends them before data). Stop the exporter
before the collector: it logs every message it cannot deliver.
"""

import argparse
import json
import socket
import struct
import sys
import time

VMWARE = 6876
ELEMENTS = {891: 'type', 893: 'src', 894: 'dst', 896: 'sport', 897: 'dport'}
VARLEN = 0xffff


def parse_fields(body, off, count):
    """@count field specifiers (element, length[, PEN]) from @off."""
    fields = []
    for _ in range(count):
        elem, length = struct.unpack_from('!HH', body, off)
        off += 4
        pen = 0
        if elem & 0x8000:
            elem &= 0x7fff
            pen, = struct.unpack_from('!I', body, off)
            off += 4
        fields.append((pen, elem, length))
    return fields, off


def parse_template_set(body, domain, templates, options):
    """Template records: id, field count[, scope count], fields. An
    options template's records are no flows: its ID is forgotten."""
    off = 0
    while off + 4 <= len(body):
        tid, count = struct.unpack_from('!HH', body, off)
        off += 6 if options else 4
        fields, off = parse_fields(body, off, count)
        if options or not fields:	# no fields: a withdrawal
            templates.pop((domain, tid), None)
        else:
            templates[(domain, tid)] = fields


def parse_data_set(body, fields):
    """Yield the tunnel elements of each record of one data set."""
    off = 0
    while off < len(body):
        start = off
        rec = {}
        for pen, elem, length in fields:
            if length == VARLEN:
                length = body[off]
                off += 1
                if length == 255:
                    length, = struct.unpack_from('!H', body, off)
                    off += 2
            value = body[off:off + length]
            off += length
            if len(value) < length:
                return		# padding at the end of the set
            name = ELEMENTS.get(elem) if pen == VMWARE else None
            if name in ('src', 'dst') and length == 4:
                rec[name] = socket.inet_ntop(socket.AF_INET, value)
            elif name and name not in ('src', 'dst'):
                rec[name] = int.from_bytes(value, 'big')
        if 'src' in rec:
            yield rec
        if off == start:
            return		# records of no bytes: nothing more to read


def records(msg, templates):
    """Yield the tunnel records of one IPFIX message."""
    if len(msg) < 16:
        return
    version, length, _, _, domain = struct.unpack_from('!HHIII', msg)
    if version != 10:
        return
    off = 16
    while off + 4 <= min(length, len(msg)):
        sid, slen = struct.unpack_from('!HH', msg, off)
        if slen < 4:
            return
        body = msg[off + 4:off + slen]
        if sid in (2, 3):
            parse_template_set(body, domain, templates, sid == 3)
        elif sid >= 256 and (domain, sid) in templates:
            yield from parse_data_set(body, templates[(domain, sid)])
        off += slen


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--addr', default='127.0.0.1')
    ap.add_argument('--port', type=int, required=True)
    ap.add_argument('--timeout', type=float, default=30)
    a = ap.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((a.addr, a.port))
    print('listening', file=sys.stderr, flush=True)
    templates = {}
    seen = 0
    end = time.monotonic() + a.timeout
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            msg = sock.recv(65535)
        except socket.timeout:
            break
        try:
            for rec in records(msg, templates):
                print(json.dumps(rec), flush=True)
                seen += 1
        except (struct.error, IndexError, ValueError) as e:
            print(f'malformed message skipped: {e}', file=sys.stderr,
                  flush=True)
    return 0 if seen else 1


if __name__ == '__main__':
    sys.exit(main())
