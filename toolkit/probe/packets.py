"""The prober's packets, built with scapy's layers and read back by scapy.

Only the raw prober imports this module (runs without CAP_NET_RAW never load scapy),
so scapy is loaded when a probe is sent, never when the CLI starts.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional, Tuple

from scapy.layers.inet import ICMP, IP, TCP, UDP, IPerror
from scapy.layers.inet6 import (ICMPv6DestUnreach, ICMPv6EchoReply, ICMPv6EchoRequest, ICMPv6PacketTooBig,
                                ICMPv6TimeExceeded, IPerror6, IPv6)
from scapy.packet import Raw

from toolkit.probe.reply import ECHO_ID, TCP_SPORT_BASE, UDP_BASE, Reply, unreach_reason

HEADER = {"ipv4": 20, "ipv6": 40}                  # our IP headers carry no options
TRANSPORT = {"icmp": 8, "udp": 8, "tcp": 20}       # nor our TCP probes
QUOTE = {"ipv4": 576 - 28, "ipv6": 1280 - 48}      # what a router quotes of a packet in an ICMP error


def bare(address: str) -> str:
    """An address without its zone (fe80::1%eth0 -> fe80::1): the zone picks the interface,
    it is not part of the packet."""
    return address.split("%", 1)[0]


def ip(family: str, src: str, dst: str, ttl: int = 64, ident: int = 0, df: bool = True):
    if family == "ipv6":
        return IPv6(src=bare(src), dst=bare(dst), hlim=ttl)
    return IP(src=src, dst=dst, ttl=ttl, id=ident, flags="DF" if df else 0)


def probe(family: str, method: str, src: str, dst: str, size: int, key: int, ttl: int = 64,
          port: Optional[int] = None) -> bytes:
    """A DF probe of exactly `size` bytes of IP packet (IPv6: never fragmented by routers).

    A run sends thousands of probes that differ only in addresses, TTL, key and size, so
    each method's packet is stacked once (`_template`) and scapy builds every probe from
    it with those fields set, as scapy users send a series of probes. Building the stack
    anew costs three times as much, scapy's ICMP layer above all, so an IPv4 echo request
    (whose checksum, unlike the others', covers no address) is built once per key and
    size and carried by every target's IP header: the many targets of one path send the
    same keys and sizes round after round."""
    if method not in TRANSPORT:
        raise ValueError(method)
    pad = size - HEADER[family] - TRANSPORT[method]
    if pad < 0:
        raise ValueError(f"probe size {size} below the {method} header size")
    pkt = _TEMPLATES.get((family, method)) or _template(family, method)
    l4 = pkt.payload
    pkt.src, pkt.dst = bare(src), bare(dst)
    if family == "ipv6":
        pkt.hlim = ttl
    else:
        pkt.ttl, pkt.id = ttl, key
    if method == "icmp" and family == "ipv4":
        l4.load = _echo(key, pad)
    elif method == "icmp":
        l4.seq, l4.data = key, bytes(pad)
    elif method == "udp":
        l4.dport, l4.payload.load = UDP_BASE + key, bytes(pad)
    else:
        l4.sport, l4.dport, l4.payload.load = TCP_SPORT_BASE + key, port or 0, bytes(pad)
    return bytes(pkt)


@lru_cache(maxsize=4096)
def _echo(key: int, pad: int) -> bytes:
    return bytes(ICMP(id=ECHO_ID, seq=key) / Raw(bytes(pad)))


_TEMPLATES: dict = {}


def _template(family: str, method: str):
    head = IPv6() if family == "ipv6" else IP(flags="DF")
    if method == "icmp" and family == "ipv6":
        pkt = head / ICMPv6EchoRequest(id=ECHO_ID)
    elif method == "icmp":
        pkt = IP(flags="DF", proto="icmp") / Raw()       # carries _echo()
    elif method == "udp":
        pkt = head / UDP(sport=UDP_BASE - 1) / Raw()
    else:
        # an ACK to a port, with no connection behind it: open or closed, the target answers RST
        pkt = head / TCP(seq=1, ack=1, flags="A", window=0) / Raw()
    _TEMPLATES[(family, method)] = pkt
    return pkt


def syn(family: str, src: str, dst: str, key: int, port: int, mss: int, ttl: int) -> bytes:
    """The clamp locator's TTL-limited SYN, carrying our MSS option."""
    return bytes(ip(family, src, dst, ttl, key) / TCP(sport=TCP_SPORT_BASE + key, dport=port, seq=key * 7919,
                                                       flags="S", window=65535, options=[("MSS", mss)]))


def segment(family: str, src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: str,
            window: int = 65535, mss: Optional[int] = None, payload: bytes = b"") -> bytes:
    """One segment of the PMTUD check's raw connection."""
    tcp = TCP(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags, window=window,
              options=[("MSS", mss)] if mss else [])
    return bytes(ip(family, src, dst) / tcp / Raw(payload))


def too_big(family: str, src: str, dst: str, mtu: int, quoted: bytes) -> bytes:
    """An ICMP 'fragmentation needed' (IPv4, type 3 code 4) or ICMPv6 'packet too big'
    from src to dst with next-hop MTU `mtu`, quoting the start of a packet dst sent (as
    much as a router would)."""
    if family == "ipv6":
        return bytes(ip(family, src, dst) / ICMPv6PacketTooBig(mtu=mtu) / Raw(quoted[:QUOTE[family]]))
    return bytes(ip(family, src, dst, df=False) / ICMP(type=3, code=4, nexthopmtu=mtu) / Raw(quoted[:QUOTE[family]]))


def dissect(data: bytes, ethertype: int):
    """An IP packet (from its IP header on) as scapy reads it."""
    return IPv6(data) if ethertype == 0x86DD else IP(data)


def tcp_payload(pkt) -> int:
    """Bytes of TCP data the IP packet says it carries (link padding is not data)."""
    tcp = pkt.payload
    ip_data = pkt.plen if isinstance(pkt, IPv6) else pkt.len - pkt.ihl * 4
    return ip_data - tcp.dataofs * 4


def _key(t) -> Optional[Tuple[str, int]]:
    """(method, key) of one of our probes from its transport header, as sent or as quoted."""
    if isinstance(t, (ICMP, ICMPv6EchoRequest)) and t.type in (8, 128):
        return ("icmp", t.seq) if t.id == ECHO_ID else None
    if isinstance(t, UDP):
        return ("udp", t.dport - UDP_BASE) if t.sport == UDP_BASE - 1 and t.dport >= UDP_BASE else None
    if isinstance(t, TCP):
        return ("tcp", t.sport - TCP_SPORT_BASE) if t.sport >= TCP_SPORT_BASE else None
    return None


def _quoted(inner):
    """The transport header of the packet an ICMP error quotes. A quote that ends inside a
    field (a router quoting 12 bytes of TCP) leaves scapy only raw bytes: the first 8, which
    every router quotes (RFC 792), still name the probe."""
    t = inner.payload
    if isinstance(t, Raw) and len(t.load) > 8:
        t = inner.guess_payload_class(t.load)(t.load[:8])
    return t


def classify(pkt) -> Optional[Reply]:
    """An incoming packet (scapy's IP or IPv6) as a Reply about one of our probes, or None."""
    l4 = pkt.payload
    if isinstance(pkt, IPv6):
        family, ttl = "ipv6", pkt.hlim
        echo = isinstance(l4, ICMPv6EchoReply)
        error = isinstance(l4, (ICMPv6DestUnreach, ICMPv6PacketTooBig, ICMPv6TimeExceeded))
        expired, too_big = isinstance(l4, ICMPv6TimeExceeded), isinstance(l4, ICMPv6PacketTooBig)
    else:
        family, ttl = "ipv4", pkt.ttl
        icmp = type(l4) is ICMP
        echo = icmp and l4.type == 0
        error = icmp and l4.type in (3, 11)
        expired, too_big = error and l4.type == 11, error and l4.type == 3 and l4.code == 4
    if echo:
        return Reply(pkt.src, "icmp", l4.seq, "pass", pkt.src, ttl=ttl) if l4.id == ECHO_ID else None
    if error and isinstance(l4.payload, (IPerror, IPerror6)):
        inner = l4.payload
        t = _quoted(inner)
        k = _key(t)
        if not k:
            return None
        total = inner.plen + 40 if family == "ipv6" else inner.len
        if expired:
            return Reply(inner.dst, *k, "ttl", pkt.src, quoted_len=total, quoted=t if isinstance(t, TCP) else None,
                         quote=len(inner.payload.original))
        if too_big:
            mtu = l4.mtu if family == "ipv6" else l4.nexthopmtu
            return Reply(inner.dst, *k, "toobig", pkt.src, mtu=mtu, quoted_len=total)
        if pkt.src == inner.dst:
            # the target itself refused it (port unreachable, a REJECT rule): it got there
            return Reply(inner.dst, *k, "pass", pkt.src, ttl=ttl)
        return Reply(inner.dst, *k, "unreach", pkt.src, reason=unreach_reason(family, l4.code))
    if type(l4) is TCP and l4.dport >= TCP_SPORT_BASE and (l4.flags.R or l4.flags.S and l4.flags.A):
        # a RST answering a TCP probe, or the SYN-ACK a SYN probe drew: either way it got there
        return Reply(pkt.src, "tcp", l4.dport - TCP_SPORT_BASE, "pass", pkt.src, ttl=ttl)
    return None
