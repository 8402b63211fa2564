"""How dumps arrive: decoding, cleaning pasted text, finding dates, splitting snapshots.

Everything here works on a stream of lines so a 1 GB file is read in constant memory.
"""
from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import IO, Iterator, List, Optional, Tuple

from .model import ParseError

SNIFF = 4096

# ---------------------------------------------------------------- decoding


def sniff_encoding(head: bytes) -> str:
    """Encoding of a dump from its first bytes; ParseError for binary data."""
    if head.startswith(codecs.BOM_UTF16_LE) or head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16"
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if len(head) >= 4:
        # UTF-16 saved without a BOM: every other byte is NUL.
        odd, even = head[1::2], head[0::2]
        if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
            return "utf-16-le"
        if even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
            return "utf-16-be"
    if b"\x00" in head:
        raise ParseError("binary data (NUL bytes), not a netstat dump")
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    if head and controls > 0.05 * len(head):
        raise ParseError("binary data (control bytes), not a netstat dump")
    return "utf-8"


def open_text(binary: IO[bytes]) -> IO[str]:
    """Wrap a binary stream as text lines, sniffing the encoding (UTF-16 from PowerShell too)."""
    buffered = binary if isinstance(binary, io.BufferedReader) else io.BufferedReader(binary)  # type: ignore[arg-type]
    head = buffered.peek(SNIFF)[:SNIFF]
    encoding = sniff_encoding(head)
    return io.TextIOWrapper(buffered, encoding=encoding, errors="replace", newline=None)


def decode(data: bytes) -> str:
    return data.decode(sniff_encoding(data[:SNIFF]), errors="replace").replace("\r\n", "\n").replace("\r", "\n")


# ---------------------------------------------------------------- cleaning

_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+(?=[ \t]*(?:\S|$))")
_NUMBER = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")


def clean(line: str) -> str:
    """One pasted line as the command printed it: no e-mail quoting, no CR, tabs as spaces.

    A VOS path prompt (`>system>stcp>...`) is left alone: it has no space after the `>`
    and a letter right after.
    """
    line = line.rstrip("\r\n")
    if line.lstrip().startswith(">"):
        stripped = line.lstrip()
        if not re.match(r">[A-Za-z_]\w*>", stripped):
            line = _QUOTE.sub("", line, count=1)
    return line.expandtabs(8).rstrip()


# ---------------------------------------------------------------- dates

_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
_ZONES = {"UTC": 0, "GMT": 0, "Z": 0, "UT": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5,
          "MST": -7, "MDT": -6, "PST": -8, "PDT": -7, "CET": 1, "CEST": 2, "BST": 1,
          "IST": 5.5, "JST": 9, "AEST": 10, "AEDT": 11, "MET": 1, "MEST": 2}
_DOW = r"(?:(?:mon|tue|wed|thu|fri|sat|sun|mo|di|mi|do|fr|sa|so)[a-z]*\.?,?\s+)?"  # English, German
_TIME = r"(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,]\d+)?)?(?:\s*(?P<ampm>[AaPp]\.?[Mm]\.?))?"
_TZ = r"(?:\s+(?P<tz>[A-Z]{1,5}|[+-]\d{2}:?\d{2}))?"
_DATE_FORMS = [
    # ISO 8601: 2026-11-22T03:06:45Z, 2026-11-22 03:06:45+01:00
    re.compile(r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})(?:[T\s]+" + _TIME
               + r"\s*(?P<off>Z|[+-]\d{2}:?\d{2})?" + _TZ + r")?", re.I),
    # date(1): Sun Nov 22 03:06:45 UTC 2026
    re.compile(_DOW + r"(?P<mon>[A-Za-z]{3})[a-z]*\.?\s+(?P<d>\d{1,2}),?\s+" + _TIME + _TZ + r"\s+(?P<y>\d{4})", re.I),
    # date(1), day first: Sun 22 Nov 2026 03:06:45 AM UTC
    re.compile(_DOW + r"(?P<d>\d{1,2})\s+(?P<mon>[A-Za-z]{3})[a-z]*\.?\s+(?P<y>\d{4}),?\s+" + _TIME + _TZ, re.I),
    # Nov 22, 2026 03:06:45 / November 22 2026 3:06 PM
    re.compile(_DOW + r"(?P<mon>[A-Za-z]{3})[a-z]*\.?\s+(?P<d>\d{1,2}),?\s+(?P<y>\d{4})(?:,?\s+" + _TIME + _TZ + r")?", re.I),
    # Windows date /t (US): Sun 11/22/2026, optionally with a time after it
    re.compile(_DOW + r"(?P<mo>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})(?:\s+" + _TIME + r")?", re.I),
    # day first: 22.11.2026 (German date /t), 22/11/2026 (UK) when the US reading is impossible
    re.compile(_DOW + r"(?P<d>\d{1,2})[./](?P<mo>\d{1,2})[./](?P<y>\d{4}),?(?:\s+" + _TIME + r")?", re.I),
]
_TIME_ONLY = re.compile(r"^\s*" + _TIME + r"\s*$")
_DECOR = " \t=-#*[]():|"


