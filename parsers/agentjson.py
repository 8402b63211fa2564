"""Monitoring agents' JSON: IP-MIB counters inside the documents agents ship.

Agents read /proc/net/snmp (and snmp6) or IP-MIB and send the counters as JSON objects,
keyed by nstat names, by MIB names, or by MIB names under an `ip` / `ip6` object:

    {"fields": {"IpReasmFails": 0, ...}, "name": "nstat", "tags": {"host": "db1"}, "timestamp": 1558261410}
    {"fields": {"ip_reasmfails": 0, ...}, "name": "net", "tags": {"host": "db1", "interface": "all"}, ...}
                                                        Telegraf, JSON output format (nstat and net inputs)
    {"system": {"network_summary": {"ip": {"ReasmFails": 0, ...}}}, "host": {"name": "web1"}, ...}
                                                        metricbeat system/network_summary
    {"counterBlock_tag": "0:2007", "ipReasmReqds": "0", ...}, {"hostname": "r1", ...}
                                                        sflowtool -J (host-sflow IP counters)
    [{"values": [3], "host": "db1", "plugin": "protocols", "plugin_instance": "Ip", "type_instance": "ReasmFails", ...}]
                                                        collectd protocols plugin, write_log / write_http JSON
    {"netstatistics": {"IpReasmFails": 0, "Ip6ReasmOKs": 0, ...}}, {"hostname": "c1"}
                                                        any agent keyed by nstat names

Every JSON document in the text is read (JSON Lines, concatenated or pretty-printed documents,
with log lines or a shell prompt between them). The host is the document's own: Telegraf's
`tags.host`, ECS `host.name` / `host.hostname` / `agent.hostname`, else the shallowest
`hostname` or `host` string (in an excerpt whose objects name one host only, that host); the
time is its `@timestamp` or `timestamp`. Documents of one host
and time are one snapshot (Telegraf's nstat sends netstat, snmp and snmp6 apart; collectd one
value list per counter, all of one read at the same time); many hosts or
times are many snapshots. A JSON text broken across lines by a terminal (a line break inside a
key) is read with its line breaks taken out, with a warning. `{"kernel": ...}` documents are
`nstat -j` output, read by the Linux parser.
"""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Dict, Iterator, List, Optional, Tuple

from ._needs import needs
from . import base, linux, prometheus
from .model import ALL, Meta, ParseError, Reading, to_int
from .lazyre import lazy


META = Meta(
    name="agentjson",
    role="any",
    title="Monitoring agents' JSON (Telegraf, metricbeat, sFlow, nstat-keyed documents)",
    covers=("Telegraf nstat and net inputs with the JSON output format",
            "metricbeat system module, network_summary metricset (system.network_summary.ip / ip6)",
            "sflowtool -J output of host-sflow agents (ipReasmReqds... in the 0:2007 IP counter block)",
            "collectd protocols plugin through write_log or write_http with the JSON format",
            "any agent's JSON keyed by nstat names (IpReasmFails, Ip6FragOKs...)"),
    formats=("JSON Lines, concatenated or pretty-printed documents, log lines between them",
             "a JSON text hard-wrapped by a terminal (read with its line breaks taken out, warned)",
             "many hosts and times in one text: one snapshot per host and time"),
    ipv4=ALL,
    ipv6=ALL,
    reasm_unit="both",
    timeout_unit="datagrams",
    signals=linux.META.signals,
    semantics=(
        "The agents copy the kernel's or the agent's own IP-MIB counters: nstat names (IpReasmReqds, "
        "Ip6FragCreates; Telegraf's net input lower-cases them as ip_reasmreqds) and metricbeat's ip / ip6 "
        "objects and collectd's protocols plugin (plugin_instance Ip, type_instance ReasmFails) are Linux's "
        "/proc/net/snmp and snmp6, so Linux semantics apply (ReasmTimeout counts "
        "datagrams given up). MIB scalar names (ipReasmReqds..., sFlow's host IP counters) follow RFC 1213: "
        "their ipReasmTimeout is the reassembly timer, a setting, kept in raw and never read as "
        "ReasmTimeout. Forwarding 1 (ipForwarding 1) means a router, 2 a host. Values are JSON integers or "
        "strings of digits (sFlow); a float is read only when it is a whole number below 2**53. A counter a "
        "document does not show is unknown: Telegraf's nstat leaves zero fields out unless dump_zeros is set. Every "
        "counter keyed by an nstat name (TcpExtTCPTimeouts, IcmpInDestUnreachs), a MIB name (icmpInDestUnreachs) or, "
        "under metricbeat's group objects, a field the kernel has there, is kept (`counters`): the Linux ones give "
        "triage the same PMTUD evidence as nstat -az."),
)

