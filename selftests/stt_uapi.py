# SPDX-License-Identifier: GPL-2.0
"""The STT netlink constants, read from include/uapi/linux/stt.h, and
the netlink attribute layout.

The tests take the attribute numbers from the header the module is built
from rather than from a copy, so a renumbering cannot pass unnoticed.
"""
import os
import re
import struct

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      '..', 'include', 'uapi', 'linux', 'stt.h')


def _enums(text):
    """Yield each enum body of a C header as a list of (name, value)."""
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    for body in re.findall(r'enum\s*\w*\s*\{(.*?)\}', text, flags=re.S):
        value = -1
        members = []
        for item in body.split(','):
            item = item.strip()
            if not item:
                continue
            name, _, expr = item.partition('=')
            name = name.strip()
            expr = expr.strip()
            if expr:
                # "X_MAX = __X_END - 1" and the like: derived, not members
                if not re.fullmatch(r'(0x[0-9a-fA-F]+|\d+)', expr):
                    continue
                value = int(expr, 0)
            else:
                value += 1
            members.append((name, value))
        yield members


def constants(header=HEADER):
    """{name: value} of every enum member of the header."""
    with open(header) as f:
        text = f.read()
    out = {}
    for members in _enums(text):
        out.update(members)
    return out


def ifla(header=HEADER):
    """{'ID': 1, 'REMOTE': 2, ...}: the IFLA_STT_* attributes by short name."""
    return {name[len('IFLA_STT_'):]: value
            for name, value in constants(header).items()
            if name.startswith('IFLA_STT_') and
            name not in ('IFLA_STT_UNSPEC',)}


def attr(atype, data):
    """One netlink attribute: header, DATA, padding to 4 bytes (nla_put's
    layout), for tests that must write attributes no library would."""
    length = 4 + len(data)
    return struct.pack('=HH', length, atype) + data + b'\0' * (-length % 4)