@dataclass
class Stamp:
    when: datetime
    has_time: bool

    def iso(self) -> str:
        return self.when.isoformat()


def _build(m: "re.Match[str]") -> Optional[Stamp]:
    g = m.groupdict()
    try:
        year = int(g["y"])
        month = int(g["mo"]) if g.get("mo") else _MONTHS.get((g.get("mon") or "").lower()[:3])
        if not month:
            return None
        day = int(g["d"])
        hour = int(g["H"]) if g.get("H") else 0
        minute = int(g["M"]) if g.get("M") else 0
        second = int(g["S"]) if g.get("S") else 0
        ampm = (g.get("ampm") or "").lower().replace(".", "")
        if ampm == "pm" and hour < 12:
            hour += 12
        elif ampm == "am" and hour == 12:
            hour = 0
        when = datetime(year, month, day, hour, minute, second)
    except (TypeError, ValueError):
        return None
    off = g.get("off") or g.get("tz")
    if off:
        if off.upper() in _ZONES:
            when = when.replace(tzinfo=timezone(timedelta(hours=_ZONES[off.upper()])))
        elif re.match(r"[+-]\d{2}:?\d{2}$", off):
            sign = -1 if off[0] == "-" else 1
            digits = off[1:].replace(":", "")
            when = when.replace(tzinfo=timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))))
    return Stamp(when, bool(g.get("H")))


def parse_date_line(line: str) -> Optional[Stamp]:
    """A line that is a date and nothing else (decoration like `=== ... ===` allowed)."""
    s = line.strip(_DECOR)
    if len(s) < 8 or len(s) > 60 or not s[0].isalnum():
        return None
    for form in _DATE_FORMS:
        m = form.fullmatch(s)
        stamp = _build(m) if m else None
        if stamp is not None:
            return stamp
    return None


def parse_time_only(line: str) -> Optional[Tuple[int, int, int]]:
    """Windows `time /t` prints only `03:06 AM`: returns (h, m, s) for such a line."""
    m = _TIME_ONLY.match(line.strip(_DECOR))
    if not m:
        return None
    hour, minute = int(m["H"]), int(m["M"])
    ampm = (m["ampm"] or "").lower().replace(".", "")
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    return hour, minute, int(m["S"] or 0)


# ---------------------------------------------------------------- splitting

_COMMAND = re.compile(r"(?:^|[\s$#%>:\]|;])(?:n?netstat|nstat|cat\s+/proc/net/(?:snmp6?|netstat))(?:\s|$|\.exe)", re.I)
_HOSTS = [
    re.compile(r"\[?[\w.-]+@(?P<host>[A-Za-z0-9][\w.-]*)[\s:\]]"),       # [root@web1 ~]#, user@web1:~$
    re.compile(r"^(?P<host>[A-Za-z][\w.-]*)\s*[#%]\s"),                   # web1# netstat -s
    re.compile(r"^(?P<host>[A-Za-z][\w.-]*):[/~][^\s]*\s*[#$%]"),         # web1:/root# netstat -s
    re.compile(r"^(?P<host>[A-Za-z][\w.-]*):\S*\s+[\w.-]+[$#%]\s"),       # macOS: MacBook-Pro:~ ann$ netstat -s
]


