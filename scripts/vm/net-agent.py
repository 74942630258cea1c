#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""vm-net-agent: run shell commands for the other guests of a vm-net run.

  vm-net-agent [--port 5990] [--addr 0.0.0.0]

Listens on the private wire of scripts/vm/net.sh (never anywhere else: vm-net's
guests have no other network). One request a connection, one line:

  TIMEOUT COMMAND-LINE

runs "bash -c COMMAND-LINE" (stdin /dev/null, stdout and stderr together)
in a session of its own, kills that session after TIMEOUT seconds, and
answers with the command's output (a newline added if it had none at its
end) and then "STT-AGENT-RC <status>" (124 on timeout). The output goes
through a file, not a pipe, so that a command may leave a daemon behind
that still holds its descriptors. Requests run concurrently. "quit" ends
the agent after answering. The client side needs nothing but bash:

  exec 7<>/dev/tcp/ADDR/5990; echo "60 uname -r" >&7; cat <&7
"""

import argparse
import os
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().decode(errors='replace').rstrip('\n')
        if line.strip() == 'quit':
            self.wfile.write(b'bye\nSTT-AGENT-RC 0\n')
            threading.Thread(target=self.server.shutdown).start()
            return
        tmo, _, cmd = line.partition(' ')
        try:
            tmo = float(tmo)
        except ValueError:
            self.wfile.write(b'bad request: want "TIMEOUT COMMAND"\n'
                             b'STT-AGENT-RC 2\n')
            return
        with tempfile.TemporaryFile() as out:
            p = subprocess.Popen(['bash', '-c', cmd], stdin=subprocess.DEVNULL,
                                 stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
            try:
                rc = p.wait(timeout=tmo)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
                p.wait()
                rc = 124
            out.seek(0)
            data = out.read()
        if data and not data.endswith(b'\n'):
            data += b'\n'
        try:
            self.wfile.write(data + b'STT-AGENT-RC %d\n' % rc)
        except OSError:
            pass


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--port', type=int, default=5990)
    p.add_argument('--addr', default='0.0.0.0')
    a = p.parse_args()
    srv = Server((a.addr, a.port), Handler)
    srv.serve_forever()
    return 0


if __name__ == '__main__':
    sys.exit(main())
