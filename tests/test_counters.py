"""Every counter of a dump (Snapshot.counters): what each fixture's text shows, nothing invented.

The expected `counters` of every fixture sit in its JSON beside the seven headline counters
(test_fixtures.py compares them all); these tests check what holds for every one of them,
whatever the format: each counter is on a line of the dump as printed (its words and its
value), a counter with a headline's standard name agrees with the headline, and the forms
every parser shares (titles, parents, numbers in parentheses) come out as documented.
"""
import re

import pytest

import parsers
from fixturelib import NETSTAT, actual, expected, pairs
from parsers.model import ALL, NOT_COUNTS, SCHEMA, Reading
from parsers.base import Every
from parsers.text import open_text

PAIRS = [(raw, want) for raw, want in pairs() if want.exists()]
_WORD = re.compile(r"[^\W\d_][\w'/-]*", re.U)


def _lines(raw) -> list:
    with open(raw, "rb") as f:
        return [line.lower().replace("\u2019", "'").replace("\\", "") for line in open_text(f).read().split("\n")]


def _own_words(label: str) -> list:
    """The words of a counter's own line: after its title or parent, before a table column
    or a `#k` number index."""
    own = label.split(" > ")[-1]
    own = re.sub(r" #\d+$", "", own)
    own = re.sub(r" \((?:received|sent|empfangen|gesendet)\)$", "", own, flags=re.I)
    if ": " in own and not own.lower().startswith(("rcvd", "sent", "frags", "mcast", "bcast", "drop", "opts")):
        own = own.rsplit(": ", 1)[-1]
    elif ": " in own:
        own = own.split(": ", 1)[-1].rsplit(": ", 1)[-1]
    return [w.lower() for w in _WORD.findall(own) if len(w) > 1]


@pytest.mark.parametrize("raw,want", PAIRS, ids=[str(r.relative_to(NETSTAT)) for r, _ in PAIRS])
def test_every_counter_is_on_a_line_of_the_dump(raw, want):
    forced, _ = expected(want)
    lines = _lines(raw)
    for snap in actual(raw, forced):
        assert snap["schema"] == SCHEMA
        for c in snap["counters"]:
            words = _own_words(c["label"])
            value = c["value"]
            shown = None if value is None else str(value)
            # on its line, or (a /proc/net/snmp table) its name on one line and its value below
            hit = [i for i, line in enumerate(lines)
                   if all(w in line for w in words)
                   and any(shown is None or re.search(rf"(?<![\d]){shown}(?![\d])", text) or
                           re.search(rf"(?<![\d]){shown}(?![\d])", re.sub(r"[,. \u00a0]", "", text))
                           for text in lines[i:i + 2])]
            assert hit, f"{raw.name}: {c} is on no line of the dump"


@pytest.mark.parametrize("raw,want", PAIRS, ids=[str(r.relative_to(NETSTAT)) for r, _ in PAIRS])
def test_headline_and_counters_agree(raw, want):
    forced, _ = expected(want)
    for snap in actual(raw, forced):
        for c in snap["counters"]:
            name, value = c["name"], c["value"]
            if name is None or value is None:
                continue
            for prefix, fam in (("Ip6", "ipv6"), ("Ip", "ipv4")):
                if name.startswith(prefix):
                    field = name[len(prefix):]
                    field = "ForwDatagrams" if field == "OutForwDatagrams" else field
                    head = (snap[fam] or {}).get(field)
                    if field in ALL and head is not None:
                        assert head == value or field in ("ReasmFails", "ReasmTimeout"), (raw.name, c, head)
                    break


def test_keys_are_unique_per_snapshot():
    for raw, want in PAIRS:
        forced, _ = expected(want)
        for snap in actual(raw, forced):
            keys = [(c["section"], c["label"]) for c in snap["counters"]]
            assert len(keys) == len(set(keys)), raw.name


def test_every_parser_gives_counters():
    """Every format that prints more than its IP section gives more than the headline."""
    seen = {}
    for raw, want in PAIRS:
        forced, _ = expected(want)
        for snap in actual(raw, forced):
            seen[snap["os"]] = max(seen.get(snap["os"], 0), len(snap["counters"]))
    for name in parsers.names():
        if name in ("snmp", "prometheus", "influx", "agentjson", "ftx"):
            continue      # the metric and SNMP readers fill counters in their own modules; ftx: only excerpts known
        assert seen.get(name, 0) > 0, f"{name}: no fixture gives a counter"


