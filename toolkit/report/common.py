"""Shared wording for every report format, so they never disagree."""
from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import List, Optional, Tuple

from toolkit import calc
from toolkit.rules import catalog
from toolkit.numbers import share
from toolkit.rules import impact as impacts
from toolkit.rules.fragments import counted

SEVERITY_ORDER = {"problem": 0, "warning": 1, "info": 2, "ok": 3}


def generated_at() -> datetime:
    """Now, in UTC; SOURCE_DATE_EPOCH fixes it (reproducible output, as in reproducible builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return datetime.fromtimestamp(int(epoch), timezone.utc) if epoch and epoch.isdigit() else datetime.now(timezone.utc)


def generated() -> str:
    """'2026-11-22 21:04 UTC by mssdiag 0.1.0'."""
    from toolkit import __version__
    return f"{generated_at():%Y-%m-%d %H:%M} UTC by mssdiag {__version__}"


def fix_line(finding) -> str:
    """The one-line fix of a finding: its first recommendation's title."""
    return finding.recommendations[0].title if finding.recommendations else "see the finding"


def summary(hosts) -> List[dict]:
    """One row per host, worst first: what a reader needs before any detail."""
    rows = []
    for h in hosts:
        worst = catalog.worst(h.findings)
        rows.append({
            "host": h.facts.name,
            "os": (h.facts.os or "unknown") + (f" {h.facts.release}" if h.facts.release else ""),
            "severity": worst.severity if worst else "ok",
            "codes": list(dict.fromkeys(f.code for f in h.findings)),
            "fix": fix_line(worst) if worst and worst.severity != "info" else
            ("nothing to fix" if not worst else "nothing urgent: " + fix_line(worst)),
        })
    return sorted(rows, key=lambda r: (SEVERITY_ORDER[r["severity"]], r["host"].lower()))


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
        rows.append(("loss", share(f.loss)))
    t = counted(host)
    if t.count:
        span = (f" from {t.first_dated[:16].replace('T', ' ')} to {t.last_dated[:16].replace('T', ' ')}"
                if t.dated > 1 else "")
        rows.append(("snapshots", f"{t.count}{span}"))
    from toolkit.hosts import IDENTITIES
    rows.append(("identified by", IDENTITIES.get(host.identity, host.identity)))
    warned = list(t.warnings)
    more = len(warned) - 3 + t.more_warnings
    if warned:
        rows.append(("data warnings", "; ".join(warned[:3]) + (f" (and {more} more)" if more > 0 else "")))
    rows.append(("inputs", ", ".join(host.inputs) or "none"))
    return rows


def impact_line(rec) -> str:
    return impacts.describe(rec.impact) if rec.impact and "mss_before" in rec.impact else ""


def recommendations(findings) -> List[Tuple[object, list, list]]:
    """(finding, its recommendations shown in full here, those already shown in full under an
    earlier finding of the host) -- text and Markdown print a repeated fix as one line."""
    seen, out = set(), []
    for f in findings:
        new, again = [], []
        for r in f.recommendations:
            key = (r.code, tuple(r.commands))
            (again if key in seen else new).append(r)
            seen.add(key)
        out.append((f, new, again))
    return out


def where_shown(findings, rec) -> Optional[str]:
    """The code of the first finding that shows `rec` in full."""
    for f in findings:
        if any((r.code, tuple(r.commands)) == (rec.code, tuple(rec.commands)) for r in f.recommendations):
            return f.code
    return None
