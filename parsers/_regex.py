"""Regular expressions: compiled ahead of time when they can be, else on first use.

`re.compile` is Python (re._parser, re._compiler) until its last step, `_sre.compile`; for the
~70 patterns a `mssdiag parse` compiles that is ~12 ms of every start. `make` writes
parsers/_regex_built.py (scripts/regex_cache.py; not in git): for each pattern given to
`compiled` or `lazy`, the arguments re._compiler hands `_sre.compile`. `compiled` passes them
straight to `_sre.compile`, which gives the very pattern `re.compile` would (equal: pattern,
flags and code; tests/test_regex_cache.py). The file is used only when it was written by this
Python (version, build, `_sre.MAGIC`, `_sre.CODESIZE`); a pattern it does not hold -- one
added or edited since -- compiles as usual, as does everything when it is missing, stale, or
MSSDIAG_REGEX_CACHE=0.

A lazy pattern is for the patterns of one parser, which a run does not need unless it reads
that OS: it compiles itself on the first attribute asked for and then keeps the compiled
pattern's bound methods in its own `__dict__`, so later calls cost what they cost on a
compiled pattern.
"""
from __future__ import annotations

import os
import re
import sys

import _sre

KEY = (sys.version, sys.implementation.cache_tag, sys.byteorder, _sre.MAGIC, _sre.CODESIZE)
# every (pattern, flags) given to compiled() or lazy() in this process: what the cache script writes
asked: set = set()


def _load() -> dict:
    """The cache's patterns, if it was written by this Python (else none: everything compiles)."""
    if os.environ.get("MSSDIAG_REGEX_CACHE") == "0":
        return {}
    try:
        from parsers import _regex_built
    except ImportError:
        return {}
    return _regex_built.PATTERNS if getattr(_regex_built, "KEY", None) == KEY else {}


_built = _load()


def compiled(pattern: str, flags: int = 0) -> re.Pattern:
    """`re.compile(pattern, flags)`, from the ahead-of-time cache when it holds the pattern."""
    flags = int(flags)
    asked.add((pattern, flags))
    args = _built.get((pattern, flags))
    if args is None:
        # re.compile less its cache of recent patterns (which this one would only crowd)
        return re._compiler.compile(pattern, flags)
    final_flags, code, groups, groupindex, indexgroup = args
    return _sre.compile(pattern, final_flags, memoryview(code).cast("I").tolist(), groups, groupindex, indexgroup)


_KEPT = ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn", "split", "scanner",
         "pattern", "flags", "groups", "groupindex")


class LazyPattern:
    """Stands for `re.compile(pattern, flags)` until it is first used."""

    def __init__(self, pattern: str, flags: int = 0):
        self._source = (pattern, flags)
        asked.add((pattern, int(flags)))

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_source":
            raise AttributeError(name)
        compiled_ = compiled(*self._source)
        for attr in _KEPT:
            setattr(self, attr, getattr(compiled_, attr))
        return getattr(compiled_, name)

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    """`re.compile`, deferred to the first use."""
    return LazyPattern(pattern, flags)
