"""Frames to per-connection evidence: the hot path (one call per frame, `struct` only).

Link layers (linktypes.py): Ethernet with 802.1Q / 802.1ad tags, MPLS, PPPoE and LLC/SNAP,
Linux cooked SLL / SLL2 and NFLOG, PPP (plain, HDLC-framed, PPPoE, pppd), Cisco HDLC,
802.11 (plain, radiotap, Prism, AVS, PPI), IP over InfiniBand, raw IP, BSD / OpenBSD
loopback. Tunnels are opened and their inner packets analysed: IP-in-IP, GRE (with
Ethernet, ERSPAN I/II/III, MPLS, PPP inside), VXLAN (UDP 4789) and GENEVE (UDP 6081).
Each connection remembers the layers around it and the bytes they take from the MTU.

IPv4 and IPv6 fragments are reassembled (reasm.py) and the datagram analysed like any
packet; fragments are counted per connection. Sizes come from the IP header, never from
the captured length, so snaplen-cut captures measure right; a header that claims more
than the frame held is counted as a length mismatch and not trusted. A segment above the
peer's MSS that is larger than the MTU, or an IPv4 total length of 0 (BIG TCP), or an
IPv6 jumbogram, was captured before segmentation (TSO/GSO/GRO): it is counted apart and
never taken for a wire size.

Memory: each connection is one row of a few `array` columns (about 300 bytes with its
table entry); what few connections need (PTBs, black-hole tracking) lives in `extra`.
Every frame that cannot be decoded is counted by reason in `undecoded`.
"""
from __future__ import annotations

import socket
import struct
from array import array
from typing import Dict, List, Optional, Tuple

from toolkit.capture import linktypes as lt
from toolkit.capture.reasm import Reassembler
from toolkit.capture.tcpopts import tcp_options

_H = struct.Struct("!H").unpack_from
_HL = struct.Struct("<H").unpack_from
_I = struct.Struct("!I").unpack_from
_IL = struct.Struct("<I").unpack_from
_V4 = struct.Struct("!BBHHHBB").unpack_from          # ver/ihl, tos, len, id, frag, ttl, proto
_TCP = struct.Struct("!4xIIH").unpack_from           # seq, ack, off/flags (after the ports)
_PORTS_SEQ = struct.Struct("!HHI").unpack_from
V6_EXT = frozenset((0, 43, 60, 51, 135, 139, 140, 253, 254))
NULL_AF = {2: 4, 10: 6, 24: 6, 28: 6, 30: 6}
ETHERTYPES = {0x0806: "ARP", 0x8035: "RARP (Cisco SLARP)", 0x2000: "CDP", 0x88CC: "LLDP", 0x8809: "slow protocols (LACP)", 0x88F7: "PTP",
              0x888E: "EAPOL", 0x9000: "loopback test", 0x8863: "PPPoE discovery", 0x88E5: "MACsec",
              0x8137: "IPX", 0x809B: "AppleTalk", 0x6003: "DECnet", 0x8100: "802.1Q", 0x22F3: "TRILL",
              0x88B5: "local experimental", 0x893A: "IEEE 1905", 0x88E7: "802.1ah"}
MAX_PTBS = 16
MAX_LOOSE = 4096
MAX_DEPTH = 12            # layers inside layers: a crafted frame must not recurse without end
SYN, ACK, FIN, RST = 0x02, 0x10, 0x01, 0x04

# per side: one row of W unsigned 32-bit fields in `S`, bytes in `B`
(FLAGS, ISN, BASE, NXT, ACKED, MSS, OPTS, IPID, PACKETS, DATA, MAXPAY, MAXIP, V4, DF, OVER, OVERMAX, OFF, OFFMAX,
 RETRANS, RMAX, FRAGS, FDGRAMS, FRAGIP, FLOST, MAXN) = range(25)
W = 25
F_SYN, F_FIN, F_RST, F_BASED, F_OPTS_UNKNOWN = 1, 2, 4, 8, 16
# per flow: FW fields in `F`, first/last timestamp in `T`
FRAMES, SHORT, UNDEC, CLIENT, ENCAP = range(5)
FW = 5
_SIDE_ZERO = array("I", bytes(4 * W))
_FLOW_ZERO = array("I", bytes(4 * FW))


def addr_text(raw: bytes) -> str:
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)


class Extra:
    """What a few sides need: PTBs and what followed, black-hole tracking, SYN IP IDs."""
    __slots__ = ("ptbs", "after_fit", "after_big", "after_max", "bh_seq", "bh_len", "bh_sends", "bh_smaller",
                 "bh_small_ip", "black_hole", "ip_ids")

    def __init__(self):
        self.ptbs: List[tuple] = []
        self.after_fit = self.after_big = self.after_max = 0
        self.bh_seq: Optional[int] = None
        self.bh_len = self.bh_sends = self.bh_small_ip = 0
        self.bh_smaller = False
        self.black_hole: Optional[dict] = None
        self.ip_ids: List[int] = []


