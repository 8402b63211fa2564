"""Probe many targets at once: one engine loop, one capture, a pace per target, one
ProbeResult each (toolkit/probe/engine.py runs them).

For each target: resolve, refuse what must not be probed (toolkit/probe/targets.py),
ask the kernel for the route (source, interface MTU, any cached path MTU), open the MSS
check connections first (so our SYNs advertise the interface's MSS, before our own
probes teach the kernel a smaller path MTU), run the path MTU search while the host
talks, then put what was measured into the result. The results carry evidence only:
toolkit.rules.probed turns it into findings.
"""
from __future__ import annotations

import ipaddress
import selectors
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Sequence

from toolkit.probe.engine import Engine, JobBase, RawIO, TimeUp, Until, WaitChecks, WaitFuture
from toolkit.probe.mss import MssCheck
from toolkit.probe.pmtu import ICMP_WAIT, LONG_WAIT, Interrupted, Search
from toolkit.probe.result import ProbeResult
from toolkit.probe.route import forget, lookup
from toolkit.probe.targets import ProbeError, refused, refused_by_route, resolve
from toolkit.stack import mss_for

DEFAULT_RATE = 100.0     # probes per second to any one target
DEFAULT_BURST = 16       # probes one target may get at once (a first round is 12 to 14)
DEFAULT_TOTAL_RATE = 20000.0   # ceiling for the whole run, all targets together
DEFAULT_TIMEOUT = 1.0


@dataclass
class Options:
    ports: Sequence[int] = ()
    family: Optional[str] = None         # force "ipv4" / "ipv6"
    rate: float = DEFAULT_RATE           # per target
    timeout: float = DEFAULT_TIMEOUT
    send_text: Optional[str] = None
    raw: Optional[bool] = None           # None: use raw sockets when permitted
    workers: int = 1024                  # targets probed at once
    icmp_wait: float = ICMP_WAIT         # s of silence before a black hole is called
    burst: int = DEFAULT_BURST
    total_rate: float = DEFAULT_TOTAL_RATE
    total_burst: int = 2000
    trace: bool = False                  # per-hop MTU trace and the hop that rewrites the MSS
    pmtud_check: bool = False            # does the target itself do PMTU discovery (root)
    loopback: bool = False               # this host itself may be probed (127.0.0.1, ::1, its own addresses)

    def time_limit(self) -> float:
        """The longest one target may take (s), whatever the path does: room for every round
        of the search at the longest answer wait, the pauses before a black-hole verdict,
        the trace and the PMTUD check. A target still under way then ends with an error."""
        rounds = 40 * self.timeout * (2 if self.trace else 1)
        check = 3.0 + 4 * self.timeout if self.pmtud_check else 0.0
        return 60.0 + 3 * max(self.icmp_wait, LONG_WAIT) + rounds + check


_RAW: dict = {}


def raw_allowed() -> Optional[str]:
    """None when raw sockets and packet capture work here, else why not. The check opens
    the very sockets the run will use (kept for it), so it happens once per process."""
    if "why" in _RAW:
        return _RAW["why"]
    try:
        _RAW["io"] = RawIO()
        _RAW["why"] = None
    except PermissionError:
        _RAW["why"] = "no CAP_NET_RAW (not root)"
    except OSError as exc:
        _RAW["why"] = f"raw sockets unavailable: {exc.strerror or exc}"
    return _RAW["why"]


def _take_raw() -> Optional[RawIO]:
    if raw_allowed() is not None:
        return None
    io = _RAW.pop("io", None)
    _RAW.pop("why", None)            # the next run opens its own
    return io


@dataclass
class Shared:
    """What the targets of one run share: routers seen sending 'too big' (address -> the
    next-hop MTUs they reported, 0 for none usable) and the flag that stops every search."""
    reporters: dict
    stop: threading.Event
    placements: dict = None

    def __post_init__(self) -> None:
        if self.placements is None:
            self.placements = {}


def _literal(target: str) -> bool:
    try:
        ipaddress.ip_address(target.strip("[]"))
        return True
    except ValueError:
        return False


