"""The stack's readers (parsers/iplink, mssclamp, vpnconf, containernet) over every real
fixture, each with the records it must give, and over the damaged forms pastes arrive in."""
import json
from pathlib import Path

import pytest

from parsers import containernet, iplink, mssclamp, vpnconf
from parsers.model import ParseError

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
READERS = {"links": iplink, "firewall": mssclamp, "tunnels": vpnconf, "containers": containernet}


def cases():
    for folder, module in READERS.items():
        for expected in sorted((ROOT / folder).glob("*.expected.json")):
            stem = expected.name[:-len(".expected.json")]
            source = next(p for p in (ROOT / folder).iterdir() if p.name.startswith(stem + ".")
                          and not p.name.endswith(".expected.json"))
            yield pytest.param(module, source, expected, id=f"{folder}/{source.name}")


@pytest.mark.parametrize("module,source,expected", list(cases()))
def test_fixture(module, source, expected):
    text = source.read_text(encoding="utf-8")
    assert module.detect(text) >= 0.5, "not recognised"
    got = [r.to_dict() for r in module.parse(text)]
    assert got == json.loads(expected.read_text(encoding="utf-8"))


@pytest.mark.parametrize("folder", list(READERS))
def test_every_folder_has_fixtures_and_sources(folder):
    assert len(list((ROOT / folder).glob("*.expected.json"))) >= 2
    listed = (ROOT / folder / "SOURCES.md").read_text(encoding="utf-8")
    for p in (ROOT / folder).iterdir():
        if p.name not in ("SOURCES.md",) and not p.name.endswith(".expected.json"):
            assert p.name in listed, f"{p.name} has no source in SOURCES.md"


@pytest.mark.parametrize("module", list(READERS.values()))
@pytest.mark.parametrize("text", ["", "netstat -s\nIp:\n    1 total packets received\n", "{}", "[]", "\x00\xff" * 40,
                                  "{\"ifname\": 3", "mtu 1500 qdisc noqueue", "[Interface]\n"])
def test_nothing_to_read_is_a_parse_error(module, text):
    with pytest.raises(ParseError):
        module.parse(text)


def test_iplink_text_json_and_oneline_forms_agree():
    base = {l.name: (l.kind, l.mtu, l.master, l.underlay, l.remote, l.vni)
            for l in iplink.parse((ROOT / "links/netns-ip-d-link-show.txt").read_text())}
    for form in ("netns-ip-d-j-link-show.txt", "netns-ip-d-j-p-link-show.txt", "netns-ip-d-s-link-show.txt"):
        other = {l.name: (l.kind, l.mtu, l.master, l.underlay, l.remote, l.vni)
                 for l in iplink.parse((ROOT / "links" / form).read_text())}
        assert other == base, form


def test_iplink_pasted_damage():
    text = (ROOT / "links/netns-ip-d-link-show.txt").read_text()
    clean = [l.to_dict() for l in iplink.parse(text)]
    quoted = "\r\n".join("> " + line for line in text.splitlines())
    html = "<pre>" + text.replace("<", "&lt;").replace(">", "&gt;") + "</pre>"
    fenced = "Here is the host:\n```\n$ ip -d link show\n" + text + "```\nthanks\n"
    for damaged in (quoted, html, fenced):
        got = [l.to_dict() for l in iplink.parse(damaged)]
        assert [(d["name"], d["kind"], d["mtu"], d["master"], d["underlay"]) for d in got] == \
               [(d["name"], d["kind"], d["mtu"], d["master"], d["underlay"]) for d in clean]


def test_iplink_cut_paste_keeps_whole_devices():
    lines = (ROOT / "links/netns-ip-d-link-show.txt").read_text().splitlines()
    half = "\n".join(lines[:9])              # stops in the middle of vxlan1's block
    names = [l.name for l in iplink.parse(half)]
    assert names == ["lo", "eth0", "vxlan0", "vxlan1"]
    assert iplink.parse(half)[3].mtu == 1450


def test_vxlan_kernel_mtus_match_the_table():
    """The kernel sized these from their underlays: 1500 - the table's VXLAN cost."""
    from toolkit import calc
    links = {l.name: l for l in iplink.parse((ROOT / "links/jp-notes-vxlan.txt").read_text())}
    assert links["vxlan0"].mtu == 1500 - calc.ENCAPS["vxlan"].cost(1500)
    gre = iplink.parse((ROOT / "links/jp-notes-gre-key.txt").read_text())[0]
    assert gre.mtu == 1500 - calc.ENCAPS["gre-key"].cost(1500)           # 1472
    gretap = iplink.parse((ROOT / "links/jp-notes-gretap-key.txt").read_text())[0]
    assert gretap.mtu == 1500 - calc.ENCAPS["gretap"].cost(1500) - 4     # 1458: the key adds 4
    assert iplink.parse((ROOT / "links/jp-notes-ipip.txt").read_text())[0].mtu == 1500 - calc.ENCAPS["ipip"].cost(1500)
    assert iplink.parse((ROOT / "links/jp-notes-geneve.txt").read_text())[0].mtu == 1500 - calc.ENCAPS["geneve"].cost(1500)
    assert iplink.parse((ROOT / "links/lkml-erspan-gre1.txt").read_text())[0].mtu == 1500 - calc.ENCAPS["gre"].cost(1500)
    assert iplink.parse((ROOT / "links/ec2-wireguard-jumbo-wg0.txt").read_text())[0].mtu == \
        9001 - calc.ENCAPS["wireguard6"].cost(9001)                          # 8921: wg-quick's route MTU - 80


