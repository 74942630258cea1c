#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# report.py DIR: turn the raw records of a scripts/bench/bench.sh run (DIR/raw.jsonl,
# "BENCH {json}" lines from scripts/bench/bench-guest.sh, plus DIR/meta.json) into
# DIR/results.json (raw records, medians, spreads, ratios, targets),
# DIR/report.txt (the table, also printed) and DIR/chart.png (gnuplot).
#
# Every figure is the median of the repetitions with the spread [min-max].
# Ratios ("vs VXLAN", "vs none") divide medians; their spread comes from
# the per-repetition ratios (repetitions are interleaved, so repetition i
# of every tunnel ran at about the same time).

import json
import os
import statistics
import subprocess
import sys

TUNNELS = ["none", "vxlan", "geneve", "stt"]
TESTS = ["tcp1", "tcp5", "tcp50", "udp64", "udp1400", "tcp_rr", "udp_rr"]
TEST_NAME = {
    "tcp1": "TCP 1 stream", "tcp5": "TCP 5 streams", "tcp50": "TCP 50 streams",
    "udp64": "UDP 64 B", "udp1400": "UDP 1400 B",
    "tcp_rr": "TCP_RR", "udp_rr": "UDP_RR",
}
UNIT = {"gbps": "Gbit/s", "pps": "pkt/s", "tps": "trans/s"}
SECTIONS = [  # (scenario, offload, title)
    ("pair", "virtio", "Two guests, 1 vCPU each, virtio-net on tap+bridge "
     "(TSO, GRO, no UDP-tunnel offload)"),
    ("onevm", "full", "One VM, two netns, veth: full offloads "
     "(TSO + UDP-tunnel segmentation)"),
    ("onevm", "tso", "One VM, two netns, veth: TSO without UDP-tunnel "
     "segmentation"),
    ("onevm", "notso", "One VM, two netns, veth: no TSO at all"),
    ("onevm", "esp", "One VM, two netns, veth: TSO without UDP-tunnel "
     "segmentation, transport-mode ESP (rfc4106(gcm(aes))) between the "
     "hosts for every tunnel and for no tunnel"),
    ("onevm", "espnull", "One VM, two netns, veth: the same with ESP's null "
     "cipher and null authentication (ESP's framing without the cipher)"),
]
OVN_MODES = [  # (offload, title) of scripts/demo/ovn-hosts-guest.sh's NIC modes
    ("virtio", "rx-gro-hw on: the receiver gets TSO frames whole (like "
     "LRO), as make bench's two guests"),
    ("virtio-mtu", "rx-gro-hw off: the receiver gets MTU-sized segments, "
     "software GRO (a NIC without LRO)"),
]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (None, None)


def fmt(v, metric=None):
    if v is None:
        return "-"
    if metric == "gbps":
        return "%.3f" % v
    if metric in ("pps", "tps"):
        return "%.0f" % v if v >= 100 else "%.1f" % v
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_spread(lo, hi, metric=None):
    if lo is None:
        return ""
    return "[%s-%s]" % (fmt(lo, metric), fmt(hi, metric))


def load(d):
    recs, infos = [], []
    with open(os.path.join(d, "raw.jsonl")) as f:
        for line in f:
            line = line.strip()
            if line.startswith("BENCH-INFO "):
                infos.append(json.loads(line[len("BENCH-INFO "):]))
            elif line.startswith("BENCH "):
                recs.append(json.loads(line[len("BENCH "):]))
    meta = {}
    try:
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        pass
    return recs, infos, meta


def cpu_per_gbit(r, key):
    c, v = r.get(key), r.get("value")
    if c is None or not v or r.get("metric") != "gbps":
        return None
    return c / v


