"""Module-level regular expressions, compiled when first used.

`import parsers` loads every OS's module (detection asks them all), yet one run uses few of
their patterns: an OS's parse-only patterns serve only texts of that OS, an evidence reader's
only texts of its kind, and a detector's pattern behind a word test (parsers/_needs.py) runs
only on texts holding one of its words. `lazy(pattern, flags)` stands for
`re.compile(pattern, flags)`: the pattern is compiled on first use, and from then on its
methods are the compiled pattern's own.
"""
from __future__ import annotations

import re

_METHODS = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split", "scanner",
            "groups", "groupindex")


class lazy:
    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def __getattr__(self, name: str):
        # only called for what the instance does not hold yet: the first use compiles
        compiled = re.compile(self.pattern, self.flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self.flags!r})"


__all__ = ["lazy"]
