"""Measured beats assumed: where a probe or the dumps contradict what the host file says."""
from __future__ import annotations

from typing import List

from toolkit.findings import Finding
from toolkit.rules import fragments
from toolkit.rules.mss import legacy_probes

# A platform may legitimately print another format: a VOS host runs STCP or TCP_OS.
SAME_HOST = {"vos": {"vos", "tcpos"}, "tcpos": {"vos", "tcpos"}}


def contradictions(host) -> List[Finding]:
    f = host.facts
    where = f.source or "host facts"
    said: List[str] = []
    data = {}
    if f.peer == "local":
        for p in legacy_probes(host):
            said.append(f"{where} says the peer is local (so the stack would use its full MSS), but the probe of "
                        f"{p.target} measured segments of at most {p.mss.get('used')} bytes although "
                        f"{p.mss.get('sent')} was advertised: the legacy non-local default is in use; advice "
                        "below follows the measurement")
            data["peer"] = {"said": "local", "measured_used_mss": p.mss.get("used")}
            break
    for key, what, measured in (("path_mtu", "the path MTU", "pmtu"), ("mtu", "the interface MTU", "local_mtu")):
        said_value = getattr(f, key)
        p = next((p for p in host.probes if said_value and getattr(p, measured) not in (None, said_value)), None)
        if p is not None:
            said.append(f"{where} says {what} is {said_value}, the probe of {p.target} measured "
                        f"{getattr(p, measured)}; the measured value is used")
            data[key] = {"said": said_value, "measured": getattr(p, measured)}
    if f.os and f.source:
        seen = sorted(fragments.counted(host).oses)
        allowed = SAME_HOST.get(f.os, {f.os})
        if seen and not set(seen) & allowed:
            said.append(f"{where} says the OS is {f.os}, but its dumps read as {', '.join(seen)}; advice follows "
                        f"{f.os} as the host file says: check which is right")
            data["os"] = {"said": f.os, "dumps": seen}
    if not said:
        return []
    return [Finding("facts-contradicted", "Measurements contradict the host facts", said, "high", "warning", [],
                    data)]
