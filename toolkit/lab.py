"""Scenario networks in Linux network namespaces: client -> router(s) -> target.

`with scenario("bottleneck") as lab:` builds one, starts the target's TCP services and
tears everything down on exit (also after an error). `lab up/down/list` on the command
line keep a lab alive so an engineer can reproduce a case by hand.

Each lab gets its own namespace names (prefix "mssd" + random hex), so parallel test
runs never collide; veth pairs are created straight inside the namespaces, so nothing
is left in the root namespace. Every lab records itself in STATE_DIR (written whole,
by rename) before it builds anything, so `lab down` can find even a half-built one, and
an interrupted build removes what it made. `lab down` kills only processes it can prove
are the lab's: those inside its namespaces, and its service when the pid still runs the
service's command line with the lab's name and the recorded start time. Traffic only
ever flows between the namespaces built here.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

from toolkit.proc import signals_held as _signals_held, start_time as _start_time

STATE_DIR = Path(os.environ.get("MSSDIAG_LAB_STATE", "/run/mssdiag-lab"))
PREFIX = "mssd"
PREFIX_RE = re.compile(r"mssd[0-9a-f]{6}")        # what up() makes: PREFIX + 3 random bytes
SERVICE_MARK = "mssdiag-lab-service"               # in the service's argv, to prove it is ours
BANNER_PORT = 21      # talks first, like ftp/smtp/telnet
REQUEST_PORT = 80     # answers a request, like http
DATA_BYTES = 6000     # enough for several full-size segments


class LabError(Exception):
    """A lab could not be built or used; the message names the step."""


def is_prefix(name: str) -> bool:
    return bool(PREFIX_RE.fullmatch(name or ""))


@dataclass
class Spec:
    name: str
    help: str
    routers: int = 1
    mtus: Sequence[int] = (1500, 1500)          # one per link, client side first
    family: str = "ipv4"
    router_rules: Sequence[Sequence[str]] = ()  # argv run in every router namespace
    rules_at: Dict[int, Sequence[Sequence[str]]] = field(default_factory=dict)   # router number -> argv
    target_rules: Sequence[Sequence[str]] = ()
    target_maxseg: Optional[int] = None
    needs: Sequence[str] = ()                   # extra tools this scenario needs
    # What a correct prober must answer (the tests and the benchmark read these).
    # mss.used is the largest TCP payload: the MSS minus the 12 bytes of the timestamp
    # option both Linux ends negotiate.
    expect: Dict = field(default_factory=dict)


DROP_FRAG_NEEDED = ("iptables", "-A", "OUTPUT", "-p", "icmp", "--icmp-type", "fragmentation-needed", "-j", "DROP")
CLAMP_536 = ("iptables", "-t", "mangle", "-A", "FORWARD", "-p", "tcp", "--tcp-flags", "SYN,RST", "SYN",
             "-j", "TCPMSS", "--set-mss", "536")
NO_PMTU_DISC = ("sysctl", "-qw", "net.ipv4.ip_no_pmtu_disc=1")
TIMESTAMPS_ON = ("sysctl", "-qw", "net.ipv4.tcp_timestamps=1")
DROP_FRAG_NEEDED_IN = ("iptables", "-A", "INPUT", "-p", "icmp", "--icmp-type", "fragmentation-needed", "-j", "DROP")


def limit_frag_needed(rate: str) -> List[Sequence[str]]:
    """The router lets out at most `rate` ICMP frag-needed (iptables `limit`, burst 1)."""
    return [("iptables", "-A", "OUTPUT", "-p", "icmp", "--icmp-type", "fragmentation-needed",
             "-m", "limit", "--limit", rate, "--limit-burst", "1", "-j", "ACCEPT"), DROP_FRAG_NEEDED]


def loss(share: float) -> Sequence[str]:
    """The router drops this share of what it forwards, at random (no netem here)."""
    return ("iptables", "-A", "FORWARD", "-m", "statistic", "--mode", "random", "--probability", f"{share:g}",
            "-j", "DROP")


LIMIT_FRAG_NEEDED = limit_frag_needed("1/second")
# an "old router": its frag-needed carries next-hop MTU 0 (pre-RFC 1191), rewritten by nft
MTU_ZERO = ("nft", "add table ip mssdiag ; add chain ip mssdiag out { type filter hook output priority 0 ; } ; "
                   "add rule ip mssdiag out icmp type destination-unreachable icmp code frag-needed icmp mtu set 0")
DROP_ECHO = ("iptables", "-A", "INPUT", "-p", "icmp", "--icmp-type", "echo-request", "-j", "DROP")

SCENARIOS: Dict[str, Spec] = {s.name: s for s in [
    Spec("bottleneck", "router -> target link MTU 1400; the router sends ICMP frag-needed",
         mtus=(1500, 1400),
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1",
                     mss=dict(sent=1460, synack=1360, used=1348), codes={"pmtu-reduced"})),
    Spec("blackhole", "as bottleneck, but the router drops its own ICMP frag-needed (PMTUD black hole)",
         mtus=(1500, 1400), router_rules=[DROP_FRAG_NEEDED],
         expect=dict(pmtu=1400, pmtu_method="inferred", black_hole=True, hop="10.0.1.1",
                     mss=dict(sent=1460, synack=1360, used=1348), codes={"pmtu-reduced", "pmtud-black-hole"})),
    Spec("clamp536", "all links 1500; the router clamps the MSS of every SYN to 536 (iptables TCPMSS)",
         router_rules=[CLAMP_536],
         expect=dict(pmtu=1500, pmtu_method="local", black_hole=False, hop=None,
                     mss=dict(sent=1460, synack=536, used=524),
                     codes={"synack-mss-below-path", "mss-536-legacy"})),
    Spec("legacy536", "all links 1500; the target listens with TCP_MAXSEG 536 (STCP/TCP_OS-like legacy host), "
                      "TCP timestamps on (12 bytes of every segment)",
         target_maxseg=536, target_rules=[TIMESTAMPS_ON],
         expect=dict(pmtu=1500, pmtu_method="local", black_hole=False, hop=None,
                     mss=dict(sent=1460, synack=536, used=524),
                     codes={"synack-mss-below-path", "mss-536-legacy"})),
    Spec("multihop", "1500 -> 1492 -> 1280 through two routers",
         routers=2, mtus=(1500, 1492, 1280),
         expect=dict(pmtu=1280, pmtu_method="icmp", black_hole=False, hop="10.0.2.2",
                     mss=dict(sent=1460, synack=1240, used=1228), codes={"pmtu-reduced"})),
    Spec("ipv6", "IPv6 only target address; router -> target link MTU 1400, ICMPv6 Packet Too Big",
         mtus=(1500, 1400), family="ipv6",
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="fd00:1::1",
                     mss=dict(sent=1440, synack=1340, used=1328), codes={"pmtu-reduced"})),
    # robustness: loss, rate-limited ICMP, old routers, a small local link
    Spec("lossy", "as bottleneck, and the router drops 10% of the packets it forwards (random loss)",
         mtus=(1500, 1400), router_rules=[loss(0.1)],
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1")),
    Spec("lossyhole", "as blackhole, and the router drops 10% of the packets it forwards",
         mtus=(1500, 1400), router_rules=[DROP_FRAG_NEEDED, loss(0.1)],
         expect=dict(pmtu=1400, pmtu_method="inferred", black_hole=True, hop="10.0.1.1")),
    Spec("ratelimit", "as bottleneck, but the router sends at most one ICMP frag-needed a second",
         mtus=(1500, 1400), router_rules=LIMIT_FRAG_NEEDED,
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1")),
    # slow ICMP is not a black hole, heavy loss never pulls the PMTU below what the router
    # reported
    Spec("ratelimit10", "as bottleneck, but the router sends at most one ICMP frag-needed every 10 s",
         mtus=(1500, 1400), router_rules=limit_frag_needed("6/minute"),
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1")),
    Spec("lossy30", "as bottleneck, and the router drops 30% of the packets it forwards (its ICMP gets out)",
         mtus=(1500, 1400), router_rules=[loss(0.3)],
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1")),
    Spec("oldrouter", "as bottleneck, but the router's frag-needed says next-hop MTU 0 (RFC 1191 plateaus)",
         mtus=(1500, 1400), router_rules=[MTU_ZERO], needs=("nft",),
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1")),
    Spec("smalllocal", "the client's own link has MTU 1300, the rest 1500",
         mtus=(1300, 1500),
         expect=dict(pmtu=1300, pmtu_method="local", black_hole=False, hop=None,
                     mss=dict(sent=1260, synack=1460, used=1248), codes=set())),
    # where (per-hop MTUs, the clamping router) and whether (the target's PMTU discovery)
    Spec("trace3", "three routers, a different MTU after each: 1500 -> 1480 -> 1400 -> 1280",
         routers=3, mtus=(1500, 1480, 1400, 1280),
         expect=dict(pmtu=1280, pmtu_method="icmp", black_hole=False, hop="10.0.3.2",
                     mss=dict(sent=1460, synack=1240, used=1228), codes={"pmtu-reduced"},
                     # (ttl, address, mtu that reached it, next-hop MTU it reported)
                     hops=[(1, "10.0.1.1", 1500, 1480), (2, "10.0.2.2", 1480, 1400), (3, "10.0.3.2", 1400, 1280),
                           (4, "10.0.4.2", 1280, None)])),
    Spec("clamp2", "three routers, all links 1500; the second one clamps the MSS of SYNs to 536 (TCPMSS)",
         routers=3, mtus=(1500, 1500, 1500, 1500), rules_at={2: [CLAMP_536]},
         expect=dict(pmtu=1500, pmtu_method="local", black_hole=False, hop=None,
                     mss=dict(sent=1460, synack=536, used=524), codes={"synack-mss-below-path", "mss-536-legacy"},
                     clamp=dict(changed_after="10.0.2.2", changed_after_ttl=2, to=536))),
    Spec("pmtud-on", "all links 1500; the target does PMTU discovery (Linux default)",
         expect=dict(pmtu=1500, pmtu_method="local", black_hole=False, hop=None, pmtud="honours",
                     mss=dict(sent=1460, synack=1460, used=1448), codes=set())),
    Spec("pmtud-off", "all links 1500; the target has PMTU discovery off (net.ipv4.ip_no_pmtu_disc=1: no DF)",
         target_rules=[NO_PMTU_DISC],
         expect=dict(pmtu=1500, pmtu_method="local", black_hole=False, hop=None, pmtud="clears-df",
                     mss=dict(sent=1460, synack=1460, used=1448), codes=set())),
    Spec("pmtud-ignore", "all links 1500; the target drops incoming ICMP 'fragmentation needed' (sends DF, "
                         "never shrinks)",
         target_rules=[DROP_FRAG_NEEDED_IN],
         expect=dict(pmtu=1500, pmtu_method="local", black_hole=False, hop=None, pmtud="ignores",
                     mss=dict(sent=1460, synack=1460, used=1448), codes=set())),
    Spec("noecho", "as bottleneck, and the target drops ICMP echo requests",
         mtus=(1500, 1400), target_rules=[DROP_ECHO],
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1",
                     mss=dict(sent=1460, synack=1360, used=1348), codes={"pmtu-reduced", "echo-filtered"})),
]}

# The target's services: a banner port that talks first and a request port that answers.
SERVICE = r"""
import socket, sys, threading
# argv: mark, lab prefix (so `lab down` can prove the process is this lab's), maxseg, size, ports
maxseg = int(sys.argv[3]); size = int(sys.argv[4]); ports = [int(p) for p in sys.argv[5:]]
def serve(port, talk_first):
    fam = socket.AF_INET6
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    if maxseg:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, maxseg)
    s.bind(("::", port)); s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=talk, args=(c, talk_first), daemon=True).start()
