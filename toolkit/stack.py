"""A host's interface and tunnel stack: which devices a packet crosses on each egress path,
what each one costs, and the largest packet each path carries (the predicted path MTU).

Evidence in (from parsers/): the host's devices (`ip -d link`), its routes (`ip route`),
tunnel configurations (WireGuard, OpenVPN, Docker, CNI) and MSS clamping rules. Numbers
come from the one overhead table, toolkit/calc.py's ENCAPS. No findings here: the rules
in toolkit/rules/stack.py read a Stack and say what is wrong. docs/stack.md explains the model.

A path is what a packet leaving by one route crosses: the route's device, then for a
tunnel its underlay (the tunnel's `dev`, else the route to its remote endpoint), down to
a device with no lower device. Its predicted MTU is the smallest of: each device's MTU,
the route's own `mtu`, and for each tunnel its underlay path's MTU less the tunnel's
overhead. A bridge's ports (container veths, taps) send into the host's routes: their
traffic is limited by the paths those routes take.
"""
from __future__ import annotations

import ipaddress
from dataclasses import asdict, dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from toolkit import calc

# device kinds that carry a packet unchanged into the device below (VLAN tags do not reduce
# the IP MTU on Linux: the lower device carries 1504-byte frames; the VLAN device's own MTU
# is the limit)
PASS_THROUGH = ("vlan", "macvlan", "macvtap", "ipvlan", "ipvtap", "veth", "bridge", "bond", "team", "vrf", "dummy",
                "", "none", "loopback", "tun", "ifb", "ppp")
TUNNELS = ("vxlan", "geneve", "gre", "gretap", "ip6gre", "ip6gretap", "ipip", "sit", "ip6tnl", "vti", "vti6",
           "xfrm", "wireguard")
PORT_KINDS = ("veth", "tun", "macvtap", "")    # what hangs off a bridge for a container or VM
ESP_ASSUMED = "aes-cbc-sha1"                   # an IPsec device's cipher when nothing says (its cost is the largest common one)


@dataclass
class Route:
    """What the stack needs of a route: the fields of the `ip route` reader's records."""
    dst: str                     # "default" or a prefix; a bare address is a /32 or /128
    dev: Optional[str] = None
    via: Optional[str] = None
    mtu: Optional[int] = None    # the route's own `mtu` (locked or not)
    type: str = "unicast"
    table: Optional[str] = None  # None: main
    family: str = "ipv4"
    cache: bool = False          # a learned route (`ip route show cache`): a path MTU, not a path



def network_of(route):
    """The destination network of a route (any record with `dst` and `family`)."""
    if route.dst == "default":
        return ipaddress.ip_network("::/0" if route.family == "ipv6" else "0.0.0.0/0")
    return ipaddress.ip_network(route.dst, strict=False)


@dataclass
class Hop:
    """One device on a path, with what it costs and what it allows."""
    device: str
    kind: str
    mtu: Optional[int]
    role: str                    # route | lower | underlay
    encap: Optional[str] = None  # calc.ENCAPS name of what this device adds (tunnels)
    overhead: int = 0            # bytes that encapsulation takes at this size
    allows: Optional[int] = None  # the largest inner packet this hop lets through
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Path:
    """The devices one route's packets cross, from the route's device down to the wire."""
    route: str                   # the route as a person reads it: "default via 10.0.0.1 dev eth0"
    dst: str
    family: str
    hops: List[Hop]
    mtu: Optional[int]           # predicted: the largest packet that leaves without fragmenting
    limited_by: Optional[str]    # the device (or "route mtu") that sets it
    mss: Optional[int]
    notes: List[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"route": self.route, "dst": self.dst, "family": self.family, "mtu": self.mtu,
                "limited_by": self.limited_by, "mss": self.mss, "hops": [h.to_dict() for h in self.hops],
                "notes": list(self.notes)}


def family_of(address: Optional[str]) -> Optional[str]:
    if not address:
        return None
    try:
        return "ipv6" if ipaddress.ip_address(address.split("/")[0].split("%")[0]).version == 6 else "ipv4"
    except ValueError:
        return None


