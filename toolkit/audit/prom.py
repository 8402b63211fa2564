"""Prometheus text exposition for node_exporter's textfile collector.

Conventions: every name starts with `mssdiag_`; base units (seconds, bytes); raw counter
totals are typed `counter` and end in `_total` (Prometheus' rate()/increase() handle resets
themselves); labels host, os, family on the counters; no sample timestamps (the collector
refuses them); `mssdiag_last_success_timestamp_seconds` says when the audit last succeeded.
The file is written beside its target and renamed over it (output.write_atomic)."""
from __future__ import annotations

from typing import Dict, List, Tuple

from toolkit.output import write_atomic
from toolkit.audit.model import COLUMNS
from toolkit.audit.status import Status

HELP: Dict[str, str] = {
    "ReasmReqds": "IP fragments received that needed reassembly (IP-MIB ipReasmReqds), as the host counts them",
    "ReasmOKs": "IP datagrams reassembled (ipReasmOKs)",
    "ReasmFails": "IP reassembly failures (ipReasmFails; datagrams, or fragments on BSD-family stacks)",
    "ReasmTimeout": "IP reassemblies given up after the reassembly timeout (ReasmTimeout, a count)",
    "FragOKs": "outgoing IP datagrams fragmented (ipFragOKs)",
    "FragFails": "outgoing IP datagrams dropped: they needed fragmenting but had DF set (ipFragFails)",
    "FragCreates": "IP fragments created (ipFragCreates)",
    "InReceives": "IP datagrams received (ipInReceives)",
    "InDelivers": "IP datagrams delivered to the host's own protocols (ipInDelivers)",
    "OutRequests": "IP datagrams sent by the host's own protocols (ipOutRequests)",
    "ForwDatagrams": "IP datagrams forwarded (ipForwDatagrams)",
}


def _esc(v) -> str:
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**kv) -> str:
    return "{" + ",".join(f'{k}="{_esc(v)}"' for k, v in kv.items() if v is not None) + "}"


def _num(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def render(status: Status) -> str:
    families: List[Tuple[str, str, str, List[str]]] = []

    def family(name: str, kind: str, help_: str, samples: List[str]) -> None:
        if samples:
            families.append((name, kind, help_, samples))

    for counter, col in COLUMNS.items():
        samples = []
        for h in status.hosts:
            for fam, values in sorted(h.counters.items()):
                v = values.get(counter)
                if isinstance(v, int):
                    samples.append(f"mssdiag_ip_{col}_total{_labels(host=h.name, os=h.os or 'unknown', family=fam)} {v}")
        family(f"mssdiag_ip_{col}_total", "counter", HELP[counter] + ".", samples)
    family("mssdiag_snapshot_timestamp_seconds", "gauge", "When the latest stored snapshot of the host was taken.",
           [f"mssdiag_snapshot_timestamp_seconds{_labels(host=h.name, os=h.os or 'unknown')} {_num(h.last_t)}"
            for h in status.hosts if h.last_t is not None])
    family("mssdiag_host_state", "gauge", "The host's audit state: 0 OK, 1 warning, 2 critical (worst open event).",
           [f"mssdiag_host_state{_labels(host=h.name)} {h.state}" for h in status.hosts])
    samples = []
    for h in status.hosts:
        counts: Dict[Tuple[str, str], int] = {}
        for e in h.events:
            counts[(e["event"], e["severity"])] = counts.get((e["event"], e["severity"]), 0) + 1
        for (event, severity), n in sorted(counts.items()):
            samples.append(f"mssdiag_events_open{_labels(host=h.name, event=event, severity=severity)} {n}")
    family("mssdiag_events_open", "gauge", "Open audit events by type and severity (docs/audit.md lists them).",
           samples)
    pm, bh, mss = [], [], []
    for h in status.hosts:
        for p in h.probes:
            lab = dict(host=h.name, target=p["target"], vantage=p["vantage"] or "")
            if p["pmtu"]:
                pm.append(f"mssdiag_path_mtu_bytes{_labels(**lab)} {p['pmtu']}")
            bh.append(f"mssdiag_black_hole{_labels(**lab)} {_num(bool(p['black_hole']))}")
            for kind in ("synack", "used"):
                v = p["mss"].get(kind)
                if v:
                    mss.append(f"mssdiag_mss_bytes{_labels(**lab, port=p['mss'].get('port') or '', kind=kind)} {v}")
    family("mssdiag_path_mtu_bytes", "gauge", "Path MTU to the target at the latest probe.", pm)
    family("mssdiag_black_hole", "gauge", "1 when the latest probe found a PMTUD black hole to the target.", bh)
    family("mssdiag_mss_bytes", "gauge", "MSS the target advertised in its SYN-ACK (kind=synack) or really used "
           "(kind=used) at the latest probe.", mss)
    if status.last_success_t is not None:
        family("mssdiag_last_success_timestamp_seconds", "gauge", "When an audit run last finished successfully.",
               [f"mssdiag_last_success_timestamp_seconds {_num(status.last_success_t)}"])
    out = []
    for name, kind, help_, samples in families:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(samples)
    return "\n".join(out) + "\n"


def write(path: str, status: Status) -> None:
    write_atomic(path, render(status), 0o644)

