"""Pure numbers for MSS, MTU, overhead, transfers, buffers and throughput bounds.

No I/O and nothing heavy: the CLI (`mssdiag calc`), the rules and the reports all
call these. Every quantity is in bytes, bits per second or seconds; the parse_*
helpers turn what engineers type ("10G", "20ms", "1MB", "0.01%") into those units
and raise ValueError with the reason (the caller names the option).

Conventions (seed 004 unless stated):
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
from dataclasses import asdict, dataclass, field

from typing import Dict, List, Optional, Sequence, Tuple

ETHERNET = 18          # 14-byte header + 4-byte FCS
IPV4 = 20
IPV6 = 40
TCP = 20
SEGMENT_OVERHEAD = ETHERNET + IPV4 + TCP   # 58, seed 004
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
class Encap:
    name: str
    mtu_cost: int      # bytes taken from the carrier's MTU (the inner IP MTU shrinks by this)
    frame_cost: int    # bytes added to each frame on the wire without touching the IP MTU
    note: str


# IPsec assumption (tunnel mode ESP, IPv4 outer header): ESP header 8 (SPI + sequence),
# AES-CBC IV 16, payload + 2-byte trailer padded to the 16-byte block, ICV 12 (HMAC-SHA1-96).
# With NAT traversal add `udp` (8). The cost depends on the inner size because of padding,
# so ipsec is computed by _ipsec_inner() rather than a constant.
MPLS_LABEL, MPLS_DEFAULT_LABELS = 4, 2
ESP_OUTER_IP, ESP_HEADER, ESP_IV, ESP_BLOCK, ESP_TRAILER, ESP_ICV = 20, 8, 16, 16, 2, 12

ENCAPS: Dict[str, Encap] = {e.name: e for e in (
    Encap("vlan", 0, 4, "802.1Q tag: the frame grows to 1522 bytes; the IP MTU stays unless a device "
                        "on the path only takes 1518-byte frames (then use --mtu 1496)"),
    Encap("qinq", 0, 8, "802.1ad double tag: frame grows by 8; same caveat as vlan (--mtu 1492 if not)"),
    Encap("pppoe", 8, 0, "PPPoE 6 + PPP 2 bytes inside the Ethernet payload (RFC 2516)"),
    Encap("gre", 24, 0, "outer IPv4 20 + GRE 4 (add 4 more with a key)"),
    Encap("udp", 8, 0, "an extra UDP header, e.g. IPsec NAT traversal"),
    Encap("ipsec", 0, 0, "ESP tunnel mode, IPv4 outer, AES-CBC (IV 16, 16-byte blocks) + HMAC-SHA1-96 "
                         "(ICV 12)"),
    Encap("vxlan", 50, 0, "inner Ethernet 14 + outer IPv4 20 + UDP 8 + VXLAN 8 (Jisc, Jumbo Frames)"),
    Encap("mpls", 8, 0, "two labels of 4 bytes (transport + VPN: the 8 bytes of Jisc, Jumbo Frames); mpls:N for N labels"),
)}


def _ipsec_inner(outer_mtu: int) -> int:
    room = outer_mtu - ESP_OUTER_IP - ESP_HEADER - ESP_IV - ESP_ICV
    return (room // ESP_BLOCK) * ESP_BLOCK - ESP_TRAILER


def parse_encaps(text: str) -> List[Tuple[str, Optional[int]]]:
    """'pppoe,vlan,mpls:3' -> [('pppoe', None), ('vlan', None), ('mpls', 3)] (None: the default count)."""
    out = []
    for part in [p.strip().lower() for p in str(text).split(",") if p.strip()]:
        name, _, count = part.partition(":")
        if name not in ENCAPS:
            raise ValueError(f"unknown encapsulation {name!r}; known: {', '.join(ENCAPS)}")
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
                ip_mtu = _ipsec_inner(ip_mtu) if name == "ipsec" else ip_mtu - enc.mtu_cost
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
    """Share of each full-sized frame that is headers (seed 004: 58 bytes a segment)."""
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
    wire_bytes: int      # frames: 58 bytes of overhead each (seed 004), plus the data
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
    buffer_mib_rounded: int  # seed 002's convention: BDP in decimal MB taken as MiB, rounded up, x factor
    sysctl: List[str]

    def to_dict(self) -> dict:
        return asdict(self)


def bdp(bandwidth_bps: float, rtt_s: float, factor: int = 2) -> Bdp:
    """Bandwidth-delay product and the Linux buffer maximum for it (seed 002).

    factor 2 is Linux's default (half the buffer is overhead, tcp_adv_win_scale);
    seed 002 asks for more (e.g. 4) with BBR on a lossy path.
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
    """Upper bound on one TCP flow's rate in bits/s: MSS/RTT x C/sqrt(p) (seed 003, C = 1;
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
