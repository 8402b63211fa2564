"""Against real namespace networks: the per-hop MTUs of a three-router path, the
black hole's bracket, the router that clamps the MSS, the PMTUD verdict of a target with
PMTU discovery on, off and ignoring the message, the unprivileged legacy finding, and
nothing left behind (the RST rule, after a normal end and after SIGINT/SIGTERM/SIGKILL;
the IPv6 path MTU our probes taught the kernel).

Needs root, iproute2 and iptables (`make system-deps`); skips with the reason otherwise.
Routers rate-limit the 'time exceeded' they send one prober (Linux: 6 at once, then 1 a
second): a test that traces the same lab twice waits between the runs.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
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


def probe(L: lab.Lab, *args: str, timeout: float = 60, save: Path = None):
    res = L.run(L.client, [MSSDIAG, "probe", "--json", L.target, "--port", "21,80", "--send", GET, *args],
                timeout=timeout)
    assert res.returncode == 0, res.stderr
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(res.stdout)     # exactly what `probe --json > file` keeps
    return json.loads(res.stdout)


def triage(*paths: Path, args=()):
    """`mssdiag triage --json` of saved probe files: reads files only, sends nothing."""
    res = subprocess.run([MSSDIAG, "triage", "--json", *map(str, paths), *args], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode in (0, 4), res.stderr
    return {h["host"]: {f["code"]: f for f in h["findings"]} for h in json.loads(res.stdout)["hosts"]}


def rules(L: lab.Lab) -> str:
    return L.run(L.client, ["iptables-save"], check=True).stdout + L.run(L.client, ["ip6tables-save"]).stdout


def without_counters(text: str) -> list:
    return [line for line in text.splitlines() if not line.startswith("#") and not line.startswith(":")]


def test_trace_gives_each_hops_mtu():
    with lab.scenario("trace3") as L:
        d = probe(L, "--trace")
        hops = [(h["ttl"], h["address"], h["mtu"], h["reported_mtu"]) for h in d["trace"]["hops"]]
        assert hops == L.expect["hops"], json.dumps(d["trace"], indent=1)
        assert all(h["rtt_ms"] is not None and not h["silent"] for h in d["trace"]["hops"])
        assert d["trace"]["black_hole"] is None
        assert (d["pmtu"], d["hop"]) == (1280, "10.0.3.2")
        # the routers quote our whole SYN: unchanged as far as the last router, and said so
        c = d["clamp"]
        assert (c["sent"], c["to"], c["seen_to_ttl"]) == (1460, None, 3), c
        assert [h["mss"] for h in c["hops"]] == [1460, 1460, 1460] and "unchanged as far as hop 3" in c["note"]
        time.sleep(2)       # the routers' 'time exceeded' budget refills
        res = L.run(L.client, [MSSDIAG, "probe", L.target, "--trace"])
        assert res.returncode == 0, res.stderr
        rows = [line.split() for line in res.stdout.splitlines() if line[:5].strip().isdigit()]
        assert [r[:2] + r[3:5] for r in rows] == [["1", "10.0.1.1", "1500", "1480"], ["2", "10.0.2.2", "1480", "1400"],
                                                   ["3", "10.0.3.2", "1400", "1280"], ["4", "10.0.4.2", "1280", "-"]]


def test_trace_brackets_the_black_hole():
    with lab.scenario("blackhole") as L:
        d = probe(L, "--trace")
        assert d["trace"]["black_hole"] == {"size": 1500, "after_ttl": 1, "after": "10.0.1.1", "before_ttl": 2,
                                            "before": "10.0.2.2"}
        assert [(h["ttl"], h["mtu"], h["silent_at"]) for h in d["trace"]["hops"]] == [(1, 1500, None),
                                                                                     (2, 1400, 1500)]


def test_clamp_located_on_the_second_router(tmp_path):
    with lab.scenario("clamp2") as L:
        plain = probe(L, save=tmp_path / "plain" / "host.json")
        assert {f["code"] for f in plain["findings"]} == L.expect["codes"]
        time.sleep(1)
        d = probe(L, "--trace", save=tmp_path / "vos1" / "probe.json")
        c = d["clamp"]
        assert {k: c[k] for k in ("changed_after", "changed_after_ttl", "to")} == L.expect["clamp"], c
        assert [h["mss"] for h in c["hops"]] == [1460, 1460, 536]
        # the 536 the target uses is the clamp's doing: no legacy-host guess left
        assert {f["code"] for f in d["findings"]} == {"synack-mss-below-path", "mss-clamped"}
        assert {k: d["mss"][k] for k in ("sent", "synack", "used")} == L.expect["mss"]
        target = L.target
    # triage of the saved files (after the lab is gone: files only). The traced probe in the
    # case directory of a VOS host: the router is named, and the 536 is not blamed on VOS.
    (tmp_path / "vos1" / "host.toml").write_text('name = "vos1"\nos = "vos"\nrelease = "14.6"\n')
    (tmp_path / "plain" / "host.toml").write_text('name = "vos2"\nos = "vos"\nrelease = "14.6"\n')
    hosts = triage(tmp_path / "vos1", tmp_path / "plain")
    f = hosts["vos1"]["mss-clamped"]
    assert set(hosts["vos1"]) == {"mss-clamped"}, hosts["vos1"]
    assert (f["severity"], f["confidence"]) == ("warning", "high")
    assert f["data"]["changed_after"] == "10.0.2.2" and f["data"]["to"] == 536 and f["data"]["target"] == target
    assert "after hop 2 (10.0.2.2: that router" in f["title"] and f["recommendations"][0]["code"] == "net-raise-clamp"
    # the untraced probe of the same path cannot tell: the legacy rule speaks for the 536
    assert "stcp-536-nonlocal" in hosts["vos2"] and "mss-clamped" not in hosts["vos2"]
    # a loose saved file is attached to its target's address
    loose = tmp_path / "loose.json"
    loose.write_text((tmp_path / "vos1" / "probe.json").read_text())
    assert "mss-clamped" in triage(loose)[target]


@pytest.mark.parametrize("name,code", [("pmtud-on", "target-honours-ptb"), ("pmtud-off", "target-clears-df"),
                                       ("pmtud-ignore", "target-ignores-ptb")])
def test_pmtud_verdicts_and_nothing_left_behind(name, code, tmp_path):
    with lab.scenario(name) as L:
        before = rules(L)
        d = probe(L, "--pmtud-check", save=tmp_path / "saved.json")
        p = d["pmtud"]
        assert p["verdict"] == L.expect["pmtud"], json.dumps(p)
        assert (p["port"], p["mtu"], p["segment"]) == (21, 1280, 1460), p
        assert code in {f["code"] for f in d["findings"]}
        if name == "pmtud-on":
            assert (p["after"], p["df_before"], p["df_after"]) == (1240, True, True)
        elif name == "pmtud-off":
            assert (p["df_before"], p["df_after"]) == (False, False)
        else:
            assert (p["after"], p["df_after"]) == (1460, True)
        assert rules(L) == before
    # the saved result through triage: the verdict on the target's host, with that OS's advice
    found = triage(tmp_path / "saved.json", args=("--os", "linux"))[L.target]
    assert found[code]["confidence"] == "high" and found[code]["data"]["port"] == 21
    assert {c for c in found if c.startswith("target-")} == {code}
    advice = [r["code"] for r in found[code]["recommendations"]]
    assert advice == {"pmtud-on": [], "pmtud-off": ["linux-pmtu-disc-on", "net-clamp-mss"],
                      "pmtud-ignore": ["linux-accept-frag-needed", "net-clamp-mss"]}[name]


def wait_for_rule(L: lab.Lab, proc, timeout: float = 15) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if "mssdiag-pmtud" in rules(L):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_pmtud_rule_removed_when_interrupted(sig, code):
    """The target ignores the message, so the check waits for its retransmission with the
    rule in place: the signal lands then. The rule is gone after the exit."""
    with lab.scenario("pmtud-ignore") as L:
        before = without_counters(rules(L))
        proc = subprocess.Popen(["ip", "netns", "exec", L.client, MSSDIAG, "probe", L.target, "--port", "21",
                                 "--pmtud-check"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert wait_for_rule(L, proc), proc.communicate()
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=20)
        assert proc.returncode == code, err
        assert err.splitlines() == [f"mssdiag: probe: interrupted by {signal.Signals(sig).name} after 0 of 1 "
                                    "target(s)"], err
        assert without_counters(rules(L)) == before


def test_pmtud_rule_of_a_killed_run_is_swept_by_the_next():
    with lab.scenario("pmtud-ignore") as L:
        before = without_counters(rules(L))
        proc = subprocess.Popen(["ip", "netns", "exec", L.client, MSSDIAG, "probe", L.target, "--port", "21",
                                 "--pmtud-check"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert wait_for_rule(L, proc)
        proc.kill()
        proc.communicate(timeout=20)
        assert "mssdiag-pmtud" in rules(L)          # SIGKILL leaves it: nothing can run then
        d = probe(L, "--pmtud-check")
        assert d["pmtud"]["verdict"] == "ignores"
        assert without_counters(rules(L)) == before


def test_ipv6_path_mtu_cache_left_as_found():
    with lab.scenario("ipv6") as L:
        cache = lambda: L.run(L.client, ["ip", "-6", "route", "show", "cache"], check=True).stdout  # noqa: E731
        assert cache() == ""
        d = probe(L, "--trace")
        assert [(h["mtu"], h["reported_mtu"]) for h in d["trace"]["hops"]] == [(1500, 1400), (1400, None)]
        assert cache() == "", "the PTB our probes drew is still cached"


def test_unprivileged_legacy_host_with_timestamps():
    """--no-raw is the code path of a user without CAP_NET_RAW (TCP_INFO only): the 536
    sender whose segments carry 12 bytes of timestamps is recognised at 524, and the
    options are named (test_probe_lab runs the same as uid 65534)."""
    with lab.scenario("legacy536") as L:
        d = probe(L, "--no-raw")
        m = d["mss"]
        assert (m["sent"], m["synack"], m["used"], m["used_options"]) == (1460, None, 524, 12), m
        assert "timestamps" in m["options"]
        assert "mss-536-legacy" in {f["code"] for f in d["findings"]}
