#!/usr/bin/env python3
"""Writes docs/parsers.md from the parsers' own META blocks (one place for each fact).

  .venv/bin/python scripts/parsers_doc.py > docs/parsers.md
tests/test_docs.py fails when docs/parsers.md is not what this prints.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import parsers  # noqa: E402
from parsers.model import ALL, SIGNALS  # noqa: E402

ROLE = {"host": "a host's own counters (host advice)", "router": "a network device (router advice only)",
        "any": "a host or a router (router advice when it forwards)"}
UNIT = {"both": "fragments and datagrams", "fragments": "fragments only", "datagrams": "datagrams only"}


def render() -> str:
    out = ["# Parsers: which OS, which format, which counters, what they mean", "",
           "Generated from each parser's META by `scripts/parsers_doc.py`; edit the parser, not this file.", "",
           "Counters use the IP-MIB names (RFC 1213 / RFC 4293): ReasmReqds (fragments received that needed "
           "reassembly), ReasmOKs (datagrams reassembled), ReasmFails, ReasmTimeout (fragments dropped after "
           "the reassembly timeout: a count), FragOKs (outgoing datagrams fragmented), FragFails (could not "
           "fragment: DF set), FragCreates (fragments made). In JSON a counter the format never reports is "
           "`null`; one the format leaves out because it is zero is `0`; one an excerpt (`| grep frag`) "
           "did not include is `null`. Beside them, the traffic counters the fragmentation numbers are "
           "measured against: InReceives (datagrams received), InDelivers (delivered to this host), "
           "OutRequests (sent by this host), ForwDatagrams (forwarded: a router); and `forwarding` "
           "(true/false) where the dump says whether IP forwarding is on.", "",
           "Beside them, every counter the text shows is kept (`counters` in `parse --json`: section and label as "
           "printed, the standard name where one exists: docs/json-schema.md). Per OS below, \"Triage reads\" "
           "names the counters the rules take as evidence of PMTU discovery at work or failing, and how exactly "
           "each counts that (an ICMP destination-unreachable count holds every code, 'fragmentation needed' "
           "being one of them).", "",
           "OS detection reads the text alone (prompts, quoting, excerpts, CRLF, UTF-16 all fine); `--os NAME` "
           "forces a parser. Fixtures with their sources: `fixtures/netstat/<name>/SOURCES.md`.", "",
           "| --os | stack | IPv4 counters | IPv6 counters | reassembly counters count | ReasmFails counts |",
           "|---|---|---|---|---|---|"]
    for name in parsers.names():
        m = parsers.get(name).META
        v4 = ", ".join(c for c in ALL if c in m.ipv4) or "none"
        v6 = ", ".join(c for c in ALL if c in m.ipv6) or "no IPv6 section"
        out.append(f"| `{name}` | {m.title} | {v4} | {v6} | {UNIT.get(m.reasm_unit, m.reasm_unit)} | "
                   f"{m.fails_unit} |")
    for name in parsers.names():
        m = parsers.get(name).META
        out += ["", f"## {m.title} (`--os {name}`)", "",
                f"- Covers: {'; '.join(m.covers)}",
                f"- Formats: {'; '.join('`' + f + '`' for f in m.formats)}",
                f"- What it is: {ROLE[m.role]}; counter width assumed for wraps: {m.counter_bits} bits",
                f"- Fixtures: `fixtures/netstat/{name}/`", "", m.semantics]
        if m.signals:
            out += ["", "Triage reads:", ""]
            for what in SIGNALS:
                keys = [s for s in m.signals if s.what == what]
                for fam in dict.fromkeys(s.family for s in keys):
                    alts = [s for s in keys if s.family == fam]
                    how = "; ".join(filter(None, (s.note for s in alts)))
                    out.append(f"- {SIGNALS[what]} ({fam}): " + " or ".join(f"`{s.key}`" for s in alts)
                               + ("" if all(s.exact for s in alts) else " (counts more than that)")
                               + (f": {how}" if how else ""))
    out += ["", EVIDENCE]
    return "\n".join(out) + "\n"


EVIDENCE = """## Socket tables and learned routes (not counters)

Read from the same files, directories and pastes as the dumps, and tied to a host the same
way (docs/hosts.md); `parse` lists them, `parse --json` gives their records (`"evidence":
"sockets"` or `"routes"`, docs/json-schema.md), triage reads them (docs/triage.md).
Fixtures with their sources: `fixtures/evidence/SOURCES.md`.

| kind | OS | formats | what each record holds |
|---|---|---|---|
| sockets | Linux | `ss -tin`, `ss -ti` (service names for ports), `ss -tinH` (no header), `ss -tinp` (`users:((...))`), `ss -tino` (`timer:(...)`), `ss -tiepm` (`ino:`, `sk:`, `skmem:`), a `Netid` column, records an e-mail or a terminal wrapped | state, queues, local and peer address and port, every TCP_INFO field as printed (`info`) and as numbers: `mss` (what this host sends, after the TCP options), `advmss`, `rcvmss` (the largest segment the peer sent: 536 until data arrives), `pmtu`, `backoff` (retransmission timeouts in a row), `retrans` (now/total), `bytes_sent`, `bytes_acked`, `bytes_received`, `data_segs_in/out`, `unacked`, `notsent` |
| routes | Linux | `ip route`, `ip -6 route`, `ip route show cache`, `ip -6 route show cache`, `ip route get ADDR`, `ip -j route [show cache]` (JSON) | destination, type, `via`, `dev`, `src`, `proto`, `scope`, `metric`, `table`, `mtu` (and `lock`), `advmss`, `expires` (seconds), nexthops, flags, every other attribute as printed; `cache` true for what the host learned (`show cache`, `get`, the `cache` line): its `mtu` is the path MTU a router told it |
| routes | Windows | `netsh interface ipv4\\|ipv6 show destinationcache` (any language: the table is read by its shape) | destination, next hop, interface, the path MTU in use (`mtu`; `cache` true) |
| routes | HP-UX | `netstat -rn`, `netstat -rnv` (the Pmtu column) | destination, netmask, gateway, flags, interface, the route's path MTU |

A route-cache or socket-table command that printed nothing (an empty `ip route show cache`
at its prompt) is a record with no items: no "fragmentation needed" reached the host lately."""


if __name__ == "__main__":
    sys.stdout.write(render())
