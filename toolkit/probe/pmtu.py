"""Path MTU search with DF probes, many in flight at once.

The search keeps the largest size that got through (`lo`) and the smallest that did not
(`hi`) and shrinks the gap a round at a time:

- round 1 sends the local MTU, the RFC 1191 plateaus below it and a small probe all at
  once, so a clean path or a router that reports its next-hop MTU settles in one round;
- an ICMP "fragmentation needed" / "packet too big" with next-hop MTU M for a probe
  means nothing above M passes there: hi <= M + 1, and M itself is probed next; a value
  of 0 or a bogus one (old routers) only says the probe was too big, and the RFC 1191
  plateau below the probe is tried next;
- without ICMP the gap is cut into up to 9 parts per round (8 probes in flight);
- a size that vanished while a larger one passed was lost, not too big;
- every round ends with a control probe of a size known to pass: silence counts as
  evidence only from rounds whose control came back (the target was answering then, so
  a target that rate-limits its own answers, or a burst of loss, is not taken for a size
  limit);
- silence is weighed against the loss seen on sizes that pass: a size fails on silence
  alone only when losing every probe of it by chance is unlikely (below 1 %, and below
  1 in 10,000 for a size a router vouched for by reporting a next-hop MTU at or above it,
  so loss never pulls the answer below a reported MTU);
- silence also has to last: a router that rate-limits its ICMP sends nothing for a while,
  then answers. Before calling a black hole the size just above the answer is asked again
  `icmp_wait` seconds after the silence began (1 s by default), and 10 s when the evidence
  says the path's routers do send "fragmentation needed" (one said "too big" without a
  usable MTU, the kernel had learned this very PMTU from an ICMP, another target's router
  reported it in this run). Only silence of 10 s or more gives a high-confidence black
  hole; a router on the path known to send such ICMP is rate-limiting, not a black hole;
- TTL-limited probes of the failing size find the last router that still receives them.
"""
from __future__ import annotations

import math
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

from toolkit.probe.reply import Reply
from toolkit.probe.result import HIGH_SILENCE

PLATEAUS = (65535, 32000, 17914, 8166, 4352, 2002, 1492, 1006, 508, 296, 68)   # RFC 1191 table 7-1
FIRST_ROUND = (65535, 32000, 17914, 8166, 4352, 2002, 1500, 1492, 1480, 1400, 1280, 1006, 576)
MIN_MTU = {"ipv4": 68, "ipv6": 1280}
SMALL = {"ipv4": 576, "ipv6": 1280}
MIN_WAIT = 0.05        # s a round waits at least (kernel timestamps: no margin for a busy Python)
SPLIT = 8
MAX_RETESTS = 6
PICK_TRIES = 3          # rounds to find a probe method that the target answers
LINGER = 1.5            # s to wait for late ICMP errors when nothing answered
ICMP_WAIT = 1.0         # s of silence before the last word on a black hole (--icmp-wait)
LONG_WAIT = 10.0        # s of silence when the evidence says the routers do send ICMP
ALPHA = 0.01            # accepted chance that silence at a size was nothing but loss
ALPHA_VOUCHED = 1e-4    # the same for a size at or below a next-hop MTU a router reported


class Interrupted(Exception):
    """The run was asked to stop (SIGINT / SIGTERM) while this search was under way."""


@dataclass
class Round:
    """What a search asks of whoever drives it: send these probes (key, method, size, ttl)
    now, report what comes back (`on_sent`, `on_refused`, `on_reply`), and resume it once
    every probe is answered or `wait_s` has passed since the last one left."""
    probes: List[Tuple[int, str, int, int]]
    cap: Optional[float] = None


@dataclass
class Sleep:
    """Resume at `until` (the search's clock), handing over replies meanwhile; with
    `linger`, resume as soon as an unreachable has been heard."""
    until: float
    linger: bool = False


def plateau_below(size: int) -> int:
    for p in PLATEAUS:
        if p < size:
            return p
    return 68


@dataclass
class Sent:
    size: int
    ttl: int
    method: str
    at: float


