"""Hosts with a stack for rule tests: devices from the real `ip -d link` fixtures, routes
as the host's route table lists them, clamps from the real firewall fixtures."""
from pathlib import Path
from typing import Iterable, Optional, Sequence

from parsers import iplink, mssclamp
from toolkit.hostfile import HostFacts
from toolkit.hosts import Host
from toolkit.stack import Route, Stack

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# the routes of the namespace host in fixtures/links/netns-ip-d-link-show.txt
NETNS_ROUTES = (Route("10.0.9.0/24", "eth0"), Route("172.17.0.0/16", "br0"), Route("10.20.0.0/16", "vxlan0"),
                Route("default", "eth0", "10.0.9.254"))


def links(name: str, drop: Sequence[str] = ()):
    return [l for l in iplink.parse((FIXTURES / "links" / name).read_text()) if l.name not in drop]


def stacked(link_file: str, routes: Iterable[Route] = (), drop: Sequence[str] = (), clamps: Optional[str] = None,
            probes=(), name: str = "h") -> Host:
    h = Host(HostFacts(name, os="linux"))
    rules = mssclamp.parse((FIXTURES / "firewall" / clamps).read_text()) if clamps else []
    h.stack = Stack(links(link_file, drop), routes, clamps=rules)
    h.probes = list(probes)
    return h


def endpoint(side: str, routes: Iterable[Route]) -> Host:
    """One end of the VXLAN in fixtures/cases/stack-outer-fragments (captured in the
    vxlan-nodev lab): its two nstat snapshots paired, its devices and routes."""
    import parsers
    from toolkit.hosts import deltas
    folder = FIXTURES / "cases" / "forms" / "stack-endpoints" / side
    h = Host(HostFacts(side, os="linux"))
    for n in (1, 2):
        h.snapshots += parsers.parse((folder / f"nstat-{n}.txt").read_text(), source=f"{side}/nstat-{n}.txt")
    h.deltas = deltas(h.snapshots, forced=side)
    h.stack = Stack(iplink.parse((folder / "ip-d-link.txt").read_text()), routes)
    return h


def outer_fragment_pair(peered: bool = True):
    client = endpoint("client", [Route("default", "v1a", "10.0.1.1"), Route("10.0.1.0/24", "v1a"),
                                 Route("10.210.0.0/24", "vxlan0")])
    target = endpoint("target", [Route("default", "v2b", "10.0.2.1"), Route("10.0.2.0/24", "v2b"),
                                 Route("10.210.0.0/24", "vxlan0")])
    if peered:
        client.stack_peers = [("vxlan0", target)]
        target.stack_peers = [("vxlan0", client)]
    return client, target
