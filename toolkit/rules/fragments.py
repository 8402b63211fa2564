"""What the IP counters say: fragments arriving, reassembly failing, the host fragmenting,
DF drops, and routers (Stratus "Tuning your MSS", Figures 6a-6g, for what each OS counts).

Two kinds of evidence, never mixed up:
- growth between snapshots: it happened during the observed period, at a known rate;
- totals since boot in the last snapshot: it happened, but one snapshot cannot say when.
Each rule reports once per host and family for the whole period (total, first and last
interval it grew, peak per hour), never once per pair of snapshots. What a counter counts
(fragments or datagrams) comes from the OS's parser META, so every sentence says it.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import parsers
from parsers.model import Meta
from toolkit import sources, tally
from toolkit.diff import ratios
from toolkit.findings import Finding
from toolkit.numbers import count, hours, rate, share
from toolkit.platforms import network

FAMILIES = ("ipv4", "ipv6")


Period = tally.Period


def rate_text(p: tally.Period, name: str) -> str:
    avg, peak = p.per_hour(name), p.peak.get(name)
    if avg is None:
        return ""
    text = f" ({rate(avg)} per hour"
    if peak is not None and peak > 1.5 * avg:
        text += f", peak {rate(peak)} per hour"
    return text + ")"


def when_text(p: tally.Period, *names: str) -> str:
    firsts = [p.first[n] for n in names if n in p.first]
    lasts = [p.last[n] for n in names if n in p.last]
    if not firsts:
        return ""
    a, b = min(firsts), max(lasts)
    return f"; grew first in the interval ending {a}" + (f", last in the one ending {b}" if b != a else "")


def periods(host) -> List[tally.Period]:
    """The counters of each family (and format, when a host has two) of a host: its tally,
    folded by the host model as the snapshots were read."""
    return list(counted(host).periods.values())


# ----------------------------------------------------------------------------- what the counters mean


def reasm_words(meta: Meta, reqds: Optional[int], oks: Optional[int]) -> str:
    """The reassembly counters in words, saying what this OS counts."""
    if meta.reasm_unit == "datagrams":
        return (f"{count(reqds)} datagrams reassembled ({meta.title} counts reassembled datagrams, not "
                f"fragments, in its 'fragments received' line: {sources.MSS}, Figure 6f)")
    if meta.reasm_unit == "fragments":
        return (f"{count(reqds)} fragments received ({meta.title} counts fragments only and no reassembled "
                f"datagrams; FTX 3.4 counts datagrams in that line: {sources.MSS}, Figures 6d-6e)")
    parts = []
    if reqds:
        parts.append(f"{count(reqds)} fragments received for reassembly")
    if oks:
        parts.append(f"{count(oks)} datagrams reassembled")
    r = ratios({"ReasmReqds": reqds, "ReasmOKs": oks}, meta)["fragments_per_datagram"]
    text = ", ".join(parts)
    if r:
        text += f" (about {r:.1f} fragments per datagram)"
    return text


def fails_words(meta: Meta, fails: Optional[int], timeouts: Optional[int]) -> str:
    unit = "fragments dropped" if meta.fails_unit == "fragments" else "reassemblies failed"
    text = f"{count(fails or 0)} {unit}"
    if timeouts:
        what = ("datagrams given up after the reassembly timeout" if meta.timeout_unit == "datagrams"
                else "fragments dropped after the reassembly timeout")
        text += f", {count(timeouts)} {what}"
    return text


def fail_share(meta: Meta, values: Dict[str, Optional[int]]) -> Optional[float]:
    return ratios(values, meta)["reasm_fail_share"]


def fraction(part: Optional[int], whole: Optional[int]) -> Optional[float]:
    """part / whole, or None when unknown or above 1 (32-bit counters that wrapped, or that disagree)."""
    if not part or not whole or part > whole:
        return None
    return part / whole


WRAPPED = ("more than the total it is a share of: 32-bit counters have wrapped (or count differently), "
           "so no share can be taken from these totals")


def _sent(p: Period, totals: bool) -> Optional[int]:
    """Datagrams this host sent (its own plus forwarded), the base of the fragmentation share."""
    src = p.totals if totals else p.increase
    own, fwd = src.get("OutRequests"), src.get("ForwDatagrams")
    if own is None:
        return None
    return own + (fwd or 0)


# ----------------------------------------------------------------------------- routers


def is_router(host) -> bool:
    """A network device's own CLI (its parser's META.role), or a forwarding host: a snapshot
    says forwarding is on and forwards more than it delivers, or (when it does not say)
    forwards a lot more than it delivers (the host's tally keeps both verdicts)."""
    return counted(host).router


def counted(host) -> tally.Tally:
    if host.tally is None:
        host.tally = tally.of(host.snapshots, host.deltas)
    return host.tally


def _router_note(host) -> str:
    t = counted(host)
    if t.forwarded:
        fwd, dlv, forwarding = t.forwarded
        return (f"a router: {count(fwd)} datagrams forwarded, {count(dlv)} delivered "
                "to itself" + (" (IP forwarding on)" if forwarding else ""))
    meta = getattr(parsers.REGISTRY.get(t.last_os), "META", None) if t.last_os else None
    return f"a router ({meta.title})" if meta else "a router"


# ----------------------------------------------------------------------------- the rules


def _counter_notes(host, family: str, values) -> List[str]:
    """What the platform knows about its own counters being wrong (a known bug)."""
    notes = getattr(host.platform, "counter_notes", None)
    return notes(family, values) if notes else []


def _capture_caveat(host) -> Optional[str]:
    plat = host.platform
    return getattr(plat, "CAPTURE_CAVEAT", None)


def arriving(host) -> List[Finding]:
    """Fragments arrive and are reassembled: some peer sends datagrams above the path MTU."""
    out = []
    router = is_router(host)
    for p in periods(host):
        fam = p.family
        reqds, oks = p.grew("ReasmReqds"), p.grew("ReasmOKs")
        sender = network.find_senders(_capture_caveat(host))
        where = ("fragments of traffic it forwards or that is addressed to it reach this router (a Linux router "
                 "with connection tracking reassembles forwarded fragments)") if router else \
            "some peer sends datagrams larger than the path carries, and a router fragments them"
        if p.observed and (reqds or oks):
            ev = [f"{fam}, {p.span} ({hours(p.seconds)}): +" + reasm_words(p.meta, reqds or None, oks or None)
                  + rate_text(p, "ReasmReqds" if reqds else "ReasmOKs") + when_text(p, "ReasmReqds", "ReasmOKs"),
                  where]
            received = p.grew("InReceives")
            frac = fraction(reqds, received) if p.meta.reasm_unit != "datagrams" else None
            if frac is not None:
                ev.append(f"{share(frac)} of the datagrams received in that time were fragments")
            out.append(Finding("reassembly-active", f"Fragments arriving ({fam}): reassembly counters grew",
                               ev, "high" if reqds + oks >= 4 else "medium", "problem", [sender],
                               {"family": fam, "span": p.span, "elapsed_s": p.seconds or None, "increase": p.increase,
                                "per_hour": {k: p.per_hour(k) for k in ("ReasmReqds", "ReasmOKs")},
                                "peak_per_hour": p.peak, "router": router}))
            continue
        t_reqds, t_oks = p.total("ReasmReqds"), p.total("ReasmOKs")
        if not (t_reqds or t_oks):
            continue
        received = p.total("InReceives")
        frac = fraction(t_reqds, received) if p.meta.reasm_unit != "datagrams" else None
        big = (frac is not None and frac >= 0.01) or (frac is None and (t_reqds or t_oks or 0) >= 100_000)
        ev = [f"{fam}, totals since the counters started (last snapshot {p.taken}): "
              + reasm_words(p.meta, t_reqds, t_oks)]
        if frac is not None:
            ev.append(f"that is {share(frac)} of the {count(received)} datagrams received")
        elif t_reqds and received and t_reqds > received:
            ev.append(f"{count(t_reqds)} is {WRAPPED}")
        if p.observed:
            ev.append(f"none arrived during the observed period {p.span} ({hours(p.seconds)}): it happened "
                      "before, or comes and goes")
            conf, sev = "low", "info"
        else:
            ev.append("one snapshot cannot say when it happened: take a second `netstat -s` an hour later and "
                      "run triage on both to see whether it still does")
            conf, sev = "medium", "warning" if big else "info"
        ev.append(where)
        out.append(Finding("reassembly-seen", f"Fragments have arrived since boot ({fam})", ev, conf, sev, [sender],
                           {"family": fam, "totals": p.totals, "share_of_received": frac, "router": router}))
    return out


def failing(host) -> List[Finding]:
    """Reassembly fails or times out: fragments are lost, and each loss costs a whole datagram."""
    out = []
    for p in periods(host):
        fam = p.family
        fails, timeouts = p.grew("ReasmFails"), p.grew("ReasmTimeout")
        cost = ("every lost fragment costs the whole datagram: TCP retransmits the full segment "
                f"({sources.MSS})")
        if p.observed and (fails or timeouts):
            frac = fail_share(p.meta, p.increase)
            ev = [f"{fam}, {p.span} ({hours(p.seconds)}): +" + fails_words(p.meta, fails, timeouts)
                  + rate_text(p, "ReasmFails" if fails else "ReasmTimeout") + when_text(p, "ReasmFails", "ReasmTimeout")]
            if frac is not None:
                ev.append(f"{share(frac)} of reassemblies failed in that time")
            notes = _counter_notes(host, fam, p.increase)
            ev += notes + [cost]
            out.append(Finding("reassembly-failing", f"Reassembly failures rising ({fam})", ev,
                               "low" if notes else "high", "warning" if notes else "problem",
                               [network.find_senders(_capture_caveat(host))],
                               {"family": fam, "fails": fails, "timeouts": timeouts, "share": frac,
                                "per_hour": {k: p.per_hour(k) for k in ("ReasmFails", "ReasmTimeout")},
                                "peak_per_hour": p.peak, "span": p.span}))
            continue
        t_fails, t_timeouts = p.total("ReasmFails"), p.total("ReasmTimeout")
        if not (t_fails or t_timeouts):
            continue
        frac = fail_share(p.meta, p.totals)
        if p.observed:
            sev, conf = "info", "low"
        elif (frac is not None and frac >= 0.05) or (t_timeouts or 0) >= 10_000:
            sev, conf = "problem", "medium"
        elif (frac is not None and frac >= 0.01) or (t_fails or 0) + (t_timeouts or 0) >= 1000:
            sev, conf = "warning", "medium"
        else:
            sev, conf = "info", "medium"
        ev = [f"{fam}, totals since the counters started (last snapshot {p.taken}): "
              + fails_words(p.meta, t_fails, t_timeouts)
              + (f", of {reasm_words(p.meta, p.total('ReasmReqds'), p.total('ReasmOKs'))}"
                 if p.total("ReasmReqds") or p.total("ReasmOKs") else "")]
        if frac is not None:
            ev.append(f"{share(frac)} of reassemblies failed since boot")
        notes = _counter_notes(host, fam, p.totals)
        if notes:
            ev += notes
            conf, sev = "low", "info" if sev == "info" else "warning"
        ev.append(f"none during the observed period {p.span}: it happened before" if p.observed else
                  "one snapshot cannot say when: take a second `netstat -s` later to see whether it still does")
        ev.append(cost)
        out.append(Finding("reassembly-failing", f"Reassembly has failed since boot ({fam}: "
                           + (share(frac) if frac is not None else count(t_fails or t_timeouts)) + ")",
                           ev, conf, sev, [network.find_senders(_capture_caveat(host))],
                           {"family": fam, "fails": t_fails, "timeouts": t_timeouts, "share": frac,
                            "since_boot": True}))
    return out


def _host_fixes(host, family: str):
    """Host-side fixes for what it sends: with a measured path MTU the OS's commands, else
    measure first and only what needs no number."""
    plat = host.platform
    if host.assumed_path_mtu():
        return [network.measure(family)] + (plat.black_hole(None, host.facts.release, family) if plat else [])
    return plat.black_hole(host.path_mtu()[0], host.facts.release, family) if plat else []


def outbound(host) -> List[Finding]:
    """This host fragments what it sends (a router's own finding covers routers)."""
    if is_router(host):
        return []
    out = []
    for p in periods(host):
        fam = p.family
        made, created = p.grew("FragOKs"), p.grew("FragCreates")
        recs = [network.find_large_sends()] + _host_fixes(host, fam)
        if p.observed and (made or created):
            sent = _sent(p, totals=False)
            ev = [f"{fam}, {p.span} ({hours(p.seconds)}): +{count(made)} datagrams fragmented into +{count(created)} "
                  "fragments" + rate_text(p, "FragOKs" if made else "FragCreates") + when_text(p, "FragOKs", "FragCreates")]
            if fraction(made, sent) is not None:
                ev.append(f"{share(fraction(made, sent))} of the {count(sent)} datagrams it sent in that time")
            ev.append("this host sends datagrams larger than its next hop's MTU: UDP applications, or TCP "
                      "without working PMTU discovery")
            out.append(Finding("fragmenting-outbound", f"This host fragments what it sends ({fam})", ev,
                               "high" if made + created >= 4 else "medium", "warning", recs,
                               {"family": fam, "increase": p.increase, "span": p.span,
                                "per_hour": {k: p.per_hour(k) for k in ("FragOKs", "FragCreates")}}))
            continue
        t_made, t_created = p.total("FragOKs"), p.total("FragCreates")
        if not (t_made or t_created):
            continue
        sent = _sent(p, totals=True)
        frac = fraction(t_made, sent)
        ev = [f"{fam}, totals since the counters started (last snapshot {p.taken}): {count(t_made)} datagrams "
              f"fragmented into {count(t_created)} fragments"]
        if frac is not None:
            ev.append(f"that is {share(frac)} of the {count(sent)} datagrams it sent")
        elif t_made and sent:
            ev.append(f"{count(t_made)} datagrams fragmented against {count(sent)} sent is {WRAPPED}")
        ev.append(f"none during the observed period {p.span}: it happened before" if p.observed else
                  "one snapshot cannot say when it happened")
        sev = "info" if p.observed or not ((frac or 0) >= 0.01 or (t_made or 0) >= 100_000) else "warning"
        out.append(Finding("fragmenting-outbound", f"This host has fragmented what it sends since boot ({fam})", ev,
                           "low" if p.observed else "medium", sev, recs,
                           {"family": fam, "totals": p.totals, "share_of_sent": frac, "since_boot": True}))
    return out


def df_drops(host) -> List[Finding]:
    """FragFails: datagrams that needed fragmenting but had DF set (PMTU discovery at work,
    or failing when the ICMP it triggers never reaches the sender)."""
    if is_router(host):
        return []
    out = []
    for p in periods(host):
        fam = p.family
        grew = p.grew("FragFails")
        total = p.total("FragFails")
        if not (grew or total):
            continue
        what = ("datagrams that needed fragmenting but had DF set (or IPv6, which routers never fragment): "
                "the stack dropped them and answered 'fragmentation needed' / 'packet too big'")
        recs = [network.allow_icmp(fam)] + _host_fixes(host, fam)
        if p.observed and grew:
            ev = [f"{fam}, {p.span} ({hours(p.seconds)}): +{count(grew)} " + what + rate_text(p, "FragFails")
                  + when_text(p, "FragFails"),
                  "senders whose ICMP never arrives see a PMTU black hole; on this host, applications sending "
                  "DF datagrams above the interface MTU get errors"]
            out.append(Finding("df-drops", f"Datagrams too big with DF set ({fam}): +{count(grew)}", ev,
                               "high", "warning", recs, {"family": fam, "increase": grew, "span": p.span,
                                                           "per_hour": p.per_hour("FragFails")}))
            continue
        sent = _sent(p, totals=True)
        frac = fraction(total, sent)
        big = total >= 1000 or (frac is not None and frac >= 0.001)
        ev = [f"{fam}, totals since the counters started (last snapshot {p.taken}): {count(total)} " + what]
        if frac is not None:
            ev.append(f"that is {share(frac)} of the {count(sent)} datagrams it sent")
        ev.append(f"none during the observed period {p.span}: it happened before" if p.observed else
                  "one snapshot cannot say when it happened")
        out.append(Finding("df-drops", f"Datagrams too big with DF set since boot ({fam}): {count(total)}", ev,
                           "low" if p.observed else "medium", "warning" if big and not p.observed else "info", recs,
                           {"family": fam, "totals": total, "share_of_sent": frac, "since_boot": True}))
    return out


def router(host) -> List[Finding]:
    """A router that fragments forwarded traffic or drops it for DF: the fix is on the
    router and at the senders, never the router's own MSS or MTU."""
    if not is_router(host):
        return []
    out = []
    for p in periods(host):
        fam = p.family
        src = p.increase if p.observed and p.grew("FragOKs", "FragCreates", "FragFails") else p.totals
        made, created, dropped = (src.get(k) or 0 for k in ("FragOKs", "FragCreates", "FragFails"))
        if not (made or created or dropped):
            continue
        observed = src is p.increase
        plus = "+" if observed else ""
        ev = [_router_note(host),
              f"{fam}, {p.span} ({hours(p.seconds)}):" if observed else
              f"{fam}, totals since the counters started (last snapshot {p.taken}):"]
        if made or created:
            ev.append(f"{plus}{count(made)} forwarded datagrams fragmented into {plus}{count(created)} fragments"
                      + (rate_text(p, "FragOKs") if observed else ""))
        if dropped:
            ev.append(f"{plus}{count(dropped)} datagrams with DF set were too big for the next hop: the router "
                      "answered 'fragmentation needed' (PMTU discovery works only if that ICMP reaches the sender)")
        sent = _sent(p, totals=not observed)
        if fraction(made, sent) is not None:
            ev.append(f"{share(fraction(made, sent))} of the {count(sent)} datagrams it sent or forwarded")
        ev.append("senders use a bigger MTU than a link behind this router: clamp the MSS of forwarded TCP "
                  "here, let the ICMP through, and find the senders of the big UDP datagrams")
        if not observed:
            ev.append("one snapshot cannot say when it happened")
        sev = "warning" if observed or (made or 0) >= 1000 or (dropped or 0) >= 1000 else "info"
        recs = [network.clamp(None if host.assumed_path_mtu() else host.path_mtu()[0], fam),
                network.allow_icmp(fam), network.find_senders(None)]
        out.append(Finding("router-fragmenting", f"Router fragments or DF-drops forwarded traffic ({fam})", ev,
                           "high" if observed else "medium", sev, recs,
                           {"family": fam, "fragmented": made, "fragments": created, "df_dropped": dropped,
                            "since_boot": not observed}))
    return out


__all__ = ["Period", "periods", "counted", "is_router", "arriving", "failing", "outbound", "df_drops", "router"]
