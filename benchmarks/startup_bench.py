#!/usr/bin/env python3
"""Start-up time of the `mssdiag` console script beside a minimal typer app and `python -c pass`.

Every command runs as its own process, N times, the commands taken in turn (round robin, so
a load that comes and goes on a shared machine touches all of them alike), with no terminal.
It prints the median wall and CPU time (user + system) of each, and each mssdiag command's
wall time as a multiple of the minimal typer app's (a script with one typer command and one
option, run the same way: `--help` beside its `--help`, the rest beside a run of its command).
jc (`jc --netstat`, another netstat -s reader) is measured too when it is found. The runs
write and use bytecode caches as a user's do (PYTHONDONTWRITEBYTECODE is left out of their
environment), so the warm-up run leaves every module compiled.

  .venv/bin/python benchmarks/startup_bench.py [-n 21] [--mssdiag PATH] [--jc PATH] [--instructions]

--instructions adds the instructions one run executes (valgrind's callgrind, once each, the
console script's Python run under it): unlike the clocks, they do not move with the load.

--mssdiag defaults to the console script beside this Python; --jc to `jc` on PATH (jc is not a
dependency: `python3 -m venv /tmp/jc && /tmp/jc/bin/pip install jc`, then --jc /tmp/jc/bin/jc).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "fixtures" / "cases" / "demo" / "vos-host" / "netstat-stcp.txt"
JC_INPUT = ROOT / "fixtures" / "netstat" / "linux" / "lkml-2003-nfs-2.6.0-test9.txt"
MINIMAL = '''import typer

app = typer.Typer()


@app.command()
def hello(name: str = typer.Option("world", help="Who to greet.")) -> None:
    """Say hello."""
    print(f"hello {name}")


if __name__ == "__main__":
    app()
'''


def commands(mssdiag: str, minimal: str, jc: str | None):
    """(label, argv, stdin file, the label of the minimal typer app's run it is compared with)."""
    mini_run, mini_help = "minimal typer app: hello --name x", "minimal typer app: --help"
    out = [("python -c pass", [sys.executable, "-c", "pass"], None, None),
           (mini_run, [sys.executable, minimal, "--name", "x"], None, None),
           (mini_help, [sys.executable, minimal, "--help"], None, None),
           ("mssdiag --version", [mssdiag, "--version"], None, mini_run),
           ("mssdiag --help", [mssdiag, "--help"], None, mini_help),
           ("mssdiag parse --help", [mssdiag, "parse", "--help"], None, mini_help),
           (f"mssdiag parse {SMALL.name}", [mssdiag, "parse", str(SMALL)], None, mini_run),
           (f"mssdiag parse {SMALL.name} --json", [mssdiag, "parse", str(SMALL), "--json"], None, mini_run),
           ("mssdiag calc mss --mtu 1500", [mssdiag, "calc", "mss", "--mtu", "1500"], None, mini_run),
           ("mssdiag calc mss --mtu 1500 --json", [mssdiag, "calc", "mss", "--mtu", "1500", "--json"], None, mini_run)]
    if jc:
        out += [(f"jc --netstat < {JC_INPUT.name}", [jc, "--netstat"], JC_INPUT, None)]
    return out


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def once(argv, stdin) -> tuple[float, float]:
    with open(stdin or os.devnull, "rb") as inp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, stdin=inp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(argv, stdin) -> float:
    """Millions of instructions one run executes (valgrind --tool=callgrind)."""
    argv = list(argv)
    first = Path(argv[0]).read_bytes()[:200].split(b"\n")[0]
    if first.startswith(b"#!") and b"python" in first:        # a console script: valgrind its Python
        argv = [first[2:].decode().split()[0]] + argv
    with open(stdin or os.devnull, "rb") as inp:
        err = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv, stdin=inp,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV).stderr
    found = [line.split("Collected :")[1] for line in err.splitlines() if "Collected :" in line]
    return int(found[-1]) / 1e6 if found else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=21, help="runs of each command (default 21)")
    ap.add_argument("--mssdiag", default=str(Path(sys.executable).with_name("mssdiag")))
    ap.add_argument("--jc", default=shutil.which("jc"))
    ap.add_argument("--instructions", action="store_true", help="also count each run's instructions (valgrind)")
    args = ap.parse_args()
    if args.instructions and not shutil.which("valgrind"):
        sys.exit("startup_bench: --instructions needs valgrind")
    if not os.access(args.mssdiag, os.X_OK):
        sys.exit(f"startup_bench: {args.mssdiag}: no mssdiag console script (make .venv/.installed, or --mssdiag)")
    with tempfile.TemporaryDirectory() as tmp:
        minimal = os.path.join(tmp, "minimal_typer_app.py")
        Path(minimal).write_text(MINIMAL)
        todo = commands(args.mssdiag, minimal, args.jc)
        for _, argv, stdin, _ in todo:                  # warm: page cache, __pycache__
            once(argv, stdin)
        walls = {label: [] for label, *_ in todo}
        cpus = {label: [] for label, *_ in todo}
        for _ in range(args.n):
            for label, argv, stdin, _ in todo:
                wall, cpu = once(argv, stdin)
                walls[label].append(wall)
                cpus[label].append(cpu)
        counts = {label: instructions(argv, stdin) for label, argv, stdin, _ in todo} if args.instructions else {}
    wall = {label: statistics.median(times) for label, times in walls.items()}

    def times(figures, label, peer):
        ratio = figures[label] / figures[peer]
        return f"{ratio:.2f}x {'(ok)' if ratio <= 1.3 else '(above 1.3x)'}"
    rows = []
    for label, _, _, peer in todo:
        row = [label, f"{wall[label]:.3f}", f"{statistics.median(cpus[label]):.3f}", times(wall, label, peer) if peer else ""]
        if counts:
            row += [f"{counts[label]:.0f}", times(counts, label, peer) if peer else ""]
        rows.append(row)
    print(f"start-up, median of {args.n} runs each; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"mssdiag: {args.mssdiag}\njc: {args.jc or 'not found (see --jc)'}\n")
    headers = ["command", "wall s", "cpu s", "wall vs minimal typer app"]
    if counts:
        headers += ["M instructions", "vs minimal typer app"]
    print(tabulate(rows, headers=headers, disable_numparse=True,
                   colalign=("left", "right", "right", "left", "right", "left")[:len(headers)]))


if __name__ == "__main__":
    main()
