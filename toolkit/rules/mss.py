"""Stacks that send small segments to non-local peers: VOS STCP (536), TCP_OS (512/536), FTX 2.4."""
from __future__ import annotations

from typing import List

from toolkit import calc, sources
from toolkit.findings import Finding
from toolkit.platforms import network
from toolkit.rules import impact
from toolkit.rules.probed import clamp_explains

CODES = {"vos": "stcp-536-nonlocal", "tcpos": "tcpos-small-mss", "ftx": "ftx24-small-mss"}
TUNED = 1400   # a used MSS at or above this means someone already raised the default


def legacy_small_mss(host) -> List[Finding]:
    plat = host.platform
    code = CODES.get(host.facts.os or "")
    if host.facts.os is None:
        return _os_unknown(host)
    if plat is None or code is None:
        return []
    measured = legacy_probes(host)
    # Measured beats assumed: a probe that saw the legacy size wins over a host file that
    # calls the peer local (facts.contradictions says so beside this finding).
    default, why = plat.default_mss(host.facts.release, False if measured else host.facts.local)
    if default is None:
        return []
    pmtu, pmtu_from = host.path_mtu()
    path_mss = pmtu - calc.IPV4 - calc.TCP
    evidence, confidence = [why], "high" if measured else None
    for p in host.probes:
        used = p.mss.get("used")
        if used is not None and used >= TUNED:
            return []   # the host already sends full segments: the default was changed
    for p in measured:      # legacy_probes: every one sent legacy-sized segments
        used, sent = p.mss.get("used"), p.mss.get("sent")
        evidence.append(f"probe of {p.target}: host sent segments of at most {used} bytes although "
                        f"{sent} was advertised to it" + (f"; path MTU {p.pmtu} ({p.pmtu_method})" if p.pmtu else ""))
    if confidence is None:
        if host.facts.peer != "non-local":
            return []   # no sign the host talks to non-local peers with the small default
        evidence.append("host facts: the peer is non-local (not on the host's subnet)")
        confidence = "medium"
    if path_mss <= default:
        return []       # the path itself carries no more: nothing to gain
    evidence.append(f"path MTU {pmtu} ({pmtu_from}) carries {path_mss}-byte segments")
    recs = plat.raise_mss(pmtu, host.facts.release)
    gain = impact.mss_change(default, path_mss, host.facts.rtt_s, host.facts.loss, host.facts.bandwidth_bps)
    for r in recs:
        r.impact = gain
        if host.assumed_path_mtu():
            r.caveats.insert(0, f"The path MTU was not measured: {pmtu} is assumed ({sources.MSS}: \"in general, "
                                "today's networks will support 1460 byte TCP segments\"). This stack does no PMTU "
                                "discovery, so measure the path first (mssdiag probe) where it may be smaller.")
    if host.assumed_path_mtu():
        recs.insert(0, network.measure("ipv4"))
    title = {"stcp-536-nonlocal": f"STCP sends {default}-byte segments to non-local peers on a path that carries {path_mss}",
             "tcpos-small-mss": f"TCP_OS caps segments to non-local peers at {default} bytes (path carries {path_mss})",
             "ftx24-small-mss": f"FTX 2.4 uses a small default MSS for non-local peers (path carries {path_mss})"}[code]
    return [Finding(code, title, evidence, confidence, "problem", recs,
                    {"default_mss": default, "path_mtu": pmtu, "path_mss": path_mss, "impact": gain})]


def legacy_probes(host) -> list:
    """Probes that measured a host sending legacy-sized segments below what it was offered,
    unless the probe found a router clamping the MSS to that size (`probe --trace`)."""
    out = []
    for p in host.probes:
        used, sent = p.mss.get("used"), p.mss.get("sent")
        if clamp_explains(p, used):
            continue
        if "mss-536-legacy" in p.codes() or (used is not None and used <= 536 and (sent or 0) > used):
            out.append(p)
    return out


def _os_unknown(host) -> List[Finding]:
    """A probe saw legacy 536-byte segments but nobody said what the host runs."""
    out = []
    for p in legacy_probes(host):
        used, sent = p.mss.get("used"), p.mss.get("sent")
        ev = [f"probe of {p.target}: host sent segments of at most {used} bytes although {sent} was advertised to it",
              "that is the non-local default of VOS STCP (536) and TCP_OS (512 before VOS 14.7, 536 after)",
              "the OS is not known: run triage again with --os vos|tcpos|ftx --release R (or a host file) "
              "for the exact command"]
        out.append(Finding("mss-536-os-unknown", f"{p.target} sends legacy {used}-byte segments (OS unknown)", ev,
                           "high", "problem", [], {"target": p.target, "used": used, "sent": sent}))
    return out