# a key as agents spell a counter; the first group of its path decides nothing else
_NSTAT_KEY = lazy(r"Ip6?(?:Reasm|Frag|In|Out|Forw)[A-Za-z]+")
_MIB_KEY = lazy(r"ip(?:Reasm|Frag|InReceives|InDelivers|OutRequests|ForwDatagrams|Forwarding)[A-Za-z]*|ipv6IpForwarding")
_NET_KEY = lazy(r"ip6?_[a-z]+")
_GROUPS = {"ip": "Ip", "ipv4": "Ip", "ip4": "Ip", "ip6": "Ip6", "ipv6": "Ip6"}
_HOST_KEYS = ("hostname", "host_name", "host", "agent_host")
_TIME_KEYS = ("@timestamp", "timestamp", "time")

_DETECT = needs(lazy(
    r'"(?:Ip6?(?:Reasm|Frag)[A-Za-z]+|ip(?:Reasm|Frag)[A-Za-z]+|ip6?_(?:reasm|frag)[a-z]+'
    r'|(?:Reasm|Frag)(?:Reqds|OKs|Fails|Creates|Timeout))"[ \t]*:'
    r'|"plugin_instance"[ \t]*:[ \t]*"Ip6?"'),
    '"IpReasm', '"IpFrag', '"Ip6Reasm', '"Ip6Frag', '"ipReasm', '"ipFrag', '"ip_reasm', '"ip_frag', '"ip6_',
    '"Reasm', '"Frag', '"plugin_instance"', fold=False)
_NSTAT_J = lazy(r'\{\s*"kernel"\s*:\s*\{')       # nstat -j, wherever it sits: the linux reader's
MAX_TRIES = 2000          # failed decode attempts in one text before giving up on the rest


def detect(text: str) -> float:
    if "{" not in text or _NSTAT_J.search(text[:1 << 20]):
        return 0.0
    hits = len(_DETECT.findall(text[:1 << 20]))
    return min(1.0, 0.9 + 0.02 * hits) if hits else 0.0


def documents(text: str) -> Iterator[object]:
    """Every JSON object in a text, whatever lies between them (log lines, prompts, fences)."""
    decoder = json.JSONDecoder()
    at = 0
    failed = 0
    while failed < MAX_TRIES:
        start = text.find("{", at)
        if start < 0:
            return
        try:
            doc, end = decoder.raw_decode(text, start)
        except ValueError:
            failed += 1
            at = start + 1
            continue
        yield doc
        at = end


def _what(path: Tuple[str, ...], key: str, measurement: Optional[str]):
    """(family, counter, HC twin) of a document's key, as parsers/prometheus.py names it."""
    if measurement:                                   # Telegraf: the measurement names the field
        hit = prometheus.metric(f"{measurement}_{key}", {})
        if hit:
            return hit
    if _NSTAT_KEY.fullmatch(key):
        return prometheus.metric(f"nstat_{key}", {})
    if _MIB_KEY.fullmatch(key):
        return prometheus.metric(key, {})
    if _NET_KEY.fullmatch(key):
        return prometheus.metric(f"net_{key}", {})
    group = _GROUPS.get(path[-1].lower()) if path else None
    if group:                                         # metricbeat: {"ip": {"ReasmFails": 0}}
        return prometheus.metric(f"netstat_{group}_{key}", {})
    return None


_LOWER_KEY = lazy(r"[a-z0-9]+_[a-z0-9]+")


