"""What a host knows besides its counters: its socket table, the path MTUs it learned, and
its devices, tunnels, container networks and clamping rules (toolkit/stack.py's inputs).

Each kind is a reader of its own (no Snapshot: these are not counters), found in the same
texts as the dumps (files, directories, pastes with prompts) and tied to a host the same way
(toolkit/hosts.py: prompt, case directory, host file, file name):

| kind | reader | formats |
| --- | --- | --- |
| `sockets` | parsers/sockets.py | `ss -tin`, `ss -ti`, `ss -tinH`, `ss -tinp`, `ss -tino` (Linux) |
| `routes` | parsers/iproute.py | `ip route`, `ip -6 route`, `ip route show cache`, `ip route get`, `ip -j route` (Linux) |
| `routes` | parsers/routecache.py | `netsh interface ipv4\\|ipv6 show destinationcache` (Windows), `netstat -rn` / `-rnv` (HP-UX) |
| `links` | parsers/iplink.py | `ip -d link show`, `ip -d -j link show`, `ip link`, `ip addr`, `ip -o link` (Linux) |
| `tunnels` | parsers/vpnconf.py | WireGuard `wg0.conf`, `wg showconf`, `wg show`; OpenVPN `.conf` / `.ovpn` |
| `networks` | parsers/containernet.py | Docker `daemon.json`, `docker network inspect`; CNI `.conflist` / `.conf` |
| `clamps` | parsers/mssclamp.py | `iptables-save`, `ip6tables-save`, `iptables -S` / `-L -n -v`, iptables commands, `nft list ruleset` |

`scan(lines, command)` gives what one chunk of text holds (the splitter's chunk: a command
line starts one, so `$ ss -tin` and `$ ip route show cache` pasted at one prompt are two);
parsers.iter_parse hands each to its `evidence` callback. A new kind is a reader with
`detect(lines)` and `read(lines)` (items, warnings), wrapped here and added to READERS.
Each reader's module is imported the first time a text may hold its kind (`present`), so
reading dumps alone never loads them.
"""
from __future__ import annotations

import importlib
import re
from typing import Callable, List, Optional, Tuple

from dataclasses import dataclass, field

from .model import ParseError
from .lazyre import lazy


SCHEMA = "mssdiag.evidence/1"


@dataclass
class Evidence:
    """One table of one kind, as one text printed it."""
    kind: str                       # sockets | routes
    format: str                     # the command that printed it, as far as known
    os: str                         # linux | windows | hpux
    items: list                     # parsers.sockets.Socket / parsers.iproute.Route
    source: str = "-"
    index: int = 0                  # 0-based among the evidence of its source
    line: int = 0                   # first line in its source
    taken_at: Optional[str] = None
    host: Optional[str] = None      # the host it belongs to (toolkit/hosts.py decides)
    prompt_host: Optional[str] = None
    command: Optional[str] = None
    warnings: List[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"evidence": self.kind, "source": self.source, "index": self.index, "line": self.line,
                "os": self.os, "format": self.format, "taken_at": self.taken_at, "host": self.host,
                "prompt_host": self.prompt_host, "command": self.command,
                "items": [item.to_dict() for item in self.items], "warnings": self.warnings, "schema": SCHEMA}


_SS = lazy(r"(?:^|[\s$#%>\]])(?P<cmd>ss(?:[ \t]+-{1,2}[\w-]+)+)")
_IP = lazy(r"(?:^|[\s$#%>\]])(?P<cmd>ip(?:[ \t]+-\S+)*[ \t]+r(?:o(?:u(?:te?)?)?)?\b[^|>;]*)")
_NETSH = lazy(r"(?P<cmd>netsh\s+(?:int\w*\s+)?ip(?:v(?P<v>[46]))?\s+sh\w*\s+dest\w*)", re.I)
_HPUX = lazy(r"(?:^|[\s$#%>\]])(?P<cmd>netstat(?:[ \t]+-\w+)+)")


def _command(rx: "re.Pattern[str]", command: Optional[str]) -> Optional[str]:
    m = rx.search(command or "")
    return " ".join(m["cmd"].split()) if m else None


def _sockets(lines: List[str], command: Optional[str]) -> Optional[Tuple[str, str, list, List[str]]]:
    from . import sockets
    if not sockets.detect(lines):
        return None
    items, warnings = sockets.read(lines)
    return _command(_SS, command) or "ss -ti", "linux", items, warnings


def _iproute(lines: List[str], command: Optional[str]) -> Optional[Tuple[str, str, list, List[str]]]:
    from . import iproute
    named = _command(_IP, command)
    text = "\n".join(lines)
    as_json = '"dst"' in text and any(line.lstrip().startswith("[") for line in lines)
    if not as_json and not iproute.detect(lines):
        return None
    if as_json:
        items, warnings = iproute.read(lines[next(i for i, line in enumerate(lines) if line.lstrip().startswith("[")):])
    else:
        items, warnings = iproute.read(lines)
    if named and re.search(r"\bcache\b|\bget\b", named):
        for route in items:
            route.cache = True          # what `show cache` and `get` print is what the host learned
    return named or ("ip -j route" if as_json else "ip route"), "linux", items, warnings


