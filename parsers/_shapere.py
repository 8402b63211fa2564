"""A learnt shape's pattern (parsers/shapes.py) compiled without re's parser.

A shape's pattern is long (one item per digit run of a whole `netstat -s`) but made of five
kinds of item only: `.`, `.{n}`, literal digits, and a digit run `\\d{1,19}+` or
`[1-9]\\d{0,18}+`, maybe inside one group. re's parser, written in Python, reads it a
character at a time: two thirds of compiling it, and compiling a third of learning a shape.
`compile` reads those items with one C-level scan and builds what the parser would have
built, item for item, for re's own compiler; the result is equal (same pattern text, flags
and compiled code: Pattern's ==) to `re.compile(pattern, re.S | re.A)`, which anything
else -- another Python, an item of another kind -- still goes to.
"""
from __future__ import annotations

import re

from ._regex import lazy

try:
    import _sre
    from re import _compiler, _parser
    from re._constants import (ANY, CATEGORY, CATEGORY_DIGIT, IN, LITERAL, MAX_REPEAT, POSSESSIVE_REPEAT,
                               RANGE, SUBPATTERN)
except ImportError:          # pragma: no cover (Python before 3.11: re's own compile)
    _parser = None

FLAGS = re.S | re.A
_LITERAL = {c: (LITERAL, ord(c)) for c in "0123456789"} if _parser is not None else {}
_ITEM = lazy(r"\.\{([0-9]+)\}|(\.)|([0-9]+)|(\()?(\[1-9\])?\\d\{([0-9]+),([0-9]+)\}\+(\))?")


def compile(pattern: str) -> re.Pattern:
    """re.compile(pattern, re.S | re.A) for a shape's pattern."""
    if _parser is None:
        return re.compile(pattern, FLAGS)
    state = _parser.State()
    state.flags = int(FLAGS)
    state.str = pattern
    # one of each inner item for the whole pattern (re's compiler only reads them, and
    # finds the width of each once)
    anything = _parser.SubPattern(state, [(ANY, None)])
    digit = _parser.SubPattern(state, [(IN, [(CATEGORY, CATEGORY_DIGIT)])])
    items = []
    add = items.append
    at = 0
    for m in _ITEM.finditer(pattern):
        if m.start() != at:
            return re.compile(pattern, FLAGS)
        at = m.end()
        gap, dot, digits, opened, nonzero, low, high, closed = m.groups()
        if gap is not None:
            n = int(gap)
            add((MAX_REPEAT, (n, n, anything)))
        elif dot is not None:
            add((ANY, None))
        elif digits is not None:
            items.extend(map(_LITERAL.__getitem__, digits))
        else:
            if (opened is None) != (closed is None):
                return re.compile(pattern, FLAGS)
            run = [(IN, [(RANGE, (49, 57))])] if nonzero else []
            run.append((POSSESSIVE_REPEAT, (int(low), int(high), digit)))
            if opened is None:
                items.extend(run)
            else:
                group = state.opengroup()
                sub = _parser.SubPattern(state, run)
                state.closegroup(group, sub)
                add((SUBPATTERN, (group, 0, 0, sub)))
    if at != len(pattern):
        return re.compile(pattern, FLAGS)
    p = _parser.SubPattern(state, items)
    code = _compiler._code(p, int(FLAGS))
    return _sre.compile(pattern, int(FLAGS) | state.flags, code, state.groups - 1, {}, (None,) * state.groups)
