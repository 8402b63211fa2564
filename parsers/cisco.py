"""Cisco IOS / IOS-XE `show ip traffic` and `show ipv6 traffic`, and the CLIs that copy it:
Dell FTOS / Force10 (OS9), Edge-core / SMC / Accton switches, Avici.

    R1#show ip traffic
    IP statistics:
      Rcvd:  675835453 total, 86262827 local destination
             0 format errors, 0 checksum errors, 0 bad hop count
      Frags: 0 reassembled, 0 timeouts, 0 couldn't reassemble
             275 fragmented, 550 fragments, 0 couldn't fragment
      Sent:  24369807 generated, 595004147 forwarded

Counters are `N label` pairs, comma separated, under a sub-heading (`Rcvd:`, `Frags:`,
`Sent:`...) that continuation lines inherit, inside a section (`IP statistics:`,
`IPv6 statistics:`; ICMP, UDP, TCP, OSPF... sections are skipped). The reader needs neither
the indentation nor the line breaks between pairs, so a forum that collapsed the blanks or
a chat that joined the continuation lines changes nothing.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ._needs import needs
from . import base
from .model import Meta, Reading, Signal
from .text import DAMAGED
from .lazyre import lazy


META = Meta(
    name="cisco",
    role="router",
    title="Cisco IOS / IOS-XE and Cisco-style CLIs (Dell FTOS, Edge-core, Avici)",
    covers=("Cisco IOS 12.x, 15.x", "Cisco IOS-XE", "Dell FTOS / Force10 OS9 (S-, Z-, MXL, FN IOM)",
            "Edge-core / SMC / Accton switch firmware", "Avici Systems routers"),
    formats=("show ip traffic", "show ipv6 traffic", "R1#show ip traffic (prompt kept)"),
    ipv4=("ReasmReqds", "ReasmOKs", "ReasmFails", "ReasmTimeout", "FragOKs", "FragFails", "FragCreates",
          "InReceives", "InDelivers", "OutRequests", "ForwDatagrams"),
    ipv6=("ReasmReqds", "ReasmOKs", "ReasmFails", "ReasmTimeout", "FragOKs", "FragFails", "FragCreates",
          "InReceives", "InDelivers", "OutRequests", "ForwDatagrams"),
    reasm_unit="both",
    signals=(
        Signal("ptb-in", "ipv4", "IcmpInDestUnreachs", False, "ICMP statistics 'Rcvd: unreachable': every "
               "destination unreachable received"),
        Signal("ptb-out", "ipv4", "IcmpOutDestUnreachs", False, "'Sent: unreachable': every destination "
               "unreachable sent (the router's 'fragmentation needed' among them)"),
        Signal("ptb-in", "ipv6", "Icmp6InPktTooBigs", note="show ipv6 traffic, ICMP 'Rcvd: too big'"),
        Signal("ptb-out", "ipv6", "Icmp6OutPktTooBigs", note="ICMP 'Sent: too big'"),
    ),
    semantics=(
        "IPv4 'Frags:' line: 'reassembled' is datagrams put back together (ReasmOKs), 'timeouts' the "
        "reassemblies given up when the timer expired (ReasmTimeout, a count), 'couldn't reassemble' "
        "other failures (ReasmFails); 'fragmented' counts datagrams fragmented (FragOKs), 'fragments' the "
        "pieces made from them (FragCreates: 275 fragmented, 550 fragments), 'couldn't fragment' datagrams "
        "that needed fragmenting but had DF set or could not be split (FragFails: the DF drops that break "
        "PMTU-blind TCP). IOS prints no count of fragments received for IPv4, so ReasmReqds is null; Avici "
        "prints '0 fragments' under Rcvd: (ReasmReqds) and 'fragments created' under Sent:. IPv6 "
        "(show ipv6 traffic): 'fragments' under Rcvd: are fragments received (ReasmReqds), 'total "
        "reassembled' ReasmOKs, 'reassembly timeouts' ReasmTimeout, 'reassembly failures' ReasmFails, "
        "'N fragmented into M fragments, K failed' FragOKs, FragCreates, FragFails. Dell FTOS: 'reassembled' "
        "and 'timeouts' as IOS, 'too big' (invalid fragments received) is kept in raw only, and FTOS prints "
        "no fragments-created count. Traffic: Rcvd 'total' is InReceives, 'local destination' InDelivers "
        "(to the device itself), Sent 'generated' OutRequests, 'forwarded' ForwDatagrams. These are "
        "routers: forwarding is true when the device forwarded datagrams (forwarded > 0), else unknown. "
        "IOS keeps 32-bit counters here."),
)

_SECTION = lazy(r"^[ \t>]*(?P<name>[A-Za-z][\w/-]*(?:[ \t][A-Za-z][\w/-]*)?)[ \t]+statistics:", re.I)
_SUB = lazy(r"(?:^|(?<=[;\s]))(?P<sub>Rcvd|Sent|Frags|Bcast|Mcast|Drop|Opts|Reinj|Port):", re.I)
# `N label` with the label running to a comma, a semicolon, the next sub-heading or number.
_PAIR = lazy(r"(?<![^\s:,;])(?P<value>[0-9][0-9]*(?:[.\u00a0 ][0-9]{3})*)[ \t]+(?P<label>[A-Za-z'_][A-Za-z'_ /-]*?)"
             r"[ \t]*(?=[,;]|$|[0-9]|\b(?:Rcvd|Sent|Frags|Bcast|Mcast|Drop|Opts|Reinj|Port):)")
_FRAGMENTED_INTO = lazy(r"(?P<oks>[0-9]+)[ \t]+fragmented[ \t]+into[ \t]+(?P<creates>[0-9]+)[ \t]+fragments"
                        r"(?:[ \t]*,[ \t]*(?P<fails>[0-9]+)[ \t]+failed)?", re.I)

# (family, sub-heading or '' for any, label) -> counter
_MAP: Dict[Tuple[str, str, str], str] = {
    ("ipv4", "frags", "reassembled"): "ReasmOKs",
    ("ipv4", "frags", "timeouts"): "ReasmTimeout",
    ("ipv4", "frags", "couldn't reassemble"): "ReasmFails",
    ("ipv4", "frags", "fragmented"): "FragOKs",
    ("ipv4", "frags", "fragments"): "FragCreates",
    ("ipv4", "frags", "couldn't fragment"): "FragFails",
    ("ipv4", "rcvd", "fragments"): "ReasmReqds",                 # Avici
    ("ipv4", "rcvd", "reassembled"): "ReasmOKs",
    ("ipv4", "rcvd", "couldn't reassemble"): "ReasmFails",
    ("ipv4", "sent", "fragmented"): "FragOKs",
    ("ipv4", "sent", "fragments created"): "FragCreates",
    ("ipv4", "sent", "couldn't fragment"): "FragFails",
    ("ipv4", "rcvd", "total"): "InReceives",
    ("ipv4", "rcvd", "local destination"): "InDelivers",
    ("ipv4", "sent", "generated"): "OutRequests",
    ("ipv4", "sent", "forwarded"): "ForwDatagrams",
    ("ipv6", "rcvd", "fragments"): "ReasmReqds",
    ("ipv6", "rcvd", "total reassembled"): "ReasmOKs",
    ("ipv6", "rcvd", "reassembly timeouts"): "ReasmTimeout",
    ("ipv6", "rcvd", "reassembly failures"): "ReasmFails",
    ("ipv6", "rcvd", "total"): "InReceives",
    ("ipv6", "rcvd", "local destination"): "InDelivers",
    ("ipv6", "sent", "generated"): "OutRequests",
    ("ipv6", "sent", "forwarded"): "ForwDatagrams",
}

# Detection: the IP section header with the sub-headings only this CLI family prints.
_DETECT_HEADER = needs(lazy(r"^[ \t>]*IP(?:v6)? statistics:", re.M | re.I), "ip statistics:", "ipv6 statistics:", fold=True)
_DETECT_FRAGS = needs(lazy(r"Frags:[ \t]*[0-9]+[ \t]+reassembled|[0-9]+[ \t]+couldn'?t fragment"
                           r"|[0-9]+[ \t]+fragmented into[ \t]+[0-9]+[ \t]+fragments|[0-9]+[ \t]+total reassembled", re.I),
                      "reassembled", "couldn", "fragmented into", fold=True)
_DETECT_RCVD = needs(lazy(r"Rcvd:[ \t]*[0-9]+[ \t]+total", re.I), "rcvd:", fold=True)


def detect(text: str) -> float:
    frags = _DETECT_FRAGS.search(text) is not None
    rcvd = _DETECT_RCVD.search(text) is not None
    header = _DETECT_HEADER.search(text) is not None
    if frags and (rcvd or header):
        return 0.95
    if frags:
        return 0.75
    if rcvd and header:
        return 0.6
    return 0.0


def _family(name: str) -> Optional[str]:
    n = name.lower().strip()
    if n in ("ip", "ipv4", "control processor ip"):
        return "ipv4"
    if n == "ipv6":
        return "ipv6"
    return "other"


# ------------------------------------------------------------------ every counter

_INNER_SUB = lazy(r"(?:^|(?<=[\s,]))(?P<sub>[a-z][a-z ]*?):[ \t]*(?=[0-9])")     # ICMPv6 `unreach: 0 routing, ...`
_GLUED_DIGITS = lazy(r"[0-9]+(?=[\s,;]|$)")
_ICMP_NAMES = {("rcvd", "unreachable"): "IcmpInDestUnreachs", ("sent", "unreachable"): "IcmpOutDestUnreachs"}
_ICMP6_NAMES = {("rcvd", "too big"): "Icmp6InPktTooBigs", ("sent", "too big"): "Icmp6OutPktTooBigs"}


def _standard(family: str, section: str, sub: str, label: str) -> Optional[str]:
    kind = section.lower()
    if kind.startswith(("ip ", "ipv4 ", "ipv6 ", "control processor ip")):
        name = _MAP.get((family, sub, label.lower()))
        if name is None:
            return None
        if family == "ipv6":
            return "Ip6" + ("OutForwDatagrams" if name == "ForwDatagrams" else name)
        return "Ip" + name
    if kind.startswith("icmp"):
        return (_ICMP6_NAMES if family == "ipv6" else _ICMP_NAMES).get((sub, label.lower()))
    return None


def _every(lines: List[str], reading: Reading) -> None:
    """Every counter (reading.counters): each `N words` of each sub-heading (`Rcvd: 17780 total`
    is "Rcvd: total") of every section (IP, ICMP, UDP, TCP, OSPF, ARP ...). The sections that
    follow `IPv6 statistics:` (show ipv6 traffic) and share a name with show ip traffic's are
    told apart by that parent ("IPv6 > Rcvd: input")."""
    every = base.Every(reading)
    section = None
    family = "ipv4"
    sub = ""
    inner, inner_at = "", -1          # `unreach:` and the column of its first value: its continuation lines
    for line in lines:
        m = _SECTION.match(line)
        if m:
            section, sub, inner = line[:m.end()].strip(" \t>").rstrip(":"), "", ""
            if _family(m["name"]) in ("ipv4", "ipv6"):
                family = _family(m["name"])
            line = line[m.end():]
        if section is None or DAMAGED in line:
            continue
        parent = "IPv6" if family == "ipv6" else None
        pos = 0
        segments: List[Tuple[str, str]] = []
        for s in _SUB.finditer(line):
            segments.append((sub, line[pos:s.start()]))
            sub = s["sub"].lower()
            pos = s.end()
        segments.append((sub, line[pos:]))
        for seg_sub, text in segments:
            head = seg_sub.title() + ": " if seg_sub else ""
            into = _FRAGMENTED_INTO.search(text) if family == "ipv6" and seg_sub == "sent" else None
            if into:
                label = head + "fragmented into # fragments" + (", # failed" if into["fails"] is not None else "")
                for k, (key, name) in enumerate((("oks", "Ip6FragOKs"), ("creates", "Ip6FragCreates"),
                                                 ("fails", "Ip6FragFails")), 1):
                    if into[key] is not None:
                        every.add(section, label + (f" #{k}" if k > 1 else ""), into[key], name, parent=parent)
                text = text[:into.start()] + text[into.end():]
            if inner and len(line) - len(line.lstrip()) != inner_at:
                inner = ""
            at = 0
            for p in _PAIR.finditer(text):
                for i in _INNER_SUB.finditer(text, at, p.start() + 1):
                    inner, inner_at = i["sub"] + ": ", line.find(text) + i.end()
                at = p.end()
                label = " ".join(p["label"].split()).replace("\u2019", "'")
                glued = _GLUED_DIGITS.match(text, p.end("label"))
                if glued and label[-1:].isalpha():
                    label += glued.group(0)     # `bad embedded ipv6`
                before = text[:p.start()].rstrip()
                if before[-1:].isdigit():
                    continue            # glued to the number before it: the value is not certain
                every.add(section, head + inner + label, p["value"],
                          _standard(family, section, seg_sub, label) if not inner else None, parent=parent)


def read(lines: List[str]) -> Reading:
    reading = _read(lines)
    _every(lines, reading)
    return reading


def _read(lines: List[str]) -> Reading:
    reading = Reading(format="show ip traffic", ipv4=None)
    found: Dict[str, Dict[str, Optional[int]]] = {}
    family: Optional[str] = None
    sub = ""
    forwarded: List[int] = []
    repeats = base.Repeats(reading)
    for line in lines:
        m = _SECTION.match(line)
        if m:
            family = _family(m["name"])
            sub = ""
            if family != "other":
                found.setdefault(family, {})
                if family == "ipv6":
                    reading.format = "show ipv6 traffic" if "ipv4" not in found else "show ip traffic + show ipv6 traffic"
            line = line[m.end():]
        if family in (None, "other"):
            continue
        target = found[family]
        # sub-headings may sit mid-line (FTOS `...; Mcast:`, or a joined continuation)
        pos = 0
        segments: List[Tuple[str, str]] = []
        for s in _SUB.finditer(line):
            segments.append((sub, line[pos:s.start()]))
            sub = s["sub"].lower()
            pos = s.end()
        segments.append((sub, line[pos:]))
        for seg_sub, text in segments:
            if not text.strip():
                continue
            if family == "ipv6" and seg_sub == "sent":
                into = _FRAGMENTED_INTO.search(text)
                if into:
                    for name, key in (("FragOKs", "oks"), ("FragCreates", "creates"), ("FragFails", "fails")):
                        if into[key] is not None:
                            _store(reading, repeats, target, family, seg_sub, name, name, into[key])
                    text = text[:into.start()] + text[into.end():]
            for p in _PAIR.finditer(text):
                label = " ".join(p["label"].split()).lower().replace("\u2019", "'")
                before = text[:p.start()].rstrip()
                ambiguous = before[-1:].isdigit() or before.endswith(DAMAGED)
                name = _MAP.get((family, seg_sub, label))
                if name is None:
                    continue
                if ambiguous:
                    reading.warnings.append(f"{seg_sub.title()}: {label!r}: digits before {p['value']!r} "
                                            "make the value ambiguous; counter left out")
                    target[name] = None
                    continue
                value = _store(reading, repeats, target, family, seg_sub, name, label, p["value"])
                if name == "ForwDatagrams" and value:
                    forwarded.append(value)
    if forwarded:
        reading.forwarding = True
    reading.ipv4 = found.get("ipv4") or None
    reading.ipv6 = found.get("ipv6") or None
    if "ipv4" in found and reading.ipv4 is None:
        reading.warnings.append("IP statistics: section holds none of the counters this parser reads")
    return reading


def _store(reading: Reading, repeats: base.Repeats, target: Dict[str, Optional[int]], family: str, sub: str,
           name: str, label: str, shown: str) -> Optional[int]:
    key = f"{'IPv6 ' if family == 'ipv6' else ''}{sub.title()}: {label}"
    if family in repeats.stopped:
        return None
    value = base.value_of(key, shown, reading)
    if not repeats.keep(family, (sub, name), key, value, shown):
        if repeats.conflicted(family, (sub, name)):
            target[name] = None
        return None
    reading.raw[key] = shown
    target[name] = value
    return value


def parse(text: str):
    return base.parse_text(text, META, read)
