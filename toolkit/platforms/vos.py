"""Stratus VOS with STCP (Stratus, "Tuning your MSS"): 536-byte segments to every non-local peer.

STCP's variable default_min_mtu (556 by default) counts the 20-byte TCP header, so the
value for a path is PMTU - 20: 1480 on Ethernet, giving 1460-byte segments. The peer's
advertised MSS still caps it when smaller.
"""
from __future__ import annotations
from typing import List, Optional, TYPE_CHECKING, Tuple

from toolkit import calc, sources
from toolkit.platforms import before


if TYPE_CHECKING:
    from toolkit.findings import Recommendation

NAME = "vos"
DEFAULT_MIN_MTU = 556          # shown by display/list_stcp_params; 536 + 20 TCP header
MIN_MSS_RANGE = (500, 1480)    # list_stcp_params: "maximum tcp segment size [500-1480]"
START = "at the end of start_stcp.cm (runs after every boot, once STCP has started)"
CAPTURE_CAVEAT = ("packet_monitor on VOS does NOT show fragments: it sees packets after reassembly "
                  f"({sources.MSS}); capture outside the host.")


def default_mss(release: Optional[str], local: Optional[bool]) -> Tuple[Optional[int], str]:
    if local:
        return None, "STCP uses the interface's full MSS for peers on the same subnet"
    return DEFAULT_MIN_MTU - calc.TCP, f"STCP sends at most 536 bytes in any segment to a non-local peer, whatever the peer advertises ({sources.MSS})"


def value_for(path_mtu: int, family: str = "ipv4") -> int:
    """min_mss / default_min_mtu for a path: PMTU - IP header (20, or 40 for IPv6), i.e. the
    MSS plus the 20-byte TCP header STCP counts, within STCP's range."""
    header = calc.IPV6 if family == "ipv6" else calc.IPV4
    return max(MIN_MSS_RANGE[0], min(MIN_MSS_RANGE[1], path_mtu - header))


def raise_mss(path_mtu: int, release: Optional[str]) -> List[Recommendation]:
    from toolkit.findings import Recommendation     # here: `calc` reads value_for alone
    value = value_for(path_mtu)
    hexv = format(value, "x")
    old = before(release, (14, 7))
    recs = []
    new_cmd = Recommendation(
        "vos-set-stcp-param-min-mss", f"Set STCP min_mss to {value} (VOS 14.7 and later)",
        [f"analyze_system -request_line 'set_stcp_param min_mss {value}' -quit"],
        applies_to="VOS 14.7 and later", where=START,
        caveats=["Check first: analyze_system -request_line 'list_stcp_params min_mss' -quit (default 556).",
                 "Must run after each boot once STCP is started: that is why it goes in start_stcp.cm."])
    old_cmd = Recommendation(
        "vos-set-longword-default-min-mtu", f"Set default_min_mtu to {value} = hex {hexv} (releases before 14.7)",
        [f"analyze_system -request_line 'set_longword default_min_mtu {hexv}' -quit"],
        applies_to="VOS releases before 14.7", where=START,
        caveats=["set_longword takes hex: 1480 is 5c8. Check with the analyze_system request "
                 "'display default_min_mtu' (22c = 556 by default).",
                 "Must run after each boot once STCP is started: that is why it goes in start_stcp.cm."])
    if old is True:
        recs.append(old_cmd)
    elif old is False:
        recs.append(new_cmd)
    else:
        new_cmd.caveats.insert(0, "Release unknown: use this on 14.7 and later, the set_longword form before.")
        recs += [new_cmd, old_cmd]
    recs.append(Recommendation(
        "vos-set-external-variable-ip-cp-pm", f"Or patch ip.cp.pm once per release: default_min_mtu {value}",
        ["get_external_variable default_min_mtu -in ip.cp.pm -type integer",
         f"set_external_variable default_min_mtu -in ip.cp.pm -type integer -to {value}",
         "get_pm_version ip.cp.pm",
         f"set_pm_version ip.cp.pm '<version printed above>, MSS to {value - calc.TCP} <initials>'"],
        applies_to="any VOS release with STCP", where=">system>maint_library, before STCP is started",
        caveats=["Must be done before STCP starts: once the IP module is loaded the file cannot be changed.",
                 "Redo it after every VOS upgrade: a new release brings a fresh ip.cp.pm and the default comes back.",
                 "Mark the file with set_pm_version and put a comment (or a display_line message, so it shows in "
                 "module_start_up.out) in start_stcp.cm, so the next engineer knows it was done.",
                 "Seed 004's author prefers the start_stcp.cm line: always done, and visibly so."]))
    return recs


def black_hole(path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    if path_mtu is None:
        return []   # STCP does no PMTU discovery: min_mss needs the measured path
    value = value_for(path_mtu)
    if value >= MIN_MSS_RANGE[1]:
        return []
    # STCP does not do PMTU discovery: the only host-side knob is the same min_mss, set to the path.
    return [r for r in raise_mss(path_mtu, release) if r.code != "vos-set-external-variable-ip-cp-pm"]


def buffers(bdp: calc.Bdp) -> List[Recommendation]:
    return []


def pmtud(verdict: str, path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    """--pmtud-check found no PMTU discovery: STCP does none, so min_mss is set to the path."""
    if verdict == "honours" or path_mtu is None:
        return []
    return [r for r in raise_mss(path_mtu, release) if r.code != "vos-set-external-variable-ip-cp-pm"]


# Fleet collection (toolkit/fleet, docs/fleet.md): the command Ansible's `raw` runs on the
# host (no Python there) for the IP statistics, and the one that gives its boot time so a
# reboot is known, not guessed from counters (None where the OS has none we know).
# Seed 004, Figure 6a. No boot-time command known to us that runs from a login: a
# reboot is recognised by the counters going down.
COLLECT = "netstat -statistics -protocol ip"
BOOT = None
