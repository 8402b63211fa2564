"""Writing results: streamed JSON / JSON lines on stdout, tables, one-line errors on stderr.

Everything that came from outside (file names, host names, prompts, dump text, host files,
fleet indexes, probe results) is untrusted. One rule makes it fit for every text output:
`safe()`, before it reaches a terminal, a table cell, a Markdown row, an error line, a
progress label or a monitoring line (Nagios, Checkmk). Formats with an escaping syntax of
their own apply it on top: Markdown (toolkit/report/markdown.py `esc`), HTML
(toolkit/report/html.py `escape`), Prometheus label values (toolkit/audit/prom.py), and
JSON, where `dumps()` escapes what JSON would let through raw (C1 controls, bidirectional
overrides, line and paragraph separators, the lone surrogates a non-UTF-8 file name
leaves).
"""
from __future__ import annotations

import json
import os
import re
import sys

from typing import Callable, Iterable, Optional, Sequence

FORMATS = ("table", "json", "jsonl")

# C0 controls (NUL, BEL, ESC, CR, LF ...), DEL, C1 (NEL U+0085, CSI U+009B ...), the
# bidirectional controls that reorder what a reader sees (U+202E turns "txt.exe" into
# "exe.txt"; embeddings U+202A-E, isolates U+2066-9, U+061C, U+200E/F), zero-width marks,
# line/paragraph separators (U+2028/9), the BOM, and lone surrogates (the bytes of a
# non-UTF-8 file name, as Python decodes them: they cannot even be written as UTF-8).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff"
                     "\ud800-\udfff]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


def safe(value) -> str:
    """THE rule for text from outside in every text output: each control character (C0 and
    C1, DEL, so every escape sequence, NUL and BEL), bidi override or isolate, zero-width
    mark, line or paragraph break and lone surrogate is shown as a visible `?`, a tab as a
    space. So a name can neither move the cursor, set the window title, reset the
    terminal, reorder the text, start a forged table row or monitoring line, nor fail to
    encode; and the rest of it stays readable."""
    return _UNSAFE.sub("?", str(value)).replace("\t", " ")


def distinct(label: str, seen: set, mark: str = "~") -> str:
    """`label`, or `label~2`, `label~3`... when an earlier one in `seen` is already spelt so:
    two names that read alike once made safe (`a'b` and `a=b` as a Nagios label) stay two."""
    out, n = label, 1
    while out in seen:
        n += 1
        out = f"{label}{mark}{n}"
    seen.add(out)
    return out


def dumps(obj, indent=None, separators=None, level: int = 0) -> str:
    """`json.dumps(obj, ensure_ascii=False, ...)` with C1 and bidi controls written as \\u
    escapes (\\u0085, \\u202e): non-ASCII stays readable. With `indent`, `level` gives the
    text as it stands nested that deep in a larger document (every line after the first
    `level` indents further in)."""
    text = json.dumps(obj, ensure_ascii=False, indent=indent, separators=separators)
    if indent is not None:
        text = _nested(text, indent, level)
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_UNSAFE.sub(_escape, text)


def _nested(text: str, indent, level: int) -> str:
    """json.dumps' indented `text` as it stands `level` deep in a larger document."""
    if not level:
        return text
    return text.replace("\n", "\n" + (" " * indent if isinstance(indent, int) else indent) * level)


class Encoded:
    """A record already encoded as dumps() would (a --jobs worker's: emit writes it as it is)."""
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _escape(m) -> str:
    return f"\\u{ord(m.group(0)):04x}"


