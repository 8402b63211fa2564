"""Stratus FTX 2.4, 3.3 and 3.4: `netstat -s` (seed Figures 6d and 6e).

    # netstat -s | grep fragment
    8 fragments received
    0 fragments dropped (dup or out of space)
    0 fragments dropped after timeout

These are BSD words, word for word what HP-UX and the BSDs print, and FTX prints no line
of its own that we know of: detection can never single FTX out, so an FTX dump is read
with `--os ftx` (the registry warns that the OS is ambiguous and names ftx among the
candidates).
"""
from __future__ import annotations
from typing import List

from . import base, bsdstyle
from .model import TRAFFIC, Meta, Reading


META = Meta(
    name="ftx",
    title="Stratus FTX",
    covers=("FTX 2.4", "FTX 3.3", "FTX 3.4"),
    formats=("netstat -s", "netstat -s | grep fragment"),
    ipv4=("ReasmReqds", "ReasmFails", "ReasmTimeout", "FragOKs", "FragFails", "FragCreates") + TRAFFIC,
    reasm_unit="fragments",
    fails_unit="fragments",
    signals=bsdstyle.SIGNALS,
    semantics=(
        "Reassembly is counted in one number only, 'fragments received' (ReasmReqds), and its "
        "unit depends on the release, which the text does not show: FTX 2.4 and 3.3 count "
        "received fragments (seed Figure 6d), FTX 3.4 counts reassembled datagrams in that same "
        "line (seed Figure 6e). reasm_unit says 'fragments' for the older releases; on FTX 3.4 "
        "read ReasmReqds as datagrams. No datagrams-reassembled count exists (ReasmOKs null), so "
        "no fragments-per-datagram ratio either way. ReasmFails is 'fragments dropped (dup or out "
        "of space)', a count of fragments; 'fragments dropped after timeout' is ReasmTimeout. "
        "Outgoing fragmentation lines are read when the dump has them. No IPv6." + " " + bsdstyle.TRAFFIC_WORDS),
)


def detect(text: str) -> float:
    return bsdstyle.score(text, None, 0.0, -0.01)


def read(lines: List[str]) -> Reading:
    reading = bsdstyle.read(lines, "netstat -s")
    if reading.ipv6 is not None:
        reading.warnings.append("an ip6/ipv6 section in an FTX dump: FTX has no IPv6; section left out")
        reading.ipv6 = None
    return reading


def parse(text: str):
    return base.parse_text(text, META, read)
