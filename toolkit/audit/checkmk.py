"""Checkmk local-check lines: `<state> "mssdiag <host>" <metrics|-> <text>`, one per host.

Metrics are `name=value;warn;crit;min;max` joined by `|`. Checkmk's levels are upper bounds:
a monitoring-plugins range that is one (`10`, `~:10`) gives its end; any other range leaves
the field empty (the state is still judged by mssdiag)."""
from __future__ import annotations

import math
from typing import Optional

from toolkit.audit.model import METRICS, STATE_NAMES
from toolkit.audit.ranges import Range
from toolkit.audit.status import Status
from toolkit.output import distinct, safe


def _upper(r: Optional[Range]) -> str:
    if r is None or r.inside or r.start > 0 or math.isinf(r.end):
        return ""
    return f"{r.end:g}"


def render(status: Status) -> str:
    lines = []
    seen: set = set()
    for h in status.hosts:
        parts = []
        for m in METRICS:
            v = h.metrics.get(m)
            if v is None:
                continue
            warn, crit = h.thresholds.get(m, (None, None))
            parts.append(f"{m}={v:.6g};{_upper(warn)};{_upper(crit)};0;")
        if h.last_t is not None:
            parts.append(f"snapshot_age={max(0, round(status.now - h.last_t))};;;0;")
        evs = [e for e in h.events if e["severity"] != "info"]
        if evs:
            text = "; ".join(f"{e['event']}{' ' + e['key'] if e['key'] else ''}: {e['detail']}" for e in evs)
        else:
            text = f"{STATE_NAMES[h.state]}: no open problem ({h.snapshots} snapshots, os {h.os or 'unknown'})"
        # names and details by the one rule for text from outside (output.safe): one line each
        name = distinct(safe(h.name).replace('"', "'"), seen, " ~")
        lines.append(f'{h.state} "mssdiag {name}" {"|".join(parts) or "-"} {safe(text)}')
    return "\n".join(lines) + ("\n" if lines else "")
