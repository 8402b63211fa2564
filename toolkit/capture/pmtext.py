"""VOS `packet_monitor` text traces (seed 004 Figure 1; OpenVOS 17.1 adds Ether lines).

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
never appear in its traces (seed 004), whatever the network did.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Tuple

from toolkit.capture.sniff import packet_monitor_text as looks_like

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
          "in this trace (seed 004), so fragment counts here cover outgoing packets only")


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


def _join(lines: Iterator[str]) -> Iterator[Tuple[int, str]]:
    """Logical lines: `+` continuation lines glued to the line before them."""
    held, held_no = None, 0
    for no, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if line.startswith("+") and held is not None:
            held += line[1:]
            continue
        if held is not None:
            yield held_no, held
        held, held_no = line, no
    if held is not None:
        yield held_no, held


def _num(tok: str, decimal: bool) -> int:
    tok = tok.strip()
    if tok.endswith("."):
        return int(tok[:-1], 10)
    if decimal and tok.isdigit():
        return int(tok, 10)
    return int(tok, 16)


def _port(text: str) -> int:
    """'164.152.79.200.2315' -> 2315; '164.152.77.203.telnet' -> 23."""
    name = text.rsplit(".", 1)[-1]
    if name.isdigit():
        return int(name)
    if name.lower() in SERVICES:
        return SERVICES[name.lower()]
    import socket
    try:
        return socket.getservbyname(name.lower(), "tcp")
    except OSError:
        raise TraceError(f"unknown service name {name!r} in {text!r}") from None


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
            h, mi, s, frac = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or "0"
            t = h * 3600 + mi * 60 + s + int(frac) / 10 ** len(frac)
            if last is not None and t < last - 43200:
                day += 1
            last = t
            block = [(no, line)]
        elif block:
            block.append((no, line))
    if block:
        last = _packet(block, day)
        if dumps and any(x.startswith("no hex dump") for x in last.problems):
            last.complete = False      # the others had one: the trace ends inside this packet
        yield last


def _packet(block: List[Tuple[int, str]], day: int) -> PmPacket:
    no, first = block[0]
    m = STAMP.match(first)
    h, mi, s, frac = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or "0"
    ts = day * 86400 + h * 3600 + mi * 60 + s + int(frac) / 10 ** len(frac)
    text = "\n".join(line for _, line in block)
    pkt = PmPacket(ts, m.group(5), no, b"")
    ip = IP_LINE.search(text)
    addrs = ADDR_LINE.search(text)
    if not ip or not addrs:
        pkt.complete = False
        pkt.problems.append("no IP header lines")
        return pkt
    vhl, tos, length, ipid, frag, ttl, proto = (_num(g, False) for g in ip.groups())
    cksum, src, dst = (int(g, 16) for g in addrs.groups())
    ihl = (vhl & 15) * 4
    header = struct.pack("!BBHHHBBHII", vhl, tos, length, ipid, frag, ttl, proto, cksum, src, dst)
    header += b"\x00" * (ihl - 20)   # IP options are not printed
    body = b""
    if proto == 6:
        body = _tcp(text, pkt, length - ihl)
    if not body and proto != 6 or proto == 6 and not pkt.complete and not body:
        body = b"\x00" * max(0, length - ihl)
        if proto != 6:
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
    off, flags, cksum, urg = (int(g, 16) for g in xoff.groups())
    extra = l4len - 20
    # which dialect: the seed's hex-with-dot, or 17.1's decimal counts
    decimal = not count_t.endswith(".") and count_t.isdigit() and int(count_t) == extra
    count = _num(count_t, decimal)
    seq = _num(seq_t, decimal)
    ack = 0 if ack_t.lower().startswith("n.a") else _num(ack_t, decimal)
    win = _num(win_t, decimal)
    if count != extra:
        pkt.problems.append(f"{count} data bytes printed, IP length says {extra}")
    dump = _dump(text)
    if dump is None:
        data = b"\x00" * extra
        if extra:
            pkt.problems.append("no hex dump (run packet_monitor with -hex_dump to see TCP options)")
    elif len(dump) < extra:
        pkt.complete = False
        pkt.problems.append(f"hex dump holds {len(dump)} of {extra} bytes")
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
        if not m or int(m.group(1), 16) != len(out):
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


def write_pcap(packets: List[PmPacket], out) -> int:
    """The rebuilt packets as a raw-IP pcap (LINKTYPE_RAW) that Wireshark opens."""
    out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101))
    n = 0
    for p in packets:
        if not p.data:
            continue
        sec = int(p.ts)
        usec = int(round((p.ts - sec) * 1e6))
        out.write(struct.pack("<IIII", sec, usec, len(p.data), len(p.data)) + p.data)
        n += 1
    return n
