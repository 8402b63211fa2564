"""Per-OS tuning knowledge, one module per OS family, keyed like the parsers (META.name).

Each module offers the same small interface, so rules never branch on OS names:

- NAME (the parser's META.name; the title and counter semantics live with the parser)
- default_mss(release, local) -> (mss or None, why): what the stack sends a peer
- raise_mss(path_mtu, release) -> [Recommendation]: stacks with a small legacy default
- black_hole(path_mtu, release, family) -> [Recommendation]: host-side fixes when big
  segments vanish or exceed the path
- buffers(bdp) -> [Recommendation]: socket buffer sizes for a bandwidth-delay product
- COLLECT, BOOT: the commands the fleet playbook runs on the host (toolkit/fleet): its IP
  statistics, and its boot time (None where the OS has none we know)

Commands name the release they are for; where a source gives the command ("Tuning your MSS" for
VOS, TCP_OS, FTX) it is quoted exactly.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import re
from types import ModuleType

from typing import Dict, Optional, Tuple

@functools.lru_cache(maxsize=None)
def names() -> Tuple[str, ...]:
    """Host platforms: parsers that have tuning knowledge here. Device parsers (cisco,
    huawei, snmp) have none: a router gets network advice, not host commands."""
    import parsers
    return tuple(n for n in parsers.names() if importlib.util.find_spec(f"{__name__}.{n}") is not None)


def release_tuple(release: Optional[str]) -> Optional[Tuple[int, ...]]:
    """'14.6.0ak' -> (14, 6, 0); 'Windows Server 2003' -> (2003,); None/'' -> None."""
    if not release:
        return None
    m = re.search(r"\d+(?:\.\d+)*", str(release))
    if not m:
        return None
    return tuple(int(n) for n in m.group(0).split("."))


def before(release: Optional[str], version: Tuple[int, ...]) -> Optional[bool]:
    """True when release < version, False when >=, None when the release is unknown."""
    r = release_tuple(release)
    if r is None:
        return None
    return r[:len(version)] < version


_CACHE: Dict[str, ModuleType] = {}


def get(name: Optional[str]) -> Optional[ModuleType]:
    """The platform module for an OS name (parser META.name), or None for an unknown OS."""
    if not name or name.lower() not in names():
        return None
    key = name.lower()
    if key not in _CACHE:
        _CACHE[key] = importlib.import_module(f"{__name__}.{key}")
    return _CACHE[key]
