"""toolkit/stack.py and toolkit/rules/stack.py over real `ip -d link` outputs."""
import pytest

from parsers import vpnconf
from toolkit.rules import catalog
from toolkit.probe.result import ProbeResult
from toolkit.stack import Route, Stack
from tests.stacklib import NETNS_ROUTES, links, stacked


def codes(h):
    return [f.code for f in catalog.evaluate(h)]


def found(h, code):
    out = [f for f in catalog.evaluate(h) if f.code == code]
    assert len(out) == 1, [f.code for f in catalog.evaluate(h)]
    return out[0]


def test_paths_of_the_namespace_host():
    s = Stack(links("netns-ip-d-link-show.txt"), NETNS_ROUTES)
    got = {p.route: (p.mtu, p.limited_by, p.mss) for p in s.paths()}
    assert got == {"10.0.9.0/24 dev eth0": (1500, "eth0", 1460), "172.17.0.0/16 dev br0": (1450, "br0", 1410),
                   "10.20.0.0/16 dev vxlan0": (1450, "vxlan0", 1410),
                   "default via 10.0.9.254 dev eth0": (1500, "eth0", 1460)}
    vx = s.path_to("10.20.1.1")
    assert [(h.device, h.encap, h.overhead, h.allows) for h in vx.hops] == [("vxlan0", "vxlan", 50, 1450),
                                                                            ("eth0", None, 0, 1500)]


def test_vxlan_without_dev_above_its_underlay_names_device_and_1450():
    f = found(stacked("netns-ip-d-link-show.txt", NETNS_ROUTES), "overlay-mtu-above-underlay")
    assert (f.data["device"], f.data["mtu"], f.data["right_mtu"], f.data["underlay"]) == ("vxlan0", 1500, 1450, "eth0")
    assert f.severity == "problem" and "1450" in f.title and "vxlan0" in f.title
    assert "ip link set dev vxlan0 mtu 1450" in f.recommendations[0].commands


def test_vxlan_without_dev_is_named_even_without_routes():
    f = found(stacked("netns-ip-d-link-show.txt"), "tunnel-without-underlay")
    assert f.data["device"] == "vxlan0" and f.data["underlay"] is None
    assert any("1450" in e for e in f.evidence)
    assert "overlay-mtu-above-underlay" not in codes(stacked("netns-ip-d-link-show.txt"))   # nothing to compare to


def test_container_port_above_the_vxlan_it_is_bridged_into():
    f = found(stacked("netns-ip-d-link-show.txt", NETNS_ROUTES), "port-above-path")
    assert f.data["bridge"] == "br0" and f.data["right_mtu"] == 1450
    assert {p["device"] for p in f.data["ports"]} == {"veth1a", "veth2a"}


def test_sized_overlay_and_ports_are_silent():
    # the kernel-sized VXLAN (with dev) and a bridge whose ports match: nothing to say
    h = stacked("netns-ip-d-link-show.txt", NETNS_ROUTES, drop=("vxlan0", "veth1a", "veth2a"))
    h.stack.routes = [r for r in h.stack.routes if r.dev != "vxlan0"]
    assert not {"overlay-mtu-above-underlay", "tunnel-without-underlay", "port-above-path"} & set(codes(h))


@pytest.mark.parametrize("fixture,right", [("jp-notes-gre-key.txt", 1472), ("jp-notes-vti.txt", 1480 - 7),
                                           ("jp-notes-ipip.txt", 1480), ("jp-notes-geneve.txt", 1450)])
def test_kernel_sized_tunnels_over_a_1500_underlay(fixture, right):
    """Tunnels the kernel made, given a 1500-byte route to their remote: only VTI, whose
    kernel MTU ignores ESP, is above what its underlay carries."""
    remote = links(fixture)[0].remote
    h = stacked(fixture, [Route(f"{remote}/32", "eth9")])
    h.stack.links["eth9"] = type(links(fixture)[0])("eth9", mtu=1500)
    got = [f for f in catalog.evaluate(h) if f.code == "overlay-mtu-above-underlay"]
    if fixture == "jp-notes-vti.txt":
        assert got and got[0].data["right_mtu"] == 1438        # ESP tunnel, AES-CBC + SHA1 assumed
    else:
        assert not got


def test_mss_clamp_above_the_path():
    h = stacked("netns-ip-d-link-show.txt", NETNS_ROUTES, clamps="netns-iptables-save-v4-v6.txt")
    f = [f for f in catalog.evaluate(h) if f.code == "mss-clamp-above-path"]
    by_rule = {x.data["rule"]: x for x in f}
    setmss = next(x for r, x in by_rule.items() if "--set-mss 1460" in r)
    assert (setmss.data["mss"], setmss.data["right_mss"]) == (1460, 1410)


def test_clamp_to_pmtu_on_an_oversized_overlay_is_named():
    h = stacked("netns-ip-d-link-show.txt", NETNS_ROUTES, clamps="netns-nft-list-ruleset-inet.txt")
    h.stack.clamps = [c for c in h.stack.clamps if c.action == "clamp-to-pmtu"]
    for c in h.stack.clamps:
        c.out_interface = "vxlan0"
    f = [x for x in catalog.evaluate(h) if x.code == "mss-clamp-above-path" and x.data["path"].endswith("vxlan0")]
    assert f and f[0].data["mss"] == 1460 and f[0].data["right_mss"] == 1410


def test_clamp_that_fits_is_silent():
    h = stacked("netns-ip-d-link-show.txt", NETNS_ROUTES, clamps="ufw-before-rules-set-mss.txt")   # 1360
    assert "mss-clamp-above-path" not in codes(h)


