"""Benchmark: `mssdiag fleet collect` on 10, 30 and 50 namespace hosts, beside a plain
sequential `ssh host netstat -s` loop over the same hosts, and how it grows with --forks.

One fleet of network namespaces is built once (tests/fleetlab.py: a real sshd per host, a
bridge, a controller namespace); every command runs inside the controller namespace against
the first N hosts. Timed: wall clock, and the CPU time of the command and every process it
waited for (the controller's share: on a shared machine the steadier figure), median of
--repeat runs:

- `ssh loop`: `for h in hosts; do ssh root@h netstat -s > h.txt; done` -- one SSH connection
  per host, one after the other (what an engineer scripts by hand);
- `ansible-playbook`: the shipped collect.yml alone (the callback writes the files and
  index.jsonl), to show Ansible's share; each run with SSH control masters of its own, closed
  after it, as `fleet collect` does (none reuses an earlier run's connections);
- `fleet collect`: the whole command users run (playbook, then ingest into a fresh audit store).

Run as root:  .venv/bin/python benchmarks/fleet_bench.py [--sizes 10,30,50] [--forks 5,10,25,50] [--repeat 3]
Not a test: nothing here fails the suite on a slow machine.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tabulate import tabulate  # noqa: E402

from fleetlab import FleetLab, unavailable  # noqa: E402
from toolkit.fleet import COLLECT_PLAYBOOK, ENV_DIR  # noqa: E402
from toolkit.fleet.runner import _close_masters  # noqa: E402

HEAD = ["hosts", "command", "median wall s", "range s", "wall ms/host", "median CPU s", "CPU ms/host"]
PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(lab: FleetLab, argv, env=None) -> tuple:
    """(wall s, CPU s of the command and every process it waited for) -- the controller's share."""
    c0, t0 = _cpu(), time.perf_counter()
    done = lab.run(lab.ctl, argv, env=env, timeout=1800)
    elapsed, cpu = time.perf_counter() - t0, _cpu() - c0
    if done.returncode not in (0, 4):
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {(done.stderr or done.stdout)[-400:]}")
    return elapsed, cpu


def ssh_loop(lab: FleetLab, hosts, out: Path) -> tuple:
    script = "; ".join(
        f"ssh -i {lab.key} -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
        f"-o LogLevel=ERROR root@{lab.addr[h]} netstat -s > {out / h}.txt" for h in hosts)
    return timed(lab, ["sh", "-c", script])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,30,50")
    ap.add_argument("--forks", default="5,10,25,50")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    why = unavailable()
    if why:
        raise SystemExit(f"fleet_bench: {why}")
    sizes = [int(x) for x in args.sizes.split(",")]
    forks = [int(x) for x in args.forks.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="mssdiag-fleet-bench-"))
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-bench")
    env.pop("MSSDIAG_STORE", None)
    rows = []
    try:
        with FleetLab(max(sizes), tmp) as lab:
            for n in sizes:
                hosts = lab.hosts[:n]
                inv = lab.inventory(tmp / f"inv{n}.yml", hosts=hosts)
                runs = {}
                out = tmp / f"ssh{n}"
                out.mkdir()
                runs["ssh loop (sequential)"] = [ssh_loop(lab, hosts, out) for _ in range(args.repeat)]
                for f in forks:
                    if f > n:
                        continue
                    books = []
                    for i in range(args.repeat):
                        # SSH control masters of its own, closed after: no run reuses another's connections
                        folder, cp = tmp / f"pb{n}-{f}-{i}", Path(tempfile.mkdtemp(prefix="mfb-cp-"))
                        books.append(timed(lab, [PLAYBOOK, "-i", str(inv), COLLECT_PLAYBOOK, "--forks", str(f)],
                                           env={**env, ENV_DIR: str(folder), "ANSIBLE_NOCOLOR": "1",
                                                "ANSIBLE_SSH_CONTROL_PATH_DIR": str(cp)}))
                        _close_masters(str(cp))
                        shutil.rmtree(folder, ignore_errors=True)
                    runs[f"ansible-playbook collect.yml --forks {f}"] = books
                    whole = []
                    for i in range(args.repeat):
                        store = tmp / f"s{n}-{f}-{i}.sqlite"
                        whole.append(timed(lab, [sys.executable, "-m", "toolkit", "fleet", "collect", "-i", str(inv),
                                                 "--forks", str(f), "--store", str(store), "-q"], env=env))
                    runs[f"mssdiag fleet collect --forks {f}"] = whole
                for what, got in runs.items():
                    walls, cpus = [w for w, _ in got], [c for _, c in got]
                    med = statistics.median(walls)
                    rows.append([n, what, f"{med:.2f}", f"{min(walls):.2f}-{max(walls):.2f}", f"{med / n * 1000:.0f}",
                                 f"{statistics.median(cpus):.2f}", f"{statistics.median(cpus) / n * 1000:.0f}"])
                print(tabulate(rows[-len(runs):], HEAD), flush=True)
                print()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"all sizes, {args.repeat} run(s) each, wall clock and CPU, inside the controller namespace:")
    print(tabulate(rows, HEAD))
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
