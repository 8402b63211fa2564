"""Plain text for terminals: a findings table per host, then evidence and commands."""
from __future__ import annotations

import textwrap
from typing import List

from tabulate import tabulate

from toolkit.report.common import facts_rows, impact_line, unique_recommendations


def _clean(value: str) -> str:
    # Terminal control characters from a dump must not reach the terminal.
    return "".join(ch if ch.isprintable() or ch == "\n" else "?" for ch in str(value))


def render(hosts: List) -> str:
    shown: dict = {}   # finding id -> the impact already printed for it (one gain line per finding)
    out = []
    for host in hosts:
        out.append(_clean(f"== {host.facts.name} =="))
        out.append(tabulate([(k, _clean(v)) for k, v in facts_rows(host)], tablefmt="plain"))
        if not host.findings:
            out.append("\nNo findings: nothing in the evidence points to an MSS, MTU or fragmentation problem.\n")
            continue
        out.append("")
        out.append(tabulate([(f.severity, f.code, f.confidence, _clean(f.title)) for f in host.findings],
                            headers=["severity", "finding", "confidence", "what"]))
        for f, recs in unique_recommendations(host.findings):
            out.append(f"\n[{f.code}] {_clean(f.title)}")
            for e in f.evidence:
                out.append(textwrap.fill(_clean(e), 100, initial_indent="  - ", subsequent_indent="    "))
            for r in recs:
                out.append(f"  > {_clean(r.title)}" + (f"  [{_clean(r.applies_to)}]" if r.applies_to else ""))
                if r.where:
                    out.append(f"    where: {_clean(r.where)}")
                for c in r.commands:
                    out.append(f"      {_clean(c)}")
                for c in r.caveats:
                    out.append(textwrap.fill(_clean(c), 100, initial_indent="    note: ", subsequent_indent="          "))
                line = impact_line(r) if r.impact is not shown.get(id(f)) else ""
                shown[id(f)] = r.impact
                if line:
                    out.append(textwrap.fill(line, 100, initial_indent="    gain: ", subsequent_indent="          "))
        for e in host.errors:
            out.append(f"  error: {_clean(e)}")
        out.append("")
    return "\n".join(out) + "\n"
