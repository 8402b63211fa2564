"""Events from a host's history: opened, updated while they last (one open event per host,
type and key: never a duplicate), cleared when the condition goes away.

Threshold events are judged per interval on the increase per hour (IPv4 + IPv6) against
monitoring-plugins ranges; an interval across a reset (reboot) has no known increase, so it
opens `counter-reset` and never a spike. Probe events compare each probe with the previous
probe of the same target from the same vantage. `stale` is judged at every run against the
clock. Events already judged are not judged again: each host remembers how far it went.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from toolkit.audit.config import Pair, Settings
from toolkit.audit.model import CRITICAL, METRIC_COLUMN, OK, SEVERITIES, THRESHOLD_EVENTS, WARNING
from toolkit.audit.store import DeltaRow, Store, iso

SEVERITY_OF = {OK: "info", WARNING: "warning", CRITICAL: "critical"}


def judge(value: Optional[float], pair: Optional[Pair]) -> int:
    """OK, WARNING or CRITICAL for a value against (warning, critical) ranges."""
    if value is None or pair is None:
        return OK
    warn, crit = pair
    if crit is not None and crit.alert(value):
        return CRITICAL
    if warn is not None and warn.alert(value):
        return WARNING
    return OK


def metrics(d: DeltaRow) -> Dict[str, Optional[float]]:
    return {m: (None if (v := d.per_hour(col)) is None else round(v, 3)) for m, col in METRIC_COLUMN.items()}


@dataclass
class Open:
    id: int
    count: int
    peak: Optional[float]
    first_t: float
    opened: Optional[str] = None          # what was said when it opened, kept in its evidence
    pending: Optional[list] = None        # an update not written yet (Book.flush)


class Book:
    """A host's open events, kept in memory while one host is judged."""

    def __init__(self, store: Store, host_id: int, run_id: Optional[int], defer: bool = False):
        """`defer`: updates of an open event are written once, by `flush` (or when it clears),
        not at every interval that sees it again (what judging a day of intervals costs)."""
        self.db, self.host_id, self.run_id, self.defer = store.db, host_id, run_id, defer
        self.open: Dict[Tuple[str, str], Open] = {}
        for r in self.db.execute("SELECT id, type, key, count, peak, first_t, evidence FROM events"
                                 " WHERE host_id = ? AND state = 'open'", (host_id,)):
            opened = json.loads(r[6]).get("opened") if r[6] else None
            self.open[(r[1], r[2])] = Open(r[0], r[3], r[4], r[5], opened)

    def is_open(self, type_: str, key: str = "") -> bool:
        return (type_, key) in self.open

    def raise_(self, type_: str, severity: str, t: float, detail: str, key: str = "",
               value: Optional[float] = None, evidence: Optional[dict] = None) -> None:
        o = self.open.get((type_, key))
        if o is not None and o.opened:
            evidence = {**(evidence or {}), "opened": o.opened}
        elif o is None and evidence is not None:
            evidence = {**evidence, "opened": detail}
        ev = evidence or None                      # written as JSON (for an update, when written)
        if o is None:
            ev = json.dumps(ev, separators=(",", ":")) if ev else None
            cur = self.db.execute(
                "INSERT INTO events(host_id, type, key, severity, state, first_t, last_t, count, value, peak, detail,"
                " evidence, changed_run) VALUES (?,?,?,?, 'open', ?,?,1,?,?,?,?,?)",
                (self.host_id, type_, key, severity, t, t, value, value, detail, ev, self.run_id))
            self.open[(type_, key)] = Open(cur.lastrowid, 1, value, t, (evidence or {}).get("opened"))
            return
        o.count += 1
        if value is not None:
            o.peak = value if o.peak is None else max(o.peak, value)
        if o.pending is not None:          # what the updates written one by one would leave
            t = max(t, o.pending[0])
            ev = ev if ev is not None else o.pending[6]
        o.pending = [t, o.count, value, o.peak, severity, detail, ev, self.run_id, o.id]
        if not self.defer:
            self._write(o)

    def _write(self, o: Open) -> None:
        p = o.pending
        p[6] = json.dumps(p[6], separators=(",", ":")) if p[6] else None
        self.db.execute("UPDATE events SET last_t = max(last_t, ?), count = ?, value = ?, peak = ?, severity = ?,"
                        " detail = ?, evidence = coalesce(?, evidence), changed_run = ? WHERE id = ?", p)
        o.pending = None

    def flush(self) -> None:
        for o in self.open.values():
            if o.pending is not None:
                self._write(o)

    def clear(self, type_: str, t: float, key: str = "") -> None:
        o = self.open.pop((type_, key), None)
        if o is not None:
            if o.pending is not None:
                self._write(o)
            self.db.execute("UPDATE events SET state = 'cleared', cleared_t = ?, changed_run = ? WHERE id = ?",
                            (max(t, o.first_t), self.run_id, o.id))

    def keys(self, type_: str) -> List[str]:
        return [k for (t, k) in self.open if t == type_]


