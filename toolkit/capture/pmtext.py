"""VOS `packet_monitor` text traces (Stratus, "Tuning your MSS" Figure 1; OpenVOS 17.1 adds Ether lines).

    19:20:16.784 Rcvd IP Ver/HL 45, ToS 0, Len 34, ID 1449, Flg/Frg 4000, TTL 3
    +e, Prtl 6
    Cksum 41b7, Src a4984fc8, Dst a4984dcb
    TCP from 164.152.79.200.2315 to 164.152.77.203.telnet
    seq 800916ce, ack n.a., window ebc0, 12. data bytes, flags Syn.
    X/Off 08, Flags 02, Cksum fcf1, Urg-> 0000
    offset 0 . . . 4 . . . 8 . . . C . . . 0...4... 8...C...
    0 2 4 5 b4 1 3 3 2 1 1 4 2 <<<Z<<<< <<<<

A line starting with `+` continues the one before it (the 80-column wrap). Header
fields are hex; a trailing `.` marks decimal (`12. data bytes`); the 17.1 form prints
seq, ack, window and the data-byte count in decimal without the dot, which the IP
length tells apart. "data bytes" counts everything after the 20-byte TCP header, so
the hex dump holds the TCP options (bytes without leading zeros) and then the data.
Timestamps carry no date: packets are placed on 1970-01-01 (a day is added whenever
the clock goes back, i.e. past midnight).

Each packet is rebuilt as IPv4 + TCP bytes from the printed fields, so the same
analysis as for a pcap applies, and `--export-pcap` writes them out for Wireshark.
packet_monitor runs inside STCP and sees packets after reassembly: incoming fragments
never appear in its traces (Stratus, "Tuning your MSS"), whatever the network did.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Tuple

from toolkit.sniff import packet_monitor_text as looks_like

STAMP = re.compile(r"^\s*(\d{1,2}):(\d\d):(\d\d)(?:\.(\d+))?\s+(Rcvd|Xmit)\b(.*)$")
IP_LINE = re.compile(r"Ver/HL\s+([0-9a-f]+),\s*ToS\s+([0-9a-f]+\.?),\s*Len\s+([0-9a-f]+\.?),\s*ID\s+([0-9a-f]+\.?),"
               r"\s*Flg/Frg\s+([0-9a-f]+),\s*TTL\s+([0-9a-f]+\.?),\s*Prtl\s+([0-9a-f]+\.?)", re.I)
ADDR_LINE = re.compile(r"Cksum\s+([0-9a-f]+),\s*Src\s+([0-9a-f]{1,8}),\s*Dst\s+([0-9a-f]{1,8})", re.I)
TCP_LINE = re.compile(r"^\s*TCP\s+from\s+(\S+)\s+to\s+(\S+)", re.I)
SEQ_LINE = re.compile(r"seq\s+(\S+?),\s*ack\s+(\S+?),\s*window\s+(\S+?),\s*(\S+?)\s+data\s+bytes,\s*flags\b", re.I)
XOFF_LINE = re.compile(r"X/Off\s+([0-9a-f]+),\s*Flags\s+([0-9a-f]+),\s*Cksum\s+([0-9a-f]+),\s*Urg->\s*([0-9a-f]+)", re.I)
DUMP_HEAD = re.compile(r"^\s*offset\s+0\b", re.I)
DUMP_LINE = re.compile(r"^\s*([0-9a-f]+)((?:\s+[0-9a-f]{1,2}){1,16})(?=\s|$)", re.I)
SERVICES = {"ftp": 21, "ssh": 22, "telnet": 23, "smtp": 25, "domain": 53, "http": 80, "www": 80, "pop3": 110,
            "sunrpc": 111, "nntp": 119, "ntp": 123, "imap": 143, "snmp": 161, "bgp": 179, "ldap": 389,
            "https": 443, "login": 513, "shell": 514, "printer": 515, "ftp-data": 20, "finger": 79}
CAVEAT = ("packet_monitor sees packets after STCP reassembled them: incoming fragments never appear "
          "in this trace (Stratus, \"Tuning your MSS\"), so fragment counts here cover outgoing packets only")


MAX_LINE = 4096        # a logical line longer than this is not packet_monitor's
MAX_BLOCK = 8192       # lines of one packet (a 64 KiB packet's hex dump is 4,096)
FRACTION = 9           # digits of a time fraction that matter (nanoseconds)


class TraceError(Exception):
    pass


@dataclass
class PmPacket:
    ts: float
    direction: str          # Rcvd | Xmit
    line: int
    data: bytes             # rebuilt IPv4 packet
    complete: bool = True
    problems: List[str] = field(default_factory=list)
    options_seen: bool = True     # False: no hex dump (or one cut short), the TCP options are not known
    unusable: bool = False        # a field that cannot be read: the packet is not rebuilt


def lines_of(f, limit: int = MAX_LINE) -> Iterator[str]:
    """A text file's lines, each cut at `limit` characters, read in blocks: a file without
    line breaks is never held whole."""
    rest = ""
    while True:
        block = f.read(1 << 20)
        if not block:
            break
        parts = (rest + block).split("\n")
        rest = parts.pop()
        for line in parts:
            yield line[:limit]
        if len(rest) > limit:
            rest = rest[:limit]
            while True:          # skip the rest of an endless line
                block = f.read(1 << 20)
                cut = block.find("\n")
                if not block or cut >= 0:
                    yield rest
                    rest = block[cut + 1:] if block else ""
                    break
            if rest:
                parts = rest.split("\n")
                rest = parts.pop()
                for line in parts:
                    yield line[:limit]
    if rest:
        yield rest[:limit]


def _join(lines: Iterator[str]) -> Iterator[Tuple[int, str]]:
    """Logical lines: `+` continuation lines glued to the line before them."""
    held, held_no = None, 0
    for no, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if line.startswith("+") and held is not None:
            if len(held) < MAX_LINE:
                held += line[1:MAX_LINE]
            continue
        if held is not None:
            yield held_no, held
        held, held_no = line, no
    if held is not None:
        yield held_no, held


class Unreadable(ValueError):
    """A printed field that is not a number, or out of its field's range."""


