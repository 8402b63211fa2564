"""Socket tables and learned routes (parsers/evidence.py): every fixture against its JSON,
read where dumps are read (files, pastes with prompts, beside a netstat dump), and no
netstat fixture taken for one."""
import json
from pathlib import Path

import pytest

import parsers
from parsers import iproute, sockets
from parsers.text import open_text

ROOT = Path(__file__).resolve().parent.parent
EVIDENCE = ROOT / "fixtures" / "evidence"
RAWS = sorted(EVIDENCE.glob("*.txt"))


def read(path, **kw):
    found = []
    with open(path, "rb") as f:
        snaps = list(parsers.iter_parse(open_text(f), source=path.name, evidence=found.append, **kw))
    return snaps, found


@pytest.mark.parametrize("raw", RAWS, ids=[r.name for r in RAWS])
def test_fixture(raw):
    want = json.loads(raw.with_suffix(".json").read_text())
    _, found = read(raw)
    got = []
    for e in found:
        d = e.to_dict()
        del d["source"]
        got.append(d)
    assert got == want
    text = raw.read_text()
    for e in found:              # nothing in them that is not in the text
        for item in e.items:
            if e.kind == "sockets":
                assert item.peer in text and f"mss:{item.info['mss']}" in text.replace("\n", " ")
            else:
                assert item.dst in text and (item.mtu is None or str(item.mtu) in text)


@pytest.mark.parametrize("raw", RAWS, ids=[r.name for r in RAWS])
def test_same_with_the_fast_path_off(raw):
    assert [e.to_dict() for e in read(raw)[1]] == [e.to_dict() for e in read(raw, fast=False)[1]]


def test_no_netstat_fixture_holds_evidence():
    # the stack's cases (fixtures/cases/forms/stack-*) are made of evidence: devices, routes, rules
    for path in sorted((ROOT / "fixtures" / "netstat").glob("*/*.txt")) + sorted(
            p for p in (ROOT / "fixtures" / "cases").rglob("*.txt") if "/stack-" not in str(p)):
        assert read(path)[1] == [], path


def test_a_paste_of_three_commands_at_one_prompt():
    text = "".join((EVIDENCE / name).read_text() for name in (
        "lab-drop-ss-tin.txt", "lab-allow-ip-route-show-cache.txt")) + "[root@client ~]# nstat -az\n#kernel\n" \
        "IpInReceives 20 0.0\nIpInDelivers 20 0.0\nIpOutRequests 24 0.0\nTcpExtTCPTimeouts 4 0.0\n"
    found = []
    snaps = list(parsers.iter_parse(text, source="paste", evidence=found.append))
    assert [s.host for s in snaps] == ["client"] and snaps[0].format == "nstat"
    assert [(e.kind, e.format, e.host, len(e.items)) for e in found] == [
        ("sockets", "ss -tin", "client", 3), ("routes", "ip route show cache", "client", 1)]


def test_socket_fields():
    socks, warnings = sockets.read((EVIDENCE / "lab-drop-ss-tino.txt").read_text().split("\n"))
    assert warnings == []
    stuck = next(s for s in socks if s.peer == "10.0.3.3")
    assert (stuck.number("backoff"), stuck.number("pmtu"), stuck.number("bytes_acked"), stuck.timer) == \
        (5, 1500, 16, "timer:(on,5.028ms,5)")
    legacy = next(s for s in socks if s.peer == "10.0.3.2")
    assert (legacy.number("mss"), legacy.number("rcvmss"), legacy.number("data_segs_in")) == (524, 524, 383)
    assert legacy.retrans == (None, None) and stuck.retrans == (1, 5)


def test_route_fields():
    r, = iproute.read((EVIDENCE / "lab-allow-ip-6-route-show-cache.txt").read_text().split("\n")[1:])[0]
    assert (r.dst, r.family, r.via, r.metric, r.expires, r.mtu, r.attrs) == (
        "fd00:3::3", "ipv6", "fd00:1::1", 1024, 597, 1400, {"pref": "medium"})
    routes, _ = iproute.read(["default via 192.0.2.1 dev eth0 proto dhcp src 192.0.2.10 metric 100",
                              "10.0.0.0/8 proto bird metric 32", "\tnexthop via 10.1.1.1 dev eth0 weight 1",
                              "unreachable 10.9.0.0/16", "265063785 packets sent"])
    assert [(x.dst, x.type, x.via, x.metric) for x in routes] == [
        ("default", "unicast", "192.0.2.1", 100), ("10.0.0.0/8", "unicast", None, 32),
        ("10.9.0.0/16", "unreachable", None, None)]
    assert routes[1].nexthops == [{"via": "10.1.1.1", "dev": "eth0", "weight": "1"}]
