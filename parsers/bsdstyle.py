"""Reading BSD-style `netstat -s` IP sections: shared by the bsd, aix, hpux, ftx and tcpos parsers.

These stacks print a protocol name alone on a line (`ip:`, `ip6:`, `ipv6:`, `tcp:`, `udp:`,
`icmp:` ...) and under it one counter a line, count first:

    ip:
            8 fragments received
            0 fragments dropped (dup or out of space)
            0 fragments dropped after timeout

Only `ip:` counts for IPv4 and only `ip6:` / `ipv6:` for IPv6; every other section (udp,
icmp, sctp, igmp, ipsec ...) may use the same words and is skipped. Text with no section
header at all (`netstat -s | grep fragment`) is read as the IPv4 `ip:` section, because
that is what a grep over a whole dump shows first and the seed's figures are IPv4.

Not a parser itself: it has no META, so the registry skips it.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, Optional, Sequence, Tuple

from ._needs import needs
from .base import COUNT_FIRST, Every, OncePerText, Repeats, value_of
from .model import ALL, Reading, Signal
from .text import damaged
from .lazyre import lazy


# A protocol section header: one word and a colon, alone on its line. Sub-headers inside a
# section ("Input histogram:", "Mbuf statistics:") have a space, so they do not end it.
SECTION = lazy(r"^\s*(?P<name>[A-Za-z][\w.-]*)\s*:\s*$")
IPV4_SECTIONS = frozenset({"ip"})
IPV6_SECTIONS = frozenset({"ip6", "ipv6"})

Labels = Sequence[Tuple[str, "re.Pattern[str]"]]
# Value first but not a plain count: digits with spaces or signs, or one odd token.
_LOOSE = lazy(r"^\s*(?P<value>\S*\d\S*(?:\s+\d\S*)*|\S+)\s+(?P<label>[A-Za-z].*?)\s*$")


def labels(*pairs: Tuple[str, str]) -> Labels:
    """(IP-MIB name, regex over the lower-cased label with spaces folded) pairs (compiled when
    first used: parsers/lazyre.py)."""
    out = []
    for name, rx in pairs:
        if name not in ALL:
            raise ValueError(f"not an IP-MIB counter name: {name}")
        out.append((name, lazy(rx)))
    return tuple(out)


# The words every BSD-derived stack uses. Singular forms because FreeBSD prints
# "1 fragment received" and macOS "0 fragment received"; macOS also nests the drop and
# reassembly lines under "fragments received" without repeating the word "fragments".
# ReasmFails sums the per-fragment drop lines other than the timeout one: "dup or out of
# space" and OpenBSD/NetBSD "malformed fragments dropped" (a separate kernel counter, so
# the sum never counts a fragment twice). Timeouts go to ReasmTimeout only. The traffic
# lines ("total packets received", "packets for this host", "packets sent from this host",
# "packets forwarded") are InReceives, InDelivers, OutRequests and ForwDatagrams. SVR4 stacks
# of BSD descent (SCO: "packets reassembled", "packets fragmented", "packets not fragmentable",
# "packets delivered", "total packets sent") print the same counters in their own words.
COMMON: Labels = labels(
    ("ReasmReqds", r"fragments? received"),
    ("ReasmFails", r"(?:fragments? )?dropped \(dup or out of space\)"),
    ("ReasmFails", r"malformed fragments? dropped"),
    ("ReasmTimeout", r"(?:fragments? )?dropped after timeout"),
    ("ReasmOKs", r"(?:packets? )?reassembled ok"),
    ("ReasmOKs", r"packets? reassembled"),
    ("FragOKs", r"output datagrams? fragmented"),
    ("FragOKs", r"packets? fragmented"),
    ("FragCreates", r"fragments? created"),
    ("FragFails", r"datagrams? that can'?t be fragmented"),
    ("FragFails", r"packets? not fragmentable"),
    ("InReceives", r"total packets? received"),
    ("InDelivers", r"packets? for this host"),
    ("InDelivers", r"packets? delivered"),
    ("OutRequests", r"packets? sent from this host"),
    ("OutRequests", r"total packets? sent"),
    ("ForwDatagrams", r"packets? forwarded(?: \(\d+ packets? fast forwarded\))?"),
)

TRAFFIC_WORDS = ("Traffic: 'total packets received' is InReceives, 'packets for this host' InDelivers, "
                 "'packets sent from this host' OutRequests, 'packets forwarded' ForwDatagrams.")

# Lines only the BSD family prints (Linux net-tools shares "fragments dropped after
# timeout", "packets reassembled ok" and "fragments created", so those alone prove nothing).
# A count as printed: plain, or grouped in thousands by a locale (1,234 / 1 234 / 1.234 / NBSP).
_N = r"(?:\d{1,3}(?:[,. \u00a0\u202f]\d{3})+|\d[\d,]*)"
_FAMILY_ONLY = lazy(
    r"^[ \t>]*" + _N + r"[ \t]+(?:fragments? received|fragments? dropped \(dup or out of space\)"
    r"|output datagrams? fragmented|datagrams? that can'?t be fragmented|malformed fragments? dropped"
    r"|datagrams? reassembled)[ \t]*$", re.M | re.I)
_SHARED = lazy(
    r"^[ \t>]*" + _N + r"[ \t]+(?:fragments? dropped after timeout|packets? reassembled ok|fragments? created)[ \t]*$",
    re.M | re.I)
_IP_HEADER = lazy(r"^[ \t>]*ip:[ \t]*$", re.M)
# Linux net-tools / nstat wording: such text belongs to the Linux parser, not to this family.
_LINUX = needs(lazy(r"reassemblies required|fragments received ok|packet reassembl(?:es|ies) failed"
                    r"|^[ \t>]*(?:Ip|IpExt|TcpExt|IcmpMsg):[ \t]*$|\bIpReasm|\bIp6Reasm", re.M),
               "reassemblies required", "fragments received ok", "packet reassembl", "Ip:", "IpExt:", "TcpExt:", "IcmpMsg:",
               "IpReasm", "Ip6Reasm", fold=False)


@OncePerText
def family_score(text: str) -> float:
    """How much `text` looks like a BSD-style ip: section, 0..0.7, before any OS marker.

    Every module of the family starts from this score; markers only one OS prints lift
    that OS's score far above it, so the same three `| grep fragment` lines (seed Figures
    6d, 6e, 6f) score within 0.05 across the family and the registry warns "ambiguous".
    """
    if _LINUX.search(text):
        return 0.0
    own = len(_FAMILY_ONLY.findall(text))
    if not own:
        return 0.0
    hits = own + len(_SHARED.findall(text))
    return min(0.7, 0.45 + 0.04 * hits + (0.1 if _IP_HEADER.search(text) else 0.0))


def markers(text: str, rx: "re.Pattern[str]") -> int:
    return len(rx.findall(text))


def score(text: str, marker: Optional["re.Pattern[str]"], marked: float, offset: float) -> float:
    """One OS's detect(): `marked` when a line only that OS prints is there, else the
    family score nudged by `offset`, which orders the OSes on an ambiguous excerpt."""
    generic = family_score(text)
    if not generic:
        return 0.0
    if marker is not None and marker.search(text):
        return marked
    return generic + offset


# Standard names of the lines that are exactly an IP-MIB / ICMP-MIB object (model.Counter
# `name`). ReasmFails and ReasmTimeout are not among them: the BSD lines count fragments
# dropped, the MIB objects failed reassemblies.
_IP_NAMES = {"total packets received": "InReceives", "total packet received": "InReceives",
             "fragments received": "ReasmReqds", "fragment received": "ReasmReqds",
             "packets reassembled ok": "ReasmOKs", "packet reassembled ok": "ReasmOKs",
             "output datagrams fragmented": "FragOKs", "output datagram fragmented": "FragOKs",
             "fragments created": "FragCreates", "fragment created": "FragCreates",
             "datagrams that can't be fragmented": "FragFails", "datagram that can't be fragmented": "FragFails",
             "packets forwarded": "ForwDatagrams", "packet forwarded": "ForwDatagrams",
             "packets for this host": "InDelivers", "packet for this host": "InDelivers",
             "packets sent from this host": "OutRequests", "packet sent from this host": "OutRequests",
             "packets forwarded (# packets fast forwarded)": "ForwDatagrams",
             "packet forwarded (# packet fast forwarded)": "ForwDatagrams"}
_ICMP_NAMES = {"input histogram: destination unreachable": "InDestUnreachs",
               "output histogram: destination unreachable": "OutDestUnreachs"}
_ICMP6_NAMES = {"input histogram: packet too big": "InPktTooBigs", "input histogram: packets too big": "InPktTooBigs",
                "output histogram: packet too big": "OutPktTooBigs", "output histogram: packets too big": "OutPktTooBigs",
                "input histogram: destination unreachable": "InDestUnreachs",
                "output histogram: destination unreachable": "OutDestUnreachs"}


# What the family's counters say for triage (model.SIGNALS): the ICMP histograms count every
# destination unreachable (frag-needed is one code of it); singular and plural forms both.
SIGNALS = (
    Signal("ptb-in", "ipv4", "IcmpInDestUnreachs", False, "every ICMP destination unreachable received "
           "('Input histogram: destination unreachable'); 'fragmentation needed' is one code of it", "icmp"),
    Signal("ptb-in", "ipv6", "Icmp6InPktTooBigs", note="icmp6 'Input histogram: packet too big'", zero_in="icmp6"),
    Signal("ptb-out", "ipv4", "IcmpOutDestUnreachs", False, "every ICMP destination unreachable sent "
           "('Output histogram: destination unreachable')", "icmp"),
    Signal("ptb-out", "ipv6", "Icmp6OutPktTooBigs", note="icmp6 'Output histogram: packet too big'", zero_in="icmp6"),
    Signal("rto", "tcp", "tcp: retransmit timeouts", zero_in="tcp"),
    Signal("rto", "tcp", "tcp: retransmit timeout"),
    Signal("retrans", "tcp", "tcp: data packets (# bytes) retransmitted"),
    Signal("retrans", "tcp", "tcp: data packet (# byte) retransmitted"),
    Signal("retrans", "tcp", "tcp: data packets retransmitted (# bytes)"),
    Signal("segs-out", "tcp", "tcp: packets sent"),
    Signal("segs-out", "tcp", "tcp: packet sent"),
)
SIGNAL_WORDS = ("An ICMP histogram prints only the types it saw: one not shown in a printed icmp: section is 0.")


def standard(section: str, label: str) -> Optional[str]:
    """The standard name of a BSD-style line, where it is exactly a MIB object."""
    sec, key = section.lower(), label.lower()
    if sec in IPV4_SECTIONS:
        name = _IP_NAMES.get(key)
        return "Ip" + name if name else None
    if sec in IPV6_SECTIONS:
        name = _IP_NAMES.get(key)
        return "Ip6" + ("OutForwDatagrams" if name == "ForwDatagrams" else name) if name else None
    if sec == "icmp":
        name = _ICMP_NAMES.get(key)
        return "Icmp" + name if name else None
    if sec in ("icmp6", "icmpv6"):
        name = _ICMP6_NAMES.get(key)
        return "Icmp6" + name if name else None
    return None


def _match(label: str, table: Labels) -> Optional[Tuple[str, int]]:
    """(counter, index of the table entry) for a label: singular and plural forms of one
    line share the entry, so they are one line printed twice, never two lines summed."""
    key = label.lower()
    for i, (name, rx) in enumerate(table):
        if rx.fullmatch(key):
            return name, i
    return None


def read(lines: Iterable[str], fmt: str, table: Labels = COMMON, zero_fill: Tuple[str, ...] = (),
         zero_fill6: Tuple[str, ...] = ()) -> Reading:
    """One snapshot's ip:/ip6: counters from its cleaned lines.

    Several lines mapped to one counter add up (ReasmFails); the same line printed twice
    within one section is read once, with a warning (base.Repeats); before any header
    (a grep excerpt) a second block of the same lines is IPv6. `zero_fill` / `zero_fill6`
    name the counters that a complete section (its `ip:` / `ip6:` header and its "total
    packets received" line present) omits only when zero (`netstat -ss` on FreeBSD, macOS
    and AIX prints non-zero lines only); not when the section prints a line with 0 (plain
    `netstat -s` prints every counter the stack has).
    """
    reading = Reading(format=fmt, ipv4=None)
    found: Dict[str, Dict[str, int]] = {"ipv4": {}, "ipv6": {}}
    headed = {"ipv4": False, "ipv6": False}
    counted = {"ipv4": False, "ipv6": False}  # a section had at least one line we read
    zeros = {"ipv4": False, "ipv6": False}    # a line printed with 0: not `netstat -ss`
    unreadable: Dict[str, set] = {"ipv4": set(), "ipv6": set()}  # printed, value refused
    repeats = Repeats(reading)
    broken = {"ipv4": False, "ipv6": False}   # a damaged line: no counter may be taken as 0
    any_header = False
    family: Optional[str] = None
    section_name = ""
    every = Every(reading, standard)
    section: Optional[str] = None           # the section every counter of a line is in
    for line in lines:
        if line.rstrip().endswith(":") and damaged(line):
            # a section header we cannot read: its lines belong to no section we know
            if family is not None:
                broken[family] = True
            any_header, family, section = True, None, None
            continue
        m = SECTION.match(line)
        if m:
            name = m["name"].lower()
            section_name = section = m["name"]
            any_header = True
            family = "ipv4" if name in IPV4_SECTIONS else "ipv6" if name in IPV6_SECTIONS else None
            if family is not None:
                headed[family] = True
            continue
        if section is not None:
            every.line(section, line)
        if any_header and family is None:
            continue
        if damaged(line):
            broken[family or "ipv4"] = True
        entry = None
        c = COUNT_FIRST.match(line)
        if c:
            label = " ".join(c["label"].split())
            entry = _match(label, table)
        if entry is None:
            # "-3 fragments received", "1 234 fragments received", "n/a fragments received":
            # a counter we know with a value we cannot read is warned about, never skipped.
            c = _LOOSE.match(line)
            if not c:
                continue
            label = " ".join(c["label"].split())
            entry = _match(label, table)
            if entry is None:
                continue
        counter, index = entry
        fam = family if any_header else repeats.excerpt_family(index, label)
        if fam in repeats.stopped:
            continue
        raw_key = label if fam == "ipv4" else f"{section_name or 'ip6'}: {label}"
        value = value_of(raw_key, c["value"], reading)
        if not repeats.keep(fam, index, raw_key, value, c["value"]):
            if repeats.conflicted(fam, index):
                unreadable[fam].add(counter)
                broken[fam] = True
            continue
        reading.raw[raw_key] = c["value"]
        counted[fam] = True
        if value is None:
            unreadable[fam].add(counter)
            continue
        found[fam][counter] = found[fam].get(counter, 0) + value
        zeros[fam] = zeros[fam] or value == 0
    for fam, fill in (("ipv4", zero_fill), ("ipv6", zero_fill6)):
        for counter in unreadable[fam]:  # a sum missing one of its lines is no sum
            found[fam].pop(counter, None)
        if headed[fam] and counted[fam] and fill and broken[fam]:
            reading.warnings.append(f"{fam}: a damaged line (bytes netstat never prints): counters not shown "
                                    "are left unknown instead of taken as 0")
        elif headed[fam] and counted[fam] and "InReceives" in found[fam] and not zeros[fam]:
            # Every ip:/ip6: section a whole `netstat -s(s)` prints holds "total packets received"
            # (never zero on a working host, so -ss keeps it too): without it the section is an
            # excerpt (`| grep -e ip: -e frag`) and what it does not show stays unknown. A line
            # printed with 0 means a plain `netstat -s`, which prints every counter the stack
            # has: one it does not show is one this stack does not count (4.3BSD had no
            # reassembled or fragmented lines), null.
            for counter in fill:
                if counter not in unreadable[fam]:
                    found[fam].setdefault(counter, 0)
    reading.ipv4 = found["ipv4"] if counted["ipv4"] else None
    reading.ipv6 = found["ipv6"] if counted["ipv6"] else None
    return reading


__all__ = ["COMMON", "SECTION", "TRAFFIC_WORDS", "family_score", "labels", "markers", "read"]
