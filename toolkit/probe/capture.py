"""One packet capture for every target of a run (AF_PACKET, needs CAP_NET_RAW).

The engine reads it (non-blocking, from its own loop); scapy dissects each packet:
replies to our probes become `Reply` events for the target's handler, TCP segments of
followed connections (the MSS check) go to whoever registered the flow. Every packet
carries the kernel's receive timestamp (SO_TIMESTAMPNS, the time.time() clock), so
round-trip times do not depend on how busy Python is. A BPF filter in the kernel passes only what the prober reads:
incoming ICMP, ICMPv6 and TCP, and our own outgoing SYNs. With PACKET_VNET_HDR the
kernel tells us the original segment size of packets that GRO merged on receive, so
`used` is the size the host sent, not what the NIC glued together.
"""
from __future__ import annotations

import array
import socket
import struct
from typing import Callable, Dict, Tuple

from scapy.layers.inet import TCP
from scapy.utils6 import in6_islladdr

from toolkit.probe.packets import classify, dissect, tcp_payload
from toolkit.probe.reply import Reply

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_VNET_HDR = 15
PACKET_OUTGOING = 4
VNET_HDR_LEN = 10
SO_TIMESTAMPNS = 35
SO_RCVBUFFORCE = 33
SO_ATTACH_FILTER = 26

LINK_HEADER = {1: 14, 772: 14, 0xFFFE: 0, 65534: 0, 776: 0, 778: 0, 823: 0}  # ether, loopback, none, sit, gre, ip6gre

FlowKey = Tuple[str, int, int]    # (remote address, remote port, local port)


def _bpf() -> bytes:
    """Classic BPF, offsets from the network header (SKF_NET_OFF, whatever the link layer):
    incoming ICMP, ICMPv6 and TCP; outgoing TCP SYNs (the MSS our connections advertise);
    nothing else."""
    LD_W, LD_B, LD_IND_B, TAX = 0x20, 0x30, 0x50, 0x07
    JEQ, AND, LSH, RET = 0x15, 0x54, 0x64, 0x06
    NET = 0x100000000 - 0x100000                 # SKF_NET_OFF as an unsigned 32-bit k
    PKTTYPE = 0x100000000 - 0x1000 + 4           # SKF_AD_OFF + SKF_AD_PKTTYPE
    prog = [  # (label, op, jump-if-true label, jump-if-false label, k); labels resolved below
        ("", LD_W, None, None, PKTTYPE),
        ("", JEQ, "out", None, PACKET_OUTGOING),
        ("", LD_B, None, None, NET + 0), ("", AND, None, None, 0xf0),
        ("", JEQ, "in4", None, 0x40), ("", JEQ, "in6", "drop", 0x60),
        ("in4", LD_B, None, None, NET + 9), ("", JEQ, "accept", None, 1), ("", JEQ, "accept", "drop", 6),
        ("in6", LD_B, None, None, NET + 6), ("", JEQ, "accept", None, 58), ("", JEQ, "accept", "drop", 6),
        ("out", LD_B, None, None, NET + 0), ("", AND, None, None, 0xf0),
        ("", JEQ, "out4", None, 0x40), ("", JEQ, "out6", "drop", 0x60),
        ("out4", LD_B, None, None, NET + 9), ("", JEQ, None, "drop", 6),
        ("", LD_B, None, None, NET + 0), ("", AND, None, None, 0x0f), ("", LSH, None, None, 2), ("", TAX, None, None, 0),
        ("", LD_IND_B, None, None, NET + 13), ("", AND, None, None, 0x02), ("", JEQ, "accept", "drop", 0x02),
        ("out6", LD_B, None, None, NET + 6), ("", JEQ, None, "drop", 6), ("", LD_B, None, None, NET + 53),
        ("", AND, None, None, 0x02), ("", JEQ, "accept", "drop", 0x02),
        ("accept", RET, None, None, 262144),
        ("drop", RET, None, None, 0),
    ]
    where = {label: i for i, (label, *_r) in enumerate(prog) if label}
    out = b""
    for i, (_label, op, jt, jf, k) in enumerate(prog):
        t = where[jt] - i - 1 if jt else 0
        f = where[jf] - i - 1 if jf else 0
        out += struct.pack("=HBBI", op, t, f, k)
    return out


