"""A learnt shape's pattern (parsers/shapes.py) compiled without re's parser and compiler.

A shape's pattern is long (one item per digit run of a whole `netstat -s`) but made of five
kinds of item only: `.`, `.{n}+`, literal digits, and a digit run `\\d{1,19}+` or
`[1-9]\\d{0,18}+`, maybe inside one group. re's parser and compiler, written in Python, read
it an item at a time: most of compiling it, and compiling was a good part of learning a
shape. `compile` takes the items as learning finds them and writes the pattern's text and
the code re's compiler would write for it (the code of each kind of item is taken from re's
own compiler once, and the whole checked against it on a sample); the result is equal
(same pattern text, flags and compiled code: Pattern's ==) to `re.compile(text, re.S | re.A)`,
which another Python, or a check that fails, still goes to.
"""
from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Sequence, Union

    Part = Union[int, str, tuple]

try:
    import _sre
    from re import _compiler, _parser
    from re._constants import (ANY, CATEGORY, CATEGORY_DIGIT, IN, LITERAL, MARK, POSSESSIVE_REPEAT,
                               RANGE, SUBPATTERN)
except ImportError:          # pragma: no cover (Python before 3.11: re's own compile)
    _parser = None

FLAGS = re.S | re.A
# A part of a pattern: an int n is n characters (`.{n}+`: possessive, so no backtracking point
# is kept for each of them, a third of a match's time), DOT one (`.`), a str literal
# digits, and one of these a digit run (any, or not 0), in a group or not.
DOT = "."
RUN, RUN_GROUP, NONZERO, NONZERO_GROUP = (False, False), (False, True), (True, False), (True, True)
MAX_DIGITS = 19
_RUN_TEXT = {False: "\\d{1,%d}+" % MAX_DIGITS, True: "[1-9]\\d{0,%d}+" % (MAX_DIGITS - 1)}


def text_of(parts: Sequence[Part]) -> str:
    """The pattern's text."""
    out = []
    add = out.append
    for p in parts:
        kind = type(p)
        if kind is int:
            add(".{%d}+" % p)
        elif kind is str:
            add(p)
        else:
            add("(%s)" % _RUN_TEXT[p[0]] if p[1] else _RUN_TEXT[p[0]])
    return "".join(out)


class _Code:
    """The code re's compiler writes for each kind of part (flags re.S | re.A)."""

    def __init__(self) -> None:
        flags = int(FLAGS)
        state = _parser.State()
        state.flags = flags
        self.anything = _parser.SubPattern(state, [(ANY, None)])
        self.digit = _parser.SubPattern(state, [(IN, [(CATEGORY, CATEGORY_DIGIT)])])

        def code(items) -> list:
            out: list = []
            _compiler._compile(out, items, flags)
            return out

        self.any = code([(ANY, None)])
        self.literal = {c: code([(LITERAL, ord(c))]) for c in "0123456789"}
        self.run = {nz: code(self.items(nz)) for nz in (False, True)}
        gap = code([(POSSESSIVE_REPEAT, (7, 7, self.anything))])
        # .{n}+: the same code but for n, twice, right after the opcode and its skip
        if gap[2:4] != [7, 7] or code([(POSSESSIVE_REPEAT, (300, 300, self.anything))]) != gap[:2] + [300, 300] + gap[4:]:
            raise ValueError("re's compiler writes .{n}+ otherwise")
        self.gap_head, self.gap_tail = gap[:2], gap[4:]

    def items(self, nonzero: bool) -> list:
        run = [(IN, [(RANGE, (49, 57))])] if nonzero else []
        run.append((POSSESSIVE_REPEAT, (0 if nonzero else 1, MAX_DIGITS - 1 if nonzero else MAX_DIGITS, self.digit)))
        return run

    def parse_items(self, parts: Sequence[Part], upto: int):
        """re's parse of the parts before `upto` (what its prefix search reads), and the groups."""
        state = _parser.State()
        state.flags = int(FLAGS)
        items = []
        for p in parts[:upto]:
            kind = type(p)
            if kind is int:
                items.append((POSSESSIVE_REPEAT, (p, p, self.anything)))
            elif p == DOT:
                items.append((ANY, None))
            elif kind is str:
                items.extend((LITERAL, ord(c)) for c in p)
            elif p[1]:
                group = state.opengroup()
                sub = _parser.SubPattern(state, self.items(p[0]))
                state.closegroup(group, sub)
                items.append((SUBPATTERN, (group, 0, 0, sub)))
            else:
                items.extend(self.items(p[0]))
        return _parser.SubPattern(state, items)

    def compile(self, parts: Sequence[Part], pattern: str) -> re.Pattern:
        body: list = []
        add = body.extend
        lo = hi = 0
        groups = 0
        first = None               # the first part that is not literal digits (where a prefix ends)
        literal, anyc, run, mark = self.literal, self.any, self.run, MARK
        gap_head, gap_tail = self.gap_head, self.gap_tail
        for at, p in enumerate(parts):
            kind = type(p)
            if kind is int:
                add(gap_head)
                body.append(p)
                body.append(p)
                add(gap_tail)
                lo += p
                hi += p
            elif p == DOT:
                add(anyc)
                lo += 1
                hi += 1
            elif kind is str:
                for c in p:
                    add(literal[c])
                lo += len(p)
                hi += len(p)
                continue
            else:
                if p[1]:
                    body.append(mark)
                    body.append(2 * groups)
                    add(run[p[0]])
                    body.append(mark)
                    body.append(2 * groups + 1)
                    groups += 1
                else:
                    add(run[p[0]])
                lo += 1
                hi += MAX_DIGITS
            if first is None:
                first = at
        head = self.parse_items(parts, len(parts) if first is None else first + 1)
        head.width = min(lo, _parser.MAXWIDTH), min(hi, _parser.MAXWIDTH)
        code: list = []
        _compiler._compile_info(code, head, int(FLAGS))
        code += body
        code.append(_compiler.SUCCESS)
        return _sre.compile(pattern, int(FLAGS), code, groups, {}, (None,) * (groups + 1))


_CODE: List = []          # [the _Code, or None when re's compiler is not what it expects]
SAMPLE = ["1", DOT, RUN_GROUP, 3, "0", NONZERO, 12, NONZERO_GROUP, DOT, "42", RUN, 70000, RUN_GROUP, 1]


def _code():
    if not _CODE:
        made = None
        if _parser is not None:
            try:
                made = _Code()
                for sample in (SAMPLE, SAMPLE[2:], SAMPLE[5:], [7] + SAMPLE):
                    text = text_of(sample)
                    if made.compile(sample, text) != _compiler.compile(text, FLAGS):     # what re.compile does
                        made = None
                        break
            except (ValueError, TypeError, AttributeError, _parser.error):   # pragma: no cover (another Python)
                made = None
        _CODE.append(made)
    return _CODE[0]


def compile(parts: Sequence[Part]) -> re.Pattern:
    """re.compile(text_of(parts), re.S | re.A), read from the parts."""
    pattern = text_of(parts)
    made = _code()
    if made is None:
        return re.compile(pattern, FLAGS)
    return made.compile(parts, pattern)
