"""Writing results: streamed JSON / JSON lines on stdout, tables, one-line errors on stderr."""
from __future__ import annotations

import json
import sys
from typing import Callable, Iterable, Sequence

from tabulate import tabulate

FORMATS = ("table", "json", "jsonl")


def error(message: str) -> None:
    """One line on stderr; never a traceback."""
    print(f"mssdiag: {message}", file=sys.stderr, flush=True)


def json_array(items: Iterable[dict], out=None) -> int:
    """Print items as one JSON array without holding them all: memory stays flat."""
    out = out or sys.stdout
    count = 0
    out.write("[")
    for item in items:
        out.write(",\n" if count else "\n")
        out.write(json.dumps(item, ensure_ascii=False))
        count += 1
    out.write("\n]\n" if count else "]\n")
    out.flush()
    return count


def json_lines(items: Iterable[dict], out=None) -> int:
    out = out or sys.stdout
    count = 0
    for item in items:
        out.write(json.dumps(item, ensure_ascii=False) + "\n")
        count += 1
    out.flush()
    return count


def table(rows: Iterable[Sequence], headers: Sequence[str], page: int = 500, out=None) -> int:
    """A plain table, printed a page at a time so a huge input does not pile up in memory."""
    out = out or sys.stdout
    count, batch = 0, []
    for row in rows:
        batch.append(["-" if v is None else v for v in row])
        count += 1
        if len(batch) >= page:
            out.write(tabulate(batch, headers=headers) + "\n")
            batch = []
    if batch:
        out.write(tabulate(batch, headers=headers) + "\n")
    out.flush()
    return count


def emit(items: Iterable, fmt: str, to_rows: Callable[[object], Iterable[Sequence]],
         headers: Sequence[str]) -> int:
    """Print result objects (each with to_dict()) as a JSON array, JSON lines or a table
    (`to_rows` gives an item's table rows); streamed in every format. Returns the count."""
    if fmt in ("json", "jsonl"):
        count = [0]

        def dicts():
            for item in items:
                count[0] += 1
                yield item.to_dict()
        (json_array if fmt == "json" else json_lines)(dicts())
        return count[0]
    count = 0

    def rows():
        nonlocal count
        for item in items:
            count += 1
            yield from to_rows(item)
    table(rows(), headers)
    return count
