"""Stratus VOS STCP: `netstat -statistics -protocol ip` (seed 004, Figure 6a).

STCP prints the RFC 1213 MIB variables themselves, count first:

    ip:
              92  ipReasmReqds
              46  ipReasmOKs
               0  ipReasmFails
"""
from __future__ import annotations

import re
from typing import List

from . import base
from .model import Meta, Reading

META = Meta(
    name="vos",
    title="Stratus VOS STCP",
    covers=("Stratus VOS with STCP (14.x and later)",),
    formats=("netstat -statistics -protocol ip",),
    ipv4=("ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates"),
    reasm_unit="both",
    semantics=("Counts both: ipReasmReqds goes up once per fragment received, ipReasmOKs once "
               "per datagram reassembled (seed Fig. 6a: 92 fragments, 46 datagrams). "
               "ipReasmTimeout, where printed, is the reassembly timeout in seconds (RFC 1213), "
               "a setting, so it is never reported as a count."),
)

LABELS = {
    "ipreasmreqds": "ReasmReqds", "ipreasmoks": "ReasmOKs", "ipreasmfails": "ReasmFails",
    "ipfragoks": "FragOKs", "ipfragfails": "FragFails", "ipfragcreates": "FragCreates",
}
_MIB_LINE = re.compile(r"^\s*\d[\d,]*\s+ip(?:Reasm|Frag|InReceives|Forw|InDelivers|OutRequests)\w*\s*$", re.M)
_STCP_WORDS = re.compile(r"-statistics|-protocol ip|\bip:\s*$", re.M)


def detect(text: str) -> float:
    hits = len(_MIB_LINE.findall(text))
    if not hits:
        return 0.0
    return min(1.0, 0.6 + 0.1 * hits + (0.2 if _STCP_WORDS.search(text) else 0.0))


def read(lines: List[str]) -> Reading:
    reading = Reading(format="netstat -statistics", ipv4=None)
    found = base.collect(lines, LABELS, reading)
    if found:
        reading.ipv4 = found
    return reading


def parse(text: str):
    return base.parse_text(text, META, read)
