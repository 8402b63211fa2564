"""`mssdiag capture`: offline captures (pcap, pcapng, snoop, VOS packet_monitor text)."""

import os
import sys
from typing import List, Optional

import typer

from toolkit.output import FORMATS, dumps, error, json_lines, safe, table, write

BIG = 32 * 2 ** 20


def capture(
    paths: List[str] = typer.Argument(..., metavar="FILE...", help="pcap, pcapng, snoop or packet_monitor text files "
                                      "(nettl, iptrace and Network Monitor through editcap)."),
    second: List[str] = typer.Option([], "--second", metavar="FILE", help="The same traffic captured at another point "
                                     "(repeatable): SYNs are matched by ISN and IP ID, through NAT, and their MSS compared."),
    mtu: int = typer.Option(1500, "--mtu", min=68, max=65535, help="MTU of the capturing host's interface: larger "
                            "segments are offload (TSO/GRO) artefacts, not violations."),
    fmt: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, json (one object) or jsonl (one record a line)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar, even on a terminal."),
    export_pcap: Optional[str] = typer.Option(None, "--export-pcap", metavar="OUT", help="Write the packets of "
                                              "packet_monitor traces, rebuilt as IP/TCP, to a pcap that Wireshark opens."),
) -> None:
    """Per connection: the MSS each side advertised and the segments it really sent.

    For every TCP connection: SYN and SYN-ACK MSS (or that it was absent), the largest payload each way, segments above the peer's MSS, the share of packets with DF, fragments (IPv4 and IPv6 reassembled), ICMP fragmentation-needed and ICMPv6 Packet Too Big tied to the connection by the quoted header (and whether the sender shrank after it), retransmissions of maximum-size segments, and the layers around it (VLAN, MPLS, PPPoE, GRE, VXLAN, GENEVE, ERSPAN) with the bytes they take from the MTU. Segments captured before segmentation (TSO/GSO/GRO) are reported as such, never as wire sizes; frames that cannot be decoded are counted by reason. Findings: legacy MSS (536, 512, 1220, none), small segments although both sides advertised 1460 (VOS STCP's non-local rule), PTB obeyed or ignored, black-hole signature, no DF plus fragments, a capture taken with offload, an MSS the encapsulation explains, and MSS clamping between two capture points (--second).

    Examples:

    ```
    mssdiag capture client.pcap
    mssdiag capture inside.pcapng --second outside.pcap --json
    mssdiag capture stcp_trace.txt --export-pcap stcp_trace.pcap
    ```

    Exit status: 0 every input read; 1 nothing could be read; 2 bad usage; 3 some inputs could not be read (or only in part; the rest is printed).
    """
    from toolkit import capture as cap
    from toolkit.capture import pmtext, record

    fmt = "json" if as_json else fmt
    if fmt not in FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(FORMATS)}", param_hint="--format")
    everything = list(paths) + list(second)
    total = 0
    for p in everything:
        if cap.regular(p) is None:
            total += os.path.getsize(p)
    export = None
    if export_pcap:
        if not any(cap.regular(p) is None and _is_text(p) for p in everything):
            error(f"{export_pcap}: not written: --export-pcap needs a packet_monitor text trace among the inputs")
        else:
            try:
                out = open(export_pcap, "wb")
            except OSError as exc:
                error(f"{export_pcap}: cannot write: {exc.strerror or exc}")
                raise typer.Exit(1)
            export = pmtext.PcapWriter(out)
    try:
        if quiet or not sys.stderr.isatty() or total < BIG:
            result = cap.read(paths, second, mtu, keep_pm=export)
        else:
            with typer.progressbar(length=total, label="reading", file=sys.stderr) as bar:
                result = cap.read(paths, second, mtu, progress=bar.update, keep_pm=export)
    finally:
        if export is not None:
            export.out.close()
    for line in result.errors:
        error(line)
    for line in result.warnings:
        error("warning: " + line)
    if export is not None and fmt == "table":
        typer.echo(f"wrote {export.count} packets to {export_pcap}", err=True)
    if fmt == "json":
        _json(result, record.SCHEMA)
    elif fmt == "jsonl":
        json_lines(_records(result, record.SCHEMA))
    else:
        _table(result, record)
    if not result.read_ok:
        raise typer.Exit(1)
    if result.errors:
        raise typer.Exit(3)


