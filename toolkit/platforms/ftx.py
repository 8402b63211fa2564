"""Stratus FTX (Stratus, "Tuning your MSS"): FTX 2.4 uses a default MSS below 1460 for non-local peers;
FTX 3.x advertises 1460. Seed 004 names no tunable for FTX 2.4, so neither do we."""
from __future__ import annotations

from typing import List, Optional, Tuple

from toolkit import calc, sources
from toolkit.findings import Recommendation
from toolkit.platforms import before

NAME = "ftx"


# Fleet collection (toolkit/fleet, docs/fleet.md): the command Ansible's `raw` runs on the
# host (no Python there) for the IP statistics, and the one that gives its boot time so a
# reboot is known, not guessed from counters (None where the OS has none we know).
# Seed 004, Figures 6d/6e. No boot-time command known to us on FTX: a reboot is
# recognised by the counters going down.
COLLECT = "netstat -s"
BOOT = None


def legacy(release: Optional[str]) -> Optional[bool]:
    """True on FTX 2.x (small default), False on 3.x, None when unknown."""
    return before(release, (3,))


def default_mss(release: Optional[str], local: Optional[bool]) -> Tuple[Optional[int], str]:
    if local:
        return None, "FTX uses the full MSS for peers on the same subnet"
    if legacy(release):
        return 536, f"FTX 2.4 uses a default MSS smaller than 1460 for non-local peers ({sources.MSS}; 536 assumed)"
    return None, "FTX 3.x advertises 1460 like HP-UX"


def raise_mss(path_mtu: int, release: Optional[str]) -> List[Recommendation]:
    return [Recommendation(
        "ftx-upgrade-3x", "Move the host to FTX 3.x, which advertises 1460",
        [], applies_to="FTX 2.4", where="release planning",
        caveats=["Seed 004 documents no command that changes FTX 2.4's default; none is invented here. "
                 "Check with Stratus support whether your FTX 2.4 build has a TCP MSS tunable."])]


def black_hole(path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    return []


def buffers(bdp: calc.Bdp) -> List[Recommendation]:
    return []


def pmtud(verdict: str, path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    return []   # "Tuning your MSS" names no FTX tunable for it; the network fixes (clamp the MSS) apply
