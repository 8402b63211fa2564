"""The running aggregation of one host's counters: what triage needs from its snapshots and
deltas, folded one at a time, so its size never depends on how many snapshots there are.

The host model (toolkit/hosts.py) folds every snapshot and every pair's Delta in time order;
the rules (toolkit/rules/) read the result: per family and format, the totals of the last
snapshot and the growth over the whole period (total, first and last interval it grew,
peak per hour), plus what the reports say about the snapshots (how many, from when to when,
their warnings) and whether the host routes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import parsers
from parsers.model import Meta, Signal, signal_values


FAMILIES = ("ipv4", "ipv6")
MAX_WARNINGS = 64         # distinct warnings kept per host; the count of the rest is kept


@dataclass
class Period:
    """One host's counters of one family and format: growth over the observed period and
    the totals since boot of its last snapshot."""
    family: str
    meta: Meta
    totals: Dict[str, Optional[int]]
    taken: str                                     # the last snapshot: when or where
    increase: Dict[str, int] = field(default_factory=dict)
    peak: Dict[str, float] = field(default_factory=dict)
    first: Dict[str, str] = field(default_factory=dict)
    last: Dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0                           # dated time covered by known increases
    intervals: int = 0                             # pairs with known increases
    span: str = ""
    resets: int = 0

    @property
    def observed(self) -> bool:
        return self.intervals > 0

    def grew(self, *names: str) -> int:
        return sum(self.increase.get(n, 0) for n in names)

    def total(self, name: str) -> Optional[int]:
        return self.totals.get(name)

    def per_hour(self, name: str) -> Optional[float]:
        if not self.seconds or name not in self.increase:
            return None
        return self.increase[name] * 3600.0 / self.seconds

    def add(self, d, values: Dict[str, Optional[int]]) -> None:
        """Fold one pair's increases of this family (a Delta and its values)."""
        if any(e["type"] == "reset" for e in d.events):
            self.resets += 1
            return
        known = {k: v for k, v in values.items() if v is not None}
        if not known:
            return
        self.intervals += 1
        self.span = self.span.split(" -> ")[0] + f" -> {d.to}" if self.span else f"{d.from_} -> {d.to}"
        if d.elapsed_s:
            self.seconds += d.elapsed_s
        per = d.per_hour(self.family) or {}
        increase, first, last, peak = self.increase, self.first, self.last, self.peak
        for k, v in known.items():
            increase[k] = increase.get(k, 0) + v
            if v > 0:
                first.setdefault(k, d.to)
                last[k] = d.to
                if per.get(k) is not None:
                    peak[k] = max(peak.get(k, 0.0), per[k])


@dataclass
class Signals:
    """One host's signal counters of one OS format (parsers' Meta.signals: frag-needed in and
    out, retransmission timeouts, PLPMTUD, black-hole detection): the totals of its last
    snapshot and their growth between its snapshots."""
    meta: Meta
    totals: Dict[Tuple[str, str], Tuple[int, Signal]] = field(default_factory=dict)   # (what, family) -> (value, Signal)
    taken: str = ""
    increase: Dict[Tuple[str, str], int] = field(default_factory=dict)
    intervals: int = 0                             # pairs whose signals could be compared
    seconds: float = 0.0                           # dated time those pairs covered
    resets: int = 0
    last_time: Optional[str] = None

    def fold(self, values: Dict[Tuple[str, str], Tuple[int, Signal]], taken: str, when: Optional[str],
             elapsed: Optional[float]) -> None:
        old = self.totals
        if old:
            common = [k for k in values if k in old]
            bits = self.meta.counter_bits
            grew: Dict[Tuple[str, str], int] = {}
            reset = False
            for k in common:
                a, b = old[k][0], values[k][0]
                if b >= a:
                    grew[k] = b - a
                elif 2 ** bits - 2 ** 28 <= a < 2 ** bits and b < 2 ** 28:
                    grew[k] = b + 2 ** bits - a
                else:
                    reset = True
            if reset:
                self.resets += 1
            elif common:
                self.intervals += 1
                if elapsed:
                    self.seconds += elapsed
                for k, v in grew.items():
                    self.increase[k] = self.increase.get(k, 0) + v
        self.totals, self.taken, self.last_time = values, taken, when

    def total(self, what: str, family: str) -> Optional[int]:
        got = self.totals.get((what, family))
        return None if got is None else got[0]

    def grew(self, what: str, family: str) -> Optional[int]:
        """The increase over the observed period; None without two comparable snapshots."""
        if not self.intervals or (what, family) not in self.totals:
            return None
        return self.increase.get((what, family), 0)

    def signal(self, what: str, family: str) -> Optional[Signal]:
        got = self.totals.get((what, family))
        return None if got is None else got[1]


