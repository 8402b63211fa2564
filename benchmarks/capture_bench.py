"""`mssdiag capture` beside tshark and tcptrace: a >= 1 GiB pcap of one long connection, and
a pcap of 1,000,000 SYNs (a million connections: memory per connection).

Case `stream`: the lab's upload connection (fixtures/captures/lab/
bottleneck_client_upload_offloads_off.pcap: handshake, full-size segments, ICMP
fragmentation-needed, smaller segments, ACKs) with each frame restored to its wire
length (the fixture was taken with snaplen 128) and its data and ACK segments repeated
with advancing sequence numbers until the file passes --size. It is written to /tmp
and removed afterwards (--keep to keep it); it is never committed.

Case `syns`: 1,000,000 SYNs from distinct source addresses and ports, each with an MSS
option (74 MB); every one is a connection. mssdiag must stay within 500 MiB peak RSS for
the table and for --json.

    .venv/bin/python benchmarks/capture_bench.py            # both cases, each tool 3 runs, medians
    .venv/bin/python benchmarks/capture_bench.py --case stream --size 256 --runs 1
    .venv/bin/python benchmarks/capture_bench.py --case syns --syns 1000000 --runs 1 --json

Each tool runs as its own process, the tools taking turns run after run; seconds are wall
time (median, and the spread of the runs), CPU seconds the child's user + system time, which
a machine shared with other work inflates far less than the wall time; peak RSS is the
child's ru_maxrss; the load average before and after each run is printed with the table.
--json prints the figures as one JSON object after the tables. tcptrace is left out of the
SYN case: it keeps about 8 KB a connection (834 MiB for 100,000 SYNs).
"""
from __future__ import annotations

import argparse
import json
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
MSSDIAG = str(Path(PYTHON).parent / "mssdiag")


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


