"""One audit run, cron-safe: lock, gather, store, judge, build the status every output reads.

Everything the run adds is committed in transactions: a run killed at any point leaves the
store as it was before the transaction it was in (SQLite's journal), and the next run
stores what this one did not (ingest is idempotent) and judges what it did not judge
(each host remembers how far its events went).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from toolkit import __version__
from toolkit.audit import events, ingest
from toolkit.audit.config import Config
from toolkit.audit.files import RunLock
from toolkit.audit.status import Status, changes, host_status
from toolkit.audit.store import Store, resolve, storable

TOOL = f"mssdiag {__version__}"
BATCH = 200                     # hosts per transaction
FINDINGS_WINDOW = 4             # latest snapshots (3 intervals) the rules judge per host


@dataclass
class Options:
    paths: List[str] = field(default_factory=list)
    store: Optional[str] = None
    host: Optional[str] = None
    local: bool = False
    targets: List[str] = field(default_factory=list)
    ports: Sequence[int] = ()
    send_text: Optional[str] = None
    keep_s: Optional[float] = None
    wait_s: float = 60.0
    now: Optional[float] = None
    argv: Sequence[str] = ()
    findings: bool = True


def _findings(store: Store, host_id: int, name: str, facts, now: float, run_id: int,
              error: Callable[[str], None]) -> None:
    """Run the triage rules on the host's recent history and keep their JSON when it changed."""
    from toolkit import hosts as model
    from toolkit.rules import catalog
    snaps = store.history(host_id, name, limit=FINDINGS_WINDOW)
    probes = []
    from toolkit.probe.result import ProbeResult
    # the latest probe of each target from each vantage: paths that differ are each judged
    for (text,) in store.db.execute("SELECT result FROM probes p WHERE host_id = ? AND id = (SELECT max(id) FROM probes"
                                    " q WHERE q.host_id = p.host_id AND q.target = p.target"
                                    " AND coalesce(q.vantage, '') = coalesce(p.vantage, ''))", (host_id,)):
        probes.append((ProbeResult.from_dict(json.loads(text)), None, "store"))
    built = model.build(((s, None) for s in snaps), [facts] if facts else [], probes, forced=name)
    if not built:
        return
    h = built[0]
    if h.facts.os is None and h.snapshots:
        h.facts.os = h.snapshots[-1].os
    try:
        found = [f.to_dict() for f in catalog.evaluate(h)]
    except Exception as exc:        # the rules are another module's: never lose the run to them
        error(f"{name}: findings skipped: {type(exc).__name__}: {exc}")
        return
    text = json.dumps(found, sort_keys=True, separators=(",", ":"))
    key = hashlib.blake2b(text.encode(), digest_size=16).digest()
    last = store.db.execute("SELECT digest FROM findings WHERE host_id = ? ORDER BY t DESC, id DESC LIMIT 1",
                            (host_id,)).fetchone()
    if last is None or last[0] != key:
        store.db.execute("INSERT INTO findings(host_id, t, run_id, digest, findings) VALUES (?,?,?,?,?)",
                         (host_id, now, run_id, key, text))


def _store_host(store: Store, g: ingest.Gathered, h, name: str, now: float,
                run_id: int) -> Tuple[int, int, int, Optional[float]]:
    """One host's new snapshots, their deltas and its probes: (host id, snapshots added,
    probes added, the earliest new snapshot's time or None)."""
    added = probes_added = 0
    first: Optional[float] = None
    os_name = h.snapshots[-1].os if h.snapshots else None
    hid = store.host_id(name, os_name, h.identity)
    for snap in h.snapshots:
        st = g.stamps[id(snap)]
        new = store.add_snapshot(hid, snap, g.text(st), st.t, st.time_from, st.moment, now, run_id, st.boot_t)
        if new is not None:
            added += 1
            first = st.t if first is None else min(first, st.t)
    if first is not None:       # deltas commit with their snapshots: a kill never splits them
        store.refresh_deltas(hid, name, first)
    for r in h.probes:
        ps = g.probe_stamps.get(id(r))
        if ps is not None and store.add_probe(hid, r, ps.t, ps.moment, ps.source, ps.vantage, run_id) is not None:
            probes_added += 1
    return hid, added, probes_added, first


def run(opts: Options, cfg: Config, error: Callable[[str], None]) -> Status:
    path = resolve(opts.store)
    with RunLock(path + ".lock", opts.wait_s):
        with Store(path) as store:
            return _run(store, path, opts, cfg, error)


