#!/usr/bin/env python3
"""Write parsers/_regex_built.py: for every pattern the parsers and the toolkit give
parsers._regex (`compiled`, `lazy`), the arguments re.compile hands `_sre.compile` in this
Python, so a run skips re's Python compiler (parsers/_regex.py; docs/architecture.md,
"Start-up"). Run by `make` at install and by `make fast-spec`; the file is not in git.
`regex_cache.py PATH` writes PATH instead."""
from __future__ import annotations

import array
import importlib
import os
import py_compile
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "parsers" / "_regex_built.py"


def _patterns():
    """Every (pattern, flags) the modules ask parsers._regex for, as they are imported."""
    os.environ["MSSDIAG_REGEX_CACHE"] = "0"        # every pattern through re, none from an older file
    sys.path.insert(0, str(ROOT))
    from parsers import _regex
    for package in ("parsers", "toolkit"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            # only the modules that use it (importing every module would run __main__, import scapy...)
            if name not in ("parsers._regex", "parsers._regex_built") and "_regex import" in path.read_text():
                importlib.import_module(name)
    return sorted(_regex.asked, key=repr)


def _arguments(pattern: str, flags: int):
    """What re._compiler.compile passes `_sre.compile` for this pattern, after the pattern."""
    compiler = re._compiler
    real = compiler._sre
    seen = []

    class Spy:
        def __getattr__(self, name):
            return getattr(real, name)

        def compile(self, *args):
            seen.append(args)
            return real.compile(*args)

    compiler._sre = Spy()
    try:
        compiler.compile(pattern, flags)
    finally:
        compiler._sre = real
    (args,) = seen
    pattern_, final_flags, code, groups, groupindex, indexgroup = args
    assert pattern_ == pattern
    # the code as the bytes of its words (the opcodes are named ints, whose repr is not a number)
    return final_flags, array.array("I", [int(op) for op in code]).tobytes(), groups, dict(groupindex), tuple(indexgroup)


def main() -> None:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET
    asked = _patterns()
    from parsers._regex import KEY
    lines = ['"""Written by scripts/regex_cache.py for the Python named in KEY; not in git (parsers/_regex.py)."""',
             f"KEY = {KEY!r}", "PATTERNS = {"]
    for pattern, flags in asked:
        lines.append(f"    {(pattern, flags)!r}: {_arguments(pattern, flags)!r},")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    # unchanged: not written again (a new mtime on a source file makes the --help cache stale)
    if not target.exists() or target.read_text() != text:
        tmp = target.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, target)
    py_compile.compile(str(target), doraise=True)      # PYTHONDONTWRITEBYTECODE or not: the run reads the bytecode
    print(f"{target}: {len(asked)} patterns", file=sys.stderr)


if __name__ == "__main__":
    main()
