"""FreeBSD, macOS, OpenBSD, NetBSD, DragonFly and other BSD-derived stacks (Junos): `netstat -s`.

    ip:
            4474390 total packets received
            0 fragments received
            0 fragments dropped (dup or out of space)
            0 fragments dropped after timeout
            0 packets reassembled ok
            ...
            0 output datagrams fragmented
            0 fragments created
            0 datagrams that can't be fragmented
    ip6:
            ... the same words, read into ipv6 ...

macOS nests the drop and reassembly lines under "fragment received" ("0 dropped after
timeout") and prints singular forms ("0 fragment created"); FreeBSD prints "1 fragment
received". This module is also the generic answer for a `| grep fragment` excerpt that
could come from any stack of the family (seed Figures 6d, 6e, 6f are word for word what
a BSD prints): it wins such excerpts by a hair, and the registry warns that the OS is
ambiguous so the engineer can force `--os ftx` or `--os hpux`.
"""
from __future__ import annotations

import re
from typing import List

from ._needs import needs
from . import base, bsdstyle
from .model import ALL, Meta, Reading, Signal
from .lazyre import lazy


META = Meta(
    name="bsd",
    title="BSD-derived stacks (FreeBSD, macOS, OpenBSD, NetBSD, Junos)",
    covers=("FreeBSD", "macOS / Darwin", "OpenBSD", "NetBSD", "DragonFly BSD",
            "Juniper Junos (show system statistics, show system statistics ip / ip6)", "other 4.4BSD-derived stacks",
            "SCO / SVR4 stacks of BSD descent (packets reassembled, packets fragmented, packets delivered)"),
    formats=("netstat -s", "netstat -ss", "netstat -s -p ip", "netstat -s -p ip6",
             "netstat -s | grep fragment"),
    ipv4=ALL,
    ipv6=ALL,
    reasm_unit="both",
    fails_unit="fragments",
    signals=bsdstyle.SIGNALS + (
        Signal("blackhole", "tcp", "tcp: Path MTU discovery black hole detection activations", note="FreeBSD: "
               "connections whose MSS the stack lowered after retransmissions (net.inet.tcp.pmtud_blackhole_detection)"),
        Signal("blackhole", "tcp", "tcp: Path MTU discovery black hole detection activation"),
        Signal("blackhole", "tcp", "tcp: time PMTU Blackhole detection, size reverted", note="macOS: times the "
               "black-hole detection set the segment size back after lowering it"),
    ),
    semantics=(
        "Counts both: 'fragments received' (ReasmReqds) goes up once per fragment, 'packets "
        "reassembled ok' (ReasmOKs) once per datagram rebuilt. ReasmFails is the number of "
        "fragments dropped, not of failed datagrams: 'fragments dropped (dup or out of space)' "
        "plus OpenBSD/NetBSD 'malformed fragments dropped' (separate kernel counters, so nothing "
        "is counted twice). Fragments dropped after the reassembly timeout are ReasmTimeout only, "
        "a count, never added to ReasmFails. IPv6-only lines ('fragments that exceeded limit', "
        "'fragment sessions dropped (queue overflow)', 'atomic fragments') are left out of "
        "ReasmFails: FreeBSD also counts some of those drops as 'dup or out of space'. "
        "'output datagrams fragmented' is FragOKs, 'fragments created' FragCreates, 'datagrams "
        "that can't be fragmented' FragFails. netstat -ss prints non-zero lines only, so inside "
        "a complete ip:/ip6: section a missing counter is 0; in a grep excerpt it stays null, and so "
        "it does in a section that prints a line with 0 (a plain netstat -s shows every counter the "
        "stack has: 4.3BSD-derived stacks such as MachTen print no reassembled or fragmented lines). "
        "The ip6: section goes to ipv6; icmp, udp, sctp, igmp and ipsec sections are ignored." + " " + bsdstyle.TRAFFIC_WORDS
        + " " + bsdstyle.SIGNAL_WORDS),
)

# Lines or sections only FreeBSD, macOS, OpenBSD, NetBSD or Junos print (AIX and HP-UX
# print none of them; AIX calls its IPv6 section "ipv6:", never "ip6:").
_MARKERS = needs(lazy(
    r"tunneling packets? that can'?t find gif|with ip length > max ip packet size"
    r"|datagrams? with bad address in header|packets? received for unknown multicast group"
    r"|malformed fragments? dropped|fragment floods?|checksummed in software"
    r"|packets? forwarded \(\d+ packets? fast forwarded\)"
    r"|^[ \t>]*(?:ip6|icmp6|ipsec6|rip6|pfkey|carp|pfsync|divert):[ \t]*$",
    re.M | re.I), "tunneling packet", "with ip length > max ip packet size", "with bad address in header",
    "received for unknown multicast group", "malformed fragment", "fragment flood", "checksummed in software",
    "fast forwarded)", "ip6:", "icmp6:", "ipsec6:", "pfkey:", "carp:", "pfsync:", "divert:", fold=True)


def detect(text: str) -> float:
    # +0.02: the generic answer for an excerpt the whole family could print
    return bsdstyle.score(text, _MARKERS, 0.9, +0.02)


def read(lines: List[str]) -> Reading:
    return bsdstyle.read(lines, "netstat -s", zero_fill=ALL, zero_fill6=META.ipv6)


def parse(text: str):
    return base.parse_text(text, META, read)
