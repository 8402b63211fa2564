"""The IP-MIB counters in the other forms they travel in: every net-snmp output option, notes
glued to values, Prometheus exposition (mssdiag's own included) and line protocol.

The SNMP renderings are made by rule from each real walk under fixtures/netstat/snmp/, with
the object identifiers written out here from RFC 1213 and RFC 4293 (not taken from the
parser), so a name the reader maps wrongly changes the counters.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import parsers
from fixturelib import NETSTAT
from parsers.text import decode

# RFC 1213 ip group scalars and RFC 4293 ipSystemStatsEntry columns, by name
SCALARS = {"ipForwarding": 1, "ipDefaultTTL": 2, "ipInReceives": 3, "ipInHdrErrors": 4, "ipInAddrErrors": 5,
           "ipForwDatagrams": 6, "ipInUnknownProtos": 7, "ipInDiscards": 8, "ipInDelivers": 9, "ipOutRequests": 10,
           "ipOutDiscards": 11, "ipOutNoRoutes": 12, "ipReasmTimeout": 13, "ipReasmReqds": 14, "ipReasmOKs": 15,
           "ipReasmFails": 16, "ipFragOKs": 17, "ipFragFails": 18, "ipFragCreates": 19, "ipRoutingDiscards": 23,
           "ipv6IpForwarding": 25, "ipv6IpDefaultHopLimit": 26}
COLUMNS = {"InReceives": 3, "HCInReceives": 4, "InOctets": 5, "HCInOctets": 6, "InHdrErrors": 7, "InNoRoutes": 8,
           "InAddrErrors": 9, "InUnknownProtos": 10, "InTruncatedPkts": 11, "InForwDatagrams": 12,
           "HCInForwDatagrams": 13, "ReasmReqds": 14, "ReasmOKs": 15, "ReasmFails": 16, "InDiscards": 17,
           "InDelivers": 18, "HCInDelivers": 19, "OutRequests": 20, "HCOutRequests": 21, "OutNoRoutes": 22,
           "OutForwDatagrams": 23, "HCOutForwDatagrams": 24, "OutDiscards": 25, "OutFragReqds": 26,
           "OutFragOKs": 27, "OutFragFails": 28, "OutFragCreates": 29}
NAME_OF_SCALAR = {v: k for k, v in SCALARS.items()}
NAME_OF_COLUMN = {v: k for k, v in COLUMNS.items()}
ROW = {"ipv4": 1, "ipv6": 2}

# one walked object: prefix (prompt, comment, diff mark), MIB, name, index, type, value
OBJECT = re.compile(r"^(?P<pre>.*?)(?:(?P<mib>IP-MIB|RFC1213-MIB)::)?(?P<name>ip[A-Za-z0-9]+)\.(?P<index>0|ipv4|ipv6)"
                    r" = (?:Wrong Type \(should be \w+\): )?(?:(?P<type>[A-Za-z0-9]+): )?(?P<value>.*)$")
NUMERIC = re.compile(r"^(?P<pre>.*?)(?:iso|\.1)\.3\.6\.1\.2\.1\.4\.(?P<oid>[0-9.]+?)(?: = (?:(?P<type>[A-Za-z0-9]+): )?| )"
                     r"(?P<value>\S.*)$")


def objects(text: str):
    """(prefix, name, index, type, value) of every IP-MIB object the walk names, named or numeric."""
    for line in text.splitlines():
        m = OBJECT.match(line)
        if m is not None:
            name = m["name"]
            if name in SCALARS or name.startswith("ipSystemStats") and name[len("ipSystemStats"):] in COLUMNS:
                yield m["pre"], name, m["index"], m["type"] or "Counter32", m["value"]
            continue
        m = NUMERIC.match(line)
        if m is None:
            continue
        parts = m["oid"].split(".")
        if len(parts) == 2 and parts[1] == "0" and int(parts[0]) in NAME_OF_SCALAR:
            yield m["pre"], NAME_OF_SCALAR[int(parts[0])], "0", m["type"] or "Counter32", m["value"]
        elif parts[:3] == ["31", "1", "1"] and len(parts) == 5 and int(parts[3]) in NAME_OF_COLUMN:
            yield (m["pre"], "ipSystemStats" + NAME_OF_COLUMN[int(parts[3])], {"1": "ipv4", "2": "ipv6"}[parts[4]],
                   m["type"] or "Counter32", m["value"])


def oid(name: str, index: str) -> str:
    if name.startswith("ipSystemStats"):
        return f"1.3.6.1.2.1.4.31.1.1.{COLUMNS[name[len('ipSystemStats'):]]}.{ROW[index]}"
    return f"1.3.6.1.2.1.4.{SCALARS[name]}.0"


def plain(value: str) -> str:
    """The value as -Oe (enums as numbers) and -OU (no units) print it."""
    m = re.fullmatch(r"[a-zA-Z-]+\((\d+)\)", value)
    if m:
        return m.group(1)
    return value.split(" ")[0] if re.fullmatch(r"\d+ [a-z-]+", value) else value


RENDER = {
    "named": lambda p, n, i, t, v: f"{p}IP-MIB::{n}.{i} = {t}: {v}",
    "-On": lambda p, n, i, t, v: f"{p}.{oid(n, i)} = {t}: {v}",
    "no MIBs (iso.)": lambda p, n, i, t, v: f"{p}iso.{oid(n, i)[2:]} = {t}: {v}",
    "-Os": lambda p, n, i, t, v: f"{p}{n}.{i} = {t}: {v}",
    "-OQ": lambda p, n, i, t, v: f"{p}IP-MIB::{n}.{i} = {v}",
    "-OQs (LibreNMS)": lambda p, n, i, t, v: f"{p}{n}.{i} = {plain(v)}",
    "-Oq": lambda p, n, i, t, v: f"{p}IP-MIB::{n}.{i} {v}",
    "-Oqs": lambda p, n, i, t, v: f"{p}{n}.{i} {plain(v)}",
    "-Oqn": lambda p, n, i, t, v: f"{p}.{oid(n, i)} {plain(v)}",
    "-OX": lambda p, n, i, t, v: f"{p}IP-MIB::{n}[{i}] = {t}: {v}" if i != "0" else f"{p}IP-MIB::{n}.0 = {t}: {v}",
    "-Of": lambda p, n, i, t, v: f"{p}.iso.org.dod.internet.mgmt.mib-2.ip.{n}.{i} = {t}: {v}",
    "-Oe -OU": lambda p, n, i, t, v: f"{p}IP-MIB::{n}.{i} = {t}: {plain(v)}",
}
SNMP_FIXTURES = sorted((NETSTAT / "snmp").glob("*.txt"))


def counters(text: str):
    snaps = list(parsers.iter_parse(text, os="snmp"))
    return [(s.ipv4, s.ipv6, s.forwarding) for s in snaps]


@pytest.mark.parametrize("raw", SNMP_FIXTURES, ids=[p.name for p in SNMP_FIXTURES])
@pytest.mark.parametrize("form", sorted(RENDER))
def test_every_net_snmp_output_option_reads_the_same_counters(raw, form):
    text = decode(raw.read_bytes())
    found = list(objects(text))
    assert found, "the walk names no IP-MIB object"
    rendered = "\n".join(RENDER[form](*o) for o in found) + "\n"
    assert counters(rendered) == counters("\n".join(RENDER["named"](*o) for o in found) + "\n")
    # and every rendering is recognised as a walk without --os
    assert [s.os for s in parsers.iter_parse(rendered)] == ["snmp"], (form, rendered[:400])


def test_the_renderings_read_as_the_walk_itself():
    """The named rendering of each walk gives the walk's own counters (so the rule above compares like with like)."""
    for raw in SNMP_FIXTURES:
        text = decode(raw.read_bytes())
        named = "\n".join(RENDER["named"](*o) for o in objects(text)) + "\n"
        assert counters(named) == counters(text), raw.name


