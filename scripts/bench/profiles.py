# SPDX-License-Identifier: GPL-2.0
"""A system-wide sampling profile of one test, inside a guest: perf record
with call graphs, started disabled and switched on through its control
FIFO once it is ready (under TCG perf's start-up alone can outlast a
test), then folded into where the samples fell.

Each sample is attributed to its leaf function (self time) and to a path
by the nearest marker on its stack, walking from the leaf towards the
root: the transmit path (a socket's sendmsg down to the driver's xmit,
data at the sender, ACKs at the receiver) or the receive path (the
driver's hand-off up to the socket's recvmsg; data at the receiver, ACKs
at the sender). Whatever reaches neither (timers, the scheduler, perf
itself, user space) is "other"; idle and the perf process's own samples
are counted apart. Samples at the point where interrupts are enabled
again go to the function that had them off (IRQ_ON).
"""

import os
import re
import select
import signal
import subprocess

RX_MARKERS = {
    "__netif_receive_skb_core", "__netif_receive_skb_one_core",
    "__netif_receive_skb_list_core", "__netif_receive_skb",
    "netif_receive_skb", "process_backlog", "napi_gro_receive",
    "gro_cell_poll", "gro_receive_skb", "napi_gro_frags", "ip_rcv",
    "ip_list_rcv", "ipv6_rcv", "ip_local_deliver", "ip_local_deliver_finish",
    "tcp_v4_rcv", "tcp_v6_rcv", "udp_rcv", "udpv6_rcv", "tcp_recvmsg",
    "tcp_recvmsg_locked", "udp_recvmsg", "inet_recvmsg", "sock_recvmsg",
    "__sys_recvfrom", "__sys_recvmsg", "skb_copy_datagram_iter",
    "virtnet_poll", "veth_poll", "xfrm_input", "esp_input",
}
TX_MARKERS = {
    "tcp_sendmsg", "tcp_sendmsg_locked", "udp_sendmsg", "inet_sendmsg",
    "sock_sendmsg", "__sys_sendto", "__sys_sendmsg", "tcp_write_xmit",
    "__tcp_transmit_skb", "__tcp_push_pending_frames", "tcp_push",
    "__tcp_send_ack", "tcp_send_ack", "ip_queue_xmit", "__ip_queue_xmit",
    "ip_output", "ip_finish_output", "ip_finish_output2", "ip_local_out",
    "ip6_xmit", "ip6_finish_output2", "udp_tunnel_xmit_skb",
    "__dev_queue_xmit", "dev_queue_xmit", "dev_hard_start_xmit",
    "sch_direct_xmit", "validate_xmit_skb", "xfrm_output", "esp_output",
}
IDLE = {
    "default_idle", "native_safe_halt", "pv_native_safe_halt",
    "arch_cpu_idle", "default_idle_call", "cpuidle_idle_call", "do_idle",
    "acpi_idle_do_entry", "mwait_idle", "poll_idle", "cpu_idle_poll",
}
# Where interrupts come back on. TCG has no NMI: a sample due while
# interrupts are off is taken where they are enabled again, so these
# functions' samples are the irq-off section that ends there: they are
# charged to their caller, "(irqs off)" added to its name.
IRQ_ON = {
    "_raw_spin_unlock_irqrestore", "_raw_spin_unlock_irq",
    "_raw_spin_unlock_bh", "_raw_read_unlock_irqrestore",
    "_raw_write_unlock_irqrestore", "_raw_write_unlock_bh",
    "__local_bh_enable_ip", "local_bh_enable", "raw_spin_rq_unlock_irq",
    "finish_task_switch", "finish_task_switch.isra.0",
}
# folded symbols kept per profile (the rest is summed into "(other)")
KEEP = 200

_FRAME = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def module_symbols():
    """{symbol: "[module]"} from /proc/kallsyms: perf attributes the
    samples of modules loaded from outside /lib/modules to the kernel"""
    mods = {}
    try:
        with open("/proc/kallsyms") as f:
            for line in f:
                w = line.split()
                if len(w) == 4 and w[3].startswith("["):
                    mods[w[2]] = w[3]
    except OSError:
        pass
    return mods


def _name(sym, dso):
    """A function's name as the report shows it: kernel symbols bare,
    modules with [module], user space with (program)."""
    if dso.startswith("[kernel"):
        return sym
    if dso == "[unknown]":
        return "[unknown]"
    if dso.startswith("[") and dso.endswith("]") and dso != "[unknown]":
        return "%s %s" % (sym, dso)       # e.g. "stt_xmit4 [stt]"
    base = os.path.basename(dso)
    if sym == "[unknown]":
        return "[%s]" % base
    return "%s (%s)" % (sym, base)


