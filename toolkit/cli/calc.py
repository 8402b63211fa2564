"""`mssdiag calc`: the numbers alone (MSS from MTU, transfers, BDP, Mathis bound)."""

import sys
from typing import Annotated, Callable, Optional, TypeVar

import typer

from toolkit.output import dumps, error

app = typer.Typer(name="calc", help="TCP numbers: MSS from MTU, packets for a transfer, BDP and buffers, Mathis bound.",
                  no_args_is_help=True)
JSON = typer.Option("--json", help="Print one JSON object.")
T = TypeVar("T")


def _parse(option: str, text: str, fn: Callable[[str], T]) -> T:
    try:
        return fn(text)
    except ValueError as exc:
        error(f"{option} {text!r}: {exc}")
        raise typer.Exit(2)


def _show(data: dict, rows, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(dumps(data) + "\n")
    else:
        from tabulate import tabulate
        sys.stdout.write(tabulate(rows, tablefmt="plain") + "\n")


def _whole(text: str, why: str, least: int = 0) -> int:
    if not text.isdigit() or int(text) < least:
        raise ValueError(why)
    return int(text)


def _msses(text: str) -> list:
    parts = text.split(",")
    if len(parts) > 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise ValueError("one or two MSS values in bytes, e.g. 536 or 536,1460")
    return [int(p) for p in parts]


@app.command("mss")
def mss(mtu: Annotated[str, typer.Option("--mtu", help="Carrier MTU in bytes (the link's IP MTU).")] = "1500",
        encap: Annotated[str, typer.Option("--encap", help="Encapsulations, outermost first: vlan, qinq, pppoe, gre, "
                                           "udp, ipsec, vxlan, mpls (mpls:N for N labels), comma separated.")] = "",
        family: Annotated[str, typer.Option("--family", help="ipv4 or ipv6.")] = "ipv4",
        ip_options: Annotated[int, typer.Option("--ip-options", help="IPv4 option bytes (multiple of 4).")] = 0,
        tcp_options: Annotated[int, typer.Option("--tcp-options",
                                                 help="TCP option bytes per segment (timestamps: 12).")] = 0,
        as_json: Annotated[bool, JSON] = False) -> None:
    """MSS for an MTU after encapsulations, and the per-segment overhead.

    Example:

    ```
    mssdiag calc mss --mtu 1500 --encap pppoe,vlan
    ```
    """
    from toolkit import calc as c
    from toolkit.platforms import vos
    mtu_v = _parse("--mtu", mtu, lambda s: _whole(s, "not a whole number of bytes"))
    encaps = _parse("--encap", encap, c.parse_encaps)
    try:
        r = c.mss_for(mtu_v, family, encaps, ip_options, tcp_options)
    except ValueError as exc:
        error(f"--mtu {mtu}: {exc}")
        raise typer.Exit(2)
    stcp = vos.value_for(r.ip_mtu, r.family)  # the MSS + 20 within STCP's own range (500-1480)
    rows = [("carrier MTU", r.mtu), ("encapsulations", ", ".join(r.encaps) or "none"), ("inner IP MTU", r.ip_mtu),
            (f"MSS ({family})", r.mss), ("payload per segment", r.payload),
            ("overhead per frame", f"{r.frame_overhead} bytes"), ("data share", f"{100 * r.efficiency:.2f}%"),
            ("VOS STCP min_mss", f"{stcp} (hex {stcp:x})"),
            ("TCP_OS tcpos_default_mss$", f"{r.mss} (hex {r.mss:x})")]
    rows += [("note", n) for n in r.notes]
    _show(dict(r.to_dict(), vos_min_mss=stcp), rows, as_json)


@app.command("transfer")
def transfer(mss: Annotated[str, typer.Option("--mss", help="MSS, or two to compare: 536,1460.")],
             size: Annotated[str, typer.Option("--size", help="Bytes to transfer: 1MB (10^6), 1MiB (2^20), "
                                               "64k.")] = "1MiB",
             ack_every: Annotated[int, typer.Option("--ack-every", help="Receiver ACKs every N segments.")] = 2,
             window: Annotated[Optional[str], typer.Option("--window", help="Sender window in bytes (odd last "
                                                           "segment of each window ACKed alone).")] = None,
             as_json: Annotated[bool, JSON] = False) -> None:
    """Packets and bytes (both ways, ACKs included) for one transfer, as in Table 1 of Stratus "Tuning your MSS".

    Example:

    ```
    mssdiag calc transfer --size 1MB --mss 536,1460
    ```
    """
    from toolkit import calc as c
    n = _parse("--size", size, c.parse_size)
    msses = _parse("--mss", mss, _msses)
    win = _parse("--window", window, c.parse_size) if window else None
    if ack_every < 1:
        error(f"--ack-every {ack_every}: must be 1 or more")
        raise typer.Exit(2)
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


@app.command("bdp")
def bdp(bandwidth: Annotated[str, typer.Option("--bandwidth", help="Link rate: 100M, 10G, 1.5Gbit/s.")],
        rtt: Annotated[str, typer.Option("--rtt", help="Round-trip time: 20ms, 0.05s.")],
        factor: Annotated[int, typer.Option("--factor", help="Buffer = factor x BDP (2 on Linux; 4 with BBR "
                                            "under loss).")] = 2,
        as_json: Annotated[bool, JSON] = False) -> None:
    """Bandwidth-delay product and TCP buffer sizes, with the Linux sysctl lines (as the "BDP and TCP buffer size" lab computes them).

    Example:

    ```
    mssdiag calc bdp --bandwidth 10G --rtt 20ms
    ```
    """
    from toolkit import calc as c
    bw = _parse("--bandwidth", bandwidth, c.parse_rate)
    t = _parse("--rtt", rtt, c.parse_time)
    if factor < 1:
        error(f"--factor {factor}: must be 1 or more")
        raise typer.Exit(2)
    b = c.bdp(bw, t, factor)
    rows = [("bandwidth", c.human_rate(bw)), ("RTT", f"{t * 1e3:g} ms"), ("BDP", f"{b.bdp_bytes:,} bytes"),
            (f"{factor} x BDP", f"{b.buffer_bytes:,} bytes"),
            ("buffer (rounded as the BDP lab does)", f"{b.buffer_mib_rounded:,} bytes ({b.buffer_mib_rounded // c.MIB} MiB)")]
    rows += [("sysctl", line) for line in b.sysctl]
    _show(b.to_dict(), rows, as_json)


@app.command("mathis")
def mathis(mss: Annotated[str, typer.Option("--mss", help="MSS in bytes.")],
           rtt: Annotated[str, typer.Option("--rtt", help="Round-trip time: 50ms.")],
           loss: Annotated[str, typer.Option("--loss", help="Loss rate: 0.0001 or 0.01%.")],
           as_json: Annotated[bool, JSON] = False) -> None:
    """Upper bound on one TCP flow: MSS/RTT x 1/sqrt(loss) (the Mathis bound).

    Example:

    ```
    mssdiag calc mathis --mss 1460 --rtt 50ms --loss 0.0001
    ```
    """
    from toolkit import calc as c
    m = _parse("--mss", mss, lambda s: _whole(s, "not an MSS in bytes", 1))
    t = _parse("--rtt", rtt, c.parse_time)
    p = _parse("--loss", loss, c.parse_loss)
    v = c.mathis(m, t, p)
    rows = [("MSS", m), ("RTT", f"{t * 1e3:g} ms"), ("loss", f"{p:g}"), ("bound", f"{c.human_rate(v)} ({v:,.0f} bit/s)")]
    _show({"mss": m, "rtt_s": t, "loss": p, "bound_bps": v}, rows, as_json)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="calc")
