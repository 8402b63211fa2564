"""Oracle Solaris and illumos `netstat -s`: MIB variables as `name = value`, two a line.

netstat prints every pair with "\\t%-20s=%6u", so values of a million or more fill the
field and glue to the `=`, and a 20-character name glues to it from the other side:

    IPv4    ipForwarding        =     2     ipDefaultTTL        =   255
            ipInReceives        =436389720  ipInHdrErrors       =     0
            ipReasmTimeout      =    15     ipReasmReqds        =2293219011
            ...
    IPv6    ipv6Forwarding      =     2     ipv6DefaultHopLimit =     0
            ipv6InDelivers      =207281793  ipv6OutForwDatagrams=     0

Solaris 8/9 (and later releases when /etc/default/inet_type keeps IPv4 only) call the
section "IP", with the header on its own line. `netstat -s -a` adds one "IPv6 for <if>"
section per interface before the summed "IPv6" one; only the sum is read. UDP, TCP,
RAWIP, ICMP, IGMP and SCTP print in the same shape; their names never start with
ip/ipv6, so they cannot leak into the IP counters.
"""
from __future__ import annotations

import bisect
import re
from typing import Dict, List, Optional

from ._needs import needs
from . import base
from .model import COUNTERS, TRAFFIC, Meta, Reading, Signal
from .lazyre import lazy


META = Meta(
    name="solaris",
    title="Oracle Solaris / illumos",
    covers=("SunOS 5.x / Solaris 2.6 to 11.4", "illumos: OpenIndiana, OmniOS, SmartOS"),
    formats=("netstat -s", "netstat -s -P ip / -P ipv6", "netstat -s -a", "cron logs with date lines",
             "netstat -s | grep excerpt"),
    ipv4=("ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates") + TRAFFIC,
    ipv6=("ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates") + TRAFFIC,
    reasm_unit="both",
    signals=(
        Signal("ptb-in", "ipv4", "ICMPv4: icmpInFragNeeded", note="'fragmentation needed' received, that code alone"),
        Signal("ptb-in", "ipv4", "ICMP: icmpInFragNeeded"),
        Signal("ptb-in", "ipv6", "Icmp6InPktTooBigs"),
        Signal("ptb-out", "ipv4", "ICMPv4: icmpOutFragNeeded", note="'fragmentation needed' sent, that code alone"),
        Signal("ptb-out", "ipv4", "ICMP: icmpOutFragNeeded"),
        Signal("ptb-out", "ipv6", "Icmp6OutPktTooBigs"),
        Signal("rto", "tcp", "TCP: tcpTimRetrans", note="retransmission timer expiries"),
        Signal("retrans", "tcp", "TcpRetransSegs"),
        Signal("segs-out", "tcp", "TcpOutSegs"),
    ),
    gauges=("tcpcurrestab", "sctpcurrestab", "sdpcurrestab"),
    semantics=(
        "The IP-MIB variables themselves (RFC 1213 / RFC 2465): ipReasmReqds counts fragments "
        "received that needed reassembly, ipReasmOKs datagrams reassembled, ipReasmFails "
        "failures of any kind; ipFragOKs, ipFragFails and ipFragCreates the outgoing side. "
        "ipReasmTimeout is the reassembly timeout in seconds (a setting, typically 15 or 60), "
        "not a count of timeouts: it is kept in raw only and ReasmTimeout is always null. "
        "ipReasmDuplicates and ipReasmPartDups (fragments wholly or partly duplicated) have "
        "no IP-MIB counterpart and stay in raw. IPv6 uses ipv6ReasmReqds, ipv6ReasmOKs, "
        "ipv6ReasmFails, ipv6OutFragOKs, ipv6OutFragFails, ipv6OutFragCreates. Counters are "
        "32-bit and wrap; ipReasmReqds (two or more fragments per datagram) wraps first, so "
        "ipReasmOKs above ipReasmReqds in one snapshot means a wrap: compare deltas. Old "
        "releases printed counters signed, so past 2^31 they show negative. Traffic: ipInReceives, "
        "ipInDelivers, ipOutRequests, ipForwDatagrams (IPv6: ipv6OutForwDatagrams); ipForwarding "
        "1 means forwarding is on, 2 off."),
)