def _read(section_lines, names=None):
    reading = Reading(format="t", ipv4=None)
    every = Every(reading, names)
    for section, line in section_lines:
        every.line(section, line)
    return reading


def test_count_first_with_numbers_in_parentheses_and_in_the_label():
    r = _read([("tcp", "        12 data packets (3456 bytes) retransmitted"),
               ("tcp", "        0 time LRO coalesced 2 packets"),
               ("tcp", "        7 connections closed (including 3 drops)")])
    got = {c["label"]: c["value"] for c in r.counters}
    assert got == {"data packets (# bytes) retransmitted": 12, "data packets (# bytes) retransmitted #2": 3456,
                   "time LRO coalesced 2 packets": 0, "connections closed (including # drops)": 7,
                   "connections closed (including # drops) #2": 3}


def test_titles_parents_and_repeats():
    r = _read([("icmp", "        Output histogram:"), ("icmp", "                destination unreachable: 598"),
               ("icmp", "        0 message with bad code fields"),
               ("icmp", "        Input histogram:"), ("icmp", "                destination unreachable: 249"),
               ("tcp", "        5 packets sent"), ("tcp", "                4 checksummed in software"),
               ("tcp", "        9 packets received"), ("tcp", "                3 checksummed in software"),
               ("tcp", "        1 listen queue overflows"), ("tcp", "        1 listen queue overflows"),
               ("tcp", "        2 keepalive timeouts"), ("tcp", "        3 keepalive timeouts")])
    got = {(c["section"], c["label"]): c["value"] for c in r.counters}
    assert got[("icmp", "Output histogram: destination unreachable")] == 598
    assert got[("icmp", "Input histogram: destination unreachable")] == 249
    assert got[("icmp", "message with bad code fields")] == 0
    assert got[("tcp", "checksummed in software")] == 4
    assert got[("tcp", "packets received > checksummed in software")] == 3
    assert got[("tcp", "listen queue overflows")] == 1          # the same line twice: read once
    assert got[("tcp", "keepalive timeouts")] is None           # twice with two values: unknown
    assert any("keepalive timeouts" in w and "different values" in w for w in r.warnings)


def test_a_value_that_is_no_number_is_none_with_a_warning():
    r = _read([("Tcp", "    12x segments retransmitted")])
    assert r.counters == [{"section": "Tcp", "label": "segments retransmitted", "name": None, "value": None}]
    assert r.warnings == ["Tcp: 'segments retransmitted': value '12x' is not a whole number; counter left out"]


def test_linux_names_every_form_alike():
    """netstat -s, /proc/net/snmp, nstat and nstat -j of one kernel give one name per counter."""
    forms = {
        "netstat -s": "Tcp:\n    3 segments retransmitted\nTcpExt:\n    TCPMTUPFail: 2\n    5 other TCP timeouts\n"
                      "Icmp:\n    1 ICMP messages received\n    ICMP input histogram:\n"
                      "        destination unreachable: 1\nIp:\n    10 total packets received\n"
                      "    10 incoming packets delivered\n    9 requests sent out\n",
        "nstat": "#kernel\nIpInReceives 10 0.0\nIcmpInDestUnreachs 1 0.0\nTcpRetransSegs 3 0.0\n"
                 "TcpExtTCPTimeouts 5 0.0\nTcpExtTCPMTUPFail 2 0.0\n",
        "proc": "Ip: Forwarding DefaultTTL InReceives ReasmReqds\nIp: 2 64 10 0\n"
                "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn RetransSegs\nTcp: 1 200 120000 -1 3\n",
    }
    names = {}
    for form, text in forms.items():
        snap, = parsers.parse(text, os="linux")
        names[form] = {c["name"]: c["value"] for c in snap.counters}
        assert not any(c["name"] in ("TcpMaxConn", "IpForwarding", "IpDefaultTTL", "TcpRtoMin")
                       for c in snap.counters), "settings are no counters"
    assert names["netstat -s"]["TcpRetransSegs"] == names["nstat"]["TcpRetransSegs"] == names["proc"]["TcpRetransSegs"] == 3
    assert names["netstat -s"]["TcpExtTCPTimeouts"] == names["nstat"]["TcpExtTCPTimeouts"] == 5
    assert names["netstat -s"]["TcpExtTCPMTUPFail"] == names["nstat"]["TcpExtTCPMTUPFail"] == 2
    assert names["netstat -s"]["IcmpInDestUnreachs"] == names["nstat"]["IcmpInDestUnreachs"] == 1


def test_gauges_are_named():
    assert "TcpCurrEstab" in NOT_COUNTS
