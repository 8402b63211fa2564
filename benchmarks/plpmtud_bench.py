"""Benchmark: what Linux's own fallback costs a new connection through a PMTU black hole.

A silent hole is built once with toolkit.lab (client – r1 – r2 – target, both ends at MTU
1500, the link between the routers 1400, r1 dropping its own ICMP "fragmentation needed": the
ends advertise MSS 1460 and nothing tells the client its 1500-byte packets die); in the client
namespace net.ipv4.tcp_mtu_probing is set to 0, 1 and 2 in turn, and each run opens a
new connection to the target and sends 64 KiB: the time from connect() until the target
confirms it read it all, and the client's TcpExtTCPMTUPFail / TCPMTUPSuccess / TCPTimeouts
from `nstat -az` before and after (what triage reads; toolkit/rules/pmtud.py states these
figures in its advice).

Run as root:  .venv/bin/python benchmarks/plpmtud_bench.py [--runs N] [--cap SECONDS]
Not a test: nothing here fails the suite on a slow machine.
"""
from __future__ import annotations

import argparse
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit import lab as labs  # noqa: E402

PORT = 5600
SERVER = """
import socket, sys
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0); s.bind(("::", int(sys.argv[1]))); s.listen(16)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(120)
    try:
        n = 0
        while True:
            d = c.recv(65536)
            if not d:
                break
            n += len(d)
        c.sendall(b"%d" % n)
    except OSError:
        pass
    c.close()
"""
CLIENT = """
import socket, sys, time
t0 = time.monotonic()
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[4]))
s.sendall(b"u" * int(sys.argv[3]))
s.shutdown(socket.SHUT_WR)
got = s.recv(64)
print("%.3f %s" % (time.monotonic() - t0, got.decode()), flush=True)
"""
COUNTERS = ("TcpExtTCPMTUPFail", "TcpExtTCPMTUPSuccess", "TcpExtTCPTimeouts")


def nstat(lab) -> dict:
    out = lab.run(lab.client, ["nstat", "-az"], check=True).stdout
    values = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in COUNTERS:
            values[parts[0]] = int(parts[1])
    return values


def one(lab, size: int, cap: float) -> float:
    lab.run(lab.client, ["ip", "route", "flush", "cache"])
    try:
        done = lab.run(lab.client, [sys.executable, "-c", CLIENT, lab.target4, str(PORT), str(size), str(cap)],
                       timeout=cap + 5)
    except subprocess.TimeoutExpired:
        return float("inf")
    words = done.stdout.split()
    if done.returncode != 0 or len(words) != 2 or words[1] != str(size):
        return float("inf")
    return float(words[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--cap", type=float, default=30.0, help="seconds a connection may take (default 30)")
    ap.add_argument("--size", type=int, default=65536)
    args = ap.parse_args()
    spec = labs.Spec("hole1400", "1500 - 1400 - 1500 through two routers; r1 drops its own frag-needed",
                     routers=2, mtus=(1500, 1400, 1500), rules_at={1: [labs.DROP_FRAG_NEEDED]})
    lab = labs.Lab(spec, f"{labs.PREFIX}{secrets.token_hex(3)}")
    try:
        lab.build()
        server = subprocess.Popen(["ip", "netns", "exec", lab.target_ns, sys.executable, "-c", SERVER, str(PORT)],
                                  stdout=subprocess.PIPE, text=True)
        try:
            server.stdout.readline()
            print(f"{'tcp_mtu_probing':>15}  {'runs':>4}  {'finished':>8}  {'min s':>7}  {'median s':>8}  "
                  f"{'max s':>7}  {'MTUPFail':>8}  {'MTUPSuccess':>11}  {'Timeouts':>8}")
            for mode in ("0", "1", "2"):
                lab.run(lab.client, ["sysctl", "-qw", f"net.ipv4.tcp_mtu_probing={mode}"], check=True)
                before = nstat(lab)
                runs = [one(lab, args.size, args.cap) for _ in range(args.runs if mode != "0" else 1)]
                after = nstat(lab)
                done = [t for t in runs if t != float("inf")]
                grew = {k: after.get(k, 0) - before.get(k, 0) for k in COUNTERS}
                fmt = (lambda v: f"{v:.2f}") if done else (lambda v: "-")
                print(f"{mode:>15}  {len(runs):>4}  {len(done):>8}  {fmt(min(done) if done else 0):>7}  "
                      f"{fmt(statistics.median(done) if done else 0):>8}  {fmt(max(done) if done else 0):>7}  "
                      f"{grew['TcpExtTCPMTUPFail']:>8}  {grew['TcpExtTCPMTUPSuccess']:>11}  "
                      f"{grew['TcpExtTCPTimeouts']:>8}"
                      + ("" if done else f"   (no connection finished in {args.cap:g} s)"))
        finally:
            server.kill()
            server.wait()
    finally:
        lab.close()


if __name__ == "__main__":
    t0 = time.monotonic()
    main()
    print(f"(total {time.monotonic() - t0:.0f} s)")
