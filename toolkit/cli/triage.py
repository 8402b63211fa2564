"""`mssdiag triage`: per-host findings and recommendations from dumps, probes and host facts."""

import sys
from typing import Annotated, List, Optional

import typer

from toolkit.cli.options import check_jobs, ports_and_text
from toolkit.output import Stdout, error, write, write_atomic


def triage(
    paths: Annotated[Optional[List[str]], typer.Argument(
        metavar="PATH...", help="netstat dumps, saved `probe --json` files, case directories (with a host.toml) "
                                "or host files (*.toml).")] = None,
    target: Annotated[List[str], typer.Option(
        "--target", "-t", help="Probe this live target too (repeatable; needs root for DF probes).")] = [],
    probe_targets: Annotated[bool, typer.Option(
        "--probe-targets", help="Also probe the targets host files list (never without this flag: a customer's "
                                "file does not make mssdiag send packets).")] = False,
    port: Annotated[Optional[str], typer.Option(
        "--port", "-p", metavar="N,...", help="TCP port(s) for the live MSS check (as mssdiag probe).")] = None,
    send: Annotated[Optional[str], typer.Option(
        "--send", metavar="TEXT", help="Sent to live ports that stay silent (backslash escapes understood).")] = None,
    icmp_wait: Annotated[Optional[float], typer.Option(
        "--icmp-wait", metavar="S", help="As mssdiag probe: seconds of silence before a black hole is called; "
                                         "10 makes it certain.")] = None,
    hosts_file: Annotated[Optional[str], typer.Option(
        "--hosts", metavar="FILE", help="Host facts file (TOML, see docs/triage.md).")] = None,
    host: Annotated[Optional[str], typer.Option(
        "--host", metavar="NAME", help="Every input given is this one host (else hosts come from host.toml, "
                                       "prompts, file names, counters: docs/hosts.md).")] = None,
    os_name: Annotated[Optional[str], typer.Option(
        "--os", metavar="OS", help="The host's platform, for advice: vos, tcpos, linux, windows, ... (a wrong one "
                                   "lists them all). Dumps are still read as what they are (a VOS host's TCP_OS "
                                   "dump).")] = None,
    release: Annotated[Optional[str], typer.Option(
        "--release", help="OS release, e.g. 14.6 or 'Windows Server 2003'.")] = None,
    peer: Annotated[Optional[str], typer.Option(
        "--peer", help="local or non-local: is the peer on the host's subnet?")] = None,
    bandwidth: Annotated[Optional[str], typer.Option("--bandwidth", help="Link rate, e.g. 100M or 10G.")] = None,
    rtt: Annotated[Optional[str], typer.Option("--rtt", help="Round-trip time, e.g. 20ms.")] = None,
    loss: Annotated[Optional[str], typer.Option("--loss", help="Loss rate, e.g. 0.0001 or 0.01%.")] = None,
    mtu: Annotated[Optional[str], typer.Option("--mtu", help="The host's interface MTU.")] = None,
    fmt: Annotated[str, typer.Option(
        "--format", "-f", help="table, json, md (Markdown for tickets) or html (one file).")] = "table",
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    output: Annotated[Optional[str], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the report here instead of stdout.")] = None,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", metavar="N", help="Read dumps in N worker processes (0: one per CPU); the report is the "
                                          "same. Worth it for many hosts' files.")] = 1,
) -> None:
    """Triage hosts: findings (code, evidence, confidence) and the exact commands to fix them.

    Evidence comes from netstat -s dumps (reassembly counters and how they grew between
    snapshots), saved probe results (path MTU, black holes, the MSS a host advertises
    and uses) and host facts (OS release, local or non-local peer, bandwidth, RTT,
    loss). Flags apply to every host and override host files.

    Examples:

    ```
    mssdiag triage fixtures/cases/demo/vos-host
    mssdiag triage before.txt after.txt --os vos --release 14.6 --peer non-local
    mssdiag triage ticket-4711/ --host web1
    mssdiag triage probe.json --bandwidth 10G --rtt 20ms --format md -o ticket.md
    mssdiag triage cases/ --format html -o report.html
    mssdiag triage collected/ --jobs 0 --json -o fleet.json
    ```

    Exit status: 0 no problem found; 1 nothing could be read; 2 bad usage;
    3 some inputs could not be read; 4 at least one finding of severity "problem".
    """
    from toolkit import report, triage as lib

    if as_json:
        fmt = "json"
    if fmt not in report.FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(report.FORMATS)}", param_hint="--format")
    flags = {"os": _checked("--os", "os", os_name), "release": release, "peer": _checked("--peer", "peer", peer),
             "bandwidth_bps": _checked("--bandwidth", "bandwidth", bandwidth),
             "rtt_s": _checked("--rtt", "rtt", rtt), "loss": _checked("--loss", "loss", loss),
             "mtu": _checked("--mtu", "mtu", mtu)}
    check_jobs(jobs)
    if not paths and not target and not hosts_file:
        error("nothing to triage: give dumps, probe files, case directories, --hosts FILE or --target ADDRESS")
        raise typer.Exit(2)
    ports, text = ports_and_text(port, send)
    if icmp_wait is not None and not 0 <= icmp_wait <= 120:
        error(f"--icmp-wait {icmp_wait:g}: not a number of seconds from 0 to 120")
        raise typer.Exit(2)
    hosts, outcome = lib.gather(list(paths or []), flags, hosts_file, list(target), error, ports=ports, send_text=text,
                                host=host, probe_listed=probe_targets, icmp_wait=icmp_wait, jobs=jobs)
    if not hosts:
        error("no host could be triaged from the inputs")
        raise typer.Exit(1)
    lib.run(hosts)
    # JSON is written one host at a time; the other formats are a page for people.
    text = (lambda out: lib.write_json(hosts, out)) if fmt == "json" else report.render(hosts, fmt)
    if output:
        try:
            write_atomic(output, text)      # a full disk or an interrupt leaves the old report whole
        except OSError as exc:
            error(f"{output}: cannot write: {exc.strerror or exc}; nothing written")
            raise typer.Exit(1)
    elif callable(text):
        text(Stdout())
        sys.stdout.flush()
    else:
        write(sys.stdout, text)
        sys.stdout.flush()
    if outcome.failed:
        raise typer.Exit(3)
    if any(f.severity == "problem" for h in hosts for f in h.findings):
        raise typer.Exit(4)


def _checked(option: str, key: str, value: Optional[str]):
    from toolkit import platforms
    from toolkit.hostfile import HostFileError, convert
    if value is None:
        return None
    try:
        return convert(option, key, value)
    except HostFileError:
        reason = {"bandwidth": "not a rate like 100M or 10G", "rtt": "not a time like 20ms or 0.05s",
                  "loss": "not a loss rate like 0.0001 or 0.01% (between 0 and 1)",
                  "mtu": "not an MTU from 68 to 65535", "peer": "must be local or non-local",
                  "os": "not one of " + ", ".join(platforms.names())}[key]
        error(f"{option} {value!r}: {reason}")
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("triage")(triage)
