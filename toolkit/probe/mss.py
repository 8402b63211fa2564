"""The MSS side: connect with a real kernel socket, get the host talking, and read from
the captured handshake what MSS we sent, what the SYN-ACK carried and the largest
payload the host really sent. Without a capture, TCP_INFO gives what the kernel knows.
"""
from __future__ import annotations

import select
import socket
import struct
import threading
import time
from typing import Dict, Optional

from toolkit.probe.result import mss_info

TCP_INFO = 11
# struct tcp_info offsets (linux/tcp.h)
TI_SND_MSS, TI_RCV_MSS, TI_PMTU, TI_ADVMSS = 16, 20, 60, 84
TCPI_OPT_TIMESTAMPS = 1


def tcp_info(sock: socket.socket) -> Dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
    get = lambda off: struct.unpack_from("I", raw, off)[0]  # noqa: E731
    # once timestamps are agreed the kernel takes their 12 bytes off advmss; add them back
    # to get the value our SYN carried
    ts = 12 if raw[5] & TCPI_OPT_TIMESTAMPS else 0
    return {"snd_mss": get(TI_SND_MSS), "rcv_mss": get(TI_RCV_MSS), "pmtu": get(TI_PMTU),
            "advmss": get(TI_ADVMSS) + ts if get(TI_ADVMSS) else 0}


def _mss_option(l4: bytes) -> Optional[int]:
    from scapy.layers.inet import TCP      # capture dissection; loaded only when capturing
    for name, value in TCP(l4).options:
        if name == "MSS":
            return int(value)
    return None


class MssCheck:
    """One TCP port of one target: connect(), then talk(), then result()."""

    def __init__(self, family: str, address: str, port: int, source: str, capture=None,
                 send_text: Optional[str] = None, timeout: float = 1.0):
        self.family, self.address, self.port = family, address, port
        self.source, self.capture = source, capture
        self.send_text = send_text
        self.timeout = timeout
        self.sock: Optional[socket.socket] = None
        self.info = mss_info(port)
        self.used_options: Optional[int] = None
        self.captured_bytes = 0
        self.received = 0
        self.rtt: Optional[float] = None
        self.error: Optional[str] = None
        self.kernel: Dict[str, int] = {}
        self.syns = 0
        self._lock = threading.Lock()
        self._flow = None

    # called from the capture thread
    def _segment(self, pkt, outgoing: bool, gso: int) -> None:
        l4 = pkt.l4
        if len(l4) < 20:
            return
        flags, doff = l4[13], (l4[12] >> 4) * 4
        with self._lock:
            if flags & 0x02:                      # SYN
                mss = _mss_option(l4[:doff])
                if outgoing and not flags & 0x10:
                    self.info["sent"] = mss
                    self.syns += 1
                elif not outgoing and flags & 0x10:
                    self.info["synack"] = mss
                return
            if outgoing:
                return
            payload = pkt.total - (40 if self.family == "ipv6" else 20) - doff
            if payload <= 0:
                return
            self.captured_bytes += payload
            seg = min(gso, payload) if gso else payload
            if self.info["used"] is None or seg > self.info["used"]:
                self.info["used"] = seg
                self.used_options = doff - 20

    def connect(self) -> bool:
        af = socket.AF_INET6 if self.family == "ipv6" else socket.AF_INET
        s = socket.socket(af, socket.SOCK_STREAM)
        self.sock = s
        try:
            s.bind((self.source, 0))
            lport = s.getsockname()[1]
            if self.capture is not None:
                self._flow = (self.address, self.port, lport)
                self.capture.follow(self._flow, self._segment)
            # room for one SYN retransmission (Linux: after 1 s) on top of the answer timeout
            s.settimeout(self.timeout + 1.5)
            t0 = time.monotonic()
            s.connect((self.address, self.port))
            self.rtt = time.monotonic() - t0
            return True
        except socket.timeout:
            self.error = f"port {self.port}: no answer to the connection within {self.timeout + 1.5:g} s"
        except OSError as exc:
            self.error = f"port {self.port}: {exc.strerror or exc}"
        self.close()
        return False

    def talk(self) -> None:
        """Read what the host says first; if it stays quiet, send the text and read the answer."""
        if self.sock is None or self.error:
            return
        s = self.sock
        quiet = max(0.05, 3 * (self.rtt or 0.0) + 0.03)
        sent_text = False
        deadline = time.monotonic() + 3 * self.timeout + quiet
        last = time.monotonic()
        try:
            s.setblocking(False)
            while time.monotonic() < deadline:
                r, _, _ = select.select([s], [], [], max(0.0, min(quiet - (time.monotonic() - last), deadline - time.monotonic())))
                if r:
                    data = s.recv(65536)
                    if not data:
                        break
                    self.received += len(data)
                    last = time.monotonic()
                    continue
                if time.monotonic() - last < quiet:
                    continue
                if self.send_text and not sent_text:
                    s.sendall(self.send_text.encode().decode("unicode_escape").encode("latin-1"))
                    sent_text = True
                    last = time.monotonic()
                    continue
                break
            self.kernel = tcp_info(s)
        except OSError as exc:
            self.error = f"port {self.port}: {exc.strerror or exc}"
        finally:
            self.close()

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def result(self) -> Dict[str, Optional[int]]:
        """The mss dict; waits a moment for the capture thread to catch up with the socket."""
        if self.capture is not None:
            end = time.monotonic() + 0.3
            while time.monotonic() < end and self.captured_bytes < self.received:
                time.sleep(0.005)
            if self._flow:
                self.capture.unfollow(self._flow)
        with self._lock:
            out = dict(self.info)
        out["used_options"] = self.used_options
        out["bytes"] = self.received
        if self.capture is None and self.kernel:
            # no capture: the kernel's view. advmss is what our SYN advertised; rcv_mss the
            # largest segment it saw (it starts at 536, so it means nothing before data > 536).
            out["sent"] = self.kernel.get("advmss") or None
            if self.received > 536:
                out["used"] = self.kernel.get("rcv_mss") or None
        if self.kernel:
            out["kernel_snd_mss"] = self.kernel.get("snd_mss")
        if self.error:
            out["error"] = self.error
        return out
