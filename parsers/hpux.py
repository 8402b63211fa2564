"""HP-UX 11.x: `netstat -s`, `netstat -sv`, `netstat -p ip`, `netstat -p ipv6` (seed Figure 6f).

    ip:
           2794923783 total packets received
           0 bad IP headers
           4044824 fragments received
           0 fragments dropped (dup or out of space)
           56 fragments dropped after timeout
           0 packets forwarded
           0 packets not forwardable

HP-UX prints no "packets reassembled ok" and no outgoing fragmentation lines in this
section. Lines only HP-UX prints ("bad IP headers", "socket overflows", "connect requests
dropped due to full queue" ...) make a full dump unmistakable; the three `| grep fragment`
lines of Figure 6f are word for word what FTX and the BSDs print, so those are ambiguous.
"""
from __future__ import annotations

import re
from typing import List

from ._needs import needs
from . import base, bsdstyle
from .model import TRAFFIC, Meta, Reading
from .lazyre import lazy


META = Meta(
    name="hpux",
    title="HP-UX 11",
    covers=("HP-UX 11.00", "HP-UX 11i v1 (11.11)", "HP-UX 11i v2 (11.23)", "HP-UX 11i v3 (11.31)"),
    formats=("netstat -s", "netstat -sv", "netstat -p ip", "netstat -p ipv6", "netstat -s | grep fragment"),
    ipv4=("ReasmReqds", "ReasmFails", "ReasmTimeout") + TRAFFIC,
    ipv6=("ReasmReqds", "ReasmFails") + TRAFFIC,
    reasm_unit="datagrams",
    fails_unit="fragments",
    signals=bsdstyle.SIGNALS,
    semantics=(
        "Counts only reassembled datagrams although the line says 'fragments received' "
        "(Stratus, \"Tuning your MSS\", Figure 6f, HP-UX 11.00): that number goes to ReasmReqds as the IP-MIB "
        "mapping says, but on HP-UX it is a number of datagrams, so no fragments-per-datagram "
        "ratio can be taken from it. HP's 11i v3 white paper describes the line as fragments; "
        "the text does not say which release printed it. There is no 'packets reassembled ok' "
        "line (ReasmOKs null) and no outgoing fragmentation lines (FragOKs, FragFails, "
        "FragCreates null). ReasmFails is 'fragments dropped (dup or out of space)' (IPv6: "
        "'fragments dropped'); 'fragments dropped after timeout' is ReasmTimeout, a count. "
        "HP-UX prints every line, zeros included." + " " + bsdstyle.TRAFFIC_WORDS + " " + bsdstyle.SIGNAL_WORDS),
)

LABELS = bsdstyle.COMMON + bsdstyle.labels(("ReasmFails", r"fragments? dropped"))

_MARKERS = needs(lazy(
    r"bad IP headers|bad IPv6 headers|connect requests dropped due to (?:full queue|no listener)"
    r"|socket overflows|calls to generate an ICMP error message|ICMP messages dropped|bad ICMP messages"
    r"|segments discarded for bad checksum|bad TCP segments dropped due to state change",
    re.I), "bad ip", "connect requests dropped due to ", "socket overflows", "calls to generate an icmp error message",
    "icmp messages dropped", "bad icmp messages", "segments discarded for bad checksum", "bad tcp segments dropped", fold=True)


def detect(text: str) -> float:
    generic = bsdstyle.family_score(text)
    if bsdstyle.markers(text, _MARKERS) and (generic or re.search(r"fragments? received", text)):
        return 0.95
    return generic


def read(lines: List[str]) -> Reading:
    return bsdstyle.read(lines, "netstat -s", table=LABELS)


def parse(text: str):
    return base.parse_text(text, META, read)
