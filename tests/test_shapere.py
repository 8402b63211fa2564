"""parsers/_shapere.py: a learnt shape's pattern compiled without re's parser is the very
pattern re.compile makes of it (same text, flags and code), for every shape learnt from the
fixture dumps; anything else in the pattern goes to re.compile itself."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import parsers
from parsers import _shapere

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "netstat"


@pytest.fixture(scope="module")
def patterns():
    shapes = parsers.Shapes()
    saved = parsers.SHAPES
    parsers.SHAPES = shapes
    try:
        for p in sorted(FIXTURES.rglob("*.txt")):
            text = p.read_text(errors="replace")
            for _ in range(2):               # a shape is learnt the second time it is read
                list(parsers.iter_parse(text, source=str(p)))
    finally:
        parsers.SHAPES = saved
    found = [s.rx.pattern for s in shapes.order]
    assert len(found) > 40
    return found


def test_every_learnt_shape_compiles_to_what_re_compile_makes(patterns, monkeypatch):
    made = {p: _shapere.compile(p) for p in patterns}

    class NoRe:
        S, A = re.S, re.A

        @staticmethod
        def compile(*args):
            raise AssertionError(f"fell back to re.compile: {args[0][:80]}")

    monkeypatch.setattr(_shapere, "re", NoRe)
    for p in patterns:
        rx = _shapere.compile(p)                       # read by the scan alone
        monkeypatch.undo()
        want = re.compile(p, re.S | re.A)
        assert rx == want and rx == made[p] and rx.groups == want.groups and rx.flags == want.flags
        monkeypatch.setattr(_shapere, "re", NoRe)


@pytest.mark.parametrize("pattern", ["(\\d{1,19}+", "a.{3}", "\\d{1,19}+)", ".{2}[0-9]", "(?:0)"])
def test_other_patterns_go_to_re_compile(pattern):
    try:
        want = re.compile(pattern, re.S | re.A)
    except re.error:
        with pytest.raises(re.error):
            _shapere.compile(pattern)
        return
    assert _shapere.compile(pattern) == want
