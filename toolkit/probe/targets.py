"""What a target names, and what the prober refuses to send to.

A target is resolved to one address: a literal as given (an IPv4-mapped IPv6 address,
::ffff:a.b.c.d, as the IPv4 address it names; a link-local address keeps its zone,
fe80::1%eth0, which picks the interface), else the resolver's first answer (IPv4 first).

Never probed, each with the reason: multicast groups (every member would answer, and a
group has no path MTU), broadcast addresses (the limited one, and a subnet's directed
broadcast where the route says so), the unspecified address (0.0.0.0, `0`, `::`: the
kernel takes it for this host), a link-local IPv6 address without its zone (which link?)
and, unless asked for, this host itself (loopback, or one of its own addresses).
"""
from __future__ import annotations

import ipaddress
import socket
from typing import Optional

THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")     # RFC 1122: "this host on this network", never a destination


class ProbeError(Exception):
    """A target could not be probed at all; the message names it."""


def resolve(target: str, family: Optional[str]) -> str:
    try:
        addr = ipaddress.ip_address(target.strip("[]"))
    except ValueError:
        addr = None
    if addr is None:
        af = {"ipv4": socket.AF_INET, "ipv6": socket.AF_INET6}.get(family or "", socket.AF_UNSPEC)
        try:
            infos = socket.getaddrinfo(target, None, af, socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise ProbeError(f"{target}: cannot resolve: {getattr(exc, 'strerror', None) or exc}") from None
        infos.sort(key=lambda i: i[0] != socket.AF_INET)     # IPv4 first unless -6
        addr = ipaddress.ip_address(infos[0][4][0])
    if addr.version == 6 and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped          # an IPv4 host, reached over IPv4
    fam = "ipv6" if addr.version == 6 else "ipv4"
    if family and fam != family:
        raise ProbeError(f"{target}: is an {fam} address but {family} was asked for")
    return str(addr)


def refused(address: str, loopback: bool = False) -> Optional[str]:
    """Why this address is never probed (None: it may be). `loopback`: this host may be."""
    a = ipaddress.ip_address(address)
    if a.is_multicast:
        group = "ff00::/8" if a.version == 6 else "224.0.0.0/4"
        return f"{address} is a multicast group ({group}): every member would answer, and a group has no path MTU"
    if a.version == 4 and a == ipaddress.IPv4Address("255.255.255.255"):
        return f"{address} is the broadcast address: every host on the link would answer"
    if a.is_unspecified or a.version == 4 and a in THIS_NETWORK:
        return f"{address} is the unspecified address ('this host'): the kernel would probe this host itself"
    if a.is_loopback and not loopback:
        return f"{address} is a loopback address: this host itself (--loopback probes it)"
    if a.version == 6 and a.is_link_local and not a.scope_id:
        return f"{address} is link-local: name the interface it is on as its zone ({address}%eth0)"
    return None


def refused_by_route(address: str, kind: Optional[str], interface: Optional[str], loopback: bool) -> Optional[str]:
    """Why the kernel's route to the address forbids probing it (its type: broadcast,
    local...), or None."""
    if kind == "broadcast":
        return f"{address} is the broadcast address of {interface or 'a local'} subnet: every host there would answer"
    if kind == "multicast":
        return f"{address} is routed as multicast: every member would answer"
    if kind == "local" and not loopback:
        return f"{address} is an address of this host (--loopback probes it)"
    return None
