"""Without the network: the per-hop trace and the clamp locator on a path
simulated in-process (routers with their own next-hop MTUs, 'time exceeded' budgets and
quote lengths, their quotes dissected by scapy as the capture does), the verdict texts,
the unprivileged used-MSS accounting, the schema of the new result fields, and the
packets scapy builds for the probes."""
from __future__ import annotations

import queue
import threading

import pytest

from scapy.layers.inet import ICMP, IP, TCP
from scapy.layers.inet6 import IPv6

from toolkit.probe import packets, trace
from toolkit.probe.mss import MssCheck
from toolkit.probe.pmtu import Search
from toolkit.probe.reply import Reply
from toolkit.probe.result import ProbeResult
from toolkit.rules import probed


class Router:
    def __init__(self, address, mtu, toobig=True, te_budget=None, quote=None, clamp=None):
        self.address, self.mtu, self.toobig, self.te_budget = address, mtu, toobig, te_budget
        self.quote, self.clamp = quote, clamp      # bytes of the TCP header quoted; MSS it sets on forwarding


class Path:
    """client -> routers -> target; a probe of TTL t expires at router t."""

    def __init__(self, routers, target="t", local_mtu=1500):
        self.routers, self.target, self.local_mtu = routers, target, local_mtu
        self.replies: "queue.Queue[Reply]" = queue.Queue()

    def _later(self, r):
        threading.Timer(0.001, self.replies.put, (r,)).start()

    def send(self, method, size, key, ttl):
        mss = size if method == "syn" else None
        wire = size if method != "syn" else 44
        for i, router in enumerate(self.routers, 1):
            if ttl == i:
                if router.te_budget is not None:
                    if router.te_budget <= 0:
                        return
                    router.te_budget -= 1
                quoted, quote = None, 0
                if method == "syn":
                    # the router's 'time exceeded' quoting our SYN, read as the capture reads it
                    syn = packets.syn("ipv4", "10.0.0.1", "10.0.0.2", key, 80, mss, ttl)
                    quote = syn[:20 + router.quote] if router.quote is not None else syn
                    err = bytes(IP(src="10.0.9.1", dst="10.0.0.1") / ICMP(type=11) / quote)
                    read = packets.classify(packets.dissect(err, 0x0800))
                    quoted, quote = read.quoted, read.quote
                self._later(Reply(self.target, method, key, "ttl", router.address, quoted=quoted, quote=quote))
                return
            if wire > router.mtu:
                if router.toobig:
                    self._later(Reply(self.target, method, key, "toobig", router.address, mtu=router.mtu))
                return
            if mss is not None and router.clamp:
                mss = min(mss, router.clamp)
        self._later(Reply(self.target, method, key, "pass", self.target, ttl=64 - len(self.routers)))


@pytest.fixture(autouse=True)
def quick_rounds(monkeypatch):
    from toolkit.probe import pmtu
    monkeypatch.setattr(pmtu, "MIN_WAIT", 0.02)


def search_and_trace(path: Path, **kw):
    s = Search("ipv4", path.local_mtu, path.send, path.replies, timeout=0.2, methods=("icmp",), icmp_wait=0.1, **kw)
    v = s.run()
    hops, bh, notes = s.drive(trace.trace(s, "icmp", path.local_mtu, path.target))
    return s, v, hops, bh, notes


def brief(hops):
    return [(h["ttl"], h["address"], h["mtu"], h["reported_mtu"]) for h in hops]


def test_trace_three_routers_different_mtus():
    path = Path([Router("r1", 1480), Router("r2", 1400), Router("r3", 1280)])
    _s, v, hops, bh, _notes = search_and_trace(path)
    assert (v.pmtu, v.method) == (1280, "icmp")
    assert brief(hops) == [(1, "r1", 1500, 1480), (2, "r2", 1480, 1400), (3, "r3", 1400, 1280), (4, "t", 1280, None)]
    assert bh is None