class Job(JobBase):
    """One target: the script of docs/probe.md, served by the engine."""

    def __init__(self, target: str, opts: Options, why_not_raw: Optional[str], shared: Shared):
        super().__init__()
        self.target, self.opts, self.why_not_raw, self.shared = target, opts, why_not_raw, shared
        self.checks = []
        self.transport = None
        self.address: Optional[str] = None
        self.family = "ipv4"
        self.source = ""
        self.open_port: Optional[int] = None
        self._owns_address = False
        self._regs = {}

    # ---- sending ----------------------------------------------------------------------
    def sender(self, method: str, size: int, key: int, ttl: int) -> None:
        if self.transport is not None:
            self.transport.send(method, size, key, ttl)
            return
        from toolkit.probe import packets
        if method == "syn":        # the clamp locator's: the size is the MSS option
            data = packets.syn(self.family, self.source, self.address, key, self.tcp_port, size, ttl)
        else:
            data = packets.probe(self.family, method, self.source, self.address, size, key, ttl, self.tcp_port)
        self.engine.raw.send(self.family, data, self.address)

    @property
    def tcp_port(self) -> int:
        """Where TCP probes go: a port that connected, else the first --port, else 80 (as
        nmap's ACK ping). Open or closed, the target answers an ACK with a RST."""
        return self.open_port or (self.opts.ports[0] if self.opts.ports else 80)

    def on_reply(self, r) -> None:
        if self.search is not None:
            self.search.on_reply(r)
            self.engine.poke(self)

    # ---- the MSS checks' sockets and timers ---------------------------------------------
    def tick_checks(self, now: float) -> None:
        nxt = None
        for c in self.checks:
            t = c.tick(now)
            if t is not None:
                nxt = t if nxt is None else min(nxt, t)
            self._sync(c)
        if nxt is not None:
            self.engine.at(nxt, self)

    def _sync(self, c) -> None:
        want = {"connecting": selectors.EVENT_WRITE, "talking": selectors.EVENT_READ}.get(c.state)
        if want is None or c.sock is None:
            return
        if self._regs.get(id(c)) != want:
            self._regs[id(c)] = want
            self.engine.watch_fd(c.sock, want, lambda ev, c=c: self._check_event(c))

    def _check_event(self, c) -> None:
        now = time.time()
        if c.state == "connecting":
            c.on_writable(now)
        elif c.state == "talking":
            c.on_readable(now)
        self._sync(c)
        self.engine.poke(self)

    def _closing(self, c, sock) -> None:
        self._regs.pop(id(c), None)
        self.engine.unwatch_fd(sock)

    # ---- the script --------------------------------------------------------------------------
    def script(self):
        r = ProbeResult(target=self.target)
        try:
            return (yield from self._script(r))
        except TimeUp:       # before or after the search, which ends with what it has
            for c in self.checks:
                c.abandon()
            r.errors.append(f"{self.target}: {self._time_up()}")
            return r

    def _time_up(self) -> str:
        return (f"stopped after {self.opts.time_limit():g} s, the limit for one target (a slow --rate, or a path "
                "that loses most probes)")

    def _script(self, r: ProbeResult):
        opts, e = self.opts, self.engine
        try:
            if _literal(self.target):
                address = resolve(self.target, opts.family)
            else:
                address = yield WaitFuture(e.resolve_later(resolve, self.target, opts.family))
        except ProbeError as exc:
            r.errors.append(str(exc))
            return r
        why = refused(address, opts.loopback)
        if why:
            r.address = address
            r.errors.append(f"{self.target}: not probed: {why}")
            return r
        # two targets naming one address are probed one after the other: replies are
        # matched by address and probe key, so they must not overlap
        while address in e.active_addresses:
            yield Until(lambda: address not in e.active_addresses, time.time() + 0.02)
        e.active_addresses[address] = self
        self._owns_address = True
        self.address = r.address = address
        t0 = time.time()
        self.limit(opts.time_limit())
        try:
            route = lookup(address)
        except OSError as exc:
            r.errors.append(f"{self.target}: no route to {address}: {exc.strerror or exc}")
            return r
        why = refused_by_route(address, route.kind, route.interface, opts.loopback)
        if why:
            r.errors.append(f"{self.target}: not probed: {why}")
            return r
        self.family, self.source = route.family, route.source
        r.family, r.local_mtu, r.cached_pmtu = route.family, route.local_mtu, route.cached_pmtu
        if route.cached_pmtu:
            r.skipped.append(f"kernel had cached path MTU {route.cached_pmtu} for {r.address}; "
                             "ignored (probes bypass the cache)")
        why_not_raw = self.why_not_raw
        if why_not_raw:
            r.skipped.append(f"ICMP echo and TCP probes, TTL-limited localisation of black holes: {why_not_raw}; "
                             "path MTU probed with UDP sockets (IP_PMTUDISC_PROBE + IP_RECVERR) instead; "
                             "their answers (port unreachable) are rate-limited by the target (Linux: 6 at once, "
                             "then 1 a second), so runs repeated within seconds can see too few answers")
            if opts.ports:
                r.skipped.append(f"SYN / SYN-ACK MSS options: {why_not_raw}, no capture; "
                                 "sent and used come from TCP_INFO, synack is unknown")

        capture = e.capture
        self.checks = [MssCheck(r.family, address, p, route.source, capture, opts.send_text, opts.timeout)
                       for p in opts.ports]
        for c in self.checks:
            c.before_close = lambda sock, c=c: self._closing(c, sock)
            c.start(time.time())
            self._sync(c)
        if self.checks:
            yield WaitChecks(self.checks, "connecting")
        for c in self.checks:
            c.talk(time.time())
            self._sync(c)
        self.open_port = next((c.port for c in self.checks if not c.error), None)

        if capture is not None:
            capture.watch(address, self.on_reply)
            methods = ("icmp", "tcp", "udp")
        else:
            from toolkit.probe.sockets import SocketTransport
            try:
                self.transport = SocketTransport(r.family, address)
            except OSError as exc:
                r.errors.append(f"{self.target}: probing failed: {exc.strerror or exc}")
                return r
            t = self.transport
            e.watch_fd(t.sock, selectors.EVENT_READ, lambda ev: [self.on_reply(x) for x in t.read()])
            methods = ("udp",)
        search = Search(r.family, route.local_mtu, None, None, opts.timeout, self.tcp_port, methods,
                        icmp_wait=opts.icmp_wait, cached_pmtu=route.cached_pmtu, reporters=self.shared.reporters,
                        stop=self.shared.stop, path=(route.interface, route.gateway),
                        placements=self.shared.placements)
        search.clock = time.time
        self.search = search
        v = None
        try:
            v = yield from search.steps()
            if v is not None and opts.trace:
                yield from self._where(r, v, search, route, capture is not None)
            if self.checks:
                yield WaitChecks(self.checks, "catching-up")
            if v is not None and opts.pmtud_check:
                yield from self._pmtud(r, route, capture is not None)
        except Interrupted:
            r.errors.append(f"{self.target}: interrupted")
            v = None
        except TimeUp:       # what was measured stands: the verdict, if the search had one
            for c in self.checks:
                c.abandon()
            r.errors.append(f"{self.target}: {self._time_up()}")
        if route.cached_pmtu is None and capture is not None and forget(address):
            # our probes taught the kernel this path MTU (IPv6 does so for any PTB): leave
            # its cache as we found it
            r.notes.append("the path MTU our probes taught the kernel was removed from its cache again")
        self._assemble(r, v, search)
        r.elapsed_s = round(time.time() - t0, 3)
        return r

    def _where(self, r: ProbeResult, v, search, route, raw: bool):
        """--trace: the per-hop MTU trace, then (raw only) the hop that rewrites the MSS."""
        from toolkit.probe import trace
        if v.pmtu is None or v.probe_method is None:
            r.skipped.append("trace: the target answered no probe")
            return
        hops, black_hole, notes = yield from trace.trace(search, v.probe_method, route.local_mtu, self.address)
        r.trace = {"hops": hops, "black_hole": black_hole, "notes": notes}
        if not raw:
            r.skipped.append(f"clamp location (TTL-limited SYNs): {self.why_not_raw}")
            return
        reached = [h["ttl"] for h in hops if h["address"] == self.address]
        distance = min(reached) if reached else (max(h["ttl"] for h in hops) if hops else 1)
        ours = mss_for(route.local_mtu, r.family)
        r.clamp = yield from trace.clamp_location(search, ours, distance)
        r.clamp["port"] = self.tcp_port

    def _pmtud(self, r: ProbeResult, route, raw: bool):
        """--pmtud-check on the first port that sent data."""
        from toolkit.probe import pmtud
        if not raw:
            r.skipped.append(f"PMTUD check: {self.why_not_raw}")
            return
        talked = [c for c in self.checks if not c.error and c.received]
        if not talked:
            r.skipped.append("PMTUD check: needs a --port where the host sends data (the MSS check's services)")
            return
        r.pmtud = yield from pmtud.check(self, talked[0].port, self.opts.send_text, self.opts.timeout,
                                         route.local_mtu)

    def _assemble(self, r: ProbeResult, v, search) -> None:
        opts, checks = self.opts, self.checks
        r.mss_ports = [c.result() for c in checks]
        r.probes = sum(c.syns or (1 if c.rtt is not None or c.error else 0) for c in checks)
        if r.mss_ports:
            r.mss = next((m for m in r.mss_ports if m.get("used") is not None),
                         next((m for m in r.mss_ports if "error" not in m), r.mss_ports[0]))
        if v is None:
            return
        r.pmtu, r.pmtu_method, r.black_hole, r.hop = v.pmtu, v.method, v.black_hole, v.hop
        r.confidence, r.probe_method = v.confidence, v.probe_method
        r.echo_filtered, r.silence_s, r.rate_limited = v.echo_filtered, v.silence_s, v.rate_limited
        r.unreachable = [{"source": src, "reason": why} for src, why in v.unreachable]
        r.probes += v.probes
        r.rounds = v.rounds
        r.notes.extend(v.notes)
        if v.pmtu is None and not any(c.error is None for c in checks):
            if v.unreachable:
                src, why = v.unreachable[0]
                r.errors.append(f"{self.target}: unreachable: {src} answered '{why}'")
            else:
                used = ", ".join(search.methods)
                ports = f"; TCP port {','.join(map(str, opts.ports))} did not connect" if opts.ports else ""
                r.errors.append(f"{self.target}: no answer to any of {v.probes} probes ({used}){ports}: "
                                "down, or everything filtered")

    def finish(self, result) -> None:
        self._release()
        super().finish(result)

    def _release(self) -> None:
        e = self.engine
        if self._owns_address:
            e.active_addresses.pop(self.address, None)
            self._owns_address = False
            if e.capture is not None:
                e.capture.unwatch(self.address)
        if self.transport is not None:
            e.unwatch_fd(self.transport.sock)
            self.transport.close()
            self.transport = None

    def abandon(self) -> None:
        for c in self.checks:
            c.abandon()
        self._release()


def run(targets: Sequence[str], opts: Options, progress: Optional[Callable[[ProbeResult], None]] = None,
        stop: Optional[threading.Event] = None) -> Iterator[ProbeResult]:
    """Probe every target (concurrently, in one loop); yields results in the order of
    `targets`. Setting `stop` (or leaving the loop early, or an exception in it) ends the
    searches still under way at once."""
    raw = _take_raw() if opts.raw is not False else None
    why_not = None if raw is not None else (raw_allowed() if opts.raw is not False else "raw probing switched off")
    shared = Shared({}, stop or threading.Event())
    engine = Engine(opts, raw, shared.stop)
    jobs = [Job(t, opts, why_not, shared) for t in targets]
    try:
        yield from engine.run(jobs, progress)
    finally:
        shared.stop.set()
        if raw is not None:
            raw.close()
