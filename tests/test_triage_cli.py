"""`mssdiag triage` and `mssdiag calc` as a user runs them: the bundled case, formats, exit codes, errors."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")
CASES = os.path.join("fixtures", "cases", "demo")


def run(*args, cwd=ROOT):
    p = subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True, cwd=cwd, timeout=120)
    return p.returncode, p.stdout, p.stderr


def test_demo_case_table():
    code, out, err = run("triage", CASES)
    assert code == 4, err                       # problems found
    assert err == ""
    for name in ("vos-prod-1", "dtn-linux-1", "win2003-fs"):
        assert f"== {name} ==" in out
    for c in ("stcp-536-nonlocal", "reassembly-active", "pmtud-black-hole", "buffers-below-bdp", "reassembly-failing"):
        assert c in out
    assert "analyze_system -request_line 'set_longword default_min_mtu 5c8' -quit" in out   # VOS 14.6
    assert "set_stcp_param" not in out
    assert "sysctl -w net.ipv4.tcp_rmem='10240 87380 52428800'" in out


def test_json_schema():
    code, out, err = run("triage", CASES, "--json")
    assert code == 4, err
    doc = json.loads(out)
    assert doc["schema"] == "mssdiag.triage/1"
    hosts = {h["host"]: h for h in doc["hosts"]}
    assert set(hosts) == {"vos-prod-1", "dtn-linux-1", "win2003-fs"}
    for h in doc["hosts"]:
        assert set(h) >= {"host", "facts", "path_mtu", "path_mtu_from", "inputs", "snapshots", "deltas", "probes",
                          "findings", "errors"}
        for f in h["findings"]:
            assert set(f) >= {"code", "title", "evidence", "confidence", "severity", "recommendations", "data"}
            assert f["confidence"] in ("high", "medium", "low")
            for r in f["recommendations"]:
                assert set(r) >= {"code", "title", "commands", "applies_to", "where", "caveats", "impact", "scope"}
    vos = hosts["vos-prod-1"]
    assert vos["facts"]["os"] == "vos" and vos["facts"]["release"] == "14.6.0ak"
    assert vos["path_mtu"] == 1500
    assert vos["deltas"][0]["ipv4"]["ReasmReqds"] == 4
    stcp = next(f for f in vos["findings"] if f["code"] == "stcp-536-nonlocal")
    assert stcp["confidence"] == "high" and stcp["data"]["impact"]["mss_after"] == 1460


def test_markdown_and_output_file(tmp_path):
    target = tmp_path / "ticket.md"
    code, out, err = run("triage", os.path.join(CASES, "vos-host"), "--format", "md", "-o", str(target))
    assert code == 4 and out == "" and err == ""
    md = target.read_text()
    assert md.startswith("# mssdiag triage") and "## vos-prod-1" in md
    assert "```\nanalyze_system -request_line 'set_longword default_min_mtu 5c8' -quit\n```" in md


def test_flags_override_and_loose_dump():
    dump = os.path.join(CASES, "vos-host", "netstat-stcp.txt")
    code, out, _ = run("triage", dump, "--os", "vos", "--release", "14.7", "--peer", "non-local", "--json")
    doc = json.loads(out)
    (h,) = doc["hosts"]
    stcp = next(f for f in h["findings"] if f["code"] == "stcp-536-nonlocal")
    cmds = [c for r in stcp["recommendations"] for c in r["commands"]]
    assert "analyze_system -request_line 'set_stcp_param min_mss 1480' -quit" in cmds
    assert stcp["confidence"] == "medium"       # facts only, no probe
    code, out, _ = run("triage", dump, "--os", "vos", "--peer", "local", "--json")
    assert "stcp-536-nonlocal" not in out


def test_clean_host_exits_zero(tmp_path):
    (tmp_path / "host.toml").write_text('name = "quiet"\nos = "linux"\npeer = "non-local"\n')
    (tmp_path / "netstat.txt").write_text("Ip:\n    100 total packets received\n    0 reassemblies required\n"
                                          "    0 packets reassembled ok\n")
    code, out, err = run("triage", str(tmp_path))
    assert code == 0, (out, err)
    assert "No findings" in out


@pytest.mark.parametrize("args,message", [
    (["--bandwidth", "10 furlongs", CASES], "mssdiag: --bandwidth '10 furlongs': not a rate like 100M or 10G"),
    (["--rtt", "soon", CASES], "mssdiag: --rtt 'soon': not a time like 20ms or 0.05s"),
    (["--os", "plan9", CASES], "mssdiag: --os 'plan9': not one of"),
    (["--peer", "far", CASES], "mssdiag: --peer 'far': must be local or non-local"),
    (["--format", "pdf", CASES], "pdf"),
    ([], "mssdiag: nothing to triage"),
])
def test_bad_flags_one_line(args, message):
    code, out, err = run("triage", *args)
    assert code == 2
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_bad_inputs_one_line_each(tmp_path):
    (tmp_path / "host.toml").write_text('name = "h"\nos = "vos"\nspeed = "fast"\n')
    bad_probe = tmp_path.parent / "bad-probe.json"
    bad_probe.write_text("{not json")
    code, out, err = run("triage", str(tmp_path), str(bad_probe), os.path.join(CASES, "vos-host"))
    assert code == 3, err                        # some inputs unusable, the rest triaged
    lines = err.strip().splitlines()
    assert any("host.toml: unknown key 'speed'" in l for l in lines)
    assert any("bad-probe.json: not probe JSON" in l for l in lines)
    assert "Traceback" not in err and "vos-prod-1" in out


def test_calc_commands():
    code, out, _ = run("calc", "mss", "--mtu", "1500", "--encap", "pppoe,vlan", "--json")
    assert code == 0 and json.loads(out)["mss"] == 1452
    code, out, _ = run("calc", "bdp", "--bandwidth", "10G", "--rtt", "20ms", "--json")
    d = json.loads(out)
    assert (d["bdp_bytes"], d["buffer_mib_rounded"]) == (25_000_000, 52_428_800)
    code, out, _ = run("calc", "bdp", "--bandwidth", "10G", "--rtt", "50ms", "--json")
    assert json.loads(out)["bdp_bytes"] == 62_500_000
    code, out, _ = run("calc", "mathis", "--mss", "1460", "--rtt", "50ms", "--loss", "0.0001", "--json")
    assert round(json.loads(out)["bound_bps"]) == 23_360_000
    code, out, _ = run("calc", "transfer", "--size", "1MiB", "--mss", "536,1460", "--json")
    d = json.loads(out)
    assert [t["packets"] for t in d["transfers"]] == [2943, 1086] and d["fewer_packets_pct"] > 60
    code, out, _ = run("calc", "mss", "--mtu", "9000")
    assert code == 0 and "8960" in out


@pytest.mark.parametrize("args,message", [
    (["calc", "bdp", "--bandwidth", "10 furlongs", "--rtt", "20ms"], "--bandwidth '10 furlongs': not a rate like 100M or 10G"),
    (["calc", "mss", "--encap", "carrier-pigeon"], "--encap 'carrier-pigeon': unknown encapsulation"),
    (["calc", "mss", "--mtu", "40"], "--mtu 40: an MTU must be between 68 and 65535"),
    (["calc", "mathis", "--mss", "1460", "--rtt", "50ms", "--loss", "7"], "--loss '7': a loss rate must be between"),
    (["calc", "transfer", "--mss", "0"], "--mss '0'"),
])
def test_calc_errors_one_line(args, message):
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


SAMPLE_EPOCH = "1795305600"    # the sample's "Generated" line: SOURCE_DATE_EPOCH makes the output reproducible


def test_report_sample_is_current(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", SAMPLE_EPOCH)
    code, out, _ = run("triage", CASES, "--format", "md")
    sample = open(os.path.join(ROOT, "docs", "report-sample.md"), encoding="utf-8").read()
    body = sample.split("-->\n\n", 1)[1]
    assert body == out, "regenerate docs/report-sample.md (command in its first line)"
