"""The host model: which evidence belongs to one host, in what order, and which snapshots pair.

Every command that groups evidence asks this module, so they can never disagree: parse
(its host column), diff (its pairs), triage (its hosts) and the audit (its history).
docs/hosts.md explains the rules with examples.

Identity of a snapshot, strongest first:
1. `--host NAME` on the command line: everything given belongs to that host;
2. a case directory (a `host.toml` beside the files) or a host file listing the dump;
3. the prompt's host name: its first label, case-insensitive (`[root@proxy2.example.com ~]#`
   and `proxy2$` are one host);
4. a file name that names a host and a time (`web1-0900.txt`, `web1_2026-03-03.log`,
   `web1--2026-11-22T0306Z.txt`, `web1-before.txt`);
5. otherwise the snapshot is bare. Bare snapshots of one OS format form one host when
   their counters are consistent with one host over time: every counter non-decreasing
   in some order, or (dated, or in one file) every counter reset at once -- a reboot.
   Otherwise they are separate hosts, and one line says why they were not paired.
Snapshots of different OS formats never pair.

Order within a host: by `taken_at` when every snapshot is dated; otherwise each file keeps
its own order (a log is appended in time) and files are ordered by their dates, else by
how far their counters have grown -- never by file name.
"""
from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import parsers
from parsers.evidence import Evidence
from parsers.model import ALL, NOT_COUNTS, Snapshot
from toolkit import platforms
from toolkit.hostfile import HOST_FILE, HostFacts, HostFileError
from toolkit.sniff import is_capture, read_head


WRAP32 = 2 ** 32
# A drop is a wrap only when the old value sat near the top of the counter's range and the
# new one near the bottom; anything else is a reset (a reboot).
WRAP_ZONE = 2 ** 28
# diff and triage stream a host with more snapshots than this (see Builder): memory stays
# flat for a cron log of any length; its first and last KEEP/2 are kept for reports.
KEEP = 256


def wraps(old: int, new: int, bits: int = 32) -> bool:
    top = 2 ** bits
    return top - WRAP_ZONE <= old < top and new < WRAP_ZONE


# ---------------------------------------------------------------------------- hosts


@dataclass
class Host:
    """One host and its evidence, as the model assembled it."""
    facts: HostFacts
    snapshots: List[Snapshot] = field(default_factory=list)
    deltas: list = field(default_factory=list)
    probes: list = field(default_factory=list)
    capture_findings: list = field(default_factory=list)   # findings of captures that concern this host
    evidence: List[Evidence] = field(default_factory=list)  # its socket tables and learned routes (parsers/evidence.py)
    inputs: List[str] = field(default_factory=list)
    findings: list = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    identity: str = "named"            # how its evidence was tied to it (see IDENTITIES)
    tally: object = None               # the running aggregation (toolkit/tally.py) the rules read
    snapshot_count: int = 0            # all its snapshots and pairs, kept or not (see Builder)
    delta_count: int = 0
    stream: object = None              # while streamed: its Stream
    stack: object = None               # its devices, routes, tunnels and clamps as paths (toolkit/stack.py)
    stack_peers: list = field(default_factory=list)  # [(tunnel device, the host at its far end)]

    @property
    def platform(self):
        return platforms.get(self.facts.os)

    def path_mtu(self) -> Tuple[int, str]:
        """The best path MTU known and where it came from."""
        for p in self.probes:
            if p.pmtu:
                return p.pmtu, f"probe of {p.target}, {p.pmtu_method}"
        if self.facts.path_mtu:
            return self.facts.path_mtu, "host file"
        if self.facts.mtu:
            return self.facts.mtu, "interface MTU from the host file; path not probed"
        return 1500, "Ethernet assumed; path not probed"

    def assumed_path_mtu(self) -> bool:
        return not any(p.pmtu for p in self.probes) and not self.facts.path_mtu

    def add_input(self, name: str) -> None:
        if name not in self.inputs:
            self.inputs.append(name)

    def to_dict(self) -> dict:
        pmtu, pmtu_from = self.path_mtu()
        return {
            "host": self.facts.name,
            "identity": self.identity,
            "facts": self.facts.to_dict(),
            "path_mtu": pmtu, "path_mtu_from": pmtu_from,
            "inputs": self.inputs,
            "snapshots": [{"source": s.source, "index": s.index, "line": s.line, "os": s.os, "format": s.format,
                           "taken_at": s.taken_at, "forwarding": s.forwarding, "ipv4": s.ipv4, "ipv6": s.ipv6,
                           "warnings": s.warnings} for s in self.snapshots],
            "deltas": [d.to_dict() for d in self.deltas],
            "snapshot_count": self.snapshot_count, "delta_count": self.delta_count,
            "probes": [p.to_dict() for p in self.probes],
            "captures": [f.to_dict() for f in self.capture_findings],
            "evidence": [e.to_dict() for e in self.evidence],
            "stack": self.stack.to_dict() if self.stack else None,
            "findings": [f.to_dict() for f in self.findings],
            "errors": self.errors,
        }


