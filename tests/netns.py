"""A small network-namespace kit for tests: namespaces, veth pairs, addresses, MTUs, commands.

Names carry the test's pid so parallel runs never collide, and close() deletes every
namespace it made (their veth ends go with them). Traffic only ever flows between
namespaces made here.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Dict, List, Optional, Sequence, Tuple


def unavailable() -> Optional[str]:
    """Why namespace tests cannot run here, or None when they can."""
    if os.geteuid() != 0:
        return "needs root to create network namespaces (ip netns)"
    if shutil.which("ip") is None:
        return "iproute2 `ip` is not installed (make system-deps)"
    probe = f"mdprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class Netns:
    """Namespaces and links for one test; use as a context manager or call close()."""

    def __init__(self, tag: str = "t"):
        self.tag = f"{tag}{os.getpid()}"
        self.namespaces: List[str] = []
        self._links = 0

    def __enter__(self) -> "Netns":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _ip(self, *args: str) -> None:
        done = subprocess.run(["ip", *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")

    def ns(self, role: str, forwarding: bool = False) -> str:
        name = f"md-{role}-{self.tag}"
        self._ip("netns", "add", name)
        self.namespaces.append(name)
        self._ip("-n", name, "link", "set", "lo", "up")
        self.sysctl(name, "net.ipv4.ip_forward", "1" if forwarding else "0")
        return name

    def link(self, a: str, b: str, mtu: int = 1500) -> Tuple[str, str]:
        """A veth pair from namespace a to b with the given MTU on both ends; returns the names."""
        self._links += 1
        end_a, end_b = f"mv{self._links}{os.getpid()}a", f"mv{self._links}{os.getpid()}b"
        self._ip("link", "add", end_a, "type", "veth", "peer", "name", end_b)
        for end, ns in ((end_a, a), (end_b, b)):
            self._ip("link", "set", end, "netns", ns)
            self._ip("-n", ns, "link", "set", end, "mtu", str(mtu), "up")
        return end_a, end_b

    def addr(self, ns: str, dev: str, cidr: str, *flags: str) -> None:
        """Add an address; IPv6 ones skip duplicate address detection so they work at once."""
        if ":" in cidr and "nodad" not in flags:
            flags = (*flags, "nodad")
        self._ip("-n", ns, "addr", "add", cidr, "dev", dev, *flags)

    def route(self, ns: str, dest: str, via: str) -> None:
        self._ip("-n", ns, "route", "add", dest, "via", via)

    def sysctl(self, ns: str, key: str, value: str) -> None:
        path = "/proc/sys/" + key.replace(".", "/")
        self.run(ns, ["sh", "-c", f"echo {value} > {path}"], check=True)

    def run(self, ns: str, argv: Sequence[str], check: bool = False, env: Optional[Dict[str, str]] = None,
            timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True,
                              check=check, env=env, timeout=timeout)

    def popen(self, ns: str, argv: Sequence[str]) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def close(self) -> None:
        for name in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        self.namespaces.clear()
