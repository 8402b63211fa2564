"""Hostile and damaged input: a counter is right, or null with a warning -- never another number.

Built from the real fixtures: every dump is damaged the ways files arrive damaged (cut
mid-line, NUL and control bytes, a line duplicated, prose or blank lines pasted in, CRLF),
and every value read from the damaged text must be the original's or null with a warning.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

import parsers
from fixturelib import NETSTAT, expected, pairs
from parsers.text import decode

FIXTURES = [(raw, expected(want)[0]) for raw, want in pairs()]


def read(text, os_name):
    warnings = []
    snaps = list(parsers.iter_parse(text, os=os_name, warn=warnings.append))
    return snaps, warnings


def mutations(text: str, rng: random.Random, n: int):
    """(name, damaged text) pairs: the damage a file picks up on its way to a ticket."""
    lines = text.split("\n")
    for _ in range(n):
        kind = rng.choice(["cut", "nul", "nul-over", "esc", "dup-line", "prose", "blank", "crlf", "c1"])
        if kind == "cut":
            pos = rng.randrange(1, len(text))
            while pos < len(text) and text[pos - 1] == "\n":
                pos += 1                       # mid-line: a cut at a line end is a shorter dump, not damage
            yield kind, text[:pos]
        elif kind in ("nul", "esc", "c1"):
            pos = rng.randrange(len(text))
            ch = {"nul": "\x00", "esc": "\x1b[2J", "c1": "\x9b"}[kind]
            yield kind, text[:pos] + ch + text[pos:]
        elif kind == "nul-over":
            pos = rng.randrange(len(text))
            if text[pos] != "\n":
                yield kind, text[:pos] + "\x00" + text[pos + 1:]
        elif kind == "dup-line":
            i = rng.randrange(len(lines))
            yield kind, "\n".join(lines[:i + 1] + lines[i:])
        elif kind == "prose":
            i = rng.randrange(len(lines) + 1)
            yield kind, "\n".join(lines[:i] + ["see the attached output below for details"] + lines[i:])
        elif kind == "blank":
            i = rng.randrange(len(lines) + 1)
            yield kind, "\n".join(lines[:i] + ["", ""] + lines[i:])
        else:
            yield kind, text.replace("\n", "\r\n")


def _values(snap):
    for fam in ("ipv4", "ipv6"):
        for k, v in (getattr(snap, fam) or {}).items():
            yield fam, k, v


@pytest.mark.parametrize("raw,os_name", FIXTURES, ids=[str(r.relative_to(NETSTAT)) for r, _ in FIXTURES])
def test_damaged_dump_gives_the_original_values_or_null_with_a_warning(raw, os_name):
    text = decode(raw.read_bytes())
    original, _ = read(text, os_name)
    rng = random.Random(raw.name)
    checked = 0
    for kind, bad in mutations(text, rng, int(os.environ.get("MSSDIAG_MUTATIONS", "60"))):
        snaps, warnings = read(bad, os_name)
        said = bool(warnings or any(s.warnings for s in snaps))
        if kind in ("dup-line", "prose", "blank", "crlf"):
            assert len(snaps) == len(original), (kind, [s.line for s in snaps], bad[:300])
        elif len(snaps) != len(original):
            # damage may hit the line that separates or joins two dumps: then a line says so
            assert kind == "cut" and len(snaps) < len(original) or said, (kind, "snapshots changed without a word")
        for got in snaps:
            # every number read is the dump's own: all of a snapshot's values come from one
            # original snapshot (the same family and counter), and a null where it had a value is warned
            values = {(f, k): v for f, k, v in _values(got) if v is not None}
            match = [w for w in original if all(dict(((f, k), v) for f, k, v in _values(w)).get(fk) == v
                                                for fk, v in values.items())]
            if not match:
                pytest.fail(f"{kind}: values no snapshot of the dump holds: {values}\n{bad[:2000]}")
            if len(snaps) == len(original) and any(v is None for _, _, v in _values(got)) and not said:
                lost = [(f, k) for f, k, v in _values(got) if v is None
                        and any(dict(((f2, k2), v2) for f2, k2, v2 in _values(w)).get((f, k)) is not None for w in match)]
                assert not lost, (kind, lost, "nulled without a warning")
            checked += 1
    assert checked


def test_a_repeated_inline_header_line_is_not_a_second_dump():
    text = decode((NETSTAT / "solaris" / "bgera_solaris_full.txt").read_bytes())
    line = next(l for l in text.splitlines() if "ipForwarding" in l)
    snaps, _ = read(text.replace(line, line + "\n" + line, 1), None)
    assert len(snaps) == 1
