"""Reading dump files into snapshots, one error line per bad input.

Which files to read, and which host each belongs to, is the host model's business
(toolkit/hosts.py: walk, identify, build); this module only turns files into snapshots.
"""
from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Tuple

import parsers
from parsers.model import ParseError, Snapshot
from parsers.text import open_text
from toolkit.hosts import Input


@dataclass
class Outcome:
    """What reading the inputs came to, for the exit status and the error lines."""
    parsed: List[str] = field(default_factory=list)   # inputs that gave at least one snapshot
    failed: List[str] = field(default_factory=list)   # inputs that gave none
    snapshots: int = 0


def size(inputs: List[Input]) -> int:
    """Bytes to read (for a progress bar); files that vanished count 0, never a traceback."""
    total = 0
    for inp in inputs:
        if inp.kind == "dump" and inp.path != "-":
            try:
                total += os.stat(inp.path).st_size
            except OSError:
                pass
    return total


def read(inputs: List[Input], os_name: Optional[str], outcome: Outcome, error: Callable[[str], None],
         progress: Optional[Callable[[int], None]] = None,
         prefer: Optional[str] = None) -> Iterator[Tuple[Snapshot, Input]]:
    """(snapshot, its input) from every dump in order; a bad one gets one error line and is skipped.

    `os_name` forces a parser; otherwise the OS is detected, preferring the case's OS (else
    `prefer`) where the text fits it as well.
    """
    for inp in inputs:
        if inp.kind != "dump":
            continue
        name = inp.path
        count, explained, skipped = 0, False, []
        try:
            binary = sys.stdin.buffer if name == "-" else open(name, "rb")
        except OSError as exc:
            error(f"{name}: cannot read: {exc.strerror or exc}")
            outcome.failed.append(name)
            continue
        hint = (inp.case.os if inp.case is not None else None) or prefer
        try:
            with binary:
                text = open_text(_Counting(binary, progress) if progress else binary)
                for snap in parsers.iter_parse(text, source=name, os=os_name, skipped=skipped, prefer=hint,
                                               warn=lambda m, n=name: error(f"{n}: {m}")):
                    count += 1
                    yield snap, inp
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
