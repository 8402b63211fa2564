"""Markdown to paste into a ticket: facts table, findings, evidence bullets, fenced commands."""
from __future__ import annotations

import re
from typing import List

from toolkit.report.common import facts_rows, impact_line, unique_recommendations

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def esc(value) -> str:
    """Inline text from an untrusted source: markup characters escaped, one line."""
    text = " ".join(str(value).split())
    return _SPECIAL.sub(r"\\\1", text)


def fence(lines: List[str], lang: str = "") -> str:
    body = "\n".join("".join(ch if ch.isprintable() else "?" for ch in l) for l in lines)
    ticks = "```"
    while ticks in body:
        ticks += "`"
    return f"{ticks}{lang}\n{body}\n{ticks}"


def render(hosts: List) -> str:
    shown: dict = {}   # finding id -> the impact already printed for it (one gain line per finding)
    out = ["# mssdiag triage", ""]
    for host in hosts:
        out += [f"## {esc(host.facts.name)}", "", "| fact | value |", "| --- | --- |"]
        out += [f"| {k} | {esc(v)} |" for k, v in facts_rows(host)]
        out.append("")
        if not host.findings:
            out += ["No findings: nothing in the evidence points to an MSS, MTU or fragmentation problem.", ""]
            continue
        out += ["| severity | finding | confidence | what |", "| --- | --- | --- | --- |"]
        out += [f"| {f.severity} | `{f.code}` | {f.confidence} | {esc(f.title)} |" for f in host.findings]
        out.append("")
        for f, recs in unique_recommendations(host.findings):
            out += [f"### {esc(f.title)} (`{f.code}`, {f.confidence} confidence)", "", "Evidence:", ""]
            out += [f"- {esc(e)}" for e in f.evidence]
            out.append("")
            for r in recs:
                out.append(f"**{esc(r.title)}**" + (f" — {esc(r.applies_to)}" if r.applies_to else "")
                           + (f"; {esc(r.where)}" if r.where else ""))
                out.append("")
                if r.commands:
                    out += [fence(r.commands), ""]
                out += [f"- {esc(c)}" for c in r.caveats]
                line = impact_line(r) if r.impact is not shown.get(id(f)) else ""
                shown[id(f)] = r.impact
                if line:
                    out.append(f"- Gain: {esc(line)}")
                out.append("")
        for e in host.errors:
            out.append(f"- error: {esc(e)}")
    return "\n".join(out).rstrip() + "\n"