IPV4 = {"ipreasmreqds": "ReasmReqds", "ipreasmoks": "ReasmOKs", "ipreasmfails": "ReasmFails",
        "ipfragoks": "FragOKs", "ipfragfails": "FragFails", "ipfragcreates": "FragCreates",
        "ipinreceives": "InReceives", "ipindelivers": "InDelivers", "ipoutrequests": "OutRequests",
        "ipforwdatagrams": "ForwDatagrams"}
IPV6 = {"ipv6reasmreqds": "ReasmReqds", "ipv6reasmoks": "ReasmOKs", "ipv6reasmfails": "ReasmFails",
        "ipv6outfragoks": "FragOKs", "ipv6outfragfails": "FragFails", "ipv6outfragcreates": "FragCreates",
        "ipv6inreceives": "InReceives", "ipv6indelivers": "InDelivers", "ipv6outrequests": "OutRequests",
        "ipv6outforwdatagrams": "ForwDatagrams"}
FORWARDING = {"ipforwarding", "ipv6forwarding"}
# Kept in raw beside the counters: the timeout setting and the duplicate counts.
RAW_ONLY = {"ipreasmtimeout", "ipreasmduplicates", "ipreasmpartdups",
            "ipv6reasmduplicates", "ipv6reasmpartdups"}

# A name stands alone (line start or whitespace before it): `ipReasmTimeout = 15` quoted in
# prose or Markdown, or `IP-MIB::ipReasmReqds.0 = 0` from snmpwalk, is not netstat output.
_PAIR = lazy(r"(?<!\S)(?P<name>[a-z][A-Za-z0-9]*)\s*=\s*(?P<value>\S+)")
# `IPv4    ipForwarding = 2 ...` (header inline) or `IP` / `IPv6 for hme0` alone on a line.
_SECTION = lazy(r"^[ \t]*(?P<sec>[A-Z][A-Za-z0-9]*(?: for \S+)?)(?:[ \t]*:?[ \t]*$|[ \t]+(?=[a-z][A-Za-z0-9]*[ \t]*=))",
                re.M)
_IP_PAIR = lazy(r"(?P<name>ip(?:v6)?(?:Reasm|Frag|OutFrag|InReceives|InDelivers|OutRequests|ForwDatagrams"
                r"|OutForwDatagrams|Forwarding)[A-Za-z]*)[ \t]*=[ \t]*"
                # a value grouped by a locale (=2 293 219 011) is read whole, never as its first group
                r"(?P<value>\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d])|\S+)")

_DETECT_IP = needs(lazy(r"(?<!\S)ip(?:v6)?(?:Reasm|Frag|OutFrag|InReceives|Forwarding|DefaultTTL"
                        r"|InDelivers|OutRequests)\w*\s*=\s*-?\d", re.I),
                   "reasm", "frag", "inreceives", "forwarding", "defaultttl", "indelivers", "outrequests", fold=True)
_DETECT_MIB = needs(lazy(r"(?<!\S)(?:tcp|udp|icmp|rawip|sctp)[A-Z]\w*\s*=\s*-?\d"),
                    "tcp", "udp", "icmp", "rawip", "sctp", fold=False)
_DETECT_HEADER = lazy(r"^[\s>]*(?:IPv4|IPv6|IP|RAWIP|UDP|TCP|ICMPv4|SCTP)[ \t]+[a-z]\w*\s*=", re.M)


def detect(text: str) -> float:
    ip = {m.group(0).split("=")[0].strip().lower() for m in _DETECT_IP.finditer(text)}
    if not ip:
        return 0.3 if len(_DETECT_MIB.findall(text)) >= 4 else 0.0
    score = 0.75 + 0.03 * len(ip) + (0.1 if _DETECT_HEADER.search(text) else 0.0)
    return min(1.0, score)


# ------------------------------------------------------------------ every counter

# settings printed among the counters (timers, limits, forwarding on/off): no counters
SETTINGS = frozenset(("ipForwarding", "ipDefaultTTL", "ipReasmTimeout", "ipv6Forwarding", "ipv6DefaultHopLimit",
                      "tcpRtoAlgorithm", "tcpRtoMin", "tcpRtoMax", "tcpMaxConn", "sctpRtoAlgorithm", "sctpRtoMin",
                      "sctpRtoMax", "sctpRtoInitial", "sctpMaxAssocs", "sctpValCookieLife", "sctpMaxInitRetr"))


