"""`mssdiag audit`: store, ingest, events, outputs, report, reparse, cron safety.

Inputs are real dumps: fixtures/netstat/ files as they are, and a real /proc/net/snmp
capture with chosen counter values for histories (auditlib.snmp_dump). The CLI runs as a
separate process, so exit codes and stdout are what cron, Nagios and Checkmk see.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditlib import ROOT, STEP, T0, cron_log, iso, mssdiag, rows, snmp_dump

from toolkit.audit import config as cfgmod
from toolkit.audit.ranges import RangeError, duration, parse_range
from toolkit.audit.store import SCHEMA_VERSION, Store, StoreError

FIX = ROOT / "fixtures" / "netstat"


# ---------------------------------------------------------------------------- ranges and config

@pytest.mark.parametrize("text,alerts,quiet", [
    ("10", [-1, 10.5, 11], [0, 5, 10]),
    ("0", [0.001, 3, -1], [0]),
    ("10:", [9.99, -5], [10, 1e9]),
    ("~:10", [10.5, 100], [-1e9, 0, 10]),
    ("10:20", [9, 21], [10, 15, 20]),
    ("@10:20", [10, 15, 20], [9, 21]),
])
def test_monitoring_plugins_ranges(text, alerts, quiet):
    r = parse_range(text)
    assert [r.alert(v) for v in alerts] == [True] * len(alerts)
    assert [r.alert(v) for v in quiet] == [False] * len(quiet)


@pytest.mark.parametrize("bad", ["", "abc", "20:10", "@", "1:2:3", "10x"])
def test_bad_ranges_are_refused(bad):
    with pytest.raises(RangeError):
        parse_range(bad)


def test_durations():
    assert duration("90d") == 90 * 86400 and duration("15m") == 900 and duration("30") == 30
    with pytest.raises(RangeError):
        duration("soon")


def test_config_layers_host_over_group_over_defaults(tmp_path):
    cfg = cfgmod.parse("""
