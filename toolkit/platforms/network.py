"""Fixes in the network rather than on a host: let PMTUD's ICMP through, clamp the MSS,
measure the path, find who sends fragments."""
from __future__ import annotations

from typing import List, Optional

from toolkit import calc, sources
from toolkit.findings import Recommendation


def allow_icmp(family: str = "ipv4") -> Recommendation:
    return Recommendation(
        "net-allow-icmp-frag-needed", "Let ICMP 'fragmentation needed' (type 3 code 4) and ICMPv6 Packet Too Big through",
        ["iptables -I FORWARD -p icmp --icmp-type fragmentation-needed -j ACCEPT",
         "ip6tables -I FORWARD -p icmpv6 --icmpv6-type packet-too-big -j ACCEPT",
         "# Cisco ACL: permit icmp any any packet-too-big   /   ipv6: permit icmp any any packet-too-big"],
        applies_to="every firewall and router on the path", where="the filter that drops them (INPUT too on end hosts)",
        caveats=[f"PMTU discovery needs these messages ({sources.RFC1191}; {sources.RFC4890}).",
                 "Dropping all ICMP turns every path with a smaller MTU into a black hole."], scope="network")


def clamp(path_mtu: Optional[int], family: str = "ipv4") -> Recommendation:
    """MSS clamping on the router at the smaller-MTU link; without a measured path MTU only
    the forms that read the outgoing interface's MTU themselves (no number is guessed)."""
    lines = ["iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu",
             "ip6tables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu"]
    if path_mtu is None:
        return Recommendation(
            "net-clamp-mss", "Clamp the MSS of TCP connections forwarded through the smaller-MTU link",
            lines + ["# Cisco IOS, on that interface: ip tcp adjust-mss <its MTU - 40> / ipv6 tcp adjust-mss <its MTU - 60>"],
            applies_to="a Linux router (iptables) or Cisco IOS", where="the router whose outgoing link has the smaller MTU",
            caveats=["--clamp-mss-to-pmtu takes the outgoing interface's MTU, so no number has to be guessed; "
                     "for a bottleneck further on, measure the path MTU first and use --set-mss.",
                     "Clamping only lowers the MSS in SYNs; it cannot raise a legacy host's 536, and does "
                     "nothing for UDP."], scope="network")
    v4 = path_mtu - calc.IPV4 - calc.TCP
    v6 = path_mtu - calc.IPV6 - calc.TCP
    return Recommendation(
        "net-clamp-mss", f"Clamp the MSS on the edge router to {v4} (IPv6 {v6})",
        ["interface <edge interface>", f" ip tcp adjust-mss {v4}", f" ipv6 tcp adjust-mss {v6}", lines[0],
         f"iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -o <wan interface> -j TCPMSS --set-mss {v4}",
         f"ip6tables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -o <wan interface> -j TCPMSS --set-mss {v6}"],
        applies_to="Cisco IOS (first three lines) or a Linux router (iptables)", where="the router at the smaller-MTU link",
        caveats=["Clamping only lowers the MSS in SYNs; it cannot raise a legacy host's 536.",
                 "--clamp-mss-to-pmtu uses the outgoing interface MTU; --set-mss is for a bottleneck further on."],
        scope="network")


