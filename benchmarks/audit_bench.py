#!/usr/bin/env python3
"""`mssdiag audit` at fleet scale: ingest a day of 1,000 hosts, report on 30 days of them.

Inputs are built from the real dumps under fixtures/netstat/ (every OS the parsers read,
as in parse_bench.py): host N gets one of them as its template and a cron log of 96
snapshots, one every 15 minutes, each preceded by its `date` line, every counter moving.

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
from parse_bench import NUMBER, run, templates  # noqa: E402

MSSDIAG = str(Path(sys.executable).parent / "mssdiag")
DAY0 = 1_772_409_600          # 2026-03-02T00:00:00Z


def stamp(t: float) -> str:
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(t))


def body(text: str, step: int) -> str:
    return NUMBER.sub(lambda m: str(int(m.group(0)) + step), text)


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
    for k in range(1, days):
        shift = -86400 * k
        sel = ", ".join({"id": f"id + {n * k}", "t": f"t + {shift}", "moment": f"moment || '-{k}'"}.get(c, c)
                        for c in cols)
        db.execute(f"INSERT INTO snapshots({', '.join(cols)}) SELECT {sel} FROM snapshots WHERE id <= {n}")
        dsel = ", ".join({"snapshot_id": f"snapshot_id + {n * k}", "prev_id": f"prev_id + {n * k}",
                          "t": f"t + {shift}"}.get(c, c) for c in dcols)
        db.execute(f"INSERT INTO deltas({', '.join(dcols)}) SELECT {dsel} FROM deltas WHERE snapshot_id <= {n}")
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
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; medians are printed")
    ap.add_argument("--keep", type=Path, help="build everything here and keep it")
    args = ap.parse_args()
    dumps = templates()
    print(f"templates: {len(dumps)} real dumps from fixtures/netstat ({', '.join(sorted({o for o, _ in dumps}))})")
    work = args.keep or Path(tempfile.mkdtemp(prefix="mssdiag-audit-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    logs = work / "logs"
    n = build_logs(logs, dumps, args.hosts, args.snapshots)
    raw_mb = sum(p.stat().st_size for p in logs.iterdir()) / 2**20
    gz = subprocess.run(f"cat {logs}/* | gzip -6 | wc -c", shell=True, capture_output=True, text=True)
    gz_mb = int(gz.stdout) / 2**20
    env_store = work / "day.sqlite"
    rows = []
    one_core = ["taskset", "-c", "0"] if shutil.which("taskset") else []

    def timed(label, argv, store=None, fresh=False, out=subprocess.DEVNULL):
        results = []
        for _ in range(args.repeat):
            if fresh and store is not None:
                for p in store.parent.glob(store.name + "*"):
                    p.unlink()
            seconds, rss, code, err = run(one_core + argv, out)
            if code not in (0, 3, 4):
                print(f"{label}: exit {code}: {err.strip()[:300]}", file=sys.stderr)
            results.append((seconds, rss))
        return statistics.median(r[0] for r in results), max(r[1] for r in results)

    s, rss = timed("parse", [MSSDIAG, "parse", str(logs), "--format", "jsonl"])
    rows.append(("mssdiag parse DIR --format jsonl", n, s, n / s, rss, None))
    s, rss = timed("ingest", [MSSDIAG, "audit", "run", str(logs), "--store", str(env_store), "--now",
                              "2026-03-03T00:00:00Z", "-q"], env_store, fresh=True)
    rows.append(("mssdiag audit run DIR (fresh store)", n, s, n / s, rss, du(env_store)))
    s2, rss2 = timed("again", [MSSDIAG, "audit", "run", str(logs), "--store", str(env_store), "--now",
                               "2026-03-03T00:00:00Z", "-q"])
    rows.append(("  same again (nothing new)", n, s2, n / s2, rss2, du(env_store)))

    fleet_store = work / "fleet.sqlite"
    shutil.copy(env_store, fleet_store)
    per_run = []
    for r in range(args.fleet_runs):
        folder = work / f"fleet{r}"
        build_fleet(folder, dumps, args.hosts, r)
        sec, rss_f, code, err = run(one_core + [MSSDIAG, "audit", "run", str(folder), "--store", str(fleet_store),
                                                "--now", time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                       time.gmtime(DAY0 + 86400 + 900 * r + 60)),
                                                "-q"])
        if code not in (0, 3, 4):
            print(f"fleet run: exit {code}: {err.strip()[:300]}", file=sys.stderr)
        per_run.append(sec)
    fleet_med = statistics.median(per_run)
    rows.append((f"audit run FLEETDIR ({args.hosts} files + index.jsonl)", args.hosts, fleet_med,
                 args.hosts / fleet_med, rss_f, du(fleet_store)))

    month = work / "month.sqlite"
    shutil.copy(env_store, month)
    total = replicate(month, args.days)
    reports = []
    for fmt in ("table", "json", "html"):
        s, rss = timed(f"report {fmt}", [MSSDIAG, "audit", "report", "--store", str(month), "--since",
                                         "2026-01-01T00:00:00Z", "-f", fmt])
        reports.append((f"mssdiag audit report --since 30d -f {fmt}", total, s, rss))
    s, rss = timed("report one host", [MSSDIAG, "audit", "report", "--store", str(month), "--since",
                                       "2026-01-01T00:00:00Z", "--host", "h0007", "-f", "html"])
    reports.append(("  ... --host h0007 -f html", total // args.hosts, s, rss))

    from tabulate import tabulate
    print()
    print(f"ingest: {args.hosts} hosts x {args.snapshots} snapshots = {n} snapshots, {raw_mb:.1f} MiB of text "
          f"(gzip -6: {gz_mb:.1f} MiB)")
    print(tabulate([(a, b, f"{c:.1f}", f"{d:.0f}", f"{e:.0f}", "-" if f is None else f"{f:.1f}") for a, b, c, d, e, f in rows],
                   headers=["what", "snapshots", "seconds", "snapshots/s", "peak RSS MiB", "store MiB"]))
    print(f"fleet runs: {', '.join(f'{x:.1f}' for x in per_run)} s")
    print()
    print(f"report: {args.hosts} hosts x {args.days} days = {total} snapshots; store {du(month):.0f} MiB")
    print(tabulate([(a, b, f"{c:.2f}", f"{d:.0f}") for a, b, c, d in reports],
                   headers=["what", "snapshots", "seconds", "peak RSS MiB"]))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {'pinned to core 0; ' if one_core else ''}"
          f"median of {args.repeat} run(s)")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
