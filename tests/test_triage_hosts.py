"""Host facts files (toolkit.hosts): one host per case directory, many per --hosts file, strict keys."""
from __future__ import annotations

import pytest

from toolkit import hostfile as hosts, triage


def test_case_directory_defaults(tmp_path):
    (tmp_path / "host.toml").write_text('os = "tcpos"\nrelease = "14.6"\npeer = "non-local"\nbandwidth = "100M"\n'
                                        'rtt = "30ms"\nloss = "0.01%"\nmtu = 1500\n')
    (tmp_path / "dump.txt").write_text("x")
    (tmp_path / "probe.json").write_text("{}")
    (f,) = hosts.load(str(tmp_path / "host.toml"))
    assert f.name == tmp_path.name and f.os == "tcpos" and f.local is False
    assert (f.bandwidth_bps, f.rtt_s, f.loss, f.mtu) == (100e6, 0.03, 1e-4, 1500)
    assert [p.split("/")[-1] for p in f.dumps] == ["dump.txt"]
    assert [p.split("/")[-1] for p in f.probes] == ["probe.json"]


def test_many_hosts_file(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "fleet.toml").write_text(
        '[hosts.vos1]\nos = "vos"\nrelease = "14.7"\ndumps = ["a.txt"]\n\n'
        '[hosts.lnx]\nos = "linux"\ntargets = ["192.0.2.1"]\n')
    found = {f.name: f for f in hosts.load(str(tmp_path / "fleet.toml"))}
    assert set(found) == {"vos1", "lnx"}
    assert found["vos1"].dumps == [str(tmp_path / "a.txt")] and found["lnx"].targets == ["192.0.2.1"]


@pytest.mark.parametrize("text,message", [
    ('speed = "fast"\n', "unknown key 'speed'"),
    ('os = "plan9"\n', "os 'plan9': not one of"),
    ('peer = "far"\n', "peer 'far': must be local or non-local"),
    ('bandwidth = "10 furlongs"\n', "bandwidth '10 furlongs': not a rate like 100M or 10G"),
    ('mtu = 20\n', "mtu 20: an MTU is a whole number from 68 to 65535"),
    ('loss = 2\n', "loss 2: a loss rate must be between 0 and 1"),
    ('dumps = ["missing.txt"]\n', "'missing.txt': no such file"),
    ('os = [\n', "not valid TOML"),
    ('[hosts.a]\nos = "vos"\n[other]\nx = 1\n', "holds nothing else"),
])
def test_bad_host_files(tmp_path, text, message):
    (tmp_path / "host.toml").write_text(text)
    with pytest.raises(hosts.HostFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        hosts.load(str(tmp_path / "host.toml"))


def test_flags_override_file_and_probe_joins_its_host(tmp_path):
    (tmp_path / "host.toml").write_text('name = "h"\nos = "vos"\nrelease = "14.6"\npeer = "local"\n'
                                        'targets = ["192.0.2.7"]\n')
    seen = []

    def fake_prober(targets, error, ports, send_text):
        from toolkit.probe.result import ProbeResult
        seen.append(list(targets))
        return [ProbeResult(target=t, pmtu=1500, pmtu_method="local",
                            mss={"port": 23, "sent": 1460, "synack": 536, "used": 536},
                            findings=[{"code": "mss-536-legacy", "text": "", "confidence": "high"}]) for t in targets]

    found, _ = triage.gather([str(tmp_path)], {"peer": "non-local", "release": "14.7"}, prober=fake_prober,
                             probe_listed=True)
    (h,) = triage.run(found)
    assert seen == [["192.0.2.7"]]
    assert h.facts.peer == "non-local" and h.facts.release == "14.7"
    assert [p.target for p in h.probes] == ["192.0.2.7"]
    stcp = next(f for f in h.findings if f.code == "stcp-536-nonlocal")
    assert stcp.confidence == "high"
    assert any("set_stcp_param min_mss 1480" in c for r in stcp.recommendations for c in r.commands)


def test_saved_probe_joins_the_host_that_lists_its_target(tmp_path):
    import json
    case = tmp_path / "case"
    case.mkdir()
    (case / "host.toml").write_text('name = "vos1"\nos = "vos"\nrelease = "14.6"\ntargets = ["192.0.2.9"]\n'
                                    'dumps = []\n')
    (tmp_path / "p.json").write_text(json.dumps({"target": "192.0.2.9", "pmtu": 1500, "pmtu_method": "local",
                                                 "mss": {"port": 23, "sent": 1460, "synack": 536, "used": 536}}))
    found, _ = triage.gather([str(case), str(tmp_path / "p.json")], {},
                             prober=lambda *a: [])       # the live probe of 192.0.2.9 is not run here
    (h,) = found
    assert h.facts.name == "vos1" and [p.target for p in h.probes] == ["192.0.2.9"]
    assert "stcp-536-nonlocal" in [f.code for f in triage.run([h])[0].findings]


def test_nstat_json_is_read_as_a_dump_not_a_probe(tmp_path):
    """`nstat -j > counters.json` is a dump even though it ends in .json, alone or in a case directory;
    a saved probe result beside it is still a probe."""
    import pathlib
    real = pathlib.Path(__file__).parent.parent / "fixtures/netstat/linux/netns-nstat-j-p-pretty.txt"
    (tmp_path / "counters.json").write_text(real.read_text())
    (tmp_path / "probe.json").write_text('{"target": "192.0.2.7", "pmtu": 1400}')
    errors = []
    inputs, _ = triage.walk([str(tmp_path)], errors.append)
    kinds = {i.path.rsplit("/", 1)[-1]: i.kind for i in inputs}
    assert kinds == {"counters.json": "dump", "probe.json": "probe"}, (kinds, errors)
    (tmp_path / "host.toml").write_text('os = "linux"\n')
    inputs, _ = triage.walk([str(tmp_path)], errors.append)
    assert {i.path.rsplit("/", 1)[-1]: i.kind for i in inputs} == kinds