interval = "15m"
[thresholds]
reasm_fails_per_h = { warning = "2", critical = "20" }
[states]
stale = "critical"
[groups.legacy]
hosts = ["vos*"]
interval = "1h"
thresholds.reasm_reqds_per_h = { warning = "100", critical = "1000" }
[hosts.vos2]
thresholds.reasm_reqds_per_h = { warning = "" }
stale_intervals = 6
""", "t.toml")
    web, vos1, vos2 = cfg.for_host("web1"), cfg.for_host("VOS1"), cfg.for_host("vos2")
    assert web.thresholds["reasm_fails_per_h"][0].text == "2" and web.thresholds["reasm_reqds_per_h"][0].text == "0"
    assert web.interval == 900 and web.states["stale"] == "critical" and web.group is None
    assert vos1.group == "legacy" and vos1.interval == 3600
    assert vos1.thresholds["reasm_reqds_per_h"][0].text == "100" and vos1.thresholds["reasm_reqds_per_h"][1].text == "1000"
    assert vos2.thresholds["reasm_reqds_per_h"][0] is None and vos2.thresholds["reasm_reqds_per_h"][1].text == "1000"
    assert vos2.stale_intervals == 6


@pytest.mark.parametrize("text,why", [
    ("[thresholds]\nreasm_fail_per_h = { warning = '1' }", "unknown metric"),
    ("[thresholds]\nreasm_fails_per_h = { warning = '20:10' }", "above the end"),
    ("[states]\nstale = 'bad'", "not one of"),
    ("intervall = '1h'", "unknown key"),
    ("[groups.x]\ninterval = '1h'", "host name patterns"),
    ("interval = 'soon'", "not a duration"),
])
def test_config_errors_name_the_key(text, why):
    with pytest.raises(cfgmod.ConfigError, match=why):
        cfgmod.parse(text, "audit.toml")


# ---------------------------------------------------------------------------- store

def test_store_schema_wal_and_refusals(tmp_path):
    path = tmp_path / "a.sqlite"
    with Store(str(path)) as st:
        assert st.schema_version() == SCHEMA_VERSION
        assert st.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    newer = tmp_path / "newer.sqlite"
    import sqlite3
    db = sqlite3.connect(newer)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
    db.close()
    with pytest.raises(StoreError, match="newer mssdiag"):
        Store(str(newer))
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE x(y)")
    db.close()
    with pytest.raises(StoreError, match="not an audit store"):
        Store(str(other))
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(os.urandom(8192))
    with pytest.raises(StoreError, match="not a usable audit store"):
        Store(str(junk))


# ---------------------------------------------------------------------------- ingest

@pytest.fixture
def store(tmp_path):
    return tmp_path / "audit.sqlite"


def _dumps(tmp_path: Path) -> Path:
    """Real fixtures under names that say their host (and the cron log of a whole day)."""
    d = tmp_path / "dumps"
    d.mkdir()
    shutil.copy(FIX / "linux/netns-cron-date-netstat-s.txt", d / "web1-2026-11-22.log")
    shutil.copy(FIX / "vos/seed_fig6a.txt", d / "vos1-before.txt")
    shutil.copy(FIX / "windows/powershell_e_s_utf16.txt", d / "win1-0900.txt")
    shutil.copy(FIX / "hpux/seed_fig6f.txt", d / "hpux1-0900.txt")
    return d


def test_ingest_is_idempotent_and_keeps_raw_text(tmp_path, store):
    d = _dumps(tmp_path)
    first = mssdiag("audit", "run", str(d), "--store", str(store), "--jsonl")
    assert first.returncode in (0, 4), first.stderr
    recs = [json.loads(line) for line in first.stdout.splitlines()]
    assert all(r["schema"] == "mssdiag.audit/1" and r["tool"].startswith("mssdiag ") for r in recs)
    snaps = [r for r in recs if r["type"] == "snapshot"]
    hosts = {r["host"] for r in snaps}
    assert hosts == {"web1", "vos1", "win1", "hpux1"}, hosts
    n = rows(store, "SELECT count(*) FROM snapshots")[0][0]
    assert n == len(snaps) >= 7
    again = mssdiag("audit", "run", str(d), "--store", str(store), "--jsonl")
    assert again.returncode in (0, 4), again.stderr
    assert not [line for line in again.stdout.splitlines() if json.loads(line)["type"] == "snapshot"]
    assert rows(store, "SELECT count(*) FROM snapshots")[0][0] == n
    assert rows(store, "SELECT count(*) FROM runs")[0][0] == 2
    # every stored text reads back as the snapshot it was (what reparse relies on)
    import parsers
    with Store(str(store)) as st:
        for sid, counters, os_name in st.db.execute("SELECT id, counters, os FROM snapshots"):
            again_snaps = list(parsers.iter_parse(st.text(sid), prefer=os_name))
            assert len(again_snaps) == 1
            assert {"ipv4": again_snaps[0].ipv4, "ipv6": again_snaps[0].ipv6} == json.loads(counters)
        raw, packed = st.db.execute("SELECT sum(size), sum(length(z)) FROM texts").fetchone()
        assert packed < raw / 2, (raw, packed)


def test_a_day_of_cron_snapshots_gives_events_resets_and_perfdata(tmp_path, store):
    # 09:00 clean, 09:15 clean, 09:30 40 fragments (160/h), 09:45 +20 reassembly failures (80/h),
    # 10:00 clean, 10:15 rebooted (every counter lower), 10:30 clean
    steps = [dict(ReasmReqds=0, ReasmOKs=0, InReceives=1000),
             dict(ReasmReqds=0, ReasmOKs=0, InReceives=2000),
             dict(ReasmReqds=40, ReasmOKs=20, InReceives=3000),
             dict(ReasmReqds=80, ReasmOKs=30, ReasmFails=20, InReceives=4000),
             dict(ReasmReqds=80, ReasmOKs=30, ReasmFails=20, InReceives=5000),
             dict(ReasmReqds=0, ReasmOKs=0, ReasmFails=0, InReceives=10, InDelivers=5, OutRequests=7),
             dict(ReasmReqds=0, ReasmOKs=0, ReasmFails=0, InReceives=900, InDelivers=800, OutRequests=700)]
    log = tmp_path / "web1-cron.log"
    log.write_text(cron_log(steps))
    now = iso(T0 + 6 * STEP + STEP / 3)
    done = mssdiag("audit", "run", str(log), "--host", "web1", "--store", str(store), "--now", now, "--jsonl")
    assert done.returncode == 0, done.stderr + done.stdout
    events = {(r["event"], r["state"]): r for r in map(json.loads, done.stdout.splitlines()) if r["type"] == "event"}
    frag = events[("fragmentation", "cleared")]
    assert frag["first_seen"] == iso(T0 + 2 * STEP) and frag["cleared_at"] == iso(T0 + 4 * STEP)
    assert "first after 1 clean interval(s) since 2026-03-02T09:00:00Z" in frag["evidence"]["opened"]
    assert frag["count"] == 2 and frag["peak"] == 160.0
    fails = events[("reassembly-failing", "cleared")]
    assert fails["severity"] == "critical" and fails["value"] == 80.0
    assert fails["first_seen"] == iso(T0 + 3 * STEP) and fails["cleared_at"] == iso(T0 + 4 * STEP)
    reset = events[("counter-reset", "cleared")]
    assert reset["first_seen"] == iso(T0 + 5 * STEP) and reset["severity"] == "info"
    # the interval across the reboot has no increase: no spike, no event from it
    kinds = [k for (k,) in rows(store, "SELECT kind FROM deltas ORDER BY t")]
    assert kinds == ["ok", "ok", "ok", "ok", "reset", "ok"]
    assert rows(store, "SELECT reasm_reqds FROM deltas WHERE kind = 'reset'") == [(None,)]
    assert len([e for e in events if e[0] == "fragmentation"]) == 1

    ok = mssdiag("audit", "run", "--store", str(store), "--now", now, "--nagios")
    assert ok.returncode == 0, ok.stdout
    line = ok.stdout.strip()
    assert line.startswith("MSSDIAG OK - web1: no open problem | ")
    assert "'reasm_fails_per_h'=0;0;10;0;" in line and "'reasm_reqds_per_h'=0;0;;0;" in line
    assert "'snapshot_age'=300s;;;0;" in line and "\n" not in line
    # a run over the same log again adds nothing and changes no event
    again = mssdiag("audit", "run", str(log), "--host", "web1", "--store", str(store), "--now", now, "--jsonl")
    assert not [r for r in map(json.loads, again.stdout.splitlines()) if r["type"] in ("event", "snapshot")]


def _history(tmp_path, store, last: dict, name="db1") -> subprocess.CompletedProcess:
    steps = [dict(ReasmReqds=0, ReasmOKs=0, InReceives=1000), dict(ReasmReqds=0, ReasmOKs=0, InReceives=2000), last]
    log = tmp_path / f"{name}.log"
    log.write_text(cron_log(steps))
    return mssdiag("audit", "run", str(log), "--host", name, "--store", str(store), "--now",
                   iso(T0 + 2 * STEP + STEP / 3), "--nagios")


def test_nagios_warning_and_critical_with_perfdata(tmp_path, store):
    warn = _history(tmp_path, store, dict(ReasmReqds=10, ReasmOKs=5, InReceives=3000))
    assert warn.returncode == 1, warn.stdout
    assert warn.stdout.startswith("MSSDIAG WARNING - 1 host (1 warning): db1: fragmentation (reasm_reqds_per_h 40")
    assert "'reasm_reqds_per_h'=40;0;;0;" in warn.stdout
    crit = _history(tmp_path, tmp_path / "b.sqlite", dict(ReasmReqds=10, ReasmOKs=5, FragFails=3, InReceives=3000))
    assert crit.returncode == 2, crit.stdout
    assert crit.stdout.startswith("MSSDIAG CRITICAL - ") and "'frag_fails_per_h'=12;0;10;0;" in crit.stdout
    # thresholds from the command line win: FragFails 12/h is only a warning under 20
    relaxed = mssdiag("audit", "run", "--store", str(tmp_path / "b.sqlite"), "--nagios", "-c", "frag_fails_per_h=20",
                      "--now", iso(T0 + 2 * STEP + STEP / 3))
    assert "'frag_fails_per_h'=12;0;20;0;" in relaxed.stdout
    # ... but the event stays what it was when it was judged; only new intervals are judged again
    assert relaxed.returncode == 2


def test_nagios_unknown_for_usage_errors_corrupt_store_and_lock_timeout(tmp_path, store):
    bad = mssdiag("audit", "run", "--nagios", "--bogus")
    assert bad.returncode == 3 and bad.stdout.startswith("MSSDIAG UNKNOWN - usage: ") and bad.stderr == ""
    bad = mssdiag("audit", "run", "--nagios", "--keep", "forever")
    assert bad.returncode == 3 and "not a duration" in bad.stdout and "Traceback" not in bad.stderr
    bad = mssdiag("audit", "run", "--nagios", "-w", "nonsense_per_h=3")
    assert bad.returncode == 3 and "unknown metric" in bad.stdout
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(os.urandom(65536))
    corrupt = mssdiag("audit", "run", "--nagios", "--store", str(junk))
    assert corrupt.returncode == 3 and corrupt.stdout.startswith("MSSDIAG UNKNOWN - ")
    assert "not a usable audit store" in corrupt.stdout and corrupt.stderr == ""
    empty = mssdiag("audit", "run", "--nagios", "--store", str(store))
    assert empty.returncode == 3 and "no host to judge" in empty.stdout
    # the lock: another run holds it; this one gives up within its bound, with one line
    import fcntl
    Store(str(store)).close()
    fd = os.open(str(store) + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        started = time.monotonic()
        held = mssdiag("audit", "run", "--nagios", "--store", str(store), "--wait", "1s")
        assert held.returncode == 3 and "holds the lock" in held.stdout and time.monotonic() - started < 20
        plain = mssdiag("audit", "run", "--store", str(store), "--wait", "1s", "--local")
        assert plain.returncode == 1 and plain.stderr.count("\n") == 1 and "holds the lock" in plain.stderr
    finally:
        os.close(fd)
    # usage errors without --nagios stay exit 2 on stderr
    assert mssdiag("audit", "run", "--bogus").returncode == 2


def test_checkmk_local_check_lines(tmp_path, store):
    _history(tmp_path, store, dict(ReasmReqds=10, ReasmOKs=5, FragFails=3, InReceives=3000))
    _history(tmp_path, store, dict(ReasmReqds=0, ReasmOKs=0, InReceives=3000), name="db2")
    done = mssdiag("audit", "run", "--store", str(store), "--checkmk", "--now", iso(T0 + 2 * STEP + STEP / 3))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith('2 "mssdiag db1" reasm_reqds_per_h=40;0;;0;|') and "frag_fails_per_h=12;0;10;0;" in lines[0]
    assert lines[1].startswith('0 "mssdiag db2" ') and lines[1].endswith("no open problem (3 snapshots, os linux)")


def test_prometheus_textfile_is_atomic_and_passes_promtool(tmp_path, store):
    d = _dumps(tmp_path)
    prom_dir = tmp_path / "textfile"
    prom_dir.mkdir()
    target = prom_dir / "mssdiag.prom"
    done = mssdiag("audit", "run", str(d), "--store", str(store), "--prom-file", str(target))
    assert done.returncode in (0, 4), done.stderr
    assert sorted(p.name for p in prom_dir.iterdir()) == ["mssdiag.prom"]      # no temporary left behind
    text = target.read_text()
    assert oct(target.stat().st_mode & 0o777) == "0o644"
    assert '# TYPE mssdiag_ip_reasm_reqds_total counter' in text
    assert 'mssdiag_ip_reasm_reqds_total{host="web1",os="linux",family="ipv4"} 160' in text
    assert 'mssdiag_ip_reasm_reqds_total{host="vos1",os="vos",family="ipv4"} ' in text
    assert "mssdiag_last_success_timestamp_seconds " in text
    for line in text.splitlines():
        assert line.startswith("# ") or line.startswith("mssdiag_")
        if not line.startswith("#"):
            assert len(line.rsplit(" ", 1)[1].split()) == 1 and "} " in line or line.count(" ") == 1   # no timestamps
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus; make system-deps)")
    check = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.strip() == "" and check.stderr.strip() == "", check.stdout + check.stderr


def test_fleet_directory_with_index_and_an_unreachable_host(tmp_path, store):
    linux = (FIX / "linux/tcpmon-proc-net-snmp.txt").read_text()
    first, second = tmp_path / "run1", tmp_path / "run2"
    for folder, stamp, bump in ((first, "20260302T090000Z", 0), (second, "20260302T091500Z", 30)):
        folder.mkdir()
        (folder / f"web1--{stamp}.txt").write_text(linux.replace("338468", str(338468 + bump)))
        (folder / f"10.1.2.3--{stamp}.txt").write_text(snmp_dump(ReasmReqds=5 + bump, ReasmOKs=2 + bump // 2))
        index = [{"host": "web1", "status": "ok", "command": "cat /proc/net/snmp", "rc": 0,
                  "file": f"web1--{stamp}.txt"},
                 {"host": "10.1.2.3", "status": "ok", "command": "cat /proc/net/snmp", "rc": 0,
                  "file": f"10.1.2.3--{stamp}.txt"},
                 {"host": "vos1", "status": "unreachable", "command": "netstat -statistics -protocol ip",
                  "rc": None, "detail": "ssh: connect to host vos1 port 22: No route to host"}]
        (folder / "index.jsonl").write_text("".join(json.dumps(i) + "\n" for i in index))
    one = mssdiag("audit", "run", str(first), "--store", str(store), "--now", "2026-03-02T09:01:00Z", "--jsonl")
    assert one.returncode == 4, one.stderr + one.stdout          # vos1 is stale: a warning
    assert one.stderr == ""
    two = mssdiag("audit", "run", str(second), "--store", str(store), "--now", "2026-03-02T09:16:00Z", "--nagios")
    assert two.returncode == 1, two.stdout
    assert "vos1: stale (collection unreachable at 2026-03-02T09:15:00Z" not in two.stdout     # time from the index
    got = rows(store, "SELECT h.name, s.time_from, s.taken_at FROM snapshots s JOIN hosts h ON h.id = s.host_id"
                      " ORDER BY h.name, s.t")
    assert got == [("10.1.2.3", "file name", "2026-03-02T09:00:00+00:00"),
                   ("10.1.2.3", "file name", "2026-03-02T09:15:00+00:00"),
                   ("web1", "file name", "2026-03-02T09:00:00+00:00"),
                   ("web1", "file name", "2026-03-02T09:15:00+00:00")]
    assert rows(store, "SELECT reasm_reqds FROM deltas d JOIN hosts h ON h.id = d.host_id WHERE h.name = '10.1.2.3'") \
        == [(30,)]
    stale = rows(store, "SELECT e.state, e.count, e.detail FROM events e JOIN hosts h ON h.id = e.host_id"
                        " WHERE h.name = 'vos1' AND e.type = 'stale'")
    assert len(stale) == 1 and stale[0][0] == "open" and stale[0][1] == 2
    assert "unreachable" in stale[0][2] and "No route to host" in stale[0][2] and "no snapshot stored yet" in stale[0][2]
    assert rows(store, "SELECT status, count(*) FROM collections GROUP BY status ORDER BY status") == \
        [("ok", 4), ("unreachable", 2)]


def test_stdin_local_and_saved_probes(tmp_path, store):
    dump = snmp_dump(ReasmReqds=7, ReasmOKs=3)
    piped = mssdiag("audit", "run", "-", "--host", "piped", "--store", str(store), "--jsonl", stdin=dump)
    assert piped.returncode == 0, piped.stderr
    snap = next(r for r in map(json.loads, piped.stdout.splitlines()) if r["type"] == "snapshot")
    assert snap["host"] == "piped" and snap["time_from"] == "clock" and snap["ipv4"]["ReasmReqds"] == 7
    local = mssdiag("audit", "run", "--local", "--store", str(store), "--jsonl")
    if not sys.platform.startswith("linux"):
        pytest.skip("--local reads /proc on Linux")
    assert local.returncode in (0, 4), local.stderr
    snap = next(r for r in map(json.loads, local.stdout.splitlines()) if r["type"] == "snapshot")
    assert snap["source"].startswith("local:/proc/net/snmp") and snap["os"] == "linux"
    # saved probe results, twice with another path MTU: the change is an event
    case = ROOT / "fixtures/cases/demo/linux-host/probe-dtn-peer.json"
    probe = json.loads(case.read_text())[0]
    p1, p2 = tmp_path / "p1.json", tmp_path / "p2.json"
    p1.write_text(json.dumps(probe))
    os.utime(p1, (time.time() - 900, time.time() - 900))
    changed = dict(probe, pmtu=(probe["pmtu"] or 1500) - 100)
    p2.write_text(json.dumps(changed))
    mssdiag("audit", "run", str(p1), "--store", str(store))
    done = mssdiag("audit", "run", str(p2), "--store", str(store), "--jsonl")
    recs = list(map(json.loads, done.stdout.splitlines()))
    ev = [r for r in recs if r["type"] == "event" and r["event"] == "pmtu-changed"]
    assert len(ev) == 1 and ev[0]["evidence"] == {"from": probe["pmtu"] or 1500, "to": changed["pmtu"],
                                                  "opened": ev[0]["detail"]}
    assert [r["pmtu"] for r in recs if r["type"] == "probe"] == [changed["pmtu"]]


def test_report_formats(tmp_path, store):
    steps = [dict(ReasmReqds=40 * i, ReasmOKs=20 * i, InReceives=1000 * (i + 1)) for i in range(6)]
    log = tmp_path / "app1.log"
    log.write_text(cron_log(steps, start=T0, step=STEP * 4))
    mssdiag("audit", "run", str(log), "--host", "app<1>", "--store", str(store), "--now", iso(T0))
    since = iso(T0 - STEP)
    js = mssdiag("audit", "report", "--store", str(store), "--since", since, "--json")
    assert js.returncode == 0, js.stderr
    doc = json.loads(js.stdout)
    (h,) = doc["hosts"]
    assert doc["schema"] == "mssdiag.audit.report/1" and h["host"] == "app<1>" and h["snapshots"] == 6
    assert h["series"]["reasm_reqds_per_h"] == [40.0] * 5 and len(h["hours"]) == 5
    assert h["totals"]["reasm_reqds"] == 200
    table = mssdiag("audit", "report", "--store", str(store), "--since", since)
    assert "app<1>" in table.stdout and "max reasm/h" in table.stdout
    md = mssdiag("audit", "report", "--store", str(store), "--since", since, "-f", "md").stdout
    assert "## app&lt;1> (linux" in md and "| fragmentation |" in md
    out = tmp_path / "r.html"
    html = mssdiag("audit", "report", "--store", str(store), "--since", since, "-f", "html", "-o", str(out))
    assert html.returncode == 0 and html.stdout == ""
    page = out.read_text()
    assert "app&lt;1&gt;" in page and "<svg" in page and "Fragmentation per hour" in page and "<script" not in page
    missing = mssdiag("audit", "report", "--store", str(tmp_path / "none.sqlite"))
    assert missing.returncode == 1 and "no audit store here" in missing.stderr


def test_reparse_rereads_old_snapshots(tmp_path, store):
    log = tmp_path / "db9.log"
    log.write_text(cron_log([dict(ReasmReqds=0), dict(ReasmReqds=40, ReasmOKs=20)]))
    mssdiag("audit", "run", str(log), "--host", "db9", "--store", str(store), "--now", iso(T0 + STEP))
    import sqlite3
    db = sqlite3.connect(store)
    # as if an older parser had misread the second snapshot
    db.execute("UPDATE snapshots SET parser_version = 'linux-000000000000', counters = replace(counters,"
               " '\"ReasmReqds\":40', '\"ReasmReqds\":4000') WHERE t = (SELECT max(t) FROM snapshots)")
    db.execute("UPDATE deltas SET reasm_reqds = 4000")
    db.commit()
    db.close()
    done = mssdiag("audit", "reparse", "--store", str(store))
    assert done.returncode == 0, done.stderr
    assert rows(store, "SELECT reasm_reqds FROM deltas") == [(40,)]
    assert rows(store, "SELECT count(*) FROM snapshots WHERE parser_version = 'linux-000000000000'") == [(0,)]
    ev = rows(store, "SELECT type, value FROM events WHERE type = 'fragmentation'")
    assert ev == [("fragmentation", 160.0)]


def test_keep_forgets_old_history_but_each_hosts_latest(tmp_path, store):
    log = tmp_path / "old.log"
    log.write_text(cron_log([dict(ReasmReqds=i) for i in range(5)], step=STEP * 96))      # daily
    mssdiag("audit", "run", str(log), "--host", "old", "--store", str(store), "--now", iso(T0 + 4 * STEP * 96))
    assert rows(store, "SELECT count(*) FROM snapshots") == [(5,)]
    done = mssdiag("audit", "run", "--store", str(store), "--keep", "2d", "--now", iso(T0 + 4 * STEP * 96 + STEP))
    assert done.returncode in (0, 4), done.stderr
    assert rows(store, "SELECT count(*) FROM snapshots") == [(2,)]
    assert rows(store, "SELECT count(*) FROM texts") == [(2,)]
    assert rows(store, "PRAGMA integrity_check") == [("ok",)]


def test_quiet_under_cron_unless_something_opened(tmp_path, store):
    steps = [dict(ReasmReqds=0, InReceives=10), dict(ReasmReqds=0, InReceives=20)]
    log = tmp_path / "q1.log"
    log.write_text(cron_log(steps))
    quiet = mssdiag("audit", "run", str(log), "--host", "q1", "--store", str(store), "--now", iso(T0 + STEP))
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    log.write_text(cron_log(steps + [dict(ReasmReqds=0, FragFails=5, InReceives=30)]))
    loud = mssdiag("audit", "run", str(log), "--host", "q1", "--store", str(store), "--now", iso(T0 + 2 * STEP))
    assert loud.returncode == 4
    assert loud.stdout.startswith("q1: frag-fails opened (critical): frag_fails_per_h 20") and loud.stderr == ""


# ---------------------------------------------------------------------------- concurrency and crashes

def _fleet(folder: Path, hosts: int, stamp: str, bump: int) -> None:
    folder.mkdir(parents=True)
    for i in range(hosts):
        (folder / f"h{i:04d}--{stamp}.txt").write_text(snmp_dump(ReasmReqds=i + bump, ReasmOKs=i, InReceives=10 * i + bump))


def test_two_runs_started_together_store_everything_once(tmp_path, store):
    a, b = tmp_path / "a", tmp_path / "b"
    _fleet(a, 150, "20260302T090000Z", 0)
    _fleet(b, 150, "20260302T091500Z", 40)
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test")
    procs = [subprocess.Popen([sys.executable, "-m", "toolkit", "audit", "run", str(p), "--store", str(store), "--now",
                               "2026-03-02T09:16:00Z"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for p in (a, b, a)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode in (0, 4), err  # 4 (warnings) once a host has two snapshots: they fragment
        assert "Traceback" not in err and err == ""
    assert rows(store, "SELECT count(*), count(DISTINCT host_id) FROM snapshots") == [(300, 150)]
    assert rows(store, "SELECT count(*) FROM deltas WHERE reasm_reqds = 40") == [(150,)]
    assert rows(store, "SELECT count(*) FROM events WHERE type = 'fragmentation' AND state = 'open'") == [(150,)]
    assert rows(store, "SELECT count(*) FROM runs WHERE status = 'ok'") == [(3,)]
    assert rows(store, "PRAGMA integrity_check") == [("ok",)]


def test_a_run_killed_mid_ingest_leaves_a_usable_store(tmp_path, store):
    first = tmp_path / "first"
    _fleet(first, 20, "20260302T090000Z", 0)
    assert mssdiag("audit", "run", str(first), "--store", str(store)).returncode == 0
    big = tmp_path / "big"
    _fleet(big, 1200, "20260302T091500Z", 40)
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test")
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", "audit", "run", str(big), "--store", str(store)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # kill it once it is writing: the run is registered and the WAL grows past the first batch
    deadline = time.monotonic() + 60
    wal = Path(str(store) + "-wal")
    while time.monotonic() < deadline and proc.poll() is None:
        if rows(store, "SELECT count(*) FROM runs")[0][0] >= 2 and wal.exists() and wal.stat().st_size > 256 * 1024:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed; make the input bigger"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert rows(store, "PRAGMA integrity_check") == [("ok",)]
    stored = rows(store, "SELECT count(*) FROM snapshots")[0][0]
    assert stored in (20, 20 + 200, 20 + 400, 20 + 600, 20 + 800, 20 + 1000), stored   # whole batches only
    again = mssdiag("audit", "run", str(big), str(first), "--store", str(store))
    assert again.returncode == 4, again.stderr
    assert rows(store, "SELECT count(*) FROM snapshots") == [(1220,)]
    assert rows(store, "SELECT count(*) FROM deltas WHERE reasm_reqds = 40") == [(20,)]
    assert rows(store, "SELECT count(*) FROM runs WHERE status = 'running'") == [(1,)]   # the killed one, said so
    assert rows(store, "PRAGMA integrity_check") == [("ok",)]


def test_nagios_timeout_and_internal_error_are_unknown(tmp_path, store, monkeypatch):
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test")
    # stdin that never ends: the run is still reading when its time is up
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", "audit", "run", "-", "--nagios", "--timeout", "1s",
                             "--store", str(store)], cwd=ROOT, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=30)                 # stdin stays open: communicate() would close it
    finally:
        proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.returncode == 3 and out == "MSSDIAG UNKNOWN - timed out after 1 s\n" and err == ""

    from typer.testing import CliRunner
    from toolkit.audit import run as runner
    from toolkit.cli import app

    def boom(*a, **k):
        raise ValueError("boom")
    monkeypatch.setattr(runner, "run", boom)
    got = CliRunner().invoke(app, ["audit", "run", "--nagios", "--store", str(store)])
    assert got.exit_code == 3 and got.output == "MSSDIAG UNKNOWN - internal error: ValueError: boom\n"
    got = CliRunner().invoke(app, ["audit", "run", "--store", str(store)])
    assert got.exit_code == 1


def test_jsonl_escapes_c1_and_bidi_controls_from_a_host_name(tmp_path, store):
    """A host name taken from a customer's file (here --host) reaches JSON Lines with its C1
    and bidi controls as \\u escapes, like every other command's JSON; the record reads back."""
    log = tmp_path / "evil.log"
    log.write_text(cron_log([dict(ReasmReqds=0, ReasmOKs=0, InReceives=1000),
                             dict(ReasmReqds=40, ReasmOKs=20, InReceives=2000)]))
    name = "web\u202egnp.exe\u0085"
    done = mssdiag("audit", "run", str(log), "--host", name, "--store", str(store),
                   "--now", iso(T0 + 2 * STEP), "--jsonl")
    assert done.returncode == 4, done.stderr + done.stdout        # 4: reassembly grew, a problem
    assert "\u202e" not in done.stdout and "\u0085" not in done.stdout
    assert "\\u202e" in done.stdout
    hosts = {r.get("host") for r in map(json.loads, done.stdout.splitlines())}
    assert name in hosts
    report = mssdiag("audit", "report", "--store", str(store), "--since", iso(T0 - STEP), "--json")
    assert report.returncode == 0, report.stderr
    assert "\u202e" not in report.stdout and "\u0085" not in report.stdout and "\\u202e" in report.stdout
    assert name in {h["host"] for h in json.loads(report.stdout)["hosts"]}