class Group:
    """All repetitions of one (scenario, offload, test, tunnel, devices)."""

    def __init__(self, recs):
        self.recs = sorted(recs, key=lambda r: r.get("rep", 0))
        r0 = self.recs[0]
        self.metric = r0.get("metric")
        self.tools = sorted({r.get("tool") for r in recs if r.get("tool")})
        self.by_rep = {r.get("rep"): r for r in self.recs}

    def vals(self, key="value"):
        return [r.get(key) for r in self.recs]

    def summary(self, key="value"):
        xs = self.vals(key)
        lo, hi = spread(xs)
        return {"median": med(xs), "min": lo, "max": hi, "n": len(
            [x for x in xs if x is not None])}

    def derived(self, fn):
        xs = [fn(r) for r in self.recs]
        lo, hi = spread(xs)
        return {"median": med(xs), "min": lo, "max": hi}

    def value(self):
        return self.summary()["median"]


def ratio(g, base, fn=None):
    """Median ratio and per-repetition ratio spread of g over base."""
    if g is None or base is None:
        return None
    get = fn or (lambda r: r.get("value"))
    a = med([get(r) for r in g.recs])
    b = med([get(r) for r in base.recs])
    if a is None or not b:
        return None
    per = []
    for rep, r in g.by_rep.items():
        rb = base.by_rep.get(rep)
        if rb is not None and get(r) is not None and get(rb):
            per.append(get(r) / get(rb))
    lo, hi = spread(per)
    return {"ratio": a / b, "min": lo, "max": hi}


def fmt_ratio(x):
    if x is None:
        return "-"
    s = "%.2fx" % x["ratio"]
    if x["min"] is not None:
        s += " [%.2f-%.2f]" % (x["min"], x["max"])
    return s


