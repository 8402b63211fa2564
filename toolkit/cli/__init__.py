"""The mssdiag command line: thin typer wrappers over the library, one module per group."""
from __future__ import annotations

import os
import sys
from typing import Optional

import typer

import toolkit
from toolkit.cli import lab, offline, probe
from toolkit.output import Interrupted, OutputClosed, raise_interrupted, safe
from toolkit.cli import calc as calc_cli, triage as triage_cli
from toolkit.cli import capture as capture_cli
from toolkit.cli import audit as audit_cli
from toolkit.cli import fleet as fleet_cli

app = typer.Typer(
    name="mssdiag",
    help="Diagnose TCP MSS, path MTU and IP fragmentation problems.\n\n"
         "Offline: `mssdiag parse DUMP...` reads netstat -s dumps from any OS; "
         "`mssdiag diff DUMP...` shows how the reassembly and fragmentation counters grew.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mssdiag {toolkit.__version__}")
        raise typer.Exit()


@app.callback()
def root(version: Optional[bool] = typer.Option(
        None, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")) -> None:
    """Diagnose TCP MSS, path MTU and IP fragmentation problems."""


offline.register(app)
probe.register(app)
triage_cli.register(app)
calc_cli.register(app)
capture_cli.register(app)
app.add_typer(lab.app, name="lab")
audit_cli.register(app)
fleet_cli.register(app)


def _stdout_gone() -> None:
    """stdout cannot be written (a full disk, a closed pipe): point it at /dev/null so the
    interpreter's own last flush cannot print a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except OSError:
        pass


def main() -> None:
    """Run the CLI; usage errors become one line on stderr (exit 2), never a traceback."""
    import signal

    signal.signal(signal.SIGINT, raise_interrupted)
    signal.signal(signal.SIGTERM, raise_interrupted)
    # Click's exception classes, found through typer's public BadParameter: newer typer
    # releases vendor click, older ones import it.
    usage_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
    click_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    try:
        if sys.stdout is None:
            raise OSError(9, "stdout is closed")
        code = app(prog_name="mssdiag", standalone_mode=False)
        sys.stdout.flush()
    except usage_error as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.exit(0)  # help was printed
        where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        print(f"mssdiag: {safe(exc.format_message())}{where}", file=sys.stderr)
        sys.exit(2)
    except click_error as exc:
        print(f"mssdiag: {safe(exc.format_message())}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except Interrupted as exc:
        print(f"mssdiag: {exc.word}", file=sys.stderr)
        sys.exit(128 + exc.signum)
    except (typer.Abort, KeyboardInterrupt):
        print("mssdiag: interrupted", file=sys.stderr)
        sys.exit(130)
    except (BrokenPipeError, OutputClosed):
        _stdout_gone()   # `mssdiag parse big | head`: the reader left
        print("mssdiag: cannot write the output: Broken pipe (the reader left)", file=sys.stderr)
        sys.exit(1)
    except OSError as exc:
        if exc.filename is None:       # a write to stdout failed (`> /dev/full`, `>&-`)
            _stdout_gone()
            print(f"mssdiag: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        else:
            print(f"mssdiag: {safe(exc.filename)}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
