"""Redaction of a bundle of command outputs: addresses, MACs, host names and free text become
tokens, the same value the same token in every file (docs/collect.md, "Redaction").

- IPv4 and IPv6 addresses go through one keyed prefix-preserving permutation per family (the
  Crypto-PAn construction: bit i of the result is bit i of the address, flipped or not by a
  keyed function of the bits before it). Two addresses that share their first n bits share
  exactly n bits after it, so a subnet stays one subnet with its prefix length, a route
  still covers the addresses it covered and a host still sits in its interface's subnet,
  without knowing which prefixes exist. `A/len` with no host bits set is a network and keeps
  no host bits.
- Some ranges keep what they are (KEPT_V4, KEPT_V6): loopback, multicast, the unspecified and
  reserved addresses are kept whole; link-local, private (RFC 1918, shared 100.64/10,
  unique-local fc00::/7) and solicited-node multicast keep their range prefix and redact the
  rest. The permutation never flips a bit above such a range, so nothing else is mapped into
  it and a public address stays public. `::ffff:a.b.c.d` carries the IPv4 address's token.
- MACs: the same construction over 48 bits, the group and local bits kept (a multicast MAC
  stays one); all-zeros and broadcast kept.
- Host names (the host's own, names in prompts, `ss` peers printed as names) and network
  namespace names: `host-xxxxxxxx` (a dotted name: its first label, then `dom-xxxxxxxx` for
  the rest, so `web1` and `web1.example.com` keep one first label), replaced wherever they
  stand as a word, never inside an interface name. Interface names are kept: findings name
  them.
- Free text that may say anything (interface aliases, firewall rule comments) becomes
  `text-xxxxxxxx` as a whole.

The key is random per run unless the caller keeps one (--map): then the same values get the
same tokens in every bundle made with it, so two collections of one host still pair.
"""
from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

MAP_SCHEMA = "mssdiag-redact-map/1"

# (range, how, what): "whole" keeps every address of the range as it is; "prefix" keeps the
# range's prefix and redacts the rest. The most specific range holding an address decides.
KEPT_V4 = (
    ("0.0.0.0/8", "whole", "unspecified / this network"),
    ("127.0.0.0/8", "whole", "loopback"),
    ("224.0.0.0/4", "whole", "multicast"),
    ("240.0.0.0/4", "whole", "reserved and limited broadcast"),
    ("169.254.0.0/16", "prefix", "link-local"),
    ("10.0.0.0/8", "prefix", "private (RFC 1918)"),
    ("172.16.0.0/12", "prefix", "private (RFC 1918)"),
    ("192.168.0.0/16", "prefix", "private (RFC 1918)"),
    ("100.64.0.0/10", "prefix", "shared address space (carrier-grade NAT)"),
)
KEPT_V6 = (
    ("::/128", "whole", "unspecified"),
    ("::1/128", "whole", "loopback"),
    ("ff00::/8", "whole", "multicast"),
    ("ff02::1:ff00:0/104", "prefix", "solicited-node multicast"),
    ("fe80::/10", "prefix", "link-local"),
    ("fe80::/64", "prefix", "link-local"),
    ("fc00::/8", "prefix", "unique local"),
    ("fd00::/8", "prefix", "unique local"),
    ("::ffff:0:0/96", "prefix", "IPv4-mapped (carries the IPv4 address's token)"),
)
# MACs kept whole (value/prefix length): they name a protocol, not a machine
KEPT_MACS = (
    ("00:00:00:00:00:00/48", "all zeros"),
    ("ff:ff:ff:ff:ff:ff/48", "broadcast"),
    ("01:80:c2:00:00:00/44", "IEEE 802.1 reserved group addresses (STP, LLDP, pause)"),
    ("01:00:5e:00:00:00/25", "IPv4 multicast (RFC 1112)"),
    ("33:33:00:00:00:00/16", "IPv6 multicast (RFC 2464)"),
)


def _mac_range(text: str) -> Tuple[int, int]:
    mac, length = text.split("/")
    return int(mac.replace(":", ""), 16), int(length)

# Words the collected outputs print as syntax: a host named like one of them is replaced
# only where the bundle names the host (host.toml, manifest), not wherever the word stands.
KEYWORDS = frozenset("""
    host link local global site nowhere universe default kernel boot static dhcp ra redirect
    unicast broadcast multicast anycast blackhole unreachable prohibit throw nat filter mangle
    raw security input output forward prerouting postrouting accept drop reject return lo dev
    via src proto scope metric table cache mtu expires ether none loopback brd alias state up
    down unknown master bridge vxlan veth dummy tun tap gre ipip sit ip ip6 inet inet6 tcp udp
    icmp ipv4 ipv6 ecn cubic reno bbr localhost counter chain type hook policy priority
    text dom netns
""".split())


