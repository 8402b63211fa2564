"""Offline capture analysis: pcap / pcapng / snoop files and VOS packet_monitor text.

    result = toolkit.capture.analyze(["a.pcap"], second=["b.pcapng"], mtu=1500)
    for flow in result.flows:              # dicts, see docs/capture.md
        flow["client_to_server"]["mss"], flow["server_to_client"]["max_payload"]
    result.findings                        # toolkit.findings.Finding, data["host"] = address
    result.for_host("10.0.1.2")            # (flows, findings) that concern that address

Bad inputs never raise: each gives one entry in result.errors ("path: reason") and the
others are still read.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, TYPE_CHECKING



if TYPE_CHECKING:
    from toolkit.capture.flows import Analyzer
    from toolkit.findings import Finding

__all__ = ["analyze", "Result", "SCHEMA", "CODES"]


def __getattr__(name: str):
    if name == "CODES":
        from toolkit.capture import verdicts
        return verdicts.CODES
    if name == "SCHEMA":
        from toolkit.capture import record
        return record.SCHEMA
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class Result:
    captures: List[dict] = field(default_factory=list)     # per file: format, interfaces, frames, ...
    flows: List[dict] = field(default_factory=list)        # per connection (flow_dict)
    fragments: List[dict] = field(default_factory=list)    # fragments tied to no TCP connection
    untied_ptbs: List[dict] = field(default_factory=list)  # PTBs quoting no connection in the capture
    clamping: List[dict] = field(default_factory=list)     # SYNs matched across --second captures
    findings: List[Finding] = field(default_factory=list)
    caveats: List[str] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)        # "path: reason", one per bad input
    read_ok: List[str] = field(default_factory=list)

    def for_host(self, address: str):
        """The flows with this address at either end, and the findings about that host."""
        flows = [f for f in self.flows
                 if address in (f["client_to_server"]["addr"], f["server_to_client"]["addr"])]
        return flows, [x for x in self.findings if x.data.get("host") == address]

    def hosts(self) -> List[str]:
        seen: Dict[str, None] = {}
        for f in self.flows:
            seen.setdefault(f["client_to_server"]["addr"])
            seen.setdefault(f["server_to_client"]["addr"])
        return list(seen)

    def to_dict(self) -> dict:
        from toolkit.capture.record import SCHEMA
        return {"schema": SCHEMA, "captures": self.captures, "flows": self.flows, "fragments": self.fragments,
                "untied_ptbs": self.untied_ptbs, "clamping": self.clamping,
                "findings": [f.to_dict() for f in self.findings], "caveats": self.caveats,
                "errors": self.errors}


def regular(path: str) -> Optional[str]:
    """Why path cannot be read as a capture (checked with os.stat, never opened), or None."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return exc.strerror.lower() if exc.strerror else str(exc)
    if stat.S_ISDIR(st.st_mode):
        return "is a directory (name the capture files)"
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else \
            "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file"
        return f"is {kind}, not a capture file"
    if st.st_size == 0:
        return "empty file (0 bytes)"
    return None


def read_file(path: str, analyzer: Analyzer, result: Result,
              progress: Optional[Callable[[int], None]] = None, keep_pm: Optional[list] = None) -> bool:
    """One input into the analyzer; problems go to result.errors. True when frames were read."""
    from toolkit.capture import formats
    problem = regular(path)
    if problem:
        result.errors.append(f"{path}: {problem}")
        return False
    analyzer.source = path
    with open(path, "rb") as f:
        head = f.read(4096)
    kind = formats.sniff(head)
    if kind == "text":
        return _read_text(path, analyzer, result, progress, keep_pm)
    try:
        info = formats.read(path, analyzer.frame, progress)
    except formats.CaptureError as exc:
        result.errors.append(f"{path}: {exc}")
        return False
    except OSError as exc:
        result.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return False
    result.captures.append(info.to_dict())
    if info.truncated:
        result.errors.append(f"{path}: {info.truncated} ({info.frames} frames before it were read)")
    for itf in info.interfaces:
        if itf.dropped:
            result.caveats.append(f"{path}: interface {itf.name or info.interfaces.index(itf)} dropped "
                                  f"{itf.dropped} packets during the capture: missing segments may look "
                                  "like loss or retransmissions")
    return info.frames > 0 and not info.truncated


