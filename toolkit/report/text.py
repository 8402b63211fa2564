"""Plain text for terminals: the summary of every host first, then per host its findings,
evidence and commands."""
from __future__ import annotations

import textwrap
from typing import List

from tabulate import tabulate

from toolkit.report.common import facts_rows, generated, impact_line, recommendations, summary, where_shown


def _clean(value: str) -> str:
    # Terminal control characters from a dump must not reach the terminal.
    return "".join(ch if ch.isprintable() or ch == "\n" else "?" for ch in str(value))


def render(hosts: List) -> str:
    out = [f"mssdiag triage, {generated()}", ""]
    rows = summary(hosts)
    out.append(tabulate([(_clean(r["host"]), _clean(r["os"]), r["severity"], ", ".join(r["codes"]) or "-",
                          _clean(r["fix"])) for r in rows],
                        headers=["host", "OS", "worst", "findings", "fix"]))
    out.append("")
    order = {r["host"]: i for i, r in enumerate(rows)}
    for host in sorted(hosts, key=lambda h: order[h.facts.name]):
        out.append(_clean(f"== {host.facts.name} =="))
        out.append(tabulate([(k, _clean(v)) for k, v in facts_rows(host)], tablefmt="plain"))
        if not host.findings:
            out.append("\nNo findings: the counters, probes and facts show no sign of an MSS, MTU or "
                       "fragmentation problem.\n")
            continue
        out.append("")
        out.append(tabulate([(f.severity, f.code, f.confidence, _clean(f.title)) for f in host.findings],
                            headers=["severity", "finding", "confidence", "what"]))
        for f, recs, again in recommendations(host.findings):
            out.append(f"\n[{f.code}] {_clean(f.title)}")
            for e in f.evidence:
                out.append(textwrap.fill(_clean(e), 100, initial_indent="  - ", subsequent_indent="    "))
            shown_gain = False
            for r in recs:
                out.append(f"  > {_clean(r.title)}" + (f"  [{_clean(r.applies_to)}]" if r.applies_to else ""))
                if r.where:
                    out.append(f"    where: {_clean(r.where)}")
                for c in r.commands:
                    out.append(f"      {_clean(c)}")
                for c in r.caveats:
                    out.append(textwrap.fill(_clean(c), 100, initial_indent="    note: ", subsequent_indent="          "))
                line = impact_line(r) if not shown_gain else ""
                if line:
                    shown_gain = True
                    out.append(textwrap.fill(line, 100, initial_indent="    gain: ", subsequent_indent="          "))
            for r in again:
                out.append(f"  > {_clean(r.title)} (commands above, under {where_shown(host.findings, r)})")
        for e in host.errors:
            out.append(f"  error: {_clean(e)}")
        out.append("")
    return "\n".join(out) + "\n"