def test_a_tool_log_quoting_object_names_is_not_read_as_values():
    """LibreNMS debug output: the snmpget command line names the objects, the lines after it hold them."""
    log = ("SNMP['/usr/bin/snmpget' '-v2c' '-c' 'COMMUNITY' '-OQUs' '-m' 'IP-MIB' 'udp:HOSTNAME:161' "
           "'IP-MIB::ipReasmReqds.0' 'IP-MIB::ipReasmOKs.0' 'IP-MIB::ipFragCreates.0']\n"
           "ipReasmReqds.0 = 36298\nipReasmOKs.0 = 15808\nipFragCreates.0 = 0\n\n")
    warnings = []
    (snap,) = parsers.iter_parse(log, warn=warnings.append)
    assert (snap.os, snap.ipv4["ReasmReqds"], snap.ipv4["ReasmOKs"], snap.ipv4["FragCreates"]) == ("snmp", 36298, 15808, 0)
    assert not snap.warnings and not warnings


def test_the_reassembly_timer_is_never_a_count():
    for text in ("IP-MIB::ipReasmTimeout.0 = INTEGER: 30 seconds\nIP-MIB::ipReasmReqds.0 = Counter32: 4\n",
                 "ipReasmTimeout 30\nipReasmReqds 4\n"):                    # snmp_exporter's scalars
        (snap,) = parsers.iter_parse(text)
        assert snap.ipv4["ReasmTimeout"] is None and snap.ipv4["ReasmReqds"] == 4, snap.os