IDENTITIES = {
    "--host": "named on the command line (--host)",
    "case": "a case directory or host file names it",
    "prompt": "the shell prompt in the dump names it",
    "file name": "the file name names it (host name and time)",
    "counters": "bare dumps whose counters grow together (one host over time)",
    "file": "one bare file",
    "target": "the address a probe or a capture is about",
}


# ---------------------------------------------------------------------------- inputs


@dataclass
class Input:
    """One file to read: a dump or a saved probe, and the case it belongs to; and what the
    walk learnt of it on the way (readers use it instead of asking the file again)."""
    path: str
    kind: str                            # dump | probe | capture
    case: Optional[HostFacts] = None
    size: int = -1                       # bytes, as the walk's stat found them; -1: not known
    head: Optional[bytes] = None         # its first bytes (HEAD at most) as the walk read them; None: not read


HEAD = 256               # bytes of a dump's head an Input keeps (inputs._look reads a quarter of them)


def _regular(path: str) -> Optional[str]:
    """None when `path` is a regular file we may read, else why not (one short phrase)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "broken symbolic link" if os.path.islink(path) else "no such file or directory"
    except OSError as exc:
        if exc.errno == 40:     # ELOOP
            return "symbolic link loop"
        return f"cannot read: {exc.strerror or exc}"
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        kind = ("FIFO" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode)
                else "device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "special file")
        return f"not a regular file ({kind}); skipped"
    return None


CAPTURE_EXTENSIONS = (".pcap", ".pcapng", ".cap", ".snoop", ".trc", ".enc", ".erf", ".ntar")


def _kind(name: str) -> Optional[str]:
    if name.startswith(".") or name.endswith(".md"):
        return None
    if name.endswith(".toml"):
        return "hostfile"
    if name.endswith(".json"):
        return "probe"
    if name.lower().endswith(CAPTURE_EXTENSIONS):
        return "capture"
    return "dump"


def _sniffed(path: str, kind: str) -> Tuple[str, Optional[bytes]]:
    """A file named like a dump may be a capture: its first bytes say (pcap magic, or a VOS
    packet_monitor text trace). A `.json` file may be `nstat -j` output rather than saved
    probe results: a parser that recognises it says so. With the kind, the dump's first
    HEAD bytes (None when not read)."""
    if kind == "probe" and path != "-":
        try:
            head = read_head(path).decode("utf-8", "replace")
        except OSError:
            return kind, None
        if '"target"' not in head:
            import parsers
            if parsers.detect(head):
                return "dump", None
        return kind, None
    if kind != "dump" or path == "-":
        return kind, None
    try:
        head = read_head(path)
    except OSError:
        return kind, None                    # reading it will say why
    return ("capture", None) if is_capture(head) else (kind, head[:HEAD])


def walk(paths: Sequence[str], error: Callable[[str], None], failed: Optional[List[str]] = None,
         hosts_file: Optional[str] = None) -> Tuple[List[Input], List[HostFacts]]:
    """Every file to read under the given paths, and the host facts found on the way.

    `-` is stdin (a dump). A directory holding a host.toml is a case directory: its files
    are that host's (subdirectories too). Directories are walked without recursion and
    without following directory links; only regular files are read; every path that
    cannot be used gets one line on `error` (and goes to `failed`).
    """
    facts: List[HostFacts] = []
    return list(scan(paths, error, failed, hosts_file, facts)), facts


def scan(paths: Sequence[str], error: Callable[[str], None], failed: Optional[List[str]] = None,
         hosts_file: Optional[str] = None, facts: Optional[List[HostFacts]] = None) -> Iterator[Input]:
    """walk's inputs one at a time, as it finds them (a reader may start on the first
    before the last is found); the host facts found go to `facts`, error lines to `error`
    as they are found. A plain file's Input carries its size and head (see Input)."""
    from toolkit import hostfile
    failed = failed if failed is not None else []
    facts = facts if facts is not None else []

    def bad(path: str, why: str) -> None:
        error(f"{path}: {why}")
        failed.append(path)

    def load(path: str) -> List[HostFacts]:
        try:
            found = hostfile.load(path)
        except HostFileError as exc:
            bad(path, str(exc).removeprefix(f"{path}: "))
            return []
        facts.extend(found)
        return found

    def claim(found: List[HostFacts], seen: set) -> Iterator[Input]:
        for f in found:
            for p in f.dumps:
                if p not in seen:
                    seen.add(p)
                    kind, head = _sniffed(p, _kind(os.path.basename(p)) or "dump")
                    yield Input(p, kind, f, head=head)
            for p in f.probes:
                if p not in seen:
                    seen.add(p)
                    yield Input(p, _sniffed(p, "probe")[0], f)

    seen: set = set()
    if hosts_file:
        yield from claim(load(hosts_file), seen)
    for path in paths:
        if path == "-":
            yield Input("-", "dump")
            continue
        why = _regular(path)
        if why:
            bad(path, why)
            continue
        if not os.path.isdir(path):
            kind = _kind(os.path.basename(path)) or "dump"
            if kind == "hostfile":
                yield from claim(load(path), seen)
            elif path not in seen:
                seen.add(path)
                kind, head = _sniffed(path, kind)
                yield Input(path, kind, head=head)
            continue
        found_any = False
        stack = [path]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as found:
                    entries = sorted(found, key=_name)
            except OSError as exc:
                bad(folder, f"cannot read: {exc.strerror or exc}")
                continue
            if any(e.name == HOST_FILE for e in entries):
                found_any = True
                yield from claim(load(os.path.join(folder, HOST_FILE)), seen)
                continue
            subdirs = []
            for entry in entries:
                name = entry.name
                full = entry.path
                kind = _kind(name)
                if kind is None:
                    continue
                size = _plain_size(entry)       # one stat for a plain file; the checks below for the rest
                if size < 0:
                    if os.path.islink(full) and os.path.isdir(full):
                        continue                       # directory links are not followed
                    why = _regular(full)
                    if why:
                        bad(full, why)
                        continue
                    if os.path.isdir(full):
                        subdirs.append(full)
                        continue
                found_any = True
                if kind == "hostfile":
                    yield from claim(load(full), seen)
                elif full not in seen:
                    seen.add(full)
                    kind, head = _sniffed(full, kind)
                    yield Input(full, kind, None, size, head)
            stack.extend(reversed(subdirs))
        if not found_any:
            bad(path, "directory holds no files")


