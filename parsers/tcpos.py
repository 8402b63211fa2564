"""Stratus VOS TCP_OS (the older VOS TCP/IP stack): `netstat -s` (seed Figure 6b).

    netstat -s
    . . .
    ip:
    . . .
              20  fragments received
              10  datagrams reassembled

"datagrams reassembled" is TCP_OS's own wording (the BSDs say "packets reassembled ok"),
so any TCP_OS dump that shows reassembly is recognized by it.
"""
from __future__ import annotations

import re
from typing import List

from . import base, bsdstyle
from .model import ALL, Meta, Reading
from .lazyre import lazy


META = Meta(
    name="tcpos",
    title="Stratus VOS TCP_OS",
    covers=("Stratus VOS with TCP_OS (before STCP)",),
    formats=("netstat -s",),
    ipv4=ALL,
    reasm_unit="both",
    fails_unit="fragments",
    signals=bsdstyle.SIGNALS,
    semantics=(
        "Counts both, like STCP: 'fragments received' (ReasmReqds) goes up once per fragment, "
        "'datagrams reassembled' (ReasmOKs) once per datagram (seed Figure 6b: 20 fragments, 10 "
        "datagrams). The seed shows only those two lines; the other BSD lines ('fragments "
        "dropped (dup or out of space)' as ReasmFails, 'fragments dropped after timeout' as "
        "ReasmTimeout, the outgoing ones) are read when present and stay null otherwise. No IPv6." + " " + bsdstyle.TRAFFIC_WORDS),
)

LABELS = bsdstyle.COMMON + bsdstyle.labels(("ReasmOKs", r"datagrams? reassembled"))
_MARKER = lazy(r"^[ \t>]*\d[\d,]*[ \t]+datagrams? reassembled[ \t]*$", re.M | re.I)


def detect(text: str) -> float:
    return bsdstyle.score(text, _MARKER, 0.9, -0.02)


def read(lines: List[str]) -> Reading:
    reading = bsdstyle.read(lines, "netstat -s", table=LABELS)
    if reading.ipv6 is not None:
        reading.warnings.append("an ip6/ipv6 section in a TCP_OS dump: TCP_OS has no IPv6; section left out")
        reading.ipv6 = None
    return reading


def parse(text: str):
    return base.parse_text(text, META, read)
