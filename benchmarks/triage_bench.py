#!/usr/bin/env python3
"""`mssdiag triage` and `mssdiag diff` at scale: one huge cron log, and thousands of hosts.

Inputs are built from the real dumps under fixtures/netstat/ (as parse_bench.py and
audit_bench.py build theirs):

  1. one host's cron log (`date; netstat -s` appended every 5 minutes, the real Linux dump
     of fixtures/netstat/linux, every counter growing): --big-mb (default 1024) and, to
     show that memory does not follow the size, --small-mb (default 64; the only size also
     measured as a table and by `parse` alone, which the big log would take long for);
  2. a directory of --hosts (default 4,000) hosts, two dumps each (`<host>--<UTC time>.txt`,
     every OS the parsers read, counters grown between the two);
  3. a directory of 1,000 hosts, one dump each (what a fleet collection holds).

Each command runs as its own process (on one core with --pin, but `--hosts-what
triage-j2`: `triage --jobs 2`, which is about two cores); peak memory
is the whole process's max RSS (wait4). Beside them, on the same bytes: `mssdiag parse
--format jsonl` (parsing alone: the part of each figure the parser costs), `grep -c -i
reassembl` and a bare Python line loop (what reading the bytes costs at all).

  .venv/bin/python benchmarks/triage_bench.py [--big-mb 1024] [--small-mb 64] [--hosts 4000]
                                              [--fleet 1000] [--repeat 3] [--keep DIR]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from audit_bench import body, usable  # noqa: E402
from parse_bench import templates, write_corpus  # noqa: E402

MSSDIAG = str(Path(sys.executable).parent / "mssdiag")
T0 = 1_772_409_600          # 2026-03-02T00:00:00Z
LOOP = ("import sys\nn = 0\nfor path in sys.argv[1:]:\n    with open(path, 'rb') as f:\n"
        "        for line in f:\n            n += 1\nprint(n)")


PIN = []


def run(argv, repeat: int, pin: bool = True):
    """Median wall seconds, median CPU seconds and the largest peak RSS (MiB) of `repeat` runs."""
    one_core = PIN if pin else []
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(one_core + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while proc.stdout.read(1 << 20):       # a pipe, read and dropped: as `| wc -c` would
            pass
        err = proc.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(proc.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1, 3, 4):
            print(f"{' '.join(argv)[:120]}: exit {code}: {err[-300:]}", file=sys.stderr)
        out.append((time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
    return statistics.median(r[0] for r in out), statistics.median(r[1] for r in out), max(r[2] for r in out)


def build_hosts(folder: Path, dumps, hosts: int, per_host: int) -> int:
    """`hosts` hosts of every OS, `per_host` dated dumps each, one file per dump."""
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for h in range(hosts):
        _, text = dumps[h % len(dumps)]
        for i in range(per_host):
            name = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(T0 + 3600 * i))
            (folder / f"h{h:04d}--{name}.txt").write_text(body(text, 1 + 17 * i + h % 5))
            n += 1
    return n


def measure(label: str, files, size: int, snaps: int, repeat: int, what=("triage", "diff", "parse"), each=None):
    """`files` as given to mssdiag (a directory stays one argument); `each`: the same bytes
    file by file, for grep and the line loop."""
    files = [str(f) for f in files]
    each = [str(f) for f in each] if each else files
    rows = []
    cmds = {"triage": ("mssdiag triage --json", [MSSDIAG, "triage", *files, "--json"]),
            "table": ("mssdiag triage (table)", [MSSDIAG, "triage", *files]),
            "triage-j2": ("mssdiag triage --json --jobs 2 (never pinned)", [MSSDIAG, "triage", *files, "--json",
                                                                         "--jobs", "2"]),
            "diff": ("mssdiag diff --format jsonl", [MSSDIAG, "diff", *files, "--format", "jsonl"]),
            "parse": ("  mssdiag parse --format jsonl", [MSSDIAG, "parse", *files, "--format", "jsonl"])}
    for key in what:
        tool, argv = cmds[key]
        w, c, rss = run(argv, repeat, pin=key != "triage-j2")
        rows.append((label, tool, w, c, size / 2**20 / c, snaps / c, rss))
        print(f"  {label}: {tool}: {w:.2f} s wall, {c:.2f} s CPU, {rss:.0f} MiB", flush=True)
    for tool, argv in (("  grep -c -i reassembl", ["grep", "-c", "-i", "reassembl", *each]),
                       ("  python line loop", [sys.executable, "-c", LOOP, *each])):
        w, c, rss = run(argv, repeat)
        rows.append((label, tool, w, c, size / 2**20 / max(c, 1e-3), None, rss))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big-mb", type=int, default=1024, help="0 skips the large cron log")
    ap.add_argument("--small-mb", type=int, default=64)
    ap.add_argument("--hosts", type=int, default=4000)
    ap.add_argument("--fleet", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement of the host directories")
    ap.add_argument("--big-repeat", type=int, default=1, help="runs per measurement of the cron logs")
    ap.add_argument("--big-what", default="triage,diff", help="what runs on the big log: triage,table,diff,parse")
    ap.add_argument("--hosts-what", default="triage,diff,parse", help="what runs on the host directories")
    ap.add_argument("--pin", action="store_true", help="pin every process to core 0 (taskset)")
    ap.add_argument("--keep", type=Path, help="build the inputs here and keep them")
    args = ap.parse_args()
    if args.pin and shutil.which("taskset"):
        PIN[:] = ["taskset", "-c", "0"]
    work = args.keep or Path(tempfile.mkdtemp(prefix="mssdiag-triage-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    all_dumps = templates()
    linux = [d for d in all_dumps if d[0] == "linux" and "Tcp:" in d[1]][:1]
    rows = []
    for mb in (args.small_mb, args.big_mb):
        if not mb:
            continue
        log = work / f"cron-{mb}.log"
        if not log.exists():
            n = write_corpus(log, mb * 2**20, linux)
            (work / f"cron-{mb}.count").write_text(str(n))
        n = int((work / f"cron-{mb}.count").read_text())
        rows += measure(f"cron log {mb} MiB ({n} snapshots)", [log], log.stat().st_size, n, args.big_repeat,
                        ("triage", "table", "diff", "parse") if mb == args.small_mb else args.big_what.split(","))
        if not args.keep:
            log.unlink()
    dumps = usable(all_dumps)
    for hosts, per in ((args.hosts, 2), (args.fleet, 1)):
        if not hosts:
            continue
        folder = work / f"hosts-{hosts}x{per}"
        if not folder.exists():
            build_hosts(folder, dumps, hosts, per)
        files = sorted(folder.iterdir())
        size = sum(f.stat().st_size for f in files)
        rows += measure(f"{hosts} hosts x {per} dumps", [folder], size, len(files), args.repeat,
                        [w for w in args.hosts_what.split(",") if per > 1 or w != "diff"], files)
    from tabulate import tabulate
    print()
    print(tabulate([(a, b, f"{w:.2f}", f"{c:.2f}", f"{m:.1f}", "-" if s is None else f"{s:.0f}", f"{r:.0f}")
                    for a, b, w, c, m, s, r in rows],
                   headers=["input", "tool", "wall s", "CPU s", "MiB/CPU s", "snapshots/CPU s", "peak RSS MiB"]))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; one process per tool"
          f"{', pinned to core 0' if PIN else ''}; host directories: median of {args.repeat}; "
          f"templates: {len(dumps)} dumps ({', '.join(sorted({o for o, _ in dumps}))})")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
