"""`mssdiag calc`: the work, without typer (the options and help: toolkit/cli/calc.py)."""
from __future__ import annotations

import sys
from typing import Callable, Optional, TypeVar

from toolkit.commands import Exit
from toolkit.output import dumps, error


T = TypeVar("T")

def _parse(option: str, text: str, fn: Callable[[str], T]) -> T:
    try:
        return fn(text)
    except ValueError as exc:
        error(f"{option} {text!r}: {exc}")
        raise Exit(2)


def _show(data: dict, rows, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(dumps(data) + "\n")
    else:
        from toolkit.output import plain_table
        sys.stdout.write(plain_table(rows) + "\n")


def mss(mtu: str, encap: str, family: str, ip_options: int, tcp_options: int, as_json: bool) -> None:
    """`mssdiag calc mss` (its help: toolkit/cli/calc.py)."""
    from toolkit import calc as c
    from toolkit.platforms import vos
    mtu_v = _parse("--mtu", mtu, lambda s: int(s) if s.isdigit() else (_ for _ in ()).throw(ValueError("not a whole number of bytes")))
    encaps = _parse("--encap", encap, c.parse_encaps)
    try:
        r = c.mss_for(mtu_v, family, encaps, ip_options, tcp_options)
    except ValueError as exc:
        error(f"--mtu {mtu}: {exc}")
        raise Exit(2)
    stcp = vos.value_for(r.ip_mtu, r.family)  # the MSS + 20 within STCP's own range (500-1480)
    rows = [("carrier MTU", r.mtu), ("encapsulations", ", ".join(r.encaps) or "none"), ("inner IP MTU", r.ip_mtu),
            (f"MSS ({family})", r.mss), ("payload per segment", r.payload),
            ("overhead per frame", f"{r.frame_overhead} bytes"), ("data share", f"{100 * r.efficiency:.2f}%"),
            ("VOS STCP min_mss", f"{stcp} (hex {stcp:x})"),
            ("TCP_OS tcpos_default_mss$", f"{r.mss} (hex {r.mss:x})")]
    rows += [("note", n) for n in r.notes]
    _show(dict(r.to_dict(), vos_min_mss=stcp), rows, as_json)

def transfer(size: str, mss: str, ack_every: int, window: Optional[str], as_json: bool) -> None:
    """`mssdiag calc transfer` (its help: toolkit/cli/calc.py)."""
    from toolkit import calc as c
    n = _parse("--size", size, c.parse_size)
    msses = _parse("--mss", mss, lambda s: [int(x) for x in s.split(",") if x.strip().isdigit() and int(x) > 0]
                   if all(x.strip().isdigit() and int(x) > 0 for x in s.split(",")) and len(s.split(",")) <= 2
                   else (_ for _ in ()).throw(ValueError("one or two MSS values in bytes, e.g. 536 or 536,1460")))
    win = _parse("--window", window, c.parse_size) if window else None
    if ack_every < 1:
        error(f"--ack-every {ack_every}: must be 1 or more")
        raise Exit(2)
    results = [c.transfer(n, m, ack_every, win) for m in msses]
    rows = [("MSS",) + tuple(t.mss for t in results), ("data segments",) + tuple(t.segments for t in results),
            ("ACKs",) + tuple(t.acks for t in results), ("open/close",) + tuple(t.handshake for t in results),
            ("packets",) + tuple(t.packets for t in results), ("IP bytes",) + tuple(t.ip_bytes for t in results),
            ("wire bytes",) + tuple(t.wire_bytes for t in results)]
    data = {"size": n, "model": results[0].model, "transfers": [t.to_dict() for t in results]}
    if len(results) == 2:
        cmp = c.compare_transfer(n, msses[0], msses[1], ack_every=ack_every, window=win)
        data.update(fewer_packets_pct=cmp["fewer_packets_pct"], fewer_bytes_pct=cmp["fewer_bytes_pct"])
        rows.append(("fewer", f"{cmp['fewer_packets_pct']}% packets", f"{cmp['fewer_bytes_pct']}% bytes"))
    rows.append(("model", results[0].model))
    _show(data, rows, as_json)

def bdp(bandwidth: str, rtt: str, factor: int, as_json: bool) -> None:
    """`mssdiag calc bdp` (its help: toolkit/cli/calc.py)."""
    from toolkit import calc as c
    bw = _parse("--bandwidth", bandwidth, c.parse_rate)
    t = _parse("--rtt", rtt, c.parse_time)
    if factor < 1:
        error(f"--factor {factor}: must be 1 or more")
        raise Exit(2)
    b = c.bdp(bw, t, factor)
    rows = [("bandwidth", c.human_rate(bw)), ("RTT", f"{t * 1e3:g} ms"), ("BDP", f"{b.bdp_bytes:,} bytes"),
            (f"{factor} x BDP", f"{b.buffer_bytes:,} bytes"),
            ("buffer (rounded as the BDP lab does)", f"{b.buffer_mib_rounded:,} bytes ({b.buffer_mib_rounded // c.MIB} MiB)")]
    rows += [("sysctl", line) for line in b.sysctl]
    _show(b.to_dict(), rows, as_json)

def mathis(mss: str, rtt: str, loss: str, as_json: bool) -> None:
    """`mssdiag calc mathis` (its help: toolkit/cli/calc.py)."""
    from toolkit import calc as c
    m = _parse("--mss", mss, lambda s: int(s) if s.isdigit() and int(s) > 0 else
               (_ for _ in ()).throw(ValueError("not an MSS in bytes")))
    t = _parse("--rtt", rtt, c.parse_time)
    p = _parse("--loss", loss, c.parse_loss)
    v = c.mathis(m, t, p)
    rows = [("MSS", m), ("RTT", f"{t * 1e3:g} ms"), ("loss", f"{p:g}"), ("bound", f"{c.human_rate(v)} ({v:,.0f} bit/s)")]
    _show({"mss": m, "rtt_s": t, "loss": p, "bound_bps": v}, rows, as_json)
