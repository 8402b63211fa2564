"""Prober pieces that need no network: argument checks, CLI start-up, result round trip,
the RFC 1191 plateau table, and the packets the probes are made of."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli.probe import parse_ports
from toolkit.probe.packets import build, classify, parse_ip
from toolkit.probe.pmtu import plateau_below
from toolkit.probe.result import ProbeResult

ROOT = Path(__file__).resolve().parent.parent
MSSDIAG = str(Path(sys.executable).with_name("mssdiag"))


def test_parse_ports():
    assert parse_ports("21, 80,8000-8002,80") == [21, 80, 8000, 8001, 8002]
    assert parse_ports(None) == []
    for bad in ("x", "21,", "0", "70000", "5-3", "1-5000", "-1"):
        with pytest.raises(ValueError):
            parse_ports(bad)


def test_plateaus():
    assert plateau_below(1500) == 1492 and plateau_below(1492) == 1006 and plateau_below(600) == 508
    assert plateau_below(68) == 68


def test_result_round_trip():
    r = ProbeResult("h", address="10.0.0.1", pmtu=1400, pmtu_method="icmp")
    r.add_finding("pmtu-reduced", "x", "medium")
    r.mss_ports.append({"port": 21, "sent": 1460, "synack": 536, "used": 524})
    assert ProbeResult.from_dict(r.to_dict()) == r
    with pytest.raises(ValueError):
        r.add_finding("x", "y", "certain")


def test_probe_packets_are_exact_size_and_df():
    for fam, src, dst in (("ipv4", "10.0.0.1", "10.0.0.2"), ("ipv6", "fd00::1", "fd00::2")):
        for method in ("icmp", "udp", "tcp"):
            data = build(fam, method, src, dst, 1400, 7, 5, port=80)
            pkt = parse_ip(data)
            assert len(data) == 1400 and pkt.total == 1400 and pkt.ttl == 5
            if fam == "ipv4":
                assert data[6] & 0x40          # DF
    # an ICMP frag-needed quoting our echo probe names the target, the key and the MTU
    from scapy.layers.inet import ICMP, IP
    probe = build("ipv4", "icmp", "10.0.0.1", "10.0.0.2", 1500, 9)
    err = bytes(IP(src="10.0.9.1", dst="10.0.0.1") / ICMP(type=3, code=4, nexthopmtu=1400) / probe[:28])
    r = classify(parse_ip(err))
    assert (r.target, r.method, r.key, r.kind, r.mtu, r.source) == ("10.0.0.2", "icmp", 9, "toobig", 1400, "10.0.9.1")


@pytest.mark.parametrize("args,needle", [
    (["--port", "21,x"], "--port '21,x'"),
    (["--port", "0"], "outside 1-65535"),
    (["-4", "-6"], "choose one"),
    (["--rate", "0"], "--rate"),
])
def test_bad_arguments(args, needle):
    res = subprocess.run([MSSDIAG, "probe", "127.0.0.1", *args], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2
    assert needle in res.stderr and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr


def test_cli_start_does_not_import_scapy():
    code = "import sys, toolkit.cli; sys.exit(any(m.startswith('scapy') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], cwd=str(ROOT)).returncode == 0


