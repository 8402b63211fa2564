"""Capture files in, frames out: pcap, pcapng, snoop (pure `struct`, streamed in blocks).

Each reader calls `sink(ts, linktype, buf, start, end, wire_len, iface)` for every frame,
where buf[start:end] are the captured bytes. No frame is copied and nothing but one
block (BLOCK bytes plus one frame) is held, so memory stays flat on any file size.

Formats other tools read (HP-UX nettl, AIX iptrace, Microsoft Network Monitor) go
through Wireshark's `editcap` when it is on PATH; otherwise the error names the tool.
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from toolkit.capture import linktypes
from toolkit.sniff import FOREIGN, sniff  # noqa: F401  (the readers' names for them)

BLOCK = 4 << 20
MAX_RECORD = 262144          # the most libpcap / Wireshark write for one packet (WTAP_MAX_PACKET_SIZE_STANDARD)
MAX_PCAPNG_BLOCK = 16 << 20  # Wireshark's limit for one pcapng block
MAX_INTERFACES = 4096

# link types (LINKTYPE_* of pcap / pcapng); linktypes.py names the rest
ETHERNET, NULL, LOOP, RAW, RAW12, RAW14, IPV4, IPV6, SLL, SLL2 = 1, 0, 108, 101, 12, 14, 228, 229, 113, 276
SNOOP_LINKS = {0: ETHERNET, 4: ETHERNET, 2: 6, 8: 10, 18: 242}   # RFC 1761 datalink types

Sink = Callable[[float, int, bytes, int, int, int, int], None]


class CaptureError(Exception):
    """The file cannot be read (further); the message says what is wrong, without the name."""


@dataclass
class Interface:
    linktype: int
    snaplen: int = 0
    name: str = ""
    tsresol: float = 1e-6
    tsoffset: int = 0
    received: Optional[int] = None   # pcapng interface statistics (isb_ifrecv)
    dropped: Optional[int] = None    # isb_ifdrop (+ isb_osdrop when given)

    def to_dict(self) -> dict:
        return {"linktype": linktypes.short(self.linktype), "snaplen": self.snaplen,
                "name": self.name or None, "ts_resolution": self.tsresol,
                "received": self.received, "dropped": self.dropped}


@dataclass
class FileInfo:
    """What a capture file said about itself."""
    path: str
    format: str = ""
    interfaces: List[Interface] = field(default_factory=list)
    frames: int = 0
    truncated: Optional[str] = None   # why reading stopped early (the frames before it were read)
    converted_with: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)    # the format's rules broken, the packets still read
    unread: Dict[str, int] = field(default_factory=dict)  # packets the file holds but could not hand on, by reason

    def warn(self, text: str) -> None:
        if text not in self.warnings and len(self.warnings) < 16:
            self.warnings.append(text)

    def to_dict(self) -> dict:
        return {"path": self.path, "format": self.format, "frames": self.frames,
                "interfaces": [i.to_dict() for i in self.interfaces], "truncated": self.truncated,
                "converted_with": self.converted_with, "notes": self.notes, "warnings": self.warnings}


def read(path: str, sink: Sink, progress: Optional[Callable[[int], None]] = None) -> FileInfo:
    """Read one binary capture file, calling sink per frame. Raises CaptureError when the
    file is unusable from the start; damage later sets FileInfo.truncated instead."""
    info = FileInfo(path)
    with open(path, "rb") as f:
        head = f.read(16)
        kind = sniff(head)
        f.seek(0)
        if kind == "pcap":
            info.format = "pcap"
            _pcap(f, sink, info, progress)
        elif kind == "pcapng":
            info.format = "pcapng"
            _pcapng(f, sink, info, progress)
        elif kind == "snoop":
            info.format = "snoop"
            _snoop(f, sink, info, progress)
        elif kind in FOREIGN.values():
            return _convert(path, kind, sink, progress)
        elif not head:
            raise CaptureError("empty file (0 bytes)")
        else:
            raise CaptureError(f"not a capture file: unknown magic {head[:4].hex()} "
                               "(pcap, pcapng, snoop and VOS packet_monitor text are read)")
    return info


def _blocks(f, progress):
    while True:
        data = f.read(BLOCK)
        if not data:
            return
        if progress:
            progress(len(data))
        yield data


def _pcap(f, sink: Sink, info: FileInfo, progress) -> None:
    head = f.read(24)
    if len(head) < 24:
        raise CaptureError(f"truncated pcap header ({len(head)} of 24 bytes)")
    magic = head[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    scale = 1e-9 if magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d") else 1e-6
    major, minor, _, _, snaplen, network = struct.unpack(endian + "HHiIII", head[4:])
    if (major, minor) != (2, 4):
        info.warn(f"pcap version {major}.{minor}: the format defines 2.4 only (Wireshark calls the file "
                  "malformed); read as 2.4")
    link = network & 0xFFFF
    info.interfaces.append(Interface(link, snaplen, tsresol=scale))
    info.format = "pcap-ns" if scale == 1e-9 else "pcap"
    if progress:
        progress(24)
    unpack = struct.Struct(endian + "IIII").unpack_from
    buf, off, frames = b"", 0, 0
    for data in _blocks(f, progress):
        buf = buf[off:] + data if off < len(buf) else data
        off, n = 0, len(buf)
        while off + 16 <= n:
            sec, frac, incl, orig = unpack(buf, off)
            if incl > MAX_RECORD:
                info.truncated = (f"record {frames + 1} claims {incl} bytes, more than a capture tool writes "
                                  f"({MAX_RECORD}): corrupt record header")
                info.frames = frames
                return
            start = off + 16
            end = start + incl
            if end > n:
                break
            sink(sec + frac * scale, link, buf, start, end, orig, 0)
            frames += 1
            off = end
    info.frames = frames
    left = len(buf) - off
    if left:
        info.truncated = f"ends mid-record: {left} trailing bytes after record {frames}"


MIN_BLOCK = {0x0A0D0D0A: 28, 1: 20, 2: 32, 3: 16, 5: 24, 6: 32}
BLOCK_NAMES = {0x0A0D0D0A: "section header", 1: "interface description", 2: "packet", 3: "simple packet",
               5: "interface statistics", 6: "enhanced packet"}


def _pcapng(f, sink: Sink, info: FileInfo, progress) -> None:
    buf, off, frames = b"", 0, 0
    endian = "<"
    ifaces: List[Interface] = []
    unpack = struct.unpack_from

    def stop(why: str) -> None:
        info.truncated = why
        info.frames = frames

    for data in _blocks(f, progress):
        buf = buf[off:] + data if off < len(buf) else data
        off, n = 0, len(buf)
        while off + 12 <= n:
            btype = unpack(endian + "I", buf, off)[0]
            if btype == 0x0A0D0D0A:
                bom = buf[off + 8:off + 12]
                endian = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">" if bom == b"\x1a\x2b\x3c\x4d" else ""
                if not endian:
                    return stop(f"bad section header byte-order magic after {frames} frames")
                ifaces = []   # interface ids restart in each section
            blen = unpack(endian + "I", buf, off + 4)[0]
            name = BLOCK_NAMES.get(btype, f"type 0x{btype:x}")
            if blen < MIN_BLOCK.get(btype, 12) or blen % 4:
                return stop(f"corrupt {name} block: length {blen} after {frames} frames")
            if blen > MAX_PCAPNG_BLOCK:
                return stop(f"{name} block claims {blen} bytes: corrupt after {frames} frames")
            if off + blen > n:
                break
            if unpack(endian + "I", buf, off + blen - 4)[0] != blen:
                return stop(f"corrupt {name} block: its two lengths differ, after {frames} frames")
            body, bend = off + 8, off + blen - 4
            if btype == 6 or btype == 2:     # enhanced / obsolete packet block: same 20-byte header
                if btype == 6:
                    iid, hi, lo, cap, orig = unpack(endian + "IIIII", buf, body)
                else:
                    iid, _, hi, lo, cap, orig = unpack(endian + "HHIIII", buf, body)
                start = body + 20
                if start + cap > bend:
                    return stop(f"corrupt {name} block: {cap} bytes of packet data in a {blen}-byte block, "
                                f"after {frames} frames")
                if iid < len(ifaces):
                    itf = ifaces[iid]
                    _check_options(buf, (start + cap + 3) & ~3, bend, endian, info, name)
                    sink((((hi << 32) | lo) * itf.tsresol) + itf.tsoffset, itf.linktype, buf, start, start + cap,
                         orig, iid)
                    frames += 1
                else:
                    why = f"packet names interface {iid}, which no interface block describes"
                    info.unread[why] = info.unread.get(why, 0) + 1
            elif btype == 3:     # simple packet block: interface 0, no timestamp
                orig = unpack(endian + "I", buf, body)[0]
                if ifaces:
                    cap = min(orig, ifaces[0].snaplen or orig, bend - body - 4)
                    sink(0.0, ifaces[0].linktype, buf, body + 4, body + 4 + cap, orig, 0)
                    frames += 1
                else:
                    why = "simple packet before any interface block"
                    info.unread[why] = info.unread.get(why, 0) + 1
            elif btype == 1:     # interface description block
                if len(info.interfaces) >= MAX_INTERFACES:
                    return stop(f"more than {MAX_INTERFACES} interface blocks: corrupt after {frames} frames")
                link, _, snap = unpack(endian + "HHI", buf, body)
                itf = Interface(link, snap)
                for code, val in _options(buf, body + 8, bend, endian, info, name):
                    if code == 9 and val:
                        r = val[0]
                        itf.tsresol = 2.0 ** -(r & 0x7F) if r & 0x80 else 10.0 ** -min(r, 300)
                    elif code == 2:
                        itf.name = val.rstrip(b"\x00").decode("utf-8", "replace")[:256]
                    elif code == 14 and len(val) >= 8:
                        itf.tsoffset = struct.unpack(endian + "q", val[:8])[0]
                ifaces.append(itf)
                info.interfaces.append(itf)
            elif btype == 5:     # interface statistics block
                iid = unpack(endian + "I", buf, body)[0]
                if iid < len(ifaces):
                    itf = ifaces[iid]
                    for code, val in _options(buf, body + 12, bend, endian, info, name):
                        if len(val) >= 8 and code in (4, 5, 7):
                            v = struct.unpack(endian + "Q", val[:8])[0]
                            if code == 4:
                                itf.received = v
                            else:
                                itf.dropped = (itf.dropped or 0) + v
            elif btype == 0x0A0D0D0A:
                major = unpack(endian + "H", buf, body + 4)[0]
                if major != 1:
                    info.warn(f"pcapng section of version {major}: the format defines 1 only; read as 1")
            off += blen
    info.frames = frames
    left = len(buf) - off
    if left:
        info.truncated = f"ends mid-block: {left} trailing bytes after {frames} frames"


def _options(buf: bytes, p: int, end: int, endian: str, info: FileInfo, block: str):
    while p + 4 <= end:
        code, length = struct.unpack_from(endian + "HH", buf, p)
        if code == 0:
            return
        if p + 4 + length > end:
            info.warn(f"the {block} block's option {code} is longer than its block (Wireshark calls the file "
                      "malformed); the option is ignored")
            return
        yield code, bytes(buf[p + 4:p + 4 + length])
        p += 4 + ((length + 3) & ~3)


def _check_options(buf: bytes, p: int, end: int, endian: str, info: FileInfo, block: str) -> None:
    """A packet block's options are not used, but one longer than its block is malformed."""
    if p + 4 <= end:
        for _ in _options(buf, p, end, endian, info, block):
            pass