def main():
    d = sys.argv[1]
    recs, infos, meta = load(d)
    groups = {}
    for r in recs:
        k = (r.get("scenario"), r.get("offload"), r.get("test"),
             r.get("tunnel"), r.get("devices", 0))
        groups.setdefault(k, []).append(r)
    G = {k: Group(v) for k, v in groups.items()}

    def g(scen, off, test, tun, dev=0):
        return G.get((scen, off, test, tun, dev))

    out = []
    p = out.append
    summary = []
    p("STT benchmark, %s" % meta.get("date", ""))
    p("commit %s, kernel %s, QEMU TCG; %s s per test, %s repetitions "
      "(interleaved); figures: median [min-max]" % (
          meta.get("commit", "?"), meta.get("kernel", "?"),
          meta.get("duration", "?"), meta.get("reps", "?")))
    if meta.get("loadavg_start"):
        p("host load average at start/end: %s / %s (%s CPUs): absolute "
          "figures are noisy, compare ratios within this run" % (
              meta.get("loadavg_start"), meta.get("loadavg_end", "?"),
              meta.get("host_cpus", "?")))
    if meta.get("onevm_icount", "off") != "off":
        p("One VM: QEMU -icount shift=%s: guest time counts executed "
          "instructions (%d ns each), so one-VM figures are deterministic "
          "and independent of host load; their unit is per virtual CPU." % (
              meta["onevm_icount"], 2 ** int(meta["onevm_icount"])))
    p("CPU: whole-guest /proc/stat deltas (user+nice+system+irq+softirq) "
      "over each test, in % of one CPU; CPU/Gbit = CPU% / (Gbit/s).")
    mtus = [i for i in infos if "stt_mtu" in i]
    if mtus:
        i = mtus[0]
        p("Tunnel MTUs: STT %s (default), VXLAN %s, Geneve %s (outer "
          "packets fit the 1500-byte underlay unfragmented)" % (
              i.get("stt_mtu"), i.get("vxlan_mtu"), i.get("geneve_mtu")))

    for scen, off, title in SECTIONS:
        rows = [(t, tun) for t in TESTS for tun in TUNNELS
                if g(scen, off, t, tun)]
        if not rows:
            continue
        pair = scen == "pair"
        p("")
        p("== " + title)
        if pair:
            hdr = "%-15s %-7s %-26s %-6s %-6s %-8s %-8s %-19s %-19s %s" % (
                "test", "tunnel", "result", "sndCPU", "rcvCPU", "snd/Gbit",
                "rcv/Gbit", "vs VXLAN", "vs none", "tool")
        else:
            hdr = "%-15s %-7s %-26s %-6s %-8s %-19s %-19s %s" % (
                "test", "tunnel", "result", "CPU%", "CPU/Gbit", "vs VXLAN",
                "vs none", "tool")
        p(hdr)
        p("-" * len(hdr))
        last = None
        for t, tun in rows:
            gr = g(scen, off, t, tun)
            s = gr.summary()
            res = "%s %s %s" % (fmt(s["median"], gr.metric),
                                UNIT.get(gr.metric, ""),
                                fmt_spread(s["min"], s["max"], gr.metric))
            rv = ratio(gr, g(scen, off, t, "vxlan")) if tun != "vxlan" else None
            rn = ratio(gr, g(scen, off, t, "none")) if tun != "none" else None
            name = TEST_NAME.get(t, t) if t != last else ""
            last = t
            entry = {"scenario": scen, "offload": off, "test": t,
                     "tunnel": tun, "metric": gr.metric, "tools": gr.tools,
                     "value": s, "vs_vxlan": rv, "vs_none": rn}
            if pair:
                cs, cr = gr.summary("cpu_snd"), gr.summary("cpu_rcv")
                ps = gr.derived(lambda r: cpu_per_gbit(r, "cpu_snd"))
                pr = gr.derived(lambda r: cpu_per_gbit(r, "cpu_rcv"))
                entry.update(cpu_snd=cs, cpu_rcv=cr, cpu_snd_per_gbit=ps,
                             cpu_rcv_per_gbit=pr)
                p("%-15s %-7s %-26s %-6s %-6s %-8s %-8s %-19s %-19s %s" % (
                    name, tun, res, fmt(cs["median"]), fmt(cr["median"]),
                    fmt(ps["median"]), fmt(pr["median"]), fmt_ratio(rv),
                    fmt_ratio(rn), ",".join(gr.tools)))
            else:
                ct = gr.summary("cpu_total")
                pt = gr.derived(lambda r: cpu_per_gbit(r, "cpu_total"))
                entry.update(cpu_total=ct, cpu_total_per_gbit=pt)
                p("%-15s %-7s %-26s %-6s %-8s %-19s %-19s %s" % (
                    name, tun, res, fmt(ct["median"]), fmt(pt["median"]),
                    fmt_ratio(rv), fmt_ratio(rn), ",".join(gr.tools)))
            summary.append(entry)
        if not pair:
            p("(one VM: sender and receiver share the guest's CPU; CPU%% is "
              "the whole guest, %s vCPU)" % (meta.get("onevm_smp", "?")))

    # Throughput per stream.
    streams = []
    for scen, off, title in SECTIONS:
        for tun in TUNNELS:
            base = g(scen, off, "tcp1", tun)
            row = []
            for t, n in (("tcp1", 1), ("tcp5", 5), ("tcp50", 50)):
                gr = g(scen, off, t, tun)
                if gr is None:
                    row.append(None)
                    continue
                per = gr.derived(lambda r, n=n: r["value"] / n
                                 if r.get("value") is not None else None)
                rel = ratio(gr, base, None) if base else None
                row.append((n, per, rel["ratio"] / n if rel else None))
            if sum(1 for x in row if x) > 1:
                streams.append((scen, off, tun, row))
    if streams:
        p("")
        p("== Throughput per stream, Gbit/s (and per-stream / 1-stream)")
        hdr = "%-22s %-7s %-22s %-22s %-22s" % ("scenario", "tunnel",
                                               "1 stream", "5 streams",
                                               "50 streams")
        p(hdr)
        p("-" * len(hdr))
        for scen, off, tun, row in streams:
            cells = []
            for x in row:
                if x is None:
                    cells.append("-")
                else:
                    n, per, rel = x
                    c = fmt(per["median"], "gbps")
                    if n > 1 and rel is not None:
                        c += " (%.2fx)" % rel
                    cells.append(c)
            p("%-22s %-7s %-22s %-22s %-22s" % (
                scen + "/" + off, tun, *cells))

    # Scale.
    scale = []
    devs = sorted({k[4] for k in G if k[0] == "scale"})
    if devs:
        p("")
        p("== Scale: one STT tunnel among N STT devices in its netns "
          "(veth, TSO without UDP-tunnel offload)")
        hdr = "%-7s %-20s %-20s %-28s %-13s %-28s %-13s" % (
            "devices", "create ms/device", "delete ms/device",
            "TCP 1 stream Gbit/s", "vs alone", "TCP_RR trans/s", "vs alone")
        p(hdr)
        p("-" * len(hdr))
        for n in devs:
            cr, de = g("scale", "tso", "create", "stt", n), g(
                "scale", "tso", "delete", "stt", n)
            cells = []
            for x in (cr, de):
                if x is None:
                    cells.append("-")
                else:
                    s = x.summary()
                    cells.append("%s %s" % (fmt(s["median"]),
                                            fmt_spread(s["min"], s["max"])))
            ent = {"devices": n}
            for t in ("tcp1", "tcp_rr"):
                x = g("scale", "tso", t, "stt", n)
                base = g("scale", "tso", t, "stt", devs[0])
                if x is None:
                    cells += ["-", "-"]
                    continue
                s = x.summary()
                rr = ratio(x, base) if devs[0] == 1 else None
                ent[t] = {"value": s, "vs_alone": rr}
                cells.append("%s %s" % (fmt(s["median"], x.metric),
                                        fmt_spread(s["min"], s["max"],
                                                   x.metric)))
                cells.append("%.2fx" % rr["ratio"] if rr else "-")
            ent["create_ms"] = cr.summary() if cr else None
            ent["delete_ms"] = de.summary() if de else None
            scale.append(ent)
            p("%-7s %-20s %-20s %-28s %-13s %-28s %-13s" % (n, *cells))

    ovn = ovn_section(p, g, infos, meta)

    # Targets.
    targets = []

    def target(name, x, op, goal, detail="", scen=None):
        if x is None and scen and not any(k[0] == scen for k in G):
            return      # that scenario was not run
        if x is None:
            st, val = "n/a", None
        else:
            val = x["ratio"]
            ok = val >= goal if op == ">=" else val <= goal
            st = "PASS" if ok else "MISS"
        targets.append({"target": name, "status": st, "ratio": val,
                        "op": op, "goal": goal,
                        "spread": [x["min"], x["max"]] if x else None,
                        "detail": detail})

    def tr(scen, off, test, base, fn=None, dev=0):
        return ratio(g(scen, off, test, "stt", dev),
                     g(scen, off, test, base, dev), fn)

    target("two guests, TCP 1 stream: STT >= 3x VXLAN",
           tr("pair", "virtio", "tcp1", "vxlan"), ">=", 3.0, scen="pair")
    target("two guests, TCP 1 stream: STT >= 0.9x no tunnel",
           tr("pair", "virtio", "tcp1", "none"), ">=", 0.9, scen="pair")
    target("two guests, TCP 1 stream: receiver CPU/Gbit STT <= 0.5x VXLAN",
           tr("pair", "virtio", "tcp1", "vxlan",
              lambda r: cpu_per_gbit(r, "cpu_rcv")), "<=", 0.5, scen="pair")
    target("two guests, TCP 5 streams: STT >= 1.5x VXLAN",
           tr("pair", "virtio", "tcp5", "vxlan"), ">=", 1.5, scen="pair")
    target("one VM, full offloads, TCP 1 stream: STT >= 1.2x VXLAN",
           tr("onevm", "full", "tcp1", "vxlan"), ">=", 1.2, scen="onevm")
    target("one VM, underlay without TSO, TCP 1 stream: STT >= 1.0x VXLAN",
           tr("onevm", "notso", "tcp1", "vxlan"), ">=", 1.0, scen="onevm")
    for scen, off, where in (("pair", "virtio", "two guests"),
                             ("onevm", "tso", "one VM (TSO, no UDP-tnl)")):
        for t, what in (("udp64", "UDP 64 B pps"), ("udp1400", "UDP 1400 B pps"),
                        ("tcp_rr", "TCP_RR"), ("udp_rr", "UDP_RR")):
            if g(scen, off, t, "stt") or scen == "pair":
                target("%s, %s: STT >= 0.95x VXLAN" % (where, what),
                       tr(scen, off, t, "vxlan"), ">=", 0.95, scen=scen)
    target("OVN, %s guests, TCP 1 stream between chassis: STT >= 2x Geneve"
           % meta.get("guests", 3), tr("ovn", "virtio", "tcp1", "geneve"),
           ">=", 2.0, scen="ovn")
    if devs and devs[0] == 1:
        big = devs[-1]
        for t, what in (("tcp1", "throughput"), ("tcp_rr", "TCP_RR")):
            target("one tunnel among %d devices, %s >= 0.95x alone" % (big, what),
                   ratio(g("scale", "tso", t, "stt", big),
                         g("scale", "tso", t, "stt", 1)), ">=", 0.95)
    p("")
    p("== Targets")
    for t in targets:
        if t["ratio"] is None:
            v = "not measured"
        else:
            v = "%.2fx" % t["ratio"]
            if t["spread"] and t["spread"][0] is not None:
                v += " [%.2f-%.2f per repetition]" % tuple(t["spread"])
        p("%-4s  %-66s %s" % (t["status"], t["target"], v))
    n = {s: sum(1 for t in targets if t["status"] == s)
         for s in ("PASS", "MISS", "n/a")}
    p("%d PASS, %d MISS, %d not measured" % (n["PASS"], n["MISS"], n["n/a"]))

    tools = sorted({(r.get("test"), r.get("tool")) for r in recs
                    if r.get("tool")})
    if tools:
        by = {}
        for t, tool in tools:
            by.setdefault(tool, []).append(t)
        p("Tools: " + "; ".join("%s: %s" % (k, ", ".join(
            sorted(set(v), key=lambda x: TESTS.index(x) if x in TESTS else 99)))
            for k, v in sorted(by.items())))

    stats = [i for i in infos if i.get("stt_stats_b")]
    if stats:
        p("STT counters (receiver, last run): " +
          stats[-1]["stt_stats_b"].strip())

    text = "\n".join(out) + "\n"
    with open(os.path.join(d, "report.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"meta": meta, "info": infos, "summary": summary,
                   "scale": scale, "ovn": ovn, "targets": targets,
                   "raw": recs}, f,
                  indent=1)
    sys.stdout.write(text)
    chart(d, G, devs)