class RedactError(ValueError):
    """A key or map file that cannot be used; the message names it and why."""


# --------------------------------------------------------------------------- the permutation


def _ranges(table, version: int):
    return [(ipaddress.ip_network(net), how, what) for net, how, what in table
            if ipaddress.ip_network(net).version == version]


class _Tree:
    """The keyed prefix-preserving permutation over `width`-bit values, with the bits above
    kept ranges never flipped (so each kept range maps onto itself)."""

    def __init__(self, key: bytes, tag: bytes, width: int, kept: Iterable[Tuple[int, int]],
                 fixed_depths: Iterable[int] = ()):
        self.key, self.tag, self.width = key, tag, width
        self.fixed: Set[Tuple[int, int]] = set()
        self.fixed_depths = frozenset(fixed_depths)
        for value, length in kept:
            for depth in range(length):
                self.fixed.add((depth, value >> (width - depth)))

    def _flip(self, depth: int, prefix: int) -> int:
        data = self.tag + depth.to_bytes(1, "big") + prefix.to_bytes(self.width // 8 + 1, "big")
        return hashlib.blake2b(data, key=self.key, digest_size=1).digest()[0] & 1

    def __call__(self, value: int) -> int:
        out = 0
        for depth in range(self.width):
            bit = (value >> (self.width - 1 - depth)) & 1
            prefix = value >> (self.width - depth)
            if depth not in self.fixed_depths and (depth, prefix) not in self.fixed:
                bit ^= self._flip(depth, prefix)
            out = (out << 1) | bit
        return out


# --------------------------------------------------------------------------- what is found in text

_HEX = "[0-9A-Fa-f]"
# One pass finds addresses and names together, addresses first: a name that looks like
# part of an address (a host called `cafe`, or `10`) is never replaced inside one.
_ADDRESSES = (
    # MACs: six groups of one or two hex digits (Solaris prints 0:3:ba:...), or twenty
    # (InfiniBand); six hyphenated pairs (Windows)
    rf"(?P<mac>(?<![0-9A-Fa-f:])(?:{_HEX}{{2}}:){{19}}{_HEX}{{2}}(?![0-9A-Fa-f:])"
    rf"|(?<![0-9A-Fa-f:])(?:{_HEX}{{1,2}}:){{5}}{_HEX}{{1,2}}(?![0-9A-Fa-f:])"
    rf"|(?<![0-9A-Fa-f-])(?:{_HEX}{{2}}-){{5}}{_HEX}{{2}}(?![0-9A-Fa-f-]))"
    # IPv6: a run of hex digits and colons holding two colons, maybe ending in a dotted quad
    rf"|(?:(?P<v6>(?<![\w:.])(?={_HEX}*:{_HEX}*:)(?:[0-9A-Fa-f:]*:\d{{1,3}}(?:\.\d{{1,3}}){{3}}|[0-9A-Fa-f:]+))"
    # IPv4: a dotted quad not inside a longer dotted number (a 5th part is a port: 10.0.0.1.22)
    r"|(?P<v4>(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d+\.\d)))"
    # either with a prefix length
    r"(?P<len>/\d{1,3}(?![\d.]))?")

_ALIAS_LINE = re.compile(r"^(?P<pre>[ \t]+alias )(?P<text>[^\n]*)$", re.M)          # ip link: "    alias TEXT"
_JSON_TEXT = re.compile(r'(?P<pre>"ifalias"\s*:\s*")(?P<text>(?:[^"\\]|\\.)*)(?=")')  # ip -j link
# iptables-save: --comment "TEXT" or --comment WORD; nft: comment "TEXT" (not iptables' `-m comment`)
_COMMENT = re.compile(r'(?P<pre>--comment |(?<!-m )(?<![\w-])comment (?="))(?P<text>"(?:[^"\\]|\\.)*"|[^\s"]\S*)')
_NETNS = re.compile(r"\blink-netns (?P<name>\S+)")
_IFNAME_TEXT = re.compile(r"^\d+: (?P<name>[^:@\s]+)(?:@[^:\s]+)?:", re.M)
_ALTNAME = re.compile(r"\baltname (?P<name>\S+)")
_IFNAME_JSON = re.compile(r'"(?:ifname|altnames?|master|link|dev)"\s*:\s*"(?P<name>[^"\\]+)"')
# ss: [Netid] State Recv-Q Send-Q Local:Port Peer:Port
_SS_ROW = re.compile(r"^(?:[a-z]+[ \t]+)?[A-Z][A-Z0-9-]*[ \t]+\d+[ \t]+\d+[ \t]+(?P<local>\S+:\S+)[ \t]+(?P<peer>\S+:\S+)", re.M)
_PORT = re.compile(r"^(?P<host>.*?)(?::(?:\d+|\*|[a-z][\w-]*))?$")
_PROMPT_TAIL = re.compile(r"[$#%>]\s*[A-Za-z./]")
# after user@host, a prompt's end: `[root@web1 ~]# `, `user@web1:~$ `, `user@mx1> ` (not `ip link`'s `veth0@if7: <`)
_AT_PROMPT = r"@{}[^\s<>$#%]*(?:\s[^\s<>$#%]*)?\]?[$#%>]"
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)*$")


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return False
    return True