def test_trace_brackets_a_black_hole():
    """r2's next link is 1400 and it says nothing: 1500-byte probes reach r2 (hop 2) but
    not the target (hop 3); the trace goes on at the PMTU the search inferred."""
    path = Path([Router("r1", 1500), Router("r2", 1400, toobig=False)])
    _s, v, hops, bh, _notes = search_and_trace(path)
    assert (v.pmtu, v.black_hole) == (1400, True)
    assert bh == {"size": 1500, "after_ttl": 2, "after": "r2", "before_ttl": 3, "before": "t"}
    assert brief(hops) == [(1, "r1", 1500, None), (2, "r2", 1500, None), (3, "t", 1400, None)]
    assert hops[2]["silent_at"] == 1500


def test_trace_through_a_router_whose_time_exceeded_is_used_up():
    """r2 has no 'time exceeded' left (rate limit): its hop shows no address, the MTUs on
    either side are still exact, and the note says why."""
    path = Path([Router("r1", 1480), Router("r2", 1480, te_budget=0), Router("r3", 1280)])
    _s, _v, hops, _bh, notes = search_and_trace(path)
    assert brief(hops) == [(1, "r1", 1500, 1480), (2, None, None, None), (3, "r3", 1480, 1280), (4, "t", 1280, None)]
    assert hops[1]["silent"] and any("rate-limited" in n for n in notes)


def clamp(path: Path, sent=1460):
    s = Search("ipv4", 1500, path.send, path.replies, timeout=0.2, methods=("icmp",))
    return s.drive(trace.clamp_location(s, sent, len(path.routers) + 1))


def test_clamp_located_after_the_router_that_rewrites():
    rec = clamp(Path([Router("r1", 1500), Router("r2", 1500, clamp=536), Router("r3", 1500)]))
    assert (rec["changed_after"], rec["changed_after_ttl"], rec["to"], rec["seen_to_ttl"]) == ("r2", 2, 536, 3)
    assert [h["mss"] for h in rec["hops"]] == [1460, 1460, 536]


def test_clamp_routers_quoting_8_bytes_cannot_show_options():
    rec = clamp(Path([Router("r1", 1500, quote=8), Router("r2", 1500, clamp=536, quote=8)]))
    assert rec["changed_after"] is None and rec["seen_to_ttl"] is None
    assert "8 bytes" in rec["note"]
    # one router quoting enough: how far we could see, and that the change is beyond it
    rec = clamp(Path([Router("r1", 1500), Router("r2", 1500, quote=8)]))
    assert rec["seen_to_ttl"] == 1 and rec["to"] is None and "unchanged as far as hop 1" in rec["note"]
    # the hop before the change quoted too little: a range, not a router
    rec = clamp(Path([Router("r1", 1500), Router("r2", 1500, clamp=536, quote=8), Router("r3", 1500)]))
    assert rec["to"] == 536 and rec["changed_after"] is None and "between hop 1 and hop 2" in rec["note"]


def test_each_hop_says_how_many_bytes_of_our_syn_it_quoted():
    rec = clamp(Path([Router("r1", 1500, quote=8), Router("r2", 1500, quote=12), Router("r3", 1500)]))
    assert [h["quoted"] for h in rec["hops"]] == [8, 12, 24]     # the SYN's TCP header: 20 + MSS option 4


def test_clamp_finding_replaces_the_legacy_guess():
    r = ProbeResult("t", address="10.0.4.2", pmtu=1500, pmtu_method="local", local_mtu=1500)
    r.mss_ports = [{"port": 21, "sent": 1460, "synack": 536, "used": 524, "used_options": 12, "bytes": 6000}]
    probed.judge(r)
    assert "mss-536-legacy" in r.codes()
    r.clamp = {"sent": 1460, "changed_after": "10.0.2.2", "changed_after_ttl": 2, "to": 536, "seen_to_ttl": 3,
               "hops": []}
    probed.judge(r)
    assert "mss-536-legacy" not in r.codes() and "mss-clamped" in r.codes()
    f = next(f for f in r.findings if f["code"] == "mss-clamped")
    assert "after hop 2 (10.0.2.2)" in f["text"] and f["confidence"] == "high"


