"""Shared result types for every parser: what one `netstat -s` snapshot says."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Callable, Dict, Iterable, List, Optional, Tuple
from .lazyre import lazy



# RFC 1213 / RFC 4293 IP-MIB names, the only counter names a Snapshot carries.
COUNTERS: Tuple[str, ...] = (
    "ReasmReqds",    # fragments received that needed reassembly
    "ReasmOKs",      # datagrams reassembled
    "ReasmFails",    # reassembly failures (dup, out of space, bad fragments...)
    "ReasmTimeout",  # fragments dropped after a reassembly timeout: a count, never a setting
    "FragOKs",       # outgoing datagrams fragmented
    "FragFails",     # outgoing datagrams that needed fragmenting but could not (DF set)
    "FragCreates",   # fragments created
)
# Traffic counters beside them: what the fragmentation numbers are measured against (a share
# of packets sent), what tells a router from a host (forwarded against delivered), and what
# shows that two dumps are one host over time (everything grows together).
TRAFFIC: Tuple[str, ...] = (
    "InReceives",    # datagrams received, all of them
    "InDelivers",    # datagrams delivered to this host's own protocols
    "OutRequests",   # datagrams this host's own protocols sent (forwarded ones not included)
    "ForwDatagrams", # datagrams forwarded (IPv6: ipv6OutForwDatagrams / Ip6OutForwDatagrams)
)
ALL: Tuple[str, ...] = COUNTERS + TRAFFIC

Counters = Dict[str, Optional[int]]

# `parse --json` record version: 2 added `counters` (every counter the text shows).
SCHEMA = "mssdiag.snapshot/2"

# Every counter a snapshot's text shows, beside the headline ones above: one dict a counter,
# {"section": as printed ("Tcp", "TcpExt", "tcp", "IPv4 Statistics"), "label": as printed
# (spaces folded; a number inside it is "#", and the second and later numbers of one line are
# counters of their own, labelled "... #2", "... #3"), "name": the standard name where one
# exists (the Linux nstat name, which for the MIB groups is the RFC 4293 / 4022 / 4113 object
# with its group: IpInReceives, Icmp6InPktTooBigs, TcpRetransSegs, TcpExtTCPTimeouts), else
# None, "value": int, or None when it cannot be read (with a warning)}. Nothing is guessed: a
# label without a known meaning keeps its printed name and no standard one.
Counter = Dict[str, object]


class CounterList(Sequence):
    """A snapshot's counters: one layout (section, label, name of each counter, shared by the
    snapshots of one shape) and their values; each Counter dict is made when read. Triage and
    diff keep every snapshot of thousands of hosts: the dicts would be most of their memory."""

    __slots__ = ("layout", "values")

    def __init__(self, layout: Tuple[Tuple[str, str, Optional[str]], ...], values: Tuple[Optional[int], ...]):
        self.layout, self.values = layout, values

    @classmethod
    def of(cls, counters: Iterable[Counter]) -> "CounterList":
        counters = list(counters)
        return cls(tuple((c["section"], c["label"], c["name"]) for c in counters),
                   tuple(c["value"] for c in counters))

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self.values)))]
        section, label, name = self.layout[k]
        return {"section": section, "label": label, "name": name, "value": self.values[k]}

    def __iter__(self):
        for (section, label, name), value in zip(self.layout, self.values):
            yield {"section": section, "label": label, "name": name, "value": value}

    def __eq__(self, other) -> bool:
        if isinstance(other, CounterList):
            return self.values == other.values and self.layout == other.layout
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"CounterList({list(self)!r})"

    def __getstate__(self):
        return self.layout, self.values

    def __setstate__(self, state) -> None:
        self.layout, self.values = state

# Standard names that are no counts (a setting or a gauge): never compared as growing.
NOT_COUNTS = frozenset((
    "IpForwarding", "IpDefaultTTL", "Ip6Forwarding", "Ip6DefaultHopLimit", "TcpRtoAlgorithm", "TcpRtoMin",
    "TcpRtoMax", "TcpMaxConn", "TcpCurrEstab",
))


class ParseError(ValueError):
    """The only error a parser raises: the text is not something it can read."""


# What a rule may ask of an OS's counters (Meta.signals, per OS and family):
SIGNALS = {
    "ptb-in": "ICMP 'fragmentation needed' / ICMPv6 'packet too big' received (someone told this host to shrink)",
    "ptb-out": "ICMP 'fragmentation needed' / ICMPv6 'packet too big' sent (this host told a sender to shrink)",
    "rto": "TCP retransmission timeouts",
    "retrans": "TCP segments retransmitted",
    "segs-out": "TCP segments sent",
    "mtup-success": "PLPMTUD probes that succeeded (a larger MSS confirmed)",
    "mtup-fail": "PLPMTUD probes that failed (the search came down)",
    "blackhole": "PMTU black-hole detection activations (the stack lowered the MSS after retransmissions)",
}


@dataclass(frozen=True)
class Signal:
    """One counter of an OS that a rule reads as evidence (SIGNALS), and how exactly it
    counts that: `exact` False when it counts more (every ICMP destination unreachable, of
    which 'fragmentation needed' is one code)."""
    what: str                      # a SIGNALS key
    family: str                    # ipv4 | ipv6 | tcp (TCP counters: both families)
    key: str                       # the counter's standard name, or "section: label" as printed
    exact: bool = True
    note: str = ""                 # what else it counts, in words (docs and findings)
    zero_in: str = ""              # a section (as printed) whose presence makes this counter 0 when it is
                                   # not shown: the formats that print it only when not 0


@dataclass(frozen=True)
class Meta:
    """What a parser module covers, declared once beside its code."""
    name: str                      # registry key and --os value, e.g. "hpux"
    title: str                     # human name, e.g. "HP-UX 11"
    covers: Tuple[str, ...]        # OS names and releases
    formats: Tuple[str, ...]       # commands / formats it reads
    ipv4: Tuple[str, ...]          # counters (ALL names) its formats can report for IPv4
    ipv6: Tuple[str, ...] = ()     # ... and for IPv6 (empty: no IPv6 section)
    reasm_unit: str = "both"       # what its reassembly counters count: both | fragments | datagrams
    fails_unit: str = "datagrams"  # what ReasmFails counts: failed datagrams, or dropped fragments (BSD)
    timeout_unit: str = "fragments"  # what ReasmTimeout counts: fragments dropped, or datagrams given up (Linux)
    semantics: str = ""            # what its numbers mean, in words (shown in docs and reports)
    role: str = "host"             # host | router (a network device's CLI) | any (SNMP: either)
    counter_bits: int = 32         # counter width to assume: a drop from near 2**bits to near 0 is a wrap,
                                   # not a reboot. 32 unless the format proves wider (SNMP Counter64):
                                   # 64-bit kernels never drop near 2**32, 32-bit ones wrap there.
    signals: Tuple[Signal, ...] = ()   # its counters rules read as evidence (SIGNALS)
    gauges: Tuple[str, ...] = ()       # labels (lower-case) of counters that are gauges, not counts
                                       # (besides the standard names in NOT_COUNTS)


@dataclass
class Reading:
    """What a parser extracts from the lines of one snapshot."""
    format: str
    ipv4: Optional[Counters]
    ipv6: Optional[Counters] = None
    raw: Dict[str, str] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)
    forwarding: Optional[bool] = None   # IP forwarding on (a router), when the dump says
    # Formats that name their host and time themselves (a metrics scrape's labels, an agent's
    # tags): the host it names and when it was taken (ISO 8601), and the readings of the other
    # hosts and times in the same text, one snapshot each.
    host: Optional[str] = None
    taken_at: Optional[str] = None
    parts: List["Reading"] = field(default_factory=list)
    counters: List[Counter] = field(default_factory=list)   # every counter the text shows (see Counter)


LAZY = frozenset(("ipv4", "ipv6", "raw", "counters"))     # a shape's snapshot makes these when first read


@dataclass
class Snapshot:
    source: str
    index: int
    os: str
    format: str
    taken_at: Optional[str]
    host: Optional[str]
    ipv4: Optional[Counters]
    ipv6: Optional[Counters]
    raw: Dict[str, str]
    warnings: List[str]
    line: int = 0  # first line of the snapshot in its source (1-based)
    forwarding: Optional[bool] = None
    prompt_host: Optional[str] = None   # the host name as the prompt printed it; `host` is the
                                        # host it belongs to (toolkit/hosts.py decides)
    counters: Sequence = field(default_factory=list)   # every counter the text shows: Counter dicts
                                                        # (a CounterList once read)

    def __getattr__(self, name: str):
        # Only for a field not set yet: a snapshot matched whole by a shape (parsers/shapes.py)
        # makes its counters when one is first read (`parse --format jsonl` writes them from
        # the shape's JSON template and never does).
        shaped = self.__dict__.get("_shape")
        if shaped is None or name not in LAZY:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        shaped[0].fill(self.__dict__, shaped[1])
        return self.__dict__[name]

    def __getstate__(self) -> dict:
        # not the shape a snapshot matched whole was built from (parsers/shapes.py): a --jobs
        # worker's snapshots travel without it, their counters made
        state = self.__dict__
        if "_shape" not in state:
            return state
        self.ipv4           # makes them (__getattr__)
        return {k: v for k, v in state.items() if k != "_shape"}

    def to_dict(self) -> dict:
        return {
            "source": self.source, "index": self.index, "os": self.os, "format": self.format,
            "taken_at": self.taken_at, "host": self.host, "prompt_host": self.prompt_host, "line": self.line,
            "forwarding": self.forwarding,
            "ipv4": self.ipv4, "ipv6": self.ipv6, "raw": self.raw, "counters": list(self.counters),
            "warnings": self.warnings, "schema": SCHEMA,
        }


_PLAIN = lazy(r"[0-9]+", re.A)
# Thousands grouping as locales print it: one separator throughout, groups of exactly three
# digits after a first group of one to three: 1,234,567  1.234.567  1 234 567, and the no-break
# spaces (U+00A0, U+202F) French and other locales use.
_GROUPED = lazy(r"[0-9]{1,3}(?P<sep>[,. \u00a0\u202f])[0-9]{3}(?:(?P=sep)[0-9]{3})*", re.A)
MAX_COUNTER = 2 ** 64   # no counter is wider than SNMP Counter64


def signal_values(meta: Meta, counters: Sequence) -> Dict[Tuple[str, str], Tuple[int, Signal]]:
    """{(what, family): (value, the Signal)} of a snapshot's counters, for the signals its
    OS declares (Meta.signals); the first of a (what, family)'s alternatives the text shows.
    A key is a standard name or "section: label" (case-insensitive)."""
    if not meta.signals or not counters:
        return {}
    names = {sig.key for sig in meta.signals if ": " not in sig.key}
    labels = {sig.key.lower() for sig in meta.signals if ": " in sig.key}
    label_sections = {key.split(": ", 1)[0] for key in labels}
    items = zip(counters.layout, counters.values) if isinstance(counters, CounterList) \
        else (((c["section"], c["label"], c["name"]), c["value"]) for c in counters)
    by_name: Dict[str, int] = {}
    by_label: Dict[str, int] = {}
    lower: Dict[str, str] = {}
    for (section, label, name), value in items:
        sec = lower.get(section)
        if sec is None:
            sec = lower[section] = section.lower()
        if value is None:
            continue
        if name in names:
            by_name.setdefault(name, value)
        if sec in label_sections:
            by_label.setdefault(f"{sec}: {label.lower()}", value)
    sections = set(lower.values())
    out: Dict[Tuple[str, str], Tuple[int, Signal]] = {}
    for sig in meta.signals:
        if (sig.what, sig.family) in out:
            continue
        value = by_name.get(sig.key) if ": " not in sig.key else by_label.get(sig.key.lower())
        if value is not None:
            out[(sig.what, sig.family)] = (value, sig)
    for sig in meta.signals:      # not shown: 0 where the format leaves zeros out of a section it printed
        if (sig.what, sig.family) not in out and sig.zero_in and sig.zero_in.lower() in sections:
            out[(sig.what, sig.family)] = (0, sig)
    return out


def to_int(text: str) -> int:
    """A counter value as printed, or ParseError: never a prefix, never a silent 0.

    Accepts plain ASCII digits and unambiguous thousands grouping (one separator, groups
    of exactly three: 1,234,567 / 1.234.567 / 1 234 567 / no-break spaces). Refused, so
    the caller can warn instead of guessing: mixed separators (1,234.567), short or long
    groups (1 23, 5 668 1, 1.5), signs, units, hex (0x1f), non-ASCII digits, and values
    above 2**64.
    """
    s = text.strip(" \t")
    if len(s) > 27:     # 2**64 has 20 digits, 26 grouped: longer is no counter (and int() refuses 4,300+ digits)
        raise ParseError(f"not a counter value: {text[:24]!r}... ({len(s)} characters) is above 2**64")
    if _PLAIN.fullmatch(s):
        value = int(s)
    elif _GROUPED.fullmatch(s):
        value = int(re.sub(r"[^0-9]", "", s))
    else:
        raise ParseError(f"not a counter value: {text!r}")
    if value > MAX_COUNTER:
        raise ParseError(f"not a counter value: {text!r} is above 2**64")
    return value


LineParser = Callable[[List[str]], Reading]
