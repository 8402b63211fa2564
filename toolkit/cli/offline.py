"""`mssdiag parse` and `mssdiag diff`: offline netstat dumps."""

import sys
from typing import Annotated, Iterator, List, Optional

import typer

from toolkit.cli.options import check_jobs
from toolkit.output import FORMATS, emit, error

PATHS = typer.Argument(metavar="PATH...", help="Dump files, directories (read recursively) or - for stdin.")
OS_OPT = typer.Option("--os", metavar="OS", help="Read every dump as this OS instead of detecting it (a parser's "
                      "name from docs/parsers.md: linux, windows, vos, cisco, ...; a wrong one lists them all).")
FMT_OPT = typer.Option("--format", "-f", metavar="FORMAT", help="table, json (one array) or jsonl (one object a line).")
JSON_OPT = typer.Option("--json", help="Same as --format json.")
QUIET_OPT = typer.Option("--quiet", "-q", help="No progress bar, even on a terminal.")
JOBS_OPT = typer.Option("--jobs", "-j", metavar="N", help="Read files in N worker processes (0: one per CPU); "
                        "the output is the same, in the same order. Worth it for many files; one stream or "
                        "one big file is read on one core.")
HOST_OPT = typer.Option("--host", metavar="NAME", help="Every dump given is this host (else the host "
                        "comes from a host.toml, the prompt, or a file name like web1-0900.txt; see docs/hosts.md).")


def _check(fmt: str, as_json: bool, os_name: Optional[str], jobs: int) -> str:
    check_jobs(jobs)
    if as_json:
        fmt = "json"
    if fmt not in FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(FORMATS)}", param_hint="--format")
    if os_name:
        import parsers
        from parsers.model import ParseError
        try:
            parsers.get(os_name)
        except ParseError as exc:
            raise typer.BadParameter(str(exc), param_hint="--os")
    return fmt


def _snapshots(paths: List[str], os_name: Optional[str], outcome, quiet: bool, jobs: int = 1, encode=None):
    """(snapshot, input) from the inputs, with a byte-count progress bar on a terminal for big inputs
    (`encode`: see inputs.read). Without a bar, --jobs workers start on the first dumps
    while the walk goes on (inputs.read)."""
    from toolkit import hosts
    from toolkit.inputs import jobs_wanted, read, size

    def walked(inputs) -> None:
        other = [i for i in inputs if i.kind != "dump"]
        if other:
            kinds = sorted({i.kind for i in other})
            error(f"skipped {len(other)} input(s) that are not netstat dumps ({', '.join(kinds)}: "
                  f"{', '.join(i.path for i in other[:3])}{', ...' if len(other) > 3 else ''}); "
                  "mssdiag triage reads them")

    jobs = jobs_wanted(jobs)
    if quiet or not sys.stderr.isatty():
        yield from read(hosts.scan(paths, error, outcome.failed), os_name, outcome, error, jobs=jobs, encode=encode,
                        walked=walked)
        return
    inputs, _ = hosts.walk(paths, error, outcome.failed)
    walked(inputs)
    total = size(inputs)
    if total < 32 * 2 ** 20:
        yield from read(inputs, os_name, outcome, error, jobs=jobs, encode=encode)
        return
    with typer.progressbar(length=total, label="reading", file=sys.stderr) as bar:
        yield from read(inputs, os_name, outcome, error, progress=bar.update, jobs=jobs, encode=encode)


def _named(items, forced: Optional[str]) -> Iterator:
    """Each snapshot with the host it names (bare ones: none), as the host model says (a
    worker's JSON line, already named by _line, as it is)."""
    from toolkit import hosts
    from toolkit.output import Encoded
    for snap, inp in items:
        if snap.__class__ is not Encoded:
            snap.host = hosts.identify(snap, inp.case, forced)[0]
        yield snap


def _line(forced: Optional[str], snap, case) -> str:
    """A snapshot's JSON record as _named and emit would make it, made by the --jobs worker
    that read it (inputs.read's `encode`)."""
    from toolkit import hosts, snapjson
    from toolkit.output import record_json
    snap.host = hosts.identify(snap, case, forced)[0]
    return record_json(snap, snapjson.line)


def _finish(outcome) -> None:
    if not outcome.parsed:
        raise typer.Exit(1)
    if outcome.failed:
        raise typer.Exit(3)


def _said(s, shown: set) -> None:
    """A table has no room for a snapshot's warnings: each goes to stderr once, naming where."""
    for w in s.warnings:
        if (s.source, w) not in shown:
            shown.add((s.source, w))
            error(f"{s.source}: line {s.line}: {w}")


