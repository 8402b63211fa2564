"""Helpers every OS parser module shares: one snapshot from lines, several from text."""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Tuple

from .model import ALL, Counters, LineParser, Meta, ParseError, Reading, Snapshot, to_int
from .text import Chunk, split

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


def collect(lines: Iterable[str], labels: Dict[str, str], reading: Reading,
            pattern: "re.Pattern[str]" = COUNT_FIRST) -> Dict[str, Optional[int]]:
    """Counters from lines whose label (lower-cased, spaces folded) is in `labels`.

    `labels` maps label → IP-MIB counter name. Every matched line goes into reading.raw.
    """
    found: Dict[str, Optional[int]] = {}
    for line in lines:
        m = pattern.match(line)
        if not m:
            continue
        label = " ".join(m["label"].split())
        name = labels.get(label.lower())
        if name is None:
            continue
        reading.raw[label] = m["value"]
        value = value_of(label, m["value"], reading)
        if value is not None:
            found[name] = value
    return found


def snapshot(meta: Meta, reading: Reading, chunk: Chunk, source: str, index: int) -> Snapshot:
    def full(values: Optional[Counters], reported: Tuple[str, ...]) -> Optional[Counters]:
        if values is None:
            return None
        return {name: (values.get(name) if name in reported else None) for name in ALL}

    return Snapshot(
        source=source, index=index, os=meta.name, format=reading.format,
        taken_at=chunk.taken_at, host=chunk.host,
        ipv4=full(reading.ipv4, meta.ipv4), ipv6=full(reading.ipv6, meta.ipv6),
        raw=reading.raw, warnings=reading.warnings, line=chunk.line, forwarding=reading.forwarding,
    )


def parse_text(text: str, meta: Meta, read: LineParser, source: str = "-") -> List[Snapshot]:
    """Every snapshot in `text`, read as this OS: what each module's parse() returns."""
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    out = []
    for chunk in split(text):
        reading = read(chunk.lines)
        if reading.ipv4 is None and reading.ipv6 is None:
            continue
        out.append(snapshot(meta, reading, chunk, source, len(out)))
    if not out:
        raise ParseError(f"no {meta.title} IP statistics found")
    return out
