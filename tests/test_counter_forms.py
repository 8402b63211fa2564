"""The IP-MIB counters in the other forms they travel in: every net-snmp output option, notes
glued to values, Prometheus exposition (mssdiag's own included) and line protocol.

The SNMP renderings are made by rule from each real walk under fixtures/netstat/snmp/, with
the object identifiers written out here from RFC 1213 and RFC 4293 (not taken from the
parser), so a name the reader maps wrongly changes the counters.
"""
from __future__ import annotations

import json
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
           "OutFragOKs": 27, "OutFragFails": 28, "OutFragCreates": 29, "OutTransmits": 30, "HCOutTransmits": 31,
           "OutOctets": 32, "HCOutOctets": 33, "InMcastPkts": 34, "HCInMcastPkts": 35, "InMcastOctets": 36,
           "HCInMcastOctets": 37, "OutMcastPkts": 38, "HCOutMcastPkts": 39, "OutMcastOctets": 40,
           "HCOutMcastOctets": 41, "InBcastPkts": 42, "HCInBcastPkts": 43, "OutBcastPkts": 44, "HCOutBcastPkts": 45}
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
    "-On quoted in code": lambda p, n, i, t, v: f"{p}  '.{oid(n, i)} = {t}: {v}',",
}
SNMP_FIXTURES = sorted((NETSTAT / "snmp").glob("*.txt"))


def counters(text: str):
    """The headline counters of each snapshot, and every counter with a standard name (their
    labels are the objects as each form prints them)."""
    snaps = list(parsers.iter_parse(text, os="snmp"))
    return [(s.ipv4, s.ipv6, s.forwarding, sorted((c["name"], c["value"]) for c in s.counters if c["name"]))
            for s in snaps]


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


def test_a_default_node_exporter_scrape_is_a_snapshot_whose_counters_are_unknown():
    """node_exporter's default netstat fields: Ip_Forwarding and octets, no fragment counter.
    Each host is a snapshot with the counters null and a warning naming the flag; one widened
    metric (a cut excerpt) is read as it stands, without that warning."""
    text = ('node_netstat_Ip_Forwarding{instance="r1:9100"} 1\n'
            'node_netstat_Ip6_InOctets{instance="r1:9100"} 6.097969e+06\n'
            'node_netstat_IpExt_InOctets{instance="h2:9100"} 2.221879711e+09\n'
            'node_netstat_Tcp_CurrEstab{instance="h2:9100"} 2\n')
    snaps = list(parsers.iter_parse(text))
    assert [(s.os, s.host, s.forwarding, s.ipv6 is not None) for s in snaps] == \
        [("prometheus", "r1", True, True), ("prometheus", "h2", None, False)]
    for s in snaps:
        assert set(s.ipv4.values()) == {None}
        assert any("--collector.netstat.fields" in w for w in s.warnings)
    (cut,) = parsers.iter_parse("node_netstat_Ip_Forwarding 1\nnode_netstat_Ip_ForwDatagrams 4.5605107e+07\n")
    assert cut.ipv4["ForwDatagrams"] == 45605107 and not cut.warnings


def test_a_default_node_exporter_scrape_never_outranks_a_dump_that_shows_counters():
    scrape = (NETSTAT / "prometheus" / "netns_node_exporter_default_fields.txt").read_text()
    dump = (NETSTAT / "linux" / "netns-cron-date-netstat-s.txt").read_text()
    assert parsers.detect(dump + "\n" + scrape)[0][0] == "linux"
    assert parsers.detect(scrape)[0][0] == "prometheus"


# ------------------------------------------------------------------ agents' JSON

def agent(text: str, **kw):
    warnings = []
    snaps = list(parsers.iter_parse(text, warn=warnings.append, **kw))
    return snaps, warnings


