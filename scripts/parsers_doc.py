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
from parsers.model import ALL  # noqa: E402

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
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
