"""`mssdiag audit report`: per host, the events and the time series over a window.

The series are per hour: each hour's increases (IPv4 + IPv6) divided by the time its
intervals covered, so intervals of any length (15 min, a day) give comparable rates;
intervals across a reset are left out (no known increase), and the resets are listed.
Everything is computed in SQL over the hourly roll-up the store keeps of its deltas, so a
month of a thousand hosts reads in seconds. Every value from a dump is escaped in Markdown and HTML.
"""
from __future__ import annotations

import json
import math
import time
from html import escape
from typing import Dict, List, Optional, Sequence

from toolkit.audit.model import COLUMNS, METRIC_COLUMN, METRICS, SCHEMA, STATE_NAMES
from toolkit.audit.status import EVENT_COLS, event_dict
from toolkit.audit.store import ROLLUP, Store, epoch, iso

FORMATS = ("table", "json", "md", "html")
REPORT_SCHEMA = SCHEMA.replace("audit/", "audit.report/")
CHARTED = ("reasm_reqds_per_h", "reasm_oks_per_h", "reasm_fails_per_h", "reasm_timeout_per_h", "frag_creates_per_h",
           "frag_fails_per_h")
SUMMED = ("reasm_reqds", "reasm_fails", "reasm_timeout", "frag_fails", "frag_creates")


def collect(store: Store, since_t: float, names: Optional[Sequence[str]], series: bool = True) -> List[dict]:
    """Per host the window's summary; with `series`, the whole per-hour series too (JSON,
    HTML), else only each metric's peak hour and the last 48 hours that had fragments."""
    db = store.db
    out = []
    cols = [METRIC_COLUMN[m] for m in METRICS]
    # Whole hours come from the roll-up the store keeps (store.py ROLLUP); an hour that
    # `since` cuts is grouped from its deltas, as every hour once was.
    aligned = math.ceil(since_t / 3600) * 3600 if math.isfinite(since_t) else since_t
    rates = ", ".join([f"round({c} * 3600.0 / elapsed_s, 3) AS r{i}" for i, c in enumerate(cols)]
                      + [f"{c} AS s{j}" for j, c in enumerate(SUMMED)])
    hourly = (f"SELECT h, {rates} FROM hourly WHERE host_id = :hid AND h >= :aligned")
    if aligned != since_t:
        hourly += (f" UNION ALL SELECT h, {rates} FROM ({ROLLUP.format(where='host_id = :hid AND t >= :since AND t < :aligned')})")
    busy = " OR ".join(f"r{i} > 0" for i, m in enumerate(METRICS) if m in CHARTED)
    for hid, name, os_name in store.hosts(names):
        n, first, last = db.execute("SELECT count(*), min(t), max(t) FROM snapshots WHERE host_id = ? AND t >= ?",
                                    (hid, since_t)).fetchone()
        at = {"hid": hid, "since": since_t, "aligned": aligned}
        if series:
            rows = db.execute(f"SELECT * FROM ({hourly}) ORDER BY h", at).fetchall()
            cols_t = list(zip(*rows)) if rows else [()] * (1 + len(METRICS) + len(SUMMED))
            hours = list(cols_t[0])
            by = {m: list(cols_t[1 + i]) for i, m in enumerate(METRICS)}
            peaks = {m: max((v for v in by[m] if v is not None), default=None) for m in METRICS}
            totals = {c: sum(v for v in cols_t[1 + len(METRICS) + j] if v is not None) for j, c in enumerate(SUMMED)}
            recent = []
        else:
            hours, by = [], {}
            n_m = len(METRICS)
            row = db.execute(f"SELECT {', '.join(f'max(r{i})' for i in range(n_m))}, "
                             f"{', '.join(f'sum(s{j})' for j in range(len(SUMMED)))} FROM ({hourly})",
                             at).fetchone()
            peaks = dict(zip(METRICS, row[:n_m]))
            totals = {c: v or 0 for c, v in zip(SUMMED, row[n_m:])}
            recent = [(r[0], dict(zip(METRICS, r[1:1 + n_m]))) for r in db.execute(
                f"SELECT * FROM ({hourly}) WHERE {busy} ORDER BY h DESC LIMIT 48", at)][::-1]
        resets = [iso(r[0]) for r in db.execute("SELECT t FROM deltas WHERE host_id = ? AND t >= ? AND kind = 'reset'"
                                                " ORDER BY t", (hid, since_t))]
        events = [event_dict(r, name) for r in db.execute(
            f"SELECT {EVENT_COLS} FROM events WHERE host_id = ? AND (state = 'open' OR last_t >= ? OR"
            " coalesce(cleared_t, 0) >= ?) ORDER BY first_t, id", (hid, since_t, since_t))]
        probes = [{"taken_at": iso(r[0]), "vantage": r[1], "target": r[2], "pmtu": r[3], "black_hole": bool(r[4]),
                   "mss": {"port": r[5], "synack": r[6], "used": r[7]}} for r in db.execute(
            "SELECT t, vantage, target, pmtu, black_hole, mss_port, mss_synack, mss_used FROM probes"
            " WHERE host_id = ? AND t >= ? ORDER BY target, t", (hid, since_t))]
        row = db.execute("SELECT findings FROM findings WHERE host_id = ? ORDER BY t DESC, id DESC LIMIT 1",
                         (hid,)).fetchone()
        findings = [{"code": f.get("code"), "severity": f.get("severity"), "title": f.get("title")}
                    for f in (json.loads(row[0]) if row else [])]
        state = max(({"info": 0, "warning": 1, "critical": 2}.get(e["severity"], 0) for e in events
                     if e["state"] == "open"), default=0)
        h = {"host": name, "os": os_name, "state": STATE_NAMES[state], "snapshots": n,
             "first": iso(first), "last": iso(last), "peaks": peaks, "totals": totals, "resets": resets,
             "events": events, "probes": probes, "findings": findings}
        if series:
            h["hours"], h["series"] = hours, by
        else:
            h["busy_hours"] = recent
        out.append(h)
    return out


