"""What an answer says about one of our probes, whoever read it: the capture (scapy
dissects the packet) or the error queue of a UDP socket (no privileges, no packets).

Probes are keyed by a 16-bit number that travels in the first 8 bytes of the transport
header (ICMP echo sequence, UDP destination port, TCP source port), because that is all
an ICMP error is guaranteed to quote (RFC 792).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

ECHO_ID = 0x4d53          # "MS"
UDP_BASE = 33434          # traceroute's ports: usually closed, so the target answers port unreachable
TCP_SPORT_BASE = 61000    # above Linux's ephemeral range, so no real connection collides


@dataclass
class Reply:
    """What one received packet says about one of our probes."""
    target: str          # the address probed
    method: str
    key: int
    kind: str            # "pass" | "toobig" | "ttl" | "unreach"
    source: str          # who sent the reply
    mtu: Optional[int] = None
    quoted_len: Optional[int] = None   # total length of the quoted probe
    ttl: Optional[int] = None          # TTL / hop limit the reply arrived with
    reason: Optional[str] = None       # for "unreach": what the router said, named
    at: Optional[float] = None         # kernel receive time (time.time() clock), when known
    quoted: Any = None                 # "ttl" for a TCP probe: the quoted TCP header (scapy's TCPerror)
    quote: int = 0                     # "ttl": bytes of the probe's transport the router quoted


# ICMP "destination unreachable" codes, named as routers mean them (RFC 792, 1122, 1812;
# ICMPv6: RFC 4443). Code 4 (fragmentation needed) is a "too big", not an unreachable.
UNREACH_V4 = {0: "network unreachable", 1: "host unreachable", 2: "protocol unreachable",
              3: "port unreachable", 5: "source route failed", 6: "destination network unknown",
              7: "destination host unknown", 8: "source host isolated",
              9: "network administratively prohibited", 10: "host administratively prohibited",
              11: "network unreachable for TOS", 12: "host unreachable for TOS",
              13: "communication administratively prohibited", 14: "host precedence violation",
              15: "precedence cutoff in effect"}
UNREACH_V6 = {0: "no route to destination", 1: "communication administratively prohibited",
              2: "beyond scope of source address", 3: "address unreachable", 4: "port unreachable",
              5: "source address failed ingress/egress policy", 6: "reject route to destination"}


def unreach_reason(family: str, code: int) -> str:
    """'host unreachable (ICMP type 3 code 1)' and the like."""
    if family == "ipv6":
        return f"{UNREACH_V6.get(code, 'destination unreachable')} (ICMPv6 type 1 code {code})"
    return f"{UNREACH_V4.get(code, 'destination unreachable')} (ICMP type 3 code {code})"


def mss_option(tcp) -> Optional[int]:
    """The MSS option of a TCP header as scapy dissected it; None when absent or cut short
    (scapy gives a quote that ends inside the option as bytes, not a number)."""
    value = dict(tcp.options).get("MSS")
    return value if isinstance(value, int) else None
