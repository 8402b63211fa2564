#!/usr/bin/env python3
"""Offline parsing throughput and memory, beside `grep -c` over the same bytes.

Builds three inputs from the real dumps under fixtures/netstat/ (every OS, each snapshot
dated as a cron job would append it, every counter moving from one snapshot to the next
while settings -- Forwarding, TTL, reassembly timeout --, prompt lines and prose stay, as
on a real host; see counter_spans): a mixed corpus (default 256 MiB), a cron log of one
Linux server (default 1 GiB, its whole `netstat -s`: SERVER below), one of a switch's short
Linux dump (default 256 MiB: SWITCH) and a directory of small dumps, one snapshot a file
(default 10,000 files). For each it runs, as separate processes:

  mssdiag parse FILE --format jsonl > /dev/null      (the whole job: split, detect, parse, JSON)
  mssdiag parse DIR --format jsonl --jobs 2          (directory only: two worker processes; CPU
                                                      seconds are the main process's and the workers')
  python: parsers.iter_parse over the file            (library only, no output)
  python: a bare `for line in file` loop              (the floor for any Python reader)
  grep -c -i 'reassembl' FILE                         (what an engineer would run instead)

and prints MiB/s (wall), MiB and snapshots (files for the directory) per CPU second (what
a shared, loaded machine still measures fairly) and peak RSS for each, side by side; with
--repeat N, each figure is the median of N runs. The load average is printed with the table.

  .venv/bin/python benchmarks/parse_bench.py [--corpus-mb 256] [--big-mb 1024] [--switch-mb 256]
                                             [--files 10000] [--repeat 1] [--keep DIR]
"""
from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "netstat"
PYTHON = sys.executable
# The one-host cron logs: a RHEL server's whole `netstat -s` (3.2 KB: what a Linux server's
# cron job appends), and an Arista switch's (1.2 KB: few TcpExt lines). Costs are mostly per
# snapshot, so MiB/s is about three times lower on the switch's.
SERVER = "tcpmon-netstat-rhel-zero-omitted.txt"
SWITCH = "arista-eos-bash-netstat-s.txt"
NUMBER = re.compile(r"(?<![\w.:/-])\d+(?![\w.:/-])")


def templates():
    """Every full fixture dump (one snapshot, no dates of its own), by OS."""
    sys.path.insert(0, str(ROOT))
    import parsers
    out = []
    for raw in sorted(FIXTURES.glob("*/*.txt")):
        text = raw.read_text(encoding="utf-8", errors="replace")
        try:
            snaps = parsers.parse(text)
        except parsers.ParseError:
            continue
        if len(snaps) == 1 and snaps[0].taken_at is None and len(text) > 400:
            out.append((raw.parent.name, text))
    return out


SETTING = re.compile(r"(?i)(ttl|time to live|hop ?limit|reasmtimeout *=|timeout\.0 = integer:|timeout \(seconds\)|"
                     r"utili[sz]ation|timeticks: *\(|forwarding[^0-9]*[=:(][ =:]*)[ =:]*$")


