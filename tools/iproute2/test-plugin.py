#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of link_stt.so with Debian's /usr/sbin/ip, no stt module needed.

Parsing: "ip link add|set ... type stt ..." runs under strace in a fresh
network namespace; the IFLA_INFO_DATA of the RTM_NEWLINK it sends is decoded
and compared (the kernel then refuses the unknown kind, which is expected).
Printing: a crafted RTM_NEWLINK is fed to "ip -d monitor file"; for JSON, gdb
turns JSON on inside that ip (ip monitor has no JSON of its own in 6.1).
Usage: test-plugin.py [PLUGIN_DIR] (default: this directory).
"""
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LIBDIR = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else HERE
ENV = dict(os.environ, IP_LIB_DIR=LIBDIR, LC_ALL='C')

# The attribute numbers, from include/uapi/linux/stt.h itself.
sys.path.insert(0, os.path.join(HERE, '..', '..', 'selftests'))
import stt_uapi  # noqa: E402

attr = stt_uapi.attr
IFLA = stt_uapi.ifla()
(ID, REMOTE, REMOTE6, LOCAL, LOCAL6, PORT, TTL, TTL_INHERIT, TOS, DF,
 COLLECT_METADATA, LINK) = (IFLA[n] for n in (
     'ID', 'REMOTE', 'REMOTE6', 'LOCAL', 'LOCAL6', 'PORT', 'TTL',
     'TTL_INHERIT', 'TOS', 'DF', 'COLLECT_METADATA', 'LINK'))
NAMES = {v: k for k, v in IFLA.items()}
DF_UNSET, DF_SET, DF_INHERIT = (stt_uapi.constants()['STT_DF_' + n]
                                 for n in ('UNSET', 'SET', 'INHERIT'))

failures = 0
count = 0


def result(name, ok, detail=''):
    global failures, count
    count += 1
    print('TEST: %-60s  [%s]' % (name, ' OK ' if ok else 'FAIL'))
    if not ok:
        failures += 1
        for line in detail.splitlines():
            print('    ' + line)


def decode(data):
    out = {}
    while len(data) >= 4:
        length, atype = struct.unpack('=HH', data[:4])
        out[NAMES.get(atype, atype)] = data[4:length]
        data = data[(length + 3) & ~3:]
    return out


def u8(v):
    return struct.pack('=B', v)


def be16(v):
    return struct.pack('!H', v)


def u32(v):
    return struct.pack('=I', v)


def u64(v):
    return struct.pack('=Q', v)


def ip4(a):
    return socket.inet_pton(socket.AF_INET, a)


def ip6(a):
    return socket.inet_pton(socket.AF_INET6, a)


NETNS = ['unshare', '-n'] if os.geteuid() == 0 else []


def run_ip(args):
    """Run ip under strace; return (rc, stderr, [(flags, info_data)])."""
    with tempfile.NamedTemporaryFile('r') as log:
        cmd = NETNS + ['strace', '-o', log.name, '-e', 'trace=sendmsg',
                       '-s', '4096', '-xx', 'ip'] + args
        p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
        trace = log.read()
    sent = []
    for m in re.finditer(r'nlmsg_type=RTM_NEWLINK, nlmsg_flags=([A-Z_|]+)'
                         r'(.*?)\], iov_len', trace):
        d = re.search(r'nla_type=IFLA_INFO_DATA\}, "((?:\\x[0-9a-f]{2})*)"',
                      m.group(2))
        data = bytes.fromhex(d.group(1).replace('\\x', '')) if d else None
        sent.append((m.group(1), data))
    return p.returncode, p.stderr, sent


def parse_ok(name, args, expect, change=False):
    verb = ['link', 'set', 'lo'] if change else ['link', 'add', 'stt9']
    rc, err, sent = run_ip(verb + ['type', 'stt'] + args)
    detail = 'ip %s\nstderr: %s\nsent: %r' % (' '.join(verb + args), err,
                                              sent)
    if len(sent) != 1 or sent[0][1] is None:
        result(name, False, detail)
        return
    flags, data = sent[0]
    got = decode(data)
    ok = got == expect and (('NLM_F_CREATE' in flags) != change)
    result(name, ok, detail + '\ngot:    %r\nexpect: %r' % (got, expect))


def parse_err(name, args, message, change=False):
    verb = ['link', 'set', 'lo'] if change else ['link', 'add', 'stt9']
    rc, err, sent = run_ip(verb + ['type', 'stt'] + args)
    # ip's own wording may differ between releases: any of a tuple will do.
    messages = message if isinstance(message, tuple) else (message,)
    ok = rc != 0 and not sent and any(m in err for m in messages)
    result(name, ok, 'rc %d, stderr: %s\nsent: %r\nexpect: %s' %
           (rc, err, sent, message))


def newlink(info_data, kind=b'stt\0'):
    linkinfo = attr(1, kind)
    if info_data is not None:
        linkinfo += attr(2, info_data)
    body = (struct.pack('=BxHiII', 0, 1, 42, 0x1043, 0) +
            attr(3, b'stt0\0') + attr(18, linkinfo))
    return struct.pack('=IHHII', 16 + len(body), 16, 0, 0, 0) + body


def show(info_data, json=False):
    with tempfile.NamedTemporaryFile('wb') as f:
        f.write(newlink(info_data))
        f.flush()
        if not json:
            p = subprocess.run(['ip', '-d', 'monitor', 'file', f.name],
                               env=ENV, capture_output=True, text=True)
            m = re.search(r'^    stt (.*)$', p.stdout, re.M)
            return m.group(1) if m else p.stdout + p.stderr
        p = subprocess.run(['gdb', '-q', '-batch', '-ex', 'break do_ipmonitor',
                            '-ex', 'run', '-ex', 'call (void)new_json_obj(1)',
                            '-ex', 'break exit', '-ex', 'continue',
                            '-ex', 'call (int)fflush(0)', '-ex', 'kill',
                            '--args', 'ip', '-d', 'monitor', 'file', f.name],
                           env=ENV, capture_output=True, text=True)
        m = re.search(r'"info_data":(\{[^}]*\})', p.stdout)
        return m.group(1) if m else p.stdout + p.stderr


def print_ok(name, info_data, text, json=None):
    got = show(info_data)
    result(name + ' (text)', got == text,
           'got:    %r\nexpect: %r' % (got, text))
    if json is None:
        return
    if not shutil.which('gdb'):
        print('TEST: %-60s  [SKIP]' % (name + ' (json)'))
        print('    gdb is not installed: it turns JSON on inside ip monitor')
        return
    got = show(info_data, json=True)
    result(name + ' (json)', got == json,
           'got:    %r\nexpect: %r' % (got, json))


def main():
    p = subprocess.run(['ip', 'link', 'help', 'stt'], env=ENV,
                       capture_output=True, text=True)
    result('ip link help stt', p.returncode == 0 and
           p.stdout.startswith('Usage: ... stt ') and
           'KEY   := 0-18446744073709551615' in p.stdout, p.stdout + p.stderr)
    rc, err, sent = run_ip(['link', 'add', 'x', 'type', 'stt', 'help'])
    result('ip link add x type stt help', rc != 0 and not sent and
           err.startswith('Usage: ... stt '), err)

    parse_ok('id + remote', ['id', '5', 'remote', '1.2.3.4'],
             {'ID': u64(5), 'REMOTE': ip4('1.2.3.4')})
    parse_ok('key (max) + IPv6 remote/local',
             ['key', '0xffffffffffffffff', 'remote', '2001:db8::1',
              'local', '2001:db8::2'],
             {'ID': u64(2**64 - 1), 'REMOTE6': ip6('2001:db8::1'),
              'LOCAL6': ip6('2001:db8::2')})
    parse_ok('id max decimal',
             ['id', '18446744073709551615', 'remote', '1.2.3.4'],
             {'ID': u64(2**64 - 1), 'REMOTE': ip4('1.2.3.4')})
    parse_ok('all options',
             ['remote', '192.0.2.2', 'local', '192.0.2.1', 'id', '42',
              'dstport', '7000', 'ttl', '64', 'tos', '0x10', 'df', 'unset',
              'dev', 'lo'],
             {'ID': u64(42), 'REMOTE': ip4('192.0.2.2'),
              'LOCAL': ip4('192.0.2.1'), 'PORT': be16(7000), 'TTL': u8(64),
              'TTL_INHERIT': u8(0), 'TOS': u8(0x10), 'DF': u8(DF_UNSET),
              'LINK': u32(1)})
    parse_ok('ttl inherit, tos inherit, df inherit',
             ['remote', '1.2.3.4', 'ttl', 'inherit', 'tos', 'inherit',
              'df', 'inherit'],
             {'REMOTE': ip4('1.2.3.4'), 'TTL_INHERIT': u8(1), 'TOS': u8(1),
              'DF': u8(DF_INHERIT)})
    parse_ok('ttl auto, df set', ['remote', '1.2.3.4', 'ttl', 'auto',
                                  'df', 'set'],
             {'REMOTE': ip4('1.2.3.4'), 'TTL': u8(0), 'TTL_INHERIT': u8(0),
              'DF': u8(DF_SET)})
    parse_ok('external', ['external'], {'COLLECT_METADATA': b''})
    parse_ok('external dstport', ['external', 'dstport', '7471'],
             {'COLLECT_METADATA': b'', 'PORT': be16(7471)})
    parse_ok('noexternal on create sends nothing for it',
             ['remote', '1.2.3.4', 'noexternal'], {'REMOTE': ip4('1.2.3.4')})
    parse_ok('change: only ttl', ['ttl', '5'],
             {'TTL': u8(5), 'TTL_INHERIT': u8(0)}, change=True)
    parse_ok('change: only id', ['id', '7'], {'ID': u64(7)}, change=True)
    parse_ok('change: only local', ['local', '10.0.0.1'],
             {'LOCAL': ip4('10.0.0.1')}, change=True)
    parse_ok('change: external is passed on', ['external'],
             {'COLLECT_METADATA': b''}, change=True)

    parse_err('id too big', ['id', '18446744073709551616'],
              'Error: argument "18446744073709551616" is wrong: invalid id')
    parse_err('id negative', ['id', '-1'], 'invalid id')
    parse_err('id 0x only', ['id', '0x'], 'invalid id')
    parse_err('id garbage', ['id', '12ab'], 'invalid id')
    parse_err('duplicate id/key', ['id', '1', 'key', '2'],
              ('Error: either "id" is duplicate, or "2" is a garbage.',
               'Error: either "id" is duplicate, or "2" is garbage.'))
    parse_err('remote multicast', ['remote', '224.0.0.1'],
              'invalid remote address')
    parse_err('remote any', ['remote', '::'], 'invalid remote address')
    parse_err('remote garbage', ['remote', 'foo'], 'invalid remote address')
    parse_err('families mixed', ['remote', '1.2.3.4', 'local', '::1'],
              'stt: remote and local addresses must be of the same family')
    parse_err('dstport 0', ['remote', '1.2.3.4', 'dstport', '0'],
              'is wrong: dstport')
    parse_err('dstport 65536', ['remote', '1.2.3.4', 'dstport', '65536'],
              'is wrong: dstport')
    parse_err('ttl 256', ['remote', '1.2.3.4', 'ttl', '256'],
              'TTL must be <= 255')
    parse_err('tos garbage', ['remote', '1.2.3.4', 'tos', 'zz'],
              'bad TOS value')
    parse_err('df garbage', ['remote', '1.2.3.4', 'df', 'maybe'],
              "DF must be 'unset', 'set' or 'inherit'")
    parse_err('dev missing', ['remote', '1.2.3.4', 'dev', 'nosuch0'],
              'Cannot find device "nosuch0"')
    parse_err('external + id', ['external', 'id', '1'],
              "stt: both 'external' and id cannot be specified")
    parse_err('external + remote', ['external', 'remote', '1.2.3.4'],
              "stt: both 'external' and remote cannot be specified")
    parse_err('external + noexternal', ['external', 'noexternal'],
              'Error: either "noexternal" is duplicate')
    parse_err('no remote on create', ['id', '1'],
              'stt: remote link partner not specified')
    parse_err('change: noexternal', ['noexternal'],
              "stt: 'noexternal' cannot be changed", change=True)
    parse_err('unknown word', ['remote', '1.2.3.4', 'bogus'],
              'stt: unknown command "bogus"?')
    parse_err('missing value', ['remote'], 'Command line is not complete')

    full = (attr(ID, u64(42)) + attr(REMOTE, ip4('192.0.2.2')) +
            attr(LOCAL, ip4('192.0.2.1')) + attr(PORT, be16(7471)) +
            attr(TTL, u8(64)) + attr(TTL_INHERIT, u8(0)) +
            attr(TOS, u8(0x10)) + attr(DF, u8(DF_SET)) + attr(LINK, u32(1)))
    print_ok('print IPv4 device', full,
             'id 42 remote 192.0.2.2 local 192.0.2.1 dstport 7471 ttl 64 '
             'tos 0x10 df set dev lo ',
             '{"id":42,"remote":"192.0.2.2","local":"192.0.2.1",'
             '"port":7471,"ttl":64,"tos":"0x10","df":"set",'
             '"external":false,"link":"lo"}')
    v6 = (attr(ID, u64(2**64 - 1)) + attr(REMOTE6, ip6('2001:db8::1')) +
          attr(LOCAL6, ip6('2001:db8::2')) + attr(PORT, be16(7471)) +
          attr(TTL, u8(0)) + attr(TTL_INHERIT, u8(1)) +
          attr(TOS, u8(1)) + attr(DF, u8(DF_INHERIT)))
    print_ok('print IPv6 device, inherit', v6,
             'id 18446744073709551615 remote 2001:db8::1 '
             'local 2001:db8::2 dstport 7471 ttl inherit tos inherit '
             'df inherit ',
             '{"id":18446744073709551615,"remote6":"2001:db8::1",'
             '"local6":"2001:db8::2","port":7471,"ttl_inherit":true,'
             '"ttl":0,"tos":"0x1","df":"inherit","external":false}')
    ext = (attr(ID, u64(0)) + attr(REMOTE, ip4('0.0.0.0')) +
           attr(PORT, be16(7471)) + attr(TTL, u8(0)) +
           attr(TTL_INHERIT, u8(0)) + attr(TOS, u8(0)) +
           attr(DF, u8(DF_UNSET)) + attr(COLLECT_METADATA, b''))
    print_ok('print external device', ext,
             'id 0 dstport 7471 ttl auto tos 0 df unset external ',
             '{"id":0,"port":7471,"ttl":0,"tos":"0","df":"unset",'
             '"external":true}')
    print_ok('print short attributes are skipped',
             attr(ID, u32(5)) + attr(PORT, b'\x1d') + attr(DF, u8(9)),
             'df 9 ', '{"df":9,"external":false}')
    print_ok('print without INFO_DATA', None, '', '{}')

    print('%d/%d tests passed' % (count - failures, count))
    return 1 if failures else 0


if __name__ == '__main__':
    for tool in ('ip', 'strace'):
        if not shutil.which(tool):
            print('SKIP: %s not installed' % tool)
            sys.exit(4)
    sys.exit(main())
