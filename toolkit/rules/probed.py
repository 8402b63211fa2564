"""The prober's evidence as findings, in one wording for `mssdiag probe` and triage.

`judge(result)` gives one probe result (live or saved) its findings: the stable codes of
docs/probe.md, a sentence each and how sure we are (`mssdiag probe` prints them). The
triage rules below read a host's probes through the same sentences: the router that
rewrites the MSS (`probe --trace`) and whether the target does PMTU discovery (`probe
--pmtud-check`), with the platform's and the network's advice.

Only evidence comes in (toolkit/probe/result.py: the fields a probe measured); nothing
here sends a packet or imports the prober.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from toolkit.findings import Finding
from toolkit.platforms import network
from toolkit.probe.result import HIGH_SILENCE, ProbeResult
from toolkit.rules import impact
from toolkit.stack import mss_for

# Stable finding codes of `mssdiag probe` -> one-line meaning (docs/probe.md lists them too).
CODES: Dict[str, str] = {
    "pmtu-reduced": "path MTU below the local interface MTU",
    "pmtud-black-hole": "big DF probes vanish without ICMP while small ones pass",
    "echo-filtered": "target does not answer ICMP echo; another probe method was used",
    "mss-536-legacy": "host sends 536-byte segments although a larger MSS was advertised "
                      "(legacy STCP / TCP_OS non-local default)",
    "synack-mss-below-path": "SYN-ACK MSS below what the path allows (host setting or middlebox clamping)",
    "mss-above-path": "advertised or used MSS above what the path allows (fragmentation or black hole ahead)",
    "no-answer": "target answered no probe at all (down, or everything filtered)",
    "port-closed": "TCP port refused or did not answer; no MSS check on it",
    "no-data": "connection made but the host sent no data; the used MSS is unknown",
    "unreachable": "a router answered 'destination unreachable' (network, host, administratively "
                   "prohibited...): the probes never reached the target",
    "icmp-rate-limited": "a router rate-limits its ICMP 'fragmentation needed': PMTU discovery through it is slow",
    "mss-clamped": "a router on the path rewrites the MSS option of our SYNs (--trace names the hop)",
    "target-honours-ptb": "the target shrinks its segments after 'fragmentation needed': it does PMTU discovery",
    "target-ignores-ptb": "the target keeps sending DF segments too big for the announced MTU: "
                          "no PMTU discovery, its connections hang behind a smaller MTU",
    "target-clears-df": "the target sends without DF (from the start or after 'fragmentation needed'): "
                        "no PMTU discovery, routers must fragment its segments",
}

LEGACY_MSS = (512, 536)      # TCP_OS before VOS 14.7 used 512, STCP and TCP_OS since 536 (Stratus, "Tuning your MSS")
PMTUD_CODES = {"honours": ("target-honours-ptb", "info"), "ignores": ("target-ignores-ptb", "problem"),
               "clears-df": ("target-clears-df", "warning")}
PMTUD = tuple(code for code, _ in PMTUD_CODES.values())


def path_mss(r: ProbeResult) -> Optional[int]:
    return mss_for(r.pmtu, r.family)


# ---- one probe result: what `mssdiag probe` prints ----------------------------------------
def judge(r: ProbeResult) -> ProbeResult:
    """Set r.findings from r's evidence (replacing any), and return r."""
    r.findings = []
    conf = r.confidence or "high"
    pm = path_mss(r)
    if r.pmtu is None and r.unreachable:
        u = r.unreachable[0]
        r.add_finding("unreachable", f"{u['source']} answered '{u['reason']}' to our probes of {r.address}: "
                      "they never reached it", "high")
    elif r.pmtu is None and r.rounds:
        r.add_finding("no-answer", f"{r.address} answered none of {r.probes} probes: down, or everything filtered",
                      "medium")
    if r.rate_limited:
        r.add_finding("icmp-rate-limited", r.rate_limited, r.confidence or "medium")
    if r.echo_filtered:
        r.add_finding("echo-filtered", f"{r.address} does not answer ICMP echo; the path MTU was "
                      f"probed with {r.probe_method} instead", "high")
    if r.pmtu is not None and r.local_mtu and r.pmtu < r.local_mtu:
        where = f" ({'reported by' if r.pmtu_method == 'icmp' else 'after'} {r.hop})" if r.hop else ""
        r.add_finding("pmtu-reduced", f"path MTU {r.pmtu} is below the local interface MTU {r.local_mtu}{where}; "
                      f"TCP segments must stay at or below MSS {pm}", conf)
    if r.black_hole:
        where = f" after {r.hop}" if r.hop else ""
        why = ""
        if r.silence_s is not None and r.silence_s < HIGH_SILENCE:
            why = (f" (no ICMP came for {r.silence_s:.1f} s; a router that sends it less often than that looks "
                   f"the same: --icmp-wait {HIGH_SILENCE:g} tells them apart)")
        r.add_finding("pmtud-black-hole",
                      f"DF packets above {r.pmtu} bytes vanish{where} without ICMP 'fragmentation needed'{why}: "
                      f"TCP sessions that send segments above MSS {pm} will hang (PMTU discovery cannot work); "
                      f"clamp the MSS to {pm} or let that ICMP through", conf)
    for m in r.mss_ports:
        _mss_findings(r, m, pm)
    text = clamp_text(r)
    if text:
        if "mss-536-legacy" in r.codes() and r.clamp["to"] in LEGACY_MSS:
            # the 536 the host uses is the clamp's doing, not its own default
            r.findings = [f for f in r.findings if f["code"] != "mss-536-legacy"]
            text += "; the 536-byte segments are explained by it, not by a legacy host default"
        r.add_finding("mss-clamped", text, "high" if _clamp_hop_known(r) else "medium")
    verdict = (r.pmtud or {}).get("verdict")
    if verdict in PMTUD_CODES:
        r.add_finding(PMTUD_CODES[verdict][0], pmtud_text(r), "high")
    return r


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
    big_enough = (m.get("bytes") or 0) > (seg or 0)
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
        ours = min(synack, mss_for(r.local_mtu, r.family)) if synack and r.local_mtu else synack
        over = [x for x in (("SYN-ACK MSS", ours), ("segments of", seg)) if x[1] is not None and x[1] > pm]
        if over:
            what = " and ".join(f"{k} {v}" for k, v in over)
            r.add_finding("mss-above-path",
                          f"port {port}: {what} above the path's MSS {pm}: such segments are fragmented"
                          f"{' or vanish in the black hole' if r.black_hole else ' or need PMTU discovery'}",
                          "high" if r.pmtu_method != "inferred" else (r.confidence or "medium"))