def test_telegraf_json_documents_of_one_host_and_time_are_one_snapshot_and_hosts_stay_apart():
    """Telegraf's JSON serializer: {"fields", "name", "tags", "timestamp"}; nstat sends its netstat,
    snmp and snmp6 groups as three metrics of one collection."""
    lines = []
    for host, reqds in (("db1", 40), ("db2", 7)):
        lines += [json.dumps({"fields": {"IpExtInOctets": 9}, "name": "nstat", "tags": {"host": host, "name": "netstat"},
                              "timestamp": 1558261410}),
                  json.dumps({"fields": {"IpReasmReqds": reqds, "IpReasmOKs": 2, "IpForwarding": 2}, "name": "nstat",
                              "tags": {"host": host, "name": "snmp"}, "timestamp": 1558261410}),
                  json.dumps({"fields": {"Ip6ReasmFails": 1}, "name": "nstat", "tags": {"host": host, "name": "snmp6"},
                              "timestamp": 1558261410})]
    snaps, _ = agent("\n".join(lines) + "\n")
    assert [(s.os, s.host, s.ipv4["ReasmReqds"], s.ipv4["ReasmOKs"], s.ipv6["ReasmFails"], s.forwarding) for s in snaps] == \
        [("agentjson", "db1", 40, 2, 1, False), ("agentjson", "db2", 7, 2, 1, False)]
    assert {s.taken_at for s in snaps} == {"2019-05-19T10:23:30+00:00"}
    assert snaps[0].ipv4["FragOKs"] is None            # not shown (nstat's dump_zeros off): unknown, never 0


def test_grouped_mib_names_string_values_and_the_reassembly_timer():
    """metricbeat's network_summary ip / ip6 objects with ECS host.name; sflowtool's strings and
    RFC 1213's ipReasmTimeout (the timer: kept in raw, never a count)."""
    beat = {"@timestamp": "2017-10-12T08:05:34.853Z", "host": {"name": "web1"},
            "system": {"network_summary": {"ip": {"ReasmReqds": 12, "FragCreates": 4, "Forwarding": 1},
                                           "ip6": {"ReasmOKs": 3}}}}
    (snap,), _ = agent(json.dumps(beat, indent=2) + "\n")
    assert (snap.host, snap.ipv4["ReasmReqds"], snap.ipv4["FragCreates"], snap.ipv6["ReasmOKs"], snap.forwarding) == \
        ("web1", 12, 4, 3, True)
    sflow = '{"counterBlock_tag":"0:2007","ipReasmTimeout":"30","ipReasmReqds":"5","ipFragOKs":"2"}\n' \
            '{"counterBlock_tag":"0:2000","hostname":"sw9"}\n'
    (snap,), _ = agent(sflow)
    assert (snap.host, snap.ipv4["ReasmReqds"], snap.ipv4["FragOKs"], snap.ipv4["ReasmTimeout"]) == ("sw9", 5, 2, None)
    assert snap.raw["ipReasmTimeout"] == "30"


@pytest.mark.parametrize("shown,why", [('"12x"', "not a whole number"), ("1.5", "not a whole number"),
                                       ("-3", "not a whole number"), ("1e+30", "above 2**53")])
def test_an_agent_value_that_is_no_counter_is_null_with_a_warning(shown, why):
    (snap,), _ = agent('{"hostname": "h", "IpReasmFails": %s, "IpReasmReqds": 8}\n' % shown)
    assert snap.ipv4["ReasmFails"] is None and snap.ipv4["ReasmReqds"] == 8
    assert any("IpReasmFails" in w and why in w for w in snap.warnings), snap.warnings


def test_a_hard_wrapped_json_paste_is_read_whole_with_a_warning():
    doc = json.dumps({"fields": {"ip_reasmreqds": 31, "ip_forwdatagrams": 5, "ip_fragcreates": 8}, "name": "net",
                      "tags": {"host": "telegraf", "interface": "all"}, "timestamp": 1558261410})
    wrapped = "\n".join(doc[i:i + 40] for i in range(0, len(doc), 40)) + "\n"
    (snap,), _ = agent(wrapped)
    assert (snap.ipv4["ReasmReqds"], snap.ipv4["ForwDatagrams"], snap.ipv4["FragCreates"]) == (31, 5, 8)
    assert any("hard-wrapped" in w for w in snap.warnings)


