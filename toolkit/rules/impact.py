"""What an MSS change gains: overhead, a 1 MB transfer, the Mathis bound (seeds 003, 004)."""
from __future__ import annotations

from typing import Optional

from toolkit import calc

TRANSFER = 1024 * 1024     # Stratus, "Tuning your MSS" Table 1: "a 1 MEG stream file"


def mss_change(before: int, after: int, rtt_s: Optional[float] = None, loss: Optional[float] = None,
               bandwidth_bps: Optional[float] = None) -> dict:
    t = calc.compare_transfer(TRANSFER, before, after)
    out = {
        "mss_before": before, "mss_after": after,
        "overhead_pct_before": round(100 * calc.overhead_share(before), 2),
        "overhead_pct_after": round(100 * calc.overhead_share(after), 2),
        "transfer_bytes": TRANSFER,
        "packets_before": t["before"]["packets"], "packets_after": t["after"]["packets"],
        "wire_bytes_before": t["before"]["wire_bytes"], "wire_bytes_after": t["after"]["wire_bytes"],
        "fewer_packets_pct": t["fewer_packets_pct"], "fewer_bytes_pct": t["fewer_bytes_pct"],
        "ack_model": t["before"]["model"],
        "mathis_bps_before": None, "mathis_bps_after": None,
    }
    if rtt_s and loss:
        cap = bandwidth_bps
        b, a = calc.mathis(before, rtt_s, loss), calc.mathis(after, rtt_s, loss)
        out["mathis_bps_before"] = round(min(b, cap) if cap else b)
        out["mathis_bps_after"] = round(min(a, cap) if cap else a)
    return out


def describe(i: dict) -> str:
    text = (f"MSS {i['mss_before']} -> {i['mss_after']}: header overhead {i['overhead_pct_before']}% -> "
            f"{i['overhead_pct_after']}% per segment; a 1 MiB transfer takes {i['packets_before']:,} -> "
            f"{i['packets_after']:,} packets ({i['fewer_packets_pct']}% fewer) and {i['wire_bytes_before']:,} -> "
            f"{i['wire_bytes_after']:,} bytes on the wire ({i['fewer_bytes_pct']}% fewer)")
    if i.get("mathis_bps_before"):
        text += (f"; Mathis bound {calc.human_rate(i['mathis_bps_before'])} -> "
                 f"{calc.human_rate(i['mathis_bps_after'])}")
    return text