def _meta(os_name: str) -> Optional[Meta]:
    return getattr(parsers.REGISTRY.get(os_name), "META", None)


@dataclass
class Tally:
    """Everything triage reads about a host's snapshots, folded in time order."""
    count: int = 0                                  # snapshots folded
    oses: Dict[str, None] = field(default_factory=dict)
    first_dated: Optional[str] = None               # taken_at of the first and last dated snapshot
    last_dated: Optional[str] = None
    dated: int = 0
    warnings: Dict[str, None] = field(default_factory=dict)
    more_warnings: int = 0
    device: bool = False                            # a network device's own CLI (META.role router)
    forwarder: bool = False                         # a snapshot says it forwards more than it delivers
    forwarded: Optional[Tuple[int, Optional[int], Optional[bool]]] = None   # last (ForwDatagrams, InDelivers, forwarding)
    periods: Dict[Tuple[str, str], Period] = field(default_factory=dict)
    signals: Dict[str, Signals] = field(default_factory=dict)     # OS format -> its signal counters
    last_os: Optional[str] = None

    def snapshot(self, snap) -> None:
        self.count += 1
        self.oses[snap.os] = None
        self.last_os = snap.os
        if snap.taken_at:
            self.dated += 1
            self.last_dated = snap.taken_at
            if self.first_dated is None:
                self.first_dated = snap.taken_at
        for w in snap.warnings:
            if w not in self.warnings:
                if len(self.warnings) < MAX_WARNINGS:
                    self.warnings[w] = None
                else:
                    self.more_warnings += 1
        meta = _meta(snap.os)
        if meta is not None and meta.role == "router":
            self.device = True
        v = snap.ipv4 or snap.ipv6 or {}
        fwd, dlv = v.get("ForwDatagrams"), v.get("InDelivers")
        if fwd:
            self.forwarded = (fwd, dlv, snap.forwarding)
            if snap.forwarding and (dlv is None or fwd > dlv):
                self.forwarder = True
            elif snap.forwarding is None and fwd >= 1000 and (dlv is None or fwd > 10 * dlv):
                self.forwarder = True
        if meta is None:
            return
        if meta.signals:
            values = signal_values(meta, snap.counters)
            if values:
                s = self.signals.get(snap.os)
                if s is None:
                    s = self.signals[snap.os] = Signals(meta)
                s.fold(values, snap.taken_at or f"{snap.source} line {snap.line}", snap.taken_at,
                       _elapsed(s.last_time, snap.taken_at))
        taken = None
        for fam in FAMILIES:
            values = getattr(snap, fam)
            if values is None:
                continue
            taken = taken or snap.taken_at or f"{snap.source} line {snap.line}"
            key = (snap.os, fam)
            p = self.periods.get(key)
            if p is None:
                self.periods[key] = Period(fam, meta, values, taken)
            else:
                p.totals, p.taken = values, taken

    def delta(self, d) -> None:
        for fam in FAMILIES:
            p = self.periods.get((d.os, fam))
            values = getattr(d, fam)
            if p is not None and values is not None:
                p.add(d, values)

    @property
    def router(self) -> bool:
        return self.device or self.forwarder


def _elapsed(a: Optional[str], b: Optional[str]) -> Optional[float]:
    """Seconds from one taken_at to the next (None when either is undated or they run backwards)."""
    if not a or not b:
        return None
    from datetime import datetime
    try:
        x, y = datetime.fromisoformat(a), datetime.fromisoformat(b)
        seconds = (y - x).total_seconds()
    except (ValueError, TypeError):
        return None
    return seconds if seconds > 0 else None


def of(snapshots: List, deltas: List) -> Tally:
    """The tally of a host held whole (snapshots and deltas in time order)."""
    t = Tally()
    for s in snapshots:
        t.snapshot(s)
    for d in deltas:
        t.delta(d)
    return t
