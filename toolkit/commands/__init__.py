"""The work of the commands that `toolkit/commands/fast.py` runs without typer (docs/architecture.md,
"Start-up"): importable without typer, click, rich or pydantic.

The typer app in toolkit/cli/ stays the one definition of the command line (options, help,
errors); each covered command there is a typer signature wrapped around a function here
(`startup.plain`), and toolkit/commands/spec.py is generated from that app. A function here
ends a run with `Exit` and reports a bad option value with `BadValue`; the typer wrapper
turns them into typer's own, the fast path prints them as typer would.
"""
from __future__ import annotations

import sys


class Exit(Exception):
    """End the command with this exit status (typer.Exit on the typer path)."""

    def __init__(self, code: int = 0):
        super().__init__(code)
        self.code = code


class BadValue(Exception):
    """A bad option value (typer.BadParameter with `param_hint` on the typer path):
    `mssdiag: Invalid value for HINT: MESSAGE (see 'COMMAND --help')`, exit 2."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


def check_jobs(jobs: int) -> None:
    """--jobs (parse, diff, triage): 0 is one per CPU, below 0 is refused."""
    if jobs < 0:
        raise BadValue(f"{jobs} is below 0 (0 means one per CPU)", "--jobs")


def version_line() -> str:
    import toolkit
    return f"mssdiag {toolkit.__version__}"


def plain_number(kind: type, value: str):
    """`int(value)` / `float(value)` for the values that typer's (pydantic's) conversion
    turns into the same number: ASCII digits, no sign, space, underscore or leading zero,
    and for a float at most one dot with digits on both sides. LookupError for any other
    value: it goes to typer's own conversion (its result or its error)."""
    if isinstance(value, str) and value.isascii() and len(value) <= 15:
        whole, dot, part = value.partition(".")
        plain = whole.isdigit() and (whole == "0" or whole[0] != "0")      # no sign, space, _ or 0x
        if plain and not dot:
            return kind(whole)
        if plain and kind is float and part.isdigit():
            return float(value)
    raise LookupError(value)


def stdout_gone() -> None:
    """stdout cannot be written (a full disk, a closed pipe): point it at /dev/null so the
    interpreter's own last flush cannot print a traceback."""
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except OSError:
        pass


def guarded(call) -> None:
    """Run `call()` (the command, its output flushed) and exit as the CLI does: interrupts,
    a reader that left and an unwritable stdout end in one line on stderr, never a
    traceback. `call` returns the exit status; both the typer path (toolkit.cli.main) and
    the fast path end through here."""
    try:
        code = call()
    except (Exception, KeyboardInterrupt) as exc:
        _ended(exc)
        raise
    finally:
        _temporaries_removed()
    sys.exit(code if isinstance(code, int) else 0)


def _temporaries_removed() -> None:
    """Whatever ended the run, no temporary file it was writing stays (output.write_atomic)."""
    output = sys.modules.get("toolkit.output")      # not imported: nothing was written
    if output is not None:
        output.remove_temporaries()


def _ended(exc: BaseException) -> None:
    """Exit as the CLI does for what ended a run, if it is one of those (else return)."""
    from toolkit.output import Interrupted, OutputClosed, safe      # here: --version and help need none of it
    if isinstance(exc, Interrupted):
        print(f"mssdiag: {exc.word}", file=sys.stderr)
        sys.exit(128 + exc.signum)
    if isinstance(exc, KeyboardInterrupt):
        print("mssdiag: interrupted", file=sys.stderr)
        sys.exit(130)
    if isinstance(exc, (BrokenPipeError, OutputClosed)):
        stdout_gone()   # `mssdiag parse big | head`: the reader left
        print("mssdiag: cannot write the output: Broken pipe (the reader left)", file=sys.stderr)
        sys.exit(1)
    if isinstance(exc, OSError):
        if exc.filename is None:       # a write to stdout failed (`> /dev/full`, `>&-`)
            stdout_gone()
            print(f"mssdiag: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        else:
            print(f"mssdiag: {safe(exc.filename)}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(1)
