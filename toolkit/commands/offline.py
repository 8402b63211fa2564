"""`mssdiag parse` and `mssdiag diff`: the work, without typer (the options and help: toolkit/cli/offline.py)."""
from __future__ import annotations

import sys
from typing import Iterator, List, Optional, TYPE_CHECKING

from toolkit.commands import BadValue, Exit, check_jobs
from toolkit.output import FORMATS, emit, error


if TYPE_CHECKING:
    from parsers.model import Snapshot
    from toolkit.diff import Delta
    from toolkit.inputs import Outcome

def _check(fmt: str, as_json: bool, os_name: Optional[str], jobs: int = 1) -> str:
    check_jobs(jobs)
    if as_json:
        fmt = "json"
    if fmt not in FORMATS:
        raise BadValue(f"{fmt!r} is not one of {', '.join(FORMATS)}", "--format")
    if os_name:
        try:
            import parsers
            from parsers.model import ParseError
            parsers.get(os_name)
        except ParseError as exc:
            raise BadValue(str(exc), "--os")
    return fmt


def _snapshots(paths: List[str], os_name: Optional[str], outcome: Outcome, quiet: bool, jobs: int = 1,
               encode=None, evidence: bool = False):
    """(snapshot, input) from the inputs, with a byte-count progress bar on a terminal for big inputs
    (`encode`, `evidence`: see inputs.read). Without a bar, --jobs workers start on the first dumps
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
                        walked=walked, evidence=evidence)
        return
    inputs, _ = hosts.walk(paths, error, outcome.failed)
    walked(inputs)
    total = size(inputs)      # a stat a file the walk did not stat: only for a bar
    if total < 32 * 2 ** 20:
        yield from read(inputs, os_name, outcome, error, jobs=jobs, encode=encode, evidence=evidence)
        return
    import typer        # its progress bar: only on a terminal, for big inputs
    with typer.progressbar(length=total, label="reading", file=sys.stderr) as bar:
        yield from read(inputs, os_name, outcome, error, progress=bar.update, jobs=jobs, encode=encode,
                        evidence=evidence)


def _named(items, forced: Optional[str]) -> Iterator[Snapshot]:
    """Each snapshot with the host it names (bare ones: none), as the host model says (a
    worker's JSON line, already named by _line, as it is)."""
    from toolkit import hosts
    from toolkit.output import Encoded
    for snap, inp in items:
        if snap.__class__ is not Encoded:
            snap.host = hosts.identify(snap, inp.case, forced)[0]
        yield snap


def _line(forced: Optional[str], snap: Snapshot, case) -> str:
    """A snapshot's JSON record as _named and emit would make it, made by the --jobs worker
    that read it (inputs.read's `encode`)."""
    from toolkit import hosts, snapjson
    from toolkit.output import record_json
    snap.host = hosts.identify(snap, case, forced)[0]
    return record_json(snap, snapjson.line)


def _finish(outcome: Outcome) -> None:
    if not outcome.parsed:
        raise Exit(1)
    if outcome.failed:
        raise Exit(3)


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
    if s.__class__.__name__ == "Evidence":
        # a socket table or learned routes: what it holds, in the family column
        what = f"{len(s.items)} sockets, {len({i.peer for i in s.items})} peers" if s.kind == "sockets" \
            else f"{len(s.items)} routes, {sum(1 for r in s.items if r.cache)} learned"
        yield [s.source, s.index, s.os, s.host, s.taken_at, f"{s.format}: {what}"] + [None] * len(COUNTERS)
        return
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


def parse(paths: List[str], os_name: Optional[str], fmt: str, as_json: bool, quiet: bool, host: Optional[str],
          jobs: int) -> None:
    """`mssdiag parse` (its help: toolkit/cli/offline.py)."""
    import functools

    from toolkit import snapjson
    from toolkit.inputs import Outcome
    fmt = _check(fmt, as_json, os_name, jobs)
    outcome = Outcome()
    shown: set = set()
    encode = functools.partial(_line, host) if fmt != "table" else None
    emit(_named(_snapshots(paths, os_name, outcome, quiet, jobs, encode, evidence=True), host), fmt,
         lambda s: _snapshot_rows(s, shown), _snapshot_headers(), encoded=snapjson.line)
    _finish(outcome)


def diff(paths: List[str], os_name: Optional[str], fmt: str, as_json: bool, quiet: bool, host: Optional[str],
         jobs: int) -> None:
    """`mssdiag diff` (its help: toolkit/cli/offline.py)."""
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
        raise Exit(1)
    _finish(outcome)