def test_mssclamp_families_and_interfaces():
    rules = mssclamp.parse((ROOT / "firewall/netns-iptables-save-v4-v6.txt").read_text())
    assert [(r.family, r.action, r.mss, r.out_interface) for r in rules] == [
        ("ipv4", "clamp-to-pmtu", None, "ppp0"), ("ipv4", "set-mss", 1460, "vxlan0"), ("ipv6", "set-mss", 1400, None)]


def test_vpnconf_endpoint_family_gives_the_encapsulation():
    v6 = vpnconf.parse("[Interface]\nMTU = 1420\n[Peer]\nEndpoint = [2001:db8::1]:51820\n")[0]
    v4 = vpnconf.parse("[Interface]\n[Peer]\nEndpoint = 198.51.100.7:51820\n")[0]
    assert (v6.encap, v6.mtu, v6.endpoint_address) == ("wireguard6", 1420, "2001:db8::1")
    assert v4.encap == "wireguard"
    ovpn = vpnconf.parse("client\ndev tap0\nproto tcp6\nremote 2001:db8::9 443\nmssfix 1492 mtu\n")[0]
    assert (ovpn.encap, ovpn.mode, ovpn.mssfix, ovpn.mssfix_mtu) == ("openvpn-tcp6", "tap", 1492, True)


KINDS = {iplink: "links", mssclamp: "clamps", vpnconf: "tunnels", containernet: "networks"}


@pytest.mark.parametrize("module,source,expected", list(cases()))
def test_the_evidence_reader_gives_the_same(module, source, expected):
    """The host model's evidence reader of each kind (parsers/evidence.py) gives, from the
    file's lines as one chunk, what parse(text) does."""
    from parsers import evidence
    lines = source.read_text(encoding="utf-8").splitlines()
    reader = dict((k, r) for k, r in evidence.READERS if k == KINDS[module])[KINDS[module]]
    fmt, os_name, items, _ = reader(lines, None)
    assert os_name == "linux" and fmt
    assert [r.to_dict() for r in items] == json.loads(expected.read_text(encoding="utf-8"))
    assert reader(["nothing here"], None) is None


@pytest.mark.parametrize("name", ["netns-ip-d-link-show.txt", "jp-notes-bridge-ports.txt", "netns-ip-d-s-link-show.txt"])
def test_paste_clean_up_keeps_ip_link_lines_whole(name):
    """The splitter's clean-up re-cuts flattened dumps; `ip -d link` lines run long and must stay whole."""
    from parsers import paste
    text = (ROOT / "links" / name).read_text(encoding="utf-8")
    assert "".join(paste.normalize([text])) == text


from hypothesis import HealthCheck, given, settings, strategies as st

SAMPLES = [p.read_text(encoding="utf-8") for folder in READERS for p in sorted((ROOT / folder).iterdir())
           if not p.name.endswith((".expected.json", ".md"))]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.integers(0, 10 ** 6), st.integers(0, 400), st.text(max_size=40))
def test_damaged_inputs_only_ever_raise_parse_error(sample, at, cut, insert):
    """Any reader on any fixture cut, spliced and mangled: records or ParseError, nothing else."""
    i = at % (len(sample) + 1)
    text = sample[:i] + insert + sample[i + cut:]
    for module in READERS.values():
        try:
            module.parse(text)
        except ParseError:
            pass
        module.detect(text)
        module.detect(text.splitlines())


def test_a_ruleset_without_a_clamp_is_evidence_of_none():
    """An iptables-save or nft ruleset with no TCPMSS rule (and an empty one at its prompt) says
    the host clamps nothing: a `clamps` table with no items, not 'no netstat statistics'."""
    import parsers
    for text in ("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p icmp -j ACCEPT\nCOMMIT\n",
                 "[root@h ~]# iptables-save\n[root@h ~]# nft list ruleset\n",
                 "table inet filter {\n\tchain input {\n\t\ttype filter hook input priority 0; policy accept;\n\t}\n}\n"):
        found = []
        assert list(parsers.iter_parse(text, evidence=found.append)) == []
        assert found and all(e.kind == "clamps" and e.items == [] for e in found), found
