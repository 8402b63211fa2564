"""Real-form cases (fixtures/cases/forms/, expectations in fixtures/cases/forms.json): inputs arranged
as customers send them. For each: the hosts, their snapshots, pairs and order, the finding codes --
and `diff` and `triage` agree on hosts and pairs, since both ask the host model."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORMS = ROOT / "fixtures" / "cases" / "forms"
EXPECT = json.loads((ROOT / "fixtures" / "cases" / "forms.json").read_text())
SEVERITY = {"problem": 0, "warning": 1, "info": 2}


def run(*args):
    p = subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    return p.returncode, p.stdout, p.stderr


def test_every_case_has_expectations_and_every_expectation_a_case():
    assert sorted(EXPECT) == sorted(p.name for p in FORMS.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", sorted(EXPECT))
def test_case(case):
    want = EXPECT[case]
    path = str(FORMS.relative_to(ROOT) / case)
    code, out, err = run("triage", path, "--json")
    assert code in (0, 4), err
    assert "Traceback" not in err
    doc = json.loads(out)
    hosts = {h["host"]: h for h in doc["hosts"]}
    assert set(hosts) == set(want["hosts"]), (sorted(hosts), err)
    for line in want.get("stderr", []):
        assert line in err
    for name, w in want["hosts"].items():
        h = hosts[name]
        assert len(h["snapshots"]) == w["snapshots"], name
        assert len(h["deltas"]) == w["pairs"], name
        assert not any(e["type"] in ("reset", "clock") for d in h["deltas"] for e in d["events"]), name
        codes = [f["code"] for f in h["findings"]]
        assert set(w.get("codes", [])) <= set(codes), (name, codes)
        if "codes" in w and not w["codes"]:
            assert codes == [], (name, codes)
        assert not set(w.get("not", [])) & set(codes), (name, codes)
        if "order" in w:
            assert [os.path.basename(s["source"]) for s in h["snapshots"]] == w["order"]
        if "elapsed_s" in w:
            assert [d["elapsed_s"] for d in h["deltas"]] == w["elapsed_s"]
        if "families" in w:
            for s in h["snapshots"]:
                assert [f for f in ("ipv4", "ipv6") if s[f] is not None] == w["families"]
        if "os" in w:
            assert {s["os"] for s in h["snapshots"]} == {w["os"]}
        if "worst" in w:
            assert min(SEVERITY[f["severity"]] for f in h["findings"]) == SEVERITY[w["worst"]]
        commands = "\n".join(c for f in h["findings"] for r in f["recommendations"] for c in r["commands"])
        for text in w.get("no_commands", []):
            assert text not in commands, (name, text)
        # what the summary leads with is this host's worst finding
        row = next(r for r in doc["summary"] if r["host"] == name)
        assert row["codes"] == list(dict.fromkeys(codes))


@pytest.mark.parametrize("case", sorted(EXPECT))
def test_diff_and_triage_agree_on_hosts_and_pairs(case):
    path = str(FORMS.relative_to(ROOT) / case)
    _, out, _ = run("triage", path, "--json")
    triaged = {(h["host"], d["from"], d["to"]) for h in json.loads(out)["hosts"] for d in h["deltas"]}
    code, out, err = run("diff", path, "--json")
    diffed = {(d["host"], d["from"], d["to"]) for d in json.loads(out)} if code == 0 else set()
    assert diffed == triaged, err
    if not triaged:
        assert code == 1 and "nothing to pair" in err
    # parse names the same hosts for every snapshot that names one
    _, out, _ = run("parse", path, "--json")
    named = {s["host"] for s in json.loads(out) if s["host"]}
    assert named <= {h for h, _, _ in triaged} | set(EXPECT[case]["hosts"])
