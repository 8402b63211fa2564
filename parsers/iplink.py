"""Linux `ip link` / `ip addr` output, text and JSON: every device with its kind, MTU,
master, lower device and tunnel details.

Reads `ip -d link show` (what this reader is for: `-d` prints each device's kind and its
tunnel, VLAN and bridge details), `ip -d -j [-p] link show`, and the plainer forms people
paste (`ip link`, `ip addr`, `ip -o link`, `ip -d -s link` with its counters), from any
iproute2 since 3.x. Prompts, command lines, e-mail quoting, Markdown fences and HTML
escapes around them are skipped; other text in the same paste is ignored. What a device's
kind means for the MTU (the encapsulation it adds) is not decided here: toolkit/stack.py
maps kinds to the overhead table in toolkit/calc.py.

Without `-d`, the kind is taken from what the header shows (`link/gre` is GRE, `link/ppp`
PPP, `link/none` a tun or WireGuard device: kind `none`), and a device that shows only
`link/ether` has kind "" (a NIC, or a kind the text does not say).
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple

from .model import ParseError
from .text import clean as clean_line
from .lazyre import lazy

KINDS = ("veth", "bridge", "vxlan", "geneve", "gre", "gretap", "ip6gre", "ip6gretap", "erspan", "ip6erspan",
         "ipip", "sit", "ip6tnl", "vti", "vti6", "xfrm", "wireguard", "vlan", "macvlan", "macvtap", "ipvlan",
         "ipvtap", "tun", "bond", "team", "dummy", "vrf", "ifb", "nlmon", "bareudp", "macsec", "hsr",
         "netkit", "openvswitch", "ppp", "amt", "gtp", "l2tp", "can", "vcan")
SLAVE_KINDS = ("bridge_slave", "bond_slave", "vrf_slave", "team_slave")
# link/TYPE without -d: the kind it implies
LINK_TYPE_KIND = {"gre": "gre", "gre6": "ip6gre", "ipip": "ipip", "sit": "sit", "tunnel6": "ip6tnl",
                  "ppp": "ppp", "none": "none", "loopback": "loopback", "void": ""}


@dataclass
class Link:
    """One network device as `ip` printed it."""
    name: str
    index: Optional[int] = None
    kind: str = ""                      # ip's link kind (veth, bridge, vxlan, ...); "" for a NIC / not shown
    link_type: str = ""                 # link/TYPE: ether, none, gre, ipip, loopback, ppp ...
    mtu: Optional[int] = None
    state: str = ""
    flags: List[str] = field(default_factory=list)
    master: Optional[str] = None        # the bridge, bond or VRF it is a port of
    slave_kind: Optional[str] = None    # bridge, bond, vrf (from bridge_slave ... / info_slave_kind)
    lower: Optional[str] = None         # NAME@LOWER: a VLAN's or macvlan's parent, a veth's peer (ifN: in another namespace)
    peer_netns: Optional[str] = None    # link-netns NAME / link-netnsid N: the peer's namespace
    underlay: Optional[str] = None      # a tunnel's `dev NAME`: the device its outer packets leave by
    remote: Optional[str] = None
    local: Optional[str] = None
    group: Optional[str] = None         # VXLAN multicast group
    vni: Optional[int] = None           # VXLAN / Geneve id
    port: Optional[int] = None          # VXLAN / Geneve destination UDP port
    vlan_id: Optional[int] = None
    vlan_protocol: Optional[str] = None
    mode: Optional[str] = None          # tun/tap, macvlan/ipvlan mode, ipip/sit/ip6tnl inner protocol
    options: List[str] = field(default_factory=list)   # GRE key / seq / csum, encap fou|gue, encaplimit none
    addresses: List[str] = field(default_factory=list)  # from `ip addr`: CIDR strings
    line: int = 0                       # where it starts in the text (1-based)

    def to_dict(self) -> dict:
        return asdict(self)


META = {
    "name": "iplink",
    "title": "Linux ip link / ip addr",
    "formats": ("ip -d link show", "ip -d -j link show", "ip -d -j -p link show", "ip link show", "ip addr show",
                "ip -o link show", "ip -d -s link show"),
    "gives": "devices: kind, MTU, master, lower device, tunnel endpoints and underlay, VLAN ids, VXLAN/Geneve ids",
}

# "2: eth0: <...> mtu 1500 ..." and "6: gre1@NONE: <...>", "5: veth0@if2: ..."
_HEADER = lazy(r"^\s*(?P<index>\d+):\s+(?P<name>[^\s:@]+)(?:@(?P<lower>[^\s:]+))?:\s+<(?P<flags>[^>]*)>(?P<rest>.*)$")
_LINKTYPE = lazy(r"^\s+link/(?P<type>[\w-]+)(?P<rest>.*)$")
_ADDR = lazy(r"^\s+inet6?\s+(?P<cidr>[0-9A-Fa-f:.]+/\d+)")
_WORD = lazy(r"^\s+(?P<word>[a-z][a-z0-9_]*)(?=\s|$)")
_FENCE = lazy(r"^\s*(?:```|~~~)")
_TAG = lazy(r"</?(?:pre|code|samp|kbd|tt|p|div|span)(?:\s[^<>\n]{0,200})?>|<br\s*/?>", re.I)  # a web page's wrapping


def _tokens(text: str) -> List[str]:
    return text.split()


def _after(tokens: List[str], key: str) -> Optional[str]:
    try:
        i = tokens.index(key)
    except ValueError:
        return None
    return tokens[i + 1] if i + 1 < len(tokens) else None


def _int(value) -> Optional[int]:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _lines(text: str) -> List[str]:
    """The paste as ip printed it: e-mail quoting, CRs, fences, HTML escapes and `ip -o`'s
    backslash joins undone."""
    if "<" in text:
        text = _TAG.sub("", text)
    if "&" in text:
        import html
        text = html.unescape(text)
    out = []
    for raw in text.splitlines():
        line = clean_line(raw)
        if _FENCE.match(line):
            continue
        if "\\ " in line and _HEADER.match(line.split("\\", 1)[0]):
            out += [part if i == 0 else "    " + part.strip() for i, part in enumerate(line.split("\\"))]
        else:
            out.append(line)
    return out


def _kind_line(link: Link, tokens: List[str]) -> None:
    """The line `-d` prints after link/...: the kind and its details."""
    word = tokens[0]
    if word in SLAVE_KINDS:
        link.slave_kind = word[:-len("_slave")]
        return
    link.kind = word
    rest = tokens[1:]
    if word in ("vxlan", "geneve"):
        link.vni = _int(_after(rest, "id"))
        link.remote = _after(rest, "remote")
        link.local = _after(rest, "local")
        link.group = _after(rest, "group")
        link.underlay = _after(rest, "dev")
        link.port = _int(_after(rest, "dstport"))
    elif word in ("gre", "gretap", "ip6gre", "ip6gretap", "erspan", "ip6erspan", "ipip", "sit", "ip6tnl", "vti",
                  "vti6"):
        if word in ("ipip", "sit", "ip6tnl") and rest and rest[0] in ("any", "ipip", "ip6ip", "mplsip", "ip6ip6",
                                                                       "ipip6"):
            link.mode = rest[0]
        link.remote = _after(rest, "remote")
        link.local = _after(rest, "local")
        link.underlay = _after(rest, "dev")
        for key, option in (("key", "key"), ("ikey", "key"), ("okey", "key"), ("seq", "seq"), ("iseq", "seq"),
                            ("oseq", "seq"), ("csum", "csum"), ("icsum", "csum"), ("ocsum", "csum")):
            if key in rest and option not in link.options:
                link.options.append(option)
        encap = _after(rest, "encap")
        if encap in ("fou", "gue"):
            link.options.append(f"encap-{encap}")
        if _after(rest, "encaplimit") == "none":
            link.options.append("encaplimit-none")
    elif word == "vlan":
        link.vlan_protocol = _after(rest, "protocol")
        link.vlan_id = _int(_after(rest, "id"))
    elif word in ("macvlan", "macvtap", "ipvlan", "ipvtap", "bond"):
        link.mode = _after(rest, "mode")
    elif word == "tun":
        link.mode = _after(rest, "type")


def _header(m: "re.Match[str]", number: int) -> Link:
    rest = _tokens(m.group("rest"))
    link = Link(m.group("name"), _int(m.group("index")), flags=[f.strip() for f in m.group("flags").split(",") if f.strip()],
                mtu=_int(_after(rest, "mtu")), state=_after(rest, "state") or "", master=_after(rest, "master"),
                line=number)
    lower = m.group("lower")
    if lower and lower != "NONE":
        link.lower = lower
    return link


def _link_type(link: Link, m: "re.Match[str]") -> None:
    link.link_type = m.group("type")
    rest = _tokens(m.group("rest"))
    link.peer_netns = _after(rest, "link-netns") or _after(rest, "link-netnsid")
    if link.link_type in LINK_TYPE_KIND and not link.kind:
        link.kind = LINK_TYPE_KIND[link.link_type]


def parse_text(text: str) -> Tuple[List[Link], List[str]]:
    """Devices from text output; with warnings for lines that looked like a device but were not whole."""
    links: List[Link] = []
    warnings: List[str] = []
    current: Optional[Link] = None
    after_type = False
    for number, line in enumerate(_lines(text), 1):
        m = _HEADER.match(line)
        if m:
            current = _header(m, number)
            if current.mtu is None:
                warnings.append(f"line {number}: device {current.name} without an MTU")
            links.append(current)
            after_type = False
            continue
        if current is None:
            continue
        if not line.startswith(" "):
            current = None            # the device's block ended (another command, a prompt)
            continue
        t = _LINKTYPE.match(line)
        if t:
            _link_type(current, t)
            after_type = True
            continue
        a = _ADDR.match(line)
        if a:
            current.addresses.append(a.group("cidr"))
            continue
        w = _WORD.match(line)
        if w and after_type:
            word = w.group("word")
            tokens = _tokens(line)
            if word in KINDS or word in SLAVE_KINDS:
                if word not in SLAVE_KINDS and current.kind not in ("", "none") and \
                        LINK_TYPE_KIND.get(current.link_type) != current.kind:
                    continue          # a second kind word (e.g. in an alias line): keep the first
                _kind_line(current, tokens)
            elif word == "alias" or word == "altname":
                continue
    return links, warnings


def _from_json(item: dict, number: int) -> Link:
    info = item.get("linkinfo") or {}
    data = info.get("info_data") or {}
    link = Link(str(item.get("ifname")), _int(item.get("ifindex")), kind=info.get("info_kind") or "",
                link_type=item.get("link_type") or "", mtu=_int(item.get("mtu")),
                state=item.get("operstate") or "", flags=list(item.get("flags") or []), master=item.get("master"),
                line=number)
    slave = info.get("info_slave_kind")
    if slave:
        link.slave_kind = slave
    lower = item.get("link")
    if lower is not None:
        link.lower = str(lower)
    elif item.get("link_index") is not None:
        link.lower = f"if{item['link_index']}"
    netns = item.get("link_netns", item.get("link_netnsid"))
    link.peer_netns = None if netns is None else str(netns)
    if not link.kind and link.link_type in LINK_TYPE_KIND:
        link.kind = LINK_TYPE_KIND[link.link_type]
    if link.kind in ("vxlan", "geneve"):
        link.vni = _int(data.get("id"))
        link.remote = data.get("remote") or data.get("remote6")
        link.local = data.get("local") or data.get("local6")
        link.group = data.get("group") or data.get("group6")
        link.port = _int(data.get("port"))
        if data.get("link") is not None:
            link.underlay = str(data["link"])
    elif link.kind in ("gre", "gretap", "ip6gre", "ip6gretap", "erspan", "ip6erspan", "ipip", "sit", "ip6tnl",
                       "vti", "vti6"):
        link.remote = data.get("remote")
        link.local = data.get("local")
        if data.get("link") is not None:
            link.underlay = str(data["link"])
        for keys, option in ((("ikey", "okey", "key"), "key"), (("iseq", "oseq", "seq"), "seq"),
                             (("icsum", "ocsum", "csum"), "csum")):
            if any(k in data for k in keys) or any(k in (data.get("iflags") or []) + (data.get("oflags") or [])
                                                   for k in keys):
                link.options.append(option)
        encap = data.get("encap")
        if isinstance(encap, dict) and encap.get("type") in ("fou", "gue"):
            link.options.append(f"encap-{encap['type']}")
        if data.get("encap_limit") == "none":
            link.options.append("encaplimit-none")
        if data.get("proto"):
            link.mode = str(data["proto"])
    elif link.kind == "vlan":
        link.vlan_protocol = data.get("protocol")
        link.vlan_id = _int(data.get("id"))
    elif link.kind in ("macvlan", "macvtap", "ipvlan", "ipvtap", "bond"):
        link.mode = data.get("mode")
    elif link.kind == "tun":
        link.mode = data.get("type")
    for a in item.get("addr_info") or []:
        if a.get("local") and a.get("prefixlen") is not None:
            link.addresses.append(f"{a['local']}/{a['prefixlen']}")
    return link


_JSON_START = lazy(r"^\s*\[\s*\{?\s*(?:\"|$)", re.M)


def parse_json(text: str) -> List[Link]:
    """Devices from every JSON array of `ip -j` link objects in the text (pretty or one line)."""
    links: List[Link] = []
    decoder = json.JSONDecoder()
    at = 0
    while True:
        m = _JSON_START.search(text, at)
        if not m:
            break
        start = text.index("[", m.start())
        try:
            data, end = decoder.raw_decode(text, start)
        except ValueError:
            at = m.end()
            continue
        number = text.count("\n", 0, start) + 1
        if isinstance(data, list):
            links += [_from_json(item, number) for item in data if isinstance(item, dict) and "ifname" in item]
        at = end
    return links


def parse(text: str) -> List[Link]:
    """Every device in the text (JSON arrays and text blocks alike). A device printed twice
    (the same command pasted twice) is kept once, the later copy winning field by field
    where it says more. Raises ParseError when the text holds no device."""
    links = merge(parse_json(text) + parse_text(text)[0])
    if not links:
        raise ParseError("no `ip link` device in the text")
    return links


def merge(links: List[Link]) -> List[Link]:
    by_name: Dict[str, Link] = {}
    for link in links:
        old = by_name.get(link.name)
        if old is None:
            by_name[link.name] = link
            continue
        for key, value in asdict(link).items():
            if value not in (None, "", []) and key != "line":
                setattr(old, key, value)
    return list(by_name.values())


def read(lines: List[str]) -> Tuple[List[Link], List[str]]:
    """The form the host model's evidence readers take (parsers/evidence.py): a chunk's lines
    in, (devices, warnings) out; no device is an empty list, not an error."""
    text = "\n".join(lines)
    links, warnings = parse_text(text)
    return merge(parse_json(text) + links), warnings


def detect(text) -> float:
    """How much the text (or a list of lines) looks like `ip link` / `ip addr` output: 0 to 1."""
    head = ("\n".join(text) if isinstance(text, list) else text)[:65536]
    headers = sum(1 for _ in re.finditer(r"(?m)^\s*\d+:\s+[^\s:]+:\s+<[A-Z_, -]*>\s+mtu\s+\d+", head))
    if headers:
        types = len(re.findall(r"(?m)^\s+link/[\w-]+", head))
        return min(1.0, 0.6 + 0.2 * min(headers, types) / headers + (0.2 if " qdisc " in head else 0.0))
    if '"ifname"' in head and ('"mtu"' in head or '"linkinfo"' in head):
        return 0.9
    return 0.0
