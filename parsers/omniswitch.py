"""Alcatel-Lucent OmniSwitch `show ip traffic` (AOS 6) and the Omni Switch/Router `ips` screen.

    -> show ip traffic
    Datagrams received
      Total                 = 621883,
      Delivered to users    = 567330,
      Reassemble needed     = 0,
      Reassembled           = 0,
      Reassemble failed     = 0
    Datagrams sent
      Fowarded              = 2801,
      Generated             = 578108,
      Fragmented            = 2801,
      Fragment failed       = 0,
      Fragments generated   = 0

    IP Statistics and Errors                       (Omni Switch/Router, `ips`)
    Total Datagrams Recvd/Forwarded   513342 / 513283
    PDUs Needing Reassembly           0
    PDUs Successfully Reassembled     0

`Label = value,` or `Label value` a line; "Datagrams received" / "Datagrams sent" say which
side a label such as "Local discards" belongs to.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional

from ._needs import needs
from . import base
from .model import Meta, Reading
from .lazyre import lazy


META = Meta(
    name="omniswitch",
    role="router",
    title="Alcatel-Lucent OmniSwitch (AOS) and Omni Switch/Router",
    covers=("OmniSwitch 6250 / 6450 / 6850 / 9000 (AOS 6)", "Omni Switch/Router (OmniS/R) 4.x"),
    formats=("show ip traffic", "ips (IP Statistics and Errors)", "-> show ip traffic (prompt kept)"),
    ipv4=("ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates",
          "InReceives", "InDelivers", "OutRequests", "ForwDatagrams"),
    reasm_unit="both",
    semantics=(
        "The labels are IP-MIB's own, renamed (the CLI reference defines each with the MIB text): "
        "'Reassemble needed' is fragments received needing reassembly (ReasmReqds), 'Reassembled' datagrams "
        "reassembled (ReasmOKs), 'Reassemble failed' ReasmFails; 'Fragmented' datagrams fragmented (FragOKs), "
        "'Fragment failed' datagrams that could not be (FragFails: DF set), 'Fragments generated' FragCreates. "
        "Omni Switch/Router 'ips': 'PDUs Needing Reassembly' ReasmReqds, 'PDUs Successfully Reassembled' "
        "ReasmOKs, 'Reassembly Failures' ReasmFails, 'Fragments created' FragCreates, 'Fragmentation "
        "Failures' FragFails; 'PDUs Needing Fragmentation' counts datagrams that required fragmenting "
        "(fragmented or not), so it stays in raw only and FragOKs is null there; 'Reassembly Timeout "
        "(seconds)' is the timer setting, raw only, so ReasmTimeout is always null. Traffic: 'Total' "
        "received (or the first of 'Total Datagrams Recvd/Forwarded') InReceives, 'Delivered to users' "
        "InDelivers, 'Generated' / 'PDUs Requested for Transmit' OutRequests, 'Fowarded' (sic) ForwDatagrams. "
        "These are switches that route: forwarding is true when they forwarded datagrams (> 0). 32-bit "
        "counters (4294931545 requested for transmit in the manual's own example is close to the wrap)."),
)

_LINE = lazy(r"^[ \t>]*(?P<label>[A-Za-z][A-Za-z/() -]*?)[ \t]*(?:=[ \t]*)?(?P<value>[0-9][0-9, .]*?)[ \t]*,?[ \t]*$")
_PAIR = lazy(r"^[ \t]*Total Datagrams Recvd/Forwarded[ \t]+(?P<a>[0-9]+)[ \t]*/[ \t]*(?P<b>[0-9]+)", re.I)
_SIDE = lazy(r"^[ \t]*Datagrams[ \t]+(?P<side>received|sent)[ \t]*:?[ \t]*$", re.I)

_MAP: Dict[str, str] = {
    "received total": "InReceives", "received delivered to users": "InDelivers",
    "received reassemble needed": "ReasmReqds", "received reassembled": "ReasmOKs",
    "received reassemble failed": "ReasmFails",
    "sent fowarded": "ForwDatagrams", "sent forwarded": "ForwDatagrams", "sent generated": "OutRequests",
    "sent fragmented": "FragOKs", "sent fragment failed": "FragFails", "sent fragments generated": "FragCreates",
    " pdus requested for transmit": "OutRequests", " pdus needing reassembly": "ReasmReqds",
    " pdus successfully reassembled": "ReasmOKs", " reassembly failures": "ReasmFails",
    " fragments created": "FragCreates", " fragmentation failures": "FragFails",
}
_RAW_ONLY = {" pdus needing fragmentation", " reassembly timeout (seconds)"}
_NAMES = {"total datagrams recvd/forwarded": ("IpInReceives", "IpForwDatagrams")}

_DETECT = needs(lazy(r"(?:Reassemble needed|Delivered to users|Fragments generated|Reassemble failed)[ \t]*=[ \t]*[0-9]"
                     r"|PDUs (?:Needing|Successfully) Reass|^[ \t]*IP Statistics and Errors", re.M | re.I),
                "reassemble needed", "delivered to users", "fragments generated", "reassemble failed", "pdus needing reass",
                "pdus successfully reass", "ip statistics and errors", fold=True)


def detect(text: str) -> float:
    hits = len(_DETECT.findall(text))
    return min(1.0, 0.8 + 0.04 * hits) if hits else 0.0


_HEADINGS = lazy(r"^[ \t]*(?:IP Statistics and Errors|IP Errors \(.*\)|Datagrams (?:received|sent))[ \t]*:?[ \t]*$", re.I)
_SLASHED = lazy(r"^[ \t]*(?P<label>[A-Za-z][A-Za-z/() -]*?)[ \t]+(?P<a>[0-9]+)[ \t]*/[ \t]*(?P<b>[0-9]+)[ \t]*$")
_SETTINGS = {"default time to live", "reassembly timeout (seconds)"}


def _every(lines: List[str], reading: Reading) -> None:
    """Every counter (reading.counters): the lines of each block under its heading (`IP
    Statistics and Errors`, `Datagrams sent` ...), `a / b` pairs as two counters; the block ends
    at the first line without a number (the manual's prose), and lines under no heading (a
    page break cut it off) are none. A line with a number that is no counter (`Fastpath
    Utilization 100%`) is skipped."""
    every = base.Every(reading)
    section = None
    for line in lines:
        h = _HEADINGS.match(line)
        if h:
            section = line.strip().rstrip(":").strip()
            continue
        if section is None:
            continue
        p = _SLASHED.match(line)
        m = None if p else _LINE.match(line)
        if p:
            label = " ".join(p["label"].split())
            every.add(section, label, p["a"], _NAMES.get(label.lower(), (None, None))[0])
            every.add(section, f"{label} #2", p["b"], _NAMES.get(label.lower(), (None, None))[1])
        elif m:
            label = " ".join(m["label"].split())
            if label.lower() not in _SETTINGS:
                side = section.lower().split()[-1] if section.lower().startswith("datagrams") else ""
                name = _MAP.get(f"{side} {label.lower()}")
                every.add(section, label, m["value"].strip(" ,"), "Ip" + name if name else None)
        elif not any(c.isdigit() for c in line):
            section = None


def read(lines: List[str]) -> Reading:
    reading = _read(lines)
    _every(lines, reading)
    return reading


def _read(lines: List[str]) -> Reading:
    reading = Reading(format="show ip traffic", ipv4=None)
    found: Dict[str, Optional[int]] = {}
    side = ""
    repeats = base.Repeats(reading)
    for line in lines:
        s = _SIDE.match(line)
        if s:
            side = s["side"].lower()
            continue
        p = _PAIR.match(line)
        if p:
            reading.format = "ips"
            for name, shown in (("InReceives", p["a"]), ("ForwDatagrams", p["b"])):
                _store(reading, repeats, found, name, f"Total Datagrams Recvd/Forwarded ({name})", shown)
            continue
        m = _LINE.match(line)
        if not m:
            continue
        label = " ".join(m["label"].lower().split())
        key = f"{side} {label}"
        if key in _RAW_ONLY:
            reading.raw[m["label"].strip()] = m["value"]
            continue
        name = _MAP.get(key)
        if name is None and not side:   # a page break cut the side heading off: a label of one side only
            sides = [k for k in (f"received {label}", f"sent {label}") if k in _MAP]
            if len(sides) == 1:
                key, name = sides[0], _MAP[sides[0]]
                side = key.split(" ", 1)[0]
        if name is None:
            continue
        if not side:
            reading.format = "ips"
        _store(reading, repeats, found, name, f"{side.title() + ': ' if side else ''}{m['label'].strip()}", m["value"])
    reading.ipv4 = found or None
    if found.get("ForwDatagrams"):
        reading.forwarding = True
    return reading


def _store(reading: Reading, repeats: base.Repeats, found: Dict[str, Optional[int]], name: str, key: str,
           shown: str) -> None:
    if "ipv4" in repeats.stopped:
        return
    value = base.value_of(key, shown, reading)
    if not repeats.keep("ipv4", key, key, value, shown):
        if repeats.conflicted("ipv4", key):
            found[name] = None
        return
    reading.raw[key] = shown
    found[name] = value


def parse(text: str):
    return base.parse_text(text, META, read)