def test_nstat_json_stays_with_the_linux_reader():
    (snap,), _ = agent('{"kernel":{"IpReasmReqds":4,"IpReasmOKs":2,"TcpInSegs":9}}\n')
    assert (snap.os, snap.format, snap.ipv4["ReasmReqds"]) == ("linux", "nstat -j", 4)
    (snap,), _ = agent('$ nstat -j -a\n{"kernel":{"IpReasmReqds":4,"IpReasmOKs":2,"TcpInSegs":9}}\n')
    assert (snap.os, snap.ipv4["ReasmReqds"]) == ("linux", 4)     # after its prompt too


def test_a_collectd_value_list_pasted_twice_is_read_once():
    lines = (NETSTAT / "agentjson" / "netns_collectd_write_log_json.txt").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"type_instance":"ReasmOKs"' in line)
    once, _ = agent("\n".join(lines) + "\n")
    twice, _ = agent("\n".join(lines[:at + 1] + lines[at:]) + "\n")
    assert [(s.host, s.ipv4) for s in twice] == [(s.host, s.ipv4) for s in once]
    assert any("shown twice" in w for s in twice for w in s.warnings)


# ------------------------------------------------------------------ every counter in the metric forms

PMTUD = ("ptb-received", "ptb-sent", "timeouts-without-ptb", "plpmtud-active", "blackhole-detected")
KERNEL_GROUPS = ("Ip6", "IpExt", "Ip", "Icmp6", "IcmpMsg", "Icmp", "TcpExt", "Tcp", "UdpLite6", "UdpLite", "Udp6",
                 "Udp", "MPTcpExt")    # the kernel's /proc/net/{snmp,netstat,snmp6} groups, longest first


def nstat_counters(text: str):
    """(name, value) of every `Name value rate` line of an `nstat -az` text."""
    return [(m[1], int(m[2])) for m in re.finditer(r"^([A-Z][A-Za-z0-9]+)\s+([0-9]+)\s+[0-9.]+\s*$", text, re.M)]


def go_float(value: int) -> str:
    """An integer as client_golang prints a sample (strconv 'g', shortest): exponent form from 1e6 up."""
    if value < 10 ** 6:
        return str(value)
    digits = str(value).rstrip("0")
    return f"{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e+{len(str(value)) - 1:02d}"


def as_node_exporter(text: str) -> str:
    """The same counters as node_exporter's netstat collector names them: node_netstat_<Group>_<Field>,
    the group the kernel's table header names (snmp6's `Ip6InReceives`: up to the `6`)."""
    out = []
    for name, value in nstat_counters(text):
        group = next(g for g in KERNEL_GROUPS if name.startswith(g))
        metric = f"node_netstat_{group}_{name[len(group):]}"
        out += [f"# HELP {metric} Statistic {group}{name[len(group):]}.", f"# TYPE {metric} untyped",
                f"{metric} {go_float(value)}"]
    return "\n".join(out) + "\n"


def as_telegraf_nstat(text: str) -> str:
    """The same counters as Telegraf's nstat input writes them in line protocol: one line per file it
    reads (name=netstat, snmp, snmp6), fields named as nstat names them."""
    files = {"netstat": ("TcpExt", "IpExt", "MPTcpExt"), "snmp6": ("Ip6", "Icmp6", "Udp6", "UdpLite6")}
    lines = {}
    for name, value in nstat_counters(text):
        file = next((f for f, groups in files.items() if name.startswith(groups)), "snmp")
        lines.setdefault(file, []).append(f"{name}={value}i")
    return "".join(f"nstat,host=client,name={f} {','.join(fields)} 1795820621000000000\n" for f, fields in lines.items())