def mss_for(mtu: Optional[int], family: str = "ipv4") -> Optional[int]:
    if mtu is None:
        return None
    return mtu - (calc.IPV6 if family == "ipv6" else calc.IPV4) - calc.TCP


class Stack:
    """One host's devices, routes, tunnel configurations and clamping rules, and the paths
    they make. `links`: parsers.iplink.Link records; `routes`: Route-like records;
    `tunnels`: parsers.vpnconf records (WireGuard / OpenVPN) that say a device's outer
    family or overhead; `clamps`: parsers.mssclamp rules; `networks`: parsers.containernet
    records (Docker, CNI MTUs)."""

    def __init__(self, links: Iterable = (), routes: Iterable = (), tunnels: Iterable = (), clamps: Iterable = (),
                 networks: Iterable = ()):
        from parsers.iplink import merge
        # one device printed twice (`ip addr` and `ip -d link`) is one: what either says
        self.links: Dict[str, object] = {link.name: link for link in merge(list(links))}
        # the main table's unicast routes make paths; learned (cached) routes are measurements
        self.routes: List[Route] = [r for r in routes if getattr(r, "type", "unicast") in ("unicast", None, "")
                                    and getattr(r, "table", None) in (None, "main", "254")
                                    and not getattr(r, "cache", False)]
        self.learned = [r for r in routes if getattr(r, "cache", False) and getattr(r, "mtu", None)]
        self.tunnels = list(tunnels)
        self.clamps = list(clamps)
        self.networks = list(networks)

    def __bool__(self) -> bool:
        return bool(self.links or self.routes)

    # -------------------------------------------------------------- devices

    def link(self, name: Optional[str]):
        return self.links.get(name) if name else None

    def ports(self, bridge: str) -> List[object]:
        return [link for link in self.links.values() if link.master == bridge]

    def bridges(self) -> List[object]:
        return [link for link in self.links.values() if link.kind == "bridge"]

    def addresses(self) -> Dict[str, str]:
        """Each local address (no prefix) -> the device holding it."""
        out = {}
        for link in self.links.values():
            for cidr in link.addresses:
                out[cidr.split("/")[0]] = link.name
        return out

    def config_for(self, device: str):
        """The tunnel configuration that makes `device`: one naming it, or an OpenVPN `dev tun`
        / `dev tap` (no number) when this host has only one such device."""
        exact = next((t for t in self.tunnels if getattr(t, "device", None) == device), None)
        if exact is not None:
            return exact
        link = self.link(device)
        for t in self.tunnels:
            kind = getattr(t, "device", None)
            if kind in ("tun", "tap") and link is not None and link.kind == "tun":
                same = [l for l in self.links.values() if l.kind == "tun" and (l.mode or "tun") == kind]
                if len(same) == 1 and same[0] is link:
                    return t
        return None

    def is_tunnel(self, link) -> bool:
        """A device that encapsulates: a tunnel kind, or a tun/tap device a VPN configuration makes."""
        if link.kind in TUNNELS:
            return True
        config = self.config_for(link.name) if link.kind == "tun" else None
        return config is not None and getattr(config, "encap", None) is not None

    def outer_family(self, link) -> Tuple[Optional[str], str]:
        """The family of a tunnel's outer packets, and how it is known."""
        for address in (link.remote, link.local, link.group):
            fam = family_of(address)
            if fam:
                return fam, f"endpoint {address}"
        if link.kind in ("ip6gre", "ip6gretap", "ip6tnl", "vti6"):
            return "ipv6", "kind"
        if link.kind in ("gre", "gretap", "ipip", "sit", "vti"):
            return "ipv4", "kind"
        config = self.config_for(link.name)
        fam = family_of(getattr(config, "endpoint_address", None)) if config else None
        if fam:
            return fam, f"{config.format} endpoint {config.endpoint_address}"
        return None, "not shown"

    def encap_of(self, link) -> Tuple[Optional[str], int, str]:
        """(calc.ENCAPS name, extra bytes beyond it, how it was chosen) for a tunnel device."""
        kind = link.kind
        fam, known = self.outer_family(link)
        six = fam == "ipv6"
        extra = 0
        if kind in ("gre", "gretap", "ip6gre", "ip6gretap"):
            extra = 4 * sum(1 for o in ("key", "seq", "csum") if o in link.options)
            extra += 8 if "encap-fou" in link.options else 12 if "encap-gue" in link.options else 0
            if kind.startswith("ip6") and "encaplimit-none" in link.options:
                extra -= calc.IPV6_ENCAPLIMIT
            base = {"gre": "gre", "gretap": "gretap", "ip6gre": "ip6gre", "ip6gretap": "ip6gre"}[kind]
            if kind == "ip6gretap":
                extra += calc.ENCAPS["eth"].mtu_cost
            return base, extra, "kind and its options"
        if kind in ("vxlan", "geneve"):
            return kind + ("6" if six else ""), 0, known
        if kind in ("ipip", "sit"):
            return kind, 0, "kind"
        if kind == "ip6tnl":
            return "ip6tnl", -calc.IPV6_ENCAPLIMIT if "encaplimit-none" in link.options else 0, "kind"
        if kind == "wireguard":
            if fam is None:
                return "wireguard", 0, "outer family not shown: IPv4 assumed (IPv6 costs 20 more)"
            return "wireguard6" if six else "wireguard", 0, known
        if kind in ("vti", "vti6", "xfrm"):
            name = f"esp-tunnel{'6' if six else ''}-{ESP_ASSUMED}"
            return name, 0, "cipher not shown: AES-CBC with HMAC-SHA1-96 assumed (the largest common cost)"
        config = self.config_for(link.name)
        if kind == "tun" and config is not None and getattr(config, "encap", None):
            return config.encap, 0, f"{config.format} configuration"
        return None, 0, ""

    # -------------------------------------------------------------- routes and paths

    def route_to(self, address: str) -> Optional[Route]:
        """The longest-prefix route to an address (the main table; policy routing aside)."""
        fam = family_of(address)
        if fam is None:
            return None
        ip = ipaddress.ip_address(address.split("%")[0])
        best, best_len = None, -1
        for r in self.routes:
            try:
                net = network_of(r)
            except ValueError:
                continue
            if net.version != ip.version or ip not in net:
                continue
            if net.prefixlen > best_len:
                best, best_len = r, net.prefixlen
        return best

    def underlay(self, link) -> Tuple[Optional[str], str]:
        """The device a tunnel's outer packets leave by, and how it is known: its `dev`, else
        the route to its remote endpoint, else the device holding its local address."""
        if link.underlay:
            return link.underlay, "dev"
        config = self.config_for(link.name)
        endpoint = getattr(config, "endpoint_address", None) if config else None
        for address in (link.remote, link.group, endpoint):
            if address and family_of(address):
                r = self.route_to(address)
                if r is not None and r.dev:
                    return r.dev, f"route to {address}"
        if link.local:
            dev = self.addresses().get(link.local)
            if dev:
                return dev, f"device holding {link.local}"
        return None, "none"

    def allows(self, name: str, seen: Sequence[str] = ()) -> Tuple[Optional[int], List[Hop]]:
        """The largest packet device `name` carries to the wire, and the hops below it."""
        link = self.link(name)
        if link is None or name in seen:
            return None, []
        seen = tuple(seen) + (name,)
        hops: List[Hop] = []
        if self.is_tunnel(link):
            encap, extra, how = self.encap_of(link)
            below, why = self.underlay(link)
            under_mtu, under_hops = self.allows(below, seen) if below else (None, [])
            if encap is None:
                hop = Hop(name, link.kind, link.mtu, "tunnel", note="overhead not known")
                return link.mtu, [hop] + under_hops
            e = calc.ENCAPS[encap]
            if under_mtu is None:
                hop = Hop(name, link.kind, link.mtu, "tunnel", encap, e.cost(link.mtu or 1500) + extra, link.mtu,
                          note=f"{e.label()}; no underlay device" + (f" ({how})" if how else ""))
                return link.mtu, [hop]
            overhead = e.cost(under_mtu) + extra
            inner = under_mtu - overhead
            hop = Hop(name, link.kind, link.mtu, "tunnel", encap, overhead, inner,
                      note=f"{e.label()} over {below} ({why})" + (f"; {how}" if how and how != "kind" else ""))
            limit = inner if link.mtu is None else min(inner, link.mtu)
            return limit, [hop] + under_hops
        lower = link.lower if link.kind in ("vlan", "macvlan", "macvtap", "ipvlan", "ipvtap") else None
        hop = Hop(name, link.kind, link.mtu, "device", allows=link.mtu)
        if lower and self.link(lower) is not None:
            below, below_hops = self.allows(lower, seen)
            limit = link.mtu if below is None else below if link.mtu is None else min(link.mtu, below)
            return limit, [hop] + below_hops
        return link.mtu, [hop]

    def path(self, route: Route) -> Path:
        hops: List[Hop] = []
        notes: List[str] = []
        limit, limited_by = None, None
        if route.dev:
            limit, hops = self.allows(route.dev)
            if limit is not None:
                limited_by = _narrowest(hops, limit)
            if self.link(route.dev) is None:
                notes.append(f"device {route.dev} not in the ip link output")
        if route.mtu is not None and (limit is None or route.mtu < limit):
            limit, limited_by = route.mtu, "route mtu"
        return Path(describe(route), route.dst, route.family, hops, limit, limited_by, mss_for(limit, route.family),
                    notes)

    def paths(self) -> List[Path]:
        return [self.path(r) for r in self.routes if r.dev]

    def path_to(self, address: str) -> Optional[Path]:
        r = self.route_to(address)
        return self.path(r) if r is not None and r.dev else None

    def to_dict(self) -> dict:
        return {"devices": [link.to_dict() for link in self.links.values()],
                "paths": [p.to_dict() for p in self.paths()],
                "tunnels": [t.to_dict() for t in self.tunnels],
                "clamps": [c.to_dict() for c in self.clamps],
                "networks": [n.to_dict() for n in self.networks]}


