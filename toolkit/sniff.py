"""What a file's first bytes say it is: a capture format, or text (a VOS packet_monitor trace
among them). Every input of `parse`, `diff` and `triage` is sniffed (toolkit/hosts.py), so this
module imports nothing of mssdiag's: the capture readers (toolkit/capture/) load only for a capture."""
from __future__ import annotations

import os

FOREIGN = {  # magic prefix -> (format name, what converts it)
    b"TR\x00d\x00\x00": "HP-UX nettl",
    b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07\xd0": "HP-UX 9 nettl",
    b"iptrace 1.0": "AIX iptrace 1.0",
    b"iptrace 2.0": "AIX iptrace 2.0",
    b"RTSS": "Network Monitor 1.x",
    b"GMBU": "Network Monitor 2.x",
}


def sniff(head: bytes) -> str:
    """The format a file's first bytes announce: pcap, pcapng, snoop, text, or a foreign name."""
    if len(head) >= 4 and head[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d"):
        return "pcap"
    if head[:4] == b"\x0a\x0d\x0d\x0a":
        return "pcapng"
    if head[:8] == b"snoop\x00\x00\x00":
        return "snoop"
    for magic, name in FOREIGN.items():
        if head.startswith(magic):
            return name
    if head and b"\x00" not in head[:4096]:
        return "text"
    return ""


def packet_monitor_text(text: str) -> bool:
    """Text that is a VOS packet_monitor trace (toolkit/capture/pmtext.py reads it)."""
    return "Ver/HL" in text and ("Rcvd" in text or "Xmit" in text)


def is_capture(head: bytes) -> bool:
    """A file beginning with these bytes is a capture (binary, or a packet_monitor trace)."""
    found = sniff(head)
    if found in ("pcap", "pcapng", "snoop") or found in FOREIGN.values():
        return True
    # the marker is ASCII: in the bytes exactly when in their decoding (most heads are not decoded)
    return found == "text" and b"Ver/HL" in head and packet_monitor_text(head.decode("utf-8", "replace"))


def read_head(path: str, size: int = 4096) -> bytes:
    """The first bytes of a file, up to `size`, for sniffing: one read(2), without a buffered
    file object (a third of the time: walk reads every file's head). A regular file's read
    stops short only at its end."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)
