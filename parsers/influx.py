"""InfluxDB line protocol: Telegraf's nstat and net inputs (`telegraf --test`, a file output, an
InfluxDB export).

    > nstat,host=Hugin,name=snmp IpForwDatagrams=12i,IpFragCreates=2i,...,IpReasmReqds=0i 1742837823000000000
    net,interface=all,host=HOST ip_reasmfails=0i,...,ip_fragcreates=0i 1492831540000000000

A line is `measurement,tag=value,... field=value,... [timestamp in ns]`. The counters are
/proc/net/snmp's (and snmp6's), named as nstat names them or, in the net input, lower-case
with an underscore (`ip_reasmfails`); the metric names are read by the Prometheus reader's
rules (parsers/prometheus.py), so both formats agree. One snapshot per host (tag `host`,
`hostname`, `agent_host` or `source`) and timestamp: nstat's netstat, snmp and snmp6 lines of
one collection are one snapshot; a series of collections is a series of snapshots.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ._needs import needs
from . import base, linux, prometheus
from .model import ALL, Meta, Reading
from .lazyre import lazy


META = Meta(
    name="influx",
    role="host",
    title="InfluxDB line protocol (Telegraf nstat and net inputs)",
    covers=("Telegraf inputs.nstat (/proc/net/snmp, /proc/net/snmp6, /proc/net/netstat)",
            "Telegraf inputs.net protocol stats (interface=all: ip_*)"),
    formats=("telegraf --test / --once output (`> ` prefixed lines, log lines between)",
             "a file or InfluxDB export of line protocol", "many hosts and collections in one text"),
    ipv4=ALL,
    ipv6=ALL,
    reasm_unit="both",
    timeout_unit="datagrams",
    signals=linux.META.signals,
    semantics=(
        "Telegraf reads Linux's /proc/net/snmp and /proc/net/snmp6: the fields are the kernel's IP-MIB "
        "counters under nstat's names (IpReasmReqds, Ip6FragCreates...) or, in the net input, lower-case "
        "(ip_reasmreqds...); Linux semantics apply (ReasmTimeout counts datagrams given up). IpForwarding "
        "1 means a router. Telegraf's nstat leaves zero fields out when dump_zeros is false: a counter not "
        "shown is unknown, never taken as 0. Values are integers (`12i`, `12u`); a float field is read "
        "only when it is a whole number below 2**53. Every field of the nstat and net inputs is kept (`counters`) "
        "under its nstat name (net's lower-cased icmp_indestunreachs as IcmpInDestUnreachs where the kernel's "
        "spelling is known), so TcpExtTCPTimeouts and the ICMP counters give triage the same PMTUD evidence as nstat -az."),
)

# measurement and tags, one blank, fields, optional timestamp (escaped `\ ` `\,` `\=` in names and tags)
_LINE = lazy(r"^[ \t]*(?P<measurement>(?:[^\s,\\]|\\.)+)(?P<tags>(?:,(?:[^\s,\\]|\\.)+)*)[ \t]+"
             r"(?P<fields>(?:[^\s\"\\]|\\.|\"(?:[^\"\\]|\\.)*\")+)(?:[ \t]+(?P<ts>-?[0-9]{1,19}))?[ \t]*$")
_PAIR = lazy(r"(?P<key>(?:[^,=\\]|\\.)+)=(?P<value>\"(?:[^\"\\]|\\.)*\"|[^,]*)(?:,|$)")
_HOST_TAGS = ("host", "hostname", "agent_host", "source")
_DETECT = needs(lazy(
    r"^[ \t]*[A-Za-z_][\w.-]*(?:,\S+)?[ \t]+(?:\S*,)?(?:Ip6?(?:Reasm|Frag)[A-Za-z]+|ip6?_(?:reasm|frag)[a-z]+)"
    r"=[0-9]", re.M), "IpReasm", "IpFrag", "Ip6Reasm", "Ip6Frag", "ip_reasm", "ip_frag", "ip6_reasm", "ip6_frag",
    fold=False)


def detect(text: str) -> float:
    hits = len(_DETECT.findall(text[:1 << 20]))
    return min(1.0, 0.9 + 0.03 * hits) if hits else 0.0


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _pairs(text: str) -> Optional[Dict[str, str]]:
    out: Dict[str, str] = {}
    at = 0
    while at < len(text):
        m = _PAIR.match(text, at)
        if m is None or m.end() == at:
            return None
        out[_unescape(m["key"])] = m["value"]
        at = m.end()
    return out


def read(lines: List[str]) -> Reading:
    moments: Dict[Tuple[Optional[str], Optional[str]], prometheus.Series] = {}
    for line in lines:
        m = _LINE.match(line)
        if m is None:
            continue
        tags = _pairs(m["tags"][1:]) if m["tags"] else {}
        fields = _pairs(m["fields"])
        if tags is None or not fields:
            continue
        measurement = _unescape(m["measurement"])
        host = next((_unescape(tags[k]) for k in _HOST_TAGS if tags.get(k)), None)
        moment = None
        for field, shown in fields.items():
            what = prometheus.metric(f"{measurement}_{field}", {}) or prometheus.metric(field, {})
            kind = prometheus.counter_of(f"{measurement}_{field}", {})
            if what is None and kind is None:
                continue
            if moment is None:
                moment = moments.get((host, m["ts"]))
                if moment is None:
                    moment = moments[(host, m["ts"])] = prometheus.Series(
                        "InfluxDB line protocol", host, base.epoch_iso(int(m["ts"]) / 1e9) if m["ts"] else None)
            number = shown[:-1] if shown[-1:] in ("i", "u") and shown[:-1].isdigit() else shown
            moment.take(field, shown, number, what, None if kind is None else (measurement, field, kind[1]))
    out = [r for r in (moment.finish() for moment in moments.values()) if r is not None]
    return base.of_many(out, "InfluxDB line protocol")


def parse(text: str):
    return base.parse_text(text, META, read)