def _narrowest(hops: List[Hop], limit: int) -> Optional[str]:
    for hop in hops:
        if hop.allows == limit or hop.mtu == limit:
            return hop.device
    return hops[0].device if hops else None


def describe(route) -> str:
    parts = [route.dst]
    if getattr(route, "via", None):
        parts += ["via", route.via]
    if route.dev:
        parts += ["dev", route.dev]
    if route.mtu is not None:
        parts += ["mtu", str(route.mtu)]
    return " ".join(parts)


def of(evidence: Iterable) -> Optional["Stack"]:
    """A host's stack from its evidence (the host model's tables: `links`, `routes`,
    `tunnels`, `networks`, `clamps`), or None when it holds no devices and no routes."""
    kinds: Dict[str, list] = {}
    for ev in evidence:
        kinds.setdefault(ev.kind, []).extend(ev.items)
    if not kinds.get("links") and not kinds.get("routes"):
        return None
    return Stack(kinds.get("links", ()), kinds.get("routes", ()), kinds.get("tunnels", ()), kinds.get("clamps", ()),
                 kinds.get("networks", ()))


def pair_endpoints(hosts: Sequence) -> None:
    """Tell each host which other host is the far end of each of its tunnels: the host that
    holds the tunnel's remote address (on a device, or as a tunnel's local address), or
    whose tunnel points back at this tunnel's local address. Sets `host.stack_peers`
    [(device, peer host)]; hosts without a stack are left alone."""
    owners: Dict[str, object] = {}
    for h in hosts:
        s = getattr(h, "stack", None)
        if not s:
            continue
        for address in s.addresses():
            owners.setdefault(address, h)
        for link in s.links.values():
            if s.is_tunnel(link) and link.local:
                owners.setdefault(link.local, h)
    for h in hosts:
        s = getattr(h, "stack", None)
        if not s:
            continue
        peers = []
        for link in s.links.values():
            if not s.is_tunnel(link):
                continue
            peer = owners.get(link.remote) if link.remote else None
            if peer is None and link.local:
                peer = next((o for o in hosts if o is not h and getattr(o, "stack", None) and any(
                    other.kind in TUNNELS and other.remote == link.local for other in o.stack.links.values())), None)
            if peer is not None and peer is not h:
                peers.append((link.name, peer))
        h.stack_peers = peers
