"""net-snmp `snmpwalk` / `snmpbulkwalk` / `snmpget` output of IP-MIB (RFC 1213 / RFC 4293).

Every output option net-snmp users paste is read, one object a line:

    IP-MIB::ipReasmReqds.0 = Counter32: 30                      default, MIBs loaded
    RFC1213-MIB::ipReasmReqds.0 = Counter32: 30                 older MIB set
    ipReasmReqds.0 = Counter32: 30                              -Os
    iso.3.6.1.2.1.4.14.0 = Counter32: 30                        no MIBs installed (Debian default)
    .1.3.6.1.2.1.4.14.0 = Counter32: 30                         -On
    .1.3.6.1.2.1.4.14.0 30                                      -Oq (and -OQ: `= 30`)
    IP-MIB::ipSystemStatsReasmReqds.ipv4 = Counter32: 30        RFC 4293 table, per family
    .1.3.6.1.2.1.4.31.1.1.14.1 = Counter32: 30                  ... numeric: index 1 is IPv4, 2 IPv6

Anything before the object name on a line (a prompt, `# ` or `// ` of a comment, a diff's
`+`, the quote opening a string in code) is ignored, so walks quoted in code, notes and diffs
read too; a quote closing such a string after the value (`455',`) is taken off, with a warning. Objects other than the
IP group are skipped.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ._needs import needs
from . import base
from .model import Meta, Reading
from .lazyre import lazy


META = Meta(
    name="snmp",
    role="any",
    title="SNMP walk of IP-MIB (net-snmp snmpwalk / snmpget output)",
    covers=("any SNMP agent: routers, switches, firewalls, Linux/Windows/ESXi hosts",
            "RFC 1213 ip group scalars (ipReasmReqds.0 ...)", "RFC 4293 ipSystemStatsTable (ipv4 / ipv6 rows)"),
    formats=("snmpwalk / snmpbulkwalk / snmpget", "-On (numeric OIDs)", "-Oq / -OQ (value only)", "-Os / -OS",
             "-OX ([ipv4] indexes)", "-Of (.iso.org.dod... names)", "-Oe / -OU (enums as numbers, no units)",
             "iso.3.6.1... (no MIB files installed)", "IP-MIB:: and RFC1213-MIB:: names",
             "walks inside tool logs (LibreNMS / Observium debug output: command lines quoting objects are skipped)",
             "Wrong Type (should be Counter64): Counter32: N (the value the agent sent)"),
    ipv4=("ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates",
          "InReceives", "InDelivers", "OutRequests", "ForwDatagrams"),
    ipv6=("ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates",
          "InReceives", "InDelivers", "OutRequests", "ForwDatagrams"),
    reasm_unit="both",
    semantics=(
        "The objects are the IP-MIB counters themselves: ipReasmReqds (fragments received needing "
        "reassembly), ipReasmOKs (datagrams reassembled), ipReasmFails, ipFragOKs (datagrams fragmented), "
        "ipFragFails (needed fragmenting but DF set), ipFragCreates (fragments made); the RFC 4293 "
        "ipSystemStats* columns mean the same per family (row ipv4 / 1, ipv6 / 2; OutFragOKs, OutFragFails, "
        "OutFragCreates are the Frag counters). ipReasmTimeout.0 is the reassembly timer in seconds, a "
        "setting, kept in raw and never read as ReasmTimeout, so ReasmTimeout is null. Traffic: "
        "ipInReceives, ipInDelivers, ipOutRequests, ipForwDatagrams (table: InReceives, InDelivers, "
        "OutRequests, InForwDatagrams, else OutForwDatagrams); the HC (Counter64) twin of a traffic counter "
        "is preferred when both are walked. ipForwarding.0 (ipv6IpForwarding.0 for IPv6) says whether the "
        "agent routes: forwarding(1) is true, notForwarding(2) false. When a walk holds both the "
        "scalars and the table, IPv4 is read from the scalars (the table's ipv4 row stays in raw) and IPv6 "
        "from the table. Wraps are judged at 32 bits: every "
        "fragmentation counter of IP-MIB is a Counter32, even in ipSystemStatsTable. Every counter of the walk is kept "
        "(`counters`): each ip group object and ipSystemStatsTable column, and the icmp (IP-MIB), tcp (TCP-MIB) and "
        "udp (UDP-MIB) group scalars, named or numeric, with the RFC name in nstat style (IcmpInDestUnreachs, "
        "TcpRetransSegs) where one exists; settings (ipDefaultTTL, tcpRtoMin...) are left out."),
)

_SCALARS = {"ipInReceives": "InReceives", "ipInDelivers": "InDelivers", "ipOutRequests": "OutRequests",
            "ipForwDatagrams": "ForwDatagrams", "ipReasmReqds": "ReasmReqds", "ipReasmOKs": "ReasmOKs",
            "ipReasmFails": "ReasmFails", "ipFragOKs": "FragOKs", "ipFragFails": "FragFails",
            "ipFragCreates": "FragCreates"}
_SCALAR_OIDS = {"3": "ipInReceives", "6": "ipForwDatagrams", "9": "ipInDelivers", "10": "ipOutRequests",
                "13": "ipReasmTimeout", "14": "ipReasmReqds", "15": "ipReasmOKs", "16": "ipReasmFails",
                "17": "ipFragOKs", "18": "ipFragFails", "19": "ipFragCreates", "1": "ipForwarding",
                "25": "ipv6IpForwarding", "2": "ipDefaultTTL", "4": "ipInHdrErrors", "5": "ipInAddrErrors",
                "7": "ipInUnknownProtos", "8": "ipInDiscards", "11": "ipOutDiscards", "12": "ipOutNoRoutes",
                "23": "ipRoutingDiscards", "26": "ipv6IpDefaultHopLimit"}
# ipSystemStatsEntry column -> (object name, counter, HC)
_COLUMNS = {"3": ("InReceives", "InReceives", False), "4": ("HCInReceives", "InReceives", True),
            "12": ("InForwDatagrams", "ForwDatagrams", False), "13": ("HCInForwDatagrams", "ForwDatagrams", True),
            "14": ("ReasmReqds", "ReasmReqds", False), "15": ("ReasmOKs", "ReasmOKs", False),
            "16": ("ReasmFails", "ReasmFails", False), "18": ("InDelivers", "InDelivers", False),
            "19": ("HCInDelivers", "InDelivers", True), "20": ("OutRequests", "OutRequests", False),
            "21": ("HCOutRequests", "OutRequests", True), "23": ("OutForwDatagrams", "OutForw", False),
            "24": ("HCOutForwDatagrams", "OutForw", True), "27": ("OutFragOKs", "FragOKs", False),
            "28": ("OutFragFails", "FragFails", False), "29": ("OutFragCreates", "FragCreates", False)}
_BY_COLUMN_NAME = {name: col for col, (name, _, _) in _COLUMNS.items()}
# every counter column of ipSystemStatsEntry (RFC 4293), by column number: kept among the
# snapshot's counters (model.Counter), the headline ones above included
_TABLE = dict(enumerate((
    "InReceives", "HCInReceives", "InOctets", "HCInOctets", "InHdrErrors", "InNoRoutes", "InAddrErrors",
    "InUnknownProtos", "InTruncatedPkts", "InForwDatagrams", "HCInForwDatagrams", "ReasmReqds", "ReasmOKs",
    "ReasmFails", "InDiscards", "InDelivers", "HCInDelivers", "OutRequests", "HCOutRequests", "OutNoRoutes",
    "OutForwDatagrams", "HCOutForwDatagrams", "OutDiscards", "OutFragReqds", "OutFragOKs", "OutFragFails",
    "OutFragCreates", "OutTransmits", "HCOutTransmits", "OutOctets", "HCOutOctets", "InMcastPkts", "HCInMcastPkts",
    "InMcastOctets", "HCInMcastOctets", "OutMcastPkts", "HCOutMcastPkts", "OutMcastOctets", "HCOutMcastOctets",
    "InBcastPkts", "HCInBcastPkts", "OutBcastPkts", "HCOutBcastPkts"), 3))
_TABLE_NAMES = frozenset(_TABLE.values())
# the icmp (RFC 1213 / 4293), tcp (RFC 4022) and udp (RFC 4113) group scalars, by OID arc
_GROUP_OIDS = {
    "5": {str(n): "icmp" + f for n, f in enumerate(base.MIB_FIELDS["icmp"], 1)},
    "6": {str(n): "tcp" + f for n, f in ((1, "RtoAlgorithm"), (2, "RtoMin"), (3, "RtoMax"), (4, "MaxConn"),
                                          (5, "ActiveOpens"), (6, "PassiveOpens"), (7, "AttemptFails"),
                                          (8, "EstabResets"), (9, "CurrEstab"), (10, "InSegs"), (11, "OutSegs"),
                                          (12, "RetransSegs"), (14, "InErrs"), (15, "OutRsts"), (17, "HCInSegs"),
                                          (18, "HCOutSegs"))},
    "7": {str(n): "udp" + f for n, f in ((1, "InDatagrams"), (2, "NoPorts"), (3, "InErrors"), (4, "OutDatagrams"),
                                          (8, "HCInDatagrams"), (9, "HCOutDatagrams"))},
}
_KNOWN_SCALARS = frozenset(_SCALAR_OIDS.values()) | frozenset(n for g in _GROUP_OIDS.values() for n in g.values())
_MIB_OF = {"tcp": "TCP-MIB", "udp": "UDP-MIB"}
_ROW = {"1": "ipv4", "2": "ipv6", "ipv4": "ipv4", "ipv6": "ipv6"}

# An object and its value, in every output form: `-Of` full names (`.iso.org...ip.ipReasmReqds.0`),
# `-OX` indexes (`ipSystemStatsReasmReqds[ipv4]`), `-Oq` (no `=`), `-OQ` (no type), units after a
# value (`-OU` drops them), `Wrong Type (should be Counter64): Counter32: 0`. The name must be
# followed by `=` or a blank and a value, so a tool's command line quoting object names
# (`'IP-MIB::ipReasmReqds.0' 'IP-MIB::ipReasmOKs.0'`) is not a walk.
_LINE = lazy(
    r"(?:^|(?<=[\s/#+>:.'\"-]))(?:(?P<mib>IP-MIB|RFC1213-MIB|TCP-MIB|UDP-MIB)::)?"
    r"(?P<object>(?P<name>(?:ip|icmp|tcp|udp)[A-Z][A-Za-z]{2,40}|ipv6IpForwarding)"
    r"(?:\.(?P<index>0|ipv4|ipv6|[12])|\[\"?(?P<xindex>ipv4|ipv6|[12])\"?\])"
    r"|(?:iso|\.?1)\.3\.6\.1\.2\.1\.(?:4\.(?P<oid>[0-9]{1,2}\.0|31\.1\.1\.[0-9]{1,2}\.[12])"
    r"|(?P<group>[567])\.(?P<arc>[0-9]{1,2})\.0))"
    r"(?:[ \t]*=[ \t]*|[ \t]+)(?:Wrong Type \(should be [A-Za-z0-9]+\):[ \t]*)?"
    r"(?:(?P<type>Counter32|Counter64|INTEGER|Gauge32|Integer32|Unsigned32)[ \t]*:[ \t]*)?"
    r"(?P<value>[^\s'].*?)[ \t]*$")
_ENUM = lazy(r"^(?:[A-Za-z-]+\()?(?P<n>[0-9]+)\)?$")

_DETECT = needs(lazy(r"(?:IP-MIB|RFC1213-MIB)::ip(?:Reasm|Frag|SystemStats(?:Reasm|OutFrag))"
                     r"|(?:iso|\.1)\.3\.6\.1\.2\.1\.4\.(?:1[4-9]\.0|31\.1\.1\.(?:1[4-6]|2[7-9])\.[12])[ \t]"
                     r"|(?:^|[\s.+/#>'\"-])ip(?:Reasm(?:Reqds|OKs|Fails)|Frag(?:OKs|Fails|Creates))\.0(?:[ \t]*=|[ \t]+[0-9])"
                     r"|(?:^|[\s.+/#>'\"-])ipSystemStats(?:Reasm|OutFrag)[A-Za-z]+(?:\.(?:ipv[46]|[12])|\[\"?(?:ipv[46]|[12])\"?\])"
                     r"(?:[ \t]*=|[ \t]+[0-9])", re.M),
                "-MIB::ip", ".3.6.1.2.1.4.", "ipReasm", "ipFrag", "ipSystemStats", fold=False)
_DETECT_WEAK = needs(lazy(r"(?:IP-MIB|RFC1213-MIB)::ip[A-Z]|(?:iso|\.1)\.3\.6\.1\.2\.1\.4\."),
                     "-MIB::ip", ".3.6.1.2.1.4.", fold=False)


def detect(text: str) -> float:
    strong = len(_DETECT.findall(text[:1 << 20])) if "3.6.1.2.1.4" in text or "ip" in text else 0
    if strong:
        return min(1.0, 0.85 + 0.03 * strong)
    return 0.3 if _DETECT_WEAK.search(text) else 0.0


def _object(m: "re.Match[str]") -> Optional[Tuple[str, str]]:
    """(object name, family) of a matched line: scalars are ('ipReasmReqds', ''), table
    columns ('ipSystemStatsReasmReqds', 'ipv4')."""
    if m["group"]:
        name = _GROUP_OIDS[m["group"]].get(m["arc"])
        return (name, "") if name else None
    if m["oid"]:
        parts = m["oid"].split(".")
        if parts[0] != "31":
            name = _SCALAR_OIDS.get(parts[0])
            return (name, "") if name else None
        col = _TABLE.get(int(parts[3]))
        return ("ipSystemStats" + col, _ROW[parts[4]]) if col else None
    name = m["name"]
    index = m["index"] or m["xindex"]
    if name.startswith("ipSystemStats"):
        return (name, _ROW[index]) if index in _ROW else None
    return (name, "") if index == "0" else None


_UNITS = lazy(r"(?P<n>[0-9]+)[ \t]+(?:packets|datagrams|fragments|octets)")


def _unit(shown: str) -> str:
    """A counter's value without the unit a MIB's DISPLAY-HINT or UNITS clause added (`-OU` omits it)."""
    m = _UNITS.fullmatch(shown)
    return m["n"] if m else shown


def _counter(name: str, family: str, typed: bool, printed: str) -> Optional[Tuple[str, str, Optional[str]]]:
    """(section, label, standard name) of an object among every counter (model.Counter), or
    None: a setting, or an object of unknown meaning not typed as a counter. The section is the
    object's MIB, the label the object and index as printed (`ipReasmReqds.0`, `.1.3.6.1.2.1.4.14.0`)."""
    if name in base.MIB_SETTINGS:
        return None
    if family:
        column = name[len("ipSystemStats"):]
        if column not in _TABLE_NAMES and not typed:
            return None
        return "IP-MIB", printed, base.table_standard(column, family)
    standard = base.mib_standard(name)
    if standard is None and name not in _KNOWN_SCALARS and not typed:
        return None
    return _MIB_OF.get(name[:3], "IP-MIB"), printed, standard


