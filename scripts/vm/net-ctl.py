#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""vm-net-ctl: the control channel of scripts/vm/net.sh, on the host side.

Runs inside vm-net's private network namespace, listening on the bridge's
address (192.0.2.254), so that a command in one guest can act on the run
from outside the guests: kill another guest and boot it again, or capture
the wire. One request a connection: a line of words; the answer is lines
of text, then "END <status>" (0 = done).

  ping                       pong
  status                     "guest I up PID" / "guest I down" per guest
  kill I                     stop guest I's QEMU (SIGTERM: the guest just
                             stops, as on a power cut) and wait until it is
                             gone; not the main guest
  boot I                     boot guest I (killed before) again, with
                             STT_NET_BOOT one higher; answers once its QEMU
                             runs
  capture-start NAME [BPF]   tcpdump on the bridge (every frame between the
                             guests: the bridge is promiscuous) into
                             LOGDIR/NAME.pcap, whole frames; answers once
                             tcpdump listens
  capture-stop NAME          stop it; answers with tcpdump's counts
  stt-fields NAME            tshark's STT decoder over NAME.pcap: one line a
                             frame with an STT header, "context_id ip.src
                             ip.dst stt.pkt_len stt.seg_off" (context ID in
                             hex)

vm-net's supervisor of each guest does the booting: "kill" leaves
WORK/gI.killed, "boot" WORK/gI.boot; QEMU writes WORK/gI.qemu.pid.
"""

import argparse
import os
import re
import signal
import socketserver
import subprocess
import sys
import threading
import time

ARGS = None
CAPTURES = {}
LOCK = threading.Lock()
NAME_RE = re.compile(r'^[A-Za-z0-9_.-]{1,64}$')


def log(msg):
    print('%s vm-net-ctl: %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


def qemu_pid(i):
    try:
        with open(os.path.join(ARGS.work, 'g%d.qemu.pid' % i)) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return None
    return pid if os.path.exists('/proc/%d' % pid) else None


def guest_index(word):
    try:
        i = int(word)
    except ValueError:
        raise ValueError('not a guest index: %r' % word)
    if not 1 <= i <= ARGS.guests:
        raise ValueError('no guest %d (1 to %d)' % (i, ARGS.guests))
    return i


def touch(name):
    open(os.path.join(ARGS.work, name), 'w').close()


def do_status(_):
    out = []
    for i in range(1, ARGS.guests + 1):
        pid = qemu_pid(i)
        out.append('guest %d %s' % (i, 'up %d' % pid if pid else 'down'))
    return 0, out


def do_kill(words):
    i = guest_index(words[0])
    if i == ARGS.main:
        return 1, ['refused: guest %d is the main guest' % i]
    pid = qemu_pid(i)
    if not pid:
        return 1, ['guest %d is not running' % i]
    touch('g%d.killed' % i)
    os.kill(pid, signal.SIGTERM)
    t0 = time.monotonic()
    while os.path.exists('/proc/%d' % pid):
        if time.monotonic() - t0 > 60:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    log('guest %d killed (QEMU %d)' % (i, pid))
    return 0, ['killed guest %d (QEMU %d) in %.1f s' % (
        i, pid, time.monotonic() - t0)]


def do_boot(words):
    i = guest_index(words[0])
    if qemu_pid(i):
        return 1, ['guest %d is running' % i]
    touch('g%d.boot' % i)
    t0 = time.monotonic()
    while not qemu_pid(i):
        if time.monotonic() - t0 > 300:
            return 1, ['guest %d: no QEMU after 300 s' % i]
        time.sleep(0.2)
    log('guest %d booting (QEMU %d)' % (i, qemu_pid(i)))
    return 0, ['booting guest %d' % i]


def pcap(name):
    if not NAME_RE.match(name):
        raise ValueError('bad capture name %r' % name)
    return os.path.join(ARGS.log_dir, name + '.pcap')


def do_capture_start(words):
    name = words[0]
    path = pcap(name)
    with LOCK:
        if name in CAPTURES:
            return 1, ['capture %s is running' % name]
        p = subprocess.Popen(['tcpdump', '-i', 'br0', '-n', '-U',
                              '--immediate-mode', '-s', '0',
                              '-w', path] + words[1:],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
        CAPTURES[name] = p
    line = p.stderr.readline()      # "listening on br0, ..." or an error
    if 'listening on' not in line:
        p.wait()
        with LOCK:
            del CAPTURES[name]
        return 1, ['tcpdump: ' + line.strip() + ' ' + p.stderr.read().strip()]
    log('capture %s started: %s' % (name, ' '.join(words[1:])))
    return 0, ['capturing into %s' % path]


def do_capture_stop(words):
    name = words[0]
    with LOCK:
        p = CAPTURES.pop(name, None)
    if p is None:
        return 1, ['no capture %s' % name]
    time.sleep(1)       # what the ring holds still reaches the file
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    log('capture %s stopped' % name)
    return 0, [x for x in err.splitlines() if 'packets' in x]


def do_stt_fields(words):
    path = pcap(words[0])
    r = subprocess.run(['tshark', '-n', '-r', path,
                        '-o', 'ip.try_heuristic_first:TRUE',
                        '-o', 'ipv6.try_heuristic_first:TRUE',
                        '-Y', 'stt.context_id', '-T', 'fields',
                        '-E', 'occurrence=f',
                        '-e', 'stt.context_id', '-e', 'ip.src',
                        '-e', 'ip.dst', '-e', 'stt.pkt_len',
                        '-e', 'stt.seg_off'],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return 1, ['tshark: ' + r.stderr.strip()]
    return 0, r.stdout.splitlines()


COMMANDS = {
    'ping': (0, lambda _: (0, ['pong'])),
    'status': (0, do_status),
    'kill': (1, do_kill),
    'boot': (1, do_boot),
    'capture-start': (1, do_capture_start),
    'capture-stop': (1, do_capture_stop),
    'stt-fields': (1, do_stt_fields),
}


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().decode(errors='replace').strip()
        words = line.split()
        try:
            if not words or words[0] not in COMMANDS:
                raise ValueError('unknown request %r (known: %s)' % (
                    line, ' '.join(sorted(COMMANDS))))
            nargs, fn = COMMANDS[words[0]]
            if len(words) - 1 < nargs:
                raise ValueError('%s needs %d argument(s)' % (words[0], nargs))
            log('request from %s: %s' % (self.client_address[0], line))
            rc, out = fn(words[1:])
        except (ValueError, OSError, subprocess.SubprocessError) as e:
            rc, out = 2, ['error: %s' % e]
        text = ''.join(x + '\n' for x in out) + 'END %d\n' % rc
        try:
            self.wfile.write(text.encode())
        except OSError:
            pass


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--work', required=True)
    p.add_argument('--log-dir', required=True)
    p.add_argument('--addr', default='192.0.2.254')
    p.add_argument('--port', type=int, default=7999)
    p.add_argument('--guests', type=int, required=True)
    p.add_argument('--main', type=int, default=1)
    ARGS = p.parse_args()

    def stop(*_):
        for c in list(CAPTURES.values()):
            c.terminate()
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    # The bridge's address may still be tentative for a moment.
    for _ in range(100):
        try:
            srv = Server((ARGS.addr, ARGS.port), Handler)
            break
        except OSError:
            time.sleep(0.1)
    else:
        log('cannot listen on %s:%d' % (ARGS.addr, ARGS.port))
        return 1
    log('listening on %s:%d' % (ARGS.addr, ARGS.port))
    srv.serve_forever()
    return 0


if __name__ == '__main__':
    sys.exit(main())
