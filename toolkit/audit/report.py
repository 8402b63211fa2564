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
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence

from toolkit.audit.model import COLUMNS, METRICS, OK, SCHEMA, SEVERITIES, STATE_NAMES
from toolkit.audit.status import EVENT_COLS, event_dict
from toolkit.audit.store import ROLLUP, Store, epoch, iso
from toolkit.output import dumps, safe, table_text

FORMATS = ("table", "json", "md", "html")
REPORT_SCHEMA = SCHEMA.replace("audit/", "audit.report/")
CHARTED = ("reasm_reqds_per_h", "reasm_oks_per_h", "reasm_fails_per_h", "reasm_timeout_per_h", "frag_creates_per_h",
           "frag_fails_per_h")
SUMMED = ("reasm_reqds", "reasm_fails", "reasm_timeout", "frag_fails", "frag_creates")


_RATES = ", ".join(METRICS)                     # the roll-up keeps each hour's rates (store.py ROLLUP)
_BUSY = " OR ".join(f"{m} > 0" for m in CHARTED)
_IDS = "(SELECT value FROM json_each(:ids))"


class _Window:
    """The hours of the window: whole hours from the roll-up the store keeps (store.py ROLLUP),
    and the hour that `since` cuts grouped from its snapshots and deltas, as every hour once
    was. An hour without a delta of known increase counts snapshots but has no rates."""

    def __init__(self, since_t: float, ids: Optional[List[int]]):
        self.since_t = since_t
        self.aligned = math.ceil(since_t / 3600) * 3600 if math.isfinite(since_t) else since_t
        self.args = {"since": since_t, "aligned": self.aligned, "ids": json.dumps(ids)}
        self.some = ids is not None

    def only(self, column: str = "host_id") -> str:
        """The condition that keeps the chosen hosts (every host: always true)."""
        return f"{column} IN {_IDS}" if self.some else "1"

    def per_host(self) -> str:
        """Per host: snapshots, first and last, each metric's peak hour, the increases summed;
        grouped within the roll-up along its key (no sort), then with the cut hour."""
        agg = ", ".join(["sum(snapshots) AS n", "min(first_t) AS f", "max(last_t) AS l"]
                        + [f"max({m}) AS r{i}" for i, m in enumerate(METRICS)]
                        + [f"sum({c}) AS s{j}" for j, c in enumerate(SUMMED)])
        q = f"SELECT host_id, {agg} FROM hourly WHERE {self.only()} AND h >= :aligned GROUP BY host_id"
        if self.aligned != self.since_t:
            inner = ROLLUP.format(where=f"{self.only('s.host_id')} AND s.t >= :since AND s.t < :aligned")
            q += f" UNION ALL SELECT host_id, {agg} FROM ({inner}) GROUP BY host_id"
        outer = ", ".join(["sum(n)", "min(f)", "max(l)"] + [f"max(r{i})" for i in range(len(METRICS))]
                          + [f"sum(s{j})" for j in range(len(SUMMED))])
        return f"SELECT host_id, {outer} FROM ({q}) GROUP BY host_id"

    def hours(self, rows: str = "") -> str:
        """One host's (:hid) hours: h, r0.. (rates); `rows`: a further condition."""
        cols = f"h, {_RATES}"
        q = f"SELECT {cols} FROM hourly WHERE host_id = :hid AND h >= :aligned{f' AND ({rows})' if rows else ''}"
        if self.aligned != self.since_t:
            inner = ROLLUP.format(where="s.host_id = :hid AND s.t >= :since AND s.t < :aligned")
            q += f" UNION ALL SELECT {cols} FROM ({inner}){f' WHERE ({rows})' if rows else ''}"
        return q


