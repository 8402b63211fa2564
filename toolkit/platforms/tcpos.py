"""TCP_OS on VOS (Stratus, "Tuning your MSS"): tcpos_default_mss$ caps segments to non-local peers.

512 before VOS 14.7 (the otp-868 bug), 536 from 14.7 on. Unlike STCP's variable it
counts no TCP header: set it to PMTU - 40 (1460 = hex 5b4 on Ethernet), not 1480.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from toolkit import calc
from toolkit.findings import Recommendation
from toolkit.platforms import before

NAME = "tcpos"


# Fleet collection (toolkit/fleet, docs/fleet.md): the command Ansible's `raw` runs on the
# host (no Python there) for the IP statistics, and the one that gives its boot time so a
# reboot is known, not guessed from counters (None where the OS has none we know).
# Seed 004, Figure 6b (TCP_OS on VOS). No boot-time command known to us: a reboot is
# recognised by the counters going down.
COLLECT = "netstat -s"
BOOT = None


def default_mss(release: Optional[str], local: Optional[bool]) -> Tuple[Optional[int], str]:
    if local:
        return None, "TCP_OS uses the full MSS for peers on the same subnet"
    old = before(release, (14, 7))
    if old is True:
        return 512, "tcpos_default_mss$ is 512 before VOS 14.7 (otp-868 not fixed yet)"
    if old is False:
        return 536, "tcpos_default_mss$ is 536 from VOS 14.7 (the otp-868 fix)"
    return 536, "tcpos_default_mss$ is 512 before VOS 14.7 and 536 from 14.7 (otp-868); release unknown"


def value_for(path_mtu: int) -> int:
    return path_mtu - calc.IPV4 - calc.TCP


def raise_mss(path_mtu: int, release: Optional[str]) -> List[Recommendation]:
    value = value_for(path_mtu)
    hexv = format(value, "x")
    current, why = default_mss(release, False)
    shown = {True: "200 (512)", False: "218 (536)"}.get(before(release, (14, 7)), "200 (512) before 14.7, 218 (536) after")
    return [
        Recommendation(
            "tcpos-set-longword-default-mss", f"Set tcpos_default_mss$ to {value} = hex {hexv} after the driver loads",
            [f"analyze_system -request_line 'set_longword tcpos_default_mss$ {hexv}' -quit"],
            applies_to="VOS with TCP_OS, any release", where="after the TCP_OS driver is loaded, after every boot",
            caveats=[f"No TCP header counted: {value}, not {value + calc.TCP}. set_longword takes hex; "
                     f"the 'from' column should show {shown}.", why]),
        Recommendation(
            "tcpos-set-external-variable-tcp-pm", f"Or patch tcp.pm: tcpos_default_mss$ {value}",
            ["get_external_variable tcpos_default_mss$ -in tcp.pm -type integer",
             f"set_external_variable tcpos_default_mss$ -in tcp.pm -type integer -to {value}"],
            applies_to="VOS with TCP_OS, any release", where="while the TCP_OS driver is not loaded",
            caveats=["Permanent for this release only: redo after every VOS upgrade, and mark the file "
                     "(set_pm_version) so the change is not forgotten.",
                     f"get_external_variable should print {current if before(release, (14, 7)) is not None else '512 or 536'} first."]),
    ]


def black_hole(path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    if path_mtu is None:
        return []   # TCP_OS does no PMTU discovery: the MSS needs the measured path
    return raise_mss(path_mtu, release)[:1] if value_for(path_mtu) < 1460 else []


def buffers(bdp: calc.Bdp) -> List[Recommendation]:
    return []


def pmtud(verdict: str, path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    """--pmtud-check found no PMTU discovery: TCP_OS does none; its MSS is set to the path."""
    if verdict == "honours" or path_mtu is None:
        return []
    return raise_mss(path_mtu, release)[:1]
