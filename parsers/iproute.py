"""Linux iproute2 `ip route` / `ip -6 route` output, text and JSON (`ip -j route`), every attribute.

    default via 192.0.2.1 dev eth0 proto dhcp src 192.0.2.10 metric 100
    10.0.0.0/8 proto bird metric 32
            nexthop via 10.1.1.1 dev eth0 weight 1
    10.0.3.2 via 10.0.1.1 dev eth0
        cache expires 599sec mtu 1400
    2001:db8::2 via fe80::1 dev eth0 metric 1024 expires 597sec mtu 1400 pref medium

`ip route show cache` (and `ip route get`) print the routes a host learned: IPv4 the
exceptions the kernel keeps per destination, with `cache` and `expires ... mtu ...` on a line
of their own; IPv6 the cached (RTF_CACHE) routes, inline. A route's `mtu` there is the path
MTU some router told this host ("fragmentation needed" / "packet too big"); `expires` how
long it is kept. `ip -j route show cache` gives the same as JSON (`"cache": [...]`,
`"expires": 599`, `"metrics": [{"mtu": 1400}]`).

A reader of its own (no Snapshot: these are not counters): `read(lines)` gives Routes, every
attribute kept (`attrs` holds those with no field of their own, as printed), and `detect`
says whether lines are `ip route` output. The host model ties them to a host
(parsers/evidence.py); `ip route` tables of any kind (main, local, a VRF's) read the same.
"""
from __future__ import annotations

import json
import re
from typing import Dict, Iterable, List, Optional, Tuple

from .model import ParseError, to_int
from dataclasses import dataclass, field
from .lazyre import lazy


TYPES = frozenset(("unicast", "local", "broadcast", "multicast", "unreachable", "prohibit", "blackhole", "throw",
                   "nat", "anycast"))
# attributes that take one value (`mtu` and the other metrics may have `lock` before it)
_VALUED = frozenset(("via", "dev", "src", "proto", "scope", "metric", "table", "tos", "dsfield", "expires", "pref",
                     "mtu", "advmss", "rtt", "rttvar", "reordering", "window", "cwnd", "ssthresh", "realms", "rto_min",
                     "initcwnd", "initrwnd", "features", "quickack", "congctl", "fastopen_no_cookie", "hoplimit",
                     "error", "uid", "weight", "ipid", "used", "age", "nhid", "from", "as", "ttl-propagate", "users",
                     "vrf", "onlink-kind"))
_METRICS = frozenset(("mtu", "advmss", "rtt", "rttvar", "reordering", "window", "cwnd", "ssthresh", "rto_min",
                      "initcwnd", "initrwnd", "hoplimit", "features", "quickack", "congctl", "fastopen_no_cookie"))
_FAMILIES = frozenset(("inet", "inet6", "ipv4", "ipv6", "mpls"))
_ADDRESS = lazy(r"^(?:default|[0-9a-fA-F:.]+(?:/\d{1,3})?|any|all)$")
_SECONDS = lazy(r"^(?P<n>\d+)(?:sec)?$")


@dataclass
class Route:
    """One route as `ip route` printed it."""
    dst: str                            # "default", "10.0.0.0/8", "10.0.3.2"
    family: str                         # ipv4 | ipv6
    type: str = "unicast"
    via: Optional[str] = None
    dev: Optional[str] = None
    src: Optional[str] = None
    proto: Optional[str] = None
    scope: Optional[str] = None
    metric: Optional[int] = None
    table: Optional[str] = None
    mtu: Optional[int] = None           # the route's MTU; on a cached route, the path MTU learned
    mtu_locked: bool = False
    advmss: Optional[int] = None
    expires: Optional[int] = None       # seconds this entry is still kept
    cache: bool = False                 # learned: `ip route show cache`, `ip route get`'s `cache` line
    nexthops: List[dict] = field(default_factory=list)
    flags: List[str] = field(default_factory=list)
    attrs: Dict[str, str] = field(default_factory=dict)   # every other attribute, as printed

    def to_dict(self) -> dict:
        return {"dst": self.dst, "family": self.family, "type": self.type, "via": self.via, "dev": self.dev,
                "src": self.src, "proto": self.proto, "scope": self.scope, "metric": self.metric,
                "table": self.table, "mtu": self.mtu, "mtu_locked": self.mtu_locked, "advmss": self.advmss,
                "expires": self.expires, "cache": self.cache, "nexthops": self.nexthops, "flags": self.flags,
                "attrs": self.attrs}

    @property
    def host(self) -> str:
        """The destination without a host route's prefix length (`10.0.3.2/32` -> 10.0.3.2)."""
        if self.dst.endswith(("/32", "/128")):
            return self.dst.rsplit("/", 1)[0]
        return self.dst


def family_of(address: str) -> str:
    return "ipv6" if ":" in address else "ipv4"


# ------------------------------------------------------------------ text

# a route line: an optional type, then a destination; attribute words follow
_ROUTE = lazy(r"^(?:(?P<type>unicast|local|broadcast|multicast|unreachable|prohibit|blackhole|throw|nat|anycast)"
              r"[ \t]+)?(?P<dst>default|[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?:/[0-9]{1,2})?"
              r"|[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}(?:/[0-9]{1,3})?)(?:[ \t]+(?P<rest>.*?))?[ \t]*$")
_WORD = lazy(r"(?:via|dev|src|proto|scope|metric|table|expires|mtu|pref|cache|nexthop)\b")


def _number(text: str) -> Optional[int]:
    m = _SECONDS.match(text)
    if m is None:
        return None
    try:
        return to_int(m["n"])
    except ParseError:
        return None


