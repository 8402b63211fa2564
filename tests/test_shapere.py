"""parsers/_shapere.py: a learnt shape's pattern compiled from its parts without re's parser
and compiler is the very pattern re.compile makes of its text (same text, flags and code),
for every shape learnt from the fixture dumps and for random mixes of every kind of part;
where its own code is not what re's compiler writes, re.compile itself is used."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import parsers
from parsers import _shapere

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "netstat"
KINDS = (_shapere.RUN, _shapere.RUN_GROUP, _shapere.NONZERO, _shapere.NONZERO_GROUP)


class NoRe:
    S, A = re.S, re.A

    @staticmethod
    def compile(*args):
        raise AssertionError(f"fell back to re.compile: {args[0][:80]}")


def _equal(rx, text):
    want = re.compile(text, re.S | re.A)
    assert rx.pattern == text
    assert rx == want and rx.groups == want.groups and rx.flags == want.flags and rx.groupindex == want.groupindex


def test_every_learnt_shape_compiles_to_what_re_compile_makes(monkeypatch):
    shapes = parsers.Shapes()
    monkeypatch.setattr(parsers, "SHAPES", shapes)
    monkeypatch.setattr(_shapere, "re", NoRe)        # learnt by _shapere's own code alone
    for p in sorted(FIXTURES.rglob("*.txt")):
        text = p.read_text(errors="replace")
        for _ in range(2):               # a shape is learnt the second time it is read
            list(parsers.iter_parse(text, source=str(p)))
    monkeypatch.undo()
    assert len(shapes.order) > 40
    for shape in shapes.order:
        _equal(shape.rx, shape.rx.pattern)
    assert any(shape.rx.groups > 5 for shape in shapes.order)
    assert any("[1-9]" in shape.rx.pattern for shape in shapes.order)


def _parts(rng):
    parts = []
    for _ in range(rng.randint(1, 40)):
        if rng.random() < 0.4:
            parts.append(rng.choice([_shapere.DOT, 1, 2, 7, 255, 65535, 70000]))
        if rng.random() < 0.3:
            parts.append(str(rng.randint(0, 10 ** rng.randint(1, 8))))
        else:
            parts.append(rng.choice(KINDS))
        parts.append(rng.choice([_shapere.DOT, 1, 3, 40]))
    if rng.random() < 0.3:
        parts.pop()
    return parts


@pytest.mark.parametrize("seed", range(40))
def test_random_parts_compile_to_what_re_compile_makes(seed, monkeypatch):
    parts = _parts(random.Random(seed))
    monkeypatch.setattr(_shapere, "re", NoRe)
    rx = _shapere.compile(parts)
    monkeypatch.undo()
    _equal(rx, _shapere.text_of(parts))


def test_a_compiler_that_writes_other_code_is_not_trusted(monkeypatch):
    monkeypatch.setattr(_shapere, "_CODE", [])
    real = _shapere._compiler._compile

    def other(code, items, flags):
        real(code, items, flags)
        if items and items[0][0] is _shapere.POSSESSIVE_REPEAT:
            code.append(_shapere.ANY)       # something else than this module expects
    monkeypatch.setattr(_shapere._compiler, "_compile", other)
    parts = ["1", 3, _shapere.RUN_GROUP, _shapere.DOT]
    assert _shapere._code() is None
    monkeypatch.setattr(_shapere._compiler, "_compile", real)
    _equal(_shapere.compile(parts), "1.{3}+(\\d{1,19}+).")      # by re.compile itself
