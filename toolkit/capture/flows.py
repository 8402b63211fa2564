"""Frames to per-connection records: the hot path (one call per frame, `struct` only).

Link layers: Ethernet with any stack of 802.1Q / 802.1ad tags, Linux cooked SLL and
SLL2, raw IPv4/IPv6, BSD and OpenBSD loopback. IPv6 extension headers are walked,
the Fragment header included. Sizes come from the IP header (total length / payload
length), never from the captured length, so snaplen-truncated captures measure right.

A connection is keyed by its 4-tuple; a new SYN with another ISN on a finished tuple
starts a new one. ICMP "fragmentation needed" and ICMPv6 Packet Too Big are tied to
their connection through the quoted header. Fragments are tied through the first
fragment's ports; the segment size of a fragmented datagram counts once all its
fragments were seen.
"""
from __future__ import annotations

import ipaddress
import struct
from typing import Dict, List, Optional, Tuple

from toolkit.capture.formats import ETHERNET, IPV4, IPV6, LOOP, NULL, RAW, RAW12, RAW14, SLL, SLL2

_H = struct.Struct("!H").unpack_from
_ETH_TYPE = struct.Struct("!H").unpack_from
_V4 = struct.Struct("!BBHHHBB").unpack_from          # ver/ihl, tos, len, id, frag, ttl, proto
_TCP = struct.Struct("!HHIIHH").unpack_from           # ports, seq, ack, off/flags, window
_PORTS_SEQ = struct.Struct("!HHI").unpack_from
_I = struct.Struct("!I").unpack_from
V6_EXT = {0, 43, 60, 135, 139, 140, 253, 254}
NULL_AF = {2: 4, 10: 6, 24: 6, 28: 6, 30: 6}
MAX_PTBS = 16
SYN, ACK, FIN, RST = 0x02, 0x10, 0x01, 0x04


def addr_text(raw: bytes) -> str:
    return str(ipaddress.ip_address(raw))


class Side:
    """One direction of a connection: what this endpoint advertised and sent."""
    __slots__ = ("addr", "port", "syn", "isn", "mss", "options", "base", "nxt", "acked", "packets", "data_packets",
                 "bytes", "max_payload", "max_ip", "v4", "df", "fragments", "frag_datagrams", "over_mss",
                 "over_mss_max", "offload", "offload_max", "retrans", "retrans_max", "ptbs", "after_fit",
                 "after_big", "after_max", "small_full", "bh_seq", "bh_len", "bh_sends", "bh_smaller",
                 "black_hole", "bh_small_ip", "frag_ip", "fin", "rst", "ip_ids", "first_ts", "last_ts")

    def __init__(self, addr: bytes, port: int):
        self.addr, self.port = addr, port
        self.syn = False
        self.isn = self.mss = self.base = None
        self.options: List[str] = []
        self.nxt = self.acked = 0
        self.packets = self.data_packets = self.bytes = self.max_payload = self.max_ip = 0
        self.v4 = self.df = self.fragments = self.frag_datagrams = 0
        self.over_mss = self.over_mss_max = self.offload = self.offload_max = 0
        self.retrans = self.retrans_max = 0
        self.ptbs: List[Tuple[float, int, Optional[int]]] = []
        self.after_fit = self.after_big = self.after_max = 0
        self.small_full = 0
        self.bh_seq = None
        self.bh_len = self.bh_sends = 0
        self.bh_smaller = False
        self.black_hole: Optional[dict] = None
        self.bh_small_ip = self.frag_ip = 0
        self.fin = self.rst = False
        self.ip_ids: List[int] = []   # IP IDs of the SYN(s), for matching across captures
        self.first_ts = self.last_ts = 0.0


class Flow:
    __slots__ = ("id", "family", "client", "server", "source", "first_ts", "last_ts", "frames", "captured_short")

    def __init__(self, fid: int, family: str, client: Side, server: Side, source: str, ts: float):
        self.id, self.family, self.client, self.server = fid, family, client, server
        self.source = source
        self.first_ts = self.last_ts = ts
        self.frames = 0
        self.captured_short = 0   # frames whose capture stopped inside the TCP header (snaplen)

    def sides(self):
        return (self.client, self.server), (self.server, self.client)