def interface_names(texts: Iterable[str]) -> Set[str]:
    """Interface names as `ip link` prints them (text and JSON): kept, and never replaced
    inside."""
    names: Set[str] = set()
    for text in texts:
        for rx in (_IFNAME_TEXT, _ALTNAME, _IFNAME_JSON):
            names.update(m["name"] for m in rx.finditer(text))
    return names


def host_names(text: str) -> Set[str]:
    """Host names a text shows: those the parsers take from a dump (prompts, a metric's host
    label), prompts before any other command, and `ss` columns printed as names rather than
    addresses."""
    import parsers
    from parsers.paste import clean            # a paste's damage undone (Markdown escapes, HTML)
    from parsers.text import command_host      # the one reader of prompts' host names

    found = {s.prompt_host for s in parsers.iter_parse(text, skipped=[]) if s.prompt_host}
    for line in clean(text if text.endswith("\n") else text + "\n").splitlines():
        if "@" in line or _PROMPT_TAIL.search(line):
            name = command_host(line)
            if name and "@" + name in line and not re.search(_AT_PROMPT.format(re.escape(name)), line):
                continue
            if name:
                found.add(name)
    for m in _SS_ROW.finditer(text):
        for column in (m["local"], m["peer"]):
            host = _PORT.match(column)["host"].strip("[]").split("%")[0]
            if host and host != "*" and not host.isdigit():
                found.add(host)
    return {n.rstrip(".") for n in found if _NAME.match(n) and not _is_address(n)}


def netns_names(text: str) -> Set[str]:
    return {m["name"] for m in _NETNS.finditer(text)}


# --------------------------------------------------------------------------- the redactor


