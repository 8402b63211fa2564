"""`mssdiag lab up|down|list`: scenario networks in namespaces, to reproduce a case by hand."""
from __future__ import annotations

import json
from typing import Optional

import typer

from toolkit.output import error

app = typer.Typer(help="Build scenario networks (client, router, target) in network namespaces.",
                  no_args_is_help=True)


@app.command("list")
def list_() -> None:
    """The scenarios, and the labs that are up."""
    from toolkit import lab
    for name, spec in lab.SCENARIOS.items():
        typer.echo(f"{name:11} {spec.help}")
    for info in lab.labs():
        typer.echo(f"up: {info['prefix']} {info['scenario']} client={info['client']} target={info['target']}")


@app.command()
def up(scenario: str = typer.Argument(..., metavar="SCENARIO"),
       as_json: bool = typer.Option(False, "--json", help="Print the lab description as JSON.")) -> None:
    """Build SCENARIO and leave it running (remove it with `mssdiag lab down`)."""
    from toolkit import lab
    try:
        built = lab.up(scenario)
    except lab.LabError as exc:
        error(str(exc))
        raise typer.Exit(2)
    info = built.describe()
    if as_json:
        typer.echo(json.dumps(info))
        return
    typer.echo(f"lab {info['prefix']} ({scenario}): {info['help']}")
    typer.echo(f"  probe it:  ip netns exec {info['client']} mssdiag probe {info['target']} "
               f"--port {','.join(map(str, info['ports']))}")
    typer.echo(f"  shell:     ip netns exec {info['client']} bash")
    typer.echo(f"  remove:    mssdiag lab down {info['prefix']}")


@app.command()
def down(prefix: Optional[str] = typer.Argument(None, metavar="[LAB]",
                                                help="Lab prefix from `lab up`; all labs when omitted.")) -> None:
    """Remove a lab (or every lab this tool built)."""
    from toolkit import lab
    known = [info["prefix"] for info in lab.labs()]
    if prefix is not None and prefix not in known:
        error(f"{prefix}: no such lab (up: {', '.join(known) or 'none'})")
        raise typer.Exit(2)
    for p in [prefix] if prefix else known:
        lab.teardown(p)
        typer.echo(f"removed {p}")
