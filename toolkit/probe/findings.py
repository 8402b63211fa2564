"""Findings from a probe result: stable codes, a sentence each, and how sure we are."""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:      # triage's rules import this module: neither typing nor the prober's search (threads, sockets)
    from typing import Dict, Optional

    from toolkit.probe.result import ProbeResult

LEGACY_MSS = (512, 536)      # TCP_OS before VOS 14.7 used 512, STCP and TCP_OS since 536 (seed 004)


def path_mss(r: ProbeResult) -> Optional[int]:
    if r.pmtu is None:
        return None
    return r.pmtu - (60 if r.family == "ipv6" else 40)


def assess(r: ProbeResult, echo_filtered: bool = False, silence: Optional[float] = None) -> None:
    """Append findings to r (its pmtu, black_hole, mss_ports are filled in); `silence` is
    how long the search heard no ICMP above the answer before it called a black hole."""
    from toolkit.probe.pmtu import HIGH_SILENCE
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
        opts = m.get("used_options") or 0
        # with timestamps agreed a 536 sender's segments carry 524 bytes of data and 12 of options
        parts = f" ({used} bytes of data and {opts} of TCP options)" if opts else ""
        if synack is not None and synack > seg:
            text, conf = (f"port {port}: the host sends {seg}-byte segments{parts} although both sides "
                          f"advertised more (we {sent}, it {synack}): the legacy STCP/TCP_OS default "
                          "for non-local peers", "high")
        else:
            said = (f"the SYN-ACK says {synack}" if synack is not None else
                    "the SYN-ACK is not seen without a capture")
            text, conf = (f"port {port}: the host sends {seg}-byte segments{parts} although we advertised {sent}: "
                          "the legacy STCP/TCP_OS non-local default, or a middlebox clamping the MSS "
                          f"to {seg} in both directions ({said}); check the host's MSS "
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


def where(r: ProbeResult) -> None:
    """Findings of --trace (the hop that rewrites the MSS) and --pmtud-check."""
    c = r.clamp
    if c and c.get("to") is not None:
        hop = c.get("changed_after")
        at = (f"after hop {c['changed_after_ttl']} ({hop})" if hop else
              "on this host before it left" if c.get("changed_after_ttl") == 0 else
              (c.get("note") or "on the way"))
        text = (f"our SYN left with MSS {c['sent']} and arrived with {c['to']} {at}: that router clamps the MSS "
                f"(both directions, usually), so the target sends at most {c['to']}-byte segments")
        legacy = [f for f in r.findings if f["code"] == "mss-536-legacy"]
        if legacy and c["to"] in LEGACY_MSS:
            # the 536 the host uses is the clamp's doing, not its own default
            for f in legacy:
                r.findings.remove(f)
            text += "; the 536-byte segments are explained by it, not by a legacy host default"
        r.add_finding("mss-clamped", text, "high" if hop or c.get("changed_after_ttl") == 0 else "medium")
    p = r.pmtud
    if not p or not p.get("verdict"):
        return
    limit = p["mtu"] - (60 if r.family == "ipv6" else 40) if p.get("mtu") else None
    said = (f"after an ICMP {'packet too big' if r.family == 'ipv6' else 'fragmentation needed'} for MTU "
            f"{p['mtu']} quoting its {p['segment']}-byte segment on port {p['port']}")
    if p["verdict"] == "honours":
        r.add_finding("target-honours-ptb", f"{r.address} resent the data in {p['after']}-byte segments "
                      f"(at most {limit}) {said}: it does PMTU discovery", "high")
    elif p["verdict"] == "clears-df":
        when = "never set DF" if p.get("df_before") is False else "cleared DF"
        r.add_finding("target-clears-df", f"{r.address} {when} (resent {p['after']}-byte segments without DF {said}): "
                      "it does no PMTU discovery and relies on routers to fragment its segments (slow, and lost "
                      "behind filters that drop fragments); set its MSS to the path or turn PMTU discovery on",
                      "high")
    else:
        r.add_finding("target-ignores-ptb", f"{r.address} resent {p['after']}-byte segments with DF {said}: it "
                      "ignores the message, so behind any path with a smaller MTU its connections hang; set its "
                      f"MSS to the path (at most {limit} here) or turn PMTU discovery on", "high")


PMTUD_CODES = {"honours": ("target-honours-ptb", "info"), "ignores": ("target-ignores-ptb", "problem"),
               "clears-df": ("target-clears-df", "warning")}


def target_pmtud(p: ProbeResult, platform=None, release: Optional[str] = None):
    """The --pmtud-check verdict of a (saved) probe as a triage Finding, with the advice of
    the target's platform module (toolkit/platforms/<os>.py `pmtud`) and the network's.
    For triage's rules: `f = target_pmtud(p, host.platform, host.facts.release)`."""
    from toolkit.findings import Finding
    from toolkit.platforms import network
    d = p.pmtud or {}
    verdict = d.get("verdict")
    if verdict not in PMTUD_CODES:
        return None
    code, severity = PMTUD_CODES[verdict]
    text = next((f["text"] for f in p.findings if f["code"] == code), None)
    titles = {"honours": f"{p.target} does PMTU discovery",
              "ignores": f"{p.target} ignores 'fragmentation needed': no PMTU discovery",
              "clears-df": f"{p.target} sends without DF: no PMTU discovery, routers fragment"}
    recs = []
    if verdict != "honours":
        if platform is not None and hasattr(platform, "pmtud"):
            recs += platform.pmtud(verdict, p.pmtu, release, p.family)
        recs += network.target_pmtud(p.pmtu, p.family)
    evidence = [f"probe of {p.target}: {text}" if text else f"probe of {p.target}: --pmtud-check: {verdict}"]
    return Finding(code, titles[verdict], evidence, "high", severity, recs,
                   {"target": p.target, "port": d.get("port"), "mtu": d.get("mtu"), "segment": d.get("segment"),
                    "after": d.get("after"), "df_before": d.get("df_before"), "df_after": d.get("df_after")})