@dataclass
class _Collected:
    hosts: List[dict]
    ids: List[int]
    window: _Window
    db: object

    def with_series(self, i: int) -> dict:
        """Host i's summary with its whole per-hour series (hours with a known increase): read
        a host at a time as the report is written, so a month of a fleet is never in memory."""
        w = self.window
        rows = self.db.execute(f"{w.hours('intervals > 0')} ORDER BY h", dict(w.args, hid=self.ids[i])).fetchall()
        cols = list(zip(*rows)) if rows else [()] * (1 + len(METRICS))
        return dict(self.hosts[i], hours=list(cols[0]), series={m: list(cols[1 + k]) for k, m in enumerate(METRICS)})


def _collect(store: Store, since_t: float, names: Optional[Sequence[str]], detail: str) -> _Collected:
    """Every kind read in one query for all the hosts (the roll-up, resets, events, probes,
    findings); the busy hours one query a host, along the roll-up's key."""
    db = store.db
    hosts = store.hosts(names)
    ids = [hid for hid, _, _ in hosts] if names is not None else None
    w = _Window(since_t, ids)
    n_m, n_s = len(METRICS), len(SUMMED)
    summary = {r[0]: r[1:] for r in db.execute(w.per_host(), w.args)}
    resets: Dict[int, list] = {}
    for hid, t in db.execute(f"SELECT host_id, t FROM deltas WHERE {w.only()} AND kind = 'reset' AND t >= :since"
                             " ORDER BY host_id, t", w.args):
        resets.setdefault(hid, []).append(iso(t))
    events: Dict[int, list] = {}
    for r in db.execute(f"SELECT host_id, {EVENT_COLS} FROM events WHERE {w.only()} AND (state = 'open' OR last_t >= :since"
                        " OR coalesce(cleared_t, 0) >= :since) ORDER BY host_id, first_t, id", w.args):
        events.setdefault(r[0], []).append(r[1:])
    probes: Dict[int, list] = {}
    for r in db.execute("SELECT host_id, t, vantage, target, pmtu, black_hole, mss_port, mss_synack, mss_used FROM probes"
                        f" WHERE {w.only()} AND t >= :since ORDER BY host_id, target, t", w.args):
        probes.setdefault(r[0], []).append(
            {"taken_at": iso(r[1]), "vantage": r[2], "target": r[3], "pmtu": r[4], "black_hole": bool(r[5]),
             "mss": {"port": r[6], "synack": r[7], "used": r[8]}})
    findings = dict(db.execute(
        "SELECT host_id, findings FROM (SELECT host_id, findings, row_number() OVER (PARTITION BY host_id"
        f" ORDER BY t DESC, id DESC) AS k FROM findings WHERE {w.only()}) WHERE k = 1", w.args))
    out = []
    none = (0, None, None) + (None,) * n_m + (None,) * n_s
    for hid, name, os_name in hosts:
        row = summary.get(hid, none)
        evs = [event_dict(r, name) for r in events.get(hid, ())]
        state = max((SEVERITIES.get(e["severity"], OK) for e in evs if e["state"] == "open"), default=OK)
        found = json.loads(findings[hid]) if hid in findings else []
        h = {"host": name, "os": os_name, "state": STATE_NAMES[state], "snapshots": row[0] or 0,
             "first": iso(row[1]), "last": iso(row[2]), "peaks": dict(zip(METRICS, row[3:3 + n_m])),
             "totals": {c: v or 0 for c, v in zip(SUMMED, row[3 + n_m:])}, "resets": resets.get(hid, []),
             "events": evs, "probes": probes.get(hid, []),
             "findings": [{"code": f.get("code"), "severity": f.get("severity"), "title": f.get("title")}
                          for f in found]}
        if detail == "busy":
            h["busy_hours"] = _busy(db, w, hid)
        out.append(h)
    return _Collected(out, [hid for hid, _, _ in hosts], w, db)


def _busy(db, w: _Window, hid: int) -> list:
    """The host's last 48 hours with fragments, oldest first (the roll-up's key read backwards)."""
    got = db.execute(f"{w.hours(_BUSY)} ORDER BY h DESC LIMIT 48",
                     dict(w.args, hid=hid)).fetchall()
    return [(r[0], dict(zip(METRICS, r[1:]))) for r in reversed(got)]