def _name(entry: os.DirEntry) -> str:
    return entry.name


def _plain_size(entry: os.DirEntry) -> int:
    """The size of a regular file that is no symbolic link (what walk's link, _regular and
    directory checks find true of it), by the directory's own file type and one stat; -1
    for anything else."""
    try:
        if entry.is_symlink():
            return -1
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return -1
    return st.st_size if stat.S_ISREG(st.st_mode) else -1


# ---------------------------------------------------------------------------- identity

_ADDRESS = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$")
# A file stem naming a host and a time: web1-0900, web1_2026-03-03, web1--2026-11-22T03:06Z, web1-before
_STAMPED = re.compile(
    r"^(?P<host>[A-Za-z][A-Za-z0-9.-]*?[A-Za-z0-9])(?:--|[-_.])(?P<when>"
    r"\d{8}(?:[T_-]?\d{4,6}Z?)?"
    r"|\d{4}-\d{2}-\d{2}(?:[T_ -]?\d{2}[:-]?\d{2}(?:[:-]?\d{2})?Z?)?"
    r"|\d{2}[:h-]?\d{2}(?:[:-]?\d{2})?"
    r"|before|after|pre|post|old|new|start|end|first|second|then|now)$", re.I)
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}")
# Stems that name what the file holds, not a host.
_GENERIC = {"netstat", "netstats", "nstat", "dump", "dumps", "stats", "statistics", "output", "out", "log", "logs",
            "capture", "snapshot", "snap", "case", "ticket", "data", "before", "after", "host", "server", "file",
            "snmp", "proc", "counters", "ip", "tcp", "result", "results", "probe", "cron", "audit", "collect",
            "netstat-s", "netstat_s", "ipstats", "report"}