def _counter(path: Tuple[str, ...], key: str, measurement: Optional[str], value: object):
    """(section, standard name or None) of a document's key among every counter (model.Counter),
    as parsers/prometheus.py names it, or None. A key counts only where its source is sure (an
    nstat or MIB name, a Telegraf measurement's field, a group object's known field) and its value
    is a number or a string of one (a key such as IpAddress holding "10.0.0.1" is no counter)."""
    if isinstance(value, str):
        try:
            to_int(value)
        except ParseError:
            return None
    section = ".".join(path) if path else "(top)"
    if measurement:
        hit = prometheus.counter_of(f"{measurement}_{key}", {})
        return (measurement, hit[1]) if hit else None
    if key.isascii() and key.isalnum() and linux.kernel_group(key):
        hit = prometheus.counter_of(f"nstat_{key}", {})
    elif prometheus.MIB_NAME.fullmatch(key):
        hit = prometheus.counter_of(key, {})
    elif _LOWER_KEY.fullmatch(key):
        hit = prometheus.counter_of(f"net_{key}", {})      # net's ip_reasmfails; ip_address is none
        hit = hit if hit and hit[1] else None
    elif path and path[-1].lower() in ("ip", "ip6", "ipv4", "ipv6", "icmp", "tcp", "udp"):
        # metricbeat's {"ip": {"ReasmFails": 0}}: the object names the group; only a field the
        # kernel has under that group is read
        group = _GROUPS.get(path[-1].lower(), path[-1])
        name = linux.nstat_name(group, key.lower())
        hit = None if name is None or name in linux.SETTINGS else ("", name)
    else:
        hit = None
    return (section, hit[1]) if hit else None


def _scalars(node: object, path: Tuple[str, ...] = ()) -> Iterator[Tuple[Tuple[str, ...], str, object]]:
    if isinstance(node, dict) and node.get("plugin") == "protocols" and isinstance(node.get("values"), list) \
            and len(node["values"]) == 1 and isinstance(node.get("type_instance"), str):
        # collectd's value list: {"plugin": "protocols", "plugin_instance": "Ip", "type_instance": "ReasmFails",
        # "values": [3], ...}: the counter is plugin_instance + type_instance, nstat's name
        yield ("collectd", "protocols"), f"{node.get('plugin_instance', '')}{node['type_instance']}", node["values"][0]
        return
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                yield from _scalars(value, path + (str(key),))
            else:
                yield path, str(key), value
    elif isinstance(node, list):
        for item in node:
            yield from _scalars(item, path)


def _shallowest(doc: object, test) -> Optional[object]:
    """The first value, breadth first, for which test(key, value) gives something."""
    level = [doc]
    while level:
        nxt = []
        for node in level:
            items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
            for key, value in items:
                found = test(key, value)
                if found is not None:
                    return found
                if isinstance(value, (dict, list)):
                    nxt.append(value)
        level = nxt
    return None


def host_of(doc: object) -> Optional[str]:
    if isinstance(doc, dict):
        tags = doc.get("tags")
        if isinstance(tags, dict) and isinstance(tags.get("host"), str):
            return tags["host"]                       # Telegraf
        for outer, inner in (("host", "name"), ("host", "hostname"), ("agent", "hostname"), ("beat", "hostname")):
            node = doc.get(outer)
            if isinstance(node, dict) and isinstance(node.get(inner), str) and node[inner]:
                return node[inner]                    # Elastic Common Schema, older beats

    def test(key, value):
        return value if key in _HOST_KEYS and isinstance(value, str) and value.strip() else None
    return _shallowest(doc, test)


def time_of(doc: object) -> Optional[str]:
    def test(key, value):
        if key not in _TIME_KEYS or isinstance(value, bool):
            return None
        if isinstance(value, (int, float)) and value > 0:
            seconds = value / 1e9 if value > 1e17 else value / 1e6 if value > 1e14 else \
                value / 1e3 if value > 1e11 else value
            return base.epoch_iso(seconds)
        if isinstance(value, str):
            try:
                when = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return None
            return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).astimezone(timezone.utc).isoformat()
        return None
    return _shallowest(doc, test)