def probe(target, pmtu, method="icmp", hop=None):
    return ProbeResult(target=target, address=target, family="ipv4", pmtu=pmtu, pmtu_method=method, hop=hop)


def test_predicted_beside_measured_names_the_underlay():
    h = stacked("netns-ip-d-link-show.txt", NETNS_ROUTES, drop=("vxlan0",),
                probes=[probe("10.20.1.1", 1350, "inferred")])
    h.stack.routes = [Route("10.20.0.0/16", "vxlan1"), *NETNS_ROUTES]
    f = found(h, "path-predicted-vs-measured")
    assert (f.data["predicted"], f.data["measured"]) == (1450, 1350)
    assert f.data["explained_by"] == "underlay beyond eth0" and f.data["underlay_carries"] == 1400
    assert "predicted 1450" in f.title and "1350" in f.title


def test_predicted_equals_measured_is_info():
    h = stacked("netns-ip-d-link-show.txt", NETNS_ROUTES, probes=[probe("10.0.9.7", 1500, "local")])
    f = found(h, "path-predicted-vs-measured")
    assert f.severity == "info" and f.data["explained_by"] == "eth0"


def test_wireguard_family_from_its_configuration():
    wg = links("bench-wireguard-wan-wg0.txt")[0]
    eth = type(wg)("eth0", mtu=1500)
    plain = Stack([wg, eth], [Route("198.51.100.0/24", "eth0"), Route("10.9.0.0/24", "wg0")])
    wg.remote = "198.51.100.7"                         # ip link never shows a WireGuard peer: the config does
    assert plain.encap_of(wg)[0] == "wireguard"
    wg.remote = None
    cfg = vpnconf.parse("[Interface]\nMTU = 1420\n[Peer]\nEndpoint = [2001:db8::7]:51820\n")[0]
    cfg.device = "wg0"
    assert Stack([wg, eth], tunnels=[cfg]).encap_of(wg)[0] == "wireguard6"


def test_outer_fragmentation_between_the_two_endpoints():
    from tests.stacklib import outer_fragment_pair
    client, target = outer_fragment_pair()
    f = found(client, "overlay-fragmenting-outer")
    assert f.data["device"] == "vxlan0" and f.data["peer"] == "target" and f.data["right_mtu"] == 1450
    assert any("1,425 datagrams fragmented into 2,850" in e for e in f.evidence)
    assert any("1,425 datagrams reassembled" in e for e in f.evidence)
    assert "overlay-fragmenting-outer" not in codes(target)          # the target reassembles, it does not fragment
    alone, _ = outer_fragment_pair(peered=False)
    assert "overlay-fragmenting-outer" not in codes(alone)


def test_endpoints_are_paired_by_their_addresses():
    from tests.stacklib import outer_fragment_pair
    from toolkit.stack import pair_endpoints
    client, target = outer_fragment_pair(peered=False)
    pair_endpoints([client, target])
    assert [(d, p.facts.name) for d, p in client.stack_peers] == [("vxlan0", "target")]
    assert [(d, p.facts.name) for d, p in target.stack_peers] == [("vxlan0", "client")]
    lone, _ = outer_fragment_pair(peered=False)
    pair_endpoints([lone])
    assert lone.stack_peers == []


def test_openvpn_configuration_gives_a_tun_device_its_overhead():
    tun = next(l for l in links("jp-notes-tap-tun.txt") if l.name == "tun0")
    eth = type(tun)("eth0", mtu=1500, addresses=["192.0.2.9/24"])
    cfg = vpnconf.parse("client\ndev tun\nproto udp\nremote 198.51.100.7 1194\ntun-mtu 1500\n")[0]
    s = Stack([tun, eth], [Route("default", "eth0", "192.0.2.1"), Route("10.8.0.0/24", "tun0")], tunnels=[cfg])
    assert s.encap_of(tun)[0] == "openvpn-udp"
    path = s.path_to("10.8.0.9")
    assert path.hops[0].encap == "openvpn-udp" and path.hops[0].overhead == 52


def test_learned_path_mtu_beside_the_prediction():
    """`ip route show cache` entries are measurements: the VXLAN's inner destination and its
    underlay remote, as the vxlan-underlay1400 lab's client learned them."""
    h = stacked("netns-ip-d-link-show.txt", NETNS_ROUTES, drop=("vxlan0",))
    h.stack.routes = [Route("10.20.0.0/16", "vxlan1"), *NETNS_ROUTES]
    h.stack.learned = [Route("10.20.1.1", "vxlan1", mtu=1350, cache=True), Route("10.0.9.2", "eth0", mtu=1400,
                                                                               cache=True)]
    got = {f.data["target"]: f for f in catalog.evaluate(h) if f.code == "path-predicted-vs-measured"}
    assert got["10.20.1.1"].data["explained_by"] == "underlay beyond eth0"
    assert got["10.20.1.1"].data["measured_by"].startswith("learned")
    assert got["10.0.9.2"].data["explained_by"] == "beyond eth0" and got["10.0.9.2"].data["predicted"] == 1500


def test_a_stack_from_evidence_tables():
    from types import SimpleNamespace as Table
    from toolkit import stack
    plain = links("netns-ip-addr-show.txt")
    detailed = links("netns-ip-d-link-show.txt")
    s = stack.of([Table(kind="links", items=detailed), Table(kind="links", items=plain),
                  Table(kind="routes", items=list(NETNS_ROUTES)), Table(kind="sockets", items=[])])
    vx = s.link("vxlan0")
    assert vx.kind == "vxlan" and vx.remote == "10.0.9.2"            # `ip addr` after `ip -d link` keeps the kind
    assert s.link("eth0").addresses[0] == "10.0.9.1/24"                # and adds the addresses
    assert stack.of([Table(kind="sockets", items=[1])]) is None
