"""The common offline runs without typer (docs/architecture.md, "The CLI fast path"; issue 10).

Importing typer alone takes longer than the start-up goal. So `mssdiag --version` and the
commands toolkit/commands/spec.py lists (generated from the typer app: its options, their
types and defaults) are read here, as click would read them, and their work is called
directly; `--help` is printed from typer's own output made at install (`_help`), where typer
would print the same bytes. Only what is read here unambiguously, exactly as click and
typer would, takes this path; anything else goes to typer, so completion, help on a
terminal and every usage error stay typer's own: a help option anywhere but last, `--`,
an option not listed or given in another form (`-j4`, `-qj 4`, `-j=4`, a flag with `=`), a
missing value or argument, an extra argument, a value whose conversion is not plain
(typer's would be needed: ` 4`, `-1`, `1e3`, `007`), shell completion, no stdout.
tests/test_fast_cli.py runs a corpus of command lines both ways.
"""
from __future__ import annotations

import sys

from toolkit.commands import plain_number

TYPE_CHECKING = False      # not `typing`'s: --version needs none of typing (~4 ms)
if TYPE_CHECKING:
    from typing import Callable

_KINDS = {"str": str, "int": int, "float": float, "bool": bool}


def _value(kind: type, value):
    """typer's value for one item of a plain str/int/float option (LookupError: not plain)."""
    if type(value) is kind:
        return value
    if kind in (int, float):
        return plain_number(kind, value)
    raise LookupError(value)


def _values(spec: dict, given: dict) -> dict | None:
    """The keyword arguments typer would pass for the values read (None: leave it to typer)."""
    out = {}
    for name, (kind_name, many, default, required) in spec["params"].items():
        kind = _KINDS[kind_name]
        value = given.get(name, default)
        if kind is bool and isinstance(value, bool):      # typer leaves a flag's bool alone
            pass
        elif value is None:
            value = () if many else None
        elif many:
            if isinstance(value, str) or not isinstance(value, (list, tuple)):
                return None
            value = [_value(kind, v) for v in value]
        else:
            value = _value(kind, value)
        if required and (value is None or (many and value in ((), []))):
            return None                                   # typer's "Missing ..." error
        if many and value is not None:                    # typer's _normalize_collection_value
            value = None if default is None and len(value) == 0 else list(value)
        out[name] = value
    return out


def _read(spec: dict, args: list[str]) -> dict | None:
    """`args` (after the command's name) as click reads them, or None when they are not
    plainly understood."""
    options, help_names = spec["options"], spec["help"]
    given: dict = {}
    positional: list[str] = []
    rest = list(args)
    rest.reverse()
    while rest:
        arg = rest.pop()
        if arg == "--" or arg in help_names:
            return None
        if arg[:1] != "-" or len(arg) == 1:               # `-` is stdin, an argument
            positional.append(arg)
            continue
        name, eq, explicit = arg.partition("=")
        if eq and not arg.startswith("--"):
            return None                                   # `-j=4`: click reads the value `=4`
        if name not in options or name in help_names:
            return None
        param, flag = options[name]
        if flag is not None:
            if eq:
                return None                               # click: "does not take a value"
            value = flag
        elif eq:
            value = explicit
        elif rest:
            value = rest.pop()                            # as click: even one starting with `-`
        else:
            return None                                   # click: "requires an argument"
        if spec["params"][param][1]:
            given.setdefault(param, []).append(value)
        else:
            given[param] = value
    if positional:
        if spec["argument"] is None:
            return None                                   # click: "unexpected extra argument"
        given[spec["argument"]] = tuple(positional)
    try:
        return _values(spec, given)
    except LookupError:
        return None