def render(store: Store, since_t: float, names: Optional[Sequence[str]], fmt: str) -> str:
    hosts = collect(store, since_t, names, series=fmt in ("json", "html"))
    now = time.time()
    if fmt == "json":
        from toolkit.audit.run import TOOL
        return json.dumps({"schema": REPORT_SCHEMA, "tool": TOOL, "store": store.path, "since": iso(since_t),
                           "until": iso(now), "hosts": hosts}, ensure_ascii=False) + "\n"
    if fmt == "md":
        return _markdown(hosts, since_t, now)
    if fmt == "html":
        return _html(hosts, since_t, now)
    return _table(hosts, since_t, now)


def _peak(h: dict, metric: str) -> Optional[float]:
    return h["peaks"].get(metric)


def _pmtu(h: dict) -> str:
    latest: Dict[str, dict] = {}
    for p in h["probes"]:
        latest[f"{p['vantage'] + ' -> ' if p['vantage'] else ''}{p['target']}"] = p
    return ", ".join(f"{k} {p['pmtu'] or '?'}{' BLACK HOLE' if p['black_hole'] else ''}" for k, p in latest.items())


def _rows(hosts: List[dict]) -> List[list]:
    rows = []
    for h in hosts:
        open_ = [e for e in h["events"] if e["state"] == "open"]
        rows.append([h["host"], h["state"], h["os"], h["snapshots"], h["last"],
                     _peak(h, "reasm_reqds_per_h"), _peak(h, "reasm_fails_per_h"), _peak(h, "frag_fails_per_h"),
                     len(h["resets"]), f"{len(open_)}/{len(h['events'])}", _pmtu(h) or None])
    return rows


HEADERS = ["host", "state", "os", "snapshots", "last snapshot", "max reasm/h", "max fails/h", "max fragfails/h",
           "resets", "events open/all", "path MTU"]


def _table(hosts: List[dict], since_t: float, now: float) -> str:
    from tabulate import tabulate
    out = [f"audit report {iso(since_t)} .. {iso(now)}, {len(hosts)} host(s)", ""]
    out.append(tabulate([["-" if v is None else v for v in r] for r in _rows(hosts)], headers=HEADERS))
    evs = [e for h in hosts for e in h["events"]]
    if evs:
        out += ["", tabulate([[e["host"], e["event"], e["key"] or "-", e["severity"], e["state"], e["first_seen"],
                               e["last_seen"], e["cleared_at"] or "-", e["count"], e["detail"]] for e in evs],
                             headers=["host", "event", "key", "severity", "state", "first seen", "last seen",
                                      "cleared", "count", "detail"])]
    return "\n".join(out) + "\n"


def _md(v) -> str:
    s = "-" if v is None else str(v)
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("<", "&lt;").replace("\n", " ")


