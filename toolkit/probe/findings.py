"""Findings from a probe result: stable codes, a sentence each, and how sure we are."""
from __future__ import annotations

from typing import Dict, Optional

from toolkit.probe.pmtu import HIGH_SILENCE
from toolkit.probe.result import ProbeResult

LEGACY_MSS = (512, 536)      # TCP_OS before VOS 14.7 used 512, STCP and TCP_OS since 536 (seed 004)


def path_mss(r: ProbeResult) -> Optional[int]:
    if r.pmtu is None:
        return None
    return r.pmtu - (60 if r.family == "ipv6" else 40)


def assess(r: ProbeResult, echo_filtered: bool = False, silence: Optional[float] = None) -> None:
    """Append findings to r (its pmtu, black_hole, mss_ports are filled in); `silence` is
    how long the search heard no ICMP above the answer before it called a black hole."""
    conf = r.confidence or "high"
    pm = path_mss(r)
    if echo_filtered:
        r.add_finding("echo-filtered", f"{r.address} does not answer ICMP echo; the path MTU was "
                      f"probed with {r.probe_method} instead", "high")
    if r.pmtu is not None and r.local_mtu and r.pmtu < r.local_mtu:
        where = f" ({'reported by' if r.pmtu_method == 'icmp' else 'after'} {r.hop})" if r.hop else ""
        r.add_finding("pmtu-reduced", f"path MTU {r.pmtu} is below the local interface MTU {r.local_mtu}{where}; "
                      f"TCP segments must stay at or below MSS {pm}", conf)
    if r.black_hole:
        where = f" after {r.hop}" if r.hop else ""
        why = ""
        if silence is not None and silence < HIGH_SILENCE:
            why = (f" (no ICMP came for {silence:.1f} s; a router that sends it less often than that looks "
                   f"the same: --icmp-wait {HIGH_SILENCE:g} tells them apart)")
        r.add_finding("pmtud-black-hole",
                      f"DF packets above {r.pmtu} bytes vanish{where} without ICMP 'fragmentation needed'{why}: "
                      f"TCP sessions that send segments above MSS {pm} will hang (PMTU discovery cannot work); "
                      f"clamp the MSS to {pm} or let that ICMP through", conf)
    for m in r.mss_ports:
        _mss_findings(r, m, pm)


def _mss_findings(r: ProbeResult, m: Dict, pm: Optional[int]) -> None:
    port, sent, synack, used = m.get("port"), m.get("sent"), m.get("synack"), m.get("used")
    seg = used + (m.get("used_options") or 0) if used is not None else None
    if m.get("error"):
        r.add_finding("port-closed", f"port {port}: no MSS check ({m['error'].split(': ', 1)[-1]})", "high")
        return
    if used is None and m.get("bytes", 0) == 0 and synack is not None:
        r.add_finding("no-data", f"port {port}: the host sent no data, so the MSS it uses is unknown "
                      "(use --send TEXT for services that wait for a request)", "high")
    if synack is not None and pm is not None and synack < pm:
        r.add_finding("synack-mss-below-path",
                      f"port {port}: the SYN-ACK advertises MSS {synack} though the path carries {pm}: "
                      "the host's MSS setting or a middlebox clamping the MSS", "high")
    big_enough = m.get("bytes", 0) > (seg or 0)
    if seg is not None and sent and sent > max(LEGACY_MSS) and seg in LEGACY_MSS and big_enough:
        if synack is not None and synack > seg:
            text, conf = (f"port {port}: the host sends {seg}-byte segments although both sides "
                          f"advertised more (we {sent}, it {synack}): the legacy STCP/TCP_OS default "
                          "for non-local peers", "high")
        else:
            text, conf = (f"port {port}: the host sends {seg}-byte segments although we advertised {sent}: "
                          "the legacy STCP/TCP_OS non-local default, or a middlebox clamping the MSS "
                          f"to {seg} in both directions (the SYN-ACK says {synack}); check the host's MSS "
                          "setting (VOS: min_mss / tcpos_default_mss$)", "medium")
        r.add_finding("mss-536-legacy", text, conf)
    if pm is not None:
        # what our side will send: the host's MSS, capped by our own interface
        ours = min(synack, r.local_mtu - (60 if r.family == "ipv6" else 40)) if synack and r.local_mtu else synack
        over = [x for x in (("SYN-ACK MSS", ours), ("segments of", seg)) if x[1] is not None and x[1] > pm]
        if over:
            what = " and ".join(f"{k} {v}" for k, v in over)
            r.add_finding("mss-above-path",
                          f"port {port}: {what} above the path's MSS {pm}: such segments are fragmented"
                          f"{' or vanish in the black hole' if r.black_hole else ' or need PMTU discovery'}",
                          "high" if r.pmtu_method != "inferred" else (r.confidence or "medium"))