def fold(lines, mods=None):
    """perf script (comm, ip, sym, dso, call graphs) -> figures. MODS:
    module_symbols()."""
    mods = mods or {}
    funcs = {}
    sides = {"tx": 0, "rx": 0, "other": 0}
    dsos = {}
    total = idle = own = 0
    stack = []
    comm = ""

    def flush():
        nonlocal total, idle, own
        if not stack:
            return
        total += 1
        leaf_sym, leaf_dso = stack[0]
        if leaf_sym in IDLE:
            idle += 1
            return
        if comm == "perf":
            own += 1            # the recorder itself: not the workload
            return
        side = "other"
        for sym, _ in stack:
            if sym in RX_MARKERS:
                side = "rx"
                break
            if sym in TX_MARKERS:
                side = "tx"
                break
        sides[side] += 1
        name = _name(leaf_sym, leaf_dso)
        for sym, dso in stack[1:]:
            if leaf_sym not in IRQ_ON:
                break
            if sym not in IRQ_ON:
                name = _name(sym, dso) + " (irqs off)"
                break
        f = funcs.setdefault(name, {"n": 0, "tx": 0, "rx": 0, "other": 0})
        f["n"] += 1
        f[side] += 1
        d = leaf_dso if leaf_dso.startswith("[") else \
            os.path.basename(leaf_dso)
        dsos[d] = dsos.get(d, 0) + 1

    for line in lines:
        if not line.strip():
            flush()
            stack = []
            continue
        if not line[0].isspace():
            flush()
            stack = []
            comm = line.split()[0]
            continue
        m = _FRAME.match(line)
        if m:
            sym, dso = m.group(2), m.group(3)
            if dso.startswith("[kernel") and sym in mods:
                dso = mods[sym]
            stack.append((sym, dso))
    flush()
    top = sorted(funcs.items(), key=lambda kv: -kv[1]["n"])
    kept = dict(top[:KEEP])
    rest = top[KEEP:]
    if rest:
        o = {"n": 0, "tx": 0, "rx": 0, "other": 0}
        for _, f in rest:
            for k in o:
                o[k] += f[k]
        kept["(other)"] = o
    return {"samples": total, "idle": idle, "perf_self": own,
            "sides": sides, "dsos": dsos, "funcs": kept}


class Profiler:
    """perf record -a -g on this guest: launch() starts it with its events
    disabled and returns once it is ready; enable() and disable() bound
    the window; stop() ends it and returns fold()'s figures."""

    def __init__(self, tmp, freq):
        self.tmp = tmp
        self.freq = freq
        self.proc = None

    def launch(self):
        self.data = os.path.join(self.tmp, "perf.data")
        self.ctl = os.path.join(self.tmp, "perf.ctl")
        self.ack = os.path.join(self.tmp, "perf.ack")
        for p in (self.ctl, self.ack, self.data):
            if os.path.exists(p):
                os.unlink(p)
        os.mkfifo(self.ctl)
        os.mkfifo(self.ack)
        self.err = open(os.path.join(self.tmp, "perf.err"), "w+")
        self.proc = subprocess.Popen(
            ["perf", "record", "-q", "-a", "-g", "-F", str(self.freq),
             "-D", "-1", "--control", "fifo:%s,%s" % (self.ctl, self.ack),
             "-o", self.data, "--", "sleep", "3600"],
            stdout=self.err, stderr=subprocess.STDOUT)
        # read-write opens of a FIFO do not block, whatever perf does
        self.ctl_fd = os.open(self.ctl, os.O_RDWR)
        self.ack_fd = os.open(self.ack, os.O_RDWR)
        # perf answers commands only once it is ready: "disable" (a no-op
        # here) tells when
        if not self._command(b"disable", 300):
            self.err.seek(0)
            msg = " ".join(self.err.read().split()[:30])
            self._kill()
            raise RuntimeError("perf did not start: " + msg)

    def _command(self, cmd, timeout=60):
        os.write(self.ctl_fd, cmd + b"\n")
        r, _, _ = select.select([self.ack_fd], [], [], timeout)
        if not r:
            return False
        os.read(self.ack_fd, 64)
        return True

    def enable(self):
        self._command(b"enable")

    def disable(self):
        self._command(b"disable")

    def _kill(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        for fd in (self.ctl_fd, self.ack_fd):
            os.close(fd)

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait()
        self.proc = None
        for fd in (self.ctl_fd, self.ack_fd):
            os.close(fd)
        p = subprocess.Popen(["perf", "script", "-i", self.data, "-F",
                              "comm,ip,sym,dso"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             errors="replace")
        res = fold(p.stdout, module_symbols())
        p.wait()
        os.unlink(self.data)
        res["freq"] = self.freq
        return res
