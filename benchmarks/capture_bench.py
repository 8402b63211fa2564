"""`mssdiag capture` beside tshark and tcptrace on a >= 1 GiB pcap built from lab traffic.

The input is the lab's upload connection (fixtures/captures/lab/
bottleneck_client_upload_offloads_off.pcap: handshake, full-size segments, ICMP
fragmentation-needed, smaller segments, ACKs) with each frame restored to its wire
length (the fixture was taken with snaplen 128) and its data and ACK segments repeated
with advancing sequence numbers until the file passes --size. It is written to /tmp
and removed afterwards (--keep to keep it); it is never committed.

    .venv/bin/python benchmarks/capture_bench.py            # 1 GiB, each tool 3 runs, medians
    .venv/bin/python benchmarks/capture_bench.py --size 256 --runs 1

Each tool runs as its own process; peak RSS is the child's ru_maxrss.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "fixtures" / "captures" / "lab" / "bottleneck_client_upload_offloads_off.pcap"
PYTHON = sys.executable


def frames(path: Path):
    data = path.read_bytes()
    off = 24
    while off + 16 <= len(data):
        sec, usec, incl, orig = struct.unpack_from("<IIII", data, off)
        yield sec + usec / 1e6, data[off + 16:off + 16 + incl] + b"\x00" * (orig - incl)
        off += 16 + incl


def build(out: Path, size: int) -> int:
    """Write the lab connection stretched to `size` bytes; returns the packet count."""
    fr = list(frames(SRC))
    head = fr[:3]                       # SYN, SYN-ACK, ACK
    body = [f for f in fr[3:] if len(f[1]) >= 54 and f[1][23] == 6]   # TCP only (the ICMP comes once)
    icmp = [f for f in fr[3:] if f not in body]
    client = body[0][1][26:30]
    span = 0
    for _, b in body:
        if b[26:30] == client:
            ihl = (b[14] & 15) * 4
            tl = struct.unpack_from("!H", b, 16)[0]
            doff = (b[14 + ihl + 12] >> 4) * 4
            span += tl - ihl - doff
    n = 0
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        t0 = head[0][0]

        def put(ts, b):
            nonlocal n
            sec = int(ts)
            f.write(struct.pack("<IIII", sec, int((ts - sec) * 1e6), len(b), len(b)) + b)
            n += 1
        for ts, b in head + icmp:
            put(ts, b)
        rep, written, shift_t = 0, 0, 0.0
        while f.tell() < size:
            adv = (rep * span) & 0xFFFFFFFF
            for ts, b in body:
                b = bytearray(b)
                ihl = (b[14] & 15) * 4
                t = 14 + ihl
                if b[26:30] == client:       # client data: seq moves on
                    seq = struct.unpack_from("!I", b, t + 4)[0]
                    struct.pack_into("!I", b, t + 4, (seq + adv) & 0xFFFFFFFF)
                else:                        # server ACKs: ack moves on
                    ack = struct.unpack_from("!I", b, t + 8)[0]
                    struct.pack_into("!I", b, t + 8, (ack + adv) & 0xFFFFFFFF)
                put(ts - t0 + shift_t + t0, bytes(b))
            rep += 1
            shift_t += 0.05
    return n


def run(argv, stdout=subprocess.DEVNULL):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE)
    if stdout == subprocess.PIPE:
        for _ in iter(lambda: proc.stdout.read(1 << 20), b""):
            pass
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    return seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), err


LIB = ("import sys\nfrom toolkit import capture\nr = capture.analyze([sys.argv[1]])\n"
       "print(len(r.flows), r.flows[0]['client_to_server']['max_payload'])")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1024, help="MiB (default 1024)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--dir", default="/tmp")
    args = ap.parse_args()
    path = Path(args.dir) / "mssdiag-capture-bench.pcap"
    t = time.perf_counter()
    packets = build(path, args.size * 2 ** 20)
    mib = path.stat().st_size / 2 ** 20
    print(f"built {path}: {mib:.0f} MiB, {packets} packets in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    mssdiag = str(Path(PYTHON).parent / "mssdiag")
    tools = [("mssdiag capture --json -q", [mssdiag, "capture", "--json", "-q", str(path)], subprocess.PIPE),
             ("toolkit.capture.analyze (library)", [PYTHON, "-c", LIB, str(path)], subprocess.PIPE)]
    if shutil.which("tshark"):
        tools.append(("tshark -T fields mss_val,tcp.len", ["tshark", "-r", str(path), "-T", "fields", "-e",
                                                           "tcp.options.mss_val", "-e", "tcp.len"], subprocess.PIPE))
    if shutil.which("tcptrace"):
        tools.append(("tcptrace -l", ["tcptrace", "-l", "-n", str(path)], subprocess.PIPE))
    rows = []
    for label, argv, out in tools:
        secs, rss = [], []
        for _ in range(args.runs):
            s, r, code, err = run(argv, out)
            if code != 0:
                print(f"{label}: exit {code}: {err.strip()[-300:]}", file=sys.stderr)
            secs.append(s)
            rss.append(r)
        s = statistics.median(secs)
        rows.append([label, round(mib, 1), round(s, 1), round(packets / s), round(mib / s, 1), round(max(rss), 1)])
    base = next((r[2] for r in rows if r[0].startswith("tshark")), None)
    for r in rows:
        r.append(round(base / r[2], 1) if base else None)
    print(tabulate(rows, headers=["tool", "MiB", "seconds", "packets/s", "MiB/s", "peak RSS MiB", "x tshark"]))
    print(f"python {platform.python_version()}, {os.cpu_count()} cores; {packets} packets; "
          f"median of {args.runs} run(s); one process per tool")
    if not args.keep:
        path.unlink()


if __name__ == "__main__":
    main()