def short_name(name: str) -> str:
    """The host part of a prompt name: first label of an FQDN, an address kept whole."""
    name = name.strip().rstrip(".")
    if _ADDRESS.match(name):
        return name
    return name.split(".")[0] or name


def key(name: str) -> str:
    return short_name(name).lower()


@functools.lru_cache(maxsize=4096)       # asked for every snapshot of a file: once per file
def stem_host(path: str) -> Optional[str]:
    """The host a file name names together with a time (`web1-0900.txt` -> web1), else None."""
    if path == "-":
        return None
    stem = os.path.basename(path)
    for _ in range(2):                      # web1-0900.txt, web1-0900.log.gz
        root, ext = os.path.splitext(stem)
        if ext and _EXTENSION.fullmatch(ext):
            stem = root
    m = _STAMPED.match(stem)
    if not m or m["host"].lower() in _GENERIC:
        return None
    return short_name(m["host"])


def identify(snap: Snapshot, case: Optional[HostFacts] = None,
             forced: Optional[str] = None) -> Tuple[Optional[str], str]:
    """(host name, how) for a snapshot; (None, "bare") when nothing names it."""
    if forced:
        return forced, "--host"
    if case is not None:
        return case.name, "case"
    if snap.prompt_host:
        return short_name(snap.prompt_host), "prompt"
    named = stem_host(snap.source)
    if named:
        return named, "file name"
    return None, "bare"


# ---------------------------------------------------------------------------- order and consistency


def when(snap: Snapshot) -> Optional[datetime]:
    """taken_at as a comparable time (zoned ones in UTC; unzoned ones taken as UTC)."""
    if not snap.taken_at:
        return None
    try:
        t = datetime.fromisoformat(snap.taken_at)
    except ValueError:
        return None
    return t.astimezone(timezone.utc).replace(tzinfo=None) if t.tzinfo else t


def growth(snap: Snapshot) -> int:
    """How far a host's counters have grown: the order of undated snapshots."""
    total = 0
    for fam in (snap.ipv4, snap.ipv6):
        for v in (fam or {}).values():
            if isinstance(v, int):
                total += v
    return total


def _sequences(snaps: List[Snapshot]) -> List[List[Snapshot]]:
    """Snapshots by source file, in the order they were read."""
    by: Dict[str, List[Snapshot]] = {}
    for s in snaps:
        by.setdefault(s.source, []).append(s)
    return list(by.values())


def order(snaps: List[Snapshot]) -> List[Snapshot]:
    """One host's snapshots in time order (see the module comment)."""
    if len(snaps) < 2:
        return list(snaps)
    if all(when(s) for s in snaps):
        return sorted(snaps, key=when)      # stable: equal times keep their order
    seqs = []
    for seq in _sequences(snaps):
        seqs.append(sorted(seq, key=when) if all(when(s) for s in seq) else seq)
    if len(seqs) == 1:
        return seqs[0]
    if all(when(seq[0]) for seq in seqs):
        seqs.sort(key=lambda seq: when(seq[0]))
    else:
        seqs.sort(key=lambda seq: growth(seq[0]))
    return [s for seq in seqs for s in seq]


@dataclass
class Verdict:
    """Whether snapshot b can follow snapshot a on one host."""
    ok: bool
    kind: str = ""                 # growth | reset
    compared: int = 0              # counters known in both
    distance: int = 0              # total increase: the closest chain wins
    why: str = ""


def _fmt(v: int) -> str:
    return f"{v:,}"


