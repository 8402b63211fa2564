"""Sources of one audit run, through the host model, ready to store.

Dump files and directories are walked and read the way every command reads them
(toolkit/hosts.py walk, toolkit/inputs.py read) and grouped into hosts by
toolkit/hosts.py build; this module adds what a history needs:

- each snapshot's own text (the lines from its first line to the next snapshot's), so the
  store can keep it and `audit reparse` re-read it;
- a time for every snapshot: the dump's date line; else the time in a fleet file name
  (`web1--20261122T030600Z.txt`) or its index.jsonl line; else, for --local and stdin, the
  clock; else the file's modification time (said in `time_from`);
- a fleet directory's `index.jsonl`: one JSON object a line, {"host", "status":
  ok|failed|unreachable, "file", "time", "command", "rc", "detail", "boot", "kind"}; the
  file it names belongs to that host, and a failed or unreachable host is recorded (it
  turns stale); "boot" (what the host's boot-time command printed, toolkit/fleet/boot.py)
  gives the snapshot its boot time, so a reboot is known; a "kind": "probe" line names a
  saved `probe --json` file run from that host: its results are the targets', with that
  host as their vantage (toolkit/fleet: `mssdiag fleet probe`);
- --local (this host's counters) and probes, saved (`probe --json` files) or live.
"""
from __future__ import annotations

import io
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from itertools import accumulate
from datetime import datetime, timezone
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import parsers
from parsers.model import Snapshot
from parsers.text import open_text
from toolkit import hosts as model
from toolkit.audit.store import epoch, iso
from toolkit.fleet import INDEX
from toolkit.hostfile import HostFacts
from toolkit.inputs import Outcome, read

STATUSES = ("ok", "failed", "unreachable")      # what an index line may say
NO_SNAPSHOT = "no-snapshot"     # a collection the index calls ok whose file gave no snapshot

# `<host>--<UTC time>`: 20261122T030600Z, 2026-11-22T03:06:00Z, 2026-11-22T0306Z ...
_FLEET_TIME = re.compile(r"--(?P<y>\d{4})-?(?P<mo>\d{2})-?(?P<d>\d{2})[T_](?P<h>\d{2})[:-]?(?P<mi>\d{2})"
                         r"(?:[:-]?(?P<s>\d{2})(?:\.\d+)?)?Z$", re.I)


def file_time(path: str) -> Optional[str]:
    """The UTC time a fleet file name carries (`web1--20261122T030600Z.txt`), ISO 8601, else None."""
    stem = os.path.basename(path)
    for _ in range(2):
        root, ext = os.path.splitext(stem)
        if ext and re.fullmatch(r"\.[A-Za-z][A-Za-z0-9]{0,4}", ext):
            stem = root
    m = _FLEET_TIME.search(stem)
    if not m:
        return None
    try:
        t = datetime(int(m["y"]), int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"] or 0),
                     tzinfo=timezone.utc)
    except ValueError:
        return None
    return t.isoformat()


def precise(t: float) -> str:
    """The clock as ISO 8601 UTC to the microsecond: runs a second apart stay apart."""
    return datetime.fromtimestamp(t, timezone.utc).isoformat()


@dataclass
class Stamp:
    """What the store needs besides the snapshot itself."""
    t: float
    time_from: str            # dump | index | file name | clock | file mtime
    moment: str               # the idempotency moment ('' when only a guess: file mtime)
    path: Optional[str] = None                 # where its text is (Gathered.text cuts it)
    span: Optional[Tuple[int, int]] = None
    text: Optional[str] = None                 # or the text itself (--local)
    boot_t: Optional[float] = None             # the host's boot time, when the fleet index gave it


@dataclass
class ProbeStamp:
    t: float
    moment: str
    source: str
    vantage: Optional[str]


@dataclass
class Collection:
    host: str
    status: str
    t: float
    command: Optional[str]
    rc: Optional[int]
    source: str
    detail: Optional[str]


