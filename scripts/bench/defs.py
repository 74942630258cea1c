# SPDX-License-Identifier: GPL-2.0
"""What make bench measures, defined once: tunnels, tests, underlay modes,
scenarios, goals and the kernels it can run on.

The host side (bench.py), the guest side (guest.py) and the report
(report.py) all read these tables; nothing else lists a test, a tunnel or a
goal.  A scenario is a set of measurements in one place (two guests, one
VM); a new one (e.g. a multi-guest OVN figure) is one more entry in
SCENARIOS, its runner (guest.py for what runs inside the one-VM guest,
bench.py for a VM set-up of its own) and, if its figures are not the
generic table's, a section in report.py.
"""

import re
from dataclasses import dataclass, field

# ---- tunnels ---------------------------------------------------------------


@dataclass(frozen=True)
class Tunnel:
    name: str
    title: str
    dev: str            # device name on both hosts ("" = the underlay)
    subnet: str         # inner /24: host i is .i
    # "ip link add DEV" arguments; {me}/{peer} = the underlay addresses
    link: str = ""
    mtu: int = 0        # set after creation (0: the driver's default)
    # The inner MTU under transport-mode ESP (0: the route's): ESP's
    # overhead (up to 40 bytes with rfc4106(gcm(aes))) taken off, so that
    # the outer packets still fit the wire unfragmented, as a deployment
    # would configure a UDP tunnel. STT and no tunnel learn it from the
    # route (the xfrm bundle's MTU).
    esp_mtu: int = 0


TUNNELS = {t.name: t for t in (
    Tunnel("none", "no tunnel", "", "192.0.2"),
    Tunnel("vxlan", "VXLAN", "vx0", "10.20.0",
           "type vxlan id 42 remote {peer} local {me} dstport 4789",
           # Without a lower device VXLAN defaults to 1500 and its outer
           # packets would be IP fragments.
           mtu=1450, esp_mtu=1410),
    Tunnel("geneve", "Geneve", "gnv0", "10.30.0",
           "type geneve id 42 remote {peer}",
           # its default with a remote, set again after ESP
           mtu=1450, esp_mtu=1410),
    Tunnel("stt", "STT", "stt0", "10.10.0",
           "type stt id 42 remote {peer} local {me}"),
)}
TUNNEL_ORDER = list(TUNNELS)
UNDERLAY_NET = "192.0.2"

# ---- tests -----------------------------------------------------------------

# metric: (unit, divisor of "CPU per unit", that unit)
UNITS = {
    "gbps": ("Gbit/s", 1.0, "Gbit/s"),
    "pps": ("pkt/s", 1e3, "kpkt/s"),
    "tps": ("trans/s", 1e3, "ktrans/s"),
}


@dataclass(frozen=True)
class Test:
    name: str
    title: str
    kind: str       # stream | udp | rr
    metric: str
    streams: int = 1
    size: int = 0
    proto: str = "tcp"


KNOWN_TESTS = ["tcp1", "tcp5", "tcp50", "udp64", "udp1400", "tcp_rr",
               "udp_rr"]


def test(name):
    """The Test called NAME: one of KNOWN_TESTS, or tcpN / udpN."""
    m = re.fullmatch(r"(tcp|udp)([0-9]+)", name)
    if m and int(m.group(2)) > 0:
        n = int(m.group(2))
        if m.group(1) == "tcp":
            return Test(name, "TCP %d stream%s" % (n, "" if n == 1 else "s"),
                        "stream", "gbps", streams=n)
        return Test(name, "UDP %d B" % n, "udp", "pps", size=n, proto="udp")
    if name in ("tcp_rr", "udp_rr"):
        return Test(name, name.upper(), "rr", "tps",
                    proto=name.split("_")[0])
    raise ValueError("unknown test '%s' (known: %s, or tcpN/udpN)" % (
        name, ",".join(KNOWN_TESTS)))


def test_order(name):
    return KNOWN_TESTS.index(name) if name in KNOWN_TESTS else 99


# ---- underlay modes (one VM: the veth's offloads) --------------------------