def command_host(line: str) -> Optional[str]:
    for rx in _HOSTS:
        m = rx.search(line)
        if m:
            return m["host"]
    return None


@dataclass
class Chunk:
    """The cleaned lines of one snapshot, with what surrounded it."""
    lines: List[str]
    stamp: Optional[Stamp] = None
    host: Optional[str] = None
    line: int = 1

    @property
    def taken_at(self) -> Optional[str]:
        return self.stamp.iso() if self.stamp else None


# ------------------------------------------------------------ the splitter
#
# A dump can be a gigabyte of cron output, so the splitter never loops over every line in
# Python: it reads blocks of text and lets compiled regexes find the few lines that
# matter (date and command lines, section headers, IP counter lines); everything else
# is sliced in bulk.

BLOCK = 1 << 20          # text read at a time
MAX_CHUNK = 8 << 20      # a "snapshot" this big with no boundary is cut anyway (flat memory)

# Candidates are found by literal-led patterns on a lower-cased copy of the block (fast in
# CPython's re), then confirmed on their whole line.
_CAND_COMMAND = re.compile(r"netstat|nstat|/proc/net/")
# Every date form we read has a time (hh:mm), a /yyyy or .yyyy, or a -mm-dd in it.
_CAND_DATE = re.compile(r":[0-5]\d|[/.](?:19|20)\d\d|-[01]\d-[0-3]\d")
# Lines that open an IP section or carry the counters we read (lower-cased). Kept narrow:
# a generic word such as "datagrams" repeats inside one dump (macOS nests udp lines).
_CAND_RELEVANT = re.compile(
    r"reass|reasm|fragm|fragok|fragfail|fragcreate|total packets received|packets received\s*="
    r"|inreceives|forwarding|ip6?: +\d")
_COUNTERISH = re.compile(r"(?<![A-Za-z\d])\d")
_VALUE = re.compile(r"(?<![\w.])\d[\d,]*(?![\w.])")
_QUOTED = re.compile(r"^[ \t]*>", re.M)


def line_shape(line: str) -> str:
    """A line without its values (numbers inside words such as Ip6 or InType3 stay)."""
    return " ".join(_VALUE.sub("#", line).split())


def _blocks(source) -> Iterator[str]:
    if isinstance(source, str):
        yield source
        return
    read = getattr(source, "read", None)
    if read is not None:
        while True:
            block = read(BLOCK)
            if not block:
                return
            if not block.endswith("\n"):
                block += source.readline()
            yield block
        return
    buf: List[str] = []
    size = 0
    for line in source:
        buf.append(line if line.endswith("\n") else line + "\n")
        size += len(line)
        if size >= BLOCK:
            yield "".join(buf)
            buf, size = [], 0
    if buf:
        yield "".join(buf)


def _lines(text: str) -> List[str]:
    if "\r" in text:
        text = text.replace("\r", "")
    if "\t" in text:
        text = text.expandtabs(8)
    if _QUOTED.search(text):
        return [c for c in (clean(line) for line in text.split("\n")) if c.strip()]
    return [line.rstrip() for line in text.split("\n") if line.strip()]


class _State:
    """Where the snapshot being built starts, and what it has seen so far."""

    def __init__(self, start: int, line: int):
        self.start = start          # offset in the current text where its lines begin
        self.body = start           # offset after the last date/command line it absorbed
        self.line = line
        self.seen: set = set()
        self.stamp: Optional[Stamp] = None
        self.host: Optional[str] = None

    def chunk(self, text: str, end: int) -> Chunk:
        return Chunk(_lines(text[self.body:end]), self.stamp, self.host, self.line)


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end == -1 else end


def _is_header_or_blank(text: str, start: int, end: int) -> bool:
    line = text[start:end]
    return not line.strip() or _COUNTERISH.search(line) is None


def _header_run_start(text: str, pos: int, floor: int) -> int:
    """Start of the run of header and blank lines just before offset `pos` (a line start)."""
    start = pos
    for _ in range(32):
        if start <= floor:
            return floor
        prev = text.rfind("\n", 0, start - 1) + 1
        if not _is_header_or_blank(text, prev, start - 1):
            return start
        start = prev
    return start