def _num(tok: str, decimal: bool, limit: int = 0xFFFFFFFF, what: str = "field") -> int:
    tok = tok.strip()
    try:
        if len(tok) > 16:
            raise ValueError
        if tok.endswith("."):
            v = int(tok[:-1], 10)
        elif decimal and tok.isdigit():
            v = int(tok, 10)
        else:
            v = int(tok, 16)
    except ValueError:
        raise Unreadable(f"{what} {tok[:20]!r} is not a number") from None
    if not 0 <= v <= limit:
        raise Unreadable(f"{what} {tok[:20]} is out of range")
    return v


def _seconds(m) -> float:
    frac = m.group(4) or "0"
    h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3))
    return h * 3600 + mi * 60 + s + int(frac[:FRACTION]) / 10 ** len(frac[:FRACTION])


def _port(text: str) -> int:
    """'164.152.79.200.2315' -> 2315; '164.152.77.203.telnet' -> 23."""
    name = text.rsplit(".", 1)[-1]
    if name.isdigit():
        if len(name) > 5 or int(name) > 0xFFFF:
            raise Unreadable(f"port {name[:20]} is out of range")
        return int(name)
    if name.lower() in SERVICES:
        return SERVICES[name.lower()]
    import socket
    try:
        return socket.getservbyname(name.lower()[:64], "tcp")
    except (OSError, UnicodeError, ValueError):
        raise Unreadable(f"unknown service name {name[:40]!r}") from None


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def read(lines: Iterator[str]) -> Iterator[PmPacket]:
    """Packets of a trace, in order. An incomplete packet is yielded with complete=False
    and its problems named (a trace cut mid-packet)."""
    block: List[Tuple[int, str]] = []
    day, last, dumps = 0, None, False
    for no, line in _join(lines):
        m = STAMP.match(line)
        if m:
            if block:
                pkt = _packet(block, day)
                dumps = dumps or not any(x.startswith("no hex dump") for x in pkt.problems)
                yield pkt
            t = _seconds(m)
            if last is not None and t < last - 43200:
                day += 1
            last = t
            block = [(no, line)]
        elif block and len(block) < MAX_BLOCK:
            block.append((no, line))
    if block:
        last = _packet(block, day)
        if dumps and any(x.startswith("no hex dump") for x in last.problems):
            last.complete = False      # the others had one: the trace ends inside this packet
        yield last


def _packet(block: List[Tuple[int, str]], day: int) -> PmPacket:
    no, first = block[0]
    m = STAMP.match(first)
    pkt = PmPacket(day * 86400 + _seconds(m), m.group(5), no, b"")
    try:
        return _build(block, pkt)
    except Unreadable as exc:
        pkt.complete, pkt.data, pkt.unusable = False, b"", True
        pkt.problems.append(str(exc))
        return pkt


