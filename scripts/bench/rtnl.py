# SPDX-License-Identifier: GPL-2.0
"""The few rtnetlink link attributes make bench sets that Debian 12's
iproute2 (6.1) cannot: gso/gro_ipv4_max_size (BIG TCP for IPv4, 6.3+).

python3 rtnl.py DEV NAME=VALUE...  sets u32 link attributes of DEV in the
current network namespace; read back through "ip -d -j link show".
"""

import os
import socket
import struct
import sys

RTM_NEWLINK = 16
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2
# include/uapi/linux/if_link.h
IFLA = {
    "gso_max_size": 41,
    "gro_max_size": 58,
    "gso_ipv4_max_size": 63,
    "gro_ipv4_max_size": 64,
}


def _attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack("HH", n, kind) + payload + b"\0" * ((4 - n % 4) % 4)


def set_link(dev, **values):
    """Set u32 attributes of DEV; raises OSError with the kernel's errno
    (and its extack message when it sends one)."""
    index = socket.if_nametoindex(dev)
    attrs = b"".join(_attr(IFLA[k], struct.pack("I", v))
                     for k, v in values.items())
    body = struct.pack("BxHiII", socket.AF_UNSPEC, 0, index, 0, 0) + attrs
    msg = struct.pack("IHHII", 16 + len(body), RTM_NEWLINK,
                      NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                       socket.NETLINK_ROUTE) as s:
        # NETLINK_EXT_ACK = 11: the kernel's message along with the error
        s.setsockopt(270, 11, 1)
        s.send(msg)
        reply = s.recv(65536)
    length, kind, flags = struct.unpack_from("IHH", reply)
    if kind != NLMSG_ERROR:
        return
    err, = struct.unpack_from("i", reply, 16)
    if err == 0:
        return
    text = ""
    # extack TLVs follow the echoed request: its header alone if the
    # kernel capped it (NLM_F_CAPPED), else all of it
    off = 20 + (16 if flags & 0x100 else len(msg))
    while off + 4 <= length:
        n, t = struct.unpack_from("HH", reply, off)
        if n < 4:
            break
        if t == 1:  # NLMSGERR_ATTR_MSG
            text = reply[off + 4:off + n].rstrip(b"\0").decode(
                errors="replace")
        off += (n + 3) & ~3
    raise OSError(-err, os.strerror(-err) + (": " + text if text else ""))


def main(argv):
    if len(argv) < 2:
        print("usage: rtnl.py DEV NAME=VALUE...", file=sys.stderr)
        return 2
    try:
        set_link(argv[0], **{k: int(v) for k, v in
                             (a.split("=", 1) for a in argv[1:])})
    except OSError as e:
        print("%s: %s" % (argv[0], e.strerror), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