def _is_text(path: str) -> bool:
    from toolkit.sniff import read_head, sniff
    try:
        return sniff(read_head(path)) == "text"
    except OSError:
        return False            # reading it says why, as for any input


def _json(result, schema: str) -> None:
    """One JSON object, the same as result.to_dict(), its flows written one at a time and one a
    line (a million connections are never all held as dicts, nor spread over 60 lines each),
    their findings made on the way."""
    out = sys.stdout

    def put(text: str) -> None:
        write(out, text)

    put("{\n" + f' "schema": {dumps(schema)},\n "captures": {dumps(result.captures, indent=1, level=1)},\n "flows": [')
    first = True
    for f in result.judged():
        put(("\n  " if first else ",\n  ") + dumps(f))
        first = False
    put("\n ],\n" if not first else "],\n")
    rest = {"fragments": result.fragments, "untied_ptbs": result.untied_ptbs, "clamping": result.clamping,
            "findings": [f.to_dict() for f in result.findings], "caveats": result.caveats, "errors": result.errors,
            "warnings": result.warnings}
    put(",\n".join(f" {dumps(k)}: {dumps(v, indent=1, level=1)}" for k, v in rest.items()) + "\n}\n")
    out.flush()


def _records(result, schema: str):
    for c in result.captures:
        yield dict(c, record="capture", schema=schema)
    yield from result.judged()
    yield from result.fragments
    for p in result.untied_ptbs:
        yield dict(p, record="ptb", schema=schema)
    yield from result.clamping
    for f in result.findings:
        yield dict(f.to_dict(), record="finding", schema=schema)
    for c in result.caveats:
        yield {"record": "caveat", "schema": schema, "text": c}
    for w in result.warnings:
        yield {"record": "warning", "schema": schema, "text": w}


def _table(result, record) -> None:
    def line(text: str) -> None:      # source paths and findings come from outside: terminal-safe
        write(sys.stdout, safe(text) + "\n")

    encap = result.flows.encapsulated()
    table((record.flow_row(f, encap) for f in result.judged()), record.headers(encap), colalign=record.colalign(encap))
    for f in result.fragments:
        line(f"fragments {f['src']} -> {f['dst']} {f['protocol']}: {f['fragments']} in {f['datagrams']} "
             f"datagram(s), largest {f['max_ip_len']} bytes, DF on {f['df_packets']}")
    for c in result.clamping:
        line(f"same SYN (ISN {c['isn']}): {c['first']['source']}#{c['first']['flow']} / "
             f"{c['second']['source']}#{c['second']['flow']}: SYN MSS {c['syn_mss'][0]} / {c['syn_mss'][1]}, "
             f"SYN-ACK MSS {c['synack_mss'][0]} / {c['synack_mss'][1]}")
    if result.findings:
        line("")
        line("findings:")
        for f in result.findings:
            line(f"  [{f.severity}/{f.confidence}] {f.code}: {f.title}")
            for e in f.evidence:
                line(f"      - {e}")
            for r in f.recommendations:
                line(f"      > {r.title}" + (f" ({r.applies_to})" if r.applies_to else ""))
    for c in result.caveats:
        line(f"note: {c}")
    if not result.flows and not result.fragments and result.read_ok:
        for c in result.captures:
            if c["path"] in result.read_ok:
                other = sum(c.get("not_ip", {}).values())
                line(f"{c['path']}: no TCP connections in {c['frames']} frame(s)"
                     + (f" ({other} not IP, or IP without TCP)" if other else ""))
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.command("capture")(capture)
