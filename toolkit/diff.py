"""Counter increases between consecutive snapshots of one host, with resets and wraps named."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Dict, List, Optional

from parsers.model import ALL, Meta, Snapshot

from toolkit.hosts import wraps


@dataclass
class Delta:
    host: str
    source: str
    from_: str
    to: str
    elapsed_s: Optional[float]
    ipv4: Optional[Dict[str, Optional[int]]]
    ipv6: Optional[Dict[str, Optional[int]]]
    events: List[dict] = field(default_factory=list)
    os: str = ""
    meta: Optional[Meta] = None      # what the OS's counters count (its parser's META)

    def per_hour(self, family: str) -> Optional[Dict[str, Optional[float]]]:
        values = getattr(self, family)
        if values is None or not self.elapsed_s:
            return None
        return {k: (None if v is None else round(v * 3600.0 / self.elapsed_s, 3)) for k, v in values.items()}

    def ratios(self, family: str) -> Dict[str, Optional[float]]:
        return ratios(getattr(self, family) or {}, self.meta)

    def to_dict(self) -> dict:
        return {
            "host": self.host, "source": self.source, "os": self.os,
            "from": self.from_, "to": self.to, "elapsed_s": self.elapsed_s,
            "ipv4": self.ipv4, "ipv6": self.ipv6,
            "ipv4_per_hour": self.per_hour("ipv4"), "ipv6_per_hour": self.per_hour("ipv6"),
            "ipv4_ratios": self.ratios("ipv4") if self.ipv4 is not None else None,
            "ipv6_ratios": self.ratios("ipv6") if self.ipv6 is not None else None,
            "events": self.events,
        }


def ratios(values: Dict[str, Optional[int]], meta: Optional[Meta]) -> Dict[str, Optional[float]]:
    """Fragments per reassembled datagram and the share of reassembly failing, in the units
    the OS counts (its META), so they never mix; for increases and totals since boot alike.

    Where failures count datagrams: ReasmFails / (ReasmOKs + ReasmFails). Where they count
    dropped fragments (BSD family): (ReasmFails + fragments dropped after timeout) /
    fragments received -- and no share where 'received' counts datagrams (HP-UX). A share
    above 1 means counters that wrapped or disagree: none is given.
    """
    reasm_unit = meta.reasm_unit if meta else "both"
    fails_unit = meta.fails_unit if meta else "datagrams"
    reqds, oks, fails, timeouts = (values.get(k) for k in ("ReasmReqds", "ReasmOKs", "ReasmFails", "ReasmTimeout"))
    per = None
    if reasm_unit == "both" and reqds is not None and oks and reqds >= oks:
        per = round(reqds / oks, 3)
    share = None
    if fails_unit == "fragments":
        if fails is not None and reqds and reasm_unit != "datagrams":
            lost = fails + (timeouts or 0 if meta and meta.timeout_unit == "fragments" else 0)
            share = round(lost / reqds, 6)
    elif oks is not None and fails is not None and (oks + fails) > 0:
        share = round(fails / (oks + fails), 6)
    if share is not None and share > 1:
        share = None
    return {"fragments_per_datagram": per, "reasm_fail_share": share}


def _label(snap: Snapshot) -> str:
    return snap.taken_at or f"{snap.source}#{snap.index}"


def elapsed(a: Optional[str], b: Optional[str]) -> Optional[float]:
    if not a or not b:
        return None
    ta, tb = datetime.fromisoformat(a), datetime.fromisoformat(b)
    if (ta.tzinfo is None) != (tb.tzinfo is None):
        ta, tb = ta.replace(tzinfo=None), tb.replace(tzinfo=None)
    return (tb - ta).total_seconds()


def _family(a: Optional[dict], b: Optional[dict], family: str, events: List[dict],
            bits: int = 32) -> Optional[dict]:
    if a is None or b is None:
        return None
    out: Dict[str, Optional[int]] = {}
    for name in ALL:
        x, y = a.get(name), b.get(name)
        if x is None or y is None:
            out[name] = None
        elif y >= x:
            out[name] = y - x
        elif wraps(x, y, bits):
            out[name] = y + 2 ** bits - x
            events.append({"type": "wrap", "family": family, "counter": name, "from": x, "to": y})
        else:
            out[name] = None
            events.append({"type": "reset", "family": family, "counter": name, "from": x, "to": y})
    return out


def pair(a: Snapshot, b: Snapshot, parser=None, host: Optional[str] = None) -> Delta:
    """The increases from a to b of one host (toolkit/hosts.py pairs them); `parser` (the OS's
    module) says what its counters count."""
    meta: Optional[Meta] = getattr(parser, "META", None)
    events: List[dict] = []
    bits = meta.counter_bits if meta else 32
    v4 = _family(a.ipv4, b.ipv4, "ipv4", events, bits)
    v6 = _family(a.ipv6, b.ipv6, "ipv6", events, bits)
    if any(e["type"] == "reset" for e in events):
        # A reboot resets every counter: increases across it are unknown, not the survivors' deltas.
        v4 = None if v4 is None else dict.fromkeys(v4)
        v6 = None if v6 is None else dict.fromkeys(v6)
    seconds = elapsed(a.taken_at, b.taken_at)
    if seconds is not None and seconds < 0:
        events.append({"type": "clock", "detail": "later snapshot is dated before the earlier one"})
        seconds = None
    return Delta(host or b.host or "-", b.source, _label(a), _label(b), seconds, v4, v6, events, b.os, meta)
