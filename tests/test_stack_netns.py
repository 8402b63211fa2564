"""The stack's findings from what the real kernel prints, taken inside lab namespaces.

Each test builds an overlay scenario of toolkit/lab.py, takes `ip -d link show`, `ip route
show`, `nstat -az` and `mssdiag probe --json` inside its namespaces, writes them as one
case directory per host (as a customer would send them), and gives those to `mssdiag
triage --json`."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.netns import unavailable
from toolkit import lab

pytestmark = pytest.mark.netns
WHY = unavailable() or (", ".join(lab.missing_tools()) or None)
if WHY:
    pytest.skip(f"namespace tests: {WHY}", allow_module_level=True)

MSSDIAG = str(Path(sys.executable).with_name("mssdiag"))

UDP_UPLOAD = r'''
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 0)      # IP_MTU_DISCOVER = IP_PMTUDISC_DONT: no DF, as a UDP application sends
data = b"x" * 1472
for i in range(int(sys.argv[2])):
    s.sendto(data, (sys.argv[1], 5001))
    if i % 64 == 63:
        time.sleep(0.005)
'''


def take(L: lab.Lab, ns: str, folder: Path, name: str, argv) -> str:
    """Run argv inside ns and save its output as the customer's file, its command line first."""
    out = L.run(ns, argv, timeout=60, check=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"$ {' '.join(argv)}\n{out}")
    return out


def case(L: lab.Lab, ns: str, root: Path, host: str, counters: bool = False) -> Path:
    folder = root / host
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "host.toml").write_text(f'name = "{host}"\nos = "linux"\n')
    take(L, ns, folder, "ip-d-link.txt", ["ip", "-d", "link", "show"])
    take(L, ns, folder, "ip-route.txt", ["ip", "route", "show"])
    take(L, ns, folder, "ip-addr.txt", ["ip", "addr", "show"])
    return folder


def nstat(L: lab.Lab, ns: str, folder: Path, n: int) -> None:
    take(L, ns, folder, f"nstat-{n}.txt", ["sh", "-c", "date -u; nstat -az"])


def triage(*folders: Path) -> dict:
    done = subprocess.run([MSSDIAG, "triage", *map(str, folders), "--json"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode in (0, 3, 4), done.stderr
    return json.loads(done.stdout)


def findings(doc: dict, host: str, code: str):
    h = next(h for h in doc["hosts"] if h["host"] == host)
    return [f for f in h["findings"] if f["code"] == code]


def test_vxlan_without_dev_is_named_with_1450(tmp_path):
    with lab.scenario("vxlan-nodev") as L:
        client = case(L, L.client, tmp_path, "client")
        doc = triage(client)
    above = findings(doc, "client", "overlay-mtu-above-underlay")
    assert [(f["data"]["device"], f["data"]["mtu"], f["data"]["right_mtu"], f["data"]["underlay"]) for f in above] \
        == [("vxlan0", 1500, 1450, "v1a")]
    nodev = findings(doc, "client", "tunnel-without-underlay")
    assert nodev and nodev[0]["data"]["device"] == "vxlan0" and nodev[0]["data"]["right_mtu"] == 1450


def test_container_behind_a_bridge_above_its_vxlan(tmp_path):
    with lab.scenario("vxlan-container") as L:
        client = case(L, L.client, tmp_path, "client")
        doc = triage(client)
    ports = findings(doc, "client", "port-above-path")
    assert len(ports) == 1
    data = ports[0]["data"]
    assert data["bridge"] == "br0" and data["right_mtu"] == 1450
    assert {p["device"]: p["mtu"] for p in data["ports"]} == {"veth0": 1500, "br0": 1500}
    assert "vxlan0" in data["path"]
    assert not findings(doc, "client", "overlay-mtu-above-underlay")      # the VXLAN itself is right


def test_probe_through_the_overlay_beside_the_prediction(tmp_path):
    with lab.scenario("vxlan-underlay1400") as L:
        client = case(L, L.client, tmp_path, "client")
        probe = L.run(L.client, [MSSDIAG, "probe", "--json", L.target], timeout=60)
        assert probe.returncode == 0, probe.stderr
        (client / "probe.json").write_text(probe.stdout)
        doc = triage(client)
    measured = json.loads(probe.stdout)["pmtu"]
    assert 1340 <= measured <= 1350
    f = findings(doc, "client", "path-predicted-vs-measured")
    assert len(f) == 1
    d = f[0]["data"]
    assert (d["predicted"], d["measured"], d["tunnel"]) == (1450, measured, "vxlan0")
    assert d["explained_by"] == "underlay beyond v1a" and d["underlay_carries"] == measured + 50
    assert "predicted 1450" in f[0]["title"]


def test_both_endpoints_show_the_outer_fragmentation(tmp_path):
    with lab.scenario("vxlan-nodev") as L:
        client = case(L, L.client, tmp_path, "client")
        target = case(L, L.target_ns, tmp_path, "target")
        nstat(L, L.client, client, 1)
        nstat(L, L.target_ns, target, 1)
        time.sleep(1.1)                        # the snapshots' dates are to the second
        L.run(L.client, [sys.executable, "-c", UDP_UPLOAD, "10.210.0.2", "1425"], timeout=60, check=True)
        time.sleep(1.1)
        nstat(L, L.client, client, 2)
        nstat(L, L.target_ns, target, 2)
        doc = triage(client, target)
    f = findings(doc, "client", "overlay-fragmenting-outer")
    assert len(f) == 1, [x["code"] for h in doc["hosts"] for x in h["findings"]]
    assert f[0]["data"]["device"] == "vxlan0" and f[0]["data"]["peer"] == "target"
    assert f[0]["data"]["right_mtu"] == 1450
    assert not findings(doc, "target", "overlay-fragmenting-outer")


def test_a_collect_bundle_gives_the_stack_findings_redacted_or_not(tmp_path):
    """`mssdiag collect` run in the client namespace: its ip -d link, routes and rulesets are
    read as the stack's evidence, and --redact keeps the findings."""
    tmp_path.chmod(0o777)
    got = {}
    with lab.scenario("vxlan-nodev") as L:
        for name, extra in (("plain", []), ("redacted", ["--redact"])):
            done = L.run(L.client, [MSSDIAG, "collect", str(tmp_path / name), *extra], timeout=120)
            assert done.returncode == 0, done.stderr
            doc = triage(tmp_path / name)
            (host,) = doc["hosts"]
            got[name] = sorted(f["code"] for f in host["findings"] if f["code"] in
                               ("overlay-mtu-above-underlay", "tunnel-without-underlay"))
            assert {e["evidence"] for e in host["evidence"]} >= {"links", "routes"}
            assert host["stack"] and any(p["mtu"] == 1450 for p in host["stack"]["paths"])
    assert got["plain"] == got["redacted"] == ["overlay-mtu-above-underlay", "tunnel-without-underlay"]
