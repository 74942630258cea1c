#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The measurements of make bench, run as root inside a guest that
bench.py starts (through scripts/vm/run.sh or scripts/vm/net.sh):

    guest.py PLAN      PLAN: the JSON bench.py writes (plan["vm"] says
                       which: "onevm" or "pair")

One VM: two hosts that are network namespaces of one kernel:

    netns a                                           netns b
    stt0 10.10.0.1 / vx0 10.20.0.1 / gnv0 10.30.0.1   (.2 on b)
    wire 192.0.2.1 ============= veth ============= 192.0.2.2 wire

The phases (defs.ONEVM_PHASES) run in one guest: netns churn (before any
STT device exists, so stt.ko can be unloaded and loaded again), the
measurements per underlay mode (the veth's offloads, defs.MODES), the
device-count scale, ESP, and the profiles.

Two guests (scripts/vm/net.sh --guests 2, STT_NET_* in the environment:
guest 1 is a, guest 2 is b): guest b runs
the servers and an agent that reports its /proc/stat (and, with --perf,
profiles itself); guest a drives the tests and tells b when to stop.

Output on stdout: "BENCH {json}" per record (defs-named fields, see
record()), "bench: ..." progress lines. CPU is whole-guest /proc/stat
deltas (user+nice+system+irq+softirq), in % of one CPU.
"""

import ctypes
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import defs  # noqa: E402
import profiles  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_PORT = 5990
NCPU = os.cpu_count()


def say(*a):
    print("bench:", *a, flush=True)


def record(kind, **fields):
    fields["kind"] = kind
    print("BENCH " + json.dumps(fields, sort_keys=True), flush=True)


class Fail(Exception):
    pass


def run(cmd, check=False, timeout=None, **kw):
    """Run CMD (a list); its CompletedProcess, output as text."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        r = subprocess.CompletedProcess(cmd, 124, (e.stdout or b"").decode(
            errors="replace") + "\n(timeout)")
    if check and r.returncode:
        raise Fail("%s: %s" % (" ".join(cmd), r.stdout.strip()[:300]))
    return r


def keyvals(text):
    """netperf -k output: KEY=VALUE lines."""
    return dict(line.split("=", 1) for line in text.splitlines()
                if re.match(r"^[A-Z_]+=", line))


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


# ---- CPU accounting --------------------------------------------------------

def stat_line():
    with open("/proc/stat") as f:
        return f.readline()


def cpu_snap(line):
    """"busy total" jiffies of the "cpu ..." line of /proc/stat."""
    v = [int(x) for x in line.split()[1:9]]
    us, ni, sy, idle, io, irq, si, st = v
    return us + ni + sy + irq + si, us + ni + sy + idle + io + irq + si + st


def cpu_pct(a, b, ncpu):
    if a is None or b is None or b[1] - a[1] <= 0:
        return None
    return round(100.0 * ncpu * (b[0] - a[0]) / (b[1] - a[1]), 1)


# ---- hosts -----------------------------------------------------------------

