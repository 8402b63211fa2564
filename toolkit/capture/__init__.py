"""Offline capture analysis: pcap / pcapng / snoop files and VOS packet_monitor text.

    result = toolkit.capture.analyze(["a.pcap"], second=["b.pcapng"], mtu=1500)
    for flow in result.flows:              # dicts, see docs/capture.md (made as they are read)
        flow["client_to_server"]["mss"], flow["server_to_client"]["max_payload"]
    result.findings                        # toolkit.findings.Finding, data["host"] = address
    result.for_host("10.0.1.2")            # (flows, findings) that concern that address

    result = toolkit.capture.read(["a.pcap"])   # the same without the findings, then
    for flow in result.judged():                # each record made once, its findings added as it goes
        ...                                     # (a million connections: no second pass)

The reader reports evidence per connection; toolkit/rules/captured.py turns it into
findings. Bad inputs never raise: each gives one entry in result.errors ("path: reason")
and the others are still read.
"""
from __future__ import annotations

import os
import stat
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence


if TYPE_CHECKING:       # the findings load with an analysis, not with this package
    from toolkit.findings import Finding

__all__ = ["analyze", "read", "Result"]
TEXT_HEAD = 1 << 20      # a packet_monitor trace shows its first packet within this many bytes


@dataclass
class Result:
    captures: List[dict] = field(default_factory=list)     # per file: format, interfaces, frames, undecoded, ...
    flows: Sequence[dict] = field(default_factory=list)    # per connection (record.flow_dict), made as read
    fragments: List[dict] = field(default_factory=list)    # fragments tied to no TCP connection
    untied_ptbs: List[dict] = field(default_factory=list)  # PTBs quoting no connection in the capture
    clamping: List[dict] = field(default_factory=list)     # SYNs matched across --second captures
    findings: List[Finding] = field(default_factory=list)
    caveats: List[str] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)        # "path: reason", one per bad input
    warnings: List[str] = field(default_factory=list)      # "path: text": a format rule broken, the packets still read
    read_ok: List[str] = field(default_factory=list)
    mtu: int = 1500                                        # the --mtu the rules judge sizes against
    clamped: List[tuple] = field(default_factory=list)     # (clamping record, first flow, second flow), clamped ones
    judging_started: bool = False

    def judged(self) -> Iterator[dict]:
        """Each connection's record, made once, while toolkit/rules/captured.py adds the findings its
        evidence supports to `findings`; once the last is out, the findings about loose fragments and
        clamping. A second call only gives the records again."""
        if self.judging_started:
            yield from self.flows
            return
        from toolkit.rules import captured
        self.judging_started = True
        clamped = {(c[k]["source"], c[k]["flow"]) for c, _, _ in self.clamped for k in ("first", "second")}
        for f in self.flows:
            self.findings += captured.for_flow(f, self.mtu, (f["source"], f["id"]) in clamped)
            yield f
        self.findings += captured.for_loose(self.fragments)
        self.findings += [captured.clamped(a, b, rec) for rec, a, b in self.clamped]

    def for_host(self, address: str):
        """The flows with this address at either end, and the findings about that host."""
        flows = [f for f in self.flows
                 if address in (f["client_to_server"]["addr"], f["server_to_client"]["addr"])]
        return flows, [x for x in self.findings if x.data.get("host") == address]

    def hosts(self) -> List[str]:
        seen: Dict[str, None] = {}
        for f in self.flows:
            seen.setdefault(f["client_to_server"]["addr"])
            seen.setdefault(f["server_to_client"]["addr"])
        return list(seen)

    def to_dict(self) -> dict:
        from toolkit.capture.record import SCHEMA
        return {"schema": SCHEMA, "captures": self.captures, "flows": list(self.flows), "fragments": self.fragments,
                "untied_ptbs": self.untied_ptbs, "clamping": self.clamping,
                "findings": [f.to_dict() for f in self.findings], "caveats": self.caveats,
                "errors": self.errors, "warnings": self.warnings}


