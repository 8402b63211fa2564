"""Prometheus text exposition and OpenMetrics: IP-MIB counters as monitoring systems keep them.

A file, a `curl` of /metrics, a federation or promtool dump: one sample a line,

    node_netstat_Ip_ReasmFails 3                                       node_exporter (netstat collector)
    node_netstat_Ip6_ReasmOKs{instance="web1:9100"} 12                 ... scraped and labelled
    ipSystemStatsReasmReqds{ipSystemStatsIPVersion="1"} 335480         snmp_exporter, IP-MIB table
    ipReasmReqds 30                                                    snmp_exporter, IP-MIB scalars
    nstat_IpReasmFails{host="db1",name="snmp"} 0                       Telegraf nstat, prometheus output
    net_ip_reasmfails{host="db1",interface="all"} 0                    Telegraf net (protocol stats)
    mssdiag_ip_reasm_fails_total{host="h",os="linux",family="ipv4"} 2  mssdiag's own audit (`--prom-file`)

The host is the sample's `host`, `hostname` or `instance` label (an instance's port left out),
so a scrape of many hosts is many snapshots; a sample's timestamp, when every sample of a host
carries the same one, is when it was taken. Values are floats in this format: an integer
printed whole is read as printed; `6.28639697e+09` is read when it is a whole number below
2**53 (where a float still holds every integer), anything else is null with a warning.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Dict, List, Optional, Tuple

from ._needs import needs
from . import base, linux
from .model import ALL, Meta, Reading
from .lazyre import lazy


META = Meta(
    name="prometheus",
    role="any",
    title="Prometheus text exposition / OpenMetrics (node_exporter, snmp_exporter, Telegraf, mssdiag)",
    covers=("node_exporter netstat collector (node_netstat_Ip_*, node_netstat_Ip6_*)",
            "snmp_exporter IP-MIB (ipSystemStats* by ipSystemStatsIPVersion, ip* scalars)",
            "Telegraf nstat and net inputs through its prometheus_client output",
            "mssdiag audit --prom-file output (mssdiag_ip_*_total)"),
    formats=("a /metrics scrape (curl), a saved .prom file, a federation or promtool dump",
             "OpenMetrics (_total suffixes, # EOF)", "samples with timestamps",
             "many hosts in one text: instance / host / hostname labels",
             "a default node_exporter scrape (no fragment metrics): counters null, with a warning"),
    ipv4=ALL,
    ipv6=ALL,
    reasm_unit="both",
    timeout_unit="datagrams",
    signals=linux.META.signals,
    semantics=(
        "The metrics carry the kernel's or the agent's own IP-MIB counters under the exporter's name: "
        "node_netstat_Ip_ReasmReqds is /proc/net/snmp's Ip ReasmReqds (node_exporter exports the IP "
        "fragmentation counters only when --collector.netstat.fields is widened to them; a default scrape, "
        "which shows Ip_Forwarding and octets only, is a snapshot whose counters are unknown), Ip6_* its "
        "/proc/net/snmp6 twin; snmp_exporter's ipSystemStats* rows are IPv4 for ipSystemStatsIPVersion 1 "
        "(ipv4) and IPv6 for 2, ipSystemStatsOutFrag* are the Frag counters, HC twins preferred; its "
        "ipReasmTimeout is the agent's reassembly timer (a setting), never read as ReasmTimeout. Telegraf's "
        "nstat_Ip*/nstat_Ip6* and net_ip_* are /proc/net/snmp again. mssdiag's own mssdiag_ip_*_total "
        "come back as they were written (host, family labels). Linux semantics apply to the Linux sources "
        "(ReasmTimeout counts datagrams given up); an SNMP agent's are its own. Sample values are floats: "
        "above 2**53 a value printed in exponent form may have lost digits and is left null with a warning. Every "
        "counter a scrape shows is kept (`counters`): node_exporter's node_netstat_* and Telegraf's nstat_* and net_* "
        "under their nstat names (TcpExtTCPTimeouts, IcmpInDestUnreachs), snmp_exporter's IP-MIB, TCP-MIB and UDP-MIB "
        "objects under their RFC names in nstat style, so triage reads the same PMTUD evidence as from nstat -az; a "
        "counter the scrape does not show is unknown, never 0."),
)

# `name{labels} value [timestamp]`; labels as the format quotes them
_SAMPLE = lazy(r'^[ \t]*(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>(?:[^"}]|"(?:[^"\\]|\\.)*")*)\})?'
               r'[ \t]+(?P<value>\S+)(?:[ \t]+(?P<ts>-?[0-9]+(?:\.[0-9]+)?))?[ \t]*$')
_LABEL = lazy(r'[ \t]*(?P<key>[A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*"(?P<value>(?:[^"\\]|\\.)*)"[ \t]*,?')

# metric name -> (family or "" when a label says, counter group, counter name as its source spells it)
_NODE = lazy(r"(?:node_)?netstat_(?P<group>Ip6|Ip)_(?P<name>[A-Za-z]+)")
_NSTAT = lazy(r"nstat_(?P<group>Ip6|Ip)(?P<name>(?!Ext)[A-Z][A-Za-z]+)")
_NET = lazy(r"net_(?P<group>ip6|ip)_(?P<name>[a-z]+)")
_SNMP_TABLE = lazy(r"ipSystemStats(?P<name>[A-Za-z]+)")
_SNMP_SCALAR = lazy(r"ip(?P<name>Reasm[A-Za-z]+|Frag[A-Za-z]+|InReceives|InDelivers|OutRequests|ForwDatagrams"
                    r"|Forwarding)|(?P<v6fw>ipv6IpForwarding)")
_MSSDIAG = lazy(r"mssdiag_ip_(?P<name>[a-z_]+)_total")

# counter names as sources spell them, lower-cased and without underscores -> (counter, HC twin)
_COUNTER = {
    "reasmreqds": ("ReasmReqds", False), "reasmoks": ("ReasmOKs", False), "reasmfails": ("ReasmFails", False),
    "reasmtimeout": ("ReasmTimeout", False), "fragoks": ("FragOKs", False), "fragfails": ("FragFails", False),
    "fragcreates": ("FragCreates", False), "outfragoks": ("FragOKs", False), "outfragfails": ("FragFails", False),
    "outfragcreates": ("FragCreates", False), "inreceives": ("InReceives", False),
    "hcinreceives": ("InReceives", True), "indelivers": ("InDelivers", False), "hcindelivers": ("InDelivers", True),
    "outrequests": ("OutRequests", False), "hcoutrequests": ("OutRequests", True),
    "forwdatagrams": ("ForwDatagrams", False), "inforwdatagrams": ("ForwDatagrams", False),
    "hcinforwdatagrams": ("ForwDatagrams", True), "outforwdatagrams": ("OutForw", False),
    "hcoutforwdatagrams": ("OutForw", True),
}
_FAMILY = {"1": "ipv4", "2": "ipv6", "ipv4": "ipv4", "ipv6": "ipv6"}
_HOST_LABELS = ("host", "hostname", "instance")
FLOAT_EXACT = 2 ** 53           # every integer up to here is exact in a float64

_DETECT = needs(lazy(
    r"^[ \t]*(?:(?:(?:node_)?netstat_Ip6?_(?:Reasm|Frag|InReceives|InDelivers|OutRequests|ForwDatagrams|OutForw)[A-Za-z]*"
    r"|ip(?:Reasm|Frag)[A-Za-z]+|nstat_Ip6?(?:Reasm|Frag)[A-Za-z]+|net_ip6?_(?:reasm|frag)[a-z]+|mssdiag_ip_[a-z_]+_total)"
    r"(?:_total)?(?:\{[^}\n]*\})?|ipSystemStats[A-Za-z]+\{[^}\n]*ipSystemStatsIPVersion[^}\n]*\})[ \t]+[-+0-9.NI]", re.M),
    "netstat_Ip", "ipSystemStats", "ipReasm", "ipFrag", "nstat_Ip", "net_ip", "mssdiag_ip_", fold=False)
_TYPE = lazy(r"^[ \t]*# TYPE (?P<name>[A-Za-z_:][A-Za-z0-9_:]*) (?P<type>[a-z]+)")
_EXPOSITION = lazy(r"^[ \t]*# (?:TYPE|HELP) [A-Za-z_:]|^[ \t]*# EOF[ \t]*$", re.M)
# node_exporter's netstat collector with its default fields: IP metrics (Ip_Forwarding, Ip6_InOctets,
# IpExt_OutOctets) but none of the fragment counters, which its default --collector.netstat.fields
# leaves out. Such a scrape is read as this host's snapshot with those counters unknown.
_NODE_IP = needs(lazy(r"^[ \t]*node_netstat_Ip(?:6|Ext)?_[A-Za-z]+(?:\{[^}\n]*\})?[ \t]+[-+0-9.NI]", re.M),
                 "node_netstat_Ip", fold=False)
_NODE_ANY = lazy(r"node_netstat_Ip(?:6|Ext)?_")
NODE_FIELDS = ("node_exporter's netstat collector exports no IP reassembly or fragment metric here (its default "
               "--collector.netstat.fields leaves them out): these counters are unknown; add Ip6?_(Reasm|Frag).* "
               "to that regex to read them")


def detect(text: str) -> float:
    hits = len(_DETECT.findall(text[:1 << 20]))
    if not hits:
        # only a default node_exporter scrape's IP metrics: ours, but weaker than any text that
        # shows the counters
        weak = len(_NODE_IP.findall(text[:1 << 20]))
        return min(0.6, 0.4 + 0.05 * weak) if weak else 0.0
    return min(1.0, 0.9 + 0.02 * hits + (0.05 if _EXPOSITION.search(text) else 0.0))


def metric(name: str, labels: Dict[str, str]) -> Optional[Tuple[str, str, bool]]:
    """(family, counter, HC twin) of a sample ('forwarding' for the forwarding flag, 'setting'
    for the reassembly timer); None when it is not one of ours."""
    m = _MSSDIAG.fullmatch(name)
    if m is not None:
        family = labels.get("family")
        hit = _COUNTER.get(m["name"].replace("_", ""))
        return (family, hit[0], hit[1]) if family in ("ipv4", "ipv6") and hit else None
    if name.endswith("_total"):                       # OpenMetrics counters
        name = name[:-6]
    m = _NODE.fullmatch(name) or _NSTAT.fullmatch(name) or _NET.fullmatch(name)
    if m is not None:
        family = "ipv6" if m["group"].lower() == "ip6" else "ipv4"
        key = m["name"].lower()
        if key == "forwarding":
            return family, "forwarding", False
        if key == "outforwdatagrams":                 # Ip6OutForwDatagrams: IPv6's forwarded count
            return family, "ForwDatagrams", False
        hit = _COUNTER.get(key)
        return (family, hit[0], hit[1]) if hit else None
    m = _SNMP_TABLE.fullmatch(name)
    if m is not None:
        family = _FAMILY.get(labels.get("ipSystemStatsIPVersion", "").lower())
        hit = _COUNTER.get(m["name"].lower())
        return (family, hit[0], hit[1]) if family and hit else None
    m = _SNMP_SCALAR.fullmatch(name)
    if m is not None:
        if m["v6fw"]:
            return "ipv6", "forwarding", False
        key = m["name"].lower()
        if key == "forwarding":
            return "ipv4", "forwarding", False
        if key == "reasmtimeout":
            return "ipv4", "setting", False          # the agent's reassembly timer, in seconds
        hit = _COUNTER.get(key)
        return ("ipv4", hit[0], hit[1]) if hit else None
    return None


# Every counter of a scrape (model.Counter), beside the headline ones metric() reads: the
# kernel's under node_exporter's, Telegraf's nstat and net inputs' names (the standard name is
# the nstat name), the MIB objects under snmp_exporter's, and mssdiag's own.
_KERNEL = lazy(r"(?P<source>(?:node_)?netstat)_(?P<group>[A-Za-z0-9]+)_(?P<field>[A-Za-z0-9]+)")
_NSTAT_ANY = lazy(r"nstat_(?P<name>[A-Z][A-Za-z0-9]+)")
_NET_ANY = lazy(r"net_(?P<group>[a-z0-9]+)_(?P<field>[a-z0-9]+)")
MIB_NAME = lazy(r"(?:ip|icmp|tcp|udp)[A-Z][A-Za-z0-9]*")
_KERNEL_GROUPS = {g.lower() for g in linux.KERNEL_GROUPS}


def counter_of(name: str, labels: Dict[str, str], typed: str = "") -> Optional[Tuple[str, Optional[str]]]:
    """(section, standard name or None) of a sample that is a counter (model.Counter), or None:
    not a counter of a source this reader knows, or a setting. `typed` is the scrape's `# TYPE`
    for the metric: a MIB object with no standard name is a counter only when typed so."""
    m = _MSSDIAG.fullmatch(name)
    if m is not None:
        what = metric(name, labels)
        if what is None:
            return None
        family, counter, _ = what
        group = "Ip" if family == "ipv4" else "Ip6"
        return "mssdiag", group + ("OutForwDatagrams" if family == "ipv6" and counter == "ForwDatagrams" else counter)
    if name.endswith("_total"):
        name = name[:-6]
    m = _KERNEL.fullmatch(name)
    if m is not None and m["group"].lower() in _KERNEL_GROUPS:
        standard = linux.nstat_name(m["group"], m["field"])
        return None if standard in linux.SETTINGS else ("node_netstat" if m["source"].startswith("node_") else "netstat",
                                                        standard)
    m = _NSTAT_ANY.fullmatch(name)
    if m is not None and linux.kernel_group(m["name"]):
        return None if m["name"] in linux.SETTINGS else ("nstat", m["name"])
    m = _NET_ANY.fullmatch(name)
    if m is not None and m["group"] in _KERNEL_GROUPS:
        standard = linux.nstat_name(m["group"], m["field"])
        return None if standard in linux.SETTINGS else ("net", standard)
    if MIB_NAME.fullmatch(name) is None or name in base.MIB_SETTINGS:
        return None
    m = _SNMP_TABLE.fullmatch(name)
    if m is not None:
        standard = base.table_standard(m["name"], _FAMILY.get(labels.get("ipSystemStatsIPVersion", "").lower(), ""))
        hit = _COUNTER.get(m["name"].lower())
    else:
        standard, hit = base.mib_standard(name), None
    if standard is None and hit is None and typed != "counter":
        return None
    return ("TCP-MIB" if name.startswith("tcp") else "UDP-MIB" if name.startswith("udp") else "IP-MIB"), standard


def _printed(name: str, labels: Dict[str, str]) -> str:
    """A sample's counter label: its name and the labels that tell its series apart (not the
    host's nor the job's), as printed."""
    own = [f'{k}="{v}"' for k, v in labels.items() if k not in _HOST_LABELS and k != "job"]
    return name + ("{" + ",".join(own) + "}" if own else "")


def _labels(text: Optional[str]) -> Optional[Dict[str, str]]:
    if not text:
        return {}
    out: Dict[str, str] = {}
    at = 0
    while at < len(text):
        m = _LABEL.match(text, at)
        if m is None:
            return None if text[at:].strip(" \t,") else out
        out[m["key"]] = m["value"].replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        at = m.end()
    return out


def host_of(labels: Dict[str, str]) -> Optional[str]:
    """The host a sample's labels name: host, hostname, else instance without its port."""
    for key in _HOST_LABELS:
        value = labels.get(key, "").strip()
        if not value:
            continue
        if key == "instance":
            m = re.fullmatch(r"\[(?P<v6>[0-9A-Fa-f:.]+)\](?::[0-9]+)?|(?P<name>[^:/\s]+)(?::[0-9]+)?", value)
            if m is not None:
                value = m["v6"] or m["name"]
        return value
    return None


