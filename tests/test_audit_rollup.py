"""The hourly roll-up (store schema 3, snapshot counts schema 4): always what grouping the
snapshots and deltas by hour gives, after a run, a run that adds history in the middle, a
reparse and --keep; an older store gets it filled on open; the report over it is what the
report over the deltas was."""
import json
import sqlite3
from pathlib import Path

from auditlib import STEP, T0, cron_log, iso, mssdiag, rows
from toolkit.audit.store import ROLLUP, SCHEMA_VERSION, Store


def _grouped(store: Path) -> list:
    db = sqlite3.connect(store)
    try:
        return sorted(db.execute(ROLLUP.format(where="1")).fetchall())
    finally:
        db.close()


def _rollup(store: Path) -> list:
    return sorted(rows(store, "SELECT * FROM hourly"))


def _steps(n: int, start: int = 0, reboot: int = -1):
    out, v = [], start
    for i in range(n):
        v = 3 if i == reboot else v + (i % 5) * 2
        out.append(dict(ReasmReqds=v, ReasmOKs=v // 2, ReasmFails=v // 7, InReceives=1000 + 10 * v))
    return out


def test_rollup_follows_every_change_of_the_deltas(tmp_path):
    store = tmp_path / "a.sqlite"
    early, late = tmp_path / "early.log", tmp_path / "late.log"
    steps = _steps(40, reboot=25)
    late.write_text(cron_log(steps[20:], start=T0 + 20 * STEP))         # hours 5..10
    early.write_text(cron_log(steps[:20]))                              # hours 0..5, stored after
    run = mssdiag("audit", "run", str(late), "--host", "h1", "--store", str(store), "--now", iso(T0 + 41 * STEP))
    assert run.returncode in (0, 4), run.stderr
    assert _rollup(store) == _grouped(store) and len(_rollup(store)) >= 4
    run = mssdiag("audit", "run", str(early), "--host", "h1", "--store", str(store), "--now", iso(T0 + 42 * STEP))
    assert run.returncode in (0, 4), run.stderr
    assert rows(store, "SELECT count(*) FROM deltas") == [(39,)]
    assert _rollup(store) == _grouped(store)
    assert sum(r[3] for r in _rollup(store)) == 38, "every ok interval once; the reboot's is not"
    run = mssdiag("audit", "reparse", "--store", str(store), "--all")
    assert run.returncode in (0, 4), run.stderr
    assert _rollup(store) == _grouped(store)
    run = mssdiag("audit", "run", "--store", str(store), "--keep", "4h", "--now", iso(T0 + 40 * STEP))
    assert run.returncode in (0, 4), run.stderr
    assert rows(store, "SELECT count(*) FROM snapshots") == [(17,)]
    assert _rollup(store) == _grouped(store)
    assert rows(store, "SELECT sum(snapshots), min(first_t), max(last_t) FROM hourly") == \
        rows(store, "SELECT count(*), min(t), max(t) FROM snapshots"), "schema 4: the snapshots counted per hour"
    assert rows(store, "PRAGMA integrity_check") == [("ok",)]


def test_an_older_store_gets_its_rollup_on_open_and_reports_the_same(tmp_path):
    store = tmp_path / "a.sqlite"
    log = tmp_path / "h.log"
    log.write_text(cron_log(_steps(30, reboot=12)))
    run = mssdiag("audit", "run", str(log), "--host", "h1", "--store", str(store), "--now", iso(T0 + 31 * STEP))
    assert run.returncode in (0, 4), run.stderr
    since = iso(T0 + 7 * STEP)                      # cuts an hour: that hour comes from its deltas
    env = {"SOURCE_DATE_EPOCH": "1"}
    before = mssdiag("audit", "report", "--store", str(store), "--since", since, "-f", "json", env=env)
    # what a schema 2 store looked like: no roll-up, no resets index
    db = sqlite3.connect(store)
    db.executescript("DROP TABLE hourly; DROP INDEX deltas_reset; DROP INDEX snapshots_run;"
                     " DROP INDEX events_changed_run; PRAGMA user_version = 2;")
    db.close()
    with Store(str(store)) as st:
        assert st.schema_version() == SCHEMA_VERSION >= 4      # later schemas apply too
    assert _rollup(store) == _grouped(store) and _rollup(store)
    after = mssdiag("audit", "report", "--store", str(store), "--since", since, "-f", "json", env=env)
    assert before.returncode == after.returncode == 0, (before.stderr, after.stderr)
    a, b = json.loads(before.stdout), json.loads(after.stdout)
    a.pop("until"), b.pop("until")
    assert a == b
    (h,) = a["hosts"]
    assert h["resets"] and h["hours"] and any(v for v in h["series"]["reasm_reqds_per_h"])
    # the cut hour: only the deltas from `since` on count in it
    first_hour = h["hours"][0]
    assert first_hour < T0.timestamp() + 7 * STEP.total_seconds()
    got = rows(store, "SELECT round(sum(reasm_reqds) * 3600.0 / sum(elapsed_s), 3) FROM deltas WHERE host_id = 1"
                      " AND kind = 'ok' AND elapsed_s > 0 AND t >= ? AND t < ?",
               (T0.timestamp() + 7 * STEP.total_seconds(), first_hour + 3600))[0][0]
    assert h["series"]["reasm_reqds_per_h"][0] == got
