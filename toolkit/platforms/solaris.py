"""Solaris: PMTU discovery on by default (ip_path_mtu_discovery); leave the MSS alone."""
from __future__ import annotations

from typing import List, Optional, Tuple

from toolkit import calc
from toolkit.findings import Recommendation

NAME = "solaris"


# Fleet collection (toolkit/fleet, docs/fleet.md): the command Ansible's `raw` runs on the
# host (no Python there) for the IP statistics, and the one that gives its boot time so a
# reboot is known, not guessed from counters (None where the OS has none we know).
# kstat: the boot time in epoch seconds (Solaris 8 and later, illumos).
COLLECT = "env LC_ALL=C netstat -s"
BOOT = "kstat -p unix:0:system_misc:boot_time"


def default_mss(release: Optional[str], local: Optional[bool]) -> Tuple[Optional[int], str]:
    return None, "Solaris advertises its MTU's MSS and does PMTU discovery"


def raise_mss(path_mtu: int, release: Optional[str]) -> List[Recommendation]:
    return []


def black_hole(path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    if path_mtu is None:
        return []   # the only host-side knob is the interface MTU, which needs a measured number
    return [Recommendation(
        "solaris-interface-mtu", f"Set the interface MTU to {path_mtu}",
        ["ndd -get /dev/ip ip_path_mtu_discovery", f"ifconfig <interface> mtu {path_mtu}",
         f"# Solaris 11: ipadm set-ifprop -p mtu={path_mtu} -m ipv4 <interface>"],
        applies_to="Solaris 10 and 11", where="root shell",
        caveats=["Every destination on the interface gets the smaller MTU; fixing the ICMP filter is better."])]


def buffers(bdp: calc.Bdp) -> List[Recommendation]:
    v = bdp.buffer_mib_rounded
    return [Recommendation(
        "solaris-tcp-buffers", "Raise the TCP buffer limits for this path",
        [f"ndd -set /dev/tcp tcp_max_buf {v}", f"ndd -set /dev/tcp tcp_recv_hiwat {v // 2}",
         f"ndd -set /dev/tcp tcp_xmit_hiwat {v // 2}"],
        applies_to="Solaris 10 (Solaris 11: ipadm set-prop -p max_buf= / recv_buf= / send_buf= tcp)",
        where="root shell; ndd settings are lost at reboot")]


def pmtud(verdict: str, path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    if verdict == "honours":
        return []
    return [Recommendation(
        "solaris-path-mtu-discovery", "Turn PMTU discovery on",
        ["ndd -get /dev/ip ip_path_mtu_discovery", "ndd -set /dev/ip ip_path_mtu_discovery 1"],
        applies_to="Solaris", where="root shell; ndd settings are lost at reboot (persist in a start-up script)")]