def value_of(key: str, text: str, reading: Reading) -> Optional[int]:
    """A sample value as a counter: digits as printed; a float form only when it is a whole
    number a float holds exactly; None with a warning otherwise (NaN, negative, 5.668, 1e+20)."""
    if text.isdigit() and text.isascii():
        return base.value_of(key, text, reading)
    try:
        number = Decimal(text)
    except InvalidOperation:
        number = None
    if number is not None and number.is_finite() and number >= 0 and number == number.to_integral_value() \
            and number <= FLOAT_EXACT:
        return int(number)
    why = "is not a whole number" if number is None or not number.is_finite() or number < 0 \
        or number != number.to_integral_value() else "is above 2**53: a float that may have lost digits"
    reading.warnings.append(f"{key!r}: value {text!r} {why}; counter left out")
    return None


class Series:
    """The counters of one host (and time) as samples come: a counter shown twice with two
    values is unknown, an HC (Counter64) twin wins over its 32-bit column. Shared with the
    line-protocol reader (parsers/influx.py)."""

    def __init__(self, fmt: str, host: Optional[str] = None, taken_at: Optional[str] = None) -> None:
        self.values: Dict[str, Dict[str, Optional[int]]] = {}
        self.hc: Dict[str, set] = {"ipv4": set(), "ipv6": set()}
        self.seen: Dict[Tuple[str, str, bool], str] = {}
        self.stamps: set = set()
        self.node_ip: set = set()                   # families node_exporter's netstat collector showed
        self.reading = Reading(format=fmt, ipv4=None, host=host, taken_at=taken_at)
        self.every = base.Every(self.reading)

    def take(self, key: str, shown: str, number: str, what: Optional[Tuple[str, str, bool]],
             counter_as: Optional[Tuple[str, str, Optional[str]]] = None) -> None:
        """One sample: `shown` as printed (raw), `number` its value without a type suffix; `what`
        the headline counter it is (metric()), `counter_as` its (section, label, standard name)
        among every counter (counter_of())."""
        reading = self.reading
        if what is None:
            if counter_as is not None:
                self.every.add(*counter_as[:2], value_of(key, number, reading), counter_as[2])
            return
        family, counter, hc = what
        if counter == "setting":
            reading.raw[key] = shown
            return
        if counter == "forwarding":
            reading.raw[key] = shown
            flag = {"1": True, "2": False}.get(number)
            if family == "ipv4" and flag is not None or reading.forwarding is None:
                reading.forwarding = flag           # IPv4's flag says; IPv6's only where IPv4's is not shown
            return
        ident = (family, counter, hc)
        row = self.values.setdefault(family, {})
        if ident in self.seen:
            if self.seen[ident] != shown:
                reading.warnings.append(f"{key!r} shown twice with different values ({self.seen[ident]} and "
                                        f"{shown}): counter unknown")
                row[counter] = None
                at = self.every.at.get(counter_as[:2]) if counter_as else None
                if at is not None:
                    reading.counters[at]["value"] = None
            return
        self.seen[ident] = shown
        reading.raw[key] = shown
        value = value_of(key, number, reading)
        if counter_as is not None:
            self.every.add(*counter_as[:2], value, counter_as[2])
        if hc:
            self.hc[family].add(counter)
            row[counter] = value
        elif counter not in self.hc[family]:
            row[counter] = value

    def finish(self) -> Optional[Reading]:
        """Its reading, or None when it holds no counter."""
        reading = self.reading
        for row in self.values.values():
            forw = row.pop("OutForw", None)
            if "ForwDatagrams" not in row and forw is not None:
                row["ForwDatagrams"] = forw
        # an empty row stays only where a default node_exporter scrape showed the family
        reading.ipv4 = self.values.get("ipv4") if "ipv4" in self.node_ip else self.values.get("ipv4") or None
        reading.ipv6 = self.values.get("ipv6") if "ipv6" in self.node_ip else self.values.get("ipv6") or None
        return None if reading.ipv4 is None and reading.ipv6 is None else reading