def regular(path: str) -> Optional[str]:
    """Why path cannot be read as a capture (checked with os.stat, never opened), or None."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return exc.strerror.lower() if exc.strerror else str(exc)
    if stat.S_ISDIR(st.st_mode):
        return "is a directory (name the capture files)"
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else \
            "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file"
        return f"is {kind}, not a capture file"
    if st.st_size == 0:
        return "empty file (0 bytes)"
    return None


# what a decoding bug could raise: caught so that no input ever ends in a traceback (the
# fuzz test in tests/test_capture_fuzz.py checks that it never happens)
_BUGS = (struct.error, IndexError, ValueError, KeyError, OverflowError, RecursionError, TypeError)


def read_file(path: str, analyzer, result: Result, progress: Optional[Callable[[int], None]] = None,
              keep_pm=None) -> bool:
    """One input into the analyzer; problems go to result.errors. True when it was read."""
    from toolkit.capture import formats
    problem = regular(path)
    if problem:
        result.errors.append(f"{path}: {problem}")
        return False
    analyzer.source = path
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as exc:
        result.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return False
    if formats.sniff(head) == "text":
        return _read_text(path, analyzer, result, progress, keep_pm)
    try:
        info = formats.read(path, analyzer.frame, progress)
    except formats.CaptureError as exc:
        result.errors.append(f"{path}: {exc}")
        return False
    except OSError as exc:
        result.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return False
    except _BUGS as exc:
        result.errors.append(f"{path}: frame {analyzer.frames} could not be decoded (internal error: "
                             f"{type(exc).__name__}: {exc}); reading stopped there")
        return analyzer.frames > 1
    record = info.to_dict()
    result.captures.append(record)
    for w in info.warnings:
        result.warnings.append(f"{path}: {w}")
    if info.truncated:
        result.errors.append(f"{path}: {info.truncated} ({info.frames} frames before it were read)")
    for itf in info.interfaces:
        if itf.dropped:
            result.caveats.append(f"{path}: interface {itf.name or info.interfaces.index(itf)} dropped "
                                  f"{itf.dropped} packets during the capture: missing segments may look "
                                  "like loss or retransmissions")
    for why, n in info.unread.items():
        analyzer.undecoded[why] = analyzer.undecoded.get(why, 0) + n
    if info.frames == 0 and not info.truncated and not info.unread:
        result.caveats.append(f"{path}: no packets: a valid {info.format} file that holds none")
    return not info.truncated or info.frames > 0


def _read_text(path, analyzer, result, progress, keep_pm) -> bool:
    from toolkit.capture import formats, pmtext
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        head = f.read(TEXT_HEAD)
        if not pmtext.looks_like(head):
            result.errors.append(f"{path}: not a capture file: text, but not a VOS packet_monitor trace "
                                 f"(no 'Ver/HL' lines in its first {TEXT_HEAD >> 20} MiB)")
            return False
        f.seek(0)
        count, bad, unusable, last_bad = 0, [], 0, None
        try:
            for pkt in pmtext.read(pmtext.lines_of(f)):
                if not pkt.complete:
                    bad.append((pkt.line, pkt.problems))
                    del bad[:-1]
                if pkt.unusable or not pkt.data:
                    unusable += 1
                    last_bad = pkt
                    continue
                analyzer.options_hidden = not pkt.options_seen
                analyzer.frame(pkt.ts, formats.RAW, pkt.data, 0, len(pkt.data), len(pkt.data))
                count += 1
                if keep_pm is not None:
                    keep_pm.append(pkt)
        except pmtext.TraceError as exc:
            result.errors.append(f"{path}: {exc}")
            return False
        except _BUGS as exc:
            result.errors.append(f"{path}: packet {count + 1} could not be decoded (internal error: "
                                 f"{type(exc).__name__}: {exc}); reading stopped there")
            return count > 0
        finally:
            analyzer.options_hidden = False
    if progress:
        progress(os.path.getsize(path))
    info = {"path": path, "format": "vos-packet_monitor", "frames": count, "interfaces": [],
            "truncated": None, "converted_with": None,
            "notes": ["timestamps carry no date: shown on 1970-01-01", pmtext.CAVEAT], "warnings": []}
    result.captures.append(info)
    result.caveats.append(f"{path}: {pmtext.CAVEAT}")
    if unusable:
        analyzer.undecoded["malformed header: packet_monitor fields unreadable"] = unusable
        result.errors.append(f"{path}: {unusable} packet(s) could not be rebuilt, the last at line {last_bad.line}: "
                             f"{'; '.join(last_bad.problems) or 'header lines missing'}")
    if bad:
        line, problems = bad[-1]
        info["truncated"] = f"packet at line {line}: {'; '.join(problems)}"
        result.errors.append(f"{path}: trace cut mid-packet: the packet at line {line} is incomplete "
                             f"({'; '.join(problems)}); {count} packets read")
    return count > 0


def _collect(an, result: Result) -> None:
    """Per file: loose fragments, untied PTBs, and what was not decoded, named."""
    from toolkit.capture.flows import addr_text
    from toolkit.capture.record import SCHEMA
    path = an.source
    an.finish()
    for (src, dst, proto), (n, dgrams, fam, maxlen, df) in an.loose_fragments.items():
        result.fragments.append({"record": "fragments", "schema": SCHEMA, "source": path, "family": fam,
                                 "src": addr_text(src) if src else "(other pairs)",
                                 "dst": addr_text(dst) if dst else "(other pairs)",
                                 "protocol": {6: "tcp", 17: "udp", 1: "icmp", 58: "icmpv6"}.get(proto, str(proto)),
                                 "fragments": n, "datagrams": dgrams, "max_ip_len": maxlen, "df_packets": df})
    for p in an.untied_ptbs:
        result.untied_ptbs.append(dict(p, source=path))
    rec = next((c for c in reversed(result.captures) if c["path"] == path), None)
    undecoded = dict(sorted(an.undecoded.items(), key=lambda kv: -kv[1]))
    reasm = {"datagrams": sum(r.completed for r in an.reasm.values()),
             "duplicates": sum(r.duplicates for r in an.reasm.values()), "given_up": dict(an.frag_discards)}
    if rec is not None:
        rec.update({"undecoded": undecoded, "not_ip": dict(sorted(an.other.items(), key=lambda kv: -kv[1])),
                    "offload_segments": an.offload_frames, "reassembly": reasm, "connections": an.flow_count})
        if an.ppp_mru:
            rec["notes"].append("PPP LCP agreed MRU " + ", ".join(str(m) for m in sorted(an.ppp_mru)))
    for why, n in undecoded.items():
        if why.startswith("link type "):
            text = f"{n} frames of {why[len('link type '):]} not decoded"
        else:
            text = f"{n} frame(s) not decoded: {why}"
        result.caveats.append(f"{path}: {text}")
    if an.offload_frames:
        cut = sum(1 for f in range(an.flow_count) if _offloaded(an, f))
        result.caveats.append(f"{path}: {an.offload_frames} segment(s) in {cut} connection(s) were captured before "
                              "segmentation (TSO/GSO/GRO on the capturing host): their wire sizes are not visible")
    for why, n in an.frag_discards.items():
        result.caveats.append(f"{path}: {n} fragmented datagram(s) not reassembled: {why}")
    if an.untied_count > len(an.untied_ptbs):
        result.caveats.append(f"{path}: {an.untied_count} ICMP errors quote no connection of the capture "
                              f"(the last {len(an.untied_ptbs)} are listed)")
    lost = sum(undecoded.values())
    if lost and an.flow_count == 0 and path in result.read_ok:
        reasons = "; ".join(f"{n} {w}" for w, n in list(undecoded.items())[:3])
        if lost >= an.frames:
            result.read_ok.remove(path)
            result.errors.append(f"{path}: none of its {an.frames} frames could be decoded ({reasons})")
        else:
            result.errors.append(f"{path}: no TCP connection found, and {lost} of {an.frames} frames could not be "
                                 f"decoded ({reasons}): read only in part")
    if rec is not None:
        rec["link_types"] = sorted({i["linktype"] for i in rec["interfaces"]})


def _offloaded(an, f: int) -> bool:
    from toolkit.capture import flows as fl
    return bool(an.S[2 * f * fl.W + fl.OFF] or an.S[(2 * f + 1) * fl.W + fl.OFF])


def analyze(paths: Sequence[str], second: Sequence[str] = (), mtu: int = 1500,
            progress: Optional[Callable[[int], None]] = None, keep_pm=None) -> Result:
    """Read every input (each file its own capture point) and return flows and findings.
    `second`: captures of the same traffic at another point, matched SYN by SYN (clamping).
    `keep_pm`: an object with append(), given every packet of packet_monitor traces."""
    result = read(paths, second, mtu, progress, keep_pm)
    for _ in result.judged():
        pass
    return result


def read(paths: Sequence[str], second: Sequence[str] = (), mtu: int = 1500,
         progress: Optional[Callable[[int], None]] = None, keep_pm=None) -> Result:
    """analyze() without the findings: iterate result.judged() to have each connection's record
    once and the findings made as they go (what `mssdiag capture` does while it writes them)."""
    from toolkit.capture.flows import Analyzer
    from toolkit.capture.record import Flows
    result = Result()
    result.mtu = mtu
    groups = []
    for group in (list(paths), list(second)):
        analyzers = []
        for path in group:
            an = Analyzer(mtu=mtu, source=path)
            if read_file(path, an, result, progress, keep_pm) and path not in result.read_ok:
                result.read_ok.append(path)
            _collect(an, result)
            analyzers.append(an)
        groups.append(Flows(analyzers))
    result.flows = Flows(groups[0].analyzers + groups[1].analyzers)
    if second:
        from toolkit.capture.clamp import match
        pairs = match(groups[0], groups[1])
        result.clamping = [rec for rec, _, _ in pairs]
        result.clamped = [(rec, a, b) for rec, a, b in pairs if rec["clamped"]]
    return result
