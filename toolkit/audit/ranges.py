"""Monitoring-plugins threshold ranges and the durations the audit takes (`90d`, `15m`).

A range follows the monitoring-plugins development guidelines: `10` alerts outside 0..10
(above 10 or below 0), `10:` below 10, `~:10` above 10, `10:20` outside 10..20 and
`@10:20` inside 10..20 (both ends inclusive). The text is kept as given, because Nagios
perfdata repeats it verbatim in its warn/crit fields.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"^(?P<inside>@)?(?:(?P<start>~|{_NUMBER})?:)?(?P<end>{_NUMBER})?$")


class RangeError(ValueError):
    """A threshold or duration that cannot be read; the message says what is wrong."""


@dataclass(frozen=True)
class Range:
    text: str
    start: float
    end: float
    inside: bool = False

    def alert(self, value: float) -> bool:
        """True when `value` lies where this range raises an alert."""
        within = self.start <= value <= self.end
        return within if self.inside else not within


def parse_range(text: str) -> Range:
    s = str(text).strip()
    m = _RANGE.match(s)
    if not s or not m or (m["start"] is None and m["end"] is None and ":" not in s):
        raise RangeError(f"{text!r} is not a monitoring-plugins range (10, 10:, ~:10, 10:20, @10:20)")
    start_s, end_s = m["start"], m["end"]
    if ":" not in s:                          # `10`: 0..10
        start, end = 0.0, float(end_s)
    else:
        start = -math.inf if start_s == "~" else float(start_s) if start_s is not None else 0.0
        end = float(end_s) if end_s is not None else math.inf
    if start > end:
        raise RangeError(f"{text!r}: the start {start:g} is above the end {end:g}")
    return Range(s, start, end, bool(m["inside"]))


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.I)


def duration(text: str, default_unit: str = "s") -> float:
    """Seconds in `90d`, `15m`, `2h`, `30s`, `1w` (a bare number is in `default_unit`)."""
    m = _DURATION.match(str(text))
    if not m:
        raise RangeError(f"{text!r} is not a duration like 30s, 15m, 2h, 90d or 1w")
    seconds = float(m[1]) * _UNITS[(m[2] or default_unit).lower()]
    if seconds <= 0:
        raise RangeError(f"{text!r}: a duration must be above zero")
    return seconds
