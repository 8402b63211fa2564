"""How dumps arrive: decoding, cleaning pasted text, finding dates, splitting snapshots.

Everything here works on a stream of lines so a 1 GB file is read in constant memory.
"""
from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import IO, Iterable, Iterator, List, Optional, Tuple

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
_DOW = r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?"
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
        if m:
            return _build(m)
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
    taken_at: Optional[str] = None
    host: Optional[str] = None
    line: int = 1
    stamp: Optional[Stamp] = None


def _label(line: str) -> str:
    return " ".join(_NUMBER.sub("#", line).split())


def split(lines: Iterable[str]) -> Iterator[Chunk]:
    """Cut a stream of raw lines into snapshots.

    A new snapshot starts at a date line or a netstat command line that follows counters,
    or when a counter line repeats within its section (two dumps pasted back to back,
    `netstat -s | grep frag` run twice). Header lines between the last counter and the
    repeat belong to the new snapshot.
    """
    chunk = Chunk([])
    pending = 0  # header lines since the last counter line
    seen: set = set()
    section = ""
    has_counters = False

    for number, raw in enumerate(lines, 1):
        line = clean(raw)
        if not line.strip():
            continue
        numeric = _NUMBER.search(line) is not None
        stamp = parse_date_line(line) if numeric else None
        if stamp is not None or (_COMMAND.search(line) and not line.lstrip()[:1].isdigit()):
            if has_counters:
                yield chunk
                chunk, pending, seen, section, has_counters = Chunk([], line=number), 0, set(), "", False
            if stamp is not None:
                chunk.taken_at = stamp.iso()
                chunk.stamp = stamp
            else:
                chunk.host = command_host(line) or chunk.host
            continue
        if not numeric:
            if _LETTER.search(line):
                section = line.strip()
            chunk.lines.append(line)
            pending += 1
            continue
        if chunk.stamp is not None and not chunk.stamp.has_time and not has_counters:
            t = parse_time_only(line)
            if t is not None:  # Windows `date /t` then `time /t`
                chunk.stamp = Stamp(chunk.stamp.when.replace(hour=t[0], minute=t[1], second=t[2]), True)
                chunk.taken_at = chunk.stamp.iso()
                continue
        key = (section, _label(line))
        if key in seen:
            headers = chunk.lines[len(chunk.lines) - pending:] if pending else []
            if pending:
                del chunk.lines[-pending:]
            yield chunk
            chunk, seen = Chunk(headers, line=number - pending), set()
        seen.add(key)
        chunk.lines.append(line)
        pending = 0
        has_counters = True
    if has_counters:
        yield chunk
