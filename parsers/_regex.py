"""Regular expressions compiled on first use instead of at import.

Compiling every parser's patterns at import cost ~20 ms of every `mssdiag` start, though a
run uses the detectors' patterns and one parser's. A lazy pattern compiles itself on the
first attribute asked for and then keeps the compiled pattern's bound methods in its own
`__dict__`, so later calls cost what they cost on a compiled pattern.
"""
from __future__ import annotations

import re

_KEPT = ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn", "split", "scanner",
         "pattern", "flags", "groups", "groupindex")


class LazyPattern:
    """Stands for `re.compile(pattern, flags)` until it is first used."""

    def __init__(self, pattern: str, flags: int = 0):
        self._source = (pattern, flags)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_source":
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for attr in _KEPT:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    """`re.compile`, deferred to the first use."""
    return LazyPattern(pattern, flags)
