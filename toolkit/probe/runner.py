"""Probe many targets at once: one capture, one pace for all, one ProbeResult each.

For each target: resolve, ask the kernel for the route (source, interface MTU, any
cached path MTU), open the MSS check connections first (so our SYNs advertise the
interface's MSS, before our own probes teach the kernel a smaller path MTU), run the
path MTU search while the host talks, then draw the findings.
"""
from __future__ import annotations

import importlib
import ipaddress
import queue
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Sequence

from toolkit.probe import findings, sockets as so
from toolkit.probe.mss import MssCheck
from toolkit.probe.pmtu import ICMP_WAIT, Interrupted, Search
from toolkit.probe.result import ProbeResult
from toolkit.probe.route import lookup

DEFAULT_RATE = 100.0     # probes per second, all targets together
DEFAULT_TIMEOUT = 1.0


class ProbeError(Exception):
    """A target could not be probed at all; the message names it."""


@dataclass
class Options:
    ports: Sequence[int] = ()
    family: Optional[str] = None         # force "ipv4" / "ipv6"
    rate: float = DEFAULT_RATE
    timeout: float = DEFAULT_TIMEOUT
    send_text: Optional[str] = None
    raw: Optional[bool] = None           # None: use raw sockets when permitted
    workers: int = 32
    icmp_wait: float = ICMP_WAIT         # s of silence before a black hole is called


class Pace:
    """Token bucket shared by every target: `rate` probes a second, bursts of `burst`."""

    def __init__(self, rate: float, burst: int = 10):
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.last = time.monotonic()
        self.lock = threading.Lock()

    def wait(self) -> None:
        while True:
            with self.lock:
                now = time.monotonic()
                self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
                self.last = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                need = (1 - self.tokens) / self.rate
            time.sleep(need)


class RawSender:
    """Raw IP sockets that send the scapy-built probes as they are (header included)."""

    def __init__(self, pace: Pace):
        self.pace = pace
        self.socks = {}
        self.lock = threading.Lock()

    def sock(self, family: str) -> socket.socket:
        with self.lock:
            s = self.socks.get(family)
            if s is None:
                af = socket.AF_INET6 if family == "ipv6" else socket.AF_INET
                s = self.socks[family] = socket.socket(af, socket.SOCK_RAW, socket.IPPROTO_RAW)
                # PMTUDISC_PROBE: DF, and sized against the interface, not the kernel's
                # cached path MTU for the target (which would refuse big probes locally)
                if family == "ipv6":
                    s.setsockopt(socket.IPPROTO_IPV6, so.IPV6_MTU_DISCOVER, so.IPV6_PMTUDISC_PROBE)
                else:
                    s.setsockopt(socket.IPPROTO_IP, so.IP_MTU_DISCOVER, so.IP_PMTUDISC_PROBE)
            return s

    def sender(self, family: str, src: str, dst: str, port: Optional[int]) -> Callable:
        from toolkit.probe.packets import build
        s = self.sock(family)

        def send(method: str, size: int, key: int, ttl: int) -> None:
            data = build(family, method, src, dst, size, key, ttl, port)
            self.pace.wait()
            s.sendto(data, (dst, 0))
        return send

    def close(self) -> None:
        for s in self.socks.values():
            s.close()


def raw_allowed() -> Optional[str]:
    """None when raw sockets and packet capture work here, else why not."""
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW).close()
    except PermissionError:
        return "no CAP_NET_RAW (not root)"
    except OSError as exc:
        return f"raw sockets unavailable: {exc.strerror or exc}"
    return None


