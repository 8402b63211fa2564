#!/usr/bin/env python3
"""Start-up time of the `mssdiag` console script, beside `python -c pass` and jc.

Every command runs as its own process, N times, the commands taken in turn (round robin,
so a load that comes and goes on a shared machine touches all of them alike). For each it
prints the median wall time and the median CPU time (user + system: less sensitive to
other processes than the wall clock) and, for mssdiag, which of the heavy modules the run
imported (typer, rich, pydantic, tabulate, importlib.metadata, scapy), from `python -X importtime`.
Every command runs with no terminal (stdin, stdout and stderr not a terminal) but one:
`--help, on a terminal` runs on a pty, as in a shell (typer renders the help there).

  .venv/bin/python benchmarks/startup_bench.py [-n 21] [--mssdiag PATH] [--jc PATH] [--also NAME=PATH ...]

--mssdiag defaults to the console script beside this Python; --jc to `jc` on PATH (jc is not
a dependency: `python3 -m venv /tmp/jc && /tmp/jc/bin/pip install jc`, then --jc /tmp/jc/bin/jc).
--also NAME=PATH runs the same mssdiag commands with another script too (another install, an
older checkout), interleaved with the others. --instructions adds, per command, the
instructions one run executes (valgrind's callgrind, once each): unlike the clocks, that
figure does not move with the machine's load. The goal (issue 10): <= 0.05 s for the offline
commands.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "fixtures" / "cases" / "demo" / "vos-host" / "netstat-stcp.txt"
JC_INPUT = ROOT / "fixtures" / "netstat" / "linux" / "lkml-2003-nfs-2.6.0-test9.txt"
HEAVY = ("typer", "rich", "pydantic", "tabulate", "importlib.metadata", "scapy")
TTY = "tty"        # as a command's stdin: stdin, stdout and stderr are a terminal (a pty)


def mssdiag_commands(mssdiag: str, name: str = ""):
    """(label, argv, extra environment, stdin file) for each mssdiag command measured."""
    tag = f"[{name}] " if name else ""
    out = [("mssdiag --version", [mssdiag, "--version"], {}, None),
           ("mssdiag --help", [mssdiag, "--help"], {}, None),
           (f"mssdiag parse {SMALL.name}", [mssdiag, "parse", str(SMALL)], {}, None),
           (f"mssdiag parse {SMALL.name} --json", [mssdiag, "parse", str(SMALL), "--json"], {}, None),
           (f"mssdiag diff {SMALL.name} --json", [mssdiag, "diff", str(SMALL), "--json"], {}, None),
           ("mssdiag calc mss --mtu 1500 --encap pppoe", [mssdiag, "calc", "mss", "--mtu", "1500", "--encap", "pppoe"],
            {}, None),
           ("mssdiag calc mss --mtu 1500 --json", [mssdiag, "calc", "mss", "--mtu", "1500", "--json"], {}, None),
           ("mssdiag probe --help", [mssdiag, "probe", "--help"], {}, None),
           ("mssdiag --help, on a terminal", [mssdiag, "--help"], {}, TTY),
           ("completion: COMP_WORDS='mssdiag pa'", [mssdiag],
            {"_MSSDIAG_COMPLETE": "complete_bash", "COMP_WORDS": "mssdiag pa", "COMP_CWORD": "1"}, None)]
    return [(tag + label, argv, extra, stdin) for label, argv, extra, stdin in out]


def commands(mssdiag: str, jc: str | None, also):
    """(label, argv, extra environment, stdin file) for every command measured."""
    out = [("python -c pass", [sys.executable, "-c", "pass"], {}, None),
           ("python -c 'import typer' (the floor with typer)", [sys.executable, "-c", "import typer"], {}, None)]
    out += mssdiag_commands(mssdiag)
    for name, path in also:
        out += mssdiag_commands(path, name)
    if jc:
        out += [("jc --version", [jc, "--version"], {}, None),
                ("jc --help", [jc, "--help"], {}, None),
                (f"jc --netstat < {JC_INPUT.name}", [jc, "--netstat"], {}, JC_INPUT)]
    return out


def _on_terminal(run):
    """`run(fd)` with fd a pty's terminal end (what the command reads and writes), the
    other end read all along so the command never waits on a full terminal."""
    import pty
    import threading

    primary, secondary = pty.openpty()

    def drain():
        try:
            while os.read(primary, 65536):
                pass
        except OSError:            # EIO: the terminal end is closed
            pass
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        return run(secondary)
    finally:
        os.close(secondary)
        reader.join(5)
        os.close(primary)


def once(argv, extra, stdin) -> tuple[float, float]:
    env = dict(os.environ, **extra)

    def timed(inp, out) -> tuple[float, float]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdin=inp, stdout=out, stderr=out)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if stdin == TTY:
        return _on_terminal(lambda fd: timed(fd, fd))
    with open(stdin if stdin else os.devnull, "rb") as inp:
        return timed(inp, subprocess.DEVNULL)


def instructions(argv, extra, stdin) -> str:
    """Instructions executed by one run, from valgrind --tool=callgrind ('' without valgrind
    or on a terminal)."""
    if not shutil.which("valgrind") or stdin == TTY:
        return ""
    argv = list(argv)
    try:
        first = Path(argv[0]).read_text(errors="replace").splitlines()[0]
        if first.startswith("#!") and "python" in first:      # valgrind the interpreter, not the script
            argv = [first[2:].strip().split()[0]] + argv
    except (OSError, IndexError, UnicodeDecodeError):
        pass
    with open(stdin if stdin else os.devnull, "rb") as inp:
        err = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                             env=dict(os.environ, **extra), stdin=inp, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True).stderr
    found = [line.split("Collected :")[1].strip() for line in err.splitlines() if "Collected :" in line]
    return f"{int(found[-1]) / 1e6:.0f}M" if found else "?"


def heavy_modules(argv, extra, stdin=None) -> str:
    """The heavy modules a run imports (mssdiag runs only: the script's own Python, -X importtime)."""
    script = Path(argv[0])
    try:
        first = script.read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return ""
    if not first.startswith("#!"):
        return ""
    python = first[2:].strip().split()[0]
    if "python" not in os.path.basename(python):
        return ""
    code = "import sys; sys.argv[0] = 'mssdiag'; from toolkit.entry import main; main()"
    env = dict(os.environ, **extra)
    command = [python, "-P", "-X", "importtime", "-c", code] + argv[1:]     # -P: not the current checkout
    if stdin == TTY:         # stdin and stdout a terminal; importtime's report (stderr) read here
        err = _on_terminal(lambda fd: subprocess.run(command, env=env, stdin=fd, stdout=fd, stderr=subprocess.PIPE,
                                                     text=True).stderr)
    else:
        err = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
    loaded = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
    return ", ".join(m for m in HEAVY if m in loaded) or "none"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=21, help="runs of each command (default 21)")
    ap.add_argument("--mssdiag", default=str(Path(sys.executable).with_name("mssdiag")))
    ap.add_argument("--jc", default=shutil.which("jc"))
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH",
                    help="another mssdiag script to measure beside this one")
    ap.add_argument("--instructions", action="store_true", help="also count instructions with valgrind")
    args = ap.parse_args()
    also = [tuple(a.split("=", 1)) for a in args.also]
    if not os.access(args.mssdiag, os.X_OK):
        sys.exit(f"startup_bench: {args.mssdiag}: no mssdiag console script (make .venv/.installed, or --mssdiag)")
    todo = commands(args.mssdiag, args.jc, also)
    for _, argv, extra, stdin in todo:                  # warm: page cache, __pycache__
        once(argv, extra, stdin)
    walls = {label: [] for label, *_ in todo}
    cpus = {label: [] for label, *_ in todo}
    for _ in range(args.n):
        for label, argv, extra, stdin in todo:
            wall, cpu = once(argv, extra, stdin)
            walls[label].append(wall)
            cpus[label].append(cpu)
    print(f"start-up, median of {args.n} runs each; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"mssdiag: {args.mssdiag}\njc: {args.jc or 'not found (see --jc)'}")
    for name, path in also:
        print(f"[{name}]: {path}")
    print()
    print(f"{'command':55} {'wall s':>7} {'cpu s':>7} {'instr':>6}  heavy modules imported")
    for label, argv, extra, stdin in todo:
        heavy = heavy_modules(argv, extra, stdin) if "mssdiag" in label or "completion" in label else ""
        count = instructions(argv, extra, stdin) if args.instructions else ""
        print(f"{label:55} {statistics.median(walls[label]):7.3f} {statistics.median(cpus[label]):7.3f} "
              f"{count:>6}  {heavy}")


if __name__ == "__main__":
    main()
