"""Per-connection records as dicts (the JSON contract, docs/capture.md) and table rows."""
from __future__ import annotations

from typing import Optional

from toolkit.capture.flows import Flow, Side, addr_text

SCHEMA = "mssdiag.capture/1"


def side_dict(me: Side, peer: Side) -> dict:
    ptbs = [{"ts": round(ts, 6), "mtu": mtu, "seq": seq, "from": rep} for ts, mtu, seq, rep in me.ptbs]
    after = None
    if me.ptbs:
        after = {"fitting": me.after_fit, "too_big": me.after_big, "largest_fitting": me.after_max or None}
    shrank: Optional[bool] = None
    if me.ptbs and (me.after_fit or me.after_big):
        shrank = me.after_fit > 0 and me.after_big == 0 or me.after_fit > 0 and me.after_max < me.max_payload
    return {
        "addr": addr_text(me.addr), "port": me.port,
        "syn_seen": me.syn, "mss": me.mss,
        "mss_note": None if me.mss is not None else ("absent from the SYN" if me.syn else "SYN not in the capture"),
        "options": me.options if me.syn else None,
        "isn": me.isn, "syn_ip_ids": me.ip_ids,
        "packets": me.packets, "data_packets": me.data_packets, "bytes": me.bytes,
        "max_payload": me.max_payload, "max_ip_len": me.max_ip,
        "above_peer_mss": me.over_mss, "above_peer_mss_max": me.over_mss_max or None,
        "offload_oversize": me.offload, "offload_max": me.offload_max or None,
        "df_share": round(me.df / me.v4, 4) if me.v4 else None,
        "fragments": me.fragments, "fragmented_datagrams": me.frag_datagrams,
        "max_fragment_ip_len": me.frag_ip or None,
        "retransmissions": me.retrans, "max_size_retransmissions": me.retrans_max,
        "ptb": ptbs, "after_ptb": after, "shrank_after_ptb": shrank,
        "black_hole": me.black_hole, "fin": me.fin, "rst": me.rst,
    }


def flow_dict(flow: Flow) -> dict:
    c, s = flow.client, flow.server
    return {
        "record": "flow", "schema": SCHEMA, "id": flow.id, "source": flow.source, "family": flow.family,
        "client": f"{_ep(c)}", "server": f"{_ep(s)}",
        "first_ts": round(flow.first_ts, 6), "last_ts": round(flow.last_ts, 6), "frames": flow.frames,
        "frames_cut_in_tcp_header": flow.captured_short,
        "client_to_server": side_dict(c, s), "server_to_client": side_dict(s, c),
    }


def _ep(side: Side) -> str:
    a = addr_text(side.addr)
    return f"[{a}]:{side.port}" if ":" in a else f"{a}:{side.port}"


FLOW_HEADERS = ["source", "#", "client", "server", "SYN mss", "SYN-ACK mss", "max c->s", "max s->c",
                ">mss", "DF c/s", "frags", "PTB", "max-size rexmit", "black hole"]


def flow_row(d: dict) -> list:
    c, s = d["client_to_server"], d["server_to_client"]

    def mss(x):
        return x["mss"] if x["mss"] is not None else ("absent" if x["syn_seen"] else "?")

    def df(x):
        return "-" if x["df_share"] is None else f"{x['df_share'] * 100:.0f}%"
    ptb = [f"{p['mtu']}" for x in (c, s) for p in x["ptb"]]
    holes = [x["black_hole"]["then"] for x in (c, s) if x["black_hole"]]
    return [d["source"], d["id"], d["client"], d["server"], mss(c), mss(s), c["max_payload"], s["max_payload"],
            (c["above_peer_mss"] + s["above_peer_mss"] + c["offload_oversize"] + s["offload_oversize"]) or "",
            f"{df(c)}/{df(s)}", (c["fragments"] + s["fragments"]) or "", ",".join(ptb),
            (c["max_size_retransmissions"] + s["max_size_retransmissions"]) or "", ",".join(holes)]