def read(lines: List[str]) -> Reading:
    hosts: Dict[Optional[str], Series] = {}
    types: Dict[str, str] = {}
    openmetrics = False
    for line in lines:
        if line.lstrip().startswith("#"):
            openmetrics = openmetrics or line.strip() == "# EOF"
            t = _TYPE.match(line)
            if t is not None:
                types[t["name"]] = t["type"]
            continue
        m = _SAMPLE.match(line)
        if m is None:
            continue
        labels = _labels(m["labels"])
        if labels is None:
            continue
        name = m["name"]
        if name.endswith("_created"):
            continue                                  # OpenMetrics: when the counter was created
        what = metric(name, labels)
        kind = counter_of(name, labels, types.get(name[:-6] if name.endswith("_total") else name)
                          or types.get(name, ""))
        if what is None:
            if _NODE_ANY.match(name):
                node = hosts.setdefault(host_of(labels), Series("Prometheus exposition"))
                node.node_ip.add("ipv6" if name.startswith("node_netstat_Ip6_") else "ipv4")
            if kind is None:
                continue
        host = hosts.setdefault(host_of(labels), Series("Prometheus exposition"))
        key = name
        if what is not None:
            family, counter, _ = what
            if name.startswith("node_netstat_"):
                host.node_ip.add(family)
            key = name + (f".{family}" if counter not in ("forwarding", "setting") and "ipSystemStatsIPVersion" in labels
                          or name.startswith("mssdiag_") else "")
        if m["ts"]:
            host.stamps.add(m["ts"])
        host.take(key, m["value"], m["value"], what,
                  None if kind is None else (kind[0], _printed(name, labels), kind[1]))
    out: List[Reading] = []
    for name, host in hosts.items():
        if host.node_ip and not any(host.values.values()):
            for family in sorted(host.node_ip):            # a default scrape: the counters unknown
                host.values.setdefault(family, {})
            host.reading.warnings.append(NODE_FIELDS)
        reading = host.finish()
        if reading is None:
            continue
        reading.host = name
        reading.format = "OpenMetrics" if openmetrics else "Prometheus exposition"
        if len(host.stamps) == 1:
            reading.taken_at = base.epoch_iso(float(next(iter(host.stamps))) / 1000)   # milliseconds
        elif host.stamps:
            reading.warnings.append("samples of this host carry different timestamps: read as one snapshot "
                                    "without a time")
        out.append(reading)
    return base.of_many(out, "Prometheus exposition")


def parse(text: str):
    return base.parse_text(text, META, read)

