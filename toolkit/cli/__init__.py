"""The mssdiag command line: thin typer wrappers over the library, one module per group."""
from __future__ import annotations

import sys
from typing import Optional

import typer

from toolkit.cli import lab, offline, probe
from toolkit.commands import Exit, guarded, version_line
from toolkit.output import raise_interrupted, safe
from toolkit.cli import calc as calc_cli, triage as triage_cli
from toolkit.cli import capture as capture_cli
from toolkit.cli import audit as audit_cli
from toolkit.cli import fleet as fleet_cli
from toolkit.cli import collect as collect_cli
from toolkit.cli import startup

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
        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
@startup.inert        # no work of its own: --version is eager and ends the run
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
collect_cli.register(app)


def main() -> None:
    """Run the CLI; usage errors become one line on stderr (exit 2), never a traceback."""
    import signal

    signal.signal(signal.SIGINT, raise_interrupted)
    signal.signal(signal.SIGTERM, raise_interrupted)
    # Click's exception classes, found through typer's public BadParameter: newer typer
    # releases vendor click, older ones import it.
    usage_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
    click_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")

    def call():
        try:
            if sys.stdout is None:
                raise OSError(9, "stdout is closed")
            code = startup.command(app, sys.argv[1:])(prog_name="mssdiag", standalone_mode=False)
        except Exit as exc:       # a typer-free helper's (toolkit/commands/), as typer.Exit
            code = exc.code
        except usage_error as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":
                sys.exit(0)  # help was printed
            where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            print(f"mssdiag: {safe(exc.format_message())}{where}", file=sys.stderr)
            sys.exit(2)
        except click_error as exc:
            print(f"mssdiag: {safe(exc.format_message())}", file=sys.stderr)
            sys.exit(exc.exit_code)
        except typer.Abort:
            print("mssdiag: interrupted", file=sys.stderr)
            sys.exit(130)
        sys.stdout.flush()
        return code

    guarded(call)      # interrupts, a reader that left, an unwritable stdout: as on the fast path
