"""Signals at many points of a run: `audit run` and `triage -o` (and the other long commands)
end with one line, `mssdiag: interrupted` / `mssdiag: terminated`, exit 130 / 143 -- never an
internal error -- and leave no temporary file; the audit store stays intact (SQLite's own
integrity check, no `running` row) and the next run completes it as if nothing had happened.

The inputs are cron logs made from a real /proc/net/snmp capture (auditlib); each run is
timed once undisturbed, and the signals land at fractions of that time.
"""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditlib import ROOT, cron_log, rows

HOSTS, SNAPSHOTS = 150, 40
FRACTIONS = (0.02, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9, 0.97, 1.05)
SIGNALS = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}
ENV = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test", SOURCE_DATE_EPOCH="1772442000")   # one report
ENV.pop("MSSDIAG_STORE", None)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("signals") / "logs"
    d.mkdir()
    for i in range(HOSTS):
        (d / f"host{i}-0900.txt").write_text(cron_log([{"ReasmReqds": 10 * k + i} for k in range(SNAPSHOTS)]))
    return d


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def _timed(*args: str, code: int = 4) -> float:
    t0 = time.monotonic()
    p = _start(*args)
    _, err = p.communicate(timeout=300)
    assert p.returncode == code, err
    return time.monotonic() - t0


def _handling(pid: int) -> None:
    """Wait until mssdiag's own code runs: its SIGTERM handler is installed (an interrupt
    during the interpreter's own start-up is Python's to handle, not mssdiag's)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return                                      # it has ended already
        caught = int(next(x for x in status.splitlines() if x.startswith("SigCgt:")).split()[1], 16)
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.002)


def _signalled(args, delay: float, sig: int):
    """(exit status, stderr) of a run sent `sig` `delay` seconds after mssdiag's code started."""
    p = _start(*args)
    _handling(p.pid)
    try:
        p.wait(delay)
    except subprocess.TimeoutExpired:
        p.send_signal(sig)
    _, err = p.communicate(timeout=300)
    return p.returncode, err.decode("utf-8", "replace")


def _ended_as_signalled(code: int, err: str, sig: int, finished: int) -> bool:
    """A run that the signal reached says so in one last line; one that had finished first
    ended as it does alone. Never a traceback, never an internal error."""
    assert "Traceback" not in err and "internal error" not in err, err
    want, word = SIGNALS[sig]
    if code == finished and f"mssdiag: {word}" not in err:
        return False
    assert code == want, (code, err)
    assert err.strip().splitlines()[-1] == f"mssdiag: {word}", err
    return True


def _temporaries(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _state(store: Path):
    return (rows(store, "SELECT h.name, s.taken_at FROM snapshots s JOIN hosts h ON h.id = s.host_id ORDER BY 1, 2"),
            rows(store, "SELECT h.name, d.kind, d.reasm_reqds FROM deltas d JOIN hosts h ON h.id = d.host_id"
                        " ORDER BY 1, d.t"),
            # a stale event counts the runs that saw it: an interrupted run may have been one
            rows(store, "SELECT h.name, e.type, e.state, CASE WHEN e.type = 'stale' THEN 0 ELSE e.count END"
                        " FROM events e JOIN hosts h ON h.id = e.host_id ORDER BY 1, 2"))


def test_audit_run_interrupted_anywhere_leaves_the_store_intact(logs, tmp_path):
    ref = tmp_path / "ref"
    ref.mkdir()
    args = lambda d: ["audit", "run", str(logs), "--store", str(d / "a.sqlite"), "--now",  # noqa: E731
                      "2026-03-03T00:00:00Z", "--prom-file", str(d / "m.prom")]
    whole = _timed(*args(ref))
    finished = 4                                         # what it ends with undisturbed: the hosts fragment
    reached = 0
    for i, fraction in enumerate(FRACTIONS):
        sig = signal.SIGTERM if i % 2 else signal.SIGINT
        d = tmp_path / f"run{i}"
        d.mkdir()
        code, err = _signalled(args(d), whole * fraction, sig)
        reached += _ended_as_signalled(code, err, sig, finished)
        assert _temporaries(d) == [], (fraction, "a temporary file was left")
        store = d / "a.sqlite"
        if store.exists():
            db = sqlite3.connect(store)
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert not db.execute("SELECT 1 FROM runs WHERE status = 'running'").fetchall()
            db.close()
        # the next run stores and judges what the interrupted one did not: the store as if
        # nothing had happened
        assert _start(*args(d)).wait(300) == finished
        assert _state(store) == _state(ref / "a.sqlite"), fraction
    assert reached >= 3, "the signals came too late to test anything"


def test_triage_output_file_interrupted_anywhere(logs, tmp_path):
    """`triage -o FILE`: whatever moment the signal lands, FILE is the old report or the whole
    new one, and no temporary file is left beside it."""
    out = tmp_path / "report.html"
    args = ["triage", str(logs), "--format", "html", "-o", str(out)]
    whole = _timed(*args)
    new = out.read_bytes()
    assert new.endswith(b"</html>\n")
    finished = 4
    reached = 0
    for i, fraction in enumerate(FRACTIONS + (0.8, 0.85, 0.93, 0.99)):
        sig = signal.SIGTERM if i % 2 else signal.SIGINT
        out.write_text("the old report\n")
        code, err = _signalled(args, whole * fraction, sig)
        reached += _ended_as_signalled(code, err, sig, finished)
        assert _temporaries(tmp_path) == [], (fraction, "a temporary file was left")
        assert out.read_bytes() in (b"the old report\n", new), fraction
    assert reached >= 3, "the signals came too late to test anything"


@pytest.mark.parametrize("sig", list(SIGNALS))
@pytest.mark.parametrize("command", ["triage", "triage-json", "diff", "parse", "reparse", "capture"])
def test_every_long_command_ends_in_one_line(logs, tmp_path, command, sig):
    """Each long command, stopped early: one line and 130 / 143 (fleet collect: test_fleet.py)."""
    if command == "reparse":
        store = tmp_path / "a.sqlite"
        assert _start("audit", "run", str(logs), "--store", str(store)).wait(300) == 4
        args = ["audit", "reparse", "--all", "--store", str(store)]
    elif command == "capture":
        one = (ROOT / "fixtures/captures/synthetic/legacy536.pcap").read_bytes()
        (tmp_path / "big.pcap").write_bytes(one[:24] + one[24:] * 40000)       # 130 MB of one capture's packets
        args = ["capture", str(tmp_path / "big.pcap"), "--json"]
    else:
        args = {"triage-json": ["triage", "--json"]}.get(command, [command]) + [str(logs)]
    code, err = _signalled(args, 0.05, sig)
    assert _ended_as_signalled(code, err, sig, -1)
    assert len(err.splitlines()) == 1, err
