"""One self-contained HTML file: inline CSS and SVG, no scripts, no external resources.

The summary of every host comes first. Per host, charts only where they say something
about that host: the reassembly/fragmentation counters as increases per hour (totals since
boot hide a problem that starts today), and the throughput bound against the MSS when the
MSS is in question. Every fix is shown under every finding it belongs to. Every value is
escaped.
"""
from __future__ import annotations

from html import escape
from typing import List

from toolkit import calc
from toolkit.report.common import facts_rows, generated, impact_line, summary
from toolkit.report.svg import line_chart
from toolkit.rules.buffers import current_mss

CSS = """
body{font-family:system-ui,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px} h2{font-size:19px;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:36px}
h3{font-size:15px;margin-bottom:4px}
table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}
th{background:#f0f0f0} .problem{color:#b00020;font-weight:bold} .warning{color:#a15c00;font-weight:bold}
.info{color:#225} .ok{color:#1b6e20;font-weight:bold}
pre{background:#f6f6f6;border:1px solid #ddd;padding:8px;overflow-x:auto;font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:16px} .note{color:#555;font-size:13px} li{font-size:13px}
.fix{margin-left:16px;border-left:3px solid #ddd;padding-left:10px}
"""

MSS_POINTS = [536, 800, 1000, 1220, 1460, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 8960]
COUNTER_SERIES = ("ReasmReqds", "ReasmOKs", "ReasmFails", "ReasmTimeout", "FragOKs", "FragCreates", "FragFails")
MSS_CODES = {"stcp-536-nonlocal", "tcpos-small-mss", "ftx24-small-mss", "mss-536-os-unknown", "mss-limits-throughput",
             "synack-mss-below-path", "jumbo-frames", "jumbo-not-end-to-end"}


def throughput_chart(host) -> str:
    """The bound against the MSS, only when the MSS is in question for this host."""
    f = host.facts
    if not ((f.rtt_s and f.loss) or any(x.code in MSS_CODES for x in host.findings)):
        return ""
    now = current_mss(host)
    path_mss = host.path_mtu()[0] - calc.IPV4 - calc.TCP
    markers = [(path_mss, f"path {path_mss}")] if now == path_mss else [(now, f"now {now}"), (path_mss, f"path {path_mss}")]
    if f.rtt_s and f.loss:
        pts = calc.mathis_curve(f.rtt_s, f.loss, MSS_POINTS, f.bandwidth_bps)
        title = (f"Throughput bound vs MSS (RTT {f.rtt_s * 1e3:g} ms, loss {f.loss:g}"
                 + (f", link {calc.human_rate(f.bandwidth_bps)})" if f.bandwidth_bps else ")"))
        return line_chart(title, [("Mathis bound", pts)], "MSS (bytes)", "bit/s per flow", "bit/s", markers,
                          css_class="chart throughput")
    pts = [(m, round(100.0 * m / (m + calc.SEGMENT_OVERHEAD), 2)) for m in MSS_POINTS]
    return line_chart("Payload share of each frame vs MSS (RTT/loss unknown)", [("data %", pts)],
                      "MSS (bytes)", "% of bytes that are data", "", markers, css_class="chart throughput")


def counters_chart(host) -> str:
    """Increases per hour (per interval when undated) of the counters that grew; nothing when
    none grew: a flat line says nothing about this host."""
    deltas = [d for d in host.deltas if not any(e["type"] == "reset" for e in d.events)]
    if not deltas:
        return ""
    dated = all(d.elapsed_s for d in deltas)
    series = []
    for fam in ("ipv4", "ipv6"):
        for name in COUNTER_SERIES:
            pts = []
            for i, d in enumerate(deltas):
                v = (d.per_hour(fam) if dated else getattr(d, fam)) or {}
                if v.get(name) is not None:
                    pts.append((i, float(v[name])))
            if pts and any(y > 0 for _, y in pts):
                series.append((f"{fam} {name}", pts))
    if not series:
        return ""
    labels = [d.to[:16].replace("T", " ") if d.to[:4].isdigit() else d.to[-12:] for d in deltas]
    title = "Increase per hour" if dated else "Increase per interval (snapshots not dated)"
    return line_chart(title, series[:7], "interval ending", "per hour" if dated else "per interval", "",
                      x_labels=labels, css_class="chart counters")


def _list(items) -> str:
    return "<ul>" + "".join(f"<li>{escape(str(i))}</li>" for i in items) + "</ul>" if items else ""


def _recommendation(r, with_gain: bool) -> str:
    head = escape(r.title) + (f" <span class=\"note\">— {escape(r.applies_to)}</span>" if r.applies_to else "")
    out = [f'<div class="fix"><p><b>{head}</b>'
           + (f"<br><span class=\"note\">where: {escape(r.where)}</span>" if r.where else "") + "</p>"]
    if r.commands:
        out.append("<pre>" + escape("\n".join(r.commands)) + "</pre>")
    line = impact_line(r) if with_gain else ""
    out.append(_list(list(r.caveats) + ([f"Gain: {line}"] if line else [])) + "</div>")
    return "\n".join(out)


def render(hosts: List) -> str:
    rows = summary(hosts)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">',
           "<title>mssdiag triage</title>", f"<style>{CSS}</style></head><body>", "<h1>mssdiag triage</h1>",
           f'<p class="note">Generated {escape(generated())}.</p>',
           '<section id="summary"><h2>Summary</h2><table><tr><th>host</th><th>OS</th><th>worst</th>'
           "<th>findings</th><th>fix</th></tr>"]
    for r in rows:
        out.append(f'<tr><td><a href="#host-{escape(r["host"])}">{escape(r["host"])}</a></td><td>{escape(r["os"])}</td>'
                   f'<td class="{r["severity"]}">{r["severity"]}</td>'
                   f"<td>{', '.join(f'<code>{escape(c)}</code>' for c in r['codes']) or '-'}</td>"
                   f"<td>{escape(r['fix'])}</td></tr>")
    out.append("</table></section>")
    order = {r["host"]: i for i, r in enumerate(rows)}
    for host in sorted(hosts, key=lambda h: order[h.facts.name]):
        out.append(f'<section class="host" id="host-{escape(host.facts.name)}"><h2>{escape(host.facts.name)}</h2>')
        out.append("<table>" + "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
                                       for k, v in facts_rows(host)) + "</table>")
        charts = counters_chart(host) + throughput_chart(host)
        if charts:
            out.append('<div class="charts">' + charts + "</div>")
        if not host.findings:
            out.append("<p>No findings: the counters, probes and facts show no sign of an MSS, MTU or "
                       "fragmentation problem.</p>")
        else:
            out.append("<table><tr><th>severity</th><th>finding</th><th>confidence</th><th>what</th></tr>" + "".join(
                f'<tr><td class="{escape(f.severity)}">{escape(f.severity)}</td><td><code>{escape(f.code)}</code></td>'
                f"<td>{escape(f.confidence)}</td><td>{escape(f.title)}</td></tr>" for f in host.findings) + "</table>")
        for f in host.findings:
            out.append(f'<h3 class="{escape(f.severity)}">{escape(f.title)} <code>{escape(f.code)}</code></h3>')
            out.append(_list(f.evidence))
            gain = True
            for r in f.recommendations:
                out.append(_recommendation(r, gain))
                gain = gain and not impact_line(r)
        if host.errors:
            out.append(_list(f"error: {e}" for e in host.errors))
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
