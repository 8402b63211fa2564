"""How dumps arrive: decoding, cleaning pasted text, finding dates, splitting snapshots.

Everything here works on a stream of lines so a 1 GB file is read in constant memory.
"""
from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import IO, Iterator, List, Optional, Tuple

from . import paste
from .model import ParseError
from .lazyre import lazy


SNIFF = 4096
_CONTROL_BYTES = bytes(range(9)) + bytes(range(14, 32))     # what no text file holds much of

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
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    if head and controls > 0.05 * len(head):
        raise ParseError("binary data (control bytes), not a netstat dump")
    return "utf-8"


def open_text(binary: IO[bytes]) -> IO[str]:
    """Wrap a binary stream as text lines, sniffing the encoding (UTF-16 from PowerShell too)."""
    buffered = binary if isinstance(binary, io.BufferedReader) else io.BufferedReader(binary)  # type: ignore[arg-type]
    head = buffered.peek(SNIFF)[:SNIFF]
    encoding = sniff_encoding(head)
    if encoding in ("utf-8", "utf-8-sig"):
        return Utf8Text(buffered, encoding == "utf-8-sig")
    return io.TextIOWrapper(buffered, encoding=encoding, errors="replace", newline=None)


class Utf8Text:
    """What io.TextIOWrapper(binary, "utf-8", errors="replace", newline=None) reads, for a
    fraction of its cost on text holding CRs or non-ASCII characters (it decodes 8 KiB at a
    time through the codecs module's Python layer: 5 ms a MiB of the mixed corpus): what was
    read is decoded in one call of the same C decoder, an unfinished character at its end
    kept for the next read; CR LF and lone CRs become LF (a CR at the end waits for what follows)."""

    def __init__(self, binary: IO[bytes], bom: bool) -> None:
        self.binary = binary
        self.carry = b""        # an unfinished character's first bytes
        self.cr = False         # the last text ended with a CR, held back
        self.bom = bom          # utf-8-sig: the first three bytes are the BOM

    def read(self, size: int = -1) -> str:
        whole = size is None or size < 0
        while True:
            data = self.binary.read() if whole else self.binary.read(max(size, 4))
            if self.bom:
                data, self.bom = (self.carry + data)[3:], False
                self.carry = b""
            final = whole or not data
            if self.carry:
                data = self.carry + data
            text, used = codecs.utf_8_decode(data, "replace", final)
            self.carry = data[used:]
            if self.cr:
                text, self.cr = "\r" + text, False
            if "\r" in text:
                if not final and text.endswith("\r"):
                    text, self.cr = text[:-1], True
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            if text or final:
                return text

    def close(self) -> None:
        self.binary.close()

    def __enter__(self) -> "Utf8Text":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def decode(data: bytes) -> str:
    return data.decode(sniff_encoding(data[:SNIFF]), errors="replace").replace("\r\n", "\n").replace("\r", "\n")


# ---------------------------------------------------------------- cleaning

_QUOTE = lazy(r"^[ \t]*(?:>[ \t]?)+(?=[ \t]*(?:\S|$))")
_NUMBER = lazy(r"\d")
_LETTER = lazy(r"[A-Za-z]")


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
# `date` in German, French and Spanish locales (first three letters; French June/July need four)
_MONTHS.update({"mär": 3, "mrz": 3, "mai": 5, "okt": 10, "dez": 12, "fév": 2, "fev": 2, "avr": 4,
                "aoû": 8, "aou": 8, "déc": 12, "ene": 1, "abr": 4, "ago": 8, "dic": 12})
_MONTHS4 = {"juin": 6, "juil": 7}
_ZONES = {"UTC": 0, "GMT": 0, "Z": 0, "UT": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5,
          "MST": -7, "MDT": -6, "PST": -8, "PDT": -7, "CET": 1, "CEST": 2, "BST": 1,
          "IST": 5.5, "JST": 9, "AEST": 10, "AEDT": 11, "MET": 1, "MEST": 2}
_DOW = (r"(?:(?:mon|tue|wed|thu|fri|sat|sun|mo|di|mi|do|fr|sa|so"       # English, German
        r"|lun|mar|mer|jeu|ven|sam|dim|mié|mie|jue|vie|sáb|sab|dom)[^\W\d_]*\.?,?\s+)?")  # French, Spanish
_MON = r"(?P<mon>[^\W\d_]{3,4})[^\W\d_]*\.?"
_TIME = r"(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,]\d+)?)?(?:\s*(?P<ampm>[AaPp]\.?[Mm]\.?))?"
_TZ = r"(?:\s+(?P<tz>[A-Z]{1,5}|[+-]\d{2}:?\d{2}))?"
_DATE_FORMS = [
    # ISO 8601: 2026-11-22T03:06:45Z, 2026-11-22 03:06:45+01:00
    lazy(r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})(?:[T\s]+" + _TIME
         + r"\s*(?P<off>Z|[+-]\d{2}:?\d{2})?" + _TZ + r")?", re.I),
    # date(1): Sun Nov 22 03:06:45 UTC 2026
    lazy(_DOW + _MON + r"\s+(?P<d>\d{1,2}),?\s+" + _TIME + _TZ + r"\s+(?P<y>\d{4})", re.I),
    # date(1), day first: Sun 22 Nov 2026 03:06:45 AM UTC
    lazy(_DOW + r"(?P<d>\d{1,2})\.?\s+" + _MON + r"\s+(?P<y>\d{4}),?\s+" + _TIME + _TZ, re.I),
    # date(1) in en_GB, de_DE, fr_FR: Tue  3 Mar 10:00:01 GMT 2026, Di 3. Mär 10:00:01 CET 2026
    lazy(_DOW + r"(?P<d>\d{1,2})\.?\s+" + _MON + r"\s+" + _TIME + _TZ + r"\s+(?P<y>\d{4})", re.I),
    # Nov 22, 2026 03:06:45 / November 22 2026 3:06 PM
    lazy(_DOW + _MON + r"\s+(?P<d>\d{1,2}),?\s+(?P<y>\d{4})(?:,?\s+" + _TIME + _TZ + r")?", re.I),
    # Windows date /t (US): Sun 11/22/2026, optionally with a time after it
    lazy(_DOW + r"(?P<mo>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})(?:\s+" + _TIME + r")?", re.I),
    # day first: 22.11.2026 (German date /t), 22/11/2026 (UK) when the US reading is impossible
    lazy(_DOW + r"(?P<d>\d{1,2})[./](?P<mo>\d{1,2})[./](?P<y>\d{4}),?(?:\s+" + _TIME + r")?", re.I),
]
_YEAR = lazy(r"\d{4}")      # every form above holds one: a line without it is no date
_TIME_ONLY = lazy(r"^\s*" + _TIME + r"\s*$")
_DECOR = " \t=-#*[]():|"


