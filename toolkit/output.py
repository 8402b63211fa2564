"""Writing results: streamed JSON / JSON lines on stdout, tables, one-line errors on stderr."""
from __future__ import annotations

import json
import sys
from typing import Iterable, Iterator, List, Sequence

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


def emit(items: Iterator[dict], fmt: str, to_row, headers: List[str]) -> int:
    if fmt == "json":
        return json_array(items)
    if fmt == "jsonl":
        return json_lines(items)
    return table((to_row(i) for i in items), headers)