def ovn_section(p, g, infos, meta):
    """The OVN-across-guests figures (scripts/demo/ovn-hosts-guest.sh): STT against
    Geneve per NIC mode, then the BENCH-INFO figures. Returns them."""
    res = {}
    modes = [(m, t) for m, t in OVN_MODES if g("ovn", m, "tcp1", "stt")]
    oi = [i for i in infos if i.get("scenario") == "ovn"]
    if not modes and not oi:
        return res
    p("")
    p("== OVN across %s guests (one vCPU each, virtio-net: TSO, no "
      "UDP-tunnel offload): vm1 -> vm2, chassis 1 -> 2, one TCP stream; "
      "ovn-encap-type stt against geneve, switched live, repetitions "
      "interleaved" % meta.get("guests", 3))
    hdr = "%-7s %-26s %-6s %-6s %-8s %-8s %-19s %-19s %s" % (
        "tunnel", "result", "sndCPU", "rcvCPU", "snd/Gbit", "rcv/Gbit",
        "vs Geneve", "rcv/Gbit vs Geneve", "rcv NIC B/pkt")

    def pkt(r):
        n, b = r.get("rcv_nic_rx_packets"), r.get("rcv_nic_rx_bytes")
        return b / n if n else None
    for m, title in modes:
        p("-- NIC mode %s: %s" % (m, title))
        p(hdr)
        p("-" * len(hdr))
        base = g("ovn", m, "tcp1", "geneve")
        for tun in ("stt", "geneve"):
            gr = g("ovn", m, "tcp1", tun)
            if gr is None:
                continue
            s = gr.summary()
            cs, cr = gr.summary("cpu_snd"), gr.summary("cpu_rcv")
            ps = gr.derived(lambda r: cpu_per_gbit(r, "cpu_snd"))
            pr = gr.derived(lambda r: cpu_per_gbit(r, "cpu_rcv"))
            rv = ratio(gr, base) if tun != "geneve" else None
            rc = ratio(gr, base, lambda r: cpu_per_gbit(r, "cpu_rcv")) \
                if tun != "geneve" else None
            pk = gr.derived(pkt)
            res["%s/%s" % (m, tun)] = {
                "value": s, "cpu_snd": cs, "cpu_rcv": cr,
                "cpu_snd_per_gbit": ps, "cpu_rcv_per_gbit": pr,
                "vs_geneve": rv, "rcv_per_gbit_vs_geneve": rc,
                "rcv_nic_bytes_per_packet": pk, "reps": s["n"]}
            p("%-7s %-26s %-6s %-6s %-8s %-8s %-19s %-19s %s" % (
                tun, "%s Gbit/s %s" % (fmt(s["median"], "gbps"),
                                       fmt_spread(s["min"], s["max"], "gbps")),
                fmt(cs["median"]), fmt(cr["median"]), fmt(ps["median"]),
                fmt(pr["median"]), fmt_ratio(rv), fmt_ratio(rc),
                fmt(pk["median"])))
        st = g("ovn", m, "tcp1", "stt")
        whole = sum(r.get("rx_frames_whole", 0) for r in st.recs)
        reasm = sum(r.get("rx_frames_reassembled", 0) for r in st.recs)
        p("STT frames received by ch2 in these runs: %d whole, %d "
          "reassembled" % (whole, reasm))
    for i in oi:
        w = i.get("what")
        if w == "converge":
            res["converge"] = i
            p("Convergence (not judged): %s ports on %s chassis bound %.1f s "
              "after they were added; every chassis caught up (ovn-nbctl "
              "--wait=hv sync) %.2f s after the last one bound" % (
                  i.get("ports"), i.get("chassis"), i["bind_ms"] / 1000,
                  i["converge_ms"] / 1000))
    sw = [i for i in oi if i.get("what") == "encap_switch"]
    if sw:
        res["encap_switch_ms"] = [i["ms"] for i in sw]
        p("Encapsulation switched live on every chassis (tunnels replaced, "
          "traffic back): %s s (not judged)" % ", ".join(
              "%s %.1f" % (i["tunnel"], i["ms"] / 1000) for i in sw))
    ra = [i for i in oi if i.get("what") == "reasm"]
    if ra:
        res["reasm"] = ra
        p("Reassembly under fan-in (ch1 and ch3 send to ch2 at once, "
          "rx-gro-hw off, ns_reasm_* sampled every 0.2 s; not judged):")
        for i in ra:
            p("  %s: %d STT packets in, %d frames whole, %d reassembled "
              "from %d segments; peak %d B of %d B, %d frames pending; "
              "drops: %d memory, %d timeout" % (
                  i["chassis"], i["rx_segments"], i["frames_whole"],
                  i["frames_reassembled"], i["reasm_segments"],
                  i["mem_peak_bytes"], i["mem_limit"], i["pending_peak"],
                  i["drop_reasm_mem"], i["drop_reasm_timeout"]))
    for i in oi:
        w = i.get("what")
        if w == "reasm_busiest":
            res["reasm_busiest"] = i
            p("Busiest chassis: %s, reassembly table peak %d B (%d frames "
              "pending)" % (i["chassis"], i["mem_peak_bytes"],
                            i["pending_peak"]))
        elif w == "vswitchd_restart":
            res[w] = i
            p("%s's ovs-vswitchd restarted: its traffic back %.1f s after "
              "the start (not judged)" % (i["chassis"],
                                          i["restored_ms"] / 1000))
        elif w == "guest_reboot":
            res[w] = i
            p("%s's guest killed and booted again: agent back %.1f s, "
              "traffic back %.1f s after the boot request (not judged)" % (
                  i["chassis"], i["boot_ms"] / 1000, i["restored_ms"] / 1000))
    return res