# ---------------------------------------------------------------------------- names as data

def _index_line(host: str, file: str = None, status: str = "ok", **more) -> dict:
    line = {"host": host, "status": status, "time": "2026-03-02T09:00:00Z", "command": "cat /proc/net/snmp", "rc": 0}
    return dict(line, **({"file": file} if file else {}), **more)


def test_index_names_are_hosts_exactly_prompts_fold_case(tmp_path, store):
    """`Web9` and `web9` from a fleet index are two hosts (two inventory hosts); a prompt's
    `WEB1` and `web1` are one (a DNS name), across runs too."""
    d = tmp_path / "fleet"
    d.mkdir()
    lines = []
    for i, name in enumerate(("Web9", "web9", "WEB9", " web9")):
        (d / f"f{i}.txt").write_text(snmp_dump(None, ReasmReqds=i))
        lines.append(_index_line(name, f"f{i}.txt"))
    (d / "index.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = mssdiag("audit", "run", str(d), "--store", str(store), "--now", "2026-03-02T09:05:00Z")
    assert done.returncode == 0, done.stderr
    assert sorted(rows(store, "SELECT h.name, count(*) FROM snapshots s JOIN hosts h ON h.id = s.host_id"
                              " GROUP BY h.id")) == [(" web9", 1), ("WEB9", 1), ("Web9", 1), ("web9", 1)]
    for i, (prompt, when) in enumerate((("WEB1", T0), ("web1", T0 + STEP))):
        (tmp_path / f"p{i}.txt").write_text(f"[root@{prompt} ~]# cat /proc/net/snmp\n" + snmp_dump(when, ReasmReqds=i))
        assert mssdiag("audit", "run", str(tmp_path / f"p{i}.txt"), "--store", str(store),
                       "--now", iso(T0 + 2 * STEP)).returncode in (0, 4)
    assert rows(store, "SELECT h.name, count(*) FROM snapshots s JOIN hosts h ON h.id = s.host_id"
                       " WHERE h.identity = 'prompt' GROUP BY h.id") == [("WEB1", 2)]
    report = mssdiag("audit", "report", "--store", str(store), "--since", "2026-03-01T00:00:00Z", "--json",
                     "--host", "web9")
    assert [h["host"] for h in json.loads(report.stdout)["hosts"]] == ["web9"]       # exactly, when spelt so
    report = mssdiag("audit", "report", "--store", str(store), "--since", "2026-03-01T00:00:00Z", "--json",
                     "--host", "web1")
    assert [h["host"] for h in json.loads(report.stdout)["hosts"]] == ["WEB1"]       # else without case


def test_a_store_of_schema_4_compares_names_exactly_after_it_migrates(tmp_path):
    import sqlite3
    from toolkit.audit import store as st
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    for script in st.MIGRATIONS[:4]:
        for statement in st._statements(script):
            db.execute(statement)
    db.execute("PRAGMA user_version = 4")
    db.execute("INSERT INTO hosts(name, identity) VALUES ('web9', 'case')")
    with pytest.raises(sqlite3.IntegrityError):                     # schema 4: without case
        db.execute("INSERT INTO hosts(name) VALUES ('Web9')")
    db.commit()
    db.close()
    with Store(str(path)) as s:
        assert s.schema_version() == SCHEMA_VERSION == 5
        assert s.host_id("web9") == 1 and s.host_id("Web9") == 2
        assert s.host_id("WEB9", identity="prompt") == 3            # no prompt host of that name yet
        assert s.host_id("web9", identity="prompt") == 1           # exactly spelt: that one


def test_index_lines_are_read_one_by_one(tmp_path, store):
    """A line that is not UTF-8, not JSON, has no host, holds a lone surrogate: one error line
    each (naming the line), exit 3, the other lines read; a raw U+2028 or U+0085 in a name
    is part of it, not a line break."""
    d = tmp_path / "fleet"
    d.mkdir()
    for name in ("good", "sep"):
        (d / f"{name}.txt").write_text(snmp_dump(None, ReasmReqds=3))
    with open(d / "index.jsonl", "wb") as fh:
        fh.write(json.dumps(_index_line("good", "good.txt")).encode() + b"\n")
        fh.write(b'{"host": "caf\xe9", "status": "ok"}\n')
        fh.write(b"not json at all\n")
        fh.write(json.dumps({"status": "ok"}).encode() + b"\n")
        fh.write(json.dumps(_index_line("lone\udcf4", "good.txt")).encode() + b"\n")
        fh.write(json.dumps(_index_line("a\u2028b\u0085c", "sep.txt"), ensure_ascii=False).encode() + b"\n")
    done = mssdiag("audit", "run", str(d), "--store", str(store), "--now", "2026-03-02T09:05:00Z")
    assert done.returncode == 3, done.stderr
    errs = done.stderr.splitlines()
    assert [e.split("index.jsonl: ")[1].split(":")[0] for e in errs] == ["line 2", "line 3", "line 4", "line 5"], errs
    assert "not UTF-8 (byte 0xe9" in errs[0] and "lone surrogate" in errs[3] and "Traceback" not in done.stderr
    assert sorted(rows(store, "SELECT name FROM hosts")) == [("a\u2028b\u0085c",), ("good",)]
    assert rows(store, "SELECT status FROM runs") == [("ok",)]


def test_an_ok_collection_without_a_snapshot_is_stale(tmp_path, store):
    d = tmp_path / "fleet"
    d.mkdir()
    (d / ".web1--20260302T090000Z.txt").write_text(snmp_dump(None, ReasmReqds=3))      # hidden: never read
    (d / "web3--20260302T090000Z.txt").write_text("Permission denied\n")
    (d / "index.jsonl").write_text("".join(json.dumps(x) + "\n" for x in (
        _index_line("web1", ".web1--20260302T090000Z.txt"), _index_line("web2", "web2--20260302T090000Z.txt"),
        _index_line("web3", "web3--20260302T090000Z.txt"), _index_line("web4"))))
    done = mssdiag("audit", "run", str(d), "--store", str(store), "--now", "2026-03-02T09:05:00Z")
    assert done.returncode == 3, done.stderr                # web3's file: no counters in it
    stale = dict(rows(store, "SELECT h.name, e.detail FROM events e JOIN hosts h ON h.id = e.host_id"
                             " WHERE e.type = 'stale' AND e.state = 'open'"))
    assert sorted(stale) == ["web1", "web2", "web3", "web4"]
    assert "not read (a hidden file" in stale["web1"] and "web2--20260302T090000Z.txt: no such file" in stale["web2"]
    assert "no IP counters read from it" in stale["web3"] and "the index names no file" in stale["web4"]
    assert all(v.startswith("collection no-snapshot at 2026-03-02T09:00:00Z") and ": the index said ok, but " in v
               for v in stale.values())


def test_file_names_that_are_not_utf8_are_read_and_named(tmp_path, store):
    """A Latin-1 file name beside good ones: read (its host kept with the byte as \\xNN),
    named in error lines with the byte as `?`, never an encoding error; the run ends ok."""
    d = tmp_path / "dumps"
    d.mkdir()
    raw = os.fsencode(d)
    with open(raw + b"/h\xf4te1-0900.txt", "wb") as fh:
        fh.write(f"[root@web7 ~]# cat /proc/net/snmp\n{snmp_dump(T0, ReasmReqds=4)}".encode())
    with open(raw + b"/h\xf4te2-0900.txt", "wb") as fh:
        fh.write(b"\x00\x01binary\x00" * 100)
    with open(raw + b"/h\xf4te3--20260302T090000Z.txt", "wb") as fh:
        fh.write(snmp_dump(None, ReasmReqds=9, ReasmOKs=1000).encode())
    (d / "good-0900.txt").write_text(snmp_dump(T0, ReasmReqds=5))
    done = subprocess.run([sys.executable, "-m", "toolkit", "audit", "run", str(d), "--store", str(store), "--now",
                           iso(T0 + STEP)], capture_output=True, cwd=ROOT,
                          env=dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test"))
    err = done.stderr.decode("utf-8")                     # strict: no raw byte of the name
    assert done.returncode == 3, err
    assert "h?te2-0900.txt: binary data" in err and "Encode" not in err and "Traceback" not in err
    assert sorted(n for (n,) in rows(store, "SELECT name FROM hosts")) == ["good", "h\\xf4te3--20260302T090000Z",
                                                                           "web7"]
    assert ("/h\\xf4te1-0900.txt",) in [(s[len(str(d)):],) for (s,) in rows(store, "SELECT source FROM snapshots")]
    assert rows(store, "SELECT status FROM runs") == [("ok",)]
    again = mssdiag("audit", "run", str(d), "--store", str(store), "--now", iso(T0 + STEP))
    assert rows(store, "SELECT count(*) FROM snapshots") == [(3,)] and again.returncode == 3      # idempotent


def test_one_hosts_data_the_store_cannot_hold_costs_that_host(tmp_path, store):
    """A 64-bit counter that leaps past what SQLite's integers hold: that host gets one line
    and is not stored; the others are, and the run ends ok (no `running` row)."""
    (tmp_path / "huge-0900.txt").write_text(cron_log([{"ReasmReqds": 1}, {"ReasmReqds": 2 ** 64 - 1}]))
    (tmp_path / "fine-0900.txt").write_text(cron_log([{"ReasmReqds": 1}, {"ReasmReqds": 5}]))
    done = mssdiag("audit", "run", str(tmp_path / "huge-0900.txt"), str(tmp_path / "fine-0900.txt"),
                   "--store", str(store), "--now", iso(T0 + 2 * STEP))
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == ["mssdiag: huge: not stored: Python int too large to convert to SQLite INTEGER"]
    assert rows(store, "SELECT name FROM hosts") == [("fine",)]
    assert rows(store, "SELECT status FROM runs") == [("ok",)]


# ---------------------------------------------------------------------------- the report's store

def test_report_refuses_a_damaged_store_in_one_line(tmp_path, store):
    _fleet(tmp_path / "f", 40, "20260302T090000Z", 0)
    assert mssdiag("audit", "run", str(tmp_path / "f"), "--store", str(store)).returncode == 0
    import sqlite3
    db = sqlite3.connect(store)
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'snapshots'").fetchone()[0]
    db.close()
    data = bytearray(store.read_bytes())
    page = 4096 * (root - 1)
    data[page + 8:page + 24] = b"\x12\x34\x56\x78" * 4          # the table's root page: cells out of range
    store.write_bytes(bytes(data))
    done = mssdiag("audit", "report", "--store", str(store))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"mssdiag: {store}: damaged: ") and len(done.stderr.splitlines()) == 1, done.stderr


def test_report_reads_a_store_it_cannot_write(tmp_path, store):
    """A store in a read-only place (a customer's copy, a backup): mode 0444 in a 0555
    directory, and (as root, who ignores modes) a read-only bind mount."""
    _fleet(tmp_path / "f", 5, "20260302T090000Z", 0)
    assert mssdiag("audit", "run", str(tmp_path / "f"), "--store", str(store)).returncode == 0
    want = mssdiag("audit", "report", "--store", str(store), "--since", "2026-03-01T00:00:00Z", "--json")
    assert want.returncode == 0
    ro = tmp_path / "ro"
    ro.mkdir()
    shutil.copy(store, ro / "a.sqlite")
    (ro / "a.sqlite").chmod(0o444)
    ro.chmod(0o555)
    places = [ro]
    mounted = None
    if os.geteuid() == 0 and shutil.which("mount"):
        mounted = tmp_path / "mnt"
        mounted.mkdir()
        if subprocess.run(["mount", "--bind", str(ro), str(mounted)], capture_output=True).returncode == 0:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(mounted)], check=True)
            places.append(mounted)
        else:
            mounted = None
    try:
        for place in places:
            before = sorted(p.name for p in place.iterdir())
            got = mssdiag("audit", "report", "--store", str(place / "a.sqlite"), "--since", "2026-03-01T00:00:00Z",
                          "--json")
            assert got.returncode == 0, (place, got.stderr)
            assert json.loads(got.stdout)["hosts"] == json.loads(want.stdout)["hosts"]
            if place == mounted or os.geteuid() != 0:        # (root may write a 0555 directory: WAL files)
                assert sorted(p.name for p in place.iterdir()) == before
        if mounted is not None:
            blocked = mssdiag("audit", "run", str(tmp_path / "f"), "--store", str(mounted / "a.sqlite"))
            assert blocked.returncode == 1 and len(blocked.stderr.splitlines()) == 1, blocked.stderr
    finally:
        if mounted is not None:
            subprocess.run(["umount", str(mounted)], capture_output=True)
        ro.chmod(0o755)


