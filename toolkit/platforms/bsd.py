"""FreeBSD and other BSDs: PMTU discovery on by default; leave the MSS alone."""
from __future__ import annotations

from typing import List, Optional, Tuple

from toolkit import calc
from toolkit.findings import Recommendation

NAME = "bsd"


# Fleet collection (toolkit/fleet, docs/fleet.md): the command Ansible's `raw` runs on the
# host (no Python there) for the IP statistics, and the one that gives its boot time so a
# reboot is known, not guessed from counters (None where the OS has none we know).
# kern.boottime: `{ sec = 1700000000, usec = 0 } ...` (FreeBSD, macOS), the bare epoch
# (OpenBSD): the boot time to the second.
COLLECT = "env LC_ALL=C netstat -s"
BOOT = "sysctl -n kern.boottime"


def default_mss(release: Optional[str], local: Optional[bool]) -> Tuple[Optional[int], str]:
    return None, "BSD stacks advertise their MTU's MSS and do PMTU discovery"


def raise_mss(path_mtu: int, release: Optional[str]) -> List[Recommendation]:
    return []


def black_hole(path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    detect = Recommendation(
        "bsd-pmtud-blackhole-detection", "Turn on PMTU black-hole detection",
        ["sysctl net.inet.tcp.pmtud_blackhole_detection=1",
         "echo 'net.inet.tcp.pmtud_blackhole_detection=1' >> /etc/sysctl.conf"],
        applies_to="FreeBSD 10 and later", where="root shell")
    if path_mtu is None:
        return [detect]
    return [detect, Recommendation(
        "bsd-interface-mtu", f"Or set the interface MTU to {path_mtu}",
        [f"ifconfig <interface> mtu {path_mtu}"], applies_to="FreeBSD, NetBSD, OpenBSD", where="root shell",
        caveats=["Every destination on the interface gets the smaller MTU."])]


def buffers(bdp: calc.Bdp) -> List[Recommendation]:
    v = bdp.buffer_mib_rounded
    return [Recommendation(
        "bsd-tcp-buffers", "Raise the socket buffer ceiling for this path",
        [f"sysctl kern.ipc.maxsockbuf={2 * v}", f"sysctl net.inet.tcp.sendbuf_max={v}",
         f"sysctl net.inet.tcp.recvbuf_max={v}"],
        applies_to="FreeBSD", where="root shell; persist in /etc/sysctl.conf")]


def pmtud(verdict: str, path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    if verdict == "honours":
        return []
    return [Recommendation(
        "bsd-path-mtu-discovery", "Turn TCP PMTU discovery on",
        ["sysctl net.inet.tcp.path_mtu_discovery", "sysctl net.inet.tcp.path_mtu_discovery=1",
         "echo 'net.inet.tcp.path_mtu_discovery=1' >> /etc/sysctl.conf"],
        applies_to="FreeBSD", where="root shell",
        caveats=["Other BSDs name it differently; check their sysctl -a for pmtu."])]
