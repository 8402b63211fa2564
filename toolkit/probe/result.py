"""Result types of the live prober: one ProbeResult per target, JSON-ready.

The field names are an interface (DESIGN.md, docs/probe.md): cron jobs, the triage
code and the tests read them. Add fields; never rename.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

from toolkit.findings import CONFIDENCES


# Stable finding codes -> one-line meaning (docs/probe.md lists them too).
FINDING_CODES: Dict[str, str] = {
    "pmtu-reduced": "path MTU below the local interface MTU",
    "pmtud-black-hole": "big DF probes vanish without ICMP while small ones pass",
    "echo-filtered": "target does not answer ICMP echo; another probe method was used",
    "mss-536-legacy": "host sends 536-byte segments although a larger MSS was advertised "
                      "(legacy STCP / TCP_OS non-local default)",
    "synack-mss-below-path": "SYN-ACK MSS below what the path allows (host setting or middlebox clamping)",
    "mss-above-path": "advertised or used MSS above what the path allows (fragmentation or black hole ahead)",
    "no-answer": "target answered no probe at all (down, or everything filtered)",
    "port-closed": "TCP port refused or did not answer; no MSS check on it",
    "no-data": "connection made but the host sent no data; the used MSS is unknown",
}


def finding(code: str, text: str, confidence: str = "high") -> Dict[str, str]:
    if confidence not in CONFIDENCES:
        raise ValueError(f"bad confidence {confidence!r}")
    return {"code": code, "text": text, "confidence": confidence}


def mss_info(port: Optional[int] = None, sent: Optional[int] = None,
             synack: Optional[int] = None, used: Optional[int] = None) -> Dict[str, Optional[int]]:
    return {"port": port, "sent": sent, "synack": synack, "used": used}


@dataclass
class ProbeResult:
    target: str                              # as given on the command line
    address: str = ""                        # the resolved address probed
    family: str = "ipv4"                     # "ipv4" | "ipv6"
    pmtu: Optional[int] = None
    pmtu_method: Optional[str] = None        # "icmp" | "inferred" | "local" | None
    black_hole: bool = False
    hop: Optional[str] = None                # address that reported (ICMP) or where probes vanish
    probes: int = 0                          # packets we sent (PMTU + TCP handshakes)
    elapsed_s: float = 0.0
    mss: Dict[str, Optional[int]] = field(default_factory=mss_info)
    mss_ports: List[Dict[str, Optional[int]]] = field(default_factory=list)
    findings: List[Dict[str, str]] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    # additions beyond the contract
    local_mtu: Optional[int] = None          # MTU of the interface the route uses
    probe_method: Optional[str] = None       # "icmp" | "udp" | "tcp" | "socket"
    confidence: Optional[str] = None         # how sure the pmtu / black-hole verdict is
    cached_pmtu: Optional[int] = None        # path MTU the kernel had cached before we probed
    rounds: int = 0                          # probe rounds (round trips) the PMTU search took
    notes: List[str] = field(default_factory=list)

    def add_finding(self, code: str, text: str, confidence: str = "high") -> None:
        self.findings.append(finding(code, text, confidence))

    def codes(self) -> List[str]:
        return [f["code"] for f in self.findings]

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "ProbeResult":
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in known}
        if "mss" in kwargs and kwargs["mss"] is not None:
            kwargs["mss"] = {**mss_info(), **kwargs["mss"]}
        kwargs["mss_ports"] = [{**mss_info(), **m} for m in kwargs.get("mss_ports") or []]
        for key in ("findings", "skipped", "errors", "notes"):
            kwargs[key] = list(kwargs.get(key) or [])
        return cls(**kwargs)
