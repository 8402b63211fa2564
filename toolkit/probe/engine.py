"""Every target of a run in one loop: one capture, one set of raw sockets, no thread per target.

Each target is a `Job` whose life is one generator (`Job.script`): resolve, route, MSS
connections, the PMTU search (toolkit.probe.pmtu), then the optional trace, clamp
location and PMTUD check. The generator yields requests — send this round of probes,
sleep until, wait for the MSS connections, wait for a name lookup — and the engine
serves them all from one `selectors` loop:

- probes leave through each target's own pace (a token bucket, `rate` a second, bursts
  of `burst`, slowed down when probes that should pass go missing and sped up again when
  a round comes back whole), under one ceiling for the whole run (`total_rate`);
- replies are read from the capture with the kernel's receive timestamp; a round is
  closed when every probe is answered, or when its wait has passed *and* the capture has
  been read up to that moment (no reply can be sitting unread in a socket buffer while we
  call its probe silent, however busy the machine);
- many targets cost about what one does: their waits overlap instead of adding up.
"""
from __future__ import annotations

import collections
import contextlib
import heapq
import resource
import selectors
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Sequence, Tuple

from toolkit.probe import sockets as so
from toolkit.probe.pmtu import Interrupted, Round, Sleep
from toolkit.probe.route import sockaddr

SO_SNDBUFFORCE = 32


class TimeUp(Exception):
    """Thrown into a target's script when its time limit (`JobBase.limit`) has passed."""


class Pace:
    """One target's token bucket: `rate` probes a second, bursts of `burst`. Adaptive:
    `slower()` halves the rate (down to an eighth of the cap) when probes that should have
    passed went missing — a router's or the target's ICMP budget, or a congested link —
    and `faster()` doubles it back towards the cap once a round came back whole."""

    def __init__(self, rate: float, burst: float):
        self.cap = self.rate = float(rate)
        self.burst = float(burst)
        self.tokens = float(burst)
        self.last: Optional[float] = None

    def _refill(self, now: float) -> None:
        if self.last is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now

    def wait(self, now: float) -> float:
        """0 when a probe may leave now, else how many seconds until it may."""
        self._refill(now)
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def take(self) -> None:
        self.tokens -= 1

    def slower(self) -> None:
        self.rate = max(self.cap / 8, self.rate / 2)

    def faster(self) -> None:
        self.rate = min(self.cap, self.rate * 2)


@dataclass
class WaitChecks:
    """Resume when every MSS check has left `state` behind (connecting -> connected, ...)."""
    checks: list
    past: str


class Future:
    """A name lookup running in a thread of its own (getaddrinfo blocks); at most 32 at once."""

    lookups = threading.BoundedSemaphore(32)

    def __init__(self, fn, *args) -> None:
        self._value = self._error = None
        self._done = threading.Event()
        threading.Thread(target=self._run, args=(fn, args), daemon=True, name="mssdiag-resolve").start()

    def _run(self, fn, args) -> None:
        try:
            with self.lookups:
                self._value = fn(*args)
        except BaseException as exc:       # handed over to the script that asked
            self._error = exc
        self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def result(self):
        if self._error is not None:
            raise self._error
        return self._value


@dataclass
class WaitFuture:
    future: Future


@dataclass
class Until:
    """Resume when `ready()` is true (checked whenever something arrives for this target)
    or at `deadline` (time.time() clock); resumes with ready()'s value."""
    ready: Callable[[], Any]
    deadline: float


@dataclass
class SendRaw:
    """Put these whole IP packets on the wire now (raw socket), paced like probes;
    resumes with the send times."""
    family: str
    dst: str
    packets: List[bytes]
    mark: bool = False


PAST = {"connecting": ("connected", "talking", "catching-up", "done"),
        "talking": ("catching-up", "done"), "catching-up": ("done",)}


