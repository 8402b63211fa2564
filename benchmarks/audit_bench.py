#!/usr/bin/env python3
"""`mssdiag audit` at fleet scale: ingest a day of 1,000 hosts, report on 30 days of them.

Inputs are built from the real dumps under fixtures/netstat/ (every OS the parsers read,
as in parse_bench.py): host N gets one of them as its template and a cron log of 96
snapshots, one every 15 minutes, each preceded by its `date` line, every counter moving
(settings stay, as parse_bench.py's counter_spans says).

  1. one `mssdiag audit run DIR` over the 1,000 cron logs (96,000 snapshots) on one core:
     seconds, snapshots/s, peak RSS, store size; beside `mssdiag parse DIR --format jsonl`
     over the same files (parsing alone) and `gzip -6` of them (what keeping the raw text
     would cost as plain files);
  2. the fleet shape: runs of 1,000 `<host>--<UTC time>.txt` files, one snapshot per host
     per run (what `mssdiag audit run FLEETDIR` does every 15 minutes): seconds per run;
  3. `mssdiag audit report` over 30 days of the 1,000 hosts: the day of step 1 is copied
     29 times in the store's own tables, a day earlier each time (2,880,000 snapshots and
     deltas), then the report runs as table, JSON and HTML.

  .venv/bin/python benchmarks/audit_bench.py [--hosts 1000] [--snapshots 96] [--days 30]
                                             [--fleet-runs 4] [--repeat 3] [--keep DIR]
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from parse_bench import body, templates  # noqa: E402

MSSDIAG = str(Path(sys.executable).parent / "mssdiag")
DAY0 = 1_772_409_600          # 2026-03-02T00:00:00Z


def run(argv, stdout=subprocess.DEVNULL):
    """Wall seconds, CPU seconds (user + system), peak RSS (MiB), exit code, last stderr line."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE)
    if stdout == subprocess.PIPE:
        proc.stdout.read()
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    lines = err.strip().splitlines()
    return (time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            os.waitstatus_to_exitcode(status), lines[-1] if lines else "")


def usable(dumps):
    """The templates that stay one host's dated snapshot when stamped: no prompt naming
    another host (a prompt outranks the file name in the host model), every line read."""
    import parsers
    out = []
    for os_name, text in dumps:
        notes, skipped = [], []
        doubled = f"{stamp(DAY0)}\n{text}\n{stamp(DAY0 + 900)}\n{body(text, 1)}\n"
        snaps = list(parsers.iter_parse(doubled, warn=notes.append, skipped=skipped))
        if len(snaps) == 2 and all(s.taken_at and s.prompt_host is None for s in snaps) and not skipped:
            out.append((os_name, text))
    return out


def stamp(t: float) -> str:
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(t))


def build_logs(folder: Path, dumps, hosts: int, snaps: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for h in range(hosts):
        _, text = dumps[h % len(dumps)]
        step = 0
        parts = []
        for i in range(snaps):
            step += rng.randint(0, 40)
            parts.append(f"{stamp(DAY0 + 900 * i)}\n{body(text, step)}\n")
        (folder / f"h{h:04d}--2026-03-02.log").write_text("".join(parts))
        total += snaps
    return total


def build_fleet(folder: Path, dumps, hosts: int, run_no: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    t = DAY0 + 86400 + 900 * run_no
    name = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t))
    lines = []
    for h in range(hosts):
        _, text = dumps[h % len(dumps)]
        f = f"f{h:04d}--{name}.txt"
        (folder / f).write_text(body(text, 10 * run_no + h % 7))
        lines.append(f'{{"host": "f{h:04d}", "status": "ok", "command": "netstat -s", "rc": 0, "file": "{f}"}}\n')
    (folder / "index.jsonl").write_text("".join(lines))


def du(path: Path) -> float:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 2**20