def span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _fmt(v: Optional[float]) -> str:
    return "unknown" if v is None else f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def _clean_before(store: Store, host_id: int, t: float) -> Tuple[int, Optional[float]]:
    """How many clean intervals (no fragment received or created) came right before t, and since when."""
    row = store.db.execute("SELECT max(t) FROM deltas WHERE host_id = ? AND t < ? AND kind = 'ok' AND"
                           " (coalesce(reasm_reqds, 0) > 0 OR coalesce(frag_creates, 0) > 0)", (host_id, t)).fetchone()
    last_dirty = row[0]
    row = store.db.execute("SELECT count(*), min(t - coalesce(elapsed_s, 0)) FROM deltas WHERE host_id = ? AND t < ?"
                           " AND t > ? AND kind = 'ok'", (host_id, t, last_dirty if last_dirty is not None else -1e18)
                           ).fetchone()
    return row[0], row[1]


def judge_deltas(store: Store, host_id: int, settings: Settings, run_id: Optional[int]) -> int:
    """Judge every interval of the host not judged yet; returns how many were judged."""
    after = store.db.execute("SELECT evaluated_t FROM hosts WHERE id = ?", (host_id,)).fetchone()[0]
    rows = store.deltas(host_id, after_t=after if after is not None else -1e18)
    if not rows:
        return 0
    book = Book(store, host_id, run_id, defer=True)
    reset_state = settings.states.get("counter-reset", "info")
    for d in rows:
        if d.kind == "reset":
            downs = [e for e in d.events if e["type"] == "reset"]
            boot = next((e["boot"] for e in downs if e.get("boot")), None)
            downs = [e for e in downs if not e.get("boot")]
            first = downs[0] if downs else {}
            what = (f"{first['family']} {first['counter']} {first['from']:,} -> {first['to']:,}" if first
                    else "several counters")
            detail = (f"the host booted at {boot} (its boot time changed)" + (f"; counters went down ({what})"
                      if first else "") if boot else f"counters went down ({what}): a restart")
            book.raise_("counter-reset", reset_state, d.t, f"{detail}; no increase is known for this interval",
                        evidence={"resets": downs[:4], **({"boot": boot} if boot else {})})
            continue
        book.clear("counter-reset", d.t)
        if d.kind != "ok" or not d.elapsed_s or d.elapsed_s <= 0:
            continue
        values = metrics(d)
        for event, names in THRESHOLD_EVENTS.items():
            known = [(m, values[m]) for m in names if values[m] is not None]
            if not known:
                continue                          # this OS does not report these counters
            states = [(judge(v, settings.thresholds.get(m)), m, v) for m, v in known]
            state, metric, value = max(states, key=lambda s: (s[0], s[2]))
            if state == OK:
                book.clear(event, d.t)
                continue
            parts = ", ".join(f"{m} {_fmt(v)}" for m, v in known)
            detail = f"{parts} over {span(d.elapsed_s)}"
            evidence = {"metrics": dict(known), "elapsed_s": d.elapsed_s,
                        "increases": {METRIC_COLUMN[m]: d.increases.get(METRIC_COLUMN[m]) for m in names}}
            if event == "fragmentation" and not book.is_open(event):
                clean, since = _clean_before(store, host_id, d.t)
                detail += (f"; first after {clean} clean interval(s) since {iso(since)}" if clean
                           else "; present since the history began")
                evidence["clean_intervals_before"] = clean
            book.raise_(event, SEVERITY_OF[state], d.t, detail, value=value, evidence=evidence)
    book.flush()
    store.db.execute("UPDATE hosts SET evaluated_t = ? WHERE id = ?", (rows[-1].t, host_id))
    return len(rows)


