"""The mssdiag command line: thin typer wrappers over the library, one module per group."""

import signal
import sys

import typer

import toolkit
from toolkit.cli import lab, offline, probe
from toolkit.cli import calc as calc_cli, triage as triage_cli
from toolkit.cli import capture as capture_cli
from toolkit.cli import audit as audit_cli
from toolkit.cli import fleet as fleet_cli
from toolkit.cli import collect as collect_cli
from toolkit.output import Interrupted, OutputClosed, error, raise_interrupted

app = typer.Typer(
    name="mssdiag",
    help="Diagnose TCP MSS, path MTU and IP fragmentation problems.\n\n"
         "Offline: `mssdiag parse DUMP...` reads netstat -s dumps from any OS; "
         "`mssdiag diff DUMP...` shows how the reassembly and fragmentation counters grew.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mssdiag {toolkit.__version__}")
        raise typer.Exit()


@app.callback()
def root(version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")) -> None:
    """Diagnose TCP MSS, path MTU and IP fragmentation problems."""


offline.register(app)
probe.register(app)
triage_cli.register(app)
calc_cli.register(app)
capture_cli.register(app)
app.add_typer(lab.app, name="lab")
audit_cli.register(app)
fleet_cli.register(app)
collect_cli.register(app)

# Click's exception classes, found through typer's public BadParameter: newer typer releases
# vendor click, older ones import it.
_USAGE_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def main() -> None:
    """Run the CLI as the `mssdiag` command: usage errors, interrupts, a reader that left and
    an unwritable stdout end in one line on stderr and an exit status, never a traceback."""
    signal.signal(signal.SIGINT, raise_interrupted)
    signal.signal(signal.SIGTERM, raise_interrupted)
    try:
        if sys.stdout is None:
            raise OSError(9, "stdout is closed")
        code = app(prog_name="mssdiag", standalone_mode=False)
        sys.stdout.flush()
    except _USAGE_ERROR as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.exit(0)  # help was printed
        where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        _fail(f"{exc.format_message()}{where}", 2)
    except _CLICK_ERROR as exc:
        _fail(exc.format_message(), exc.exit_code)
    except typer.Abort:
        _fail("interrupted", 130)
    except Interrupted as exc:
        _fail(exc.word, 128 + exc.signum)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except (BrokenPipeError, OutputClosed):
        _stdout_gone()   # `mssdiag parse big | head`: the reader left
        _fail("cannot write the output: Broken pipe (the reader left)", 1)
    except OSError as exc:
        if exc.filename is not None:
            _fail(f"{exc.filename}: {exc.strerror or exc}", 1)
        _stdout_gone()   # a write to stdout failed (`> /dev/full`, `>&-`)
        _fail(f"cannot write the output: {exc.strerror or exc}", 1)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> None:
    error(message)
    sys.exit(code)


def _stdout_gone() -> None:
    """stdout cannot be written: point it at /dev/null so the interpreter's own last flush
    cannot print a traceback."""
    import os
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    except OSError:
        pass
