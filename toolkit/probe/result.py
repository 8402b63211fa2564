"""Result types of the live prober: one ProbeResult per target, JSON-ready.

The fields are what a probe measured (its evidence); `findings` are filled in by
toolkit.rules.probed from them. The field names are an interface (DESIGN.md,
docs/probe.md): cron jobs, the triage code and the tests read them. Add fields; never
rename.

A saved result is an input from outside: `from_dict` checks every field against the
schema of docs/probe.md (types, strict booleans, finite numbers in range) and raises a
ValueError naming the field and the reason; unknown fields are dropped.
"""
from __future__ import annotations

import ipaddress
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from toolkit.findings import CONFIDENCES


HIGH_SILENCE = 10.0     # s: an inferred black hole is "high" confidence only after this much silence


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
    trace: Optional[Dict[str, Any]] = None   # --trace: {"hops": [...], "black_hole": {...}|null, "notes": [...]}
    clamp: Optional[Dict[str, Any]] = None   # --trace (root): where the MSS of our SYN was rewritten
    pmtud: Optional[Dict[str, Any]] = None   # --pmtud-check: what the target did with 'fragmentation needed'
    echo_filtered: bool = False              # the target answered no ICMP echo; probe_method says what did
    silence_s: Optional[float] = None        # inferred verdict: s of silence above the answer before it was called
    rate_limited: Optional[str] = None       # why we believe a router rate-limits 'fragmentation needed', if we do
    unreachable: List[Dict[str, str]] = field(default_factory=list)   # routers' 'unreachable': source, reason

    def add_finding(self, code: str, text: str, confidence: str = "high") -> None:
        self.findings.append(finding(code, text, confidence))

    def codes(self) -> List[str]:
        return [f["code"] for f in self.findings]

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> "ProbeResult":
        """A result from its JSON form, checked field by field (ValueError: 'field: reason')."""
        if not isinstance(data, dict):
            raise ValueError(f"a probe result must be a JSON object, not {_kind(data)}")
        if "target" not in data:
            raise ValueError("target: missing")
        kwargs: Dict[str, Any] = {}
        for name, check in _SCHEMA.items():
            if name in data:
                kwargs[name] = check(data[name], name)
        if not kwargs["target"]:
            raise ValueError("target: empty")
        if kwargs.get("address") and "family" in kwargs:
            fam = "ipv6" if ipaddress.ip_address(kwargs["address"]).version == 6 else "ipv4"
            if fam != kwargs["family"]:
                raise ValueError(f"family: {kwargs['family']!r} but address {kwargs['address']} is {fam}")
        return cls(**kwargs)


# ---- the schema of a saved result (docs/probe.md, "JSON") -------------------------------
MAX_COUNT = 2 ** 64
MAX_TEXT = 1024            # target, address, hop: names and addresses, not essays