def _snoop(f, sink: Sink, info: FileInfo, progress) -> None:
    head = f.read(16)
    if len(head) < 16:
        raise CaptureError(f"truncated snoop header ({len(head)} of 16 bytes)")
    version, dl = struct.unpack(">II", head[8:])
    link = SNOOP_LINKS.get(dl)
    if link is None:
        raise CaptureError(f"snoop datalink type {dl} is not read (Ethernet, FDDI, Token Ring, IPoIB)")
    if version != 2:
        info.warn(f"snoop version {version}: RFC 1761 defines version 2; read as 2")
    info.interfaces.append(Interface(link))
    info.format = f"snoop v{version}"
    unpack = struct.Struct(">IIIIII").unpack_from
    buf, off, frames, drops = b"", 0, 0, 0
    for data in _blocks(f, progress):
        buf = buf[off:] + data if off < len(buf) else data
        off, n = 0, len(buf)
        while off + 24 <= n:
            orig, incl, reclen, drops, sec, usec = unpack(buf, off)
            if reclen < 24 + incl or incl > MAX_RECORD or reclen > 24 + MAX_RECORD + 64:
                info.truncated = f"corrupt record {frames + 1} (record length {reclen}, {incl} bytes captured)"
                info.frames = frames
                return
            if off + reclen > n:
                break
            sink(sec + usec * 1e-6, link, buf, off + 24, off + 24 + incl, orig, 0)
            frames += 1
            off += reclen
    info.interfaces[0].dropped = drops
    info.frames = frames
    left = len(buf) - off
    if left:
        info.truncated = f"ends mid-record: {left} trailing bytes after record {frames}"


def _convert(path: str, kind: str, sink: Sink, progress) -> FileInfo:
    import shutil, subprocess, tempfile     # conversion only: sniffing and reading need none of them
    editcap = shutil.which("editcap")
    if editcap is None:
        raise CaptureError(f"{kind} capture: convert it with Wireshark's editcap "
                           f"(editcap -F pcapng {os.path.basename(path)} out.pcapng), or install it "
                           "(Debian: wireshark-common) and run again")
    fd, tmp = tempfile.mkstemp(suffix=".pcapng", prefix="mssdiag-")
    os.close(fd)
    try:
        res = subprocess.run([editcap, "-F", "pcapng", path, tmp], capture_output=True, text=True)
        if res.returncode != 0:
            raise CaptureError(f"{kind} capture: editcap could not convert it: "
                               f"{(res.stderr.strip().splitlines() or ['exit ' + str(res.returncode)])[-1]}")
        info = read(tmp, sink, progress)
    finally:
        os.unlink(tmp)
    info.path = path
    info.format = f"{kind} (via editcap)"
    info.converted_with = "editcap"
    return info
