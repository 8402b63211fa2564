"""Helpers every OS parser module shares: one snapshot from lines, several from text."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Callable, Dict, Iterable, List, Optional, TYPE_CHECKING, Tuple

from .model import ALL, CounterList, Meta, ParseError, Reading, Snapshot, to_int
from .text import DAMAGED, Chunk, split
from .lazyre import lazy


if TYPE_CHECKING:
    from .model import Counters, LineParser

# `   92  ipReasmReqds` (count first); a value may carry thousands grouping; anything glued
# to it is kept so to_int can refuse it instead of dropping characters.
COUNT_FIRST = lazy(r"^\s*(?P<value>\d[\d,]*\S*)\s+(?P<label>\S.*?)\s*$")


def value_of(label: str, value: str, reading: Reading) -> Optional[int]:
    """A counter value, or None with a warning naming the line: never a silent guess."""
    try:
        return to_int(value)
    except ParseError:
        reading.warnings.append(f"{label!r}: value {value!r} is not a whole number; counter left out")
        return None


class Repeats:
    """What a counter line printed again means, in one place for every parser.

    In a section under its own header, a line printed twice was duplicated by the paste:
    the value stands when both agree, else the counter is unknown (None), with a warning
    either way. Before any header (a `| grep` / `| findstr` excerpt), a line's first block
    is IPv4 and a second block of the same lines is IPv6 (Windows, the BSDs, HP-UX, AIX and
    Linux print IPv6 with the same words) -- unless the line repeats right after itself,
    which is a duplicated line again. `key` identifies a line (its label, or the parser's
    table entry so singular and plural forms are one line); `name` is what warnings show.
    A repeat with another value means the text goes on with something else (another dump
    whose header was lost): that family's reading stops there (`stopped`).
    """

    def __init__(self, reading: Reading):
        self.reading = reading
        self.seen: Dict[Tuple[str, object], Optional[int]] = {}   # (family, key) -> value
        self.blocks: Dict[object, int] = {}                       # header-less: times seen
        self.last: object = None
        self.conflicts: set = set()                               # (family, key), values disagree
        self.stopped: set = set()    # families where a disagreeing repeat ended the reading

    def excerpt_family(self, key: object, name: str) -> str:
        """The family of a counter line before any section header: which block it is in."""
        n, previous, self.last = self.blocks.get(key, 0), self.last, key
        self.blocks[key] = n + 1
        if n == 0 or (n == 1 and previous == key):
            return "ipv4"
        if n == 1 and not any(v > 1 for k, v in self.blocks.items() if k != key):
            self.reading.warnings.append(
                f"{name!r} printed again with no section header between: the second block is read as "
                "IPv6 (this OS prints IPv6 with the same words)")
        return "ipv6"

    def keep(self, family: str, key: object, name: str, value: Optional[int], shown: str) -> bool:
        """True for the first time a line is read in its family; a repeat is warned about
        and False (a disagreeing one also makes the counter unknown: see conflicted)."""
        if (family, key) not in self.seen:
            self.seen[(family, key)] = value
            return True
        first = self.seen[(family, key)]
        if first == value:
            self.reading.warnings.append(f"{name!r} printed twice ({shown} both times); read once")
        else:
            self.reading.warnings.append(
                f"{name!r} printed twice with different values ({first} and {shown}): counter unknown, and "
                "the lines after it are not read (another dump whose header was lost?)")
            self.conflicts.add((family, key))
            self.stopped.add(family)
        return False

    def conflicted(self, family: str, key: object) -> bool:
        return (family, key) in self.conflicts


def collect(lines: Iterable[str], labels: Dict[str, str], reading: Reading,
            pattern: "re.Pattern[str]" = COUNT_FIRST) -> Dict[str, Optional[int]]:
    """Counters from lines whose label (lower-cased, spaces folded) is in `labels`.

    `labels` maps label → IP-MIB counter name. Every matched line goes into reading.raw; a
    label printed again is what Repeats says (one family: these formats have one section).
    """
    found: Dict[str, Optional[int]] = {}
    repeats = Repeats(reading)
    for line in lines:
        m = pattern.match(line)
        if not m:
            continue
        label = " ".join(m["label"].split())
        name = labels.get(label.lower())
        if name is None or "ipv4" in repeats.stopped:
            continue
        value = value_of(label, m["value"], reading)
        if not repeats.keep("ipv4", label.lower(), label, value, m["value"]):
            if repeats.conflicted("ipv4", label.lower()):
                found[name] = None
            continue
        reading.raw[label] = m["value"]
        if value is not None:
            found[name] = value
    return found


# ------------------------------------------------------------------ every counter

Names = Callable[[str, str], Optional[str]]   # (section, label) as printed -> standard name, or None

# `  12 data packets (3456 bytes) retransmitted`: a count first, then words; a value may be
# grouped by a locale (`1 234 567`), and what is glued to it is kept so to_int refuses it.
_LEAD = lazy(r"^(?P<indent> *)(?P<value>\d\S*(?:[ \u00a0\u202f]\d{3}(?![^\s)]))*)[ \t]+"
             r"(?P<rest>[A-Za-z(].*?)[ .]*$")
# `TCPMTUPFail: 3`, `destination unreachable: 5`, `Packets Received = 6268757`
_NAMED = lazy(r"^(?P<indent> *)(?P<label>[A-Za-z][^:=]*?)[ \t]*[:=][ \t]*(?P<value>\d\S*)[ \t]*$")
# `Quick ack mode was activated 4 times`: words, one number, words
_MIDDLE = lazy(r"^(?P<indent> *)(?P<a>[A-Za-z][A-Za-z' -]*?)[ \t]+(?P<value>\d[\d,]*)[ \t]+"
               r"(?P<b>[A-Za-z][A-Za-z' -]*?)[ .]*$")
# `    ICMP input histogram:` / `        Input histogram:`: a title for the more indented lines below
_TITLE = lazy(r"^(?P<indent> *)(?P<title>[A-Za-z][^:=\d]*?):[ \t]*$")
# words alone on a line (no number, no colon)
_HEADING = lazy(r"^(?P<indent> *)(?P<text>[A-Za-z][^:=\d]*?)[ \t]*$")
# a kernel field name printed as it is (`TCPMTUPFail`, `InType3`)
_FIELD_NAME = lazy(r"[A-Z][a-z0-9]*[A-Z][A-Za-z0-9]*")
# a number standing alone inside the words after the count (`(3456 bytes)`)
_INNER = lazy(r"(?<![\w.:/])\d[\d,]*(?![\w.:/])")


# MIB objects some stacks print under their own names (Solaris, VOS STCP: RFC 1213, 2011-2013,
# 2465, 2466): their standard names (model.Counter `name`). A stack's own objects
# (tcpTimRetrans, icmpInFragNeeded, ipReasmDuplicates ...) have none.
MIB_FIELDS = {
    "ip": ("InReceives", "InHdrErrors", "InAddrErrors", "ForwDatagrams", "InUnknownProtos", "InDiscards",
           "InDelivers", "OutRequests", "OutDiscards", "OutNoRoutes", "ReasmReqds", "ReasmOKs", "ReasmFails",
           "FragOKs", "FragFails", "FragCreates", "RoutingDiscards"),
    "ipv6": ("InReceives", "InHdrErrors", "InTooBigErrors", "InNoRoutes", "InAddrErrors", "InUnknownProtos",
             "InTruncatedPkts", "InDiscards", "InDelivers", "OutForwDatagrams", "OutRequests", "OutDiscards",
             "OutNoRoutes", "ReasmReqds", "ReasmOKs", "ReasmFails", "InMcastPkts", "OutMcastPkts"),
    "tcp": ("ActiveOpens", "PassiveOpens", "AttemptFails", "EstabResets", "CurrEstab", "InSegs", "OutSegs",
            "RetransSegs", "InErrs", "OutRsts"),
    "udp": ("InDatagrams", "NoPorts", "InErrors", "OutDatagrams"),
    "icmp": tuple(d + x for d in ("In", "Out") for x in (
        "Msgs", "Errors", "DestUnreachs", "TimeExcds", "ParmProbs", "SrcQuenchs", "Redirects", "Echos", "EchoReps",
        "Timestamps", "TimestampReps", "AddrMasks", "AddrMaskReps")),
    "icmp6": tuple(d + x for d in ("In", "Out") for x in (
        "Msgs", "Errors", "DestUnreachs", "TimeExcds", "ParmProblems", "PktTooBigs", "Echos", "EchoReplies",
        "Redirects")),
}
# MIB objects that are settings, not counts (never a counter of a snapshot)
MIB_SETTINGS = frozenset(("ipForwarding", "ipDefaultTTL", "ipReasmTimeout", "ipv6IpForwarding", "ipv6IpDefaultHopLimit",
                          "tcpRtoAlgorithm", "tcpRtoMin", "tcpRtoMax", "tcpMaxConn"))
_GROUPS = {"ip": "Ip", "ipv6": "Ip6", "tcp": "Tcp", "udp": "Udp", "icmp": "Icmp", "icmp6": "Icmp6"}
_IP6_FRAG = {"ipv6OutFragOKs": "Ip6FragOKs", "ipv6OutFragFails": "Ip6FragFails", "ipv6OutFragCreates": "Ip6FragCreates"}
_MIB_NAME = lazy(r"(?P<group>ipv6|ip|tcp|udp|icmp6|icmp)(?P<field>[A-Z][A-Za-z0-9]*)")


# RFC 4293 ipSystemStatsTable columns whose row (ipv4, ipv6) is a group's object: the column as
# the group's object is named, where it is not the column's own name
_TABLE_AS_GROUP = {("ipv4", "InForwDatagrams"): "ForwDatagrams",
                   ("ipv4", "OutFragOKs"): "FragOKs", ("ipv4", "OutFragFails"): "FragFails",
                   ("ipv4", "OutFragCreates"): "FragCreates", ("ipv6", "OutFragOKs"): "FragOKs",
                   ("ipv6", "OutFragFails"): "FragFails", ("ipv6", "OutFragCreates"): "FragCreates"}


def table_standard(column: str, family: str) -> Optional[str]:
    """The standard name of an ipSystemStatsTable column in a row (`ReasmReqds`, ipv6 ->
    Ip6ReasmReqds; `OutFragOKs`, ipv4 -> IpFragOKs), or None: a column no group object matches
    (the HC twins, OutFragReqds, the octet and multicast columns)."""
    group = "ip" if family == "ipv4" else "ipv6" if family == "ipv6" else None
    if group is None:
        return None
    field = _TABLE_AS_GROUP.get((family, column), column)
    if field in MIB_FIELDS[group] or (group == "ipv6" and field in ("FragOKs", "FragFails", "FragCreates")):
        return _GROUPS[group] + field
    return None


def mib_standard(label: str) -> Optional[str]:
    """The standard name of a MIB object printed as such (`ipReasmReqds` -> IpReasmReqds), or None."""
    if label in _IP6_FRAG:
        return _IP6_FRAG[label]
    m = _MIB_NAME.fullmatch(label)
    if m and m["field"] in MIB_FIELDS[m["group"]]:
        return _GROUPS[m["group"]] + m["field"]
    return None


class Every:
    """Every counter of one snapshot as its text shows it, into `reading.counters` (model.Counter).

    OS parsers call `line(section, line)` for each line under a section header (the generic
    forms: a count first, `label: N` / `label = N`, words around one number, titles such as
    "Input histogram:" (or words alone on a line) that prefix the lines below them until a
    count line no more indented than the title) or `add()` for forms
    of their own (tables, name/value pairs). A count-first line holding more numbers in
    parentheses (`12 data packets (3456 bytes) retransmitted`) gives one counter per number;
    a number outside them (`time LRO coalesced 2 packets`) is part of the label. A label seen
    again in its section under another parent line (macOS nests the same words under
    "packets sent" and "packets received") is named after its parent lines ("packet received >
    checksummed in software > segment (# byte) over IPv4"); the
    same line twice keeps its first value, or none when the two disagree (a warning says so).
    """

    def __init__(self, reading: Reading, names: Optional[Names] = None):
        self.reading = reading
        self.names = names
        self.at: Dict[Tuple[str, str], int] = {}
        self.section = None
        self.title: Optional[Tuple[int, str]] = None   # (indent, title) of a histogram in force
        self.parents: List[Tuple[int, str]] = []   # (indent, label) of the count lines above

    def add(self, section: str, label: str, value, name: Optional[str] = None,
            parent: Optional[str] = None) -> None:
        """One counter as printed; its standard name from `names` unless given. `value` is the
        text as printed, or what the caller read from it: an int, or None when the caller could
        not read it (and said so in the warnings)."""
        if name is None and self.names is not None:
            name = self.names(section, label)
        key = (section, label)
        if key in self.at:
            if parent:
                label = f"{parent} > {label}"
                key = (section, label)
            if key in self.at:
                self._again(key, value)
                return
        try:
            number: Optional[int] = value if value is None or isinstance(value, int) else to_int(value)
        except ParseError:
            number = None
            shown = f"value {value!r}"
            if not any(shown in w for w in self.reading.warnings):
                self.reading.warnings.append(f"{section}: {label!r}: {shown} is not a whole number; counter left out")
        self.at[key] = len(self.reading.counters)
        self.reading.counters.append({"section": section, "label": label, "name": name, "value": number})

    def _again(self, key: Tuple[str, str], value: str) -> None:
        c = self.reading.counters[self.at[key]]
        try:
            same = (value if value is None or isinstance(value, int) else to_int(value)) == c["value"]
        except ParseError:
            same = False
        if not same and c["value"] is not None:
            first, c["value"] = c["value"], None
            self.reading.warnings.append(f"{key[0]}: {key[1]!r} printed twice with different values "
                                         f"({first} and {value}): counter unknown")

    def line(self, section: str, line: str) -> bool:
        """The counters of one line under `section` (lines are cleaned: tabs are spaces);
        False when it holds none (a title, prose, a damaged line)."""
        if section != self.section:
            self.section, self.title, self.parents = section, None, []
        if DAMAGED in line:
            return False
        m = _LEAD.match(line)
        if m:
            indent = len(m["indent"])
            if self.title is not None and self.title[0] >= indent:
                self.title = None
            parents = self.parents
            while parents and parents[-1][0] >= indent:
                parents.pop()
            rest = m["rest"]
            label = rest
            inner = ()
            if "(" in rest:
                inner = [n for n in _INNER.finditer(rest)
                         if rest.count("(", 0, n.start()) > rest.count(")", 0, n.start())]
                for n in reversed(inner):
                    label = label[:n.start()] + "#" + label[n.end():]
            label = self._titled(" ".join(label.split()))
            parent = " > ".join(p[1] for p in parents) if parents else None
            self.add(section, label, m["value"], parent=parent)
            for k, n in enumerate(inner, 2):
                self.add(section, f"{label} #{k}", n.group(0), parent=parent)
            parents.append((indent, label))
            return True
        if line.endswith(":"):
            m = _TITLE.match(line)
            if m:
                self.title = (len(m["indent"]), m["title"])
            return False
        m = _NAMED.match(line) or _MIDDLE.match(line)
        if m is None:
            m = _HEADING.match(line)
            if m:        # Junos `Input Histogram`, FreeBSD `source addresses of same scope`: a title
                self.title = (len(m["indent"]), " ".join(m["text"].split()))
            return False
        label = m["label"] if "label" in m.re.groupindex else f"{m['a']} # {m['b']}"
        self.add(section, self._titled(" ".join(label.split())), m["value"],
                 parent=" > ".join(p[1] for p in self.parents) if self.parents else None)
        return True

    def _titled(self, label: str) -> str:
        """A histogram's line under its title ("Input histogram: echo reply"); a field name
        printed as it is (`Icmp6OutType143: 1` among net-tools' histogram lines) is not."""
        if self.title is None or _FIELD_NAME.fullmatch(label):
            return label
        return f"{self.title[1]}: {label}"


def snapshot(meta: Meta, reading: Reading, chunk: Chunk, source: str, index: int) -> Snapshot:
    def full(values: Optional[Counters], reported: Tuple[str, ...]) -> Optional[Counters]:
        if values is None:
            return None
        return {name: (values.get(name) if name in reported else None) for name in ALL}

    host = reading.host or chunk.host
    return Snapshot(
        source=source, index=index, os=meta.name, format=reading.format,
        taken_at=reading.taken_at or chunk.taken_at, host=host, prompt_host=host,
        ipv4=full(reading.ipv4, meta.ipv4), ipv6=full(reading.ipv6, meta.ipv6),
        raw=reading.raw, warnings=reading.warnings, line=chunk.line, forwarding=reading.forwarding,
        counters=CounterList.of(reading.counters),
    )


def takes_command(read):
    """Marks a read() that also wants the command line that printed the text (keyword
    `command`), for formats whose text alone does not say what it is (netsh ipv4 / ipv6)."""
    read.takes_command = True
    return read


def read_chunk(read: LineParser, chunk: Chunk) -> Reading:
    if getattr(read, "takes_command", False):
        return read(chunk.lines, command=chunk.command)  # type: ignore[call-arg]
    return read(chunk.lines)


def parse_text(text: str, meta: Meta, read: LineParser, source: str = "-") -> List[Snapshot]:
    """Every snapshot in `text`, read as this OS: what each module's parse() returns."""
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    out = []
    for chunk in split(text):
        reading = read_chunk(read, chunk)
        if reading.ipv4 is None and reading.ipv6 is None:
            continue
        reading.warnings.extend(chunk.notes)
        for one in [reading] + reading.parts:
            out.append(snapshot(meta, one, chunk, source, len(out)))
    if not out:
        raise ParseError(f"no {meta.title} IP statistics found")
    return out

class OncePerText:
    """A score computed once for the text being detected (detect() gives every parser the
    same text object): the BSD family's score starts five detectors (bsd, aix, ftx, hpux,
    tcpos). The text is held only until detect() is done with it (forget_texts)."""

    def __init__(self, score: Callable[[str], float]):
        self.__wrapped__ = score
        self.__doc__ = score.__doc__
        self.last: tuple = (None, 0.0)
        _PER_TEXT.append(self)

    def __call__(self, text: str) -> float:
        held = self.last            # one read: another thread may replace it, never half of it
        if held[0] is text:
            return held[1]
        value = self.__wrapped__(text)
        self.last = (text, value)
        return value

    def forget(self) -> None:
        self.last = (None, 0.0)


_PER_TEXT: List[OncePerText] = []


def forget_texts() -> None:
    for score in _PER_TEXT:
        score.forget()


def of_many(readings: List[Reading], fmt: str) -> Reading:
    """The Reading of a text that names its hosts and times (a scrape, line protocol, agents'
    JSON): the first, the others as its parts; none: a Reading without counters."""
    if not readings:
        return Reading(format=fmt, ipv4=None)
    readings[0].parts = readings[1:]
    return readings[0]


def epoch_iso(seconds: float) -> Optional[str]:
    """A time in seconds since the epoch as ISO 8601 UTC; None when no date is that far."""
    try:
        return datetime.fromtimestamp(seconds, timezone.utc).isoformat()
    except (ValueError, OverflowError, OSError):
        return None