def render(store: Store, since_t: float, names: Optional[Sequence[str]], fmt: str) -> Iterator[str]:
    """The report in pieces, in order (JSON and HTML a host at a time)."""
    got = _collect(store, since_t, names, "busy" if fmt == "md" else "summary")
    now = time.time()
    if fmt == "json":
        return _json(store.path, got, since_t, now)
    if fmt == "md":
        return iter([_markdown(got.hosts, since_t, now)])
    if fmt == "html":
        return _html(got, since_t, now)
    return iter([_table(got.hosts, since_t, now)])


def _json(path: str, got: _Collected, since_t: float, now: float) -> Iterator[str]:
    from toolkit.audit.run import TOOL
    head = dumps({"schema": REPORT_SCHEMA, "tool": TOOL, "store": path, "since": iso(since_t),
                  "until": iso(now), "hosts": []})
    yield head[:-2]                                             # ... "hosts": [
    for i in range(len(got.hosts)):
        yield (", " if i else "") + dumps(got.with_series(i))    # C1 and bidi controls escaped
    yield "]}\n"


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


EVENT_HEADERS = ["host", "event", "key", "severity", "state", "first seen", "last seen", "cleared", "count", "detail"]


def _table(hosts: List[dict], since_t: float, now: float) -> str:
    out = [f"audit report {iso(since_t)} .. {iso(now)}, {len(hosts)} host(s)", ""]
    out.append(table_text([["-" if v is None else v for v in r] for r in _rows(hosts)], HEADERS))
    evs = [[e["host"], e["event"], e["key"] or "-", e["severity"], e["state"], e["first_seen"], e["last_seen"],
            e["cleared_at"] or "-", e["count"], e["detail"]] for h in hosts for e in h["events"]]
    if evs:
        out += ["", _plain(evs, EVENT_HEADERS, right={EVENT_HEADERS.index("count")})]
    return "\n".join(out) + "\n"


def _plain(rows: List[list], headers: List[str], right=frozenset()) -> str:
    """tabulate's "simple" table with the column types given, not guessed from every cell:
    the `right` columns aligned right, the others left and shown as they are (a host named
    007 stays 007), every control character a visible `?` (a value never starts a forged row)."""
    return table_text([["" if v is None else str(v) for v in r] for r in rows], headers,
                      colalign=["right" if i in right else "left" for i in range(len(headers))])


def _md(v) -> str:
    """A Markdown table cell: the one rule for text from outside first (output.safe: no
    control, no line break), then what would end the cell or start markup (| ` < \\)."""
    s = "-" if v is None else safe(v)
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("<", "&lt;")


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


def _html(got: _Collected, since_t: float, now: float) -> Iterator[str]:
    """The page a host at a time: the summary table, then each host's charts from its series."""
    from toolkit.report.html import escape
    from toolkit.report.svg import line_chart
    hosts = got.hosts
    e = lambda v: escape("-" if v is None else v)  # noqa: E731    (output.safe, then HTML's escaping)
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
    yield "\n".join(out) + "\n"
    for i in range(len(hosts)):
        h = got.with_series(i)
        out = []
        out.append(f'<h2 id="{e(h["host"])}">{e(h["host"])} <span class="{e(h["state"])}">{e(h["state"])}</span></h2>')
        out.append(f'<p class="note">{e(h["os"])}; {h["snapshots"]} snapshot(s) from {e(h["first"])} to {e(h["last"])}'
                   + (f"; resets at {e(', '.join(h['resets']))}" if h["resets"] else "") + "</p>")
        charts = []
        series = []
        days = [(t - day0) / 86400.0 for t in h["hours"]]
        for m in CHARTED:
            pts = [(x, v) for x, v in zip(days, h["series"][m]) if v is not None]
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
        yield "\n".join(out) + "\n"
    yield "</body></html>\n"


__all__ = ["FORMATS", "render", "COLUMNS"]
