"""`mssdiag triage`: the work, without typer (the options and help: toolkit/cli/triage.py)."""
from __future__ import annotations

import sys
from typing import List, Optional

from toolkit.commands import BadValue, Exit, check_jobs
from toolkit.commands.ports import ports_and_text
from toolkit.output import Stdout, error, write, write_atomic


def triage(paths: List[str], target: List[str], probe_targets: bool, port: Optional[str], send: Optional[str],
           icmp_wait: Optional[float], hosts_file: Optional[str], host: Optional[str], os_name: Optional[str],
           release: Optional[str], peer: Optional[str], bandwidth: Optional[str], rtt: Optional[str],
           loss: Optional[str], mtu: Optional[str], fmt: str, as_json: bool, output: Optional[str],
           jobs: int = 1) -> None:
    """`mssdiag triage` (its help: toolkit/cli/triage.py)."""
    from toolkit import report, triage as lib

    if as_json:
        fmt = "json"
    if fmt not in report.FORMATS:
        raise BadValue(f"{fmt!r} is not one of {', '.join(report.FORMATS)}", "--format")
    flags = {"os": _checked("--os", "os", os_name), "release": release, "peer": _checked("--peer", "peer", peer),
             "bandwidth_bps": _checked("--bandwidth", "bandwidth", bandwidth),
             "rtt_s": _checked("--rtt", "rtt", rtt), "loss": _checked("--loss", "loss", loss),
             "mtu": _checked("--mtu", "mtu", mtu)}
    check_jobs(jobs)
    if not paths and not target and not hosts_file:
        error("nothing to triage: give dumps, probe files, case directories, --hosts FILE or --target ADDRESS")
        raise Exit(2)
    ports, text = ports_and_text(port, send)
    if icmp_wait is not None and not 0 <= icmp_wait <= 120:
        error(f"--icmp-wait {icmp_wait:g}: not a number of seconds from 0 to 120")
        raise Exit(2)
    hosts, outcome = lib.gather(list(paths or []), flags, hosts_file, list(target), error, ports=ports, send_text=text,
                                host=host, probe_listed=probe_targets, icmp_wait=icmp_wait, jobs=jobs)
    if not hosts:
        error("no host could be triaged from the inputs")
        raise Exit(1)
    lib.run(hosts)
    # JSON is written one host at a time; the other formats are a page for people.
    text = (lambda out: lib.write_json(hosts, out)) if fmt == "json" else report.render(hosts, fmt)
    if output:
        try:
            write_atomic(output, text)      # a full disk or an interrupt leaves the old report whole
        except OSError as exc:
            error(f"{output}: cannot write: {exc.strerror or exc}; nothing written")
            raise Exit(1)
    elif callable(text):
        text(Stdout())
        sys.stdout.flush()
    else:
        write(sys.stdout, text)
        sys.stdout.flush()
    if outcome.failed:
        raise Exit(3)
    if any(f.severity == "problem" for h in hosts for f in h.findings):
        raise Exit(4)


def _checked(option: str, key: str, value: Optional[str]):
    from toolkit.hostfile import OS_NAMES, HostFileError, convert
    if value is None:
        return None
    try:
        return convert(option, key, value)
    except HostFileError:
        reason = {"bandwidth": "not a rate like 100M or 10G", "rtt": "not a time like 20ms or 0.05s",
                  "loss": "not a loss rate like 0.0001 or 0.01% (between 0 and 1)",
                  "mtu": "not an MTU from 68 to 65535", "peer": "must be local or non-local",
                  "os": "not one of " + ", ".join(OS_NAMES)}[key]
        error(f"{option} {value!r}: {reason}")
        raise Exit(2)
