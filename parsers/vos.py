"""Stratus VOS / OpenVOS STCP: `netstat -statistics -protocol ip` (Stratus, "Tuning your MSS", Figure 6a).

STCP prints the RFC 1213 MIB variables themselves, count first, one a line:

    netstat -statistics -protocol ip
    ip:
    . . .
              92  ipReasmReqds
              46  ipReasmOKs
               0  ipReasmFails
    . . .
    ready 15:19:23

Without `-protocol` it adds icmp:, tcp: and udp: sections in the same shape (Stratus
says STCP's netstat statistics are the standard RFC 1213 ones). Commands may appear with
their full path (`>system>stcp>command_library>netstat ...`) and the command processor
ends each command with a `ready hh:mm:ss` line; neither is a counter.
"""
from __future__ import annotations

import re
from typing import List

from ._needs import needs
from . import base
from .model import TRAFFIC, Meta, Reading, Signal
from .lazyre import lazy


META = Meta(
    name="vos",
    title="Stratus VOS STCP",
    covers=("Stratus VOS 14.x with STCP", "OpenVOS 15.x to 17.x with STCP"),
    formats=("netstat -statistics -protocol ip", "netstat -statistics"),
    ipv4=("ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates") + TRAFFIC,
    reasm_unit="both",
    signals=(
        Signal("ptb-in", "ipv4", "IcmpInDestUnreachs", False, "every ICMP destination unreachable received "
               "(icmpInDestUnreachs)"),
        Signal("ptb-out", "ipv4", "IcmpOutDestUnreachs", False, "every ICMP destination unreachable sent"),
        Signal("retrans", "tcp", "TcpRetransSegs"),
        Signal("segs-out", "tcp", "TcpOutSegs"),
    ),
    semantics=("Counts both: ipReasmReqds goes up once per fragment received, ipReasmOKs once "
               "per datagram reassembled (seed Fig. 6a: 92 fragments, 46 datagrams; four more "
               "fragments made two more datagrams); ipReasmFails counts failures. ipFragOKs, "
               "ipFragFails and ipFragCreates count the sending side where printed. "
               "ipReasmTimeout, where printed, is the reassembly timeout in seconds (RFC 1213), "
               "a setting, so it stays in raw and ReasmTimeout is null. No IPv6 layout of this "
               "output is documented publicly: ipv6 is null. Traffic: ipInReceives, ipInDelivers, "
               "ipOutRequests, ipForwDatagrams; ipForwarding 1 means forwarding is on, 2 off."),
)

LABELS = {
    "ipreasmreqds": "ReasmReqds", "ipreasmoks": "ReasmOKs", "ipreasmfails": "ReasmFails",
    "ipfragoks": "FragOKs", "ipfragfails": "FragFails", "ipfragcreates": "FragCreates",
    "ipinreceives": "InReceives", "ipindelivers": "InDelivers", "ipoutrequests": "OutRequests",
    "ipforwdatagrams": "ForwDatagrams",
}
SETTINGS = {"ipreasmtimeout", "ipforwarding", "ipdefaultttl"}

# `   92  ipReasmReqds`: a count, then one MIB name and nothing else (no `=`: that is Solaris).
_MIB_LINE = needs(lazy(r"^[\s>]*\d[\d,]*\s+ip(?:Reasm|Frag|InReceives|InHdrErrors|InAddrErrors|Forw"
                       r"|InDelivers|InDiscards|InUnknownProtos|OutRequests|OutDiscards|OutNoRoutes"
                       r"|DefaultTTL|RoutingDiscards)\w*\s*$", re.M),
                  "ipReasm", "ipFrag", "ipIn", "ipForw", "ipOut", "ipDefaultTTL", "ipRoutingDiscards", fold=False)
_OTHER_MIB = needs(lazy(r"^[\s>]*\d[\d,]*\s+(?:icmp|tcp|udp)[A-Z]\w*\s*$", re.M), "icmp", "tcp", "udp", fold=False)
_STCP_WORDS = lazy(r"-statistics|-protocol\s+ip|^[\s>]*ip:\s*$|^[\s>]*ready\s+\d\d:\d\d:\d\d\s*$"
                   r"|>system>", re.M | re.I)
_COUNT_NAME = lazy(r"^\s*(?P<value>\d[\d,]*\S*)\s+(?P<label>[A-Za-z]\w*)\s*$")


def detect(text: str) -> float:
    hits = len(_MIB_LINE.findall(text))
    if not hits:
        return 0.3 if len(_OTHER_MIB.findall(text)) >= 3 else 0.0
    return min(1.0, 0.6 + 0.1 * hits + (0.2 if _STCP_WORDS.search(text) else 0.0))


_SECTION = lazy(r"^\s*(?P<name>[a-z][a-z0-9]*):\s*$")


def _every(lines: List[str], reading: Reading) -> None:
    """Every counter (reading.counters): `count  mibName` lines under their `ip:`, `icmp:`,
    `tcp:`, `udp:` header; settings (ipReasmTimeout, ipForwarding, ipDefaultTTL) are none."""
    every = base.Every(reading)
    section = None
    for line in lines:
        m = _SECTION.match(line)
        if m:
            section = m["name"]
            continue
        c = _COUNT_NAME.match(line) if section else None
        if c and c["label"].lower() not in SETTINGS:
            every.add(section, c["label"], c["value"], base.mib_standard(c["label"]))


def read(lines: List[str]) -> Reading:
    reading = _read(lines)
    _every(lines, reading)
    return reading


def _read(lines: List[str]) -> Reading:
    reading = Reading(format="netstat -statistics", ipv4=None)
    mib = [line for line in lines if _COUNT_NAME.match(line)]
    found = base.collect(mib, LABELS, reading, _COUNT_NAME)
    seen_ip = bool(found)
    ipv6 = []
    for line in mib:
        m = _COUNT_NAME.match(line)
        name = m["label"]
        key = name.lower()
        if key in SETTINGS:
            reading.raw[name] = m["value"]
            seen_ip = True
            if key == "ipforwarding":
                reading.forwarding = {"1": True, "2": False}.get(m["value"])
        elif key.startswith(("ipv6", "ip6")):
            reading.raw[name] = m["value"]
            ipv6.append(name)
        elif key.startswith("ip") and key[2:3].isalpha():
            seen_ip = True
    if ipv6:
        reading.warnings.append(f"IPv6 counters {', '.join(ipv6[:3])}{'...' if len(ipv6) > 3 else ''} "
                                "kept in raw only: this parser knows no documented IPv6 layout of STCP output")
    if seen_ip:
        reading.ipv4 = found
    return reading


def parse(text: str):
    return base.parse_text(text, META, read)