def pmtud_findings(text: str, os_name=None):
    from toolkit.rules import catalog
    from toolkit.hostfile import HostFacts
    from toolkit.hosts import Host, deltas
    h = Host(HostFacts("client", os="linux"))
    h.snapshots = parsers.parse(text, source="t", os=os_name)
    h.deltas = deltas(h.snapshots)
    titles = [parsers.REGISTRY[n].META.title for n in ("prometheus", "influx", "linux")]
    return [(f.code, f.severity, f.title, [re.sub(r"last snapshot [^)]*", "last snapshot", re.sub(
                "|".join(map(re.escape, titles)), "FORMAT", e)) for e in f.evidence])
            for f in catalog.evaluate(h) if f.code in PMTUD]


@pytest.mark.parametrize("render", [as_node_exporter, as_telegraf_nstat], ids=["node_exporter", "telegraf nstat"])
@pytest.mark.parametrize("fixture", ["netns-client-blackhole-nstat-az.txt", "netns-client-probing2-nstat-az.txt"])
def test_a_metric_scrape_gives_triage_the_same_pmtud_evidence_as_nstat(render, fixture):
    text = (NETSTAT / "linux" / fixture).read_text()
    metrics = render(text)
    (snap,) = parsers.parse(metrics)
    assert snap.os in ("prometheus", "influx")
    (dump,) = parsers.parse(text)
    want = {c["name"]: c["value"] for c in dump.counters if c["name"]}
    assert {c["name"]: c["value"] for c in snap.counters} == {k: v for k, v in want.items()
                                                              if k not in ("IpForwarding", "IpDefaultTTL")}
    from parsers.model import signal_values
    assert signal_values(parsers.REGISTRY[snap.os].META, snap.counters).keys() == \
        signal_values(parsers.REGISTRY["linux"].META, dump.counters).keys()
    found = pmtud_findings(metrics)
    assert found == pmtud_findings(text)
    assert found, "the fixture shows PMTUD evidence"


def test_every_counter_of_a_scrape_stays_with_its_host():
    text = ('node_netstat_TcpExt_TCPTimeouts{instance="web1:9100",job="node"} 9\n'
            'node_netstat_Ip_ReasmReqds{instance="web1:9100",job="node"} 40\n'
            'node_netstat_TcpExt_TCPTimeouts{instance="web2:9100",job="node"} 2\n'
            'node_netstat_Icmp_InDestUnreachs{instance="web2:9100",job="node"} 5\n'
            'node_netstat_Ip_ReasmReqds{instance="web2:9100",job="node"} 7\n')
    snaps = list(parsers.iter_parse(text))
    assert [(s.host, [(c["section"], c["label"], c["name"], c["value"]) for c in s.counters]) for s in snaps] == [
        ("web1", [("node_netstat", "node_netstat_TcpExt_TCPTimeouts", "TcpExtTCPTimeouts", 9),
                  ("node_netstat", "node_netstat_Ip_ReasmReqds", "IpReasmReqds", 40)]),
        ("web2", [("node_netstat", "node_netstat_TcpExt_TCPTimeouts", "TcpExtTCPTimeouts", 2),
                  ("node_netstat", "node_netstat_Icmp_InDestUnreachs", "IcmpInDestUnreachs", 5),
                  ("node_netstat", "node_netstat_Ip_ReasmReqds", "IpReasmReqds", 7)])]


def test_a_counter_shown_twice_is_unknown_with_one_warning():
    text = ('node_netstat_Ip_ReasmReqds 40\nnode_netstat_Ip_ReasmReqds 41\n'
            'node_netstat_TcpExt_TCPTimeouts 3\nnode_netstat_TcpExt_TCPTimeouts 4\n')
    (snap,) = parsers.iter_parse(text)
    assert snap.ipv4["ReasmReqds"] is None
    assert [(c["name"], c["value"]) for c in snap.counters] == [("IpReasmReqds", None), ("TcpExtTCPTimeouts", None)]
    assert len([w for w in snap.warnings if "twice" in w]) == 2


