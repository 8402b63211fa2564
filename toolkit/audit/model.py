"""What the audit measures and which events it raises: names are an interface (docs/audit.md,
Nagios perfdata labels, the config file, JSON Lines): add, never rename."""
from __future__ import annotations

from typing import Dict, Tuple

from parsers.model import ALL

SCHEMA = "mssdiag.audit/1"

# Column names in the store for the IP-MIB counters (increases summed over IPv4 and IPv6).
COLUMNS: Dict[str, str] = {
    "ReasmReqds": "reasm_reqds", "ReasmOKs": "reasm_oks", "ReasmFails": "reasm_fails",
    "ReasmTimeout": "reasm_timeout", "FragOKs": "frag_oks", "FragFails": "frag_fails",
    "FragCreates": "frag_creates", "InReceives": "in_receives", "InDelivers": "in_delivers",
    "OutRequests": "out_requests", "ForwDatagrams": "forw_datagrams",
}
assert tuple(COLUMNS) == ALL

# Metrics evaluated per interval: the increase per hour (legacy stacks move slowly: a
# per-second rate rounds to 0), IPv4 and IPv6 added together.
METRICS: Dict[str, str] = {
    "reasm_reqds_per_h": "fragments received that needed reassembly, per hour",
    "reasm_oks_per_h": "datagrams reassembled, per hour",
    "reasm_fails_per_h": "reassembly failures, per hour (as the OS counts them)",
    "reasm_timeout_per_h": "reassemblies given up after the timeout, per hour",
    "frag_oks_per_h": "outgoing datagrams fragmented, per hour",
    "frag_fails_per_h": "outgoing datagrams dropped: needed fragmenting but DF was set, per hour",
    "frag_creates_per_h": "fragments created, per hour",
}
METRIC_COLUMN = {m: m[:-len("_per_h")] for m in METRICS}

OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
STATE_NAMES = ("OK", "WARNING", "CRITICAL", "UNKNOWN")
SEVERITIES = {"info": OK, "warning": WARNING, "critical": CRITICAL}

# Events: type -> (what it means, the metrics it is judged on (threshold events) or ()).
EVENTS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "fragmentation": ("fragmentation appeared: fragments reassembled or created",
                      ("reasm_reqds_per_h", "frag_creates_per_h")),
    "reassembly-failing": ("reassembly failures or timeouts rising", ("reasm_fails_per_h", "reasm_timeout_per_h")),
    "frag-fails": ("datagrams dropped because they needed fragmenting but had DF set (FragFails rising)",
                   ("frag_fails_per_h",)),
    "counter-reset": ("counters went back to zero: the host (or its network namespace) restarted", ()),
    "stale": ("no new snapshot for longer than the stale limit, or the last collection failed", ()),
    "pmtu-changed": ("the path MTU to a target changed between probes", ()),
    "mss-changed": ("the MSS a target advertises or uses changed between probes", ()),
    "black-hole": ("a PMTUD black hole: big DF packets to a target vanish without ICMP", ()),
}
THRESHOLD_EVENTS = {k: v[1] for k, v in EVENTS.items() if v[1]}

# Default thresholds (monitoring-plugins ranges) and the state of the other events.
DEFAULT_THRESHOLDS: Dict[str, Dict[str, str]] = {
    "reasm_reqds_per_h": {"warning": "0"},
    "frag_creates_per_h": {"warning": "0"},
    "reasm_fails_per_h": {"warning": "0", "critical": "10"},
    "reasm_timeout_per_h": {"warning": "0", "critical": "10"},
    "frag_fails_per_h": {"warning": "0", "critical": "10"},
}
DEFAULT_STATES: Dict[str, str] = {
    "counter-reset": "info", "stale": "warning", "pmtu-changed": "warning",
    "mss-changed": "warning", "black-hole": "critical",
}
DEFAULT_STALE_INTERVALS = 3
