"""--jobs workers fed while the walk goes on (hosts.scan, inputs.read): the same output, error
lines in the same order, exit status and "skipped N inputs" line as one process; and what
the walk learnt of a file (size, head) is what the readers would have asked the file."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
PCAP = bytes.fromhex("d4c3b2a1020004000000000000000000ffff000001000000")


def mssdiag(*args):
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, timeout=600)


def fleet(folder: Path, files: int = 700) -> Path:
    """Many small dumps with bad inputs interleaved: broken links, FIFOs, captures, empty,
    truncated and binary files, a subdirectory -- more files than the workers' first rounds."""
    texts = []
    for p in sorted((FIXTURES / "netstat").rglob("*.txt")):
        data = p.read_bytes()
        if 300 < len(data) < 20_000 and data not in texts:
            texts.append(data)
    assert len(texts) >= 20
    folder.mkdir()
    for i in range(files):
        name = folder / f"h{i:04d}.txt"
        kind = i % 50
        if kind == 7:
            os.symlink(folder / f"gone{i}", name)                    # broken link: the walk's error
        elif kind == 13:
            os.mkfifo(name)                                          # FIFO: the walk's error
        elif kind == 21:
            name.write_bytes(PCAP)                                   # a capture: skipped, counted
        elif kind == 29:
            name.write_bytes(b"")                                    # a reader's error
        elif kind == 33:
            name.write_bytes(texts[i % len(texts)][:90])             # cut: a reader's error, maybe
        elif kind == 41:
            name.write_bytes(b"\x7fELF" + bytes(200))
        else:
            name.write_bytes(texts[i % len(texts)].replace(b" 0 ", f" {i} ".encode(), 1))
    sub = folder / "h0350-sub"
    sub.mkdir()
    (sub / "a.txt").write_bytes(texts[0])
    return folder


def test_bad_inputs_interleaved_give_one_process_output_and_order(tmp_path):
    folder = fleet(tmp_path / "fleet")
    for fmt in ("jsonl", "json"):
        one = mssdiag("parse", str(folder), "--format", fmt, "--jobs", "1")
        many = mssdiag("parse", str(folder), "--format", fmt, "--jobs", "2")
        assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout, one.stderr)
    assert one.returncode == 3 and b"Traceback" not in one.stderr
    lines = one.stderr.decode().splitlines()
    walk = [i for i, line in enumerate(lines) if "broken symbolic link" in line or "not a regular file" in line]
    skipped = [i for i, line in enumerate(lines) if "input(s) that are not netstat dumps" in line]
    read = [i for i, line in enumerate(lines) if "no netstat IP statistics found" in line]
    assert len(walk) == 28 and len(skipped) == 1 and read
    assert max(walk) < skipped[0] < min(read)           # the walk's lines, the skipped line, then the readers'
    assert "skipped 14 input(s)" in lines[skipped[0]]
    assert len(json.loads(one.stdout)) > 500


def test_workers_start_before_the_walk_ends(tmp_path, monkeypatch):
    """The first round goes to a worker while the walk has found only part of the files;
    snapshots and error lines are still those of one process, in order."""
    from toolkit import hosts, inputs

    folder = fleet(tmp_path / "fleet")
    found = {"n": 0}
    first_send = []

    def counted(paths, error, failed=None):
        for inp in hosts.scan(paths, error, failed):
            found["n"] += 1
            yield inp

    real = inputs._Workers._send

    def send(self, walking=False):
        before = len(self.rounds)
        real(self, walking)
        if len(self.rounds) > before and not first_send:
            first_send.append(found["n"])

    monkeypatch.setattr(inputs._Workers, "_send", send)

    def run(jobs):
        found["n"] = 0
        said, out, walked = [], [], []
        for snap, inp in inputs.read(counted([str(folder)], said.append), None, inputs.Outcome(), said.append,
                                     jobs=jobs, walked=lambda every: walked.append(len(every))):
            out.append((inp.path, json.dumps(snap.to_dict())))
        return out, said, walked

    one, many = run(1), run(2)
    assert one == many and one[2] == [found["n"]] == [700 - 28 + 1]
    assert first_send and first_send[0] < found["n"] // 2, first_send    # after the first rounds' worth


def test_the_walk_carries_size_and_head_and_batches_ask_no_file(tmp_path, monkeypatch):
    from toolkit import hosts, inputs

    folder = fleet(tmp_path / "fleet", files=120)
    found, _ = hosts.walk([str(folder)], lambda m: None)
    dumps = [i for i in found if i.kind == "dump"]
    for inp in dumps:
        data = Path(inp.path).read_bytes()
        assert inp.size == len(data) and inp.head == data[:hosts.HEAD]
        assert inputs._look(inp.path, inp.head) == inputs._look(inp.path)
    given, _ = hosts.walk([dumps[3].path], lambda m: None)         # a file named on the command line
    assert given[0].head == dumps[3].head and given[0].size in (-1, dumps[3].size)

    def asked(*args, **kwargs):
        raise AssertionError("a file asked again")

    monkeypatch.setattr(inputs, "read_head", asked)
    monkeypatch.setattr(inputs.os, "stat", asked)
    rounds = list(inputs._batches(dumps, None, 16))
    assert [item[0] for batch, _ in rounds for item in batch] == [i.path for i in dumps]
    assert all(len(batch) == len(looks) for batch, looks in rounds)