def replicate(store: Path, days: int) -> int:
    """Copy the stored day `days - 1` times, a day earlier each time (ids shifted), in SQL."""
    db = sqlite3.connect(store)
    n = db.execute("SELECT max(id) FROM snapshots").fetchone()[0]
    cols = [r[1] for r in db.execute("PRAGMA table_info(snapshots)")]
    dcols = [r[1] for r in db.execute("PRAGMA table_info(deltas)")]
    hcols = [r[1] for r in db.execute("PRAGMA table_info(hourly)")]
    for k in range(1, days):
        shift = -86400 * k
        sel = ", ".join({"id": f"id + {n * k}", "t": f"t + {shift}", "moment": f"moment || '-{k}'"}.get(c, c)
                        for c in cols)
        db.execute(f"INSERT INTO snapshots({', '.join(cols)}) SELECT {sel} FROM snapshots WHERE id <= {n}")
        dsel = ", ".join({"snapshot_id": f"snapshot_id + {n * k}", "prev_id": f"prev_id + {n * k}",
                          "t": f"t + {shift}"}.get(c, c) for c in dcols)
        db.execute(f"INSERT INTO deltas({', '.join(dcols)}) SELECT {dsel} FROM deltas WHERE snapshot_id <= {n}")
        if hcols:       # the hourly roll-up (schema 3; its snapshot times schema 4) of the copied day
            hsel = ", ".join({"h": f"h + {shift}", "first_t": f"first_t + {shift}",
                              "last_t": f"last_t + {shift}"}.get(c, c) for c in hcols)
            db.execute(f"INSERT INTO hourly({', '.join(hcols)}) SELECT {hsel} FROM hourly WHERE h >= {DAY0} AND h < {DAY0 + 86400}")
        db.commit()
    db.execute("UPDATE hosts SET first_t = first_t - ?", (86400 * (days - 1),))
    db.commit()
    total = db.execute("SELECT count(*) FROM snapshots").fetchone()[0]
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--snapshots", type=int, default=96)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--fleet-runs", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3, help="runs per report measurement (medians printed)")
    ap.add_argument("--ingest-repeat", type=int, default=1, help="runs per ingest measurement")
    ap.add_argument("--keep", type=Path, help="build everything here and keep it")
    args = ap.parse_args()
    dumps = usable(templates())
    print(f"templates: {len(dumps)} real dumps from fixtures/netstat ({', '.join(sorted({o for o, _ in dumps}))})",
          flush=True)
    work = args.keep or Path(tempfile.mkdtemp(prefix="mssdiag-audit-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    logs = work / "logs"
    n = build_logs(logs, dumps, args.hosts, args.snapshots)
    raw_mb = sum(p.stat().st_size for p in logs.iterdir()) / 2**20
    gz = subprocess.run(f"cat {logs}/* | gzip -6 | wc -c", shell=True, capture_output=True, text=True)
    gz_mb = int(gz.stdout) / 2**20
    day = work / "day.sqlite"
    one_core = ["taskset", "-c", "0"] if shutil.which("taskset") else []

    def timed(label, argv, repeat, store=None):
        results = []
        for _ in range(repeat):
            if store is not None:
                for p in store.parent.glob(store.name + "*"):
                    p.unlink()
            wall, cpu, rss, code, err = run(one_core + argv)
            if code not in (0, 3, 4):
                print(f"{label}: exit {code}: {err[:300]}", file=sys.stderr)
            results.append((wall, cpu, rss))
        return (statistics.median(r[0] for r in results), statistics.median(r[1] for r in results),
                max(r[2] for r in results))

    rows = []
    ingest = [MSSDIAG, "audit", "run", str(logs), "--store", str(day), "--now", "2026-03-03T00:00:00Z", "-q"]
    w, c, rss = timed("parse", [MSSDIAG, "parse", str(logs), "--format", "jsonl"], args.ingest_repeat)
    rows.append(("mssdiag parse DIR --format jsonl", n, w, c, n / c, rss, None))
    w, c, rss = timed("ingest", ingest, args.ingest_repeat, day)
    rows.append(("mssdiag audit run DIR (fresh store)", n, w, c, n / c, rss, du(day)))
    w, c, rss = timed("again", ingest, args.ingest_repeat)
    rows.append(("  same DIR again (nothing new)", n, w, c, n / c, rss, du(day)))
    print("ingest measured", flush=True)

    fleet_store = work / "fleet.sqlite"
    shutil.copy(day, fleet_store)
    per_run = []
    for r in range(args.fleet_runs):
        folder = work / f"fleet{r}"
        build_fleet(folder, dumps, args.hosts, r)
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(DAY0 + 86400 + 900 * r + 60))
        wall, cpu, rss_f, code, err = run(one_core + [MSSDIAG, "audit", "run", str(folder), "--store",
                                                      str(fleet_store), "--now", when, "-q"])
        if code not in (0, 3, 4):
            print(f"fleet run: exit {code}: {err[:300]}", file=sys.stderr)
        per_run.append((wall, cpu))
    fw, fc = statistics.median(x[0] for x in per_run), statistics.median(x[1] for x in per_run)
    rows.append((f"audit run FLEETDIR ({args.hosts} files + index.jsonl)", args.hosts, fw, fc, args.hosts / fc,
                 rss_f, du(fleet_store)))

    month = work / "month.sqlite"
    shutil.copy(day, month)
    total = replicate(month, args.days)
    reports = []
    since = "2026-01-01T00:00:00Z"
    for fmt in ("table", "json", "md", "html"):
        w, c, rss = timed(f"report {fmt}", [MSSDIAG, "audit", "report", "--store", str(month), "--since", since,
                                             "-f", fmt], args.repeat)
        reports.append((f"mssdiag audit report -f {fmt}", total, w, c, rss))
    w, c, rss = timed("report one host", [MSSDIAG, "audit", "report", "--store", str(month), "--since", since,
                                          "--host", "h0007", "-f", "html"], args.repeat)
    reports.append(("  ... --host h0007 -f html", total // args.hosts, w, c, rss))

    from tabulate import tabulate
    print()
    print(f"ingest: {args.hosts} hosts x {args.snapshots} snapshots = {n} snapshots, {raw_mb:.1f} MiB of text "
          f"(gzip -6: {gz_mb:.1f} MiB)")
    print(tabulate([(a, b, f"{w:.1f}", f"{c:.1f}", f"{d:.0f}", f"{e:.0f}", "-" if f is None else f"{f:.1f}")
                    for a, b, w, c, d, e, f in rows],
                   headers=["what", "snapshots", "wall s", "CPU s", "snapshots/CPU s", "peak RSS MiB", "store MiB"]))
    print(f"fleet runs (wall/CPU s): {', '.join(f'{w:.1f}/{c:.1f}' for w, c in per_run)}")
    print()
    print(f"report: {args.hosts} hosts x {args.days} days = {total} snapshots and deltas; store {du(month):.0f} MiB")
    print(tabulate([(a, b, f"{w:.2f}", f"{c:.2f}", f"{d:.0f}") for a, b, w, c, d in reports],
                   headers=["what", "snapshots", "wall s", "CPU s", "peak RSS MiB"]))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {'pinned to core 0; ' if one_core else ''}"
          f"ingest median of {args.ingest_repeat}, reports median of {args.repeat} run(s)")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
