"""Linux (and Stratus ft Linux, Stratus, "Tuning your MSS" Figure 6g): net-tools `netstat -s`, /proc/net/snmp,
/proc/net/snmp6 and iproute2 `nstat`.

Every form reads the same kernel MIB (net/ipv4/proc.c snmp4_ipstats_list, net/ipv6/proc.c):

    netstat -s              Ip:                          (net-tools, statistics.c)
                                15 reassemblies required
                                5 packets reassembled ok
    /proc/net/snmp          Ip: Forwarding DefaultTTL ... ReasmTimeout ReasmReqds ...
                            Ip: 1 64 ... 0 15 ...
    /proc/net/snmp6         Ip6ReasmReqds                   0
    nstat / nstat -az       #kernel
                            IpReasmReqds                    15                 0.0

net-tools wording changed over the years (statistics.c, all versions): ReasmFails is
"packet reassembles failed" up to 1.60 and "packet reassemblies failed" later; FragOKs is
"fragments received ok" (it counts outgoing datagrams fragmented, whatever it says) and in
later 2.x "outgoing packets fragmented ok"; FragFails "fragments failed", later "outgoing
packets failed fragmentation". Since about 1.60 all seven reassembly/fragmentation lines are
`opt_number`: net-tools leaves a line out when its value is 0.

Zero omission versus excerpt (the rule this module applies):
- An `Ip:` / `Ip6:` section is *unfiltered* when it holds the lines net-tools always prints
  ("total packets received", "incoming packets delivered", "requests sent out"). Without them
  (no header, or a `grep` that kept the header) the text is an excerpt: counters not shown
  are unknown (None).
- An unfiltered section that is *complete* -- another section header (`Icmp:`, `Udp:`...)
  follows it, or a line net-tools prints after the fragment block (`OutTransmits: N`,
  "outgoing multicast packets", `Ip6InOctets: N`...) -- gives 0 for every counter not shown.
- An unfiltered section that simply stops (a paste cut short) gives 0 only for the counters
  the kernel orders before the last one shown (net-tools prints in kernel column order, so
  those were left out for being zero); the ones after it stay None, with a warning.

nstat leaves zero counters out unless run with -z, and prints only counters matching its
pattern arguments. A counter it does not show is taken as 0 only when the output has the
`#kernel` header and counters outside the IP groups too (Icmp, Tcp, Udp...): evidence that it
was not narrowed to a pattern. nstat without -a prints increases since its previous run, and
nothing in the text says which mode ran, so every nstat snapshot carries a warning.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ._needs import needs
from . import base
from .model import ALL, Meta, Reading, Signal
from .text import DAMAGED
from .text import damaged
from .lazyre import lazy


META = Meta(
    name="linux",
    title="Linux",
    covers=("Linux 2.0 to 6.x", "Stratus ft Linux", "Arista EOS (kernel counters)"),
    formats=("netstat -s (net-tools 1.x and 2.x wordings)", "netstat -s -6", "netstat -s | grep excerpt",
             "/proc/net/snmp", "/proc/net/snmp6", "nstat", "nstat -az", "nstat -j / -j -p (JSON)",
             "Arista EOS show kernel ip counters / bash netstat -s"),
    ipv4=ALL,
    ipv6=ALL,
    reasm_unit="both",
    timeout_unit="datagrams",
    signals=(
        Signal("ptb-in", "ipv4", "IcmpInDestUnreachs", False, "every ICMP destination unreachable received; Linux "
               "keeps no count of 'fragmentation needed' alone (IcmpMsgInType3 counts the same type)", "Icmp"),
        Signal("ptb-in", "ipv6", "Icmp6InPktTooBigs", zero_in="Icmp6"),
        Signal("ptb-out", "ipv4", "IcmpOutDestUnreachs", False, "every ICMP destination unreachable sent (port "
               "and host unreachables too)", "Icmp"),
        Signal("ptb-out", "ipv6", "Icmp6OutPktTooBigs", zero_in="Icmp6"),
        Signal("rto", "tcp", "TcpExtTCPTimeouts", note="retransmission timer expiries, TCP over IPv4 and IPv6",
               zero_in="TcpExt"),
        Signal("retrans", "tcp", "TcpRetransSegs"),
        Signal("segs-out", "tcp", "TcpOutSegs"),
        Signal("mtup-fail", "tcp", "TcpExtTCPMTUPFail", note="PLPMTUD probes lost: the search came down "
               "(net.ipv4.tcp_mtu_probing 1 or 2)", zero_in="TcpExt"),
        Signal("mtup-success", "tcp", "TcpExtTCPMTUPSuccess", note="PLPMTUD probes acknowledged: a larger MSS "
               "confirmed", zero_in="TcpExt"),
    ),
    semantics=(
        "Counts both, like STCP (seed Fig. 6g: 15 reassemblies required, 5 packets reassembled ok): "
        "ReasmReqds goes up once per fragment received, ReasmOKs once per datagram reassembled. "
        "ReasmTimeout is a count, not a setting: the kernel adds 1 (and 1 to ReasmFails) each time "
        "a reassembly queue expires (net/ipv4/ip_fragment.c ip_expire), so it counts incomplete "
        "datagrams given up, not fragments, although net-tools calls it 'fragments dropped after "
        "timeout'. FragOKs counts outgoing datagrams fragmented (net-tools before 2.x prints it as "
        "'fragments received ok'), FragCreates the fragments made from them, FragFails datagrams "
        "that needed fragmenting but had DF set. IPv6 (Ip6:, Ip6* names) has the same meanings. "
        "nstat -j prints the same names as JSON ({\"kernel\": {...}}), zero counters left out unless -z. "
        "nstat without -a prints increases since its previous run: such snapshots are already "
        "deltas, and a diff between two of them means nothing. Traffic: 'total packets received' "
        "(InReceives), 'forwarded' (ForwDatagrams), 'incoming packets delivered' (InDelivers), "
        "'requests sent out' (OutRequests); 'Forwarding: 1' (/proc/net/snmp and nstat: 1) "
        "means IP forwarding is on, 2 off. Arista EOS (no public 'show ip traffic' sample found) prints these "
        "same Linux counters with 'show kernel ip counters [vrf NAME]' (or netstat -s from the EOS bash "
        "shell, which ends with an 'Arista:' line); they count what the switch's kernel handles (the "
        "CPU path, which is where EOS fragments oversized IPv4 packets), not hardware-forwarded traffic, "
        "and a VRF has its own counters. The public EOS sample prints 'Forwarding: 2' beside 367 "
        "forwarded, so on EOS that line does not say whether the switch routes."
    ),
)

ORDER = ("ReasmTimeout", "ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates")

LABELS = {
    "fragments dropped after timeout": "ReasmTimeout",
    "reassemblies required": "ReasmReqds",
    "packets reassembled ok": "ReasmOKs",
    "packet reassembles failed": "ReasmFails",       # net-tools <= 1.60
    "packet reassemblies failed": "ReasmFails",      # later net-tools
    "fragments received ok": "FragOKs",              # really: outgoing datagrams fragmented
    "outgoing packets fragmented ok": "FragOKs",
    "fragments failed": "FragFails",
    "outgoing packets failed fragmentation": "FragFails",
    "fragments created": "FragCreates",
}
# Traffic lines (type `number`: always printed, never zero-omitted).
TRAFFIC_LABELS = {
    "total packets received": "InReceives",
    "forwarded": "ForwDatagrams",
    "incoming packets delivered": "InDelivers",
    "requests sent out": "OutRequests",
}
# Lines net-tools always prints (type `number`) in Ip: and Ip6: -- their presence means no grep.
ALWAYS = {"total packets received", "incoming packets delivered", "requests sent out"}
# Lines the kernel orders before the reassembly block, in Ip: and Ip6:.
BEFORE_BLOCK = ALWAYS | {
    "with invalid headers", "with invalid addresses", "forwarded", "with unknown protocol",
    "incoming packets discarded", "outgoing packets dropped", "dropped because of missing route",
    "with packets too big", "incoming packets with no route", "with truncated packets",
}

_KNOWN_LABELS = set(LABELS) | set(TRAFFIC_LABELS) | BEFORE_BLOCK

_IP_HEADER = lazy(r"^[ \t]*Ip6?:[ \t]*$", re.M)
_SECTION = lazy(r"^\s*(?P<name>[A-Za-z][\w-]*):\s*$")
# Section titles net-tools prints (one per MIB group); anything else ending in ':' is prose.
_LINUX_SECTIONS = {"Ip", "Ip6", "Icmp", "IcmpMsg", "Icmp6", "Tcp", "Tcp6", "TcpExt", "Udp", "Udp6",
                   "UdpLite", "UdpLite6", "IpExt", "MPTcpExt", "Sctp"}
# Other stacks' lower-case titles: when --os forces this parser on them, their ip6: and udp:
# lines must not be read as a Linux excerpt.
_OTHER_SECTIONS = {"ip", "ip6", "icmp", "icmp6", "igmp", "tcp", "tcp6", "udp", "udp6", "ipsec", "ipsec6",
                   "arp", "rip6", "pim", "carp", "pfsync", "divert", "raw"}
_COUNT_LINE = lazy(r"^\s*(?P<value>\S*\d\S*)\s+(?P<label>[A-Za-z][^\d]*?)\.?\s*$")
_NAMED_LINE = lazy(r"^\s*(?P<name>[A-Za-z][\w-]*):\s*(?P<value>\S+)\s*$")  # `OutTransmits: 908`
# /proc/net/snmp: a header line of names, then the same group with values.
_SNMP_HEADER = lazy(r"^\s*(?P<group>[A-Za-z]\w*):(?P<names>(?:[ \t]+[A-Za-z]\w*)+)\s*$")
_SNMP_VALUES = lazy(r"^\s*(?P<group>[A-Za-z]\w*):(?P<values>(?:[ \t]+\S+)+)\s*$")
# /proc/net/snmp6 (`Ip6ReasmReqds  0`) and nstat (`IpReasmReqds  12  0.0`).
_KERNEL_NAME = lazy(r"^\s*(?P<name>(?:Ip6|Ip)(?:Reasm[A-Za-z]+|Frag[A-Za-z]+|InReceives|InDelivers|OutRequests"
                    r"|ForwDatagrams|OutForwDatagrams|Forwarding))\s+(?P<value>\S+)(?:\s+(?P<rate>\S+))?\s*$")
_NSTAT_ANY = lazy(r"^\s*(?P<name>[A-Z][A-Za-z0-9]+)\s+\S+\s+\d+(?:\.\d+)?\s*$")
_NSTAT_OTHER_GROUP = lazy(r"^(?:Icmp|Tcp|Udp|Sctp|MPTcp|Xfrm|TcpExt)")
_NSTAT_HEADER = lazy(r"^\s*#kernel\s*$")


class _Section:
    def __init__(self, name: str):
        self.name = name
        self.values: Dict[str, Optional[int]] = {}
        self.traffic: Dict[str, Optional[int]] = {}
        self.labels: set = set()
        self.last_block: Optional[int] = None   # index in ORDER of the last reassembly line seen
        self.after_block = False                # a line net-tools prints after FragCreates
        self.last_known = -1                    # position of the last block / before-block line
        self.positions = 0
        self.closed = False
        self.damaged = False                    # a line with bytes netstat never prints


def _netstat(lines: List[str], reading: Reading, blob: str) -> Tuple[Optional[dict], Optional[dict], Optional[str]]:
    ip_headers = len(_IP_HEADER.findall(blob))   # once the last of them is closed, stop reading
    sections: List[_Section] = []
    current: Optional[_Section] = None
    loose = _Section("")          # lines before any section header: a `| grep` excerpt
    loose6 = _Section("Ip6")      # ... and its second block of the same lines (netstat -s -6)
    headed = False
    repeats = base.Repeats(reading)
    last = len(lines) - 1
    for at, line in enumerate(lines):
        if line.endswith(":") and damaged(line):
            # a section header we cannot read: its lines belong to no section we know
            if current is not None:
                current.damaged = True
            current, headed = None, True
            continue
        m = _SECTION.match(line) if line.endswith(":") else None
        if m and (m["name"] in _LINUX_SECTIONS or m["name"] in _OTHER_SECTIONS or m["name"].endswith("Ext")):
            headed = True
            if current is not None:
                current.closed = True
                if len(sections) == ip_headers:
                    break
            current = _Section(m["name"]) if m["name"] in ("Ip", "Ip6") else None
            if current is not None:
                sections.append(current)
            continue
        target = current if current is not None else (None if headed else loose)
        if target is None:
            continue                  # Icmp:, Udp:, UdpLite:, Sctp:... never feed the IP counters
        target.positions += 1
        if damaged(line):
            target.damaged = True
        cm = _COUNT_LINE.match(line)
        if cm is None:
            named = _NAMED_LINE.match(line)
            if named and named["name"] == "Forwarding":
                if target.name != "Ip6":
                    reading.forwarding = {"1": True, "2": False}.get(named["value"], reading.forwarding)
                    reading.raw["Forwarding"] = named["value"]
            elif named and target.last_known >= 0:
                target.after_block = True     # `OutTransmits: 908`, `Ip6InOctets: 128`
            continue
        label = " ".join(cm["label"].split()).lower()
        name = LABELS.get(label) or TRAFFIC_LABELS.get(label)
        if name is None:
            if label in BEFORE_BLOCK:
                target.labels.add(label)
                target.last_known = target.positions
            elif at == last and any(k.startswith(label) and k != label for k in _KNOWN_LABELS):
                reading.warnings.append(f"{target.name or 'Ip'}: last line {line.strip()!r} is cut mid-line: "
                                        "counters after it left unknown")
            elif target.last_known >= 0:
                target.after_block = True     # "outgoing multicast packets" and the like
            continue
        if target is loose and repeats.excerpt_family(label, label) == "ipv6":
            target = loose6
        family = "ipv6" if target.name == "Ip6" else "ipv4"
        if family in repeats.stopped:
            continue
        key = ("Ip6: " if target.name == "Ip6" else "") + " ".join(cm["label"].split())
        value = base.value_of(key, cm["value"], reading)
        store = target.traffic if name in TRAFFIC_LABELS.values() else target.values
        if not repeats.keep(family, label, key, value, cm["value"]):
            if repeats.conflicted(family, label):
                store[name] = None
                target.damaged = True      # what follows is not this section's: no zero for the unseen
            continue
        reading.raw[key] = cm["value"]
        store[name] = value
        target.last_known = target.positions
        if store is target.values:
            target.labels.add(label)
            target.last_block = ORDER.index(name)
            target.after_block = False
        else:
            target.labels.add(label)

    v4: Optional[dict] = None
    v6: Optional[dict] = None
    kinds: List[str] = []
    for sec in sections:
        found = _fill(sec, reading)
        if found is None:
            continue
        kinds.append("netstat -s" if ALWAYS <= sec.labels else "netstat -s excerpt")
        if sec.name == "Ip" and v4 is None:
            v4 = found
        elif sec.name == "Ip6" and v6 is None:
            v6 = found
    if (loose.values or loose.traffic) and v4 is None:
        v4 = {**loose.values, **loose.traffic}
        kinds.append("netstat -s excerpt")
    if (loose6.values or loose6.traffic) and v6 is None:
        v6 = {**loose6.values, **loose6.traffic}
    kind = "netstat -s" if "netstat -s" in kinds else (kinds[0] if kinds else None)
    return v4, v6, kind


def _fill(sec: _Section, reading: Reading) -> Optional[dict]:
    values = sec.values      # a counter shown with a bad number stays None, never becomes 0
    if sec.damaged and ALWAYS <= sec.labels:
        reading.warnings.append(f"{sec.name or 'Ip'}: a damaged line (bytes netstat never prints): counters "
                                "not shown are left unknown instead of taken as 0")
    if not ALWAYS <= sec.labels or sec.damaged:
        return {**values, **sec.traffic} if values or sec.traffic else None   # filtered: what it shows
    if sec.closed or sec.after_block:
        return {**{name: values.get(name, 0) for name in ORDER}, **sec.traffic}
    last = -1 if sec.last_block is None else sec.last_block
    out = {**{name: values.get(name, 0) for name in ORDER[: last + 1]}, **sec.traffic}
    unknown = ORDER[last + 1:]
    if unknown:
        reading.warnings.append(
            f"{sec.name}: section ends without the next section header (cut short?): "
            f"{', '.join(unknown)} left unknown instead of taken as 0")
    return out


def _snmp(lines: List[str], reading: Reading) -> Tuple[Optional[dict], bool]:
    v4: Optional[dict] = None
    seen = False
    header: Optional[Tuple[str, List[str]]] = None
    for line in lines:
        h = _SNMP_HEADER.match(line)
        if h:
            header = (h["group"], h["names"].split())
            continue
        v = _SNMP_VALUES.match(line)
        if v and header is not None and v["group"] == header[0]:
            group, names = header
            header = None
            if group != "Ip":
                seen = True
                continue
            seen = True
            values = v["values"].split()
            if len(values) != len(names):
                reading.warnings.append(
                    f"/proc/net/snmp Ip: {len(names)} names but {len(values)} values; IPv4 counters left out")
                v4 = {}
                continue
            v4 = {}
            for col, value in zip(names, values):
                if col in ALL:
                    reading.raw[f"Ip: {col}"] = value
                    v4[col] = base.value_of(f"Ip: {col}", value, reading)
                elif col == "Forwarding":
                    reading.raw["Ip: Forwarding"] = value
                    reading.forwarding = {"1": True, "2": False}.get(value)
            continue
        if v is not None:
            header = None     # prose between a header and its values line does not part them
    return v4, seen


def _named(lines: List[str], reading: Reading) -> Tuple[Optional[dict], Optional[dict], bool, bool]:
    """/proc/net/snmp6 and nstat lines: (ipv4, ipv6, any nstat line, any snmp6 line)."""
    v4: Dict[str, Optional[int]] = {}
    v6: Dict[str, Optional[int]] = {}
    nstat = snmp6 = False
    for line in lines:
        m = _KERNEL_NAME.match(line)
        if not m:
            continue
        name = m["name"]
        family, counter = (v6, name[3:]) if name.startswith("Ip6") else (v4, name[2:])
        if counter == "OutForwDatagrams":
            counter = "ForwDatagrams"
        if counter == "Forwarding":
            reading.raw[name] = m["value"]
            reading.forwarding = {"1": True, "2": False}.get(m["value"].strip())
            continue
        if counter not in ALL:
            continue
        if m["rate"] is not None:
            nstat = True
        else:
            snmp6 = True
        reading.raw[name] = m["value"]
        family[counter] = base.value_of(name, m["value"], reading)
    return (v4 or None), (v6 or None), nstat, snmp6


# nstat -j / -j -p: {"kernel":{"IpInReceives":329,...}} (paste.py puts one key on each line)
_JSON_PAIR = lazy(r'"(?P<name>[A-Za-z][A-Za-z0-9]{1,60})"[ \t]*:[ \t]*(?P<value>[^,{}\s]+)')   # "kernel":{ is no pair


def _nstat_json(lines: List[str], reading: Reading) -> Tuple[Optional[dict], Optional[dict]]:
    """(ipv4, ipv6) from `nstat -j` output: zero counters are left out unless -z, so a counter
    not shown is 0 when the JSON holds other groups too (it was not narrowed to a pattern)."""
    v4: Dict[str, Optional[int]] = {}
    v6: Dict[str, Optional[int]] = {}
    groups = set()
    for line in lines:
        if '"' not in line:
            continue
        for m in _JSON_PAIR.finditer(line):
            name = m["name"]
            if name == "kernel":
                continue
            groups.add(name)
            family, counter = (v6, name[3:]) if name.startswith("Ip6") else (v4, name[2:]) \
                if name.startswith("Ip") and not name.startswith("IpExt") else (None, "")
            if family is None:
                continue
            if counter == "OutForwDatagrams":
                counter = "ForwDatagrams"
            if counter == "Forwarding":
                reading.raw[name] = m["value"]
                reading.forwarding = {"1": True, "2": False}.get(m["value"])
                continue
            if counter not in ALL:
                continue
            reading.raw[name] = m["value"]
            family[counter] = base.value_of(name, m["value"], reading)
    damaged = any(DAMAGED in line for line in lines)
    if damaged:
        reading.warnings.append("nstat -j: damaged text (a control character or a cut line): counters not "
                                "shown are unknown, not 0")
    broad = not damaged and any(_NSTAT_OTHER_GROUP.match(g) for g in groups)
    out4 = {name: v4.get(name, 0) for name in ALL} if broad and any(
        g.startswith("Ip") and not g.startswith(("Ip6", "IpExt")) for g in groups) else (v4 or None)
    out6 = {name: v6.get(name, 0) for name in ALL} if broad and any(g.startswith("Ip6") for g in groups) \
        else (v6 or None)
    return out4, out6


# -------------------------------------------------------------------- every counter

# net-tools statistics.c: the words it prints for each kernel field (2.x, and the 1.60
# wordings real dumps show: "segments send out", "segments retransmited", "active connections
# openings"), per section; a field it has no words for it prints as `Field: N`. The ICMP
# histogram lines are under their title ("ICMP input histogram: destination unreachable").
_NET_TOOLS = {
    "Ip": (("DefaultTTL", "Default TTL is #"), ("ForwDatagrams", "forwarded"),
           ("FragCreates", "fragments created"), ("FragFails", "outgoing packets failed fragmentation"),
           ("FragFails", "fragments failed"), ("FragOKs", "outgoing packets fragmented ok"),
           ("FragOKs", "fragments received ok"), ("InAddrErrors", "with invalid addresses"),
           ("InDelivers", "incoming packets delivered"), ("InDiscards", "incoming packets discarded"),
           ("InHdrErrors", "with invalid headers"), ("InReceives", "total packets received"),
           ("InUnknownProtos", "with unknown protocol"), ("OutDiscards", "outgoing packets dropped"),
           ("OutNoRoutes", "dropped because of missing route"), ("OutRequests", "requests sent out"),
           ("ReasmFails", "packet reassemblies failed"), ("ReasmFails", "packet reassembles failed"),
           ("ReasmOKs", "packets reassembled ok"), ("ReasmReqds", "reassemblies required"),
           ("ReasmTimeout", "fragments dropped after timeout")),
    "Icmp": (("InAddrMaskReps", "ICMP input histogram: address mask replies"),
             ("InAddrMasks", "ICMP input histogram: address mask request"),
             ("InDestUnreachs", "ICMP input histogram: destination unreachable"),
             ("InEchoReps", "ICMP input histogram: echo replies"),
             ("InEchos", "ICMP input histogram: echo requests"), ("InErrors", "input ICMP message failed"),
             ("InMsgs", "ICMP messages received"), ("InParmProbs", "ICMP input histogram: wrong parameters"),
             ("InRedirects", "ICMP input histogram: redirects"),
             ("InSrcQuenchs", "ICMP input histogram: source quenches"),
             ("InTimeExcds", "ICMP input histogram: timeout in transit"),
             ("InTimestampReps", "ICMP input histogram: timestamp reply"),
             ("InTimestamps", "ICMP input histogram: timestamp request"),
             ("OutAddrMaskReps", "ICMP output histogram: address mask replies"),
             ("OutAddrMasks", "ICMP output histogram: address mask requests"),
             ("OutDestUnreachs", "ICMP output histogram: destination unreachable"),
             ("OutEchoReps", "ICMP output histogram: echo replies"),
             ("OutEchos", "ICMP output histogram: echo requests"), ("OutErrors", "ICMP messages failed"),
             ("OutMsgs", "ICMP messages sent"), ("OutParmProbs", "ICMP output histogram: wrong parameters"),
             ("OutRedirects", "ICMP output histogram: redirect"),
             ("OutSrcQuenchs", "ICMP output histogram: source quench"),
             ("OutTimeExcds", "ICMP output histogram: time exceeded"),
             ("OutTimestampReps", "ICMP output histogram: timestamp replies"),
             ("OutTimestamps", "ICMP output histogram: timestamp requests")),
    "Tcp": (("ActiveOpens", "active connection openings"), ("ActiveOpens", "active connections openings"),
            ("AttemptFails", "failed connection attempts"), ("CurrEstab", "connections established"),
            ("EstabResets", "connection resets received"), ("InErrs", "bad segments received"),
            ("InSegs", "segments received"), ("OutRsts", "resets sent"), ("OutSegs", "segments sent out"),
            ("OutSegs", "segments send out"), ("PassiveOpens", "passive connection openings"),
            ("RetransSegs", "segments retransmitted"), ("RetransSegs", "segments retransmited")),
    "Udp": (("InDatagrams", "packets received"), ("InErrors", "packet receive errors"),
            ("NoPorts", "packets to unknown port received"), ("OutDatagrams", "packets sent"),
            ("RcvbufErrors", "receive buffer errors"), ("SndbufErrors", "send buffer errors")),
    "TcpExt": (("DelayedACKLocked", "delayed acks further delayed because of locked socket"),
               ("DelayedACKLost", "Quick ack mode was activated # times"), ("DelayedACKs", "delayed acks sent"),
               ("EmbryonicRsts", "resets received for embryonic SYN_RECV sockets"),
               ("ListenDrops", "SYNs to LISTEN sockets dropped"),
               ("ListenOverflows", "times the listen queue of a socket overflowed"),
               ("LockDroppedIcmps", "ICMP packets dropped because socket was locked"),
               ("OfoPruned", "packets dropped from out-of-order queue because of socket buffer overrun"),
               ("OutOfWindowIcmps", "ICMP packets dropped because they were out-of-window"),
               ("PAWSActive", "active connections rejected because of time stamp"),
               ("PAWSEstab", "packetes rejected in established connections because of timestamp"),
               ("PAWSEstab", "packets rejects in established connections because of timestamp"),
               ("PAWSPassive", "passive connections rejected because of time stamp"),
               ("PruneCalled", "packets pruned from receive queue because of socket buffer overrun"),
               ("RcvPruned", "packets pruned from receive queue"),
               ("SockMallocOOM", "Ran # times out of system memory during packet sending"),
               ("SyncookiesFailed", "invalid SYN cookies received"), ("SyncookiesRecv", "SYN cookies received"),
               ("SyncookiesSent", "SYN cookies sent"), ("TCPAbortFailed", "times unable to send RST due to no memory"),
               ("TCPAbortOnClose", "connections reset due to early user close"),
               ("TCPAbortOnData", "connections reset due to unexpected data"),
               ("TCPAbortOnLinger", "connections aborted after user close in linger timeout"),
               ("TCPAbortOnMemory", "connections aborted due to memory pressure"),
               ("TCPAbortOnSyn", "connections reset due to unexpected SYN"),
               ("TCPAbortOnTimeout", "connections aborted due to timeout"),
               ("TCPDirectCopyFromBacklog", "bytes directly in process context from backlog"),
               ("TCPDirectCopyFromPrequeue", "bytes directly received in process context from prequeue"),
               ("TCPDSACKOfoRecv", "DSACKs for out of order packets received"),
               ("TCPDSACKOfoSent", "DSACKs sent for out of order packets"),
               ("TCPDSACKOldSent", "DSACKs sent for old packets"), ("TCPDSACKRecv", "DSACKs received"),
               ("TCPDSACKUndo", "congestion windows recovered without slow start by DSACK"),
               ("TCPFACKReorder", "Detected reordering # times using FACK"),
               ("TCPFastRetrans", "fast retransmits"), ("TCPForwardRetrans", "forward retransmits"),
               ("TCPFullUndo", "congestion windows fully recovered without slow start"),
               ("TCPHPAcks", "predicted acknowledgments"), ("TCPHPHits", "packet headers predicted"),
               ("TCPHPHits", "packets header predicted"),
               ("TCPHPHitsToUser", "packet headers predicted and directly queued to user"),
               ("TCPLossFailures", "timeouts in loss state"), ("TCPLoss", "TCP data loss events"),
               ("TCPLossUndo", "congestion windows recovered without slow start after partial ack"),
               ("TCPLostRetransmit", "retransmits lost"), ("TCPMemoryPressures", "TCP ran low on memory # times"),
               ("TCPPartialUndo", "congestion windows partially recovered using Hoe heuristic"),
               ("TCPPrequeued", "packets directly queued to recvmsg prequeue"),
               ("TCPPrequeueDropped", "packets dropped from prequeue"),
               ("TCPPureAcks", "acknowledgments not containing data payload received"),
               ("TCPRcvCollapsed", "packets collapsed in receive queue due to low socket buffer"),
               ("TCPRenoFailures", "timeouts after reno fast retransmit"),
               ("TCPRenoRecoveryFail", "classic Reno fast retransmits failed"),
               ("TCPRenoRecovery", "times recovered from packet loss due to fast retransmit"),
               ("TCPRenoReorder", "Detected reordering # times using reno fast retransmit"),
               ("TCPSackFailures", "timeouts after SACK recovery"),
               ("TCPSackRecoveryFail", "SACK retransmits failed"),
               ("TCPSackRecovery", "times recovered from packet loss by selective acknowledgements"),
               ("TCPSACKReneging", "bad SACK blocks received"),
               ("TCPSACKReorder", "Detected reordering # times using SACK"),
               ("TCPSchedulerFailed", "times receiver scheduled too late for direct processing"),
               ("TCPSlowStartRetrans", "retransmits in slow start"), ("TCPTimeouts", "other TCP timeouts"),
               ("TCPTSReorder", "Detected reordering # times using time stamp"),
               ("TWKilled", "TCP sockets finished time wait in slow timer"),
               ("TW", "TCP sockets finished time wait in fast timer"),
               ("TWRecycled", "time wait sockets recycled by time stamp")),
}
_NET_TOOLS["Ip6"] = tuple(("Ip6" + f, w) for f, w in _NET_TOOLS["Ip"] if f not in ("DefaultTTL", "ForwDatagrams")) + (
    ("Ip6InMcastPkts", "incoming multicast packets"), ("Ip6InNoRoutes", "incoming packets with no route"),
    ("Ip6InTooBigErrors", "with packets too big"), ("Ip6InTruncatedPkts", "with truncated packets"),
    ("Ip6OutForwDatagrams", "forwarded"), ("Ip6OutMcastPkts", "outgoing multicast packets"))
_NET_TOOLS["Icmp6"] = (
    ("Icmp6InDestUnreachs", "ICMP input histogram: destination unreachable"),
    ("Icmp6InEchoReplies", "ICMP input histogram: echo replies"), ("Icmp6InEchos", "ICMP input histogram: echo requests"),
    ("Icmp6InErrors", "input ICMP message failed"),
    ("Icmp6InGroupMembQueries", "ICMP input histogram: group member queries"),
    ("Icmp6InGroupMembReductions", "ICMP input histogram: group member reductions"),
    ("Icmp6InGroupMembResponses", "ICMP input histogram: group member responses"),
    ("Icmp6InMsgs", "ICMP messages received"),
    ("Icmp6InNeighborAdvertisements", "ICMP input histogram: neighbour advertisement"),
    ("Icmp6InNeighborSolicits", "ICMP input histogram: neighbour solicits"),
    ("Icmp6InParmProblems", "ICMP input histogram: parameter problem"),
    ("Icmp6InPktTooBigs", "ICMP input histogram: packets too big"),
    ("Icmp6InRedirects", "ICMP input histogram: redirects"),
    ("Icmp6InRouterAdvertisements", "ICMP input histogram: router advertisement"),
    ("Icmp6InRouterSolicits", "ICMP input histogram: router solicits"),
    ("Icmp6InTimeExcds", "ICMP input histogram: received ICMPv6 time exceeded"),
    ("Icmp6OutDestUnreachs", "ICMP output histogram: destination unreachable"),
    ("Icmp6OutEchoReplies", "ICMP output histogram: echo replies"),
    ("Icmp6OutEchos", "ICMP output histogram: echo requests"),
    ("Icmp6OutGroupMembQueries", "ICMP output histogram: group member queries"),
    ("Icmp6OutGroupMembReductions", "ICMP output histogram: group member reductions"),
    ("Icmp6OutGroupMembResponses", "ICMP output histogram: group member responses"),
    ("Icmp6OutMsgs", "ICMP messages sent"),
    ("Icmp6OutNeighborAdvertisements", "ICMP output histogram: neighbor advertisements"),
    ("Icmp6OutNeighborSolicits", "ICMP output histogram: neighbor solicits"),
    ("Icmp6OutParmProblems", "ICMP output histogram: parameter problem"),
    ("Icmp6OutPktTooBigs", "ICMP output histogram: packets too big"),
    ("Icmp6OutRedirects", "ICMP output histogram: redirects"),
    ("Icmp6OutRouterAdvertisements", "ICMP output histogram: router advertisement"),
    ("Icmp6OutRouterSolicits", "ICMP output histogram: router solicits"),
    ("Icmp6OutTimeExcds", "ICMP output histogram: sent ICMPv6 time exceeded"))
_NET_TOOLS["Udp6"] = tuple(("Udp6" + f, w) for f, w in _NET_TOOLS["Udp"] if f in ("InDatagrams", "InErrors", "NoPorts",
                                                                                  "OutDatagrams"))
_NET_TOOLS["Tcp6"] = _NET_TOOLS["Tcp"]
_WORDS = {section: {words.lower(): (field if field.startswith(section) and section.endswith("6")
                                    else ("Tcp" if section == "Tcp6" else section) + field)
                    for field, words in entries}
          for section, entries in _NET_TOOLS.items()}
_FIELD = lazy(r"[A-Z][A-Za-z0-9]*")
# nstat / snmp6 / nstat -j names: a kernel group, then the field
KERNEL_GROUPS = ("Ip6", "IpExt", "Ip", "Icmp6", "IcmpMsg", "Icmp", "TcpExt", "Tcp", "UdpLite6", "UdpLite", "Udp6",
                 "Udp", "MPTcpExt", "Sctp", "TlsInfo", "Xfrm")
_GROUP = lazy(rf"(?:{'|'.join(KERNEL_GROUPS)})(?=[A-Z])")


def kernel_group(name: str) -> Optional[str]:
    """The kernel group an nstat name begins with (IpExt of IpExtInOctets), or None."""
    g = _GROUP.match(name)
    return g.group(0) if g else None


# settings the kernel prints among its counters (/proc/net/snmp, nstat, net-tools' `Forwarding: 2`)
SETTINGS = frozenset(("IpForwarding", "IpDefaultTTL", "TcpRtoAlgorithm", "TcpRtoMin", "TcpRtoMax", "TcpMaxConn"))
_KERNEL_ANY = lazy(r"^\s*(?P<name>[A-Z][A-Za-z0-9]+)[ \t]+(?P<value>\S+)(?:[ \t]+\S+)?[ \t]*$")


# /proc/net/snmp fields as the kernel spells them, by lower-cased group and field, for names
# that come lower-cased (Telegraf's net input: icmp_indestunreachs): the fields net-tools has
# words for, the MIB objects, and the kernel's own additions.
_KERNEL_FIELDS = {g.lower(): {f.lower(): f for f in fields} for g, fields in (
    ("Ip", [f for f, _ in _NET_TOOLS["Ip"]] + list(base.MIB_FIELDS["ip"]) + ["Forwarding", "OutTransmits"]),
    ("Icmp", [f for f, _ in _NET_TOOLS["Icmp"]] + list(base.MIB_FIELDS["icmp"])
     + ["InCsumErrors", "InRatelimit", "OutRatelimit"]),
    ("Tcp", [f for f, _ in _NET_TOOLS["Tcp"]] + list(base.MIB_FIELDS["tcp"])
     + ["InCsumErrors", "RtoAlgorithm", "RtoMin", "RtoMax", "MaxConn"]),
    ("Udp", [f for f, _ in _NET_TOOLS["Udp"]] + list(base.MIB_FIELDS["udp"])
     + ["InCsumErrors", "IgnoredMulti", "MemErrors"]),
    ("UdpLite", [f for f, _ in _NET_TOOLS["Udp"]] + list(base.MIB_FIELDS["udp"])
     + ["InCsumErrors", "IgnoredMulti", "MemErrors"]))}
_ICMPMSG_FIELD = lazy(r"(?P<dir>in|out)type(?P<n>[0-9]{1,3})", re.I)


def nstat_name(group: str, field: str) -> Optional[str]:
    """The nstat name of a kernel counter shown as its group and field (node_exporter's
    `Ip_ReasmFails`, Telegraf net's lower-cased `icmp_indestunreachs`), or None: a group the
    kernel has not, a lower-cased field whose spelling is not known. A setting (SETTINGS) is
    named too: it is no counter, and the callers leave it out."""
    proper = next((g for g in KERNEL_GROUPS if g.lower() == group.lower()), None)
    if proper is None or not field:
        return None
    if field.islower():
        m = _ICMPMSG_FIELD.fullmatch(field) if proper == "IcmpMsg" else None
        field = f"{m['dir'].title()}Type{m['n']}" if m else _KERNEL_FIELDS.get(proper.lower(), {}).get(field)
        if field is None:
            return None
    return proper + field


def _standard(section: str, label: str) -> Optional[str]:
    """The nstat name of a net-tools line (model.Counter `name`), or None."""
    words = _WORDS.get(section)
    if words is not None:
        field = words.get(label.lower())
        if field is not None:
            return field
    if _FIELD.fullmatch(label):      # net-tools' `Field: N` for a field it has no words for
        return label if label.startswith(section) else section + label
    return None


class _Counters(base.Every):
    """base.Every without the settings (SETTINGS) the kernel prints among its counters."""

    def add(self, section, label, value, name=None, parent=None) -> None:
        if name is None and self.names is not None:
            name = self.names(section, label)
        if name not in SETTINGS:
            super().add(section, label, value, name, parent)


def _every(lines: List[str], reading: Reading) -> None:
    """Every counter of every form (reading.counters): net-tools sections, /proc/net/snmp and
    /proc/net/netstat tables, /proc/net/snmp6, nstat and nstat -j name/value lines."""
    every = _Counters(reading, _standard)
    section: Optional[str] = None
    header: Optional[Tuple[str, List[str]]] = None
    for line in lines:
        if '"' in line:
            for m in _JSON_PAIR.finditer(line):
                group = kernel_group(m["name"])
                if group:
                    every.add(group, m["name"], m["value"], name=m["name"])
            continue
        h = _SNMP_HEADER.match(line)
        if h:
            header, section = (h["group"], h["names"].split()), None
            continue
        v = _SNMP_VALUES.match(line)
        if v and header is not None and v["group"] == header[0]:
            group, names = header
            header = None
            values = v["values"].split()
            if len(values) == len(names):
                for col, value in zip(names, values):
                    every.add(group, col, value, name=group + col)
            continue
        header = None
        if line.endswith(":"):
            m = _SECTION.match(line)
            if m and (m["name"] in _LINUX_SECTIONS or m["name"].endswith("Ext")):
                section = m["name"]
                continue
        k = _KERNEL_ANY.match(line) if section is None else None
        if k:
            group = kernel_group(k["name"])
            if group:
                every.add(group, k["name"], k["value"], name=k["name"])
            continue
        if section is not None:
            every.line(section, line)


def read(lines: List[str]) -> Reading:
    reading = _read(lines)
    _every(lines, reading)
    return reading


def _read(lines: List[str]) -> Reading:
    reading = Reading(format="netstat -s", ipv4=None)
    if any(line.lstrip().startswith(('{"kernel"', '"kernel"')) for line in lines[:3]):
        reading.format = "nstat -j"
        reading.ipv4, reading.ipv6 = _nstat_json(lines, reading)
        reading.warnings.append(
            "nstat: values are increases since nstat's previous run unless it ran with -a; "
            "the text does not say which, and a diff between two increase snapshots means nothing")
        return reading
    formats: List[str] = []

    blob = "\n".join(lines)    # cheap substring checks skip the forms that cannot be there
    v4 = v6 = None
    if "Ip:" in blob or "Ip6:" in blob or "reassembl" in blob or "fragment" in blob:
        v4, v6, kind = _netstat(lines, reading, blob)
        if kind:
            formats.append(kind)

    if "ReasmReqds" in blob:
        snmp_v4, snmp_seen = _snmp(lines, reading)
        if snmp_seen:
            formats.append("/proc/net/snmp")
            if snmp_v4 is not None and v4 is None:
                v4 = snmp_v4

    n4 = n6 = None
    is_nstat = is_snmp6 = False
    if "Ip" in blob:          # nstat leaves zero counters out: its Ip lines may hold traffic counters only
        n4, n6, is_nstat, is_snmp6 = _named(lines, reading)
    kernel_header = "#kernel" in blob and any(_NSTAT_HEADER.match(line) for line in lines)
    if is_nstat or (kernel_header and not is_snmp6):
        formats.append("nstat")
        reading.warnings.append(
            "nstat: values are increases since nstat's previous run unless it ran with -a; "
            "the text does not say which, and a diff between two increase snapshots means nothing")
        groups = {m["name"] for m in map(_NSTAT_ANY.match, lines) if m}
        broad = kernel_header and any(_NSTAT_OTHER_GROUP.match(g) for g in groups)
        has_v4 = any(g.startswith("Ip") and not g.startswith("Ip6") for g in groups)
        has_v6 = any(g.startswith("Ip6") for g in groups)
        if broad and any(damaged(line) for line in lines):
            broad = False
            reading.warnings.append("nstat: a damaged line (bytes nstat never prints): counters not shown are "
                                    "left unknown instead of taken as 0")
        if broad and has_v4:
            n4 = {name: (n4 or {}).get(name, 0) for name in ALL}
        if broad and has_v6:
            n6 = {name: (n6 or {}).get(name, 0) for name in ALL}
    elif is_snmp6:
        formats.append("/proc/net/snmp6")
    if n4 is not None and v4 is None:
        v4 = n4
    if n6 is not None and v6 is None:
        v6 = n6

    reading.ipv4 = v4
    reading.ipv6 = v6
    reading.format = " + ".join(dict.fromkeys(formats)) or "netstat -s"
    return reading


# -------------------------------------------------------------------- detection

# Wording only net-tools / the Linux kernel uses; plain substrings are much faster than a regex.
_STRONG_WORDS = (
    "reassemblies required", "packet reassembles failed", "packet reassemblies failed",
    "fragments received ok", "outgoing packets fragmented ok", "outgoing packets failed fragmentation",
    "incoming packets delivered", "requests sent out", "Ip: Forwarding DefaultTTL", "#kernel", '"kernel"',
)
_STRONG_LINES = lazy(r"^[ \t]*(?:Ip6?(?:Reasm|Frag)[A-Za-z]+[ \t]+\d|Ip6?:[ \t]*$)", re.M)
_WEAK_WORDS = ("packets reassembled ok", "fragments dropped after timeout", "fragments created", "total packets received")
# BSD / HP-UX / FTX / TCP_OS wording (and their lower-case `ip:` headers), Windows: not Linux.
_NOT_LINUX = needs(lazy(
    r"fragments received[ \t]*$|dup or out of space|output datagrams fragmented|datagrams that can't be fragmented"
    r"|^[ \t]*ip6?:[ \t]*$|Reassembly Required|IPv[46] Statistics|^[ \t]*IP Statistics",
    re.M), "fragments received", "dup or out of space", "output datagrams fragmented",
    "datagrams that can't be fragmented", "ip:", "ip6:", "Reassembly Required", " Statistics", fold=False)


def detect(text: str) -> float:
    hits = sum(1 for word in _STRONG_WORDS if word in text)
    if "Ip" in text:
        hits += len({m.group(0).strip()[:3] for m in _STRONG_LINES.finditer(text)})
    if hits:
        return round(min(1.0, 0.8 + 0.05 * hits), 2)
    if _NOT_LINUX.search(text):
        return 0.0
    return 0.3 if any(word in text for word in _WEAK_WORDS) else 0.0


def parse(text: str):
    return base.parse_text(text, META, read)