@dataclass
class Gathered:
    hosts: List[model.Host] = field(default_factory=list)
    stamps: Dict[int, Stamp] = field(default_factory=dict)          # id(snapshot) -> Stamp
    probe_stamps: Dict[int, ProbeStamp] = field(default_factory=dict)  # id(result) -> ProbeStamp
    collections: List[Collection] = field(default_factory=list)
    outcome: Outcome = field(default_factory=Outcome)
    local_host: Optional[str] = None
    texts: Optional["Texts"] = None

    def text(self, stamp: Stamp) -> str:
        return stamp.text if stamp.text is not None else self.texts.cut(stamp.path, stamp.span)


@dataclass
class _Entry:
    host: str
    status: str
    time: Optional[str]
    command: Optional[str]
    rc: Optional[int]
    detail: Optional[str]
    file: Optional[str]
    boot: Optional[str] = None
    kind: str = "collect"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def read_index(path: str, error: Callable[[str], None], failed: List[str]) -> List[_Entry]:
    """A fleet index.jsonl; each bad line gets one error line and is skipped, the others are
    read. Lines end at a newline only (a U+2028 or U+0085 inside a name is no line break),
    and each is UTF-8 on its own: one damaged line costs that line."""
    out: List[_Entry] = []

    def bad(n: int, why: str) -> None:       # the line is an input that could not be read (exit 3)
        error(f"{path}: line {n}: {why}")
        failed.append(f"{path}: line {n}")
    try:
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
    except OSError as exc:
        error(f"{path}: cannot read: {exc.strerror or exc}")
        failed.append(path)
        return out
    folder = os.path.dirname(path)
    for n, raw in enumerate(lines, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad(n, f"not UTF-8 (byte {raw[exc.start]:#04x} at {exc.start + 1}); line skipped")
            continue
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            bad(n, f"not JSON: {exc.msg}")
            continue
        if not isinstance(item, dict) or not isinstance(item.get("host"), str) or not item["host"].strip():
            bad(n, f"needs \"host\" (a name) and \"status\" ({', '.join(STATUSES)})")
            continue
        lone = "\\u" in line and _LONE_SURROGATE.search(json.dumps(item, ensure_ascii=False))
        if lone:
            bad(n, f"holds \\u{ord(lone.group()):04x}, a lone surrogate (not a character); line skipped")
            continue
        status = item.get("status")
        if status not in STATUSES:
            bad(n, f"status {status!r} is not one of {', '.join(STATUSES)}")
            continue
        when = item.get("time")
        if when is not None:
            try:
                epoch(str(when))
            except ValueError:
                error(f"{path}: line {n}: time {when!r} is not ISO 8601; ignored")
                when = None
            else:
                when = str(when)
        rc = item.get("rc")
        f = item.get("file")
        detail = item.get("detail") or item.get("msg")
        out.append(_Entry(item["host"], status, when, None if item.get("command") is None else str(item["command"]),
                          rc if isinstance(rc, int) and not isinstance(rc, bool) else None,
                          None if detail is None else str(detail),
                          os.path.normpath(os.path.join(folder, f)) if isinstance(f, str) and f else None,
                          item["boot"] if isinstance(item.get("boot"), str) else None,
                          "probe" if item.get("kind") == "probe" else "collect"))
    return out


class Texts:
    """The decoded text of the files read, to cut each snapshot's own text from when it is
    stored: only offsets are held meanwhile, and one file's text at a time (a host's
    snapshots come from its own files), so memory stays bounded by the largest file."""

    def __init__(self, stdin: Optional[bytes] = None):
        self.stdin_bytes = stdin      # what `-` was: read() parses it from these bytes, and its
        self._stdin: Optional[str] = None   # text is decoded once when a snapshot is cut from it
        self._path: Optional[str] = None
        self._text = ""

    def whole(self, path: str) -> str:
        if path == "-":
            if self._stdin is None and self.stdin_bytes is not None:
                self._stdin = open_text(io.BytesIO(self.stdin_bytes)).read()
            return self._stdin or ""
        if path != self._path:
            with open_text(open(path, "rb")) as fh:
                self._text = fh.read()
            self._path = path
        return self._text

    def cut(self, path: str, span: Tuple[int, int]) -> str:
        return self.whole(path)[span[0]:span[1]]


def _spans(inputs, outcome: Outcome, error: Callable[[str], None], texts: Texts):
    """(snapshot, input, (start, end) of its own text) for every dump, in read() order: a
    snapshot's text runs from its first line to the next snapshot's first line."""
    pending: List[Tuple[Snapshot, object]] = []

    def attach(items):
        inp = items[0][1]
        try:
            text = texts.whole(inp.path)
        except OSError as exc:
            error(f"{inp.path}: cannot read again: {exc.strerror or exc}")
            return
        # Line j + 1 starts after j lines and their newlines: lengths summed in C, no loop per line.
        cum = list(accumulate(map(len, text.split("\n"))))
        last = len(cum)

        def start(line: int) -> int:
            j = min(max(line, 1) - 1, last)
            return cum[j - 1] + j if j else 0
        starts = [start(s.line) for s, _ in items]
        ends = starts[1:] + [len(text)]
        for (snap, _), a, b in zip(items, starts, ends):
            yield snap, inp, (a, min(b, len(text)))

    stdin = io.BytesIO(texts.stdin_bytes) if texts.stdin_bytes is not None else None
    for snap, inp in read(inputs, None, outcome, error, stdin=stdin):
        if pending and pending[-1][1] is not inp:
            yield from attach(pending)
            pending = []
        pending.append((snap, inp))
    if pending:
        yield from attach(pending)


def _no_snapshot(said_ok: List[Tuple["_Entry", Collection]], gave: set, walked: set) -> None:
    """A collection the index calls ok whose file gave no snapshot is no health: it is
    recorded as `no-snapshot`, with why, and opens the host's stale event as a failure does."""
    gave = {os.path.normpath(p) for p in gave}
    for e, c in said_ok:
        if e.file in gave:
            continue
        if not e.file:
            why = "the index names no file"
        elif not os.path.lexists(e.file):
            why = f"{os.path.basename(e.file)}: no such file"
        elif e.file not in walked:
            why = f"{os.path.basename(e.file)}: not read (a hidden file, not a regular file, or outside the directory)"
        else:
            why = f"{os.path.basename(e.file)}: no IP counters read from it"
        c.status = NO_SNAPSHOT
        c.detail = f"the index said ok, but {why}" + (f"; {c.detail}" if c.detail else "")


def gather(paths: Sequence[str], error: Callable[[str], None], host: Optional[str] = None,
           local: bool = False, targets: Sequence[str] = (), ports: Sequence[int] = (),
           send_text: Optional[str] = None, now: Optional[float] = None,
           prober: Optional[Callable] = None) -> Gathered:
    """Every source of a run, grouped into hosts by the host model."""
    now = time.time() if now is None else now
    out = Gathered()
    outcome = out.outcome
    inputs, facts = model.walk(list(paths), error, outcome.failed) if paths else ([], [])

    # A fleet directory's index.jsonl: who was collected, who was not, which file is whose.
    # A host named by an index is that name exactly: `Web9` and `web9` are two hosts.
    entries: Dict[str, _Entry] = {}
    by_name = {f.name: f for f in facts}
    said_ok: List[Tuple[_Entry, Collection]] = []
    kept = []
    for inp in inputs:
        if inp.path != "-" and os.path.basename(inp.path) == INDEX:
            outcome.parsed.append(inp.path)
            for e in read_index(inp.path, error, outcome.failed):
                t = epoch(e.time) if e.time else (os.stat(e.file).st_mtime if e.file and os.path.exists(e.file)
                                                  else os.stat(inp.path).st_mtime)
                if e.file:
                    entries[e.file] = e
                if e.kind == "probe":
                    continue            # a vantage's probe run: its results belong to the targets
                c = Collection(e.host, e.status, t, e.command, e.rc, inp.path, e.detail)
                out.collections.append(c)
                if e.status == "ok":
                    said_ok.append((e, c))
                if e.host not in by_name:
                    facts.append(HostFacts(e.host))
                    by_name[e.host] = facts[-1]
            continue
        kept.append(inp)
    inputs = kept
    for inp in inputs:
        if inp.kind == "capture":
            error(f"{inp.path}: a packet capture: the audit keeps counters and probes, not captures "
                  "(mssdiag capture or triage read it); skipped")
    for inp in inputs:
        e = entries.get(os.path.normpath(inp.path)) if inp.path != "-" else None
        if e is not None and inp.case is None and e.kind != "probe":
            inp.case = by_name[e.host]

    out.texts = Texts(sys.stdin.buffer.read() if any(i.path == "-" for i in inputs) else None)
    pairs: List[Tuple[Snapshot, Optional[HostFacts]]] = []
    mtimes: Dict[str, float] = {}
    gave: set = set()                   # the inputs that gave a snapshot
    for snap, inp, span in _spans(inputs, outcome, error, out.texts):
        gave.add(inp.path)
        if snap.taken_at:
            try:
                t, how = epoch(snap.taken_at), "dump"
            except ValueError:
                snap.taken_at = None
        if not snap.taken_at:
            e = entries.get(os.path.normpath(inp.path)) if inp.path != "-" else None
            named = file_time(inp.path) if inp.path != "-" else None
            if e is not None and e.time:
                snap.taken_at, how = e.time, "index"
            elif named:
                snap.taken_at, how = named, "file name"
            elif inp.path == "-":
                snap.taken_at, how = precise(now), "clock"
            else:
                if inp.path not in mtimes:
                    mtimes[inp.path] = os.stat(inp.path).st_mtime
                snap.taken_at, how = iso(mtimes[inp.path]), "file mtime"
            t = epoch(snap.taken_at)
        moment = "" if how == "file mtime" else iso(t)
        stamp = out.stamps[id(snap)] = Stamp(t, how, moment, inp.path, span)
        e = entries.get(os.path.normpath(inp.path)) if inp.path != "-" else None
        if e is not None and e.boot:
            from toolkit.fleet import boot
            stamp.boot_t = boot.parse(e.boot, epoch(e.time) if e.time else t)
        if model.identify(snap, inp.case, host)[0] is not None:
            snap.raw = {}       # only bare snapshots need their lines (to pair by shape): memory
        pairs.append((snap, inp.case))
    _no_snapshot(said_ok, gave, {os.path.normpath(i.path) for i in inputs if i.path != "-"})

    if local:
        from toolkit.audit import local as here
        out.local_host = host or here.host_name()
        text, where, os_name = here.read()
        case = HostFacts(out.local_host)
        got = list(parsers.iter_parse(text, source=f"local:{where}", os=os_name,
                                      warn=lambda m: error(f"--local: {m}")))
        if not got:
            raise here.LocalError(f"{where}: no IP counters found in this host's statistics")
        for snap in got:
            snap.taken_at = precise(now)
            out.stamps[id(snap)] = Stamp(now, "clock", snap.taken_at, text=text)
            pairs.append((snap, case))
        if not any(f.name == out.local_host for f in facts):
            facts.append(case)
        outcome.parsed.append(f"local:{where}")

    from toolkit.triage import saved_probes
    probes = saved_probes(inputs, outcome, error)
    for r, _, path in probes:
        e = entries.get(os.path.normpath(path))
        if e is not None and e.kind == "probe":     # run on a vantage host by `fleet probe`
            t = epoch(e.time) if e.time else os.stat(path).st_mtime
            out.probe_stamps[id(r)] = ProbeStamp(t, iso(t), path, e.host)
            continue
        t = os.stat(path).st_mtime
        out.probe_stamps[id(r)] = ProbeStamp(t, iso(t), path, None)
    if targets:
        from toolkit.audit import local as here
        from toolkit.triage import live_probe
        vantage = out.local_host or here.host_name()
        for r in (prober or live_probe)(list(targets), error, ports, send_text):
            out.probe_stamps[id(r)] = ProbeStamp(now, iso(now), f"probe {r.target}", vantage)
            probes.append((r, None, f"probe {r.target}"))
            outcome.parsed.append(f"probe {r.target}")

    out.hosts = model.build(pairs, facts, probes, forced=host, note=error, paired=False)   # the store pairs them
    return out