def _every(text: str, sections, reading: Reading) -> None:
    """Every counter (reading.counters): the `name = value` pairs of each section (IPv4, TCP,
    ICMPv6 ...), and the count-first lines of the sections Solaris prints that way (IGMP)."""
    every = base.Every(reading)
    for i, (pos, sec) in enumerate(sections):
        end = sections[i + 1][0] if i + 1 < len(sections) else len(text)
        body = text[pos:end]
        pairs = list(_PAIR.finditer(body))
        if pairs:
            for pair in pairs:
                name, value = pair["name"], pair["value"]
                if name not in SETTINGS:
                    every.add(sec, name, value, base.mib_standard(name))
            continue
        for line in body.split("\n")[1:]:
            every.line(sec, line)


def read(lines: List[str]) -> Reading:
    reading = _read(lines)
    text = "\n".join(lines)
    sections = [(m.start(), m["sec"]) for m in _SECTION.finditer(text)]
    _every(text, sections, reading)
    return reading


def _read(lines: List[str]) -> Reading:
    reading = Reading(format="netstat -s", ipv4=None)
    text = "\n".join(lines)
    # Regexes over the whole snapshot, not a loop over its lines: TCP, ICMP and SCTP make
    # up most of a dump and hold nothing we read.
    sections = [(m.start(), m["sec"]) for m in _SECTION.finditer(text)]
    starts = [pos for pos, _ in sections]
    v4: Optional[Dict[str, int]] = None
    v6: Optional[Dict[str, int]] = None
    repeats = base.Repeats(reading)
    for i, (pos, sec) in enumerate(sections):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        if sec in ("IP", "IPv4") and v4 is None and _PAIR.search(text, pos, end):
            v4 = {}
        elif sec == "IPv6" and v6 is None and _PAIR.search(text, pos, end):
            v6 = {}
    for pair in _IP_PAIR.finditer(text):
        if pair.start() and not text[pair.start() - 1].isspace():
            continue  # the name must stand alone (see _PAIR); checked here so the regex stays literal-led
        at = bisect.bisect_right(starts, pair.start()) - 1
        if at >= 0 and sections[at][1].startswith("IPv6 for "):
            continue  # per-interface detail of `netstat -s -a`; the summed IPv6 section is read
        name, value = pair["name"], pair["value"]
        key = name.lower()
        if key in FORWARDING:
            reading.raw[name] = value
            if key == "ipforwarding" or reading.forwarding is None:
                reading.forwarding = {"1": True, "2": False}.get(value, reading.forwarding)
            continue
        if key not in IPV4 and key not in IPV6 and key not in RAW_ONLY:
            continue
        reading.raw[name] = value
        if key.startswith("ipv6"):
            v6 = {} if v6 is None else v6
        else:
            v4 = {} if v4 is None else v4
        counter = IPV4.get(key) or IPV6.get(key)
        if counter is not None:
            family = "ipv6" if key in IPV6 else "ipv4"
            target = v6 if key in IPV6 else v4
            if family in repeats.stopped:
                continue
            number = _value(name, value, reading)
            if not repeats.keep(family, key, name, number, value):
                if repeats.conflicted(family, key):
                    target[counter] = None  # type: ignore[index]
                continue
            if number is not None:
                target[counter] = number  # type: ignore[index]
    reading.ipv4, reading.ipv6 = v4, v6
    for fam, values, names in (("IPv4", v4, IPV4), ("IPv6", v6, IPV6)):
        if values is not None and not any(c in values for c in COUNTERS) \
                and not any(names.get(k.lower()) in COUNTERS for k in reading.raw):
            reading.warnings.append(f"{fam} section holds none of the reassembly/fragmentation "
                                    "counters (truncated output?)")
    return reading


def _value(name: str, value: str, reading: Reading) -> Optional[int]:
    if re.fullmatch(r"-\d+", value):
        wrapped = int(value) + 2 ** 32
        reading.warnings.append(
            f"{name!r}: value {value!r} is negative: this netstat printed a 32-bit counter as "
            f"signed; the count is probably {wrapped}; counter left out")
        return None
    return base.value_of(name, value, reading)


def parse(text: str):
    return base.parse_text(text, META, read)