def _apply(route: Route, words: List[str], warnings: List[str], nexthop: Optional[dict] = None) -> None:
    """The attribute words of a route line (or of its `cache` / `nexthop` line) into `route`."""
    i = 0
    target = nexthop
    while i < len(words):
        word = words[i]
        if word == "cache" and nexthop is None:
            route.cache = True
            i += 1
            continue
        if word in _VALUED and i + 1 < len(words):
            value = words[i + 1]
            locked = False
            if word in _METRICS and value == "lock" and i + 2 < len(words):
                locked, value = True, words[i + 2]
                i += 1
            if word == "via" and value in _FAMILIES and i + 2 < len(words):
                value = words[i + 2]
                i += 1
            i += 2
            if target is not None:
                target[word] = value
                continue
            _set(route, word, value, locked, warnings)
            continue
        if target is not None:
            target.setdefault("flags", []).append(word)
        else:
            route.flags.append(word)
        i += 1


def _set(route: Route, word: str, value: str, locked: bool, warnings: List[str]) -> None:
    if word in ("via", "dev", "src", "proto", "scope", "table"):
        setattr(route, word, value)
    elif word in ("metric", "mtu", "advmss", "expires"):
        number = _number(value)
        if number is None:
            warnings.append(f"route {route.dst}: {word} {value!r} is not a whole number; left out")
            return
        setattr(route, word, number)
        if word == "mtu":
            route.mtu_locked = locked
    else:
        route.attrs[word] = ("lock " if locked else "") + value


def detect(lines: Iterable[str]) -> bool:
    """True when the lines hold `ip route` routes (a destination, then its attribute words)."""
    for line in lines:
        m = _ROUTE.match(line.strip())
        if m and m["rest"] and _WORD.match(m["rest"]):
            return True
    return False


def read(lines: Iterable[str]) -> Tuple[List[Route], List[str]]:
    """(routes, warnings) from `ip route` text or `ip -j route` JSON."""
    lines = list(lines)
    joined = "\n".join(lines).strip()
    if joined.startswith("["):
        return read_json(joined)
    routes: List[Route] = []
    warnings: List[str] = []
    last: Optional[Route] = None
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        indented = raw[:1] in (" ", "\t")
        words = line.split()
        if indented and last is not None and words[0] == "cache":
            _apply(last, words, warnings)
            continue
        if indented and last is not None and words[0] == "nexthop":
            hop: Dict[str, object] = {}
            _apply(last, words[1:], warnings, hop)
            last.nexthops.append(hop)
            continue
        m = _ROUTE.match(line)
        if m is None or not (m["type"] or m["rest"] and _WORD.search(m["rest"])):
            last = None             # no route: a route always has a type or an attribute
            continue
        dst = m["dst"]
        route = Route(dst=dst, family=family_of(dst) if dst != "default" else "ipv4", type=m["type"] or "unicast")
        _apply(route, (m["rest"] or "").split(), warnings)
        if dst == "default" and route.via:
            route.family = family_of(route.via)
        routes.append(route)
        last = route
    return routes, warnings


# ------------------------------------------------------------------ JSON

_JSON_FIELDS = {"gateway": "via", "prefsrc": "src", "protocol": "proto", "dev": "dev", "scope": "scope",
                "table": "table"}


def read_json(text: str) -> Tuple[List[Route], List[str]]:
    """`ip -j route` (and `-p`): a list of objects."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"ip -j route: not JSON: {exc}") from None
    if not isinstance(data, list):
        raise ParseError("ip -j route: expected a list of routes")
    routes: List[Route] = []
    warnings: List[str] = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("dst"), str):
            warnings.append(f"ip -j route: item {i} has no destination; left out")
            continue
        dst = item["dst"]
        route = Route(dst=dst, family=family_of(dst) if dst != "default" else "ipv4",
                      type=str(item.get("type", "unicast")))
        for key, value in item.items():
            if key == "dst" or key == "type":
                continue
            if key in _JSON_FIELDS and isinstance(value, (str, int)):
                setattr(route, _JSON_FIELDS[key], str(value))
            elif key == "via" and isinstance(value, dict):
                route.via = str(value.get("host"))
            elif key in ("metric", "expires") and isinstance(value, int) and not isinstance(value, bool):
                setattr(route, key, value)
            elif key == "cache":
                route.cache = True
                if isinstance(value, list):
                    route.flags += [str(f) for f in value]
            elif key == "flags" and isinstance(value, list):
                route.flags += [str(f) for f in value]
            elif key == "metrics" and isinstance(value, list):
                for metric in value:
                    for name, v in (metric.items() if isinstance(metric, dict) else ()):
                        _metric(route, name, v)
            elif key == "nexthops" and isinstance(value, list):
                route.nexthops = [dict(h) for h in value if isinstance(h, dict)]
            else:
                route.attrs[key] = json.dumps(value) if not isinstance(value, str) else value
        if dst == "default" and route.via:
            route.family = family_of(route.via)
        routes.append(route)
    return routes, warnings


def _metric(route: Route, name: str, value) -> None:
    locked = False
    if isinstance(value, dict):         # {"lock": true, "value": 1400} where a metric is locked
        locked, value = bool(value.get("lock")), value.get("value")
    if name in ("mtu", "advmss") and isinstance(value, int) and not isinstance(value, bool):
        setattr(route, name, value)
        if name == "mtu":
            route.mtu_locked = locked
    else:
        route.attrs[name] = ("lock " if locked else "") + str(value)


__all__ = ["Route", "detect", "read", "read_json", "family_of"]
