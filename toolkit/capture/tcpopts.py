"""TCP options of a captured header, read from bytes (RFC 9293 section 3.1; the option
kinds in the IANA registry). A plain function over bytes, for the capture reader's hot
loop and for anyone else holding a raw TCP header."""
from __future__ import annotations

from typing import Optional, Tuple

NAMES = {2: "mss", 3: "wscale", 4: "sackok", 5: "sack", 8: "ts", 19: "md5", 28: "uto", 29: "tcp-ao",
         30: "mptcp", 34: "tfo", 253: "exp1", 254: "exp2"}


def tcp_options(data, start: int = 0, end: Optional[int] = None) -> Tuple[Optional[int], Tuple[str, ...], bool]:
    """(MSS or None, option names in order, whole) of the options in data[start:end].

    `whole` is False when the options run past `end` (the capture stopped inside them, or
    a length is impossible): an MSS that is not found may then still have been there."""
    end = len(data) if end is None else min(end, len(data))
    p, mss, names = start, None, []
    while p < end:
        kind = data[p]
        if kind == 0:
            break
        if kind == 1:
            p += 1
            continue
        if p + 1 >= end:
            return mss, tuple(names), False
        ln = data[p + 1]
        if ln < 2 or p + ln > end:
            return mss, tuple(names), False
        if kind == 2 and ln == 4:
            mss = (data[p + 2] << 8) | data[p + 3]
        names.append(NAMES.get(kind, str(kind)))
        p += ln
    return mss, tuple(names), True