@pytest.mark.parametrize("pmtud,code", [
    ({"port": 21, "verdict": "honours", "mtu": 1280, "segment": 1460, "df_before": True, "after": 1240,
      "df_after": True, "waited_s": 0.001}, "target-honours-ptb"),
    ({"port": 21, "verdict": "ignores", "mtu": 1280, "segment": 1460, "df_before": True, "after": 1460,
      "df_after": True, "waited_s": 0.7}, "target-ignores-ptb"),
    ({"port": 21, "verdict": "clears-df", "mtu": 1280, "segment": 1460, "df_before": False, "after": 512,
      "df_after": False, "waited_s": 0.7}, "target-clears-df"),
])
def test_pmtud_findings(pmtud, code):
    r = ProbeResult("t", address="10.0.2.2", pmtu=1500, pmtu_method="local", local_mtu=1500, pmtud=pmtud)
    probed.judge(r)
    assert r.codes() == [code]
    assert ProbeResult.from_dict(r.to_dict()) == r


def test_unprivileged_used_mss_counts_the_agreed_options():
    """TCP_INFO of a 536 sender with timestamps: rcv_mss 524, tcpi_options says timestamps.
    The 12 bytes are counted, so the legacy host is recognised, and the options are named."""
    c = MssCheck("ipv4", "10.0.2.2", 21, "10.0.1.2")
    c.received = 6000
    c.kernel = {"snd_mss": 524, "rcv_mss": 524, "pmtu": 1500, "advmss": 1460, "options": 1 | 2 | 4}
    m = c.result()
    assert (m["sent"], m["used"], m["used_options"], m["options"]) == (1460, 524, 12, ["timestamps", "sack",
                                                                                        "window-scale"])
    r = ProbeResult("t", address="10.0.2.2", pmtu=1500, pmtu_method="local", local_mtu=1500, mss_ports=[m])
    probed.judge(r)
    f = next(f for f in r.findings if f["code"] == "mss-536-legacy")
    assert "536-byte segments (524 bytes of data and 12 of TCP options)" in f["text"]
    c.kernel["options"] = 0           # no timestamps: 524 is what it sends, not a 536 sender
    assert c.result()["used_options"] == 0


GOOD = {"target": "h", "address": "10.0.0.1", "trace": {"hops": [
    {"ttl": 1, "address": "10.0.1.1", "rtt_ms": 0.1, "mtu": 1500, "reported_mtu": 1400, "silent": False,
     "silent_at": None}], "black_hole": None, "notes": []},
    "clamp": {"sent": 1460, "changed_after": None, "changed_after_ttl": None, "to": None, "seen_to_ttl": 1,
              "hops": [{"ttl": 1, "address": "10.0.1.1", "mss": 1460, "quoted": 24}], "note": "x", "port": 80},
    "pmtud": {"port": 21, "verdict": "honours", "mtu": 1280, "segment": 1460, "df_before": True, "after": 1240,
              "df_after": True, "waited_s": 0.01},
    "mss": {"port": 21, "sent": 1460, "synack": 1460, "used": 1448, "options": ["timestamps"]}}
WRONG = [
    ("trace", {"hops": [{"ttl": 0}]}, "trace.hops[0].ttl: 0 is outside 1..255"),
    ("trace", {"hops": [{"ttl": 1, "mtu": "1500"}]}, "trace.hops[0].mtu: must be an integer or null"),
    ("trace", {"hops": [{"ttl": 1, "silent": "no"}]}, "trace.hops[0].silent: must be true or false"),
    ("trace", {"hops": [{"ttl": 1, "rtt_ms": float("nan")}]}, "trace.hops[0].rtt_ms: NaN is not a finite number"),
    ("trace", {"hops": [{"ttl": 1, "address": "router"}]}, "is not an IP address"),
    ("trace", {"hops": [], "black_hole": {"size": 1500}}, "trace.black_hole.before_ttl: missing"),
    ("trace", [], "trace: must be an object or null, not a list"),
    ("clamp", {"sent": 1460, "to": True}, "clamp.to: must be an integer or null, not true"),
    ("clamp", {"to": 536}, "clamp.sent: missing"),
    ("pmtud", {"port": 21, "verdict": "maybe"}, "pmtud.verdict: the string 'maybe' is not one of"),
    ("pmtud", {"port": 21, "verdict": None, "df_after": "yes"}, "pmtud.df_after: must be true, false or null"),
    ("mss", {"options": ["timestamps", "jumbo"]}, "mss.options[1]: the string 'jumbo' is not one of"),
]