def _format(doc: object) -> str:
    if isinstance(doc, dict) and "fields" in doc and "name" in doc:
        return "Telegraf JSON"
    if isinstance(doc, dict) and "type_instance" in doc and "dstypes" in doc:
        return "collectd JSON"
    text = json.dumps(doc)[:4096]
    if "network_summary" in text or '"metricset"' in text:
        return "metricbeat JSON"
    if "counterBlock_tag" in text:
        return "sFlow JSON (sflowtool)"
    return "agent JSON"


def _read(text: str) -> List[prometheus.Series]:
    moments: Dict[Tuple[Optional[str], Optional[str]], prometheus.Series] = {}
    named = set()
    reads: Dict[Optional[str], list] = {}    # collectd: host -> [read number, {counter: (time, values)}, time]
    dups: Dict[Tuple[Optional[str], int], List[str]] = {}
    for doc in documents(text):
        host = host_of(doc)
        if host is not None:
            named.add(host)
        read = None
        if isinstance(doc, dict) and "type_instance" in doc and "dstypes" in doc:
            # one collectd value list a counter, their times a few milliseconds apart: a read ends
            # where a counter it holds comes again
            state = reads.setdefault(host, [0, {}, None])
            name = f"{doc.get('plugin_instance', '')}/{doc.get('type_instance')}"
            stamp = (json.dumps(doc.get("time")), json.dumps(doc.get("values")))
            if state[1].get(name) == stamp:
                # the same value list again (a line pasted twice, a POST sent again): read once
                dups.setdefault((host, state[0]), []).append(name)
                continue
            if name in state[1]:
                state[0], state[1], state[2] = state[0] + 1, {}, None
            state[1][name] = stamp
            state[2] = state[2] or time_of(doc)
            read = state
        measurement = doc.get("name") if isinstance(doc, dict) and isinstance(doc.get("fields"), dict) \
            and isinstance(doc.get("name"), str) else None
        series = None
        for path, key, value in _scalars(doc):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                continue
            what = _what(path, key, measurement)
            kind = _counter(path, key, measurement, value)
            if what is None and kind is None:
                continue
            if series is None:
                when = time_of(doc) if read is None else read[2]
                ident = (host, when if read is None else f"collectd read {read[0]}")
                series = moments.get(ident)
                if series is None:
                    series = moments[ident] = prometheus.Series(_format(doc), host, when)
            shown = value if isinstance(value, str) else json.dumps(value)
            section, label = (kind or ("", ""))[0], key
            if path == ("collectd", "protocols"):      # shown as plugin_instance and type_instance
                section, label = f"{section}.{doc.get('plugin_instance', '')}", doc["type_instance"]
            series.take(".".join(path + (key,)), shown, shown.strip(), what,
                        None if kind is None else (section, label, kind[1]))
    for (host, number), names in dups.items():
        series = moments.get((host, f"collectd read {number}"))
        if series is not None:
            series.reading.warnings.append(f"collectd value list shown twice with the same time and value "
                                           f"({', '.join(names[:3])}{', ...' if len(names) > 3 else ''}): read once")
    if len(named) == 1:
        # an excerpt of one agent's output: its counters and its name in separate objects
        for series in moments.values():
            series.reading.host = series.reading.host or next(iter(named))
    return list(moments.values())


def read(lines: List[str]) -> Reading:
    text = "\n".join(lines)
    moments = _read(text)
    out = [r for r in (m.finish() for m in moments) if r is not None]
    if not out and len(lines) > 1:
        # a terminal hard-wrapped the JSON: a line break inside a key or a number
        moments = _read("".join(lines))
        out = [r for r in (m.finish() for m in moments) if r is not None]
        for reading in out:
            reading.warnings.append("JSON broken across lines (hard-wrapped by a terminal?): read with its line "
                                    "breaks taken out")
    return base.of_many(out, "agent JSON")


def parse(text: str):
    return base.parse_text(text, META, read)
