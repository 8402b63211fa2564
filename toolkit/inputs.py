"""Turning command-line paths (files, directories, `-`) into snapshots, one error line per bad input."""
from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Tuple

import parsers
from parsers.model import ParseError, Snapshot
from parsers.text import open_text


@dataclass
class Outcome:
    """What reading the inputs came to, for the exit status and the error lines."""
    parsed: List[str] = field(default_factory=list)   # inputs that gave at least one snapshot
    failed: List[str] = field(default_factory=list)   # inputs that gave none
    snapshots: int = 0


def expand(paths: List[str]) -> Iterator[Tuple[str, Optional[str]]]:
    """(name, error) for every file named or found under a named directory; `-` is stdin."""
    for path in paths:
        if path == "-":
            yield "-", None
        elif os.path.isdir(path):
            found = False
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    if not name.startswith("."):
                        found = True
                        yield os.path.join(root, name), None
            if not found:
                yield path, "directory holds no files"
        elif not os.path.exists(path):
            yield path, "no such file or directory"
        else:
            yield path, None


def read_paths(paths: List[str], os_name: Optional[str], outcome: Outcome,
               error: Callable[[str], None], progress: Optional[Callable[[int], None]] = None
               ) -> Iterator[Snapshot]:
    """Snapshots from every input in order; a bad input gets one error line and is skipped."""
    for name, problem in expand(paths):
        if problem:
            error(f"{name}: {problem}")
            outcome.failed.append(name)
            continue
        count, explained, skipped = 0, False, []
        try:
            binary = sys.stdin.buffer if name == "-" else open(name, "rb")
        except OSError as exc:
            error(f"{name}: cannot read: {exc.strerror or exc}")
            outcome.failed.append(name)
            continue
        try:
            with binary:
                text = open_text(_Counting(binary, progress) if progress else binary)
                for snap in parsers.iter_parse(text, source=name, os=os_name, skipped=skipped,
                                               warn=lambda m, n=name: error(f"{n}: {m}")):
                    count += 1
                    yield snap
        except ParseError as exc:
            error(f"{name}: {exc}")
            explained = True
        except (OSError, UnicodeError) as exc:
            error(f"{name}: cannot read: {exc}")
            explained = True
        if count and skipped:
            error(f"{name}: skipped {len(skipped)} block(s) of text that no parser reads "
                  f"(lines {', '.join(map(str, skipped[:5]))}{', ...' if len(skipped) > 5 else ''})")
        if count:
            outcome.parsed.append(name)
            outcome.snapshots += count
        else:
            if name not in outcome.failed:
                outcome.failed.append(name)
            if not explained:
                hint = (f" ({len(skipped)} block(s) of text with numbers matched no parser; "
                        f"use --os to force one)" if skipped else " (empty, or no text with numbers)")
                error(f"{name}: no netstat IP statistics found{hint}")


class _Counting(io.RawIOBase):
    """A binary file that reports how many bytes have been read, for a progress bar."""

    def __init__(self, raw, report: Callable[[int], None]):
        super().__init__()
        self._raw, self._report = raw, report

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._raw.readinto(buffer)
        if n:
            self._report(n)
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()
