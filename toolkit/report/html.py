"""One self-contained HTML file: inline CSS and SVG, no scripts, no external resources.

Charts per host: the throughput bound against MSS for the host's RTT and loss (Mathis,
capped at the link rate when known) with the current and recommended MSS marked, and
the reassembly/fragmentation counters across snapshots. Every value is escaped.
"""
from __future__ import annotations

from html import escape
from typing import List

from toolkit import calc
from toolkit.report.common import facts_rows, impact_line, unique_recommendations
from toolkit.report.svg import line_chart
from toolkit.rules.buffers import current_mss

CSS = """
body{font-family:system-ui,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px} h2{font-size:19px;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:36px}
h3{font-size:15px;margin-bottom:4px}
table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}
th{background:#f0f0f0} .problem{color:#b00020;font-weight:bold} .warning{color:#a15c00;font-weight:bold} .info{color:#225}
pre{background:#f6f6f6;border:1px solid #ddd;padding:8px;overflow-x:auto;font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:16px} .note{color:#555;font-size:13px} li{font-size:13px}
"""

MSS_POINTS = [536, 800, 1000, 1220, 1460, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 8960]


def throughput_chart(host) -> str:
    f = host.facts
    now = current_mss(host)
    path_mss = host.path_mtu()[0] - calc.IPV4 - calc.TCP
    markers = [(path_mss, f"path {path_mss}")] if now == path_mss else [(now, f"now {now}"), (path_mss, f"path {path_mss}")]
    if f.rtt_s and f.loss:
        pts = calc.mathis_curve(f.rtt_s, f.loss, MSS_POINTS, f.bandwidth_bps)
        title = (f"Throughput bound vs MSS (RTT {f.rtt_s * 1e3:g} ms, loss {f.loss:g}"
                 + (f", link {calc.human_rate(f.bandwidth_bps)})" if f.bandwidth_bps else ")"))
        label = "Mathis bound"
        return line_chart(title, [(label, pts)], "MSS (bytes)", "bit/s per flow", "bit/s", markers,
                          css_class="chart throughput")
    pts = [(m, round(100.0 * m / (m + calc.SEGMENT_OVERHEAD), 2)) for m in MSS_POINTS]
    return line_chart("Payload share of each frame vs MSS (RTT/loss unknown)", [("data %", pts)],
                      "MSS (bytes)", "% of bytes that are data", "", markers, css_class="chart throughput")


def counters_chart(host) -> str:
    if len(host.snapshots) < 2:
        return ""
    series = []
    for fam in ("ipv4", "ipv6"):
        for name in ("ReasmReqds", "ReasmOKs", "ReasmFails", "ReasmTimeout", "FragCreates"):
            values = [(i, (getattr(s, fam) or {}).get(name)) for i, s in enumerate(host.snapshots)]
            if all(v is not None for _, v in values) and any(v for _, v in values):
                series.append((f"{fam} {name}", [(i, float(v)) for i, v in values]))
    if not series:
        return ""
    labels = [(s.taken_at or f"#{s.index}")[:16].replace("T", " ") for s in host.snapshots]
    return line_chart("Counters across snapshots", series, "snapshot", "count since boot", "",
                      x_labels=labels, css_class="chart counters")


def _list(items) -> str:
    return "<ul>" + "".join(f"<li>{escape(str(i))}</li>" for i in items) + "</ul>" if items else ""


def render(hosts: List) -> str:
    shown: dict = {}   # finding id -> the impact already printed for it (one gain line per finding)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">',
           "<title>mssdiag triage</title>", f"<style>{CSS}</style></head><body>", "<h1>mssdiag triage</h1>"]
    for host in hosts:
        out.append(f"<section class=\"host\"><h2>{escape(host.facts.name)}</h2>")
        out.append("<table>" + "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
                                       for k, v in facts_rows(host)) + "</table>")
        out.append('<div class="charts">' + throughput_chart(host) + counters_chart(host) + "</div>")
        if not host.findings:
            out.append("<p>No findings: nothing in the evidence points to an MSS, MTU or fragmentation problem.</p>")
        else:
            out.append("<table><tr><th>severity</th><th>finding</th><th>confidence</th><th>what</th></tr>" + "".join(
                f'<tr><td class="{escape(f.severity)}">{escape(f.severity)}</td><td><code>{escape(f.code)}</code></td>'
                f"<td>{escape(f.confidence)}</td><td>{escape(f.title)}</td></tr>" for f in host.findings) + "</table>")
        for f, recs in unique_recommendations(host.findings):
            out.append(f'<h3 class="{escape(f.severity)}">{escape(f.title)} <code>{escape(f.code)}</code></h3>')
            out.append(_list(f.evidence))
            for r in recs:
                head = escape(r.title) + (f" <span class=\"note\">— {escape(r.applies_to)}</span>" if r.applies_to else "")
                out.append(f"<p><b>{head}</b>" + (f"<br><span class=\"note\">where: {escape(r.where)}</span>" if r.where else "") + "</p>")
                if r.commands:
                    out.append("<pre>" + escape("\n".join(r.commands)) + "</pre>")
                line = impact_line(r) if r.impact is not shown.get(id(f)) else ""
                shown[id(f)] = r.impact
                out.append(_list(list(r.caveats) + ([f"Gain: {line}"] if line else [])))
        if host.errors:
            out.append(_list(f"error: {e}" for e in host.errors))
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
