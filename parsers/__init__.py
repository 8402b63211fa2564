"""Offline `netstat -s` parsers: text in, Snapshots out.

One module per OS family, each with META (what it covers), detect(text) -> score in
[0, 1] and parse(text) -> [Snapshot]. This package imports nothing from toolkit and
nothing heavy, so it loads fast and runs on any OS.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from . import evidence as _evidence
from .base import forget_texts, read_chunk, snapshot
from .evidence import Evidence
from .model import COUNTERS, Meta, ParseError, Snapshot
from .shapes import Shapes, learn, learn_silent, read_alone, split_alone
from .silent import Silent
from .text import DAMAGED, Chunk, line_shape, split


# The parser of each OS or format family, by module (a new one is added here; tests/test_fixtures.py
# checks that every module with a META is). The other modules are shared, and the evidence readers
# among them are loaded when a text may hold their kind.
PARSERS = ("agentjson", "aix", "bsd", "cisco", "ftx", "hpux", "huawei", "influx", "linux", "omniswitch",
           "prometheus", "snmp", "solaris", "tcpos", "vos", "windows")


def _load() -> Dict[str, ModuleType]:
    found = {}
    for name in PARSERS:
        module = importlib.import_module(f"{__name__}.{name}")
        found[module.META.name] = module
    return found


REGISTRY: Dict[str, ModuleType] = _load()


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
    forget_texts()
    return sorted((s for s in scores if s[1] >= MIN_SCORE), key=lambda s: -s[1])


def _signature(chunk: Chunk) -> Tuple[str, ...]:
    """What a snapshot looks like, numbers aside: dumps of one host in a log share it."""
    return tuple(line_shape(line) for line in chunk.lines[:6])


# Every parser's scores for a text, for every text read in this process (files, inputs,
# stdin), "no parser" included: many files of one kind cost one detection. Keyed by the
# exact text detect() sees, so a text always gets the scores detect() would give it.
_DETECTED: Dict[str, List[Tuple[str, float]]] = {}
_DETECTED_SIZE = [0]
MAX_DETECTED = 16 << 20      # characters of text kept as keys; the cache starts over past it
MAX_DETECT_KEY = 64 << 10    # a longer text is detected every time
# Shapes learnt from the snapshots read in full (parsers/shapes.py), for every text read in
# this process; iter_parse(fast=False) reads everything in full (what tests compare against).
SHAPES = Shapes()
SILENT = Silent()            # texts no parser reads, numbers aside (parsers/silent.py): fast path only


def detect_cached(text: str) -> List[Tuple[str, float]]:
    """detect(text), remembered for the run (callers must not change the list)."""
    ranked = _DETECTED.get(text)
    if ranked is None:
        ranked = detect(text)
        if len(text) <= MAX_DETECT_KEY:
            if _DETECTED_SIZE[0] + len(text) > MAX_DETECTED:
                _DETECTED.clear()
                _DETECTED_SIZE[0] = 0
            _DETECTED[text] = ranked
            _DETECTED_SIZE[0] += len(text)
    return ranked


def _verdict(ranked: List[Tuple[str, float]], last: Optional[str]) -> Tuple[ModuleType, Optional[str]]:
    """The parser for a snapshot with these scores after a snapshot read as `last`, and the
    "ambiguous" note when another parser scores as well."""
    best = ranked[0]
    if last is not None and any(n == last and s >= best[1] - 0.15 for n, s in ranked):
        return REGISTRY[last], None
    close = [n for n, s in ranked[1:] if s >= best[1] - 0.05]
    note = (f"OS is ambiguous from this text ({', '.join([best[0]] + close)}); read as {best[0]}; "
            "use --os to choose") if close else None
    return REGISTRY[best[0]], note


def _reading(module: ModuleType, note: Optional[str], chunk: Chunk, forced: bool,
             warn: Callable[[str], None], skip: Callable[[int, str], None]):
    """The Reading of one snapshot read in full by `module`, or None (said through warn/skip)."""
    try:
        reading = read_chunk(module.read, chunk)
    except ParseError as exc:
        warn(f"line {chunk.line}: {exc}")
        return None
    if reading.ipv4 is None and reading.ipv6 is None:
        skip(chunk.line, f"{module.META.title} text without IP counters")
        return None
    if forced and not any(v is not None for fam in (reading.ipv4, reading.ipv6) if fam for v in fam.values()):
        guess = detect("\n".join(chunk.lines))
        warn(f"line {chunk.line}: --os {module.META.name}: this text holds none of its counters"
             + (f" ({reading.warnings[0]})" if reading.warnings else "")
             + (f"; it reads as {guess[0][0]}" if guess and guess[0][0] != module.META.name else "")
             + "; skipped")
        return None
    bad = next((i for i, line in enumerate(chunk.lines) if DAMAGED in line), None)
    for one in [reading] + reading.parts:
        one.warnings.extend(chunk.notes)
        if bad is not None:
            one.warnings.append(f"damaged text (bytes netstat never prints, or a cut line): "
                                f"{chunk.lines[bad].strip()[:60]!r}; what it held is unknown")
        if note:
            one.warnings.append(note)
    return reading


def _quiet(text: str) -> List[Tuple[str, float]]:
    """detect(text), and "evidence" for a text that holds a socket table or routes: what the
    silent texts' proofs ask (parsers/silent.py, shapes.learn_silent), so such a text is never
    taken for one no reader reads."""
    ranked = detect(text)
    if not ranked and _evidence.present(text) and _evidence.scan(text.split("\n"), text=text):
        return [("evidence", 1.0)]
    return ranked


def iter_parse(lines: Union[str, Iterable[str]], source: str = "-", os: Optional[str] = None,
               warn: Callable[[str], None] = lambda message: None,
               skipped: Optional[List[int]] = None, prefer: Optional[str] = None,
               fast: bool = True, evidence: Optional[Callable[[Evidence], None]] = None) -> Iterator[Snapshot]:
    """Snapshots from text, a text stream or lines, in constant memory.

    The OS is detected per snapshot (a file may mix hosts); a snapshot whose text fits
    the OS of the one before keeps it, so `| grep frag` excerpts after a full dump stay
    with that dump's OS, and a snapshot shaped like an earlier one reuses its scores.
    `os` forces a parser; `prefer` (the host's known OS) only wins where the text fits it
    as well as the best guess, so a VOS host's TCP_OS dump is still read as TCP_OS.
    `warn` receives one line per problem (each distinct problem once), naming the line.
    Blocks of text that no parser reads are appended to `skipped` (their first line
    numbers) when a list is given, else warned about one by one. Snapshots of a shape
    read twice before are matched whole (parsers/shapes.py); `fast=False` reads every
    snapshot in full, for the same result. Socket tables and learned routes in the text
    (parsers/evidence.py) go to `evidence`, each with its source, line, date and prompt
    host; a block holding one is never "text no parser recognizes".
    """
    forced = get(os) if os else None
    last: Optional[str] = prefer if prefer in REGISTRY else None
    # a text's verdicts by signature: a snapshot shaped like an earlier one of this text
    # gets its parser and note
    verdicts: Dict[Tuple[str, ...], Tuple[ModuleType, Optional[str]]] = {}
    warned: set = set()
    index = 0
    shapes = SHAPES if fast else None

    def skip(line: int, why: str) -> None:
        if skipped is not None:
            skipped.append(line)
        else:
            warn(f"line {line}: {why}; skipped (use --os to force one)")

    def said(note: Optional[str], line: int) -> None:
        if note and note not in warned:
            warned.add(note)
            warn(f"line {line}: {note}")

    notes: List[str] = []
    quiet: list = []
    found_index = 0
    for chunk in split(lines, notes, shapes, quiet):
        shape = chunk.fast
        if shape is not None and shape.module is None:
            # a text no parser reads whatever its numbers: skipped where the full path would skip it
            if forced is None and shape.sig not in verdicts:
                SILENT.skipped += 1
                skip(chunk.line, "text with numbers that no parser recognizes")
                continue
            chunk.fast = shape = None           # read it in full
        if shape is not None:
            # a known shape: used when the full path would read it with the shape's parser and note
            if forced is not None:
                usable = shape.forced and shape.module is forced
            else:
                known = verdicts.get(shape.sig)
                ranked = shape.ranked if known is None else None
                if ranked is not None:
                    # the text's first snapshot of this signature: the verdict the full path
                    # would reach from the scores the shape's numbers do not change
                    known = _verdict(ranked, last)
                    if known == (shape.module, shape.note) and len(verdicts) < 256:
                        verdicts[shape.sig] = known
                usable = not shape.forced and known == (shape.module, shape.note)
            if usable:
                if shape.note:
                    said(shape.note, chunk.line)
                last = shape.os
                yield shape.build(chunk, source, index)
                index += 1
                continue
            chunk.fast = None                   # read it in full
        note = None
        sig = None
        text = "\n".join(chunk.lines)
        held = _evidence.scan(chunk.lines, chunk.command, getattr(chunk, "command_line", 0) or chunk.line, text) \
            if _evidence.present(text) else []
        for ev in held:
            ev.source, ev.index, ev.taken_at = source, found_index, chunk.taken_at
            ev.host = ev.prompt_host = chunk.host
            found_index += 1
            if evidence is not None:
                evidence(ev)
        if forced is not None:
            if held and not detect(text):
                continue                        # a socket table or routes alone: no dump to force
            module = forced
        else:
            sig = _signature(chunk)
            cached = verdicts.get(sig)
            if cached is not None:
                module, note = cached
            else:
                silent = SILENT if shapes is not None and not held else None
                proven = silent is not None and silent.known(text)
                ranked = [] if proven else detect_cached(text)
                if proven and chunk.origin is not None and shapes.wants_silent(silent.form(text)):
                    shape = learn_silent(chunk.origin, chunk.taken_at, chunk.host, chunk.command, sig, _quiet)
                    if shape is not None:
                        shapes.add(shape)
                if not ranked:
                    if silent is not None:
                        silent.heard(text, _quiet)
                    if not held:
                        skip(chunk.line, "text with numbers that no parser recognizes")
                    continue
                module, note = _verdict(ranked, last)
                if len(verdicts) < 256:
                    verdicts[sig] = (module, note)
                else:
                    sig = None                  # not remembered: no shape for it
        reading = _reading(module, note, chunk, forced is not None, warn, skip if not held else lambda n, w: None)
        if reading is None:
            continue
        said(note, chunk.line)
        last = module.META.name
        snap = snapshot(module.META, reading, chunk, source, index)
        # a text that names its own hosts and times (a scrape, an agent's JSON) is read in full, and so
        # is one that holds a socket table or routes besides its counters
        if shapes is not None and chunk.origin is not None and (forced is not None or sig is not None) and not held \
                and reading.host is None and reading.taken_at is None and not reading.parts \
                and shapes.wants(chunk.origin, module.META.name, note, forced is not None):
            _learn(shapes, chunk, snap, module, note, sig, forced is not None)
        yield snap
        index += 1
        for part in reading.parts:
            yield snapshot(module.META, part, chunk, source, index)
            index += 1
    for line, command, host, stamp in quiet:
        ev = _evidence.empty(command, line)      # an empty route cache or socket table
        if ev is not None:
            ev.source, ev.index, ev.taken_at = source, found_index, stamp.iso() if stamp else None
            ev.host = ev.prompt_host = host
            found_index += 1
            if evidence is not None:
                evidence(ev)
    for note in notes:
        if index or "mid-line" not in note:   # a cut in a text that gave nothing is no news
            warn(note)


def _learn(shapes: Shapes, chunk: Chunk, snap: Snapshot, module: ModuleType, note: Optional[str],
           sig: Optional[Tuple[str, ...]], forced: bool) -> None:
    def finish(c: Chunk) -> Optional[Snapshot]:
        reading = _reading(module, note, c, forced, lambda m: None, lambda n, w: None)
        return None if reading is None else snapshot(module.META, reading, c, snap.source, 0)

    template = "\n".join(chunk.lines)
    cut: Dict[str, str] = {}        # the texts read alone while learning -> their one chunk's lines

    def ranked_of(text: Optional[str]):
        """The scores of `text` alone; None: of this chunk (what the full path detected)."""
        if text is None:
            return detect_cached(template)
        alone = cut.get(text)
        return _ranked_alone(text) if alone is None else _scores(alone)

    origin = chunk.origin

    def run(text: str):
        # the template alone is read as it was read in full when it gives the parser the same
        return read_alone(text, finish, cut, (chunk, snap) if text is origin.text else None)

    shape = learn(origin, chunk.taken_at, chunk.host, chunk.command, snap, module, note, sig, forced,
                  run, ranked_of)
    if shape is not None:
        shapes.add(shape)


def _ranked_alone(text: str):
    """detect() of the one snapshot a text alone makes (None unless exactly one). Read from
    the run's cache when that text was detected before (a one-snapshot file: its template),
    never stored there (sentinel texts are never read again)."""
    chunks = split_alone(text)
    return None if chunks is None else _scores("\n".join(chunks[0].lines))


def _scores(alone: str):
    """detect(alone), from the run's cache when it holds that text (without storing it there)."""
    ranked = _DETECTED.get(alone)
    return detect(alone) if ranked is None else ranked


def parse(text: str, source: str = "-", os: Optional[str] = None,
          warn: Callable[[str], None] = lambda message: None) -> List[Snapshot]:
    """All snapshots in a text (see iter_parse); ParseError when there are none."""
    snaps = list(iter_parse(text, source, os, warn))
    if not snaps:
        raise ParseError("no netstat IP statistics found")
    return snaps


__all__ = ["COUNTERS", "Meta", "ParseError", "Snapshot", "Evidence", "REGISTRY", "names", "get", "detect",
           "iter_parse", "parse", "Chunk"]
