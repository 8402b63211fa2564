"""End to end: `mssdiag triage --target` on real namespace networks (toolkit.lab) gets the right findings.

Needs root, iproute2 and iptables (`make system-deps`); skips with the reason otherwise.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toolkit import lab

pytestmark = pytest.mark.netns
MISSING = lab.missing_tools()
if MISSING:
    pytest.skip(f"namespace tests need {', '.join(MISSING)} (run `make system-deps` as root)",
                allow_module_level=True)

MSSDIAG = str(Path(sys.executable).with_name("mssdiag"))
GET = "GET / HTTP/1.0\\r\\n\\r\\n"


def triage(L: lab.Lab, *facts: str):
    argv = [MSSDIAG, "triage", "--json", "--target", L.target, "--port", ",".join(map(str, L.ports)),
            "--send", GET, *facts]
    res = L.run(L.client, argv, timeout=60)
    assert res.returncode in (0, 4), res.stderr
    doc = json.loads(res.stdout)
    (host,) = doc["hosts"]
    return res, host, {f["code"]: f for f in host["findings"]}


def commands(finding):
    return [c for r in finding["recommendations"] for c in r["commands"]]


def test_legacy536_host_is_a_vos_stcp_536_case():
    with lab.scenario("legacy536") as L:
        res, host, found = triage(L, "--os", "vos", "--release", "14.6")
        assert res.returncode == 4
        assert host["path_mtu"] == 1500
        f = found["stcp-536-nonlocal"]
        assert f["confidence"] == "high"
        assert any("at most 536 bytes" in e for e in f["evidence"])
        assert "analyze_system -request_line 'set_longword default_min_mtu 5c8' -quit" in commands(f)
        assert f["data"]["impact"]["mss_before"] == 536 and f["data"]["impact"]["mss_after"] == 1460
        assert "pmtud-black-hole" not in found and "mss-above-path" not in found

        # The same host declared as Linux: no legacy-default finding, only the SYN-ACK evidence.
        res, host, found = triage(L, "--os", "linux")
        assert "stcp-536-nonlocal" not in found
        assert "synack-mss-below-path" in found


def test_blackhole_path_gets_black_hole_fixes():
    with lab.scenario("blackhole") as L:
        # after a 1 s pause silence cannot be told from a router rate-limiting ICMP: a warning to confirm
        res, host, found = triage(L, "--os", "linux")
        assert res.returncode == 0 and found["pmtud-black-hole"]["severity"] == "warning"
        assert any("--icmp-wait 10" in e for e in found["pmtud-black-hole"]["evidence"])
        # waited long enough, it is certain: a problem
        res, host, found = triage(L, "--os", "linux", "--icmp-wait", "10")
        assert res.returncode == 4
        f = found["pmtud-black-hole"]
        assert f["confidence"] == "high" and f["severity"] == "problem"
        assert f["data"]["pmtu"] == 1400
        cmds = commands(f)
        assert "sysctl -w net.ipv4.tcp_mtu_probing=1" in cmds
        assert "iptables -I FORWARD -p icmp --icmp-type fragmentation-needed -j ACCEPT" in cmds
        assert " ip tcp adjust-mss 1360" in cmds
        assert "path-mtu-reduced" not in found        # a black hole is not a working reduced path


def test_bottleneck_without_black_hole():
    with lab.scenario("bottleneck") as L:
        res, host, found = triage(L, "--os", "linux")
        assert "pmtud-black-hole" not in found
        assert found["path-mtu-reduced"]["data"]["pmtu"] == 1400
