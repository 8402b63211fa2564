"""The triage job as a library: gather evidence per host, run the rules, return results.

Inputs are any mix of netstat dumps, saved `probe --json` files, case directories
(a `host.toml` beside that host's files), host facts files and live targets. The CLI
(`mssdiag triage`) is a thin wrapper over `run()`.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from parsers.model import Snapshot
from toolkit import platforms
from toolkit import diff as diffs
from toolkit import hosts as hostfacts
from toolkit.findings import Finding
from toolkit.hosts import HostFacts, HostFileError
from toolkit.inputs import Outcome, read_paths
from toolkit.probe.result import ProbeResult

SCHEMA = "mssdiag.triage/1"


@dataclass
class Host:
    facts: HostFacts
    snapshots: List[Snapshot] = field(default_factory=list)
    deltas: list = field(default_factory=list)
    probes: List[ProbeResult] = field(default_factory=list)
    inputs: List[str] = field(default_factory=list)
    findings: List[Finding] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)

    @property
    def platform(self):
        return platforms.get(self.facts.os)

    def path_mtu(self) -> Tuple[int, str]:
        """The best path MTU known and where it came from."""
        for p in self.probes:
            if p.pmtu:
                return p.pmtu, f"probe of {p.target}, {p.pmtu_method}"
        if self.facts.path_mtu:
            return self.facts.path_mtu, "host file"
        if self.facts.mtu:
            return self.facts.mtu, "interface MTU from the host file; path not probed"
        return 1500, "Ethernet assumed; path not probed"

    def to_dict(self) -> dict:
        pmtu, pmtu_from = self.path_mtu()
        return {
            "host": self.facts.name,
            "facts": self.facts.to_dict(),
            "path_mtu": pmtu, "path_mtu_from": pmtu_from,
            "inputs": self.inputs,
            "snapshots": [{"source": s.source, "index": s.index, "os": s.os, "taken_at": s.taken_at,
                           "ipv4": s.ipv4, "ipv6": s.ipv6} for s in self.snapshots],
            "deltas": [d.to_dict() for d in self.deltas],
            "probes": [p.to_dict() for p in self.probes],
            "findings": [f.to_dict() for f in self.findings],
            "errors": self.errors,
        }


class InputError(ValueError):
    """An input that cannot be used at all; the message names it and the reason."""


def load_probes(path: str) -> List[ProbeResult]:
    """ProbeResults from a saved `probe --json` file: one object, an array, or JSON lines."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeError) as exc:
        raise InputError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
        items = data if isinstance(data, list) else [data]
    except json.JSONDecodeError:
        try:
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not probe JSON: {exc.msg} at line {exc.lineno}") from None
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "target" not in item or not isinstance(item.get("mss", {}), (dict, type(None))):
            raise InputError(f"{path}: item {i}: not a probe result (needs at least 'target')")
        try:
            out.append(ProbeResult.from_dict(item))
        except (TypeError, ValueError) as exc:
            raise InputError(f"{path}: item {i}: not a probe result: {exc}") from None
    return out


def _case_dirs(paths: List[str]) -> Tuple[List[str], List[str], List[str]]:
    """(host files, loose dump paths, loose probe paths) from command-line paths."""
    host_files, dumps, probes = [], [], []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                if hostfacts.HOST_FILE in files:
                    host_files.append(os.path.join(root, hostfacts.HOST_FILE))
                    dirs[:] = []        # the case directory's files belong to its host
                    continue
                for name in sorted(files):
                    if not name.startswith(".") and not name.endswith(".md"):
                        full = os.path.join(root, name)
                        (probes if name.endswith(".json") else dumps).append(full)
        elif path.endswith(".toml"):
            host_files.append(path)
        elif path.endswith(".json"):
            probes.append(path)
        else:
            dumps.append(path)
    return host_files, dumps, probes


