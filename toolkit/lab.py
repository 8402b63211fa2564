"""Scenario networks in Linux network namespaces: client -> router(s) -> target.

`with scenario("bottleneck") as lab:` builds one, starts the target's TCP services and
tears everything down on exit (also after an error). `lab up/down/list` on the command
line keep a lab alive so an engineer can reproduce a case by hand.

Each lab gets its own namespace names (prefix "mssd" + random hex), so parallel test
runs never collide; veth pairs are created straight inside the namespaces, so nothing
is left in the root namespace. Every lab records itself in STATE_DIR so `lab down`
can find it. Traffic only ever flows between the namespaces built here.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

STATE_DIR = Path(os.environ.get("MSSDIAG_LAB_STATE", "/run/mssdiag-lab"))
PREFIX = "mssd"
BANNER_PORT = 21      # talks first, like ftp/smtp/telnet
REQUEST_PORT = 80     # answers a request, like http
DATA_BYTES = 6000     # enough for several full-size segments


class LabError(Exception):
    """A lab could not be built or used; the message names the step."""


@dataclass
class Spec:
    name: str
    help: str
    routers: int = 1
    mtus: Sequence[int] = (1500, 1500)          # one per link, client side first
    family: str = "ipv4"
    router_rules: Sequence[Sequence[str]] = ()  # argv run in every router namespace
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
LOSS_10 = ("iptables", "-A", "FORWARD", "-m", "statistic", "--mode", "random", "--probability", "0.1", "-j", "DROP")
LIMIT_FRAG_NEEDED = [("iptables", "-A", "OUTPUT", "-p", "icmp", "--icmp-type", "fragmentation-needed",
                      "-m", "limit", "--limit", "1/second", "--limit-burst", "1", "-j", "ACCEPT"), DROP_FRAG_NEEDED]
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
    Spec("legacy536", "all links 1500; the target listens with TCP_MAXSEG 536 (STCP/TCP_OS-like legacy host)",
         target_maxseg=536,
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
    # robustness cases beyond the seven of issue 3
    Spec("lossy", "as bottleneck, and the router drops 10% of the packets it forwards (random loss)",
         mtus=(1500, 1400), router_rules=[LOSS_10],
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1")),
    Spec("lossyhole", "as blackhole, and the router drops 10% of the packets it forwards",
         mtus=(1500, 1400), router_rules=[DROP_FRAG_NEEDED, LOSS_10],
         expect=dict(pmtu=1400, pmtu_method="inferred", black_hole=True, hop="10.0.1.1")),
    Spec("ratelimit", "as bottleneck, but the router sends at most one ICMP frag-needed a second",
         mtus=(1500, 1400), router_rules=LIMIT_FRAG_NEEDED,
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1")),
    Spec("oldrouter", "as bottleneck, but the router's frag-needed says next-hop MTU 0 (RFC 1191 plateaus)",
         mtus=(1500, 1400), router_rules=[MTU_ZERO], needs=("nft",),
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1")),
    Spec("smalllocal", "the client's own link has MTU 1300, the rest 1500",
         mtus=(1300, 1500),
         expect=dict(pmtu=1300, pmtu_method="local", black_hole=False, hop=None,
                     mss=dict(sent=1260, synack=1460, used=1248), codes=set())),
    Spec("noecho", "as bottleneck, and the target drops ICMP echo requests",
         mtus=(1500, 1400), target_rules=[DROP_ECHO],
         expect=dict(pmtu=1400, pmtu_method="icmp", black_hole=False, hop="10.0.1.1",
                     mss=dict(sent=1460, synack=1360, used=1348), codes={"pmtu-reduced", "echo-filtered"})),
]}

# The target's services: a banner port that talks first and a request port that answers.
SERVICE = r"""
import socket, sys, threading
maxseg = int(sys.argv[1]); size = int(sys.argv[2]); ports = [int(p) for p in sys.argv[3:]]
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

    def describe(self) -> Dict:
        return {"prefix": self.prefix, "scenario": self.name, "client": self.client,
                "routers": self.routers, "target_ns": self.target_ns, "target": self.target,
                "target4": self.target4, "target6": self.target6, "ports": self.ports,
                "help": self.spec.help}

    # ---- build -----------------------------------------------------------------------
    def build(self) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        (STATE_DIR / f"{self.prefix}.json").write_text(json.dumps(self.describe()))
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
        argv = ["ip", "netns", "exec", self.target_ns, sys.executable, "-c", SERVICE,
                str(self.spec.target_maxseg or 0), str(DATA_BYTES), *map(str, self.ports)]
        log = STATE_DIR / f"{self.prefix}.log"
        with open(log, "w") as err:
            # its own session: `lab up` returns while the service keeps running
            self._service = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                             stderr=err, text=True, start_new_session=True)
        line = self._service.stdout.readline()
        if line.strip() != "ready":
            raise LabError(f"lab {self.name}: target service did not start: {log.read_text().strip()[-300:]}")
        state = STATE_DIR / f"{self.prefix}.json"
        data = json.loads(state.read_text())
        data["service_pid"] = self._service.pid
        state.write_text(json.dumps(data))

    def close(self) -> None:
        if self._service is not None:
            with contextlib.suppress(Exception):
                self._service.kill()
                self._service.wait(5)
            self._service = None
        teardown(self.prefix)


def teardown(prefix: str) -> None:
    """Remove one lab's namespaces (killing what runs in them) and its state file."""
    state = STATE_DIR / f"{prefix}.json"
    with contextlib.suppress(Exception):
        pid = json.loads(state.read_text()).get("service_pid")
        if pid:
            os.kill(int(pid), 9)
    for ns in existing_namespaces():
        if ns == prefix or ns.startswith(prefix + "-"):
            pids = _sh(["ip", "netns", "pids", ns], "list pids", check=False).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), 9)
            _sh(["ip", "netns", "del", ns], "delete namespace", check=False)
    for path in (state, STATE_DIR / f"{prefix}.log"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def existing_namespaces() -> List[str]:
    res = _sh(["ip", "netns", "list"], "list namespaces", check=False)
    return [line.split()[0] for line in res.stdout.splitlines() if line.strip()]


def labs() -> List[Dict]:
    """Labs recorded in STATE_DIR (built by `lab up` or still running)."""
    out = []
    for path in sorted(STATE_DIR.glob(f"{PREFIX}*.json")) if STATE_DIR.is_dir() else []:
        with contextlib.suppress(ValueError, OSError):
            out.append(json.loads(path.read_text()))
    return out


def up(name: str, prefix: Optional[str] = None) -> Lab:
    """Build scenario `name` and leave it running; returns the Lab (close() or `lab down`)."""
    if name not in SCENARIOS:
        raise LabError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    missing = missing_tools() + [t for t in SCENARIOS[name].needs if shutil.which(t) is None]
    if missing:
        raise LabError(f"cannot build lab {name}: missing {', '.join(missing)}")
    lab = Lab(SCENARIOS[name], prefix or f"{PREFIX}{secrets.token_hex(3)}")
    try:
        lab.build()
    except BaseException:
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
