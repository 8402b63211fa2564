"""Synthetic capture fixtures, built with scapy, and the expected-JSON helpers.

`python tests/capturelib.py build` writes fixtures/captures/synthetic/*; the test suite
rebuilds them and checks the committed files are byte for byte what this code makes,
so every fixture can be traced to the packets below. Addresses are documentation /
private ranges; nothing is sent anywhere.

`python tests/capturelib.py expect FILE...` prints what `mssdiag capture` makes of
captures now, as a starting point for their .json: check every value before saving.
"""
from __future__ import annotations

import json
import struct
import sys
from pathlib import Path
from typing import Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "fixtures" / "captures"
SYNTH = CAPTURES / "synthetic"
sys.path.insert(0, str(ROOT))

T0 = 1700000000.0
C4, S4, R4 = "10.1.0.2", "10.2.0.5", "10.9.0.1"
C6, S6, R6 = "2001:db8:1::2", "2001:db8:2::5", "2001:db8:9::1"
MAC_C, MAC_S = "02:00:00:00:00:01", "02:00:00:00:00:02"


def _scapy():
    from scapy.all import (Ether, Dot1Q, Dot1AD, IP, IPv6, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, TCP, UDP,
                           ICMP, ICMPv6PacketTooBig, Raw, CookedLinuxV2, Loopback, fragment, fragment6, raw,
                           PPPoE, PPP)
    from scapy.contrib.mpls import MPLS
    return locals()


def pcap_bytes(frames: List[Tuple[float, bytes]], link: int = 1, nano: bool = False, big: bool = False,
               snaplen: int = 65535) -> bytes:
    e = ">" if big else "<"
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = [struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snaplen, link)]
    for ts, data in frames:
        sec = int(ts)
        frac = int(round((ts - sec) * (1e9 if nano else 1e6)))
        cap = data[:snaplen]
        out.append(struct.pack(e + "IIII", sec, frac, len(cap), len(data)) + cap)
    return b"".join(out)


def _block(btype: int, body: bytes) -> bytes:
    body += b"\x00" * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def _opt(code: int, value: bytes) -> bytes:
    return struct.pack("<HH", code, len(value)) + value + b"\x00" * (-len(value) % 4)


