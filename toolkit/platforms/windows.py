"""Windows: advertises 1460 and does PMTU discovery (Stratus, "Tuning your MSS"): leave the MSS alone.

Black holes: PMTU black-hole detection (EnablePMTUBHDetect, off by default) and, from
Vista / Server 2008 on, a per-interface MTU with netsh; Windows 2000/2003 set the MTU
in the registry per interface.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from toolkit import calc, sources
from toolkit.findings import Recommendation
from toolkit.platforms import release_tuple

NAME = "windows"
TCPIP = r"HKLM\SYSTEM\CurrentControlSet\Services\Tcpip\Parameters"


def legacy(release: Optional[str]) -> Optional[bool]:
    """True for 2000/XP/2003 (no netsh subinterface), False for Vista/2008 and later."""
    if not release:
        return None
    r = str(release).lower()
    if any(k in r for k in ("2000", "2003", "xp", "nt")):
        return True
    t = release_tuple(release)
    return False if t else None


def counter_notes(family: str, values: dict) -> List[str]:
    """Windows Vista before hotfix KB949130 counts every reassembled datagram as a failure too."""
    fails, oks = values.get("ReasmFails"), values.get("ReasmOKs")
    if fails and oks and fails == oks:
        return ["'Reassembly Failures' equals 'Reassembly Successful': Windows Vista / Server 2008 before hotfix "
                "KB949130 counts each reassembled datagram as a failure as well, so these failures may not be "
                "real; check the release and the hotfix before acting on them"]
    return []


def default_mss(release: Optional[str], local: Optional[bool]) -> Tuple[Optional[int], str]:
    return None, f"Windows advertises 1460 on Ethernet and does PMTU discovery ({sources.MSS})"


def raise_mss(path_mtu: int, release: Optional[str]) -> List[Recommendation]:
    return []


def black_hole(path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    ip = "ipv6" if family == "ipv6" else "ipv4"
    bh = Recommendation(
        "windows-pmtu-bh-detect", "Turn on PMTU black-hole detection",
        [f'reg add "{TCPIP}" /v EnablePMTUBHDetect /t REG_DWORD /d 1 /f'],
        applies_to="Windows 2000 and later", where="elevated prompt; takes effect after a reboot",
        caveats=["Detection only starts after retransmissions time out: sessions stall a few seconds "
                 "before the stack falls back to smaller segments."])
    if path_mtu is None:
        return [bh]
    if legacy(release):
        mtu = Recommendation(
            "windows-registry-mtu", f"Set the interface MTU to {path_mtu} in the registry",
            [f'reg add "{TCPIP}\\Interfaces\\{{<interface GUID>}}" /v MTU /t REG_DWORD /d {path_mtu} /f'],
            applies_to="Windows 2000 / XP / Server 2003", where="elevated prompt; reboot",
            caveats=["Find the GUID under ...\\Tcpip\\Parameters\\Interfaces by the interface's IP address."])
    else:
        mtu = Recommendation(
            "windows-netsh-mtu", f"Set the interface MTU to {path_mtu}",
            [f"netsh interface {ip} show subinterfaces",
             f'netsh interface {ip} set subinterface "<interface name>" mtu={path_mtu} store=persistent'],
            applies_to="Windows Vista / Server 2008 and later", where="elevated prompt",
            caveats=["Lowers the MTU for every destination on that interface, not just the broken path."])
    return [bh, mtu]


def buffers(bdp: calc.Bdp) -> List[Recommendation]:
    return [Recommendation(
        "windows-autotuning", "Let receive-window auto-tuning grow the window to the BDP",
        ["netsh interface tcp show global", "netsh interface tcp set global autotuninglevel=normal"],
        applies_to="Windows Vista / Server 2008 and later", where="elevated prompt",
        caveats=[f"The window needs to reach {bdp.bdp_bytes:,} bytes (one BDP); 'restricted' or 'disabled' "
                 "auto-tuning caps it far below that."])]


def pmtud(verdict: str, path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    """--pmtud-check: PMTU discovery off in the registry, or the ICMP blocked by the host firewall."""
    if verdict == "honours":
        return []
    return [Recommendation(
        "windows-enable-pmtud", "Turn PMTU discovery on and let 'fragmentation needed' in",
        [f'reg query "{TCPIP}" /v EnablePMTUDiscovery',
         f'reg add "{TCPIP}" /v EnablePMTUDiscovery /t REG_DWORD /d 1 /f',
         'netsh advfirewall firewall add rule name="ICMPv4 fragmentation needed" dir=in action=allow '
         'protocol=icmpv4:3,4'],
        applies_to="Windows 2000 and later", where="elevated prompt; the registry value takes effect after a reboot",
        caveats=["EnablePMTUDiscovery 0 sends 576-byte-path segments to non-local peers; 1 is the default.",
                 "The firewall line is for Windows Vista / Server 2008 and later."])]


# Fleet collection (toolkit/fleet, docs/fleet.md): the command Ansible's `raw` runs on the
# host (no Python there) for the IP statistics, and the one that gives its boot time so a
# reboot is known, not guessed from counters (None where the OS has none we know).
# Seed 004, Figure 6c. Over WinRM `raw` runs in PowerShell, over OpenSSH in cmd.exe: both
# start powershell. The boot time in UTC, ISO 8601 (PowerShell 2.0 and later).
COLLECT = "netstat -s"
BOOT = ("powershell -NoProfile -Command \"[Management.ManagementDateTimeConverter]::ToDateTime("
        "(Get-WmiObject Win32_OperatingSystem).LastBootUpTime).ToUniversalTime().ToString('yyyy-MM-ddTHH:mm:ssZ')\"")
