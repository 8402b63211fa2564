"""Where and whether, from saved or live probes: the router that rewrites the MSS
(`probe --trace`) and whether the target does PMTU discovery (`probe --pmtud-check`)."""
from __future__ import annotations

from typing import List, Optional

from toolkit.findings import Finding
from toolkit.platforms import network
from toolkit.probe.findings import LEGACY_MSS, PMTUD_CODES, path_mss, target_pmtud
from toolkit.rules import impact

PMTUD = tuple(code for code, _ in PMTUD_CODES.values())


def clamp_explains(p, size: Optional[int]) -> bool:
    """The probe located a router that clamps the MSS to `size` or less: the small SYN-ACK
    or segments are that router's doing, not the host's own default."""
    c = getattr(p, "clamp", None) or {}
    return size is not None and c.get("to") is not None and size <= c["to"]


def clamped(host) -> List[Finding]:
    out = []
    for p in host.probes:
        c = p.clamp or {}
        to = c.get("to")
        if to is None:
            continue
        text = next((f["text"] for f in p.findings if f["code"] == "mss-clamped"), None)
        hop, ttl = c.get("changed_after"), c.get("changed_after_ttl")
        where = (f"after hop {ttl} ({hop}: that router, or a middlebox right behind it)" if hop else
                 "on this host, before the SYN left" if ttl == 0 else (c.get("note") or "somewhere on the path"))
        ev = [f"probe of {p.target}: " + (text or f"our SYN left with MSS {c.get('sent')} and arrived with {to} {where}")]
        ev += [f"hop {h['ttl']} ({h.get('address') or '*'}) quoted MSS {h['mss']}" for h in c.get("hops") or []
               if h.get("mss") is not None]
        limit = path_mss(p)
        data = {"target": p.target, "sent": c.get("sent"), "to": to, "changed_after": hop, "changed_after_ttl": ttl,
                "port": c.get("port"), "path_mss": limit}
        recs = []
        if limit is not None and to < limit:
            # clamped below what the path carries: every connection through it sends small segments
            severity, title = "warning", f"the MSS is clamped to {to} {where}; the path carries {limit}"
            data["impact"] = impact.mss_change(to, limit, host.facts.rtt_s, host.facts.loss, host.facts.bandwidth_bps)
            recs.append(network.raise_clamp(hop, to, p.pmtu, p.family))
            if to in LEGACY_MSS and text is None:    # the prober's own text says so already
                ev.append(f"the {to}-byte segments are the clamp's doing, not a legacy host default")
        else:
            severity, title = "info", f"the MSS is clamped to {to} {where}, which the path carries"
        conf = "high" if hop or ttl == 0 else "medium"
        out.append(Finding("mss-clamped", title, ev, conf, severity, recs, data))
    return out


def pmtud(host) -> List[Finding]:
    found = (target_pmtud(p, host.platform, host.facts.release) for p in host.probes)
    return [f for f in found if f is not None]
