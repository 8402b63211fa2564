#!/usr/bin/env python3
"""Hostile input: time stays linear in the input, whatever its shape.

Builds one-line files (no newline at all, digits and counter words scattered through them)
of 1, 2, 4, 8 ... MiB, each followed by a real dump, and times `mssdiag parse` on them as a
separate process, beside `wc -l` on the same file. Linear means the MiB/s column stays flat
as the size doubles (a quadratic splitter loses half its speed at every step), and the dump
after the long line is still read.

  .venv/bin/python benchmarks/hostile_bench.py [--sizes 1,2,4,8,64] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DUMP = (ROOT / "fixtures" / "netstat" / "linux" / "lkml-2003-nfs-2.6.0-test9.txt").read_text()
# What a splitter looks for, scattered so every literal-led pattern finds candidates all along the line.
PIECE = "x 12 reassemblies required 10:00:01 netstat ip: 2026-03-03 fragments 7 "


def build(path: Path, mib: int) -> None:
    with open(path, "w") as fh:
        need = mib << 20
        block = PIECE * (65536 // len(PIECE))
        while need > 0:
            fh.write(block[:need])
            need -= len(block)
        fh.write("\n" + DUMP)


def timed(argv) -> tuple:
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    return time.perf_counter() - t0, p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,2,4,8,64")
    ap.add_argument("--keep", help="build the files here and keep them")
    args = ap.parse_args()
    where = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mssdiag-hostile-"))
    where.mkdir(parents=True, exist_ok=True)
    mssdiag = [sys.executable, "-m", "toolkit"]
    rows = []
    for mib in (int(s) for s in args.sizes.split(",")):
        path = where / f"oneline-{mib}MiB.txt"
        build(path, mib)
        seconds, p = timed(mssdiag + ["parse", str(path), "--json", "-q"])
        snaps = json.loads(p.stdout) if p.stdout.strip() else []
        wc, _ = timed(["wc", "-l", str(path)])
        rows.append((mib, seconds, mib / seconds, len(snaps), wc))
        if not args.keep:
            path.unlink()
    print(f"{'one-line file':>14}  {'mssdiag parse s':>15}  {'MiB/s':>7}  {'dump after it read':>18}  {'wc -l s':>8}")
    for mib, seconds, rate, n, wc in rows:
        print(f"{mib:>10} MiB  {seconds:>15.2f}  {rate:>7.1f}  {'yes' if n == 1 else 'NO':>18}  {wc:>8.3f}")
    first, last = rows[0], rows[-1]
    print(f"time ratio {last[0] // first[0]}x the size: {last[1] / first[1]:.1f}x the time "
          f"(linear: about {last[0] // first[0]}x plus start-up)")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
