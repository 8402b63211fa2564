"""What the rest of a dump says about PMTU discovery: "fragmentation needed" / "packet too big"
received and sent, retransmission timeouts rising while no such message arrives (the black-
hole signature), Linux's packetization-layer probing firing, the BSDs' black-hole detection.

Which counter of which OS is which (and whether it counts exactly that, or every ICMP
destination unreachable) is the parser's META.signals; the host's tally folds them per
snapshot (toolkit/tally.py Signals): growth during the observed period when there are two
snapshots, else totals since boot. Advice comes from the host's platform module.
"""
from __future__ import annotations

from typing import List, Optional

from toolkit import sources
from toolkit.findings import Finding
from toolkit.numbers import count, hours
from toolkit.platforms import network
from toolkit.rules.fragments import counted, is_router
from toolkit.tally import Signals

FAMILIES = (("ipv4", "IPv4 'fragmentation needed'"), ("ipv6", "IPv6 'packet too big'"))


def _signals(host) -> List[Signals]:
    return list(counted(host).signals.values())


def _what(s: Signals, what: str, family: str, words: str) -> str:
    """How exactly the counter counts what a rule wants."""
    sig = s.signal(what, family)
    if sig is None or sig.exact:
        return words
    return f"destination unreachables of every code ({sig.note}; {words} are among them)"


def _amount(s: Signals, what: str, family: str) -> Optional[tuple]:
    """(number, 'grew' | 'total') for a signal: its growth when it grew during the observed
    period, else its total since the counters started (0 of the kind that was measured)."""
    grew, total = s.grew(what, family), s.total(what, family)
    if grew:
        return grew, "grew"
    if total:
        return total, "total"
    if total is None:
        return None
    return 0, "grew" if grew is not None else "total"


def _when(s: Signals, kind: str) -> str:
    if kind == "grew":
        return f"during the observed period ({s.intervals} interval(s){', ' + hours(s.seconds) if s.seconds else ''})"
    return f"since the counters started (last snapshot {s.taken})" + (
        ", none during the observed period" if s.intervals else "")


def _learned(host) -> List[str]:
    """The learned path MTUs in the host's route caches, as evidence lines."""
    out = []
    for ev in host.evidence:
        if ev.kind != "routes":
            continue
        for r in ev.items:
            if r.cache and r.mtu:
                out.append(f"{r.host} mtu {r.mtu}" + (f" (expires in {r.expires} s)" if r.expires is not None else ""))
    return out


def _fragfails(host, family: str) -> int:
    """Datagrams this host could not fragment (DF set): each one got a 'fragmentation needed'."""
    t = counted(host)
    return max((p.grew("FragFails") or p.total("FragFails") or 0 for p in t.periods.values()
                if p.family == family), default=0)


def ptb_received(host) -> List[Finding]:
    """Routers told this host to send smaller packets: PMTU discovery works on some path. A
    counter of every destination unreachable (most are port unreachables) counts only when
    the route cache shows a learned MTU too."""
    out = []
    for s in _signals(host):
        for family, words in FAMILIES:
            got = _amount(s, "ptb-in", family)
            if got is None or not got[0]:
                continue
            n, kind = got
            learned = _learned(host)
            if not s.signal("ptb-in", family).exact and not learned:
                continue
            ev = [f"{count(n)} {_what(s, 'ptb-in', family, words)} received {_when(s, kind)} ({s.meta.title})"]
            if learned:
                ev.append("learned path MTUs in the route cache: " + ", ".join(learned[:8])
                          + (f", and {len(learned) - 8} more" if len(learned) > 8 else ""))
            ev.append("a router on some path has a smaller MTU than this host sends, and says so: PMTU discovery "
                      "works there; a filter that starts dropping these messages turns that path into a black hole")
            out.append(Finding("ptb-received", f"Told to send smaller packets ({family})", ev,
                               "high" if s.signal("ptb-in", family).exact else "medium", "info", [],
                               {"family": family, "count": n, "kind": kind, "exact": s.signal("ptb-in", family).exact,
                                "learned": learned}))
    return out


def ptb_sent(host) -> List[Finding]:
    """This host (or router) told senders to shrink: its next hop carries less than they send.
    A counter of every destination unreachable counts only beside datagrams it could not
    fragment (FragFails: each of those got a 'fragmentation needed')."""
    out = []
    router = is_router(host)
    for s in _signals(host):
        for family, words in FAMILIES:
            got = _amount(s, "ptb-out", family)
            if got is None or not got[0]:
                continue
            n, kind = got
            exact = s.signal("ptb-out", family).exact
            dropped = _fragfails(host, family)
            if not exact and not dropped:
                continue
            ev = [f"{count(n)} {_what(s, 'ptb-out', family, words)} sent {_when(s, kind)} ({s.meta.title})"]
            if not exact:
                ev.append(f"{count(dropped)} datagrams could not be fragmented (DF set): each got a "
                          "'fragmentation needed'")
            if router:
                ev.append("as a router it drops packets too big for the next hop that have DF set and tells the "
                          "sender so: senders whose firewall drops that message stall (a black hole for them)")
                recs = [network.clamp(None, family), network.allow_icmp(family)]
            else:
                ev.append("it dropped packets too big for the link they were to leave by (DF set) and told their "
                          "sender: what it sends or forwards is larger than its own link")
                recs = []
            out.append(Finding("ptb-sent", f"Told senders to send smaller packets ({family})", ev,
                               "high" if exact else "medium", "warning" if router and kind == "grew" else "info",
                               recs, {"family": family, "count": n, "kind": kind, "exact": exact, "router": router}))
    return out


