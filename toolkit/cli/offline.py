"""`mssdiag parse` and `mssdiag diff`: offline netstat dumps (the options and help; the work:
toolkit/commands/offline.py)."""
from __future__ import annotations

from typing import List, Optional

import typer

from toolkit.cli.startup import late_help, plain
from toolkit.commands import offline as work

PATHS = typer.Argument(..., metavar="PATH...", help="Dump files, directories (read recursively) or - for stdin.")
OS_HELP = "Read every dump as this OS instead of detecting it: "      # + the parsers' names: _os_help
OS_OPT = typer.Option(None, "--os", metavar="OS", help=OS_HELP)
FMT_OPT = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, json (one array) or jsonl (one object a line).")
JSON_OPT = typer.Option(False, "--json", help="Same as --format json.")
QUIET_OPT = typer.Option(False, "--quiet", "-q", help="No progress bar, even on a terminal.")
JOBS_OPT = typer.Option(1, "--jobs", "-j", metavar="N", help="Read files in N worker processes (0: one per CPU); "
                        "the output is the same, in the same order. Worth it for many files; one stream or "
                        "one big file is read on one core.")
HOST_OPT = typer.Option(None, "--host", metavar="NAME", help="Every dump given is this host (else the host "
                        "comes from a host.toml, the prompt, or a file name like web1-0900.txt; see docs/hosts.md).")


def _os_help() -> str:
    import parsers     # every parser: only when parse/diff's options are used or shown
    return OS_HELP + ", ".join(parsers.names()) + "."


@plain(work.parse)
def parse(paths: List[str] = PATHS, os_name: Optional[str] = OS_OPT, fmt: str = FMT_OPT,
          as_json: bool = JSON_OPT, quiet: bool = QUIET_OPT, host: Optional[str] = HOST_OPT,
          jobs: int = JOBS_OPT) -> None:
    """Read netstat -s dumps and print their IP reassembly and fragmentation counters.

    The OS and format are recognised from the text alone: prompts, `| grep frag`
    excerpts, e-mail quoting, CRLF and UTF-16 files all work. A file may hold many
    snapshots (`date; netstat -s` appended by cron); each gets its date and the host it
    names (prompt, host.toml, a file name like web1-0900.txt, or --host).

    Counters use IP-MIB names: ReasmReqds (fragments needing reassembly), ReasmOKs
    (datagrams reassembled), ReasmFails, ReasmTimeout, FragOKs, FragFails, FragCreates.
    `-` means the OS never prints that counter (or the excerpt left it out).

    Examples:

      mssdiag parse dump.txt

      ssh host netstat -s | mssdiag parse - --json

      mssdiag parse tickets/ --format jsonl > counters.jsonl

      mssdiag parse collected/ --jobs 0 --format jsonl > all.jsonl

    Exit status: 0 every input parsed; 1 nothing could be parsed; 2 bad usage;
    3 some inputs could not be parsed (the others were, and their results are printed).
    """


@plain(work.diff)
def diff(paths: List[str] = PATHS, os_name: Optional[str] = OS_OPT, fmt: str = FMT_OPT,
         as_json: bool = JSON_OPT, quiet: bool = QUIET_OPT, host: Optional[str] = HOST_OPT,
         jobs: int = JOBS_OPT) -> None:
    """Show how the counters grew between consecutive snapshots of each host.

    Give two dumps (before, after, in any order) or one file holding several snapshots.
    Snapshots are grouped into hosts and put in time order as docs/hosts.md says: by the
    prompt's host name, a host.toml, a file name like web1-0900.txt or --host; dumps
    naming no host pair when their counters grow together. For each pair: increases,
    rates per hour (when the dumps are dated), fragments per reassembled datagram and
    the share of reassemblies failing. A counter that went down is reported as an
    event, never as a negative number: `wrap` when a 32-bit counter rolled over (the
    increase is corrected), `reset` when the host rebooted (the increases across it are
    unknown).

    Examples:

      mssdiag diff before.txt after.txt

      mssdiag diff cron-netstat.log --json

    Exit status: 0 every input parsed; 1 nothing could be parsed; 2 bad usage;
    3 some inputs could not be parsed (the others were, and their results are printed).
    """


def register(app: typer.Typer) -> None:
    app.command("parse", cls=late_help(os_name=_os_help))(parse)
    app.command("diff", cls=late_help(os_name=_os_help))(diff)
