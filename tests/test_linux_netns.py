"""Real fragmentation across a namespace router, read back through `mssdiag diff`.

    sender --(MTU 1500)-- router --(MTU 1000)-- receiver

The sender sends N UDP datagrams with DF off (IP_PMTUDISC_DONT). Datagrams larger than
1500 are fragmented by the sender, and every packet larger than 1000 again by the router;
the receiver reassembles. Its `netstat -s`, /proc/net/snmp and `nstat -asz` taken before
and after, diffed by the CLI, must grow by exactly what was sent:
ReasmReqds by N x fragments per datagram, ReasmOKs by N, ReasmFails by 0. The router's
and the sender's FragOKs / FragCreates must match the same arithmetic. An IPv6 pair of
namespaces (MTU 1280; only the source fragments IPv6) checks the same through `netstat -s -6`,
/proc/net/snmp6 and nstat, and that none of it lands in ipv4.

MSSDIAG_KEEP_DUMPS=DIR copies the captured dumps there (how the fixtures were made).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

from netns import Netns, unavailable

ROOT = Path(__file__).resolve().parent.parent
REASON = unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"real-network test: {REASON}")

IP_HEADER, UDP_HEADER = 20, 8
MTU_IN, MTU_OUT = 1500, 1000
PORT = 40999

SENDER = """
import socket, sys, time
dst, port, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_MTU_DISCOVER = IP_PMTUDISC_DONT: DF off
for _ in range(count):
    s.sendto(bytes(size), (dst, port))
    time.sleep(0.002)
"""

RECEIVER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
s.settimeout(float(sys.argv[4]))
print("ready", flush=True)
got, want = [], int(sys.argv[3])
try:
    while len(got) < want:
        got.append(len(s.recv(65535)))
except socket.timeout:
    pass
print(" ".join(map(str, got)), flush=True)
"""


def fragments(payload: int, mtu: int) -> List[int]:
    """IP payload sizes of the fragments Linux makes of `payload` bytes on a link of `mtu`."""
    room = mtu - IP_HEADER
    if payload <= room:
        return [payload]
    step = room // 8 * 8
    return [min(step, payload - offset) for offset in range(0, payload, step)]


def expected(count: int, size: int) -> Dict[str, Dict[str, int]]:
    first = fragments(size + UDP_HEADER, MTU_IN)                 # at the sender
    second = [fragments(p, MTU_OUT) for p in first]               # at the router
    return {
        "sender": {"FragOKs": count if len(first) > 1 else 0,
                   "FragCreates": count * len(first) if len(first) > 1 else 0},
        "router": {"FragOKs": count * sum(1 for parts in second if len(parts) > 1),
                   "FragCreates": count * sum(len(parts) for parts in second if len(parts) > 1)},
        "receiver": {"ReasmReqds": count * sum(len(parts) for parts in second),
                     "ReasmOKs": count, "ReasmFails": 0, "ReasmTimeout": 0},
    }


def test_fragment_arithmetic():
    assert fragments(1408, 1000) == [976, 432]
    assert fragments(3008, 1500) == [1480, 1480, 48]
    assert expected(10, 1400)["receiver"]["ReasmReqds"] == 20
    assert expected(10, 3000) == {
        "sender": {"FragOKs": 10, "FragCreates": 30},
        "router": {"FragOKs": 20, "FragCreates": 40},
        "receiver": {"ReasmReqds": 50, "ReasmOKs": 10, "ReasmFails": 0, "ReasmTimeout": 0},
    }
    assert math.ceil((3000 + 8) / 1480) == len(fragments(3008, 1500))


@pytest.fixture
def lab():
    net = Netns("frag")
    try:
        snd, rtr, rcv = net.ns("snd"), net.ns("rtr", forwarding=True), net.ns("rcv")
        s_end, r_in = net.link(snd, rtr, MTU_IN)
        r_out, v_end = net.link(rtr, rcv, MTU_OUT)
        net.addr(snd, s_end, "10.201.1.1/24")
        net.addr(rtr, r_in, "10.201.1.254/24")
        net.addr(rtr, r_out, "10.201.2.254/24")
        net.addr(rcv, v_end, "10.201.2.1/24")
        net.route(snd, "10.201.2.0/24", "10.201.1.254")
        net.route(rcv, "10.201.1.0/24", "10.201.2.254")
        yield net, {"sender": snd, "router": rtr, "receiver": rcv}
    finally:
        net.close()


def capture(net: Netns, ns: str, folder: Path, stem: str) -> None:
    env = dict(os.environ, NSTAT_HISTORY=str(folder / f".nstat-{ns}"))
    commands = {
        "netstat": ["netstat", "-s"],
        "snmp": ["cat", "/proc/net/snmp"],
        "nstat": ["nstat", "-asz"],     # absolute, no history update, zeros shown
        "snmp6": ["cat", "/proc/net/snmp6"],
    }
    for kind, argv in commands.items():
        if shutil.which(argv[0]) is None:
            continue
        done = net.run(ns, argv, check=True, env=env)
        (folder / f"{stem}-{kind}.txt").write_text(done.stdout)


