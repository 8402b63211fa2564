"""Offline `netstat -s` parsers: text in, Snapshots out.

One module per OS family, each with META (what it covers), detect(text) -> score in
[0, 1] and parse(text) -> [Snapshot]. This package imports nothing from toolkit and
nothing heavy, so it loads fast and runs on any OS.
"""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from .base import read_chunk, snapshot
from .model import COUNTERS, Meta, ParseError, Snapshot
from .text import DAMAGED, Chunk, line_shape, split

_SHARED = {"base", "model", "text"}


def _discover() -> Dict[str, ModuleType]:
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name in _SHARED or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        meta = getattr(module, "META", None)
        if isinstance(meta, Meta):
            found[meta.name] = module
    return found


REGISTRY: Dict[str, ModuleType] = _discover()
MIN_SCORE = 0.2


def names() -> List[str]:
    return sorted(REGISTRY)


def get(name: str) -> ModuleType:
    try:
        return REGISTRY[name.lower()]
    except KeyError:
        raise ParseError(f"unknown OS {name!r}; known: {', '.join(names())}") from None


def detect(text: str) -> List[Tuple[str, float]]:
    """Every parser's score for `text`, best first (scores below MIN_SCORE left out)."""
    scores = [(name, float(module.detect(text))) for name, module in REGISTRY.items()]
    return sorted((s for s in scores if s[1] >= MIN_SCORE), key=lambda s: -s[1])


def _signature(chunk: Chunk) -> Tuple[str, ...]:
    """What a snapshot looks like, numbers aside: dumps of one host in a log share it."""
    return tuple(line_shape(line) for line in chunk.lines[:6])


def iter_parse(lines: Union[str, Iterable[str]], source: str = "-", os: Optional[str] = None,
               warn: Callable[[str], None] = lambda message: None,
               skipped: Optional[List[int]] = None, prefer: Optional[str] = None) -> Iterator[Snapshot]:
    """Snapshots from text, a text stream or lines, in constant memory.

    The OS is detected per snapshot (a file may mix hosts); a snapshot whose text fits
    the OS of the one before keeps it, so `| grep frag` excerpts after a full dump stay
    with that dump's OS, and a snapshot shaped like an earlier one reuses its verdict.
    `os` forces a parser; `prefer` (the host's known OS) only wins where the text fits it
    as well as the best guess, so a VOS host's TCP_OS dump is still read as TCP_OS.
    `warn` receives one line per problem (each distinct problem once), naming the line.
    Blocks of text that no parser reads are appended to `skipped` (their first line
    numbers) when a list is given, else warned about one by one.
    """
    forced = get(os) if os else None
    last: Optional[str] = prefer if prefer in REGISTRY else None
    verdicts: Dict[Tuple[str, ...], Tuple[ModuleType, Optional[str]]] = {}
    warned: set = set()
    index = 0

    def skip(line: int, why: str) -> None:
        if skipped is not None:
            skipped.append(line)
        else:
            warn(f"line {line}: {why}; skipped (use --os to force one)")

    notes: List[str] = []
    for chunk in split(lines, notes):
        note = None
        if forced is not None:
            module = forced
        else:
            sig = _signature(chunk)
            cached = verdicts.get(sig)
            if cached is not None:
                module, note = cached
            else:
                ranked = detect("\n".join(chunk.lines))
                if not ranked:
                    skip(chunk.line, "text with numbers that no parser recognizes")
                    continue
                best = ranked[0]
                if last is not None and any(n == last and s >= best[1] - 0.15 for n, s in ranked):
                    module = REGISTRY[last]
                else:
                    module = REGISTRY[best[0]]
                    close = [n for n, s in ranked[1:] if s >= best[1] - 0.05]
                    if close:
                        note = (f"OS is ambiguous from this text ({', '.join([best[0]] + close)}); "
                                f"read as {best[0]}; use --os to choose")
                if len(verdicts) < 256:
                    verdicts[sig] = (module, note)
        try:
            reading = read_chunk(module.read, chunk)
        except ParseError as exc:
            warn(f"line {chunk.line}: {exc}")
            continue
        if reading.ipv4 is None and reading.ipv6 is None:
            skip(chunk.line, f"{module.META.title} text without IP counters")
            continue
        if forced is not None and not any(v is not None for fam in (reading.ipv4, reading.ipv6) if fam
                                          for v in fam.values()):
            guess = detect("\n".join(chunk.lines))
            warn(f"line {chunk.line}: --os {forced.META.name}: this text holds none of its counters"
                 + (f" ({reading.warnings[0]})" if reading.warnings else "")
                 + (f"; it reads as {guess[0][0]}" if guess and guess[0][0] != forced.META.name else "")
                 + "; skipped")
            continue
        bad = next((i for i, line in enumerate(chunk.lines) if DAMAGED in line), None)
        if bad is not None:
            reading.warnings.append(f"damaged text (bytes netstat never prints, or a cut line): "
                                    f"{chunk.lines[bad].strip()[:60]!r}; what it held is unknown")
        if note:
            reading.warnings.append(note)
            if note not in warned:
                warned.add(note)
                warn(f"line {chunk.line}: {note}")
        last = module.META.name
        yield snapshot(module.META, reading, chunk, source, index)
        index += 1
    for note in notes:
        if index or "mid-line" not in note:   # a cut in a text that gave nothing is no news
            warn(note)


def parse(text: str, source: str = "-", os: Optional[str] = None,
          warn: Callable[[str], None] = lambda message: None) -> List[Snapshot]:
    """All snapshots in a text (see iter_parse); ParseError when there are none."""
    snaps = list(iter_parse(text, source, os, warn))
    if not snaps:
        raise ParseError("no netstat IP statistics found")
    return snaps


__all__ = ["COUNTERS", "Meta", "ParseError", "Snapshot", "REGISTRY", "names", "get", "detect",
           "iter_parse", "parse", "Chunk"]
