"""Linux (ft Linux too): advertises its MTU's MSS and does PMTU discovery (seed 004).

Black holes: packetization-layer PMTU probing (net.ipv4.tcp_mtu_probing=1, seed 003;
it covers IPv6 too), a smaller advertised MSS on the route (advmss), or the interface
MTU. Buffers: tcp_rmem/tcp_wmem maximum at least 2 x BDP (seed 002).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from toolkit import calc, sources
from toolkit.findings import Recommendation

NAME = "linux"
SYSCTL_FILE = "/etc/sysctl.d/90-mssdiag.conf"

# What net.ipv4.tcp_mtu_probing costs a new connection through a silent PMTU black hole:
# measured with benchmarks/plpmtud_bench.py (client - r1 - r2 - target, both ends at MTU 1500,
# a 1400-byte link between the routers, r1 dropping its own 'fragmentation needed'; 64 KiB
# sent on a new connection, 6 runs per setting; docs/benchmarks.md has the run).
PROBING_COST = ("tcp_mtu_probing=1 probes only after retransmission timeouts: measured here, every new connection "
                "through a silent 1400-byte hole stalled 6.5-6.7 s (median 6.7 s; one run of 6 took 24 s) before "
                "its data got through; =2 probes from the start and took 0.03-0.06 s; =0 (the default) never "
                "finished in 30 s.")
PROBING_TWO = ("=2 starts every connection at net.ipv4.tcp_base_mss (1024 by default) and probes up, on healthy "
               "paths too; =1 costs nothing until a path is silent, then the stall above on each new connection.")


def default_mss(release: Optional[str], local: Optional[bool]) -> Tuple[Optional[int], str]:
    return None, "Linux advertises the interface MTU's MSS (1460 on Ethernet) and does PMTU discovery"


def raise_mss(path_mtu: int, release: Optional[str]) -> List[Recommendation]:
    return []


def black_hole(path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    """Host-side fixes; with no measured path MTU (None) only those that need no number."""
    probing = Recommendation(
            "linux-tcp-mtu-probing", "Turn on TCP MTU probing (finds the path MTU without ICMP)",
            ["sysctl -w net.ipv4.tcp_mtu_probing=1",
             f"echo 'net.ipv4.tcp_mtu_probing = 1' >> {SYSCTL_FILE}"],
            applies_to="Linux 2.6.17 and later (IPv4 and IPv6)", where="root shell",
            caveats=[PROBING_COST, PROBING_TWO])
    if path_mtu is None:
        return [probing]
    header = calc.IPV6 if family == "ipv6" else calc.IPV4
    advmss = path_mtu - header - calc.TCP
    ip = "ip -6" if family == "ipv6" else "ip"
    return [
        probing,
        Recommendation(
            "linux-route-advmss", f"Advertise MSS {advmss} on the route to the affected peers",
            [f"{ip} route show <peer prefix>",
             f"{ip} route change <peer prefix> via <gateway> dev <interface> advmss {advmss} mtu {path_mtu}"],
            applies_to="Linux", where="root shell; add to the interface configuration to persist",
            caveats=["Only connections over that route are affected; the peer's segments to us shrink too."]),
        Recommendation(
            "linux-interface-mtu", f"Or set the interface MTU to {path_mtu}",
            [f"ip link set dev <interface> mtu {path_mtu}"],
            applies_to="Linux", where="root shell; persist in the distribution's network configuration",
            caveats=["Every destination on the interface gets the smaller MTU, local ones included."]),
    ]


def mtu_probing(active: bool) -> List[Recommendation]:
    """PLPMTUD (tcp_mtu_probing) seen firing: what 1 and 2 cost, so the choice is made knowingly."""
    return [Recommendation(
        "linux-tcp-mtu-probing-2", "Probe from the start (tcp_mtu_probing=2) until the silent path is fixed",
        ["sysctl net.ipv4.tcp_mtu_probing net.ipv4.tcp_base_mss",
         "sysctl -w net.ipv4.tcp_mtu_probing=2",
         f"echo 'net.ipv4.tcp_mtu_probing = 2' >> {SYSCTL_FILE}"],
        applies_to="Linux 2.6.17 and later (IPv4 and IPv6)", where="root shell",
        caveats=[PROBING_COST, PROBING_TWO] + (
            ["PLPMTUD is already on here (its counters grew): the probes that fail are the silent path."]
            if active else []))]


def buffers(bdp: calc.Bdp) -> List[Recommendation]:
    return [Recommendation(
        "linux-tcp-buffers", f"TCP buffer maximum {bdp.buffer_mib_rounded:,} bytes ({bdp.factor} x BDP)",
        list(bdp.sysctl) + [f"# persist: the same keys in {SYSCTL_FILE}"],
        applies_to="Linux", where="root shell on both ends",
        caveats=[f"BDP = {calc.human_rate(bdp.bandwidth_bps)} x {bdp.rtt_s * 1e3:g} ms = {bdp.bdp_bytes:,} bytes; "
                 f"{bdp.factor} x BDP = {bdp.buffer_bytes:,} bytes, rounded as the BDP lab does to "
                 f"{bdp.buffer_mib_rounded // calc.MIB} MiB.",
                 f"With BBR on a lossy path use a larger factor ({sources.BDP_LAB}: up to 4 x BDP): mssdiag calc bdp --factor 4."])]


def pmtud(verdict: str, path_mtu: Optional[int], release: Optional[str], family: str) -> List[Recommendation]:
    """--pmtud-check: no DF (ip_no_pmtu_disc 1 or 2), or 'fragmentation needed' not acted on."""
    if verdict == "honours":
        return []
    if verdict == "clears-df":
        return [Recommendation(
            "linux-pmtu-disc-on", "Turn PMTU discovery back on (DF on TCP segments)",
            ["sysctl net.ipv4.ip_no_pmtu_disc", "sysctl -w net.ipv4.ip_no_pmtu_disc=0",
             f"echo 'net.ipv4.ip_no_pmtu_disc = 0' >> {SYSCTL_FILE}",
             "ip route show | grep 'lock mtu'   # a locked route MTU also sends without DF"],
            applies_to="Linux (IPv4; IPv6 always does PMTU discovery)", where="root shell",
            caveats=["1 and 2 send every segment without DF and leave routers to fragment; 0 is the default.",
                     "Sockets opened before the change keep their setting: restart the service."])]
    return [Recommendation(
        "linux-accept-frag-needed", "Let 'fragmentation needed' reach the TCP stack",
        ["sysctl net.ipv4.ip_no_pmtu_disc   # 2 discards PMTU messages, 3 accepts only verified ones",
         "iptables -S INPUT | grep -i -e icmp -e DROP",
         "iptables -I INPUT -p icmp --icmp-type fragmentation-needed -j ACCEPT",
         "ip6tables -I INPUT -p icmpv6 --icmpv6-type packet-too-big -j ACCEPT"],
        applies_to="Linux", where="root shell; persist in the firewall configuration",
        caveats=["The host kept sending DF segments too big for the announced MTU: its firewall drops the ICMP, "
                 "or ip_no_pmtu_disc is 2.",
                 "net.ipv4.tcp_mtu_probing=1 makes it recover even without the ICMP (after a stall)."])]


# Fleet collection (toolkit/fleet, docs/fleet.md): the command Ansible's `raw` runs on the
# host (no Python there) for the IP statistics, and the one that gives its boot time so a
# reboot is known, not guessed from counters (None where the OS has none we know).
# /proc/net/snmp{,6}: no net-tools needed, and they are the counters of the login's network
# namespace; a kernel without IPv6 has no snmp6, which must not fail the collection (needs a
# Bourne-style login shell). btime: the boot time in epoch seconds.
COLLECT = "cat /proc/net/snmp && { cat /proc/net/snmp6 2>/dev/null || true; }"
BOOT = "grep ^btime /proc/stat"
