"""`mssdiag probe`: path MTU, PMTUD black holes and the MSS a live host advertises and uses."""

import json
import sys
from typing import List, Optional

import typer

from toolkit.cli import guard
from toolkit.cli.options import ports_and_text
from toolkit.output import error, table

PORT_HELP = "TCP port(s) for the MSS check: 21,25,80 or 20-23. Banner services talk first; use --send for others."


def _row(r) -> list:
    m = r.mss or {}
    fmt = lambda v: "-" if v is None else v  # noqa: E731
    bh = "yes" if r.black_hole else ("no" if r.pmtu is not None else "-")
    mss = "/".join(str(fmt(m.get(k))) for k in ("sent", "synack", "used")) if r.mss_ports else "-"
    return [r.target, r.address or "-", fmt(r.pmtu), fmt(r.pmtu_method), bh, fmt(r.hop), mss,
            r.probes, f"{r.elapsed_s:.2f}"]


HEADERS = ["target", "address", "pmtu", "method", "black hole", "hop", "mss sent/synack/used", "probes", "s"]
TRACE_HEADERS = ["ttl", "address", "rtt ms", "mtu", "next-hop mtu", "our SYN's mss"]


def trace_rows(r) -> list:
    """One row per hop of r.trace: what reached it, what it reported, the MSS it saw."""
    fmt = lambda v: "-" if v is None else v  # noqa: E731
    seen = {h["ttl"]: h for h in (r.clamp or {}).get("hops", [])}
    rows = []
    for h in r.trace["hops"]:
        if h["silent"]:
            mtu = "*"
        elif h["mtu"] is None and h.get("silent_at"):
            mtu = f"* at {h['silent_at']}"
        else:
            mtu = fmt(h["mtu"]) if not h.get("silent_at") else f"{fmt(h['mtu'])} (* at {h['silent_at']})"
        mss = seen.get(h["ttl"], {}).get("mss")
        rows.append([h["ttl"], h["address"] or "*", fmt(h["rtt_ms"]), mtu, fmt(h["reported_mtu"]), fmt(mss)])
    return rows


def where_lines(r) -> List[str]:
    """The trace's black-hole bracket and notes, the clamp location, the PMTUD check."""
    out = []
    bh = (r.trace or {}).get("black_hole")
    if bh:
        after = f"hop {bh['after_ttl']} ({bh['after']})" if bh.get("after_ttl") else "this host"
        out.append(f"black hole: {bh['size']}-byte probes reach {after} but not hop {bh['before_ttl']} "
                   f"({bh['before']})")
    for n in (r.trace or {}).get("notes", []):
        out.append(f"trace: {n}")
    c = r.clamp
    if c:
        if c.get("to") is not None:
            where = f"after hop {c['changed_after_ttl']} ({c['changed_after']})" if c.get("changed_after") else ""
            out.append(f"mss: our SYN left with {c['sent']}, arrived with {c['to']} {where}".rstrip())
        if c.get("note"):
            out.append(f"mss: {c['note']}")
    m = r.mss or {}
    if m.get("options") is not None and m.get("used") is not None:
        extra = f" ({m['used_options']} bytes of options in its segments)" if m.get("used_options") else ""
        out.append(f"port {m.get('port')}: TCP options agreed: {', '.join(m['options']) or 'none'}{extra}")
    p = r.pmtud
    if p:
        if p.get("verdict"):
            out.append(f"pmtud: port {p['port']}: {p['segment']}-byte segments (DF {'on' if p['df_before'] else 'off'}); "
                       f"after 'too big' for MTU {p['mtu']}: {p['after']}-byte segments (DF "
                       f"{'on' if p['df_after'] else 'off'}) within {p['waited_s']} s: {p['verdict']}")
        else:
            out.append(f"pmtud: port {p['port']}: no verdict: {p.get('error')}")
    return out


