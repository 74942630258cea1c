#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The report of a make bench run: DIR/raw.jsonl (the guests' records) and
DIR/meta.json in; DIR/results.json (records, medians, spreads, ratios,
goals, profile breakdowns), DIR/report.txt (printed), DIR/report.rst (the
same in reStructuredText, for Documentation/networking/stt-benchmarks.rst)
and DIR/chart.png out.

    report.py DIR[,DIR...]   (also scripts/demo/ovn-hosts.sh's results)

Every figure is the median of the repetitions with the spread [min-max].
Ratios divide medians; their spread comes from the per-repetition ratios
(repetitions are interleaved, so repetition i of every tunnel ran at
about the same time). "CPU/u" is CPU% per unit of the test's figure
(Gbit/s, kpkt/s or ktrans/s): lower is better, and its ratios are cost
ratios.
"""

import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import defs  # noqa: E402



# ---- numbers ---------------------------------------------------------------

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


def fmt_ratio(x, with_spread=True):
    if x is None:
        return "-"
    s = ("%.2fx" if x["ratio"] >= 0.1 else "%.3fx") % x["ratio"]
    if with_spread and x.get("min") is not None and x["min"] != x["max"]:
        s += " [%.2f-%.2f]" % (x["min"], x["max"])
    return s


def per_unit(r, key):
    """CPU% per unit of the figure (Gbit/s, kpkt/s, ktrans/s)"""
    c, v = r.get(key), r.get("value")
    unit = defs.UNITS.get(r.get("metric"))
    if c is None or not v or unit is None:
        return None
    return c / (v / unit[1])


def rcv_nic_bpp(r):
    """OVN: mean size of what the receiver's NIC received"""
    p, b = r.get("rcv_nic_rx_packets"), r.get("rcv_nic_rx_bytes")
    return b / p if p and b is not None else None


def bytes_per_packet(r):
    p, b = r.get("dev_tx_packets"), r.get("dev_tx_bytes")
    return b / p if p and b is not None else None


FIGURES = {   # figure name: (record -> number), higher is better?
    "value": (lambda r: r.get("value"), True),
    "bpp": (bytes_per_packet, True),
    "cpu_per": (lambda r: per_unit(r, "cpu_total"), False),
    "cpu_snd_per": (lambda r: per_unit(r, "cpu_snd"), False),
    "cpu_rcv_per": (lambda r: per_unit(r, "cpu_rcv"), False),
    "cpu_snd": (lambda r: r.get("cpu_snd"), False),
    "cpu_rcv": (lambda r: r.get("cpu_rcv"), False),
    "rcv_nic_bpp": (rcv_nic_bpp, True),
}


class Group:
    """All repetitions of one (target, scenario, mode, test, tunnel,
    devices)."""

    def __init__(self, recs):
        self.recs = sorted(recs, key=lambda r: r.get("rep", 0))
        self.metric = self.recs[0].get("metric")
        self.tools = sorted({r.get("tool") for r in recs if r.get("tool")})
        self.by_rep = {r.get("rep"): r for r in self.recs}
        self.errors = [r["error"] for r in recs if r.get("error")]

    def fig(self, figure="value"):
        get = FIGURES[figure][0]
        xs = [get(r) for r in self.recs]
        lo, hi = spread(xs)
        return {"median": med(xs), "min": lo, "max": hi,
                "n": len([x for x in xs if x is not None])}


def ratio(g, base, figure="value"):
    """median ratio of g over base, and the spread of per-rep ratios"""
    if g is None or base is None:
        return None
    get = FIGURES[figure][0]
    a, b = g.fig(figure)["median"], base.fig(figure)["median"]
    if a is None or not b:
        return None
    per = []
    for rep, r in g.by_rep.items():
        rb = base.by_rep.get(rep)
        if rb is not None and get(r) is not None and get(rb):
            per.append(get(r) / get(rb))
    lo, hi = spread(per)
    return {"ratio": a / b, "min": lo, "max": hi}


# ---- tables ----------------------------------------------------------------

class Table:
    def __init__(self, head, title=None, code=(), group=True):
        self.head = head
        self.rows = []
        self.title = title
        self.code = code        # columns set as ``literals`` in RST
        self.group = group      # the first column once per group

    def add(self, *cells):
        self.rows.append([str(c) for c in cells])

    def widths(self, rows):
        return [max(len(r[i]) for r in [self.head] + rows)
                for i in range(len(self.head))]

    def text(self):
        rows = []
        last = None
        for r in self.rows:        # the first column once per group
            rows.append([""] + r[1:] if self.group and r[0] == last
                        else r)
            last = r[0]
        w = self.widths(rows)

        def line(r):
            return "  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip()
        out = [line(self.head), "-" * len(line(["-" * x for x in w]))]
        out += [line(r) for r in rows]
        return "\n".join(out)

    def rst(self):
        rows = [["``%s``" % c if i in self.code and c else c or ".."
                 for i, c in enumerate(r)] for r in self.rows]
        w = self.widths(rows)
        border = "  ".join("=" * x for x in w)

        def line(r):
            return "  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip()
        return "\n".join([border, line(self.head), border] +
                         [line(r) for r in rows] + [border])


class Out:
    """The report, as text and as reStructuredText, side by side."""

    def __init__(self):
        self.txt = []
        self.rst = []

    def section(self, title, level=0):
        self.txt += ["", "== " + title if level == 0 else "-- " + title]
        ch = "=-~"[level]
        self.rst += ["", title, ch * len(title), ""]

    def para(self, text, rst=None):
        self.txt.append(text)
        self.rst += [rst if rst is not None else text, ""]

    def table(self, t):
        if t.title:
            self.txt.append(t.title)
            self.rst += [t.title + ":", ""]
        self.txt.append(t.text())
        self.rst += [t.rst(), ""]

    def bullets(self, items):
        for i in items:
            self.txt.append("  * " + i)
            self.rst.append("* " + i)
        self.rst.append("")


# ---- loading ---------------------------------------------------------------

def load_one(d):
    recs = []
    with open(os.path.join(d, "raw.jsonl")) as f:
        for line in f:
            line = line.strip()
            # "BENCH" lines: bash-written (scripts/demo/ovn-hosts-guest.sh)
            if line.startswith("BENCH-INFO "):
                recs.append(dict(json.loads(line[11:]), kind="info"))
            elif line.startswith("BENCH "):
                recs.append(json.loads(line[6:]))
            elif line.startswith("{"):
                recs.append(json.loads(line))
    for r in recs:
        r.setdefault("kind", "measure")
        r.setdefault("target", defs.HOST_TARGET)
    meta = {}
    try:
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        pass
    meta["dir"] = os.path.basename(os.path.abspath(d))
    if isinstance(meta.get("scenarios"), str):     # scripts/demo/ovn-hosts.sh
        meta["scenarios"] = defs.split(meta["scenarios"])
    for r in recs:
        if meta.get("kernel"):              # ovn-hosts.sh's, from the boot
            r.setdefault("kernel", meta["kernel"])
    if meta.get("target") and not meta.get("targets"):
        meta["targets"] = [meta["target"]]
        for r in recs:
            if r["target"] == defs.HOST_TARGET:
                r["target"] = meta["target"]
    return recs, meta


def load(dirs):
    """DIRS: one results directory or a list of them (runs of different
    targets, reported together: the first one's settings head the
    report, every run is listed)"""
    if isinstance(dirs, str):
        dirs = [dirs]
    recs, metas = [], []
    for d in dirs:
        r, m = load_one(d)
        recs += r
        metas.append(m)
    meta = dict(metas[0])
    if len(metas) > 1:
        meta["runs"] = [{k: m.get(k) for k in (
            "dir", "date", "commit", "targets", "scenarios", "duration",
            "reps", "loadavg_start", "loadavg_end", "elapsed_s")}
            for m in metas]
        meta["scenarios"] = sorted({s for m in metas
                                    for s in m.get("scenarios", [])},
                                   key=lambda s: defs.SCENARIO_ORDER.index(s)
                                   if s in defs.SCENARIO_ORDER else 99)
    return recs, meta


class Results:
    def __init__(self, recs, meta):
        self.meta = meta
        self.recs = recs
        self.infos = [r for r in recs if r["kind"] == "info"]
        groups = {}
        for r in recs:
            if r["kind"] != "measure":
                continue
            k = (r["target"], r.get("scenario"), r.get("offload"),
                 r.get("test"), r.get("tunnel"), r.get("devices", 0))
            groups.setdefault(k, []).append(r)
        self.G = {k: Group(v) for k, v in groups.items()}
        self.targets = sorted({k[0] for k in self.G} |
                              {r["target"] for r in recs},
                              key=lambda t: defs.TARGETS.index(t)
                              if t in defs.TARGETS else 99)
        self.kernels = {}
        for r in recs:
            if r.get("kernel"):
                self.kernels.setdefault(r["target"], r["kernel"])

    def g(self, tgt, scen, mode, test, tun, dev=0):
        return self.G.get((tgt, scen, mode, test, tun, dev))

    def info(self, tgt, **match):
        return [i for i in self.infos if i["target"] == tgt and all(
            i.get(k) == v for k, v in match.items())]

    def sections(self, tgt):
        """(scenario, mode) pairs of the generic table, measured, in defs
        order (any scenario whose records are tunnels against each other;
        scale has a table of its own)"""
        have = {(k[1], k[2]) for k in self.G if k[0] == tgt and
                k[1] not in ("scale", "ovn")}

        def order(sm):
            s, m = sm
            return (defs.SCENARIO_ORDER.index(s) if s in defs.SCENARIO_ORDER
                    else 99, s, defs.MODE_ORDER.index(m)
                    if m in defs.MODE_ORDER else 99, m or "")
        return sorted(have, key=order)


def title_of(scen, mode):
    if scen == "onevm":
        return "One VM, two netns, veth: " + defs.MODES[mode].title
    if scen in defs.SCENARIOS:
        return defs.SCENARIOS[scen].title
    return "%s (%s)" % (scen, mode)


def tunnels_in(res, tgt, scen, mode, test):
    return [t for t in defs.TUNNEL_ORDER if res.g(tgt, scen, mode, test, t)]


def tests_in(res, tgt, scen, mode):
    ts = {k[3] for k in res.G if k[:3] == (tgt, scen, mode)}
    return sorted(ts, key=lambda t: (defs.test_order(t), t))


# ---- sections --------------------------------------------------------------

def main_tables(out, res, tgt, summary):
    for scen, mode in res.sections(tgt):
        pair = scen == "pair"
        out.section(title_of(scen, mode), 1)
        head = ["test", "tunnel", "result [min-max]", "vs none", "vs VXLAN"]
        if pair:
            head += ["snd CPU/u", "vs none", "vs VXLAN", "rcv CPU/u",
                     "vs none", "vs VXLAN"]
        else:
            head += ["CPU/u", "vs none", "vs VXLAN"]
        head += ["B/pkt", "tool"]
        t = Table(head)
        for test in tests_in(res, tgt, scen, mode):
            tt = defs.test(test)
            for tun in tunnels_in(res, tgt, scen, mode, test):
                g = res.g(tgt, scen, mode, test, tun)
                base = {b: res.g(tgt, scen, mode, test, b)
                        for b in ("none", "vxlan")}
                v = g.fig()
                cells = [tt.title, tun, "%s %s %s" % (
                    fmt(v["median"], g.metric),
                    defs.UNITS[g.metric][0], fmt_spread(v["min"], v["max"],
                                                        g.metric))]
                entry = {"target": tgt, "scenario": scen, "offload": mode,
                         "test": test, "tunnel": tun, "metric": g.metric,
                         "tools": g.tools, "value": v}
                for b in ("none", "vxlan"):
                    r = ratio(g, base[b]) if tun != b else None
                    entry["vs_" + b] = r
                    cells.append(fmt_ratio(r))
                for fig in (("cpu_snd_per", "cpu_rcv_per") if pair else
                            ("cpu_per",)):
                    f = g.fig(fig)
                    entry[fig] = f
                    cells.append(fmt(f["median"]))
                    for b in ("none", "vxlan"):
                        r = ratio(g, base[b], fig) if tun != b else None
                        entry["%s_vs_%s" % (fig, b)] = r
                        cells.append(fmt_ratio(r, False))
                entry["bytes_per_packet"] = g.fig("bpp")
                cells.append(fmt(entry["bytes_per_packet"]["median"]))
                cells.append(",".join(g.tools) + (" (%d failed)" % len(
                    g.errors) if g.errors else ""))
                t.add(*cells)
                summary.append(entry)
        out.table(t)
        if pair:
            out.para("CPU/u: CPU% of the sending guest (snd) and of the "
                     "receiving guest (rcv), each its own vCPU, per unit "
                     "(Gbit/s, kpkt/s, ktrans/s); lower is better. B/pkt: "
                     "mean size of the packets the sender handed to the "
                     "tunnel device (no tunnel: the NIC), GSO packets "
                     "counted once.")
        else:
            out.para("CPU/u: CPU%% of the whole guest (%s vCPU: sender "
                     "and receiver together) per unit (Gbit/s, kpkt/s, "
                     "ktrans/s); lower is better. The profile below splits "
                     "it into transmit and receive path. B/pkt: mean size "
                     "of the packets the sending namespace handed to the "
                     "tunnel device (no tunnel: the veth), GSO packets "
                     "counted once." %
                     res.meta.get("onevm_smp", "?"))


def streams_table(out, res, tgt):
    t = Table(["scenario", "tunnel", "1 stream", "5 streams", "50 streams"])
    for scen, mode in res.sections(tgt):
        for tun in defs.TUNNEL_ORDER:
            base = res.g(tgt, scen, mode, "tcp1", tun)
            cells = []
            for test, n in (("tcp1", 1), ("tcp5", 5), ("tcp50", 50)):
                g = res.g(tgt, scen, mode, test, tun)
                if g is None:
                    cells.append(None)
                    continue
                per = g.fig()["median"]
                rel = ratio(g, base) if base else None
                c = fmt(per / n if per is not None else None, "gbps")
                if n > 1 and rel:
                    c += " (%.2fx)" % (rel["ratio"] / n)
                cells.append(c)
            if sum(1 for c in cells if c) > 1:
                t.add("%s/%s" % (scen, mode), tun,
                      *[c or "-" for c in cells])
    if t.rows:
        out.section("Throughput per stream, Gbit/s (per-stream / 1-stream)",
                    1)
        out.table(t)


def scale_section(out, res, tgt):
    devs = sorted({k[5] for k in res.G if k[0] == tgt and k[1] == "scale"})
    if not devs:
        return []
    out.section(defs.SCENARIOS["scale"].title, 1)
    t = Table(["devices", "create ms/device", "delete ms/device",
               "TCP 1 stream Gbit/s", "vs alone", "TCP_RR trans/s",
               "vs alone"])
    m = defs.SCALE_MODE
    ents = []
    for n in devs:
        cells = [str(n)]
        ent = {"target": tgt, "devices": n}
        for what in ("create", "delete"):
            g = res.g(tgt, "scale", m, what, "stt", n)
            s = g.fig() if g else None
            ent[what + "_ms"] = s
            cells.append("%s %s" % (fmt(s["median"]), fmt_spread(
                s["min"], s["max"])) if s else "-")
        for test in ("tcp1", "tcp_rr"):
            g = res.g(tgt, "scale", m, test, "stt", n)
            base = res.g(tgt, "scale", m, test, "stt", devs[0])
            if g is None:
                cells += ["-", "-"]
                continue
            s = g.fig()
            r = ratio(g, base) if devs[0] == 1 else None
            ent[test] = {"value": s, "vs_alone": r}
            cells += ["%s %s" % (fmt(s["median"], g.metric),
                                 fmt_spread(s["min"], s["max"], g.metric)),
                      fmt_ratio(r, False)]
        t.add(*cells)
        ents.append(ent)
    out.table(t)
    return ents


def bigtcp_section(out, res, tgt):
    """BIG TCP against plain TSO, per tunnel; and what each tunnel device
    said to a gso_ipv4_max_size above 64 KB."""
    skipped = [i for i in res.info(tgt, offload="bigtcp") if i.get("skipped")]
    infos = [i for i in res.info(tgt, offload="bigtcp")
             if not i.get("skipped")]
    if not infos and not skipped:
        return None
    out.section("BIG TCP (IPv4, gso/gro_ipv4_max_size 185000 on the wire)", 1)
    if not infos:
        out.para("Not measured on %s: %s." % (res.kernels.get(tgt, tgt),
                                              skipped[0]["skipped"]))
        return {"skipped": skipped[0]["skipped"]}
    i = infos[0]
    t = Table(["tunnel", "device's gso_ipv4_max_size", "TSO Gbit/s",
               "BIG TCP Gbit/s", "BIG/TSO", "vs none (TSO)",
               "vs none (BIG TCP)", "B/pkt TSO", "B/pkt BIG TCP"])
    ent = {}
    for tun in defs.TUNNEL_ORDER:
        a = res.g(tgt, "onevm", "tso", "tcp1", tun)
        b = res.g(tgt, "onevm", "bigtcp", "tcp1", tun)
        if b is None:
            continue
        dev = i.get("%s_gso_ipv4_max_size" % tun)
        said = i.get("%s_big_tcp" % tun)
        cell = "%s%s" % (dev if dev is not None else "?",
                         "" if not said or said == "accepted" else
                         " (refused 185000: %s)" % said.split(": ", 1)[-1])
        r = ratio(b, a)
        na = ratio(a, res.g(tgt, "onevm", "tso", "tcp1", "none")) \
            if tun != "none" else None
        nb = ratio(b, res.g(tgt, "onevm", "bigtcp", "tcp1", "none")) \
            if tun != "none" else None
        bpa = a.fig("bpp")["median"] if a else None
        bpb = b.fig("bpp")["median"]
        t.add(tun, cell, fmt(a.fig()["median"] if a else None, "gbps"),
              fmt(b.fig()["median"], "gbps"), fmt_ratio(r, False),
              fmt_ratio(na, False), fmt_ratio(nb, False), fmt(bpa),
              fmt(bpb))
        ent[tun] = {"gso_ipv4_max_size": dev, "refused": said,
                    "big_over_tso": r, "vs_none_tso": na,
                    "vs_none_big": nb, "bpp_tso": bpa, "bpp_big": bpb}
    out.table(t)
    if "stt" in ent and "none" in ent:
        s, n = ent["stt"], ent["none"]
        if n["bpp_big"] is not None:
            out.para(
                "No tunnel's TCP handed the wire packets of %s bytes on "
                "average with BIG TCP (%s without)%s." % (
                    fmt(n["bpp_big"]), fmt(n["bpp_tso"]),
                    ": it never built packets above 64 KB, so BIG TCP had "
                    "nothing to enlarge (TCP sizes its GSO packets to about "
                    "a millisecond of its sending rate, and this emulated "
                    "rate is low)" if n["bpp_big"] < 65536 else
                    ": above 64 KB, which BIG TCP allows"))
        out.para(
            "What it means, measured: BIG TCP changes no tunnel by %s (its "
            "TCP may now hand the wire GSO packets above 64 KB); STT by %s: "
            "stt0 keeps gso_ipv4_max_size %s%s, because one inner packet "
            "must fit one STT frame (at most 64 KB, the outer IPv4 "
            "packet's length limit). STT against no tunnel: %s with plain "
            "TSO, %s with BIG TCP." % (
                fmt_ratio(n["big_over_tso"], False),
                fmt_ratio(s["big_over_tso"], False),
                s["gso_ipv4_max_size"],
                "" if not s["refused"] or s["refused"] == "accepted" else
                " (it refuses 185000: %s)" % s["refused"].split(": ", 1)[-1],
                fmt_ratio(s["vs_none_tso"], False),
                fmt_ratio(s["vs_none_big"], False)))
    return ent


def esp_section(out, res, tgt):
    """the one-VM ESP modes against the same wire without ESP, per tunnel;
    the ratios of the tunnels to each other are in the modes' own tables"""
    modes = [m for m in defs.MODE_ORDER if defs.MODES[m].esp and
             any(k[0] == tgt and k[1:3] == ("onevm", m) for k in res.G)]
    if not modes:
        return None
    base = defs.ESP_BASE_MODE
    t = Table(["mode", "test", "tunnel", "over ESP", "without ESP (%s)" %
               base, "ESP/plain", "CPU/u ESP/plain", "ESP packets"])
    ent = []
    for m in modes:
        for test in tests_in(res, tgt, "onevm", m):
            for tun in tunnels_in(res, tgt, "onevm", m, test):
                g = res.g(tgt, "onevm", m, test, tun)
                p = res.g(tgt, "onevm", base, test, tun)
                pk = med([r.get("esp_packets") for r in g.recs])
                void = any(r.get("esp_packets") == 0 for r in g.recs)
                r = ratio(g, p)
                rc = ratio(g, p, "cpu_per")
                t.add(m, defs.test(test).title, tun,
                      "%s %s" % (fmt(g.fig()["median"], g.metric),
                                 defs.UNITS[g.metric][0]),
                      fmt(p.fig()["median"] if p else None, g.metric),
                      fmt_ratio(r, False), fmt_ratio(rc, False),
                      "%.0f" % pk if pk else "none: NOT OVER ESP" if void
                      else "-")
                ent.append({"offload": m, "test": test, "tunnel": tun,
                            "esp": g.fig(), "plain": p.fig() if p else None,
                            "esp_over_plain": r, "cpu_per_esp_over_plain": rc,
                            "esp_packets": pk})
    algs = {i.get("offload"): i.get("esp") for i in res.info(tgt)
            if i.get("offload") in modes and i.get("esp")}
    aes = [i.get("cpu_aes") for i in res.info(tgt) if "cpu_aes" in i]
    out.section("ESP against no ESP", 2)
    out.table(t)
    out.para("Transport-mode ESP between the two hosts for everything "
             "between them (%s), required on input: every tunnel and no "
             "tunnel cross the same SAs; the UDP tunnels' inner MTU is %s "
             "there so that nothing fragments, STT and no tunnel take it "
             "from the route. ESP packets: the median count through the "
             "sender's SA per measurement. AES instructions in the guest's "
             "CPU: %s%s. Figures reported, not judged (no goal)." % (
                 "; ".join("%s: %s" % kv for kv in sorted(algs.items())) or
                 "algorithms not recorded",
                 "/".join(sorted({str(x.esp_mtu) for x in
                                  defs.TUNNELS.values() if x.esp_mtu})),
                 "yes" if aes and aes[0] else "no" if aes else
                 "not recorded",
                 " (QEMU -cpu %s)" % res.meta["onevm_cpu"]
                 if res.meta.get("onevm_cpu") else ""))
    return ent


def ovn_section(out, res, tgt):
    """The OVN-across-guests figures (scripts/demo/ovn-hosts-guest.sh): STT
    against Geneve per NIC mode, then the figures of its info records
    (convergence, live encapsulation switch, reassembly, restarts)."""
    modes = [m for m in defs.OVN_MODES if res.g(tgt, "ovn", m, "tcp1",
                                                 "stt")]
    oi = res.info(tgt, scenario="ovn")
    if not modes and not oi:
        return None
    ent = {}
    out.section(defs.SCENARIOS["ovn"].title, 1)
    for m in modes:
        t = Table(["tunnel", "result [min-max]", "snd CPU", "rcv CPU",
                   "snd CPU/Gbit", "rcv CPU/Gbit", "vs Geneve",
                   "rcv CPU/Gbit vs Geneve", "rcv NIC B/pkt"],
                  "NIC mode %s: %s" % (m, defs.OVN_MODES[m]))
        base = res.g(tgt, "ovn", m, "tcp1", "geneve")
        for tun in defs.OVN_TUNNELS:
            g = res.g(tgt, "ovn", m, "tcp1", tun)
            if g is None:
                continue
            v = g.fig()
            f = {k: g.fig(k) for k in ("cpu_snd", "cpu_rcv", "cpu_snd_per",
                                       "cpu_rcv_per", "rcv_nic_bpp")}
            rv = ratio(g, base) if tun != "geneve" else None
            rc = ratio(g, base, "cpu_rcv_per") if tun != "geneve" else None
            ent["%s/%s" % (m, tun)] = dict(
                {"value": v, "vs_geneve": rv, "cpu_rcv_per_vs_geneve": rc,
                 "reps": v["n"]}, **f)
            t.add(tun, "%s Gbit/s %s" % (fmt(v["median"], "gbps"),
                                         fmt_spread(v["min"], v["max"],
                                                    "gbps")),
                  fmt(f["cpu_snd"]["median"]), fmt(f["cpu_rcv"]["median"]),
                  fmt(f["cpu_snd_per"]["median"]),
                  fmt(f["cpu_rcv_per"]["median"]), fmt_ratio(rv),
                  fmt_ratio(rc), fmt(f["rcv_nic_bpp"]["median"]))
        out.table(t)
        st = res.g(tgt, "ovn", m, "tcp1", "stt")
        out.para("STT frames received by ch2 in these runs: %d whole, %d "
                 "reassembled" % (
                     sum(r.get("rx_frames_whole", 0) for r in st.recs),
                     sum(r.get("rx_frames_reassembled", 0)
                         for r in st.recs)))
    for i in oi:
        if i.get("what") == "converge":
            ent["converge"] = i
            out.para("Convergence (not judged): %s ports on %s chassis "
                     "bound %.1f s after they were added; every chassis "
                     "caught up (ovn-nbctl --wait=hv sync) %.2f s after the "
                     "last one bound" % (i.get("ports"), i.get("chassis"),
                                         i["bind_ms"] / 1000,
                                         i["converge_ms"] / 1000))
    sw = [i for i in oi if i.get("what") == "encap_switch"]
    if sw:
        ent["encap_switch_ms"] = [i["ms"] for i in sw]
        out.para("Encapsulation switched live on every chassis (tunnels "
                 "replaced, traffic back): %s s (not judged)" % ", ".join(
                     "%s %.1f" % (i["tunnel"], i["ms"] / 1000) for i in sw))
    ra = [i for i in oi if i.get("what") == "reasm"]
    if ra:
        ent["reasm"] = ra
        out.para("Reassembly under fan-in (ch1 and ch3 send to ch2 at once, "
                 "rx-gro-hw off, ns_reasm_* sampled every 0.2 s; not "
                 "judged):")
        out.bullets(["%s: %d STT packets in, %d frames whole, %d "
                     "reassembled from %d segments; peak %d B of %d B, %d "
                     "frames pending; drops: %d memory, %d timeout" % (
                         i["chassis"], i["rx_segments"], i["frames_whole"],
                         i["frames_reassembled"], i["reasm_segments"],
                         i["mem_peak_bytes"], i["mem_limit"],
                         i["pending_peak"], i["drop_reasm_mem"],
                         i["drop_reasm_timeout"]) for i in ra])
    for i in oi:
        w = i.get("what")
        if w == "reasm_busiest":
            ent[w] = i
            out.para("Busiest chassis: %s, reassembly table peak %d B (%d "
                     "frames pending)" % (i["chassis"], i["mem_peak_bytes"],
                                          i["pending_peak"]))
        elif w == "vswitchd_restart":
            ent[w] = i
            out.para("%s's ovs-vswitchd restarted: its traffic back %.1f s "
                     "after the start (not judged)" % (
                         i["chassis"], i["restored_ms"] / 1000))
        elif w == "guest_reboot":
            ent[w] = i
            out.para("%s's guest killed and booted again: agent back %.1f "
                     "s, traffic back %.1f s after the boot request (not "
                     "judged)" % (i["chassis"], i["boot_ms"] / 1000,
                                  i["restored_ms"] / 1000))
    return ent


def netns_section(out, res, tgt):
    recs = [r for r in res.recs if r["kind"] == "netns" and
            r["target"] == tgt]
    if not recs:
        skipped = res.info(tgt, scenario="netns")
        return {"skipped": skipped[0].get("skipped")} if skipped else None
    out.section(defs.SCENARIOS["netns"].title, 1)
    n = recs[0]["count"]
    t = Table(["round", "stt.ko", "create s", "delete s", "total s"])
    for r in sorted(recs, key=lambda r: (r["rep"], not r["loaded"])):
        t.add(str(r["rep"]), "loaded" if r["loaded"] else "not loaded",
              "%.3f" % r["create_s"], "%.3f" % r["delete_s"],
              "%.3f" % r["value"] + ("" if r.get("teardown_awaited", True)
                                     else " (teardown not awaited)"))
    out.table(t)
    ent = {"count": n}
    t2 = Table(["figure", "not loaded", "loaded", "loaded/not",
                "difference per namespace"])
    for key, what in (("create_s", "create"), ("delete_s", "delete"),
                      ("value", "create + delete")):
        a = med([r[key] for r in recs if not r["loaded"]])
        b = med([r[key] for r in recs if r["loaded"]])
        per = []
        for rnd in {r["rep"] for r in recs}:
            x = [r[key] for r in recs if r["rep"] == rnd and r["loaded"]]
            y = [r[key] for r in recs if r["rep"] == rnd and not r["loaded"]]
            if x and y and y[0]:
                per.append(x[0] / y[0])
        lo, hi = spread(per)
        rr = {"ratio": b / a, "min": lo, "max": hi} if a and b else None
        ent[key] = {"unloaded": a, "loaded": b, "ratio": rr}
        t2.add(what, "%.3f s" % a if a else "-", "%.3f s" % b if b else "-",
               fmt_ratio(rr), "%+.2f ms" % ((b - a) * 1e3 / n)
               if a and b else "-")
    out.table(t2)
    calls = sorted({k for r in recs for k in (r.get("calls") or {})})
    if calls:
        t3 = Table(["kernel function", "calls per namespace, not loaded",
                    "loaded"], code=(0,))
        ent["calls"] = {}
        for k in calls:
            a = med([r["calls"].get(k) for r in recs if not r["loaded"]
                     and r.get("calls")])
            b = med([r["calls"].get(k) for r in recs if r["loaded"]
                     and r.get("calls")])
            ent["calls"][k] = {"unloaded": a / n if a is not None else None,
                               "loaded": b / n if b is not None else None}
            t3.add(k, fmt(ent["calls"][k]["unloaded"]),
                   fmt(ent["calls"][k]["loaded"]))
        out.table(t3)
    out.para("%d namespaces per round (unshare(CLONE_NEWNET), one file "
             "descriptor kept for each; deleted by closing them and "
             "waiting until cleanup_net() has torn every one down: a kprobe "
             "on its key_remove_domain() counts them; the calls are kprobe "
             "hit counts over create and delete), "
             "alternating loaded and not loaded in ABBA order; median over "
             "rounds, [min-max] of the per-round ratios." % n)
    return ent


# ---- profiles --------------------------------------------------------------

# Where a function's time belongs, for the per-area table: the first
# pattern that matches its name (modules carry " [module]", user space
# "(program)" or "[program]"). A reading aid; the per-function table is
# the data.
AREAS = [
    ("STT (stt.ko)", r" \[stt\]|^stt_"),
    ("UDP tunnels (vxlan, geneve, udp_tunnel)",
     r" \[(vxlan|geneve|udp_tunnel|ip6_udp_tunnel)\]$"),
    ("other modules", r" \[[a-z0-9_]+\]$"),
    ("user space", r"(\)$|^\[)"),
    ("copy, checksum, clear", r"copy|memcpy|memmove|memset|csum|clear_page"),
    ("skb and memory alloc/free", r"kmem_cache|kmalloc|kfree|alloc_skb|"
     r"skb_release|slab|page_frag|alloc_pages|get_page_from_freelist|"
     r"free_unref|free_pages|free_pcp|rmqueue|skb_clone|pskb_expand|"
     r"build_skb|consume_skb|skb_free|memcg|refill_stock|lruvec|"
     r"skb_attempt_defer|napi_skb_cache|skb_head"),
    ("TCP", r"^_*tcp|inet_csk|sk_stream|sk_reset_timer|tcp_"),
    ("UDP", r"udp"),
    ("netfilter", r"^_*nf_|nft_|ipt_|conntrack"),
    ("locks, interrupts, RCU", r"spin|^_raw_|irq|softirq|local_bh|rcu|"
     r"lock"),
    ("IP, routing, ESP", r"^_*ip_|^_*ip6_|fib|^rt_|dst_|^_*inet|ipv4|"
     r"route|xfrm|^esp|^raw_"),
    ("device layer, GSO, GRO", r"dev_|netif|napi|gro|gso|skb_segment|"
     r"qdisc|sch_|validate_xmit|net_rx_action|process_backlog|"
     r"skb_network_protocol|^eth_|veth|skb_mac|skb_checksum|"
     r"__skb_|skb_"),
    ("scheduler, syscalls, timers", r"sched|finish_task_switch|switch_to|"
     r"pick_next|enqueue|dequeue|update_curr|syscall|entry_|hrtimer|timer|"
     r"ktime|sys_|fput|fget|sock_|security|apparmor|wake|futex|"
     r"select|poll|task|cpuacct|idle"),
    ("other kernel", r""),
]


def area_of(name, _cache={}):
    if name not in _cache:
        bare = name.replace(" (irqs off)", "")
        _cache[name] = next(a for a, rx in AREAS if re.search(rx, bare))
    return _cache[name]


def prof_unit(p):
    """guest seconds -> the profile's unit, and the unit's name"""
    shift = p.get("icount")
    if shift is not None:
        return 1e9 / 2 ** int(shift) / 1e3, "kinsn"  # k instructions
    return 1e6, "us"


def prof_costs(p):
    """The cost of the traffic in the profile's unit: in all (busy CPU of
    the plain run's window) and split by function, path and module (the
    profiled run's shares of its samples, idle and perf's own left out);
    per 64 KB of the sender's inner frames for streams, per inner packet
    the sender handed to the tunnel (or the wire) otherwise."""
    plain = p.get("plain") or {}
    busy = plain.get("rcv_busy_s") if p.get("side") == "receiver" else \
        plain.get("busy_s")
    work = p["samples"] - p["idle"] - p.get("perf_self", 0)
    if not busy or work <= 0 or not plain.get("tx_bytes") or \
            not plain.get("tx_packets"):
        return None
    scale, unit = prof_unit(p)
    per_64k = busy * scale * 65536 / plain["tx_bytes"]
    per_packet = busy * scale / plain["tx_packets"]
    stream = defs.test(p["test"]).kind == "stream"
    total = per_64k if stream else per_packet
    per = total / work
    return {"unit": unit, "per": "64 KB" if stream else "packet",
            "packets": plain["tx_packets"], "bytes": plain["tx_bytes"],
            "window": plain.get("window"), "busy_s": busy, "samples": work,
            "total": total, "per_64k": per_64k, "per_packet": per_packet,
            "funcs": {k: v["n"] * per for k, v in p["funcs"].items()},
            "paths": {k: v * per for k, v in p["sides"].items()},
            "dsos": {k: v * per for k, v in p["dsos"].items()}}


def profile_section(out, res, tgt, top=25):
    profs = [r for r in res.recs if r["kind"] == "profile" and
             r["target"] == tgt and r.get("plain")]
    if not profs:
        return []
    out.section(defs.SCENARIOS["profile"].title, 1)
    ents = []
    keys = []
    for p in profs:
        k = (p["scenario"], p["offload"], p["test"], p.get("side", "both"))
        if k not in keys:
            keys.append(k)
    for scen, mode, test, side in keys:
        ps = {p["tunnel"]: p for p in profs if (
            p["scenario"], p["offload"], p["test"],
            p.get("side", "both")) == (scen, mode, test, side)}
        costs = {t: prof_costs(p) for t, p in ps.items()}
        costs = {t: c for t, c in costs.items() if c}
        tuns = [t for t in defs.TUNNEL_ORDER if t in costs]
        if not tuns:
            continue
        unit = costs[tuns[0]]["unit"]
        norm = costs[tuns[0]]["per"]
        upn = "%s per %s" % (unit, norm)
        where = ("two guests, the %s guest" % side) if scen == "pair" else \
            "one VM (%s), both hosts" % mode
        out.section("%s, %s: %s" % (defs.test(test).title, where, upn), 2)
        p0 = ps[tuns[0]]
        out.para(
            "A steady %g s of the test per tunnel (after %g s of lead-in), "
            "measured once plain and once under the profile. Cost: the "
            "busy CPU of the plain run per %s the sending host handed to "
            "the tunnel device (no tunnel: to the wire), split as the "
            "profiled run's samples fell. %s" % (
                p0.get("window", 0), p0.get("lead", 0),
                "64 KB of inner frames" if norm == "64 KB" else
                "inner packet",
                "Unit: thousands of guest instructions (QEMU -icount: "
                "deterministic)." if unit == "kinsn" else
                "Unit: microseconds of guest CPU time."))
        t = Table(["figure"] + tuns)
        t.add("packets", *[str(costs[x]["packets"]) for x in tuns])
        t.add("bytes per packet", *["%.0f" % (costs[x]["bytes"] /
                                              costs[x]["packets"])
                                    for x in tuns])
        t.add("busy CPU s (plain)", *["%.3f" % costs[x]["busy_s"]
                                      for x in tuns])
        t.add("samples (profiled)", *[str(costs[x]["samples"])
                                      for x in tuns])
        t.add("%s per packet" % unit, *["%.1f" % costs[x]["per_packet"]
                                        for x in tuns])
        t.add("%s per 64 KB" % unit, *["%.1f" % costs[x]["per_64k"]
                                       for x in tuns])
        for path, name in (("tx", "transmit path"), ("rx", "receive path"),
                           ("other", "other")):
            t.add("%s per %s" % (name, norm),
                  *["%.1f" % costs[x]["paths"].get(path, 0) for x in tuns])
        out.table(t)
        base = "none" if "none" in tuns else None
        others = [x for x in tuns if x != base]
        if base and others:
            names = set()
            for x in tuns:
                names |= set(costs[x]["funcs"])
            names.discard("(other)")

            def f(x, n):
                return costs[x]["funcs"].get(n, 0.0)
            key = "stt" if "stt" in others else others[0]
            ranked = sorted(names, key=lambda n: -abs(f(key, n) - f(base, n)))
            head = ["function"] + tuns + ["%s-%s" % (x, base)
                                          for x in others]
            areas = {x: {} for x in tuns}
            for x in tuns:
                for n, v in costs[x]["funcs"].items():
                    a = "other kernel" if n == "(other)" else area_of(n)
                    areas[x][a] = areas[x].get(a, 0.0) + v
            at = Table(["area"] + head[1:], "Per area (self time of the "
                       "functions of each), %s, ranked by %s's "
                       "difference" % (upn, key))
            for a in sorted({a for x in tuns for a in areas[x]},
                            key=lambda a: -abs(areas[key].get(a, 0) -
                                               areas[base].get(a, 0))):
                at.add(a, *["%.2f" % areas[x].get(a, 0) for x in tuns] +
                       ["%+.2f" % (areas[x].get(a, 0) -
                                   areas[base].get(a, 0)) for x in others])
            out.table(at)
            for x in tuns:
                costs[x]["areas"] = areas[x]
            ft = Table(head, "Per function (self time), %s, ranked by "
                       "%s's difference to no tunnel" % (upn, key),
                       code=(0,))
            shown = ranked[:top]
            for n in shown:
                ft.add(n, *["%.2f" % f(x, n) for x in tuns] +
                       ["%+.2f" % (f(x, n) - f(base, n)) for x in others])

            def rest(x):
                return costs[x]["total"] - sum(f(x, n) for n in shown)
            ft.add("(all other functions)", *["%.2f" % rest(x) for x in tuns]
                   + ["%+.2f" % (rest(x) - rest(base)) for x in others])
            ft.add("total", *["%.2f" % costs[x]["total"] for x in tuns] +
                   ["%+.2f" % (costs[x]["total"] - costs[base]["total"])
                    for x in others])
            out.table(ft)
            dt = Table(["module"] + tuns + ["%s-%s" % (x, base)
                                            for x in others],
                       "Per module (where the leaf function lives), %s" %
                       upn)
            mods = sorted(set().union(*[costs[x]["dsos"] for x in tuns]),
                          key=lambda m: -max(costs[x]["dsos"].get(m, 0)
                                             for x in tuns))
            for m in mods[:8]:
                dt.add(m, *["%.2f" % costs[x]["dsos"].get(m, 0)
                            for x in tuns] +
                       ["%+.2f" % (costs[x]["dsos"].get(m, 0) -
                                   costs[base]["dsos"].get(m, 0))
                        for x in others])
            out.table(dt)
        ents.append({"scenario": scen, "offload": mode, "test": test,
                     "side": side, "costs": costs})
    out.para("Self time of each function, from a system-wide perf record "
             "-a -g (cpu-clock, %s Hz); the path is the nearest marker on "
             "the sample's stack (transmit: sendmsg down to the driver's "
             "xmit, so data at the sender and ACKs at the receiver; "
             "receive: the driver's hand-off up to recvmsg, data at the "
             "receiver and ACKs at the sender). TCG has no NMI, so a sample "
             "due while interrupts are off lands where they come back on: "
             "those are charged to the function that had them off, marked "
             "\"(irqs off)\". Functions below the profile's top 200 are in "
             "\"all other functions\"; the areas are a reading aid "
             "(name patterns, report.py's AREAS). Figures reported, not "
             "judged." % profs[0].get("freq", "?"))
    return ents


def profile_reason(res, tgt, mode, test, base):
    """The largest differences of STT to BASE in the profile of (mode,
    test), as a sentence; None without a profile."""
    ps = {p["tunnel"]: p for p in res.recs if p["kind"] == "profile" and
          p["target"] == tgt and p["offload"] == mode and p["test"] == test
          and p.get("side", "both") == "both" and p.get("plain")}
    if "stt" not in ps or base not in ps:
        return None
    a, b = prof_costs(ps["stt"]), prof_costs(ps[base])
    if not a or not b:
        return None
    names = set(a["funcs"]) | set(b["funcs"])
    names.discard("(other)")
    d = sorted(((a["funcs"].get(n, 0) - b["funcs"].get(n, 0), n)
                for n in names), reverse=True)
    top = ", ".join("%s %+.1f" % (n, x) for x, n in d[:4] if x > 0)
    return ("profile (%s): STT %.1f %s per %s against %s's %.1f "
            "(transmit path %+.1f, receive path %+.1f, other %+.1f); the "
            "largest differences: %s" % (
                mode, a["total"], a["unit"], a["per"], base, b["total"],
                a["paths"].get("tx", 0) - b["paths"].get("tx", 0),
                a["paths"].get("rx", 0) - b["paths"].get("rx", 0),
                a["paths"].get("other", 0) - b["paths"].get("other", 0), top))


# ---- goals -----------------------------------------------------------------

def goals(res, tgt, netns):
    out = []
    for gl in defs.GOALS:
        ent = {"goal": gl.name, "source": gl.source, "op": gl.op,
               "target_ratio": gl.goal, "target": tgt}
        reason = None
        if gl.scenario == "netns":
            x = netns["value"]["ratio"] if netns and netns.get("value") \
                and netns.get("count") == gl.devices else None
            if x:
                reason = "create %s, delete %s (loaded/not loaded)" % (
                    fmt_ratio(netns["create_s"]["ratio"], False),
                    fmt_ratio(netns["delete_s"]["ratio"], False))
                more = ["%s %s against %s" % (k, fmt(v["loaded"]),
                                              fmt(v["unloaded"]))
                        for k, v in (netns.get("calls") or {}).items()
                        if v["loaded"] is not None and
                        v["unloaded"] is not None and
                        abs(v["loaded"] - v["unloaded"]) >= 0.5]
                if more:
                    reason += "; calls per namespace, loaded against not: " \
                        + ", ".join(more)
        elif gl.scenario == "scale":
            x = ratio(res.g(tgt, "scale", gl.mode, gl.test, "stt",
                            gl.devices),
                      res.g(tgt, "scale", gl.mode, gl.test, "stt", 1))
        else:
            g = res.g(tgt, gl.scenario, gl.mode, gl.test, "stt")
            b = res.g(tgt, gl.scenario, gl.mode, gl.test, gl.base)
            x = ratio(g, b, gl.figure)
            if x is not None:
                reason = miss_reason(res, tgt, gl, g, b)
        if x is None:
            ent.update(status="n/a", ratio=None)
        else:
            ok = x["ratio"] >= gl.goal if gl.op == ">=" else \
                x["ratio"] <= gl.goal
            ent.update(status="PASS" if ok else "MISS", ratio=x["ratio"],
                       spread=[x["min"], x["max"]])
            if not ok:
                ent["reason"] = reason
        out.append(ent)
    return out


def tcp_counts(r):
    """(retransmitted share of the sender's segments, receiver's segments
    (ACKs) per MB delivered) of one stream measurement, from the TCP
    counter deltas guest.py records; None where they are missing"""
    snd, rcv = r.get("snd_counters"), r.get("rcv_counters")
    if r.get("metric") != "gbps" or not r.get("value") or not snd:
        return None, None
    mb = r["value"] * 1e3 / 8 * r["duration"]
    out = snd.get("Tcp.OutSegs")
    rtx = snd.get("Tcp.RetransSegs", 0) / out if out else None
    acks = rcv.get("Tcp.OutSegs", 0) / mb if rcv else None
    return rtx, acks


def tcp_reason(g, b, base):
    """what TCP itself did differently: losses (retransmissions) and the
    receiver's ACK rate, each of which costs a saturated vCPU work that
    the base's run may not have done, and what the hosts dropped"""
    cg = [tcp_counts(r) for r in g.recs]
    cb = [tcp_counts(r) for r in b.recs]
    parts = []
    rg, rb = med(c[0] for c in cg), med(c[0] for c in cb)
    if rg is not None and rb is not None:
        parts.append("sender retransmitted %.2f%% of its segments against "
                     "%s's %.2f%%" % (100 * rg, base, 100 * rb))
    ag, ab = med(c[1] for c in cg), med(c[1] for c in cb)
    if ag is not None and ab:
        parts.append("receiver sent %.1f segments (ACKs) per MB against "
                     "%s's %.1f (%.2fx)" % (ag, base, ab, ag / ab))
    for side, who in (("snd_counters", "sender"),
                      ("rcv_counters", "receiver")):
        where = {}
        for r in g.recs:
            for k, v in (r.get(side) or {}).items():
                if v > 0 and (k.startswith("link.") or
                              k == "softnet.dropped"):
                    where[k] = where.get(k, 0) + v
        if where:
            parts.append("%s counted %s over %d repetitions" % (
                who, ", ".join("%d at %s" % (v, k)
                               for k, v in sorted(where.items())),
                len(g.recs)))
    return "; ".join(parts)


def miss_reason(res, tgt, gl, g, b):
    """the measured account of a miss: the cost behind the figure"""
    parts = []
    pair = gl.scenario in ("pair", "ovn")     # sender, receiver apart
    if gl.figure == "value":
        figs = (("cpu_snd_per", "sender"), ("cpu_rcv_per", "receiver")) \
            if pair else (("cpu_per", "both hosts"),)
        for fig, who in figs:
            r = ratio(g, b, fig)
            if r:
                parts.append("%s CPU per unit %.1f against %s's %.1f "
                             "(%.2fx)" % (who, g.fig(fig)["median"],
                                          gl.base, b.fig(fig)["median"],
                                          r["ratio"]))
        busy = med([x.get("cpu_snd" if pair else "cpu_total")
                    for x in g.recs])
        if busy is not None and busy >= 95:
            parts.append("the %s CPU was saturated (%.0f%%), so the figure "
                         "is the inverse of its cost" % (
                             "sender's" if pair else "guest's", busy))
        tr = tcp_reason(g, b, gl.base)
        if tr:
            parts.append(tr)
    else:
        parts.append("STT %.1f against %s's %.1f" % (
            g.fig(gl.figure)["median"], gl.base, b.fig(gl.figure)["median"]))
    pr = profile_reason(res, tgt, gl.mode, gl.test, gl.base) \
        if gl.scenario == "onevm" else None
    if pr:
        parts.append(pr)
    return "; ".join(parts)


def goals_section(out, res, tgt, gls):
    out.section("Goals", 1)
    t = Table(["verdict", "goal", "measured", "from"], group=False)
    for e in gls:
        if e["status"] == "n/a":
            continue
        # three decimals where two would round onto the goal
        v = ("%.3fx" if abs(e["ratio"] - e["target_ratio"]) < 0.005 else
             "%.2fx") % e["ratio"]
        if e.get("spread") and e["spread"][0] is not None and \
                e["spread"][0] != e["spread"][1]:
            v += " [%.2f-%.2f]" % tuple(e["spread"])
        t.add(e["status"], e["goal"], v, e["source"])
    n = {s: sum(1 for e in gls if e["status"] == s)
         for s in ("PASS", "MISS", "n/a")}
    if t.rows:
        out.table(t)
    out.para("%d PASS, %d MISS, %d not measured in this run%s." % (
        n["PASS"], n["MISS"], n["n/a"], (": " + "; ".join(
            e["goal"] for e in gls if e["status"] == "n/a"))
        if 0 < n["n/a"] <= 6 else ""))
    misses = [e for e in gls if e["status"] == "MISS"]
    if misses:
        out.para("Why the misses, measured:")
        out.bullets(["%s (%.2fx): %s" % (e["goal"], e["ratio"],
                                         e.get("reason") or "no further "
                                         "figure in this run")
                     for e in misses])


# ---- the report ------------------------------------------------------------

def header(out, res):
    m = res.meta
    kern = ", ".join("%s (%s)" % (t, res.kernels.get(t, "?"))
                     for t in res.targets)
    date = m.get("date", "?")
    if len(date) == 15 and date[8] == "-":
        date = "%s-%s-%s %s:%s" % (date[:4], date[4:6], date[6:8],
                                   date[9:11], date[11:13])
    lines = [
        "Date: %s; commit %s; kernels: %s; QEMU TCG" % (
            date, m.get("commit", "?"), kern),
        "Run: %s s per test, %s repetitions (interleaved); scenarios: %s; "
        "figures: median [min-max]" % (m.get("duration", "?"),
                                       m.get("reps", "?"),
                                       ", ".join(m.get("scenarios", []))),
    ]
    for r in m.get("runs", []):
        lines.append("Run %s: %s, commit %s, %s, scenarios %s, %s s x %s, "
                     "host load %s / %s" % (
                         r["dir"], r.get("date"), r.get("commit"),
                         ",".join(r.get("targets") or []),
                         ",".join(r.get("scenarios") or []),
                         r.get("duration"), r.get("reps"),
                         r.get("loadavg_start"), r.get("loadavg_end")))
    if m.get("loadavg_start") and not m.get("runs"):
        lines.append("Host load average at start/end: %s / %s (%s CPUs): "
                     "two-guest figures are only as good as the host was "
                     "quiet; compare ratios within this run" % (
                         m.get("loadavg_start"), m.get("loadavg_end", "?"),
                         m.get("host_cpus", "?")))
    onevm = set(m.get("scenarios", [])) & set(defs.ONEVM_PHASES)
    if onevm and m.get("onevm_icount", "off") != "off":
        lines.append("One VM: QEMU -icount shift=%s: guest time counts "
                     "executed instructions (%d ns each), so its figures "
                     "are deterministic and do not depend on the host's "
                     "load" % (m["onevm_icount"], 2 ** int(
                         m["onevm_icount"])))
    if onevm and m.get("onevm_cpu"):
        lines.append("One VM: QEMU CPU model %s" % m["onevm_cpu"])
    lines.append("CPU: whole-guest /proc/stat deltas (user+nice+system+irq"
                 "+softirq) over each test, in % of one CPU")
    mt = [i for i in res.infos if i.get("stt_mtu")]
    if mt:
        lines.append("Tunnel MTUs: " + ", ".join(
            "%s %s" % (defs.TUNNELS[t].title, mt[0].get(t + "_mtu"))
            for t in defs.TUNNEL_ORDER if mt[0].get(t + "_mtu")))
    for line in lines:
        out.txt.append(line)
    out.rst += [":%s: %s" % tuple(line.split(": ", 1)) if ": " in line[:40]
                else line for line in lines] + [""]


def build(dirs):
    recs, meta = load(dirs)
    res = Results(recs, meta)
    out = Out()
    out.txt.append("STT benchmark, %s" % meta.get("date", ""))
    out.rst += [".. Generated by make bench (scripts/bench/report.py) "
                "from results/%s." % ", results/".join(
                    m["dir"] for m in meta.get("runs", [meta])), "",
                "=====================", "STT benchmark results",
                "=====================", "",
                "How the figures are taken and what they mean: stt.rst, "
                "\"Benchmarks\". Emulated CPUs (QEMU TCG): compare ratios "
                "within one run, never absolute figures.", ""]
    header(out, res)
    summary, scale, profiles, allgoals = [], [], [], []
    extra = {}
    for tgt in res.targets:
        out.section("%s: %s" % (tgt, res.kernels.get(tgt, "?")))
        netns = netns_section_data(res, tgt)
        gls = goals(res, tgt, netns)
        allgoals += gls
        goals_section(out, res, tgt, gls)
        main_tables(out, res, tgt, summary)

        def keep(key, data):
            if data:
                extra.setdefault(key, {})[tgt] = data

        keep("esp", esp_section(out, res, tgt))
        keep("bigtcp", bigtcp_section(out, res, tgt))
        streams_table(out, res, tgt)
        scale += scale_section(out, res, tgt)
        keep("ovn", ovn_section(out, res, tgt))
        keep("netns", netns_section(out, res, tgt))
        profiles += profile_section(out, res, tgt)
        tools = sorted({(r["test"], r["tool"]) for r in recs
                        if r.get("tool") and r.get("test") and
                        r["target"] == tgt})
        if tools:
            by = {}
            for t, tool in tools:
                by.setdefault(tool, []).append(t)
            out.para("Tools: " + "; ".join("%s: %s" % (k, ", ".join(sorted(
                set(v), key=defs.test_order))) for k, v in sorted(
                    by.items())))
        st = [i for i in res.info(tgt) if i.get("stt_stats_b")]
        if st:
            s = st[-1]["stt_stats_b"]
            if isinstance(s, dict):
                s = " ".join("%s=%s" % kv for kv in sorted(s.items()))
            out.para("STT counters (receiver, end of run): " + s.strip())
    results = {"meta": meta, "summary": summary, "scale": scale,
               "goals": allgoals, "profiles": profiles, **extra,
               "raw": recs}
    return out, results, res


def netns_section_data(res, tgt):
    """the netns figures without writing (goals need them first)"""
    scratch = Out()
    return netns_section(scratch, res, tgt)


def main(dirs):
    """DIRS: a results directory or a list; the report goes to the first"""
    if isinstance(dirs, str):
        dirs = [dirs]
    d = dirs[0]
    out, results, res = build(dirs)
    text = "\n".join(out.txt) + "\n"
    with open(os.path.join(d, "report.txt"), "w") as f:
        f.write(text)
    rst = "\n".join(out.rst).rstrip() + "\n"
    with open(os.path.join(d, "report.rst"), "w") as f:
        f.write(rst)
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    sys.stdout.write(text)
    chart(d, res)


def chart(d, res):
    """chart.png: per section, each test's median relative to no tunnel"""
    panels = []
    for tgt in res.targets:
        for scen, mode in res.sections(tgt):
            tests = tests_in(res, tgt, scen, mode)
            tuns = [t for t in defs.TUNNEL_ORDER
                    if any(res.g(tgt, scen, mode, x, t) for x in tests)]
            base_tun = "none" if "none" in tuns else tuns[0]
            rows = []
            for t in tests:
                base = res.g(tgt, scen, mode, t, base_tun)
                bm = base.fig()["median"] if base else None
                cells = []
                for tun in tuns:
                    g = res.g(tgt, scen, mode, t, tun)
                    s = g.fig() if g else None
                    if not bm or not s or s["median"] is None:
                        cells += ["NaN"] * 3
                        continue
                    cells += ["%.4f" % (s[k] / bm)
                              for k in ("median", "min", "max")]
                rows.append("%s %s" % (defs.test(t).title.replace(" ", "_"),
                                       " ".join(cells)))
            panels.append(("%s: %s" % (tgt, title_of(scen, mode)), tuns,
                           base_tun, rows))
    if not panels:
        return
    dat = os.path.join(d, "chart.dat")
    with open(dat, "w") as f:
        for pnl in panels:
            f.write("# %s\n%s\n\n\n" % (pnl[0], "\n".join(pnl[3])))
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
    for i, (title, tuns, base_tun, rows) in enumerate(panels):
        gp.append("set title \"%s\"" % title.replace('"', "'"))
        gp.append("set ylabel 'relative to %s (median, min-max)'" % (
            "no tunnel" if base_tun == "none" else base_tun))
        plots = []
        for j, tun in enumerate(tuns):
            c = 2 + 3 * j
            src = "'%s' index %d" % (dat, i) if j == 0 else "'' index %d" % i
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
            (err.strip().splitlines() or [err])[-1], dat))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: report.py DIR[,DIR...]", file=sys.stderr)
        sys.exit(2)
    main(defs.split(sys.argv[1]))