def follows(a: Snapshot, b: Snapshot, allow_reset: bool = True) -> Verdict:
    """Can b be a later snapshot of a's host? Every counter known in both grows (a 32-bit
    counter may wrap), or every counter that was not zero went down at once (a reboot)."""
    if a.os != b.os:
        return Verdict(False, why=f"different formats ({a.os}, {b.os})")
    ups: List[Tuple[str, int, int]] = []
    downs: List[Tuple[str, int, int]] = []
    compared = distance = 0
    nonzero = 0
    for fam in ("ipv4", "ipv6"):
        x, y = getattr(a, fam), getattr(b, fam)
        if not x or not y:
            continue
        for name in ALL:
            u, v = x.get(name), y.get(name)
            if not isinstance(u, int) or not isinstance(v, int):
                continue
            compared += 1
            nonzero += u > 0
            if v > u:
                ups.append((f"{fam} {name}", u, v))
                distance += v - u
            elif v < u:
                bits = getattr(parsers.REGISTRY.get(a.os), "META", None)
                bits = bits.counter_bits if bits else 32
                if wraps(u, v, bits):
                    distance += v + 2 ** bits - u
                else:
                    downs.append((f"{fam} {name}", u, v))
    if not compared:
        return Verdict(False, why="no counter in common to compare")
    if not downs:
        fell = _fell(a, b)
        if fell is not None:
            return Verdict(False, compared=compared, why=fell)
        return Verdict(True, "growth", compared, distance)
    if allow_reset and not ups and len(downs) == nonzero:
        return Verdict(True, "reset", compared, 0)
    d = downs[0]
    why = f"{d[0]} went down ({_fmt(d[1])} -> {_fmt(d[2])})"
    if ups:
        u = ups[0]
        why += f" while {u[0]} went up ({_fmt(u[1])} -> {_fmt(u[2])})"
    return Verdict(False, compared=compared, why=why)


def _counts(snap: Snapshot, gauges) -> Dict[object, Tuple[str, int]]:
    """Every count of a snapshot by its standard name (one MIB object whatever section a
    release prints it under), else its section and label: (as printed, value)."""
    return {c["name"] or (c["section"], c["label"]): (f"{c['section']}: {c['label']}", c["value"])
            for c in snap.counters
            if c["value"] is not None and c["name"] not in NOT_COUNTS and c["label"].lower() not in gauges}


def _fell(a: Snapshot, b: Snapshot) -> Optional[str]:
    """Why b cannot follow a by the rest of their counters (every counter both print, gauges
    aside: two machines' error counters fall where their traffic counters happen to rise),
    or None."""
    if not a.counters or not b.counters:
        return None
    meta = getattr(parsers.REGISTRY.get(a.os), "META", None)
    gauges = meta.gauges if meta else ()
    bits = meta.counter_bits if meta else 32
    x, y = _counts(a, gauges), _counts(b, gauges)
    for k, (shown, u) in x.items():
        v = y.get(k, (None, None))[1]
        if v is not None and v < u and not wraps(u, v, bits):
            return f"{shown} went down ({_fmt(u)} -> {_fmt(v)})"
    return None


def _same_shape(a: Snapshot, b: Snapshot) -> bool:
    """One netstat prints the same lines every time (zero-omitting ones only add lines)."""
    ra, rb = set(a.raw), set(b.raw)
    return a.format == b.format and (ra <= rb or rb <= ra)


def group_bare(snaps: List[Snapshot], note: Callable[[str], None]) -> List[Tuple[List[Snapshot], str, str]]:
    """Bare snapshots into hosts: [(snapshots in order, identity, name)], one note per OS
    format whose snapshots could not all be paired, saying why."""
    out: List[Tuple[List[Snapshot], str, str]] = []
    by_os: Dict[str, List[Snapshot]] = {}
    for s in snaps:
        by_os.setdefault(s.os, []).append(s)
    for os_name, items in by_os.items():
        reasons: List[str] = []
        units: List[List[Snapshot]] = []
        for seq in _sequences(items):
            dated = all(when(s) for s in seq)
            if dated:
                seq = sorted(seq, key=when)
            unit = [seq[0]]
            for a, b in zip(seq, seq[1:]):
                v = follows(a, b)
                if v.ok or not v.compared:
                    unit.append(b)          # one file: same host unless the counters say otherwise
                else:
                    reasons.append(f"{_where(a)} -> {_where(b)}: {v.why}")
                    units.append(unit)
                    unit = [b]
            units.append(unit)
        if len(units) > 1:
            if all(when(u[0]) for u in units):
                units.sort(key=lambda u: when(u[0]))
            else:
                units.sort(key=lambda u: growth(u[0]))
        chains: List[List[Snapshot]] = []
        for unit in units:
            best, best_d = None, None
            dated = all(when(s) for s in unit)
            for chain in chains:
                last = chain[-1]
                v = follows(last, unit[0], allow_reset=dated and bool(when(last)))
                if not (v.ok and _same_shape(last, unit[0])):
                    if v.why or not _same_shape(last, unit[0]):
                        reasons.append(f"{_where(last)} -> {_where(unit[0])}: "
                                       + (v.why or "they print different lines (another netstat)"))
                    continue
                if best_d is None or v.distance < best_d:
                    best, best_d = chain, v.distance
            if best is None:
                chains.append(list(unit))
            else:
                best.extend(unit)
        labels = [_label(c) for c in chains]
        names = [label + (f" (line {c[0].line})" if labels.count(label) > 1 else "")   # two hosts in one file
                 for label, c in zip(labels, chains)]
        for i, chain in enumerate(chains):
            out.append((chain, "counters" if len({s.source for s in chain}) > 1 else "file", names[i]))
        if len(chains) > 1:
            sizes = ", ".join(f"{n} ({len(c)})" for n, c in zip(names[:6], chains)) + (", ..." if len(chains) > 6 else "")
            note(f"{len(chains)} {os_name} hosts without a host name: {sizes}; not one host because "
                 + (reasons[0] if reasons else "their counters do not grow together")
                 + "; name them with --host NAME, a host.toml, or file names like web1-0900.txt to pair them")
    return out


