"""The MSS side: connect with a real kernel socket, get the host talking, and read from
the captured handshake what MSS we sent, what the SYN-ACK carried and the largest
payload the host really sent. Without a capture, TCP_INFO gives what the kernel knows,
and the TCP options both sides agreed (timestamps take 12 bytes of every segment).

An MssCheck is a small state machine the engine drives from its loop: `start()` (a
non-blocking connect), `on_writable()` when the connection is made, `talk()`,
`on_readable()`, `tick(now)` for its timers, and `result()` once `done`.
"""
from __future__ import annotations

import errno
import os
import socket
import struct
from typing import Dict, List, Optional

from toolkit.probe.reply import mss_option
from toolkit.probe.result import mss_info
from toolkit.probe.route import sockaddr

TCP_INFO = 11
# struct tcp_info offsets (linux/tcp.h)
TI_OPTIONS, TI_SND_MSS, TI_RCV_MSS, TI_PMTU, TI_ADVMSS = 5, 16, 20, 60, 84
TCPI_OPT_TIMESTAMPS, TCPI_OPT_SACK, TCPI_OPT_WSCALE, TCPI_OPT_ECN = 1, 2, 4, 8
TIMESTAMPS_LEN = 12          # the timestamp option with its padding, in every segment once agreed
CATCH_UP = 0.3               # s to wait for the capture to see the bytes the socket read


def agreed_options(bits: int) -> List[str]:
    """tcpi_options as option names, in the words of docs/probe.md."""
    return [name for bit, name in ((TCPI_OPT_TIMESTAMPS, "timestamps"), (TCPI_OPT_SACK, "sack"),
                                   (TCPI_OPT_WSCALE, "window-scale"), (TCPI_OPT_ECN, "ecn")) if bits & bit]


def tcp_info(sock: socket.socket) -> Dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
    get = lambda off: struct.unpack_from("I", raw, off)[0]  # noqa: E731
    # once timestamps are agreed the kernel takes their 12 bytes off advmss; add them back
    # to get the value our SYN carried
    ts = TIMESTAMPS_LEN if raw[TI_OPTIONS] & TCPI_OPT_TIMESTAMPS else 0
    return {"snd_mss": get(TI_SND_MSS), "rcv_mss": get(TI_RCV_MSS), "pmtu": get(TI_PMTU),
            "advmss": get(TI_ADVMSS) + ts if get(TI_ADVMSS) else 0, "options": raw[TI_OPTIONS]}


