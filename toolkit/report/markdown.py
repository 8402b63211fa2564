"""Markdown to paste into a ticket: the summary of every host first, then per host the facts,
findings, evidence bullets and fenced commands."""
from __future__ import annotations

import re
from typing import List

from toolkit.report.common import facts_rows, generated, impact_line, recommendations, summary, where_shown

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
    rows = summary(hosts)
    out = ["# mssdiag triage", "", f"Generated {generated()}.", "", "## Summary", "",
           "| host | OS | worst | findings | fix |", "| --- | --- | --- | --- | --- |"]
    out += [f"| {esc(r['host'])} | {esc(r['os'])} | {r['severity']} | "
            + (", ".join(f"`{c}`" for c in r["codes"]) or "-") + f" | {esc(r['fix'])} |" for r in rows]
    out.append("")
    order = {r["host"]: i for i, r in enumerate(rows)}
    for host in sorted(hosts, key=lambda h: order[h.facts.name]):
        out += [f"## {esc(host.facts.name)}", "", "| fact | value |", "| --- | --- |"]
        out += [f"| {k} | {esc(v)} |" for k, v in facts_rows(host)]
        out.append("")
        if not host.findings:
            out += ["No findings: the counters, probes and facts show no sign of an MSS, MTU or fragmentation "
                    "problem.", ""]
            continue
        out += ["| severity | finding | confidence | what |", "| --- | --- | --- | --- |"]
        out += [f"| {f.severity} | `{f.code}` | {f.confidence} | {esc(f.title)} |" for f in host.findings]
        out.append("")
        for f, recs, again in recommendations(host.findings):
            out += [f"### {esc(f.title)} (`{f.code}`, {f.severity}, {f.confidence} confidence)", "", "Evidence:", ""]
            out += [f"- {esc(e)}" for e in f.evidence]
            out.append("")
            shown_gain = False
            for r in recs:
                out.append(f"**{esc(r.title)}**" + (f" — {esc(r.applies_to)}" if r.applies_to else "")
                           + (f"; {esc(r.where)}" if r.where else ""))
                out.append("")
                if r.commands:
                    out += [fence(r.commands), ""]
                out += [f"- {esc(c)}" for c in r.caveats]
                line = impact_line(r) if not shown_gain else ""
                if line:
                    shown_gain = True
                    out.append(f"- Gain: {esc(line)}")
                out.append("")
            for r in again:
                out += [f"**{esc(r.title)}**: the commands are under `{where_shown(host.findings, r)}` above.", ""]
        for e in host.errors:
            out.append(f"- error: {esc(e)}")
    return "\n".join(out).rstrip() + "\n"