# ------------------------------------------------------------------ notes glued to values

@pytest.mark.parametrize("text,os_name,counter,want,note", [
    ("IPv4 Statistics\n\n  Reassembly Required = 0\uff08\u91cd\u7ec4\u7684\u8bf7\u6c42\u6570\uff09\n"
     "  Reassembly Successful = 5\n", "windows", "ReasmReqds", 0, "\u91cd\u7ec4\u7684\u8bf7\u6c42\u6570"),
    ("Ip:\n    477139 fragments dropped after timeout. //\u8ba1\u6570\u6301\u7eed\u4e0a\u6da8\n"
     "    12 reassemblies required\n", "linux", "ReasmTimeout", 477139, "\u8ba1\u6570\u6301\u7eed\u4e0a\u6da8"),
    ("Ip:\n    12 reassemblies required <-- this keeps growing\n    5 packets reassembled ok\n",
     "linux", "ReasmReqds", 12, "this keeps growing"),
    ("IPv4 Statistics\n\n  Reassembly Required = 7.\n  Reassembly Successful = 3\n", "windows", "ReasmReqds", 7,
     "period"),
    ("ip:\n\t20 fragments received # was 12 an hour ago\n\t10 datagrams reassembled\n", "bsd", "ReasmReqds", 20,
     "was 12 an hour ago"),
])
def test_a_note_glued_to_a_value_costs_neither_the_value_nor_the_note(text, os_name, counter, want, note):
    warnings = []
    snaps = list(parsers.iter_parse(text, os=os_name, warn=warnings.append))
    assert snaps and snaps[0].ipv4[counter] == want
    assert any(note in w for w in snaps[0].warnings), snaps[0].warnings


def test_notes_never_eat_prompts_urls_or_comment_lines():
    from parsers.paste import unglue
    lines = ["root@fw01:~ # netstat -s", "// IP-MIB::ipReasmReqds.0 = Counter32: 5", "see http://example.org/12",
             "R1#show ip traffic", "However, no stats are increased on R1."]
    assert unglue(lines) == (lines, [])


def test_every_glued_note_paste_in_the_fixtures_keeps_its_numbers():
    """A fixture line with a value and a note after it: its value is read (the note is in the warnings)."""
    from parsers.paste import unglue
    seen = 0
    for raw in sorted(NETSTAT.glob("*/*.txt")):
        text = decode(raw.read_bytes())
        lines = text.splitlines()
        kept, notes = unglue(lines)
        if not notes:
            continue
        seen += 1
        snaps = list(parsers.iter_parse(text))
        said = [w for s in snaps for w in s.warnings]
        for note in notes:
            assert note in said, (raw.name, note)
    assert seen >= 1           # windows/q155758_nt4_tabs.txt: `= 10395    <-------`


# ------------------------------------------------------------------ Prometheus value rules

@pytest.mark.parametrize("value,want", [("335480", 335480), ("1.0311356e+07", 10311356), ("6.28639697e+09", 6286396970),
                                        ("5.668", None), ("NaN", None), ("-1", None), ("+Inf", None),
                                        ("1.8446744073709552e+19", None), ("5,668", None)])
def test_a_metric_value_is_a_counter_only_when_exact(value, want):
    text = f'ipSystemStatsReasmReqds{{ipSystemStatsIPVersion="1"}} {value}\n'
    (snap,) = parsers.iter_parse(text)
    assert snap.ipv4["ReasmReqds"] == want
    if want is None:
        assert snap.warnings


def test_a_scrape_of_many_hosts_is_many_hosts():
    text = ('# TYPE node_netstat_Ip_ReasmReqds untyped\n'
            'node_netstat_Ip_ReasmReqds{instance="web1.example.com:9100",job="node"} 40 1742837823000\n'
            'node_netstat_Ip_ReasmReqds{instance="[2001:db8::7]:9100",job="node"} 7 1742837823000\n'
            'node_netstat_Ip_ReasmOKs{instance="web1.example.com:9100",job="node"} 20 1742837823000\n'
            'node_netstat_Ip_ReasmOKs{instance="[2001:db8::7]:9100",job="node"} 3 1742837823000\n')
    snaps = list(parsers.iter_parse(text))
    assert [(s.host, s.ipv4["ReasmReqds"], s.ipv4["ReasmOKs"]) for s in snaps] == \
        [("web1.example.com", 40, 20), ("2001:db8::7", 7, 3)]
    assert {s.taken_at for s in snaps} == {"2025-03-24T17:37:03+00:00"}
