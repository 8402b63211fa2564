"""`mssdiag calc`: the numbers alone (MSS from MTU, transfers, BDP, Mathis bound): the options and help;
the work: toolkit/commands/calc.py."""
from __future__ import annotations

from typing import Optional

import typer

from toolkit.cli.startup import plain
from toolkit.commands import calc as work

app = typer.Typer(name="calc", help="TCP numbers: MSS from MTU, packets for a transfer, BDP and buffers, Mathis bound.",
                  no_args_is_help=True)
JSON = typer.Option(False, "--json", help="Print one JSON object.")


@app.command("mss")
@plain(work.mss)
def mss(mtu: str = typer.Option("1500", "--mtu", help="Carrier MTU in bytes (the link's IP MTU)."),
        encap: str = typer.Option("", "--encap", help="Encapsulations, outermost first: vlan, qinq, pppoe, gre, udp, "
                                  "ipsec, vxlan, mpls (mpls:N for N labels), comma separated."),
        family: str = typer.Option("ipv4", "--family", help="ipv4 or ipv6."),
        ip_options: int = typer.Option(0, "--ip-options", help="IPv4 option bytes (multiple of 4)."),
        tcp_options: int = typer.Option(0, "--tcp-options", help="TCP option bytes per segment (timestamps: 12)."),
        as_json: bool = JSON) -> None:
    """MSS for an MTU after encapsulations, and the per-segment overhead.

    Example: mssdiag calc mss --mtu 1500 --encap pppoe,vlan
    """


@app.command("transfer")
@plain(work.transfer)
def transfer(size: str = typer.Option("1MiB", "--size", help="Bytes to transfer: 1MB (10^6), 1MiB (2^20), 64k."),
             mss: str = typer.Option(..., "--mss", help="MSS, or two to compare: 536,1460."),
             ack_every: int = typer.Option(2, "--ack-every", help="Receiver ACKs every N segments."),
             window: Optional[str] = typer.Option(None, "--window", help="Sender window in bytes (odd last segment of each window ACKed alone)."),
             as_json: bool = JSON) -> None:
    """Packets and bytes (both ways, ACKs included) for one transfer, as in Table 1 of Stratus "Tuning your MSS".

    Example: mssdiag calc transfer --size 1MB --mss 536,1460
    """


@app.command("bdp")
@plain(work.bdp)
def bdp(bandwidth: str = typer.Option(..., "--bandwidth", help="Link rate: 100M, 10G, 1.5Gbit/s."),
        rtt: str = typer.Option(..., "--rtt", help="Round-trip time: 20ms, 0.05s."),
        factor: int = typer.Option(2, "--factor", help="Buffer = factor x BDP (2 on Linux; 4 with BBR under loss)."),
        as_json: bool = JSON) -> None:
    """Bandwidth-delay product and TCP buffer sizes, with the Linux sysctl lines (as the "BDP and TCP buffer size" lab computes them).

    Example: mssdiag calc bdp --bandwidth 10G --rtt 20ms
    """


@app.command("mathis")
@plain(work.mathis)
def mathis(mss: str = typer.Option(..., "--mss", help="MSS in bytes."),
           rtt: str = typer.Option(..., "--rtt", help="Round-trip time: 50ms."),
           loss: str = typer.Option(..., "--loss", help="Loss rate: 0.0001 or 0.01%."),
           as_json: bool = JSON) -> None:
    """Upper bound on one TCP flow: MSS/RTT x 1/sqrt(loss) (the Mathis bound).

    Example: mssdiag calc mathis --mss 1460 --rtt 50ms --loss 0.0001
    """


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="calc")