def build_syns(out: Path, count: int) -> int:
    """`count` SYNs, each its own connection (distinct source address and port)."""
    eth = bytes.fromhex("020000000002020000000001") + b"\x08\x00"
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(count):
            src = bytes((10, 1 + (i >> 16) % 200, (i >> 8) & 255, i & 255))
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 44, i & 0xFFFF, 0x4000, 64, 6, 0, src, bytes((10, 250, 0, 5)))
            ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
            tcp = struct.pack("!HHIIBBHHH", 1024 + i % 60000, 80, (i * 7919) & 0xFFFFFFFF, 0, 6 << 4, 2, 65535, 0,
                              0) + b"\x02\x04\x05\xb4"
            frame = eth + ip + tcp
            f.write(struct.pack("<IIII", 1700000000 + i // 1000, (i % 1000) * 1000, len(frame), len(frame)) + frame)
    return count


def _checksum(header: bytes) -> int:
    s = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def run(argv, stdout=subprocess.DEVNULL):
    """(wall seconds, CPU seconds, peak RSS MiB, exit code, stderr) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE)
    if stdout == subprocess.PIPE:
        for _ in iter(lambda: proc.stdout.read(1 << 20), b""):
            pass
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), err


LIB = ("import sys\nfrom toolkit import capture\nr = capture.analyze([sys.argv[1]])\n"
       "print(len(r.flows), r.flows[0]['client_to_server']['max_payload'])")


def measure(tools, runs: int, packets: int, mib: float):
    """Each tool `runs` times, the tools taking turns (a load that comes and goes falls on all of
    them alike); medians of wall and CPU seconds, the spread of the wall seconds."""
    got = {label: [] for label, _, _ in tools}
    loads = [os.getloadavg()[0]]
    for _ in range(runs):
        for label, argv, out in tools:
            s, cpu, r, code, err = run(argv, out)
            if code != 0:
                print(f"{label}: exit {code}: {err.strip()[-300:]}", file=sys.stderr)
            got[label].append((s, cpu, r))
            loads.append(os.getloadavg()[0])
    rows, medians = [], []
    for label, _, _ in tools:
        secs = [g[0] for g in got[label]]
        s, cpu = statistics.median(secs), statistics.median(g[1] for g in got[label])
        medians.append((label, s, cpu))
        rows.append([label, round(mib, 1), round(s, 1), f"{min(secs):.1f}-{max(secs):.1f}", round(cpu, 1),
                     round(packets / s), round(mib / s, 1), round(max(g[2] for g in got[label]), 1)])
    base = next((m for m in medians if m[0].startswith("tshark")), None)
    for r, (_, s, cpu) in zip(rows, medians):
        r.append(round(base[1] / s, 1) if base else None)
        r.append(round(base[2] / cpu, 1) if base and cpu else None)
    return rows, (round(min(loads), 1), round(max(loads), 1))


HEADERS = ["tool", "MiB", "seconds", "spread", "CPU seconds", "packets/s", "MiB/s", "peak RSS MiB", "x tshark",
           "x tshark CPU"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=("stream", "syns", "all"), default="all")
    ap.add_argument("--size", type=int, default=1024, help="MiB of the stream case (default 1024)")
    ap.add_argument("--syns", type=int, default=1_000_000, help="SYNs of the syns case (default 1,000,000)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--mssdiag", default=MSSDIAG,
                    help="the mssdiag to time (another checkout's, to compare; default this virtualenv's, "
                    "whose library is then timed too)")
    ap.add_argument("--no-peers", action="store_true", help="time mssdiag only (not tshark, tcptrace)")
    args = ap.parse_args()
    mssdiag = args.mssdiag
    report = {"python": platform.python_version(), "cores": os.cpu_count(), "runs": args.runs, "cases": {}}
    if args.case in ("stream", "all"):
        path = Path(args.dir) / "mssdiag-capture-bench.pcap"
        t = time.perf_counter()
        packets = build(path, args.size * 2 ** 20)
        mib = path.stat().st_size / 2 ** 20
        print(f"built {path}: {mib:.0f} MiB, {packets} packets in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        tools = [("mssdiag capture --json -q", [mssdiag, "capture", "--json", "-q", str(path)], subprocess.PIPE)]
        if mssdiag == MSSDIAG:
            tools.append(("toolkit.capture.analyze (library)", [PYTHON, "-c", LIB, str(path)], subprocess.PIPE))
        if shutil.which("tshark") and not args.no_peers:
            tools.append(("tshark -T fields mss_val,tcp.len", ["tshark", "-r", str(path), "-T", "fields", "-e",
                                                               "tcp.options.mss_val", "-e", "tcp.len"], subprocess.PIPE))
        if shutil.which("tcptrace") and not args.no_peers:
            tools.append(("tcptrace -l", ["tcptrace", "-l", "-n", str(path)], subprocess.PIPE))
        rows, load = measure(tools, args.runs, packets, mib)
        print(f"one connection, {packets} packets ({mib:.0f} MiB), reassembly on; load average {load[0]}-{load[1]}:")
        print(tabulate(rows, headers=HEADERS))
        report["cases"]["stream"] = {"packets": packets, "mib": round(mib, 1), "load_average": load,
                                     "tools": [dict(zip(HEADERS, r)) for r in rows]}
        if not args.keep:
            path.unlink()
    if args.case in ("syns", "all"):
        path = Path(args.dir) / "mssdiag-capture-syns.pcap"
        packets = build_syns(path, args.syns)
        mib = path.stat().st_size / 2 ** 20
        tools = [("mssdiag capture -q (table)", [mssdiag, "capture", "-q", str(path)], subprocess.PIPE),
                 ("mssdiag capture --json -q", [mssdiag, "capture", "--json", "-q", str(path)], subprocess.PIPE)]
        if shutil.which("tshark") and not args.no_peers:
            tools.append(("tshark -T fields mss_val,tcp.len", ["tshark", "-r", str(path), "-T", "fields", "-e",
                                                               "tcp.options.mss_val", "-e", "tcp.len"], subprocess.PIPE))
        rows, load = measure(tools, args.runs, packets, mib)
        print(f"{packets} SYNs, each a connection ({mib:.0f} MiB); mssdiag's limit: 500 MiB peak RSS; "
              f"load average {load[0]}-{load[1]}")
        print(tabulate(rows, headers=HEADERS))
        within = all(r[HEADERS.index("peak RSS MiB")] <= 500 for r in rows if r[0].startswith("mssdiag"))
        print("mssdiag peak RSS within 500 MiB: " + ("yes" if within else "NO"))
        report["cases"]["syns"] = {"packets": packets, "mib": round(mib, 1), "within_500_mib": within,
                                   "load_average": load, "tools": [dict(zip(HEADERS, r)) for r in rows]}
        if not args.keep:
            path.unlink()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores; median of {args.runs} run(s); "
          "one process per tool")
    if args.json:
        print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
