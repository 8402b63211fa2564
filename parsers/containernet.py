"""Container network configurations: the MTU Docker and CNI plugins give container ports.

Reads Docker's `daemon.json` (`"mtu"`: docker0 and the networks made without their own),
`docker network inspect` (`com.docker.network.driver.mtu`, the bridge device's name), and
CNI network configurations (`/etc/cni/net.d/*.conflist` and single-plugin `.conf`: each
plugin's `"mtu"`, the bridge plugin's `"bridge"`). JSON documents are found anywhere in
the text (a paste holds prompts and `cat` lines around them). A setting that is absent is
None: Docker then uses 1500, the CNI bridge plugin the kernel's default (1500).
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import List, Optional

from .evidence import records
from .model import ParseError

META = {
    "name": "containernet",
    "title": "Docker and CNI network configurations",
    "formats": ("/etc/docker/daemon.json", "docker network inspect", "/etc/cni/net.d/*.conflist", "CNI .conf"),
    "gives": "container networks: bridge device, driver or plugin, MTU (None when not set), subnet",
}

DAEMON_KEYS = ("mtu", "bip", "storage-driver", "log-driver", "registry-mirrors", "default-address-pools",
               "data-root", "dns", "exec-opts", "iptables", "live-restore", "insecure-registries", "features",
               "experimental", "ip-masq", "fixed-cidr", "log-opts", "userland-proxy", "ipv6")


@dataclass
class NetworkConfig:
    format: str                  # docker-daemon | docker-network | cni
    name: Optional[str] = None
    bridge: Optional[str] = None  # the bridge device its containers hang off
    driver: Optional[str] = None  # Docker driver / CNI plugin type
    mtu: Optional[int] = None
    subnet: Optional[str] = None
    line: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def _int(value) -> Optional[int]:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _docker_network(item: dict, line: int) -> NetworkConfig:
    options = item.get("Options") or {}
    name = item.get("Name")
    bridge = options.get("com.docker.network.bridge.name")
    if bridge is None and item.get("Driver") == "bridge":
        bridge = "docker0" if name == "bridge" else f"br-{str(item.get('Id', ''))[:12]}" if item.get("Id") else None
    subnet = next((c.get("Subnet") for c in ((item.get("IPAM") or {}).get("Config") or []) if c.get("Subnet")), None)
    return NetworkConfig("docker-network", name, bridge, item.get("Driver"),
                         _int(options.get("com.docker.network.driver.mtu")), subnet, line)


def _cni(doc: dict, line: int) -> List[NetworkConfig]:
    plugins = doc.get("plugins") if isinstance(doc.get("plugins"), list) else [doc]
    out = []
    for p in plugins:
        if not isinstance(p, dict) or p.get("type") in ("portmap", "bandwidth", "loopback", "tuning", "firewall"):
            continue
        ipam = p.get("ipam") or {}
        subnet = ipam.get("subnet") or next((r[0].get("subnet") for r in ipam.get("ranges") or []
                                              if isinstance(r, list) and r and isinstance(r[0], dict)), None)
        bridge = p.get("bridge") if p.get("type") == "bridge" else None
        if p.get("type") == "bridge" and bridge is None:
            bridge = "cni0"                          # the bridge plugin's default name
        out.append(NetworkConfig("cni", doc.get("name"), bridge, p.get("type"), _int(p.get("mtu")), subnet, line))
    return out


def _documents(text: str):
    """(JSON value, line) for each JSON object or array that starts a line."""
    decoder = json.JSONDecoder()
    for m in re.finditer(r"(?m)^[ \t]*([\[{])", text):
        start = m.start(1)
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        yield value, text.count("\n", 0, start) + 1


def parse(text: str) -> List[NetworkConfig]:
    out: List[NetworkConfig] = []
    covered = []
    for value, line in _documents(text):
        if any(a <= line <= b for a, b in covered):
            continue                                 # a document inside one already read
        span = (line, line + json.dumps(value, indent=1).count("\n"))
        if isinstance(value, list) and value and all(isinstance(i, dict) and "Driver" in i and "IPAM" in i
                                                       for i in value):
            out += [_docker_network(i, line) for i in value]
        elif isinstance(value, dict) and ("plugins" in value or ("type" in value and "cniVersion" in value)):
            out += _cni(value, line)
        elif isinstance(value, dict) and value and sum(k in DAEMON_KEYS for k in value) >= max(1, len(value) // 2):
            out.append(NetworkConfig("docker-daemon", "daemon.json", "docker0", "bridge", _int(value.get("mtu")),
                                     value.get("bip"), line))
        else:
            continue
        covered.append(span)
    if not out:
        raise ParseError("no Docker or CNI network configuration in the text")
    return out


read = records(parse)    # the evidence readers' form: (networks, warnings), none an empty list


def detect(text) -> float:
    """How much the text (or a list of lines) looks like this reader's input: 0 to 1."""
    head = ("\n".join(text) if isinstance(text, list) else text)[:65536]
    if '"IPAM"' in head and '"Driver"' in head:
        return 0.9
    if '"cniVersion"' in head:
        return 0.9
    if re.search(r'"(?:bip|storage-driver|registry-mirrors|default-address-pools|data-root|log-driver|mtu)"\s*:', head):
        return 0.5
    return 0.0
