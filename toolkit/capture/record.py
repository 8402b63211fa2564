"""Per-connection records as dicts (the JSON contract, docs/capture.md) and table rows.

The analyzer keeps connections as rows of `array` columns; a dict is made when a record
is read (`Flows` makes them one at a time, so a million connections are never all dicts
at once)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Iterator, List, Optional

from toolkit.capture.flows import ENCAP, F_FIN, F_OPTS_UNKNOWN, F_RST, F_SYN, FW, MSS, W, Analyzer, addr_text

SCHEMA = "mssdiag.capture/2"


def side_dict(an: Analyzer, j: int, key: bytes) -> dict:
    """Side j of the analyzer's connections (2 * flow + 0 or 1) as its JSON record."""
    (flags, isn, _, _, _, mss, opts, ipid, packets, data, maxpay, maxip, v4, df, over, overmax, off, offmax,
     retrans, rmax, frags, fdgrams, fragip, flost, maxn) = an.S[j * W:(j + 1) * W]
    half = (len(key) - 4) >> 1
    if j & 1:             # 1: the side that received the flow's first packet
        addr, port = key[half:2 * half], (key[-2] << 8) | key[-1]
    else:
        addr, port = key[:half], (key[-4] << 8) | key[-3]
    syn = bool(flags & F_SYN)
    mss = mss - 1 if mss else None
    x = an.extra.get(j)
    ptbs, after, shrank = [], None, None
    if x is not None and x.ptbs:
        ptbs = [{"ts": round(ts, 6), "mtu": mtu, "seq": seq, "from": rep} for ts, mtu, seq, rep in x.ptbs]
        after = {"fitting": x.after_fit, "too_big": x.after_big, "largest_fitting": x.after_max or None}
        if x.after_fit or x.after_big:
            shrank = x.after_fit > 0 and x.after_big == 0 or x.after_fit > 0 and x.after_max < maxpay
    if mss is not None:
        note = None
    elif flags & F_OPTS_UNKNOWN:
        note = "options not visible (not printed, or the capture stopped inside the TCP header)"
    else:
        note = "absent from the SYN" if syn else "SYN not in the capture"
    segmentation = None
    if off:
        peer = an.S[(j ^ 1) * W + MSS]
        known = [v for v in (mss, peer - 1 if peer else None) if v is not None]
        segmentation = ("captured before segmentation: largest wire segment not visible; " +
                        (f"MSS agreed {min(known)}" if known else "MSS not in the capture"))
    ip_ids = [ipid - 1] if ipid else []
    if x is not None and x.ip_ids:
        ip_ids += x.ip_ids
    return {
        "addr": addr_text(addr), "port": port,
        "syn_seen": syn, "mss": mss, "mss_note": note,
        "options": list(an.options[opts]) if syn and not flags & F_OPTS_UNKNOWN else None,
        "isn": isn if syn else None, "syn_ip_ids": ip_ids,
        "packets": packets, "data_packets": data, "bytes": an.B[j],
        "max_payload": None if off else maxpay, "max_payload_segments": maxn,
        "max_captured_payload": max(maxpay, offmax),
        "max_ip_len": None if off else maxip,
        "above_peer_mss": over, "above_peer_mss_max": overmax or None,
        "offload_oversize": off, "offload_max": offmax or None,
        "segmentation": segmentation,
        "df_share": round(df / v4, 4) if v4 else None,
        "fragments": frags, "fragmented_datagrams": fdgrams,
        "incomplete_datagrams": flost,
        "max_fragment_ip_len": fragip or None,
        "retransmissions": retrans, "max_size_retransmissions": rmax,
        "ptb": ptbs, "after_ptb": after, "shrank_after_ptb": shrank,
        "black_hole": x.black_hole if x is not None else None, "fin": bool(flags & F_FIN),
        "rst": bool(flags & F_RST),
    }