class Analyzer:
    """Feed frames with frame(); connections, fragments, ICMP and undecoded frames accumulate.
    The connection rows are read back through record.flow_dict(analyzer, i)."""

    def __init__(self, mtu: int = 1500, source: str = ""):
        self.mtu = mtu
        self.source = source
        self.table: Dict[bytes, int] = {}      # the first packet's (addresses, ports) -> flow index
        self.answers: Dict[bytes, int] = {}    # the other way round, for recent flows (bounded)
        self.keys: List[bytes] = []
        self.S = array("I")
        self.B = array("Q")
        self.F = array("I")
        self.T = array("d")
        self.extra: Dict[int, Extra] = {}
        self.options: List[tuple] = []          # distinct option lists, shared by index
        self._opt_index: Dict[tuple, int] = {}
        self.encaps: List[tuple] = [((), 0)]    # distinct (layers, overhead), shared by index
        self._encap_index: Dict[tuple, int] = {((), 0): 0}
        self.frames = 0
        self.loose_fragments: Dict[tuple, list] = {}   # (src, dst, proto) -> [frags, datagrams, family, max ip, df]
        self.untied_ptbs: List[dict] = []
        self.untied_count = 0
        self.undecoded: Dict[str, int] = {}     # reason -> frames
        self.other: Dict[str, int] = {}         # decoded, but not IP (ARP, 802.11 management, ...)
        self.offload_frames = 0
        self.notes: List[str] = []
        self.ppp_mru: Dict[int, int] = {}
        self.options_hidden = False             # set by a reader whose format does not show TCP options
        self.reasm = {4: Reassembler(self._lost), 6: Reassembler(self._lost)}
        self.frag_discards: Dict[str, int] = {}

    # ---- counting what is not analysed ---------------------------------------------
    def _skip(self, why: str) -> None:
        self.undecoded[why] = self.undecoded.get(why, 0) + 1

    def _other(self, what: str) -> None:
        self.other[what] = self.other.get(what, 0) + 1

    @property
    def flow_count(self) -> int:
        return len(self.keys)

    # ---- link layer --------------------------------------------------------------
    def frame(self, ts: float, link: int, buf, p: int, end: int, wire: int = 0, iface: int = 0) -> None:
        """One captured frame, buf[p:end]; `wire` is its length on the wire (0: as captured)."""
        self.frames += 1
        wend = p + wire if wire > end - p else end
        if link == 1 and end - p >= 14 and buf[p + 12] == 8 and buf[p + 13] == 0:
            return self.ipv4(ts, buf, p + 14, end, wend, None)      # Ethernet, IPv4: most frames
        self.link(ts, link, buf, p, end, wend)

    def link(self, ts, link: int, buf, p: int, end: int, wend: int) -> None:
        if link == 1:
            return self.ether(ts, buf, p, end, wend, None)
        if link in (101, 12, 14, 228, 229):
            if p >= end:
                return self._skip("malformed header: empty frame")
            v = buf[p] >> 4
            if v == 4:
                return self.ipv4(ts, buf, p, end, wend, None)
            if v == 6:
                return self.ipv6(ts, buf, p, end, wend, None)
            return self._skip("malformed header: raw IP frame of IP version %d" % v)
        if link == 113:
            if end - p < 16:
                return self._skip("malformed header: Linux cooked header cut short")
            return self.ethertype(_H(buf, p + 14)[0], ts, buf, p + 16, end, wend, None, sll=True)
        if link == 276:
            if end - p < 20:
                return self._skip("malformed header: Linux cooked v2 header cut short")
            return self.ethertype(_H(buf, p)[0], ts, buf, p + 20, end, wend, None, sll=True)
        if link in (0, 108):
            if end - p < 4:
                return self._skip("malformed header: loopback header cut short")
            if link == 108:
                af = _I(buf, p)[0]
            else:       # DLT_NULL: the capturing host's byte order; AF values fit one byte
                af = _IL(buf, p)[0] if buf[p] else _I(buf, p)[0]
            v = NULL_AF.get(af, 0)
            if v == 4:
                return self.ipv4(ts, buf, p + 4, end, wend, None)
            if v == 6:
                return self.ipv6(ts, buf, p + 4, end, wend, None)
            return self._other(f"loopback address family {af}")
        if link in (9, 50, 166, 204):
            if link == 204:
                p += 1
            return self.ppp(ts, buf, p, end, wend, (("ppp",), 0))
        if link == 51:
            return self.pppoe(ts, buf, p, end, wend, None)
        if link == 104:
            if end - p < 4:
                return self._skip("malformed header: Cisco HDLC header cut short")
            return self.ethertype(_H(buf, p + 2)[0], ts, buf, p + 4, end, wend, (("c-hdlc",), 0))
        if link == 239:
            return self.nflog(ts, buf, p, end, wend)
        if link in (105, 127, 119, 163, 192):
            return self.wifi(ts, link, buf, p, end, wend)
        if link == 242:     # two 20-byte hardware addresses, the type, 2 reserved bytes
            if end - p < 44:
                return self._skip("malformed header: IPoIB header cut short")
            return self.ethertype(_H(buf, p + 40)[0], ts, buf, p + 44, end, wend, (("ipoib",), 0))
        if link == 100:
            return self.llc(ts, buf, p, end, wend, None)
        if link == 10:
            if end - p < 13:
                return self._skip("malformed header: FDDI header cut short")
            return self.llc(ts, buf, p + 13, end, wend, None)
        self._skip(f"link type {lt.name(link)}")

    def ether(self, ts, buf, p, end, wend, ctx) -> None:
        if end - p < 14:
            return self._skip("malformed header: Ethernet header cut short")
        et = _H(buf, p + 12)[0]
        if et == 0x0800:
            return self.ipv4(ts, buf, p + 14, end, wend, ctx)
        if et < 0x0600:      # an 802.3 length: LLC follows
            return self.llc(ts, buf, p + 14, min(end, p + 14 + et), min(wend, p + 14 + et), ctx)
        return self.ethertype(et, ts, buf, p + 14, end, wend, ctx)

    def ethertype(self, et: int, ts, buf, p, end, wend, ctx, sll: bool = False) -> None:
        while et in (0x8100, 0x88A8, 0x9100, 0x9200):
            if end - p < 4:
                return self._skip("malformed header: VLAN tag cut short")
            ctx = _add(ctx, "802.1ad" if et == 0x88A8 else "802.1Q", 0)
            et = _H(buf, p + 2)[0]
            p += 4
            if len(ctx[0]) > MAX_DEPTH:
                return self._skip("malformed header: too many nested layers")
        if et == 0x0800:
            return self.ipv4(ts, buf, p, end, wend, ctx)
        if et == 0x86DD:
            return self.ipv6(ts, buf, p, end, wend, ctx)
        if et == 0x8864:
            return self.pppoe(ts, buf, p, end, wend, ctx)
        if et in (0x8847, 0x8848):
            return self.mpls(ts, buf, p, end, wend, ctx)
        if sll and et in (0x0004, 0x0001):     # Linux cooked: 802.2 LLC frames, or 802.3 without LLC
            return self.llc(ts, buf, p, end, wend, ctx) if et == 4 else self._other("802.3 (no LLC)")
        if et == 0x6558:
            return self.ether(ts, buf, p, end, wend, ctx)
        if et == 0x88E5:
            return self._skip("encrypted: MACsec")
        if et < 0x0600 and not sll:
            return self.llc(ts, buf, p, end, wend, ctx)
        self._other(ETHERTYPES.get(et) or f"ethertype 0x{et:04x}")

    def llc(self, ts, buf, p, end, wend, ctx) -> None:
        if end - p < 3:
            return self._skip("malformed header: LLC header cut short")
        if buf[p] == 0xAA and buf[p + 1] == 0xAA and buf[p + 2] == 3:
            if end - p < 8:
                return self._skip("malformed header: SNAP header cut short")
            return self.ethertype(_H(buf, p + 6)[0], ts, buf, p + 8, end, wend, _add(ctx, "llc-snap", 0))
        if buf[p] == 0x06 and buf[p + 1] == 0x06:
            return self.ipv4(ts, buf, p + 3, end, wend, _add(ctx, "llc", 0))
        self._other("802.2 LLC (not IP)" if buf[p] != 0x42 else "spanning tree")

    def mpls(self, ts, buf, p, end, wend, ctx) -> None:
        labels = 0
        while True:
            if end - p < 4:
                return self._skip("malformed header: MPLS label stack cut short")
            bottom = buf[p + 2] & 1
            p += 4
            labels += 1
            if bottom:
                break
            if labels > MAX_DEPTH:
                return self._skip("malformed header: MPLS label stack without a bottom")
        ctx = _add(ctx, "mpls" if labels == 1 else f"mpls x{labels}", 4 * labels)
        if p >= end:
            return self._skip("malformed header: MPLS payload cut short")
        v = buf[p] >> 4
        if v == 4:
            return self.ipv4(ts, buf, p, end, wend, ctx)
        if v == 6:
            return self.ipv6(ts, buf, p, end, wend, ctx)
        if v == 0 and end - p >= 4 + 14:       # a pseudowire control word, then Ethernet
            return self.ether(ts, buf, p + 4, end, wend, _add(ctx, "pw-ethernet", 4 + 14))
        self._other("MPLS payload (not IP)")

    def pppoe(self, ts, buf, p, end, wend, ctx) -> None:
        if end - p < 6:
            return self._skip("malformed header: PPPoE header cut short")
        if buf[p + 1] != 0:     # a discovery packet (PADI, PADO, ...)
            return self._other("PPPoE discovery")
        length = _H(buf, p + 4)[0]
        stop = p + 6 + length
        return self.ppp(ts, buf, p + 6, min(end, stop), min(wend, stop), _add(ctx, "pppoe", 8))

    def ppp(self, ts, buf, p, end, wend, ctx) -> None:
        if end - p >= 2 and buf[p] == 0xFF and buf[p + 1] == 0x03:
            p += 2      # HDLC address and control
        if end - p < 1:
            return self._skip("malformed header: PPP header cut short")
        if buf[p] & 1:        # a compressed one-byte protocol field
            proto, p = buf[p], p + 1
        else:
            if end - p < 2:
                return self._skip("malformed header: PPP header cut short")
            proto, p = _H(buf, p)[0], p + 2
        if proto == 0x21:
            return self.ipv4(ts, buf, p, end, wend, ctx)
        if proto == 0x57:
            return self.ipv6(ts, buf, p, end, wend, ctx)
        if proto == 0xC021:
            return self._lcp(buf, p, end)
        if proto in (0x2D, 0x2F, 0xFD, 0x4021):
            return self._skip("compressed or encrypted PPP payload")
        self._other("PPP control" if proto >= 0x8000 else f"PPP protocol 0x{proto:04x}")

    def _lcp(self, buf, p, end) -> None:
        """LCP Configure-Ack: the MRU the two ends agreed (PPPoE: 1492, or 1500 with RFC 4638)."""
        self._other("PPP LCP")
        if end - p < 4 or buf[p] != 2:
            return
        stop = min(end, p + _H(buf, p + 2)[0])
        q = p + 4
        while q + 2 <= stop:
            kind, ln = buf[q], buf[q + 1]
            if ln < 2:
                return
            if kind == 1 and ln == 4 and q + 4 <= stop:
                mru = _H(buf, q + 2)[0]
                self.ppp_mru[mru] = self.ppp_mru.get(mru, 0) + 1
            q += ln

    def nflog(self, ts, buf, p, end, wend) -> None:
        """Linux NFLOG: a 4-byte header (address family), then TLVs; NFULA_PAYLOAD (9) is the packet."""
        if end - p < 4:
            return self._skip("malformed header: NFLOG header cut short")
        family = buf[p]
        q = p + 4
        while q + 4 <= end:
            ln, kind = _HL(buf, q)[0], _HL(buf, q + 2)[0]      # host byte order: little-endian captures
            if ln < 4:
                return self._skip("malformed header: NFLOG TLV length")
            if kind & 0x7FFF == 9:
                stop = q + ln
                ctx = (("nflog",), 0)
                if family == 2:
                    return self.ipv4(ts, buf, q + 4, min(end, stop), min(wend, stop), ctx)
                if family == 10:
                    return self.ipv6(ts, buf, q + 4, min(end, stop), min(wend, stop), ctx)
                return self._other(f"NFLOG family {family}")
            q += (ln + 3) & ~3
        self._other("NFLOG without payload")

    def wifi(self, ts, link, buf, p, end, wend) -> None:
        """802.11 data frames (radiotap, Prism, AVS and PPI headers first): LLC/SNAP, then IP."""
        if link == 127:
            if end - p < 4:
                return self._skip("malformed header: radiotap header cut short")
            p += _HL(buf, p + 2)[0]
        elif link == 119:
            if end - p < 8:
                return self._skip("malformed header: Prism header cut short")
            p += _IL(buf, p + 4)[0]
        elif link == 163:
            if end - p < 8:
                return self._skip("malformed header: AVS header cut short")
            p += _I(buf, p + 4)[0]
        elif link == 192:
            if end - p < 8:
                return self._skip("malformed header: PPI header cut short")
            inner = _IL(buf, p + 4)[0]
            p += _HL(buf, p + 2)[0]
            if inner != 105:
                if inner == 192:
                    return self._skip("malformed header: PPI inside PPI")
                return self.link(ts, inner, buf, p, end, wend)
        if end - p < 2:
            return self._skip("malformed header: 802.11 header cut short")
        fc, flags = buf[p], buf[p + 1]
        kind, sub = (fc >> 2) & 3, (fc >> 4) & 15
        if kind != 2:
            return self._other("802.11 management/control")
        if end - p < 24:
            return self._skip("malformed header: 802.11 header cut short")
        if sub & 4:
            return self._other("802.11 null data")
        if flags & 0x40:
            return self._skip("encrypted: 802.11 protected data")
        hl = 24 + (6 if flags & 3 == 3 else 0) + (2 if sub & 8 else 0)
        if sub & 8 and flags & 0x80:
            hl += 4
        return self.llc(ts, buf, p + hl, end, wend, (("802.11",), 0))

    # ---- IP --------------------------------------------------------------------------
    def ipv4(self, ts, buf, p, end, wend, ctx) -> None:
        if end - p < 20:
            return self._skip("cut by snaplen: IPv4 header" if wend - p >= 20 else "malformed header: IPv4 header cut short")
        vihl, _, total, ipid, frag, _, proto = _V4(buf, p)
        ihl = (vihl & 15) * 4
        if vihl >> 4 != 4 or ihl < 20:
            return self._skip("malformed header: IPv4 version or header length")
        avail = wend - p
        zero = False
        if total == 0:            # TSO / BIG TCP: the length is the frame's
            total, zero = avail, True
        if total < ihl:
            return self._skip("malformed header: IPv4 total length below its header length")
        addrs = buf[p + 12:p + 20]
        if total > avail:
            return self._mismatch(buf, p + ihl, end, addrs, proto, "IPv4 total length beyond the frame")
        if p + ihl > end:
            return self._skip("cut by snaplen: IPv4 options")
        t = p + ihl
        stop = p + total if p + total < end else end
        if frag & 0x3FFF:   # MF or an offset: a fragment
            dg = self.reasm[4].add((addrs, ipid, proto), 4, ts, (frag & 0x1FFF) * 8, bool(frag & 0x2000),
                                   total - ihl, total, buf, t, stop, proto, (ihl, ipid, ctx), frag & 0x4000)
            if dg is not None:
                self._datagram(ts, dg, addrs, 4)
            return
        if proto == 6:
            return self.tcp(ts, buf, t, stop, addrs, total - ihl, total, frag & 0x4000, ipid, ctx, None, zero)
        return self.l4(ts, buf, t, stop, addrs, proto, total - ihl, ctx, 4, total)

    def ipv6(self, ts, buf, p, end, wend, ctx) -> None:
        if end - p < 40:
            return self._skip("cut by snaplen: IPv6 header" if wend - p >= 40 else "malformed header: IPv6 header cut short")
        if buf[p] >> 4 != 6:
            return self._skip("malformed header: IPv6 version")
        plen = _H(buf, p + 4)[0]
        nh = buf[p + 6]
        addrs = buf[p + 8:p + 40]
        avail = wend - p
        zero = False
        if plen == 0 and avail > 40:
            jumbo = _jumbo(buf, p + 40, end) if nh == 0 else None
            total, zero = (40 + jumbo if jumbo else avail), True
        else:
            total = 40 + plen
        if total > avail:
            return self._mismatch(buf, None, end, addrs, nh, "IPv6 payload length beyond the frame")
        stop = p + total if p + total < end else end
        t = p + 40
        while nh in V6_EXT or nh == 44:
            if t + 8 > stop:
                return self._skip("cut by snaplen: IPv6 extension headers" if stop < p + total else
                                  "malformed header: IPv6 extension headers beyond the packet")
            if nh == 44:
                fo = _H(buf, t + 2)[0]
                if fo & 0xFFF9 == 0:      # an atomic fragment (RFC 6946): a whole packet
                    nh, t = buf[t], t + 8
                    continue
                dg = self.reasm[6].add((addrs, _I(buf, t + 4)[0]), 6, ts, fo & 0xFFF8, bool(fo & 1),
                                       total - (t + 8 - p), total, buf, t + 8, stop, buf[t], (t - p, None, ctx))
                if dg is not None:
                    self._datagram(ts, dg, addrs, 6)
                return
            nxt = buf[t]
            t += (buf[t + 1] + 2) * 4 if nh == 51 else (buf[t + 1] + 1) * 8
            nh = nxt
        if t > stop:
            return self._skip("malformed header: IPv6 extension headers beyond the packet")
        if nh == 6:
            return self.tcp(ts, buf, t, stop, addrs, total - (t - p), total, 0, None, ctx, None, zero)
        return self.l4(ts, buf, t, stop, addrs, nh, total - (t - p), ctx, 6, total)

    def _mismatch(self, buf, t, end, addrs, proto, why: str) -> None:
        """An IP length beyond the frame: not trusted; the connection, when its ports are
        visible, is marked as partly undecoded."""
        self._skip("length mismatch: " + why)
        if proto == 6 and t is not None and end - t >= 4:
            f = self._find(addrs + buf[t:t + 4], addrs, buf, t)[0]
            if f is not None:
                self.F[f * FW + UNDEC] += 1

    def _datagram(self, ts, dg, addrs, version: int) -> None:
        """A reassembled datagram: analysed like a packet, its fragments counted."""
        hlen, ipid, ctx = dg.header if dg.header else (20 if version == 4 else 40, None, None)
        total = hlen + dg.length
        if total > 65535 + (40 if version == 6 else 0):
            return self._frag_dropped("reassembled datagram over 65,535 bytes (discarded)", dg.fragments)
        head, nh, t = dg.head, dg.proto, 0
        if version == 6:
            while nh in V6_EXT:
                if t + 8 > len(head):
                    return self._frag_dropped("extension headers of a reassembled datagram not captured",
                                              dg.fragments)
                nxt = head[t]
                t += (head[t + 1] + 2) * 4 if nh == 51 else (head[t + 1] + 1) * 8
                nh = nxt
        if nh == 6:
            return self.tcp(ts, head, t, len(head), addrs, dg.length - t, total, 0, ipid, ctx,
                            (dg.fragments, dg.max_ip, False), False)
        self._loose(addrs, nh, version, dg.fragments, dg.max_ip, 1, 0)
        self.l4(ts, head, t, len(head), addrs, nh, dg.length - t, ctx, version, total)

    def _lost(self, pend, why: str) -> None:
        """A datagram given up by the reassembly: its fragments go to its connection when its
        first fragment named one, else to the loose fragments."""
        self.frag_discards[why] = self.frag_discards.get(why, 0) + 1
        addrs = pend.key[0]
        head = pend.head
        whole = next((c for s, _, c in pend.parts if s == 0), 0)
        if pend.proto == 6 and head is not None and whole >= 20 and pend.header is not None:
            # the first fragment holds the TCP header: its flags, sequence and options count,
            # its size cannot (the datagram never completed)
            doff = (head[12] >> 4) * 4
            hlen, ipid, ctx = pend.header
            if 20 <= doff <= whole:
                return self.tcp(pend.ts, bytes(head[:doff]), 0, doff, addrs, doff, hlen + doff, pend.df, ipid, ctx,
                                (pend.fragments, pend.max_ip, True), False)
        if pend.proto == 6 and head is not None and whole >= 4:
            found, d = self._find(addrs + bytes(head[:4]), addrs, head, 0)
            if found is not None:
                j = 2 * found + d
                S = self.S
                b = j * W
                S[b + FRAGS] += pend.fragments
                S[b + FLOST] += 1
                S[b + PACKETS] += pend.fragments
                if pend.max_ip > S[b + FRAGIP]:
                    S[b + FRAGIP] = pend.max_ip
                self.F[found * FW + FRAMES] += pend.fragments
                return
        self._loose(addrs, pend.proto, pend.version, pend.fragments, pend.max_ip, 0, pend.df)

    def _frag_dropped(self, why: str, n: int) -> None:
        self.frag_discards[why] = self.frag_discards.get(why, 0) + 1

    def _loose(self, addrs, proto, version, fragments, max_ip, datagrams, df) -> None:
        half = len(addrs) // 2
        key = (addrs[:half], addrs[half:], proto)
        lf = self.loose_fragments.get(key)
        if lf is None:
            if len(self.loose_fragments) >= MAX_LOOSE:
                key = (b"", b"", proto)       # past the limit: one record for all other pairs
                lf = self.loose_fragments.get(key)
            if lf is None:
                lf = self.loose_fragments[key] = [0, 0, "ipv4" if version == 4 else "ipv6", 0, 0]
        lf[0] += fragments
        lf[1] += datagrams
        if max_ip > lf[3]:
            lf[3] = max_ip
        if df:
            lf[4] += 1

    def l4(self, ts, buf, t, end, addrs, proto, l4len, ctx, version, total) -> None:
        """What is not TCP: ICMP errors, tunnels, the rest counted."""
        if proto == 1 or proto == 58:
            if end - t < 8:
                return self._skip("cut by snaplen: ICMP header")
            if (proto == 1 and buf[t] == 3 and buf[t + 1] == 4) or (proto == 58 and buf[t] == 2):
                mtu = _H(buf, t + 6)[0] if proto == 1 else _I(buf, t + 4)[0]
                return self.quoted(ts, buf, t + 8, end, mtu, addrs[:len(addrs) // 2], 4 if proto == 1 else 6)
            return self._other("ICMP" if proto == 1 else "ICMPv6")
        if _depth(ctx) > MAX_DEPTH and proto in (4, 41, 47, 17):
            return self._skip("malformed header: too many nested tunnels")
        over = total - l4len      # the outer IP header's bytes
        if proto == 4:
            return self.ipv4(ts, buf, t, end, t + l4len, _add(ctx, "ipip", over))
        if proto == 41:
            return self.ipv6(ts, buf, t, end, t + l4len, _add(ctx, "ip6-in-ip", over))
        if proto == 47:
            return self.gre(ts, buf, t, end, t + l4len, ctx, over)
        if proto == 17:
            if end - t < 8:
                return self._skip("cut by snaplen: UDP header")
            sport, dport = _H(buf, t)[0], _H(buf, t + 2)[0]
            if 4789 in (sport, dport) and end - t >= 16 + 14:
                return self.ether(ts, buf, t + 16, end, t + l4len, _add(ctx, "vxlan", over + 16 + 14))
            if 6081 in (sport, dport) and end - t >= 16:
                return self.geneve(ts, buf, t + 8, end, t + l4len, ctx, over + 8)
            return self._other("UDP")
        if proto == 50:
            return self._other("IPsec ESP")
        self._other(f"IP protocol {proto}")

    def gre(self, ts, buf, p, end, wend, ctx, over) -> None:
        if end - p < 4:
            return self._skip("cut by snaplen: GRE header")
        flags, proto = _H(buf, p)[0], _H(buf, p + 2)[0]
        if flags & 0x4000 or flags & 7 > 1:
            return self._skip("malformed header: GRE with routing or an unknown version")
        hl = 4 + (4 if flags & 0x8000 else 0) + (4 if flags & 0x2000 else 0) + (4 if flags & 0x1000 else 0)
        if flags & 7 == 1 and flags & 0x0080:
            hl += 4          # enhanced GRE (PPTP): acknowledgement number
        q = p + hl
        if end < q:
            return self._skip("cut by snaplen: GRE header")
        if proto == 0x88BE:       # ERSPAN type II (with a sequence number) or type I
            if flags & 0x1000:
                if end - q < 8:
                    return self._skip("cut by snaplen: ERSPAN header")
                q += 8
            return self.ether(ts, buf, q, end, wend, _add(ctx, "erspan (mirrored)", None))
        if proto == 0x22EB:       # ERSPAN type III, optional platform sub-header
            if end - q < 12:
                return self._skip("cut by snaplen: ERSPAN header")
            q += 12 + (8 if buf[q + 11] & 1 else 0)
            return self.ether(ts, buf, q, end, wend, _add(ctx, "erspan (mirrored)", None))
        ctx = _add(ctx, "gre", over + hl + (14 if proto == 0x6558 else 0))
        if proto == 0x880B:
            return self.ppp(ts, buf, q, end, wend, ctx)
        if proto == 0x883E:       # WCCP redirection: a 4-byte header unless IPv4 follows at once
            if end - q < 4:
                return self._skip("cut by snaplen: WCCP header")
            return self.ipv4(ts, buf, q if buf[q] >> 4 == 4 else q + 4, end, wend, _add(ctx, "wccp", 4))
        return self.ethertype(proto, ts, buf, q, end, wend, ctx)

    def geneve(self, ts, buf, p, end, wend, ctx, over) -> None:
        hl = 8 + (buf[p] & 0x3F) * 4
        if end - p < hl:
            return self._skip("cut by snaplen: GENEVE header")
        proto = _H(buf, p + 2)[0]
        ctx = _add(ctx, "geneve", over + hl + (14 if proto == 0x6558 else 0))
        return self.ethertype(proto, ts, buf, p + hl, end, wend, ctx)

    # ---- TCP -------------------------------------------------------------------------
    def _find(self, key: bytes, addrs, buf, t) -> Tuple[Optional[int], int]:
        """(flow index, 0 if the packet goes the way of the flow's first packet else 1)."""
        f = self.table.get(key)
        if f is not None:
            return f, 0
        half = len(addrs) // 2
        f = self.table.get(addrs[half:] + addrs[:half] + bytes(buf[t + 2:t + 4]) + bytes(buf[t:t + 2]))
        return (f, 1) if f is not None else (None, 0)

    def tcp(self, ts, buf, t, end, addrs, l4len, total, df, ipid, ctx, frag, zero) -> None:
        """One TCP segment: buf[t:end] captured of its l4len bytes; `total` the IP length."""
        if end - t < 16:
            if end - t >= 4:
                f = self._find(addrs + bytes(buf[t:t + 4]), addrs, buf, t)[0]
                if f is not None:     # shown on its connection (frames_cut_in_tcp_header)
                    self.F[f * FW + SHORT] += 1
                    return
            return self._skip("cut by snaplen: TCP header")
        seq, ack, offflags = _TCP(buf, t)
        doff = (offflags >> 12) * 4
        flags = offflags & 0x1FF
        key = addrs + buf[t:t + 4]
        f = self.table.get(key)
        d = 0
        if f is None:
            d = 1
            f = self.answers.get(key)
            if f is None:
                half = len(addrs) // 2
                f = self.table.get(addrs[half:] + addrs[:half] + key[-2:] + key[-4:-2])
                if f is not None:
                    if len(self.answers) >= 65536:
                        self.answers.clear()
                    self.answers[key] = f
        S = self.S
        if doff < 20 or doff > l4len:
            self._skip("malformed header: TCP data offset")
            if f is not None:
                self.F[f * FW + UNDEC] += 1
            return
        if f is None:
            f, d = self._new_flow(key, flags, ts, ctx), 0
        elif flags & 0x12 == SYN:
            b = (2 * f + d) * W
            if S[b + FLAGS] & F_SYN and S[b + ISN] != seq:
                o = (2 * f + (d ^ 1)) * W
                if (S[b + FLAGS] | S[o + FLAGS]) & (F_FIN | F_RST) or ts - self.T[2 * f + 1] > 60:
                    half = len(addrs) // 2
                    rkey = addrs[half:] + addrs[:half] + key[-2:] + key[-4:-2]
                    if d == 1:      # the tuple's old entry is keyed the other way round
                        del self.table[rkey]
                    self.answers.pop(rkey, None)
                    f, d = self._new_flow(key, flags, ts, ctx), 0
        j = 2 * f + d
        b = j * W
        o = (j ^ 1) * W
        F = self.F
        F[f * FW + FRAMES] += 1
        self.T[2 * f + 1] = ts
        S[b + PACKETS] += 1
        if ipid is not None:
            S[b + V4] += 1
            if df:
                S[b + DF] += 1
        payload = l4len - doff
        if flags & SYN:
            if not S[b + FLAGS] & F_SYN:
                S[b + FLAGS] |= F_SYN | F_BASED
                S[b + ISN] = seq
                S[b + BASE] = (seq + 1) & 0xFFFFFFFF
                if ipid is not None:
                    S[b + IPID] = ipid + 1
                self._syn_options(b, buf, t + 20, t + doff, end)
            elif ipid is not None and seq == S[b + ISN]:
                x = self._x(j)
                if len(x.ip_ids) < 8:
                    x.ip_ids.append(ipid)
        elif not S[b + FLAGS] & F_BASED:
            S[b + FLAGS] |= F_BASED
            S[b + BASE] = seq
        if flags & ACK and S[o + FLAGS] & F_BASED:
            a = (ack - S[o + BASE]) & 0xFFFFFFFF
            if S[o + ACKED] < a < 0x80000000:
                S[o + ACKED] = a
        if flags & FIN:
            S[b + FLAGS] |= F_FIN
        if flags & RST:
            S[b + FLAGS] |= F_RST
        if frag is not None:
            S[b + FRAGS] += frag[0]
            S[b + (FLOST if frag[2] else FDGRAMS)] += 1
            S[b + PACKETS] += frag[0] - 1
            F[f * FW + FRAMES] += frag[0] - 1
            if frag[1] > S[b + FRAGIP]:
                S[b + FRAGIP] = frag[1]
        if payload > 0:
            self._data(j, b, o, ts, (seq - S[b + BASE]) & 0xFFFFFFFF, payload, total, frag is None, zero)

    def _x(self, j: int) -> Extra:
        x = self.extra.get(j)
        if x is None:
            x = self.extra[j] = Extra()
        return x

    def _syn_options(self, b: int, buf, p: int, stop: int, end: int) -> None:
        S = self.S
        if self.options_hidden:
            S[b + FLAGS] |= F_OPTS_UNKNOWN
            return
        mss, names, whole = tcp_options(buf, p, min(stop, end))
        if mss is not None:
            S[b + MSS] = mss + 1
        elif stop > end or not whole:
            S[b + FLAGS] |= F_OPTS_UNKNOWN     # the capture stopped inside the options
        i = self._opt_index.get(names)
        if i is None:
            i = self._opt_index[names] = len(self.options)
            self.options.append(names)
        S[b + OPTS] = i

    def _data(self, j, b, o, ts, rel, payload, total, whole, zero) -> None:
        S = self.S
        S[b + DATA] += 1
        self.B[j] += payload
        pm = S[o + MSS] - 1 if S[o + MSS] else None
        if whole and (zero or total > self.mtu) and (pm is None or payload > pm):
            # captured before segmentation (TSO/GSO on send, GRO/LRO on receive): no wire size
            self.offload_frames += 1
            S[b + OFF] += 1
            if payload > S[b + OFFMAX]:
                S[b + OFFMAX] = payload
            if rel < 0x80000000:
                if rel + payload <= S[b + NXT]:
                    S[b + RETRANS] += 1
                else:
                    S[b + NXT] = rel + payload
            return
        if total > S[b + MAXIP]:
            S[b + MAXIP] = total
        if payload > S[b + MAXPAY]:
            S[b + MAXPAY] = payload
            S[b + MAXN] = 1
        elif payload == S[b + MAXPAY]:
            S[b + MAXN] += 1
        if pm is not None and payload > pm:
            S[b + OVER] += 1
            if payload > S[b + OVERMAX]:
                S[b + OVERMAX] = payload
        x = self.extra.get(j)
        if x is not None and x.ptbs and ts >= x.ptbs[0][0]:
            if total <= x.ptbs[0][1]:
                x.after_fit += 1
                if payload > x.after_max:
                    x.after_max = payload
            else:
                x.after_big += 1
        if rel >= 0x80000000:
            return   # before the base (a capture that began mid-connection, reordered)
        stop = rel + payload
        if stop <= S[b + NXT]:
            S[b + RETRANS] += 1
            if payload == S[b + MAXPAY]:
                S[b + RMAX] += 1
                x = self._x(j)
                if x.bh_seq == rel and x.bh_len == payload:
                    x.bh_sends += 1
                elif S[b + ACKED] <= rel and not x.black_hole:
                    x.bh_seq, x.bh_len, x.bh_sends, x.bh_smaller = rel, payload, 2, False
            elif x is not None and x.bh_seq == rel and payload < x.bh_len and x.bh_sends >= 3:
                x.bh_smaller = True
                x.bh_small_ip = total
            if x is not None:
                self._hole_check(x, S[b + ACKED])
        else:
            S[b + NXT] = stop
            if x is not None and x.bh_seq is not None:
                self._hole_check(x, S[b + ACKED])

    @staticmethod
    def _hole_check(x: Extra, acked: int) -> None:
        """The black-hole signature: one max-size segment sent 3+ times, never acked, no PTB,
        then smaller segments (the sender fell back) — or nothing (decided at the end)."""
        if x.black_hole or x.bh_seq is None:
            return
        if acked > x.bh_seq and not x.bh_smaller:
            x.bh_seq = None    # the retransmission got through: loss, not a black hole
            return
        if x.bh_smaller and x.bh_sends >= 3 and not x.ptbs:
            x.black_hole = {"seq": x.bh_seq, "size": x.bh_len, "sends": x.bh_sends, "then": "smaller segments",
                            "smaller_ip_len": x.bh_small_ip}

    def finish(self) -> None:
        """The capture ended: incomplete datagrams are given up, open black holes decided."""
        for r in self.reasm.values():
            r.finish()
        S = self.S
        for j, x in self.extra.items():
            if not x.black_hole and x.bh_seq is not None and x.bh_sends >= 3 and not x.ptbs \
                    and S[j * W + ACKED] <= x.bh_seq:
                x.black_hole = {"seq": x.bh_seq, "size": x.bh_len, "sends": x.bh_sends,
                                "then": "smaller segments" if x.bh_smaller else "dead connection",
                                "smaller_ip_len": x.bh_small_ip or None}

    def _new_flow(self, key: bytes, flags: int, ts: float, ctx) -> int:
        f = len(self.keys)
        self.keys.append(key)
        self.table[key] = f
        self.S.extend(_SIDE_ZERO)
        self.S.extend(_SIDE_ZERO)
        self.B.extend((0, 0))
        self.F.extend(_FLOW_ZERO)
        self.T.extend((ts, ts))
        # the SYN sender is the client; without a SYN seen, the SYN-ACK sender is the server
        self.F[f * FW + CLIENT] = 1 if flags & 0x12 == 0x12 else 0
        if ctx is not None:
            i = self._encap_index.get(ctx)
            if i is None:
                i = self._encap_index[ctx] = len(self.encaps)
                self.encaps.append(ctx)
            self.F[f * FW + ENCAP] = i
        return f

    # ---- ICMP ------------------------------------------------------------------------
    def quoted(self, ts: float, buf, q: int, end: int, mtu: int, reporter: bytes, version: int) -> None:
        """An ICMP error's quoted packet: find the connection whose segment was too big."""
        sport = dport = seq = None
        if version == 4 and end - q >= 20 and buf[q] >> 4 == 4:
            ihl = (buf[q] & 15) * 4
            proto = buf[q + 9]
            qaddrs = bytes(buf[q + 12:q + 20])
            qt = q + ihl
        elif version == 6 and end - q >= 40 and buf[q] >> 4 == 6:
            proto = buf[q + 6]
            qaddrs = bytes(buf[q + 8:q + 40])
            qt = q + 40
            while proto in V6_EXT and qt + 8 <= end:
                proto, qt = buf[qt], qt + (buf[qt + 1] + 1) * 8
        else:
            self.untied_count += 1
            return self._other("ICMP error quoting no readable IP header")
        f = d = None
        if proto == 6 and end - qt >= 8:
            sport, dport, seq = _PORTS_SEQ(buf, qt)
            f, d = self._find(qaddrs + bytes(buf[qt:qt + 4]), qaddrs, buf, qt)
        half = len(qaddrs) // 2
        if f is None:
            self.untied_count += 1
            self.untied_ptbs.append({"ts": ts, "mtu": mtu, "from": addr_text(reporter),
                                     "src": addr_text(qaddrs[:half]), "dst": addr_text(qaddrs[half:]),
                                     "sport": sport, "dport": dport})
            del self.untied_ptbs[:-MAX_PTBS]
            return
        j = 2 * f + d
        b = j * W
        S = self.S
        rel = ((seq - S[b + BASE]) & 0xFFFFFFFF) if S[b + FLAGS] & F_BASED else None
        x = self._x(j)
        if len(x.ptbs) < MAX_PTBS:
            x.ptbs.append((ts, mtu, rel, addr_text(reporter)))


def _add(ctx, name: str, overhead: Optional[int]):
    """The encapsulation context with one more layer; overhead None: a mirror, not a path."""
    if ctx is None:
        return (name,), overhead
    layers, over = ctx
    return layers + (name,), (None if over is None or overhead is None else over + overhead)


def _depth(ctx) -> int:
    return 0 if ctx is None else len(ctx[0])


def _jumbo(buf, p: int, end: int) -> Optional[int]:
    """The Jumbo Payload option (RFC 2675) of a hop-by-hop header at p, or None."""
    if p + 8 > end:
        return None
    stop = min(end, p + (buf[p + 1] + 1) * 8)
    q = p + 2
    while q + 2 <= stop:
        kind = buf[q]
        if kind == 0:
            q += 1
            continue
        ln = buf[q + 1]
        if kind == 0xC2 and ln == 4 and q + 6 <= stop:
            return _I(buf, q + 2)[0]
        q += 2 + ln
    return None
