"""Microsoft Windows `netstat -s` and `netstat -e -s` (Stratus, "Tuning your MSS", Figure 6c).

NT 4.0 and 2000 print one "IP Statistics" section; XP/2003 with IPv6 and every release
since Vista print "IPv4 Statistics" and "IPv6 Statistics" with the same labels, so the
section header alone says which family a line belongs to:

    IPv4 Statistics

      Packets Received                   = 6268757
      ...
      Reassembly Required                = 3095
      Reassembly Successful              = 1534
      Reassembly Failures                = 1534
      Datagrams Successfully Fragmented  = 2268
      Datagrams Failing Fragmentation    = 0
      Fragments Created                  = 4539

`netstat -e -s` puts "Interface Statistics" first. netstat.exe prints its values with
%u: plain digits, no thousands separators, never negative. Files saved by PowerShell 5
(`netstat -s > x.txt`) are UTF-16LE with a BOM and CRLF endings; parsers.text decodes
them before these functions see a line.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ._needs import needs
from . import base
from .text import DAMAGED
from .model import TRAFFIC, Meta, Reading, Signal
from .lazyre import lazy


META = Meta(
    name="windows",
    title="Microsoft Windows",
    covers=("Windows NT 4.0", "Windows 2000", "Windows XP", "Windows Server 2003",
            "Windows Vista, 7, 8, 8.1, 10, 11", "Windows Server 2008 to 2022",
            "English and German netstat labels", "Japanese netsh show ipstats labels"),
    formats=("netstat -s", "netstat -e -s", "netstat -s -p ip / -p ipv6",
             "netstat -s | findstr excerpt", "PowerShell-saved UTF-16LE files",
             "date /t + time /t + netstat -s logs (Task Scheduler)",
             "netsh interface ipv4|ipv6 show ipstats (Japanese)"),
    ipv4=("ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates") + TRAFFIC,
    ipv6=("ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates") + TRAFFIC,
    reasm_unit="both",
    signals=(
        Signal("ptb-in", "ipv4", "IcmpInDestUnreachs", False, "every ICMPv4 destination unreachable received; "
               "netstat keeps no count of 'fragmentation needed' alone"),
        Signal("ptb-in", "ipv6", "Icmp6InPktTooBigs"),
        Signal("ptb-out", "ipv4", "IcmpOutDestUnreachs", False, "every ICMPv4 destination unreachable sent"),
        Signal("ptb-out", "ipv6", "Icmp6OutPktTooBigs"),
        Signal("retrans", "tcp", "TcpRetransSegs", note="TCP over IPv4 ('TCP Statistics for IPv4')"),
        Signal("segs-out", "tcp", "TcpOutSegs"),
    ),
    gauges=("current connections", "aktuelle verbindungen"),
    semantics=(
        "Counts both: 'Reassembly Required' goes up once per fragment received and "
        "'Reassembly Successful' once per datagram put back together, so about two "
        "fragments per datagram (seed Fig. 6c: 5668 required, 2834 successful). "
        "'Datagrams Successfully Fragmented' counts outgoing datagrams split, 'Fragments "
        "Created' the pieces sent, 'Datagrams Failing Fragmentation' datagrams dropped "
        "because DF was set. NT 4.0/2000 print one 'IP Statistics' section (IPv4); XP/2003 "
        "and later print 'IPv4 Statistics' and 'IPv6 Statistics' with identical labels, "
        "kept apart by their headers. netstat never prints a count of reassembly "
        "timeouts, so ReasmTimeout is null; a 'Reassembly Timeout' line, where some tool "
        "prints one, is the timeout setting and stays in raw only. Windows Vista before "
        "hotfix KB949130 over-counts 'Reassembly Failures' (it can equal 'Reassembly "
        "Successful'). Older releases keep 32-bit counters that wrap. Traffic: 'Packets Received' "
        "(InReceives), 'Received Packets Delivered' (InDelivers), 'Output Requests' (OutRequests), "
        "'Datagrams Forwarded' (ForwDatagrams); netstat does not say whether forwarding is on. "
        "netsh interface ipv4|ipv6 show ipstats prints the same MIB counters as 'Label: value' lines "
        "(Japanese: 必要な再構築 ReasmReqds, 成功した再構築 ReasmOKs, 失敗した再構築 ReasmFails, "
        "成功したフラグメント FragOKs, 失敗したフラグメント FragFails, 作成されたフラグメント FragCreates); its "
        "'Reassembly Timeout' (再構築のタイムアウト: 60) is the timer setting, kept in raw only; 'Forwarding' "
        "(転送: 有効/無効) says whether the host routes. Which family it is comes only from the command line "
        "(netsh interface ipv6 ...); without it nothing is read (a warning says why), never a guessed family. "
        "netstat prints no count of retransmission timeouts."),
)

LABELS: Dict[str, str] = {
    # English (every release)
    "reassembly required": "ReasmReqds",
    "reassembly successful": "ReasmOKs",
    "reassembly failures": "ReasmFails",
    "datagrams successfully fragmented": "FragOKs",
    "datagrams failing fragmentation": "FragFails",
    "fragments created": "FragCreates",
    # German (seen on Windows 8.1 in ChristianRe/CRWinNetDiag's sample output)
    "reassemblierung erforderlich": "ReasmReqds",
    "reassemblierung erfolgreich": "ReasmOKs",
    "reassemblierung erfolglos": "ReasmFails",
    "erfolgreiche datagrammfragmentierung": "FragOKs",
    "erfolglose datagrammfragmentierung": "FragFails",
    "erzeugte fragmente": "FragCreates",
    # traffic
    "packets received": "InReceives",
    "received packets delivered": "InDelivers",
    "output requests": "OutRequests",
    "datagrams forwarded": "ForwDatagrams",
    "empfangene pakete": "InReceives",
    "empfangene übermittelte pakete": "InDelivers",
    "ausgabeanforderungen": "OutRequests",
    "weitergeleitete datagramme": "ForwDatagrams",
}
# `netsh interface ipv4|ipv6 show ipstats` ("MIB-II IP Statistics"): `Label: value`, one a
# line. Japanese labels from the sample on sec-v6.blogspot.com (fixtures/netstat/windows/SOURCES.md).
NETSH_LABELS: Dict[str, str] = {
    "受信": "InReceives",
    "配信された着信パケット": "InDelivers",
    "出力要求": "OutRequests",
    "転送データグラム": "ForwDatagrams",
    "必要な再構築": "ReasmReqds",
    "成功した再構築": "ReasmOKs",
    "失敗した再構築": "ReasmFails",
    "成功したフラグメント": "FragOKs",
    "失敗したフラグメント": "FragFails",
    "作成されたフラグメント": "FragCreates",
}
NETSH_SETTINGS = {"再構築のタイムアウト"}          # Reassembly Timeout: the timer in seconds
NETSH_DEFAULT_TTL = "既定の TTL"                   # Default TTL: a setting, not a counter
NETSH_FORWARDING = {"転送": {"有効": True, "無効": False}}   # Forwarding: Enabled / Disabled
_NETSH = lazy(r"^[ \t]*(?P<label>[^:=\n]{1,60}?)[ \t]*:[ \t]*(?P<value>\S+)[ \t]*$")
_NETSH_HEADER = lazy(r"^[ \t]*MIB-II IP", re.M)
_NETSH_STRONG = needs(lazy(r"^[ \t]*(?:必要な再構築|成功した再構築|失敗した再構築|成功したフラグメント|失敗したフラグメント"
                           r"|作成されたフラグメント)[ \t]*:[ \t]*[0-9]", re.M), "再構築", "フラグメント", fold=False)
# Printed by some tools beside the counters; a setting in seconds, never a count.
SETTINGS = {"reassembly timeout"}
# `  Label = value` for a label we read; anything after the value is kept so it can be
# warned about. Longest first; the same pattern text in every run (not the set's order,
# which changes with the hash seed): the regex cache finds it by its text.
_KNOWN = lazy(r"^\s*(?P<label>" + "|".join(
    r"\s+".join(map(re.escape, label.split())) for label in sorted({*LABELS, *SETTINGS}, key=lambda l: (-len(l), l)))
    + r")\s*=\s*(?P<value>\S*)\s*(?P<rest>.*?)\s*$", re.I | re.A)  # re.A: no Unicode case folding (ſ, K)

# A header line has no `=` and no number standing alone (the 4 of IPv4, the 6 of ICMPv6
# belong to words).
_LONE_DIGIT = lazy(r"(?<![A-Za-z\d])\d")
_WORD = lazy(r"[^\W\d_]+\d*", re.U)

_DETECT_STRONG = needs(lazy(
    r"^[\s>]*(?:Reassembly (?:Required|Successful|Failures)|Datagrams (?:Successfully Fragmented"
    r"|Failing Fragmentation)|Fragments Created|Reassemblierung (?:erforderlich|erfolgreich|erfolglos)"
    r"|Erfolg(?:reiche|lose) Datagrammfragmentierung|Erzeugte Fragmente)\s*=\s*\d", re.M | re.I),
    "reassembly ", "datagrams ", "fragments created", "reassemblierung ", "datagrammfragmentierung", "erzeugte fragmente",
    fold=True)
_DETECT_WEAK = needs(lazy(
    r"^[\s>]*(?:(?:IP|IPv4|IPv6) Statistics|IPv[46]-Statistik|Interface Statistics"
    r"|(?:Packets Received|Received Header Errors|Received Address Errors|Output Requests"
    r"|Received Packets Discarded|Empfangene Pakete)\s*=\s*\d)", re.M | re.I),
    " statistics", "-statistik", "packets received", "received header errors", "received address errors",
    "output requests", "received packets discarded", "empfangene pakete", fold=True)


def detect(text: str) -> float:
    netsh = len(_NETSH_STRONG.findall(text))
    if netsh:
        return min(1.0, 0.8 + 0.03 * netsh + (0.05 if _NETSH_HEADER.search(text) else 0.0))
    strong = {m.group(0).split("=")[0].strip(" \t>").lower() for m in _DETECT_STRONG.finditer(text)}
    weak = len(_DETECT_WEAK.findall(text))
    if not strong and not weak:
        return 0.0
    if not strong:
        return min(0.5, 0.3 + 0.05 * weak)
    return min(1.0, 0.7 + 0.08 * len(strong) + 0.02 * weak)


def _family(header: str) -> Optional[str]:
    """Which section a header opens: ipv4, ipv6, other (ICMP, TCP, UDP, interface) or None."""
    words = [w.lower() for w in _WORD.findall(header)]
    if not words or len(words) > 5:  # > 5: prose around a pasted dump, not a header
        return None
    joined = " ".join(words)
    if any(w.startswith(("icmp", "tcp", "udp")) for w in words) or "interface" in words \
            or "schnittstelle" in joined or "schnittstellenstatistik" in joined:
        return "other"
    if "ipv6" in words:
        return "ipv6"
    if "ipv4" in words or "ip" in words:
        return "ipv4"
    return None


def _netsh(lines: List[str], command: Optional[str]) -> Reading:
    """`netsh interface ipv4|ipv6 show ipstats`: the family is only in the command line."""
    reading = Reading(format="netsh show ipstats", ipv4=None)
    words = (command or "").lower().split()
    family = "ipv6" if "ipv6" in words else "ipv4" if ("ipv4" in words or "ip" in words) else None
    if family is None:
        reading.warnings.append("netsh show ipstats without its command line (netsh interface ipv4|ipv6 show "
                                "ipstats): the text does not say IPv4 or IPv6, so no counter is read")
        return reading
    reading.format = f"netsh interface {family} show ipstats"
    found: Dict[str, Optional[int]] = {}
    repeats = base.Repeats(reading)
    every = base.Every(reading)
    section = next((line.strip() for line in lines if _NETSH_HEADER.match(line)), f"netsh interface {family}")
    for line in lines:
        m = _NETSH.match(line)
        if not m:
            continue
        label = " ".join(m["label"].split())
        if label not in NETSH_FORWARDING and label not in NETSH_SETTINGS and label != NETSH_DEFAULT_TTL \
                and m["value"][:1].isdigit():
            name = NETSH_LABELS.get(label)
            every.add(section, label, m["value"],
                      name and ("Ip6" + ("OutForwDatagrams" if name == "ForwDatagrams" else name) if family == "ipv6"
                                else "Ip" + name))
        if label in NETSH_FORWARDING:
            reading.raw[label] = m["value"]
            reading.forwarding = NETSH_FORWARDING[label].get(m["value"], reading.forwarding)
            continue
        if label in NETSH_SETTINGS:
            reading.raw[label] = m["value"]
            continue
        name = NETSH_LABELS.get(label)
        if name is None or family in repeats.stopped:
            continue
        value = base.value_of(label, m["value"], reading)
        if not repeats.keep(family, label, label, value, m["value"]):
            if repeats.conflicted(family, label):
                found[name] = None
            continue
        reading.raw[label] = m["value"]
        found[name] = value
    if family == "ipv6":
        reading.ipv6 = found or None
    else:
        reading.ipv4 = found or None
    return reading


# ------------------------------------------------------------------ every counter

# The MIB objects netstat.exe prints (IP Helper's MIB_IPSTATS, MIB_TCPSTATS, MIB_UDPSTATS,
# MIB_ICMP), by section kind: their standard names (model.Counter `name`). TCP for IPv6 has
# none (TCP-MIB counts both families in one group).
_IP = {"packets received": "InReceives", "received header errors": "InHdrErrors",
       "received address errors": "InAddrErrors", "datagrams forwarded": "ForwDatagrams",
       "unknown protocols received": "InUnknownProtos", "received packets discarded": "InDiscards",
       "received packets delivered": "InDelivers", "output requests": "OutRequests",
       "routing discards": "RoutingDiscards", "discarded output packets": "OutDiscards",
       "output packet no route": "OutNoRoutes", "reassembly required": "ReasmReqds",
       "reassembly successful": "ReasmOKs", "reassembly failures": "ReasmFails",
       "datagrams successfully fragmented": "FragOKs", "datagrams failing fragmentation": "FragFails",
       "fragments created": "FragCreates"}
_IP.update({label: name for label, name in LABELS.items()})
_IP6_NONE = {"routing discards"}
_ICMP = {"messages": "Msgs", "errors": "Errors", "destination unreachable": "DestUnreachs",
         "time exceeded": "TimeExcds", "parameter problems": "ParmProbs", "source quenches": "SrcQuenchs",
         "redirects": "Redirects", "echo replies": "EchoReps", "echos": "Echos", "timestamps": "Timestamps",
         "timestamp replies": "TimestampReps", "address masks": "AddrMasks", "address mask replies": "AddrMaskReps"}
_ICMP6 = {"messages": "Msgs", "errors": "Errors", "destination unreachable": "DestUnreachs",
          "packet too big": "PktTooBigs", "time exceeded": "TimeExcds", "parameter problems": "ParmProblems",
          "echos": "Echos", "echo replies": "EchoReplies", "mld queries": "GroupMembQueries",
          "mld reports": "GroupMembResponses", "mld dones": "GroupMembReductions",
          "router solicitations": "RouterSolicits", "router advertisements": "RouterAdvertisements",
          "neighbor solicitations": "NeighborSolicits", "neighbor advertisements": "NeighborAdvertisements",
          "redirects": "Redirects"}
_COLUMNS = {"received": "In", "sent": "Out"}
_TCP = {"active opens": "ActiveOpens", "passive opens": "PassiveOpens", "failed connection attempts": "AttemptFails",
        "reset connections": "EstabResets", "current connections": "CurrEstab", "segments received": "InSegs",
        "segments sent": "OutSegs", "segments retransmitted": "RetransSegs"}
_UDP = {"datagrams received": "InDatagrams", "no ports": "NoPorts", "receive errors": "InErrors",
        "datagrams sent": "OutDatagrams"}
_TABLE_ROW = lazy(r"^[ \t]*(?P<label>\S.*?)[ \t]{2,}(?P<values>\d\S*(?:[ \t]+\d\S*)?)[ \t]*$")
_ASSIGN = lazy(r"^[ \t]*(?P<label>[^=\s][^=]*?)[ \t]*=[ \t]*(?P<value>\S+)[ \t]*(?P<rest>.*?)[ \t]*$")


def _kind(header: str) -> Tuple[str, str]:
    """(kind, family) of a section header: ip / icmp / tcp / udp / interface, and ipv4 / ipv6."""
    words = header.lower()
    family = "ipv6" if "v6" in words else "ipv4"
    for kind in ("icmp", "tcp", "udp"):
        if kind in words:
            return kind, family
    if "interface" in words or "schnittstelle" in words:
        return "interface", family
    return "ip", family


def _standard(kind: str, family: str, label: str, column: Optional[str] = None) -> Optional[str]:
    key = label.lower()
    if kind == "ip":
        name = _IP.get(key)
        if name is None or family == "ipv6" and key in _IP6_NONE:
            return None
        if family == "ipv6":
            return "Ip6" + ("OutForwDatagrams" if name == "ForwDatagrams" else name)
        return "Ip" + name
    if kind == "icmp" and column in _COLUMNS:
        name = (_ICMP6 if family == "ipv6" else _ICMP).get(key)
        return f"Icmp{'6' if family == 'ipv6' else ''}{_COLUMNS[column]}{name}" if name else None
    if kind == "tcp" and family == "ipv4":
        name = _TCP.get(key)
        return "Tcp" + name if name else None
    if kind == "udp":
        name = _UDP.get(key)
        return f"Udp{'6' if family == 'ipv6' else ''}{name}" if name else None
    return None


def _every(lines: List[str], reading: Reading) -> None:
    """Every counter of a netstat -s (reading.counters): `Label = N` lines under their
    section header, and the ICMP and interface tables (`Destination Unreachable  5  10`
    under `Received  Sent`: one counter a column, "Destination Unreachable (Received)")."""
    every = base.Every(reading)
    section: Optional[str] = None
    kind, family = "ip", "ipv4"
    columns: List[str] = []
    for line in lines:
        if "=" not in line and _LONE_DIGIT.search(line) is None:
            if DAMAGED in line:
                section = None
                continue
            if _family(line) is not None:
                section, columns = line.strip(), []
                kind, family = _kind(section)
            elif section is not None and kind in ("icmp", "interface") and not columns and line.split():
                columns = line.split()              # `Received    Sent`
            continue
        if section is None:
            continue
        m = _ASSIGN.match(line)
        if m:
            label = " ".join(m["label"].split())
            if label.lower() in SETTINGS:
                continue
            value, rest = m["value"], m["rest"]
            if rest[:1].isdigit():
                value = f"{value} {rest}"
            every.add(section, label, value, _standard(kind, family, label))
            continue
        m = _TABLE_ROW.match(line) if columns else None
        if m:
            label = " ".join(m["label"].split())
            for column, value in zip(columns, m["values"].split()):
                every.add(section, f"{label} ({column})", value, _standard(kind, family, label, column.lower()))


@base.takes_command
def read(lines: List[str], command: Optional[str] = None) -> Reading:
    if any(_NETSH_STRONG.match(line) for line in lines):
        return _netsh(lines, command)
    reading = _read(lines)
    _every(lines, reading)
    return reading


def _read(lines: List[str]) -> Reading:
    reading = Reading(format="netstat -s", ipv4=None)
    found: Dict[str, Dict[str, int]] = {}
    labelled: Dict[str, int] = {}     # counter-shaped lines seen per IP section
    family: Optional[str] = None      # None: before any header (a findstr excerpt)
    header = ""
    headerless = False
    repeats = base.Repeats(reading)
    for line in lines:
        if "=" not in line:
            if DAMAGED in line and _LONE_DIGIT.search(line) is None:
                family, header = "other", ""   # a header we cannot read: its lines are no section we know
                continue
            if _LONE_DIGIT.search(line) is not None or not line.strip():
                continue  # ICMP and interface rows (`Messages  368  481`), blank lines
            fam = _family(line)
            if fam is not None:
                family, header = fam, line.strip()
                if fam in ("ipv4", "ipv6"):
                    found.setdefault(fam, {})
                    labelled.setdefault(fam, 0)
                if line.strip().lower().startswith(("interface statistics", "schnittstellenstatistik")):
                    reading.format = "netstat -e -s"
            continue
        if family == "other":
            continue
        target = family or "ipv4"
        if family is not None:
            labelled[target] += 1
        m = _KNOWN.match(line)  # one C-level match rejects the labels we do not read
        if not m:
            continue
        label = " ".join(m["label"].split())
        key = label.lower()
        if key in SETTINGS:
            reading.raw[_raw_key(header, label)] = m["value"]
            continue
        name = LABELS.get(key)
        if name is None:
            continue
        if family is None:
            headerless = True
            target = repeats.excerpt_family(key, label)
            found.setdefault(target, {})
        if target in repeats.stopped:
            continue
        shown, rest = m["value"], m["rest"]
        if rest[:1].isdigit():     # `= 1 234 567` (a locale's grouping) or `= 5 668 1`: read whole or refuse
            shown, rest = f"{shown} {rest}", ""
        value = base.value_of(label, shown, reading)
        if not repeats.keep(target, key, label, value, shown):
            if repeats.conflicted(target, key):
                found[target].pop(name, None)
            continue
        raw_header = header or ("IPv6" if target == "ipv6" and family is None else "")
        reading.raw[_raw_key(raw_header, label)] = shown
        if rest:
            reading.warnings.append(
                f"{label!r}: text after the value ignored: {rest!r}")
        if value is not None:
            found[target][name] = value
    for fam in ("ipv4", "ipv6"):
        if fam in found and not found[fam] and labelled.get(fam):
            reading.warnings.append(
                f"{'IPv6' if fam == 'ipv6' else 'IPv4'} section: none of its {labelled[fam]} labels "
                "is a reassembly or fragmentation label this parser knows (localized Windows?); "
                "counters left out")
    if headerless:
        reading.format = "netstat -s excerpt"
        reading.warnings.append(
            "no 'IP/IPv4/IPv6 Statistics' header before the counters: read as IPv4; Vista and "
            "later print the same labels again for IPv6, so a second block of them is IPv6")
    reading.ipv4 = found.get("ipv4")
    reading.ipv6 = found.get("ipv6")
    return reading


def _raw_key(header: str, label: str) -> str:
    return f"{header}: {label}" if header else label


def parse(text: str):
    return base.parse_text(text, META, read)
