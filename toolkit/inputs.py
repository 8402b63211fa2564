"""Reading dump files into snapshots, one error line per bad input.

Which files to read, and which host each belongs to, is the host model's business
(toolkit/hosts.py: walk, identify, build); this module only turns files into snapshots,
in one process or, for many files, with worker processes (`jobs`).
"""
from __future__ import annotations

import io
import os
import sys
from itertools import chain
from collections import deque
from dataclasses import dataclass, field, fields
from typing import IO, Callable, Iterable, Iterator, List, Optional, Tuple

import parsers
from parsers.evidence import Evidence
from parsers.model import ParseError, Snapshot
from parsers.text import open_text
from toolkit.hostfile import HostFacts
from toolkit.hosts import HEAD, Input
from toolkit.sniff import read_head
from toolkit.output import Encoded


@dataclass
class Outcome:
    """What reading the inputs came to, for the exit status and the error lines."""
    parsed: List[str] = field(default_factory=list)   # inputs that gave at least one snapshot
    failed: List[str] = field(default_factory=list)   # inputs that gave none
    snapshots: int = 0


def size(inputs: List[Input]) -> int:
    """Bytes to read (for a progress bar); files that vanished count 0, never a traceback."""
    total = 0
    for inp in inputs:
        if inp.kind == "dump" and inp.path != "-":
            if inp.size >= 0:
                total += inp.size
                continue
            try:
                total += os.stat(inp.path).st_size
            except OSError:
                pass
    return total


def jobs_wanted(jobs: int) -> int:
    """--jobs: 0 is one per CPU this process may run on."""
    if jobs > 0:
        return jobs
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def read(inputs: Iterable[Input], os_name: Optional[str], outcome: Outcome, error: Callable[[str], None],
         progress: Optional[Callable[[int], None]] = None,
         prefer: Optional[str] = None, jobs: int = 1,
         stdin: Optional[IO[bytes]] = None,
         encode: Optional[Callable[[Snapshot, Optional[HostFacts]], str]] = None,
         walked: Optional[Callable[[List[Input]], None]] = None,
         evidence: bool = False) -> Iterator[Tuple[Snapshot, Input]]:
    """(snapshot, its input) from every dump in order; a bad one gets one error line and is skipped.
    With `evidence`, the socket tables and learned routes in those texts come too, each in
    its place among the snapshots (parsers.Evidence: parsers/evidence.py).

    `os_name` forces a parser; otherwise the OS is detected, preferring the case's OS (else
    `prefer`) where the text fits it as well. `jobs` > 1 reads files in that many worker
    processes: the same snapshots and error lines, in the same order (see `_Workers`).
    The input `-` is `stdin` (the process's standard input when None).
    `encode(snapshot, case)`: what the caller makes of each snapshot (its JSON line), made
    by the worker that read it; the main process gets an output.Encoded of it instead of the
    snapshot (not sent, unpickled nor encoded here: with two workers on two cores, this
    process was their bottleneck). Snapshots read here are yielded as they are.
    `inputs` may be hosts.scan's generator: it is run to its end before the first
    snapshot or error line of a dump (its own error lines come first), with `jobs` > 1
    workers reading the files it has found meanwhile; then `walked(every input)`, for
    what the caller says of them before the dumps' output.
    """
    workers = None
    if jobs > 1:
        found: List[Input] = []
        workers = _Workers.start(_dumps(inputs, found), os_name, prefer, jobs, encode, evidence)
    else:
        found = list(inputs)
    if walked is not None:
        walked(found)
    dumps = [inp for inp in found if inp.kind == "dump"]
    try:
        for inp in dumps:
            name = inp.path
            count = 0
            done = workers.result(inp) if workers else None
            if done is None:
                snaps = _file(name, os_name, _hint(inp, prefer), error, progress, stdin)
            else:
                snaps = _replay(*done, error, progress)
            held = 0
            for snap in snaps:
                if snap.__class__ is Evidence:
                    held += 1
                    if not evidence:
                        continue
                else:
                    count += 1
                yield snap, inp
            if count or held:
                outcome.parsed.append(name)
                outcome.snapshots += count
            elif name not in outcome.failed:
                outcome.failed.append(name)
    finally:
        if workers:
            workers.close()