class RawIO:
    """The raw side of a run: raw IP sockets to send with (IP_PMTUDISC_PROBE: DF, sized
    against the interface, not a cached path MTU) and the capture. Opening it is the one
    check whether raw probing is allowed here."""

    def __init__(self) -> None:
        self.socks: Dict[Tuple[str, bool], socket.socket] = {}
        self.sock("ipv4")               # without CAP_NET_RAW this raises before scapy is loaded
        from toolkit.probe.capture import Capture
        try:
            self.capture = Capture()
        except BaseException:
            for s in self.socks.values():
                s.close()
            raise

    def sock(self, family: str, mark: bool = False) -> socket.socket:
        s = self.socks.get((family, mark))
        if s is None:
            af = socket.AF_INET6 if family == "ipv6" else socket.AF_INET
            s = socket.socket(af, socket.SOCK_RAW, socket.IPPROTO_RAW)
            if family == "ipv6":
                s.setsockopt(socket.IPPROTO_IPV6, so.IPV6_MTU_DISCOVER, so.IPV6_PMTUDISC_PROBE)
            else:
                s.setsockopt(socket.IPPROTO_IP, so.IP_MTU_DISCOVER, so.IP_PMTUDISC_PROBE)
            try:
                s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 4 << 20)
            except OSError:
                pass
            if mark:
                from toolkit.probe.pmtud import MARK
                s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, MARK)
            self.socks[(family, mark)] = s
        return s

    def send(self, family: str, data: bytes, dst: str, mark: bool = False) -> None:
        self.sock(family, mark).sendto(data, sockaddr(dst, 0))

    def close(self) -> None:
        for s in self.socks.values():
            s.close()
        self.socks.clear()
        self.capture.close()


class Engine:
    def __init__(self, opts, raw: Optional[RawIO], stop):
        self.opts = opts
        self.raw = raw
        self.capture = raw.capture if raw is not None else None
        self.stop = stop
        self.sel = selectors.DefaultSelector()
        self.timers: List[Tuple[float, int, Any]] = []
        self._seq = 0
        self.dirty: Dict[int, Any] = {}
        self.sending: Deque[Any] = collections.deque()
        self.total = Pace(opts.total_rate, opts.total_burst)
        self.active_addresses: Dict[str, Any] = {}
        self.cleanups: List[Callable[[], None]] = []
        if self.capture is not None:
            self.sel.register(self.capture, selectors.EVENT_READ, self._read_capture)
        _raise_fd_limit()

    # ---- plumbing -----------------------------------------------------------------------
    def at(self, when: float, job) -> None:
        self._seq += 1
        heapq.heappush(self.timers, (when, self._seq, job))

    def poke(self, job) -> None:
        self.dirty[id(job)] = job

    def resolve_later(self, fn, *args) -> Future:
        return Future(fn, *args)

    def _read_capture(self, _events) -> None:
        self.capture.drain()

    def watch_fd(self, fileobj, events: int, callback) -> None:
        try:
            self.sel.modify(fileobj, events, callback)
        except (KeyError, ValueError):
            self.sel.register(fileobj, events, callback)

    def unwatch_fd(self, fileobj) -> None:
        try:
            self.sel.unregister(fileobj)
        except (KeyError, ValueError, OSError):
            pass

    # ---- the loop -------------------------------------------------------------------------
    def run(self, jobs: Sequence[Any], progress=None) -> Iterator[Any]:
        """Drive every job; yield their results in the order of `jobs`."""
        waiting: Deque[Any] = collections.deque(jobs)
        active: Dict[int, Any] = {}
        limit = max(1, self.opts.workers)
        out = 0
        try:
            while out < len(jobs):
                if self.stop.is_set():
                    raise Interrupted()
                while waiting and len(active) < limit:
                    job = waiting.popleft()
                    active[id(job)] = job
                    job.begin(self)
                now = time.time()
                self._send(now)
                # timers that are due, and jobs something arrived for
                while self.timers and self.timers[0][0] <= now:
                    _, _, job = heapq.heappop(self.timers)
                    self.dirty[id(job)] = job
                for job in list(self.dirty.values()):
                    self.dirty.pop(id(job), None)
                    if not job.finished:
                        job.step(now)
                # probes of the rounds those steps started go out now, not after the next sleep
                self._send(time.time())
                for key in [k for k, j in active.items() if j.finished]:
                    del active[key]
                while out < len(jobs) and jobs[out].finished:
                    res = jobs[out].result
                    out += 1
                    if progress:
                        progress(res)
                    yield res
                if out >= len(jobs):
                    break
                if self.dirty:
                    timeout = 0.0
                else:
                    nxt = self.timers[0][0] if self.timers else now + 0.05
                    if self.sending:
                        nxt = min(nxt, self._next_send)
                    timeout = min(0.05, max(0.0, nxt - time.time()))
                self.sel.select(timeout)
                # whatever arrived up to this moment is read before any deadline is judged
                for key, events in self.sel.select(0):
                    key.data(events)
        finally:
            self.close(list(active.values()))

    def _send(self, now: float) -> None:
        self._next_send = now + 1.0
        rounds = len(self.sending)
        while self.sending and rounds > 0:
            rounds -= 1
            job = self.sending[0]
            while job.queue:
                wait = max(job.pace.wait(now), self.total.wait(now))
                if wait > 0:
                    self._next_send = min(self._next_send, now + wait)
                    break
                job.send_one(now)
                job.pace.take()
                self.total.take()
                now = time.time()
            self.sending.popleft()
            if job.queue:
                self.sending.append(job)
            else:
                self.poke(job)

    def close(self, jobs) -> None:
        for job in jobs:
            job.abandon()
        for fn in reversed(self.cleanups):
            try:
                fn()
            except Exception:
                pass
        self.cleanups.clear()
        self.sel.close()