def _where(s: Snapshot) -> str:
    return f"{os.path.basename(s.source)}" + (f" line {s.line}" if s.line > 1 else "")


def _label(chain: List[Snapshot]) -> str:
    stems = []
    for s in chain:
        stem = "stdin" if s.source == "-" else os.path.splitext(os.path.basename(s.source))[0]
        if stem not in stems:
            stems.append(stem)
    return "+".join(stems[:3]) + (f"+{len(stems) - 3} more" if len(stems) > 3 else "")


# ---------------------------------------------------------------------------- assembly


def pairs(snaps: List[Snapshot]) -> Iterator[Tuple[Snapshot, Snapshot]]:
    """Consecutive snapshots of one format: what diff pairs (formats never pair)."""
    last: Dict[str, Snapshot] = {}
    for s in snaps:
        if s.os in last:
            yield last[s.os], s
        last[s.os] = s


class Builder:
    """Hosts assembled from evidence fed one snapshot at a time (what `build` does whole).

    `keep=None` holds every snapshot of every host (the audit stores them all). With
    `keep=N`, a host with more than N snapshots is *streamed*: the ones held so far are put
    in order and folded, and every later one is paired with the host's last snapshot of
    its format as it arrives, folded into the host's Tally and dropped, so memory does not
    grow with the number of snapshots. The host then keeps its first N/2 and last N/2
    snapshots and deltas (for reports), and counts the rest. A streamed host's later
    snapshots are taken in the order read (a cron log is appended in time); one that is
    dated before the last says so in one line, and its pair gets a `clock` event. A bare
    file (no host name) is streamed when its first N+1 snapshots are one host by their
    counters; it then stays one host (a counter going down is a `reset` event of a pair).
    `add` returns the deltas of streamed hosts as they are made, so `diff` prints them
    without holding them.
    """

    def __init__(self, facts: Sequence[HostFacts] = (), forced: Optional[str] = None,
                 note: Callable[[str], None] = lambda m: None, keep: Optional[int] = None, paired: bool = True):
        self.forced, self.note, self.keep, self.paired = forced, note, keep, paired
        self.hosts: Dict[str, Host] = {}
        self.bare: Dict[Tuple[str, str], List[Snapshot]] = {}     # (os, source) -> snapshots, held
        self.streams: Dict[Tuple[str, str], Host] = {}           # (os, source) -> the host it streams into
        self.tried: set = set()
        self.bare_evidence: List[Evidence] = []
        for f in facts:
            self.host(f.name, "case", f)

    def host(self, name: str, how: str, known: Optional[HostFacts] = None) -> Host:
        # A name a host file or a fleet index gives is the host exactly (`Web9` and `web9` are
        # two inventory hosts); names read from prompts, file names and addresses are DNS
        # names, one host whatever their case.
        k = key(name) if how in ("prompt", "file name") else name if how == "case" else name.lower()
        h = self.hosts.get(k)
        if h is None:
            h = self.hosts[k] = Host(known or HostFacts(name), identity=how)
        return h

    def add(self, snap: Snapshot, case: Optional[HostFacts] = None) -> list:
        """A snapshot (or a socket table / learned routes: add_evidence) into its host;
        returns the deltas of streamed hosts made by it."""
        if snap.__class__ is Evidence:
            self.add_evidence(snap, case)
            return []
        name, how = identify(snap, case, self.forced)
        if name is None:
            where = (snap.os, snap.source)
            h = self.streams.get(where)
            if h is not None:
                last = h.stream.last.get(snap.os)
                if last is not None and not h.stream.noted_split:
                    v = follows(last, snap)
                    if not v.ok and v.compared:
                        h.stream.noted_split = True
                        self.note(f"{h.facts.name}: {_where(last)} -> {_where(snap)}: {v.why}; kept as one host "
                                  f"(a bare file of more than {self.keep} snapshots is one host; name it with "
                                  "--host NAME to be sure)")
                snap.host = h.facts.name
                return h.stream.push(h, snap, self.note)
            seq = self.bare.setdefault(where, [])
            seq.append(snap)
            if self.keep is not None and len(seq) > self.keep and where not in self.tried:
                self.tried.add(where)
                return self._promote_bare(where, seq)
            return []
        h = self.host(name, how, case)
        snap.host = h.facts.name
        h.add_input(snap.source)
        if h.stream is not None:
            return h.stream.push(h, snap, self.note)
        h.snapshots.append(snap)
        if self.keep is not None and len(h.snapshots) > self.keep:
            return self._stream(h, order(h.snapshots))
        return []

    def add_evidence(self, ev: Evidence, case: Optional[HostFacts] = None) -> None:
        """Evidence ties to a host as a dump does (identify); bare, it joins the host of the
        dumps read from the same text, else a host named after its file (finish)."""
        name, how = identify(ev, case, self.forced)
        if name is None:
            self.bare_evidence.append(ev)
            return
        h = self.host(name, how, case)
        ev.host = h.facts.name
        h.evidence.append(ev)
        h.add_input(ev.source)

    def _stream(self, h: Host, ordered: List[Snapshot]) -> list:
        h.stream = Stream(self.keep)
        h.snapshots = []
        out: list = []
        for s in ordered:
            out += h.stream.push(h, s, self.note)
        return out

    def _promote_bare(self, where: Tuple[str, str], seq: List[Snapshot]) -> list:
        """A long bare file streams as one host when its counters say it is one."""
        chains = group_bare(seq, lambda m: None)
        if len(chains) != 1:
            return []                    # not one host: held whole, grouped at the end
        chain, how, name = chains[0]
        while name.lower() in self.hosts:
            name += "'"
        h = self.host(name, how)
        h.add_input(where[1])
        for s in chain:
            s.host = name
        del self.bare[where]
        self.streams[where] = h
        return self._stream(h, chain)

    def finish(self, probes: Iterable[Tuple[object, Optional[HostFacts], str]] = (),
               captures: Iterable[Tuple[object, Optional[HostFacts], str]] = ()) -> List[Host]:
        """Every host, in order, paired and tallied; probes and captures attached."""
        from toolkit import diff
        from toolkit.tally import of
        hosts, forced = self.hosts, self.forced
        held = [s for seq in self.bare.values() for s in seq]
        for chain, how, name in group_bare(held, self.note):
            if name.lower() in hosts:
                name += f" (line {chain[0].line})"     # another format pasted into the same file
            while name.lower() in hosts:
                name += "'"
            h = self.host(name, how)
            for s in chain:
                s.host = name
                h.snapshots.append(s)
                h.add_input(s.source)
        for ev in self.bare_evidence:
            # with the dumps of its own text, else a host of its own named after the file
            h = next((h for h in hosts.values() if ev.source in h.inputs), None)
            if h is None:
                name = _label([ev])
                h = self.host(name, "file")
            ev.host = h.facts.name
            h.evidence.append(ev)
            h.add_input(ev.source)
        listing = {t: h for h in hosts.values() for t in h.facts.targets}   # address -> the host listing it

        def owner(address: str) -> Host:
            h = listing.get(address)
            return h if h is not None else self.host(address, "target")

        for result, case, source in probes:
            if forced:
                h = self.host(forced, "--host")
            elif case is not None:
                h = self.host(case.name, "case", case)
            else:
                h = owner(result.target)
            h.probes.append(result)
            h.add_input(source)
        for finding, case, source in captures:
            # A capture in a case directory was taken for that host; a loose one concerns the
            # address the finding is about (data["host"]).
            address = finding.data.get("host") or "capture"
            if forced:
                h = self.host(forced, "--host")
            elif case is not None:
                h = self.host(case.name, "case", case)
            else:
                h = owner(address)
            h.capture_findings.append(finding)
            h.add_input(source)
        for h in hosts.values():
            if h.stream is not None:
                h.stream.close(h)
                continue
            h.snapshots = order(h.snapshots)
            h.snapshot_count = len(h.snapshots)
            if not self.paired:
                continue                     # the caller pairs them itself (the audit, in its store)
            h.deltas = [diff.pair(a, b, parsers.REGISTRY.get(b.os), h.facts.name) for a, b in pairs(h.snapshots)]
            h.tally = of(h.snapshots, h.deltas)
            h.delta_count = len(h.deltas)
        from toolkit import stack
        for h in hosts.values():
            h.stack = stack.of(h.evidence)
        stack.pair_endpoints(list(hosts.values()))     # the far end of each tunnel among the hosts
        return list(hosts.values())