def _markdown(hosts: List[dict], since_t: float, now: float) -> str:
    out = ["# Audit report", "", f"{iso(since_t)} .. {iso(now)}, {len(hosts)} host(s)", "",
           "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    out += ["| " + " | ".join(_md(v) for v in r) + " |" for r in _rows(hosts)]
    for h in hosts:
        out += ["", f"## {_md(h['host'])} ({_md(h['os'])}, {h['state']})", ""]
        out.append(f"{h['snapshots']} snapshot(s) from {_md(h['first'])} to {_md(h['last'])}; increases in the window: "
                   + ", ".join(f"{k} {v:,}" for k, v in h["totals"].items())
                   + (f"; resets at {', '.join(h['resets'])}" if h["resets"] else ""))
        if h["events"]:
            out += ["", "| event | key | severity | state | first seen | last seen | cleared | detail |",
                    "|---|---|---|---|---|---|---|---|"]
            out += [f"| {_md(e['event'])} | {_md(e['key'] or '-')} | {e['severity']} | {e['state']} | {e['first_seen']} "
                    f"| {e['last_seen']} | {_md(e['cleared_at'])} | {_md(e['detail'])} |" for e in h["events"]]
        busy = h["busy_hours"]
        if busy:
            out += ["", "The last 48 hours with fragments (per hour; all of them in the JSON report):", "", "| hour | " + " | ".join(CHARTED) + " |",
                    "|---|" + "---|" * len(CHARTED)]
            for t, vals in busy:
                out.append(f"| {iso(t)} | " + " | ".join(_md(vals[m]) for m in CHARTED) + " |")
        if h["probes"]:
            out += ["", "| probed | vantage | target | path MTU | black hole | MSS SYN-ACK/used |", "|---|---|---|---|---|---|"]
            out += [f"| {p['taken_at']} | {_md(p['vantage'])} | {_md(p['target'])} | {_md(p['pmtu'])} | "
                    f"{'yes' if p['black_hole'] else 'no'} | {_md(p['mss']['synack'])}/{_md(p['mss']['used'])} |"
                    for p in h["probes"][-20:]]
        if h["findings"]:
            out += [""] + [f"- **{_md(f['severity'])}** `{_md(f['code'])}`: {_md(f['title'])}" for f in h["findings"]]
    return "\n".join(out) + "\n"


CSS = """
body{font-family:system-ui,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px} h2{font-size:18px;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}
th{background:#f0f0f0} .CRITICAL,.critical{color:#b00020;font-weight:bold} .WARNING,.warning{color:#a15c00;font-weight:bold}
.charts{display:flex;flex-wrap:wrap;gap:16px} .note{color:#555;font-size:13px}
"""


def _html(hosts: List[dict], since_t: float, now: float) -> str:
    from toolkit.report.svg import line_chart
    e = lambda v: escape("-" if v is None else str(v))  # noqa: E731
    day0 = since_t - since_t % 86400
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>mssdiag audit report {e(iso(since_t))}</title><style>{CSS}</style></head><body>",
           "<h1>mssdiag audit report</h1>",
           f'<p class="note">{e(iso(since_t))} .. {e(iso(now))}, {len(hosts)} host(s). Rates are increases per hour, '
           "IPv4 and IPv6 together; intervals across a reset (reboot) are left out.</p>",
           "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in HEADERS) + "</tr>"]
    for r in _rows(hosts):
        out.append("<tr>" + "".join(f'<td class="{e(v) if i == 1 else ""}">{e(v)}</td>' for i, v in enumerate(r))
                   + "</tr>")
    out.append("</table>")
    for h in hosts:
        out.append(f'<h2 id="{e(h["host"])}">{e(h["host"])} <span class="{e(h["state"])}">{e(h["state"])}</span></h2>')
        out.append(f'<p class="note">{e(h["os"])}; {h["snapshots"]} snapshot(s) from {e(h["first"])} to {e(h["last"])}'
                   + (f"; resets at {e(', '.join(h['resets']))}" if h["resets"] else "") + "</p>")
        charts = []
        series = []
        for m in CHARTED:
            pts = [((t - day0) / 86400.0, v) for t, v in zip(h["hours"], h["series"][m]) if v is not None]
            if pts and any(v for _, v in pts):
                series.append((m, pts))
        markers = []
        for r in h["resets"]:
            markers.append(((epoch(r) - day0) / 86400.0, "reset"))
        if series:
            charts.append(line_chart("Fragmentation per hour", series, f"days since {iso(day0)[:10]}",
                                     "increase per hour", "", markers[:6] or None, css_class="chart counters"))
        by_target: Dict[str, list] = {}
        for p in h["probes"]:
            if p["pmtu"]:
                key = f"{p['vantage'] + ' -> ' if p['vantage'] else ''}{p['target']}"
                by_target.setdefault(key, []).append(((epoch(p["taken_at"]) - day0) / 86400.0, float(p["pmtu"])))
        if by_target:
            charts.append(line_chart("Path MTU over time", list(by_target.items())[:7], f"days since {iso(day0)[:10]}",
                                     "bytes", "", css_class="chart pmtu"))
        if charts:
            out.append('<div class="charts">' + "".join(charts) + "</div>")
        if h["events"]:
            out.append("<table><tr><th>event</th><th>key</th><th>severity</th><th>state</th><th>first seen</th>"
                       "<th>last seen</th><th>cleared</th><th>detail</th></tr>")
            for ev in h["events"]:
                out.append(f'<tr><td>{e(ev["event"])}</td><td>{e(ev["key"] or "-")}</td>'
                           f'<td class="{e(ev["severity"])}">{e(ev["severity"])}</td><td>{e(ev["state"])}</td>'
                           f'<td>{e(ev["first_seen"])}</td><td>{e(ev["last_seen"])}</td><td>{e(ev["cleared_at"])}</td>'
                           f'<td>{e(ev["detail"])}</td></tr>')
            out.append("</table>")
        if h["findings"]:
            out.append("<ul>" + "".join(f'<li><span class="{e(f["severity"])}">{e(f["severity"])}</span> '
                                        f'<code>{e(f["code"])}</code> {e(f["title"])}</li>' for f in h["findings"])
                       + "</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


__all__ = ["FORMATS", "collect", "render", "COLUMNS"]
