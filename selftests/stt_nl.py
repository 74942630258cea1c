#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Raw rtnetlink requests for selftests/netlink.sh, through pyroute2.

stt_nl.py {add|set} NAME [mtu=N] [id=N] [remote=A] [local=A] [port=N]
          [ttl=N] [ttl_inherit=N] [tos=N] [df=N] [external] [link=IFINDEX]
stt_nl.py --serve

One RTM_NEWLINK of kind stt; prints "Error: <extack message>." on stderr
and exits 1 when the kernel refuses it. ip(8) checks some of these
combinations itself before it sends anything: this sends whatever it is
given, so what is tested is the kernel's validation.

With --serve, one request per line of stdin (the same words), one reply
line each on stdout: "ok" or the error line; until end of input. Under
TCG, importing pyroute2 costs seconds: a test that sends many requests
pays it once.
"""
import ipaddress
import os
import sys

from pyroute2 import IPRoute, NetlinkError
from pyroute2.netlink import nla
from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stt_uapi  # noqa: E402

# pyroute2's encoding of each attribute; the numbers come from
# include/uapi/linux/stt.h (an attribute added there and not here is a
# KeyError, not a silent misnumbering).
TYPES = {
    'ID': 'uint64', 'REMOTE': 'ip4addr', 'REMOTE6': 'ip6addr',
    'LOCAL': 'ip4addr', 'LOCAL6': 'ip6addr', 'PORT': 'be16',
    'TTL': 'uint8', 'TTL_INHERIT': 'uint8', 'TOS': 'uint8', 'DF': 'uint8',
    'COLLECT_METADATA': 'flag', 'LINK': 'uint32', 'PAD': 'hex',
}


def _nla_map():
    # pyroute2 numbers the attributes by their place in the map
    names = {num: name for name, num in stt_uapi.ifla().items()}
    return tuple(('IFLA_STT_' + names[num], TYPES[names[num]])
                 if num in names else ('IFLA_STT_UNSPEC', 'none')
                 for num in range(max(names) + 1))


class stt_data(nla):
    nla_map = _nla_map()


def request(argv):
    """The keyword arguments of IPRoute.link() for ARGV."""
    req = {'kind': 'stt'}
    for arg in argv:
        key, _, val = arg.partition('=')
        if key == 'mtu':
            req['mtu'] = int(val)
        elif key in ('remote', 'local'):
            addr = ipaddress.ip_address(val)
            req['stt_' + key + ('6' if addr.version == 6 else '')] = str(addr)
        elif key == 'external':
            req['stt_collect_metadata'] = True
        elif key in ('id', 'port', 'ttl', 'ttl_inherit', 'tos', 'df', 'link'):
            req['stt_' + key] = int(val, 0)
        else:
            raise ValueError('stt_nl.py: unknown argument ' + arg)
    return req


def send(ipr, argv):
    """Send the request of ARGV; None if accepted, else the error line."""
    if len(argv) < 2 or argv[0] not in ('add', 'set'):
        return 'stt_nl.py: expected add|set NAME, got %r' % ' '.join(argv)
    try:
        ipr.link(argv[0], ifname=argv[1], **request(argv[2:]))
    except ValueError as e:
        return str(e)
    except NetlinkError as e:
        return 'Error: %s.' % e.args[1]
    return None


def serve(ipr):
    for line in sys.stdin:
        err = send(ipr, line.split())
        print('ok' if err is None else err, flush=True)


def main():
    ifinfmsg.ifinfo.register_link_kind(module={'stt': stt_data})
    with IPRoute(ext_ack=True) as ipr:
        if sys.argv[1:] == ['--serve']:
            serve(ipr)
            return
        err = send(ipr, sys.argv[1:])
        if err is not None:
            print(err, file=sys.stderr)
            sys.exit(1)


if __name__ == '__main__':
    main()
