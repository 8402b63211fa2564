"""The click command a run needs, built cheaply (docs/architecture.md, "Start-up").

Two costs of typer that every run would otherwise pay:

- typer turns the whole command tree into click commands on every run (every option of
  every group). A run names its command first (`mssdiag parse ...`), so only that command
  or group is built, and `--version` builds none; a run without one (`mssdiag`, `--help`,
  a misspelt command, shell completion) gets the whole tree, so help, suggestions and
  completion are unchanged.
- typer >= 0.2x converts every option value through a pydantic TypeAdapter, and importing
  pydantic costs ~50 ms (issue 10). Values of plain str/int/float/bool options that need
  no conversion beyond `int("1500")` or `float("0.5")` are converted here, exactly as
  pydantic would; anything else (an odd number like " 4" or "1_2", a range-checked option,
  paths, enums, files) goes to typer's own conversion, so its results and error messages
  stay typer's (tests/test_startup.py compares the two).
"""
from __future__ import annotations

import copy
import functools
import os
import pprint
from typing import Any, Callable, Dict, List, Optional

import typer
from typer.core import TyperCommand

from toolkit.commands import BadValue, Exit, plain_number

_SIMPLE = (str, int, float, bool)


def _name(info: Any) -> Optional[str]:
    """The name a registered command or group answers to (None when typer would derive it
    in a way not known here)."""
    name = getattr(info, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(info, typer.models.CommandInfo) and info.callback is not None:
        return info.callback.__name__.lower().replace("_", "-")     # as typer names it
    return None


def _selected(app: typer.Typer, args: List[str]) -> typer.Typer:
    """`app` with only the command or group that `args` names, when it names exactly one."""
    if args and args[0] in ("--version", "-V"):
        view = copy.copy(app)        # the root's eager --version answers before any command is looked at
        view.registered_commands, view.registered_groups = [], []
        return view
    if not args or args[0].startswith("-") or any(k.endswith("_COMPLETE") for k in os.environ):
        return app
    wanted = args[0]
    commands = [c for c in app.registered_commands if _name(c) in (wanted, None)]
    groups = [g for g in app.registered_groups if _name(g) in (wanted, None)]
    if not any(_name(i) == wanted for i in commands + groups):
        return app        # unknown: the full tree, for click's "No such command" and its suggestions
    view = copy.copy(app)
    view.registered_commands = commands
    view.registered_groups = groups
    return view


class _Plain:
    """typer's conversion of one parameter's value, for values that need none or a plain
    int()/float(); the rest is handed to typer's own (pydantic) conversion."""

    def __init__(self, param: Any, kind: type, many: bool):
        self.param, self.kind, self.many = param, kind, many

    def _one(self, value: Any) -> Any:
        if type(value) is self.kind:
            return value
        if self.kind in (int, float):
            return plain_number(self.kind, value)
        raise LookupError(value)

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        many = param.multiple or param.nargs == -1
        if value is None:
            return () if many else None
        try:
            if many:
                if isinstance(value, str) or not isinstance(value, (list, tuple)):
                    raise LookupError(value)
                return [self._one(v) for v in value]
            return self._one(value)
        except LookupError:
            return type(self.param).get_runtime_param(self.param).coerce(value, param=param, ctx=ctx)


def _plain_kind(param: Any):
    """(type, is a list) when the parameter's values may skip pydantic, else None."""
    desc = getattr(param, "type_descriptor", None)
    info = getattr(desc, "parameter_info", None)
    if desc is None or info is None or not hasattr(param, "get_runtime_param"):
        return None
    if any(getattr(info, attr, None) is not None for attr in ("min", "max", "parser", "click_type")) \
            or getattr(desc, "file_annotation", None) is not None or getattr(info, "clamp", False):
        return None
    annotation = desc.annotation
    if annotation in _SIMPLE:
        return annotation, False
    if getattr(annotation, "__origin__", None) is list:
        args = getattr(annotation, "__args__", ())
        if len(args) == 1 and args[0] in (str, int, float):
            return args[0], True
    return None


def _lighten_param(param: Any) -> Any:
    kind = _plain_kind(param)
    if kind is not None:
        plain = _Plain(param, *kind)
        param.get_runtime_param = lambda: plain
    return param


def _lighten(command: Any) -> None:
    for param in getattr(command, "params", []):
        _lighten_param(param)
    original = getattr(command, "get_help_option", None)
    if original is not None:           # --help is made per run, by each command

        def help_option(ctx: Any, original=original) -> Any:
            option = original(ctx)
            return option if option is None else _lighten_param(option)
        command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        _lighten(sub)


class LateHelp(TyperCommand):
    """A command whose option help names what only heavy imports know (the parsers' OS
    names): the text is made when the command's parameters are first asked for (its own
    run, its help, completing its options), never when another command runs or when the
    command names are completed."""

    late: Dict[str, Callable[[], str]] = {}

    def get_params(self, ctx: Any) -> List[Any]:
        if self.late:
            for param in self.params:
                if param.name in self.late:
                    param.help = self.late[param.name]()
            self.late = {}
        return super().get_params(ctx)


def late_help(**texts: Callable[[], str]) -> type:
    """A command class (`app.command(cls=...)`) whose options' help, by parameter name,
    comes from these functions when first needed."""
    return type("LateHelpCommand", (LateHelp,), {"late": texts})


def command(app: typer.Typer, args: List[str]):
    """The click command to run for `args`: what `app(...)` would run, built cheaply."""
    built = typer.main.get_command(_selected(app, args))
    _lighten(built)
    return built


def plain(work: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A typer command made of two halves: the decorated function gives the signature (the
    options, the help), `work` (toolkit/commands/, typer-free) does the work with the same
    keyword arguments. Its `Exit` and `BadValue` become typer's. The fast path
    (toolkit/commands/fast.py) calls `work` directly; `describe` finds the commands it may."""

    def decorate(signature: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(signature)
        def command(**values: Any) -> Any:
            try:
                return command.plain_work(**values)     # type: ignore[attr-defined]
            except Exit as exc:
                raise typer.Exit(exc.code)
            except BadValue as exc:
                raise typer.BadParameter(exc.message, param_hint=exc.hint)
        command.plain_work = work          # type: ignore[attr-defined]
        return command
    return decorate


_PLAIN_CODE = plain(print)(print).__code__         # the code of every function `plain` makes


def plain_part(callback: Any) -> Any:
    """The function `plain` made, found under the wrappers typer puts around a command's
    callback (None for a command not made by `plain`); its `plain_work` is the work."""
    found = None
    while callback is not None:
        if "plain_work" in getattr(callback, "__dict__", {}) and callable(getattr(callback, "__wrapped__", None)) \
                and getattr(callback, "__code__", None) is _PLAIN_CODE:
            found = callback
        callback = getattr(callback, "__wrapped__", None)
    return found


def inert(callback: Callable[..., Any]) -> Callable[..., Any]:
    """Marks a group's callback as doing nothing for the commands under it but what its
    eager options do (--version): the fast path, which skips it, may run those commands."""
    callback.inert = True            # type: ignore[attr-defined]
    return callback


class NotPlain(Exception):
    """A command marked `plain` uses what the fast path does not know (toolkit/commands/fast.py)."""


def _spec_of(path: str, command: Any, ctx: Any, work: Callable[..., Any]) -> dict:
    """What the fast path needs to know of one command, read from its click command."""
    if (ctx.token_normalize_func, ctx.auto_envvar_prefix, ctx.default_map) != (None, None, None) \
            or ctx.ignore_unknown_options or ctx.allow_extra_args or not ctx.allow_interspersed_args:
        raise NotPlain(f"{path}: context settings")
    options: Dict[str, tuple] = {}
    params: Dict[str, tuple] = {}
    argument = None
    for p in command.params:
        kind = _plain_kind(p)
        if kind is None or p.envvar is not None or p.callback is not None or p.is_eager or not p.expose_value \
                or type(p.default) not in (type(None), str, int, float, bool, list):
            raise NotPlain(f"{path}: {p.name}")
        many = p.multiple or p.nargs == -1
        if p.param_type_name == "argument":
            if argument is not None or p.nargs != -1:
                raise NotPlain(f"{path}: arguments other than one PATH...")
            argument = p.name
        else:
            if p.nargs != 1 or p.prompt is not None or p.count or (p.is_flag and kind != (bool, False)) \
                    or (p.secondary_opts and not p.is_bool_flag) or (kind[0] is bool and not p.is_flag):
                raise NotPlain(f"{path}: {p.name}")
            for opt in p.opts:              # a flag stores True (typer's TyperOption.add_to_parser)
                options[opt] = (p.name, True if p.is_flag else None)
            for opt in p.secondary_opts:    # and its --no-... False
                options[opt] = (p.name, False)
        params[p.name] = (kind[0].__name__, many, p.default, p.required)
    for opt in options:
        if not (opt.startswith("--") and len(opt) > 2 or len(opt) == 2 and opt[0] == "-"):
            raise NotPlain(f"{path}: option {opt}")
    return {"path": ctx.command_path, "work": f"{work.__module__}:{work.__qualname__}",
            "argument": argument, "options": options, "params": params,
            "help": tuple(ctx.help_option_names)}


def describe(app: typer.Typer) -> str:
    """toolkit/commands/spec.py: the commands marked `plain` as the fast path reads them,
    generated from the typer app (scripts/fast_spec.py; a test keeps it current)."""
    root = typer.main.get_command(app)
    found: Dict[str, dict] = {}

    def walk(command: Any, ctx: Any, words: List[str]) -> None:
        if command.callback is not None and not getattr(command.callback, "inert", False):
            return        # the group's callback would run before its commands: they stay typer's
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            sub_ctx = sub.make_context(name, [], parent=ctx, resilient_parsing=True)
            if hasattr(sub, "commands"):
                walk(sub, sub_ctx, words + [name])
                continue
            made = plain_part(sub.callback)
            if made is not None:
                work = made.plain_work
                found[" ".join(words + [name])] = _spec_of(" ".join(words + [name]), sub, sub_ctx, work)

    top = root.make_context("mssdiag", [], resilient_parsing=True)
    walk(root, top, [])
    version = next(p for p in root.params if p.name == "version")
    return ('"""The commands toolkit/commands/fast.py runs without typer, as the typer app defines them.\n\n'
            "Generated from the app by scripts/fast_spec.py (`make fast-spec`): do not edit;\n"
            'tests/test_fast_cli.py fails when it no longer matches the app."""\n\n'
            f"VERSION = {tuple(version.opts + version.secondary_opts)!r}\n\n"
            f"HELP = {tuple(top.help_option_names)!r}\n\n"
            f"HELP_ENV = {HELP_ENV!r}\n\n"
            f"COMMANDS = {pprint.pformat(found, width=110, sort_dicts=True)}\n")


# What rich and typer read from the environment to render help (besides whether a stream is a
# terminal); with any of these set, help is typer's own. Generation runs with none of them.
HELP_ENV = ("COLUMNS", "LINES", "TERMINAL_WIDTH", "FORCE_COLOR", "PY_COLORS", "NO_COLOR", "GITHUB_ACTIONS",
            "DATABRICKS_RUNTIME_VERSION", "UNICODE_VERSION", "TTY_INTERACTIVE", "TTY_COMPATIBLE", "JUPYTER_COLUMNS",
            "JUPYTER_LINES", "TYPER_USE_RICH", "_TYPER_FORCE_DISABLE_TERMINAL")


def render_help(app: typer.Typer) -> str:
    """toolkit/commands/_help.py: every `mssdiag [COMMAND...] --help` as typer prints it when no
    standard stream is a terminal, and what that text was made from (every module file this
    process loaded, with its size and time). The fast path prints it only while all of those
    files are unchanged, in the same conditions. Run without a terminal (scripts/help_cache.py)."""
    import contextlib
    import io
    import sys

    from toolkit.cli import main

    def rendered(args: List[str]) -> str:
        out, err = io.StringIO(), io.StringIO()
        saved = sys.argv
        sys.argv = ["mssdiag"] + args
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    main()
                except SystemExit as done:
                    if done.code not in (0, None) or err.getvalue():
                        raise RuntimeError(f"mssdiag {' '.join(args)}: {done.code} {err.getvalue()}")
        finally:
            sys.argv = saved
        return out.getvalue()

    paths: List[List[str]] = [[]]

    def walk(command: Any, words: List[str]) -> None:
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            paths.append(words + [name])
            walk(sub, words + [name])
    walk(typer.main.get_command(app), [])
    texts: Dict[str, str] = {}
    for words in paths:
        text = rendered(words + ["--help"])
        if rendered(words + ["-h"]) == text:
            texts[" ".join(words)] = text
    stamp = sorted({(m.__file__, os.stat(m.__file__).st_size, os.stat(m.__file__).st_mtime_ns)
                    for name, m in list(sys.modules.items()) if name != "__main__"
                    and isinstance(getattr(m, "__file__", None), str)
                    and os.path.isfile(m.__file__)})
    return ('"""`mssdiag ... --help` when no standard stream is a terminal, as typer prints it: made by\n'
            'scripts/help_cache.py at install (not in git); toolkit/commands/fast.py prints it only while\n'
            'every file in STAMP is unchanged."""\n\n'
            f"ENCODING = {sys.stdout.encoding!r}\n\n"
            f"STAMP = {pprint.pformat(stamp, width=110)}\n\n"
            f"HELP = {pprint.pformat(texts, width=110)}\n")
