"""IBM AIX: `netstat -s`, `netstat -ss`, `netstat -p ip`.

BSD words in an `ip:` section and an `ipv6:` section (AIX never says "ip6:"), plus lines no
other stack prints: "ipintrq overflows", "dead gateway detection ...", "path MTU discovery
...", "IP Multicast packets dropped due to no receiver", "packets dropped by threads".
"""
from __future__ import annotations

import re
from typing import List

from ._needs import needs
from . import base, bsdstyle
from .model import ALL, TRAFFIC, Meta, Reading, Signal
from .lazyre import lazy


META = Meta(
    name="aix",
    title="IBM AIX",
    covers=("AIX 4.3", "AIX 5L", "AIX 6.1", "AIX 7.x"),
    formats=("netstat -s", "netstat -ss", "netstat -p ip", "netstat -p ipv6"),
    ipv4=ALL,
    # the ipv6: section has no "datagrams that can't be fragmented" line
    ipv6=("ReasmReqds", "ReasmOKs", "ReasmFails", "ReasmTimeout", "FragOKs", "FragCreates") + TRAFFIC,
    reasm_unit="both",
    fails_unit="fragments",
    signals=bsdstyle.SIGNALS + (
        Signal("blackhole", "tcp", "tcp: path MTU discovery terminations due to retransmits", note="AIX stops "
               "PMTU discovery for a connection whose large segments go unanswered (tcp_pmtu_discover)"),
    ),
    semantics=(
        "BSD counters: 'fragments received' (ReasmReqds) counts fragments, 'packets reassembled "
        "ok' (ReasmOKs) datagrams. ReasmFails is 'fragments dropped (dup or out of space)', a "
        "count of fragments; 'fragments dropped after timeout' is ReasmTimeout only (a count). "
        "'output datagrams fragmented' FragOKs, 'fragments created' FragCreates, 'datagrams that "
        "can't be fragmented' FragFails (IPv4 only). AIX keeps 32-bit counters that wrap (real "
        "dumps show more datagrams reassembled than fragments received). netstat -ss prints "
        "non-zero lines only, so inside a complete ip:/ipv6: section a missing counter is 0 (null when "
        "the section prints a line with 0: a plain netstat -s shows every counter)." + " " + bsdstyle.TRAFFIC_WORDS
        + " " + bsdstyle.SIGNAL_WORDS),
)

_MARKERS = needs(lazy(
    r"ipintrq overflows|dead gateway detection|path MTU discovery|path MTU rediscovery"
    r"|IP Multicast packets dropped due to no receiver|packets? (?:processed|dropped) by threads"
    r"|dropped due to MLS filters|not sent due to MLS filters|spliced connections|largesend"
    r"|packets? sent with fabricated ipv6 header|^[ \t>]*icmpv6:[ \t]*$",
    re.M | re.I), "ipintrq overflows", "dead gateway detection", "path mtu", "ip multicast packets dropped due to no receiver",
    " by threads", "mls filters", "spliced connections", "largesend", "sent with fabricated ipv6 header", "icmpv6:", fold=True)


def detect(text: str) -> float:
    return bsdstyle.score(text, _MARKERS, 0.95, -0.02)


def read(lines: List[str]) -> Reading:
    return bsdstyle.read(lines, "netstat -s", zero_fill=META.ipv4, zero_fill6=META.ipv6)


def parse(text: str):
    return base.parse_text(text, META, read)