def talk(c, talk_first):
    try:
        c.settimeout(5)
        if not talk_first:
            c.recv(4096)
            head = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n"
        else:
            head = b"220-lab banner service\r\n"
        c.sendall(head + b"x" * (size - len(head)))
        c.shutdown(socket.SHUT_WR)
        c.recv(4096)
    except OSError:
        pass
    finally:
        c.close()
for i, p in enumerate(ports):
    threading.Thread(target=serve, args=(p, i == 0), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
"""


def _sh(argv: Sequence[str], what: str, check: bool = True, timeout: float = 20) -> subprocess.CompletedProcess:
    try:
        res = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LabError(f"{what}: {' '.join(argv)}: {exc}") from None
    if check and res.returncode != 0:
        raise LabError(f"{what}: {' '.join(argv)}: {res.stderr.strip() or res.returncode}")
    return res


def missing_tools() -> List[str]:
    """What the lab needs and this host lacks (empty when it can build labs)."""
    out = [t for t in ("ip", "iptables") if shutil.which(t) is None]
    if os.geteuid() != 0:
        out.append("root (CAP_NET_ADMIN)")
    return out


class Lab:
    """A built scenario: namespace names, addresses, services and the expected answers."""

    def __init__(self, spec: Spec, prefix: str):
        self.spec = spec
        self.name = spec.name
        self.prefix = prefix
        self.routers = [f"{prefix}-r{i + 1}" for i in range(spec.routers)]
        self.client = f"{prefix}-c"
        self.target_ns = f"{prefix}-t"
        self.namespaces = [self.client, *self.routers, self.target_ns]
        n = len(spec.mtus)
        # link i joins namespaces[i] and namespaces[i+1]; both ends on 10.0.(i+1).0/24
        self.target4 = f"10.0.{n}.2"
        self.target6 = f"fd00:{n}::2"
        self.client4 = "10.0.1.2"
        self.client6 = "fd00:1::2"
        self.target = self.target6 if spec.family == "ipv6" else self.target4
        self.ports = [BANNER_PORT, REQUEST_PORT]
        self.send = {REQUEST_PORT: "GET / HTTP/1.0\r\n\r\n"}
        self.expect = dict(spec.expect)
        self._service: Optional[subprocess.Popen] = None

    # ---- use -------------------------------------------------------------------------
    def run(self, ns: str, argv: Sequence[str], timeout: float = 60, check: bool = False,
            **kw) -> subprocess.CompletedProcess:
        """Run argv inside namespace ns; returns the CompletedProcess (text output)."""
        if ns not in self.namespaces:
            raise LabError(f"{ns} is not a namespace of lab {self.prefix}")
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        return subprocess.run(["ip", "netns", "exec", ns, *argv], timeout=timeout, check=check, **kw)

    def add_addresses(self, count: int) -> List[str]:
        """`count` more addresses for the target (up to 4096): a prefix routed to it and
        answered as local there (`ip route add local ... dev lo`, so echo, TCP and the
        services on :: answer on every one of them), routed by every router. For many-target
        runs; IPv4 in 10.200.0.0/20, IPv6 in fd00:200::/116, inside the lab only."""
        if not 1 <= count <= 4096:
            raise LabError(f"add_addresses: {count} is outside 1..4096")
        v6 = self.spec.family == "ipv6"
        bits = max(0, (count).bit_length())          # room for .1 .. count
        if v6:
            prefix = f"fd00:200::/{128 - bits}"
            addrs = [f"fd00:200::{i:x}" for i in range(1, count + 1)]
        else:
            prefix = f"10.200.0.0/{32 - bits}"
            addrs = [f"10.200.{i >> 8}.{i & 255}" for i in range(1, count + 1)]
        ip = ["ip", "-6"] if v6 else ["ip", "-4"]
        self._ns(self.target_ns, [*ip, "route", "add", "local", prefix, "dev", "lo"])
        for k, r in enumerate(self.routers):      # router k forwards on towards link k+2
            nxt = f"fd00:{k + 2}::2" if v6 else f"10.0.{k + 2}.2"
            self._ns(r, [*ip, "route", "add", prefix, "via", nxt])
        return addrs

    def describe(self) -> Dict:
        return {"prefix": self.prefix, "scenario": self.name, "client": self.client,
                "routers": self.routers, "target_ns": self.target_ns, "target": self.target,
                "target4": self.target4, "target6": self.target6, "ports": self.ports,
                "help": self.spec.help}

    # ---- build -----------------------------------------------------------------------
    def build(self) -> None:
        # recorded before anything exists, so an interrupted build can always be found
        write_state(self.prefix, {**self.describe(), "status": "building", "builder_pid": os.getpid()})
        for ns in self.namespaces:
            _sh(["ip", "netns", "add", ns], "create namespace")
            self._ns(ns, ["ip", "link", "set", "lo", "up"])
            self._ns(ns, ["sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0",
                          "net.ipv6.conf.default.accept_dad=0"])
        for r in self.routers:
            self._ns(r, ["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"])
        for i, mtu in enumerate(self.spec.mtus):
            left, right = self.namespaces[i], self.namespaces[i + 1]
            net = i + 1
            # the client end and the target end are .2/::2; routers face the client with .1
            self._ns(left, ["ip", "link", "add", f"v{net}a", "mtu", str(mtu), "type", "veth",
                            "peer", "name", f"v{net}b", "netns", right, "mtu", str(mtu)])
            la, ra = (2, 1) if i == 0 else (1, 2)
            self._addr(left, f"v{net}a", net, la)
            self._addr(right, f"v{net}b", net, ra)
            self._neighbours(left, f"v{net}a", right, f"v{net}b", net, la, ra)
        # routes: client and target default through their router; routers route onwards
        n = len(self.spec.mtus)
        self._route(self.client, "default", 1, 1)
        self._route(self.target_ns, "default", n, 1)
        for k, r in enumerate(self.routers):        # router k sits between link k+1 and k+2
            for net in range(1, n + 1):
                if net < k + 1:
                    self._route(r, f"10.0.{net}.0/24", k + 1, 1, net6=f"fd00:{net}::/64")
                elif net > k + 2:
                    self._route(r, f"10.0.{net}.0/24", k + 2, 2, net6=f"fd00:{net}::/64")
        for argv in self.spec.router_rules:
            for r in self.routers:
                self._ns(r, argv)
        for number, rules in self.spec.rules_at.items():
            for argv in rules:
                self._ns(self.routers[number - 1], argv)
        for argv in self.spec.target_rules:
            self._ns(self.target_ns, argv)
        self._start_service()

    def _ns(self, ns: str, argv: Sequence[str]) -> None:
        _sh(["ip", "netns", "exec", ns, *argv], f"lab {self.name} in {ns}")

    def _addr(self, ns: str, dev: str, net: int, host: int) -> None:
        self._ns(ns, ["ip", "addr", "add", f"10.0.{net}.{host}/24", "dev", dev])
        self._ns(ns, ["ip", "-6", "addr", "add", f"fd00:{net}::{host}/64", "dev", dev, "nodad"])
        self._ns(ns, ["ip", "link", "set", dev, "up"])

    def _neighbours(self, left: str, ldev: str, right: str, rdev: str, net: int, la: int, ra: int) -> None:
        """Permanent neighbour entries both ways: neighbour discovery in fresh namespaces
        was seen to hold the first IPv6 packets for up to a second, which is noise in a
        lab meant to time PMTU and MSS checks."""
        mac = {}
        for ns, dev in ((left, ldev), (right, rdev)):
            out = _sh(["ip", "netns", "exec", ns, "cat", f"/sys/class/net/{dev}/address"], "read MAC")
            mac[ns] = out.stdout.strip()
        for ns, dev, peer, host in ((left, ldev, right, ra), (right, rdev, left, la)):
            self._ns(ns, ["ip", "neigh", "replace", f"10.0.{net}.{host}", "lladdr", mac[peer], "dev", dev,
                          "nud", "permanent"])
            self._ns(ns, ["ip", "-6", "neigh", "replace", f"fd00:{net}::{host}", "lladdr", mac[peer], "dev", dev,
                          "nud", "permanent"])

    def _route(self, ns: str, dest: str, net: int, host: int, net6: Optional[str] = None) -> None:
        self._ns(ns, ["ip", "route", "add", dest, "via", f"10.0.{net}.{host}"])
        self._ns(ns, ["ip", "-6", "route", "add", net6 or dest, "via", f"fd00:{net}::{host}"])

    def _start_service(self) -> None:
        # `ip netns exec` execs the command in place: the pid is the service's own
        argv = ["ip", "netns", "exec", self.target_ns, sys.executable, "-c", SERVICE, SERVICE_MARK, self.prefix,
                str(self.spec.target_maxseg or 0), str(DATA_BYTES), *map(str, self.ports)]
        log = STATE_DIR / f"{self.prefix}.log"
        try:
            err = open(log, "w")
        except OSError as exc:
            raise LabError(f"cannot write {log}: {exc.strerror or exc}") from None
        with err:
            # its own session: `lab up` returns while the service keeps running
            self._service = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                             stderr=err, text=True, start_new_session=True)
        line = self._service.stdout.readline()
        if line.strip() != "ready":
            raise LabError(f"lab {self.name}: target service did not start: {log.read_text().strip()[-300:]}")
        write_state(self.prefix, {**self.describe(), "status": "up", "service_pid": self._service.pid,
                                  "service_start": _start_time(self._service.pid)})

    def close(self) -> List[str]:
        """Stop the service and remove the lab; returns what could not be removed."""
        if self._service is not None:
            with contextlib.suppress(Exception):
                self._service.kill()      # the child we started ourselves
                self._service.wait(5)
            self._service = None
        return teardown(self.prefix)


# ---- state: one JSON file per lab in STATE_DIR, written whole by rename ------------------
def write_state(prefix: str, data: Dict) -> None:
    path = STATE_DIR / f"{prefix}.json"
    tmp = STATE_DIR / f".{prefix}.json.{os.getpid()}.tmp"
    try:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w") as fh:
            fh.write(json.dumps(data))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise LabError(f"cannot write lab state {path}: {exc.strerror or exc}") from None


def read_state(prefix: str) -> Dict:
    """The recorded state of one lab, always with "prefix"; "damaged" says why a file
    could not be used (the lab can still be removed by its name)."""
    path = STATE_DIR / f"{prefix}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"prefix": prefix, "damaged": "no state file"}
    except OSError as exc:
        return {"prefix": prefix, "damaged": f"cannot read {path}: {exc.strerror or exc}"}
    except (ValueError, UnicodeError) as exc:
        return {"prefix": prefix, "damaged": f"{path} is not lab state ({str(exc)[:80]})"}
    if not isinstance(data, dict):
        return {"prefix": prefix, "damaged": f"{path} is not lab state (not an object)"}
    if data.get("prefix") != prefix:
        return {**data, "prefix": prefix, "damaged": f"{path} names lab {str(data.get('prefix'))[:20]!r}, "
                                                     "not its own file name"}
    return data


def labs() -> List[Dict]:
    """Labs recorded in STATE_DIR (built by `lab up`, still being built, or damaged).
    Raises LabError when the directory itself cannot be read."""
    try:
        if not STATE_DIR.exists():
            return []
        if not STATE_DIR.is_dir():
            raise LabError(f"lab state {STATE_DIR} is not a directory")
        names = sorted(p.name for p in STATE_DIR.iterdir())
    except OSError as exc:
        raise LabError(f"cannot read lab state {STATE_DIR}: {exc.strerror or exc}") from None
    out = []
    for name in names:
        if name.endswith(".json") and is_prefix(name[:-5]):
            info = read_state(name[:-5])
            if info.get("status") == "building" and not _alive(info.get("builder_pid")):
                info["status"] = "incomplete"      # its builder died (SIGKILL): half a lab
            out.append(info)
    return out


def _alive(pid) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_our_service(pid, prefix: str, start) -> bool:
    """True only when pid runs this lab's service: our mark and the lab's name in its
    command line, and the start time we recorded (a reused pid fails)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
        return False
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if SERVICE_MARK.encode() not in argv or prefix.encode() not in argv:
        return False
    return start is not None and _start_time(pid) == start


def lab_namespaces(prefix: str) -> List[str]:
    """This lab's namespaces that exist now: PREFIX-c, PREFIX-r1..., PREFIX-t, nothing else."""
    pattern = re.compile(re.escape(prefix) + r"-(c|t|r[0-9]+)")
    return [ns for ns in existing_namespaces() if pattern.fullmatch(ns)]


def teardown(prefix: str) -> List[str]:
    """Remove one lab: its namespaces (and what runs inside them), its service when it is
    provably ours, its state and log. Returns what could not be done, one line each."""
    if not is_prefix(prefix):
        return [f"{prefix!r} is not a lab name"]
    problems = []
    info = read_state(prefix)
    pid, start = info.get("service_pid"), info.get("service_start")
    if _is_our_service(pid, prefix, start):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for ns in lab_namespaces(prefix):
        # whatever runs inside the lab's own namespace belongs to the lab
        for p in _sh(["ip", "netns", "pids", ns], "list pids", check=False).stdout.split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(p), signal.SIGKILL)
        res = _sh(["ip", "netns", "del", ns], "delete namespace", check=False)
        if res.returncode != 0:
            problems.append(f"{prefix}: cannot delete namespace {ns}: {res.stderr.strip()}")
    for path in (STATE_DIR / f"{prefix}.json", STATE_DIR / f"{prefix}.log"):
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            problems.append(f"{prefix}: cannot remove {path}: {exc.strerror or exc}")
    return problems