def _raise_fd_limit() -> None:
    """A thousand targets without raw sockets are a thousand UDP sockets."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = hard if hard != resource.RLIM_INFINITY else 65536
        if soft != resource.RLIM_INFINITY and soft < min(want, 65536):
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, 65536), hard))
    except (ValueError, OSError):
        pass


class JobBase:
    """A target's life as a generator of requests (see the module doc)."""

    def __init__(self) -> None:
        self.finished = False
        self.result = None
        self.queue: Deque[Tuple[int, str, int, int]] = collections.deque()
        self.req = None
        self.gen = None
        self.search = None
        self.last_sent: Optional[float] = None
        self.round_keys: List[int] = []
        self.engine: Optional[Engine] = None
        self.pace: Optional[Pace] = None
        self.raw_sends: Deque[bytes] = collections.deque()
        self.raw_times: List[float] = []
        self.deadline = float("inf")
        self.expired = False

    # subclasses: script() (the generator), sender(method, size, key, ttl), abandon(), checks
    def begin(self, engine: Engine) -> None:
        self.engine = engine
        self.pace = Pace(engine.opts.rate, engine.opts.burst)
        self.gen = self.script()
        self._advance(None)

    def limit(self, seconds: float) -> None:
        """From now on the script has `seconds` to end (then `expire`)."""
        self.deadline = time.time() + seconds
        self.engine.at(self.deadline, self)

    def expire(self) -> None:
        """The time limit passed: nothing more of this target's is sent, and its script
        gets a TimeUp where it waits (it ends with what it has)."""
        self.expired = True
        self.queue.clear()
        self.raw_sends.clear()
        with contextlib.suppress(ValueError):
            self.engine.sending.remove(self)
        self._advance(None, TimeUp())

    def _advance(self, value, exc: Optional[BaseException] = None) -> None:
        while True:
            try:
                req = self.gen.throw(exc) if exc is not None else self.gen.send(value)
            except StopIteration as done:
                self.finish(done.value)
                return
            exc = None
            self.req = req
            value = self._start(req)
            if value is _PENDING:
                return

    def _start(self, req):
        e = self.engine
        if isinstance(req, Round):
            self.queue.extend(req.probes)
            self.round_keys = [k for k, *_ in req.probes]
            self.last_sent = None
            if self.queue:
                e.sending.append(self)
            else:
                e.poke(self)
            return _PENDING
        if isinstance(req, SendRaw):
            self.queue.extend(("raw", req) for _ in req.packets)   # paced with the probes
            self.raw_sends = collections.deque(req.packets)
            self.raw_times = []
            e.sending.append(self)
            return _PENDING
        if isinstance(req, (Sleep, WaitChecks, WaitFuture, Until)):
            e.poke(self)
            return _PENDING
        raise TypeError(f"unknown request {req!r}")

    def send_one(self, now: float) -> None:
        item = self.queue.popleft()
        if item[0] == "raw":
            data = self.raw_sends.popleft()
            req = item[1]
            at = time.time()
            try:
                self.engine.raw.send(req.family, data, req.dst, mark=req.mark)
            except OSError:
                at = None
            self.raw_times.append(at)
            return
        key, method, size, ttl = item
        at = time.time()
        try:
            self.sender(method, size, key, ttl)
        except OSError as exc:
            self.search.on_refused(key, method, size, ttl, exc)
            return
        except ValueError as exc:      # a size below the headers: refused like the stack would
            self.search.on_refused(key, method, size, ttl, OSError(0, str(exc)))
            return
        self.search.on_sent(key, method, size, ttl, at)
        self.last_sent = at

    def step(self, now: float) -> None:
        if now >= self.deadline and not self.expired:
            self.expire()
            return
        self.tick_checks(now)
        req = self.req
        if self.queue:
            return                      # still sending; the sender pokes us when done
        if isinstance(req, Round):
            s = self.search
            if self.last_sent is None or s.round_done():
                self._round_over()
                return
            deadline = self.last_sent + s.wait_s(req.cap)
            if now >= deadline:
                self._round_over()
            else:
                self.engine.at(deadline, self)
            return
        if isinstance(req, SendRaw):
            self._advance(list(self.raw_times))
            return
        if isinstance(req, Sleep):
            if now >= req.until or (req.linger and self.search.v.unreachable):
                self._advance(None)
            else:
                self.engine.at(min(req.until, now + 0.1), self)
            return
        if isinstance(req, WaitChecks):
            if all(c.state in PAST[req.past] for c in req.checks):
                self._advance(None)
            return
        if isinstance(req, WaitFuture):
            if req.future.done():
                try:
                    value = req.future.result()
                except Exception as exc:         # handed to the script, which names it
                    self._advance(None, exc)
                    return
                self._advance(value)
            else:
                self.engine.at(now + 0.005, self)
            return
        if isinstance(req, Until):
            ready = req.ready()
            if ready or now >= req.deadline:
                self._advance(ready)
            else:
                self.engine.at(req.deadline, self)

    def _round_over(self) -> None:
        s = self.search
        passing = max((size for size, o in s.outcomes.items() if o.passed), default=0)
        # probes of sizes known to pass that went unanswered (not the fallback probes of a
        # first round, which are not waited for once echo answered)
        lost = any(not s.current.get(k) for k in self.round_keys
                   if k in s.sent and s.sent[k].ttl == 64 and s.sent[k].size <= passing
                   and not (s.fallback and s.sent[k].method != "icmp"))
        if lost:
            self.pace.slower()
        else:
            self.pace.faster()
        self._advance(None)

    def tick_checks(self, now: float) -> None:
        """Hook: run the MSS checks' timers, whatever the script waits for."""

    def finish(self, result) -> None:
        self.finished = True
        self.result = result

    def abandon(self) -> None:
        """The run ends before this job did (an interrupt): release what it holds."""


_PENDING = object()