_FILTER = _bpf()


class Capture:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        try:
            # struct sock_fprog points at the program: an array's buffer has a fixed address
            # (and array, unlike ctypes, is already loaded: socket imports it)
            prog = array.array("B", _FILTER)
            fprog = struct.pack("HL", len(_FILTER) // 8, prog.buffer_info()[0])
            self.sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
            self._prog = prog                     # the kernel copied it; keep it anyway
            self.filtered = True
        except OSError:
            self.filtered = False
        self.vnet = True
        try:
            self.sock.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
        except OSError:
            self.vnet = False
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.setblocking(False)
        self.targets: Dict[str, Callable[[Reply], None]] = {}
        self.flows: Dict[FlowKey, Callable] = {}
        self.seen = 0
        self._anc = socket.CMSG_SPACE(16)

    def fileno(self) -> int:
        return self.sock.fileno()

    def watch(self, address: str, handler: Callable[[Reply], None]) -> None:
        self.targets[address] = handler

    def unwatch(self, address: str) -> None:
        self.targets.pop(address, None)

    def follow(self, flow: FlowKey, handler: Callable) -> None:
        """handler(packet, outgoing, payload, segment) for each TCP segment of the flow: scapy's
        packet (`time` is the kernel's receive time), the bytes of data it carries, and the
        size of the segments the sender made of them (smaller when GRO merged several)."""
        self.flows[flow] = handler

    def unfollow(self, flow: FlowKey) -> None:
        self.flows.pop(flow, None)

    def drain(self) -> int:
        """Read every packet waiting in the socket (never blocks); returns how many."""
        n = 0
        recvmsg = self.sock.recvmsg
        while True:
            try:
                data, anc, _flags, addr = recvmsg(65600 + VNET_HDR_LEN, self._anc)
            except (BlockingIOError, InterruptedError):
                return n
            except OSError:
                return n
            n += 1
            at = None
            for level, kind, cdata in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= 16:
                    sec, nsec = struct.unpack_from("=qq", cdata)
                    at = sec + nsec * 1e-9
            try:
                self._handle(data, addr, at)
            except Exception:       # a malformed packet must never stop the capture
                continue

    def close(self) -> None:
        self.sock.close()

    def _handle(self, data: bytes, addr, at) -> None:
        gso = 0
        if self.vnet:
            gso = struct.unpack_from("<H", data, 4)[0] if data[1] else 0   # gso_type != NONE
            data = data[VNET_HDR_LEN:]
        if addr[1] not in (0x0800, 0x86DD):
            return
        skip = LINK_HEADER.get(addr[3])
        if skip is None:
            skip = 0 if data and data[0] >> 4 in (4, 6) else 14
        pkt = dissect(data[skip:] if skip else data, addr[1])
        self.seen += 1
        outgoing = addr[2] == PACKET_OUTGOING
        tcp = pkt.payload
        if self.flows and type(tcp) is TCP:
            flow = (self._named(pkt.dst, addr), tcp.dport, tcp.sport) if outgoing else \
                (self._named(pkt.src, addr), tcp.sport, tcp.dport)
            handler = self.flows.get(flow)
            if handler is not None:
                pkt.time = at
                payload = tcp_payload(pkt)
                handler(pkt, outgoing, payload, min(gso, payload) if gso else payload)
                return
        if outgoing:
            return
        reply = classify(pkt)
        if reply is not None:
            reply.target = self._named(reply.target, addr)
            handler = self.targets.get(reply.target)
            if handler is not None:
                reply.at = at
                handler(reply)

    @staticmethod
    def _named(address: str, addr) -> str:
        """A link-local address with the zone of the interface the packet passed (fe80::1%eth0),
        as the target was given: the same address on two links is two hosts."""
        return f"{address}%{addr[0]}" if ":" in address and in6_islladdr(address) else address
