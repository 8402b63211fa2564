"""`mssdiag triage`: per-host findings and recommendations from dumps, probes and host facts (the
options and help; the work: toolkit/commands/triage.py)."""
from __future__ import annotations

from typing import List, Optional

import typer

from toolkit.cli.startup import late_help, plain
from toolkit.commands import triage as work

OS_HELP = ("The host's platform, for advice: {}. Dumps are still read as what they are (a VOS host's "
           "TCP_OS dump).")


def _os_help() -> str:
    from toolkit.hostfile import OS_NAMES     # the parsers and platforms: only when triage's options are used or shown
    return OS_HELP.format(" ".join(OS_NAMES))


@plain(work.triage)
def triage(
    paths: List[str] = typer.Argument(None, metavar="PATH...", help="netstat dumps, saved `probe --json` files, "
                                      "case directories (with a host.toml) or host files (*.toml)."),
    target: List[str] = typer.Option([], "--target", "-t", help="Probe this live target too (repeatable; needs root for DF probes)."),
    probe_targets: bool = typer.Option(False, "--probe-targets", help="Also probe the targets host files list "
                                       "(never without this flag: a customer's file does not make mssdiag send packets)."),
    port: Optional[str] = typer.Option(None, "--port", "-p", metavar="N,...", help="TCP port(s) for the live MSS check (as mssdiag probe)."),
    send: Optional[str] = typer.Option(None, "--send", metavar="TEXT", help="Sent to live ports that stay silent (backslash escapes understood)."),
    icmp_wait: Optional[float] = typer.Option(None, "--icmp-wait", metavar="S", help="As mssdiag probe: seconds of "
                                              "silence before a black hole is called; 10 makes it certain."),
    hosts_file: Optional[str] = typer.Option(None, "--hosts", metavar="FILE", help="Host facts file (TOML, see docs/triage.md)."),
    host: Optional[str] = typer.Option(None, "--host", metavar="NAME", help="Every input given is this one host "
                                       "(else hosts come from host.toml, prompts, file names, counters: docs/hosts.md)."),
    os_name: Optional[str] = typer.Option(None, "--os", help=OS_HELP.format("...")),   # see _os_help
    release: Optional[str] = typer.Option(None, "--release", help="OS release, e.g. 14.6 or 'Windows Server 2003'."),
    peer: Optional[str] = typer.Option(None, "--peer", help="local or non-local: is the peer on the host's subnet?"),
    bandwidth: Optional[str] = typer.Option(None, "--bandwidth", help="Link rate, e.g. 100M or 10G."),
    rtt: Optional[str] = typer.Option(None, "--rtt", help="Round-trip time, e.g. 20ms."),
    loss: Optional[str] = typer.Option(None, "--loss", help="Loss rate, e.g. 0.0001 or 0.01%."),
    mtu: Optional[str] = typer.Option(None, "--mtu", help="The host's interface MTU."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json, md (Markdown for tickets) or html (one file)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the report here instead of stdout."),
    jobs: int = typer.Option(1, "--jobs", "-j", metavar="N", help="Read dumps in N worker processes (0: one per CPU); "
                             "the report is the same. Worth it for many hosts' files."),
) -> None:
    """Triage hosts: findings (code, evidence, confidence) and the exact commands to fix them.

    Evidence comes from netstat -s dumps (reassembly counters and how they grew between
    snapshots), saved probe results (path MTU, black holes, the MSS a host advertises
    and uses) and host facts (OS release, local or non-local peer, bandwidth, RTT,
    loss). Flags apply to every host and override host files.

    Examples:

      mssdiag triage fixtures/cases/demo/vos-host

      mssdiag triage before.txt after.txt --os vos --release 14.6 --peer non-local

      mssdiag triage ticket-4711/ --host web1

      mssdiag triage probe.json --bandwidth 10G --rtt 20ms --format md -o ticket.md

      mssdiag triage cases/ --format html -o report.html

      mssdiag triage collected/ --jobs 0 --json -o fleet.json

    Exit status: 0 no problem found; 1 nothing could be read; 2 bad usage;
    3 some inputs could not be read; 4 at least one finding of severity "problem".
    """


def register(app: typer.Typer) -> None:
    app.command("triage", cls=late_help(os_name=_os_help))(triage)
