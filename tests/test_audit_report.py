"""`mssdiag audit report` over a small store built by the real ingest (reportlib.build).

tests/expected/audit-report/ holds what the report wrote for that store before the snapshot
counts moved into the roll-up (store schema 4) and the queries went from one per host to one
per kind: written by the report of commit 870a1f8, they must not change. To write them again
after a change meant to alter the report, run with MSSDIAG_WRITE_EXPECTED=1 and read the diff.
"""
from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from unittest import mock

import pytest

import reportlib
from auditlib import mssdiag, rows
from toolkit.audit import report
from toolkit.audit.store import MIGRATIONS, SCHEMA_VERSION, Store, _statements, epoch

EXPECTED = Path(__file__).resolve().parent / "expected" / "audit-report"
UNTIL = epoch("2026-03-05T00:00:00Z")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return reportlib.build(tmp_path_factory.mktemp("report"))


def _render(store: Path, since: str, names, fmt: str) -> str:
    with Store(str(store), create=False) as st, mock.patch.object(report.time, "time", return_value=UNTIL):
        text = "".join(report.render(st, epoch(since), names, fmt))
    if fmt == "json":
        assert text == json.dumps(json.loads(text), ensure_ascii=False) + "\n", "streamed: one json.dumps"
        doc = json.loads(text)
        doc["tool"] = doc["store"] = "-"
        text = json.dumps(doc, indent=1)
    return text


def _case(name: str):
    which, fmt = name.split(".")
    since, hosts = which.split("-")
    return reportlib.SINCES[since], (["web2", "LONE"] if hosts == "some" else None), fmt


@pytest.mark.parametrize("name", sorted(p.name for p in EXPECTED.iterdir()))
def test_every_format_is_what_the_report_wrote_before(built, name):
    got = _render(built, *_case(name))
    if os.environ.get("MSSDIAG_WRITE_EXPECTED"):
        (EXPECTED / name).write_text(got)
    assert got == (EXPECTED / name).read_text()


def test_a_schema_3_store_gets_its_snapshot_counts_on_open(built, tmp_path):
    store = tmp_path / "old.sqlite"
    src, dst = sqlite3.connect(built), sqlite3.connect(store)
    src.backup(dst)
    src.close(), dst.close()
    hourly = sorted(rows(store, "SELECT * FROM hourly"))
    reports = {n: _render(store, *_case(n)) for n in ("cut-all.json", "cut-all.table", "all-some.md")}
    # the store as schema 3 left it: the roll-up of the deltas alone, no snapshot counts
    db = sqlite3.connect(store)
    db.execute("DROP TABLE hourly")
    for statement in _statements(MIGRATIONS[2])[:2]:
        db.execute(statement)
    db.execute("PRAGMA user_version = 3")
    db.commit()
    assert [c[1] for c in db.execute("PRAGMA table_info(hourly)")][-1] == "forw_datagrams"
    db.close()
    with Store(str(store)) as st:
        assert st.schema_version() == SCHEMA_VERSION >= 4      # later schemas apply too
    assert sorted(rows(store, "SELECT * FROM hourly")) == hourly
    counts = rows(store, "SELECT host_id, sum(snapshots), min(first_t), max(last_t) FROM hourly GROUP BY host_id")
    assert counts == rows(store, "SELECT host_id, count(*), min(t), max(t) FROM snapshots GROUP BY host_id")
    assert len(counts) == 6
    # hours with snapshots but no interval of known increase have rows now: hosts with one
    # snapshot, and vos1's two dumps of one file time (an interval of no length)
    assert rows(store, "SELECT o.name, h.snapshots FROM hourly h JOIN hosts o ON o.id = h.host_id"
                       " WHERE h.intervals = 0 ORDER BY o.name") == [("hpux1", 1), ("lone", 1), ("vos1", 2)]
    for name, text in reports.items():
        assert _render(store, *_case(name)) == text


def test_the_events_table_is_tabulates_without_the_guessing():
    from tabulate import tabulate
    heads = ["host", "event", "count", "detail"]
    ordinary = [["web1", "fragmentation", 3, "reasm_reqds_per_h 360 over 15 min"],
                ["10.1.2.3", "black-hole", 12, "big DF packets to 198.51.100.20 vanish"],
                ["a-much-longer-host-name.example", "stale", 1, "-"]]
    assert report._plain(ordinary, heads, right={2}) == tabulate(ordinary, headers=heads)
    odd = [["007", "x", 1, "line one\nline two"], ["1234", "y\x1b[2J", 22, "\u202eevil"]]
    got = report._plain(odd, heads, right={2}).splitlines()
    assert len(got) == 4, "no value starts a row of its own"
    assert got[2].startswith("007   ") and got[3].startswith("1234  "), "names are text: left, as written"
    assert "line one?line two" in got[2] and "y?[2J" in got[3] and "?evil" in got[3]


def test_report_to_a_file_it_cannot_write_is_one_line(built, tmp_path):
    done = mssdiag("audit", "report", "--store", str(built), "--since", "2000-01-01T00:00:00Z", "-f", "html",
                   "-o", str(tmp_path / "missing" / "r.html"))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("mssdiag: ") and "cannot write" in done.stderr and len(done.stderr.splitlines()) == 1
    out = tmp_path / "r.json"
    done = mssdiag("audit", "report", "--store", str(built), "--since", "2000-01-01T00:00:00Z", "--json", "-o", str(out))
    assert done.returncode == 0 and done.stderr == ""
    assert [h["host"] for h in json.loads(out.read_text())["hosts"]] == ["app<1>|`x`", "hpux1", "lone", "vos1",
                                                                        "web1", "web2"]