@dataclass(frozen=True)
class Mode:
    name: str
    title: str
    tso: bool
    udp_tnl: bool
    big_tcp: int = 0        # gso/gro_ipv4_max_size on the wire, 0 = off
    min_kernel: tuple = ()  # (major, minor) the mode needs
    esp: str = ""           # transport-mode ESP between the hosts: an
                            # ESP_ALGS key ("" = none)
    tunnel_gro: bool = True  # GRO on the tunnel devices themselves


MODES = {m.name: m for m in (
    Mode("full", "full offloads (TSO + UDP-tunnel segmentation)", True, True),
    Mode("tso", "TSO without UDP-tunnel segmentation", True, False),
    # On this veth path a frame the wire carries whole (a request, a
    # response, an ACK) arrives as TCP's own clone, which
    # gro_cells_receive() hands to netif_rx(); STT copied every frame's
    # head before c156c22, so each went through its GRO cell. A real
    # NIC's receive buffers are no clones. GRO off on every tunnel device
    # sends every tunnel's inner frames to netif_rx(): like for like.
    Mode("nogro", "TSO without UDP-tunnel segmentation, GRO off on every "
         "tunnel device (every tunnel's inner frame through netif_rx, as "
         "a UDP tunnel's unsegmented frames already are on this veth "
         "path)", True, False,
         tunnel_gro=False),
    Mode("notso", "no TSO at all (software GSO only)", False, False),
    Mode("bigtcp", "TSO without UDP-tunnel segmentation, BIG TCP on the "
         "wire (gso/gro_ipv4_max_size 185000)", True, False, big_tcp=185000,
         min_kernel=(6, 3)),
    Mode("esp", "TSO without UDP-tunnel segmentation, transport-mode ESP "
         "(rfc4106(gcm(aes)), 128-bit key) between the hosts for every "
         "tunnel and for no tunnel", True, False, esp="gcm"),
    Mode("espnull", "TSO without UDP-tunnel segmentation, transport-mode "
         "ESP with the null cipher and null authentication between the "
         "hosts: ESP's framing (no GRO before decryption) without the "
         "cipher, which under TCG costs far more than everything else",
         True, False, esp="null"),
)}
MODE_ORDER = list(MODES)
# the two guests' NIC: not switchable
PAIR_MODE = "virtio"
# OVN's NIC modes (scripts/demo/ovn-hosts-guest.sh) and tunnels
OVN_MODES = {
    "virtio": "rx-gro-hw on: the receiver gets TSO frames whole (like "
              "LRO), as the two guests of the pair scenario",
    "virtio-mtu": "rx-gro-hw off: the receiver gets MTU-sized segments, "
                  "software GRO (a NIC without LRO)",
}
OVN_TUNNELS = ["stt", "geneve"]

# ---- scenarios -------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    vm: str                       # the VM that runs it: "pair" or "onevm"
    tests: tuple = ()             # default tests
    quick_tests: tuple = ()       # with --quick
    per_mode: dict = field(default_factory=dict)   # mode -> default tests
    quick_per_mode: dict = field(default_factory=dict)  # the same, --quick
    quick: bool = True            # part of --quick


ALL = tuple(KNOWN_TESTS)
SCENARIOS = {s.name: s for s in (
    Scenario("pair", "Two guests, 1 vCPU each, virtio-net on tap+bridge "
             "(TSO, GRO, no UDP-tunnel offload)", "pair", ALL,
             ("tcp1", "tcp5", "udp64", "tcp_rr"), quick=False),
    Scenario("onevm", "One VM, two netns joined by veth", "onevm",
             ("tcp1", "tcp5"), ("tcp1",),
             per_mode={"tso": ALL, "bigtcp": ("tcp1",),
                       "nogro": ("tcp_rr", "udp_rr")},
             quick_per_mode={"tso": ("tcp1", "tcp5", "udp64", "tcp_rr")}),
    Scenario("scale", "One STT tunnel among N STT devices (one VM, veth, "
             "TSO without UDP-tunnel offload)", "onevm", ("tcp1", "tcp_rr"),
             ("tcp1", "tcp_rr")),
    Scenario("profile", "Where the time goes: a system-wide perf profile of "
             "the same steady traffic per tunnel (one VM, -icount)",
             "onevm", ("tcp1",), ("tcp1",), quick=False),
    Scenario("netns", "Creating and deleting network namespaces with "
             "stt.ko loaded and not (one VM, alternating rounds)", "onevm",
             quick=False),
    Scenario("ovn", "OVN across 3 guests (one vCPU each, virtio-net: TSO, "
             "no UDP-tunnel offload): vm1 -> vm2, chassis 1 -> 2, one TCP "
             "stream; ovn-encap-type stt against geneve, switched live, "
             "repetitions interleaved", "ovn", ("tcp1",), quick=False),
)}
SCENARIO_ORDER = list(SCENARIOS)
# Order inside the one-VM guest: netns first, while stt.ko can still be
# unloaded (no STT device exists yet).
ONEVM_PHASES = ["netns", "onevm", "scale", "profile"]

