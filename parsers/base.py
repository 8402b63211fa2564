"""Helpers every OS parser module shares: one snapshot from lines, several from text."""
from __future__ import annotations

import re
from typing import Callable, Dict, Iterable, List, Optional, TYPE_CHECKING, Tuple

from .model import ALL, Meta, ParseError, Reading, Snapshot, to_int
from .text import Chunk, split


if TYPE_CHECKING:
    from .model import Counters, LineParser

# `   92  ipReasmReqds` (count first); a value may carry thousands grouping; anything glued
# to it is kept so to_int can refuse it instead of dropping characters.
COUNT_FIRST = re.compile(r"^\s*(?P<value>\d[\d,]*\S*)\s+(?P<label>\S.*?)\s*$")


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
