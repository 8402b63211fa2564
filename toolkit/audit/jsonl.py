"""JSON Lines: one record per new snapshot, probe, collection, changed event and host status,
each carrying the schema (`mssdiag.audit/1`) and the tool version, so a log shipper can
append them anywhere and a reader knows what it holds."""
from __future__ import annotations

from typing import Iterator

from toolkit.audit.model import SCHEMA
from toolkit.audit.status import Status
from toolkit.output import dumps


def records(status: Status, tool: str) -> Iterator[dict]:
    base = {"schema": SCHEMA, "tool": tool}
    for s in status.new_snapshots:
        s = dict(s)
        s.pop("id", None)
        yield {**base, "type": "snapshot", **s}
    for p in status.new_probes:
        yield {**base, "type": "probe", **p}
    for c in status.collections:
        yield {**base, "type": "collection", **c}
    for e in status.changed_events:
        yield {**base, "type": "event", **e}
    for h in status.hosts:
        yield {**base, "type": "host", **h.to_dict(status.now)}


def render(status: Status, tool: str) -> str:
    # output.dumps: a host name or source from a customer's file carries no C1 or bidi control
    return "".join(dumps(r, separators=(",", ":")) + "\n" for r in records(status, tool))