class Stream:
    """A streamed host's state: its last snapshot per format (to pair the next one), and the
    first and last `keep // 2` snapshots and deltas it keeps for reports."""

    def __init__(self, keep: int):
        from collections import deque
        from toolkit.tally import Tally
        self.half = max(1, keep // 2)
        self.last: Dict[str, Snapshot] = {}
        self.tally = Tally()
        self.head: List[Snapshot] = []
        self.tail = deque(maxlen=self.half)
        self.head_d: list = []
        self.tail_d = deque(maxlen=self.half)
        self.snapshots = self.deltas = 0
        self.latest: Optional[datetime] = None
        self.noted_clock = self.noted_split = False

    def push(self, h: Host, s: Snapshot, note: Callable[[str], None]) -> list:
        from toolkit import diff
        self.tally.snapshot(s)
        self.snapshots += 1
        (self.head if len(self.head) < self.half else self.tail).append(s)
        t = when(s)
        if t is not None:
            if self.latest is not None and t < self.latest and not self.noted_clock:
                self.noted_clock = True
                note(f"{h.facts.name}: {_where(s)} is dated before an earlier snapshot of this host: "
                     f"taken in the order read (a host of more than {2 * self.half} snapshots is paired as it is read)")
            self.latest = t if self.latest is None else max(t, self.latest)
        a = self.last.get(s.os)
        self.last[s.os] = s
        if a is None:
            return []
        d = diff.pair(a, s, parsers.REGISTRY.get(s.os), h.facts.name)
        self.tally.delta(d)
        self.deltas += 1
        (self.head_d if len(self.head_d) < self.half else self.tail_d).append(d)
        return [d]

    def close(self, h: Host) -> None:
        h.snapshots = self.head + list(self.tail)
        h.deltas = self.head_d + list(self.tail_d)
        h.tally = self.tally
        h.snapshot_count, h.delta_count = self.snapshots, self.deltas


def build(snapshots: Iterable[Tuple[Snapshot, Optional[HostFacts]]], facts: Sequence[HostFacts] = (),
          probes: Iterable[Tuple[object, Optional[HostFacts], str]] = (), forced: Optional[str] = None,
          note: Callable[[str], None] = lambda m: None,
          captures: Iterable[Tuple[object, Optional[HostFacts], str]] = (), keep: Optional[int] = None,
          paired: bool = True) -> List[Host]:
    """Hosts from evidence: (snapshot, its case facts) and (probe result, its case facts,
    where it came from), plus the hosts host files name. Every snapshot gets its host's
    name in `host`. `keep`: see Builder (None holds everything); `paired=False` leaves
    `deltas` empty (the tally is then made when a rule first asks)."""
    b = Builder(facts, forced, note, keep, paired)
    for snap, case in snapshots:
        b.add(snap, case)
    return b.finish(probes, captures)


def deltas(snapshots: Iterable[Snapshot], forced: Optional[str] = None) -> list:
    """Every pair's Delta for snapshots as the host model groups them (what `diff` prints)."""
    return [d for h in build(((s, None) for s in snapshots), forced=forced) for d in h.deltas]