def _dumps(inputs: Iterable[Input], found: List[Input]) -> Iterator[Input]:
    """The dumps among `inputs`, every input kept in `found` on the way."""
    for inp in inputs:
        found.append(inp)
        if inp.kind == "dump":
            yield inp


def _hint(inp: Input, prefer: Optional[str]) -> Optional[str]:
    return (inp.case.os if inp.case is not None else None) or prefer


def _file(name: str, os_name: Optional[str], hint: Optional[str], error: Callable[[str], None],
          progress: Optional[Callable[[int], None]] = None,
          stdin: Optional[IO[bytes]] = None) -> Iterator[Snapshot]:
    """The snapshots of one dump and its socket tables and learned routes (parsers.Evidence,
    each before the snapshot read after it); every problem is one line on `error`, naming the file."""
    count, found, explained, skipped = 0, 0, False, []
    held: List[Evidence] = []
    try:
        binary = (stdin or sys.stdin.buffer) if name == "-" else open(name, "rb")
    except OSError as exc:
        error(f"{name}: cannot read: {exc.strerror or exc}")
        return
    try:
        with binary:
            text = open_text(_Counting(binary, progress) if progress else binary)
            for snap in parsers.iter_parse(text, source=name, os=os_name, skipped=skipped, prefer=hint,
                                           warn=lambda m, n=name: error(f"{n}: {m}"),
                                           evidence=held.append):
                found += len(held)
                yield from held
                held.clear()
                count += 1
                yield snap
            found += len(held)
            yield from held
    except ParseError as exc:
        error(f"{name}: {exc}")
        explained = True
    except (OSError, UnicodeError) as exc:
        error(f"{name}: cannot read: {exc}")
        explained = True
    if (count or found) and skipped:
        error(f"{name}: skipped {len(skipped)} block(s) of text that no parser reads "
              f"(lines {', '.join(map(str, skipped[:5]))}{', ...' if len(skipped) > 5 else ''})")
    if not count and not found and not explained:
        why = (f" ({len(skipped)} block(s) of text with numbers matched no parser; "
               f"use --os to force one)" if skipped else " (empty, or no text with numbers)")
        error(f"{name}: no netstat IP statistics found{why}")


# --- worker processes -------------------------------------------------------------------------

BIG = 16 * 2 ** 20       # a file this big is read in the main process, streamed: a worker would hold all its snapshots
BATCH_FILES, BATCH_BYTES = 32, 2 * 2 ** 20      # small files go to a worker this many at a time
AHEAD = 4                # batches handed out ahead of the output, per worker: memory stays bounded


