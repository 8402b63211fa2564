"""The same SYN seen at two capture points: matched by ISN (and IPv4 ID), which NAT keeps,
then the MSS compared (`clamped`); toolkit/rules/captured.py says what a difference means."""
from __future__ import annotations

from typing import Dict, Iterable, List, Sequence

from toolkit.capture.record import SCHEMA


def _key(side: dict):
    return side["isn"] if side["syn_seen"] else None


def match(first: Iterable[dict], second: Sequence[dict]) -> List[tuple]:
    """(record, first flow, second flow) for every SYN seen at both points."""
    by_isn: Dict[int, List[int]] = {}      # indexes: the second capture's flows are not all held as dicts
    for i, f in enumerate(second):
        isn = _key(f["client_to_server"])
        if isn is not None:
            by_isn.setdefault(isn, []).append(i)
    pairs = []
    for a in first:
        ca = a["client_to_server"]
        isn = _key(ca)
        if isn is None:
            continue
        for b in (second[i] for i in by_isn.get(isn, [])):
            cb = b["client_to_server"]
            ids_a, ids_b = set(ca["syn_ip_ids"]), set(cb["syn_ip_ids"])
            if ids_a and ids_b and not ids_a & ids_b:
                continue      # same ISN by chance: another SYN
            sa, sb = a["server_to_client"], b["server_to_client"]
            rec = {"record": "clamp", "schema": SCHEMA, "first": {"source": a["source"], "flow": a["id"]},
                   "second": {"source": b["source"], "flow": b["id"]}, "isn": isn,
                   "matched_by": "isn+ip_id" if ids_a & ids_b else "isn",
                   "nat": (ca["addr"], ca["port"], sa["addr"], sa["port"]) != (cb["addr"], cb["port"], sb["addr"], sb["port"]),
                   "syn_mss": [ca["mss"], cb["mss"]], "synack_mss": [sa["mss"], sb["mss"]]}
            rec["clamped"] = rec["syn_mss"][0] != rec["syn_mss"][1] or (
                sa["syn_seen"] and sb["syn_seen"] and rec["synack_mss"][0] != rec["synack_mss"][1])
            pairs.append((rec, a, b))
            break
    return pairs
