"""The one data model every output reads (Nagios, Checkmk, Prometheus, JSON Lines, the
terminal summary): per host its state, latest interval's metrics with their thresholds,
latest counters, open events and latest probes; for the run, what changed."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from toolkit.audit.config import Config, Pair
from toolkit.audit.events import host_state, metrics
from toolkit.audit.model import METRICS, OK, STATE_NAMES, UNKNOWN, WARNING
from toolkit.audit.store import Store, iso


@dataclass
class HostStatus:
    name: str
    os: Optional[str]
    state: int
    last_t: Optional[float]
    snapshots: int
    interval_end_t: Optional[float]
    elapsed_s: Optional[float]
    metrics: Dict[str, Optional[float]]
    thresholds: Dict[str, Pair]
    counters: Dict[str, Dict[str, Optional[int]]]           # family -> counter -> latest total
    events: List[dict]                                      # open events
    probes: List[dict]                                      # latest probe per target and vantage
    findings: List[dict]

    def to_dict(self, now: float) -> dict:
        return {"host": self.name, "os": self.os, "state": STATE_NAMES[self.state],
                "last_snapshot": iso(self.last_t), "age_s": None if self.last_t is None else round(now - self.last_t),
                "snapshots": self.snapshots, "interval_end": iso(self.interval_end_t), "elapsed_s": self.elapsed_s,
                "metrics": self.metrics,
                "thresholds": {m: {"warning": w.text if w else None, "critical": c.text if c else None}
                               for m, (w, c) in self.thresholds.items()},
                "counters": self.counters, "events": self.events, "probes": self.probes,
                "findings": [{"code": f.get("code"), "severity": f.get("severity"), "title": f.get("title")}
                             for f in self.findings]}


@dataclass
class Status:
    store: str
    now: float
    run_id: Optional[int]
    hosts: List[HostStatus] = field(default_factory=list)
    new_snapshots: List[dict] = field(default_factory=list)
    new_probes: List[dict] = field(default_factory=list)
    changed_events: List[dict] = field(default_factory=list)
    collections: List[dict] = field(default_factory=list)
    failed_inputs: List[str] = field(default_factory=list)
    read_inputs: int = 0
    last_success_t: Optional[float] = None

    @property
    def state(self) -> int:
        if not self.hosts:
            return UNKNOWN
        worst = max(h.state for h in self.hosts)
        if self.failed_inputs and worst < WARNING:
            worst = WARNING
        return worst


def event_dict(row, host: str) -> dict:
    (eid, type_, key, severity, state, first_t, last_t, cleared_t, count, value, peak, detail, evidence) = row
    return {"host": host, "event": type_, "key": key, "severity": severity, "state": state,
            "first_seen": iso(first_t), "last_seen": iso(last_t), "cleared_at": iso(cleared_t), "count": count,
            "value": value, "peak": peak, "detail": detail, "evidence": json.loads(evidence) if evidence else None}


EVENT_COLS = "id, type, key, severity, state, first_t, last_t, cleared_t, count, value, peak, detail, evidence"


def probe_dict(row, host: str) -> dict:
    t, vantage, target, address, family, pmtu, method, black_hole, port, synack, used, source = row
    return {"host": host, "taken_at": iso(t), "vantage": vantage, "target": target, "address": address,
            "family": family, "pmtu": pmtu, "pmtu_method": method, "black_hole": bool(black_hole),
            "mss": {"port": port, "synack": synack, "used": used}, "source": source}


PROBE_COLS = ("t, vantage, target, address, family, pmtu, pmtu_method, black_hole, mss_port, mss_synack, mss_used,"
              " source")


def host_status(store: Store, host_id: int, name: str, cfg: Config) -> HostStatus:
    db = store.db
    os_name, last_t = db.execute("SELECT os, last_t FROM hosts WHERE id = ?", (host_id,)).fetchone()
    count = db.execute("SELECT count(*) FROM snapshots WHERE host_id = ?", (host_id,)).fetchone()[0]
    rows = store.deltas(host_id, after_t=(last_t or 0) - 1e-6) if last_t is not None else []
    d = rows[-1] if rows else None
    values = metrics(d) if d is not None else dict.fromkeys(METRICS)
    latest = store.latest_snapshot(host_id, name)
    counters = {}
    if latest is not None:
        os_name = latest.os
        for fam in ("ipv4", "ipv6"):
            v = getattr(latest, fam)
            if v is not None:
                counters[fam] = v
    events = [event_dict(r[0:], name) for r in db.execute(
        f"SELECT {EVENT_COLS} FROM events WHERE host_id = ? AND state = 'open' ORDER BY first_t", (host_id,))]
    probes = [probe_dict(r, name) for r in db.execute(
        f"SELECT {PROBE_COLS} FROM probes p WHERE host_id = ? AND id = (SELECT max(id) FROM probes q WHERE"
        " q.host_id = p.host_id AND q.target = p.target AND coalesce(q.vantage, '') = coalesce(p.vantage, ''))"
        " ORDER BY target", (host_id,))]
    row = db.execute("SELECT findings FROM findings WHERE host_id = ? ORDER BY t DESC, id DESC LIMIT 1",
                     (host_id,)).fetchone()
    settings = cfg.for_host(name)
    return HostStatus(name, os_name, host_state(store, host_id), last_t, count,
                      d.t if d else None, d.elapsed_s if d else None, values,
                      {m: settings.thresholds.get(m, (None, None)) for m in METRICS}, counters, events, probes,
                      json.loads(row[0]) if row else [])


def changes(store: Store, run_id: int) -> Dict[str, List[dict]]:
    """What this run added or changed: snapshots, probes, events, collections."""
    db = store.db
    names = dict(db.execute("SELECT id, name FROM hosts"))
    snaps = []
    for r in db.execute("SELECT s.id, s.host_id, s.taken_at, s.t, s.time_from, s.collected_t, s.source, s.os, s.format,"
                        " s.parser_version, s.forwarding, s.counters, s.warnings FROM snapshots s WHERE s.run_id = ?"
                        " ORDER BY s.host_id, s.t, s.id", (run_id,)):
        c = json.loads(r[11])
        snaps.append({"id": r[0], "host": names.get(r[1]), "taken_at": r[2], "t": iso(r[3]), "time_from": r[4],
                      "collected_at": iso(r[5]), "source": r[6], "os": r[7], "format": r[8], "parser_version": r[9],
                      "forwarding": None if r[10] is None else bool(r[10]), "ipv4": c.get("ipv4"),
                      "ipv6": c.get("ipv6"), "warnings": json.loads(r[12]) if r[12] else []})
    if snaps:
        by_id = {s["id"]: s for s in snaps}
        ids = list(by_id)
        for chunk in range(0, len(ids), 500):
            part = ids[chunk:chunk + 500]
            for sid, elapsed, kind, ev in db.execute(
                    f"SELECT snapshot_id, elapsed_s, kind, events FROM deltas WHERE snapshot_id IN"
                    f" ({','.join('?' * len(part))})", part):
                by_id[sid]["interval"] = {"elapsed_s": elapsed, "kind": kind, "events": json.loads(ev) if ev else []}
        for s in snaps:
            s.setdefault("interval", None)
    probes = [probe_dict(r[1:], names.get(r[0])) for r in db.execute(
        f"SELECT host_id, {PROBE_COLS} FROM probes WHERE run_id = ? ORDER BY t, id", (run_id,))]
    events = [event_dict(r[1:], names.get(r[0])) for r in db.execute(
        f"SELECT host_id, {EVENT_COLS} FROM events WHERE changed_run = ? ORDER BY first_t, id", (run_id,))]
    colls = [{"host": names.get(r[0]), "at": iso(r[1]), "status": r[2], "command": r[3], "rc": r[4], "source": r[5],
              "detail": r[6]} for r in db.execute(
        "SELECT host_id, t, status, command, rc, source, detail FROM collections WHERE run_id = ? ORDER BY t, id",
        (run_id,))]
    return {"snapshots": snaps, "probes": probes, "events": events, "collections": colls}


__all__ = ["HostStatus", "Status", "host_status", "changes", "OK"]