class Redactor:
    """Tokens for one bundle (or several, with one key): `learn` every text first (names found
    in one file are replaced in all), then `text` each one."""

    def __init__(self, key: Optional[bytes] = None):
        self.key = key if key is not None else os.urandom(32)
        if len(self.key) < 16:
            raise RedactError("a redaction key has at least 16 bytes")
        self.v4_ranges = _ranges(KEPT_V4, 4)
        self.v6_ranges = _ranges(KEPT_V6, 6)
        self.v4 = _Tree(self.key, b"4", 32, [(int(n.network_address), n.prefixlen) for n, _, _ in self.v4_ranges])
        self.v6 = _Tree(self.key, b"6", 128, [(int(n.network_address), n.prefixlen) for n, _, _ in self.v6_ranges])
        self.mac_ranges = [_mac_range(m) for m, _ in KEPT_MACS]
        self.mac = _Tree(self.key, b"m", 48, self.mac_ranges, fixed_depths=(6, 7))   # local and group bits kept
        self.names: Dict[str, str] = {}        # lower-cased name -> kind (host, netns)
        self.keep: Set[str] = set()            # interface names
        self.tokens: Dict[str, Dict[str, str]] = {"addresses": {}, "macs": {}, "names": {}, "texts": {}}
        self._taken: Dict[str, str] = {}       # token -> original: two values never share one
        self._compiled: Optional[re.Pattern] = None

    # ---- learning

    def add_name(self, name: str, kind: str = "host") -> None:
        name = name.strip().rstrip(".").lower()
        if not _NAME.match(name) or _is_address(name) or not re.search("[a-z]", name):
            return
        first, _, domain = name.partition(".")
        self.names.setdefault(first, kind)
        if domain:
            self.names.setdefault(domain, "dom")
        self._compiled = None

    def learn(self, texts: Iterable[str]) -> None:
        texts = list(texts)
        self.keep |= {n.lower() for n in interface_names(texts)}
        for text in texts:
            for name in host_names(text):
                self.add_name(name)
            for name in netns_names(text):
                self.add_name(name, "netns")
        self._compiled = None

    # ---- tokens

    def _unique(self, kind: str, original: str, token: str) -> str:
        other = self._taken.setdefault(token, original)
        if other != original:      # two values, one token: the key made a collision (1 in 2^32 per pair)
            raise RedactError(f"two values got one token ({token}); run again for a new key")
        self.tokens[kind][original] = token
        return token

    def _hash(self, kind: str, value: str) -> str:
        return hashlib.blake2b(f"{kind}:{value}".encode("utf-8", "surrogateescape"), key=self.key,
                               digest_size=4).hexdigest()

    def name(self, name: str, kind: Optional[str] = None) -> str:
        """The token of a host name; a dotted name's first label and its domain are tokens
        of their own, so `web1` and `web1.example.com` keep one first label."""
        lower = name.lower().rstrip(".")
        if lower in self.tokens["names"]:
            return self.tokens["names"][lower]
        kind = kind or self.names.get(lower, "host")
        first, dot, domain = lower.partition(".")
        if dot and kind != "dom":
            token = f"{self.name(first)}.{self.name(domain, 'dom')}"
        else:
            token = f"{kind}-{self._hash('name', lower)}"
        return self._unique("names", lower, token)

    def free_text(self, text: str) -> str:
        if text in self.tokens["texts"]:
            return self.tokens["texts"][text]
        return self._unique("texts", text, f"text-{self._hash('text', text)}")

    def address(self, text: str) -> Optional[str]:
        """The token of one address as printed, or None when `text` is no address."""
        try:
            addr = ipaddress.ip_address(text)
        except ValueError:
            return None
        if addr.version == 6 and addr.ipv4_mapped is not None:     # in the form it was printed in
            v4 = self.address(str(addr.ipv4_mapped))
            return f"::ffff:{v4}" if "." in text else str(ipaddress.ip_address(f"::ffff:{v4}"))
        key = str(addr)
        if key in self.tokens["addresses"]:
            return self.tokens["addresses"][key]
        ranges, tree = (self.v4_ranges, self.v4) if addr.version == 4 else (self.v6_ranges, self.v6)
        inside = [r for r in ranges if addr in r[0]]
        if inside and max(inside, key=lambda r: r[0].prefixlen)[1] == "whole":
            return key
        return self._unique("addresses", key, str(ipaddress.ip_address(tree(int(addr))) if addr.version == 4
                                                    else ipaddress.IPv6Address(tree(int(addr)))))

    def network(self, text: str, length: int) -> Optional[str]:
        """`A/len`: a network (no host bits set) keeps none; an address keeps its own token."""
        token = self.address(text)
        if token is None:
            return None
        addr, mapped = ipaddress.ip_address(text), ipaddress.ip_address(token)
        if length > addr.max_prefixlen or int(addr) & ((1 << (addr.max_prefixlen - length)) - 1):
            return token
        net = ipaddress.ip_network(f"{mapped}/{length}", strict=False).network_address
        if addr.version == 6 and net.ipv4_mapped is not None and "." in text:
            token = f"::ffff:{net.ipv4_mapped}"
        else:
            token = str(net)
        self._unique("addresses", f"{addr}/{length}", f"{token}/{length}")      # the map lists networks too
        return token

    def mac_address(self, text: str) -> str:
        """The token of a MAC (or InfiniBand address) in the form it was printed in."""
        sep = "-" if "-" in text else ":"
        groups = text.split(sep)
        key = ":".join(g.zfill(2) for g in groups).lower()
        if key in self.tokens["macs"]:
            token = self.tokens["macs"][key]
        else:
            value, width = int(key.replace(":", ""), 16), len(groups) * 8
            if width == 48 and any(value >> (48 - n) == v >> (48 - n) for v, n in self.mac_ranges):
                return text
            # InfiniBand's 20 octets: the same construction, keyed apart
            tree = self.mac if width == 48 else _Tree(self.key, b"ib", width, [])
            raw = tree(value).to_bytes(width // 8, "big").hex()
            token = self._unique("macs", key, ":".join(raw[i:i + 2] for i in range(0, len(raw), 2)))
        token = token.replace(":", sep)
        return token.upper() if text.isupper() else token

    # ---- text

    def _pattern(self) -> re.Pattern:
        """Addresses and MACs, then interface names (kept), then the names to replace."""
        if self._compiled is None:
            alt = lambda words: "|".join(map(re.escape, sorted(words, key=len, reverse=True))) or "(?!)"  # noqa: E731
            names = [n for n in self.names if n not in KEYWORDS and n not in self.keep]
            self._compiled = re.compile(_ADDRESSES + rf"|(?P<keep>(?<![\w-])(?i:{alt(self.keep)})(?![\w-]))"
                                     rf"|(?<![A-Za-z0-9])(?P<name>(?i:{alt(names)}))(?![A-Za-z0-9])")
        return self._compiled

    def _token(self, m: re.Match) -> str:
        if m["keep"]:
            return m["keep"]
        if m["name"]:
            return self.name(m["name"])
        if m["mac"]:
            return self.mac_address(m["mac"])
        length = m["len"] or ""
        if m["v4"]:
            parts = [int(p) for p in m["v4"].split(".")]
            raw, port = (".".join(map(str, parts)), "") if max(parts) <= 255 else (None, "")
        else:
            raw, port = self._v6_split(m["v6"])
        token = None if raw is None else self.network(raw, int(length[1:])) if length else self.address(raw)
        return m.group(0) if token is None else token + port + length

    def _v6_split(self, run: str) -> Tuple[Optional[str], str]:
        """(the address, the port after it) of a run of hex digits and colons, (None, "") when
        it is no address: old `ss` printed the port after an IPv6 address (`::ffff:10.0.0.1:22`)."""
        if _is_address(run):
            return run, ""
        head, sep, tail = run.rpartition(":")
        if sep and tail.isdigit() and _is_address(head):
            return head, sep + tail
        return None, ""

    def text(self, text: str) -> str:
        """One file's text with every address, MAC, name and free text replaced."""
        text = _ALIAS_LINE.sub(lambda m: m["pre"] + self.free_text(m["text"]), text)
        text = _JSON_TEXT.sub(lambda m: m["pre"] + self.free_text(m["text"]), text)
        text = _COMMENT.sub(lambda m: m["pre"] + self._comment(m["text"]), text)
        return self._pattern().sub(self._token, text)

    def _comment(self, text: str) -> str:
        quoted = text.startswith('"')
        token = self.free_text(text[1:-1] if quoted else text)
        return f'"{token}"' if quoted else token

    # ---- the mapping, for the engineer who keeps it

    def to_dict(self) -> dict:
        return {"schema": MAP_SCHEMA, "key": self.key.hex(), **self.tokens}


def load_map(path: str) -> Redactor:
    """A redactor with the key (and tokens) of a map file an earlier run wrote."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise RedactError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RedactError(f"{path}: not a redaction map (not JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("schema") != MAP_SCHEMA or not isinstance(data.get("key"), str):
        raise RedactError(f"{path}: not a redaction map (no {MAP_SCHEMA} schema and key)")
    try:
        key = bytes.fromhex(data["key"])
    except ValueError:
        raise RedactError(f"{path}: its key is not hex") from None
    redactor = Redactor(key)
    for kind in redactor.tokens:
        for original, token in (data.get(kind) or {}).items():
            if isinstance(original, str) and isinstance(token, str):
                redactor.tokens[kind][original] = token
                redactor._taken[token] = original
    return redactor


def redact(files: Dict[str, str], redactor: Redactor, names: Iterable[str] = ()) -> Dict[str, str]:
    """Every file of a bundle redacted with one redactor; `names`: host names known beyond
    what the texts show (the host's own)."""
    for name in names:
        redactor.add_name(name)
    redactor.learn(files.values())
    return {path: redactor.text(text) for path, text in files.items()}


def summary() -> dict:
    """What redaction does, for the manifest of a redacted bundle."""
    return {
        "addresses": "prefix-preserving keyed permutation: one subnet stays one subnet with its prefix length",
        "kept": [{"range": net, "how": how, "what": what} for net, how, what in KEPT_V4 + KEPT_V6],
        "macs": "keyed permutation, group and local bits kept",
        "kept_macs": [{"range": mac, "what": what} for mac, what in KEPT_MACS],
        "names": "host names, prompts' host names, ss peer names, network namespace names: host-/dom-/netns- tokens",
        "texts": "interface aliases and firewall rule comments: text- tokens",
        "interfaces": "interface names kept",
    }