class MssCheck:
    """One TCP port of one target."""

    def __init__(self, family: str, address: str, port: int, source: str, capture=None,
                 send_text: Optional[str] = None, timeout: float = 1.0):
        self.family, self.address, self.port = family, address, port
        self.source, self.capture = source, capture
        self.send_text = send_text
        self.timeout = timeout
        self.sock: Optional[socket.socket] = None
        self.info = mss_info(port)
        self.used_options: Optional[int] = None
        self.syn_options: Optional[Dict] = None      # our SYN's options (capture)
        self.synack_options: Optional[Dict] = None   # the SYN-ACK's
        self.captured_bytes = 0
        self.received = 0
        self.rtt: Optional[float] = None
        self.error: Optional[str] = None
        self.kernel: Dict[str, int] = {}
        self.syns = 0
        self.state = "new"        # connecting | connected | talking | catching-up | done
        self._flow = None
        self._t0 = 0.0
        self._deadline = 0.0
        self._last = 0.0
        self._quiet = 0.05
        self._sent_text = False
        self.lport: Optional[int] = None
        self.before_close = None          # callable(sock): the engine stops watching it

    # called from the engine's capture reader, with the packet as scapy dissected it
    def _segment(self, pkt, outgoing: bool, payload: int, seg: int) -> None:
        tcp = pkt.payload
        if tcp.flags.S:
            opts = dict(tcp.options)           # scapy's names: MSS, WScale, SAckOK, Timestamp...
            mss = mss_option(tcp)
            if outgoing and not tcp.flags.A:
                self.info["sent"] = mss
                self.syn_options = opts
                self.syns += 1
            elif not outgoing and tcp.flags.A:
                self.info["synack"] = mss
                self.synack_options = opts
            return
        if outgoing or payload <= 0:
            return
        self.captured_bytes += payload
        if self.info["used"] is None or seg > self.info["used"]:
            self.info["used"] = seg
            self.used_options = tcp.dataofs * 4 - 20

    @property
    def done(self) -> bool:
        return self.state == "done"

    def start(self, now: float) -> None:
        """A non-blocking connect; the engine waits for the socket to become writable."""
        af = socket.AF_INET6 if self.family == "ipv6" else socket.AF_INET
        self.state = "connecting"
        try:
            s = socket.socket(af, socket.SOCK_STREAM)
        except OSError as exc:
            self._fail(f"port {self.port}: {exc.strerror or exc}")
            return
        self.sock = s
        try:
            s.bind(sockaddr(self.source, 0))
            self.lport = s.getsockname()[1]
            if self.capture is not None:
                self._flow = (self.address, self.port, self.lport)
                self.capture.follow(self._flow, self._segment)
            s.setblocking(False)
            # room for one SYN retransmission (Linux: after 1 s) on top of the answer timeout
            self._deadline = now + self.timeout + 1.5
            self._t0 = now
            err = s.connect_ex(sockaddr(self.address, self.port))
            if err not in (0, errno.EINPROGRESS):
                self._fail(f"port {self.port}: {errno.errorcode.get(err, err)}", os_errno=err)
        except OSError as exc:
            self._fail(f"port {self.port}: {exc.strerror or exc}")

    def _fail(self, why: str, os_errno: Optional[int] = None) -> None:
        if os_errno is not None:
            why = f"port {self.port}: {os.strerror(os_errno)}"
        self.error = why
        self.close()
        self.state = "done"

    def on_writable(self, now: float) -> None:
        if self.state != "connecting" or self.sock is None:
            return
        err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self._fail("", os_errno=err)
            return
        self.rtt = now - self._t0
        self.state = "connected"

    def talk(self, now: float) -> None:
        """Read what the host says first; if it stays quiet, send the text and read the answer."""
        if self.state != "connected":
            return
        self.state = "talking"
        self._quiet = max(0.05, 3 * (self.rtt or 0.0) + 0.03)
        self._deadline = now + 3 * self.timeout + self._quiet
        self._last = now

    def on_readable(self, now: float) -> None:
        if self.state != "talking" or self.sock is None:
            return
        while True:
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self.error = f"port {self.port}: {exc.strerror or exc}"
                self._finish(now)
                return
            if not data:
                self._finish(now)
                return
            self.received += len(data)
            self._last = now

    def tick(self, now: float) -> Optional[float]:
        """Timers: returns when to be called again (None: nothing pending)."""
        if self.state == "connecting":
            if now >= self._deadline:
                self._fail(f"port {self.port}: no answer to the connection within {self.timeout + 1.5:g} s")
                return None
            return self._deadline
        if self.state == "talking":
            if now >= self._deadline:
                self._finish(now)
                return self.tick(now)
            if now - self._last < self._quiet:
                return min(self._deadline, self._last + self._quiet)
            if self.send_text and not self._sent_text:
                try:
                    self.sock.send(self.send_text.encode().decode("unicode_escape").encode("latin-1"))
                except OSError as exc:
                    self.error = f"port {self.port}: {exc.strerror or exc}"
                    self._finish(now)
                    return self.tick(now)
                self._sent_text = True
                self._last = now
                return now + self._quiet
            self._finish(now)
            return self.tick(now)
        if self.state == "catching-up":
            if self.capture is None or self.captured_bytes >= self.received or now >= self._deadline:
                if self._flow:
                    self.capture.unfollow(self._flow)
                self.state = "done"
                return None
            return min(self._deadline, now + 0.005)
        return None

    def _finish(self, now: float) -> None:
        if self.sock is not None:
            try:
                self.kernel = tcp_info(self.sock)
            except OSError as exc:
                self.error = self.error or f"port {self.port}: {exc.strerror or exc}"
        self.close()
        self.state = "catching-up"
        self._deadline = now + CATCH_UP

    def close(self) -> None:
        if self.sock is not None:
            if self.before_close is not None:
                self.before_close(self.sock)
            try:
                self.sock.close()
            finally:
                self.sock = None

    def abandon(self) -> None:
        self.close()
        if self._flow and self.capture is not None:
            self.capture.unfollow(self._flow)
        self.state = "done"

    def negotiated(self) -> Optional[List[str]]:
        """The TCP options both sides agreed on: from the captured SYN and SYN-ACK, else TCP_INFO."""
        if self.syn_options is not None and self.synack_options is not None:
            both = [("Timestamp", "timestamps"), ("SAckOK", "sack"), ("WScale", "window-scale")]
            return [name for opt, name in both if opt in self.syn_options and opt in self.synack_options]
        if "options" in self.kernel:
            return agreed_options(self.kernel["options"])
        return None

    def result(self) -> Dict[str, Optional[int]]:
        out = dict(self.info)
        out["used_options"] = self.used_options
        out["bytes"] = self.received
        if self.capture is None and self.kernel:
            # no capture: the kernel's view. advmss is what our SYN advertised; rcv_mss the
            # largest segment it saw (it starts at 536, so it means nothing before data > 536),
            # as payload: the agreed options (timestamps: 12 bytes) ride in every segment
            out["sent"] = self.kernel.get("advmss") or None
            if self.received > 536:
                out["used"] = self.kernel.get("rcv_mss") or None
                if out["used"] is not None:
                    out["used_options"] = TIMESTAMPS_LEN if self.kernel.get("options", 0) & TCPI_OPT_TIMESTAMPS else 0
        options = self.negotiated()
        if options is not None:
            out["options"] = options
        if self.kernel:
            out["kernel_snd_mss"] = self.kernel.get("snd_mss")
        if self.error:
            out["error"] = self.error
        return out