def _read_text(path, analyzer, result, progress, keep_pm) -> bool:
    from toolkit.capture import formats, pmtext
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        text = f.read()
    if progress:
        progress(os.path.getsize(path))
    if not pmtext.looks_like(text):
        result.errors.append(f"{path}: not a capture file: text, but not a VOS packet_monitor trace "
                             "(no 'Ver/HL' lines)")
        return False
    count, bad = 0, []
    try:
        for pkt in pmtext.read(iter(text.splitlines())):
            if not pkt.complete:
                bad.append(pkt)
            if pkt.data:
                analyzer.frame(pkt.ts, formats.RAW, pkt.data, 0, len(pkt.data), len(pkt.data))
                count += 1
                if keep_pm is not None:
                    keep_pm.append(pkt)
    except pmtext.TraceError as exc:
        result.errors.append(f"{path}: {exc}")
        return False
    info = {"path": path, "format": "vos-packet_monitor", "frames": count, "interfaces": [],
            "truncated": None, "converted_with": None,
            "notes": ["timestamps carry no date: shown on 1970-01-01", pmtext.CAVEAT]}
    result.captures.append(info)
    result.caveats.append(f"{path}: {pmtext.CAVEAT}")
    if bad:
        last = bad[-1]
        info["truncated"] = f"packet at line {last.line}: {'; '.join(last.problems)}"
        result.errors.append(f"{path}: trace cut mid-packet: the packet at line {last.line} is incomplete "
                             f"({'; '.join(last.problems)}); {count - len(bad)} complete packets read")
        return count - len(bad) > 0 and False
    return count > 0


def _collect(analyzer: Analyzer, result: Result) -> None:
    from toolkit.capture.flows import addr_text
    from toolkit.capture.record import SCHEMA, flow_dict
    analyzer.finish_holes()
    for flow in analyzer.flows:
        result.flows.append(flow_dict(flow))
    for (src, dst, proto), (n, dgrams, fam, maxlen, df) in analyzer.loose_fragments.items():
        result.fragments.append({"record": "fragments", "schema": SCHEMA, "source": analyzer.source,
                                 "family": fam, "src": addr_text(src), "dst": addr_text(dst),
                                 "protocol": {6: "tcp", 17: "udp", 1: "icmp", 58: "icmpv6"}.get(proto, str(proto)),
                                 "fragments": n, "datagrams": dgrams, "max_ip_len": maxlen, "df_packets": df})
    for p in analyzer.untied_ptbs:
        result.untied_ptbs.append(dict(p, source=analyzer.source))


def analyze(paths: Sequence[str], second: Sequence[str] = (), mtu: int = 1500,
            progress: Optional[Callable[[int], None]] = None, keep_pm: Optional[list] = None) -> Result:
    """Read every input (each file its own capture point) and return flows and findings.
    `second`: captures of the same traffic at another point, matched SYN by SYN (clamping)."""
    from toolkit.capture import verdicts
    from toolkit.capture.flows import Analyzer
    result = Result()
    groups: List[List[dict]] = []
    for group in (list(paths), list(second)):
        start = len(result.flows)
        for path in group:
            an = Analyzer(mtu=mtu, source=path)
            if read_file(path, an, result, progress, keep_pm):
                result.read_ok.append(path)
            elif an.frames and path not in result.read_ok:
                result.read_ok.append(path)   # partly read: counted for the exit status as read
            _collect(an, result)
        groups.append(result.flows[start:])
    for f in result.flows:
        result.findings += verdicts.for_flow(f, mtu)
    result.findings += verdicts.for_loose(result.fragments)
    if second:
        from toolkit.capture.clamp import match
        result.clamping, found = match(groups[0], groups[1])
        # a legacy-looking MSS that the other capture shows was rewritten on the way is the clamp's doing
        clamped = {(c[k]["source"], c[k]["flow"]) for c in result.clamping if c["clamped"] for k in ("first", "second")}
        result.findings = [f for f in result.findings if not (
            f.code == "capture-legacy-mss" and (f.data.get("source"), f.data.get("flow")) in clamped)] + found
    return result


def iter_findings(result: Result) -> Iterable[Finding]:
    return iter(result.findings)
