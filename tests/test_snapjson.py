"""A snapshot's JSON record from its shape's template (toolkit/snapjson.py) is byte for
byte output.dumps(snap.to_dict()): over cron logs of every fixture dump, with sources and
host names that need escaping, and through the parse command."""
from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest

import parsers
from fixturelib import NETSTAT, expected, pairs
from parsers.text import decode
from test_fast_path import cron_log
from toolkit import snapjson
from toolkit.output import dumps

FIXTURES = [(raw, expected(want)[0]) for raw, want in pairs()]
NAMES = [None, "web01", "h\u00f4te-\u00e9t\u00e9", "evil\u202ename", "c1\x85x", 'q"uo\\te', "{0}{1}{x}", "\x7f"]


@pytest.fixture
def fresh_shapes(monkeypatch):
    shapes = parsers.Shapes()
    monkeypatch.setattr(parsers, "SHAPES", shapes)
    return shapes


def test_every_fixture_cron_log_encodes_as_dumps_does(fresh_shapes):
    templated = 0
    for n, (raw, _) in enumerate(FIXTURES):
        log = cron_log([decode(raw.read_bytes())], 6)
        source = ["x", "dir/{0}.txt", "caf\u00e9\u202e.log", 'a"b\\c'][n % 4]
        for i, snap in enumerate(parsers.iter_parse(log, source=source)):
            snap.host = NAMES[(n + i) % len(NAMES)]
            snap.prompt_host = NAMES[(n + 2 * i) % len(NAMES)]
            text = snapjson.line(snap)
            if text is not None:
                templated += 1
                assert text == dumps(snap.to_dict()), raw.name
    assert templated > 2 * len(FIXTURES)


def test_a_pickled_snapshot_goes_without_its_shape(fresh_shapes):
    log = cron_log([decode((NETSTAT / "linux" / "tcpmon-netstat-rhel-zero-omitted.txt").read_bytes())], 5)
    snap = list(parsers.iter_parse(log))[-1]
    first = snapjson.line(snap)
    assert first is not None
    back = pickle.loads(pickle.dumps(snap))
    assert back == snap and snapjson.line(back) is None
    assert dumps(back.to_dict()) == first


def test_a_snapshot_read_lets_go_of_its_numbers_as_printed(fresh_shapes):
    """Once its counters are made (triage and diff read thousands), a shaped snapshot keeps
    them only: its JSON comes from its fields, the same text."""
    log = cron_log([decode((NETSTAT / "linux" / "tcpmon-netstat-rhel-zero-omitted.txt").read_bytes())], 5)
    snap = list(parsers.iter_parse(log))[-1]
    first = snapjson.line(snap)
    assert first is not None and "_shape" in snap.__dict__
    assert snap.counters and snap.ipv4
    assert "_shape" not in snap.__dict__ and snapjson.line(snap) is None
    assert dumps(snap.to_dict()) == first


def test_parse_command_output_is_the_same_with_templates(tmp_path):
    """The command (templates) against the library's dicts encoded one by one."""
    log = cron_log([decode((NETSTAT / "linux" / "tcpmon-netstat-rhel-zero-omitted.txt").read_bytes())], 50)
    path = tmp_path / "caf\u00e9 {x}.log"
    path.write_text(log)
    out = subprocess.run([sys.executable, "-m", "toolkit", "parse", str(path), "--format", "jsonl"],
                         capture_output=True, text=True, check=True).stdout
    want = "".join(dumps(s.to_dict()) + "\n" for s in parsers.iter_parse(log, source=str(path), fast=False))
    assert out == want
    arr = subprocess.run([sys.executable, "-m", "toolkit", "parse", str(path), "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(arr) == [json.loads(line) for line in want.splitlines()]


def test_numbers_printed_with_leading_zeros(fresh_shapes):
    """A counter printed 0042 is 42 in JSON, "0042" in raw: the template's fast form (the
    digits as matched) is not used for it."""
    text = decode((NETSTAT / "linux" / "tcpmon-netstat-rhel-zero-omitted.txt").read_bytes())
    log = cron_log([text], 8)
    lines = log.split("\n")
    padded = "\n".join(line.replace("    ", "    000", 1) if "total packets received" in line and i > 200
                       else line for i, line in enumerate(lines))
    assert padded.count("    000") >= 3
    got = [(snapjson.line(s), dumps(s.to_dict())) for s in parsers.iter_parse(padded)]
    assert all(a == b for a, b in got if a is not None)
    assert sum(a is not None and '"total packets received": "000' in a for a, _ in got) >= 2
