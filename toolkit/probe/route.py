"""What the local kernel knows about the way to a target: source address, interface,
interface MTU and any path MTU it has cached from an earlier exchange. Plain sockets
only, no privileges needed.
"""
from __future__ import annotations

import ipaddress
import os
import socket
import struct
from dataclasses import dataclass
from typing import Optional

IP_MTU = 14          # linux/in.h
IPV6_MTU = 24        # linux/in6.h


@dataclass
class Route:
    family: str               # "ipv4" | "ipv6"
    source: str
    interface: Optional[str]
    local_mtu: int            # MTU of the interface the route leaves by
    cached_pmtu: Optional[int]  # kernel's current path MTU for the target (None if = local_mtu)
    gateway: Optional[str] = None   # the next hop the route names (None: on link)
    kind: Optional[str] = None      # the route's type: unicast, local (this host), broadcast, multicast...


def family_of(address: str) -> str:
    return "ipv6" if ipaddress.ip_address(address).version == 6 else "ipv4"


def sockaddr(address: str, port: int) -> tuple:
    """The socket address of `address`: a zone (fe80::1%eth0) becomes the scope id that
    picks the interface (the socket module does not read zones in address strings)."""
    bare, _, zone = address.partition("%")
    return (bare, port, 0, socket.if_nametoindex(zone)) if zone else (address, port)


def _named(name: tuple) -> str:
    """An address from getsockname(), with its zone when it has a scope (link-local)."""
    return f"{name[0]}%{socket.if_indextoname(name[3])}" if len(name) > 3 and name[3] else name[0]


def lookup(address: str) -> Route:
    """Ask the kernel's routing table; raises OSError when there is no route. A route to a
    broadcast or multicast address is returned as such (`kind`), without a source."""
    fam = family_of(address)
    iface, mtu, gateway, kind = route_interface(address, fam)
    if kind in ("broadcast", "multicast"):
        return Route(fam, "", iface, mtu or 0, None, gateway, kind)
    af = socket.AF_INET6 if fam == "ipv6" else socket.AF_INET
    with socket.socket(af, socket.SOCK_DGRAM) as s:
        s.connect(sockaddr(address, 9))
        source = _named(s.getsockname())
        try:
            path_mtu = s.getsockopt(socket.IPPROTO_IPV6 if fam == "ipv6" else socket.IPPROTO_IP,
                                    IPV6_MTU if fam == "ipv6" else IP_MTU)
        except OSError:
            path_mtu = None
    if iface is None:
        iface, mtu = interface_of(source)
    if mtu is None:
        mtu = path_mtu or (1280 if fam == "ipv6" else 1500)
    mtu = min(mtu, 65535)          # an IP packet's length field tops out there (loopback says 65536)
    cached = path_mtu if path_mtu and path_mtu < mtu else None
    return Route(fam, source, iface, mtu, cached, gateway, kind)


RTM_GETROUTE, RTA_DST, RTA_OIF, RTA_GATEWAY, NLMSG_ERROR = 26, 1, 4, 5, 2
RTN_TYPES = {1: "unicast", 2: "local", 3: "broadcast", 4: "anycast", 5: "multicast", 6: "blackhole",
             7: "unreachable", 8: "prohibit"}


def route_interface(address: str, family: str):
    """(name, mtu, gateway, type) of the kernel's route to `address`: the interface it
    leaves by, its next hop and the route's type, asked over rtnetlink (RTM_GETROUTE, as
    `ip route get` does); Nones where it cannot say. A zone (fe80::1%eth0) names the
    interface."""
    v6 = family == "ipv6"
    bare, _, zone = address.partition("%")
    dst = socket.inet_pton(socket.AF_INET6 if v6 else socket.AF_INET, bare)
    rta = struct.pack("=HH", 4 + len(dst), RTA_DST) + dst
    if zone:
        try:
            rta += struct.pack("=HHI", 8, RTA_OIF, socket.if_nametoindex(zone))
        except OSError:
            return None, None, None, None
    body = struct.pack("=BBBBBBBBI", socket.AF_INET6 if v6 else socket.AF_INET, len(dst) * 8, 0, 0, 0, 0, 0, 0, 0) + rta
    msg = struct.pack("=IHHII", 16 + len(body), RTM_GETROUTE, 1, 1, 0) + body
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as nl:    # NETLINK_ROUTE
            nl.settimeout(1.0)
            nl.send(msg)
            reply = nl.recv(65536)
    except OSError:
        return None, None, None, None
    if len(reply) < 28:
        return None, None, None, None
    _length, kind = struct.unpack_from("=IH", reply)
    if kind == NLMSG_ERROR:
        return None, None, None, None
    rtype = RTN_TYPES.get(reply[16 + 7])         # struct rtmsg's rtm_type
    p = 16 + 12
    index = gateway = None
    while p + 4 <= len(reply):
        ln, t = struct.unpack_from("=HH", reply, p)
        if ln < 4:
            break
        if t == RTA_OIF and ln >= 8:
            index = struct.unpack_from("=I", reply, p + 4)[0]
        elif t == RTA_GATEWAY and ln == 4 + len(dst):
            gateway = socket.inet_ntop(socket.AF_INET6 if v6 else socket.AF_INET, reply[p + 4:p + ln])
        p += (ln + 3) & ~3
    if index is None:
        return None, None, None, rtype
    try:
        name = socket.if_indextoname(index)
        with open(os.path.join("/sys/class/net", name, "mtu")) as fh:
            return name, int(fh.read()), gateway, rtype
    except (OSError, ValueError):
        return None, None, None, rtype


def interface_of(source: str):
    """(name, mtu) of the interface holding the source address."""
    import psutil      # only when rtnetlink could not tell
    plain = source.split("%")[0]
    for name, addrs in psutil.net_if_addrs().items():
        for a in addrs:
            if a.address and a.address.split("%")[0] == plain:
                try:
                    with open(f"/sys/class/net/{name}/mtu") as fh:
                        return name, int(fh.read())
                except (OSError, ValueError):
                    stats = psutil.net_if_stats().get(name)
                    return name, stats.mtu if stats else None
    return None, None


RTM_DELROUTE, RTM_F_CLONED, NLM_F_ACK = 25, 0x200, 4


def forget(address: str) -> bool:
    """Remove the path MTU the kernel cached for an IPv6 address (RTM_DELROUTE with
    RTM_F_CLONED: that one exception, nobody else's), needs CAP_NET_ADMIN. Linux offers
    no such call for IPv4 exceptions (only `ip route flush cache`, everyone's at once);
    True when one was removed."""
    if family_of(address) != "ipv6":
        return False
    dst = socket.inet_pton(socket.AF_INET6, address.split("%")[0])
    rta = struct.pack("=HH", 4 + len(dst), RTA_DST) + dst
    body = struct.pack("=BBBBBBBBI", socket.AF_INET6, 128, 0, 0, 254, 0, 0, 1, RTM_F_CLONED) + rta
    msg = struct.pack("=IHHII", 16 + len(body), RTM_DELROUTE, 1 | NLM_F_ACK, 1, 0) + body
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as nl:
            nl.settimeout(1.0)
            nl.send(msg)
            reply = nl.recv(65536)
    except OSError:
        return False
    return len(reply) >= 20 and struct.unpack_from("=H", reply, 4)[0] == NLMSG_ERROR \
        and struct.unpack_from("=i", reply, 16)[0] == 0
