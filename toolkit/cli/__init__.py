"""The mssdiag command line: thin typer wrappers over the library, one module per group."""
from __future__ import annotations

from typing import Optional

import typer

from toolkit import __version__
from toolkit.cli import lab, offline

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
        typer.echo(f"mssdiag {__version__}")
        raise typer.Exit()


@app.callback()
def root(version: Optional[bool] = typer.Option(
        None, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")) -> None:
    """Diagnose TCP MSS, path MTU and IP fragmentation problems."""


offline.register(app)
app.add_typer(lab.app, name="lab")


def main() -> None:
    app(prog_name="mssdiag")