@dataclass
class Stamp:
    when: datetime
    has_time: bool
    damaged: bool = False     # a date line whose bytes are damaged: a boundary, but no date

    def iso(self) -> str:
        return self.when.isoformat()


def _build(m: "re.Match[str]") -> Optional[Stamp]:
    g = m.groupdict()
    try:
        year = int(g["y"])
        name = (g.get("mon") or "").lower()
        month = int(g["mo"]) if g.get("mo") else _MONTHS4.get(name[:4]) or _MONTHS.get(name[:3])
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
    zone = _zone(g.get("off") or g.get("tz"))
    if zone is not None:
        when = when.replace(tzinfo=zone)
    return Stamp(when, bool(g.get("H")))


_EPOCH = lazy(r"1\d{9}")     # `date +%s`: 2001-09-09 to 2033-05-18


# The two forms cron logs print most (`date` in the C locale, ISO 8601 from `date -Is`/`-u +%FT%TZ`),
# read without trying every form: each is a strict subset of the form parse_date_line would pick
# (nothing before it in _DATE_FORMS can match such a line), so the result is the same Stamp.
_C_DATE = lazy(r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}"
               r"([0-9]{1,2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([A-Z]{1,5}) ([0-9]{4})")
_ISO_DATE = lazy(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(Z|[+-][0-9]{2}:[0-9]{2})?")
_C_MONTH = {m.title(): i for m, i in _MONTHS.items() if m.isascii() and len(m) == 3}
_TZ_CACHE: dict = {}


def _zone(name: Optional[str]):
    """The tzinfo _build gives a zone name or offset (None: the time stays naive)."""
    if not name:
        return None
    tz = _TZ_CACHE.get(name)
    if tz is None:
        if name.upper() in _ZONES:
            tz = timezone(timedelta(hours=_ZONES[name.upper()]))
        elif re.match(r"[+-]\d{2}:?\d{2}$", name):
            sign = -1 if name[0] == "-" else 1
            digits = name[1:].replace(":", "")
            tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
        else:
            tz = False
        _TZ_CACHE[name] = tz
    return tz or None


def fast_date(line: str) -> Optional[Stamp]:
    """parse_date_line for the two common forms, exactly; None when the line is not one of them
    (it may still be a date in another form: parse_date_line tries them all)."""
    m = _C_DATE.fullmatch(line)
    if m is not None:
        mon, d, hh, mm, ss, tz, y = m.groups()
        mo = _C_MONTH[mon]
    else:
        m = _ISO_DATE.fullmatch(line)
        if m is None:
            return None
        y, mo, d, hh, mm, ss, tz = m.groups()
    try:
        when = datetime(int(y), int(mo), int(d), int(hh), int(mm), int(ss))
    except ValueError:
        return None
    zone = _zone(tz)
    return Stamp(when.replace(tzinfo=zone) if zone is not None else when, True)


_DAYS: dict = {}
_SUFFIX: dict = {}
# fast_iso's last line: its length, its text before and after its time, where that is, its head and tail
_LAST: list = [(-1, "", "", 0, "", "")]
_HMS = lazy(r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]")


def fast_iso(line: str) -> Optional[str]:
    """`fast_date(line).iso()` without building the datetime (the fast path's dates). A cron
    log's date lines differ from the one before in their time alone: a line that is the last
    one read with another valid hh:mm:ss in its place is that line's answer with this time."""
    last = _LAST[0]
    if len(line) == last[0] and line.startswith(last[1]) and line.endswith(last[2]) \
            and _HMS.fullmatch(line, last[3], last[3] + 8):
        return last[4] + line[last[3]:last[3] + 8] + last[5]
    m = _C_DATE.fullmatch(line)
    if m is not None:
        mon, d, hh, mm, ss, tz, y = m.groups()
        day = (y, mon, d)
        month = _C_MONTH[mon]
        at = m.start(3)
    else:
        m = _ISO_DATE.fullmatch(line)
        if m is None:
            return None
        y, mo, d, hh, mm, ss, tz = m.groups()
        day = (y, mo, d)
        month = int(mo)
        at = m.start(4)
    head = _DAYS.get(day)
    if head is None:
        try:
            head = datetime(int(y), month, int(d)).isoformat()[:10] + "T"
        except ValueError:
            head = ""
        if len(_DAYS) > 4096:
            _DAYS.clear()
        _DAYS[day] = head
    if not head or hh > "23" or mm > "59" or ss > "59":
        return None
    tail = _SUFFIX.get(tz)
    if tail is None:
        zone = _zone(tz)
        tail = _SUFFIX[tz] = datetime(2000, 1, 1, tzinfo=zone).isoformat()[19:] if zone is not None else ""
    _LAST[0] = (len(line), line[:at], line[at + 8:], at, head, tail)     # one object: threads see it whole
    return f"{head}{hh}:{mm}:{ss}{tail}"


def parse_date_line(line: str) -> Optional[Stamp]:
    """A line that is a date and nothing else (decoration like `=== ... ===` allowed)."""
    if line[:1].isalnum():
        stamp = fast_date(line)
        if stamp is not None:
            return stamp
    s = line.strip(_DECOR)
    if _EPOCH.fullmatch(line.rstrip()):   # alone and not indented: an indented number is a count
        return Stamp(datetime.fromtimestamp(int(s), timezone.utc), True)
    if len(s) < 8 or len(s) > 60 or not s[0].isalnum() or not _YEAR.search(s):
        return None
    for form in _DATE_FORMS:
        m = form.fullmatch(s)
        stamp = _build(m) if m else None
        if stamp is not None:
            return stamp
    return None


def never_a_date(line: str) -> bool:
    """True when no digits in place of this line's make it a date line (parse_date_line,
    classify): its text, decoration aside, starts with neither a letter nor a digit."""
    s = clean(line).strip(_DECOR)
    return s[:1] != "" and not s[0].isalnum()


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

_COMMAND = lazy(
    r"(?:(?:^|[\s$#%>:\]|;])(?:n?netstat|nstat|cat\s+/proc/net/(?:snmp6?|netstat))"
    # device commands only at the start of a line or right after a prompt, so a manual's
    # "fields of the display ip statistics command" is prose, not a command
    r"|(?:^[ \t]*|^[^\n]{0,80}?[#>$%\]:][ \t]*)(?:snmp(?:bulk)?(?:walk|get)"          # net-snmp
    r"|sh(?:ow?)?\s+ipv?6?\s+traf\w*|sh(?:ow?)?\s+sys\w*\s+stat\w*"                   # Cisco, FTOS; Junos
    r"|sh(?:ow?)?\s+kernel\s+ip(?:v6)?\s+counters"                                      # Arista EOS
    r"|dis(?:p(?:l(?:ay?)?)?)?\s+ip(?:v6)?\s+stat\w*"                                   # Huawei, H3C, 3Com
    r"|netsh\s+(?:int\w*\s+)?ip(?:v[46])?\s+sh\w*\s+(?:ipstat|dest)\w*"                # Windows netsh
    # socket tables and learned routes (parsers/evidence.py)
    r"|ss(?:[ \t]+-{1,2}[\w-]+)+|ip(?:[ \t]+-\S+)*[ \t]+r(?:o(?:u(?:te?)?)?)?(?=[ \t]|$)"
    # devices, tunnels, container networks, clamping rules (toolkit/stack.py)
    r"|ip(?:[ \t]+-\S+)*[ \t]+(?:l(?:i(?:nk?)?)?|a(?:d(?:dr?)?)?|address)(?=[ \t]|$)"
    r"|ip6?tables-save|nft\s+list\s+ruleset|wg\s+show(?:conf)?|docker\s+network\s+inspect)"
    r")(?:\s|$|\.exe)", re.I)
_HOSTS = [
    lazy(r"\[?[\w.-]+@(?P<host>[A-Za-z0-9][\w.-]*)[\s:\]>]"),      # [root@web1 ~]#, user@web1:~$, user@mx1>
    lazy(r"^[ \t]*<(?P<host>[A-Za-z][\w.-]*)>[ \t]*dis"),                # Huawei/H3C: <HUAWEI>display ...
    lazy(r"^[ \t]*(?P<host>[A-Za-z][\w.-]*)(?:\([\w-]+\))?[#>][ \t]*sh"),  # Cisco, FTOS: R1#show, R1>sh
    lazy(r"^(?P<host>[A-Za-z][\w.-]*)\s*[#%]\s"),                   # web1# netstat -s
    lazy(r"^(?P<host>[A-Za-z][\w.-]*):[/~][^\s]*\s*[#$%]"),         # web1:/root# netstat -s
    lazy(r"^(?P<host>[A-Za-z][\w.-]*):\S*\s+[\w.-]+[$#%]\s"),       # macOS: MacBook-Pro:~ ann$ netstat -s
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
    command: Optional[str] = None   # the command line that printed it, when one was pasted
    command_line: int = 0           # that command line's line (1-based; 0: none)
    # What parsers/shapes.py needs to learn this snapshot's shape (set when the splitter has
    # shapes): its text from its first line on, where its body starts, and the splitter state.
    origin: Optional["Origin"] = None
    notes: List[str] = field(default_factory=list)   # notes glued to values, taken off its lines (paste.unglue)
    fast = None                     # a FastChunk's shape; a plain chunk has none

    @property
    def taken_at(self) -> Optional[str]:
        return self.stamp.iso() if self.stamp else None


@dataclass(frozen=True)
class Origin:
    text: str                # the snapshot's text (after paste.normalize), from its first line to its end
    body: int                # offset in `text` where the lines the parsers read begin
    dates: int               # date lines the splitter read in it (before its body)
    first_date: bool         # its stamp came from its first line
    by_command: bool
    keys: frozenset
    headers: frozenset


class FastChunk:
    """A snapshot matched whole by a known shape (parsers/shapes.py): the same Chunk a full
    scan would give, its lines cut only when someone asks for them."""
    __slots__ = ("fast", "groups", "taken_at", "host", "line", "command", "text", "start", "end", "body",
                 "skip", "cleans", "_lines", "_stamp", "notes")
    origin = None

    def __init__(self, shape, groups, taken_at, line, text, start, end, body):
        self.fast = shape
        self.groups = groups
        self.taken_at = taken_at
        self.host = shape.host
        self.command = shape.command
        self.line = line
        self.text, self.start, self.end = text, start, end   # its text is text[start:end], cut when asked for
        self.body = body        # where the shape's match starts in that (after the date line)
        self.skip = shape.prefix_lines   # command lines between that and the lines parsers read
        self.cleans = shape.cleans       # its text is as pasted: paste.clean() gives what the parsers read
        self._lines = None
        self._stamp = None
        self.notes: List[str] = []   # a shape is never learnt from a snapshot with notes, nor matches one

    @property
    def src(self) -> str:
        """Its text, as in Origin.text."""
        return self.text[self.start:self.end]

    @property
    def lines(self) -> List[str]:
        if self._lines is None:
            src = self.src
            at = self.body
            if self.cleans:
                src, at = paste.clean(src[at:]), 0
            for _ in range(self.skip):
                at = src.index("\n", at) + 1
            self._lines, notes = paste.unglue(_lines(src[at:]))
            self.notes.extend(notes)        # read in full after all (merged with a second grep)
        return self._lines

    @property
    def stamp(self) -> Optional[Stamp]:
        if self._stamp is None and self.taken_at is not None:
            src = self.src
            self._stamp = parse_date_line(src[:src.index("\n")])
        return self._stamp


# ------------------------------------------------------------ the splitter
#
# A dump can be a gigabyte of cron output, so the splitter never loops over every line in
# Python: literal-led regexes find the few lines that matter (dates, command lines, IP
# section headers, IP counter lines) and everything else is sliced in bulk. Its state lives
# across read blocks, so where a block ends never changes the result, and every scan
# resumes where the last one stopped, so time is linear in the input, long lines included.
#
# Where a snapshot starts (and nowhere else):
# - a date line or a netstat command line after counters;
# - an IP section header (`ip:`, `Ip:`, `IPv4 Statistics`, `IPv4 ipForwarding =`, `#kernel`,
#   `Ip: Forwarding DefaultTTL`...) of a kind the snapshot already holds with counters:
#   two dumps pasted back to back, of one OS or of two (macOS then Linux);
# - never at a repeated counter line: without a header of its own it is the IPv6 block of
#   an excerpt (Windows, the BSDs and HP-UX print IPv6 with the same words) or a line
#   printed twice, which the OS parser reads or warns about.
# Two grep excerpts run one after the other at one prompt with no date between and no
# label in common (`| grep frag`, then `| grep reass`) are one moment: they are merged.

BLOCK = 1 << 16          # text read at a time (a part cleaned copies what follows it in the text held;
                         # and a MiB read at a time was a MiB's page faults, twice, every time)
MAX_CHUNK = 8 << 20      # a "snapshot" this big with no boundary is cut anyway (flat memory)
MAX_LINE = 16384         # no netstat line is this long (Telegraf's nstat line of /proc/net/netstat, the longest
                         # real one, is ~6 KiB): longer lines are skipped, never held

# Candidates are found by literal-led patterns on a lower-cased copy of the block (fast in
# CPython's re), then confirmed on their whole line.
_CAND_COMMAND = lazy(r"netstat|nstat|/proc/net/|snmp|show|sh ip|sh sys|display|dis ip|ipstat|ss -|ip -|ip r"
                     r"|ip l|ip a|tables-save|nft list|wg show|docker network")
# Every date form we read has a time (hh:mm), a /yyyy or .yyyy, or a -mm-dd in it; `date +%s`
# prints ten digits alone. Every branch starts with a literal character, so re skips to
# those (a leading `[/.]` or `^` made it try every position: 4x slower on netstat -an).
_CAND_DATE = lazy(r":[0-5]\d|/(?:19|20)\d\d|\.(?:19|20)\d\d|-[01]\d-[0-3]\d|1(?<=^1)\d{9}[ \t]*$", re.M)
# Lines that carry the counters we read (lower-cased). Kept narrow: a generic word such as
# "datagrams" repeats inside one dump (macOS nests udp lines).
_CAND_RELEVANT = lazy(
    r"reass|reasm|fragm|fragok|fragfail|fragcreate|total packets received|packets received\s*="
    r"|inreceives|forwarding|ip6?: +\d")
# IP section headers of every OS, confirmed by _HEADER below.
_CAND_HEADER = lazy(r"ip(?:v?6)?:[ \t\r]*(?:\n|$)|ip: forwarding|statisti|#kernel|ipforwarding|ipv6forwarding")
_HEADER = lazy(
    r"^[ \t>]*(?:(?P<bsd>ip|ip6|ipv6):"                                  # BSD, HP-UX, AIX, VOS, Linux netstat
    r"|(?P<snmp>ip): forwarding defaulttl"                               # /proc/net/snmp
    r"|(?P<win>ip|ipv4|ipv6|interface) statistics|(?P<wde>ipv4|ipv6)-statistik|(?P<wdeif>schnittstellen)statistik"
    r"|(?P<kernel>#kernel)"                                              # nstat
    r"|(?P<sol>ip|ipv4|ipv6)[ \t]+ip(?:v6)?forwarding[ \t]*="           # Solaris, header inline
    r")[ \t]*(?:$|(?<==)|(?<=defaultttl)|(?<=statistics)|(?<=statistik))")
_COUNTERISH = lazy(r"(?<![A-Za-z\d])\d")
_VALUE = lazy(r"(?<![\w.])\d[\d,]*(?![\w.])")
_QUOTED = lazy(r"^[ \t]*>", re.M)


def line_shape(line: str) -> str:
    """A line without its values (numbers inside words such as Ip6 or InType3 stay)."""
    return " ".join(_VALUE.sub("#", line).split())


def header_kind(line: str) -> Optional[str]:
    """'ip4', 'ip6' or 'if' when a line opens an IP (or Windows interface) section, else None."""
    m = _HEADER.match(line.lower())
    if m is None:
        return None
    word = next(v for v in m.groupdict().values() if v)
    if word in ("interface", "schnittstellen"):
        return "if"
    if word == "#kernel":
        return "ip4"
    return "ip6" if "6" in word else "ip4"


# Bytes no netstat prints: NUL and other controls, DEL, C1, and what decoding could not read.
# Each becomes DAMAGED, so a damaged value is refused and parsers know a line is damaged.
DAMAGED = "\ufffd"
_DAMAGE = lazy("[\x00-\x08\x0e-\x1f\x7f-\x9f\ufffd]")


def damaged(line: str) -> bool:
    return DAMAGED in line


def _lines(text: str) -> List[str]:
    """The non-blank lines of a snapshot's text, cleaned (lines too long for netstat included:
    the caller drops and reports them)."""
    if "\r" in text:
        text = text.replace("\r", "")
    if "\x0b" in text or "\x0c" in text:     # vertical tab, form feed (a printed page break)
        text = text.replace("\x0b", "\n").replace("\x0c", "\n")
    if _DAMAGE.search(text):
        text = _DAMAGE.sub(DAMAGED, text)
    if "\t" in text:
        text = text.expandtabs(8)
    if _QUOTED.search(text):
        return [c for c in (clean(line) for line in text.split("\n")) if c.strip()]
    return [line.rstrip() for line in text.split("\n") if line.strip()]


class _State:
    """The snapshot being built: where its text starts and what it has seen so far."""

    def __init__(self, start: int, line: int):
        self.start = start          # offset in the splitter's text where its lines begin
        self.body = start           # offset after the last date/command line it absorbed
        self.line = line
        self.counters = False       # a line with a number seen in [body, checked)
        self.checked = start
        self.headers: set = set()   # IP section kinds seen (ip4, ip6, if)
        self.keys: set = set()      # (section, shape) of its IP counter lines
        self.section = ""
        self.stamp: Optional[Stamp] = None
        self.host: Optional[str] = None
        self.by_command = False     # started at a command line (may be a second grep of one moment)
        self.command: Optional[str] = None
        self.command_line = 0       # the line the command was on
        self.dates = 0              # date lines read (a shape is learnt only from one at its start)
        self.first_date = False

    def shift(self, by: int) -> None:
        self.start -= by
        self.body -= by
        self.checked -= by


class _Info:
    """What merging two greps of one moment looks at, for a chunk whose state is gone."""
    __slots__ = ("by_command", "keys", "headers")

    def __init__(self, by_command: bool, keys, headers):
        self.by_command, self.keys, self.headers = by_command, keys, headers


WINDOW = 1 << 13         # candidates are looked for this far ahead at a time (the shapes take over after a snapshot)
WINDOW_MIN = 1 << 10     # ... at first where the shapes stopped: what they leave is mostly a few lines
RETRY = 1 << 11          # where the shapes stopped at text not cleaned yet, this much is cleaned and tried again
_DIGIT = lazy(r"[0-9]")
_WAIT = object()         # _ends: the text there is not all here yet
_NOT_END = object()      # _ends: the full scan would not end the snapshot there
_RAW = object()          # _try: a match over text not cleaned yet that the shape may not read as it is


def classify(raw: str, low: Optional[str] = None) -> Tuple[Optional[Stamp], bool, str]:
    """(stamp, is a command line, cleaned) for a line: what starts a snapshot after counters.
    `low` is the lower-cased line when the caller has it."""
    raw = raw.rstrip("\r")
    if raw[:1].isalpha():
        stamp = fast_date(raw)
        if stamp is not None:       # a date line for certain (it has `:ss`, so it is a candidate too)
            return stamp, False, raw
    low = raw.lower() if low is None else low
    is_date = _CAND_DATE.search(low) is not None
    is_cmd = _CAND_COMMAND.search(low) is not None
    if not (is_date or is_cmd):
        return None, False, raw
    return _boundary(raw, is_date, is_cmd)


def _boundary(raw: str, is_date: bool, is_cmd: bool) -> Tuple[Optional[Stamp], bool, str]:
    """(stamp, is a command line, cleaned) for a line the candidate patterns picked as a
    possible date (`is_date`) or command (`is_cmd`) line."""
    cleaned = clean(raw)
    stamp = parse_date_line(cleaned) if is_date and len(cleaned) < 80 else None
    if stamp is None and is_date and _DAMAGE.search(cleaned) and len(cleaned) < 80 \
            and parse_date_line(_DAMAGE.sub(" ", cleaned)):
        stamp = Stamp(datetime.min, False, damaged=True)   # a date line, but its date cannot be trusted
    command = stamp is None and is_cmd and _COMMAND.search(cleaned) is not None \
        and not cleaned.lstrip()[:1].isdigit()
    return stamp, command, cleaned


class Splitter:
    """Cuts a stream of text into Chunks; feed() blocks of any size, then finish().

    With `shapes` (parsers/shapes.py), a snapshot that starts at a date or command line (or
    at the start of the text) and has a known shape is matched whole, in C, and comes out as
    a FastChunk: the same snapshot a full scan gives (tests/test_fast_path.py checks), found
    without looking at its lines. Chunks read in full carry their Origin, so the caller can
    teach the shapes new ones."""

    def __init__(self, shapes=None) -> None:
        self.text = ""              # the open snapshot's text and whatever follows, unscanned
        self.pos = 0                # everything before this offset is scanned
        self.line_no = 1            # line number at offset 0 of self.text
        self.counted = (0, 1)       # (offset, line number) for incremental counting
        self.state = _State(0, 1)
        self.skipping = False       # inside a line longer than MAX_LINE
        self.long_lines: List[int] = []   # line numbers of skipped long lines
        self.pending: Optional[Tuple[Chunk, object]] = None
        self.cut: Optional[int] = None     # line number of a last line with no end (cut?)
        self.shapes = shapes
        self.fresh: Optional[int] = 0 if shapes is not None else None   # try the shapes here
        self._win = None            # (text, start, end, lower-cased text[start:end]) of the scan window
        self._wsize = WINDOW        # the next window's size: small where the shapes stopped, doubling
        self.unclean = 0            # the end of a match the shapes may not read before it is cleaned
        self._grow = 1              # how much more than that the shapes have cleaned ahead where they stop,
        self._ahead = 0             # up to here (later settles start past it: only _rebase moves it)
        self._found: dict = {}      # finder kind -> (searched from, next candidate or None) in _win
        # text from this offset on is not cleaned yet (paste.normalize_later): what the full
        # scan reads is cleaned first (_settle_ahead); the shapes read it as it is where that is the same
        self.unsettled: Optional[int] = None
        self.quiet: List[Tuple[int, str, Optional[str], Optional[Stamp]]] = []   # command lines nothing followed:
                                    # (line, command, prompt host, stamp), for what an empty output means
        self._cleaned = None        # (offset, raw, cleaned): the text the last settles cleaned, from the
                                    # last that changed it on; a shape matched in it may get a twin for
                                    # the text as pasted (Shapes.twin)

    # ---------------------------------------------------------------- feeding

    def feed(self, block: str, done: bool = True) -> Iterator[Chunk]:
        """`done` False: whole lines not cleaned yet (paste.normalize_later): what the full scan
        reads is cleaned first, a part at a time (_settle_ahead); the shapes read them as they
        are where cleaning would change nothing (shapes.Shape.reads_raw)."""
        if self.skipping:
            nl = block.find("\n")
            if nl == -1:
                return
            block = block[nl:]      # the long line's end: it stays as an empty line
            self.skipping = False
        if self.unsettled is not None and done:
            self._settle(max(self.unsettled, self.pos), len(self.text))
        if not done and self.unsettled is None:
            self.unsettled = len(self.text)
        self.text += block
        last_nl = self.text.rfind("\n")
        if len(self.text) - last_nl - 1 > MAX_LINE:
            # the unfinished last line is too long for any netstat output: drop it, and the
            # rest of it as it arrives
            self.long_lines.append(self._line_of(last_nl + 1))
            self.text = self.text[:last_nl + 1]
            self.skipping = True
        yield from self._scan(last_nl + 1, final=False)

    def finish(self) -> Iterator[Chunk]:
        if self.text and not self.text.endswith("\n") and not self.skipping:
            # The input ends mid-line: whatever that last line held may be cut (a number, a label).
            self.text += DAMAGED
            self.cut = self._line_of(len(self.text))
        yield from self._scan(len(self.text), final=True)
        if self._has_counters(len(self.text)):
            yield from self._close(len(self.text), None)
        elif self.state.command:
            st = self.state
            self.quiet.append((st.command_line, st.command, st.host, st.stamp))
        if self.pending is not None:
            yield self.pending[0]
            self.pending = None

    # ---------------------------------------------------------------- helpers

    def _settle(self, start: int, limit: int) -> int:
        """Clean the not yet cleaned text from `start` (a line start) to `limit` (a line start
        or the text's end); returns where `limit` is now."""
        text = self.text
        raw = text[start:limit]
        cleaned = paste.clean(raw)
        self.unsettled = limit if limit < len(text) else None
        last = self._cleaned
        if last is not None and last[0] + len(last[2]) == start and len(last[1]) < BLOCK:
            self._cleaned = (last[0], last[1] + raw, last[2] + cleaned)     # a snapshot cleaned in parts
        elif cleaned is not raw:
            self._cleaned = (start, raw, cleaned)
        if cleaned is raw:
            return limit
        self.text = text[:start] + cleaned + text[limit:]
        if self.counted[0] > start:
            self.counted = (0, self.line_no)
        if self.unsettled is not None:
            self.unsettled += len(cleaned) - len(raw)
        return limit + len(cleaned) - len(raw)

    def _settle_ahead(self, at: int, size: int, limit: int) -> int:
        """Clean the text not cleaned yet from `at` (a line start) on, `size` characters, to the
        end of that line and one line more (what the scan looks at past a line), up to `limit`
        (the scan's); returns where `limit` is now. Only what is read in full is cleaned: a
        block with pasted damage in one place is not copied whole for it."""
        text = self.text
        upto = at + size
        for _ in range(2):
            if upto >= limit:
                upto = limit
                break
            nl = text.find("\n", upto, limit)
            upto = limit if nl == -1 else nl + 1
        start = max(self.unsettled, at)
        if start >= upto:
            return limit
        return limit + self._settle(start, upto) - upto

    def _line_of(self, pos: int) -> int:
        at, n = self.counted
        if pos < at:
            at, n = 0, self.line_no
        n += self.text.count("\n", at, pos)
        self.counted = (pos, n)
        return n

    def _has_counters(self, end: int) -> bool:
        st = self.state
        if not st.counters and end > st.checked:
            st.counters = _COUNTERISH.search(self.text, max(st.checked, st.body), end) is not None
            st.checked = end
        return st.counters

    def _close(self, end: int, new_start: Optional[int]) -> Iterator[Chunk]:
        """Close the open snapshot at `end`; the next one starts at `new_start`."""
        st = self.state
        lines = _lines(self.text[st.body:end])
        if any(len(line) > MAX_LINE for line in lines):
            self.long_lines.append(st.line)
            lines = [line for line in lines if len(line) <= MAX_LINE]
        lines, notes = paste.unglue(lines)
        chunk = Chunk(lines, st.stamp, st.host, st.line, st.command, notes=notes, command_line=st.command_line)
        if any(_COUNTERISH.search(line) for line in chunk.lines):
            if self.shapes is not None:
                chunk.origin = Origin(self.text[st.start:end], st.body - st.start, st.dates, st.first_date,
                                      st.by_command, frozenset(st.keys), frozenset(st.headers))
            yield from self._emit(chunk, st)
        if new_start is not None:
            self.state = _State(new_start, self._line_of(new_start))

    def _emit(self, chunk: Chunk, st) -> Iterator[Chunk]:
        """Hold each chunk back one step: the next may be a second grep of the same moment
        (both run at a prompt, no date of its own, no section kind and no label in common)."""
        prev = self.pending
        if prev is not None:
            pchunk, pst = prev
            if (st.by_command and pst.by_command and chunk.stamp is None and st.keys and pst.keys
                    and not (st.keys & pst.keys) and not (st.headers & pst.headers)
                    and (chunk.host is None or chunk.host == pchunk.host)):
                if pchunk.fast is not None:             # read it in full from now on
                    pchunk.fast = None
                    pst = _Info(pst.by_command, set(pst.keys), set(pst.headers))
                    self.pending = (pchunk, pst)
                pchunk.lines.extend(chunk.lines)
                pchunk.notes.extend(chunk.notes)
                if pchunk.origin is not None:
                    object.__setattr__(pchunk, "origin", None)   # two texts: no shape of its own
                pst.keys |= st.keys
                pst.headers |= st.headers
                return
            yield pchunk
        self.pending = (chunk, st)

    def _rebase(self) -> None:
        """Drop the text before the open snapshot (flat memory)."""
        cut = self.state.start
        if cut:
            self.line_no = self._line_of(cut)
            self.counted = (0, self.line_no)
            self.text = self.text[cut:]
            self.pos -= cut
            self.state.shift(cut)
            if self.fresh is not None:
                self.fresh -= cut
            if self.unsettled is not None:
                self.unsettled = max(0, self.unsettled - cut)
            self._ahead -= cut
            self._cleaned = None

    # ---------------------------------------------------------------- the fast path

    def _ends(self, end: int, limit: int, final: bool):
        """Whether a snapshot matched up to `end` ends there for the full scan too, because a
        date or command line follows: the date's ISO form (None for a command line, an
        undated one or the end of the text); _NOT_END when the scan would read on, _WAIT when
        the text there is not all here yet."""
        if end >= limit:
            return None if final else _WAIT
        text = self.text
        nl = text.find("\n", end, limit)
        if nl == -1:
            return _NOT_END if final else _WAIT    # final: a last line cut short, the full scan reads it
        nxt = text[end:nl]
        iso = fast_iso(nxt) if nxt[:1].isalpha() else None     # a date line alone: clean as it is
        if iso is None:
            if self.unsettled is not None and end >= self.unsettled and not paste.inert(nxt):
                return _NOT_END         # cleaning would change that line: the full scan reads it
            stamp, command, _ = classify(nxt)
            if stamp is None and not command:
                return _NOT_END
            iso = stamp.iso() if stamp is not None and stamp.has_time and not stamp.damaged else None
        return iso

    def _try(self, shape, body: int, limit: int, final: bool, raw: Optional[int]):
        """(match, what _ends says) for `shape` at `body`, or (match, _RAW) when it matches text
        not cleaned yet (from `raw` on) that it may not read as it is; None when it does not match."""
        if shape.cleans and (raw is None or body < raw):
            return None                 # a twin for text as pasted: text cleaned already is not that
        m = shape.match(self.text, body, limit)
        if m is None:
            return None
        if raw is not None and m.end() > raw and not shape.reads_raw(self.text, body, m.end()):
            self.unclean = max(self.unclean, m.end())     # (_shaped cleans that far and tries again)
            return m, _RAW
        return m, self._ends(m.end(), limit, final)

    def _shaped(self, at: int, limit: int, final: bool):
        """_fast from `at`, and again where it stopped at text not cleaned yet once that is
        cleaned: a shape that matched it but may not read it as it is, or any, may know it
        then (pasted damage). Where it stops again within text cleaned so (a longer snapshot,
        or a run of such text, across reads too), twice as much is cleaned ahead each time.
        Returns what _fast does, and the scan's limit after the cleaning."""
        while True:
            self.unclean = 0
            at, short = yield from self._fast(at, limit, final)
            if short < limit or at >= limit or self.unsettled is None:
                break
            self._grow = self._grow * 2 if at < self._ahead else 1
            size = min(BLOCK, (self.unclean - at if self.unclean else RETRY) * self._grow)
            if not self.unclean and at < self.unsettled and self.unsettled - at >= self._led(at, limit):
                break                # cleaned there past the length of any shape led by that text
            if self.unsettled >= min(limit, at + size):
                break                # cleaned there already: that is not why
            before = self.text
            limit = self._settle_ahead(at, size, limit)
            if self.text is before and not self.unclean:
                break                # nothing to undo there: no shape knows that text
            self._ahead = limit if self.unsettled is None else self.unsettled
        return at, short, limit

    def _led(self, at: int, limit: int) -> int:
        """How long a snapshot of a shape led by the text at `at` (a line start) may be, as
        _fast looks them up (Shape.size); 0 when no shape is."""
        text = self.text
        eol = text.find("\n", at, limit)
        if eol == -1:
            return self.shapes.longest
        dated = text[at:at + 1].isalpha() and fast_iso(text[at:eol]) is not None
        return max((shape.size for shape in self.shapes.lookup(dated, _lead(text, eol + 1 if dated else at))), default=0)

    def _fast(self, at: int, limit: int, final: bool):
        """Snapshots of known shapes from offset `at` (a line start where a fresh snapshot
        begins) on, as long as they come. A generator that returns where the full scan goes
        on, and the limit of this scan (smaller when the text there may be incomplete)."""
        text = self.text
        shapes = self.shapes
        find = text.find
        lookup = shapes.lookup
        shape = None
        taken_at: Optional[str] = None
        known = False                # taken_at already says what the line at `at` is
        raw = self.unsettled         # text from here on is not cleaned yet
        while True:
            eol = find("\n", at, limit)
            if eol == -1:
                break
            if not known:
                taken_at = fast_iso(text[at:eol]) if text[at:at + 1].isalpha() else None
            body = eol + 1 if taken_at is not None else at
            # the shape of the snapshot before first, then the others led by the same text: the
            # first that matches and ends where the full scan would end the snapshot too
            dated = taken_at is not None
            tried = shape if shape is not None and shape.dated is dated else None
            found = self._try(tried, body, limit, final, raw) if tried is not None else None
            matched = found is not None
            if found is not None and (found[1] is _NOT_END or found[1] is _RAW):
                found = None
            if found is None:
                for shape in lookup(dated, _lead(text, body)):
                    if shape is not tried:
                        found = self._try(shape, body, limit, final, raw)
                        if found is not None:
                            matched = True
                            if found[1] is not _NOT_END and found[1] is not _RAW:
                                break
                            found = None
                if found is None:
                    shape = None
                    if not matched and not final and limit - at < shapes.longest:
                        return at, at    # the snapshot may not be all here yet: wait for the rest
                    break
            m, iso = found
            if iso is _WAIT:
                return at, at            # what follows it is not all here yet
            end = m.end()
            known = iso is not None
            prev = self.pending
            if prev is not None:
                pchunk, pst = prev
                if (taken_at is None and shape.by_command and pst.by_command and shape.keys and pst.keys
                        and not (shape.keys & pst.keys) and not (shape.headers & pst.headers)
                        and (shape.host is None or shape.host == pchunk.host)):
                    break                # a second grep of the pending one's moment: the full scan merges
                yield pchunk
            cleaned = self._cleaned
            if cleaned is not None and cleaned[0] <= body and end <= cleaned[0] + len(cleaned[2]) \
                    and not shape.cleans and shape not in shapes.twinned:
                shapes.twin(shape, cleaned[1], cleaned[2], body - cleaned[0], end - cleaned[0])
            counted = self.counted
            line = counted[1] if counted[0] == at else self._line_of(at)
            self.pending = (FastChunk(shape, m.groups(), taken_at, line, text, at, end, body - at), shape)
            shapes.hits += 1
            if shape.cleans:
                shapes.twin_hits += 1
            self.counted = (end, line + shape.lines + (taken_at is not None))
            at = end
            if known:
                taken_at = iso
            if at >= limit:
                break
        return at, limit

    # ---------------------------------------------------------------- scanning

    def _scan(self, limit: int, final: bool) -> Iterator[Chunk]:
        pos = self.pos
        finders = ((_CAND_COMMAND, "cmd"), (_CAND_DATE, "date"), (_CAND_HEADER, "hdr"), (_CAND_RELEVANT, "rel"))
        while True:
            if self.fresh is not None:
                at, self.fresh = self.fresh, None
                if at == pos and self.shapes.any:
                    at, short, limit = yield from self._shaped(at, limit, final)
                    self._wsize = WINDOW_MIN
                    if at > pos:
                        self.state = _State(at, self._line_of(at))
                        pos = at
                    if short < limit:
                        limit = short
                        self.fresh = at      # try again when the rest is here
            if pos >= limit:
                break
            if self.unsettled is not None and self.unsettled < limit:
                limit = self._settle_ahead(pos, self._wsize, limit)
            # a window of whole lines, cleaned, lower-cased: candidates are looked for only in it
            # (kept while the text stays: a scan that stops at a snapshot for the shapes goes on in it),
            # and the line after it is cleaned too
            text = self.text
            bound = limit
            if self.unsettled is not None and self.unsettled < limit:
                bound = text.rfind("\n", pos, self.unsettled - 1) + 1
            win = self._win
            if win is not None and win[0] is text and win[1] <= pos < win[2] <= bound:
                _, base, stop, low = win
            else:
                stop = min(bound, pos + self._wsize)
                self._wsize = min(WINDOW, self._wsize * 2)
                if stop < bound:
                    nl = text.find("\n", stop, bound)
                    stop = bound if nl == -1 else nl + 1
                base = pos
                low = text[base:stop].lower()
                self._win = (text, base, stop, low)
                self._found = {}
            # each finder's next candidate, remembered with where its search started: valid
            # for any later pos up to it (a scan resumed after the shapes reuses it)
            found = self._found
            nxt = {}
            for rx, kind in finders:
                hit = found.get(kind)
                if hit is None or hit[0] > pos or (hit[1] is not None and hit[1] < pos):
                    m = rx.search(low, pos - base)
                    hit = found[kind] = (pos, m.start() + base if m else None)
                nxt[kind] = hit[1]
            while True:
                live = [(at, kind) for kind, at in nxt.items() if at is not None]
                if not live:
                    pos = stop
                    break
                at = min(a for a, _ in live)
                start = text.rfind("\n", pos, at) + 1 if at > pos else pos
                if start < pos:
                    start = pos
                end = text.find("\n", at, stop)
                end = stop if end == -1 else end
                kinds = {kind for a, kind in live if a < end + 1}
                if not final and "date" in kinds and end + 1 >= limit and _date_only(text[start:end]):
                    limit = pos = start     # `date /t` may be followed by `time /t`: wait for that line
                    break
                yield from self._line(start, end, kinds)
                if self.fresh is not None:
                    pos = self.fresh        # a snapshot ended there: the shapes may read the next ones
                    break
                pos = min(end + 1, stop)
                for rx, kind in finders:
                    if nxt[kind] is not None and nxt[kind] < pos:
                        m = rx.search(low, pos - base)
                        nxt[kind] = m.start() + base if m else None
                        found[kind] = (pos, nxt[kind])
        self.pos = limit
        if not final:
            st = self.state
            if limit - st.start > MAX_CHUNK:
                yield from self._close(limit, limit)
            self._rebase()

    def _line(self, start: int, end: int, kinds: set) -> Iterator[Chunk]:
        text = self.text
        raw = text[start:end].rstrip("\r")
        st = self.state
        if "date" in kinds or "cmd" in kinds:
            stamp, command, cleaned = _boundary(raw, "date" in kinds, "cmd" in kinds)
            if stamp is not None or command:
                if self._has_counters(start):
                    yield from self._close(start, start)
                    if self.shapes is not None and self.shapes.any:
                        self.fresh = start      # the scan tries the shapes there, then reads the line
                        return
                    st = self.state
                st.body = end + 1 if end < len(text) else end
                st.checked = max(st.checked, st.body)
                if stamp is not None:
                    st.dates += 1
                    st.first_date = st.dates == 1 and start == st.start
                if stamp is not None and stamp.damaged:
                    st.stamp = None
                elif stamp is not None:
                    st.stamp = stamp
                    if not stamp.has_time and end < len(text):
                        nxt = text.find("\n", end + 1)
                        nxt = len(text) if nxt == -1 else nxt
                        t = parse_time_only(clean(text[end + 1:nxt]))
                        if t is not None:  # Windows `date /t` then `time /t`
                            st.stamp = Stamp(stamp.when.replace(hour=t[0], minute=t[1], second=t[2]), True)
                            st.body = nxt + 1 if nxt < len(text) else nxt
                            st.checked = max(st.checked, st.body)
                            st.first_date = False
                else:
                    if st.command:          # the command before printed nothing (an empty route cache)
                        self.quiet.append((st.command_line, st.command, st.host, st.stamp))
                    st.host = command_host(cleaned) or st.host
                    st.command = cleaned.strip()[:200]
                    st.command_line = self._line_of(start)
                    st.by_command = True
                return
        if "hdr" in kinds:
            kind = header_kind(raw)
            if kind is not None:
                prev = text.rfind("\n", max(0, start - 1 - MAX_LINE), max(start - 1, 0)) + 1
                repeated = start > 0 and text[prev:start - 1].strip() == raw.strip()   # a line printed twice
                if kind in st.headers and not repeated and self._has_counters(start):
                    at = self._header_run_start(start, st.body)
                    yield from self._close(at, at)
                    st = self.state
                st.headers.add(kind)
                if kind != "if":
                    st.section = kind
        if "rel" in kinds and _COUNTERISH.search(raw) is not None:
            st.keys.add((st.section, line_shape(raw.strip(" \t>"))))

    def _header_run_start(self, pos: int, floor: int) -> int:
        """Start of the run of header and blank lines just before offset `pos` (a line start)."""
        text = self.text
        start = pos
        for _ in range(32):
            if start <= floor:
                return floor
            prev = text.rfind("\n", floor, start - 1) + 1
            line = text[prev:start - 1]
            if line.strip() and _COUNTERISH.search(line) is not None:
                return start
            start = prev
        return start


def _lead(text: str, body: int) -> str:
    """What a snapshot's shape is looked up by: its text from `body` to its first digit (48 characters at most)."""
    d = _DIGIT.search(text, body, body + 48)
    return text[body:d.start() if d is not None else body + 48]


def _date_only(line: str) -> bool:
    stamp = parse_date_line(clean(line)) if len(line) < 80 else None
    return stamp is not None and not stamp.has_time


def _blocks(source) -> Iterator[str]:
    if isinstance(source, str):
        for at in range(0, len(source), BLOCK):
            yield source[at:at + BLOCK]
        return
    read = getattr(source, "read", None)
    if read is not None:
        while True:
            block = read(BLOCK)
            if not block:
                return
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


def split(source, notes: Optional[List[str]] = None, shapes=None, quiet: Optional[list] = None) -> Iterator[Chunk]:
    """Cut text into snapshots: `source` is a str, a text stream or an iterable of lines.

    See the comment above for where a snapshot starts. A date line followed by a
    time-only line (Windows `date /t`, `time /t`) makes one timestamp. Lines too long to
    be netstat output are skipped; `notes` (when given) receives one line about them.
    With `shapes`, snapshots of known shapes come out as FastChunks (see Splitter). `quiet`
    (when given) receives (line, command, host, stamp) of each command line nothing but
    another command line or the end followed: what printed nothing.
    """
    splitter = Splitter(shapes)
    if shapes is None:
        for block in paste.normalize(_blocks(source)):
            yield from splitter.feed(block)
    else:
        for block, done in paste.normalize_later(_blocks(source)):
            yield from splitter.feed(block, done)
    yield from splitter.finish()
    if quiet is not None:
        quiet.extend(splitter.quiet)
    if splitter.cut and notes is not None:
        notes.append(f"line {splitter.cut}: the input ends mid-line (no newline after it): "
                     "what that line held may be cut, so it is left unknown")
    if splitter.long_lines and notes is not None:
        lines = splitter.long_lines
        notes.append(f"skipped {len(lines)} line(s) longer than {MAX_LINE} characters, not netstat output "
                     f"(line {', '.join(map(str, lines[:5]))}{', ...' if len(lines) > 5 else ''})")