def plan(argv: list[str], environ) -> Callable[[], None] | None:
    """The run for `argv` without typer, ready to call; None when typer must run it."""
    if any(key.endswith("_COMPLETE") for key in environ) or sys.stdout is None or not argv:
        return None
    from toolkit.commands import spec
    if len(argv) == 1 and argv[0] in spec.VERSION:
        return _version
    if argv[-1] in spec.HELP:
        return _help(argv[:-1], environ)
    for words in (1, 2):
        found = spec.COMMANDS.get(" ".join(argv[:words])) if len(argv) >= words else None
        if found is not None:
            values = _read(found, argv[words:])
            if values is None:
                return None
            module, _, name = found["work"].partition(":")
            work = getattr(__import__(module, fromlist=[name]), name)
            return lambda: _run(found["path"], work, values)
    return None


def _help(words: list[str], environ) -> Callable[[], None] | None:
    """`mssdiag [COMMAND...] --help` from toolkit/commands/_help.py (made at install from typer's
    own output), when typer would print just that: no standard stream is a terminal, nothing
    in the environment changes rich's output, and no file it was made from has changed."""
    import os

    from toolkit.commands import spec
    if any(key in environ for key in spec.HELP_ENV) or any(os.isatty(fd) for fd in (0, 1, 2)):
        return None
    try:
        from toolkit.commands import _help as made
    except ImportError:              # not made (a wheel without it, a read-only checkout)
        return None
    text = made.HELP.get(" ".join(words))
    if text is None or (sys.stdout.encoding or "").lower() != made.ENCODING:
        return None
    for path, size, mtime in made.STAMP:
        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_size != size or st.st_mtime_ns != mtime:
            return None

    return lambda: _printed(text)


def _version() -> None:
    from toolkit.commands import version_line
    _printed(version_line() + "\n")          # typer.echo: the line, then a flush


def _printed(text: str) -> None:
    """Print `text` and exit as typer does after help or --version (the same errors)."""
    from toolkit.commands import guarded

    def write() -> None:
        sys.stdout.write(text)
        sys.stdout.flush()
    guarded(lambda: _typer_run(write, ""))


class _Pacified:
    """click's PacifyFlushWrapper: a stream whose flush ignores a reader that left."""

    def __init__(self, wrapped):
        self.wrapped = wrapped

    def flush(self) -> None:
        import errno
        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, attr):
        return getattr(self.wrapped, attr)


def _run(path: str, work: Callable[..., object], values: dict) -> None:
    """Run `work` as toolkit.cli.main runs a typer command: the same signals, errors and exits."""
    import _signal    # as `signal` does, without building its enums

    from toolkit.commands import guarded
    from toolkit.output import raise_interrupted

    _signal.signal(_signal.SIGINT, raise_interrupted)
    _signal.signal(_signal.SIGTERM, raise_interrupted)
    guarded(lambda: _typer_run(lambda: work(**values), path))


def _typer_run(call: Callable[[], object], path: str):
    """`call()` with what typer's own main (standalone_mode=False) and toolkit.cli.main's
    handlers do with its outcome: the exit status, or the run ended as they end it."""
    from toolkit.commands import BadValue, Exit
    try:
        code = call()
    except Exit as exc:
        code = exc.code
    except BadValue as exc:      # typer.BadParameter, raised in the command's context
        from toolkit.output import safe
        print(f"mssdiag: {safe(f'Invalid value for {exc.hint}: {exc.message}')} (see '{path} --help')",
              file=sys.stderr)
        sys.exit(2)
    except EOFError:             # typer: a newline on stderr, then Abort
        sys.stderr.write("\n")
        sys.stderr.flush()
        print("mssdiag: interrupted", file=sys.stderr)
        sys.exit(130)
    except KeyboardInterrupt:    # typer: Exit(130), nothing said
        code = 130
    except OSError as exc:
        import errno
        if exc.errno != errno.EPIPE:
            raise
        sys.stdout = _Pacified(sys.stdout)      # typer: a reader that left ends the run quietly
        sys.stderr = _Pacified(sys.stderr)
        sys.exit(1)
    sys.stdout.flush()
    return code
