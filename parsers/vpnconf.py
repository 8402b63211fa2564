"""VPN tunnel configurations people paste: WireGuard (`wg0.conf`, `wg showconf`, `wg show`)
and OpenVPN (`.conf` / `.ovpn`, server or client).

Each configuration becomes one TunnelConfig: the device it makes, the MTU it sets, its
peer's endpoint (the outer family follows from it), and for OpenVPN the transport
(`proto`), `tun-mtu`, `mssfix` (with 2.6's `mtu` flag) and `fragment`. Keys are matched
case-insensitively, comments (`#`, `;`) and inline files (`<ca>...</ca>`) skipped, and
secrets never kept. `encap` names the row of toolkit/calc.py's overhead table that the
tunnel's outer packets cost (None when the outer family is not known).
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import asdict, dataclass
from typing import List, Optional

from .evidence import records
from .model import ParseError
from .text import clean as clean_line
from .lazyre import lazy

META = {
    "name": "vpnconf",
    "title": "WireGuard and OpenVPN configurations",
    "formats": ("wg0.conf / wg-quick", "wg showconf", "wg show", "OpenVPN .conf / .ovpn"),
    "gives": "tunnel device, MTU, peer endpoint (outer family), OpenVPN proto, tun-mtu, mssfix, fragment",
}


@dataclass
class TunnelConfig:
    format: str                          # wireguard | openvpn
    device: Optional[str] = None         # wg0 (from `interface:` or a [Interface] file's name), tun0, tap0 ...
    mtu: Optional[int] = None            # WireGuard MTU = / OpenVPN tun-mtu
    endpoint: Optional[str] = None       # as written: host:port, [v6]:port, host
    endpoint_address: Optional[str] = None   # the endpoint when it is an address
    proto: Optional[str] = None          # udp | tcp (OpenVPN; WireGuard is always udp)
    mode: Optional[str] = None           # OpenVPN tun | tap
    mssfix: Optional[int] = None
    mssfix_mtu: bool = False             # OpenVPN 2.6 `mssfix N mtu`: N includes the IP and UDP headers
    fragment: Optional[int] = None
    cipher: Optional[str] = None
    encap: Optional[str] = None          # calc.ENCAPS row for the outer packets
    line: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


_SECTION = lazy(r"^\s*\[(Interface|Peer)\]\s*$", re.I)
_KV = lazy(r"^\s*([A-Za-z][\w-]*)\s*=\s*(.*?)\s*$")
_WG_SHOW = lazy(r"^\s*(interface|endpoint|listening port):\s*(.*?)\s*$")
_OVPN_KEYS = ("remote", "proto", "dev", "tun-mtu", "mssfix", "fragment", "cipher", "data-ciphers", "client",
              "server", "link-mtu", "dev-type", "tls-client", "tls-server", "persist-tun", "auth-user-pass", "ca",
              "comp-lzo", "compress", "keepalive", "nobind", "remote-cert-tls", "verb", "port")


def _address(host: Optional[str]) -> Optional[str]:
    if not host:
        return None
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def _host_of(endpoint: str) -> str:
    if endpoint.startswith("["):
        return endpoint[1:endpoint.find("]")] if "]" in endpoint else endpoint
    if endpoint.count(":") == 1:
        return endpoint.split(":")[0]
    return endpoint


def _wireguard(lines: List[str]) -> List[TunnelConfig]:
    out: List[TunnelConfig] = []
    current: Optional[TunnelConfig] = None
    section = None
    for number, line in lines:
        m = _SECTION.match(line)
        if m:
            section = m.group(1).lower()
            if section == "interface":
                current = TunnelConfig("wireguard", line=number)
                out.append(current)
            continue
        m = _WG_SHOW.match(line)
        if m:
            key, value = m.group(1), m.group(2)
            if key == "interface":
                current = TunnelConfig("wireguard", device=value, line=number)
                out.append(current)
            elif key == "endpoint" and current is not None and current.endpoint is None:
                _endpoint(current, value)
            continue
        m = _KV.match(line)
        if m and section and current is not None:
            key, value = m.group(1).lower(), m.group(2).split("#")[0].strip()
            if section == "interface" and key == "mtu" and value.isdigit():
                current.mtu = int(value)
            elif section == "peer" and key == "endpoint" and current.endpoint is None:
                _endpoint(current, value)
    return out


def _endpoint(config: TunnelConfig, value: str) -> None:
    if not value:
        return
    config.endpoint = value
    config.endpoint_address = _address(_host_of(value))
    fam = _family(config.endpoint_address)
    if config.format == "wireguard":
        config.proto = "udp"
        config.encap = None if fam is None else "wireguard6" if fam == 6 else "wireguard"


def _family(address: Optional[str]) -> Optional[int]:
    return None if address is None else ipaddress.ip_address(address).version


def _openvpn(lines: List[str]) -> Optional[TunnelConfig]:
    c = TunnelConfig("openvpn")
    seen = 0
    inline = None
    six = False
    for number, line in lines:
        stripped = line.strip()
        if inline:
            if stripped.lower() == f"</{inline}>":
                inline = None
            continue
        m = re.match(r"^<([\w-]+)>$", stripped)
        if m:
            inline = m.group(1).lower()
            continue
        if not stripped or stripped[0] in "#;":
            continue
        words = stripped.split("#")[0].split(";")[0].split()
        if not words:
            continue
        key = words[0].lower().lstrip("-")
        args = words[1:]
        if key not in _OVPN_KEYS:
            continue
        seen += 1
        if not c.line:
            c.line = number
        if key == "proto" and args:
            proto = args[0].lower()
            c.proto = "tcp" if proto.startswith("tcp") else "udp"
            six = six or proto.endswith("6")
        elif key == "remote" and args:
            if c.endpoint is None:
                c.endpoint = args[0] + (f":{args[1]}" if len(args) > 1 and args[1].isdigit() else "")
                c.endpoint_address = _address(args[0])
            if len(args) > 2 and args[2].lower().startswith(("tcp", "udp")) and c.proto is None:
                c.proto = "tcp" if args[2].lower().startswith("tcp") else "udp"
        elif key == "dev" and args:
            c.device = args[0]
            c.mode = "tap" if args[0].startswith("tap") else "tun" if args[0].startswith("tun") else c.mode
        elif key == "dev-type" and args:
            c.mode = args[0].lower()
        elif key == "tun-mtu" and args and args[0].isdigit():
            c.mtu = int(args[0])
        elif key == "mssfix":
            if args and args[0].isdigit():
                c.mssfix = int(args[0])
            c.mssfix_mtu = any(a.lower() == "mtu" for a in args[1:])
        elif key == "fragment" and args and args[0].isdigit():
            c.fragment = int(args[0])
        elif key in ("cipher", "data-ciphers") and args and c.cipher is None:
            c.cipher = args[0]
    if seen < 2 or (c.device is None and c.endpoint is None and c.mtu is None and c.mssfix is None):
        return None
    c.proto = c.proto or "udp"
    fam = _family(c.endpoint_address)
    six = six or fam == 6
    if fam is not None or six:
        c.encap = f"openvpn-{c.proto}{'6' if six else ''}"
    return c


def parse(text: str) -> List[TunnelConfig]:
    """Every WireGuard and OpenVPN configuration in the text; ParseError when there is none."""
    if "&" in text:
        import html
        text = html.unescape(text)
    lines = [(n, clean_line(raw)) for n, raw in enumerate(text.splitlines(), 1)]
    lines = [(n, line) for n, line in lines if not re.match(r"^\s*(?:```|~~~)", line)]
    out = [c for c in _wireguard(lines) if c.device or c.mtu or c.endpoint]
    ovpn = _openvpn(lines)
    if ovpn is not None:
        out.append(ovpn)
    if not out:
        raise ParseError("no WireGuard or OpenVPN configuration in the text")
    return out


read = records(parse)    # the evidence readers' form: (configurations, warnings), none an empty list


def detect(text) -> float:
    """How much the text (or a list of lines) looks like this reader's input: 0 to 1."""
    head = ("\n".join(text) if isinstance(text, list) else text)[:65536]
    if re.search(r"(?mi)^\s*\[Interface\]\s*$", head) and re.search(r"(?mi)^\s*\[Peer\]\s*$", head):
        return 0.9
    if re.search(r"(?m)^\s*interface:\s*\S+", head) and re.search(r"(?m)^\s*(?:peer|public key):", head):
        return 0.8
    keys = sum(1 for k in ("proto", "dev", "remote", "tun-mtu", "mssfix", "client", "cipher", "persist-tun",
                           "remote-cert-tls")
               if re.search(rf"(?m)^\s*{k}\b", head))
    return 0.0 if keys < 3 else min(0.9, 0.3 + 0.1 * keys)
