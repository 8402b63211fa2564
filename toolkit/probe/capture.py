"""One packet capture for every target of a run (AF_PACKET, needs CAP_NET_RAW).

A single thread reads every IP packet the host sends or receives, turns replies to our
probes into `Reply` events for the target's queue, and hands TCP segments of the MSS
check connections to whoever registered the flow. With PACKET_VNET_HDR the kernel tells
us the original segment size of packets that GRO merged on receive, so `used` is the
size the host sent, not what the NIC glued together.
"""
from __future__ import annotations

import queue
import socket
import struct
import threading
from typing import Callable, Dict, Tuple

from toolkit.probe.packets import Packet, classify, parse_ip

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_VNET_HDR = 15
PACKET_OUTGOING = 4
VNET_HDR_LEN = 10
LINK_HEADER = {1: 14, 772: 14, 0xFFFE: 0, 65534: 0, 776: 0, 778: 0, 823: 0}  # ether, loopback, none, sit, gre, ip6gre

FlowKey = Tuple[str, int, int]    # (remote address, remote port, local port)


class Capture:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.vnet = True
        try:
            self.sock.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
        except OSError:
            self.vnet = False
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.settimeout(0.05)
        self.targets: Dict[str, "queue.Queue"] = {}
        self.flows: Dict[FlowKey, Callable[[Packet, bool, int], None]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="mssdiag-capture", daemon=True)
        self.seen = 0

    def __enter__(self) -> "Capture":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        # the reader notices the stop flag within its 50 ms receive timeout and closes the
        # socket itself; nobody needs to wait for that
        self._stop.set()

    def watch(self, address: str) -> "queue.Queue":
        q = self.targets.get(address)
        if q is None:
            q = self.targets[address] = queue.Queue()
        return q

    def follow(self, flow: FlowKey, handler: Callable[[Packet, bool, int], None]) -> None:
        """handler(packet, outgoing, segment_size_hint) for each TCP segment of the flow."""
        self.flows[flow] = handler

    def unfollow(self, flow: FlowKey) -> None:
        self.flows.pop(flow, None)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                data, addr = self.sock.recvfrom(65600 + VNET_HDR_LEN)
            except socket.timeout:
                continue
            except OSError:
                break
            try:
                self._handle(data, addr)
            except Exception:       # a malformed packet must never stop the capture
                continue
        self.sock.close()

    def _handle(self, data: bytes, addr) -> None:
        gso = 0
        if self.vnet:
            gso = struct.unpack_from("<H", data, 4)[0] if data[1] else 0   # gso_type != NONE
            data = data[VNET_HDR_LEN:]
        ethertype, pkttype, hatype = addr[1], addr[2], addr[3]
        if ethertype not in (0x0800, 0x86DD):
            return
        skip = LINK_HEADER.get(hatype)
        if skip is None:
            skip = 0 if data and data[0] >> 4 in (4, 6) else 14
        pkt = parse_ip(data[skip:])
        if pkt is None:
            return
        self.seen += 1
        outgoing = pkttype == PACKET_OUTGOING
        if pkt.proto == 6 and self.flows:
            l4 = pkt.l4
            if len(l4) >= 4:
                sport, dport = struct.unpack("!HH", l4[:4])
                flow = (pkt.dst, dport, sport) if outgoing else (pkt.src, sport, dport)
                handler = self.flows.get(flow)
                if handler is not None:
                    handler(pkt, outgoing, gso)
                    return
        if outgoing:
            return
        reply = classify(pkt)
        if reply is not None:
            q = self.targets.get(reply.target)
            if q is not None:
                q.put(reply)
