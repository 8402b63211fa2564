"""The triage job as a library: gather evidence per host, run the rules, return results.

Inputs are any mix of netstat dumps, saved `probe --json` files, case directories
(a `host.toml` beside that host's files), host facts files and live targets. The CLI
(`mssdiag triage`) is a thin wrapper over `run()`.
"""
from __future__ import annotations

import json
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from toolkit.hostfile import HostFacts
from toolkit.hosts import KEEP, Builder, Host, walk
from toolkit.inputs import Outcome, jobs_wanted, read
from toolkit.probe.result import ProbeResult

SCHEMA = "mssdiag.triage/1"


class InputError(ValueError):
    """An input that cannot be used at all; the message names it and the reason."""


MAX_PROBE_FILE = 256 << 20     # 256 MiB of probe JSON is about a million results; more is not a probe file


def load_probes(path: str) -> List[ProbeResult]:
    """ProbeResults from a saved `probe --json` file: one object, an array, or JSON lines.
    Every field is checked against the documented schema (ProbeResult.from_dict): a file
    that holds anything else is refused whole, with one line naming the item and field."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_PROBE_FILE + 1)
        if len(raw) > MAX_PROBE_FILE:
            raise InputError(f"{path}: larger than {MAX_PROBE_FILE >> 20} MiB: not a saved probe result")
        text = raw.decode("utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text: not a saved probe result") from None
    if not text.strip():
        raise InputError(f"{path}: empty: no probe result in it")
    try:
        data = json.loads(text)
        items = data if isinstance(data, list) else [data]
    except json.JSONDecodeError:
        try:
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not probe JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise InputError(f"{path}: not probe JSON: nested too deep") from None
    if not items:
        raise InputError(f"{path}: no probe result in it")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "target" not in item:
            raise InputError(f"{path}: item {i}: not a probe result (needs at least 'target')")
        try:
            out.append(ProbeResult.from_dict(item))
        except (TypeError, ValueError, OverflowError, KeyError, AttributeError) as exc:
            raise InputError(f"{path}: item {i}: not a probe result: {exc}") from None
    return out


def saved_probes(inputs, outcome: Outcome, error: Callable[[str], None]) -> List[Tuple[ProbeResult, Optional[HostFacts], str]]:
    """(result, its case, its file) from every saved probe file among the inputs; a bad file
    gets one line and counts as failed."""
    out: List[Tuple[ProbeResult, Optional[HostFacts], str]] = []
    for inp in inputs:
        if inp.kind != "probe":
            continue
        try:
            results = load_probes(inp.path)
        except InputError as exc:
            error(str(exc))
            outcome.failed.append(inp.path)
            continue
        outcome.parsed.append(inp.path)
        out += [(r, inp.case, inp.path) for r in results]
    return out


def gather(paths: List[str], flags: Dict[str, object], hosts_file: Optional[str] = None,
           targets: Optional[List[str]] = None, error: Callable[[str], None] = lambda m: None,
           prober: Optional[Callable[..., List[ProbeResult]]] = None, ports: Sequence[int] = (),
           send_text: Optional[str] = None, host: Optional[str] = None,
           probe_listed: bool = False, icmp_wait: Optional[float] = None,
           jobs: int = 1) -> Tuple[List[Host], Outcome]:
    """Hosts with their evidence, as the host model groups it. Bad inputs get one error
    line each and are skipped. `host` (--host) makes every input one host. Targets are
    probed live when given on the command line; those a host file lists only with
    `probe_listed` (--probe-targets): a customer's file never makes mssdiag send packets.
    `jobs` (--jobs; 0: one per CPU) reads the dumps in worker processes (inputs.read)."""
    outcome = Outcome()
    inputs, facts = walk(paths, error, outcome.failed, hosts_file)
    model = Builder(facts, forced=host, note=error, keep=KEEP)
    for s, inp in read(inputs, None, outcome, error, prefer=flags.get("os"), jobs=jobs_wanted(jobs), evidence=True):
        model.add(s, inp.case)
    probes = saved_probes(inputs, outcome, error)
    live = list(targets or [])
    listed = [t for f in facts for t in f.targets if t not in live]
    if probe_listed:
        live += list(dict.fromkeys(listed))
    elif listed:
        error(f"host files list targets to probe ({', '.join(listed[:4])}{', ...' if len(listed) > 4 else ''}): "
              "not probed; add --probe-targets to probe them")
    if live:
        extra = {} if icmp_wait is None else {"icmp_wait": icmp_wait}
        for r in (prober or live_probe)(live, error, ports, send_text, **extra):
            owner = next((f for f in facts if r.target in f.targets), None)
            probes.append((r, owner, f"probe {r.target}"))
    captures = []
    for inp in inputs:
        if inp.kind != "capture":
            continue
        from toolkit import capture
        result = capture.analyze([inp.path])
        for problem in result.errors:
            error(problem)
        (outcome.parsed if result.read_ok else outcome.failed).append(inp.path)
        captures += [(f, inp.case, inp.path) for f in result.findings]
    hosts = model.finish(probes, captures)
    for h in hosts:
        h.facts.merge({k: v for k, v in flags.items() if k in ("os", "release", "peer", "bandwidth_bps", "rtt_s",
                                                                  "loss", "mtu", "path_mtu", "tcp_rmem_max",
                                                                  "congestion")})
        if h.facts.os is None and h.snapshots:
            h.facts.os = h.snapshots[-1].os
    return hosts, outcome


def live_probe(targets: List[str], error: Callable[[str], None], ports: Sequence[int] = (),
               send_text: Optional[str] = None, icmp_wait: Optional[float] = None) -> List[ProbeResult]:
    """Probe live targets with the prober's library (imported only when a target is given)."""
    from toolkit.probe import runner
    why = runner.raw_allowed()
    if why:
        error(f"probe: {why}: ICMP/TCP probes and the handshake capture are skipped; "
              "UDP socket probes and TCP_INFO only")
    options = runner.Options(ports=tuple(ports), send_text=send_text)
    if icmp_wait is not None:
        options.icmp_wait = icmp_wait
    from toolkit.rules import probed
    results = [probed.judge(r) for r in runner.run(targets, options)]
    for r in results:
        for e in r.errors:
            error(f"probe {e}")
    return results


def run(hosts: List[Host]) -> List[Host]:
    from toolkit.rules import catalog
    for host in hosts:
        host.findings = catalog.evaluate(host)
    return hosts


def document(hosts: List[Host]) -> dict:
    from toolkit import __version__
    from toolkit.report.common import generated_at, summary
    return {"schema": SCHEMA, "generated_at": generated_at().isoformat(timespec="seconds"), "version": __version__,
            "summary": summary(hosts), "hosts": [h.to_dict() for h in hosts]}


def write_json(hosts: List[Host], out) -> None:
    """The document, byte for byte as `dumps(document(hosts), indent=2)`, written one host at
    a time: never the whole text of thousands of hosts in memory."""
    from toolkit.output import dumps
    from toolkit.report.common import summary
    head = document([])
    head["summary"] = summary(hosts)
    text = dumps(head, indent=2)
    if not hosts:
        out.write(text + "\n")
        return
    out.write(text[:text.rindex("[]")] + "[")
    for i, h in enumerate(hosts):
        out.write(("," if i else "") + "\n    " + dumps(h.to_dict(), indent=2, level=2))
    out.write("\n  ]\n}\n")
