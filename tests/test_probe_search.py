"""The PMTU search's reading of silence, many times over, on a path simulated in-process.

The lab tests (test_probe_lab.py) run the prober against real kernel routers, a few runs
per scenario; this drives the same `Search` against a path model with seeded random
loss and token-bucket ICMP, dozens of times in a second, so a rule that fails one run in
twenty shows here, also on machines without root.
"""
from __future__ import annotations

import queue
import random
import threading
import time

import pytest

from toolkit.probe.reply import Reply
from toolkit.probe.pmtu import Search


class Bucket:
    """At most `rate` a second, bursts of `burst`; `empty` when something used it up just before."""

    def __init__(self, rate: float, burst: int = 1, empty: bool = False):
        self.rate, self.burst, self.tokens, self.t = rate, burst, 0.0 if empty else float(burst), time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens, self.t = min(self.burst, self.tokens + (now - self.t) * self.rate), now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Path:
    """client -1500- router -mtu- target. `loss` drops forwarded packets each way; the
    router's frag-needed (next-hop MTU `mtu`) is never lost, but may be rate-limited or
    dropped (`icmp=False`); the target may rate-limit its UDP answers."""

    def __init__(self, seed: int, mtu: int = 1400, loss: float = 0.0, icmp: bool = True,
                 icmp_bucket: Bucket = None, target_bucket: Bucket = None, echo: bool = True):
        self.rng, self.mtu, self.loss, self.icmp, self.echo = random.Random(seed), mtu, loss, icmp, echo
        self.icmp_bucket, self.target_bucket = icmp_bucket, target_bucket
        self.replies: "queue.Queue[Reply]" = queue.Queue()

    def _later(self, reply: Reply) -> None:
        threading.Timer(0.001, self.replies.put, (reply,)).start()

    def send(self, method: str, size: int, key: int, ttl: int) -> None:
        if ttl == 1:
            self._later(Reply("t", method, key, "ttl", "r1"))
            return
        if size > self.mtu:
            if self.icmp and (self.icmp_bucket is None or self.icmp_bucket.take()):
                self._later(Reply("t", method, key, "toobig", "r1", mtu=self.mtu))
            return
        if self.rng.random() < self.loss or (method == "icmp" and not self.echo):
            return
        if method == "udp" and self.target_bucket and not self.target_bucket.take():
            return
        if self.rng.random() < self.loss:
            return
        self._later(Reply("t", method, key, "pass", "t", ttl=63))


@pytest.fixture(autouse=True)
def quick_rounds(monkeypatch):
    """A round waits at least MIN_WAIT for answers; the simulated RTT is 1 ms."""
    from toolkit.probe import pmtu
    monkeypatch.setattr(pmtu, "MIN_WAIT", 0.02)


def search(path: Path, **kw):
    kw.setdefault("icmp_wait", 0.2)
    s = Search("ipv4", 1500, path.send, path.replies, timeout=0.2, methods=("icmp", "udp"), **kw)
    return s.run()


def test_heavy_loss_never_pulls_the_pmtu_below_the_reported_mtu():
    """30 % loss each way on forwarded packets, the router's MTU report always arrives."""
    for seed in range(15):
        v = search(Path(seed, loss=0.3))
        assert (v.pmtu, v.method, v.black_hole) == (1400, "icmp", False), (seed, v)


def test_a_target_rate_limiting_its_answers_is_not_a_size_limit():
    """Echo filtered, 30 % loss, and the target answers UDP 6 at once then 1 a second (as
    Linux does): silence in rounds whose control probe vanished is no evidence."""
    for seed in range(6):
        v = search(Path(seed, loss=0.3, echo=False, target_bucket=Bucket(1, 6)))
        assert v.pmtu in (None, 1400), (seed, v)      # None: nothing answered at all
        if v.pmtu is not None:
            assert (v.method, v.black_hole) == ("icmp", False)


def test_black_hole_found_through_loss():
    for seed in range(8):
        v = search(Path(seed, loss=0.1, icmp=False))
        assert (v.pmtu, v.method, v.black_hole) == (1400, "inferred", True), (seed, v)
        assert v.confidence in ("medium", "low")


@pytest.mark.parametrize("long_wait", [False, True])
def test_silence_is_high_confidence_only_when_it_lasted(monkeypatch, long_wait):
    """A router whose one ICMP was just used up: a short wait gives a medium black hole
    that says why; waiting longer than its rate (here 0.5 s, for the test's sake) hears it.
    For the short wait the router refills once in 5 s: on a loaded machine the search may
    start half a second late, which at 2 a second had refilled it (a flaky pass to "icmp")."""
    from toolkit.probe import pmtu
    monkeypatch.setattr(pmtu, "HIGH_SILENCE", 0.5)
    v = search(Path(1, icmp_bucket=Bucket(2 if long_wait else 0.2, empty=True)), icmp_wait=0.6 if long_wait else 0.2)
    if long_wait:
        assert (v.pmtu, v.method, v.black_hole, v.confidence) == (1400, "icmp", False, "high"), v
        assert v.rate_limited and "answered only after" in v.rate_limited
    else:
        assert (v.pmtu, v.method, v.black_hole, v.confidence) == (1400, "inferred", True, "medium"), v
        assert any("less often than once" in n for n in v.notes), v.notes
    v = search(Path(1, icmp=False), icmp_wait=0.6)
    assert (v.black_hole, v.confidence) == (True, "high"), v


def test_a_router_that_answered_another_target_is_not_a_black_hole():
    """It reported MTU 1400 to another target in this run (shared `reporters`), stays
    silent now: a long wait, then, still silent at the router where the probes die,
    rate limiting — not a black hole."""
    from toolkit.probe import pmtu
    reporters = {"r1": {1400}}
    path = Path(2, icmp=False)
    orig = pmtu.LONG_WAIT
    try:
        pmtu.LONG_WAIT = 0.4
        t0 = time.monotonic()
        v = search(path, reporters=reporters)
    finally:
        pmtu.LONG_WAIT = orig
    assert time.monotonic() - t0 >= 0.4
    assert (v.pmtu, v.method, v.black_hole, v.hop) == (1400, "inferred", False, "r1"), v
    assert v.rate_limited and "not a black hole" in v.rate_limited


@pytest.mark.parametrize("udp_left", [0, 6])
def test_tcp_is_preferred_to_udp_whose_answers_the_target_rate_limits(udp_left):
    """Echo filtered. The target's port unreachables (UDP's answers) share one budget per
    prober, whichever of its addresses was probed: used up by other targets of the run
    (0 left) or not (6), a TCP probe's RST is the method, and the answer is exact."""
    for seed in range(3):
        path = Path(seed, echo=False, target_bucket=Bucket(1, 6, empty=not udp_left))
        v = Search("ipv4", 1500, path.send, path.replies, timeout=0.2, tcp_port=80, icmp_wait=0.2).run()
        assert (v.pmtu, v.method, v.black_hole, v.probe_method, v.echo_filtered) == (1400, "icmp", False, "tcp",
                                                                                    True), (seed, v)