# ---------------------------------------------------------------------------- a terminal's summary

def test_a_terminal_gets_a_summary_cron_and_quiet_get_none(tmp_path, store):
    if shutil.which("script") is None:
        pytest.skip("script (util-linux) is not installed: no pseudo-terminal to run under")
    log = tmp_path / "web1-0900.txt"
    log.write_text(cron_log([dict(ReasmReqds=0), dict(ReasmReqds=40)]))
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent", COLUMNS="200")
    base = f"{sys.executable} -m toolkit audit run {log} --store {store} --now {iso(T0 + 2 * STEP)}"
    tty = subprocess.run(["script", "-qec", base, "/dev/null"], capture_output=True, text=True, cwd=ROOT, env=env)
    assert "1 host(s) read, 2 new snapshot(s) stored, 0 probe(s), 1 event(s) open; store " in tty.stdout, tty.stdout
    assert "web1" in tty.stdout.splitlines()[2]
    quiet = subprocess.run(["script", "-qec", base + " -q", "/dev/null"], capture_output=True, text=True, cwd=ROOT,
                           env=env)
    assert quiet.stdout == ""
    local = subprocess.run(["script", "-qec", f"{sys.executable} -m toolkit audit run --local --store "
                            f"{tmp_path / 'l.sqlite'}", "/dev/null"], capture_output=True, text=True, cwd=ROOT, env=env)
    assert "1 host(s) read, 1 new snapshot(s) stored" in local.stdout, local.stdout
    cron = mssdiag("audit", "run", "--local", "--store", str(tmp_path / "l.sqlite"))
    assert cron.returncode == 0 and cron.stdout == "" and cron.stderr == ""