def resolve(target: str, family: Optional[str]) -> str:
    try:
        addr = ipaddress.ip_address(target.strip("[]"))
        fam = "ipv6" if addr.version == 6 else "ipv4"
        if family and fam != family:
            raise ProbeError(f"{target}: is an {fam} address but {family} was asked for")
        return str(addr)
    except ValueError:
        pass
    af = {"ipv4": socket.AF_INET, "ipv6": socket.AF_INET6}.get(family or "", socket.AF_UNSPEC)
    try:
        infos = socket.getaddrinfo(target, None, af, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ProbeError(f"{target}: cannot resolve: {getattr(exc, 'strerror', None) or exc}") from None
    infos.sort(key=lambda i: i[0] != socket.AF_INET)     # IPv4 first unless -6
    return infos[0][4][0]


_ADDRESS_LOCKS: dict = {}
_LOCKS_LOCK = threading.Lock()


def _address_lock(address: str) -> threading.Lock:
    """Two targets naming the same address are probed one after the other: replies are
    matched by address and probe key, so they must not overlap."""
    with _LOCKS_LOCK:
        return _ADDRESS_LOCKS.setdefault(address, threading.Lock())


@dataclass
class Shared:
    """What the targets of one run share: routers seen sending 'too big' (address -> the
    next-hop MTUs they reported, 0 for none usable) and the flag that stops every search."""
    reporters: dict
    stop: threading.Event


def probe_one(target: str, opts: Options, sender: Optional[RawSender], capture, why_not_raw: Optional[str],
              shared: Optional[Shared] = None) -> ProbeResult:
    shared = shared or Shared({}, threading.Event())
    try:
        address = resolve(target, opts.family)
    except ProbeError as exc:
        r = ProbeResult(target=target)
        r.errors.append(str(exc))
        return r
    with _address_lock(address):
        return _probe_one(target, address, opts, sender, capture, why_not_raw, time.monotonic(), shared)


def _probe_one(target: str, address: str, opts: Options, sender: Optional[RawSender], capture,
               why_not_raw: Optional[str], t0: float, shared: Shared) -> ProbeResult:
    r = ProbeResult(target=target, address=address)
    try:
        route = lookup(r.address)
    except OSError as exc:
        r.errors.append(f"{target}: no route to {r.address or target}: {exc.strerror or exc}")
        return r
    r.family, r.local_mtu, r.cached_pmtu = route.family, route.local_mtu, route.cached_pmtu
    if route.cached_pmtu:
        r.skipped.append(f"kernel had cached path MTU {route.cached_pmtu} for {r.address}; "
                         "ignored (probes bypass the cache)")
    if why_not_raw:
        r.skipped.append(f"ICMP echo and TCP probes, TTL-limited localisation of black holes: {why_not_raw}; "
                         "path MTU probed with UDP sockets (IP_PMTUDISC_PROBE + IP_RECVERR) instead; "
                         "their answers (port unreachable) are rate-limited by the target (Linux: 6 at once, "
                         "then 1 a second), so runs repeated within seconds can see too few answers")
        if opts.ports:
            r.skipped.append(f"SYN / SYN-ACK MSS options: {why_not_raw}, no capture; "
                             "sent and used come from TCP_INFO, synack is unknown")

    checks = [MssCheck(r.family, r.address, p, route.source, capture, opts.send_text, opts.timeout)
              for p in opts.ports]
    threads = [threading.Thread(target=c.connect, daemon=True) for c in checks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    talkers = [threading.Thread(target=c.talk, daemon=True) for c in checks]
    for t in talkers:
        t.start()
    open_port = next((c.port for c in checks if not c.error), None)

    replies: "queue.Queue" = queue.Queue()
    transport = None
    try:
        if sender is not None:
            capture_q = capture.watch(r.address)
            replies = capture_q
            send = sender.sender(r.family, route.source, r.address, open_port)
            methods = ("icmp", "udp", "tcp")
        else:
            from toolkit.probe.sockets import SocketTransport
            transport = SocketTransport(r.family, r.address, replies)
            send = transport.send
            methods = ("udp",)
        search = Search(r.family, route.local_mtu, send, replies, opts.timeout, open_port, methods,
                        icmp_wait=opts.icmp_wait, cached_pmtu=route.cached_pmtu, reporters=shared.reporters,
                        stop=shared.stop)
        v = search.run()
    except OSError as exc:
        r.errors.append(f"{target}: probing failed: {exc.strerror or exc}")
        v = None
    except Interrupted:
        r.errors.append(f"{target}: interrupted")
        v = None
    finally:
        if transport is not None:
            transport.close()

    for t in talkers:
        t.join()
    r.mss_ports = [c.result() for c in checks]
    r.probes = sum(c.syns or (1 if c.rtt is not None or c.error else 0) for c in checks)
    if r.mss_ports:
        r.mss = next((m for m in r.mss_ports if m.get("used") is not None),
                     next((m for m in r.mss_ports if "error" not in m), r.mss_ports[0]))
    if v is not None:
        r.pmtu, r.pmtu_method, r.black_hole, r.hop = v.pmtu, v.method, v.black_hole, v.hop
        r.confidence, r.probe_method = v.confidence, v.probe_method
        r.probes += v.probes
        r.rounds = v.rounds
        r.notes.extend(v.notes)
        connected = any(c.error is None for c in checks)
        if v.pmtu is None and v.unreachable:
            src, why = v.unreachable[0]
            r.add_finding("unreachable", f"{src} answered '{why}' to our probes of {r.address}: "
                          "they never reached it", "high")
            if not connected:
                r.errors.append(f"{target}: unreachable: {src} answered '{why}'")
        elif v.pmtu is None:
            used = ", ".join(search.methods)
            r.add_finding("no-answer", f"{r.address} answered none of {v.probes} probes ({used}): "
                          "down, or everything filtered", "medium")
            if not connected:
                ports = f"; TCP port {','.join(map(str, opts.ports))} did not connect" if opts.ports else ""
                r.errors.append(f"{target}: no answer to any of {v.probes} probes ({used}){ports}: "
                                "down, or everything filtered")
        if v.rate_limited:
            r.add_finding("icmp-rate-limited", v.rate_limited, v.confidence or "medium")
        findings.assess(r, echo_filtered=v.echo_filtered, silence=v.silence_s)
    else:
        findings.assess(r)
    r.elapsed_s = round(time.monotonic() - t0, 3)
    return r


def _import_scapy() -> None:
    try:
        importlib.import_module("scapy.layers.inet")
    except Exception:       # the probe itself will report it when it needs scapy
        pass


def run(targets: Sequence[str], opts: Options, progress: Optional[Callable[[ProbeResult], None]] = None,
        stop: Optional[threading.Event] = None) -> Iterator[ProbeResult]:
    """Probe every target (concurrently); yields results in the order of `targets`.
    Setting `stop` (or leaving the loop early, or an exception in it) ends the searches
    still under way within 0.1 s."""
    why_not = raw_allowed() if opts.raw is not False else "raw probing switched off"
    shared = Shared({}, stop or threading.Event())
    sender = capture = None
    if why_not is None:
        # scapy takes ~0.2 s to import: let that overlap route lookups and TCP handshakes
        threading.Thread(target=_import_scapy, daemon=True).start()
        from toolkit.probe.capture import Capture
        capture = Capture().__enter__()
        sender = RawSender(Pace(opts.rate))
    pool = ThreadPoolExecutor(max_workers=max(1, min(opts.workers, len(targets))))
    try:
        futures = [pool.submit(probe_one, t, opts, sender, capture, why_not, shared) for t in targets]
        for f in futures:
            res = f.result()
            if progress:
                progress(res)
            yield res
    finally:
        shared.stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        if capture is not None:
            capture.__exit__(None, None, None)
        if sender is not None:
            sender.close()

