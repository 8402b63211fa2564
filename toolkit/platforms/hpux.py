"""HP-UX 11: advertises 1460 and does PMTU discovery (Stratus, "Tuning your MSS"): leave the MSS alone.

For black holes the knob is ndd's ip_pmtu_strategy (default 2 on 11.00; 11i dropped 2):
0 disables PMTU discovery, 3 (where supported) is what HP advises behind filters that
drop ICMP; both can cost throughput. Persist through /etc/rc.config.d/nddconf.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from toolkit import calc, sources
from toolkit.findings import Recommendation

NAME = "hpux"


# Fleet collection (toolkit/fleet, docs/fleet.md): the command Ansible's `raw` runs on the
# host (no Python there) for the IP statistics, and the one that gives its boot time so a
# reboot is known, not guessed from counters (None where the OS has none we know).
# Seed 004, Figure 6f. uptime: the boot time to the minute.
COLLECT = "env LC_ALL=C netstat -s"
BOOT = "env LC_ALL=C uptime"


def default_mss(release: Optional[str], local: Optional[bool]) -> Tuple[Optional[int], str]:
    return None, f"HP-UX advertises 1460 on Ethernet and does PMTU discovery ({sources.MSS})"


def raise_mss(path_mtu: int, release: Optional[str]) -> List[Recommendation]:
    return []


def _nddconf(name: str, value: int) -> List[str]:
    return ["TRANSPORT_NAME[<n>]=ip", f"NDD_NAME[<n>]={name}", f"NDD_VALUE[<n>]={value}"]


def black_hole(path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    return [Recommendation(
        "hpux-ndd-pmtu-strategy", "Stop relying on ICMP for PMTU discovery (ndd ip_pmtu_strategy)",
        ["ndd -get /dev/ip ip_pmtu_strategy", "ndd -set /dev/ip ip_pmtu_strategy 3",
         "# if 3 is refused on this release: ndd -set /dev/ip ip_pmtu_strategy 0",
         "# persist: add to /etc/rc.config.d/nddconf (next free index <n>), then ndd -c"] + _nddconf("ip_pmtu_strategy", 3),
        applies_to="HP-UX 11.x", where="root shell; /etc/rc.config.d/nddconf to survive a reboot",
        caveats=["Strategies 0 and 3 can lower throughput (smaller segments to non-local peers): prefer the "
                 "network fix (let ICMP type 3 code 4 through) when you control the filter.",
                 "ndd -set alone is lost at reboot."])]


def buffers(bdp: calc.Bdp) -> List[Recommendation]:
    v = min(bdp.buffer_mib_rounded, 2 ** 31 - 1)
    return [Recommendation(
        "hpux-ndd-tcp-buffers", "Raise the default TCP window sizes for this path",
        [f"ndd -set /dev/tcp tcp_recv_hiwater_def {v}", f"ndd -set /dev/tcp tcp_xmit_hiwater_def {v}"],
        applies_to="HP-UX 11.x", where="root shell; persist in /etc/rc.config.d/nddconf",
        caveats=["Applications that set SO_RCVBUF/SO_SNDBUF themselves are not affected."])]


def pmtud(verdict: str, path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    if verdict == "honours":
        return []
    return [Recommendation(
        "hpux-ndd-pmtu-strategy-on", "Check ip_pmtu_strategy: 0 turns PMTU discovery off",
        ["ndd -get /dev/ip ip_pmtu_strategy", "ndd -set /dev/ip ip_pmtu_strategy 1",
         "# persist: /etc/rc.config.d/nddconf (next free index <n>), then ndd -c"] + _nddconf("ip_pmtu_strategy", 1),
        applies_to="HP-UX 11.x", where="root shell; /etc/rc.config.d/nddconf to survive a reboot",
        caveats=["11.00's default was 2; 11i dropped 2: keep the release's default if it is not 0."])]