def test_new_fields_round_trip_and_are_checked():
    r = ProbeResult.from_dict(GOOD)
    assert r.to_dict()["trace"] == GOOD["trace"] and r.pmtud["verdict"] == "honours"
    for name, value, reason in WRONG:
        with pytest.raises(ValueError) as exc:
            ProbeResult.from_dict({**GOOD, name: value})
        assert str(exc.value).startswith(name) and reason in str(exc.value), (name, str(exc.value))


def test_probe_packets_are_whole_and_checksummed():
    """Every probe, the SYN and the forged 'too big' have their exact size, and scapy,
    recomputing every checksum and length of what it reads back, makes the same bytes."""
    def recomputed(p):
        for layer in (p, p.payload):
            for name in ("chksum", "cksum", "len", "plen"):
                if name in layer.fields:
                    delattr(layer, name)
        return bytes(p.__class__(bytes(p)))

    for fam, src, dst in (("ipv4", "10.0.0.1", "10.0.0.2"), ("ipv6", "fd00::1", "fd00::2")):
        cls = IP if fam == "ipv4" else IPv6
        for method in ("icmp", "udp", "tcp"):
            for size, key in ((576, 1), (1280, 77), (1500, 3999)):
                data = packets.probe(fam, method, src, dst, size, key, 7, port=80)
                assert len(data) == size and recomputed(cls(data)) == data, (fam, method, size)
        syn = packets.syn(fam, src, dst, 1, 80, 1460, 3)
        assert recomputed(cls(syn)) == syn and cls(syn)[TCP].options == [("MSS", 1460)]
        ptb = packets.too_big(fam, dst, src, 1280, syn)
        assert recomputed(cls(ptb)) == ptb


def test_pmtud_verdict_as_a_triage_finding_with_per_os_advice():
    """What triage's rule gets: Finding in the triage vocabulary, the platform's advice
    first (VOS: min_mss to the path, since STCP does no PMTU discovery), then the network's."""
    from toolkit import platforms
    p = ProbeResult("vos1", address="10.0.2.2", pmtu=1400, pmtu_method="icmp", local_mtu=1500,
                    pmtud={"port": 21, "verdict": "ignores", "mtu": 1280, "segment": 1360, "df_before": True,
                           "after": 1360, "df_after": True, "waited_s": 0.7})
    probed.judge(p)
    f = probed.target_pmtud(p, platforms.get("vos"), "14.7.1")
    assert (f.code, f.severity, f.confidence) == ("target-ignores-ptb", "problem", "high")
    codes = [r.code for r in f.recommendations]
    assert codes[0] == "vos-set-stcp-param-min-mss" and codes[-1] == "net-clamp-mss"
    assert "set_stcp_param min_mss 1380" in f.recommendations[0].commands[0]
    linux = probed.target_pmtud(ProbeResult.from_dict({**p.to_dict(), "pmtud": {**p.pmtud, "verdict": "clears-df",
                                                                                   "df_before": False}}),
                                  platforms.get("linux"))
    assert linux.code == "target-clears-df" and linux.recommendations[0].code == "linux-pmtu-disc-on"
    ok = probed.target_pmtud(ProbeResult.from_dict({**p.to_dict(), "pmtud": {**p.pmtud, "verdict": "honours"}}))
    assert (ok.code, ok.severity, ok.recommendations) == ("target-honours-ptb", "info", [])
    assert probed.target_pmtud(ProbeResult("x")) is None