def raise_clamp(router: Optional[str], to: int, path_mtu: Optional[int], family: str = "ipv4") -> Recommendation:
    """A router clamps the MSS below what the path carries: find its rule and set it to the path."""
    v4 = path_mtu - calc.IPV4 - calc.TCP if path_mtu else None
    v6 = path_mtu - calc.IPV6 - calc.TCP if path_mtu else None
    six = "6" if family == "ipv6" else ""
    return Recommendation(
        "net-raise-clamp", f"Raise the MSS clamp on {router or 'the clamping router'} from {to} to "
                           f"{v6 if family == 'ipv6' else v4 if v4 else 'the path MTU - 40'}",
        [f"ip{six}tables -t mangle -S | grep TCPMSS   # Linux: the rule that sets {to}",
         "show running-config | include adjust-mss   ! Cisco IOS",
         (f"iptables -t mangle -R FORWARD <rule number> -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss {v4}"
          if v4 else "iptables -t mangle -R FORWARD <rule number> -p tcp --tcp-flags SYN,RST SYN -j TCPMSS "
                     "--clamp-mss-to-pmtu"),
         (f" ip tcp adjust-mss {v4}" if v4 else " ip tcp adjust-mss <interface MTU - 40>")
         + (f"   ! and ipv6 tcp adjust-mss {v6}" if v6 else "")],
        applies_to="the router the probe named (Linux iptables or Cisco IOS)",
        where=f"{router or 'the router after the last unchanged hop'}: its mangle table or interface",
        caveats=[f"The probe's SYN left this host with a larger MSS and was rewritten to {to} there: every TCP "
                 "connection through that router sends segments of at most that size.",
                 "Clamp to the smallest MTU of the path, not below it: --clamp-mss-to-pmtu takes the outgoing "
                 "interface's MTU."], scope="network")


def measure(family: str = "ipv4") -> Recommendation:
    """The path MTU is only assumed: measure it before any MTU or MSS number is set."""
    six = " -6" if family == "ipv6" else ""
    return Recommendation(
        "measure-path-mtu", "Measure the path MTU before setting any MTU or MSS",
        [f"mssdiag probe{six} <peer address> --port <a TCP port it listens on>", f"tracepath{six} -n <peer address>"],
        applies_to="from this host (or one on its segment) towards the peers it talks to", where="shell",
        caveats=["The numbers in advice depend on the path MTU; no probe or host file gave one, so none is guessed.",
                 "mssdiag probe needs root for DF probes; it also tells a PMTUD black hole from loss."],
        scope="network")


def find_senders(capture_caveat: Optional[str] = None) -> Recommendation:
    """Who sends the fragments that arrive here."""
    caveats = ["Whoever sends the fragments has an MSS or MTU above the path: fix that sender (its MSS, "
               "PMTU discovery, or the ICMP filter that blinds it), not this host.",
               "A peer can also send large UDP datagrams (DNS, NFS, syslog): then the application's size is the fix."]
    if capture_caveat:
        caveats.insert(0, capture_caveat)
    return Recommendation(
        "find-fragment-sender", "Find which peer sends fragments",
        ["# on a Linux box on the host's segment (or a SPAN port), list who sends fragments:",
         "tcpdump -ni <interface> 'ip[6:2] & 0x3fff != 0' -c 200",
         "tcpdump -ni <interface> 'ip6 and ip6[6] == 44' -c 200"],
        applies_to="any capture point on the host's segment", where="capture host", caveats=caveats, scope="network")


def find_large_sends() -> Recommendation:
    """What on this host sends datagrams bigger than its next hop carries."""
    return Recommendation(
        "find-fragmenting-application", "Find what on this host sends datagrams larger than the link carries",
        ["# first fragments leaving the host (MF set, offset 0), with their destination and size:",
         "tcpdump -ni <interface> 'ip[6] & 0x20 != 0 and ip[6:2] & 0x1fff == 0' -c 50",
         "# UDP sockets and their peers (NFS, DNS, syslog, VPN and tunnels are the usual senders):",
         "ss -uanp"],
        applies_to="the host itself (Linux shown; any OS's capture tool works)", where="root shell",
        caveats=["TCP normally avoids fragmentation with PMTU discovery: TCP fragments mean PMTUD is off "
                 "on this host or its ICMP never arrives.",
                 "For UDP the fix is the application's datagram size (for example NFS rsize/wsize, EDNS buffer size)."],
        scope="host")


def fixes(path_mtu: int, family: str = "ipv4") -> List[Recommendation]:
    return [allow_icmp(family), clamp(path_mtu, family)]


def target_pmtud(path_mtu: Optional[int], family: str = "ipv4") -> List[Recommendation]:
    """A host that does no PMTU discovery, fixed in the network: clamp the MSS of its
    connections to the path (its segments then fit without DF or ICMP)."""
    return [clamp(path_mtu, family)]