def timeouts_without_ptb(host) -> List[Finding]:
    """Retransmission timeouts rising while no 'fragmentation needed' arrives: what a PMTU
    black hole looks like from the host's counters (loss and dead peers look alike, so low)."""
    out = []
    for s in _signals(host):
        rto = _amount(s, "rto", "tcp")
        ptb = [(family, _amount(s, "ptb-in", family)) for family, _ in FAMILIES]
        known = [(family, got) for family, got in ptb if got is not None]
        if rto is None or not rto[0] or not known or any(got[0] for _, got in known):
            continue
        if any(got[1] != rto[1] for _, got in known):
            continue                    # growth of one against totals of the other proves nothing
        n, kind = rto
        none = ", ".join(f"{_what(s, 'ptb-in', f, w)}: 0" for f, w in FAMILIES if f in dict(known))
        ev = [f"{count(n)} retransmission timeouts {_when(s, kind)} ({s.meta.title}), and no "
              f"'fragmentation needed' / 'packet too big' received in that time ({none})",
              "a path that drops packets above its MTU without saying so (a PMTU black hole) looks like this: "
              "segments that fit the interface but not the path time out, again and again; loss and peers "
              "that went away look the same from these counters alone",
              "a socket table (`ss -tin`) and the route cache (`ip route show cache`) taken now name the peers: "
              "mssdiag triage reads them"]
        fixes = host.platform.black_hole(None, host.facts.release, "ipv4") if host.platform else []
        out.append(Finding("timeouts-without-ptb", "Retransmission timeouts with no 'fragmentation needed' "
                           "received (black-hole signature)", ev, "low",
                           "warning" if kind == "grew" else "info",
                           fixes + [network.allow_icmp("ipv4")],
                           {"timeouts": n, "kind": kind, "ptb_received": {f: got[0] for f, got in known}}))
    return out


def plpmtud(host) -> List[Finding]:
    """Linux's packetization-layer PMTU discovery (tcp_mtu_probing) has been probing."""
    out = []
    for s in _signals(host):
        fail, success = _amount(s, "mtup-fail", "tcp"), _amount(s, "mtup-success", "tcp")
        if not ((fail and fail[0]) or (success and success[0])):
            continue
        kind = (fail or success)[1]
        nf, ns = (fail or (0, kind))[0], (success or (0, kind))[0]
        ev = [f"TCP MTU probing (RFC 4821) {_when(s, kind)}: {count(nf)} probe(s) failed, {count(ns)} succeeded "
              f"({s.meta.title}: TcpExtTCPMTUPFail, TcpExtTCPMTUPSuccess)",
              "net.ipv4.tcp_mtu_probing is on (1 or 2): the stack searched for the path MTU itself"
              + ("; failed probes are packets a path dropped without a word: a black hole it worked around"
                 if nf else "")]
        plat = host.platform
        recs = plat.mtu_probing(True) if plat is not None and hasattr(plat, "mtu_probing") else []
        if nf:
            recs = [network.allow_icmp("ipv4"), network.clamp(None, "ipv4")] + recs
        out.append(Finding("plpmtud-active", "TCP MTU probing is finding smaller paths" if nf
                           else "TCP MTU probing is on", ev, "high", "warning" if nf else "info", recs,
                           {"failed": nf, "succeeded": ns, "kind": kind}))
    return out


def blackhole_detected(host) -> List[Finding]:
    """The BSDs' (and AIX's) own black-hole detection lowered connections' MSS."""
    out = []
    for s in _signals(host):
        got = _amount(s, "blackhole", "tcp")
        if got is None or not got[0]:
            continue
        n, kind = got
        sig = s.signal("blackhole", "tcp")
        ev = [f"{count(n)} {sig.key.split(': ', 1)[1]!r} {_when(s, kind)} ({s.meta.title}: {sig.note})",
              "the stack saw large segments go unanswered and sent smaller ones: some path drops packets above its "
              f"MTU without 'fragmentation needed' ({sources.RFC1191})"]
        fixes = host.platform.black_hole(None, host.facts.release, "ipv4") if host.platform else []
        out.append(Finding("blackhole-detected", "The stack detected PMTU black holes", ev, "high",
                           "warning", [network.allow_icmp("ipv4"), network.clamp(None, "ipv4")] + fixes,
                           {"count": n, "kind": kind, "counter": sig.key}))
    return out
