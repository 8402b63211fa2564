"""Pure numbers for MSS, MTU, overhead, transfers, buffers and throughput bounds.

No I/O and nothing heavy: the CLI (`mssdiag calc`), the rules and the reports all
call these. Every quantity is in bytes, bits per second or seconds; the parse_*
helpers turn what engineers type ("10G", "20ms", "1MB", "0.01%") into those units
and raise ValueError with the reason (the caller names the option).

Conventions (Stratus, "Tuning your MSS" unless stated):
- MSS = MTU - IP header - TCP header (20 + 20 on IPv4, 40 + 20 on IPv6). IP options
  reduce the MSS; TCP options do not change the advertised MSS (RFC 6691) but do
  reduce the payload of each segment, reported as `payload`.
- Per-segment overhead on Ethernet: 58 bytes = 20 TCP + 20 IP + 18 Ethernet header
  and trailer (14 + 4 FCS). Frame padding to the 64-byte minimum is ignored, as the
  seed does.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace

from typing import Dict, Iterator, List, Optional, Sequence, Tuple

ETHERNET = 18          # 14-byte header + 4-byte FCS
IPV4 = 20
IPV6 = 40
TCP = 20
SEGMENT_OVERHEAD = ETHERNET + IPV4 + TCP   # 58, Stratus, "Tuning your MSS"
MIB = 1024 * 1024

# ---------------------------------------------------------------- parsing units

_NUM = r"(\d+(?:\.\d+)?|\.\d+)"
_RATE_UNITS = {"": 1, "b": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_SIZE_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9,
               "kib": 1024, "mib": MIB, "gib": 1024 ** 3}
_TIME_UNITS = {"": 1e-3, "ms": 1e-3, "s": 1.0, "us": 1e-6, "µs": 1e-6}


def parse_rate(text: str) -> float:
    """'100M', '10G', '1.5Gbit/s', '10gbps', '64k' -> bits per second (decimal prefixes)."""
    m = re.fullmatch(_NUM + r"\s*([kmgt]?)\s*(?:bit/s|bits/s|bps|bit|b)?", str(text).strip().lower())
    if not m:
        raise ValueError("not a rate like 100M or 10G")
    value = float(m.group(1)) * _RATE_UNITS[m.group(2)]
    if value <= 0:
        raise ValueError("a rate must be above zero")
    return value


def parse_size(text: str) -> int:
    """'1MB' (10^6), '1MiB' (2^20), '64k', '1500' -> bytes."""
    m = re.fullmatch(_NUM + r"\s*([kmg]i?b?|b)?", str(text).strip().lower())
    if not m:
        raise ValueError("not a size like 1500, 64KiB or 1MB")
    unit = m.group(2) or ""
    if unit.endswith("i"):
        unit += "b"
    value = float(m.group(1)) * _SIZE_UNITS[unit]
    if value <= 0 or value != int(value):
        raise ValueError("a size must be a whole number of bytes above zero")
    return int(value)


def parse_time(text: str) -> float:
    """'20ms', '0.05s', '250us', bare numbers in milliseconds -> seconds."""
    m = re.fullmatch(_NUM + r"\s*(ms|s|us|µs)?", str(text).strip().lower())
    if not m:
        raise ValueError("not a time like 20ms or 0.05s")
    value = float(m.group(1)) * _TIME_UNITS[m.group(2) or ""]
    if value <= 0:
        raise ValueError("a time must be above zero")
    return value


def parse_loss(text: str) -> float:
    """'0.0001', '0.01%', '1e-4' -> probability in (0, 1)."""
    s = str(text).strip()
    pct = s.endswith("%")
    try:
        value = float(s[:-1] if pct else s)
    except ValueError:
        raise ValueError("not a loss rate like 0.0001 or 0.01%") from None
    if pct:
        value /= 100.0
    if not (0.0 < value < 1.0) or math.isnan(value):
        raise ValueError("a loss rate must be between 0 and 1 (or 0% and 100%), exclusive")
    return value


def human_rate(bps: float) -> str:
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:.3g} {unit}"
    return f"{bps:.3g} bit/s"


# ---------------------------------------------------------------- MSS from MTU

@dataclass(frozen=True)
class Esp:
    """An ESP transform's sizes (RFC 4303): the IV, the block the payload and its 2-byte
    trailer are padded to (the cipher's block, at least 4), and the ICV."""
    cipher: str
    title: str
    iv: int
    align: int
    icv: int
    source: str


ESP_HEADER, ESP_TRAILER = 8, 2      # SPI + sequence number; pad length + next header (RFC 4303)
ESP_CIPHERS: Dict[str, Esp] = {e.cipher: e for e in (
    Esp("aes-gcm", "AES-GCM", 8, 4, 16, "RFC 4106 (AES-GCM with a 16-byte ICV: IV 8)"),
    Esp("chacha20-poly1305", "ChaCha20-Poly1305", 8, 4, 16, "RFC 7634 (IV 8, tag 16)"),
    Esp("aes-cbc-sha1", "AES-CBC and HMAC-SHA1-96", 16, 16, 12,
        "RFC 3602 (AES-CBC: IV 16, 16-byte blocks), RFC 2404 (HMAC-SHA1-96: ICV 12)"),
    Esp("aes-cbc-sha256", "AES-CBC and HMAC-SHA-256-128", 16, 16, 16, "RFC 3602, RFC 4868 (HMAC-SHA-256-128: ICV 16)"),
    Esp("aes-cbc-sha384", "AES-CBC and HMAC-SHA-384-192", 16, 16, 24, "RFC 3602, RFC 4868 (HMAC-SHA-384-192: ICV 24)"),
    Esp("aes-cbc-sha512", "AES-CBC and HMAC-SHA-512-256", 16, 16, 32, "RFC 3602, RFC 4868 (HMAC-SHA-512-256: ICV 32)"),
    Esp("3des-cbc-sha1", "3DES-CBC and HMAC-SHA1-96", 8, 8, 12,
        "RFC 2451 (3DES-CBC: IV 8, 8-byte blocks), RFC 2404 (ICV 12)"),
)}


@dataclass(frozen=True)
class Encap:
    """One row of the overhead table: what one encapsulation costs the packet inside it.

    `mtu_cost` bytes are taken from the carrier's MTU (the inner IP MTU shrinks by this);
    `frame_cost` bytes are added to each frame without touching the IP MTU (a VLAN tag).
    ESP's cost depends on the size (padding): `esp` holds the transform, `mtu_cost` the
    bytes outside ESP (tunnel mode's outer IP header, NAT-T's UDP header) and `keep` the
    original IP header transport mode leaves in front. `weight` ranks how common the
    encapsulation is, for `calc explain` (0: never proposed)."""
    name: str
    mtu_cost: int
    frame_cost: int
    note: str
    title: str = ""
    source: str = ""
    weight: float = 0.0
    esp: Optional[Esp] = None
    keep: int = 0

    def inner(self, mtu: int) -> int:
        """The largest packet this encapsulation carries inside a carrier of `mtu` bytes."""
        if self.esp is None:
            return mtu - self.mtu_cost
        e = self.esp
        room = mtu - self.mtu_cost - self.keep - ESP_HEADER - e.iv - e.icv
        return (room // e.align) * e.align - ESP_TRAILER + self.keep

    def cost(self, mtu: int) -> int:
        """Bytes this encapsulation takes from a carrier of `mtu` bytes."""
        return mtu - self.inner(mtu)

    def label(self) -> str:
        return self.title or self.name


MPLS_LABEL, MPLS_DEFAULT_LABELS = 4, 2
IPV4_OUTER, IPV6_OUTER, UDP = 20, 40, 8
IPV6_ENCAPLIMIT = 8      # the tunnel encapsulation limit option Linux's IPv6 tunnels add by default (RFC 2473)

_TABLE = [
    Encap("vlan", 0, 4, "802.1Q tag: the frame grows to 1522 bytes; the IP MTU stays unless a device on the path "
                        "only takes 1518-byte frames (then use --mtu 1496)", "VLAN (802.1Q)", "IEEE 802.1Q"),
    Encap("qinq", 0, 8, "802.1ad double tag: frame grows by 8; same caveat as vlan (--mtu 1492 if not)",
          "QinQ (802.1ad)", "IEEE 802.1ad"),
    Encap("pppoe", 8, 0, "PPPoE 6 + PPP 2 bytes inside the Ethernet payload (RFC 2516)", "PPPoE",
          "RFC 2516 (PPPoE header 6, PPP protocol 2)", 1.0),
    Encap("mpls", 8, 0, "two labels of 4 bytes (transport + VPN: the 8 bytes of Jisc, Jumbo Frames); mpls:N for "
                        "N labels", "MPLS (2 labels)", "RFC 3032 (4 bytes a label)", 0.3),
    Encap("udp", 8, 0, "an extra UDP header, e.g. IPsec NAT traversal", "UDP", "RFC 768"),
    Encap("eth", 14, 0, "an inner Ethernet header: what a layer-2 tunnel (tap, gretap, VXLAN) carries",
          "inner Ethernet", "IEEE 802.3 (14-byte header, no FCS inside a tunnel)"),
    Encap("vxlan", 50, 0, "inner Ethernet 14 + outer IPv4 20 + UDP 8 + VXLAN 8 (Jisc, Jumbo Frames)",
          "VXLAN over IPv4", "RFC 7348 section 5; Linux VXLAN_HEADROOM", 1.0),
    Encap("vxlan6", 70, 0, "inner Ethernet 14 + outer IPv6 40 + UDP 8 + VXLAN 8", "VXLAN over IPv6",
          "RFC 7348 section 5; Linux VXLAN6_HEADROOM", 0.5),
    Encap("geneve", 50, 0, "inner Ethernet 14 + outer IPv4 20 + UDP 8 + Geneve 8 (no options: each adds 4 to 128)",
          "Geneve over IPv4", "RFC 8926 section 3.4; Linux GENEVE_IPV4_HLEN", 0.6),
    Encap("geneve6", 70, 0, "inner Ethernet 14 + outer IPv6 40 + UDP 8 + Geneve 8 (no options)", "Geneve over IPv6",
          "RFC 8926 section 3.4; Linux GENEVE_IPV6_HLEN", 0.3),
    Encap("gre", 24, 0, "outer IPv4 20 + GRE 4 (add 4 for a key, 4 for sequence numbers, 4 for a checksum)",
          "GRE over IPv4", "RFC 2784 (GRE header 4)", 0.7),
    Encap("gre-key", 28, 0, "outer IPv4 20 + GRE 4 + key 4", "GRE with a key over IPv4", "RFC 2890 (key field 4)", 0.4),
    Encap("gretap", 38, 0, "outer IPv4 20 + GRE 4 + inner Ethernet 14 (4 more with a key)", "GRETAP over IPv4",
          "RFC 2784, RFC 1701 (transparent Ethernet bridging)", 0.3),
    Encap("ip6gre", 52, 0, "outer IPv6 40 + encapsulation limit option 8 + GRE 4 (Linux's default; 44 with "
                           "encaplimit none)", "GRE over IPv6", "RFC 7676; RFC 2473 section 5.1 (the option)", 0.3),
    Encap("ipip", 20, 0, "outer IPv4 20", "IPIP", "RFC 2003", 0.6),
    Encap("sit", 20, 0, "outer IPv4 20 carrying IPv6 (6in4)", "SIT (6in4)", "RFC 4213 section 3.5", 0.4),
    Encap("ip6tnl", 48, 0, "outer IPv6 40 + encapsulation limit option 8 (Linux's default; 40 with encaplimit none)",
          "IPv6 tunnel (ip6tnl)", "RFC 2473", 0.2),
    Encap("wireguard", 60, 0, "outer IPv4 20 + UDP 8 + WireGuard data header 16 + Poly1305 tag 16",
          "WireGuard over IPv4", "WireGuard paper, section 5.4.6 (transport data: 16-byte header, 16-byte tag)", 0.8),
    Encap("wireguard6", 80, 0, "outer IPv6 40 + UDP 8 + WireGuard 32 (wg-quick's MTU 1420 is 1500 - 80)",
          "WireGuard over IPv6", "WireGuard paper, section 5.4.6; wg-quick (route MTU - 80)", 1.0),
    Encap("l2tp", 38, 0, "outer IPv4 20 + UDP 8 + L2TPv2 6 + PPP address and control 2 + PPP protocol 2",
          "L2TP over IPv4 carrying PPP", "RFC 2661 section 3.1; AAISP, L2TP MTU (38 bytes)", 0.4),
    Encap("l2tpv3-eth", 38, 0, "outer IPv4 20 + L2TPv3 session ID 4 + inner Ethernet 14 (4 or 8 more with a cookie)",
          "L2TPv3 over IP carrying Ethernet", "RFC 3931 section 4.1.1", 0.2),
    Encap("openvpn-udp", 52, 0, "outer IPv4 20 + UDP 8 + OpenVPN data packet with an AEAD cipher 24 (opcode and "
                                "peer-id 4, packet ID 4, tag 16); tap mode carries Ethernet: add eth",
          "OpenVPN over UDP/IPv4 (AES-GCM)", "OpenVPN protocol (ssl.h): P_DATA_V2 with AEAD", 0.7),
    Encap("openvpn-udp6", 72, 0, "outer IPv6 40 + UDP 8 + OpenVPN AEAD data packet 24",
          "OpenVPN over UDP/IPv6 (AES-GCM)", "OpenVPN protocol (ssl.h)", 0.3),
    Encap("openvpn-tcp", 66, 0, "outer IPv4 20 + TCP 20 + packet length 2 + OpenVPN AEAD data packet 24",
          "OpenVPN over TCP/IPv4 (AES-GCM)", "OpenVPN protocol (ssl.h): TCP adds a 16-bit packet length", 0.3),
    Encap("openvpn-tcp6", 86, 0, "outer IPv6 40 + TCP 20 + packet length 2 + OpenVPN AEAD data packet 24",
          "OpenVPN over TCP/IPv6 (AES-GCM)", "OpenVPN protocol (ssl.h)", 0.1),
]

# how common each ESP transform is, for explain's ranking only
_ESP_WEIGHT = {"aes-gcm": 0.6, "aes-cbc-sha1": 0.5, "aes-cbc-sha256": 0.5, "chacha20-poly1305": 0.3,
               "aes-cbc-sha384": 0.2, "aes-cbc-sha512": 0.2, "3des-cbc-sha1": 0.1}


def _esp_rows() -> List[Encap]:
    """esp-{tunnel,transport}[6][-natt]-CIPHER: every mode, outer family, NAT-T and transform."""
    rows = []
    for mode in ("tunnel", "transport"):
        for six in (False, True):
            ip = IPV6_OUTER if six else IPV4_OUTER
            for natt in (False, True):
                for e in ESP_CIPHERS.values():
                    outside = (ip if mode == "tunnel" else 0) + (UDP if natt else 0)
                    front = (f"outer IPv{'6' if six else '4'} {ip}" if mode == "tunnel"
                             else f"the original IPv{'6' if six else '4'} header stays in front")
                    note = (front + (" + NAT-T UDP 8" if natt else "") + f" + ESP 8 + IV {e.iv} + payload and "
                            f"2-byte trailer padded to {e.align} + ICV {e.icv}")
                    title = (f"IPsec ESP {mode}{' over IPv6' if six else ''}{' NAT-T' if natt else ''}"
                             f" with {e.title}")
                    weight = _ESP_WEIGHT[e.cipher] * (1.0 if mode == "tunnel" else 0.4) * (0.4 if six else 1.0)
                    rows.append(Encap(f"esp-{mode}{'6' if six else ''}{'-natt' if natt else ''}-{e.cipher}",
                                      outside, 0, note, title,
                                      "RFC 4303 (ESP)" + (", RFC 3948 (NAT-T)" if natt else "") + f", {e.source}",
                                      round(weight * (0.9 if natt else 1.0), 3), e,
                                      ip if mode == "transport" else 0))
    return rows


ENCAPS: Dict[str, Encap] = {e.name: e for e in _TABLE + _esp_rows()}
# the name calc has always taken: ESP tunnel mode over IPv4, AES-CBC and HMAC-SHA1-96
ENCAPS["ipsec"] = replace(ENCAPS["esp-tunnel-aes-cbc-sha1"], name="ipsec", weight=0.0)
ENCAPS["natt"] = replace(ENCAPS["udp"], name="natt", title="NAT-T UDP", source="RFC 3948",
                         note="the UDP header of IPsec NAT traversal (RFC 3948)")


def parse_encaps(text: str) -> List[Tuple[str, Optional[int]]]:
    """'pppoe,vlan,mpls:3' -> [('pppoe', None), ('vlan', None), ('mpls', 3)] (None: the default count)."""
    out = []
    for part in [p.strip().lower() for p in str(text).split(",") if p.strip()]:
        name, _, count = part.partition(":")
        if name not in ENCAPS:
            plain = [n for n in ENCAPS if not n.startswith("esp-")]
            raise ValueError(f"unknown encapsulation {name!r}; known: {', '.join(plain)}, "
                             f"esp-{{tunnel,transport}}[6][-natt]-CIPHER with CIPHER one of {', '.join(ESP_CIPHERS)}")
        if count and (not count.isdigit() or not 1 <= int(count) <= 8):
            raise ValueError(f"{part!r}: the count after ':' must be 1 to 8")
        out.append((name, int(count) if count else None))
    return out


@dataclass
class MssResult:
    mtu: int                 # carrier MTU given
    family: str
    encaps: List[str]
    ip_mtu: int              # the inner IP MTU after encapsulation
    mss: int                 # what TCP advertises
    payload: int             # data per full segment after TCP options
    ip_options: int
    tcp_options: int
    frame_overhead: int      # bytes on the wire per full segment beyond the payload
    efficiency: float        # payload / (payload + frame_overhead)
    vos_min_mss: int         # the MSS + 20: STCP counts the TCP header (platforms.vos.value_for adds its range)
    notes: List[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def mss_for(mtu: int, family: str = "ipv4", encaps: Sequence[Tuple[str, Optional[int]]] = (),
            ip_options: int = 0, tcp_options: int = 0) -> MssResult:
    """The MSS a host should advertise on a carrier of `mtu` bytes, after encapsulations
    listed from the outermost (closest to the wire) inwards."""
    if family not in ("ipv4", "ipv6"):
        raise ValueError("family must be ipv4 or ipv6")
    if not 68 <= mtu <= 65535:
        raise ValueError("an MTU must be between 68 and 65535")
    if ip_options < 0 or ip_options > 40 or ip_options % 4:
        raise ValueError("IP options are 0 to 40 bytes in steps of 4")
    if tcp_options < 0 or tcp_options > 40 or tcp_options % 4:
        raise ValueError("TCP options are 0 to 40 bytes in steps of 4")
    if family == "ipv6" and ip_options:
        raise ValueError("IPv6 has no header options; use extension headers as an encapsulation cost")
    ip_mtu, frame, notes, names = mtu, ETHERNET, [], []
    for name, count in encaps:
        enc = ENCAPS[name]
        names.append(name if count is None else f"{name}:{count}")
        before = ip_mtu
        if name == "mpls":
            ip_mtu -= MPLS_LABEL * (MPLS_DEFAULT_LABELS if count is None else count)
        else:
            for _ in range(count or 1):
                ip_mtu = enc.inner(ip_mtu)
                frame += enc.frame_cost
        notes.append(f"{name}: {enc.note}" + (f": {before} -> {ip_mtu}" if ip_mtu != before else ""))
    ip_header = (IPV4 + ip_options) if family == "ipv4" else IPV6
    mss = ip_mtu - ip_header - TCP
    minimum = 536 if family == "ipv4" else 1220
    if mss < 1:
        raise ValueError(f"MTU {mtu} leaves no room for TCP data after {', '.join(names) or 'headers'}")
    if mss < minimum:
        notes.append(f"MSS {mss} is below the {family} minimum a host must accept ({minimum})")
    payload = mss - tcp_options
    overhead = frame + ip_header + TCP + tcp_options
    return MssResult(mtu, family, names, ip_mtu, mss, payload, ip_options, tcp_options, overhead,
                     round(payload / (payload + overhead), 4), mss + TCP,
                     notes)


def overhead_share(mss: int, overhead: int = SEGMENT_OVERHEAD) -> float:
    """Share of each full-sized frame that is headers (Stratus, "Tuning your MSS": 58 bytes a segment)."""
    return overhead / (mss + overhead)


# ---------------------------------------------------------------- transfers

@dataclass
class Transfer:
    size: int
    mss: int
    segments: int
    acks: int
    handshake: int
    packets: int
    ip_bytes: int        # IP datagrams: 40 bytes of IP + TCP header each, plus the data
    wire_bytes: int      # frames: 58 bytes of overhead each (Stratus, "Tuning your MSS"), plus the data
    model: str

    def to_dict(self) -> dict:
        return asdict(self)


def transfer(size: int, mss: int, ack_every: int = 2, window: Optional[int] = None,
             handshake: bool = True, ip_header: int = IPV4) -> Transfer:
    """Packets and bytes both ways for one bulk transfer of `size` bytes at `mss`.

    ACK model: the receiver ACKs every `ack_every` full segments. With `window` (bytes the
    sender may have unacknowledged) the sender sends window-sized bursts and the odd
    last segment of each burst is ACKed on its own (delayed-ACK timer). `handshake`
    adds the 3-way open and 4-segment close (7 packets of pure headers).
    """
    if size <= 0 or mss <= 0 or ack_every <= 0:
        raise ValueError("size, MSS and ack_every must be above zero")
    segments = math.ceil(size / mss)
    if window:
        per_burst = max(1, window // mss)
        full, rest = divmod(segments, per_burst)
        acks = full * math.ceil(per_burst / ack_every) + math.ceil(rest / ack_every)
        model = (f"1 ACK per {ack_every} segments, odd last segment of each {per_burst}-segment "
                 f"({window}-byte) window ACKed alone")
    else:
        acks = math.ceil(segments / ack_every)
        model = f"1 ACK per {ack_every} segments"
    extra = 7 if handshake else 0
    if handshake:
        model += ", plus 3-way open and 4-segment close"
    packets = segments + acks + extra
    header = ip_header + TCP
    return Transfer(size, mss, segments, acks, extra, packets, size + packets * header,
                    size + packets * (header + ETHERNET), model)


def compare_transfer(size: int, before: int, after: int, **kw) -> dict:
    a, b = transfer(size, before, **kw), transfer(size, after, **kw)
    return {
        "size": size, "before": a.to_dict(), "after": b.to_dict(),
        "fewer_packets_pct": round(100.0 * (a.packets - b.packets) / a.packets, 2),
        "fewer_bytes_pct": round(100.0 * (a.wire_bytes - b.wire_bytes) / a.wire_bytes, 2),
    }


# ---------------------------------------------------------------- buffers

@dataclass
class Bdp:
    bandwidth_bps: float
    rtt_s: float
    bdp_bytes: int
    factor: int
    buffer_bytes: int        # factor x BDP, exact
    buffer_mib_rounded: int  # the convention of "Lab 8: Bandwidth-delay Product and TCP Buffer Size": BDP in decimal MB taken as MiB, rounded up, x factor
    sysctl: List[str]

    def to_dict(self) -> dict:
        return asdict(self)


def bdp(bandwidth_bps: float, rtt_s: float, factor: int = 2) -> Bdp:
    """Bandwidth-delay product and the Linux buffer maximum for it ("Lab 8: Bandwidth-delay Product and TCP Buffer Size").

    factor 2 is Linux's default (half the buffer is overhead, tcp_adv_win_scale);
    "Lab 8: Bandwidth-delay Product and TCP Buffer Size" asks for more (e.g. 4) with BBR on a lossy path.
    """
    if bandwidth_bps <= 0 or rtt_s <= 0 or factor < 1:
        raise ValueError("bandwidth, RTT and factor must be above zero")
    value = int(round(bandwidth_bps * rtt_s / 8))
    rounded = factor * math.ceil(value / 1e6 - 1e-9) * MIB
    lines = [f"sysctl -w net.ipv4.tcp_rmem='10240 87380 {rounded}'",
             f"sysctl -w net.ipv4.tcp_wmem='10240 87380 {rounded}'",
             f"sysctl -w net.core.rmem_max={rounded}",
             f"sysctl -w net.core.wmem_max={rounded}"]
    return Bdp(bandwidth_bps, rtt_s, value, factor, factor * value, rounded, lines)


# ---------------------------------------------------------------- Mathis bound

def mathis(mss: int, rtt_s: float, loss: float, c: float = 1.0) -> float:
    """Upper bound on one TCP flow's rate in bits/s: MSS/RTT x C/sqrt(p) (Jisc's "Jumbo Frames", C = 1;
    Mathis et al. give C = sqrt(3/2) for periodic loss)."""
    if mss <= 0 or rtt_s <= 0 or not 0 < loss < 1:
        raise ValueError("MSS and RTT must be above zero and loss between 0 and 1")
    return 8.0 * mss / rtt_s * c / math.sqrt(loss)


def mathis_curve(rtt_s: float, loss: float, msses: Sequence[int], cap_bps: Optional[float] = None
                 ) -> List[Tuple[int, float]]:
    """(MSS, bound) points, each capped at the link rate when it is known."""
    out = []
    for m in msses:
        v = mathis(m, rtt_s, loss)
        out.append((m, min(v, cap_bps) if cap_bps else v))
    return out


# ---------------------------------------------------------------- explain: which stacks give this number

# Carrier MTUs a stack is tried on, with how common each is (ranking only).
CARRIERS: Dict[int, Tuple[float, str]] = {
    1500: (1.0, "Ethernet"),
    9000: (0.3, "jumbo frames"),
    9001: (0.15, "AWS EC2 jumbo frames"),
    1460: (0.15, "Google Cloud VPC default"),
}
# What a number can be: (name, bytes below the inner MTU, weight). An MSS is the MTU less the
# IP and TCP headers; a payload seen in a capture is 12 less again with TCP timestamps.
READINGS = {
    "mss": (("IPv4 MSS", IPV4 + TCP, 1.0), ("IPv6 MSS", IPV6 + TCP, 0.5),
            ("IPv4 payload with TCP timestamps", IPV4 + TCP + 12, 0.2),
            ("IPv6 payload with TCP timestamps", IPV6 + TCP + 12, 0.1)),
    "mtu": (("MTU", 0, 1.0),),
}
LINK_LAYERS = ("pppoe", "mpls")       # may sit under two tunnels in a three-layer stack


@dataclass
class Explanation:
    number: int
    reading: str              # what the number is read as: "IPv4 MSS", "MTU", ...
    carrier: int
    carrier_note: str
    stack: List[str]          # encapsulations, outermost first (ENCAPS names)
    costs: List[int]          # bytes each one takes at this size
    inner_mtu: int
    headers: int              # bytes between the inner MTU and the number
    exact: bool
    score: float
    formula: str

    def to_dict(self) -> dict:
        return asdict(self)


def stack_inner(carrier: int, stack: Sequence[str]) -> Tuple[int, List[int]]:
    """The inner MTU after `stack` (outermost first) on a carrier, and each layer's cost."""
    mtu, costs = carrier, []
    for name in stack:
        inner = ENCAPS[name].inner(mtu)
        costs.append(mtu - inner)
        mtu = inner
    return mtu, costs


def _stacks() -> Iterator[Tuple[str, ...]]:
    """One, two or three layers; a link layer (PPPoE, MPLS) only outermost."""
    tunnels = [n for n, e in ENCAPS.items() if e.weight > 0 and n not in LINK_LAYERS]
    yield ()                                  # no encapsulation: the carrier itself
    for first in LINK_LAYERS + tuple(tunnels):
        yield (first,)
    for first in LINK_LAYERS + tuple(tunnels):
        for b in tunnels:
            yield first, b
    for link in LINK_LAYERS:
        for a in tunnels:
            for b in tunnels:
                yield link, a, b


LAYER_PENALTY = 0.35        # each layer makes a stack that much less likely than the carrier alone


# Values people configure by hand rather than compute: what explain says beside the stacks.
DOCUMENTED = (
    ("mss", 1380, "Cisco ASA's default maximum TCP MSS (sysopt connection tcpmss): room for up to 120 bytes of "
                  "IPsec headers within a 1500-byte MTU", "Cisco ASA configuration guide, 'Default TCP MSS'"),
    ("mss", 1320, "Juniper SRX's MSS for TCP entering an IPsec VPN or GRE tunnel when `set security flow tcp-mss "
                  "ipsec-vpn` (or gre-in, gre-out) is given no value", "Junos OS reference, tcp-mss ipsec-vpn / gre-in"),
    ("mtu", 1400, "a round tunnel MTU set by hand on GRE or IPsec interfaces (Cisco IOS `ip mtu 1400`; Netgate "
                  "TNSR calls an IPsec MTU of 1400 safe for most environments)",
     "Netgate TNSR documentation, 'IPsec Interface MTU'"),
    ("mss", 1360, "1400 - 40: the MSS for a tunnel MTU of 1400 set by hand (Cisco IOS `ip mtu 1400` with "
                  "`ip tcp adjust-mss 1360` on GRE over IPsec)", "Netgate TNSR documentation, 'IPsec Interface MTU'"),
    ("mtu", 1420, "wg-quick's default WireGuard MTU: the route's MTU (1500) less 80 (WireGuard over IPv6)",
     "wg-quick; WireGuard paper, section 5.4.6"),
)


def documented(number: int, kind: str = "mss") -> List[Dict[str, str]]:
    """Hand-configured values that are this number, with where they are documented."""
    return [{"text": text, "source": source} for k, n, text, source in DOCUMENTED if k == kind and n == number]


def explain(number: int, kind: str = "mss", limit: int = 10, near: int = 16) -> List[Explanation]:
    """The stacks from the overhead table that produce `number` (an MSS or an MTU), most
    likely first: carriers, encapsulations and readings weighted by how common they are.
    When no stack gives it exactly, the nearest within `near` bytes (exact=False)."""
    if kind not in READINGS:
        raise ValueError("kind must be mss or mtu")
    if not 68 <= number <= 65535:
        raise ValueError("a number between 68 and 65535")
    readings = READINGS[kind]
    found: List[Explanation] = []
    close: List[Explanation] = []
    for stack in _stacks():
        weight = LAYER_PENALTY ** len(stack)
        for name in stack:
            weight *= ENCAPS[name].weight
        for carrier, (cw, cnote) in CARRIERS.items():
            inner, costs = stack_inner(carrier, stack)
            for reading, headers, rw in readings:
                delta = inner - headers - number
                if abs(delta) > near:
                    continue
                e = Explanation(number, reading, carrier, cnote, list(stack), costs, inner, headers, delta == 0,
                                round(weight * cw * rw, 6), "")
                (found if delta == 0 else close).append(e)
    if found:
        out = found
    else:
        out = sorted(close, key=lambda e: (abs(e.inner_mtu - e.headers - number), -e.score))[:limit]
    out.sort(key=lambda e: (not e.exact, -e.score, len(e.stack), e.carrier, e.stack))
    seen, unique = set(), []
    for e in out:
        key = (e.carrier, e.reading, tuple(sorted(e.stack)))      # A over B and B over A: one line
        if key not in seen:
            seen.add(key)
            unique.append(e)
    out = unique[:limit]
    for e in out:
        e.formula = _formula(e)
    return out


def _formula(e: Explanation) -> str:
    value = e.inner_mtu - e.headers
    parts = [f"{value} = {e.carrier}"]
    for name, cost in zip(e.stack, e.costs):
        enc = ENCAPS[name]
        parts.append(f"{cost} ({enc.label()}{', padding included' if enc.esp else ''})")
    if e.headers:
        parts.append(f"{e.headers} ({e.reading.replace(' MSS', '').replace(' payload with TCP timestamps', '')} "
                     f"and TCP headers{' and 12 of timestamps' if 'timestamps' in e.reading else ''})")
    text = " - ".join(parts)
    return text if e.exact else f"{text} ({value - e.number:+d} from {e.number})"
