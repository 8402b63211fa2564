"""Probe packets built with `struct`, and a small fast reader for what comes back.

Probes are keyed by a 16-bit number that travels in the first 8 bytes of the transport
header (ICMP echo sequence, UDP destination port, TCP source port), because that is all
an ICMP error is guaranteed to quote (RFC 792). Everything here is plain `struct` work:
no packet library is imported to send a probe or read a reply.
"""
from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Optional

ECHO_ID = 0x4d53          # "MS"
UDP_BASE = 33434          # traceroute's ports: usually closed, so the target answers port unreachable
TCP_SPORT_BASE = 61000     # above Linux's ephemeral range, so no real connection collides

V4_HEADER = 20
V6_HEADER = 40

# TCP flags
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


@lru_cache(maxsize=4096)
def _addr(family: str, address: str) -> bytes:
    return socket.inet_pton(socket.AF_INET6 if family == "ipv6" else socket.AF_INET, address)


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of data, as a number to be packed in native byte
    order ("=H"): the one's-complement sum does not care which order the words are summed
    in, as long as the result is stored in the same order."""
    if len(data) % 2:
        data += b"\0"
    s = sum(memoryview(data).cast("H"))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _pseudo(family: str, src: bytes, dst: bytes, proto: int, length: int) -> bytes:
    if family == "ipv6":
        return src + dst + struct.pack("!IxxxB", length, proto)
    return src + dst + struct.pack("!xBH", proto, length)


def ip_header(family: str, src: str, dst: str, proto: int, payload: int, ttl: int, ident: int = 0,
              df: bool = True) -> bytes:
    """An IPv4 header (checksum filled in) or an IPv6 header for `payload` bytes after it."""
    if family == "ipv6":
        return struct.pack("!IHBB", 0x60000000, payload, proto, ttl) + _addr(family, src) + _addr(family, dst)
    head = bytearray(struct.pack("!BBHHHBBH", 0x45, 0, V4_HEADER + payload, ident & 0xFFFF,
                                 0x4000 if df else 0, ttl, proto, 0) + _addr(family, src) + _addr(family, dst))
    struct.pack_into("=H", head, 10, checksum(bytes(head)))
    return bytes(head)


def _with_checksum(family: str, src: str, dst: str, proto: int, l4: bytearray, at: int, length: int) -> bytes:
    """l4 (the transport header and whatever non-zero data follows it; zero padding adds
    nothing to the sum) with its checksum at offset `at`, over the pseudo header."""
    pseudo = _pseudo(family, _addr(family, src), _addr(family, dst), proto, length)
    struct.pack_into("=H", l4, at, checksum(pseudo + bytes(l4)))
    return bytes(l4)


def tcp_segment(family: str, src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int,
                window: int = 65535, options: bytes = b"", payload: bytes = b"", ttl: int = 64,
                ident: int = 0, pad: int = 0, df: bool = True) -> bytes:
    """A whole IP packet carrying one TCP segment; `pad` zero bytes of payload follow `payload`."""
    if len(options) % 4:
        options += b"\0" * (4 - len(options) % 4)
    doff = (20 + len(options)) // 4
    head = bytearray(struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, doff << 4,
                                 flags, window, 0, 0) + options + payload)
    length = len(head) + pad
    l4 = _with_checksum(family, src, dst, 6, head, 16, length)
    return ip_header(family, src, dst, 6, length, ttl, ident, df) + l4 + b"\0" * pad


def mss_option(mss: int) -> bytes:
    return struct.pack("!BBH", 2, 4, mss)


def build(family: str, method: str, src: str, dst: str, size: int, key: int, ttl: int = 64,
          port: Optional[int] = None) -> bytes:
    """A DF probe of exactly `size` bytes of IP packet (IPv6: never fragmented by routers)."""
    head = V6_HEADER if family == "ipv6" else V4_HEADER
    if method == "tcp":
        # an ACK to a listening port: the target answers with a RST, and no connection is touched
        if size - head < 20:
            raise ValueError(f"probe size {size} below the {method} header size")
        return tcp_segment(family, src, dst, TCP_SPORT_BASE + key, port or 0, 1, 1, ACK, 0, ttl=ttl, ident=key,
                           pad=size - head - 20)
    pad = size - head - 8
    if pad < 0 or method not in ("icmp", "udp"):
        if method not in ("icmp", "udp"):
            raise ValueError(method)
        raise ValueError(f"probe size {size} below the {method} header size")
    if method == "icmp":
        if family == "ipv6":
            l4 = _with_checksum(family, src, dst, 58, bytearray(struct.pack("!BBHHH", 128, 0, 0, ECHO_ID, key)),
                                2, size - head)
            proto = 58
        else:
            l4 = bytearray(struct.pack("!BBHHH", 8, 0, 0, ECHO_ID, key))
            struct.pack_into("=H", l4, 2, checksum(bytes(l4)))
            l4, proto = bytes(l4), 1
    else:
        udp = bytearray(struct.pack("!HHHH", UDP_BASE - 1, UDP_BASE + key, size - head, 0))
        l4 = _with_checksum(family, src, dst, 17, udp, 6, size - head)
        if l4[6:8] == b"\0\0":         # 0 means "no checksum": a computed 0 is sent as all ones
            l4 = l4[:6] + b"\xff\xff"
        proto = 17
    return ip_header(family, src, dst, proto, size - head, ttl, key) + l4 + b"\0" * pad


def too_big(family: str, src: str, dst: str, mtu: int, quoted: bytes, ttl: int = 64) -> bytes:
    """An ICMP 'fragmentation needed' (IPv4, type 3 code 4) or ICMPv6 'packet too big'
    from src to dst with next-hop MTU `mtu`, quoting `quoted` (the start of a packet dst
    sent: as much as a router would, 548 bytes for IPv4, 1232 for IPv6)."""
    if family == "ipv6":
        quoted = quoted[:1280 - V6_HEADER - 8]
        body = bytearray(struct.pack("!BBHI", 2, 0, 0, mtu) + quoted)
        l4 = _with_checksum(family, src, dst, 58, body, 2, len(body))
        return ip_header(family, src, dst, 58, len(l4), ttl) + l4
    quoted = quoted[:576 - V4_HEADER - 8]
    body = bytearray(struct.pack("!BBHHH", 3, 4, 0, 0, mtu) + quoted)
    struct.pack_into("=H", body, 2, checksum(bytes(body)))
    return ip_header(family, src, dst, 1, len(body), ttl, df=False) + bytes(body)


TCP_OPTION_NAMES = {2: "mss", 3: "window-scale", 4: "sack-permitted", 5: "sack", 8: "timestamps",
                    30: "mptcp", 34: "fast-open"}


def tcp_options(l4: bytes) -> Dict[str, Optional[int]]:
    """The options of a TCP header: name -> value (the MSS, the window shift) or None."""
    if len(l4) < 20:
        return {}
    end = min(len(l4), (l4[12] >> 4) * 4)
    out: Dict[str, Optional[int]] = {}
    p = 20
    while p < end:
        kind = l4[p]
        if kind == 0:
            break
        if kind == 1:
            p += 1
            continue
        if p + 1 >= end or l4[p + 1] < 2:
            break
        ln = l4[p + 1]
        name = TCP_OPTION_NAMES.get(kind, str(kind))
        if kind == 2 and ln == 4 and p + 4 <= end:
            out[name] = struct.unpack_from("!H", l4, p + 2)[0]
        elif kind == 3 and ln == 3 and p + 3 <= end:
            out[name] = l4[p + 2]
        else:
            out[name] = None
        p += ln
    return out


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
    df: bool = False     # IPv4: the don't-fragment flag (IPv6 is never fragmented on the way)
    at: Optional[float] = None    # kernel receive time, when captured
    raw: bytes = b""     # the whole packet as captured, from its IP header on


def parse_ip(data: bytes) -> Optional[Packet]:
    if not data:
        return None
    v = data[0] >> 4
    if v == 4 and len(data) >= 20:
        ihl = (data[0] & 15) * 4
        total = struct.unpack("!H", data[2:4])[0]
        return Packet("ipv4", socket.inet_ntop(socket.AF_INET, data[12:16]),
                      socket.inet_ntop(socket.AF_INET, data[16:20]), data[9], data[8], total,
                      data[ihl:total] if total >= ihl else data[ihl:], bool(data[6] & 0x40), None, data)
    if v == 6 and len(data) >= 40:
        plen = struct.unpack("!H", data[4:6])[0]
        return Packet("ipv6", socket.inet_ntop(socket.AF_INET6, data[8:24]),
                      socket.inet_ntop(socket.AF_INET6, data[24:40]), data[6], data[7], plen + 40,
                      data[40:40 + plen] if plen else data[40:], True, None, data)
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
    at: Optional[float] = None         # kernel receive time (time.time() clock), when known
    quoted: Optional[bytes] = None     # "ttl" for a TCP probe: the TCP header as the router got it;
                                       # a SYN-ACK to a SYN probe: its own TCP header


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
                return Reply(inner.dst, *k, "ttl", pkt.src, quoted_len=inner.total,
                             quoted=inner.l4 if inner.proto == 6 else None)
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
                return Reply(inner.dst, *k, "ttl", pkt.src, quoted_len=inner.total,
                             quoted=inner.l4 if inner.proto == 6 else None)
            if pkt.src == inner.dst:
                return Reply(inner.dst, *k, "pass", pkt.src, ttl=pkt.ttl)
            return Reply(inner.dst, *k, "unreach", pkt.src, reason=unreach_reason("ipv6", code))
        return None
    if pkt.proto == 6 and len(l4) >= 20:
        flags = l4[13]
        dport = struct.unpack("!H", l4[2:4])[0]
        if dport >= TCP_SPORT_BASE:
            if flags & RST:          # RST answering a TCP probe
                return Reply(pkt.src, "tcp", dport - TCP_SPORT_BASE, "pass", pkt.src, ttl=pkt.ttl)
            if flags & (SYN | ACK) == SYN | ACK:     # SYN-ACK: a SYN probe reached the target
                return Reply(pkt.src, "tcp", dport - TCP_SPORT_BASE, "pass", pkt.src, ttl=pkt.ttl,
                             quoted=l4[:(l4[12] >> 4) * 4])
    return None