def gather(paths: List[str], flags: Dict[str, object], hosts_file: Optional[str] = None,
           targets: Optional[List[str]] = None, error: Callable[[str], None] = lambda m: None,
           prober: Optional[Callable[..., List[ProbeResult]]] = None, ports: Sequence[int] = (),
           send_text: Optional[str] = None) -> Tuple[List[Host], Outcome]:
    """Hosts with their evidence. Bad inputs get one error line each and are skipped."""
    outcome = Outcome()
    host_files, loose_dumps, loose_probes = _case_dirs(paths)
    if hosts_file:
        host_files.insert(0, hosts_file)
    by_name: Dict[str, Host] = {}
    for hf in host_files:
        try:
            for facts in hostfacts.load(hf):
                by_name.setdefault(facts.name, Host(HostFacts(facts.name))).facts = facts
        except HostFileError as exc:
            error(str(exc))
            outcome.failed.append(hf)
    for host in list(by_name.values()):
        _read_dumps(host, host.facts.dumps, outcome, error)
        for path in host.facts.probes:
            _read_probe(host, path, outcome, error)
    for snap in read_paths(loose_dumps, flags.get("os"), outcome, error):
        name = snap.host or os.path.splitext(os.path.basename(snap.source))[0]
        host = by_name.setdefault(name, Host(HostFacts(name)))
        host.snapshots.append(snap)
        if snap.source not in host.inputs:
            host.inputs.append(snap.source)
    for path in loose_probes:
        try:
            results = load_probes(path)
        except InputError as exc:
            error(str(exc))
            outcome.failed.append(path)
            continue
        outcome.parsed.append(path)
        for r in results:
            host = _owner(by_name, r.target)
            host.probes.append(r)
            if path not in host.inputs:
                host.inputs.append(path)
    live = list(targets or [])
    for host in by_name.values():
        live += [t for t in host.facts.targets if t not in live]
    if live:
        results = (prober or live_probe)(live, error, ports, send_text)
        for r in results:
            host = _owner(by_name, r.target)
            host.probes.append(r)
            host.inputs.append(f"probe {r.target}")
    for host in by_name.values():
        host.facts.merge({k: v for k, v in flags.items() if k in ("os", "release", "peer", "bandwidth_bps", "rtt_s",
                                                                     "loss", "mtu", "path_mtu", "tcp_rmem_max",
                                                                     "congestion")})
        if host.facts.os is None and host.snapshots:
            host.facts.os = host.snapshots[-1].os
        host.deltas = diffs.deltas(host.snapshots)
    return list(by_name.values()), outcome


def _owner(by_name: Dict[str, Host], target: str) -> Host:
    """The host a probe of `target` belongs to: the one listing it in `targets`, else one named after it."""
    owner = next((h for h in by_name.values() if target in h.facts.targets), None)
    return owner or by_name.setdefault(target, Host(HostFacts(target)))


def _read_dumps(host: Host, paths: List[str], outcome: Outcome, error) -> None:
    for snap in read_paths(paths, host.facts.os, outcome, error):
        host.snapshots.append(snap)
        if snap.source not in host.inputs:
            host.inputs.append(snap.source)


def _read_probe(host: Host, path: str, outcome: Outcome, error) -> None:
    try:
        host.probes += load_probes(path)
        host.inputs.append(path)
        outcome.parsed.append(path)
    except InputError as exc:
        error(str(exc))
        outcome.failed.append(path)


def live_probe(targets: List[str], error: Callable[[str], None], ports: Sequence[int] = (),
               send_text: Optional[str] = None) -> List[ProbeResult]:
    """Probe live targets with the prober's library (scapy is imported there, only when used)."""
    from toolkit.probe import runner
    why = runner.raw_allowed()
    if why:
        error(f"probe: {why}: ICMP/TCP probes and the handshake capture are skipped; "
              "UDP socket probes and TCP_INFO only")
    results = list(runner.run(targets, runner.Options(ports=tuple(ports), send_text=send_text)))
    for r in results:
        for e in r.errors:
            error(f"probe {e}")
    return results


def run(hosts: List[Host]) -> List[Host]:
    from toolkit import rules
    for host in hosts:
        host.findings = rules.evaluate(host)
    return hosts


def document(hosts: List[Host]) -> dict:
    return {"schema": SCHEMA, "hosts": [h.to_dict() for h in hosts]}
