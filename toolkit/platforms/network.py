"""Fixes in the network rather than on a host: let PMTUD's ICMP through, clamp the MSS."""
from __future__ import annotations

from typing import List

from toolkit import calc
from toolkit.findings import Recommendation


def allow_icmp(family: str = "ipv4") -> Recommendation:
    return Recommendation(
        "net-allow-icmp-frag-needed", "Let ICMP 'fragmentation needed' (type 3 code 4) and ICMPv6 Packet Too Big through",
        ["iptables -I FORWARD -p icmp --icmp-type fragmentation-needed -j ACCEPT",
         "ip6tables -I FORWARD -p icmpv6 --icmpv6-type packet-too-big -j ACCEPT",
         "# Cisco ACL: permit icmp any any packet-too-big   /   ipv6: permit icmp any any packet-too-big"],
        applies_to="every firewall and router on the path", where="the filter that drops them (INPUT too on end hosts)",
        caveats=["PMTU discovery needs these messages (seed 003; RFC 4890 for IPv6: never drop PTB).",
                 "Dropping all ICMP turns every path with a smaller MTU into a black hole."], scope="network")


def clamp(path_mtu: int, family: str = "ipv4") -> Recommendation:
    v4 = path_mtu - calc.IPV4 - calc.TCP
    v6 = path_mtu - calc.IPV6 - calc.TCP
    return Recommendation(
        "net-clamp-mss", f"Clamp the MSS on the edge router to {v4} (IPv6 {v6})",
        ["interface <edge interface>", f" ip tcp adjust-mss {v4}", f" ipv6 tcp adjust-mss {v6}",
         "iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu",
         f"iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -o <wan interface> -j TCPMSS --set-mss {v4}",
         f"ip6tables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -o <wan interface> -j TCPMSS --set-mss {v6}"],
        applies_to="Cisco IOS (first three lines) or a Linux router (iptables)", where="the router at the smaller-MTU link",
        caveats=["Clamping only lowers the MSS in SYNs; it cannot raise a legacy host's 536.",
                 "--clamp-mss-to-pmtu uses the outgoing interface MTU; --set-mss is for a bottleneck further on."],
        scope="network")


def fixes(path_mtu: int, family: str = "ipv4") -> List[Recommendation]:
    return [allow_icmp(family), clamp(path_mtu, family)]
