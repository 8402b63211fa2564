"""`mssdiag lab up|down|list`: scenario networks in namespaces, to reproduce a case by hand."""

import json
import os
import shlex
import shutil
import sys
from typing import Optional

import typer

from toolkit.cli import guard
from toolkit.output import error

app = typer.Typer(help="Build scenario networks (client, router, target) in network namespaces.\n\n"
                       "Examples:\n\n```\nmssdiag lab list\nmssdiag lab up blackhole\nmssdiag lab down mssd1a2b3c\n```",
                  no_args_is_help=True)


def self_command() -> str:
    """How to run this very mssdiag again from a root shell: the full path of the running
    script (a .venv install is not on root's PATH), or `python -m toolkit`."""
    argv0 = sys.argv[0] if sys.argv else ""
    if not argv0 or argv0 == "-c" or os.path.basename(argv0) == "__main__.py":
        return f"{shlex.quote(sys.executable)} -m toolkit"
    path = argv0 if os.sep in argv0 else (shutil.which(argv0) or argv0)
    return shlex.quote(os.path.abspath(path))


def _line(info: dict) -> str:
    p = info["prefix"]
    if "damaged" in info:
        return f"damaged: {p}: {info['damaged']} (`mssdiag lab down {p}` removes it)"
    status = info.get("status", "up")
    where = f" client={info.get('client')} target={info.get('target')}"
    if status == "incomplete":
        return f"incomplete: {p} {info.get('scenario')}: its build was killed (`mssdiag lab down {p}` removes it)"
    return f"{status}: {p} {info.get('scenario')}{where}"


@app.command("list")
def list_(as_json: bool = typer.Option(False, "--json", help="The labs as a JSON array.")) -> None:
    """The scenarios, and the labs that are up (exit 1 when the lab state cannot be read)."""
    from toolkit import lab
    with guard.clean_end("lab list"):
        if not as_json:
            from tabulate import tabulate
            guard.STDOUT.line(tabulate([(name, spec.help) for name, spec in lab.SCENARIOS.items()], tablefmt="plain"))
        try:
            found = lab.labs()
        except lab.LabError as exc:
            error(f"lab list: {exc}")
            raise typer.Exit(1)
        if as_json:
            guard.STDOUT.line(json.dumps(found))
        else:
            for info in found:
                guard.STDOUT.line(_line(info))


@app.command()
def up(scenario: str = typer.Argument(..., metavar="SCENARIO"),
       as_json: bool = typer.Option(False, "--json", help="Print the lab description as JSON.")) -> None:
    """Build SCENARIO and leave it running (remove it with `mssdiag lab down`).

    Interrupted (SIGINT, SIGTERM, SIGHUP), it removes what it had built."""
    from toolkit import lab
    with guard.clean_end("lab up", lambda: f" while building {scenario}; what was built is removed"):
        try:
            built = lab.up(scenario)
        except lab.LabError as exc:
            error(str(exc))
            raise typer.Exit(2)
        info = built.describe()
        if as_json:
            guard.STDOUT.line(json.dumps(info))
            return
        me = self_command()
        guard.STDOUT.line(f"lab {info['prefix']} ({scenario}): {info['help']}")
        guard.STDOUT.line(f"  probe it:  ip netns exec {info['client']} {me} probe {info['target']} "
                          f"--port {','.join(map(str, info['ports']))}")
        guard.STDOUT.line(f"  shell:     ip netns exec {info['client']} bash")
        guard.STDOUT.line(f"  remove:    {me} lab down {info['prefix']}")


@app.command()
def down(prefix: Optional[str] = typer.Argument(None, metavar="[LAB]",
                                                help="Lab name from `lab up`; all recorded labs when omitted.")) -> None:
    """Remove a lab (or every lab recorded in the lab state).

    A lab whose state file is damaged or lost is still removed by name, from its namespaces."""
    from toolkit import lab
    with guard.clean_end("lab down"):
        if prefix is not None and not lab.is_prefix(prefix):
            error(f"lab down: {prefix!r} is not a lab name (mssd and 6 hex digits, from `lab up` or `lab list`)")
            raise typer.Exit(2)
        try:
            known = [info["prefix"] for info in lab.labs()]
        except lab.LabError as exc:
            if prefix is None:
                error(f"lab down: {exc}")
                raise typer.Exit(1)
            known = []
        if prefix is not None and prefix not in known and not lab.lab_namespaces(prefix):
            error(f"lab down: {prefix}: no such lab (up: {', '.join(known) or 'none'})")
            raise typer.Exit(2)
        failed = False
        for p in [prefix] if prefix else known:
            problems = lab.teardown(p)
            for msg in problems:
                error(f"lab down: {msg}")
            failed |= bool(problems)
            guard.STDOUT.line(f"{'removed' if not problems else 'partly removed'} {p}")
        if failed:
            raise typer.Exit(1)