def counter_spans(text: str):
    """Where the numbers are that a later `netstat -s` of the host prints otherwise: every
    number but the settings, which stay as on a real host -- those after a TTL, hop limit,
    timeout or utilization label, and those that change what the parser makes of the text
    other than a value (`Forwarding: 2`, `notForwarding(2)`, a counter's label: `less than 4
    segments`), found by giving numbers
    distinct sentinels and halving the sets that change something."""
    import parsers
    from parsers.text import classify

    def setting(at: int) -> bool:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        stamp, command, _ = classify(text[start:end if end != -1 else len(text)])
        return stamp is not None or command or SETTING.search(text[start:at]) is not None

    spans = [m.span() for m in NUMBER.finditer(text) if not setting(m.start())]

    def shape(marked: str):
        try:
            snaps = parsers.parse(marked)
        except parsers.ParseError:
            return None
        return [(s.os, s.format, s.forwarding, s.host, tuple(s.warnings), sorted(s.ipv4 or {}),
                 sorted(s.ipv6 or {}), sorted(s.raw or {}), [(c["section"], c["label"]) for c in s.counters])
                for s in snaps]

    want = shape(text)

    def quiet(chosen) -> bool:
        out, last = [], 0
        for i in chosen:
            a, b = spans[i]
            out += [text[last:a], str(8_000_000_000_003 + 7919 * i)]
            last = b
        out.append(text[last:])
        return shape("".join(out)) == want

    moving = []

    def sort_out(chosen):
        if not chosen:
            return
        if quiet(chosen):
            moving.extend(chosen)
        elif len(chosen) > 1:
            sort_out(chosen[:len(chosen) // 2])
            sort_out(chosen[len(chosen) // 2:])

    sort_out(list(range(len(spans))))
    return [spans[i] for i in sorted(moving)]


_SPANS: dict = {}


def body(text: str, step: int) -> str:
    """`text` with every counter grown by `step` (see counter_spans)."""
    spans = _SPANS.get(text)
    if spans is None:
        spans = _SPANS[text] = counter_spans(text)
    out, last = [], 0
    for a, b in spans:
        out += [text[last:a], str(int(text[a:b]) + step)]
        last = b
    out.append(text[last:])
    return "".join(out)


def write_corpus(path: Path, size: int, dumps, seed: int = 1) -> int:
    """Dated snapshots of the given dumps, counters growing, until `size` bytes. Returns snapshots."""
    rng = random.Random(seed)
    written = snaps = 0
    step = 0
    with open(path, "w") as f:
        while written < size:
            _, text = dumps[snaps % len(dumps)]
            step += rng.randint(1, 50)
            stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(1_700_000_000 + 300 * snaps))
            chunk = f"{stamp}\n{body(text, step)}\n"
            f.write(chunk)
            written += len(chunk)
            snaps += 1
    return snaps


def run(argv, stdout=subprocess.DEVNULL):
    """Wall seconds, CPU seconds, peak RSS (MiB), exit code and stderr of one command."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:      # a file, not a pipe: a full pipe would stall the tool
        proc = subprocess.Popen(argv, stdout=stdout, stderr=errors)
        if stdout == subprocess.PIPE:
            proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        errors.seek(0)
        err = errors.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code, err


LIB = ("import os, sys, parsers\nfrom parsers.text import open_text\n"
       "paths = [os.path.join(sys.argv[1], n) for n in sorted(os.listdir(sys.argv[1]))] "
       "if os.path.isdir(sys.argv[1]) else [sys.argv[1]]\n"
       "n = 0\nfor p in paths:\n    with open(p, 'rb') as f:\n"
       "        n += sum(1 for _ in parsers.iter_parse(open_text(f)))\nprint(n)")
LOOP = ("import os, sys\n"
        "paths = [os.path.join(sys.argv[1], n) for n in sorted(os.listdir(sys.argv[1]))] "
        "if os.path.isdir(sys.argv[1]) else [sys.argv[1]]\n"
        "n = 0\nfor p in paths:\n    with open(p, encoding='utf-8', errors='replace') as f:\n"
        "        for line in f:\n            n += 1\nprint(n)")


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def measure(label: str, path: Path, snaps: int, repeat: int = 1, files: int = 0):
    """Rows for one input; `path` is a file, or a directory of `files` files."""
    size = sum(p.stat().st_size for p in path.iterdir()) if path.is_dir() else path.stat().st_size
    rows = []
    mssdiag = [str(Path(PYTHON).parent / "mssdiag"), "parse", str(path), "--format", "jsonl"]
    grep = ["grep", "-c", "-i", "-r" if path.is_dir() else "-s", "reassembl", str(path)]
    tools = [("mssdiag parse --format jsonl", mssdiag)]
    if path.is_dir():
        tools.append(("mssdiag parse --format jsonl --jobs 2", mssdiag + ["--jobs", "2"]))
    tools += [("parsers.iter_parse (library)", [PYTHON, "-c", LIB, str(path)]),
              ("python line loop", [PYTHON, "-c", LOOP, str(path)]),
              ("grep -c -i reassembl", grep)]
    for tool, argv in tools:
        times, cpus, rsses = [], [], []
        for _ in range(repeat):
            # GNU grep stops at the first match when its output is /dev/null: give it a pipe.
            seconds, cpu, rss, code, err = run(argv, subprocess.PIPE if tool.startswith("grep") else subprocess.DEVNULL)
            if code not in (0, 1):
                print(f"{tool}: exit {code}: {err.strip()[:200]}", file=sys.stderr)
            times.append(seconds)
            cpus.append(cpu)
            rsses.append(rss)
        seconds, cpu = median(times), max(median(cpus), 1e-3)
        per = files if files else snaps
        rows.append((label, tool, size / 2**20, seconds, size / 2**20 / seconds, size / 2**20 / cpu,
                     per / cpu if tool.startswith(("mssdiag", "parsers")) else None, median(rsses)))
    return rows


def write_files(folder: Path, count: int, dumps, seed: int = 2) -> int:
    """`count` small dumps, one snapshot each, every OS in turn, counters moving. Returns files."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        os_name, text = dumps[i % len(dumps)]
        (folder / f"host{i:05d}-{os_name}.txt").write_text(body(text, rng.randint(1, 10_000)))
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus-mb", type=int, default=256, help="the mixed corpus (0 skips it)")
    ap.add_argument("--big-mb", type=int, default=1024, help="the server's cron log (0 skips it)")
    ap.add_argument("--switch-mb", type=int, default=256, help="the switch's cron log (0 skips it)")
    ap.add_argument("--files", type=int, default=10000, help="small dumps in the directory run (0 skips it)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure (the median is printed)")
    ap.add_argument("--keep", type=Path, help="write the inputs here and keep them")
    args = ap.parse_args()
    dumps = templates()
    oses = sorted({os_name for os_name, _ in dumps})
    print(f"templates: {len(dumps)} real dumps from fixtures/netstat ({', '.join(oses)})")
    work = args.keep or Path(tempfile.mkdtemp(prefix="mssdiag-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    if args.corpus_mb:
        corpus = work / "corpus-mixed.log"
        n = write_corpus(corpus, args.corpus_mb * 2**20, dumps)
        rows += measure(f"mixed corpus ({n} snapshots)", corpus, n, args.repeat)
        if not args.keep:
            corpus.unlink()
    for name, mb, what in ((SERVER, args.big_mb, "a server's"), (SWITCH, args.switch_mb, "a switch's")):
        if not mb:
            continue
        text = (FIXTURES / "linux" / name).read_text(encoding="utf-8")
        big = work / f"cron-linux-{name.split('-')[0]}.log"
        n = write_corpus(big, mb * 2**20, [("linux", text)])
        rows += measure(f"one cron log, {what} dump ({n} snapshots, {len(text)} B each)", big, n, args.repeat)
        if not args.keep:
            big.unlink()
    if args.files:
        import shutil
        folder = work / "small-dumps"
        if folder.exists():
            shutil.rmtree(folder)
        n = write_files(folder, args.files, dumps)
        rows += measure(f"{n} small dumps (files/s)", folder, n, args.repeat, files=n)
        if not args.keep:
            shutil.rmtree(folder)
    from tabulate import tabulate
    print(tabulate(rows, headers=["input", "tool", "MiB", "seconds", "MiB/s", "MiB/CPU-s", "snapshots/CPU-s", "peak RSS MiB"],
                   floatfmt=".1f"))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load} at the end; "
          f"one process per tool, one core each (--jobs 2: three processes)")


if __name__ == "__main__":
    main()
