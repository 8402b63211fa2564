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
- before calling a black hole, the boundary is re-tested (3 probes just above, 2 at the
  found size), so random loss is not mistaken for one, and asked once more after a 1 s
  pause, so a router that rate-limits its ICMP is not either; the confidence says how
  clean the path looked;
- for a black hole, TTL-limited probes of the failing size find the last router that
  still receives them.
"""
from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from toolkit.probe.packets import Reply

PLATEAUS = (65535, 32000, 17914, 8166, 4352, 2002, 1492, 1006, 508, 296, 68)   # RFC 1191 table 7-1
FIRST_ROUND = (65535, 32000, 17914, 8166, 4352, 2002, 1500, 1492, 1480, 1400, 1280, 1006, 576)
MIN_MTU = {"ipv4": 68, "ipv6": 1280}
SMALL = {"ipv4": 576, "ipv6": 1280}
MIN_WAIT = 0.1
SPLIT = 8
MAX_RETESTS = 6
RATE_LIMIT_PAUSE = 1.0   # s of silence before the last word on a black hole


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
    notes: List[str] = field(default_factory=list)


class Search:
    """One target's PMTU search. `send(method, size, key, ttl)` puts a probe on the wire
    (raising OSError on a local refusal); replies arrive on `replies`."""

    def __init__(self, family: str, local_mtu: int, send: Callable[[str, int, int, int], None],
                 replies: "queue.Queue[Reply]", timeout: float = 1.0, tcp_port: Optional[int] = None,
                 methods: Tuple[str, ...] = ("icmp", "udp", "tcp")):
        self.family = family
        self.local_mtu = min(local_mtu, 65535)
        self._send = send
        self.replies = replies
        self.timeout = timeout
        self.tcp_port = tcp_port
        self.methods = tuple(m for m in methods if m != "tcp" or tcp_port)
        self.sent: Dict[int, Sent] = {}
        self.key = 0
        self.outcomes: Dict[int, Outcome] = {}
        self.rtts: List[float] = []
        self.v = Verdict()
        self.ttl_replies: Dict[int, str] = {}

    # ---- sending and collecting -------------------------------------------------
    def _next_key(self) -> int:
        self.key = self.key % 4000 + 1
        return self.key

    def _round(self, probes: List[Tuple[str, int, int]], cap: Optional[float] = None) -> Dict[int, List[Reply]]:
        """Send probes (method, size, ttl) together; wait for their answers. Returns key -> replies."""
        self.v.rounds += 1
        keys = {}
        for method, size, ttl in probes:
            k = self._next_key()
            try:
                self._send(method, size, k, ttl)
            except OSError as exc:
                # the local stack refused (e.g. larger than the interface MTU): a local failure
                self.v.notes.append(f"{method} probe of {size} bytes refused locally: {exc.strerror or exc}")
                if ttl == 64:
                    self.outcomes.setdefault(size, Outcome()).refused += 1
                continue
            self.v.probes += 1
            self.sent[k] = Sent(size, ttl, method, time.monotonic())
            keys[k] = []
        start = time.monotonic()
        cap = cap if cap is not None else (self.timeout if not self.rtts else min(self.timeout, max(MIN_WAIT, 4 * max(self.rtts) + 0.05)))
        pending = set(keys)
        while pending:
            now = time.monotonic()
            limit = start + cap
            if self.rtts:
                limit = min(limit, start + max(MIN_WAIT, 4 * max(self.rtts) + 0.05))
            if now >= limit:
                break
            try:
                r = self.replies.get(timeout=limit - now)
            except queue.Empty:
                break
            if r.key not in keys:
                continue           # a late answer to an earlier round
            keys[r.key].append(r)
            pending.discard(r.key)
            if r.kind == "pass":
                self.rtts.append(time.monotonic() - self.sent[r.key].at)
                if r.ttl is not None:
                    self.v.reply_ttl = r.ttl
        return keys

    def _record(self, answers: Dict[int, List[Reply]]) -> None:
        for k, replies in answers.items():
            s = self.sent[k]
            if s.ttl != 64:
                for r in replies:
                    if r.kind == "ttl":
                        self.ttl_replies[s.ttl] = r.source
                continue
            o = self.outcomes.setdefault(s.size, Outcome())
            if not replies:
                o.vanished += 1
            for r in replies:
                if r.kind == "pass":
                    o.passed += 1
                elif r.kind == "toobig":
                    o.toobig.append((r.mtu or 0, r.source))
                elif r.kind == "unreach":
                    self.v.notes.append(f"{r.source} answered a {s.size}-byte probe with destination unreachable")

    # ---- reading the evidence -----------------------------------------------------
    def _valid(self, mtu: int, size: int) -> bool:
        return MIN_MTU[self.family] <= mtu < size

    def _bounds(self) -> Tuple[Optional[int], int, List[int]]:
        """(largest size that passed, smallest size above it that failed, MTUs to try next)."""
        passed = [s for s, o in self.outcomes.items() if o.passed]
        lo = max(passed) if passed else None
        hi = self.local_mtu + 1
        suggest = []
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
            if (o.vanished or o.refused) and not o.toobig:
                hi = min(hi, size)
        floor = lo if lo is not None else 0
        nxt = sorted({m for m in suggest if floor < m < hi and m not in self.outcomes}, reverse=True)
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
        probes += [(m, small, 64) for m in self.methods if m != "icmp"]
        answers = self._round(probes)
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

    def run(self) -> Verdict:
        method = self._pick_method()
        if method is None:
            # one more chance for every method with a full timeout, in case the first round was lost
            method = self._pick_method()
        if method is None:
            self.v.notes.append("no probe of any method was answered")
            return self.v
        self.v.probe_method = method
        if method != "icmp":
            self._record(self._round([(method, s, 64) for s in self._first_sizes()]))
        retests = 0
        paused = False
        for _ in range(40):
            lo, hi, nxt = self._bounds()
            if lo is None:
                if nxt:
                    self._record(self._round([(method, m, 64) for m in nxt[:SPLIT]]))
                    continue
                # even the small probe failed while others of this method did not answer: retry once
                if retests >= 2:
                    self.v.notes.append("even the smallest probe got no answer")
                    return self.v
                retests += 1
                self._record(self._round([(method, SMALL[self.family], 64)] * 2, cap=self.timeout))
                continue
            if lo >= self.local_mtu:
                self.v.pmtu, self.v.method = lo, "local"
                break
            if nxt:
                self._record(self._round([(method, m, 64) for m in nxt[:SPLIT]]))
                continue
            if hi > lo + 1:
                n = min(SPLIT, hi - lo - 1)
                step = (hi - lo) / (n + 1)
                sizes = sorted({lo + max(1, round(step * (i + 1))) for i in range(n)} - {hi})
                self._record(self._round([(method, s, 64) for s in sizes if lo < s < hi]))
                continue
            # converged: lo passes, lo + 1 (hi) fails
            # ICMP pins it when a router reported exactly lo as its next-hop MTU, or said
            # "too big" about hi itself; a hi that only vanished is re-tested first
            pinned = any(m == lo for o in self.outcomes.values() for m, _ in o.toobig)
            if pinned or self.outcomes[hi].toobig:
                self.v.pmtu, self.v.method, self.v.hop = lo, "icmp", self._icmp_source(lo)
                break
            if self.outcomes[hi].refused and not self.outcomes[hi].vanished:
                self.v.pmtu, self.v.method = lo, "local"
                self.v.notes.append(f"the local stack refuses {hi}-byte packets to this target")
                break
            if retests >= MAX_RETESTS:
                self.v.pmtu, self.v.method = lo, "inferred"
                self.v.black_hole = not any(o.toobig for s, o in self.outcomes.items() if s > lo)
                self.v.notes.append("answers stayed inconsistent after re-tests: a lossy path")
                break
            # only silence above lo: re-test the boundary before calling it a black hole
            retests += 1
            probes = [(method, hi, 64)] * 3 + [(method, lo, 64)] * 2
            if self.local_mtu not in (hi, lo):
                probes.append((method, self.local_mtu, 64))
            before = {s: (o.passed, o.vanished, len(o.toobig)) for s, o in self.outcomes.items()}
            self._record(self._round(probes))
            o_hi, o_lo = self.outcomes[hi], self.outcomes[lo]
            hi_changed = o_hi.passed or o_hi.toobig
            lo_ok = o_lo.passed > before[lo][0]
            if not hi_changed and lo_ok:
                if not paused:
                    # a router that rate-limits its ICMP (one a second is common) may simply
                    # have had nothing left for this run: ask once more after a pause
                    paused = True
                    last_big = max(x.at for x in self.sent.values() if x.size > lo)
                    time.sleep(max(0.0, last_big + RATE_LIMIT_PAUSE - time.monotonic()))
                    self._record(self._round([(method, hi, 64), (method, lo, 64)]))
                    if self.outcomes[hi].toobig:
                        self.v.notes.append("the router rate-limits its 'fragmentation needed': "
                                            "it answered only after a pause")
                    continue
                self.v.pmtu, self.v.method, self.v.black_hole = lo, "inferred", True
                break
            # something passed above, or lo itself was lost: keep searching with the new evidence
        else:
            self.v.notes.append("search did not converge")
        self._confidence()
        if self.v.black_hole:
            self._locate(method)
        return self.v

    def _confidence(self) -> None:
        lo = self.v.pmtu
        if lo is None:
            return
        lost = sum(o.vanished for s, o in self.outcomes.items() if s <= lo)
        passed = sum(o.passed for o in self.outcomes.values())
        rate = lost / max(1, lost + passed)
        if any("inconsistent" in n for n in self.v.notes):
            self.v.confidence = "low"
            return
        if self.v.method in ("icmp", "local"):
            self.v.confidence = "high" if rate < 0.2 else "medium"
            return
        above = sum(o.vanished for s, o in self.outcomes.items() if s > lo)
        if rate == 0 and above >= 4:
            self.v.confidence = "high"
        elif rate < 0.2:
            self.v.confidence = "medium"
        else:
            self.v.confidence = "low"
            self.v.notes.append(f"{lost} of {lost + passed} probes that should pass were lost: a lossy path")

    def _hops(self) -> int:
        t = self.v.reply_ttl
        if not t:
            return 16
        start = next(x for x in (64, 128, 255) if x >= t)
        return max(1, min(30, start - t + 1))

    def _locate(self, method: str) -> None:
        """TTL-limited probes of the failing size: routers check the TTL before the MTU, so
        every router the big probe reaches says time exceeded; the last one that does is
        where it is dropped."""
        hops = self._hops()
        if hops <= 1:
            self.v.notes.append("the target is one hop away: the drop is on the direct link")
            return
        big = self.v.pmtu + 1
        self._record(self._round([(method, big, ttl) for ttl in range(1, hops)]))
        if not self.ttl_replies:
            self.v.notes.append("no router answered TTL-limited probes: cannot place the black hole")
            return
        last = max(self.ttl_replies)
        self.v.hop, self.v.hop_index = self.ttl_replies[last], last
