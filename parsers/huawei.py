"""Huawei VRP, H3C / HPE Comware and 3Com `display ip statistics` / `display ipv6 statistics`.

    <HUAWEI> display ip statistics
    Input:        sum                4219578    local           0
                  bad protocol       1327031    bad format      0
    Output:       forwarding         0          local           1754592
                  dropped            0          no route        0
    Fragment:     input              0          output          0
                  dropped            0          fragmented      0
                  couldn't fragment  0
    Reassembling: sum                0          timeouts        0

    <HUAWEI> display ipv6 statistics
      Sent packets:
        Local sent out       : 16           Forwarded            : 0
        Fragmented           : 0            Fragments            : 0
      Received packets:
        Fragments            : 0            Reassembled          : 0

`label value` (IPv4) or `label : value` (IPv6) pairs, two to a line, under a group heading
that continuation lines inherit. Pairs are found anywhere on a line, so collapsed blanks,
a flattened paste or `Fragment:input` (3Com, no blank after the colon) read the same.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ._needs import needs
from . import base
from .text import DAMAGED
from .model import Meta, Reading
from .lazyre import lazy


META = Meta(
    name="huawei",
    role="router",
    title="Huawei VRP, H3C / HPE Comware, 3Com",
    covers=("Huawei VRP 5/8 (S-series switches, AR, NE routers, CE data-centre switches, USG firewalls)",
            "H3C Comware 5/7, HPE FlexNetwork (Comware)", "3Com 5500 and other Huawei-3Com switches",
            "Huawei Quidway"),
    formats=("display ip statistics", "display ipv6 statistics", "<HUAWEI>display ip statistics (prompt kept)"),
    ipv4=("ReasmReqds", "ReasmOKs", "ReasmTimeout", "FragOKs", "FragFails", "FragCreates",
          "InReceives", "InDelivers", "OutRequests", "ForwDatagrams"),
    ipv6=("ReasmReqds", "ReasmOKs", "ReasmTimeout", "FragOKs", "FragFails", "FragCreates",
          "InReceives", "InDelivers", "OutRequests", "ForwDatagrams"),
    reasm_unit="both",
    semantics=(
        "IPv4: 'Fragment: input' is fragments received (ReasmReqds), 'output' fragments sent (FragCreates), "
        "'fragmented' datagrams split (FragOKs), 'couldn't fragment' datagrams that could not be split, "
        "DF set (FragFails); 'Reassembling: sum' is datagrams reassembled (ReasmOKs), 'timeouts' the "
        "reassemblies given up at the timer (ReasmTimeout, a count). 'Fragment: dropped' counts dropped "
        "fragments, not failed reassemblies, so it stays in raw only and ReasmFails is null. IPv6: "
        "Received 'Fragments' is ReasmReqds, 'Reassembled' ReasmOKs, 'Reassembly timeout' ReasmTimeout "
        "(a count of packets given up, not the timer setting); Sent 'Fragmented' FragOKs, 'Fragments' "
        "FragCreates, 'Fragments failed' FragFails; 'Fragments error' and 'Fragments overlap' stay in raw. "
        "Traffic: Input 'sum' / Received 'Total' InReceives, Input 'local' / 'Local host' InDelivers, "
        "Output 'local' / 'Local sent out' OutRequests, Output 'forwarding' / Sent 'Forwarded' "
        "ForwDatagrams. These are routers and switches: forwarding is true when the device forwarded "
        "datagrams (forwarded > 0), else unknown."),
)

_GROUP = lazy(r"(?:^|(?<=[\s>]))(?P<group>Input|Output|Fragment|Reassembling|Sent packets|Received packets"
              r"|Extension header|filter|IPv6 [Pp]rotocol|ICMPv6 [Pp]rotocol|ICMP [Pp]rotocol)[ \t]*:", re.I)
_PAIR = lazy(r"(?P<label>[A-Za-z][A-Za-z'/-]*(?:[ \t][A-Za-z][A-Za-z'/-]*)*)[ \t]*:?[ \t]+"
             r"(?P<value>[0-9][0-9]*(?:[.,\u00a0][0-9]{3})*)(?![^\s])")

_MAP: Dict[Tuple[str, str], Tuple[str, str]] = {   # (group, label) -> (family, counter)
    ("input", "sum"): ("ipv4", "InReceives"),
    ("input", "local"): ("ipv4", "InDelivers"),
    ("output", "forwarding"): ("ipv4", "ForwDatagrams"),
    ("output", "local"): ("ipv4", "OutRequests"),
    ("fragment", "input"): ("ipv4", "ReasmReqds"),
    ("fragment", "output"): ("ipv4", "FragCreates"),
    ("fragment", "fragmented"): ("ipv4", "FragOKs"),
    ("fragment", "couldn't fragment"): ("ipv4", "FragFails"),
    ("reassembling", "sum"): ("ipv4", "ReasmOKs"),
    ("reassembling", "timeouts"): ("ipv4", "ReasmTimeout"),
    ("sent packets", "local sent out"): ("ipv6", "OutRequests"),
    ("sent packets", "forwarded"): ("ipv6", "ForwDatagrams"),
    ("sent packets", "fragmented"): ("ipv6", "FragOKs"),
    ("sent packets", "fragments"): ("ipv6", "FragCreates"),
    ("sent packets", "fragments failed"): ("ipv6", "FragFails"),
    ("received packets", "total"): ("ipv6", "InReceives"),
    ("received packets", "local host"): ("ipv6", "InDelivers"),
    ("received packets", "fragments"): ("ipv6", "ReasmReqds"),
    ("received packets", "reassembled"): ("ipv6", "ReasmOKs"),
    ("received packets", "reassembly timeout"): ("ipv6", "ReasmTimeout"),
}
_RAW_ONLY = {("fragment", "dropped"), ("received packets", "fragments error"), ("received packets", "fragments overlap")}
_GROUP_FAMILY = {"input": "ipv4", "output": "ipv4", "fragment": "ipv4", "reassembling": "ipv4",
                 "sent packets": "ipv6", "received packets": "ipv6"}

_DETECT_V4 = needs(lazy(r"Reassembling[ \t]*:[ \t]*sum[ \t]+[0-9]|couldn'?t fragment[ \t]+[0-9]", re.I),
                   "reassembling", "couldn", fold=True)
_DETECT_V4_WEAK = needs(lazy(r"^[ \t<>\w]*Input[ \t]*:[ \t]*sum[ \t]+[0-9]", re.M | re.I), "input", fold=True)
_DETECT_V6 = needs(lazy(r"Local sent out[ \t]*:[ \t]*[0-9]|Reassembly timeout[ \t]*:[ \t]*[0-9]"
                        r"|Fragments failed[ \t]*:[ \t]*[0-9]", re.I),
                   "local sent out", "reassembly timeout", "fragments failed", fold=True)


def detect(text: str) -> float:
    hits = (_DETECT_V4.search(text) is not None) + (_DETECT_V6.search(text) is not None)
    if hits:
        return min(1.0, 0.85 + 0.05 * hits + (0.05 if _DETECT_V4_WEAK.search(text) else 0.0))
    return 0.4 if _DETECT_V4_WEAK.search(text) else 0.0


def _every(lines: List[str], reading: Reading) -> None:
    """Every counter (reading.counters): each `label value` pair under its group as printed
    (`Input:`, `Fragment:`, `Sent packets:`, `Extension header:`, `filter:` ...: the section)."""
    every = base.Every(reading)
    group = None
    for line in lines:
        if DAMAGED in line:
            continue
        pos = 0
        segments: List[Tuple[Optional[str], str]] = []
        for g in _GROUP.finditer(line):
            segments.append((group, line[pos:g.start()]))
            group = " ".join(g["group"].split())
            pos = g.end()
        segments.append((group, line[pos:]))
        for grp, text in segments:
            if grp is None:
                continue
            for p in _PAIR.finditer(text):
                label = " ".join(p["label"].split())
                hit = _MAP.get((grp.lower(), label.lower()))
                name = None
                if hit is not None:
                    family, counter = hit
                    name = ("Ip6" + ("OutForwDatagrams" if counter == "ForwDatagrams" else counter)
                            if family == "ipv6" else "Ip" + counter)
                every.add(grp, label, p["value"], name)


def read(lines: List[str]) -> Reading:
    reading = _read(lines)
    _every(lines, reading)
    return reading


def _read(lines: List[str]) -> Reading:
    reading = Reading(format="display ip statistics", ipv4=None)
    found: Dict[str, Dict[str, Optional[int]]] = {}
    group = ""
    repeats = base.Repeats(reading)
    for line in lines:
        pos = 0
        segments: List[Tuple[str, str]] = []
        for g in _GROUP.finditer(line):
            segments.append((group, line[pos:g.start()]))
            group = " ".join(g["group"].lower().split())
            pos = g.end()
            if group in _GROUP_FAMILY:
                found.setdefault(_GROUP_FAMILY[group], {})
        segments.append((group, line[pos:]))
        for grp, text in segments:
            if grp not in _GROUP_FAMILY or not text.strip():
                continue
            for p in _PAIR.finditer(text):
                label = " ".join(p["label"].lower().split())
                if (grp, label) in _RAW_ONLY:
                    reading.raw[f"{grp.title()}: {label}"] = p["value"]
                    continue
                hit = _MAP.get((grp, label))
                if hit is None:
                    continue
                family, name = hit
                if family in repeats.stopped:
                    continue
                key = f"{grp.title()}: {label}"
                value = base.value_of(key, p["value"], reading)
                if not repeats.keep(family, (grp, label), key, value, p["value"]):
                    if repeats.conflicted(family, (grp, label)):
                        found[family][name] = None
                    continue
                reading.raw[key] = p["value"]
                found.setdefault(family, {})[name] = value
    reading.ipv4 = found.get("ipv4") or None
    reading.ipv6 = found.get("ipv6") or None
    if reading.ipv6 is not None:
        reading.format = "display ipv6 statistics" if reading.ipv4 is None else \
            "display ip statistics + display ipv6 statistics"
    if any((fam or {}).get("ForwDatagrams") for fam in (reading.ipv4, reading.ipv6)):
        reading.forwarding = True
    return reading


def parse(text: str):
    return base.parse_text(text, META, read)