def _kind(v: Any) -> str:
    """How a JSON value reads in an error message (never prints a huge number in full)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v) if abs(v) < 10 ** 20 else f"a {v.bit_length()}-bit number"
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return f"the string {v[:40]!r}{'...' if len(v) > 40 else ''}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _int(lo: int, hi: int, null: bool = False):
    def check(v: Any, name: str) -> Optional[int]:
        if v is None and null:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{name}: must be an integer{' or null' if null else ''}, not {_kind(v)}")
        if not lo <= v <= hi:
            raise ValueError(f"{name}: {_kind(v)} is outside {lo}..{hi}")
        return v
    return check


def _number(lo: float, hi: float, null: bool = False):
    def check(v: Any, name: str) -> Optional[float]:
        if v is None and null:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{name}: must be a number{' or null' if null else ''}, not {_kind(v)}")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{name}: {_kind(v)} is not a finite number")
        if not lo <= v <= hi:
            raise ValueError(f"{name}: {_kind(v)} is outside {lo:g}..{hi:g}")
        return float(v)
    return check


def _bool(v: Any, name: str) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"{name}: must be true or false, not {_kind(v)}")
    return v


def _bool_or_null(v: Any, name: str) -> Optional[bool]:
    if v is not None and not isinstance(v, bool):
        raise ValueError(f"{name}: must be true, false or null, not {_kind(v)}")
    return v


def _str(null: bool = False, choices: Optional[Sequence[str]] = None, limit: Optional[int] = None,
         address: bool = False):
    def check(v: Any, name: str) -> Optional[str]:
        if v is None and null:
            return None
        if not isinstance(v, str):
            raise ValueError(f"{name}: must be a string{' or null' if null else ''}, not {_kind(v)}")
        if choices is not None and v not in choices:
            raise ValueError(f"{name}: {_kind(v)} is not one of {', '.join(choices)}")
        if limit is not None and len(v) > limit:
            raise ValueError(f"{name}: longer than {limit} characters")
        if address and v:
            try:
                ipaddress.ip_address(v)
            except ValueError:
                raise ValueError(f"{name}: {_kind(v)} is not an IP address") from None
        return v
    return check


def _list(item):
    def check(v: Any, name: str) -> list:
        if not isinstance(v, list):
            raise ValueError(f"{name}: must be a list, not {_kind(v)}")
        return [item(x, f"{name}[{i}]") for i, x in enumerate(v)]
    return check


def _object(fields: Dict[str, Any], required: Sequence[str] = (), base: Optional[Dict[str, Any]] = None,
            null: bool = False):
    def check(v: Any, name: str) -> Optional[Dict[str, Any]]:
        if v is None and null:
            return None
        if not isinstance(v, dict):
            raise ValueError(f"{name}: must be an object{' or null' if null else ''}, not {_kind(v)}")
        for key in required:
            if key not in v:
                raise ValueError(f"{name}.{key}: missing")
        out = dict(base or {})
        for key, sub in fields.items():
            if key in v:
                out[key] = sub(v[key], f"{name}.{key}")
        return out
    return check


TCP_OPTIONS = ("timestamps", "sack", "window-scale", "ecn")
_MSS = _object({"port": _int(1, 65535, null=True), "sent": _int(0, 65535, null=True),
                "synack": _int(0, 65535, null=True), "used": _int(0, 65535, null=True),
                "used_options": _int(0, 60, null=True), "bytes": _int(0, MAX_COUNT, null=True),
                "kernel_snd_mss": _int(0, 65535, null=True), "error": _str(null=True),
                "options": _list(_str(choices=TCP_OPTIONS))},
               base=mss_info())
_ADDR = _str(null=True, limit=MAX_TEXT, address=True)
_HOP = _object({"ttl": _int(1, 255), "address": _ADDR, "rtt_ms": _number(0, MAX_COUNT, null=True),
                "mtu": _int(68, 65535, null=True), "reported_mtu": _int(0, 65535, null=True),
                "silent": _bool, "silent_at": _int(68, 65535, null=True)}, required=("ttl",))
_BRACKET = _object({"size": _int(68, 65535), "after_ttl": _int(1, 255, null=True), "after": _ADDR,
                    "before_ttl": _int(1, 255), "before": _ADDR}, required=("size", "before_ttl"), null=True)
_TRACE = _object({"hops": _list(_HOP), "black_hole": _BRACKET, "notes": _list(_str())},
                 required=("hops",), null=True)
_CLAMP_HOP = _object({"ttl": _int(1, 255), "address": _ADDR, "mss": _int(0, 65535, null=True),
                      "quoted": _int(0, 65535)}, required=("ttl",))
_CLAMP = _object({"port": _int(1, 65535, null=True), "sent": _int(0, 65535), "changed_after": _ADDR,
                  "changed_after_ttl": _int(0, 255, null=True), "to": _int(0, 65535, null=True),
                  "seen_to_ttl": _int(1, 255, null=True), "hops": _list(_CLAMP_HOP), "note": _str(null=True)},
                 required=("sent",), null=True)
PMTUD_VERDICTS = ("honours", "ignores", "clears-df")
_PMTUD = _object({"port": _int(1, 65535), "verdict": _str(null=True, choices=PMTUD_VERDICTS),
                  "mtu": _int(68, 65535, null=True), "segment": _int(0, 65535, null=True),
                  "df_before": _bool_or_null, "after": _int(0, 65535, null=True), "df_after": _bool_or_null,
                  "waited_s": _number(0, MAX_COUNT, null=True), "error": _str(null=True)},
                 required=("port", "verdict"), null=True)
_UNREACH = _object({"source": _str(limit=MAX_TEXT, address=True), "reason": _str()}, required=("source", "reason"))
_FINDING = _object({"code": _str(), "text": _str(), "confidence": _str(choices=CONFIDENCES)},
                   required=("code", "text", "confidence"))
_SCHEMA: Dict[str, Any] = {
    "target": _str(limit=MAX_TEXT),
    "address": _str(limit=MAX_TEXT, address=True),
    "family": _str(choices=("ipv4", "ipv6")),
    "pmtu": _int(68, 65535, null=True),
    "pmtu_method": _str(null=True, choices=("icmp", "inferred", "local")),
    "black_hole": _bool,
    "hop": _str(null=True, limit=MAX_TEXT, address=True),
    "probes": _int(0, MAX_COUNT),
    "elapsed_s": _number(0, MAX_COUNT),
    "mss": lambda v, name: mss_info() if v is None else _MSS(v, name),
    "mss_ports": _list(_MSS),
    "findings": _list(_FINDING),
    "skipped": _list(_str()),
    "errors": _list(_str()),
    "local_mtu": _int(68, 65535, null=True),
    "probe_method": _str(null=True, choices=("icmp", "udp", "tcp", "socket")),
    "confidence": _str(null=True, choices=CONFIDENCES),
    "cached_pmtu": _int(68, 65535, null=True),
    "rounds": _int(0, MAX_COUNT),
    "notes": _list(_str()),
    "trace": _TRACE,
    "clamp": _CLAMP,
    "pmtud": _PMTUD,
    "echo_filtered": _bool,
    "silence_s": _number(0, MAX_COUNT, null=True),
    "rate_limited": _str(null=True),
    "unreachable": _list(_UNREACH),
}