def _snapshot_rows(s, shown: set):
    from parsers.model import COUNTERS
    _said(s, shown)
    for family in ("ipv4", "ipv6"):
        values = getattr(s, family)
        if values is not None:
            yield [s.source, s.index, s.os, s.host, s.taken_at, family] + [values[c] for c in COUNTERS]


def _delta_rows(d):
    from parsers.model import COUNTERS
    events = ", ".join(f"{e['type']} {e.get('family', '')}.{e.get('counter', '')}".rstrip(".") for e in d.events)
    for family in ("ipv4", "ipv6"):
        values = getattr(d, family)
        if values is not None:
            r = d.ratios(family)
            yield ([d.host, d.from_, d.to, d.elapsed_s, family] + [values[c] for c in COUNTERS]
                   + [r["fragments_per_datagram"], r["reasm_fail_share"], events or None])


def parse(paths: Annotated[List[str], PATHS], os_name: Annotated[Optional[str], OS_OPT] = None,
          fmt: Annotated[str, FMT_OPT] = "table", as_json: Annotated[bool, JSON_OPT] = False,
          quiet: Annotated[bool, QUIET_OPT] = False, host: Annotated[Optional[str], HOST_OPT] = None,
          jobs: Annotated[int, JOBS_OPT] = 1) -> None:
    """Read netstat -s dumps and print their IP reassembly and fragmentation counters.

    The OS and format are recognised from the text alone: prompts, `| grep frag`
    excerpts, e-mail quoting, CRLF and UTF-16 files all work. A file may hold many
    snapshots (`date; netstat -s` appended by cron); each gets its date and the host it
    names (prompt, host.toml, a file name like web1-0900.txt, or --host).

    Counters use IP-MIB names: ReasmReqds (fragments needing reassembly), ReasmOKs
    (datagrams reassembled), ReasmFails, ReasmTimeout, FragOKs, FragFails, FragCreates.
    A dash means the OS never prints that counter (or the excerpt left it out).

    Examples:

    ```
    mssdiag parse dump.txt
    ssh host netstat -s | mssdiag parse - --json
    mssdiag parse tickets/ --format jsonl > counters.jsonl
    mssdiag parse collected/ --jobs 0 --format jsonl > all.jsonl
    ```

    Exit status: 0 every input parsed; 1 nothing could be parsed; 2 bad usage;
    3 some inputs could not be parsed (the others were, and their results are printed).
    """
    import functools

    from parsers.model import COUNTERS
    from toolkit import snapjson
    from toolkit.inputs import Outcome
    fmt = _check(fmt, as_json, os_name, jobs)
    outcome = Outcome()
    shown: set = set()
    encode = functools.partial(_line, host) if fmt != "table" else None
    headers = ["source", "#", "os", "host", "taken_at", "family"] + list(COUNTERS)
    emit(_named(_snapshots(paths, os_name, outcome, quiet, jobs, encode), host), fmt,
         lambda s: _snapshot_rows(s, shown), headers, encoded=snapjson.line)
    _finish(outcome)


def diff(paths: Annotated[List[str], PATHS], os_name: Annotated[Optional[str], OS_OPT] = None,
         fmt: Annotated[str, FMT_OPT] = "table", as_json: Annotated[bool, JSON_OPT] = False,
         quiet: Annotated[bool, QUIET_OPT] = False, host: Annotated[Optional[str], HOST_OPT] = None,
         jobs: Annotated[int, JOBS_OPT] = 1) -> None:
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

    ```
    mssdiag diff before.txt after.txt
    mssdiag diff cron-netstat.log --json
    ```

    Exit status: 0 every input parsed; 1 nothing could be parsed; 2 bad usage;
    3 some inputs could not be parsed (the others were, and their results are printed).
    """
    from parsers.model import COUNTERS
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

    headers = (["host", "from", "to", "elapsed_s", "family"] + list(COUNTERS)
               + ["frags/dgram", "fail share", "events"])
    if not emit(deltas(), fmt, _delta_rows, headers):
        if outcome.snapshots:
            each = ", ".join(f"{h.facts.name} ({h.snapshot_count})" for h in found if h.snapshot_count)
            error(f"nothing to pair: diff needs two snapshots of one host; snapshots per host: {each}")
        raise typer.Exit(1)
    _finish(outcome)


def register(app: typer.Typer) -> None:
    app.command("parse")(parse)
    app.command("diff")(diff)
