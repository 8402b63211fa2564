"""IBM AIX: PMTU discovery with `no -o tcp_pmtu_discover`; leave the MSS alone."""
from __future__ import annotations

from typing import List, Optional, Tuple

from toolkit import calc
from toolkit.findings import Recommendation

NAME = "aix"


# Fleet collection (toolkit/fleet, docs/fleet.md): the command Ansible's `raw` runs on the
# host (no Python there) for the IP statistics, and the one that gives its boot time so a
# reboot is known, not guessed from counters (None where the OS has none we know).
# `env` sets the C locale from any login shell (ksh, csh): AIX's netstat and uptime
# speak the locale's language otherwise. uptime: the boot time to the minute.
COLLECT = "env LC_ALL=C netstat -s"
BOOT = "env LC_ALL=C uptime"


def default_mss(release: Optional[str], local: Optional[bool]) -> Tuple[Optional[int], str]:
    return None, "AIX does PMTU discovery (tcp_pmtu_discover=1); tcp_mssdflt applies only without it"


def raise_mss(path_mtu: int, release: Optional[str]) -> List[Recommendation]:
    return []


def black_hole(path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    if path_mtu is None:
        return []   # the only host-side knob is the interface MTU, which needs a measured number
    return [Recommendation(
        "aix-interface-mtu", f"Set the interface MTU to {path_mtu}",
        ["no -o tcp_pmtu_discover", f"chdev -l en0 -a mtu={path_mtu}"],
        applies_to="AIX 5.3 and later", where="root shell (replace en0 by the interface)",
        caveats=["Every destination on the interface gets the smaller MTU; fixing the ICMP filter is better."])]


def buffers(bdp: calc.Bdp) -> List[Recommendation]:
    v = bdp.buffer_mib_rounded
    return [Recommendation(
        "aix-tcp-buffers", "Raise sb_max and the TCP space for this path",
        [f"no -p -o sb_max={2 * v}", f"no -p -o tcp_recvspace={v}", f"no -p -o tcp_sendspace={v}",
         "no -p -o rfc1323=1"],
        applies_to="AIX 5.3 and later", where="root shell (-p persists)",
        caveats=["Interface-specific network options (ISNO) on the adapter override these."])]


def pmtud(verdict: str, path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    if verdict == "honours":
        return []
    return [Recommendation(
        "aix-tcp-pmtu-discover", "Turn TCP PMTU discovery on",
        ["no -o tcp_pmtu_discover", "no -p -o tcp_pmtu_discover=1"],
        applies_to="AIX", where="root shell (-p keeps it across reboots)",
        caveats=["With it off AIX sends tcp_mssdflt-sized segments to non-local peers."])]