# ESP's algorithms ("ip xfrm state" arguments), one per direction (SPI
# 0x100: host 1 -> 2, 0x200: 2 -> 1). Fixed keys: a benchmark, not a
# deployment.
ESP_ALGS = {
    "gcm": (["aead", "rfc4106(gcm(aes))",
             "0x0102030405060708090a0b0c0d0e0f1011121314", "128"],
            ["aead", "rfc4106(gcm(aes))",
             "0x1112131415161718191a1b1c1d1e1f2021222324", "128"]),
    "null": (["enc", "cipher_null", "", "auth", "digest_null", ""],
             ["enc", "cipher_null", "", "auth", "digest_null", ""]),
}
# the mode ESP's figures are compared with (the same wire without ESP)
ESP_BASE_MODE = "tso"
SCALE_MODE = "tso"
PROFILE_MODES = ("full", "tso")
PROFILE_TUNNELS = ("none", "vxlan", "stt")

# ---- kernels ---------------------------------------------------------------

# scripts/vm/target.sh names. HOST_TARGET is the host's own root and
# kernel, run from the checkout on a snapshot of the module built there;
# the others run in their build copy (scripts/vm/target.sh build).
TARGETS = ("deb12", "deb12-6.12", "deb13", "deb13-new")
HOST_TARGET = "deb12"

# ---- goals -----------------------------------------------------------------


@dataclass(frozen=True)
class Goal:
    """STT's FIGURE in (scenario, mode, test) over BASE's, OP GOAL."""
    name: str
    scenario: str
    mode: str
    test: str
    base: str               # a tunnel, "alone" (scale), "unloaded" (netns)
    op: str                 # ">=" or "<="
    goal: float
    figure: str = "value"   # value | cpu_per | cpu_snd_per | cpu_rcv_per
    source: str = ""        # where the goal comes from
    devices: int = 0        # scale: the device count compared with 1;
                            # netns: the namespace count it is about


_P = "STT proposal"
_I15 = "issue 15"
GOALS = [
    Goal("two guests, TCP 1 stream: STT >= 3x VXLAN", "pair", PAIR_MODE,
         "tcp1", "vxlan", ">=", 3.0, source=_P),
    Goal("two guests, TCP 1 stream: STT >= 0.9x no tunnel", "pair",
         PAIR_MODE, "tcp1", "none", ">=", 0.9, source=_P),
    Goal("two guests, TCP 1 stream: receiver CPU/Gbit <= 0.5x VXLAN",
         "pair", PAIR_MODE, "tcp1", "vxlan", "<=", 0.5, "cpu_rcv_per",
         source=_P),
    Goal("two guests, TCP 5 streams: STT >= 1.5x VXLAN", "pair", PAIR_MODE,
         "tcp5", "vxlan", ">=", 1.5, source=_P),
    Goal("one VM, full offloads, TCP 1 stream: STT >= 1.2x VXLAN", "onevm",
         "full", "tcp1", "vxlan", ">=", 1.2, source=_P),
    Goal("one VM, no TSO, TCP 1 stream: STT >= 1.0x VXLAN", "onevm",
         "notso", "tcp1", "vxlan", ">=", 1.0, source=_P + ", " + _I15),
]
for _scen, _mode, _where in (("pair", PAIR_MODE, "two guests"),
                             ("onevm", "tso", "one VM (TSO, no UDP-tnl)")):
    for _t, _what in (("udp64", "UDP 64 B pps"),
                      ("udp1400", "UDP 1400 B pps"),
                      ("tcp_rr", "TCP_RR"), ("udp_rr", "UDP_RR")):
        GOALS.append(Goal("%s, %s: STT >= 0.95x VXLAN" % (_where, _what),
                          _scen, _mode, _t, "vxlan", ">=", 0.95, source=_P))