def judge_probes(store: Store, host_id: int, settings: Settings, run_id: Optional[int]) -> int:
    """Judge every probe of the host not judged yet against the one before it (same target, vantage)."""
    done = store.db.execute("SELECT probes_evaluated_id FROM hosts WHERE id = ?", (host_id,)).fetchone()[0]
    rows = store.db.execute("SELECT id, t, vantage, target, pmtu, black_hole, mss_port, mss_synack, mss_used"
                            " FROM probes WHERE host_id = ? AND id > ? ORDER BY t, id", (host_id, done)).fetchall()
    if not rows:
        return 0
    book = Book(store, host_id, run_id)
    for pid, t, vantage, target, pmtu, black_hole, port, synack, used in rows:
        key = f"{vantage} -> {target}" if vantage else target
        prev = store.db.execute("SELECT pmtu, mss_port, mss_synack, mss_used FROM probes WHERE host_id = ? AND"
                                " target = ? AND coalesce(vantage, '') = ? AND (t < ? OR (t = ? AND id < ?))"
                                " ORDER BY t DESC, id DESC LIMIT 1",
                                (host_id, target, vantage or "", t, t, pid)).fetchone()
        if black_hole:
            book.raise_("black-hole", settings.states["black-hole"], t,
                        f"big DF packets to {target} vanish without ICMP" + (f" (path MTU {pmtu})" if pmtu else ""),
                        key=key, value=pmtu)
        else:
            book.clear("black-hole", t, key)
        if prev is not None and prev[0] and pmtu:
            if prev[0] != pmtu:
                book.raise_("pmtu-changed", settings.states["pmtu-changed"], t,
                            f"path MTU to {target} changed {prev[0]} -> {pmtu}", key=key, value=pmtu,
                            evidence={"from": prev[0], "to": pmtu})
            else:
                book.clear("pmtu-changed", t, key)
        mkey = f"{key}:{port}" if port else key
        if prev is not None and (synack or used) and (prev[2] or prev[3]) and (prev[1] or None) == (port or None):
            if (prev[2], prev[3]) != (synack, used):
                book.raise_("mss-changed", settings.states["mss-changed"], t,
                            f"MSS of {target}{f' port {port}' if port else ''} changed: SYN-ACK {prev[2]} -> {synack},"
                            f" used {prev[3]} -> {used}", key=mkey, value=used or synack,
                            evidence={"from": {"synack": prev[2], "used": prev[3]}, "to": {"synack": synack, "used": used}})
            else:
                book.clear("mss-changed", t, mkey)
    store.db.execute("UPDATE hosts SET probes_evaluated_id = ? WHERE id = ?", (max(r[0] for r in rows), host_id))
    return len(rows)


def interval_of(store: Store, host_id: int, settings: Settings) -> Optional[float]:
    """The expected time between snapshots: configured, else the median of the last 8 intervals."""
    if settings.interval:
        return settings.interval
    rows = [r[0] for r in store.db.execute("SELECT elapsed_s FROM deltas WHERE host_id = ? AND elapsed_s > 0"
                                           " ORDER BY t DESC LIMIT 8", (host_id,))]
    return statistics.median(rows) if rows else None


def judge_stale(store: Store, host_id: int, settings: Settings, now: float, run_id: Optional[int]) -> None:
    last_t = store.db.execute("SELECT last_t FROM hosts WHERE id = ?", (host_id,)).fetchone()[0]
    coll = store.db.execute("SELECT t, status, command, rc, detail FROM collections WHERE host_id = ?"
                            " ORDER BY t DESC, id DESC LIMIT 1", (host_id,)).fetchone()
    book = Book(store, host_id, run_id)
    state = settings.states["stale"]
    if coll is not None and coll[1] != "ok" and (last_t is None or coll[0] > last_t):
        why = (f"collection {coll[1]} at {iso(coll[0])}" + (f" (rc {coll[3]})" if coll[3] is not None else "")
               + (f": {coll[4]}" if coll[4] else "")
               + (f"; last snapshot {iso(last_t)}" if last_t is not None else "; no snapshot stored yet"))
        book.raise_("stale", state, coll[0], why, value=None if last_t is None else round(now - last_t),
                    evidence={"status": coll[1], "command": coll[2], "rc": coll[3], "last_snapshot": iso(last_t)})
        return
    if last_t is None:
        return
    interval = interval_of(store, host_id, settings)
    age = now - last_t
    if interval and age > settings.stale_intervals * interval:
        book.raise_("stale", state, now,
                    f"no snapshot for {age / 3600:.1f} h (limit {settings.stale_intervals:g} x "
                    f"{span(interval)}); last {iso(last_t)}", value=round(age),
                    evidence={"age_s": round(age), "interval_s": interval, "stale_intervals": settings.stale_intervals})
    else:
        book.clear("stale", last_t if last_t > 0 else now)


def host_state(store: Store, host_id: int) -> int:
    """The worst state among the host's open events."""
    row = store.db.execute("SELECT severity FROM events WHERE host_id = ? AND state = 'open'", (host_id,)).fetchall()
    return max((SEVERITIES.get(r[0], OK) for r in row), default=OK)

