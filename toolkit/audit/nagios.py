"""Nagios / Icinga plugin output (monitoring-plugins development guidelines): one status line
`MSSDIAG <STATE> - <text> | <perfdata>` on stdout and exit 0 OK, 1 WARNING, 2 CRITICAL,
3 UNKNOWN. Perfdata: `'label'=value[UOM];warn;crit;min;max`, the warn/crit fields carrying
the threshold ranges as configured; `U` when the latest interval has no known value (a
reset, the first snapshot). With more than one host the labels are `host:metric`."""
from __future__ import annotations

from typing import List

from toolkit.audit.model import METRICS, STATE_NAMES, UNKNOWN
from toolkit.audit.status import HostStatus, Status
from toolkit.output import distinct, safe

PREFIX = "MSSDIAG"


def _one_label(text: str) -> str:
    # the guidelines forbid = and ' in labels, and | would start another perfdata section;
    # names are shown by the one rule for text from outside (output.safe): one line, no control
    return safe(text).replace("'", "_").replace("=", "_").replace("|", "/")


def _text(text: str) -> str:
    """The status text: output.safe, and no `|`, which would start the perfdata."""
    return safe(text).replace("|", "/")


def _num(v: float) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def perfdata(hosts: List[HostStatus], now: float) -> str:
    many = len(hosts) > 1
    out = []
    seen: set = set()

    def _label(text: str) -> str:
        return distinct(_one_label(text), seen)

    for h in hosts:
        for m in METRICS:
            warn, crit = h.thresholds.get(m, (None, None))
            v = h.metrics.get(m)
            label = _label(f"{h.name}:{m}" if many else m)
            out.append(f"'{label}'={'U' if v is None else _num(v)};{warn.text if warn else ''};"
                       f"{crit.text if crit else ''};0;")
        if h.last_t is not None:
            label = _label(f"{h.name}:snapshot_age" if many else "snapshot_age")
            out.append(f"'{label}'={max(0, round(now - h.last_t))}s;;;0;")
        for p in h.probes:
            if p["pmtu"]:
                label = _label(f"{h.name}:pmtu {p['target']}" if many else f"pmtu {p['target']}")
                out.append(f"'{label}'={p['pmtu']}B;;;0;")
    return " ".join(out)


def _summary(status: Status) -> str:
    hosts = status.hosts
    bad = sorted((h for h in hosts if h.state), key=lambda h: -h.state)
    head = f"{len(hosts)} host{'s' if len(hosts) != 1 else ''}"
    if not bad:
        text = f"{head}, no open problem"
        if len(hosts) == 1:
            h = hosts[0]
            text = f"{h.name}: no open problem"
    else:
        counts = {}
        for h in bad:
            counts[STATE_NAMES[h.state].lower()] = counts.get(STATE_NAMES[h.state].lower(), 0) + 1
        text = head + " (" + ", ".join(f"{n} {k}" for k, n in counts.items()) + "): "
        parts = []
        for h in bad[:5]:
            evs = [e for e in h.events if e["severity"] != "info"]
            what = "; ".join(f"{e['event']}{' ' + e['key'] if e['key'] else ''} ({e['detail']})" for e in evs[:3])
            parts.append(f"{h.name}: {what}")
        text += " / ".join(parts) + (f" / and {len(bad) - 5} more" if len(bad) > 5 else "")
    if status.failed_inputs:
        text += f"; {len(status.failed_inputs)} input(s) unreadable ({status.failed_inputs[0]}"
        text += ", ...)" if len(status.failed_inputs) > 1 else ")"
    return _text(text)


def render(status: Status, note: str = "") -> str:
    """The plugin's one line; `note` (the first input error) is added to the text."""
    state = status.state
    if not status.hosts:
        return f"{PREFIX} UNKNOWN - no host to judge in {_text(status.store)}\n"
    return (f"{PREFIX} {STATE_NAMES[state]} - {_summary(status)}{f' [{_text(note)}]' if note else ''}"
            f" | {perfdata(status.hosts, status.now)}\n")


def unknown(reason: str) -> str:
    """The line for usage errors, internal errors and timeouts (exit 3)."""
    return f"{PREFIX} {STATE_NAMES[UNKNOWN]} - {_text(reason) if reason else 'unknown'}\n"