def test_settings_and_unknown_metrics_are_no_counters():
    text = ('node_netstat_Ip_Forwarding 1\nnode_netstat_Ip_DefaultTTL 64\nnode_netstat_Ip_ReasmReqds 4\n'
            'node_netstat_Tcp_RtoMin 200\nnode_sockstat_TCP_inuse 5\n'
            'ipReasmTimeout 60\nipReasmOKs 2\n# TYPE ipAdEntIfIndex gauge\nipAdEntIfIndex{ipAdEntAddr="10.0.0.1"} 2\n'
            '# TYPE ipSystemStatsOutFragReqds counter\nipSystemStatsOutFragReqds{ipSystemStatsIPVersion="1"} 3\n')
    (snap,) = parsers.iter_parse(text)
    assert [(c["label"], c["name"], c["value"]) for c in snap.counters] == [
        ("node_netstat_Ip_ReasmReqds", "IpReasmReqds", 4), ("ipReasmOKs", "IpReasmOKs", 2),
        ('ipSystemStatsOutFragReqds{ipSystemStatsIPVersion="1"}', None, 3)]


def test_telegraf_net_fields_get_the_kernel_names():
    text = ("net,interface=all,host=h ip_reasmfails=0i,icmp_indestunreachs=11005i,tcp_retranssegs=14669i,"
            "icmpmsg_outtype3=7i,udp_ignoredmulti=2i,ip_forwarding=1i 1492831540000000000\n")
    (snap,) = parsers.iter_parse(text)
    assert [(c["label"], c["name"], c["value"]) for c in snap.counters] == [
        ("ip_reasmfails", "IpReasmFails", 0), ("icmp_indestunreachs", "IcmpInDestUnreachs", 11005),
        ("tcp_retranssegs", "TcpRetransSegs", 14669), ("icmpmsg_outtype3", "IcmpMsgOutType3", 7),
        ("udp_ignoredmulti", "UdpIgnoredMulti", 2)]


def test_agent_json_keyed_by_nstat_names_keeps_every_counter():
    doc = {"netstatistics": {"IpReasmFails": 3, "TcpExtTCPTimeouts": 12, "IcmpInDestUnreachs": 0,
                             "IpAddress": "10.0.0.1"}, "hostname": "c1"}
    (snap,) = parsers.iter_parse(json.dumps(doc) + "\n")
    assert snap.host == "c1"
    assert [(c["section"], c["label"], c["name"], c["value"]) for c in snap.counters] == [
        ("netstatistics", "IpReasmFails", "IpReasmFails", 3),
        ("netstatistics", "TcpExtTCPTimeouts", "TcpExtTCPTimeouts", 12),
        ("netstatistics", "IcmpInDestUnreachs", "IcmpInDestUnreachs", 0)]


def test_icmp_tcp_udp_objects_read_alike_named_and_numeric():
    """The icmp, tcp and udp groups' scalars by their RFC 1213 / 4022 / 4113 numbers, beside a walk's ip objects."""
    numbers = {"icmpInDestUnreachs": "5.3", "icmpOutDestUnreachs": "5.16", "tcpRetransSegs": "6.12",
               "tcpOutSegs": "6.11", "udpNoPorts": "7.2", "tcpHCInSegs": "6.17"}
    mib = {"icm": "IP-MIB", "tcp": "TCP-MIB", "udp": "UDP-MIB"}
    head = "IP-MIB::ipReasmReqds.0 = Counter32: 4\n"
    named = head + "".join(f"{mib[n[:3]]}::{n}.0 = Counter{'64' if 'HC' in n else '32'}: {k}\n"
                           for k, n in enumerate(numbers, 1))
    numeric = ".1.3.6.1.2.1.4.14.0 = Counter32: 4\n" + "".join(
        f".1.3.6.1.2.1.{o}.0 = Counter{'64' if 'HC' in n else '32'}: {k}\n" for k, (n, o) in enumerate(numbers.items(), 1))
    got = [[(c["name"], c["value"]) for c in parsers.parse(t, os="snmp")[0].counters] for t in (named, numeric)]
    assert got[0] == got[1] == [("IpReasmReqds", 4), ("IcmpInDestUnreachs", 1), ("IcmpOutDestUnreachs", 2),
                                ("TcpRetransSegs", 3), ("TcpOutSegs", 4), ("UdpNoPorts", 5), (None, 6)]
