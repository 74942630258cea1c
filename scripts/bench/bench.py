#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench: STT against no tunnel, VXLAN and Geneve, in the terms of the
STT proposal's netperf figures (throughput, sender and receiver CPU, CPU
per Gbit) and its reviewer's question (small packets, UDP, request/
response), plus the cost of many devices, of STT over IPsec, of network
namespaces with stt.ko loaded, and where the time goes (profiles). Runs in
QEMU guests (defs.SCENARIOS):

  pair     two guests of one vCPU each, virtio-net NICs on taps bridged in
           a private netns (scripts/vm/net.sh): TSO, GRO, no UDP-tunnel
           offload -- the seed's two machines
  onevm    one guest (-icount: deterministic), two netns joined by veth,
           the underlay's offloads switched (defs.MODES), and TSO with
           transport-mode ESP between the hosts (AES-GCM, or ESP's null
           cipher) for every tunnel and no tunnel alike
  scale    in the one-VM guest: one STT tunnel among 1, 100, 1000 STT
           devices
  profile  in the one-VM guest: perf profile of the same transfer per
           tunnel, broken down by function, per packet and per byte
  netns    in the one-VM guest: 1000 network namespaces created and
           deleted, stt.ko loaded and not, alternating
  ovn      OVN across three guests (scripts/demo/ovn-hosts.sh --figures):
           one TCP stream between VMs on different chassis over
           ovn-encap-type=stt against geneve, convergence, reassembly
           memory on the busiest chassis

Prints a table (median of N interleaved repetitions, [min-max]), ratios to
no tunnel and to VXLAN, PASS/MISS per goal; writes results/bench-STAMP/
{raw.jsonl,meta.json,results.json,report.txt,report.rst,chart.png,*.log}
(results/latest points at the newest). report.rst is the report in
reStructuredText, for Documentation/networking/stt-benchmarks.rst: that
document is written by hand from the runs (their date and commit named),
never overwritten by a run.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import defs  # noqa: E402
import report  # noqa: E402

SRCDIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GUEST = "scripts/bench/guest.py"     # relative to the tree that runs it
VM_RUN = "scripts/vm/run.sh"
VM_NET = "scripts/vm/net.sh"
TARGET = "scripts/vm/target.sh"
OVN_HOSTS = "scripts/demo/ovn-hosts.sh"


def say(*a):
    print("bench:", *a, file=sys.stderr, flush=True)


def die(*a):
    say(*a)
    sys.exit(1)