class Analyzer:
    """Feed frames with frame(); flows, fragments and untied ICMP accumulate."""

    def __init__(self, mtu: int = 1500, source: str = ""):
        self.mtu = mtu
        self.source = source
        self.table: Dict[tuple, tuple] = {}       # (src, sport, dst, dport) -> (flow, sender, receiver)
        self.flows: List[Flow] = []
        self.frames = self.ip_packets = self.tcp_packets = self.other = 0
        self.frag_table: Dict[tuple, list] = {}    # (src, dst, id) -> [side, seen, end, tcp_hdr_len]
        self.loose_fragments: Dict[tuple, list] = {}   # (src, dst, proto) -> [fragments, datagrams, df_off]
        self.untied_ptbs: List[dict] = []
        self.icmp_ptbs = 0
        self.undecoded: Dict[str, int] = {}

    # ---- link layer --------------------------------------------------------------
    def frame(self, ts: float, link: int, buf, p: int, end: int, wire: int = 0, iface: int = 0) -> None:
        self.frames += 1
        if link == ETHERNET:
            if end - p < 14:
                return self._skip("short link header")
            et = _ETH_TYPE(buf, p + 12)[0]
            if et == 0x0800:
                return self.ipv4(ts, buf, p + 14, end)
            p += 14
            while et in (0x8100, 0x88A8, 0x9100) and p + 4 <= end:
                et = _ETH_TYPE(buf, p + 2)[0]
                p += 4
        elif link == SLL2:
            if end - p < 20:
                return self._skip("short link header")
            et = _ETH_TYPE(buf, p)[0]
            p += 20
        elif link == SLL:
            if end - p < 16:
                return self._skip("short link header")
            et = _ETH_TYPE(buf, p + 14)[0]
            p += 16
        elif link in (RAW, RAW12, RAW14, IPV4, IPV6):
            if p >= end:
                return self._skip("empty frame")
            v = buf[p] >> 4
            et = 0x0800 if v == 4 else 0x86DD if v == 6 else 0
        elif link in (NULL, LOOP):
            if end - p < 4:
                return self._skip("short link header")
            raw = bytes(buf[p:p + 4])
            af = struct.unpack("!I" if link == LOOP else ("<I" if raw[0] else ">I"), raw)[0]
            v = NULL_AF.get(af, 0)
            et = 0x0800 if v == 4 else 0x86DD if v == 6 else 0
            p += 4
        else:
            return self._skip(f"link type {link} not read")
        if et == 0x0800:
            self.ipv4(ts, buf, p, end)
        elif et == 0x86DD:
            self.ipv6(ts, buf, p, end)
        else:
            self.other += 1

    def _skip(self, why: str) -> None:
        self.undecoded[why] = self.undecoded.get(why, 0) + 1

    # ---- IP --------------------------------------------------------------------------
    def ipv4(self, ts: float, buf, p: int, end: int) -> None:
        if end - p < 20:
            return self._skip("IPv4 header cut short")
        vihl, _, total, ipid, frag, _, proto = _V4(buf, p)
        ihl = (vihl & 15) * 4
        if ihl < 20 or total < ihl:
            return self._skip("bad IPv4 header")
        self.ip_packets += 1
        src = buf[p + 12:p + 16]     # buf is bytes: a slice is bytes already
        dst = buf[p + 16:p + 20]
        t = p + ihl
        df = frag & 0x4000
        if frag & 0x3FFF:   # MF or an offset: a fragment
            return self.fragment(ts, buf, t, end, src, dst, ipid, proto, (frag & 0x1FFF) * 8, frag & 0x2000,
                                 total - ihl, total, df, True)
        if proto == 6:
            return self.tcp(ts, buf, t, end, src, dst, total - ihl, total, df, True, ipid)
        if proto == 1 and end - t >= 8 and buf[t] == 3 and buf[t + 1] == 4:
            self.icmp_ptbs += 1
            mtu = _H(buf, t + 6)[0]
            return self.quoted(ts, buf, t + 8, end, mtu, src, 4)

    def ipv6(self, ts: float, buf, p: int, end: int) -> None:
        if end - p < 40:
            return self._skip("IPv6 header cut short")
        plen = _H(buf, p + 4)[0]
        nh = buf[p + 6]
        src = buf[p + 8:p + 24]
        dst = buf[p + 24:p + 40]
        self.ip_packets += 1
        t = p + 40
        total = 40 + plen
        while nh in V6_EXT or nh == 44 or nh == 51:
            if t + 8 > end:
                return self._skip("IPv6 extension headers cut short")
            if nh == 44:
                fo = _H(buf, t + 2)[0]
                ipid = _I(buf, t + 4)[0]
                nxt = buf[t]
                t += 8
                return self.fragment(ts, buf, t, end, src, dst, ipid, nxt, fo & 0xFFF8, fo & 1,
                                     total - (t - p), total, 0, False)
            nxt = buf[t]
            t += (buf[t + 1] + 2) * 4 if nh == 51 else (buf[t + 1] + 1) * 8
            nh = nxt
        if nh == 6:
            return self.tcp(ts, buf, t, end, src, dst, total - (t - p), total, 0, False, None)
        if nh == 58 and end - t >= 8 and buf[t] == 2:
            self.icmp_ptbs += 1
            return self.quoted(ts, buf, t + 8, end, _I(buf, t + 4)[0], src, 6)

    # ---- TCP -------------------------------------------------------------------------
    def tcp(self, ts: float, buf, t: int, end: int, src: bytes, dst: bytes, l4len: int, total: int, df: int,
            v4: bool, ipid: Optional[int]) -> None:
        self.tcp_packets += 1
        if end - t < 16:
            if end - t >= 4:
                sport, dport = struct.unpack_from("!HH", buf, t)
                entry = self.table.get((src, sport, dst, dport))
                if entry:
                    entry[0].captured_short += 1
            return self._skip("TCP header cut short (snaplen)")
        sport, dport, seq, ack, offflags, _ = _TCP(buf, t)
        flags = offflags & 0x1FF
        key = (src, sport, dst, dport)
        entry = self.table.get(key)
        if entry is None or (flags & 0x12 == SYN and entry[1].syn and entry[1].isn != seq
                             and (entry[1].fin or entry[1].rst or entry[2].fin or entry[2].rst
                                  or ts - entry[0].last_ts > 60)):
            entry = self._new_flow(key, flags, ts, v4)
        flow, me, peer = entry
        flow.frames += 1
        flow.last_ts = ts
        me.last_ts = ts
        me.packets += 1
        if v4:
            me.v4 += 1
            if df:
                me.df += 1
        doff = (offflags >> 12) * 4
        payload = l4len - doff
        if flags & SYN:
            if not me.syn:
                me.syn = True
                me.isn = seq
                me.base = (seq + 1) & 0xFFFFFFFF
                if ipid is not None:
                    me.ip_ids.append(ipid)
                self._options(me, buf, t + 20, min(t + doff, end))
            elif ipid is not None and seq == me.isn and len(me.ip_ids) < 8:
                me.ip_ids.append(ipid)
        elif me.base is None:
            me.base = seq
        if flags & ACK and peer.base is not None:
            a = (ack - peer.base) & 0xFFFFFFFF
            if peer.acked < a < 0x80000000:
                peer.acked = a
        if flags & FIN:
            me.fin = True
        if flags & RST:
            me.rst = True
        if payload > 0:
            self._data(me, peer, ts, (seq - me.base) & 0xFFFFFFFF, payload, total)

    def _data(self, me: Side, peer: Side, ts: float, rel: int, payload: int, total: int) -> None:
        me.data_packets += 1
        me.bytes += payload
        if total > me.max_ip:
            me.max_ip = total
        if payload > me.max_payload:
            me.max_payload = payload
        elif payload == me.max_payload and payload <= 536:
            me.small_full += 1
        pm = peer.mss
        if pm is not None and payload > pm:
            if total > self.mtu:
                me.offload += 1
                if payload > me.offload_max:
                    me.offload_max = payload
            else:
                me.over_mss += 1
                if payload > me.over_mss_max:
                    me.over_mss_max = payload
        if me.ptbs and ts >= me.ptbs[0][0] and total <= self.mtu:
            if total <= me.ptbs[0][1]:
                me.after_fit += 1
                if payload > me.after_max:
                    me.after_max = payload
            else:
                me.after_big += 1
        if rel >= 0x80000000:
            return   # before the base (a capture that began mid-connection, reordered)
        stop = rel + payload
        if stop <= me.nxt:
            me.retrans += 1
            if payload == me.max_payload:
                me.retrans_max += 1
                if me.bh_seq == rel and me.bh_len == payload:
                    me.bh_sends += 1
                elif me.acked <= rel and not me.black_hole:
                    me.bh_seq, me.bh_len, me.bh_sends, me.bh_smaller = rel, payload, 2, False
            elif me.bh_seq == rel and payload < me.bh_len and me.bh_sends >= 3:
                me.bh_smaller = True
                me.bh_small_ip = total
            self._hole_check(me, peer)
        else:
            me.nxt = stop
            if me.bh_seq is not None:
                self._hole_check(me, peer)

    def _hole_check(self, me: Side, peer: Side) -> None:
        """The black-hole signature: one max-size segment sent 3+ times, never acked, no PTB,
        then smaller segments (the sender fell back) — or nothing (decided at the end)."""
        if me.black_hole or me.bh_seq is None:
            return
        if me.acked > me.bh_seq and not me.bh_smaller:
            me.bh_seq = None    # the retransmission got through: loss, not a black hole
            return
        if me.bh_smaller and me.bh_sends >= 3 and not me.ptbs:
            me.black_hole = {"seq": me.bh_seq, "size": me.bh_len, "sends": me.bh_sends, "then": "smaller segments",
                             "smaller_ip_len": me.bh_small_ip}

    def finish_holes(self) -> None:
        for flow in self.flows:
            for me, peer in flow.sides():
                if not me.black_hole and me.bh_seq is not None and me.bh_sends >= 3 and not me.ptbs \
                        and me.acked <= me.bh_seq:
                    me.black_hole = {"seq": me.bh_seq, "size": me.bh_len, "sends": me.bh_sends,
                                     "then": "smaller segments" if me.bh_smaller else "dead connection",
                                     "smaller_ip_len": me.bh_small_ip or None}

    def _options(self, me: Side, buf, p: int, end: int) -> None:
        names = []
        while p < end:
            kind = buf[p]
            if kind == 0:
                break
            if kind == 1:
                p += 1
                continue
            if p + 1 >= end:
                break
            ln = buf[p + 1]
            if ln < 2:
                break
            if kind == 2 and ln == 4 and p + 4 <= end:
                me.mss = _H(buf, p + 2)[0]
                names.append("mss")
            else:
                names.append({3: "wscale", 4: "sackok", 5: "sack", 8: "ts", 30: "mptcp", 34: "tfo"}.get(kind, str(kind)))
            p += ln
        me.options = names

    def _new_flow(self, key: tuple, flags: int, ts: float, v4: bool) -> tuple:
        src, sport, dst, dport = key
        old = self.table.get(key)
        if old is not None:      # the same 4-tuple used again: the old record stays as it is
            self.table.pop((dst, dport, src, sport), None)
        a, b = Side(src, sport), Side(dst, dport)
        a.first_ts = b.first_ts = ts
        # the SYN sender is the client; without a SYN seen, the SYN-ACK sender is the server
        if flags & 0x12 == 0x12:
            client, server = b, a
        else:
            client, server = a, b
        flow = Flow(len(self.flows) + 1, "ipv4" if v4 else "ipv6", client, server, self.source, ts)
        self.flows.append(flow)
        e1, e2 = (flow, a, b), (flow, b, a)
        self.table[key] = e1
        self.table[(dst, dport, src, sport)] = e2
        return e1

    # ---- fragments ---------------------------------------------------------------------
    def fragment(self, ts, buf, t, end, src, dst, ipid, proto, offset, more, fraglen, total, df, v4) -> None:
        key = (src, dst, ipid)
        st = self.frag_table.get(key)
        if st is None:   # [connection entry, bytes seen, datagram end, TCP header length, fragments]
            st = self.frag_table[key] = [None, 0, None, None, 0]
            if len(self.frag_table) > 4096:   # datagrams that never complete must not pile up
                self.frag_table.pop(next(iter(self.frag_table)))
        st[1] += fraglen
        st[4] += 1
        if not more:
            st[2] = offset + fraglen
        entry = st[0]
        if offset == 0 and proto == 6 and end - t >= 14:
            sport, dport = struct.unpack_from("!HH", buf, t)
            entry = self.table.get((src, sport, dst, dport))
            if entry is None:
                entry = self._new_flow((src, sport, dst, dport), buf[t + 13] & 0x1FF, ts, v4)
            st[0] = entry
            st[3] = (buf[t + 12] >> 4) * 4
            me = entry[1]
            me.frag_ip = max(me.frag_ip, total)
            me.frag_datagrams += 1
            me.fragments += st[4]      # this one and any seen before it
            me.packets += st[4]
            if v4:
                me.v4 += st[4]
            entry[0].frames += st[4]
        elif entry is not None:
            me = entry[1]
            me.frag_ip = max(me.frag_ip, total)
            me.fragments += 1
            me.packets += 1
            if v4:
                me.v4 += 1
            entry[0].frames += 1
        else:
            lk = (src, dst, proto)
            lf = self.loose_fragments.get(lk)
            if lf is None:
                lf = self.loose_fragments[lk] = [0, 0, "ipv4" if v4 else "ipv6", 0, 0]
            lf[0] += 1
            lf[3] = max(lf[3], total)
            if df:
                lf[4] += 1
            if offset == 0:
                lf[1] += 1
        if st[2] is not None and st[1] >= st[2]:
            del self.frag_table[key]
            if entry is not None and st[3] is not None:
                me, peer = entry[1], entry[2]
                payload = st[2] - st[3]
                if payload > 0:
                    me.data_packets += 1
                    me.bytes += payload
                    if payload > me.max_payload:
                        me.max_payload = payload
                    if peer.mss is not None and payload > peer.mss:
                        me.over_mss += 1
                        me.over_mss_max = max(me.over_mss_max, payload)

    # ---- ICMP ------------------------------------------------------------------------
    def quoted(self, ts: float, buf, q: int, end: int, mtu: int, reporter: bytes, version: int) -> None:
        """An ICMP error's quoted packet: find the connection whose segment was too big."""
        sport = dport = seq = None
        if version == 4 and end - q >= 20 and buf[q] >> 4 == 4:
            ihl = (buf[q] & 15) * 4
            proto = buf[q + 9]
            qsrc, qdst = bytes(buf[q + 12:q + 16]), bytes(buf[q + 16:q + 20])
            qt = q + ihl
        elif version == 6 and end - q >= 40 and buf[q] >> 4 == 6:
            proto = buf[q + 6]
            qsrc, qdst = bytes(buf[q + 8:q + 24]), bytes(buf[q + 24:q + 40])
            qt = q + 40
            while proto in V6_EXT and qt + 8 <= end:
                proto, qt = buf[qt], qt + (buf[qt + 1] + 1) * 8
        else:
            return self._skip("ICMP error quotes no readable IP header")
        if proto == 6 and end - qt >= 8:
            sport, dport, seq = _PORTS_SEQ(buf, qt)
        entry = self.table.get((qsrc, sport, qdst, dport)) if sport is not None else None
        if entry is None:
            self.untied_ptbs.append({"ts": ts, "mtu": mtu, "from": addr_text(reporter), "src": addr_text(qsrc),
                                     "dst": addr_text(qdst), "sport": sport, "dport": dport})
            del self.untied_ptbs[:-MAX_PTBS]
            return
        me = entry[1]
        rel = ((seq - me.base) & 0xFFFFFFFF) if me.base is not None else None
        if len(me.ptbs) < MAX_PTBS:
            me.ptbs.append((ts, mtu, rel, addr_text(reporter)))