# request/response like for like: no tunnel's inner frame through GRO
# (Mode "nogro"), as a UDP tunnel's unsegmented frames never are on the
# one VM's veth path (streams are: the wire cuts their frames in software)
for _t, _what in (("tcp_rr", "TCP_RR"), ("udp_rr", "UDP_RR")):
    GOALS.append(Goal("one VM (TSO, no UDP-tnl), tunnel GRO off, %s: STT >= "
                      "0.95x VXLAN" % _what, "onevm", "nogro", _t, "vxlan",
                      ">=", 0.95, source=_P + ", like for like"))
GOALS += [
    Goal("one tunnel among 1000 devices, throughput >= 0.95x alone",
         "scale", SCALE_MODE, "tcp1", "alone", ">=", 0.95, devices=1000,
         source=_P),
    Goal("one tunnel among 1000 devices, TCP_RR >= 0.95x alone",
         "scale", SCALE_MODE, "tcp_rr", "alone", ">=", 0.95, devices=1000,
         source=_P),
    # issue 15, deliverable 2: the tunnel tax
    Goal("one VM, full offloads, TCP 1 stream: STT >= 0.8x no tunnel",
         "onevm", "full", "tcp1", "none", ">=", 0.8, source=_I15),
    Goal("one VM, full offloads, TCP 1 stream: CPU/Gbit <= VXLAN's",
         "onevm", "full", "tcp1", "vxlan", "<=", 1.0, "cpu_per",
         source=_I15),
    Goal("one VM, full offloads, TCP 1 stream: CPU/Gbit <= Geneve's",
         "onevm", "full", "tcp1", "geneve", "<=", 1.0, "cpu_per",
         source=_I15),
    Goal("one VM, TSO without UDP-tnl, TCP 1 stream: STT >= 0.8x no "
         "tunnel", "onevm", "tso", "tcp1", "none", ">=", 0.8, source=_I15),
]
for _t in ("tcp1", "tcp5", "tcp50"):
    GOALS += [
        Goal("two guests, %s: STT >= 0.95x no tunnel" % test(_t).title,
             "pair", PAIR_MODE, _t, "none", ">=", 0.95, source=_I15),
        Goal("two guests, %s: sender CPU/Gbit <= 1.1x no tunnel" %
             test(_t).title, "pair", PAIR_MODE, _t, "none", "<=", 1.1,
             "cpu_snd_per", source=_I15),
    ]
for _t in ("udp64", "udp1400", "tcp_rr", "udp_rr"):
    GOALS.append(Goal("two guests, %s: STT >= 0.9x no tunnel" %
                      test(_t).title, "pair", PAIR_MODE, _t, "none", ">=",
                      0.9, source=_I15))
GOALS.append(Goal("OVN, 3 guests, TCP 1 stream between chassis: STT >= 2x "
                  "Geneve", "ovn", PAIR_MODE, "tcp1", "geneve", ">=", 2.0,
                  source="ovn-hosts"))
GOALS.append(Goal("1000 netns created and deleted: stt.ko loaded <= 1.05x "
                  "not loaded", "netns", "", "churn", "unloaded", "<=", 1.05,
                  source="issue 15.4", devices=1000))

# ---- defaults --------------------------------------------------------------

DEFAULTS = {
    "duration": 4, "quick_duration": 2, "reps": 3, "tool": "auto",
    "multi_tool": "iperf3", "smp": 1, "icount": "5", "pair_icount": "off",
    "devices": "1,100,1000", "netns_count": 1000, "netns_rounds": 3,
    "profile_window": 4, "profile_lead": 1.5, "profile_freq": 1999,
}


def split(s):
    """"a,b,,c" -> ["a", "b", "c"]"""
    return [x for x in (s or "").split(",") if x]
