"""client – r1 – r2 – targets in namespaces, with a 1400-byte hop between the routers.

Every end is at MTU 1500; r1's link to r2 is 1400, so what crosses it larger than that with
DF set gets "fragmentation needed" from r1 (or nothing, when r1 drops its own ICMP). Targets
behind r2 serve TCP: each accepts one connection at a time, reads what the client sends,
and sends what it is asked for; a target may clamp its MSS (TCP_MAXSEG, the legacy 536).
A `healthy` target hangs off r1 on a 1500 path. Traffic only ever flows between these
namespaces; close() deletes them all.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from typing import Dict, List, Optional

from netns import Netns

SERVER = textwrap.dedent("""
    import socket, sys
    mss = int(sys.argv[2])
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if mss:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
    s.bind((sys.argv[1], 5000))
    s.listen(64)
    print("ready", flush=True)
    while True:
        c, _ = s.accept()
        c.settimeout(120)
        try:
            want = int(c.recv(16).split(b" ")[0] or b"0")
            if want:
                c.sendall(b"d" * want)
            while c.recv(65536):
                pass
        except OSError:
            pass
        c.close()
""")

# The client's side of one exchange: ask for `get` bytes, send `put` bytes, hold the socket
# open `hold` seconds (so `ss` sees it), never waiting more than `wait` for the path.
CLIENT = textwrap.dedent("""
    import socket, sys, time
    addr, get, put, hold, wait = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    s = socket.create_connection((addr, 5000), timeout=5)
    s.sendall(b"%-15d" % get)
    s.settimeout(wait)
    got = 0
    try:
        while got < get:
            d = s.recv(65536)
            if not d:
                break
            got += len(d)
        if put:
            s.setblocking(False)
            sent = 0
            end = time.time() + wait
            while sent < put and time.time() < end:
                try:
                    sent += s.send(b"u" * min(65536, put - sent))
                except BlockingIOError:
                    time.sleep(0.01)
    except OSError:
        pass
    print(got, flush=True)
    time.sleep(hold)
""")


class PathLab:
    """The namespaces and links; `targets` maps a name to (address, mss) behind r2."""

    def __init__(self, targets: Dict[str, int], drop_ptb: bool = False, tag: str = "pl"):
        self.net = Netns(tag)
        self.servers: List[subprocess.Popen] = []
        self.clients: List[subprocess.Popen] = []
        self.addresses: Dict[str, str] = {}
        try:
            self._build(targets, drop_ptb)
        except BaseException:
            self.close()
            raise

    def _build(self, targets: Dict[str, int], drop_ptb: bool) -> None:
        net = self.net
        self.client = net.ns("client")
        self.r1 = net.ns("r1", forwarding=True)
        self.r2 = net.ns("r2", forwarding=True)
        c, r1a = net.link(self.client, self.r1)
        r1b, r2a = net.link(self.r1, self.r2, mtu=1400)
        net.addr(self.client, c, "10.0.1.2/24")
        net.addr(self.r1, r1a, "10.0.1.1/24")
        net.addr(self.r1, r1b, "10.0.2.1/24")
        net.addr(self.r2, r2a, "10.0.2.2/24")
        net.route(self.client, "default", "10.0.1.1")
        net.route(self.r1, "10.0.3.0/24", "10.0.2.2")
        net.route(self.r1, "10.0.4.0/24", "10.0.2.2")
        net.route(self.r2, "10.0.1.0/24", "10.0.2.1")
        # IPv6 beside it on the same links (fd00:N::/64), for the IPv6 route cache
        for ns, dev, cidr in ((self.client, c, "fd00:1::2/64"), (self.r1, r1a, "fd00:1::1/64"),
                              (self.r1, r1b, "fd00:2::1/64"), (self.r2, r2a, "fd00:2::2/64")):
            net.addr(ns, dev, cidr)
        for ns in (self.r1, self.r2):
            net.sysctl(ns, "net.ipv6.conf.all.forwarding", "1")
        net.route(self.client, "default", "fd00:1::1")
        net.route(self.r1, "fd00:3::/64", "fd00:2::2")
        net.route(self.r2, "fd00:1::/64", "fd00:2::1")
        # the targets behind r2 share one link; the healthy one hangs off r1
        self.t = net.ns("targets")
        r2b, tb = net.link(self.r2, self.t)
        net.addr(self.r2, r2b, "10.0.3.1/24")
        net.addr(self.r2, r2b, "fd00:3::1/64")
        for i, name in enumerate(targets, 2):
            self.addresses[name] = f"10.0.3.{i}"
            net.addr(self.t, tb, f"10.0.3.{i}/24")
            net.addr(self.t, tb, f"fd00:3::{i}/64")
        net.route(self.t, "default", "10.0.3.1")
        net.route(self.t, "default", "fd00:3::1")
        self.h = net.ns("healthy")
        r1c, hc = net.link(self.r1, self.h)
        net.addr(self.r1, r1c, "10.0.5.1/24")
        net.addr(self.h, hc, "10.0.5.2/24")
        net.route(self.h, "default", "10.0.5.1")
        for name, mss in targets.items():
            self._serve(self.t, self.addresses[name], mss)
        self.addresses["healthy"] = "10.0.5.2"
        self._serve(self.h, "10.0.5.2", 0)
        if drop_ptb:
            net.run(self.r1, ["iptables", "-A", "OUTPUT", "-p", "icmp", "--icmp-type", "fragmentation-needed",
                              "-j", "DROP"], check=True)
            net.run(self.r1, ["ip6tables", "-A", "OUTPUT", "-p", "icmpv6", "--icmpv6-type", "packet-too-big",
                              "-j", "DROP"], check=True)

    def _serve(self, ns: str, address: str, mss: int) -> None:
        p = self.net.popen(ns, [sys.executable, "-c", SERVER, address, str(mss)])
        self.servers.append(p)
        line = p.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"server {address}: {p.stderr.read()}")

    def exchange(self, target: str, get: int = 0, put: int = 0, hold: float = 30, wait: float = 10) -> subprocess.Popen:
        """A connection from the client to `target` (kept open `hold` s, in the background)."""
        p = self.net.popen(self.client, [sys.executable, "-c", CLIENT, self.addresses[target], str(get), str(put),
                                         str(hold), str(wait)])
        self.clients.append(p)
        return p

    def ping6(self, target: str, size: int = 1452) -> None:
        """Echo requests of `size` bytes to a target's IPv6 address: through the 1400 hop they
        bring back a Packet Too Big (when r1 lets it out)."""
        address = self.addresses[target].replace("10.0.3.", "fd00:3::")
        self.net.run(self.client, ["ping", "-6", "-c", "2", "-W", "1", "-s", str(size), "-M", "do", address])

    def sysctl(self, key: str, value: str) -> None:
        self.net.sysctl(self.client, key, value)

    def client_text(self, *argv: str) -> str:
        done = self.net.run(self.client, list(argv), check=True)
        return done.stdout

    def wait_sent(self, p: subprocess.Popen, timeout: float = 30) -> str:
        """The client's first output line (bytes received) once its sending is over."""
        end = time.time() + timeout
        line = p.stdout.readline() if p.stdout else ""
        if time.time() > end:
            raise RuntimeError("client did not finish")
        return line.strip()

    def close(self) -> None:
        for p in self.clients + self.servers:
            if p.poll() is None:
                p.kill()
            p.wait()
        self.clients, self.servers = [], []
        self.net.close()
