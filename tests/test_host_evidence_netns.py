"""What the host already knows, on the real kernel: `ss -tin`, `ip route show cache` and
`nstat -az` taken inside a client namespace after real transfers, given to `mssdiag triage`.

The lab (tests/pathlab.py): client – r1 – r2 – targets, both ends at MTU 1500, the link
between the routers 1400. A target listening with TCP_MAXSEG 536 (a legacy stack), a target
behind the hop that the client sends 400 kB to, and a healthy target on a 1500 path. With
r1 answering "fragmentation needed" the client learns 1400 for the far target; with r1
dropping its own ICMP the far target is a black hole. Then net.ipv4.tcp_mtu_probing 0/1/2
through the silent hole: the TCPMTUP counters in `nstat -az` and `netstat -s`, and the advice.
Root only; skipped with the reason otherwise.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from netns import unavailable

ROOT = Path(__file__).resolve().parent.parent
MSSDIAG = [sys.executable, "-m", "toolkit"]

why = unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")


def triage(case: Path) -> dict:
    done = subprocess.run(MSSDIAG + ["triage", str(case), "--json"], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode in (0, 4), done.stderr
    assert done.stderr.strip() == "" or "nstat: values are increases" in done.stderr, done.stderr
    hosts = json.loads(done.stdout)["hosts"]
    assert [h["host"] for h in hosts] == ["client"], [h["host"] for h in hosts]
    return hosts[0]


def take(lab, case: Path) -> None:
    """What a customer pastes: each command at its prompt, saved in the host's case directory."""
    case.mkdir()
    (case / "host.toml").write_text('name = "client"\n')
    for name, argv in (("ss.txt", ["ss", "-tin"]), ("route-cache.txt", ["ip", "route", "show", "cache"]),
                       ("nstat.txt", ["nstat", "-az"])):
        (case / name).write_text(f"[root@client ~]# {' '.join(argv)}\n" + lab.client_text(*argv))


def run_lab(tmp_path: Path, drop_ptb: bool) -> dict:
    from pathlab import PathLab
    lab = PathLab({"legacy": 536, "far": 0}, drop_ptb=drop_ptb)
    try:
        clients = [lab.exchange("legacy", get=200_000, hold=40), lab.exchange("far", put=400_000, hold=40, wait=6),
                   lab.exchange("healthy", get=100_000, put=100_000, hold=40)]
        for p in clients:
            lab.wait_sent(p)
        case = tmp_path / ("drop" if drop_ptb else "allow")
        take(lab, case)
    finally:
        lab.close()
    return triage(case)


def by_code(host: dict) -> dict:
    return {f["code"]: f for f in host["findings"]}


def mentions(f: dict, text: str) -> bool:
    return text in f["title"] or any(text in e for e in f["evidence"])


def test_536_sender_and_learned_mtu_with_icmp_allowed(tmp_path):
    host = run_lab(tmp_path, drop_ptb=False)
    found = by_code(host)
    legacy = found["peers-536"]
    assert mentions(legacy, "10.0.3.2") and mentions(legacy, "536")
    assert [p["peer"] for p in legacy["data"]["peers"]] == ["10.0.3.2"]
    learned = found["learned-pmtu"]
    assert mentions(learned, "10.0.3.3") and mentions(learned, "1400")
    assert [(d["peer"], d["mtu"]) for d in learned["data"]["destinations"]] == [("10.0.3.3", 1400)]
    assert "peer-black-hole" not in found
    assert not any(mentions(f, "10.0.5.2") for f in host["findings"]), "the healthy peer gets no finding"
    kinds = {e["evidence"]: e for e in host["evidence"]}
    assert set(kinds) == {"sockets", "routes"}


def test_black_hole_named_with_its_sockets_when_the_router_drops_frag_needed(tmp_path):
    host = run_lab(tmp_path, drop_ptb=True)
    found = by_code(host)
    hole = found["peer-black-hole"]
    assert hole["data"]["peer"] == "10.0.3.3" and hole["severity"] == "problem"
    assert hole["data"]["sockets"] and all(s.endswith("-> 10.0.3.3:5000") for s in hole["data"]["sockets"])
    assert mentions(hole, "backoff:") and mentions(hole, "pmtu:1500")
    assert any("no destination unreachable at all received" in e for e in hole["evidence"])
    assert "learned-pmtu" not in found
    assert mentions(found["peers-536"], "10.0.3.2")
    assert not any(mentions(f, "10.0.5.2") for f in host["findings"]), "the healthy peer gets no finding"
    codes = [f["code"] for f in host["findings"]]
    assert "timeouts-without-ptb" in codes


@pytest.mark.parametrize("mode", ["0", "1", "2"])
def test_tcp_mtu_probing_counters_and_their_cost(tmp_path, mode):
    from pathlab import PathLab
    lab = PathLab({"far": 0}, drop_ptb=True)
    try:
        lab.sysctl("net.ipv4.tcp_mtu_probing", mode)
        for p in [lab.exchange("far", put=200_000, hold=2, wait=10) for _ in range(2)]:
            lab.wait_sent(p)
        case = tmp_path / f"probing{mode}"
        case.mkdir()
        (case / "host.toml").write_text('name = "client"\n')
        nstat = lab.client_text("nstat", "-az")
        netstat = lab.client_text("netstat", "-s")
    finally:
        lab.close()
    import parsers
    from parsers.model import signal_values
    meta = parsers.get("linux").META
    read = {}
    for name, text in (("nstat", nstat), ("netstat", netstat)):
        snap, = parsers.parse(text, os="linux")
        read[name] = {k[0]: v[0] for k, v in signal_values(meta, snap.counters).items() if k[0].startswith("mtup")}
    assert read["nstat"] == read["netstat"], read          # both forms read alike
    fired = read["nstat"]["mtup-fail"] + read["nstat"]["mtup-success"]
    (case / "nstat.txt").write_text("[root@client ~]# nstat -az\n" + nstat)
    (case / "netstat.txt").write_text("[root@client ~]# netstat -s\n" + netstat)
    host = triage(case)
    found = by_code(host)
    if mode == "0":
        assert fired == 0 and "plpmtud-active" not in found
        return
    assert fired > 0
    advice = " ".join(c for r in found["plpmtud-active"]["recommendations"] for c in r["caveats"])
    assert "6.5-6.7 s" in advice and "0.03-0.06 s" in advice and "never finished in 30 s" in advice
