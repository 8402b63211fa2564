"""A host's boot time from what its BOOT command printed (toolkit/platforms/<os>.py BOOT).

The outputs say what they are, so no OS needs to be named:

  btime 1762000000                                Linux /proc/stat: epoch seconds
  { sec = 1762000000, usec = 5 } Sat Nov  1 ...   FreeBSD / macOS kern.boottime
  1762000000                                      OpenBSD kern.boottime
  unix:0:system_misc:boot_time<TAB>1762000000     Solaris / illumos kstat
  2026-11-01T12:26:40Z                            Windows (PowerShell), any ISO 8601 UTC time
  9:15am  up 2 days,  3:12,  1 user,  load ...    uptime (HP-UX, AIX, ...): collection time minus
                                                  the uptime, to the minute

Anything else is None: no boot time is better than a wrong one.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Optional

# A boot time from before 1990 or a host that has been up for more than 30 years is a
# misread, not a fact.
EARLIEST = 631152000.0
MAX_UPTIME = 30 * 365 * 86400

_EPOCH = re.compile(r"^\s*(?:btime\s+|unix:0:system_misc:boot_time\s+)?(\d{9,11})(?:\.\d+)?\s*$", re.M)
_BSD = re.compile(r"\{\s*sec\s*=\s*(\d{9,11}),\s*usec\s*=\s*(\d{1,6})\s*\}")
_ISO = re.compile(r"^\s*(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}))\s*$", re.M)
_UP = re.compile(r"\bup\s+(?:(?P<days>\d+)\s+day(?:s|\(s\))?,?\s*)?"
                 r"(?:(?P<h>\d+):(?P<m>\d{2})\b|(?P<mins>\d+)\s+min(?:ute)?(?:s|\(s\))?"
                 r"|(?P<hrs>\d+)\s+hr(?:s|\(s\))?|(?P<secs>\d+)\s+sec(?:ond)?(?:s|\(s\))?)?", re.I)


def parse(text: Optional[str], collected_t: float) -> Optional[float]:
    """The boot time (epoch seconds, UTC) the text gives, or None.

    `collected_t` is when the text was collected: an uptime counts back from it.
    """
    if not text or len(text) > 4096:
        return None
    t = _parse(text, collected_t)
    if t is None or t < EARLIEST or t > collected_t + 86400:
        return None
    return t


def _parse(text: str, collected_t: float) -> Optional[float]:
    m = _BSD.search(text)
    if m:
        return int(m.group(1)) + int(m.group(2)) / 1e6
    m = _EPOCH.search(text)
    if m:
        return float(m.group(1))
    m = _ISO.search(text)
    if m:
        value = m.group(1).replace("Z", "+00:00")
        if re.search(r"[+-]\d{4}$", value):
            value = value[:-2] + ":" + value[-2:]
        try:
            return datetime.fromisoformat(value).astimezone(timezone.utc).timestamp()
        except ValueError:
            return None
    m = _UP.search(text)
    if m and any(m.group(k) for k in ("days", "h", "mins", "hrs", "secs")):
        up = int(m.group("days") or 0) * 86400
        if m.group("h"):
            up += int(m.group("h")) * 3600 + int(m.group("m")) * 60
        up += int(m.group("mins") or 0) * 60 + int(m.group("hrs") or 0) * 3600 + int(m.group("secs") or 0)
        if up > MAX_UPTIME:
            return None
        return collected_t - up
    return None