@dataclass
class Outcome:
    passed: int = 0
    vanished: int = 0
    silent: int = 0           # vanished in a round whose control probe came back
    toobig: List[Tuple[int, str]] = field(default_factory=list)   # (reported mtu, source)
    refused: int = 0          # the local stack would not send it


@dataclass
class Verdict:
    pmtu: Optional[int] = None
    method: Optional[str] = None          # icmp | inferred | local
    black_hole: bool = False
    hop: Optional[str] = None
    confidence: Optional[str] = None
    probe_method: Optional[str] = None    # icmp | udp | tcp
    echo_filtered: bool = False
    probes: int = 0
    rounds: int = 0
    rtt: Optional[float] = None
    reply_ttl: Optional[int] = None
    hop_index: Optional[int] = None       # for a black hole: hops that still receive big probes
    silence_s: Optional[float] = None     # for an inferred verdict: how long the silence above lasted
    rate_limited: Optional[str] = None    # why we believe a router rate-limits its ICMP, if we do
    unreachable: List[Tuple[str, str]] = field(default_factory=list)   # (source, reason) of unreachables
    notes: List[str] = field(default_factory=list)


class Search:
    """One target's PMTU search. `send(method, size, key, ttl)` puts a probe on the wire
    (raising OSError on a local refusal); replies arrive on `replies`.

    `reporters` is shared by every target of a run: router address -> next-hop MTUs it
    reported (0 for a "too big" without a usable MTU), so silence behind a router that
    answered another target is not taken for a black hole.

    `methods` in order of preference when several answer the first round. TCP comes before
    UDP: a UDP probe's answer is an ICMP port unreachable, which the target rate-limits
    toward one prober (Linux: 6, then 1 a second, whichever of its addresses was probed);
    its RST to a TCP probe is not limited, so many targets on one host all get answers.

    `cached_pmtu` is the path MTU the kernel had learned for the target before the run.
    `stop` ends the search early."""

    def __init__(self, family: str, local_mtu: int, send: Callable[[str, int, int, int], None],
                 replies: "queue.Queue[Reply]", timeout: float = 1.0, tcp_port: Optional[int] = None,
                 methods: Tuple[str, ...] = ("icmp", "tcp", "udp"), icmp_wait: float = ICMP_WAIT,
                 cached_pmtu: Optional[int] = None, reporters: Optional[Dict[str, Set[int]]] = None,
                 stop: Optional[threading.Event] = None, path: Optional[tuple] = None,
                 placements: Optional[dict] = None):
        self.family = family
        self.local_mtu = min(local_mtu, 65535)
        self._send = send
        self.replies = replies
        self.timeout = timeout
        self.tcp_port = tcp_port
        self.methods = tuple(m for m in methods if m != "tcp" or tcp_port)
        self.icmp_wait = icmp_wait
        self.cached_pmtu = cached_pmtu
        self.reporters = reporters if reporters is not None else {}
        self.stop = stop or threading.Event()
        # (interface, gateway) of the route, and the black holes placed in this run by path
        # and distance: routers limit their "time exceeded" per prober (Linux: 6 at once, then
        # 1 a second), so a hundred targets behind one router cannot each place it
        self.path = path
        self.placements = placements if placements is not None else {}
        self.sent: Dict[int, Sent] = {}
        self.key = 0
        self.outcomes: Dict[int, Outcome] = {}
        self.log: List[Tuple[int, float, str, int]] = []   # (size, sent at, pass|toobig|silent, key), full TTL
        self.unsure: Optional[str] = None                # why the answer is a best guess
        self.rtts: List[float] = []
        self.v = Verdict()
        self.ttl_replies: Dict[int, str] = {}
        self.heard = 0            # ICMP errors of any kind seen (the path is alive)
        self.clock = time.monotonic   # the engine uses time.time(), the clock of kernel timestamps
        self.current: Dict[int, List[Reply]] = {}      # the round under way: key -> replies
        self.pending: Set[int] = set()
        self.delays: List[float] = []                    # s from send to any answer (pass or too big)
        self.silent_keys: Dict[int, Tuple[int, bool]] = {}   # key -> (size, counted as silent)
        self.fallback = False     # the round under way is the first: echo and the fallback methods
        self.located: Optional[int] = None        # the size the TTL-limited probes were sent at
        self.located_note: Optional[str] = None

    # ---- sending and collecting -------------------------------------------------
    def _next_key(self) -> int:
        self.key = self.key % 4000 + 1
        return self.key

    def _round(self, probes: List[Tuple[str, int, int]], cap: Optional[float] = None):
        """Send probes (method, size, ttl) together; wait for their answers. Returns key -> replies.
        A generator step: `answers = yield from self._round(...)`."""
        if self.stop.is_set():
            raise Interrupted()
        self.v.rounds += 1
        self.current, self.pending = {}, set()
        yield Round([(self._next_key(), m, s, t) for m, s, t in probes], cap)
        answers, self.current, self.pending = self.current, {}, set()
        return answers

    # ---- what the driver reports ------------------------------------------------------
    def on_sent(self, key: int, method: str, size: int, ttl: int, at: float) -> None:
        self.v.probes += 1
        self.sent[key] = Sent(size, ttl, method, at)
        self.current[key] = []
        self.pending.add(key)

    def on_refused(self, key: int, method: str, size: int, ttl: int, exc: OSError) -> None:
        # the local stack refused (e.g. larger than the interface MTU): a local failure
        self.v.notes.append(f"{method} probe of {size} bytes refused locally: {exc.strerror or exc}")
        if ttl == 64:
            self.outcomes.setdefault(size, Outcome()).refused += 1

    def on_reply(self, r: Reply, at: Optional[float] = None) -> None:
        """A reply about one of this target's probes; `at` is when it arrived (the kernel's
        timestamp when there is one), on the search's clock."""
        at = r.at if r.at is not None else (at if at is not None else self.clock())
        if r.at is None:
            r.at = at
        self._heard(r)
        if r.key not in self.current:
            self._late(r)         # an answer to an earlier round
            return
        self.current[r.key].append(r)
        self.pending.discard(r.key)
        s = self.sent[r.key]
        if r.kind == "toobig":
            self.reporters.setdefault(r.source, set()).add(r.mtu if self._valid(r.mtu or 0, s.size) else 0)
        if r.kind in ("pass", "toobig"):
            self.delays.append(max(0.0, at - s.at))
        if r.kind == "pass":
            self.rtts.append(max(0.0, at - s.at))
            if r.ttl is not None:
                self.v.reply_ttl = r.ttl

    def round_done(self) -> bool:
        if not self.pending:
            return True
        if self.fallback and all(self.sent[k].method != "icmp" for k in self.pending):
            return any(r.kind == "pass" and self.sent[k].method == "icmp"
                       for k, rs in self.current.items() for r in rs)
        return False

    def wait_s(self, cap: Optional[float]) -> float:
        """How long a round waits after its last probe left: the timeout until the target
        answered something, then 4 times the slowest answer seen, the routers' "too big"
        included (at least MIN_WAIT)."""
        base = cap if cap is not None else self.timeout
        if self.rtts:
            base = min(base, max(MIN_WAIT, 4 * max(self.delays) + 0.01))
        return base

    def _late(self, r: Reply) -> None:
        """An answer that came after its round was closed still counts: the size was not
        silent after all (a slow router, a reply stuck behind a busy CPU)."""
        s = self.sent.get(r.key)
        if s is None or s.ttl != 64 or r.kind not in ("pass", "toobig") or r.key not in self.silent_keys:
            return
        size, silent = self.silent_keys.pop(r.key)
        o = self.outcomes.setdefault(size, Outcome())
        o.vanished = max(0, o.vanished - 1)
        if silent:
            o.silent = max(0, o.silent - 1)
            self.log = [e for e in self.log if e[3] != r.key]
        if r.kind == "pass":
            o.passed += 1
            self.log.append((size, s.at, "pass", r.key))
        else:
            o.toobig.append((r.mtu or 0, r.source))
            self.log.append((size, s.at, "toobig", r.key))
            self.reporters.setdefault(r.source, set()).add(r.mtu if self._valid(r.mtu or 0, size) else 0)

    # ---- the blocking driver: send() and a reply queue, for callers without an engine ---
    def run(self) -> Verdict:
        return self.drive(self.steps())

    def drive(self, steps):
        """Serve a generator of Round / Sleep requests (the search's, or a trace's that
        uses this search's rounds) with send() and the reply queue; returns its value."""
        value = None
        while True:
            try:
                req = steps.send(value)
            except StopIteration as done:
                return done.value
            value = self._serve(req)

    def _serve(self, req) -> None:
        if isinstance(req, Sleep):
            if req.linger:
                while not self.v.unreachable and self.clock() < req.until:
                    try:
                        self.on_reply(self.replies.get(timeout=min(0.1, max(0.0, req.until - self.clock()))))
                    except queue.Empty:
                        if self.stop.is_set():
                            raise Interrupted() from None
            elif self.stop.wait(max(0.0, req.until - self.clock())):
                raise Interrupted()
            return
        for key, method, size, ttl in req.probes:
            try:
                at = self.clock()
                self._send(method, size, key, ttl)
            except OSError as exc:
                self.on_refused(key, method, size, ttl, exc)
                continue
            self.on_sent(key, method, size, ttl, at)
        start = self.clock()
        while not self.round_done():
            now = self.clock()
            if now >= start + self.wait_s(req.cap):
                break
            try:
                r = self.replies.get(timeout=min(0.1, start + self.wait_s(req.cap) - now))
            except queue.Empty:
                if self.stop.is_set():
                    raise Interrupted() from None
                continue
            self.on_reply(r)

    def _heard(self, r: Reply) -> None:
        """Bookkeeping for every reply, late ones too: ICMP errors say the path is alive, and
        an unreachable (a router giving up on ARP after seconds, say) is worth naming."""
        if r.kind in ("toobig", "unreach", "ttl"):
            self.heard += 1
        if r.kind == "unreach":
            said = (r.source, r.reason or "destination unreachable")
            if said not in self.v.unreachable:
                self.v.unreachable.append(said)

    def _linger(self, seconds: float):
        """Nothing answered: wait a little for late errors (a router's 'host unreachable'
        comes only when its ARP / neighbour discovery gives up, ~3 s after the first probe)."""
        yield Sleep(self.clock() + seconds, linger=True)

    def _record(self, answers: Dict[int, List[Reply]]) -> None:
        full = [k for k in answers if self.sent[k].ttl == 64]
        # the round's last probe is a size that passes (a control): if it came back, the
        # target was answering during this round, and silence above means something
        live = bool(full) and any(r.kind == "pass" for r in answers[full[-1]])
        for k, replies in answers.items():
            s = self.sent[k]
            if s.ttl != 64:
                for r in replies:
                    if r.kind == "ttl":
                        self.ttl_replies[s.ttl] = r.source
                continue
            o = self.outcomes.setdefault(s.size, Outcome())
            if not any(r.kind in ("pass", "toobig") for r in replies):
                o.vanished += 1
                self.silent_keys[k] = (s.size, live)
                if live:
                    o.silent += 1
                    self.log.append((s.size, s.at, "silent", k))
            for r in replies:
                if r.kind == "pass":
                    o.passed += 1
                    self.log.append((s.size, s.at, "pass", k))
                elif r.kind == "toobig":
                    o.toobig.append((r.mtu or 0, r.source))
                    self.log.append((s.size, s.at, "toobig", k))
                elif r.kind == "unreach":
                    note = f"{r.source} answered a {s.size}-byte probe with '{r.reason or 'destination unreachable'}'"
                    if note not in self.v.notes:
                        self.v.notes.append(note)

    def _sleep_until(self, t: float):
        if self.stop.is_set():
            raise Interrupted()
        yield Sleep(t)

    # ---- reading the evidence -----------------------------------------------------
    def _valid(self, mtu: int, size: int) -> bool:
        return MIN_MTU[self.family] <= mtu < size

    def _vouched(self) -> int:
        """The largest next-hop MTU a router reported: sizes up to it pass that router."""
        return max((m for s, o in self.outcomes.items() for m, _ in o.toobig if self._valid(m, s)), default=0)

    def _loss(self, lo: int) -> Tuple[int, int]:
        """(passed, lost) among probes of sizes that pass (at most lo)."""
        ok = sum(o.passed for s, o in self.outcomes.items() if s <= lo)
        lost = sum(o.vanished for s, o in self.outcomes.items() if s <= lo)
        return ok, lost

    def _needed(self, size: int, lo: int) -> int:
        """How many probes of `size` (or between lo and it) must vanish before silence, not
        loss, is the likely reason: the loss rate of sizes that pass, with a prior of one
        pass and one loss, raised to that power is below ALPHA."""
        ok, lost = self._loss(lo)
        q = (lost + 1) / (ok + lost + 2)
        alpha = ALPHA_VOUCHED if size <= self._vouched() else ALPHA
        return max(1, math.ceil(math.log(alpha) / math.log(q)))

    def _silent_enough(self, lo: int, size: int) -> bool:
        lost = sum(o.silent for s, o in self.outcomes.items() if lo < s <= size and not o.passed)
        return lost >= self._needed(size, lo)

    def _bounds(self) -> Tuple[Optional[int], int, List[int]]:
        """(largest size that passed, smallest size above it that failed, sizes to probe next).
        A size a router vouched for that only vanished is probed again until its silence
        cannot be loss."""
        passed = [s for s, o in self.outcomes.items() if o.passed]
        lo = max(passed) if passed else None
        hi = self.local_mtu + 1
        vouched = self._vouched() if lo is not None else 0
        suggest, again = [], []
        for size, o in self.outcomes.items():
            if lo is not None and size <= lo:
                continue
            for mtu, _src in o.toobig:
                if self._valid(mtu, size):
                    hi = min(hi, mtu + 1)
                    suggest.append(mtu)
                else:
                    hi = min(hi, size)
                    suggest.append(plateau_below(size))
            if o.toobig:
                continue
            if o.vanished and size <= vouched and not self._silent_enough(lo, size):
                again.append(size)
            elif o.vanished or o.refused:
                hi = min(hi, size)
        floor = lo if lo is not None else 0
        nxt = sorted({m for m in suggest if floor < m < hi and m not in self.outcomes}, reverse=True)
        nxt += [s for s in sorted(again, reverse=True) if s < hi for _ in range(2)]
        return lo, hi, nxt

    def _icmp_source(self, lo: int) -> Optional[str]:
        """The router whose report pins the PMTU (its next-hop MTU equals lo), else the one
        that reported the smallest failing size."""
        best = None
        for size, o in sorted(self.outcomes.items()):
            for mtu, src in o.toobig:
                if mtu == lo:
                    return src
                if size > lo and best is None:
                    best = src
        return best

    def _silence(self, lo: int, hi: int) -> Tuple[float, float]:
        """(first, last) send time of probes above lo that vanished since the last probe a
        router called too big without vouching for hi: how long the silence has lasted."""
        icmp = [at for size, at, kind, _k in self.log if kind == "toobig" and size >= hi
                and not any(self._valid(m, size) and m >= hi for m, _ in self.outcomes[size].toobig)]
        after = max(icmp, default=-1.0)
        quiet = [at for size, at, kind, _k in self.log if kind == "silent" and size > lo and at > after]
        now = self.clock()
        return (min(quiet), max(quiet)) if quiet else (now, now)

    def _evidence(self, lo: int, hi: int) -> Optional[str]:
        """Why we believe the routers here do send 'fragmentation needed', or None."""
        for size, o in sorted(self.outcomes.items()):
            for mtu, src in o.toobig:
                if size >= hi and not self._valid(mtu, size):
                    return f"{src} said 'too big' about a {size}-byte probe (next-hop MTU {mtu})"
        if self.cached_pmtu == lo:
            return f"the kernel had learned path MTU {lo} for this target (from an ICMP of the last 10 minutes)"
        for src, mtus in list(self.reporters.items()):
            if lo in mtus:
                return f"{src} reported next-hop MTU {lo} for another target in this run"
        return None

    def _talkers(self, lo: int, hi: int) -> Set[str]:
        """Routers known to send 'fragmentation needed' in a way that fits hi failing at them."""
        out = {src for size, o in self.outcomes.items() if size >= hi
               for mtu, src in o.toobig if not self._valid(mtu, size)}
        out |= {src for src, mtus in list(self.reporters.items()) if lo in mtus}
        return out

    # ---- the search -----------------------------------------------------------------
    def _first_sizes(self) -> List[int]:
        small = SMALL[self.family]
        sizes = [self.local_mtu] + [p for p in FIRST_ROUND if p < self.local_mtu and p >= small]
        return sorted(set(sizes), reverse=True)

    def _pick_method(self) -> Optional[str]:
        """Round 1 for every method at once: echo at all first-round sizes, and a small probe
        of each fallback method, so a filtered echo costs no extra timeout."""
        sizes = self._first_sizes()
        small = SMALL[self.family]
        probes = [("icmp", s, 64) for s in sizes] if "icmp" in self.methods else []
        probes += [(m, small, 64) for m in self.methods if m != "icmp" for _ in range(2)]
        # once an echo came back and every echo is answered, the fallbacks are not waited for
        self.fallback = "icmp" in self.methods
        try:
            answers = yield from self._round(probes)
        finally:
            self.fallback = False
        echo = {k: r for k, r in answers.items() if self.sent[k].method == "icmp"}
        if any(r.kind == "pass" for rs in echo.values() for r in rs):
            self._record(echo)
            return "icmp"
        # a router's "too big" for a large echo proves nothing about the target answering it
        for m in self.methods:
            if m == "icmp":
                continue
            mine = {k: rs for k, rs in answers.items() if self.sent[k].method == m}
            if any(r.kind == "pass" for rs in mine.values() for r in rs):
                self.v.echo_filtered = "icmp" in self.methods
                self._record(mine)
                return m
        return None

    def _probe(self, method: str, sizes: List[int], lo: int, cap: Optional[float] = None):
        """One round of full-TTL probes of these sizes, closed by a control probe of lo."""
        self._record((yield from self._round([(method, s, 64) for s in sizes] + [(method, lo, 64)], cap=cap)))

    def steps(self):
        """The search as a generator of Round and Sleep requests; returns the Verdict."""
        method = None
        for attempt in range(PICK_TRIES):
            # a second chance for every method with a full timeout, in case the first round
            # was lost; a third when a router answered (the path is alive, only lossy)
            if attempt == 2 and not self.heard:
                break
            method = yield from self._pick_method()
            if method is not None or self.v.unreachable:
                break
        if method is None:
            yield from self._linger(LINGER)
            if self.v.unreachable:
                src, why = self.v.unreachable[0]
                self.v.notes.append(f"{src} answered '{why}': no probe reached the target")
            else:
                self.v.notes.append("no probe of any method was answered")
            return self.v
        self.v.probe_method = method
        if method != "icmp":
            self._record((yield from self._round([(method, s, 64) for s in self._first_sizes()])))
        retests = 0
        asks = 0
        boundary = None           # the (lo, hi) the re-tests are about
        waited = 0.0              # s of silence before the last re-ask
        for _ in range(40):
            lo, hi, nxt = self._bounds()
            if lo is None:
                if nxt:
                    self._record((yield from self._round([(method, m, 64) for m in nxt[:SPLIT]])))
                    continue
                # even the small probe failed while others of this method did not answer: retry once
                if retests >= 2:
                    self.v.notes.append("even the smallest probe got no answer")
                    return self.v
                retests += 1
                self._record((yield from self._round([(method, SMALL[self.family], 64)] * 2, cap=self.timeout)))
                continue
            if lo >= self.local_mtu:
                self.v.pmtu, self.v.method = lo, "local"
                break
            if nxt:
                yield from self._probe(method, nxt[:SPLIT], lo)
                continue
            if hi > lo + 1:
                n = min(SPLIT, hi - lo - 1)
                step = (hi - lo) / (n + 1)
                sizes = sorted({lo + max(1, round(step * (i + 1))) for i in range(n)} - {hi}, reverse=True)
                yield from self._probe(method, [s for s in sizes if lo < s < hi], lo)
                continue
            # converged: lo passes, lo + 1 (hi) fails
            # ICMP pins it when a router reported exactly lo as its next-hop MTU, or said
            # "too big" about hi itself; a hi that only vanished is re-tested first
            pinned = any(m == lo for o in self.outcomes.values() for m, _ in o.toobig)
            if pinned or self.outcomes[hi].toobig:
                self.v.pmtu, self.v.method, self.v.hop = lo, "icmp", self._icmp_source(lo)
                if asks:
                    self.v.rate_limited = (f"{self.v.hop or 'a router'} rate-limits its 'fragmentation needed': "
                                           f"it answered only after {waited:.1f} s of silence")
                    self.v.notes.append(self.v.rate_limited)
                break
            if self.outcomes[hi].refused and not self.outcomes[hi].vanished:
                self.v.pmtu, self.v.method = lo, "local"
                self.v.notes.append(f"the local stack refuses {hi}-byte packets to this target")
                break
            # only silence above lo: enough of it that loss cannot explain it?
            need = self._needed(hi, lo)
            if self.outcomes[hi].silent < need:
                if boundary != (lo, hi):
                    boundary, retests = (lo, hi), 0      # a new boundary: its own re-tests
                if retests >= MAX_RETESTS:
                    self._give_up(lo, "answers stayed inconsistent after re-tests: a lossy path")
                    break
                retests += 1
                k = max(2, min(SPLIT, need - self.outcomes[hi].silent))
                above = [self.local_mtu] if self.local_mtu not in (hi, lo) else []
                yield from self._probe(method, above + [hi] * k + [lo], lo)
                continue
            # and long enough that a router rate-limiting its ICMP would have answered?
            evidence = self._evidence(lo, hi)
            wait = max(self.icmp_wait, LONG_WAIT if evidence else 0.0)
            start, end = self._silence(lo, hi)
            if end - start < wait and asks < 3:
                asks += 1
                if self.located != hi:
                    # place the drop now, while we wait anyway: the TTL-limited probes'
                    # answers cost no time of their own (used only if it is a black hole)
                    yield from self._locate(method, hi)
                yield from self._sleep_until(start + wait)
                waited = self.clock() - start
                yield from self._probe(method, [hi, hi], lo)
                continue
            yield from self._silent_verdict(lo, hi, method, evidence, end - start)
            break
        else:
            lo = self._bounds()[0]
            if lo is not None:
                self._give_up(lo, "the search did not converge in 40 rounds (too few answers)")
            else:
                self.v.notes.append("search did not converge")
        self._confidence()
        return self.v

    def _give_up(self, lo: int, why: str) -> None:
        """No clean answer (loss, or too few answers): the best guess, never below a
        next-hop MTU a router reported unless silence there is beyond doubt."""
        self.unsure = why
        self.v.notes.append(why)
        vouched = self._vouched()
        if vouched > lo and not self._silent_enough(lo, vouched):
            self.v.pmtu, self.v.method, self.v.hop = vouched, "icmp", self._icmp_source(vouched)
            self.v.notes.append(f"{vouched} itself did not come back often enough to confirm; "
                                f"taking the router's word for next-hop MTU {vouched}")
            return
        self.v.pmtu, self.v.method = lo, "inferred"
        self.v.black_hole = not any(o.toobig for s, o in self.outcomes.items() if s > lo)

    def _silent_verdict(self, lo: int, hi: int, method: str, evidence: Optional[str], silence: float):
        """hi vanished every time for as long as we waited: a black hole, unless the router
        where the big probes die is known to send 'fragmentation needed'."""
        self.v.pmtu, self.v.method, self.v.silence_s = lo, "inferred", round(silence, 1)
        if self.located != hi:
            yield from self._locate(method, hi)
        if self.ttl_replies:
            last = max(self.ttl_replies)
            self.v.hop, self.v.hop_index = self.ttl_replies[last], last
        elif self._placement() in self.placements:     # placed by another target (not when nobody placed it)
            self.v.hop, self.v.hop_index = self.placements[self._placement()]
            self.v.notes.append(f"placed after {self.v.hop} by the TTL-limited probes of another target of this "
                                "run, behind the same gateway at the same distance (routers limit the 'time "
                                "exceeded' they send to one prober)")
        elif self.located_note:
            self.v.notes.append(self.located_note)
        talkers = self._talkers(lo, hi)
        if (self.v.hop and self.v.hop in talkers) or (self.v.hop is None and talkers):
            who = self.v.hop or sorted(talkers)[0]
            self.v.rate_limited = (f"{who} sends 'fragmentation needed' ({evidence}) but sent none about "
                                   f"{hi}-byte probes for {silence:.1f} s: it rate-limits them; not a black hole")
            self.v.notes.append(self.v.rate_limited)
            return
        self.v.black_hole = True
        if evidence:
            self.v.notes.append(f"{evidence}, yet no 'fragmentation needed' came for {silence:.1f} s: "
                                "the router stopped sending them or limits them to fewer than one in that time")
        elif silence < HIGH_SILENCE:
            self.v.notes.append(f"no 'fragmentation needed' came for {silence:.1f} s: a router that sends it "
                                f"less often than once in {silence:.1f} s looks the same "
                                f"(--icmp-wait {HIGH_SILENCE:g} tells them apart)")

    def _confidence(self) -> None:
        lo = self.v.pmtu
        if lo is None:
            return
        ok, lost = self._loss(lo)
        rate = lost / max(1, lost + ok)
        if self.unsure:
            self.v.confidence = "low"
            return
        if self.v.method in ("icmp", "local"):
            self.v.confidence = "high" if rate < 0.2 else "medium"
            return
        above = sum(o.silent for s, o in self.outcomes.items() if s > lo)
        long_silence = (self.v.silence_s or 0) >= HIGH_SILENCE and not self._evidence(lo, lo + 1)
        if rate == 0 and above >= 4 and self.v.black_hole and long_silence:
            self.v.confidence = "high"
        elif rate < 0.2:
            self.v.confidence = "medium"
        else:
            self.v.confidence = "low"
            self.v.notes.append(f"{lost} of {lost + ok} probes that should pass were lost: a lossy path")

    def _hops(self) -> int:
        t = self.v.reply_ttl
        if not t:
            return 16
        start = next(x for x in (64, 128, 255) if x >= t)
        return max(1, min(30, start - t + 1))

    def _locate(self, method: str, big: int):
        """TTL-limited probes of the failing size: routers check the TTL before the MTU, so
        every router the big probe reaches says time exceeded; the last one that does is
        where it is dropped."""
        self.located, self.located_note = big, None
        self.ttl_replies = {}
        hops = self._hops()
        if hops <= 1:
            self.located_note = "the target is one hop away: the drop is on the direct link"
            return
        key = self._placement()
        if key is not None and key in self.placements:
            return                  # placed already by another target's probes: spare the routers
        self._record((yield from self._round([(method, big, ttl) for ttl in range(1, hops)])))
        if self.ttl_replies:
            if key is not None:
                last = max(self.ttl_replies)
                self.placements.setdefault(key, (self.ttl_replies[last], last))
        else:
            self.located_note = "no router answered TTL-limited probes: cannot place the black hole"

    def _placement(self) -> Optional[tuple]:
        """What another target must share for its black-hole placement to hold here."""
        if self.path is None or self.located is None:
            return None
        return (self.path, self._hops(), self.located)
