"""Probe packets built with scapy, and a small fast reader for what comes back.

Probes are keyed by a 16-bit number that travels in the first 8 bytes of the transport
header (ICMP echo sequence, UDP destination port, TCP source port), because that is all
an ICMP error is guaranteed to quote (RFC 792).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

ECHO_ID = 0x4d53          # "MS"
UDP_BASE = 33434          # traceroute's ports: usually closed, so the target answers port unreachable
TCP_SPORT_BASE = 61000     # above Linux's ephemeral range, so no real connection collides

V4_HEADER = 20
V6_HEADER = 40


def _scapy():
    # imported here, never at CLI start-up
    from scapy.layers.inet import ICMP, IP, TCP, UDP  # noqa: F401
    return IP, ICMP, UDP, TCP


def _scapy6():
    from scapy.layers.inet import TCP, UDP
    from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
    return IPv6, ICMPv6EchoRequest, UDP, TCP


def build(family: str, method: str, src: str, dst: str, size: int, key: int, ttl: int = 64,
          port: Optional[int] = None) -> bytes:
    """A DF probe of exactly `size` bytes of IP packet (IPv6: never fragmented by routers)."""
    if family == "ipv4":
        IP, ICMP, UDP, TCP = _scapy()
        ip = IP(src=src, dst=dst, flags="DF", ttl=ttl, id=key)
        head = V4_HEADER
    else:
        IPv6, Echo6, UDP, TCP = _scapy6()
        ip = IPv6(src=src, dst=dst, hlim=ttl)
        head = V6_HEADER
    if method == "icmp":
        l4 = ICMP(type=8, id=ECHO_ID, seq=key) if family == "ipv4" else Echo6(id=ECHO_ID, seq=key)
        l4_len = 8
    elif method == "udp":
        l4 = UDP(sport=UDP_BASE - 1, dport=UDP_BASE + key)
        l4_len = 8
    elif method == "tcp":
        # an ACK to a listening port: the target answers with a RST, and no connection is touched
        l4 = TCP(sport=TCP_SPORT_BASE + key, dport=port, flags="A", seq=1, ack=1, window=0)
        l4_len = 20
    else:
        raise ValueError(method)
    pad = size - head - l4_len
    if pad < 0:
        raise ValueError(f"probe size {size} below the {method} header size")
    return bytes(ip / l4 / (b"\x00" * pad))


def key_of_transport(family: str, proto: int, l4: bytes) -> Optional[tuple]:
    """(method, key) of one of our probes from its (possibly quoted) transport header."""
    if len(l4) < 8:
        return None
    if (proto == 1 and l4[0] == 8) or (proto == 58 and l4[0] == 128):
        ident, seq = struct.unpack("!HH", l4[4:8])
        return ("icmp", seq) if ident == ECHO_ID else None
    if proto == 17:
        sport, dport = struct.unpack("!HH", l4[:4])
        return ("udp", dport - UDP_BASE) if sport == UDP_BASE - 1 and UDP_BASE <= dport < UDP_BASE + 65536 - UDP_BASE else None
    if proto == 6:
        sport = struct.unpack("!H", l4[:2])[0]
        return ("tcp", sport - TCP_SPORT_BASE) if sport >= TCP_SPORT_BASE else None
    return None


@dataclass
class Packet:
    """The parts of one captured IP packet the prober looks at."""
    family: str
    src: str
    dst: str
    proto: int
    ttl: int
    total: int           # IP total length
    l4: bytes            # transport header and data


def parse_ip(data: bytes) -> Optional[Packet]:
    import socket
    if not data:
        return None
    v = data[0] >> 4
    if v == 4 and len(data) >= 20:
        ihl = (data[0] & 15) * 4
        total = struct.unpack("!H", data[2:4])[0]
        return Packet("ipv4", socket.inet_ntop(socket.AF_INET, data[12:16]),
                      socket.inet_ntop(socket.AF_INET, data[16:20]), data[9], data[8], total,
                      data[ihl:total] if total >= ihl else data[ihl:])
    if v == 6 and len(data) >= 40:
        plen = struct.unpack("!H", data[4:6])[0]
        return Packet("ipv6", socket.inet_ntop(socket.AF_INET6, data[8:24]),
                      socket.inet_ntop(socket.AF_INET6, data[24:40]), data[6], data[7], plen + 40,
                      data[40:40 + plen] if plen else data[40:])
    return None


# ICMP "destination unreachable" codes, named as routers mean them (RFC 792, 1122, 1812;
# ICMPv6: RFC 4443). Code 4 (fragmentation needed) is a "too big", not an unreachable.
UNREACH_V4 = {0: "network unreachable", 1: "host unreachable", 2: "protocol unreachable",
              3: "port unreachable", 5: "source route failed", 6: "destination network unknown",
              7: "destination host unknown", 8: "source host isolated",
              9: "network administratively prohibited", 10: "host administratively prohibited",
              11: "network unreachable for TOS", 12: "host unreachable for TOS",
              13: "communication administratively prohibited", 14: "host precedence violation",
              15: "precedence cutoff in effect"}
UNREACH_V6 = {0: "no route to destination", 1: "communication administratively prohibited",
              2: "beyond scope of source address", 3: "address unreachable", 4: "port unreachable",
              5: "source address failed ingress/egress policy", 6: "reject route to destination"}


def unreach_reason(family: str, code: int) -> str:
    """'host unreachable (ICMP type 3 code 1)' and the like."""
    if family == "ipv6":
        return f"{UNREACH_V6.get(code, 'destination unreachable')} (ICMPv6 type 1 code {code})"
    return f"{UNREACH_V4.get(code, 'destination unreachable')} (ICMP type 3 code {code})"


@dataclass
class Reply:
    """What one received packet says about one of our probes."""
    target: str          # the address probed
    method: str
    key: int
    kind: str            # "pass" | "toobig" | "ttl" | "unreach"
    source: str          # who sent the reply
    mtu: Optional[int] = None
    quoted_len: Optional[int] = None   # total length of the quoted probe
    ttl: Optional[int] = None          # TTL / hop limit the reply arrived with
    reason: Optional[str] = None       # for "unreach": what the router said, named


def classify(pkt: Packet) -> Optional[Reply]:
    """Turn an incoming packet into a Reply about one of our probes, or None."""
    l4 = pkt.l4
    if pkt.proto == 1 and len(l4) >= 8:
        t, code = l4[0], l4[1]
        if t == 0:
            k = key_of_transport("ipv4", 1, bytes([8]) + l4[1:8])
            return Reply(pkt.src, *k, "pass", pkt.src, ttl=pkt.ttl) if k else None
        if t in (3, 11):
            inner = parse_ip(l4[8:])
            if inner is None or inner.family != "ipv4":
                return None
            k = key_of_transport("ipv4", inner.proto, inner.l4)
            if not k:
                return None
            if t == 11:
                return Reply(inner.dst, *k, "ttl", pkt.src, quoted_len=inner.total)
            if code == 4:
                return Reply(inner.dst, *k, "toobig", pkt.src, mtu=struct.unpack("!H", l4[6:8])[0],
                             quoted_len=inner.total)
            if pkt.src == inner.dst:
                # the target itself refused it (port unreachable, a REJECT rule): it got there
                return Reply(inner.dst, *k, "pass", pkt.src, ttl=pkt.ttl)
            return Reply(inner.dst, *k, "unreach", pkt.src, reason=unreach_reason("ipv4", code))
        return None
    if pkt.proto == 58 and len(l4) >= 8:
        t, code = l4[0], l4[1]
        if t == 129:
            k = key_of_transport("ipv6", 58, bytes([128]) + l4[1:8])
            return Reply(pkt.src, *k, "pass", pkt.src, ttl=pkt.ttl) if k else None
        if t in (1, 2, 3):
            inner = parse_ip(l4[8:])
            if inner is None or inner.family != "ipv6":
                return None
            k = key_of_transport("ipv6", inner.proto, inner.l4)
            if not k:
                return None
            if t == 2:
                return Reply(inner.dst, *k, "toobig", pkt.src, mtu=struct.unpack("!I", l4[4:8])[0],
                             quoted_len=inner.total)
            if t == 3:
                return Reply(inner.dst, *k, "ttl", pkt.src, quoted_len=inner.total)
            if pkt.src == inner.dst:
                return Reply(inner.dst, *k, "pass", pkt.src, ttl=pkt.ttl)
            return Reply(inner.dst, *k, "unreach", pkt.src, reason=unreach_reason("ipv6", code))
        return None
    if pkt.proto == 6 and len(l4) >= 20:
        flags = l4[13]
        if flags & 0x04:   # RST answering a TCP probe
            dport = struct.unpack("!H", l4[2:4])[0]
            if dport >= TCP_SPORT_BASE:
                return Reply(pkt.src, "tcp", dport - TCP_SPORT_BASE, "pass", pkt.src, ttl=pkt.ttl)
    return None
