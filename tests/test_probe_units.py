"""Prober pieces that need no network: argument checks, CLI start-up, result round trip,
the RFC 1191 plateau table, and the packets the probes are made of."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli.options import parse_ports
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
    with pytest.raises(ValueError, match=r"'80-20' runs backwards \(did you mean 20-80\?\)"):
        parse_ports("80-20")


def test_plateaus():
    assert plateau_below(1500) == 1492 and plateau_below(1492) == 1006 and plateau_below(600) == 508
    assert plateau_below(68) == 68


def test_result_round_trip():
    r = ProbeResult("h", address="10.0.0.1", pmtu=1400, pmtu_method="icmp")
    r.add_finding("pmtu-reduced", "x", "medium")
    r.mss_ports.append({"port": 21, "sent": 1460, "synack": 536, "used": 524})
    assert ProbeResult.from_dict(r.to_dict()) == r
    assert ProbeResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    with pytest.raises(ValueError):
        r.add_finding("x", "y", "certain")


GOOD = {"target": "web1", "address": "10.0.0.1", "family": "ipv4", "pmtu": 1400, "pmtu_method": "icmp",
        "black_hole": False, "hop": "10.0.0.254", "probes": 9, "elapsed_s": 0.4,
        "mss": {"port": 23, "sent": 1460, "synack": 536, "used": 524},
        "mss_ports": [{"port": 23, "sent": 1460, "synack": 536, "used": 524, "bytes": 6000}],
        "findings": [{"code": "pmtu-reduced", "text": "t", "confidence": "high"}],
        "skipped": [], "errors": [], "local_mtu": 1500, "probe_method": "icmp", "confidence": "high",
        "cached_pmtu": None, "rounds": 1, "notes": []}
NAN, INF = float("nan"), float("inf")


WRONG = [
    ("black_hole", "false", "must be true or false, not the string 'false'"),
    ("black_hole", 0, "must be true or false, not 0"),
    ("black_hole", None, "must be true or false, not null"),
    ("pmtu", True, "must be an integer or null, not true"),
    ("pmtu", -1, "-1 is outside 68..65535"),
    ("pmtu", NAN, "must be an integer or null, not NaN"),
    ("pmtu", INF, "must be an integer or null, not Infinity"),
    ("pmtu", 1400.0, "must be an integer or null, not 1400.0"),
    ("pmtu", "1400", "must be an integer or null, not the string '1400'"),
    ("pmtu", 2 ** 64 + 1, "18446744073709551617 is outside 68..65535"),
    ("pmtu", 10 ** 5000, "a 16610-bit number is outside 68..65535"),
    ("probes", 2 ** 64 + 1, "18446744073709551617 is outside 0..18446744073709551616"),
    ("probes", -3, "-3 is outside"),
    ("elapsed_s", NAN, "NaN is not a finite number"),
    ("elapsed_s", -INF, "-Infinity is not a finite number"),
    ("elapsed_s", True, "must be a number, not true"),
    ("elapsed_s", -0.5, "-0.5 is outside"),
    ("target", 42, "must be a string, not 42"),
    ("target", "", "empty"),
    ("address", "not-an-ip", "the string 'not-an-ip' is not an IP address"),
    ("address", ["10.0.0.1"], "must be a string, not a list"),
    ("family", "ipv5", "the string 'ipv5' is not one of ipv4, ipv6"),
    ("family", "ipv6", "'ipv6' but address 10.0.0.1 is ipv4"),
    ("pmtu_method", "guess", "is not one of icmp, inferred, local"),
    ("hop", 7, "must be a string or null, not 7"),
    ("mss", [], "must be an object, not a list"),
    ("mss", {"sent": NAN}, "mss.sent: must be an integer or null, not NaN"),
    ("mss", {"used": "524"}, "mss.used: must be an integer or null"),
    ("mss_ports", {"port": 23}, "must be a list, not an object"),
    ("mss_ports", [{"port": 0}], "mss_ports[0].port: 0 is outside 1..65535"),
    ("mss_ports", [{"bytes": INF}], "mss_ports[0].bytes: must be an integer or null, not Infinity"),
    ("findings", [{"code": "x", "text": "y"}], "findings[0].confidence: missing"),
    ("findings", [{"code": "x", "text": "y", "confidence": "certain"}], "is not one of high, medium, low"),
    ("findings", ["pmtu-reduced"], "findings[0]: must be an object, not the string 'pmtu-reduced'"),
    ("skipped", "all", "must be a list, not the string 'all'"),
    ("errors", [None], "errors[0]: must be a string, not null"),
    ("notes", [1.5], "notes[0]: must be a string, not 1.5"),
    ("local_mtu", 65536, "65536 is outside 68..65535"),
    ("probe_method", "carrier pigeon", "is not one of icmp, udp, tcp, socket"),
    ("confidence", True, "must be a string or null, not true"),
    ("cached_pmtu", 12, "12 is outside 68..65535"),
    ("rounds", 1.5, "must be an integer, not 1.5"),
]


@pytest.mark.parametrize("field,value,reason", WRONG, ids=[f"{f}-{i}" for i, (f, _v, _r) in enumerate(WRONG)])
def test_saved_result_is_checked_field_by_field(field, value, reason):
    """A saved probe is input from outside. Every field with a wrong type, NaN,
    Infinity, a negative, huge or bool-for-int value is refused, naming field and reason."""
    with pytest.raises(ValueError) as exc:
        ProbeResult.from_dict({**GOOD, field: value})
    assert str(exc.value).startswith(field) and reason in str(exc.value), str(exc.value)


def test_saved_result_shape():
    assert ProbeResult.from_dict(GOOD).black_hole is False
    for bad, reason in (({}, "target: missing"), ([GOOD], "must be a JSON object, not a list"),
                        ("x", "must be a JSON object")):
        with pytest.raises(ValueError, match=reason):
            ProbeResult.from_dict(bad)
    # unknown fields (a newer mssdiag) are dropped, so nothing unchecked is carried on
    r = ProbeResult.from_dict({**GOOD, "future": NAN, "mss": {**GOOD["mss"], "later": INF}})
    assert "future" not in r.to_dict() and "later" not in r.mss
    json.dumps(r.to_dict(), allow_nan=False)
    # null where the schema allows it
    r = ProbeResult.from_dict({"target": "h", "pmtu": None, "hop": None, "mss": None})
    assert r.mss == {"port": None, "sent": None, "synack": None, "used": None} and r.pmtu is None


def test_triage_refuses_a_saved_probe_with_nan(tmp_path):
    """The triage JSON stays valid JSON: a probe file with NaN is refused in one line."""
    case = tmp_path / "case"
    case.mkdir()
    (case / "probe.json").write_text(json.dumps({**GOOD, "pmtu": NAN}))
    (case / "probe2.json").write_text(json.dumps({**GOOD, "target": "web2", "black_hole": "false"}))
    res = subprocess.run([MSSDIAG, "triage", str(case), "--json"], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in res.stderr and res.returncode != 0
    lines = res.stderr.splitlines()
    assert any("probe.json" in x and "pmtu" in x and "NaN" in x for x in lines), res.stderr
    assert any("probe2.json" in x and "black_hole" in x for x in lines), res.stderr
    if res.stdout.strip():
        json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"{c} in triage JSON"))


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


def test_group_without_subcommand_prints_help_and_exits_0():
    """docs/cli.md: a command group without its subcommand (mssdiag, lab) prints its help."""
    for argv in ([MSSDIAG], [MSSDIAG, "lab"]):
        res = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        assert res.returncode == 0 and "Usage" in res.stdout and res.stderr == "", (argv, res.stderr)


def test_lab_hint_names_this_mssdiag():
    """`lab up` tells how to run this very mssdiag as root: a .venv is not on root's PATH."""
    code = ("import sys; sys.argv = [sys.argv[1]]; from toolkit.cli.lab import self_command; "
            "print(self_command())")
    out = subprocess.run([sys.executable, "-c", code, "mssdiag"], capture_output=True, text=True,
                         cwd=str(ROOT), env={"PATH": str(Path(MSSDIAG).parent)}).stdout.strip()
    assert out == MSSDIAG
    code = "import sys; sys.argv = ['/x/toolkit/__main__.py']; from toolkit.cli.lab import self_command; print(self_command())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT)).stdout.strip()
    assert out == f"{sys.executable} -m toolkit"


def test_cli_start_does_not_import_scapy():
    code = "import sys, toolkit.cli; sys.exit(any(m.startswith('scapy') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], cwd=str(ROOT)).returncode == 0


