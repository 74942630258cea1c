#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One raw rtnetlink request for selftests/netlink.sh.

stt_nl.py {add|set} NAME [mtu=N] [id=N] [remote=A] [local=A] [port=N]
          [ttl=N] [ttl_inherit=N] [tos=N] [df=N] [external] [link=IFINDEX]

One RTM_NEWLINK of kind stt; prints "Error: <extack message>" on stderr
and exits 1 when the kernel refuses it.
"""
import ipaddress
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stt_uapi  # noqa: E402

# The attribute numbers, from include/uapi/linux/stt.h itself.
IFLA = {k.lower(): v for k, v in stt_uapi.ifla().items()}
IFLA['external'] = IFLA['collect_metadata']
NESTED = 0x8000


def attr(atype, data):
    length = 4 + len(data)
    return struct.pack('=HH', length, atype) + data + b'\0' * (-length % 4)


op, name = sys.argv[1], sys.argv[2]
data = b''
extra = b''
for arg in sys.argv[3:]:
    key, _, val = arg.partition('=')
    if key == 'mtu':
        extra += attr(4, struct.pack('=I', int(val)))
    elif key == 'id':
        data += attr(IFLA[key], struct.pack('=Q', int(val, 0)))
    elif key in ('remote', 'local'):
        addr = ipaddress.ip_address(val)
        data += attr(IFLA[key + ('6' if addr.version == 6 else '')],
                     addr.packed)
    elif key == 'port':
        data += attr(IFLA[key], struct.pack('!H', int(val)))
    elif key in ('ttl', 'ttl_inherit', 'tos', 'df'):
        data += attr(IFLA[key], struct.pack('=B', int(val, 0)))
    elif key == 'external':
        data += attr(IFLA[key], b'')
    elif key == 'link':
        data += attr(IFLA[key], struct.pack('=I', int(val)))
    else:
        sys.exit('stt_nl.py: unknown argument ' + arg)

linkinfo = attr(1, b'stt\0') + attr(2 | NESTED, data)
body = struct.pack('=BxHiII', 0, 0, 0, 0, 0)
body += attr(3, name.encode() + b'\0') + extra + attr(18 | NESTED, linkinfo)
flags = 0x1 | 0x4			# NLM_F_REQUEST | NLM_F_ACK
if op == 'add':
    flags |= 0x400 | 0x200		# NLM_F_CREATE | NLM_F_EXCL
msg = struct.pack('=IHHII', 16 + len(body), 16, flags, 1, 0) + body

sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
sock.setsockopt(270, 10, 1)		# NETLINK_CAP_ACK
sock.setsockopt(270, 11, 1)		# NETLINK_EXT_ACK
sock.send(msg)
reply = sock.recv(65536)
length, mtype, mflags = struct.unpack('=IHH', reply[:8])
if mtype != 2:				# NLMSG_ERROR
    sys.exit('stt_nl.py: unexpected reply type %d' % mtype)
err = struct.unpack('=i', reply[16:20])[0]
if not err:
    sys.exit(0)
text = os.strerror(-err)
off = 20 + 16				# capped: the request's header only
while off + 4 <= length:
    alen, atype = struct.unpack('=HH', reply[off:off + 4])
    if alen < 4:
        break
    if atype == 1:			# NLMSGERR_ATTR_MSG
        text = reply[off + 4:off + alen].rstrip(b'\0').decode()
    off += (alen + 3) & ~3
print('Error: ' + text + '.', file=sys.stderr)
sys.exit(1)
