"""IP reassembly for the capture reader, IPv4 and IPv6 alike, as a kernel does it:

- a datagram is keyed by (addresses, ID, protocol) for IPv4 and (addresses, ID) for IPv6;
- it waits at most TIMEOUT seconds of capture time (Linux: net.ipv4.ipfrag_time 30 s,
  net.ipv6.ip6frag_time 60 s) and at most MAX_PENDING datagrams wait at once (the oldest
  goes first, as the kernel's ipfrag_high_thresh makes room);
- an exact duplicate fragment is ignored; a fragment that overlaps another one discards
  the whole datagram and its later fragments (RFC 5722 for IPv6; Linux does the same for
  IPv4 since 4.19), as does a datagram over 65,535 bytes or of more than MAX_FRAGMENTS.

Only what the analysis needs is kept: the first HEAD bytes of the datagram's payload (the
TCP header with its options, a tunnel's inner headers), the fragments' extents and
sizes. Memory is bounded whatever the capture holds.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable, List, Optional

HEAD = 320
TIMEOUT = {4: 30.0, 6: 60.0}
MAX_PENDING = 16384
MAX_FRAGMENTS = 1024
MAX_DISCARDED = 4096


class Pending:
    """One datagram being reassembled."""
    __slots__ = ("key", "version", "ts", "deadline", "parts", "end", "head", "fragments", "max_ip", "proto", "header",
                 "df")

    def __init__(self, key, version: int, ts: float, proto: int):
        self.key, self.version, self.ts, self.proto = key, version, ts, proto
        self.deadline = ts + TIMEOUT[version]
        self.parts: List[List[int]] = []      # [start, stop, captured stop], in arrival order
        self.end: Optional[int] = None        # the datagram's payload length, once the last fragment came
        self.head: Optional[bytearray] = None
        self.fragments = 0
        self.max_ip = 0
        self.header = None                    # the first fragment's IP header facts (set by the caller)
        self.df = 0


class Datagram:
    """A reassembled datagram: payload[:len(head)] captured, `length` bytes in all."""
    __slots__ = ("head", "length", "fragments", "max_ip", "proto", "header")

    def __init__(self, head: bytes, length: int, fragments: int, max_ip: int, proto: int, header):
        self.head, self.length, self.fragments, self.max_ip, self.proto = head, length, fragments, max_ip, proto
        self.header = header


class Reassembler:
    """add() each fragment; it returns the Datagram when one completes. `dropped(p, why)`
    is called for every datagram given up (timeout, memory, overlap, ...)."""

    def __init__(self, dropped: Callable[[Pending, str], None]):
        self.pending: "OrderedDict[tuple, Pending]" = OrderedDict()
        self.discarded: "OrderedDict[tuple, float]" = OrderedDict()
        self.dropped = dropped
        self.duplicates = 0
        self.completed = 0

    def add(self, key, version: int, ts: float, offset: int, more: bool, length: int, ip_len: int,
            buf, p: int, cend: int, proto: int, header=None, df: int = 0) -> Optional[Datagram]:
        """One fragment: `length` payload bytes at `offset`, of which buf[p:cend] were captured."""
        self._expire(ts)
        until = self.discarded.get(key)
        if until is not None:
            if ts <= until:
                return None       # a later fragment of a discarded datagram
            del self.discarded[key]
        pend = self.pending.get(key)
        if pend is None:
            if len(self.pending) >= MAX_PENDING:
                _, old = self.pending.popitem(last=False)
                self.dropped(old, "reassembly queue full (oldest datagram given up)")
            pend = self.pending[key] = Pending(key, version, ts, proto)
        pend.fragments += 1
        if ip_len > pend.max_ip:
            pend.max_ip = ip_len
        pend.df |= df
        stop = offset + length
        for start, end, _ in pend.parts:
            if start == offset and end == stop:
                self.duplicates += 1
                return None
            if offset < end and start < stop:
                return self._discard(pend, ts, "overlapping fragments (datagram discarded, RFC 5722)")
        if not more:
            if pend.end is not None and pend.end != stop:
                return self._discard(pend, ts, "two last fragments of different lengths (datagram discarded)")
            pend.end = stop
        if stop > 65535 or (pend.end is not None and any(e > pend.end for _, e, _ in pend.parts)):
            return self._discard(pend, ts, "fragments beyond the datagram's end (datagram discarded)")
        if len(pend.parts) >= MAX_FRAGMENTS:
            return self._discard(pend, ts, f"more than {MAX_FRAGMENTS} fragments (datagram discarded)")
        captured = max(0, min(cend - p, length))
        pend.parts.append([offset, stop, offset + captured])
        if offset == 0:
            pend.proto = proto
            pend.header = header
        if offset < HEAD and captured:
            if pend.head is None:
                pend.head = bytearray(HEAD)
            n = min(captured, HEAD - offset)
            pend.head[offset:offset + n] = buf[p:p + n]
        if pend.end is None:
            return None
        parts = sorted(pend.parts)
        reach = 0
        for start, end, _ in parts:
            if start > reach:
                return None          # a hole: more to come
            reach = end
        if reach < pend.end:
            return None
        del self.pending[key]
        self.completed += 1
        have = 0                          # the captured prefix: contiguous from offset 0
        for start, end, cap in parts:
            if start > have or have >= HEAD:
                break
            have = max(have, cap)
            if cap < end:
                break
        head = bytes(pend.head[:min(have, HEAD)]) if pend.head is not None else b""
        return Datagram(head, pend.end, pend.fragments, pend.max_ip, pend.proto, pend.header)

    def _discard(self, pend: Pending, ts: float, why: str) -> None:
        self.pending.pop(pend.key, None)
        self.discarded[pend.key] = pend.deadline
        if len(self.discarded) > MAX_DISCARDED:
            self.discarded.popitem(last=False)
        self.dropped(pend, why)
        return None

    def _expire(self, ts: float) -> None:
        while self.pending:
            key, first = next(iter(self.pending.items()))
            if first.deadline >= ts:
                return
            del self.pending[key]
            self.dropped(first, "reassembly timeout (fragments missing)")

    def finish(self) -> None:
        """The capture ended: what is still waiting will never complete."""
        while self.pending:
            _, pend = self.pending.popitem(last=False)
            self.dropped(pend, "incomplete at the end of the capture")