def read(lines: List[str]) -> Reading:
    reading = Reading(format="snmpwalk IP-MIB", ipv4=None)
    scalars: Dict[str, Optional[int]] = {}
    table: Dict[str, Dict[str, Optional[int]]] = {}
    hc: Dict[str, set] = {"ipv4": set(), "ipv6": set()}
    numeric = textual = False
    quoted = 0
    repeats = base.Repeats(reading)
    every = base.Every(reading)
    v4_row: List[int] = []          # counters of the table's ipv4 row that have a standard name
    for line in lines:
        if "ip" not in line and "icmp" not in line and "tcp" not in line and "udp" not in line \
                and "3.6.1.2.1." not in line:
            continue
        m = _LINE.search(line)
        if not m:
            continue
        obj = _object(m)
        if obj is None:
            continue
        name, family = obj
        numeric = numeric or bool(m["oid"] or m["group"])
        textual = textual or not (m["oid"] or m["group"])
        shown = m["value"]
        opened = line[:m.start()].rstrip()[-1:]
        if opened in ("'", '"'):
            # a walk line quoted in code ('.1.3.6.1.2.1.4.14.0 = Counter32: 455',): its closing quote goes
            closed = re.fullmatch(rf"(?P<v>.*?){opened}[ \t]*[,;)+\]]*[ \t]*", shown)
            if closed is not None:
                shown = closed["v"]
                quoted += 1
        if name in ("ipForwarding", "ipv6IpForwarding"):
            e = _ENUM.match(shown.strip('"'))
            reading.raw[name] = shown
            if e and name == "ipForwarding":
                reading.forwarding = {"1": True, "2": False}.get(e["n"], reading.forwarding)
            elif e and name == "ipv6IpForwarding" and reading.forwarding is None:
                reading.forwarding = {"1": True, "2": False}.get(e["n"])
            continue
        if name == "ipReasmTimeout":
            reading.raw[name] = shown          # the timer in seconds, a setting
            continue
        kind = _counter(name, family, m["type"] in ("Counter32", "Counter64"), m["object"])
        col = _BY_COLUMN_NAME.get(name[len("ipSystemStats"):]) if family else None
        counter = None if family else _SCALARS.get(name)
        if kind is None and col is None and counter is None:
            continue
        key = f"{name}.{family or 0}"
        if (family or "ipv4") in repeats.stopped:
            continue
        if shown.startswith(("No Such", "No more")):
            if col is not None or counter is not None:
                reading.raw[key] = shown
            continue
        value = base.value_of(key, _unit(shown), reading)
        if not repeats.keep(family or "ipv4", name, key, value, shown):
            if repeats.conflicted(family or "ipv4", name):
                if col is not None:
                    table.setdefault(family, {})[_COLUMNS[col][1]] = None
                elif counter is not None:
                    scalars[counter] = None
                at = every.at.get(kind[:2]) if kind else None
                if at is not None:
                    reading.counters[at]["value"] = None
            continue
        if kind is not None:
            if family == "ipv4" and kind[2]:
                v4_row.append(len(reading.counters))
            every.add(kind[0], kind[1], value, kind[2])
        if col is not None:
            _, head, is_hc = _COLUMNS[col]
            reading.raw[key] = shown
            row = table.setdefault(family, {})
            if is_hc:
                hc[family].add(head)
                row[head] = value
            elif head not in hc[family]:
                row[head] = value
        elif counter is not None:
            reading.raw[key] = shown
            scalars[counter] = value
    for row in table.values():
        forw = row.pop("OutForw", None)
        if "ForwDatagrams" not in row and forw is not None:
            row["ForwDatagrams"] = forw
    v4 = table.get("ipv4")
    if scalars:
        if v4 is not None:
            reading.warnings.append("IPv4 printed by both the ip scalars and ipSystemStatsTable's ipv4 row: the "
                                    "scalars are read, the row kept in raw only")
            for at in v4_row:       # the scalars hold the standard names; the row keeps its own
                reading.counters[at]["name"] = None
        v4 = scalars
    reading.ipv4 = v4 or None
    reading.ipv6 = table.get("ipv6") or None
    reading.format = "snmpwalk IP-MIB" + (" (numeric OIDs)" if numeric and not textual else "")
    if quoted:
        reading.warnings.append(f"{quoted} walk line(s) quoted in code: the quote closing each line (and the "
                                "punctuation after it) taken off before reading the value")
    return reading


def parse(text: str):
    return base.parse_text(text, META, read)
