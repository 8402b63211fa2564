"""The same SYN seen at two capture points: matched by ISN (and IPv4 ID), which NAT keeps,
then the MSS compared. A different MSS means a middlebox between the points rewrote it."""
from __future__ import annotations

from typing import Dict, List, Tuple

from toolkit.findings import Finding
from toolkit.capture.record import SCHEMA


def _key(side: dict):
    return side["isn"] if side["syn_seen"] else None


def match(first: List[dict], second: List[dict]) -> Tuple[List[dict], List[Finding]]:
    by_isn: Dict[int, List[dict]] = {}
    for f in second:
        isn = _key(f["client_to_server"])
        if isn is not None:
            by_isn.setdefault(isn, []).append(f)
    pairs, findings = [], []
    for a in first:
        ca = a["client_to_server"]
        isn = _key(ca)
        if isn is None:
            continue
        for b in by_isn.get(isn, []):
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
            pairs.append(rec)
            if rec["clamped"]:
                findings.append(_finding(a, b, rec))
            break
    return pairs, findings


def _finding(a: dict, b: dict, rec: dict) -> Finding:
    ev = []
    for label, i in (("SYN", "syn_mss"), ("SYN-ACK", "synack_mss")):
        x, y = rec[i]
        if x != y:
            ev.append(f"{label} MSS {x if x is not None else 'none'} in {a['source']} (connection {a['id']}) and "
                      f"{y if y is not None else 'none'} in {b['source']} (connection {b['id']}), same segment "
                      f"(ISN {rec['isn']}, matched by {rec['matched_by'].replace('+', ' and ')})")
    ev.append("a router or firewall between the two capture points rewrites the MSS option (Cisco ip tcp "
              "adjust-mss, iptables TCPMSS)" + (" and translates addresses (NAT)" if rec["nat"] else ""))
    low = min(v for v in rec["syn_mss"] + rec["synack_mss"] if v is not None)
    severity = "problem" if low <= 536 else "warning"
    if low <= 536:
        ev.append(f"clamped to {low}: every segment of these connections carries at most {low} bytes")
    c = a["client_to_server"]
    return Finding("capture-mss-clamped", f"MSS clamped between the capture points (lowest {low})", ev, "high",
                   severity, [], {"source": a["source"], "flow": a["id"], "host": c["addr"],
                                  "peer": a["server_to_client"]["addr"], "second": b["source"],
                                  "second_flow": b["id"], "syn_mss": rec["syn_mss"],
                                  "synack_mss": rec["synack_mss"]})