def flow_dict(an: Analyzer, f: int) -> dict:
    """Connection f of the analyzer as its JSON record (docs/capture.md)."""
    frames, short, undecoded, client, encap = an.F[f * FW:(f + 1) * FW]
    key = an.keys[f]
    client += 2 * f
    c, s = side_dict(an, client, key), side_dict(an, client ^ 1, key)
    layers, overhead = an.encaps[encap]
    return {
        "record": "flow", "schema": SCHEMA, "id": f + 1, "source": an.source,
        "family": "ipv4" if len(key) == 12 else "ipv6",
        "client": _ep(c), "server": _ep(s),
        "first_ts": round(an.T[2 * f], 6), "last_ts": round(an.T[2 * f + 1], 6), "frames": frames,
        "frames_cut_in_tcp_header": short, "frames_undecoded": undecoded,
        "captured_before_segmentation": bool(c["offload_oversize"] or s["offload_oversize"]),
        "encapsulation": {"layers": list(layers), "overhead": overhead} if layers else None,
        "client_to_server": c, "server_to_client": s,
    }


def _ep(side: dict) -> str:
    a = side["addr"]
    return f"[{a}]:{side['port']}" if ":" in a else f"{a}:{side['port']}"


class Flows(Sequence):
    """The connections of every analyzer, as dicts made when read."""

    def __init__(self, analyzers: List[Analyzer] = ()):
        self.analyzers = list(analyzers)

    def __len__(self) -> int:
        return sum(a.flow_count for a in self.analyzers)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        for a in self.analyzers:
            if 0 <= i < a.flow_count:
                return flow_dict(a, i)
            i -= a.flow_count
        raise IndexError("flow index out of range")

    def __iter__(self) -> Iterator[dict]:
        for a in self.analyzers:
            for f in range(a.flow_count):
                yield flow_dict(a, f)

    def __eq__(self, other) -> bool:
        return list(self) == list(other)

    def __repr__(self) -> str:
        return f"Flows({len(self)} connections)"

    def encapsulated(self) -> bool:
        return any(any(a.F[f * FW + ENCAP] for f in range(a.flow_count)) for a in self.analyzers)


FLOW_HEADERS = ["source", "#", "client", "server", "SYN mss", "SYN-ACK mss", "max c->s", "max s->c",
                ">mss", "DF c/s", "frags", "PTB", "max-size rexmit", "black hole", "notes"]


def flow_row(d: dict, encap: bool = False) -> list:
    c, s = d["client_to_server"], d["server_to_client"]

    def mss(x):
        return x["mss"] if x["mss"] is not None else ("absent" if x["syn_seen"] and not x["mss_note"].startswith(
            "options") else "?")

    def biggest(x):
        return f"offload ({x['offload_max']})" if x["segmentation"] else x["max_payload"]

    def df(x):
        return "-" if x["df_share"] is None else f"{x['df_share'] * 100:.0f}%"
    ptb = [f"{p['mtu']}" for x in (c, s) for p in x["ptb"]]
    holes = [x["black_hole"]["then"] for x in (c, s) if x["black_hole"]]
    notes = []
    if d["captured_before_segmentation"]:
        notes.append("captured before segmentation")
    if d["frames_undecoded"]:
        notes.append(f"{d['frames_undecoded']} frames undecoded")
    if d["frames_cut_in_tcp_header"]:
        notes.append(f"{d['frames_cut_in_tcp_header']} cut in the TCP header")
    if c["incomplete_datagrams"] + s["incomplete_datagrams"]:
        notes.append(f"{c['incomplete_datagrams'] + s['incomplete_datagrams']} datagrams not reassembled")
    row = [d["source"], d["id"], d["client"], d["server"], mss(c), mss(s), biggest(c), biggest(s),
           (c["above_peer_mss"] + s["above_peer_mss"]) or "",
           f"{df(c)}/{df(s)}", (c["fragments"] + s["fragments"]) or "", ",".join(ptb),
           (c["max_size_retransmissions"] + s["max_size_retransmissions"]) or "", ",".join(holes), "; ".join(notes)]
    if encap:
        e = d["encapsulation"]
        row.insert(4, "" if e is None else "/".join(e["layers"]) + (f" (+{e['overhead']})" if e["overhead"] else ""))
    return row


# numbers to the right (a column of sizes keeps its alignment when a "?" or "offload (N)" shows up)
FLOW_ALIGN = ["left", "right", "left", "left", "right", "right", "right", "right", "right", "left", "right", "left",
              "right", "left", "left"]


def headers(encap: bool = False) -> List[str]:
    return FLOW_HEADERS[:4] + ["encapsulation"] + FLOW_HEADERS[4:] if encap else FLOW_HEADERS


def colalign(encap: bool = False) -> List[str]:
    return FLOW_ALIGN[:4] + ["left"] + FLOW_ALIGN[4:] if encap else FLOW_ALIGN
