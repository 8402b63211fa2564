"""Streamed hosts (toolkit/hosts.py Builder, toolkit/tally.py): a host longer than `keep`
snapshots is folded as it is read; its findings, facts and pairs must be exactly those of
the host held whole, and memory must not follow the length of the log."""
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import parsers
from toolkit.rules import catalog
from toolkit.hosts import Builder, build
from toolkit.report.common import facts_rows

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "netstat" / "linux"
NUMBER = re.compile(r"(?<![\w.:/-])\d+(?![\w.:/-])")
DATE = re.compile(r"^\w{3} \w{3} +\d+ [\d:]+ UTC \d{4}\n", re.M)


def cron_log(n: int, reboot_at: int = -1, quiet=range(0)) -> str:
    """n dated snapshots of a real `date; netstat -s` cron log (the fixture's last snapshot),
    counters growing by a varying step (nothing in the `quiet` ones), every counter back to
    small numbers at `reboot_at`."""
    text = (FIXTURE / "netns-cron-date-netstat-s.txt").read_text()
    body = DATE.split(text)[-1]
    t0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
    out, grown = [], 0
    for i in range(n):
        if i == reboot_at:
            grown = -10**9
        elif i not in quiet:
            grown += 1 + (i * 7) % 13
        stamp = (t0 + timedelta(minutes=15 * i)).strftime("%a %b %d %H:%M:%S UTC %Y")
        out.append(stamp + "\n" + NUMBER.sub(lambda m: str(max(0, int(m.group(0)) + grown) if grown >= 0
                                                            else i - reboot_at + int(m.group(0)) % 7), body))
    return "".join(out)


def hosts_of(path: Path, keep, **kw):
    snaps = parsers.parse(path.read_text(), source=str(path))
    return build(((s, None) for s in snaps), keep=keep, **kw)


def findings(h):
    return [f.to_dict() for f in catalog.evaluate(h)]


def test_streamed_host_has_the_findings_facts_and_pairs_of_the_whole_host(tmp_path):
    log = tmp_path / "netstat.log"          # bare: one host because its counters grow together
    log.write_text(cron_log(300, reboot_at=170, quiet=range(40, 60)))
    (whole,) = hosts_of(log, None)
    (streamed,) = hosts_of(log, 16)
    assert whole.snapshot_count == streamed.snapshot_count == 300
    assert whole.delta_count == streamed.delta_count == 299
    assert len(whole.snapshots) == 300 and len(streamed.snapshots) == 16, "only the first and last 8 are kept"
    assert streamed.snapshots[0] is not None and streamed.snapshots[-1].taken_at == whole.snapshots[-1].taken_at
    assert findings(streamed) == findings(whole)
    assert {f["code"] for f in findings(whole)} >= {"reassembly-active"}
    assert facts_rows(streamed) == facts_rows(whole)
    assert streamed.identity == whole.identity == "file" and streamed.facts.name == whole.facts.name
    assert [d.to_dict() for d in streamed.deltas] == [d.to_dict() for d in whole.deltas[:8] + whole.deltas[-8:]]
    assert sum(p.resets for p in streamed.tally.periods.values()) == 1


def test_builder_hands_out_every_pair_of_a_streamed_host_in_order(tmp_path):
    log = tmp_path / "web1-2026-11-01.log"           # the file name names the host
    log.write_text(cron_log(120))
    (whole,) = hosts_of(log, None)
    b = Builder(keep=10)
    got = []
    for s in parsers.parse(log.read_text(), source=str(log)):
        got += b.add(s)
    (h,) = b.finish()
    assert h.stream is not None and h.facts.name == "web1"
    assert [d.to_dict() for d in got] == [d.to_dict() for d in whole.deltas]
    assert findings(h) == findings(whole)


def test_out_of_order_snapshot_of_a_streamed_host_is_said(tmp_path):
    text = cron_log(40)
    chunks = DATE.split(text)[1:]
    dates = DATE.findall(text)
    swapped = "".join(d + c for d, c in zip(dates[:36] + [dates[37], dates[36]] + dates[38:],
                                            chunks[:36] + [chunks[37], chunks[36]] + chunks[38:]))
    log = tmp_path / "db2-2026-11-01.log"
    log.write_text(swapped)
    notes = []
    (h,) = hosts_of(log, 8, note=notes.append)
    assert any("dated before an earlier snapshot" in n for n in notes), notes
    assert any(e["type"] == "clock" for d in h.deltas for e in d.events)


def _run(*args, out=subprocess.PIPE):
    return subprocess.run([sys.executable, "-m", "toolkit", *args], stdout=out, stderr=subprocess.PIPE, text=True)


def test_cli_triage_and_diff_of_a_log_longer_than_keep(tmp_path):
    from toolkit.hosts import KEEP
    log = tmp_path / "netstat.log"
    n = KEEP + 60
    log.write_text(cron_log(n))
    (whole,) = hosts_of(log, None)
    run = _run("diff", str(log), "--format", "jsonl")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(x) for x in run.stdout.splitlines()]
    assert len(lines) == n - 1
    assert lines == [json.loads(json.dumps(d.to_dict())) for d in whole.deltas]
    run = _run("triage", str(log), "--json")
    assert run.returncode == 4, run.stderr           # reassembly grew: a problem
    (h,) = json.loads(run.stdout)["hosts"]
    assert h["snapshot_count"] == n and h["delta_count"] == n - 1 and len(h["snapshots"]) == KEEP
    assert [f["code"] for f in h["findings"]] == [f["code"] for f in findings(whole)]
    assert [f["evidence"] for f in h["findings"]] == [f["evidence"] for f in findings(whole)]


def _peak_kib(*args):
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) in (0, 4), proc.stderr.read()
    return usage.ru_maxrss


def test_triage_and_diff_memory_does_not_follow_log_length(tmp_path):
    small, big = tmp_path / "small.log", tmp_path / "big.log"
    small.write_text(cron_log(400))
    big.write_text(cron_log(3200))
    for args in (("triage", "--json"), ("diff", "--format", "jsonl")):
        a, b = _peak_kib(args[0], str(small), *args[1:]), _peak_kib(args[0], str(big), *args[1:])
        assert b < a + 12 * 1024, f"{args[0]}: peak RSS {a} KiB for 400 snapshots, {b} KiB for 3200"
