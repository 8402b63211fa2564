"""The host model with every counter and with evidence besides counters (toolkit/hosts.py):
two machines' dumps whose error counters fall are never one host; socket tables and route
caches tie to a host like a dump (prompt, case directory, file name, their own text)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import parsers
from parsers.text import open_text
from toolkit import hosts
from toolkit.hosts import follows

ROOT = Path(__file__).resolve().parent.parent
WINDOWS = ROOT / "fixtures" / "netstat" / "windows"
EVIDENCE = ROOT / "fixtures" / "evidence"

# Real dumps of different Windows machines whose eleven headline counters all rise from the
# first to the second, and one of their error counters falls.
DIFFERENT = [
    ("kb949130_vista_annotated.txt", "kb811003_win2000_crlf.txt", "Received Address Errors went down (12,517 -> 1)"),
    ("q155758_nt4_tabs.txt", "kb949130_vista_annotated.txt", "Received Header Errors went down (10,395 -> 0)"),
    ("net_process_e_s_indented.txt", "kb811003_win2000_crlf.txt", "Received Packets Discarded went down (25,269 -> 0)"),
]


def first(name: str):
    with open(WINDOWS / name, "rb") as f:
        return next(parsers.iter_parse(open_text(f), source=name, fast=False))


def headline_only(snap):
    snap.counters = []
    return snap


@pytest.mark.parametrize("a,b,why", DIFFERENT, ids=[d[0] for d in DIFFERENT])
def test_two_machines_whose_error_counters_fall_are_not_one_host(tmp_path, a, b, why):
    # the headline alone would pair them: every one of its counters known in both grows
    assert follows(headline_only(first(a)), headline_only(first(b))).kind == "growth"
    verdict = follows(first(a), first(b))
    assert not verdict.ok and why in verdict.why
    for name in (a, b):
        shutil.copy(WINDOWS / name, tmp_path / name)
    notes = []
    snaps = []
    for name in (a, b):
        with open(tmp_path / name, "rb") as f:
            snaps += [(s, None) for s in parsers.iter_parse(open_text(f), source=str(tmp_path / name))]
    built = hosts.build(snaps, note=notes.append)
    assert len(built) == 2 and all(h.identity == "file" for h in built)
    assert any(why in n for n in notes), notes


def test_one_host_over_time_still_pairs():
    """A cron log of one Linux host, every counter of every snapshot compared: one host."""
    with open(ROOT / "fixtures" / "netstat" / "linux" / "netns-cron-date-netstat-s.txt", "rb") as f:
        snaps = list(parsers.iter_parse(open_text(f), source="cron.log"))
    built = hosts.build((s, None) for s in snaps)
    assert len(built) == 1 and built[0].snapshot_count == 4 and built[0].delta_count == 3


def test_gauges_may_fall():
    a, b = first("net_process_e_s_indented.txt"), first("powershell_e_s_utf16.txt")
    for c in b.counters:                      # the same host a moment later, fewer connections open
        if c["label"] == "Current Connections":
            c["value"] = 0
    assert follows(a, b).ok


def read(path: Path):
    items = []
    with open(path, "rb") as f:
        for snap in parsers.iter_parse(open_text(f), source=str(path), evidence=items.append):
            items.append(snap)
    return items


def test_evidence_joins_the_host_its_prompt_names(tmp_path):
    paste = tmp_path / "ticket.txt"
    paste.write_text((EVIDENCE / "lab-drop-ss-tin.txt").read_text()
                     + (ROOT / "fixtures" / "netstat" / "linux" / "netns-client-blackhole-nstat-az.txt").read_text()
                     + (EVIDENCE / "lab-allow-ip-route-show-cache.txt").read_text())
    b = hosts.Builder()
    for item in read(paste):
        b.add(item)
    h, = b.finish()
    assert h.facts.name == "client" and h.identity == "prompt"
    assert [e.kind for e in h.evidence] == ["sockets", "routes"] and len(h.snapshots) == 1


def test_a_case_directory_holds_dump_sockets_and_route_cache(tmp_path):
    case = tmp_path / "db1"
    case.mkdir()
    (case / "host.toml").write_text('os = "linux"\n')
    shutil.copy(EVIDENCE / "test-data-ss-tinoa-netid.txt", case / "ss.txt")      # no prompt: the case names it
    shutil.copy(EVIDENCE / "lab-allow-ip-6-route-show-cache.txt", case / "cache.txt")
    shutil.copy(ROOT / "fixtures" / "netstat" / "linux" / "tcpmon-proc-net-snmp.txt", case / "snmp.txt")
    from toolkit import triage
    built, outcome = triage.gather([str(case)], {})
    h, = built
    assert h.facts.name == "db1" and sorted(e.kind for e in h.evidence) == ["routes", "sockets"]
    assert len(h.snapshots) == 1 and not outcome.failed


def test_bare_evidence_is_its_files_host_or_its_dumps(tmp_path):
    shutil.copy(EVIDENCE / "test-data-ss-tinoa-netid.txt", tmp_path / "iperf-ss.txt")
    b = hosts.Builder()
    for item in read(tmp_path / "iperf-ss.txt"):
        b.add(item)
    h, = b.finish()
    assert h.facts.name == "iperf-ss" and h.identity == "file" and len(h.evidence) == 1
    both = tmp_path / "both.txt"
    both.write_text((ROOT / "fixtures" / "netstat" / "linux" / "tcpmon-netstat-rhel-zero-omitted.txt").read_text()
                    + (EVIDENCE / "test-data-ss-tinoa-netid.txt").read_text())
    b = hosts.Builder()
    for item in read(both):
        b.add(item)
    h, = b.finish()
    assert len(h.snapshots) == 1 and len(h.evidence) == 1


def test_an_empty_route_cache_is_evidence_too(tmp_path):
    paste = tmp_path / "p.txt"
    paste.write_text("[root@client ~]# ip route show cache\n[root@client ~]# ip -6 route show cache\n"
                     + (EVIDENCE / "lab-drop-ss-tin.txt").read_text())
    found = [e for e in read(paste) if e.__class__.__name__ == "Evidence"]
    assert [(e.kind, e.format, len(e.items), e.line) for e in found] == [
        ("sockets", "ss -tin", 3, 3), ("routes", "ip route show cache", 0, 1),
        ("routes", "ip -6 route show cache", 0, 2)]