def _clamp_hop_known(p: ProbeResult) -> bool:
    c = p.clamp or {}
    return bool(c.get("changed_after")) or c.get("changed_after_ttl") == 0


def clamp_text(p: ProbeResult) -> Optional[str]:
    """What the clamp locator found, in words (None: no rewrite seen)."""
    c = p.clamp or {}
    if c.get("to") is None:
        return None
    hop = c.get("changed_after")
    at = (f"after hop {c['changed_after_ttl']} ({hop})" if hop else
          "on this host before it left" if c.get("changed_after_ttl") == 0 else
          (c.get("note") or "on the way"))
    return (f"our SYN left with MSS {c['sent']} and arrived with {c['to']} {at}: that router clamps the MSS "
            f"(both directions, usually), so the target sends at most {c['to']}-byte segments")


def pmtud_text(p: ProbeResult) -> str:
    """What the target did with our forged 'fragmentation needed' (--pmtud-check), in words."""
    d = p.pmtud
    limit = mss_for(d.get("mtu"), p.family) if d.get("mtu") else None
    said = (f"after an ICMP {'packet too big' if p.family == 'ipv6' else 'fragmentation needed'} for MTU "
            f"{d.get('mtu')} quoting its {d.get('segment')}-byte segment on port {d['port']}")
    if d["verdict"] == "honours":
        return (f"{p.address} resent the data in {d.get('after')}-byte segments (at most {limit}) {said}: it does "
                "PMTU discovery")
    if d["verdict"] == "clears-df":
        when = "never set DF" if d.get("df_before") is False else "cleared DF"
        return (f"{p.address} {when} (resent {d.get('after')}-byte segments without DF {said}): it does no PMTU "
                "discovery and relies on routers to fragment its segments (slow, and lost behind filters that "
                "drop fragments); set its MSS to the path or turn PMTU discovery on")
    return (f"{p.address} resent {d.get('after')}-byte segments with DF {said}: it ignores the message, so behind any "
            f"path with a smaller MTU its connections hang; set its MSS to the path (at most {limit} here) or turn "
            "PMTU discovery on")