class _Workers:
    """Dumps read by worker processes, handed back in input order.

    Consecutive small files go out in rounds (at most BATCH_FILES a worker, fewer when
    there are few files, so that every worker gets some), each split into one batch per
    worker by the files' look (`_Route`): files that look alike go to the same worker,
    which learns their shape once (each worker learning every shape cost each about what
    one process spends reading them all). For each file a worker returns what reading it
    in this process would have given: its snapshots and error lines in the order they came.
    stdin and files of BIG bytes or more are read here, streamed, in their turn. Each
    worker keeps the parsers' run-wide caches (learnt shapes, detection) for the files it
    reads. At most AHEAD rounds are out ahead of the file being printed; while the dumps
    are still being found (nothing is printed before the walk ends), rounds go out as
    they are made, up to WALKING_AHEAD rounds holding at most the bytes AHEAD full rounds
    may hold: the workers start on the first files while the walk goes on."""

    @classmethod
    def start(cls, dumps: Iterator[Input], os_name: Optional[str], prefer: Optional[str], jobs: int,
              encode: Optional[Callable] = None, evidence: bool = False) -> Optional[_Workers]:
        """Workers for the dumps `dumps` yields, run to its end (None when there are fewer
        than two dumps, or no small file: the main process reads them all)."""
        first: List[Input] = []
        enough = BATCH_FILES * AHEAD * jobs     # dumps enough to know a round's size (that of all of them)
        for inp in dumps:
            first.append(inp)
            if len(first) >= enough:
                break
        if len(first) < 2:
            return None
        most = max(1, min(BATCH_FILES, len(first) // (AHEAD * jobs)))
        rounds = _batches(chain(first, dumps), prefer, most * jobs, BATCH_BYTES * jobs)
        todo: deque = deque()
        files = 0
        for made in rounds:                    # files enough for every worker (or all there are)
            todo.append(made)
            files += len(made[0])
            if files >= jobs:
                break
        if not todo:
            return None
        workers = cls(os_name, encode, min(jobs, files), todo, evidence)
        try:
            for made in rounds:                # the rest of the walk
                workers.todo.append(made)
                workers._send(walking=True)
        except BaseException:
            workers.close()
            raise
        workers._send()
        return workers

    def __init__(self, os_name: Optional[str], encode: Optional[Callable], workers: int, todo: deque,
                 evidence: bool = False):
        import multiprocessing
        self.rounds: deque = deque()         # (its first file, [([(name, bytes) of a batch], pending result) a worker], bytes)
        self.todo = todo                     # (round, looks) not yet sent
        self.os_name = os_name
        self.encode = encode
        self.evidence = evidence
        self.results: dict = {}
        self.held = 0                        # bytes of the rounds out
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self.route = _Route(workers)
        self.pools: list = []
        # one pool of one process per worker: a batch goes to the worker chosen for it
        self.pools = [context.Pool(1, initializer=_worker_start) for _ in range(workers)]
        self.most_bytes = AHEAD * BATCH_BYTES * workers
        self._send(walking=True)

    def _send(self, walking: bool = False) -> None:
        window = WALKING_AHEAD if walking else AHEAD
        while self.todo and len(self.rounds) < window:
            batch, looks = self.todo[0]
            held = sum(item[2] for item in batch)
            if walking and self.rounds and self.held + held > self.most_bytes:
                break
            self.todo.popleft()
            parts = []
            for worker, part in enumerate(self.route.split(batch, looks)):
                if part:
                    parts.append(([(name, nbytes) for name, _, nbytes, _ in part],
                                  self.pools[worker].apply_async(_read_batch, (part, self.os_name, self.encode,
                                                                                self.evidence))))
            self.rounds.append((batch[0][0], parts, held))
            self.held += held

    def result(self, inp: Input):
        """(events, bytes) a worker read of this input, or None when it is read here."""
        name = inp.path
        if name in self.results:
            return self.results.pop(name)
        if not self.rounds or self.rounds[0][0] != name:
            return None
        _, parts, held = self.rounds.popleft()
        self.held -= held
        for files, pending in parts:
            for (each, nbytes), events in zip(files, pending.get()):
                self.results[each] = (events, nbytes)
        self._send()
        return self.results.pop(name)

    def close(self) -> None:
        for pool in self.pools:
            pool.terminate()
        for pool in self.pools:
            pool.join()
        self.pools = []


WALKING_AHEAD = 64       # rounds out at most while the walk goes on (see _Workers)


LOOK = HEAD              # bytes of a file's head that say which worker reads it (a quarter of it, digits and blanks aside)
SLACK = 1.25             # a worker may get this much more than its share of a round's work
FILE_COST = 4096         # a file's work, in bytes read, besides its size (opening it, its snapshot's JSON)


class _Route:
    """Which worker reads each file of a round: the one that read a file of the same look
    (its head, numbers and the blanks that align them aside: one shape, mostly) before -- it has learnt the
    shape --, unless that would give it more than SLACK times its share of the round's
    work (bytes, and FILE_COST a file); else the one with the least work in the round
    (which learns that look too)."""

    def __init__(self, workers: int):
        self.workers = workers
        self.known: dict = {}            # look -> the workers that read it

    def split(self, batch: List[tuple], looks: Optional[List[bytes]] = None) -> List[List[tuple]]:
        """`looks`: each file's _look, when known (else read here)."""
        parts: List[List[tuple]] = [[] for _ in range(self.workers)]
        load = [0] * self.workers
        room = SLACK * sum(item[2] + FILE_COST for item in batch) / self.workers
        for i, item in enumerate(batch):
            size = item[2] + FILE_COST
            look = looks[i] if looks is not None else _look(item[0])
            known = self.known.setdefault(look, [])
            worker = next((w for w in known if load[w] + size <= room), None)
            if worker is None:
                worker = min(range(self.workers), key=load.__getitem__)
                if worker not in known:
                    known.append(worker)
            parts[worker].append(item)
            load[worker] += size
        return parts


_NUMBERS = b"0123456789 \t"


def _look(name: str, head: Optional[bytes] = None):
    """A file's first LOOK bytes, digits and blanks aside, cut to LOOK // 4 (b"" when it cannot
    be read: the worker says why); `head`: its first bytes as the walk read them, if it did."""
    if head is None:
        try:
            head = read_head(name, LOOK)
        except OSError:
            return b""
    return head[:LOOK].translate(None, _NUMBERS)[:LOOK // 4]


def _batches(dumps: Iterable[Input], prefer: Optional[str], most: int,
             most_bytes: int = BATCH_BYTES) -> Iterator[Tuple[List[tuple], List[bytes]]]:
    """Runs of small files: (name, OS hint, bytes, case) of at most `most` files or `most_bytes`,
    with each file's _look."""
    batch: List[tuple] = []
    looks: List[bytes] = []
    held = 0
    seen = set()
    for inp in dumps:
        name = inp.path
        nbytes = inp.size
        if nbytes < 0:
            try:
                nbytes = -1 if name == "-" else os.stat(name).st_size
            except OSError:
                nbytes = 0            # the worker writes the error line, in its turn
        if nbytes < 0 or nbytes >= BIG or name in seen:   # a name twice: read here, each time
            if batch:
                yield batch, looks
            batch, looks, held = [], [], 0
            continue
        seen.add(name)
        batch.append((name, _hint(inp, prefer), nbytes, inp.case))
        looks.append(_look(name, inp.head))
        held += nbytes
        if len(batch) >= most or held >= most_bytes:
            yield batch, looks
            batch, looks, held = [], [], 0
    if batch:
        yield batch, looks


def _worker_start() -> None:
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the main process stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # A forked worker holds a copy of what the main process had not yet flushed; it writes
    # nothing itself, so its streams go nowhere (a worker's exit must never print them again).
    sys.stdout = sys.stderr = open(os.devnull, "w")


def _read_batch(batch, os_name: Optional[str], encode: Optional[Callable] = None, evidence: bool = False):
    """In a worker: for each file, [snapshot, evidence or error line, ...] in the order they
    came; a snapshot as the tuple of its fields (unpickled in half the time of the object, in
    the main process, which reads every worker's results), evidence as it is, or with
    `encode`, either as the 1-tuple (encode(item, case),)."""
    done = []
    names = [f.name for f in fields(Snapshot)]
    for name, hint, _, case in batch:
        events: list = []
        if encode is None:
            for snap in _file(name, os_name, hint, events.append):
                events.append(snap if snap.__class__ is Evidence else tuple([getattr(snap, n) for n in names]))
        else:
            for snap in _file(name, os_name, hint, events.append):
                if snap.__class__ is not Evidence or evidence:
                    events.append((encode(snap, case),))
                else:
                    events.append(snap)
        done.append(events)
    return done


def _replay(events, nbytes: int, error: Callable[[str], None],
            progress: Optional[Callable[[int], None]]) -> Iterator[Snapshot]:
    if progress and nbytes:
        progress(nbytes)
    for event in events:
        if type(event) is str:
            error(event)
        elif event.__class__ is Evidence:
            yield event                 # read() leaves it out unless the caller wants evidence
        elif len(event) == 1:
            yield Encoded(event[0])
        else:
            yield Snapshot(*event)


class _Counting(io.RawIOBase):
    """A binary file that reports how many bytes have been read, for a progress bar."""

    def __init__(self, raw, report: Callable[[int], None]):
        super().__init__()
        self._raw, self._report = raw, report

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._raw.readinto(buffer)
        if n:
            self._report(n)
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()
