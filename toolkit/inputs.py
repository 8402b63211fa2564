"""Reading dump files into snapshots, one error line per bad input.

Which files to read, and which host each belongs to, is the host model's business
(toolkit/hosts.py: walk, identify, build); this module only turns files into snapshots,
in one process or, for many files, with worker processes (`jobs`).
"""
from __future__ import annotations

import io
import os
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Callable, Iterator, List, Optional, Tuple

import parsers
from parsers.model import ParseError, Snapshot
from parsers.text import open_text
from toolkit.hostfile import HostFacts
from toolkit.hosts import Input
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


def read(inputs: List[Input], os_name: Optional[str], outcome: Outcome, error: Callable[[str], None],
         progress: Optional[Callable[[int], None]] = None,
         prefer: Optional[str] = None, jobs: int = 1,
         stdin: Optional[IO[bytes]] = None,
         encode: Optional[Callable[[Snapshot, Optional[HostFacts]], str]] = None) -> Iterator[Tuple[Snapshot, Input]]:
    """(snapshot, its input) from every dump in order; a bad one gets one error line and is skipped.

    `os_name` forces a parser; otherwise the OS is detected, preferring the case's OS (else
    `prefer`) where the text fits it as well. `jobs` > 1 reads files in that many worker
    processes: the same snapshots and error lines, in the same order (see `_Workers`),
    once this process has read the first files itself until they teach no new shape
    (`_Warm`): the workers, forked then, start with its shapes and detections.
    The input `-` is `stdin` (the process's standard input when None).
    `encode(snapshot, case)`: what the caller makes of each snapshot (its JSON line), made
    by the worker that read it; the main process gets an output.Encoded of it instead of the
    snapshot (not sent, unpickled nor encoded here: with two workers on two cores, this
    process was their bottleneck). Snapshots read here are yielded as they are.
    """
    dumps = [inp for inp in inputs if inp.kind == "dump"]
    workers = None
    warm = _Warm(len(dumps)) if jobs > 1 and len(dumps) > 1 else None
    try:
        for at, inp in enumerate(dumps):
            if warm is not None and warm.done(at):
                warm = None
                workers = _Workers(dumps[at:], os_name, prefer, jobs, encode)
            name = inp.path
            count = 0
            done = workers.result(inp) if workers else None
            if done is None:
                snaps = _file(name, os_name, _hint(inp, prefer), error, progress, stdin)
            else:
                snaps = _replay(*done, error, progress)
            for snap in snaps:
                count += 1
                yield snap, inp
            if count:
                outcome.parsed.append(name)
                outcome.snapshots += count
            elif name not in outcome.failed:
                outcome.failed.append(name)
    finally:
        if workers:
            workers.close()


def _hint(inp: Input, prefer: Optional[str]) -> Optional[str]:
    return (inp.case.os if inp.case is not None else None) or prefer


def _file(name: str, os_name: Optional[str], hint: Optional[str], error: Callable[[str], None],
          progress: Optional[Callable[[int], None]] = None,
          stdin: Optional[IO[bytes]] = None) -> Iterator[Snapshot]:
    """The snapshots of one dump; every problem is one line on `error`, naming the file."""
    count, explained, skipped = 0, False, []
    try:
        binary = (stdin or sys.stdin.buffer) if name == "-" else open(name, "rb")
    except OSError as exc:
        error(f"{name}: cannot read: {exc.strerror or exc}")
        return
    try:
        with binary:
            text = open_text(_Counting(binary, progress) if progress else binary)
            for snap in parsers.iter_parse(text, source=name, os=os_name, skipped=skipped, prefer=hint,
                                           warn=lambda m, n=name: error(f"{n}: {m}")):
                count += 1
                yield snap
    except ParseError as exc:
        error(f"{name}: {exc}")
        explained = True
    except (OSError, UnicodeError) as exc:
        error(f"{name}: cannot read: {exc}")
        explained = True
    if count and skipped:
        error(f"{name}: skipped {len(skipped)} block(s) of text that no parser reads "
              f"(lines {', '.join(map(str, skipped[:5]))}{', ...' if len(skipped) > 5 else ''})")
    if not count and not explained:
        why = (f" ({len(skipped)} block(s) of text with numbers matched no parser; "
               f"use --os to force one)" if skipped else " (empty, or no text with numbers)")
        error(f"{name}: no netstat IP statistics found{why}")


# --- worker processes -------------------------------------------------------------------------

WARM_QUIET = 32          # files in a row that taught nothing new: the main process has learnt what repeats
WARM_IDLE = 4 * WARM_QUIET      # files in a row that learnt no shape: few repeat, or not soon