def chart(d, G, devs):
    """chart.png: per section, each test's median relative to no tunnel."""
    panels = []
    for scen, off, title in SECTIONS:
        tests = [t for t in TESTS if any((scen, off, t, tun, 0) in G
                                         for tun in TUNNELS)]
        if not tests:
            continue
        tuns = [t for t in TUNNELS if any((scen, off, x, t, 0) in G
                                          for x in tests)]
        base_tun = "none" if "none" in tuns else tuns[0]
        rows = []
        for t in tests:
            base = G.get((scen, off, t, base_tun, 0))
            bm = base.value() if base else None
            cells = []
            for tun in tuns:
                gr = G.get((scen, off, t, tun, 0))
                if gr is None or not bm or gr.value() is None:
                    cells += ["NaN"] * 3
                    continue
                s = gr.summary()
                cells += ["%.4f" % (s["median"] / bm), "%.4f" % (s["min"] / bm),
                          "%.4f" % (s["max"] / bm)]
            rows.append("%s %s" % (TEST_NAME.get(t, t).replace(" ", "_"),
                                   " ".join(cells)))
        panels.append((scen, off, title, tuns, base_tun, rows))
    if not panels:
        return
    dat = os.path.join(d, "chart.dat")
    with open(dat, "w") as f:
        for i, pnl in enumerate(panels):
            f.write("# %s %s\n" % (pnl[0], pnl[1]))
            f.write("\n".join(pnl[5]) + "\n\n\n")
    colors = {"none": "#777777", "vxlan": "#d95f02", "geneve": "#7570b3",
              "stt": "#1b9e77"}
    gp = ["set terminal pngcairo size 1100,%d font 'sans,9'" % (
        330 * len(panels)),
          "set output '%s'" % os.path.join(d, "chart.png"),
          "set multiplot layout %d,1" % len(panels),
          "set style data histogram",
          "set style histogram errorbars gap 2 lw 1",
          "set style fill solid 0.85 border -1",
          "set grid ytics", "set yrange [0:*]", "set key top right",
          "set xtics noenhanced", "set title noenhanced"]
    for i, (scen, off, title, tuns, base_tun, rows) in enumerate(panels):
        gp.append("set title \"%s\"" % title.replace('"', "'"))
        gp.append("set ylabel 'relative to %s (median, min-max)'" % (
            "no tunnel" if base_tun == "none" else base_tun))
        plots = []
        for j, tun in enumerate(tuns):
            c = 2 + 3 * j
            src = "'%s' index %d" % (dat, i) if j == 0 else "''  index %d" % i
            plots.append("%s using %d:%d:%d%s title '%s' lc rgb '%s'" % (
                src, c, c + 1, c + 2,
                ":xtic(stringcolumn(1))" if j == 0 else "", tun,
                colors.get(tun, "black")))
        gp.append("plot " + ", ".join(plots))
    gp.append("unset multiplot")
    with open(os.path.join(d, "chart.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")
    try:
        subprocess.run(["gnuplot", os.path.join(d, "chart.gp")], check=True,
                       stderr=subprocess.PIPE, text=True)
        print("chart: %s" % os.path.join(d, "chart.png"))
    except (OSError, subprocess.CalledProcessError) as e:
        err = getattr(e, "stderr", "") or str(e)
        print("chart: gnuplot failed (%s); data in %s" % (
            err.strip().splitlines()[-1:] or err, dat))


if __name__ == "__main__":
    main()