def existing_namespaces() -> List[str]:
    res = _sh(["ip", "netns", "list"], "list namespaces", check=False)
    return [line.split()[0] for line in res.stdout.splitlines() if line.strip()]


def up(name: str, prefix: Optional[str] = None) -> Lab:
    """Build scenario `name` and leave it running; returns the Lab (close() or `lab down`).
    Anything that stops the build (an error, SIGINT, or SIGTERM/SIGHUP where the caller
    turns them into exceptions as the CLI does) removes what was built."""
    if name not in SCENARIOS:
        raise LabError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    missing = missing_tools() + [t for t in SCENARIOS[name].needs if shutil.which(t) is None]
    if missing:
        raise LabError(f"cannot build lab {name}: missing {', '.join(missing)}")
    prefix = prefix or f"{PREFIX}{secrets.token_hex(3)}"
    if not is_prefix(prefix):
        raise LabError(f"{prefix!r} is not a lab name ({PREFIX} and 6 hex digits)")
    lab = Lab(SCENARIOS[name], prefix)
    try:
        lab.build()
    except BaseException:
        with _signals_held():
            lab.close()
        raise
    return lab


@contextlib.contextmanager
def scenario(name: str) -> Iterator[Lab]:
    """Build a scenario network for the duration of the with-block, always torn down after."""
    lab = up(name)
    try:
        # give the kernel a moment to bring veths up (carrier) before the first packet
        _wait_reachable(lab)
        yield lab
    finally:
        lab.close()


def _wait_reachable(lab: Lab, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    for ns in lab.namespaces:
        while time.monotonic() < deadline:
            out = _sh(["ip", "netns", "exec", ns, "ip", "-o", "link", "show", "up"], "link state", check=False).stdout
            if "NO-CARRIER" not in out and "state DOWN" not in out:
                break
            time.sleep(0.02)
