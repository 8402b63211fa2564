"""`--jobs N`: dumps read in worker processes give the same output, error lines and exit
status as one process, in the same order (toolkit/inputs.py)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
GOOD = "netstat -statistics -protocol ip\nip:\n    92  ipReasmReqds\n    46  ipReasmOKs\n"


def mssdiag(*args, stdin=None):
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")      # triage's report date
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, input=stdin, capture_output=True,
                          timeout=600, env=env)


def same(args, jobs=("2",), stdin=None):
    one = mssdiag(*args, "--jobs", "1", stdin=stdin)
    for n in jobs:
        many = mssdiag(*args, "--jobs", n, stdin=stdin)
        assert many.returncode == one.returncode, (n, many.stderr)
        assert many.stdout == one.stdout, n
        assert many.stderr == one.stderr, n
    return one


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Many files, good and bad: every fixture dump, cron logs, damaged, empty, binary, UTF-16."""
    folder = tmp_path_factory.mktemp("mixed")
    dumps = sorted(p for p in (FIXTURES / "netstat").rglob("*.txt"))
    for i, p in enumerate(dumps):
        data = p.read_bytes()
        (folder / f"h{i:03d}-{p.parent.name}.txt").write_bytes(data)
        (folder / f"h{i:03d}-cut.txt").write_bytes(data[: len(data) // 3])          # truncated
        (folder / f"h{i:03d}-noise.txt").write_bytes(data[::7])                    # damaged beyond use
    (folder / "empty.txt").write_bytes(b"")
    (folder / "binary.bin").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(300))
    (folder / "uptime.txt").write_bytes(b" 10:01:02 up 3 days,  2:03,  1 user,  load average: 0.00\n")
    (folder / "ps-utf16.txt").write_bytes("\ufeff".encode("utf-16-le") + GOOD.replace("\n", "\r\n").encode("utf-16-le"))
    linux = next(p for p in dumps if p.parent.name == "linux").read_text(errors="replace")
    (folder / "web1-cron.log").write_text("".join(f"Sun Nov 22 10:{m:02d}:00 UTC 2026\n{linux}\n" for m in range(40)))
    return folder


def test_fixtures_tree_is_the_same_with_workers():
    one = same(["parse", str(FIXTURES), "--format", "jsonl"], jobs=("2", "3", "0"))
    assert one.stdout.count(b"\n") > 100
    same(["parse", str(FIXTURES / "netstat"), "--json"])
    same(["diff", str(FIXTURES), "--json"])


def test_good_and_bad_files_same_output_errors_and_exit(mixed):
    one = same(["parse", str(mixed), "--format", "jsonl"], jobs=("2", "4"))
    assert one.returncode == 3
    errors = one.stderr.decode().splitlines()
    assert any("empty.txt: no netstat IP statistics found" in e for e in errors)
    assert any("binary.bin" in e for e in errors)
    assert all(e.startswith("mssdiag: ") for e in errors) and b"Traceback" not in one.stderr
    same(["diff", str(mixed), "--format", "jsonl"])


def test_triage_is_the_same_with_workers(mixed):
    """triage --jobs: the same report in every format, the same error lines and exit status,
    on the fixture tree (cases with host.toml, saved probes, captures) and on good and bad
    files mixed."""
    one = same(["triage", str(FIXTURES), "--json"], jobs=("2", "0"))
    assert len(json.loads(one.stdout)["hosts"]) > 20
    same(["triage", str(mixed), "--format", "md"])
    one = same(["triage", str(mixed), "--json"], jobs=("2", "3"))
    assert one.returncode == 3 and b"Traceback" not in one.stderr
    assert "empty.txt" in one.stderr.decode()


def test_files_given_twice_missing_ones_and_stdin_keep_their_place(mixed):
    names = sorted(str(p) for p in mixed.iterdir())
    args = ["parse", names[5], "-", names[0], str(mixed / "missing.txt"), names[5], names[1], names[0], "--json"]
    one = same(args, stdin=GOOD.encode())
    sources = [s["source"] for s in json.loads(one.stdout)]
    assert sources.index("-") > sources.index(names[5])
    assert "missing.txt: no such file or directory" in one.stderr.decode()


def test_nothing_parsed_still_exits_1(mixed):
    one = same(["parse", str(mixed / "empty.txt"), str(mixed / "binary.bin"), "--format", "jsonl"])
    assert one.returncode == 1 and one.stdout == b""


def test_a_negative_count_is_bad_usage():
    run = mssdiag("parse", str(FIXTURES / "netstat"), "--jobs", "-1")
    assert run.returncode == 2 and b"--jobs" in run.stderr


def test_big_files_are_streamed_here_and_small_ones_batched(mixed, monkeypatch):
    """In-process: with a small BIG, the cron log is read by the main process between the
    workers' batches; snapshots and error lines come in the same order as with one job."""
    from toolkit import hosts, inputs

    monkeypatch.setattr(inputs, "BIG", 20_000)
    monkeypatch.setattr(inputs, "BATCH_FILES", 3)

    def run(jobs):
        said, out = [], []
        found, _ = hosts.walk([str(mixed)], said.append)
        outcome = inputs.Outcome()
        for snap, inp in inputs.read(found, None, outcome, said.append, jobs=jobs):
            out.append((inp.path, json.dumps(snap.to_dict())))
            said.append(len(out))
        return out, said, outcome

    one, many = run(1), run(2)
    assert one == many
    assert len(one[0]) > 100 and one[2].failed


def test_an_interrupt_stops_the_workers_with_one_line(mixed):
    p = subprocess.Popen([sys.executable, "-m", "toolkit", "parse", str(mixed), str(mixed), str(mixed), "--json",
                          "--jobs", "2"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    # os.read, not p.stdout.read: what the buffered reader read ahead would never reach communicate()
    first = os.read(p.stdout.fileno(), 2000)
    assert first.startswith(b"[")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130 and err.decode().strip().splitlines()[-1] == "mssdiag: interrupted", err
    assert b"Traceback" not in err
    json.loads(first + out)           # the array is closed
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True, text=True).stdout.split()
    assert not left, f"worker processes left behind: {left}"


def test_one_job_does_not_load_multiprocessing():
    code = ("import atexit, sys; sys.argv = ['mssdiag', 'parse', %r, '--json']\n"
            "atexit.register(lambda: print('multiprocessing' in sys.modules, file=sys.stderr))\n"
            "from toolkit.entry import main\nmain()") % str(FIXTURES / "netstat" / "linux")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr


def test_files_that_look_alike_go_to_one_worker_which_learns_their_shape_once(tmp_path, monkeypatch):
    """A fleet's directory of many shapes, each shown once before any twice: every shape is
    learnt by one worker (the one its files go to), not by every worker, and the snapshots
    are those of one job."""
    import parsers
    from toolkit import hosts, inputs

    texts = []
    for p in sorted((FIXTURES / "netstat").rglob("*.txt")):
        text = p.read_text(errors="replace")
        try:
            snaps = parsers.parse(text)
        except parsers.ParseError:
            continue
        if len(snaps) == 1 and snaps[0].taken_at is None and len(text) > 400 and text not in texts:
            texts.append(text)
    assert len(texts) >= 30
    files = 12 * len(texts)
    for i in range(files):
        (tmp_path / f"h{i:04d}.txt").write_text(texts[i % len(texts)].replace(" 0 ", f" {i} ", 1))
    log = tmp_path.parent / f"{tmp_path.name}-learnt.log"
    real = parsers._learn

    def learn(*args, **kwargs):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(*args, **kwargs)

    def run(jobs):
        monkeypatch.setattr(parsers, "SHAPES", parsers.Shapes())
        monkeypatch.setattr(parsers, "_DETECTED", {})
        log.unlink(missing_ok=True)
        found, _ = hosts.walk([str(tmp_path)], lambda m: None)
        out = [(inp.path, json.dumps(s.to_dict())) for s, inp in
               inputs.read(found, None, inputs.Outcome(), lambda m: None, jobs=jobs)]
        return out, log.read_text().split()

    monkeypatch.setattr(parsers, "_learn", learn)
    one, alone = run(1)
    many, learners = run(2)
    assert many == one and len(one) == files
    assert len(alone) >= len(texts) // 2
    assert str(os.getpid()) not in learners and len(set(learners)) == 2
    assert len(learners) <= len(alone) * 1.25, "a shape was learnt by every worker"


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_workers_send_finished_json_lines_the_same_as_one_process(mixed, capsys, monkeypatch, tmp_path, fmt):
    """With --jobs, a worker encodes the records of the files it reads (host named, JSON
    made): the main process only writes them, and the output, error lines (bad files, a file
    cut mid-snapshot, a --host override) and exit status are one process's."""
    import parsers
    from toolkit import snapjson
    import typer

    from toolkit.cli import offline

    log = tmp_path / "encoded.log"
    real = snapjson.line

    def line(snap):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(snap)

    monkeypatch.setattr(snapjson, "line", line)

    def run(jobs, host=None):
        monkeypatch.setattr(parsers, "SHAPES", parsers.Shapes())
        monkeypatch.setattr(parsers, "_DETECTED", {})
        log.unlink(missing_ok=True)
        code = 0
        try:
            offline.parse([str(mixed), str(FIXTURES / "netstat")], fmt=fmt, quiet=True, host=host, jobs=jobs)
        except typer.Exit as exc:
            code = exc.exit_code
        out = capsys.readouterr()
        return (out.out, out.err, code), log.read_text().split()

    for host in (None, "forced-name"):
        one, _ = run(1, host)
        many, encoders = run(2, host)
        assert many == one and one[2] == 3 and one[0].count("\n") > 200
        here = encoders.count(str(os.getpid()))
        records = one[0].count('"source": ')
        assert here < records // 4 and len(set(encoders)) >= 2, "the main process encoded what workers read"
        if host:
            assert one[0].count('"host": "forced-name"') == records


def test_a_round_is_split_by_look_within_a_share_of_the_work(tmp_path):
    """_Route: files alike go to the worker that read their look before, but no worker gets
    more than SLACK times its share of a round's work (files alike are then shared, and the
    second worker learns their shape too); each worker's files keep their order."""
    from toolkit import inputs

    texts = {"a": "Ip:\n    Forwarding: 2\n    %d total packets received\n",
             "b": "ip:\n\t%d total packets received\n\t%d bad header checksums\n"}
    files = []
    for i in range(64):
        kind = "a" if i % 4 else "b"
        path = tmp_path / f"h{i:02d}-{kind}.txt"
        path.write_text(texts[kind] % ((i * 7919,) * texts[kind].count("%d")))
        files.append((str(path), None, path.stat().st_size, None))
    route = inputs._Route(2)
    for _ in range(3):
        parts = route.split(files)
        work = [sum(f[2] + inputs.FILE_COST for f in part) for part in parts]
        assert all(parts) and max(work) <= inputs.SLACK * sum(work) / 2
        assert sorted(parts[0] + parts[1]) == sorted(files)
        assert all(part == [f for f in files if f in part] for part in parts)
    # the rarer look stays with one worker: it fits in its share
    b = [i for i, part in enumerate(parts) if any(f[0].endswith("-b.txt") for f in part)]
    assert len(b) == 1
    assert inputs._look(files[1][0]) == inputs._look(files[2][0]) != inputs._look(files[0][0])


def test_triage_library_reads_in_workers(monkeypatch):
    """gather(jobs=2) really starts workers, and its hosts are those of one process."""
    from toolkit import inputs, triage
    started = []
    real = inputs._Workers.start.__func__

    def start(cls, *args, **kw):
        w = real(cls, *args, **kw)
        started.append(w is not None)
        return w
    monkeypatch.setattr(inputs._Workers, "start", classmethod(start))
    flags = dict.fromkeys(["os", "release", "peer", "bandwidth_bps", "rtt_s", "loss", "mtu"])
    one, _ = triage.gather([str(FIXTURES / "netstat")], flags, jobs=1)
    two, _ = triage.gather([str(FIXTURES / "netstat")], flags, jobs=2)
    assert started == [True]
    assert [h.to_dict() for h in triage.run(two)] == [h.to_dict() for h in triage.run(one)]
