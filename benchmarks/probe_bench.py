"""Benchmark: `mssdiag probe` against tracepath and scamper on the lab scenarios.

Each scenario network (toolkit.lab) is built once; each tool runs in the client
namespace against the target: correct or not (exact PMTU, and the black-hole verdict
where the tool can give one; for mssdiag also the MSS sent/synack/used and the finding
codes), wall time, and the packets the client sent towards the target (an iptables
interface counter in the client namespace, so every tool is counted the same way, also
those that send through AF_PACKET; for mssdiag this includes the TCP connections of the
MSS check). The kernel's route cache is
flushed in the client before each run so no tool profits from another's probes.

With --repeat N it runs only mssdiag, N times back to back per scenario (route cache
flushed each time), and counts the verdicts: how often the exact PMTU, how often a
black hole and with what confidence, how often a PMTU below the expected one (e.g.
`--repeat 20 ratelimit10 lossy30`). --mssdiag PATH runs another build of the prober
(say an older checkout's .venv/bin/mssdiag) against the same lab.

With --scale it probes 1, 16, 256 and 1,000 targets at once (addresses added to the lab's
target, toolkit.lab.Lab.add_addresses) and counts how many answers are exact, beside the
time of one target; the routers' ICMP settings are printed with it (they are Linux's
defaults: what a real Linux router does to one prober).

With --trace it runs `mssdiag probe --trace` beside scamper `trace -M` and tracepath on
the same scenarios: time, and per hop (TTL, address, the MTU that reached it)
how many hops each tool got right against what the lab is built to give. The routers
limit the 'time exceeded' they send one prober (6 at once, then 1 a second), so the
tools run 6 s apart.

Run as root:  .venv/bin/python benchmarks/probe_bench.py [--runs N] [--cap SECONDS] [SCENARIO...]
              .venv/bin/python benchmarks/probe_bench.py --trace trace3 clamp2 blackhole multihop
              .venv/bin/python benchmarks/probe_bench.py --repeat 20 ratelimit10 lossy30
              .venv/bin/python benchmarks/probe_bench.py --scale bottleneck blackhole
Not a test: nothing here fails the suite on a slow machine.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tabulate import tabulate  # noqa: E402

from toolkit import lab  # noqa: E402

MSSDIAG = str(Path(sys.executable).with_name("mssdiag"))
SEVEN = ["bottleneck", "blackhole", "clamp536", "legacy536", "multihop", "ipv6", "noecho"]


def tx_packets(L: lab.Lab) -> int:
    """Packets the client has sent out of its only link (the lab is otherwise quiet).
    Counted at the interface because some tools send through AF_PACKET, past iptables."""
    return int(L.run(L.client, ["cat", "/sys/class/net/v1a/statistics/tx_packets"]).stdout.strip() or -1)


NICE: list = []      # --nice N: every timed tool runs under `nice -n N` (the same for all)
LAST_CPU = [0.0]     # CPU s (user + sys) of the last timed() tool: what it costs an idle core


def timed(L: lab.Lab, argv, cap: float):
    L.run(L.client, ["ip", "-6" if ":" in L.target else "-4", "route", "flush", "cache"])
    before = tx_packets(L)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        res = L.run(L.client, [*NICE, *argv], timeout=cap)
        out, done = res.stdout, True
    except Exception as exc:          # subprocess.TimeoutExpired: the tool gave no answer in time
        out, done = (getattr(exc, "stdout", None) or b""), False
        out = out.decode() if isinstance(out, bytes) else out
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU[0] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return out, done, wall, tx_packets(L) - before


def run_mssdiag(L, cap, ports=True):
    argv = [MSSDIAG, "probe", "--json", L.target]
    if ports:
        argv += ["--port", ",".join(map(str, L.ports)), "--send", "GET / HTTP/1.0\\r\\n\\r\\n"]
    out, done, wall, pkts = timed(L, argv, cap)
    if not done or not out.strip():
        return dict(pmtu=None, verdict="timeout" if not done else "no output", ok=False, wall=wall, pkts=pkts)
    d = json.loads(out.splitlines()[0])
    e = L.expect
    ok = (d["pmtu"] == e["pmtu"] and d["black_hole"] == e["black_hole"] and d["pmtu_method"] == e["pmtu_method"])
    if ports:
        ok = ok and ({k: d["mss"][k] for k in ("sent", "synack", "used")} == e["mss"]
                     and {f["code"] for f in d["findings"]} == e["codes"])
    verdict = "black hole" if d["black_hole"] else (d["pmtu_method"] or "-")
    mss = "/".join(str(d["mss"].get(k)) for k in ("sent", "synack", "used"))
    return dict(pmtu=d["pmtu"], verdict=verdict, ok=ok, wall=wall, pkts=pkts, inner=d["elapsed_s"], mss=mss,
                codes=",".join(sorted({f["code"] for f in d["findings"]})))


def run_tracepath(L, cap):
    out, done, wall, pkts = timed(L, ["tracepath", "-n", L.target], cap)
    m = re.findall(r"Resume: pmtu (\d+)", out)
    pmtu = int(m[-1]) if m else None
    ok = done and pmtu == L.expect["pmtu"] and not L.expect["black_hole"]   # it cannot tell a black hole
    return dict(pmtu=pmtu, verdict="-" if done else f"killed at {cap:g} s", ok=ok, wall=wall, pkts=pkts)


def run_scamper(L, cap):
    out, done, wall, pkts = timed(L, ["scamper", "-O", "text", "-c", "trace -M", "-i", L.target], cap)
    m = re.findall(r"\[(\*?)mtu: (\d+)\]", out)
    pmtu = int(m[-1][1]) if m else None
    inferred = bool(m and m[-1][0] == "*")
    ok = done and pmtu == L.expect["pmtu"] and inferred == L.expect["black_hole"]
    verdict = ("black hole" if inferred else "-") if done else f"killed at {cap:g} s"
    return dict(pmtu=pmtu, verdict=verdict, ok=ok, wall=wall, pkts=pkts)


def run_pmtu_only(L, cap):
    return run_mssdiag(L, cap, ports=False)


# the prober without the CLI framework: interpreter, prober imports, raw sockets, probing
LIBRARY = ("import json, sys; from toolkit.probe import runner; "
           "[print(json.dumps(r.to_dict())) for r in runner.run(sys.argv[1:], runner.Options())]")


def run_library(L, cap):
    out, done, wall, pkts = timed(L, [sys.executable, "-c", LIBRARY, L.target], cap)
    if not done or not out.strip():
        return dict(pmtu=None, verdict="timeout" if not done else "no output", ok=False, wall=wall, pkts=pkts)
    d = json.loads(out.splitlines()[0])
    e = L.expect
    ok = d["pmtu"] == e["pmtu"] and d["black_hole"] == e["black_hole"] and d["pmtu_method"] == e["pmtu_method"]
    return dict(pmtu=d["pmtu"], verdict="black hole" if d["black_hole"] else (d["pmtu_method"] or "-"), ok=ok,
                wall=wall, pkts=pkts, inner=d["elapsed_s"])


def startup(L, runs: int):
    """Whole-process times that are not probing: the interpreter alone, and mssdiag's
    start-up (--version), in the same client namespace."""
    out = []
    for label, argv in (("python -c pass", [sys.executable, "-c", "pass"]),
                        ("mssdiag --version", [MSSDIAG, "--version"])):
        walls, cpus = [], []
        for _ in range(runs):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            L.run(L.client, [*NICE, *argv])
            walls.append(time.monotonic() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
        out.append((label, statistics.median(walls), statistics.median(cpus)))
    return out


ICMP_SYSCTLS = ("net.ipv4.icmp_ratelimit", "net.ipv4.icmp_ratemask", "net.ipv4.icmp_msgs_per_sec",
                "net.ipv4.icmp_msgs_burst", "net.ipv6.icmp.ratelimit")


def icmp_settings(L) -> str:
    res = L.run(L.routers[0], ["sysctl", *ICMP_SYSCTLS])
    return "; ".join(line.strip() for line in res.stdout.splitlines())


SETTINGS: dict = {}


def scale(name: str, sizes, runs: int, cap: float):
    """1, 16, 256, 1000 targets behind one lab path: time, exact answers, probes."""
    rows = []
    with lab.scenario(name) as L:
        addrs = L.add_addresses(max(sizes))
        e = L.expect
        SETTINGS[name] = icmp_settings(L)
        base = None
        for n in sizes:
            walls, owns, exact, probes = [], [], [], []
            for _ in range(runs):
                # the routers' 'time exceeded' budget (6, then 1 a second) refills between runs
                time.sleep(6)
                out, done, wall, _pkts = timed(L, [MSSDIAG, "probe", "--json", *addrs[:n]], cap)
                ds = [json.loads(x) for x in out.splitlines() if x.strip()] if done else []
                exact.append(sum(d["pmtu"] == e["pmtu"] and d["pmtu_method"] == e["pmtu_method"]
                                 and d["black_hole"] == e["black_hole"] and d["hop"] == e["hop"] for d in ds))
                walls.append(wall)
                owns.append(max((d["elapsed_s"] for d in ds), default=float("nan")))
                probes.append(sum(d["probes"] for d in ds))
            w = statistics.median(walls)
            base = base or w
            rows.append([name, n, f"{min(exact)}/{n}", f"{w:.2f}", f"{statistics.median(owns):.2f}",
                         f"{w / base:.2f}", int(statistics.median(probes))])
            print(" | ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    return rows


def expected_hops(L) -> list:
    """(ttl, address, mtu that reaches it) for every hop of a lab chain: router k answers
    from its address on link k (10.0.1.1 for the first, 10.0.k.2 after), the target last."""
    mtus = list(L.spec.mtus)
    v6 = L.spec.family == "ipv6"
    out = []
    for k in range(1, len(mtus) + 1):
        host = 1 if k == 1 else 2
        addr = (f"fd00:{k}::{host}" if v6 else f"10.0.{k}.{host}") if k < len(mtus) else L.target
        out.append((k, addr, min(mtus[:k])))
    if L.expect.get("black_hole"):       # the target is reached at the inferred PMTU, not beyond
        out[-1] = (out[-1][0], out[-1][1], L.expect["pmtu"])
    return out


def agreement(got: list, want: list) -> str:
    right = sum(1 for w in want if w in got)
    return f"{right}/{len(want)}"


def trace_mssdiag(L, cap):
    out, done, wall, pkts = timed(L, [MSSDIAG, "probe", "--json", "--trace", L.target], cap)
    if not done or not out.strip():
        return dict(hops=[], wall=wall, pkts=pkts, extra="timeout" if not done else "no output")
    d = json.loads(out.splitlines()[0])
    hops = [(h["ttl"], h["address"], h["mtu"]) for h in d["trace"]["hops"]]
    bh = d["trace"]["black_hole"]
    extra = f"black hole after {bh['after']} at {bh['size']}" if bh else ""
    c = d.get("clamp") or {}
    if c.get("to"):
        extra += f"{'; ' if extra else ''}MSS {c['sent']}->{c['to']} after {c['changed_after']}"
    return dict(hops=hops, wall=wall, pkts=pkts, extra=extra, inner=d["elapsed_s"])


def trace_scamper(L, cap):
    out, done, wall, pkts = timed(L, ["scamper", "-O", "text", "-c", "trace -M", "-i", L.target], cap)
    hops = [(int(t), a, int(m) if m else None) for t, a, star, m in
            re.findall(r"^\s*(\d+)\s+(\S+)\s+[\d.]+ ms(?: \[(\*?)mtu: (\d+)\])?", out, re.M)]
    inferred = [int(m) for m in re.findall(r"\[\*mtu: (\d+)\]", out)]
    return dict(hops=hops, wall=wall, pkts=pkts,
                extra=("inferred (black hole) " + ",".join(map(str, inferred))) if inferred else
                ("" if done else f"killed at {cap:g} s"))


def trace_tracepath(L, cap):
    out, done, wall, pkts = timed(L, ["tracepath", "-n", L.target], cap)
    current, hops, seen = None, [], set()
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\??:\s+(\S+)(.*)", line)
        if not m:
            continue
        ttl, addr, rest = int(m.group(1)), m.group(2), m.group(3)
        pm = re.search(r"pmtu (\d+)", rest)
        if addr == "[LOCALHOST]":
            current = int(pm.group(1)) if pm else current
            continue
        if pm:                          # this probe drew a 'too big': the next line is the hop
            current = int(pm.group(1))
            continue
        if addr == "no" or ttl in seen:
            continue
        seen.add(ttl)
        hops.append((ttl, addr, current))
    return dict(hops=hops, wall=wall, pkts=pkts, extra="" if done else f"killed at {cap:g} s")


def traces(names, runs: int, cap: float):
    tools = [("mssdiag probe --trace", trace_mssdiag), ("scamper trace -M", trace_scamper),
             ("tracepath", trace_tracepath)]
    rows = []
    for name in names:
        with lab.scenario(name) as L:
            want = expected_hops(L)
            for tool, fn in tools:
                rs = []
                for _ in range(runs):
                    time.sleep(6)       # the routers' 'time exceeded' budget refills
                    rs.append(fn(L, cap))
                r = rs[-1]
                rows.append([name, tool, " ".join(f"{m}" for _t, _a, m in want),
                             " ".join("*" if m is None else str(m) for _t, _a, m in r["hops"]),
                             min((agreement(x["hops"], want) for x in rs), key=lambda a: int(a.split("/")[0])),
                             f"{statistics.median(x['wall'] for x in rs):.2f}",
                             f"{statistics.median(x['inner'] for x in rs):.3f}" if all("inner" in x for x in rs)
                             else "", int(statistics.median(x["pkts"] for x in rs)), r["extra"]])
                print(" | ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    return rows


def repeat(name: str, n: int, cap: float, extra=()):
    """mssdiag n times back to back on one lab: the verdicts it gave and how often."""
    verdicts, walls, owns = collections.Counter(), [], []
    below = high_bh = exact = 0
    with lab.scenario(name) as L:
        e = L.expect
        for _ in range(n):
            out, done, wall, _pkts = timed(L, [MSSDIAG, "probe", "--json", L.target, *extra], cap)
            d = json.loads(out.splitlines()[0]) if done and out.strip() else {}
            pmtu = d.get("pmtu")
            verdicts[(pmtu, d.get("pmtu_method"), "black hole" if d.get("black_hole") else "-",
                      d.get("confidence"))] += 1
            exact += pmtu == e["pmtu"] and d.get("pmtu_method") == e["pmtu_method"] \
                and d.get("black_hole") == e["black_hole"]
            below += pmtu is not None and pmtu < e["pmtu"]
            high_bh += bool(d.get("black_hole")) and d.get("confidence") == "high"
            walls.append(wall)
            owns.append(d.get("elapsed_s", wall))
            print(f"{name}: {pmtu} {d.get('pmtu_method')} bh={d.get('black_hole')} {d.get('confidence')} "
                  f"{wall:.2f} s", file=sys.stderr, flush=True)
    rows = [[name + "".join(f" {x}" for x in extra), n, f"{e['pmtu']} {e['pmtu_method']}", f"{exact}/{n}", f"{below}/{n}", f"{high_bh}/{n}",
             f"{statistics.median(owns):.2f}", f"{max(owns):.2f}",
             "; ".join(f"{c}× {p} {m} {bh} {conf}" for (p, m, bh, conf), c in verdicts.most_common())]]
    return rows


def main() -> int:
    global MSSDIAG
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="*", default=SEVEN)
    ap.add_argument("--cap", type=float, default=120.0, help="longest a tool may run per scenario (s)")
    ap.add_argument("--repeat", type=int, metavar="N", help="only mssdiag, N runs per scenario, verdicts counted")
    ap.add_argument("--mssdiag", metavar="PATH", default=MSSDIAG, help="the mssdiag to run (default: this one)")
    ap.add_argument("--probe-args", metavar="ARGS", default="", help="with --repeat: extra probe options, "
                                                                     "e.g. '--icmp-wait 10'")
    ap.add_argument("--runs", type=int, default=3, help="runs per tool and scenario; medians are shown")
    ap.add_argument("--gap", type=float, default=6.0, help="s between runs (ICMP budgets refill)")
    ap.add_argument("--scale", action="store_true", help="1, 16, 256 and 1000 targets at once per scenario")
    ap.add_argument("--trace", action="store_true", help="per-hop trace beside scamper trace -M and tracepath")
    ap.add_argument("--nice", type=int, metavar="N", help="run every tool under `nice -n N` (e.g. -20 on a "
                                                           "machine shared with other jobs; root)")
    args = ap.parse_args()
    MSSDIAG = args.mssdiag
    if args.nice is not None:
        NICE[:] = ["nice", "-n", str(args.nice)]
    missing = lab.missing_tools()
    if missing:
        print(f"probe_bench: cannot build labs: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.trace:
        names = args.scenarios if args.scenarios != SEVEN else ["trace3", "clamp2", "blackhole", "multihop", "ipv6"]
        rows = traces(names, args.runs, args.cap)
        print(tabulate(rows, headers=["scenario", "tool", "per-hop MTU expected", "per-hop MTU given",
                                      "hops right (worst run)", "wall s", "own s", "pkts out", "notes"], tablefmt="github"))
        return 0
    if args.scale:
        rows = [r for name in args.scenarios for r in scale(name, (1, 16, 256, 1000), args.runs, args.cap)]
        print(tabulate(rows, headers=["scenario", "targets", "exact (worst run)", "wall s", "own s (slowest target)",
                                      "× one target", "probes"], tablefmt="github"))
        for name, settings in SETTINGS.items():
            print(f"{name}: the routers' ICMP settings (Linux defaults): {settings}")
        return 0
    if args.repeat:
        extra = args.probe_args.split()
        rows = [r for name in args.scenarios for r in repeat(name, args.repeat, args.cap, extra)]
        print(tabulate(rows, headers=["scenario", "runs", "expected", "exact", "pmtu below", "high-conf. BH",
                                      "median own s", "max own s", "verdicts (pmtu method black-hole confidence)"],
                       tablefmt="github"))
        return 0
    tools = [("mssdiag probe", run_pmtu_only), ("mssdiag probe --port", run_mssdiag),
             ("prober library, no CLI", run_library)]
    notes = []
    for name, fn, binary in (("tracepath", run_tracepath, "tracepath"), ("scamper trace -M", run_scamper, "scamper")):
        if shutil.which(binary):
            tools.append((name, fn))
        else:
            notes.append(f"{name}: not installed ({binary} not found; Debian package "
                         f"{'iputils-tracepath' if binary == 'tracepath' else 'scamper'}), left out")
    rows, starts = [], []
    for name in args.scenarios:
        with lab.scenario(name) as L:
            if not starts:
                starts = startup(L, max(3, args.runs))
            for tool, fn in tools:
                rs = []
                for _ in range(args.runs):
                    # the target's 'port unreachable' and the routers' 'time exceeded' are
                    # rate-limited per prober (6 at once, then 1 a second): let them refill,
                    # so no tool pays for the one before it
                    time.sleep(args.gap)
                    rs.append(fn(L, args.cap))
                    rs[-1]["cpu"] = LAST_CPU[0]
                r = rs[-1]
                wall = statistics.median(x["wall"] for x in rs)
                inner = statistics.median(x["inner"] for x in rs) if all("inner" in x for x in rs) else None
                pkts = int(statistics.median(x["pkts"] for x in rs))
                ok = sum(x["ok"] for x in rs)
                rows.append([name, tool, f"{L.expect['pmtu']}{' BH' if L.expect['black_hole'] else ''}",
                             r["pmtu"] if r["pmtu"] is not None else "-", r["verdict"],
                             "yes" if ok == len(rs) else f"{ok}/{len(rs)}", f"{wall:.2f}",
                             f"{statistics.median(x['cpu'] for x in rs):.3f}",
                             f"{inner:.3f}" if inner is not None else "", pkts, r.get("mss", ""),
                             r.get("codes", "")])
                print(" | ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    print(tabulate(rows, headers=["scenario", "tool", "expected", "pmtu", "verdict", "correct", "wall s", "cpu s",
                                  "own s", "pkts out", "mss sent/synack/used", "findings"], tablefmt="github"))
    for label, t, cpu in starts:
        print(f"start-up, same namespace, median: {label} {t:.3f} s wall, {cpu:.3f} s cpu")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}")
    for n in notes:
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