def _section(text: str, pos: int, floor: int, current: str) -> str:
    """The nearest header line above offset `pos` (a line start) and below `floor`, else `current`."""
    start = pos
    while start > floor:
        prev = text.rfind("\n", 0, start - 1) + 1
        line = text[prev:start - 1]
        if _COUNTERISH.search(line) is None and _LETTER.search(line) is not None:
            return line.strip(" \t>")
        start = prev
    return current


def _candidates(text: str) -> List[Tuple[int, int]]:
    """(line start, kind) of every line that may be a date/command (0) or IP counter (2) line.

    Three literal-led passes are several times faster in CPython's re than one
    alternation of named groups.
    """
    found: dict = {}
    low = text.lower()
    rfind = low.rfind
    for rx, kind in ((_CAND_RELEVANT, 2), (_CAND_COMMAND, 0), (_CAND_DATE, 0)):
        for m in rx.finditer(low):
            found[rfind("\n", 0, m.start()) + 1] = kind
    return sorted(found.items())


def split(source) -> Iterator[Chunk]:
    """Cut text into snapshots: `source` is a str, a text stream or an iterable of lines.

    A new snapshot starts at a date line or a netstat command line that follows counters,
    or when an IP counter line repeats within its section (two dumps pasted back to back,
    `netstat -s | grep frag` run twice); header lines just before the repeat belong to
    the new snapshot. A date line followed by a time-only line (Windows `date /t`,
    `time /t`) makes one timestamp.
    """
    carry = ""
    line_no = 1
    blocks = _blocks(source)
    while True:
        block = next(blocks, None)
        final = block is None
        text = carry + (block or "")
        if not text:
            return
        closed: List[Chunk] = []
        state = _State(0, line_no)
        counted = [0, line_no]  # offset, line number there: lines are counted incrementally

        def line_of(pos: int) -> int:
            counted[1] += text.count("\n", counted[0], pos)
            counted[0] = pos
            return counted[1]

        def has_counters(end: int) -> bool:
            return _COUNTERISH.search(text, state.body, end) is not None

        section, scanned = "", 0
        for start, kind in _candidates(text):
            if start < state.body:
                continue
            end = _line_end(text, start)
            line = text[start:end]
            if kind == 0:
                cleaned = clean(line)
                stamp = parse_date_line(cleaned) if len(cleaned) < 80 else None
                command = stamp is None and _COMMAND.search(cleaned) is not None \
                    and not cleaned.lstrip()[:1].isdigit()
                if stamp is None and not command:
                    if _CAND_RELEVANT.search(line.lower()) is None:
                        continue
                    kind = 2
                else:
                    if has_counters(start):
                        closed.append(state.chunk(text, start))
                        state = _State(start, line_of(start))
                        section, scanned = "", start
                    state.body = end
                    if stamp is not None:
                        state.stamp = stamp
                        if not stamp.has_time and end < len(text):
                            nxt = _line_end(text, end + 1)
                            t = parse_time_only(clean(text[end + 1:nxt]))
                            if t is not None:  # Windows `date /t` then `time /t`
                                state.stamp = Stamp(stamp.when.replace(hour=t[0], minute=t[1], second=t[2]), True)
                                state.body = nxt
                    else:
                        state.host = command_host(cleaned) or state.host
                    continue
            if _COUNTERISH.search(line) is None:
                continue
            section = _section(text, start, max(scanned, state.body), section)
            scanned = end
            key = (section, line_shape(line.strip(" \t>")))
            if key in state.seen:
                at = _header_run_start(text, start, state.body)
                closed.append(state.chunk(text, at))
                state = _State(at, line_of(at))
            state.seen.add(key)
        if final:
            if has_counters(len(text)):
                closed.append(state.chunk(text, len(text)))
        else:
            cut = state.start
            if len(text) - cut > MAX_CHUNK:
                closed.append(state.chunk(text, len(text)))
                cut = len(text)
            line_no = line_of(cut)
            carry = text[cut:]
        for c in closed:
            if any(_COUNTERISH.search(l) for l in c.lines):
                yield c
        if final:
            return
