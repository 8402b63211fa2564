"""Shared wording for every report format, so they never disagree."""
from __future__ import annotations

from typing import List, Tuple

from toolkit import calc
from toolkit.rules import impact as impacts


def facts_rows(host) -> List[Tuple[str, str]]:
    f = host.facts
    pmtu, pmtu_from = host.path_mtu()
    rows = [("OS", (f.os or "unknown") + (f" {f.release}" if f.release else "")),
            ("peer", f.peer or "unknown"),
            ("path MTU", f"{pmtu} ({pmtu_from})")]
    if f.bandwidth_bps:
        rows.append(("bandwidth", calc.human_rate(f.bandwidth_bps)))
    if f.rtt_s:
        rows.append(("RTT", f"{f.rtt_s * 1e3:g} ms"))
    if f.loss:
        rows.append(("loss", f"{f.loss:g}"))
    rows.append(("inputs", ", ".join(host.inputs) or "none"))
    return rows


def impact_line(rec) -> str:
    return impacts.describe(rec.impact) if rec.impact and "mss_before" in rec.impact else ""


def unique_recommendations(findings) -> List[Tuple[object, list]]:
    """(finding, its recommendations not already shown under an earlier finding)."""
    seen, out = set(), []
    for f in findings:
        recs = []
        for r in f.recommendations:
            key = (r.code, tuple(r.commands))
            if key not in seen:
                seen.add(key)
                recs.append(r)
        out.append((f, recs))
    return out
