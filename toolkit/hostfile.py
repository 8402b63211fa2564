"""Host facts and the host file: what the engineer knows about a host that no dump or probe says.

Which evidence belongs to which host is decided in toolkit/hosts.py (the host model); this
module only reads and checks the facts.

Format: TOML (Python's own tomllib, no extra package). A case directory holds one
`host.toml` next to that host's dumps and saved probes:

    name = "vos-prod-1"          # default: the directory name
    os = "vos"                   # parser name: vos tcpos ftx hpux windows linux solaris aix bsd
    release = "14.6.0ak"         # the OS release as the host prints it
    peer = "non-local"           # local | non-local: is the peer on the same subnet?
    bandwidth = "100M"           # link rate (bits/s, decimal prefixes)
    rtt = "40ms"                 # round-trip time to the peer
    loss = "0.01%"               # packet loss rate (0.0001 or 0.01%)
    mtu = 1500                   # the host's interface MTU
    path_mtu = 1500              # the path MTU, when known without a probe
    tcp_rmem_max = 6291456       # current buffer maximum (bytes), when known
    congestion = "cubic"         # congestion control (bbr asks for larger buffers)
    dumps = ["netstat.txt"]      # default: every other file in the directory
    probes = ["probe.json"]      # default: every *.json file in the directory
    targets = ["192.0.2.10"]     # live targets to probe for this host

A file given with --hosts may instead hold several hosts as [hosts.NAME] tables with
the same keys; relative paths are taken from the file's directory. Every key is
optional; unknown keys are an error (a typo must not silently drop a fact).
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional

from toolkit import platforms


HOST_FILE = "host.toml"
PEERS = ("local", "non-local")


class HostFileError(ValueError):
    """A host file or flag that cannot be used; the message names the input and the reason."""


@dataclass
class HostFacts:
    name: str
    os: Optional[str] = None
    release: Optional[str] = None
    peer: Optional[str] = None
    bandwidth_bps: Optional[float] = None
    rtt_s: Optional[float] = None
    loss: Optional[float] = None
    mtu: Optional[int] = None
    path_mtu: Optional[int] = None
    tcp_rmem_max: Optional[int] = None
    congestion: Optional[str] = None
    dumps: List[str] = field(default_factory=list)
    probes: List[str] = field(default_factory=list)
    targets: List[str] = field(default_factory=list)
    source: Optional[str] = None       # the host file, when there is one

    @property
    def local(self) -> Optional[bool]:
        return None if self.peer is None else self.peer == "local"

    def to_dict(self) -> dict:
        # every field but the inputs (asdict would deep-copy: slow over thousands of hosts)
        return {name: list(v) if isinstance(v := getattr(self, name), list) else v
                for name in (f.name for f in fields(self)) if name not in ("dumps", "probes")}

    def merge(self, other: Dict[str, Any]) -> None:
        """Set every fact in `other` that is not None (flags override the file)."""
        for key, value in other.items():
            if value is not None:
                setattr(self, key, value)


def _str(where: str, key: str, value: Any) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise HostFileError(f"{where}: {key}: expected text, got {type(value).__name__}")
    return str(value)


def convert(where: str, key: str, value: Any) -> Any:
    """One fact from a file or a flag, checked; `where` names the input for the error line."""
    from toolkit import calc        # here, not at import: parse and diff read no host facts (~3 ms)
    if value is None:
        return None
    try:
        if key == "os":
            v = _str(where, key, value).lower()
            if v not in platforms.names():
                raise ValueError(f"not one of {', '.join(platforms.names())}")
            return v
        if key == "peer":
            v = _str(where, key, value).lower().replace("_", "-").replace("nonlocal", "non-local")
            if v not in PEERS:
                raise ValueError("must be local or non-local")
            return v
        if key == "bandwidth":
            return calc.parse_rate(_str(where, key, value))
        if key == "rtt":
            return calc.parse_time(_str(where, key, value))
        if key == "loss":
            return calc.parse_loss(_str(where, key, value))
        if key in ("mtu", "path_mtu"):
            v = int(_str(where, key, value)) if str(value).isdigit() else None
            if v is None or not 68 <= v <= 65535:
                raise ValueError("an MTU is a whole number from 68 to 65535")
            return v
        if key == "tcp_rmem_max":
            return calc.parse_size(_str(where, key, value))
        if key in ("release", "name", "congestion"):
            return _str(where, key, value)
        if key in ("dumps", "probes", "targets"):
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError("expected a list of strings")
            return list(value)
    except HostFileError:
        raise
    except ValueError as exc:
        raise HostFileError(f"{where}: {key} {value!r}: {exc}") from None
    raise HostFileError(f"{where}: unknown key {key!r}; known: " + ", ".join(sorted(KEYS)))


KEYS = {"name", "os", "release", "peer", "bandwidth", "rtt", "loss", "mtu", "path_mtu",
        "tcp_rmem_max", "congestion", "dumps", "probes", "targets"}
_FIELD = {"bandwidth": "bandwidth_bps", "rtt": "rtt_s"}


MAX_SIZE = 1 << 20      # a host file is a few hundred bytes; more is not a host file


def _inside(where: str, key: str, base: str, entry: str) -> str:
    """A dump or probe named by a host file, confined to the host file's directory: a
    customer's file must not make mssdiag read /etc/passwd or /proc/self/environ (and the
    refusal does not say whether such a file exists)."""
    root = os.path.realpath(base or ".")
    full = os.path.realpath(os.path.join(root, entry))
    if os.path.isabs(entry) or os.path.commonpath([root, full]) != root:
        raise HostFileError(f"{where}: {key}: {entry!r} is outside the case directory; refused "
                            "(name files beside the host file)")
    why = _usable(full)
    if why:
        raise HostFileError(f"{where}: {key}: {entry!r}: {why}")
    return os.path.join(base, entry)


def _usable(path: str) -> Optional[str]:
    try:
        st = os.stat(path)
    except OSError:
        return "no such file"
    return None if stat.S_ISREG(st.st_mode) else "not a regular file"


def _facts(where: str, table: Dict[str, Any], name: str, base: str, default_files: List[str]) -> HostFacts:
    facts = HostFacts(name=name, source=where)
    for key, value in table.items():
        if key not in KEYS:
            raise HostFileError(f"{where}: unknown key {key!r}; known: " + ", ".join(sorted(KEYS)))
        setattr(facts, _FIELD.get(key, key), convert(where, key, value))
    for key in ("dumps", "probes"):
        setattr(facts, key, [_inside(where, key, base, p) for p in getattr(facts, key)])
    if "dumps" not in table and "probes" not in table:
        for path in default_files:
            (facts.probes if path.endswith(".json") else facts.dumps).append(path)
    return facts


def load(path: str) -> List[HostFacts]:
    """Every host a facts file describes; HostFileError (one line naming the file and why)
    for anything else: too big, not UTF-8 TOML, nested too deep, values out of range."""
    import tomllib           # here, not at the top: every parse imports this module, few read a host file

    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SIZE + 1)
        if len(raw) > MAX_SIZE:
            raise HostFileError(f"{path}: larger than {MAX_SIZE // 1024} KiB: not a host file")
        data = tomllib.loads(raw.decode("utf-8"))
    except OSError as exc:
        raise HostFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise HostFileError(f"{path}: not UTF-8 text (a host file is TOML, saved as UTF-8)") from None
    except tomllib.TOMLDecodeError as exc:
        raise HostFileError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise HostFileError(f"{path}: not valid TOML: nested too deep") from None
    try:
        return _hosts(path, data)
    except (ValueError, OverflowError, TypeError, RecursionError) as exc:
        if isinstance(exc, HostFileError):
            raise
        raise HostFileError(f"{path}: {exc}") from None


def _hosts(path: str, data: Dict[str, Any]) -> List[HostFacts]:
    base = os.path.dirname(path)
    if "hosts" in data:
        if set(data) != {"hosts"} or not isinstance(data["hosts"], dict):
            raise HostFileError(f"{path}: a file with [hosts.NAME] tables holds nothing else")
        if not data["hosts"]:
            raise HostFileError(f"{path}: [hosts] holds no host")
        out = []
        for name, table in data["hosts"].items():
            if not isinstance(table, dict):
                raise HostFileError(f"{path}: hosts.{name}: expected a table")
            out.append(_facts(f"{path}: hosts.{name}", table, str(table.get("name", name)), base, []))
        return out
    listing = base or "."
    siblings = sorted(os.path.join(base, f) for f in os.listdir(listing)
                      if f != os.path.basename(path) and not f.startswith(".") and not f.endswith((".toml", ".md"))
                      and _usable(os.path.join(listing, f)) is None)
    name = str(data.get("name") or os.path.basename(os.path.abspath(listing)))
    return [_facts(path, data, name, base, siblings)]