def probe(targets: List[str] = typer.Argument(..., metavar="TARGET...", help="Host names or addresses."),
          port: Optional[str] = typer.Option(None, "--port", "-p", metavar="N,...", help=PORT_HELP),
          ipv4: bool = typer.Option(False, "-4", help="IPv4 only."),
          ipv6: bool = typer.Option(False, "-6", help="IPv6 only."),
          as_json: bool = typer.Option(False, "--json", help="One JSON object per target, one a line."),
          rate: float = typer.Option(100.0, "--rate", metavar="PPS",
                                     help="Probes a second to any one target (bursts of 16; slower on its own "
                                          "when probes go missing)."),
          total_rate: float = typer.Option(20000.0, "--total-rate", metavar="PPS",
                                           help="Ceiling for the whole run, all targets together."),
          timeout: float = typer.Option(1.0, "--timeout", metavar="S", help="Longest wait for any one answer."),
          icmp_wait: float = typer.Option(1.0, "--icmp-wait", metavar="S",
                                          help="Silence to wait for before calling a black hole: a router that "
                                               "rate-limits its 'fragmentation needed' to fewer than one per S "
                                               "seconds looks like one until then. Black holes are 'high' "
                                               "confidence only with 10 or more."),
          send: Optional[str] = typer.Option(None, "--send", metavar="TEXT",
                                             help="Sent to ports that stay silent, e.g. 'GET / HTTP/1.0\\r\\n\\r\\n' "
                                                  "(backslash escapes understood)."),
          trace_hops: bool = typer.Option(False, "--trace",
                                          help="Per hop: address, TTL, RTT and the MTU it reported (a black hole "
                                               "bracketed between two hops); as root also the hop after which "
                                               "our SYN's MSS option changed (TTL-limited SYNs)."),
          pmtud_check: bool = typer.Option(False, "--pmtud-check",
                                           help="Root: does the target do PMTU discovery? A real transfer from the "
                                                "first --port that sends data, a forged 'fragmentation needed', "
                                                "then what it resends (adds and always removes one iptables rule)."),
          no_raw: bool = typer.Option(False, "--no-raw", help="Plain sockets only, as without root."),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar, even on a terminal.")) -> None:
    """Probe live hosts: path MTU with DF probes, black holes, and the MSS advertised and used.

    Exit: 0 all targets answered, 1 none did (or stdout failed), 3 some did not, 2 bad usage.

    Examples:

    ```
    mssdiag probe 192.0.2.10 --port 23
    mssdiag probe web1 web2 --port 80 --send 'GET / HTTP/1.0\\r\\n\\r\\n' --json
    mssdiag probe 10.1.2.3 --icmp-wait 10
    mssdiag probe 10.1.2.3 --trace --port 23
    mssdiag probe vos1 --port 21 --pmtud-check
    ```
    """
    ports, text = ports_and_text(port, send)
    if ipv4 and ipv6:
        error("-4 and -6: choose one")
        raise typer.Exit(2)
    if not rate > 0 or rate > 100000:
        error(f"--rate {rate:g}: must be above 0 and at most 100000 probes a second")
        raise typer.Exit(2)
    if not total_rate > 0 or total_rate > 1000000:
        error(f"--total-rate {total_rate:g}: must be above 0 and at most 1000000 probes a second")
        raise typer.Exit(2)
    if not 0 < timeout <= 60:
        error(f"--timeout {timeout:g}: must be above 0 and at most 60 seconds")
        raise typer.Exit(2)
    if not 0 <= icmp_wait <= 120:
        error(f"--icmp-wait {icmp_wait:g}: must be between 0 and 120 seconds")
        raise typer.Exit(2)
    from toolkit.probe import runner
    opts = runner.Options(ports=ports, family="ipv4" if ipv4 else "ipv6" if ipv6 else None, rate=rate,
                          total_rate=total_rate, total_burst=max(1, min(2000, int(total_rate / 10))),
                          timeout=timeout, send_text=text, raw=False if no_raw else None, icmp_wait=icmp_wait,
                          trace=trace_hops, pmtud_check=pmtud_check)
    done: List = []
    detail = lambda: f" after {len(done)} of {len(targets)} target(s)"  # noqa: E731
    with guard.clean_end("probe", detail):
        why = runner.raw_allowed() if not no_raw else None
        if why:
            error(f"probe: {why}: ICMP/TCP probes and the handshake capture are skipped; "
                  "UDP socket probes and TCP_INFO only (see 'skipped')")
        show_bar = not quiet and sys.stderr.isatty() and len(targets) > 1
        bar = typer.progressbar(length=len(targets), label="probing", file=sys.stderr) if show_bar else None
        results = runner.run(targets, opts, progress=(lambda _r: bar.update(1)) if bar else None)
        try:
            if bar:
                bar.__enter__()
            for r in results:
                for e in r.errors:
                    error(f"probe {e}")
                if as_json:
                    # one whole line at a time: an interrupt never leaves half an object
                    guard.STDOUT.write(json.dumps(r.to_dict(), allow_nan=False) + "\n")
                    guard.STDOUT.flush()
                done.append(r)
        finally:
            # whatever ends the loop (an interrupt while a line is written, too), the run's
            # clean-up happens here: rules it added, sockets
            results.close()
            if bar:
                bar.__exit__(None, None, None)
        if not as_json:
            table((_row(r) for r in done if not r.errors or r.address), HEADERS, out=guard.STDOUT)
            for r in done:
                if r.trace or r.clamp or r.pmtud or (r.mss or {}).get("options") is not None:
                    guard.STDOUT.line()
                if r.trace:
                    guard.STDOUT.line(f"{r.target}: trace")
                    table(trace_rows(r), TRACE_HEADERS, out=guard.STDOUT)
                for line in where_lines(r):
                    guard.STDOUT.line(f"{r.target}: {line}")
            for r in done:
                for f in r.findings:
                    guard.STDOUT.line(f"{r.target}: [{f['code']}] {f['text']} (confidence {f['confidence']})")
                for s in r.skipped:
                    guard.STDOUT.line(f"{r.target}: skipped: {s}")
    failed = sum(bool(r.errors) for r in done)
    if failed:
        raise typer.Exit(3 if failed < len(targets) else 1)


def register(app: typer.Typer) -> None:
    app.command("probe")(probe)
