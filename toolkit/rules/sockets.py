"""What the host's socket table and route caches say about its peers (parsers/evidence.py):
which peers send 536-byte segments, which paths swallow large segments (black holes), and
which paths told the host a smaller MTU.

Sockets are grouped by peer address. Per socket `ss -ti` says what this host sends (`mss`:
payload after the TCP options both ends agreed on), what the peer sends (`rcvmss`, the
largest segment seen: an estimate that starts at 536 before data arrives, so it counts only
with data received), the path MTU the socket uses (`pmtu`) and the retransmission timeouts
in a row (`backoff`). The interface MTU is the host file's `mtu`, else the largest `pmtu`
of its sockets (its local peers), else 1500 assumed.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from toolkit import calc
from toolkit.findings import Finding, Recommendation
from toolkit.numbers import count
from toolkit.platforms import network
from toolkit.rules import impact
from toolkit.rules.fragments import counted

LEGACY = 536
# What a 536 MSS leaves per segment after the options both ends negotiated: none, timestamps
# (10 + 2 of padding), TCP-MD5 (18 + 2), both; and 512, TCP_OS's default before 14.7.
OPTIONS = {0: "", 12: "536 less 12 bytes of timestamps", 20: "536 less 20 bytes of TCP-MD5 signature",
           32: "536 less 12 bytes of timestamps and 20 of TCP-MD5 signature"}
LEGACY_SIZES = {LEGACY - k: why for k, why in OPTIONS.items()}
LEGACY_SIZES[512] = "TCP_OS's default MSS before VOS 14.7 (otp-868)"
MIN_SEGMENTS = 8          # data segments received before rcvmss says what the peer sends
BACKOFF = 3               # timeouts in a row that make a socket look black-holed
MAX_SHOWN = 12


def _sockets(host) -> List:
    """Every socket of the host's socket tables (the last table's copy of a socket wins)."""
    seen: Dict[Tuple[str, str, str, str], object] = {}
    for ev in host.evidence:
        if ev.kind == "sockets":
            for s in ev.items:
                seen[(s.local, s.local_port, s.peer, s.peer_port)] = s
    return list(seen.values())


def _routes(host) -> Tuple[bool, Dict[str, object]]:
    """(whether a route cache was given, destination -> its learned route)."""
    given = False
    learned: Dict[str, object] = {}
    for ev in host.evidence:
        if ev.kind != "routes":
            continue
        cache = [r for r in ev.items if r.cache]
        if cache or "cache" in ev.format or "destinationcache" in ev.format or ev.os == "hpux":
            given = True
        for r in ev.items:
            if r.mtu and (r.cache or ev.os == "hpux"):
                learned[r.host] = r
    return given, learned


def interface_mtu(host, socks) -> Tuple[int, str]:
    if host.facts.mtu:
        return host.facts.mtu, "the host file's mtu"
    seen = [s.number("pmtu") for s in socks if s.number("pmtu")]
    if seen:
        return max(seen), "the largest pmtu of its sockets"
    return 1500, "Ethernet assumed"


def _by_peer(socks) -> Dict[str, list]:
    out: Dict[str, list] = {}
    for s in socks:
        out.setdefault(s.peer, []).append(s)
    return out


def _where(s) -> str:
    return f"{s.local}:{s.local_port} -> {s.peer}:{s.peer_port}"


def legacy_size(s) -> Optional[Tuple[str, int, str]]:
    """('sends' | 'advertised', size, why) when a socket shows a 536-byte peer."""
    rcvmss, segs, got = s.number("rcvmss"), s.number("data_segs_in"), s.number("bytes_received")
    if rcvmss in LEGACY_SIZES:
        enough = (segs is not None and segs >= MIN_SEGMENTS and got is not None and got >= 0.75 * rcvmss * segs) \
            or (segs is None and got is not None and got >= 2 * MIN_SEGMENTS * rcvmss and rcvmss != LEGACY)
        if enough:
            return "sends", rcvmss, LEGACY_SIZES[rcvmss]
    mss, pmtu = s.number("mss"), s.number("pmtu")
    if s.state in ("SYN-SENT", "SYN-RECV"):
        return None             # before the handshake ends `mss` is the 536 default, not the peer's
    if mss in LEGACY_SIZES and (pmtu is None or pmtu - 40 > LEGACY):
        return "advertised", mss, LEGACY_SIZES[mss]
    return None


def legacy_peers(host) -> List[Finding]:
    """Peers that send (or ask for) 536-byte segments although the path carries more."""
    socks = _sockets(host)
    if not socks:
        return []
    mtu, mtu_from = interface_mtu(host, socks)
    peers = []
    for peer, group in _by_peer(socks).items():
        hits = [(s, legacy_size(s)) for s in group]
        hits = [(s, h) for s, h in hits if h]
        if hits:
            peers.append((peer, group, hits))
    if not peers:
        return []
    ev = []
    data = []
    for peer, group, hits in peers[:MAX_SHOWN]:
        s, (how, size, why) = hits[0]
        path = s.number("pmtu") or mtu
        what = (f"sends {size}-byte segments" if how == "sends" else f"advertised an MSS of {LEGACY} "
                f"(this host sends it {size}-byte segments)")
        ev.append(f"{peer}: {what}" + (f" ({why})" if why else "") + f" on {len(hits)} of its {len(group)} "
                  f"socket(s), e.g. {_where(s)} mss:{s.number('mss')} rcvmss:{s.number('rcvmss')} "
                  f"pmtu:{s.number('pmtu')}; the path carries {path - calc.IPV4 - calc.TCP}")
        data.append({"peer": peer, "size": size, "how": how, "sockets": [_where(x) for x, _ in hits],
                     "pmtu": s.number("pmtu")})
    if len(peers) > MAX_SHOWN:
        ev.append(f"and {len(peers) - MAX_SHOWN} more peer(s)")
    ev.append(f"a legacy stack: VOS STCP sends 536-byte segments to every non-local peer whatever MSS is "
              f"advertised to it, TCP_OS before 14.7 512 (Stratus \"Tuning your MSS\"); the fix is on that peer")
    after = mtu - calc.IPV4 - calc.TCP
    gain = impact.mss_change(LEGACY, after)
    recs = [Recommendation(
        "peer-raise-legacy-mss", f"Raise the MSS on the peer{'s' if len(peers) > 1 else ''} "
        f"({', '.join(p for p, _, _ in peers[:4])}{', ...' if len(peers) > 4 else ''})",
        ["# on a VOS STCP peer, 14.7 and later (at the end of start_stcp.cm):",
         f"analyze_system -request_line 'set_stcp_param min_mss {after + calc.TCP}' -quit",
         "# on a TCP_OS peer:",
         f"analyze_system -request_line 'set_longword tcpos_default_mss$ {format(after, 'x')}' -quit",
         "# then triage that host itself for the exact commands of its release:",
         "mssdiag triage <its netstat dump> --os vos|tcpos --release <its release>"],
        applies_to="the peer (a legacy stack)", where="the peer's console",
        caveats=["Which stack the peer runs is not known from this host: a capture of its SYN-ACK shows the MSS it "
                 "advertises (tcpdump -ni any 'tcp[tcpflags] & tcp-syn != 0' -v)."], impact=gain)]
    names = ", ".join(p for p, _, _ in peers[:3]) + (", ..." if len(peers) > 3 else "")
    return [Finding("peers-536", f"{len(peers)} peer(s) send {LEGACY}-byte segments: {names}", ev, "high", "problem",
                    recs, {"peers": data, "interface_mtu": mtu, "interface_mtu_from": mtu_from, "impact": gain})]


def black_hole_sockets(s, mtu: int) -> bool:
    """A socket stuck sending segments the path swallows: timeouts in a row, its path MTU
    never lowered, almost nothing acknowledged."""
    backoff, pmtu, mss = s.number("backoff"), s.number("pmtu"), s.number("mss")
    if backoff is None or backoff < BACKOFF or pmtu is None or pmtu < mtu:
        return False
    acked = s.number("bytes_acked")
    waiting = (s.number("unacked") or 0) + (s.send_q or 0) + (s.number("notsent") or 0)
    return acked is not None and acked <= 2 * (mss or LEGACY) and waiting > 0


def black_holes(host) -> List[Finding]:
    """Peers whose sockets show the black-hole signature; with the route cache, whether any
    'fragmentation needed' reached this host from them; with the host's counters, whether
    any arrived at all."""
    socks = _sockets(host)
    if not socks:
        return []
    mtu, mtu_from = interface_mtu(host, socks)
    given, learned = _routes(host)
    out = []
    for peer, group in _by_peer(socks).items():
        stuck = [s for s in group if black_hole_sockets(s, mtu)]
        if not stuck:
            continue
        ev = [f"{peer}: {len(stuck)} socket(s) stuck with segments of up to {stuck[0].number('mss')} bytes: "
              + "; ".join(f"{_where(s)} backoff:{s.number('backoff')} pmtu:{s.number('pmtu')} "
                          f"bytes_acked:{s.number('bytes_acked')} "
                          f"retrans:{s.info.get('retrans', '-')}" for s in stuck[:4])
              + (f"; and {len(stuck) - 4} more" if len(stuck) > 4 else ""),
              f"the path MTU these sockets use is still the interface's ({mtu}, {mtu_from}): no "
              "'fragmentation needed' lowered it, while their segments time out again and again"]
        confidence = "medium"
        if given:
            if peer in learned:
                r = learned[peer]
                ev.append(f"but the route cache holds {peer} mtu {r.mtu}: PMTU messages do arrive from that path; "
                          "these sockets time out for another reason")
                continue
            ev.append(f"the route cache holds no learned MTU for {peer}: PTBs never reach this host from that path")
            confidence = "high"
        signals = list(counted(host).signals.values())
        for sig in signals:
            rto, ptb = sig.total("rto", "tcp"), sig.total("ptb-in", "ipv4")
            if rto and ptb == 0:
                ev.append(f"the host's counters agree: {count(rto)} retransmission timeouts and no destination "
                          f"unreachable at all received ({sig.meta.title})")
                confidence = "high"
        fixes = host.platform.black_hole(None, host.facts.release, "ipv4") if host.platform else []
        out.append(Finding("peer-black-hole", f"PMTU black hole towards {peer}", ev, confidence, "problem",
                           [network.allow_icmp("ipv4"), network.clamp(None, "ipv4")] + fixes,
                           {"peer": peer, "sockets": [_where(s) for s in stuck], "interface_mtu": mtu,
                            "route_cache": given, "learned": peer in learned}))
    return out


def learned_mtus(host) -> List[Finding]:
    """Paths that told this host a smaller MTU: the sockets' pmtu and the route caches."""
    socks = _sockets(host)
    given, learned = _routes(host)
    if not socks and not learned:
        return []
    mtu, mtu_from = interface_mtu(host, socks)
    peers: Dict[str, dict] = {}
    for s in socks:
        pmtu = s.number("pmtu")
        if pmtu and pmtu < mtu:
            p = peers.setdefault(s.peer, {"peer": s.peer, "mtu": pmtu, "sockets": [], "route": None})
            p["mtu"] = min(p["mtu"], pmtu)
            p["sockets"].append(_where(s))
    for dst, r in learned.items():
        if r.mtu < mtu or dst in peers:
            p = peers.setdefault(dst, {"peer": dst, "mtu": r.mtu, "sockets": [], "route": None})
            p["route"] = {"mtu": r.mtu, "expires": r.expires, "via": r.via, "dev": r.dev}
            p["mtu"] = min(p["mtu"], r.mtu)
    if not peers:
        return []
    ev = []
    for p in list(peers.values())[:MAX_SHOWN]:
        parts = []
        if p["sockets"]:
            parts.append(f"{len(p['sockets'])} socket(s) with pmtu:{p['mtu']} (e.g. {p['sockets'][0]})")
        if p["route"]:
            r = p["route"]
            parts.append(f"route cache: mtu {r['mtu']}" + (f", expires in {r['expires']} s" if r["expires"] is not None
                                                          else ""))
        ev.append(f"{p['peer']}: learned path MTU {p['mtu']} (interface {mtu}): " + "; ".join(parts))
    if len(peers) > MAX_SHOWN:
        ev.append(f"and {len(peers) - MAX_SHOWN} more destination(s)")
    ev.append("a router on each of these paths said 'fragmentation needed' / 'packet too big' and the host "
              "shrank its packets: PMTU discovery works there; if a filter starts dropping those messages, the "
              "same paths become black holes")
    smallest = min(p["mtu"] for p in peers.values())
    names = ", ".join(list(peers)[:3]) + (", ..." if len(peers) > 3 else "")
    return [Finding("learned-pmtu", f"Smaller path MTU learned for {len(peers)} destination(s): {names}", ev,
                    "high", "info", [network.clamp(smallest, "ipv4")],
                    {"destinations": list(peers.values()), "interface_mtu": mtu, "interface_mtu_from": mtu_from})]
