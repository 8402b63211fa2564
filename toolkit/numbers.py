"""Numbers as people read them: thousands separators, no exponents, never `None`."""
from __future__ import annotations

from typing import Optional


def count(n: Optional[float]) -> str:
    """1234567 -> '1,234,567'; None -> 'unknown'."""
    if n is None:
        return "unknown"
    if float(n).is_integer():
        return f"{int(n):,}"
    return f"{n:,.1f}"


def rate(per_hour: Optional[float]) -> str:
    """A per-hour rate with as many digits as it deserves: '4', '0.25', '1,234'."""
    if per_hour is None:
        return "unknown"
    if per_hour >= 100 or float(per_hour).is_integer():
        return f"{per_hour:,.0f}"
    if per_hour >= 1:
        return f"{per_hour:,.1f}".rstrip("0").rstrip(".")
    return f"{per_hour:.2g}"


def share(fraction: Optional[float]) -> str:
    """0.2234 -> '22.3%', 0.0004 -> '0.04%'."""
    if fraction is None:
        return "unknown"
    pct = 100 * fraction
    if pct >= 10 or pct == 0:
        return f"{pct:.1f}%".replace(".0%", "%")
    if pct >= 0.1:
        return f"{pct:.2f}%"
    return f"{pct:.2g}%"


def hours(seconds: Optional[float]) -> str:
    if not seconds:
        return "unknown time"
    h = seconds / 3600
    if h >= 48:
        return f"{h / 24:,.1f} days".replace(".0 days", " days")
    if h >= 1:
        return f"{h:,.1f} h".replace(".0 h", " h")
    return f"{seconds / 60:,.0f} min"