def _build(block: List[Tuple[int, str]], pkt: PmPacket) -> PmPacket:
    text = "\n".join(line for _, line in block)
    ip = IP_LINE.search(text)
    addrs = ADDR_LINE.search(text)
    if not ip or not addrs:
        pkt.complete = False
        pkt.problems.append("no IP header lines")
        return pkt
    names = ("Ver/HL", "ToS", "Len", "ID", "Flg/Frg", "TTL", "Prtl")
    limits = (0xFF, 0xFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFF, 0xFF)
    vhl, tos, length, ipid, frag, ttl, proto = (_num(g, False, lim, n) for g, lim, n in zip(ip.groups(), limits, names))
    cksum, src, dst = (_num(g, False, lim, n) for g, lim, n in zip(addrs.groups(), (0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF),
                                                                    ("Cksum", "Src", "Dst")))
    ihl = (vhl & 15) * 4
    if vhl >> 4 != 4 or ihl < 20 or length < ihl:
        raise Unreadable(f"IP header Ver/HL {vhl:x}, Len {length}: not an IPv4 header")
    header = struct.pack("!BBHHHBBHII", vhl, tos, length, ipid, frag, ttl, proto, cksum, src, dst)
    header += b"\x00" * (ihl - 20)   # IP options are not printed
    if proto == 6:
        body = _tcp(text, pkt, length - ihl)
        if not body:
            pkt.unusable = True      # no TCP header to rebuild: the packet is named, not guessed
            return pkt
    else:
        body = b"\x00" * (length - ihl)
        pkt.problems.append(f"protocol {proto}: payload not printed, zero-filled")
    pkt.data = header + body
    return pkt


def _tcp(text: str, pkt: PmPacket, l4len: int) -> bytes:
    ports = next((TCP_LINE.match(line) for line in text.splitlines() if TCP_LINE.match(line)), None)
    seqm, xoff = SEQ_LINE.search(text), XOFF_LINE.search(text)
    if not (ports and seqm and xoff):
        pkt.complete = False
        pkt.problems.append("TCP header lines missing")
        return b""
    sport, dport = _port(ports.group(1)), _port(ports.group(2))
    seq_t, ack_t, win_t, count_t = seqm.groups()
    off, flags, cksum, urg = (_num(g, False, lim, n) for g, lim, n in zip(
        xoff.groups(), (0xF, 0xFF, 0xFFFF, 0xFFFF), ("X/Off", "Flags", "Cksum", "Urg->")))
    extra = l4len - 20
    if extra < 0:
        raise Unreadable(f"IP length {l4len + 20} leaves no room for a TCP header")
    # which dialect: the seed's hex-with-dot, or 17.1's decimal counts
    decimal = not count_t.endswith(".") and count_t.isdigit() and len(count_t) < 8 and int(count_t) == extra
    count = _num(count_t, decimal, 0xFFFF, "data bytes")
    seq = _num(seq_t, decimal, what="seq")
    ack = 0 if ack_t.lower().startswith("n.a") else _num(ack_t, decimal, what="ack")
    win = _num(win_t, decimal, 0xFFFF, "window")
    if off < 5 or off * 4 > l4len:
        raise Unreadable(f"X/Off {off:x}: a TCP header of {off * 4} bytes in {l4len}")
    if count != extra:
        pkt.problems.append(f"{count} data bytes printed, IP length says {extra}")
    dump = _dump(text)
    if dump is None:
        data = b"\x00" * extra
        if extra:
            pkt.problems.append("no hex dump (run packet_monitor with -hex_dump to see TCP options)")
            pkt.options_seen = False
    elif len(dump) < extra:
        pkt.complete = False
        pkt.problems.append(f"hex dump holds {len(dump)} of {extra} bytes")
        pkt.options_seen = len(dump) >= off * 4 - 20
        data = dump + b"\x00" * (extra - len(dump))
    else:
        data = dump[:extra]
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, off << 4, flags, win, cksum, urg) + data


def _dump(text: str) -> Optional[bytes]:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if DUMP_HEAD.match(line)), None)
    if start is None:
        return None
    out = bytearray()
    for line in lines[start + 1:]:
        m = DUMP_LINE.match(line)
        if not m or len(m.group(1)) > 8 or int(m.group(1), 16) != len(out) or len(out) > 0xFFFF:
            break
        out += bytes(int(tok, 16) for tok in m.group(2).split())
    return bytes(out)


def ip_checksum_ok(packet: bytes) -> bool:
    ihl = (packet[0] & 15) * 4
    return _checksum(packet[:ihl]) == 0


def tcp_checksum_ok(packet: bytes) -> bool:
    ihl = (packet[0] & 15) * 4
    seg = packet[ihl:]
    pseudo = packet[12:20] + struct.pack("!BBH", 0, 6, len(seg))
    return _checksum(pseudo + seg) == 0


class PcapWriter:
    """The rebuilt packets as a raw-IP pcap (LINKTYPE_RAW) that Wireshark opens, written as
    they are read."""

    def __init__(self, out):
        self.out, self.count = out, 0
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101))

    def append(self, p: PmPacket) -> None:
        if not p.data:
            return
        sec = int(p.ts)
        usec = min(999999, int(round((p.ts - sec) * 1e6)))
        self.out.write(struct.pack("<IIII", sec, usec, len(p.data), len(p.data)) + p.data)
        self.count += 1


def write_pcap(packets: List[PmPacket], out) -> int:
    w = PcapWriter(out)
    for p in packets:
        w.append(p)
    return w.count
