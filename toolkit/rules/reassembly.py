"""Fragmentation evidence from netstat snapshots and their deltas (seed 004, Figures 6a-6g)."""
from __future__ import annotations

from typing import List

from toolkit import platforms
from toolkit.findings import Finding, Recommendation

FAMILIES = ("ipv4", "ipv6")


def _rate(delta, family: str, counter: str) -> str:
    per = delta.per_hour(family)
    if per is None or per.get(counter) is None:
        return ""
    return f" ({per[counter]:g} per hour)"


def _span(d) -> str:
    span = f"{d.from_} -> {d.to}"
    if d.elapsed_s:
        span += f", {d.elapsed_s / 3600:g} h"
    return span


def _increases(host):
    """(delta, family, increases) for every pair of snapshots and family with counters."""
    for d in host.deltas:
        for fam in FAMILIES:
            v = getattr(d, fam)
            if v:
                yield d, fam, v


def _find_sender(host) -> Recommendation:
    os_name = host.facts.os
    cmds = ["# on a Linux box on the host's segment (or a SPAN port), list who sends fragments:",
            "tcpdump -ni <interface> 'ip[6:2] & 0x3fff != 0' -c 200",
            "tcpdump -ni <interface> 'ip6 and ip6[6] == 44' -c 200"]
    caveats = ["Whoever sends the fragments has an MSS or MTU above the path: fix that sender (its MSS, "
               "PMTU discovery, or the ICMP filter that blinds it), not this host.",
               "A peer can also send large UDP datagrams (DNS, NFS, syslog): then the application's size is the fix."]
    own = getattr(platforms.get(os_name), "CAPTURE_CAVEAT", None)
    if own:
        caveats.insert(0, own)
    return Recommendation("find-fragment-sender", "Find which peer sends fragments", cmds,
                          applies_to="any capture point on the host's segment", where="capture host",
                          caveats=caveats, scope="network")


def arriving(host) -> List[Finding]:
    out = []
    for d, fam, v in _increases(host):
        reqds, oks = v.get("ReasmReqds"), v.get("ReasmOKs")
        if not reqds and not oks:
            continue
        unit = d.reasm_unit
        ev = [f"{fam} {_span(d)}: "
              + (f"+{reqds} fragments needing reassembly{_rate(d, fam, 'ReasmReqds')}" if reqds else "")
              + (", " if reqds and oks else "")
              + (f"+{oks} datagrams reassembled{_rate(d, fam, 'ReasmOKs')}" if oks else "")]
        r = d.ratios(fam)
        if r.get("fragments_per_datagram"):
            ev.append(f"{r['fragments_per_datagram']:g} fragments per reassembled datagram")
        if unit != "both":
            ev.append(f"this OS counts only {unit} (seed 004 Figures 6d-6f)")
        ev.append("some peer sends datagrams larger than the path carries, and a router fragments them")
        conf = "high" if (reqds or 0) + (oks or 0) >= 4 else "medium"
        out.append(Finding("reassembly-active", f"Fragments arriving ({fam}): reassembly counters grew",
                           ev, conf, "problem", [_find_sender(host)],
                           {"family": fam, "from": d.from_, "to": d.to, "elapsed_s": d.elapsed_s,
                            "increase": v, "per_hour": d.per_hour(fam)}))
    if out or host.deltas:
        return out
    # One snapshot only: totals since boot say it happened, not that it still does.
    for s in host.snapshots[-1:]:
        for fam in FAMILIES:
            v = getattr(s, fam) or {}
            total = v.get("ReasmReqds") or v.get("ReasmOKs")
            if total:
                out.append(Finding("reassembly-seen", f"Fragments have arrived since boot ({fam})",
                                   [f"{fam} {s.taken_at or s.source}: ReasmReqds {v.get('ReasmReqds')}, "
                                    f"ReasmOKs {v.get('ReasmOKs')} since the counters started",
                                    "one snapshot cannot tell whether it is still happening: take a second "
                                    "netstat an hour later and run triage on both"],
                                   "low", "info", [], {"family": fam, "totals": v}))
    return out


def failing(host) -> List[Finding]:
    out = []
    for d, fam, v in _increases(host):
        fails, timeouts = v.get("ReasmFails") or 0, v.get("ReasmTimeout") or 0
        if not fails and not timeouts:
            continue
        r = d.ratios(fam)
        ev = [f"{fam} {_span(d)}: +{fails} reassembly failures{_rate(d, fam, 'ReasmFails')}"
              + (f", +{timeouts} fragments dropped after timeout{_rate(d, fam, 'ReasmTimeout')}" if timeouts else "")]
        if r.get("reasm_fail_share") is not None:
            ev.append(f"{100 * r['reasm_fail_share']:.2f}% of reassemblies fail")
        ev.append("fragments are being lost: each loss costs the whole segment, retransmitted (seed 004)")
        out.append(Finding("reassembly-failing", f"Reassembly failures rising ({fam})", ev, "high", "problem",
                           [_find_sender(host)],
                           {"family": fam, "fails": fails, "timeouts": timeouts, "per_hour": d.per_hour(fam)}))
    return out


def outbound(host) -> List[Finding]:
    out = []
    for d, fam, v in _increases(host):
        made, fails = (v.get("FragOKs") or 0) + (v.get("FragCreates") or 0), v.get("FragFails") or 0
        if not made and not fails:
            continue
        ev = [f"{fam} {_span(d)}: +{v.get('FragOKs') or 0} datagrams fragmented, +{v.get('FragCreates') or 0} "
              f"fragments created, +{fails} could not be fragmented (DF set)"]
        ev.append("this host sends datagrams larger than its next hop's MTU: its own MSS/MTU or an "
                  "application's UDP size is too big for the path")
        plat = host.platform
        recs = plat.black_hole(host.path_mtu()[0], host.facts.release, fam) if plat else []
        out.append(Finding("fragmenting-outbound", f"This host fragments what it sends ({fam})", ev,
                           "high" if fails or made >= 4 else "medium", "warning", recs,
                           {"family": fam, "increase": v}))
    return out