def mssdiag_diff(before: Path, after: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "toolkit", "diff", "--json", str(before), str(after)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert len(rows) == 1, rows
    return rows[0]


@pytest.mark.parametrize("count,size", [(40, 1400), (25, 3000)], ids=["router-fragments", "sender-and-router"])
def test_reassembly_counters_grow_by_what_was_sent(lab, tmp_path, count, size):
    if shutil.which("netstat") is None:
        pytest.skip("net-tools `netstat` not installed (make system-deps)")
    net, ns = lab
    listener = net.popen(ns["receiver"], [sys.executable, "-c", RECEIVER, "10.201.2.1", str(PORT), str(count + 1), "5"])
    try:
        assert listener.stdout.readline().strip() == "ready"
        # One small datagram first resolves ARP on both links, so none of the counted ones wait.
        net.run(ns["sender"], [sys.executable, "-c", SENDER, "10.201.2.1", str(PORT), "1", "64"], check=True)
        time.sleep(0.3)
        for role, name in ns.items():
            capture(net, name, tmp_path, f"{role}-before")
        net.run(ns["sender"], [sys.executable, "-c", SENDER, "10.201.2.1", str(PORT), str(count), str(size)], check=True)
        received = listener.communicate(timeout=15)[0].split()
    finally:
        if listener.poll() is None:
            listener.kill()
            listener.wait()
    assert received[1:] == [str(size)] * count, "the receiving socket did not get every datagram whole"
    for role, name in ns.items():
        capture(net, name, tmp_path, f"{role}-after")

    keep = os.environ.get("MSSDIAG_KEEP_DUMPS")
    if keep:
        target = Path(keep) / f"{count}x{size}"
        shutil.copytree(tmp_path, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".nstat-*"))

    want = expected(count, size)
    for role, counters in want.items():
        for kind in ("netstat", "snmp", "nstat"):
            delta = mssdiag_diff(tmp_path / f"{role}-before-{kind}.txt", tmp_path / f"{role}-after-{kind}.txt")
            assert delta["os"] == "linux"
            assert delta["events"] == []
            got = {name: delta["ipv4"][name] for name in counters}
            assert got == counters, f"{role} {kind}: {got} != {counters}"


SENDER6 = """
import socket, sys, time
dst, port, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for _ in range(count):
    s.sendto(bytes(size), (dst, port))
    time.sleep(0.002)
"""


def fragments6(payload: int, mtu: int) -> int:
    """How many fragments Linux makes of an IPv6 payload: 40-byte header plus an 8-byte fragment header."""
    if payload + 40 <= mtu:
        return 1
    step = (mtu - 40 - 8) // 8 * 8
    return math.ceil(payload / step)


def test_ipv6_reassembly_counters_go_to_ipv6(tmp_path):
    if shutil.which("netstat") is None:
        pytest.skip("net-tools `netstat` not installed (make system-deps)")
    count, size, mtu = 20, 3000, 1280       # IPv6 needs at least 1280
    per = fragments6(size + UDP_HEADER, mtu)
    assert per == 3
    with Netns("frag6") as net:
        snd, rcv = net.ns("snd6"), net.ns("rcv6")
        a, b = net.link(snd, rcv, mtu)
        net.addr(snd, a, "fd00:201:6::1/64")
        net.addr(rcv, b, "fd00:201:6::2/64")
        listener = net.popen(rcv, [sys.executable, "-c", RECEIVER.replace("AF_INET", "AF_INET6"),
                                   "fd00:201:6::2", str(PORT), str(count + 1), "5"])
        try:
            assert listener.stdout.readline().strip() == "ready"
            net.run(snd, [sys.executable, "-c", SENDER6, "fd00:201:6::2", str(PORT), "1", "64"], check=True)
            time.sleep(0.3)
            for role, name in (("sender", snd), ("receiver", rcv)):
                capture(net, name, tmp_path, f"{role}-before")
                (tmp_path / f"{role}-before-netstat6.txt").write_text(net.run(name, ["netstat", "-s", "-6"], check=True).stdout)
            net.run(snd, [sys.executable, "-c", SENDER6, "fd00:201:6::2", str(PORT), str(count), str(size)], check=True)
            received = listener.communicate(timeout=15)[0].split()
        finally:
            if listener.poll() is None:
                listener.kill()
                listener.wait()
        assert received[1:] == [str(size)] * count
        for role, name in (("sender", snd), ("receiver", rcv)):
            capture(net, name, tmp_path, f"{role}-after")
            (tmp_path / f"{role}-after-netstat6.txt").write_text(net.run(name, ["netstat", "-s", "-6"], check=True).stdout)

    keep = os.environ.get("MSSDIAG_KEEP_DUMPS")
    if keep:
        shutil.copytree(tmp_path, Path(keep) / f"ipv6-{count}x{size}", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".nstat-*"))

    want = {"sender": {"FragOKs": count, "FragCreates": count * per},
            "receiver": {"ReasmReqds": count * per, "ReasmOKs": count, "ReasmFails": 0}}
    for role, counters in want.items():
        for kind in ("netstat6", "snmp6", "nstat"):
            delta = mssdiag_diff(tmp_path / f"{role}-before-{kind}.txt", tmp_path / f"{role}-after-{kind}.txt")
            assert delta["os"] == "linux" and delta["events"] == []
            got = {name: delta["ipv6"][name] for name in counters}
            assert got == counters, f"{role} {kind}: {got} != {counters}"
            if kind != "nstat":
                assert delta["ipv4"] is None, f"{kind} must not report IPv6 counters as IPv4"
