"""Learned path MTUs of other stacks: Windows `netsh interface ipv4|ipv6 show destinationcache`
and HP-UX `netstat -rn` / `-rnv` (the Pmtu column).

    Interface 16: Ethernet 2                 (localized: 接口 16: 以太网 2)

    PMTU Destination Address                               Next Hop Address
    ---- --------------------------------------------- -------------------------
    1400 10.0.32.2                                     192.168.35.1

Windows keeps one destination-cache entry per destination it talked to, with the path MTU it
uses: the interface MTU unless a router said "fragmentation needed" / "packet too big".
The table is read by its shape (a `PMTU` column first, a line of dashes, then rows of a
number and two addresses), so localized headers read alike; the interface line above it
names the interface.

    Routing tables
    Dest/Netmask                    Gateway            Flags Refs Use  Interface Pmtu
    default/0.0.0.0                 15.13.136.11       UG    3    40   lan0      1500
    15.13.136.0/255.255.248.0
                                    15.13.136.66       U     1    153  lan0      1500

HP-UX prints each route's path MTU (`Pmtu`); PMTU discovery lowers it on the host route of
a destination that got "fragmentation needed". With `-v` the destination carries its netmask
and a long one pushes the rest of the row to the next line. Both give model-free
parsers.iproute.Route records (`mtu` is the path MTU, `cache` True for Windows' entries).
"""
from __future__ import annotations

import re
from typing import Iterable, List, Optional, Tuple

from .iproute import Route, family_of
from .model import ParseError, to_int
from .lazyre import lazy


_DASHES = lazy(r"^[ \t]*-{3,}(?:[ \t]+-{3,}){2,}[ \t]*$")
_PMTU_HEADER = lazy(r"^[ \t]*PMTU[ \t]+\S", re.I)
_ROW = lazy(r"^[ \t]*(?P<pmtu>[0-9]+)[ \t]+(?P<dst>[0-9a-fA-F:.%]+)[ \t]+(?P<via>[0-9a-fA-F:.%]+)[ \t]*$")
_INTERFACE = lazy(r"^[ \t]*\S[^:]*?[ \t]*(?P<index>[0-9]+)[ \t]*:[ \t]*(?P<name>\S.*?)[ \t]*$")
_HPUX_HEADER = lazy(r"^[ \t]*(?P<cols>(?:Destination|Dest/Netmask)[ \t]+Gateway[ \t]+Flags[ \t]+Refs.*Pmtu)[ \t]*$",
                    re.I)


def detect_destinationcache(lines: Iterable[str]) -> bool:
    lines = list(lines)
    return any(_PMTU_HEADER.match(a) and _DASHES.match(b) for a, b in zip(lines, lines[1:]))


def detect_hpux(lines: Iterable[str]) -> bool:
    return any(_HPUX_HEADER.match(line) for line in lines)


def _int(text: str) -> Optional[int]:
    try:
        return to_int(text)
    except ParseError:
        return None


def read_destinationcache(lines: Iterable[str]) -> Tuple[List[Route], List[str]]:
    """(routes, warnings) of `netsh interface ipv4|ipv6 show destinationcache`."""
    routes: List[Route] = []
    warnings: List[str] = []
    interface: Optional[str] = None
    in_table = False
    lines = list(lines)
    for n, line in enumerate(lines, 1):
        if _DASHES.match(line):
            in_table = True
            continue
        m = _ROW.match(line) if in_table else None
        if m:
            mtu = _int(m["pmtu"])
            if mtu is None:
                warnings.append(f"destination cache {m['dst']}: PMTU {m['pmtu']!r} is not a whole number; entry left out")
                continue
            dst = m["dst"]
            routes.append(Route(dst=dst, family=family_of(dst), via=m["via"], dev=interface, mtu=mtu, cache=True))
            continue
        if not line.strip() or _PMTU_HEADER.match(line):
            continue
        i = _INTERFACE.match(line)
        in_table = False
        if i:
            interface = f"{i['index']}: {i['name']}"
    return routes, warnings


def read_hpux(lines: Iterable[str]) -> Tuple[List[Route], List[str]]:
    """(routes, warnings) of HP-UX `netstat -r[n][v]`: every route with its Pmtu."""
    routes: List[Route] = []
    warnings: List[str] = []
    columns: Optional[List[str]] = None
    pending: Optional[Tuple[int, str]] = None       # a -v destination alone on its line (line, text)
    for n, line in enumerate(lines, 1):
        h = _HPUX_HEADER.match(line)
        if h:
            columns = [c.lower() for c in h["cols"].split()]
            pending = None
            continue
        if columns is None:
            continue
        words = line.split()
        if len(words) == 1 and "/" in words[0]:
            pending = (n, words[0])
            continue
        if pending is not None and len(words) == len(columns) - 1:
            words = [pending[1]] + words
        pending = None
        if len(words) != len(columns):
            if words and columns and not any(c.isdigit() for c in line):
                columns = None      # prose after the table
            continue
        row = dict(zip(columns, words))
        dst = row.get("destination") or row.get("dest/netmask", "")
        mtu = _int(row.get("pmtu", ""))
        if mtu is None and not row.get("refs", "").isdigit():
            columns = None          # prose after the table
            continue
        if mtu is None:
            warnings.append(f"route {dst}: Pmtu {row.get('pmtu')!r} is not a whole number; route left out")
            continue
        netmask = None
        if "/" in dst:
            dst, netmask = dst.split("/", 1)
        route = Route(dst=dst, family=family_of(dst) if dst != "default" else "ipv4", via=row.get("gateway"),
                      dev=row.get("interface"), mtu=mtu, flags=list(row.get("flags", "")))
        for key in ("refs", "use"):
            if key in row:
                route.attrs[key] = row[key]
        if netmask is not None:
            route.attrs["netmask"] = netmask
        routes.append(route)
    return routes, warnings


__all__ = ["detect_destinationcache", "detect_hpux", "read_destinationcache", "read_hpux"]