def pcapng_bytes(ifaces: List[Tuple[int, str, int]], frames: List[Tuple[int, float, bytes]],
                 stats: Dict[int, Tuple[int, int]] = None) -> bytes:
    """ifaces: (linktype, name, tsresol exponent); frames: (iface, ts, data); stats: iface -> (recv, drop)."""
    out = [_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
    for link, name, res in ifaces:
        opts = _opt(2, name.encode()) + _opt(9, bytes([res])) + _opt(0, b"")
        out.append(_block(1, struct.pack("<HHI", link, 0, 262144) + opts))
    for iid, ts, data in frames:
        ticks = int(round(ts * 10 ** ifaces[iid][2]))
        out.append(_block(6, struct.pack("<IIIII", iid, ticks >> 32, ticks & 0xFFFFFFFF, len(data), len(data)) + data))
    for iid, (recv, drop) in (stats or {}).items():
        ticks = int(frames[-1][1] * 10 ** ifaces[iid][2])
        opts = _opt(4, struct.pack("<Q", recv)) + _opt(5, struct.pack("<Q", drop)) + _opt(0, b"")
        out.append(_block(5, struct.pack("<III", iid, ticks >> 32, ticks & 0xFFFFFFFF) + opts))
    return b"".join(out)


def snoop_bytes(frames: List[Tuple[float, bytes]]) -> bytes:
    out = [b"snoop\x00\x00\x00" + struct.pack(">II", 2, 4)]
    for ts, data in frames:
        pad = b"\x00" * (-len(data) % 4)
        sec = int(ts)
        out.append(struct.pack(">IIIIII", len(data), len(data), 24 + len(data) + len(pad), 0, sec,
                               int(round((ts - sec) * 1e6))) + data + pad)
    return b"".join(out)


class Conv:
    """A TCP conversation written packet by packet (client c, server s)."""

    def __init__(self, c=C4, s=S4, cport=40000, sport=23, v6=False, c_isn=1000, s_isn=5000, df=True):
        self.x = _scapy()
        self.c, self.s, self.cport, self.sport, self.v6, self.df = c, s, cport, sport, v6, df
        self.seq = {"c": c_isn, "s": s_isn}
        self.ipid = {"c": 100, "s": 700}
        self.t = T0
        self.pkts = []

    def ip(self, who: str, **kw):
        x = self.x
        src, dst = (self.c, self.s) if who == "c" else (self.s, self.c)
        if self.v6:
            return x["IPv6"](src=src, dst=dst, hlim=64)
        self.ipid[who] += 1
        return x["IP"](src=src, dst=dst, id=self.ipid[who], flags="DF" if self.df else 0, ttl=64)

    def tcp(self, who: str, flags: str, data: bytes = b"", seq=None, ack=True, options=(), dt=0.001):
        x = self.x
        sp, dp = (self.cport, self.sport) if who == "c" else (self.sport, self.cport)
        other = "s" if who == "c" else "c"
        s = self.seq[who] if seq is None else seq
        pkt = self.ip(who) / x["TCP"](sport=sp, dport=dp, seq=s, ack=self.seq[other] if ack else 0, flags=flags,
                                      window=65535, options=list(options))
        if data:
            pkt = pkt / x["Raw"](data)
        if seq is None:
            self.seq[who] = (s + len(data) + (1 if "S" in flags or "F" in flags else 0)) & 0xFFFFFFFF
        self.t += dt
        self.pkts.append((self.t, pkt))
        return pkt

    def handshake(self, c_mss=1460, s_mss=1460):
        self.tcp("c", "S", ack=False, options=[("MSS", c_mss)] if c_mss else [])
        self.tcp("s", "SA", options=[("MSS", s_mss)] if s_mss else [])
        self.tcp("c", "A")

    def add(self, pkt, dt=0.001):
        self.t += dt
        self.pkts.append((self.t, pkt))

    def frames(self, link="ether") -> List[Tuple[float, bytes]]:
        x = self.x
        out = []
        for t, p in self.pkts:
            if link == "ether":
                et = 0x86DD if p.haslayer(x["IPv6"]) else 0x0800
                out.append((t, bytes(x["Ether"](src=MAC_C, dst=MAC_S, type=et) / p)))
            else:
                out.append((t, bytes(p)))
        return out


def legacy536():
    """A VOS-like server: SYN-ACK MSS 536 to a 1460 client; five 536-byte segments."""
    c = Conv()
    c.handshake(1460, 536)
    for _ in range(5):
        c.tcp("s", "PA", b"x" * 536)
    c.tcp("c", "A")
    return pcap_bytes(c.frames())


def stcp_small():
    """Both advertise 1460, yet the server sends 536-byte segments (STCP non-local rule).
    Big-endian, nanosecond pcap."""
    c = Conv(sport=21)
    c.handshake(1460, 1460)
    for _ in range(6):
        c.tcp("s", "PA", b"y" * 536)
    c.tcp("c", "A")
    return pcap_bytes(c.frames(), nano=True, big=True)


def _ptb_conv(obey: bool):
    c = Conv(sport=80)
    x = c.x
    c.handshake(1460, 1460)
    big = c.tcp("c", "PA", b"z" * 1460)
    start = c.seq["c"] - 1460
    quoted = bytes(big)[:28]
    icmp = x["IP"](src=R4, dst=C4, id=9, ttl=64) / x["ICMP"](type=3, code=4, nexthopmtu=1400) / x["Raw"](quoted)
    c.add(icmp)
    if obey:
        c.tcp("c", "PA", b"z" * 1360, seq=start)
        c.tcp("c", "PA", b"z" * 100, seq=start + 1360)
    else:
        for _ in range(3):
            c.tcp("c", "PA", b"z" * 1460, seq=start, dt=0.2)
    c.tcp("s", "A")
    return c


def ptb_obeyed():
    return pcap_bytes(_ptb_conv(True).frames())


def ptb_ignored():
    return pcap_bytes(_ptb_conv(False).frames())


def frag_v4():
    """A host without DF (no PMTUD): a router fragmented its 1460-byte segments to 1400;
    UDP fragments without DF beside it."""
    c = Conv(df=False, sport=23)
    x = c.x
    c.handshake(1460, 1460)
    for _ in range(2):
        seg = c.tcp("s", "PA", b"f" * 1460)
        c.pkts.pop()
        for frag in x["fragment"](seg, fragsize=1376):
            c.add(frag)
    c.tcp("c", "A")
    udp = x["IP"](src=C4, dst=S4, id=4242) / x["UDP"](sport=5000, dport=2049) / x["Raw"](b"u" * 3000)
    for frag in x["fragment"](udp, fragsize=1480):
        c.add(frag)
    return pcap_bytes(c.frames())


def frag_v6():
    """IPv6: hop-by-hop header, a TCP segment in two fragments, and a Packet Too Big
    tied to the connection through its quoted header."""
    c = Conv(c=C6, s=S6, v6=True, sport=80)
    x = c.x
    c.handshake(1440, 1440)
    seg = c.tcp("s", "PA", b"g" * 1440)
    c.pkts.pop()
    pkt = x["IPv6"](src=S6, dst=C6) / x["IPv6ExtHdrHopByHop"]() / x["IPv6ExtHdrFragment"](id=77) / seg[x["TCP"]]
    for frag in x["fragment6"](pkt, 1280):
        c.add(frag)
    big = c.tcp("c", "PA", b"h" * 1440)
    ptb = x["IPv6"](src=R6, dst=C6) / x["ICMPv6PacketTooBig"](mtu=1400) / x["Raw"](bytes(big)[:1232])
    c.add(ptb)
    c.tcp("c", "PA", b"h" * 1328, seq=c.seq["c"] - 1440)
    c.tcp("s", "A")
    return pcap_bytes(c.frames())


def _carried(sport: int, mss: int, byte: bytes, outer) -> bytes:
    """A connection (both ends advertising `mss`, three full segments from the server), each
    packet inside the layers `outer(x)` returns."""
    c = Conv(sport=sport)
    x = c.x
    c.handshake(mss, mss)
    for _ in range(3):
        c.tcp("s", "PA", byte * mss)
    return pcap_bytes([(t, bytes(outer(x) / p)) for t, p in c.pkts])


def vlan():
    """802.1ad + 802.1Q double tag (QinQ) around a 1460/1460 connection."""
    return _carried(443, 1460, b"v", lambda x: x["Ether"](src=MAC_C, dst=MAC_S) / x["Dot1AD"](vlan=100) /
                    x["Dot1Q"](vlan=20))


def sll2():
    """Linux cooked v2 (tcpdump -i any): a 1460 client talking to a 1220 IPv6-minimum server."""
    c = Conv(c=C6, s=S6, v6=True, sport=22)
    x = c.x
    c.handshake(1440, 1220)
    for _ in range(3):
        c.tcp("c", "PA", b"w" * 1220)
    frames = [(t, bytes(x["CookedLinuxV2"](proto=0x86DD, ifindex=3, lladdrtype=1, pkttype=0 if i % 2 else 4,
                                              lladdrlen=6, src=b"\x02\x00\x00\x00\x00\x01\x00\x00") / p))
              for i, (t, p) in enumerate(c.pkts)]
    return pcap_bytes(frames, link=276)


def snaplen():
    """tcpdump -s 96: full-size segments cut after 96 bytes; sizes come from the IP header."""
    c = Conv(sport=80)
    c.handshake(1460, 1460)
    for _ in range(4):
        c.tcp("s", "PA", b"s" * 1460)
    c.tcp("c", "A")
    return pcap_bytes(c.frames(), snaplen=96)


def two_ifaces():
    """pcapng, two interfaces (Ethernet in µs, raw IP in ns), drop statistics; the
    same connection before and after a router that clamps the MSS to 1360 and NATs."""
    outside = Conv(c="198.51.100.7", cport=61000, sport=80, c_isn=777777)
    inside = Conv(cport=40001, sport=80, c_isn=777777)
    outside.handshake(1360, 1460)
    inside.handshake(1460, 1460)
    frames = [(0, t, d) for t, d in inside.frames()] + [(1, t + 0.0005, d) for t, d in outside.frames("raw")]
    frames.sort(key=lambda f: f[1])
    return pcapng_bytes([(1, "eth-inside", 6), (101, "ppp-outside", 9)], frames, stats={0: (3, 0), 1: (3, 2)})


def loopback_snoop():
    """Solaris snoop of a connection with no MSS option in the SYN."""
    c = Conv(sport=25)
    c.handshake(None, 1460)
    c.tcp("c", "PA", b"HELO x\r\n")
    return snoop_bytes(c.frames())


def bsd_loopback():
    """BSD loopback (DLT_NULL, AF_INET6 = 30 as on macOS) around a dead black-hole
    connection: one 1440-byte segment sent four times, never acknowledged."""
    c = Conv(c=C6, s=S6, v6=True, sport=443)
    c.handshake(1440, 1440)
    start = c.seq["c"]
    c.tcp("c", "PA", b"b" * 1440)
    for i in range(3):
        c.tcp("c", "PA", b"b" * 1440, seq=start, dt=0.2 * 2 ** i)
    frames = [(t, struct.pack("<I", 30) + bytes(p)) for t, p in c.pkts]
    return pcap_bytes(frames, link=0)


def pppoe():
    """A PPPoE session (the classic 1492-byte MTU): both ends advertise 1452, full segments of
    1452 bytes in Ethernet / PPPoE / PPP frames."""
    return _carried(80, 1452, b"p", lambda x: x["Ether"](src=MAC_C, dst=MAC_S) / x["PPPoE"](sessionid=0x11) /
                    x["PPP"](proto=0x21))


def mpls():
    """Two MPLS labels around a 1460/1460 connection (a capture on a provider link)."""
    return _carried(443, 1460, b"m", lambda x: x["Ether"](src=MAC_C, dst=MAC_S, type=0x8847) /
                    x["MPLS"](label=100, s=0) / x["MPLS"](label=200, s=1))


def frag_syn():
    """A SYN whose TCP options (MSS 1380 among them) arrive in a second IPv4 fragment, the
    fragments out of order; an IPv6 connection whose segments carry atomic fragment headers;
    and an IPv4 datagram whose fragments overlap (discarded, as RFC 5722 / Linux do)."""
    c = Conv(df=False, sport=22)
    x = c.x
    syn = c.tcp("c", "S", ack=False, options=[("MSS", 1380), ("SAckOK", b""), ("Timestamp", (1, 0)),
                                               ("NOP", None), ("WScale", 7)])
    c.pkts.pop()
    frags = x["fragment"](syn, fragsize=16)
    for frag in reversed(frags):
        c.add(frag)
    c.tcp("s", "SA", options=[("MSS", 1460)])
    c.tcp("c", "A")
    c.tcp("s", "PA", b"a" * 1000)
    over = x["IP"](src=S4, dst=C4, id=999, flags="MF", frag=0, proto=6) / x["Raw"](bytes(c.tcp("s", "PA", b"o" * 600))[20:420])
    c.pkts.pop()
    c.add(over)
    c.add(x["IP"](src=S4, dst=C4, id=999, frag=40, proto=6) / x["Raw"](b"o" * 300))   # overlaps bytes 320..400
    v6 = Conv(c=C6, s=S6, v6=True, cport=40100, sport=80)
    v6.handshake(1440, 1440)
    atomic = []
    for t, p in v6.pkts:
        if p[x["TCP"]].flags == "SA":
            p = x["IPv6"](src=S6, dst=C6, nh=44) / x["IPv6ExtHdrFragment"](id=7, m=0, offset=0) / p[x["TCP"]]
        atomic.append((t + 1, p))
    return pcap_bytes(c.frames() + [(t, bytes(x["Ether"](src=MAC_C, dst=MAC_S, type=0x86DD) / p)) for t, p in atomic])


BUILDERS: Dict[str, Callable[[], bytes]] = {
    "legacy536.pcap": legacy536, "stcp_small_segments.pcap": stcp_small, "ptb_obeyed.pcap": ptb_obeyed,
    "ptb_ignored.pcap": ptb_ignored, "fragments_v4.pcap": frag_v4, "fragments_v6.pcap": frag_v6,
    "vlan_qinq.pcap": vlan, "sll2.pcap": sll2, "snaplen96.pcap": snaplen, "two_interfaces.pcapng": two_ifaces,
    "snoop_no_mss.snoop": loopback_snoop, "bsd_loopback_blackhole.pcap": bsd_loopback, "pppoe.pcap": pppoe,
    "mpls.pcap": mpls, "fragmented_syn.pcap": frag_syn,
}


# ---- expected JSON ---------------------------------------------------------------------
def summary(paths: List[str], second: List[str] = (), mtu: int = 1500) -> dict:
    """What a fixture's JSON holds: the whole result (findings without their advice text,
    which the platform modules own), paths relative to fixtures/captures/."""
    from toolkit import capture
    d = capture.analyze([str(p) for p in paths], [str(p) for p in second], mtu).to_dict()
    d["findings"] = [{k: f[k] for k in ("code", "title", "severity", "confidence", "data")}
                     | {"recommendations": [x["code"] for x in f["recommendations"]]} for f in d["findings"]]
    return json.loads(json.dumps(d).replace(str(CAPTURES) + "/", ""))


def pairs():
    for raw in sorted(CAPTURES.glob("*/*")):
        if raw.suffix in (".json", ".md") or raw.name.startswith("."):
            continue
        yield raw, raw.with_name(raw.name + ".json")


def actual(raw: Path, args: dict) -> dict:
    return summary([raw], [CAPTURES / p for p in args.get("second", [])], args.get("mtu", 1500))


# ---- tshark as the truth, connection by connection ---------------------------------------
TSHARK_FIELDS = ["frame.protocols", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "tcp.srcport", "tcp.dstport",
                 "tcp.stream", "tcp.flags.syn", "tcp.options.mss_val", "tcp.len", "icmp.type", "icmp.code",
                 "icmpv6.type", "ip.fragment.count", "ipv6.fragment.count"]


def _nth(value: str, n: int) -> str:
    parts = value.split(",") if value else []
    return parts[n] if n < len(parts) else ""


def tshark_connections(path) -> Dict[tuple, dict]:
    """Per TCP connection direction as tshark sees it: {(src, sport, dst, dport, n): {"mss", "max_len",
    "fragments", "ptb"}}, n counting connections of the same 4-tuple in order (tcp.stream)."""
    import subprocess
    done = subprocess.run(["tshark", "-n", "-r", str(path), "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,",
                           *[x for f in TSHARK_FIELDS for x in ("-e", f)]], capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and not done.stdout:
        raise RuntimeError(f"tshark cannot read it: {done.stderr.strip().splitlines()[-1:]}")
    out = done.stdout
    streams: Dict[str, tuple] = {}       # tcp.stream -> (4-tuple, n)
    seen: Dict[tuple, int] = {}
    got: Dict[tuple, dict] = {}
    ptbs = []
    for line in out.splitlines():
        v = dict(zip(TSHARK_FIELDS, line.split("\t")))
        protos = v["frame.protocols"].split(":")
        if "tcp" not in protos:
            continue
        # the first TCP of the frame (tshark also dissects packets carried as application data,
        # e.g. OpenFlow's), and the IP layer right before it (inside any tunnel)
        at = protos.index("tcp")
        inner = [p for p in protos[:at] if p in ("ip", "ipv6")]
        if not inner:
            continue
        fam = inner[-1]
        nth = inner.count(fam) - 1
        src, dst = _nth(v[f"{fam}.src"], nth), _nth(v[f"{fam}.dst"], nth)
        sport, dport = _nth(v["tcp.srcport"], 0), _nth(v["tcp.dstport"], 0)
        if not (src and dst and sport and dport):
            continue
        quad = (src, int(sport), dst, int(dport))
        if "icmp" in protos or "icmpv6" in protos:
            t4, c4, t6 = v["icmp.type"].split(",")[0], v["icmp.code"].split(",")[0], v["icmpv6.type"].split(",")[0]
            if (t4, c4) == ("3", "4") or t6 == "2":
                ptbs.append(quad)
            continue
        stream = _nth(v["tcp.stream"], 0)
        if stream not in streams:
            pair = (quad, (quad[2], quad[3], quad[0], quad[1]))
            key = min(pair)
            streams[stream] = (key, seen.get(key, 0))
            seen[key] = seen.get(key, 0) + 1
        key, n = streams[stream]
        d = got.setdefault(quad + (n,), {"mss": None, "max_len": 0, "fragments": 0, "ptb": 0, "syn": False})
        got.setdefault((quad[2], quad[3], quad[0], quad[1], n), {"mss": None, "max_len": 0, "fragments": 0, "ptb": 0,
                                                                  "syn": False})
        if _nth(v["tcp.flags.syn"], 0) in ("1", "True") and not d["syn"]:
            d["syn"] = True
            mss = _nth(v["tcp.options.mss_val"], 0)
            d["mss"] = int(mss) if mss else None
        d["max_len"] = max(d["max_len"], int(_nth(v["tcp.len"], 0) or 0))
        frag = v["ip.fragment.count" if fam == "ip" else "ipv6.fragment.count"]
        d["fragments"] += int(_nth(frag, 0) or 0)
    for quad in ptbs:
        n = max((k[4] for k in got if k[:4] == quad), default=None)
        if n is not None:
            got[quad + (n,)]["ptb"] += 1
    return got


def our_connections(path, mtu: int = 1500) -> Dict[tuple, dict]:
    from toolkit import capture
    seen: Dict[tuple, int] = {}
    got = {}
    result = capture.analyze([str(path)], mtu=mtu)
    if not result.read_ok:
        raise RuntimeError(f"mssdiag cannot read it: {result.errors}")
    for f in result.flows:
        c, s = f["client_to_server"], f["server_to_client"]
        key = min((c["addr"], c["port"], s["addr"], s["port"]), (s["addr"], s["port"], c["addr"], c["port"]))
        n = seen.get(key, 0)
        seen[key] = n + 1
        for me, peer in ((c, s), (s, c)):
            got[(me["addr"], me["port"], peer["addr"], peer["port"], n)] = {
                "mss": me["mss"], "peer_mss": peer["mss"], "max_payload": me["max_payload"],
                "segmentation": me.get("segmentation"), "fragments": me["fragments"], "ptb": len(me["ptb"]),
                "incomplete": me.get("incomplete_datagrams", 0)}
    return got


def disagreements(path, mtu: int = 1500) -> List[str]:
    """Where mssdiag and tshark differ, per connection direction: SYN MSS, largest payload (or
    "captured before segmentation" where tshark's payload exceeds the MSS), PTBs tied to the
    connection, fragments of reassembled datagrams. Empty: they agree."""
    theirs, ours = tshark_connections(path), our_connections(path, mtu)
    out = []
    for key in sorted(set(theirs) | set(ours), key=str):
        t, o = theirs.get(key), ours.get(key)
        name = f"{key[0]}:{key[1]} -> {key[2]}:{key[3]} #{key[4]}"
        if t is None or o is None:
            out.append(f"{name}: only {'mssdiag' if t is None else 'tshark'} has it")
            continue
        if t["mss"] != o["mss"]:
            out.append(f"{name}: SYN MSS tshark {t['mss']}, mssdiag {o['mss']}")
        if o["segmentation"]:
            limit = o["peer_mss"] if o["peer_mss"] is not None else mtu - 40
            if t["max_len"] <= limit:
                out.append(f"{name}: mssdiag says captured before segmentation, tshark's largest is {t['max_len']}")
        elif o["max_payload"] != t["max_len"]:
            out.append(f"{name}: largest payload tshark {t['max_len']}, mssdiag {o['max_payload']}")
        if t["ptb"] != o["ptb"]:
            out.append(f"{name}: PTBs tshark {t['ptb']}, mssdiag {o['ptb']}")
        if (t["fragments"] != o["fragments"]) if not o["incomplete"] else (t["fragments"] > o["fragments"]):
            out.append(f"{name}: fragments tshark {t['fragments']}, mssdiag {o['fragments']}")
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        SYNTH.mkdir(parents=True, exist_ok=True)
        for name, fn in BUILDERS.items():
            (SYNTH / name).write_bytes(fn())
            print(name)
    elif sys.argv[1:2] == ["expect"]:   # expect FILE [second=REL] [mtu=N]: prints the JSON to check
        raw, args = Path(sys.argv[2]).resolve(), {}
        for a in sys.argv[3:]:
            k, v = a.split("=", 1)
            args.setdefault("second", []).append(v) if k == "second" else args.update({k: int(v)})
        print(json.dumps({"args": args, "expect": actual(raw, args)}, indent=1))
    elif sys.argv[1:2] == ["agree"]:   # agree FILE...: per capture, where mssdiag and tshark differ
        ok = 0
        for name in sys.argv[2:]:
            try:
                diff = disagreements(name)
            except Exception as exc:      # a file tshark cannot read: counted as a miss, named
                diff = [f"{type(exc).__name__}: {exc}"]
            ok += not diff
            print(("agree   " if not diff else "DIFFER  ") + name)
            for line in diff[:6]:
                print("        " + line)
        print(f"{ok}/{len(sys.argv) - 2} captures agree with tshark per connection")