class Host:
    """Where commands run: netns NS of this guest, or the guest itself."""

    def __init__(self, ns=None, index=1, underlay="wire"):
        self.ns = ns
        self.index = index
        self.underlay = underlay
        self.prefix = ["ip", "netns", "exec", ns] if ns else []
        self.ipn = ["ip", "-n", ns] if ns else ["ip"]
        self.anchor = None      # a process in ns, for proc_net()

    def run(self, cmd, **kw):
        return run(self.prefix + cmd, **kw)

    def popen(self, cmd, **kw):
        return subprocess.Popen(self.prefix + cmd, **kw)

    def ip(self, *args, check=True):
        return run(self.ipn + list(args), check=check)

    def batch(self, lines):
        r = subprocess.run(self.ipn + ["-batch", "-"], input="\n".join(
            lines) + "\n", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        if r.returncode:
            raise Fail("ip -batch: " + r.stdout.strip()[:300])

    def proc_net(self):
        """/proc/PID/net of a process in this namespace: its files are the
        namespace's, so counters are read without a process per reading
        (under TCG each ip or tc run costs a tenth of a second or more)"""
        if not self.ns:
            return "/proc/self/net"
        if self.anchor is None:
            # ip netns exec enters the namespace, then execs sleep
            self.anchor = self.popen(["sleep", "infinity"])
            for _ in range(100):
                try:
                    with open("/proc/%d/comm" % self.anchor.pid) as f:
                        if f.read().strip() == "sleep":
                            break
                except OSError:
                    pass
                time.sleep(0.01)
        return "/proc/%d/net" % self.anchor.pid

    def close(self):
        """let the namespace go: the anchor would keep it, its devices
        and its tunnels alive after ip netns del"""
        if self.anchor is not None:
            self.anchor.kill()
            self.anchor.wait()
            self.anchor = None

    def counters(self, tunnel, links=None):
        """{"TcpExt.TCPRcvCoalesce": n, "link.eth0.rx_dropped": n,
        "softnet.dropped": n, ...}: TCP's counters (/proc/net/snmp's Tcp
        and /proc/net/netstat's TcpExt lines), which tell why one tunnel's
        stream differs from another's where throughput alone cannot, and
        the drop counters of the underlay and TUNNEL's device
        (/proc/net/dev), where packets vanish without TCP being told.
        softnet_stat is the kernel's, not the namespace's: in one VM both
        hosts read the same figure.  LINKS is a proc_dev() read the caller
        already made for the same moment"""
        out = {}
        d = self.proc_net()
        try:
            with open(d + "/snmp") as f, open(d + "/netstat") as g:
                rows = [ln.split() for ln in f.read().splitlines() +
                        g.read().splitlines()]
            # each group is a line of names, then a line of values
            for names, vals in zip(rows, rows[1:]):
                if (not names or names[0] not in ("Tcp:", "TcpExt:")
                        or not vals or vals[0] != names[0] or not vals[1:]
                        or not vals[1].lstrip("-").isdigit()):
                    continue
                for k, v in zip(names[1:], vals[1:]):
                    out[names[0][:-1] + "." + k] = int(v)
            if links is None:
                links = self.proc_dev()
            for name in {self.underlay, self.dev(tunnel)} & links.keys():
                for i, k in ((2, "rx_errors"), (3, "rx_dropped"),
                             (4, "rx_fifo"), (10, "tx_errors"),
                             (11, "tx_dropped"), (12, "tx_fifo")):
                    out["link.%s.%s" % (name, k)] = links[name][i]
            with open("/proc/net/softnet_stat") as f:
                rows = [ln.split() for ln in f]
            out["softnet.dropped"] = sum(int(c[1], 16) for c in rows)
            out["softnet.time_squeeze"] = sum(int(c[2], 16) for c in rows)
        except (OSError, IndexError, ValueError):
            pass
        return out

    def proc_dev(self):
        """{dev: [the 16 counters of its /proc/net/dev line]}: the
        device's 64-bit statistics, rx bytes, packets, errors, drops,
        fifo, frame, compressed, multicast, then tx bytes, packets,
        errors, drops, fifo, collisions, carrier, compressed"""
        out = {}
        try:
            with open(self.proc_net() + "/dev") as f:
                for ln in f.read().splitlines()[2:]:
                    name, _, nums = ln.partition(":")
                    c = nums.split()
                    if len(c) >= 16:
                        out[name.strip()] = [int(x) for x in c[:16]]
        except (OSError, ValueError):
            pass
        return out

    def link_stats(self, links=None):
        """{dev: {tx_packets, tx_bytes, rx_packets, rx_bytes}} of LINKS, a
        proc_dev() read, or of a new one"""
        if links is None:
            links = self.proc_dev()
        return {name: {"rx_bytes": c[0], "rx_packets": c[1],
                       "tx_bytes": c[8], "tx_packets": c[9]}
                for name, c in links.items()}

    def sysfs(self, path):
        r = self.run(["cat", path])
        return r.stdout.strip() if r.returncode == 0 else None

    def ethtool_stats(self, dev):
        r = self.run(["ethtool", "-S", dev])
        out = {}
        for line in r.stdout.splitlines()[1:]:
            k, _, v = line.strip().partition(":")
            if v.strip().isdigit() and int(v):
                out[k.strip()] = int(v)
        return out

    def dev(self, tunnel):
        return defs.TUNNELS[tunnel].dev or self.underlay


def addr(tunnel, index):
    return "%s.%d" % (defs.TUNNELS[tunnel].subnet, index)


def tunnels_add(host, peer_index, tunnels):
    me = "%s.%d" % (defs.UNDERLAY_NET, host.index)
    peer = "%s.%d" % (defs.UNDERLAY_NET, peer_index)
    for name in tunnels:
        t = defs.TUNNELS[name]
        if not t.dev:
            continue
        r = host.ip("link", "add", t.dev, *t.link.format(
            me=me, peer=peer).split(), check=False)
        if r.returncode:
            raise Fail("cannot create the %s device: %s" % (
                t.title, r.stdout.strip()))
        if t.mtu:
            host.ip("link", "set", t.dev, "mtu", str(t.mtu))
        host.ip("addr", "add", addr(name, host.index) + "/24", "dev", t.dev)
        host.ip("link", "set", t.dev, "up")


def servers_start(host):
    procs = [host.popen(["netserver", "-D", "-4"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)]
    host.run(["iperf3", "-s", "-D"])
    if have("sockperf"):
        for args in (["-p", "11111"], ["--tcp", "-p", "11112"]):
            procs.append(host.popen(["sockperf", "sr"] + args,
                                    stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL))
    time.sleep(1)
    return procs


def have(prog):
    return any(os.access(os.path.join(d, prog), os.X_OK)
               for d in os.environ.get("PATH", "").split(":"))


# ---- the tests -------------------------------------------------------------

class Tools:
    """One test against an address, from the sending host; returns a dict:
    value (the figure, or None), tool, and whatever else it knows; on
    failure "error" with a few lines of the tool's output."""

    def __init__(self, plan, snd):
        self.snd = snd
        self.duration = plan["duration"]
        self.multi = plan["multi_tool"]
        tool = plan["tool"]
        if tool == "auto":
            tool = "netperf" if have("netperf") and have("netserver") \
                else "iperf3"
        if tool == "netperf" and not have("netperf"):
            raise Fail("no netperf")
        if tool == "iperf3" and not have("iperf3"):
            raise Fail("no iperf3")
        self.tool = tool
        self.timeout = self.duration * 3 + 60
        self.length = self.duration

    def run(self, ip, test, duration=None):
        """DURATION: seconds instead of the plan's"""
        t = defs.test(test)
        self.length = duration or self.duration
        if t.kind == "stream":
            return self.stream(ip, t.streams)
        if t.kind == "udp":
            return self.udp(ip, t.size)
        return self.rr(ip, t.proto)

    def stream(self, ip, n):
        if self.tool == "netperf" and (n == 1 or self.multi == "netperf"):
            procs = [self.snd.popen(
                ["netperf", "-H", ip, "-t", "TCP_STREAM", "-l",
                 str(self.length), "-f", "m", "-c", "-C", "-P", "0", "--",
                 "-k", "THROUGHPUT,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,"
                 "ELAPSED_TIME"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                for _ in range(n)]
            outs = [p.communicate(timeout=self.timeout)[0] for p in procs]
            kvs = [keyvals(o) for o in outs]
            if any(num(k.get("THROUGHPUT")) is None for k in kvs):
                bad = [o for o, k in zip(outs, kvs)
                       if num(k.get("THROUGHPUT")) is None][0]
                return {"tool": "netperf", "value": None,
                        "error": bad.strip()[:300]}
            mbit = sum(num(k["THROUGHPUT"]) for k in kvs)
            return {"tool": "netperf", "value": round(mbit / 1000, 5),
                    "per_stream": round(mbit / 1000 / n, 5),
                    "elapsed": num(kvs[0].get("ELAPSED_TIME")),
                    "np_cpu_snd": num(kvs[0].get("LOCAL_CPU_UTIL")),
                    "np_cpu_rcv": num(kvs[0].get("REMOTE_CPU_UTIL"))}
        # one process: every stream starts together, one common interval
        r = self.snd.run(["iperf3", "-c", ip, "-P", str(n), "-J", "-t",
                          str(self.length)], timeout=self.timeout)
        try:
            j = json.loads(r.stdout)
            bps = j["end"]["sum_received"]["bits_per_second"]
            return {"tool": "iperf3", "value": round(bps / 1e9, 5),
                    "per_stream": round(bps / 1e9 / n, 5),
                    "elapsed": j["end"]["sum_received"]["seconds"]}
        except (ValueError, KeyError, TypeError):
            return {"tool": "iperf3", "value": None,
                    "error": r.stdout.strip()[:300]}

    def udp(self, ip, size):
        if self.tool == "netperf":
            r = self.snd.run(
                ["netperf", "-H", ip, "-t", "UDP_STREAM", "-l",
                 str(self.length), "-P", "0", "--", "-R", "1", "-m",
                 str(size), "-k",
                 "REMOTE_RECV_CALLS,LOCAL_SEND_CALLS,ELAPSED_TIME"],
                timeout=self.timeout)
            k = keyvals(r.stdout)
            rx, tx, el = (num(k.get("REMOTE_RECV_CALLS")),
                          num(k.get("LOCAL_SEND_CALLS")),
                          num(k.get("ELAPSED_TIME")))
            tool = "netperf"
        else:
            r = self.snd.run(["iperf3", "-c", ip, "-u", "-b", "0", "-l",
                              str(size), "-t", str(self.length), "-J"],
                             timeout=self.timeout)
            try:
                s = json.loads(r.stdout)["end"]["sum"]
                rx = s["packets"] - s["lost_packets"]
                tx, el = s["packets"], s["seconds"]
            except (ValueError, KeyError, TypeError):
                rx = tx = el = None
            tool = "iperf3"
        if rx is None or not el:
            return {"tool": tool, "value": None,
                    "error": r.stdout.strip()[:300]}
        return {"tool": tool, "value": round(rx / el, 1),
                "sent_pps": round((tx or 0) / el, 1), "elapsed": el}

    def rr(self, ip, proto):
        if self.tool == "netperf":
            r = self.snd.run(
                ["netperf", "-H", ip, "-t", proto.upper() + "_RR", "-l",
                 str(self.length), "-c", "-C", "-P", "0", "--", "-k",
                 "THROUGHPUT,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,ELAPSED_TIME"],
                timeout=self.timeout)
            k = keyvals(r.stdout)
            v = num(k.get("THROUGHPUT"))
            if v is None:
                return {"tool": "netperf", "value": None,
                        "error": r.stdout.strip()[:300]}
            return {"tool": "netperf", "value": v,
                    "elapsed": num(k.get("ELAPSED_TIME")),
                    "np_cpu_snd": num(k.get("LOCAL_CPU_UTIL")),
                    "np_cpu_rcv": num(k.get("REMOTE_CPU_UTIL"))}
        if not have("sockperf"):
            return {"tool": "sockperf", "value": None, "error": "no sockperf"}
        cmd = ["sockperf", "ping-pong", "-i", ip, "-t", str(self.length)]
        cmd += ["--tcp", "-p", "11112"] if proto == "tcp" else ["-p", "11111"]
        r = self.snd.run(cmd, timeout=self.timeout)
        m = re.findall(r"\[Valid Duration\] RunTime=([0-9.]+) sec;.*?"
                       r"ReceivedMessages=([0-9]+)", r.stdout)
        if not m or not float(m[-1][0]):
            return {"tool": "sockperf", "value": None,
                    "error": r.stdout.strip()[:300]}
        return {"tool": "sockperf",
                "value": round(int(m[-1][1]) / float(m[-1][0]), 1)}


# ---- the bench -------------------------------------------------------------

class Bench:
    def __init__(self, plan):
        self.plan = plan
        self.tunnels = plan["tunnels"]
        self.reps = plan["reps"]
        self.tmp = tempfile.mkdtemp(prefix="bench.")
        self.common = {"target": plan.get("target"),
                       "kernel": os.uname().release}
        self.agent = None       # pair: guest b's address
        self.rcv = None         # one VM: the receiving namespace's Host
        self.mode = None
        self.esp = ""           # one VM: ESP between the hosts (defs.Mode)

    def cpu_local(self):
        return cpu_snap(stat_line())

    def cpu_remote(self):
        if not self.agent:
            return None
        line = self.ask("stat")
        return cpu_snap(line) if line.startswith("cpu") else None

    def counters_both(self, tunnel, snd_links=None):
        """(sender's, receiver's) TCP and drop counters, one dict each: the
        receiver is the other namespace in one VM, guest b's agent between
        guests; SND_LINKS is the sender's proc_dev() read, if made"""
        rcv = None
        if self.rcv:
            rcv = self.rcv.counters(tunnel)
        elif self.agent:
            try:
                rcv = json.loads(self.ask("counters " + tunnel))
            except ValueError:
                pass
        return self.snd.counters(tunnel, snd_links), rcv

    def ask(self, cmd, timeout=600):
        with socket.create_connection((self.agent, AGENT_PORT),
                                      timeout=timeout) as s:
            f = s.makefile("rw")
            f.write(cmd + "\n")
            f.flush()
            return f.readline().strip()

    def measure(self, scenario, tunnel, test, rep, **extra):
        """One measurement, one record."""
        t = defs.test(test)
        ip = addr(tunnel, 2)
        dev = self.snd.dev(tunnel)
        # one /proc/net/dev read serves the packet counts and the drops
        d0 = self.snd.proc_dev()
        s0 = self.snd.link_stats(d0).get(dev, {})
        e0 = self.esp_packets(self.snd) if self.esp else None
        t0 = self.counters_both(tunnel, d0)
        c0, r0 = self.cpu_local(), self.cpu_remote()
        w0 = time.monotonic()
        res = self.tools.run(ip, test)
        wall = time.monotonic() - w0
        c1, r1 = self.cpu_local(), self.cpu_remote()
        d1 = self.snd.proc_dev()
        s1 = self.snd.link_stats(d1).get(dev, {})
        e1 = self.esp_packets(self.snd) if self.esp else None
        t1 = self.counters_both(tunnel, d1)
        rec = dict(self.common, scenario=scenario, offload=self.mode,
                   tunnel=tunnel, test=test, rep=rep,
                   duration=self.plan["duration"], wall=round(wall, 2),
                   ncpu=NCPU, metric=t.metric, cpu_snd=None, cpu_rcv=None,
                   cpu_total=None)
        if self.agent:
            rec["cpu_snd"] = cpu_pct(c0, c1, NCPU)
            rec["cpu_rcv"] = cpu_pct(r0, r1, self.peer_ncpu)
        else:
            rec["cpu_total"] = cpu_pct(c0, c1, NCPU)
        rec.update(res)
        # what the sender handed to the tunnel (or the wire): GSO packets
        # counted once, so bytes per packet is their mean size
        for k in ("tx_packets", "tx_bytes"):
            if s0.get(k) is not None and s1.get(k) is not None:
                rec["dev_" + k] = s1[k] - s0[k]
        # only what moved: the rest is noise in raw.jsonl
        for key, a, b in (("snd_counters", t0[0], t1[0]),
                          ("rcv_counters", t0[1], t1[1])):
            if a and b:
                rec[key] = {k: b[k] - a[k] for k in b
                            if k in a and b[k] != a[k]}
        if self.esp:
            # what went through the sender's SA: a figure over ESP only
            # if something did
            rec["esp_packets"] = e1 - e0 if None not in (e0, e1) else None
            if rec["esp_packets"] is None:
                say("%s %s: the SA's counters did not parse (ip -s xfrm "
                    "state)" % (tunnel, test))
            elif rec["esp_packets"] == 0:
                say("%s %s: no packet went through ESP" % (tunnel, test))
                rec["error"] = "no ESP packets: not over ESP"
                rec["value"] = None
        rec.update(extra)
        record("measure", **rec)
        cpu = "/".join("-" if rec[k] is None else str(rec[k])
                       for k in ("cpu_snd", "cpu_rcv", "cpu_total"))
        say("%-7s %-6s %-7s %-7s rep %s: %s %s (cpu %s, %.1fs)%s" % (
            scenario, self.mode, tunnel, test, rep, rec["value"], t.metric,
            cpu, wall, (" " + rec["error"].splitlines()[0])
            if rec.get("error") else ""))
        return rec

    def matrix(self, scenario, tests, tunnels=None):
        """reps outermost, so drift hits every tunnel alike"""
        for rep in range(1, self.reps + 1):
            for test in tests:
                for tunnel in tunnels or self.tunnels:
                    self.measure(scenario, tunnel, test, rep)

    def warm_up(self, tunnels=None):
        for t in tunnels or self.tunnels:
            ip = addr(t, 2)
            for _ in range(30):
                if self.snd.run(["ping", "-c", "1", "-W", "1", ip]
                                ).returncode == 0:
                    break
                time.sleep(0.5)
            else:
                raise Fail("no ping through %s to %s" % (t, ip))
        # A first second of traffic over each (not recorded): the first
        # test after set-up otherwise pays for ARP, route and code caches.
        for t in tunnels or self.tunnels:
            if self.tools.tool == "netperf":
                self.snd.run(["netperf", "-H", addr(t, 2), "-t",
                              "TCP_STREAM", "-l", "1", "-P", "0"], timeout=60)
            else:
                self.snd.run(["iperf3", "-c", addr(t, 2), "-t", "1"],
                             timeout=60)

    def info(self, **fields):
        record("info", **dict(self.common, **fields))

    def offloads_of(self, host, dev=None, *keep):
        r = host.run(["ethtool", "-k", dev or host.underlay])
        keep = keep or ("tcp-segmentation-offload", "generic-receive-offload",
                        "tx-udp_tnl-segmentation",
                        "generic-segmentation-offload")
        out = []
        for line in r.stdout.splitlines():
            k, _, v = line.partition(": ")
            if k in keep:
                out.append("%s=%s" % (k, v.replace(" [fixed]", "")))
        return " ".join(out)

    def mtus(self, host):
        return {"%s_mtu" % t: host.sysfs("/sys/class/net/%s/mtu" %
                                         host.dev(t)) for t in self.tunnels}

    def kicks(self):
        """virtio-net's notifications of the host on the sender's first
        TX queue (ethtool -S; None on a NIC without them, e.g. veth)"""
        return self.snd.ethtool_stats(self.snd.underlay).get(
            "tx_queue_0_kicks")

    # ---- profiles (one VM: both hosts; two guests: each its own) -----------

    def profile(self, scenario, tunnel, test, remote=False):
        """The test twice more, a steady-state window of each measured
        (after a lead-in, so that process start-up and slow start stay
        out): once plain, for the cost (busy CPU per byte and per
        packet, undisturbed), once under a system-wide profile, for where
        it goes; one "profile" record per profiled host."""
        pr = self.plan["profile"]
        lead, window = pr["lead"], pr["window"]
        ip = addr(tunnel, 2)
        dev = self.snd.dev(tunnel)
        hz = os.sysconf("SC_CLK_TCK")
        runs = []
        for profiled in (False, True):
            prof = None
            if profiled:
                prof = profiles.Profiler(self.tmp, self.plan["profile_freq"])
                try:
                    prof.launch()
                    if remote:
                        answer = self.ask("perf-launch")
                        if answer != "ok":
                            raise RuntimeError("guest b: " + answer)
                except (RuntimeError, OSError) as e:
                    say("profile: " + str(e))
                    return
            res = {}
            th = threading.Thread(target=lambda: res.update(self.tools.run(
                ip, test, duration=int(lead + window + 2))))
            th.start()
            time.sleep(lead)
            s0 = self.snd.link_stats()
            k0 = self.kicks()
            r0 = self.rcv.link_stats() if self.rcv else {}
            c0, rc0 = self.cpu_local(), self.cpu_remote()
            t0 = time.monotonic()
            if prof:
                prof.enable()
                if remote:
                    self.ask("perf-enable")
            time.sleep(window)
            if prof:
                prof.disable()
                if remote:
                    self.ask("perf-disable")
            t1 = time.monotonic()
            c1, rc1 = self.cpu_local(), self.cpu_remote()
            s1 = self.snd.link_stats()
            k1 = self.kicks()
            r1 = self.rcv.link_stats() if self.rcv else {}
            th.join()

            def delta(a, b, d, k):
                try:
                    return b[d][k] - a[d][k]
                except (KeyError, TypeError):
                    return None
            run_ = {"window": round(t1 - t0, 4),
                    "busy_s": (c1[0] - c0[0]) / hz,
                    "cpu": cpu_pct(c0, c1, NCPU),
                    "rcv_busy_s": (rc1[0] - rc0[0]) / hz if rc0 else None,
                    "tx_packets": delta(s0, s1, dev, "tx_packets"),
                    "tx_bytes": delta(s0, s1, dev, "tx_bytes"),
                    "wire_tx_packets": delta(s0, s1, self.snd.underlay,
                                             "tx_packets"),
                    "wire_tx_bytes": delta(s0, s1, self.snd.underlay,
                                           "tx_bytes"),
                    "wire_tx_kicks": k1 - k0 if None not in (k0, k1)
                    else None,
                    "rx_packets": delta(r0, r1, dev, "rx_packets")
                    if self.rcv else None,
                    "result": res}
            if prof:
                run_["profile"] = prof.stop()
                if remote:
                    run_["peer_profile"] = json.loads(self.ask("perf-stop"))
            runs.append(run_)
        plain, profd = runs
        rec = dict(self.common, scenario=scenario, offload=self.mode,
                   tunnel=tunnel, test=test, icount=self.plan.get("icount"),
                   ncpu=NCPU, lead=lead, window=window, plain=plain,
                   profiled={k: v for k, v in profd.items()
                             if not k.endswith("profile")})
        record("profile", **dict(rec, side="sender" if remote else "both",
                                 **profd["profile"]))
        p = profd["profile"]
        say("profile %s %s %s: %d samples (%d idle, %d perf), %s packets, "
            "%s bytes in %.1f s" % (self.mode, tunnel, test, p["samples"],
                                    p["idle"], p["perf_self"],
                                    plain["tx_packets"], plain["tx_bytes"],
                                    plain["window"]))
        if plain.get("wire_tx_kicks") is not None:
            say("profile %s %s: underlay tx: %s packets, %s bytes, %s kicks "
                "(%s queue 0, ethtool -S)" % (
                    tunnel, test, plain["wire_tx_packets"],
                    plain["wire_tx_bytes"], plain["wire_tx_kicks"],
                    self.snd.underlay))
        if profd.get("peer_profile"):
            record("profile", **dict(rec, side="receiver",
                                     **profd["peer_profile"]))


# ---- one VM ----------------------------------------------------------------

class OneVM(Bench):
    def __init__(self, plan):
        super().__init__(plan)
        self.a = Host("a", 1)
        self.b = Host("b", 2)
        self.snd, self.rcv = self.a, self.b
        self.tools = Tools(plan, self.snd)
        self.peer_ncpu = NCPU
        self.servers = []

    def main(self):
        phases = self.plan["phases"]
        if "netns" in phases:
            self.netns_churn()
        if set(phases) - {"netns"}:
            self.topology()
            try:
                for ph in defs.ONEVM_PHASES[1:]:
                    if ph in phases:
                        getattr(self, "phase_" + ph)()
            finally:
                self.info(stt_stats_a=self.a.ethtool_stats("stt0"),
                          stt_stats_b=self.b.ethtool_stats("stt0"))
                for p in self.servers:
                    p.kill()
                self.a.close()
                self.b.close()
                run(["ip", "netns", "del", "a"])
                run(["ip", "netns", "del", "b"])

    def topology(self):
        run(["modprobe", "-q", "vxlan"])
        run(["modprobe", "-q", "geneve"])
        for ns in ("a", "b"):
            run(["ip", "netns", "add", ns], check=True)
        run(["ip", "link", "add", "wire", "netns", "a", "type", "veth",
             "peer", "name", "wire", "netns", "b"], check=True)
        for h in (self.a, self.b):
            h.ip("link", "set", "lo", "up")
            h.ip("link", "set", "wire", "up")
            h.ip("addr", "add", "%s.%d/24" % (defs.UNDERLAY_NET, h.index),
                 "dev", "wire")
        tunnels_add(self.a, 2, self.tunnels)
        tunnels_add(self.b, 1, self.tunnels)
        self.servers = servers_start(self.b)
        self.mode = "tso"
        self.set_mode("tso")
        self.warm_up()
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
        self.info(tool=self.tools.tool, ncpu=NCPU,
                  duration=self.plan["duration"], reps=self.reps,
                  cpu_aes="aes" in flags, **self.mtus(self.a))

    def set_mode(self, name):
        """the wire's offloads and the tunnel devices' GRO, both ends; None
        if the kernel cannot"""
        m = defs.MODES[name]
        rel = tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
        if m.min_kernel and rel < m.min_kernel:
            return "needs Linux %d.%d or later" % m.min_kernel
        onoff = {True: "on", False: "off"}
        for h in (self.a, self.b):
            h.run(["ethtool", "-K", "wire", "tso", onoff[m.tso],
                   "tx-udp_tnl-segmentation", onoff[m.udp_tnl],
                   "tx-udp_tnl-csum-segmentation", onoff[m.udp_tnl]])
            for t in self.tunnels:
                if defs.TUNNELS[t].dev:
                    h.run(["ethtool", "-K", defs.TUNNELS[t].dev, "gro",
                           onoff[m.tunnel_gro]])
        self.set_esp(m.esp)
        info = {"offload": name, "esp": self.esp_algs()}
        info["tunnel_gro"] = {t: self.offloads_of(self.a, defs.TUNNELS[t].dev,
                                                  "generic-receive-offload")
                              for t in self.tunnels if defs.TUNNELS[t].dev}
        if rel >= (6, 3):
            # BIG TCP (IPv4) on the wire, and on each tunnel device as far
            # as it lets itself: what it refuses is its own size limit
            size = m.big_tcp or 65536
            rtnl = [sys.executable, os.path.join(HERE, "rtnl.py")]
            for h in (self.a, self.b):
                r = h.run(rtnl + ["wire", "gso_ipv4_max_size=%d" % size,
                                  "gro_ipv4_max_size=%d" % size])
                if r.returncode:
                    return "the wire refuses BIG TCP: " + r.stdout.strip()
                for t in self.tunnels:
                    dev = defs.TUNNELS[t].dev
                    if not dev:
                        continue
                    r = h.run(rtnl + [dev, "gso_ipv4_max_size=%d" % size])
                    if m.big_tcp and h is self.a:
                        info["%s_big_tcp" % t] = "accepted" if \
                            r.returncode == 0 else r.stdout.strip()
            for t in self.tunnels:
                info["%s_gso_ipv4_max_size" % t] = self.link_attr(
                    self.a, self.a.dev(t), "gso_ipv4_max_size")
        self.mode = name
        info["underlay"] = self.offloads_of(self.a)
        info.update(self.mtus(self.a))
        self.info(**info)
        return None

    @staticmethod
    def link_attr(host, dev, key):
        r = host.ip("-d", "-j", "link", "show", "dev", dev, check=False)
        try:
            return json.loads(r.stdout)[0].get(key)
        except (ValueError, IndexError):
            return None

    def phase_onevm(self):
        for mode, tests in self.plan["modes"].items():
            why = self.set_mode(mode)
            if why:
                say("mode %s skipped: %s" % (mode, why))
                self.info(offload=mode, skipped=why)
                continue
            self.matrix("onevm", tests)

    # ---- scale -------------------------------------------------------------

    def phase_scale(self):
        """One STT tunnel (stt0, the one measured) among n STT devices in
        netns a: per repetition and count, create stt0 and n-1 others in
        one ip -batch (distinct keys and remotes, all up), measure, delete
        them all in one request (a device group) and time that too."""
        sc = self.plan["scale"]
        if "stt" not in self.tunnels:
            say("scale: STT is not among the tunnels")
            return
        self.set_mode(defs.SCALE_MODE)
        for rep in range(1, self.reps + 1):
            for n in sc["devices"]:
                self.a.ip("link", "del", "stt0", check=False)
                lines = ["link add stt0 type stt id 42 remote 192.0.2.2 "
                         "local 192.0.2.1", "link set stt0 group 42 up"]
                for i in range(1, n):
                    lines += ["link add sx%d type stt id %d remote "
                              "198.18.%d.%d" % (i, 100000 + i, i // 250,
                                                i % 250 + 1),
                              "link set sx%d group 42 up" % i]
                self.scale_timed("create", rep, n, self.a.batch, lines)
                self.a.ip("addr", "add", addr("stt", 1) + "/24", "dev",
                          "stt0")
                for _ in range(30):
                    if self.a.run(["ping", "-c", "1", "-W", "1",
                                   addr("stt", 2)]).returncode == 0:
                        break
                    time.sleep(0.5)
                for test in sc["tests"]:
                    self.measure("scale", "stt", test, rep, devices=n)
                self.scale_timed("delete", rep, n, self.a.ip,
                                 "link", "del", "group", "42")
        # stt0 as it was, for what comes after
        tunnels_add(self.a, 2, ["stt"])

    def scale_timed(self, what, rep, n, fn, *args):
        """Run fn(*args), which creates or deletes N devices, and record
        the time per device."""
        t0 = time.monotonic()
        fn(*args)
        ms = (time.monotonic() - t0) * 1000 / n
        record("measure", **dict(
            self.common, scenario="scale", offload=defs.SCALE_MODE,
            tunnel="stt", test=what, rep=rep, devices=n,
            metric="ms_per_device", value=round(ms, 3)))
        say("scale rep %d: %d STT devices %sd, %.2f ms each" % (
            rep, n, what, ms))

    # ---- ESP ---------------------------------------------------------------

    def set_esp(self, alg):
        """Transport-mode ESP for everything between the two hosts (ALG:
        a defs.ESP_ALGS key), none for ""; the UDP tunnels' inner MTU
        follows (defs.Tunnel.esp_mtu)."""
        for h in (self.a, self.b):
            h.ip("xfrm", "state", "flush", check=False)
            h.ip("xfrm", "policy", "flush", check=False)
        if alg:
            fwd, back = defs.ESP_ALGS[alg]
            one = "%s.1" % defs.UNDERLAY_NET
            two = "%s.2" % defs.UNDERLAY_NET
            for h in (self.a, self.b):
                me, pe = (one, two) if h.index == 1 else (two, one)
                h.ip("xfrm", "state", "add", "src", one, "dst", two,
                     "proto", "esp", "spi", "0x100", "mode", "transport",
                     *fwd)
                h.ip("xfrm", "state", "add", "src", two, "dst", one,
                     "proto", "esp", "spi", "0x200", "mode", "transport",
                     *back)
                h.ip("xfrm", "policy", "add", "src", me, "dst", pe, "dir",
                     "out", "tmpl", "src", me, "dst", pe, "proto", "esp",
                     "mode", "transport")
                h.ip("xfrm", "policy", "add", "src", pe, "dst", me, "dir",
                     "in", "tmpl", "src", pe, "dst", me, "proto", "esp",
                     "mode", "transport", "level", "required")
        for h in (self.a, self.b):
            for name in self.tunnels:
                t = defs.TUNNELS[name]
                mtu = t.esp_mtu if alg and t.esp_mtu else t.mtu
                if t.dev and mtu:
                    h.ip("link", "set", t.dev, "mtu", str(mtu))
        self.esp = alg

    def esp_algs(self):
        """the algorithms of host a's SAs, "+"-joined ("" without ESP)"""
        r = self.a.ip("xfrm", "state", check=False)
        return "+".join(sorted(set(re.findall(
            r"^\s*(?:aead|enc|auth) (\S+)", r.stdout, re.M))))

    def esp_packets(self, host):
        """packets through host's outbound SA (ip -s xfrm state)"""
        r = host.ip("-s", "xfrm", "state", "list", "src", "%s.%d" % (
            defs.UNDERLAY_NET, host.index), check=False)
        m = re.search(r"current:\s*\n\s*(\d+)\(bytes\),\s*(\d+)\(packets\)",
                      r.stdout)
        return int(m.group(2)) if m else None

    # ---- profiles ----------------------------------------------------------

    def phase_profile(self):
        pr = self.plan["profile"]
        if not have("perf"):
            say("profile: no perf (linux-perf)")
            self.info(scenario="profile", skipped="no perf (linux-perf)")
            return
        for mode in pr["modes"]:
            why = self.set_mode(mode)
            if why:
                self.info(scenario="profile", offload=mode, skipped=why)
                continue
            for test in pr["tests"]:
                for tunnel in pr["tunnels"]:
                    if tunnel in self.tunnels:
                        self.profile("profile", tunnel, test)

    # ---- network namespaces ------------------------------------------------

    def netns_churn(self):
        """N namespaces created (unshare, a file descriptor kept for
        each) and deleted (the descriptors closed, then waited for until
        the kernel has torn every one down), with stt.ko loaded and not,
        alternating (ABBA) for several rounds."""
        nn = self.plan["netns"]
        ko = [m for m in os.environ.get("STT_MODULES", "").split()
              if os.path.basename(m) == "stt.ko"]
        if not ko:
            say("netns: stt.ko is not among the loaded modules")
            self.info(scenario="netns",
                      skipped="stt.ko not loaded by scripts/vm/run.sh")
            return
        libc = ctypes.CDLL(None, use_errno=True)
        clone_newnet = 0x40000000

        def loaded():
            return os.path.isdir("/sys/module/stt")

        def set_loaded(want):
            if want == loaded():
                return
            r = run(["insmod", ko[0]] if want else ["rmmod", "stt"])
            if r.returncode:
                raise Fail("netns: %s stt: %s" % (
                    "insmod" if want else "rmmod", r.stdout.strip()))

        # A namespace's teardown ends in cleanup_net() with its
        # key_remove_domain() (CONFIG_KEYS, Debian's): a kprobe's hit
        # count says how many are done. (struct net itself is freed one
        # cleanup batch later, so its slab count cannot tell.) The other
        # probes count what a module's per-namespace work can cost: RCU
        # waits and netfilter hook registrations.
        trace = "/sys/kernel/tracing/"
        probes = {"gone": "key_remove_domain",
                  "synchronize_net": "synchronize_net",
                  "synchronize_rcu": "synchronize_rcu",
                  "synchronize_rcu_expedited": "synchronize_rcu_expedited",
                  "nf_register_net_hook": "nf_register_net_hook"}
        armed = {}
        for key, func in probes.items():
            ev = "bench_" + key
            try:
                fd = os.open(trace + "kprobe_events",
                             os.O_WRONLY | os.O_APPEND)
                try:
                    os.write(fd, ("p:%s %s\n" % (ev, func)).encode())
                finally:
                    os.close(fd)
                with open(trace + "events/kprobes/%s/enable" % ev, "w") as f:
                    f.write("1")
                armed[ev] = key
            except OSError as e:
                say("netns: no kprobe on %s (%s)" % (func, e))
        if "bench_gone" not in armed:
            say("netns: deletion is timed without waiting for the teardown")

        def hits():
            out = {}
            with open(trace + "kprobe_profile") as f:
                for line in f:
                    w = line.split()
                    if w and w[0] in armed:
                        out[armed[w[0]]] = int(w[1])
            return out

        def gone():
            return hits().get("gone")

        def churn(n):
            h0 = hits()
            base = h0.get("gone")
            me = os.open("/proc/self/ns/net", os.O_RDONLY)
            fds = []
            t0 = time.monotonic()
            for _ in range(n):
                if libc.unshare(clone_newnet):
                    raise Fail("unshare: " + os.strerror(ctypes.get_errno()))
                fds.append(os.open("/proc/self/ns/net", os.O_RDONLY))
                if libc.setns(me, clone_newnet):
                    raise Fail("setns: " + os.strerror(ctypes.get_errno()))
            t1 = time.monotonic()
            for fd in fds:
                os.close(fd)
            waited = base is not None
            while waited and gone() - base < n:
                if time.monotonic() - t1 > 1200:
                    waited = False
                time.sleep(0.02)
            t2 = time.monotonic()
            os.close(me)
            h1 = hits()
            return t1 - t0, t2 - t1, waited, {
                k: h1[k] - h0[k] for k in h1 if k in h0 and k != "gone"}

        n = nn["count"]
        churn(min(n, 50))   # warm-up, not recorded
        for rnd in range(1, nn["rounds"] + 1):
            order = (False, True) if rnd % 2 else (True, False)
            for want in order:
                set_loaded(want)
                c, d, waited, calls = churn(n)
                record("netns", **dict(
                    self.common, scenario="netns", test="churn", rep=rnd,
                    loaded=want, count=n, create_s=round(c, 4),
                    delete_s=round(d, 4), value=round(c + d, 4),
                    teardown_awaited=waited, calls=calls))
                say("netns round %d, stt.ko %s: %d namespaces created in "
                    "%.2f s, deleted in %.2f s" % (
                        rnd, "loaded" if want else "not loaded", n, c, d))
        set_loaded(True)


# ---- two guests ------------------------------------------------------------

def pair_underlay():
    for mod in ("virtio_net", "vxlan", "geneve"):
        run(["modprobe", "-q", mod])
    mac = os.environ["STT_NET_MAC"]
    dev = None
    for _ in range(100):
        for d in os.listdir("/sys/class/net"):
            with open("/sys/class/net/%s/address" % d) as f:
                if f.read().strip() == mac:
                    dev = d
        if dev:
            break
        time.sleep(0.1)
    if not dev:
        raise Fail("no NIC with MAC " + mac)
    local = os.environ["STT_NET_LOCAL"]
    run(["ip", "addr", "add", local + "/24", "dev", dev], check=True)
    run(["ip", "link", "set", dev, "up"], check=True)
    return Host(None, int(local.rsplit(".", 1)[1]), dev)


class PairB:
    """guest b: the servers and the agent"""

    def __init__(self, plan):
        self.plan = plan

    def main(self):
        host = pair_underlay()
        tunnels_add(host, 1, self.plan["tunnels"])
        servers = servers_start(host)
        say("guest b: %s %s, servers up, agent on :%d" % (
            host.underlay, os.environ["STT_NET_LOCAL"], AGENT_PORT))
        tmp = tempfile.mkdtemp(prefix="bench.")
        prof = None
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", AGENT_PORT))
        s.listen(8)
        # guest a says quit when done; the timeout covers a guest a that
        # died
        s.settimeout(self.plan.get("agent_timeout", 3000))
        while True:
            try:
                c, _ = s.accept()
            except socket.timeout:
                say("guest b: guest a went silent")
                break
            with c:
                f = c.makefile("rw")
                cmd = f.readline().strip()
                if cmd == "stat":
                    f.write(stat_line())
                elif cmd.startswith("counters ") and \
                        cmd[9:] in defs.TUNNELS:
                    f.write(json.dumps(host.counters(cmd[9:])) + "\n")
                elif cmd == "ncpu":
                    f.write("%d\n" % NCPU)
                elif cmd == "sttstats":
                    f.write(json.dumps(host.ethtool_stats("stt0")) + "\n")
                elif cmd == "perf-launch":
                    prof = profiles.Profiler(tmp, self.plan["profile_freq"])
                    try:
                        prof.launch()
                        f.write("ok\n")
                    except (RuntimeError, OSError) as e:
                        prof = None
                        f.write("error %s\n" % e)
                elif cmd == "perf-enable" and prof:
                    prof.enable()
                    f.write("ok\n")
                elif cmd == "perf-disable" and prof:
                    prof.disable()
                    f.write("ok\n")
                elif cmd == "perf-stop":
                    f.write(json.dumps(prof.stop() if prof else {}) + "\n")
                    prof = None
                elif cmd == "quit":
                    f.write("bye\n")
                    f.flush()
                    break
                else:
                    f.write("?\n")
                f.flush()
        for p in servers:
            p.kill()
        say("guest b: done")


class PairA(Bench):
    """guest a: drives the tests"""

    def main(self):
        self.snd = pair_underlay()
        self.rcv = None
        self.mode = defs.PAIR_MODE
        self.tools = Tools(self.plan, self.snd)
        self.agent = os.environ["STT_NET_ADDRS"].split()[1]
        tunnels_add(self.snd, 2, self.tunnels)
        say("guest a: %s %s, waiting for guest b" % (
            self.snd.underlay, os.environ["STT_NET_LOCAL"]))
        for _ in range(300):
            try:
                self.peer_ncpu = int(self.ask("ncpu", timeout=3))
                break
            except (OSError, ValueError):
                time.sleep(1)
        else:
            raise Fail("guest b's agent never answered")
        try:
            self.warm_up()
            self.info(tool=self.tools.tool, ncpu=NCPU, offload=self.mode,
                      duration=self.plan["duration"], reps=self.reps,
                      underlay=self.offloads_of(self.snd),
                      **self.mtus(self.snd))
            self.matrix("pair", self.plan["tests"])
            if self.plan.get("perf"):
                if not have("perf"):
                    say("--perf: no perf (linux-perf)")
                else:
                    for test in self.plan["tests"]:
                        for tunnel in self.tunnels:
                            self.profile("pair", tunnel, test, remote=True)
            self.info(stt_stats_a=self.snd.ethtool_stats("stt0"),
                      stt_stats_b=json.loads(self.ask("sttstats") or "{}"))
        finally:
            try:
                self.ask("quit", timeout=10)
            except OSError:
                pass


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    plan = json.loads(argv[0])
    try:
        if plan["vm"] == "onevm":
            OneVM(plan).main()
        elif plan["vm"] == "pair":
            # guest 1 is a, guest 2 b
            index = os.environ.get("STT_NET_INDEX")
            if index == "1":
                PairA(plan).main()
            elif index == "2":
                PairB(plan).main()
            else:
                raise Fail("pair: STT_NET_INDEX is not 1 or 2 (run through "
                           "scripts/vm/net.sh --guests 2)")
        else:
            raise Fail("unknown vm '%s'" % plan["vm"])
    except Fail as e:
        say("error: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