# ---- a host's probes: triage's rules -------------------------------------------------------
def clamp_explains(p, size: Optional[int]) -> bool:
    """The probe located a router that clamps the MSS to `size` or less: the small SYN-ACK
    or segments are that router's doing, not the host's own default."""
    c = getattr(p, "clamp", None) or {}
    return size is not None and c.get("to") is not None and size <= c["to"]


def clamped(host) -> List[Finding]:
    out = []
    for p in host.probes:
        c = p.clamp or {}
        to = c.get("to")
        if to is None:
            continue
        hop, ttl = c.get("changed_after"), c.get("changed_after_ttl")
        where = (f"after hop {ttl} ({hop}: that router, or a middlebox right behind it)" if hop else
                 "on this host, before the SYN left" if ttl == 0 else (c.get("note") or "somewhere on the path"))
        ev = [f"probe of {p.target}: {clamp_text(p)}"]
        ev += [f"hop {h['ttl']} ({h.get('address') or '*'}) quoted MSS {h['mss']}" for h in c.get("hops") or []
               if h.get("mss") is not None]
        limit = path_mss(p)
        data = {"target": p.target, "sent": c.get("sent"), "to": to, "changed_after": hop, "changed_after_ttl": ttl,
                "port": c.get("port"), "path_mss": limit}
        recs = []
        if limit is not None and to < limit:
            # clamped below what the path carries: every connection through it sends small segments
            severity, title = "warning", f"the MSS is clamped to {to} {where}; the path carries {limit}"
            data["impact"] = impact.mss_change(to, limit, host.facts.rtt_s, host.facts.loss, host.facts.bandwidth_bps)
            recs.append(network.raise_clamp(hop, to, p.pmtu, p.family))
            if to in LEGACY_MSS:
                ev.append(f"the {to}-byte segments are the clamp's doing, not a legacy host default")
        else:
            severity, title = "info", f"the MSS is clamped to {to} {where}, which the path carries"
        conf = "high" if _clamp_hop_known(p) else "medium"
        out.append(Finding("mss-clamped", title, ev, conf, severity, recs, data))
    return out


def target_pmtud(p: ProbeResult, platform=None, release: Optional[str] = None) -> Optional[Finding]:
    """The --pmtud-check verdict of a (saved) probe as a triage Finding, with the advice of
    the target's platform module (toolkit/platforms/<os>.py `pmtud`) and the network's."""
    d = p.pmtud or {}
    verdict = d.get("verdict")
    if verdict not in PMTUD_CODES:
        return None
    code, severity = PMTUD_CODES[verdict]
    titles = {"honours": f"{p.target} does PMTU discovery",
              "ignores": f"{p.target} ignores 'fragmentation needed': no PMTU discovery",
              "clears-df": f"{p.target} sends without DF: no PMTU discovery, routers fragment"}
    recs = []
    if verdict != "honours":
        if platform is not None and hasattr(platform, "pmtud"):
            recs += platform.pmtud(verdict, p.pmtu, release, p.family)
        recs += network.target_pmtud(p.pmtu, p.family)
    evidence = [f"probe of {p.target}: {pmtud_text(p)}"]
    return Finding(code, titles[verdict], evidence, "high", severity, recs,
                   {"target": p.target, "port": d.get("port"), "mtu": d.get("mtu"), "segment": d.get("segment"),
                    "after": d.get("after"), "df_before": d.get("df_before"), "df_after": d.get("df_after")})


def pmtud(host) -> List[Finding]:
    found = (target_pmtud(p, host.platform, host.facts.release) for p in host.probes)
    return [f for f in found if f is not None]