class _Warm:
    """When the main process stops reading files itself and forks the workers. Shapes are
    learnt the second time they are read (parsers/shapes.py); each worker would learn every
    one again (~10 ms a shape) and read its first two sightings in full. So the main process
    reads files until WARM_QUIET in a row taught it nothing -- no shape learnt and none seen
    for the first time (a fleet's directory shows each shape once before it shows any
    twice) --, or WARM_IDLE in a row learnt no shape, or an eighth of them are read; the
    output is the same whoever reads a file (the fast path gives what the full path gives)."""

    def __init__(self, files: int):
        self.limit = max(1, files // 8)
        self.last = self._state()
        self.quiet = self.idle = 0

    @staticmethod
    def _state():
        shapes = parsers.SHAPES
        return (shapes.order[-1] if shapes.order else None), len(shapes.seen)

    def done(self, read: int) -> bool:
        """True when the workers should take the files from index `read` on."""
        state = self._state()
        learnt = state[0] is not self.last[0]
        self.idle = 0 if learnt else self.idle + 1
        self.quiet = 0 if learnt or state[1] != self.last[1] else self.quiet + 1
        self.last = state
        return read > 0 and (self.quiet > WARM_QUIET or self.idle > WARM_IDLE or read >= self.limit)


BIG = 16 * 2 ** 20       # a file this big is read in the main process, streamed: a worker would hold all its snapshots
BATCH_FILES, BATCH_BYTES = 32, 2 * 2 ** 20      # small files go to a worker this many at a time
AHEAD = 4                # batches handed out ahead of the output, per worker: memory stays bounded


class _Workers:
    """Dumps read by worker processes, handed back in input order.

    Consecutive small files go out in batches (at most BATCH_FILES, fewer when there are
    few files, so that every worker gets some); for each file a worker returns what reading
    it in this process would have given: its snapshots and error lines in the order they
    came. stdin and files of BIG bytes or more are
    read here, streamed, in their turn. Each worker keeps the parsers' run-wide caches
    (learnt shapes, detection) for the files it reads. At most AHEAD batches per worker are
    out ahead of the file being printed."""

    def __init__(self, dumps: List[Input], os_name: Optional[str], prefer: Optional[str], jobs: int,
                 encode: Optional[Callable] = None):
        self.batches: deque = deque()        # ([(name, bytes) of each file in the batch], pending result)
        self.todo: deque = deque(_batches(dumps, prefer, max(1, min(BATCH_FILES, len(dumps) // (AHEAD * jobs)))))
        self.os_name = os_name
        self.encode = encode
        self.results: dict = {}
        self.pool = None
        self.window = AHEAD * jobs
        if self.todo:
            import multiprocessing
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            self.pool = context.Pool(min(jobs, len(self.todo)), initializer=_worker_start)
            self._send()

    def _send(self) -> None:
        while self.todo and len(self.batches) < self.window:
            batch = self.todo.popleft()
            self.batches.append(([(name, nbytes) for name, _, nbytes, _ in batch],
                                 self.pool.apply_async(_read_batch, (batch, self.os_name, self.encode))))

    def result(self, inp: Input):
        """(events, bytes) a worker read of this input, or None when it is read here."""
        name = inp.path
        if name in self.results:
            return self.results.pop(name)
        if not self.batches:
            return None
        files, pending = self.batches[0]
        first_name = files[0][0]
        if first_name != name:
            return None
        self.batches.popleft()
        for (each, nbytes), events in zip(files, pending.get()):
            self.results[each] = (events, nbytes)
        self._send()
        return self.results.pop(name)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


def _batches(dumps: List[Input], prefer: Optional[str], most: int) -> Iterator[List[tuple]]:
    """Runs of small files: (name, OS hint, bytes, case) of at most `most` files or BATCH_BYTES."""
    batch, held = [], 0
    seen = set()
    for inp in dumps:
        name = inp.path
        try:
            nbytes = -1 if name == "-" else os.stat(name).st_size
        except OSError:
            nbytes = 0            # the worker writes the error line, in its turn
        if nbytes < 0 or nbytes >= BIG or name in seen:   # a name twice: read here, each time
            if batch:
                yield batch
            batch, held = [], 0
            continue
        seen.add(name)
        batch.append((name, _hint(inp, prefer), nbytes, inp.case))
        held += nbytes
        if len(batch) >= most or held >= BATCH_BYTES:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def _worker_start() -> None:
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the main process stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # A forked worker holds a copy of what the main process had not yet flushed; it writes
    # nothing itself, so its streams go nowhere (a worker's exit must never print them again).
    sys.stdout = sys.stderr = open(os.devnull, "w")


_FIELDS = None


def _fields() -> Tuple[str, ...]:
    global _FIELDS
    if _FIELDS is None:
        import dataclasses
        _FIELDS = tuple(f.name for f in dataclasses.fields(Snapshot))
    return _FIELDS


def _read_batch(batch, os_name: Optional[str], encode: Optional[Callable] = None):
    """In a worker: for each file, [snapshot or error line, ...] in the order they came; a
    snapshot as the tuple of its fields (unpickled in half the time of the object, in the
    main process, which reads every worker's results), or with `encode`, as the 1-tuple
    (encode(snapshot, case),)."""
    done = []
    fields = _fields()
    for name, hint, _, case in batch:
        events: list = []
        if encode is None:
            for snap in _file(name, os_name, hint, events.append):
                events.append(tuple([getattr(snap, f) for f in fields]))
        else:
            for snap in _file(name, os_name, hint, events.append):
                events.append((encode(snap, case),))
        done.append(events)
    return done


def _replay(events, nbytes: int, error: Callable[[str], None],
            progress: Optional[Callable[[int], None]]) -> Iterator[Snapshot]:
    if progress and nbytes:
        progress(nbytes)
    for event in events:
        if type(event) is str:
            error(event)
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