def _destinationcache(lines: List[str], command: Optional[str]):
    from . import routecache
    if not routecache.detect_destinationcache(lines):
        return None
    items, warnings = routecache.read_destinationcache(lines)
    return _command(_NETSH, command) or "netsh interface ip show destinationcache", "windows", items, warnings


def _hpux(lines: List[str], command: Optional[str]):
    from . import routecache
    if not routecache.detect_hpux(lines):
        return None
    items, warnings = routecache.read_hpux(lines)
    return _command(_HPUX, command) or "netstat -rn", "hpux", items, warnings


def records(parse: Callable[[str], list]) -> Callable[[List[str]], Tuple[list, List[str]]]:
    """`read(lines)` for a reader whose `parse(text)` raises ParseError when the text holds
    none of its records: the records in a chunk's lines and no warning, none an empty list."""
    def read(lines: List[str]) -> Tuple[list, List[str]]:
        try:
            return parse("\n".join(lines)), []
        except ParseError:
            return [], []
    return read


def _stack_reader(name: str, fmt: str, command_rx: "re.Pattern[str]"):
    """A reader of the stack's inputs (toolkit/stack.py): Linux, what its module
    (parsers/<name>.py) `read`s in the chunk."""
    def read(lines: List[str], command: Optional[str]):
        module = importlib.import_module(f".{name}", __package__)
        if module.detect(lines) < 0.5:
            return None
        items, warnings = module.read(lines)
        return _command(command_rx, command) or fmt, "linux", items, warnings
    return read


_LINK = lazy(r"(?:^|[\s$#%>\]])(?P<cmd>ip(?:[ \t]+-\S+)*[ \t]+(?:l(?:i(?:nk?)?)?|a(?:d(?:dr?)?)?|address)"
             r"(?:[ \t][^|>;]*)?)")
_VPN = lazy(r"(?:^|[\s$#%>\]])(?P<cmd>wg(?:[ \t]+\S+)*|cat[ \t]+\S*(?:\.conf|\.ovpn))")
_CONTAINER = lazy(r"(?:^|[\s$#%>\]])(?P<cmd>docker[ \t]+network[ \t]+inspect[^|>;]*"
                  r"|cat[ \t]+\S*(?:daemon\.json|\.conflist))")
_CLAMP = lazy(r"(?:^|[\s$#%>\]])(?P<cmd>ip6?tables(?:-save|-legacy-save|-nft-save)?(?:[ \t][^|>;]*)?"
              r"|nft[ \t]+list[ \t]+ruleset)")

Reader = Callable[[List[str], Optional[str]], Optional[Tuple[str, str, list, List[str]]]]
READERS: List[Tuple[str, Reader]] = [
    ("sockets", _sockets),
    ("routes", _iproute),
    ("routes", _destinationcache),
    ("routes", _hpux),
    ("links", _stack_reader("iplink", "ip link", _LINK)),
    ("tunnels", _stack_reader("vpnconf", "VPN configuration", _VPN)),
    ("networks", _stack_reader("containernet", "container network configuration", _CONTAINER)),
    ("clamps", _stack_reader("mssclamp", "firewall rules", _CLAMP)),
]
# Words one of the readers needs: a text without any of them holds no evidence (the dumps'
# chunks are checked with one pass of `in`).
_MARKS = ("rtt:", "Recv-Q", "mss:", " dev ", "PMTU", "Pmtu", '"dst"', "cache", " mtu ", '"mtu"', '"ifname"',
          "[Interface]", "interface:", "tun-mtu", "mssfix", '"IPAM"', "cniVersion", "TCPMSS", "maxseg", "MTU", "mtu =",
          "COMMIT", " hook ")


def empty(command: str, line: int) -> Optional[Evidence]:
    """What a route-cache, socket-table or firewall command that printed nothing says: no
    learned MTU (an empty `ip route show cache`: no "fragmentation needed" reached this host
    lately), no socket, no firewall rule (so no MSS clamp); None for any other command."""
    for kind, rx, os_name in (("routes", _IP, "linux"), ("routes", _NETSH, "windows"), ("sockets", _SS, "linux"),
                              ("clamps", _CLAMP, "linux")):
        named = _command(rx, command)
        if named and (kind in ("sockets", "clamps") or rx is _NETSH or re.search(r"\bcache\b", named)):
            return Evidence(kind=kind, format=named, os=os_name, items=[], line=line, command=command)
    return None


def present(text: str) -> bool:
    """Whether `text` may hold evidence (a cheap test before scan)."""
    return any(mark in text for mark in _MARKS)


def scan(lines: List[str], command: Optional[str] = None, start: int = 1, text: Optional[str] = None) -> List[Evidence]:
    """Every table of every kind in one chunk's lines (`start`: the line number of the first)."""
    if not present("\n".join(lines) if text is None else text):
        return []
    out: List[Evidence] = []
    for kind, reader in READERS:
        got = reader(lines, command)
        if got is None:
            continue
        fmt, os_name, items, warnings = got
        if items or kind == "clamps":          # a ruleset without a clamp says there is none
            out.append(Evidence(kind=kind, format=fmt, os=os_name, items=items, line=start, command=command,
                                warnings=warnings))
    return out


__all__ = ["Evidence", "READERS", "SCHEMA", "present", "scan"]