class Interrupted(Exception):
    """SIGINT or SIGTERM, raised where the program is, so what is being written is closed
    cleanly. Not a KeyboardInterrupt: the CLI framework would turn that into a silent exit."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def word(self) -> str:
        return "interrupted" if self.signum == 2 else "terminated"


_writing = {"now": False, "pending": 0}


def raise_interrupted(signum, frame) -> None:
    """The CLI's SIGINT/SIGTERM handler. In the middle of a write it only takes note, and
    the write raises once it is whole: what was printed is never a cut record."""
    if _writing["now"]:
        _writing["pending"] = signum
        return
    raise Interrupted(signum)


class OutputClosed(Exception):
    """stdout's reader left (`mssdiag parse big | head`): not an error, nothing to report.
    Raised instead of BrokenPipeError so that no library on the way (click) turns it into one."""


class Stdout:
    """A file-like stdout whose writes go through `write` (a closed reader, an interrupt)."""

    def write(self, text: str) -> None:
        write(sys.stdout, text)


def write(out, text: str) -> None:
    _writing["now"] = True
    try:
        out.write(text)
    except BrokenPipeError:
        raise OutputClosed() from None
    finally:
        _writing["now"] = False
    if _writing["pending"]:
        signum, _writing["pending"] = _writing["pending"], 0
        raise Interrupted(signum)


def error(message: str) -> None:
    """One line on stderr; never a traceback. One write, newline included: print() writes
    the line and its newline apart, and an interrupt between them glued the line to the
    next one ("...unknownmssdiag: interrupted")."""
    sys.stderr.write(f"mssdiag: {safe(message)}\n")
    sys.stderr.flush()


def json_array(items: Iterable, out=None, encoded: Optional[Callable[[object], Optional[str]]] = None) -> int:
    """Print items as one JSON array without holding them all: memory stays flat. The array
    is closed even when the run is interrupted, so what was printed is valid JSON. Items are
    dicts, or with `encoded` (see emit) objects with to_dict() and Encoded records."""
    out = out or sys.stdout
    count = 0
    batch = _Batch(out)
    try:
        write(out, "[")      # written whole even when a signal comes (write raises after writing)
        for item in items:
            batch.add((",\n" if count else "\n") + (dumps(item) if encoded is None else record_json(item, encoded)))
            count += 1
    finally:
        if sys.exc_info()[0] is not OutputClosed:
            batch.add("\n]\n" if count else "]\n")
            batch.send()
            _flush(out)
    return count


class _Batch:
    """Records gathered and written about 8 KiB at a time (one write call for many, not one
    each); on a terminal each is written at once, as it comes. Records stay whole."""

    # What TextIOWrapper gathers before it writes anyway. Not more: a 64 KiB write to a pipe
    # interrupted by a signal lost its tail in CPython 3.11 (tests/test_hostile.py caught it).
    SIZE = 8 * 1024

    def __init__(self, out):
        self.out, self.parts, self.size = out, [], 0
        try:
            self.live = out.isatty()
        except (AttributeError, ValueError):
            self.live = False

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.live or self.size >= self.SIZE:
            self.send()

    def send(self) -> None:
        if self.parts:
            text, self.parts, self.size = "".join(self.parts), [], 0
            write(self.out, text)


def _flush(out) -> None:
    try:
        out.flush()
    except BrokenPipeError:
        raise OutputClosed() from None


def json_lines(items: Iterable, out=None, encoded: Optional[Callable[[object], Optional[str]]] = None) -> int:
    """Each item a line: a dict, or with `encoded` (see emit) an object with to_dict() or an Encoded."""
    out = out or sys.stdout
    count = 0
    batch = _Batch(out)
    try:
        if encoded is None:
            for item in items:
                batch.add(dumps(item) + "\n")
                count += 1
        else:
            for item in items:
                batch.add(record_json(item, encoded) + "\n")
                count += 1
    finally:
        if sys.exc_info()[0] is not OutputClosed:     # what was made is written, even when interrupted
            batch.send()
            _flush(out)
    return count


def table(rows: Iterable[Sequence], headers: Sequence[str], page: int = 500, out=None,
          colalign: Optional[Sequence[str]] = None) -> int:
    """A plain table, printed a page at a time so a huge input does not pile up in memory.
    `colalign`: see table_text."""
    out = out or sys.stdout
    count, batch = 0, []
    for row in rows:
        batch.append(["-" if v is None else v for v in row])
        count += 1
        if len(batch) >= page:
            write(out, table_text(batch, headers, colalign) + "\n")
            batch = []
    if batch:
        write(out, table_text(batch, headers, colalign) + "\n")
    _flush(out)
    return count


def table_text(rows: Sequence[Sequence], headers: Sequence[str], colalign: Optional[Sequence[str]] = None) -> str:
    """tabulate's table (its "simple" format), except that text is shown as it is: tabulate reads any text
    that looks like a number as one, so a host named 007 became 7 and one named 1e3 became
    1000.0; the columns holding such text are not parsed (numbers there are still numbers).
    With `colalign` ("left" or "right" a column) no cell is parsed and each column is aligned as
    told, on every page alike (and tabulate takes half the time: a table of a million rows).
    Text cells go through safe()."""
    rows = [[safe(v) if isinstance(v, str) else v for v in r] for r in rows]
    from tabulate import tabulate
    if colalign is not None:
        return tabulate(rows, headers=headers, disable_numparse=True, colalign=colalign)
    as_text = sorted({i for r in rows for i, v in enumerate(r) if isinstance(v, str) and v != "-" and _numeric(v)})
    return tabulate(rows, headers=headers, disable_numparse=as_text or False)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def emit(items: Iterable, fmt: str, to_rows: Callable[[object], Iterable[Sequence]],
         headers: Sequence[str], encoded: Optional[Callable[[object], Optional[str]]] = None) -> int:
    """Print result objects (each with to_dict()) as a JSON array, JSON lines or a table
    (`to_rows` gives an item's table rows); streamed in every format. Returns the count.
    `encoded(item)`: dumps(item.to_dict()) made another way, or None (toolkit/snapjson.py);
    an item that is an Encoded already is written as it is."""
    if fmt in ("json", "jsonl"):
        return (json_array if fmt == "json" else json_lines)(items, encoded=encoded or _no_text)
    count = 0

    def rows():
        nonlocal count
        for item in items:
            count += 1
            yield from to_rows(item)
    table(rows(), headers)
    return count


def _no_text(item) -> None:
    return None


def record_json(item, encoded: Callable[[object], Optional[str]]) -> str:
    """An emitted item's JSON record: an Encoded's text as it is, else encoded(item), else
    dumps(item.to_dict())."""
    if item.__class__ is Encoded:
        return item.text
    text = encoded(item)
    return dumps(item.to_dict()) if text is None else text


# Temporary files being written (write_atomic): each is named here before it is created and
# forgotten once renamed or removed, so whatever moment an interrupt lands, the exit path
# (toolkit.cli.main) removes what is left: no temporary file stays behind.
_TEMPORARY: set = set()


def write_atomic(path: str, text, mode: Optional[int] = None, binary: bool = False) -> None:
    """Write a file so that it is either the old one or the whole new one: a temporary
    file beside it, renamed over it (a full disk or an interrupt leaves the old file). The
    temporary name starts with a dot and ends in .tmp, so a reader that globs the target's
    pattern (node_exporter's textfile collector reads `*.prom`) never sees it half-written.
    `mode`: the file's permissions (default: the old file's, else 0644 less the umask).
    `text` is the text, or a function that writes it to the file object it is given (opened
    for bytes with `binary`)."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        while True:
            tmp = os.path.join(folder, f".{os.path.basename(path)[:100]}.{os.urandom(8).hex()}.tmp")
            _TEMPORARY.add(tmp)
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                break
            except FileExistsError:
                _TEMPORARY.discard(tmp)
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as fh:
            if callable(text):
                text(fh)
            else:
                fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:
            mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o644 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        _TEMPORARY.discard(tmp)
    finally:
        if tmp in _TEMPORARY:
            remove_temporaries()
    try:                              # the rename itself survives a crash once the directory is synced
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def remove_temporaries() -> None:
    """Remove every temporary file write_atomic has not finished (an interrupt, a full disk)."""
    for tmp in list(_TEMPORARY):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _TEMPORARY.discard(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