def _run(store: Store, path: str, opts: Options, cfg: Config, error: Callable[[str], None]) -> Status:
    now = time.time() if opts.now is None else opts.now
    with store.transaction():
        run_id = store.begin_run(TOOL, opts.argv, now)
    try:
        return _work(store, path, opts, cfg, error, now, run_id)
    except BaseException as exc:
        # the runs table never keeps a `running` row of a run that ended: what it stored stays
        # (committed a batch at a time), and the row says how it ended
        from toolkit.output import Interrupted
        ended = "interrupted" if isinstance(exc, (Interrupted, KeyboardInterrupt)) else "failed"
        try:
            store.rollback()
            with store.transaction():
                store.end_run(run_id, ended, 0, 0, 1, time.time() if opts.now is None else now)
        except Exception:
            pass                    # the store itself failed: its error is the one to report
        raise


# Data one host brings that the store cannot hold costs that host (one line), never the run.
_BAD_DATA = (ValueError, TypeError, OverflowError, sqlite3.InterfaceError, sqlite3.IntegrityError, sqlite3.DataError)


def _work(store: Store, path: str, opts: Options, cfg: Config, error: Callable[[str], None], now: float,
          run_id: int) -> Status:
    sources = bool(opts.paths or opts.local or opts.targets)
    g = ingest.gather(opts.paths, error, host=opts.host, local=opts.local, targets=opts.targets,
                      ports=opts.ports, send_text=opts.send_text, now=now) if sources else ingest.Gathered()
    added = probes_added = 0
    touched: Dict[int, float] = {}              # host id -> earliest new snapshot time
    probed: set = set()
    scope: Dict[int, str] = {}
    facts = {}
    for start in range(0, len(g.hosts), BATCH):
        with store.transaction():
            for h in g.hosts[start:start + BATCH]:
                name = storable(h.facts.name)
                try:
                    with store.savepoint():
                        hid, n, p, first = _store_host(store, g, h, name, now, run_id)
                except _BAD_DATA as exc:
                    error(f"{name}: not stored: {exc}")
                    g.outcome.failed.append(f"host {name}")
                    continue
                scope[hid] = store.db.execute("SELECT name FROM hosts WHERE id = ?", (hid,)).fetchone()[0]
                facts[hid] = h.facts
                added += n
                probes_added += p
                if first is not None:
                    touched[hid] = min(touched.get(hid, first), first)
                if p:
                    probed.add(hid)
    if g.collections:
        with store.transaction():
            for c in g.collections:
                hid = store.host_id(c.host)
                scope[hid] = store.db.execute("SELECT name FROM hosts WHERE id = ?", (hid,)).fetchone()[0]
                store.add_collection(hid, c.t, c.status, c.command, c.rc, c.source, c.detail, run_id)
    if not sources:
        rows = store.hosts([opts.host] if opts.host else None)
        if opts.host and not rows:
            error(f"{path}: no host {opts.host!r} in the store")
        scope = {hid: name for hid, name, _ in rows}

    ids = sorted(scope)
    for start in range(0, len(ids), BATCH):
        with store.transaction():
            for hid in ids[start:start + BATCH]:
                name = scope[hid]
                settings = cfg.for_host(name)
                events.judge_deltas(store, hid, settings, run_id)
                events.judge_probes(store, hid, settings, run_id)
                events.judge_stale(store, hid, settings, now, run_id)
                if opts.findings and (hid in touched or hid in probed):
                    _findings(store, hid, name, facts.get(hid), now, run_id, error)

    if opts.keep_s:
        with store.transaction():
            store.prune(now - opts.keep_s)

    status = Status(path, now, run_id)
    status.failed_inputs = list(dict.fromkeys(g.outcome.failed))
    status.read_inputs = len(g.outcome.parsed)
    for hid in ids:
        status.hosts.append(host_status(store, hid, scope[hid], cfg))
    ch = changes(store, run_id)
    status.new_snapshots, status.new_probes = ch["snapshots"], ch["probes"]
    status.changed_events, status.collections = ch["events"], ch["collections"]
    nothing = sources and not g.outcome.parsed
    with store.transaction():
        store.end_run(run_id, "failed" if nothing else "ok", added, probes_added, len(status.failed_inputs),
                      time.time() if opts.now is None else now)
    status.last_success_t = store.last_success()
    return status
