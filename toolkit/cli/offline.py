"""`mssdiag parse` and `mssdiag diff`: offline netstat dumps."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Iterator, List, Optional

import typer

from toolkit.cli.startup import late_help
from toolkit.output import FORMATS, emit, error

if TYPE_CHECKING:      # the parsers and the library are imported inside the commands: start-up stays light
    from parsers.model import Snapshot
    from toolkit.diff import Delta
    from toolkit.inputs import Outcome

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


def _check(fmt: str, as_json: bool, os_name: Optional[str], jobs: int = 1) -> str:
    if jobs < 0:
        raise typer.BadParameter(f"{jobs} is below 0 (0 means one per CPU)", param_hint="--jobs")
    if as_json:
        fmt = "json"
    if fmt not in FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(FORMATS)}", param_hint="--format")
    if os_name:
        try:
            import parsers
            from parsers.model import ParseError
            parsers.get(os_name)
        except ParseError as exc:
            raise typer.BadParameter(str(exc), param_hint="--os")
    return fmt


def _snapshots(paths: List[str], os_name: Optional[str], outcome: Outcome, quiet: bool, jobs: int = 1):
    """(snapshot, input) from the inputs, with a byte-count progress bar on a terminal for big inputs."""
    from toolkit import hosts
    from toolkit.inputs import jobs_wanted, read, size
    inputs, _ = hosts.walk(paths, error, outcome.failed)
    other = [i for i in inputs if i.kind != "dump"]
    if other:
        kinds = sorted({i.kind for i in other})
        error(f"skipped {len(other)} input(s) that are not netstat dumps ({', '.join(kinds)}: "
              f"{', '.join(i.path for i in other[:3])}{', ...' if len(other) > 3 else ''}); mssdiag triage reads them")
    jobs = jobs_wanted(jobs)
    total = 0 if quiet or not sys.stderr.isatty() else size(inputs)      # a stat a file: only for a bar
    if total < 32 * 2 ** 20:
        yield from read(inputs, os_name, outcome, error, jobs=jobs)
        return
    with typer.progressbar(length=total, label="reading", file=sys.stderr) as bar:
        yield from read(inputs, os_name, outcome, error, progress=bar.update, jobs=jobs)


def _named(items, forced: Optional[str]) -> Iterator[Snapshot]:
    """Each snapshot with the host it names (bare ones: none), as the host model says."""
    from toolkit import hosts
    for snap, inp in items:
        snap.host = hosts.identify(snap, inp.case, forced)[0]
        yield snap


def _finish(outcome: Outcome) -> None:
    if not outcome.parsed:
        raise typer.Exit(1)
    if outcome.failed:
        raise typer.Exit(3)


def _snapshot_headers() -> List[str]:
    from parsers.model import COUNTERS
    return ["source", "#", "os", "host", "taken_at", "family"] + list(COUNTERS)


def _delta_headers() -> List[str]:
    from parsers.model import COUNTERS
    return (["host", "from", "to", "elapsed_s", "family"] + list(COUNTERS)
            + ["frags/dgram", "fail share", "events"])


def _said(s: Snapshot, shown: set) -> None:
    """A table has no room for a snapshot's warnings: each goes to stderr once, naming where."""
    for w in s.warnings:
        if (s.source, w) not in shown:
            shown.add((s.source, w))
            error(f"{s.source}: line {s.line}: {w}")


def _snapshot_rows(s: Snapshot, shown: Optional[set] = None):
    from parsers.model import COUNTERS
    if shown is not None:
        _said(s, shown)
    for family in ("ipv4", "ipv6"):
        values = getattr(s, family)
        if values is not None:
            yield [s.source, s.index, s.os, s.host, s.taken_at, family] + [values[c] for c in COUNTERS]


def _delta_rows(d: Delta):
    from parsers.model import COUNTERS
    events = ", ".join(f"{e['type']} {e.get('family', '')}.{e.get('counter', '')}".rstrip(".") for e in d.events)
    for family in ("ipv4", "ipv6"):
        values = getattr(d, family)
        if values is not None:
            r = d.ratios(family)
            yield ([d.host, d.from_, d.to, d.elapsed_s, family] + [values[c] for c in COUNTERS]
                   + [r["fragments_per_datagram"], r["reasm_fail_share"], events or None])


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
    from toolkit import snapjson
    from toolkit.inputs import Outcome
    fmt = _check(fmt, as_json, os_name, jobs)
    outcome = Outcome()
    shown: set = set()
    emit(_named(_snapshots(paths, os_name, outcome, quiet, jobs), host), fmt, lambda s: _snapshot_rows(s, shown),
         _snapshot_headers(), encoded=snapjson.line)
    _finish(outcome)


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
    from toolkit import hosts
    from toolkit.inputs import Outcome
    fmt = _check(fmt, as_json, os_name, jobs)
    outcome = Outcome()
    found: List[hosts.Host] = []

    def deltas():
        # A host longer than KEEP snapshots is paired as it is read, its pairs printed at once
        # and dropped (memory stays flat); the others are ordered and paired at the end.
        model = hosts.Builder(forced=host, note=error, keep=hosts.KEEP)
        for s, inp in _snapshots(paths, os_name, outcome, quiet, jobs):
            yield from model.add(s, inp.case)
        found.extend(model.finish())
        for h in found:
            if h.stream is None:
                yield from h.deltas

    pairs = emit(deltas(), fmt, _delta_rows, _delta_headers())
    if not pairs:
        if outcome.snapshots:
            each = ", ".join(f"{h.facts.name} ({h.snapshot_count})" for h in found if h.snapshot_count)
            error(f"nothing to pair: diff needs two snapshots of one host; snapshots per host: {each}")
        raise typer.Exit(1)
    _finish(outcome)


def register(app: typer.Typer) -> None:
    app.command("parse", cls=late_help(os_name=_os_help))(parse)
    app.command("diff", cls=late_help(os_name=_os_help))(diff)