def options(argv):
    D = defs.DEFAULTS
    p = argparse.ArgumentParser(
        prog="scripts/bench/bench.py",
        usage="scripts/bench/bench.py [options]  (make bench "
              "BENCH_ARGS=\"...\")",
        description="STT against no tunnel, VXLAN and Geneve in QEMU "
        "guests; see Documentation/networking/stt.rst, \"Benchmarks\".",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    a = p.add_argument
    a("--quick", action="store_true",
      help="one VM only (%s), %d s x 3, fewer tests" % (
          ",".join(s for s, x in defs.SCENARIOS.items() if x.quick),
          D["quick_duration"]))
    a("--scenario", metavar="LIST",
      help="%s (default: all; ovn needs vport-stt.ko and takes about 15 "
      "minutes)" % ",".join(defs.SCENARIO_ORDER))
    a("--tunnel", metavar="LIST", default=",".join(defs.TUNNEL_ORDER),
      help="%(default)s (default)")
    a("--test", metavar="LIST",
      help="%s, or tcpN/udpN, for every scenario (default: each "
      "scenario's own: all for pair and one VM's tso mode, tcp1,tcp5 for "
      "the other modes, tcp1,tcp_rr for scale, tcp1 for the profile)" %
      ",".join(defs.KNOWN_TESTS))
    a("--offload", metavar="LIST", default=",".join(defs.MODE_ORDER),
      help="one-VM underlay modes: %(default)s (default; bigtcp needs "
      "Linux 6.3+, skipped before; nogro: tso with GRO off on the tunnel "
      "devices; esp: tso with transport-mode ESP, "
      "AES-GCM, between the hosts; espnull: the same with ESP's null "
      "cipher)")
    a("--devices", metavar="LIST", default=D["devices"],
      help="scale: STT device counts (default %(default)s)")
    a("--duration", metavar="S", type=int,
      help="seconds per test (default %d; --quick %d)" % (
          D["duration"], D["quick_duration"]))
    a("--reps", metavar="N", type=int, default=D["reps"],
      help="repetitions, interleaved (default %(default)s)")
    a("--tool", choices=("auto", "netperf", "iperf3"), default=D["tool"],
      help="iperf3 + sockperf stand in for netperf; auto = netperf when "
      "installed")
    a("--multi-tool", choices=("iperf3", "netperf"), default=D["multi_tool"],
      help="TCP with 5/50 sessions: iperf3 (default, one process, one "
      "interval) or netperf (a process each)")
    a("--cpu", metavar="MODEL",
      help="QEMU CPU model of the one-VM guest (default: QEMU's, qemu64, "
      "without AES-NI; \"max\" emulates AES-NI and PCLMUL, so ESP's "
      "AES-GCM is not software AES)")
    a("--smp", metavar="N", type=int, default=D["smp"],
      help="vCPUs of the one-VM guest (default %(default)s)")
    a("--icount", metavar="N|off", default=D["icount"],
      help="one-VM guest time = executed instructions x 2^N ns (default "
      "%(default)s): figures independent of the host's load")
    a("--pair-icount", metavar="N|off", default=D["pair_icount"],
      help="the same for the two guests (default off: their clocks would "
      "drift apart)")
    a("--target", metavar="LIST", default=defs.HOST_TARGET,
      help="kernels and userlands to run on, from scripts/vm/target.sh: %s "
      "(default %s: the host's root and kernel)" % (
          ",".join(defs.TARGETS), defs.HOST_TARGET))
    a("--kernel", metavar="R",
      help="with the host's root: boot kernel release R instead "
      "(scripts/vm/run.sh --kernel; its modules must be in "
      "/lib/modules/R)")
    a("--netns-count", metavar="N", type=int, default=D["netns_count"],
      help="netns: namespaces per round (default %(default)s)")
    a("--netns-rounds", metavar="N", type=int,
      help="netns: rounds, each loaded and not (default %d)" %
      D["netns_rounds"])
    a("--profile-window", metavar="S", type=float,
      help="profile: seconds of steady traffic measured and profiled per "
      "tunnel (default %d, --quick %d)" % (D["profile_window"],
                                           D["quick_duration"]))
    a("--perf", action="store_true",
      help="two guests: then profile each test once per tunnel, sender "
      "and receiver (not a measurement)")
    a("--out", metavar="DIR", help="results directory (default "
      "results/bench-STAMP)")
    a("--no-build", action="store_true",
      help="use the stt.ko and plugin already built")
    a("--report", metavar="DIR[,DIR...]",
      help="only print the report of an earlier run again, or of several "
      "together (e.g. runs on different --target)")
    o = p.parse_args(argv)
    try:
        for t in defs.split(o.test):
            defs.test(t)
    except ValueError as e:
        p.error(str(e))
    for what, lst, known in (("scenario", o.scenario, defs.SCENARIOS),
                             ("tunnel", o.tunnel, defs.TUNNELS),
                             ("offload", o.offload, defs.MODES),
                             ("target", o.target, defs.TARGETS)):
        bad = [x for x in defs.split(lst) if x not in known]
        if bad:
            p.error("unknown %s '%s' (known: %s)" % (what, bad[0],
                                                     ",".join(known)))
    return o


def scenario_tests(o, scen, mode=None):
    if o.test:
        return defs.split(o.test)
    s = defs.SCENARIOS[scen]
    if o.quick:
        if mode and mode in s.quick_per_mode:
            return list(s.quick_per_mode[mode])
        return list(s.quick_tests or s.tests)
    if mode and mode in s.per_mode:
        return list(s.per_mode[mode])
    return list(s.tests)


def plans(o):
    """{VM kind: its guests' plan}: what each VM set-up (VMS) runs"""
    scen = defs.split(o.scenario) or [
        s for s, x in defs.SCENARIOS.items() if x.quick or not o.quick]
    tunnels = [t for t in defs.TUNNEL_ORDER if t in defs.split(o.tunnel)]
    common = {"tunnels": tunnels, "duration": o.duration, "reps": o.reps,
              "tool": o.tool, "multi_tool": o.multi_tool,
              "profile_freq": defs.DEFAULTS["profile_freq"],
              "profile": {"lead": defs.DEFAULTS["profile_lead"],
                          "window": o.profile_window or (
                              defs.DEFAULTS["quick_duration"] if o.quick
                              else defs.DEFAULTS["profile_window"])}}
    onevm = None
    phases = [p for p in defs.ONEVM_PHASES if p in scen]
    if phases:
        modes = [m for m in defs.MODE_ORDER if m in defs.split(o.offload)]
        onevm = dict(common, vm="onevm", phases=phases,
                     icount=None if o.icount == "off" else int(o.icount))
        onevm["modes"] = {m: scenario_tests(o, "onevm", m) for m in modes}
        onevm["scale"] = {"devices": [int(x) for x in defs.split(o.devices)],
                          "tests": scenario_tests(o, "scale")}
        ptests = [t for t in scenario_tests(o, "profile")
                  if defs.test(t).kind in ("stream", "rr")]
        onevm["profile"] = dict(
            common["profile"], tests=ptests,
            modes=([m for m in defs.PROFILE_MODES if m in modes] or
                   modes[:1]),
            tunnels=[t for t in defs.PROFILE_TUNNELS if t in tunnels])
        onevm["netns"] = {"count": o.netns_count,
                          "rounds": o.netns_rounds or
                          defs.DEFAULTS["netns_rounds"]}
    vms = {}
    if "pair" in scen:
        vms["pair"] = dict(common, vm="pair", tests=scenario_tests(o, "pair"),
                           perf=o.perf)
    if onevm:
        vms["onevm"] = onevm
    if "ovn" in scen:
        vms["ovn"] = {"vm": "ovn", "tunnels": defs.OVN_TUNNELS,
                      "duration": o.duration, "reps": o.reps}
    return vms


def pair_cmd(o, tgt, plan, out, sfx):
    """two guests: scripts/vm/net.sh --guests 2 (1 is a, 2 is b; OUT/pairSFX
    keeps their logs, b's as g2.log)"""
    cmd = [os.path.join(tgt.dir, VM_NET), "--guests", "2",
           "--log-dir", os.path.join(out, "pair" + sfx)] + tgt.vmargs + [
        "--timeout", str(pair_timeout(plan))]
    if o.pair_icount != "off":
        cmd += ["--icount", o.pair_icount]
    n = len(plan["tests"]) * len(plan["tunnels"]) * plan["reps"]
    return cmd + ["--", "python3", GUEST, json.dumps(plan)], \
        "two guests: %d measurements of %d s" % (n, o.duration)


def onevm_cmd(o, tgt, plan, out, sfx):
    """one VM: scripts/vm/run.sh"""
    cmd = [os.path.join(tgt.dir, VM_RUN)] + tgt.vmargs + [
        "--smp", str(o.smp), "--timeout", str(onevm_timeout(plan))]
    if o.icount != "off":
        cmd += ["--icount", o.icount]
    if o.cpu:
        cmd += ["--qemu-arg", "-cpu", "--qemu-arg", o.cpu]
    return cmd + ["--", "python3", GUEST, json.dumps(plan)], \
        "one VM: " + ", ".join(plan["phases"])


def ovn_cmd(o, tgt, plan, out, sfx):
    """OVN across three guests: scripts/demo/ovn-hosts.sh --figures (its
    own guests and guest side, scripts/demo/ovn-hosts-guest.sh; its
    records in OUT/ovn*/raw.jsonl)"""
    cmd = [os.path.join(SRCDIR, OVN_HOSTS), "--figures", "--reps",
           str(plan["reps"]), "--duration", str(plan["duration"]),
           "--out", os.path.join(out, "ovn" + sfx)]
    if tgt.name == defs.HOST_TARGET:
        cmd += ["--modules-from", os.path.join(out, "snap")]
    else:
        cmd += ["--target", tgt.name]
    return cmd, "OVN across three guests: %d x STT and Geneve, two NIC " \
        "modes, %d s each" % (plan["reps"], plan["duration"])


# Each VM set-up: its command (the guests then run guest.py with the
# plan). A scenario of a set-up of its own (defs.Scenario.vm) adds its
# entry here, its plan in plans() and its guest side in guest.py.
VMS = {"pair": pair_cmd, "onevm": onevm_cmd, "ovn": ovn_cmd}


def onevm_timeout(plan):
    nt = len(plan["tunnels"])
    n = sum(len(t) for t in plan["modes"].values()) * nt * plan["reps"]
    if "scale" in plan["phases"]:
        n += len(plan["scale"]["devices"]) * (
            len(plan["scale"]["tests"]) + 4) * plan["reps"]
    s = 300 + n * (plan["duration"] + 20)
    if "profile" in plan["phases"]:
        p = plan["profile"]
        s += len(p["modes"]) * len(p["tests"]) * len(p["tunnels"]) * (
            300 + 2 * (p["lead"] + p["window"]))
    if "netns" in plan["phases"]:
        s += plan["netns"]["rounds"] * 2 * plan["netns"]["count"] * 0.5
    return int(s)


def pair_timeout(plan):
    n = len(plan["tests"]) * len(plan["tunnels"]) * plan["reps"]
    s = 300 + n * (plan["duration"] + 15)
    if plan["perf"]:
        p = plan["profile"]
        s += len(plan["tests"]) * len(plan["tunnels"]) * (
            300 + 2 * (p["lead"] + p["window"]))
    return s


class Target:
    """Where a guest's tree, module and kernel come from."""

    def __init__(self, name, o, out, ovn=False):
        self.name = name
        if name == defs.HOST_TARGET:
            self.dir = SRCDIR
            self.vmargs = ["--kernel", o.kernel] if o.kernel else []
            # The module and plugin measured: a snapshot, so that a
            # rebuild during the run changes nothing.
            snap = os.path.join(out, "snap")
            os.makedirs(snap, exist_ok=True)
            shutil.copy(os.path.join(SRCDIR, "stt.ko"), snap)
            shutil.copy(os.path.join(SRCDIR, "tools/iproute2/link_stt.so"),
                        snap)
            if ovn:
                ko = os.path.join(SRCDIR, "vport-stt.ko")
                if not os.path.exists(ko):
                    die("scenario ovn: no vport-stt.ko (make module says "
                        "why); --scenario %s runs without it" % ",".join(
                            s for s in defs.SCENARIO_ORDER if s != "ovn"))
                shutil.copy(ko, snap)
            self.vmargs += ["--modules", os.path.join(snap, "stt.ko"),
                            "--env", "IP_LIB_DIR=" + snap]
            return
        if not o.no_build:
            say("building for %s (scripts/vm/target.sh build)" % name)
            r = subprocess.run([os.path.join(SRCDIR, TARGET), "build", name],
                               cwd=SRCDIR, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if r.returncode:
                die("scripts/vm/target.sh build %s failed:\n%s" % (
                    name, r.stdout[-2000:]))
        r = subprocess.run([os.path.join(SRCDIR, TARGET), "prepare", name],
                           cwd=SRCDIR, stdout=subprocess.PIPE, text=True)
        if r.returncode:
            die("scripts/vm/target.sh prepare %s failed" % name)
        kv = dict(line.split("=", 1) for line in r.stdout.splitlines()
                  if "=" in line)
        self.dir = kv["dir"]
        if not os.path.exists(os.path.join(self.dir, "stt.ko")):
            die("%s is not built: scripts/vm/target.sh build %s" % (
                name, name))
        # the run.sh options that boot it, one a line (KERNELRELEASE too)
        r = subprocess.run([os.path.join(SRCDIR, TARGET), "vmargs", name],
                           cwd=SRCDIR, stdout=subprocess.PIPE, text=True)
        if r.returncode or not r.stdout.strip():
            die("scripts/vm/target.sh vmargs %s failed" % name)
        self.vmargs = r.stdout.splitlines() + [
            "--modules", "stt.ko",
            "--env", "IP_LIB_DIR=" + os.path.join(self.dir,
                                                  "tools/iproute2")]


def stream(cmd, cwd, log):
    """Run a VM command; its output to LOG, progress to stderr, its
    BENCH records returned."""
    recs = []
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             errors="replace")
        for line in p.stdout:
            f.write(line)
            f.flush()
            if line.startswith("BENCH "):
                try:
                    recs.append(json.loads(line[6:]))
                except ValueError:
                    say("unreadable record: " + line[:100])
            elif line.startswith("bench: "):
                print("  " + line[7:], end="", file=sys.stderr, flush=True)
            elif line.startswith(("vm-run: ", "vm-net: ",
                                   "ovn-hosts: ", "TEST: ")):
                print("  " + line, end="", file=sys.stderr, flush=True)
        rc = p.wait()
    return rc, recs


def git_commit():
    r = subprocess.run(["git", "describe", "--always", "--dirty"],
                       cwd=SRCDIR, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return r.stdout.strip() or "?"


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def default_run(o):
    return not (o.quick or o.scenario or o.test or o.devices !=
                defs.DEFAULTS["devices"] or o.tunnel != ",".join(
                    defs.TUNNEL_ORDER) or o.offload != ",".join(
                        defs.MODE_ORDER) or o.duration or o.reps !=
                defs.DEFAULTS["reps"])


def main(argv):
    o = options(argv)
    if o.report:
        dirs = defs.split(o.report)
        for d in dirs:
            if not os.path.exists(os.path.join(d, "raw.jsonl")):
                die("no %s/raw.jsonl" % d)
        report.main(dirs)
        return 0
    full = default_run(o)
    if o.duration is None:
        o.duration = defs.DEFAULTS["quick_duration" if o.quick else
                                   "duration"]
    vms = plans(o)
    if not shutil.which("qemu-system-x86_64"):
        die("no QEMU: run scripts/setup.sh")
    if not shutil.which("netperf"):
        say("netperf not installed: iperf3 and sockperf stand in")
    if not o.no_build:
        say("building stt.ko and the iproute2 plugin")
        r = subprocess.run(["make", "-s", "module", "plugin"], cwd=SRCDIR,
                           stdout=subprocess.DEVNULL)
        if r.returncode:
            die("make module plugin failed")

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.abspath(o.out or os.path.join(SRCDIR, "results",
                                                "bench-" + stamp))
    os.makedirs(out, exist_ok=True)
    if out.startswith(os.path.join(SRCDIR, "results") + os.sep):
        latest = os.path.join(SRCDIR, "results", "latest")
        if os.path.islink(latest) or not os.path.exists(latest):
            if os.path.islink(latest):
                os.unlink(latest)
            os.symlink(out, latest)

    t_start = time.time()
    load_start = loadavg()
    status = 0
    timings = {}
    recs = []
    for name in defs.split(o.target):
        tgt = Target(name, o, out, "ovn" in vms)
        sfx = "" if name == defs.HOST_TARGET else "-" + name
        for vm, plan in vms.items():
            plan = dict(plan, target=name)
            cmd, what = VMS[vm](o, tgt, plan, out, sfx)
            say("%s (%s)" % (what, name))
            t0 = time.time()
            rc, r = stream(cmd, tgt.dir, os.path.join(out, "%s%s.log" % (
                vm, sfx)))
            if vm == "ovn":
                # ovn-hosts.sh's records are in its raw.jsonl
                d = os.path.join(out, "ovn" + sfx)
                r = []
                if os.path.exists(os.path.join(d, "raw.jsonl")):
                    r = [dict(x, target=name) for x in report.load_one(d)[0]]
            recs += r
            timings[vm + sfx] = round(time.time() - t0)
            if rc:
                say("%s: failed (status %d), see %s/%s%s.log" % (
                    what, rc, out, vm, sfx))
                status = 1

    with open(os.path.join(out, "raw.jsonl"), "w") as f:
        for r in recs:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    meta = {
        "date": stamp, "commit": git_commit(),
        "targets": defs.split(o.target), "kernel_option": o.kernel,
        "quick": o.quick, "full": full, "argv": argv,
        "scenarios": [s for s in defs.SCENARIO_ORDER
                      if s in vms.get("onevm", {}).get("phases", []) or
                      s in vms],
        "tunnels": next(iter(vms.values()))["tunnels"] if vms else [],
        "duration": o.duration,
        "reps": o.reps, "tool": o.tool, "multi_tool": o.multi_tool,
        "onevm_smp": o.smp, "onevm_icount": o.icount, "onevm_cpu": o.cpu,
        "pair_icount": o.pair_icount, "host_cpus": os.cpu_count(),
        "loadavg_start": load_start, "loadavg_end": loadavg(),
        "elapsed_s": round(time.time() - t_start), "timings_s": timings,
        "plans": vms,
    }
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print()
    report.main(out)
    say("results in %s (%d s; %s)" % (out, meta["elapsed_s"], " ".join(
        "%s=%s" % kv for kv in timings.items())))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
