"""Path MTU evidence from the prober: black holes, MSS above or below the path, reduced PMTU, jumbo frames."""
from __future__ import annotations

from typing import List

from toolkit import calc, sources
from toolkit.findings import Finding
from toolkit.platforms import network
from toolkit.rules import impact, mss
from toolkit.rules.probed import clamp_explains


def _header(family: str) -> int:
    return (calc.IPV6 if family == "ipv6" else calc.IPV4) + calc.TCP


def _host_fixes(host, pmtu: int, family: str):
    plat = host.platform
    return plat.black_hole(pmtu, host.facts.release, family) if plat else []


def black_hole(host) -> List[Finding]:
    out = []
    for p in host.probes:
        if not (p.black_hole or "pmtud-black-hole" in p.codes()):
            continue
        pmtu = p.pmtu or (1280 if p.family == "ipv6" else 576)
        text = next((f["text"] for f in p.findings if f["code"] == "pmtud-black-hole"), "")
        ev = [f"probe of {p.target}: DF probes above {pmtu} bytes vanished without ICMP 'fragmentation needed'"
              + (f" (near {p.hop})" if p.hop else "")]
        if text:
            ev.append(f"prober: {text}")
        ev.append(f"TCP sessions whose segments exceed {pmtu - _header(p.family)} bytes hang on this path")
        said = next((f.get("confidence") for f in p.findings if f["code"] == "pmtud-black-hole"), None)
        conf = said if said in ("high", "medium", "low") else (
            p.confidence if p.confidence in ("high", "medium", "low") else "high")
        if conf != "high":
            # silence after a pause cannot tell a black hole from a router that rate-limits its
            # ICMP: a warning to confirm, not a problem to act on
            ev.append("not certain: a router that rate-limits 'fragmentation needed' looks the same after a short "
                      f"wait; confirm with: mssdiag probe {p.target} --icmp-wait 10")
        out.append(Finding("pmtud-black-hole", f"PMTU discovery black hole on the path to {p.target} (path MTU {pmtu})",
                           ev, conf, "problem" if conf == "high" else "warning",
                           network.fixes(pmtu, p.family) + _host_fixes(host, pmtu, p.family),
                           {"target": p.target, "pmtu": pmtu, "hop": p.hop}))
    return out


def mss_above_path(host) -> List[Finding]:
    out = []
    for p in host.probes:
        if not p.pmtu or p.black_hole:
            continue
        limit = p.pmtu - _header(p.family)
        seen = [v for v in (p.mss.get("synack"), p.mss.get("used")) if v]
        if "mss-above-path" not in p.codes() and not any(v > limit for v in seen):
            continue
        ev = [f"probe of {p.target}: path MTU {p.pmtu} carries {limit}-byte segments; host advertised "
              f"{p.mss.get('synack')} and sent up to {p.mss.get('used')}"]
        out.append(Finding("mss-above-path", f"MSS above what the path to {p.target} carries",
                           ev, "high", "problem", [network.clamp(p.pmtu, p.family), network.allow_icmp(p.family)]
                           + _host_fixes(host, p.pmtu, p.family), {"target": p.target, "limit": limit}))
    return out


def pmtu_reduced(host) -> List[Finding]:
    out = []
    for p in host.probes:
        local = p.local_mtu or host.facts.mtu or 1500
        if not p.pmtu or p.black_hole or p.pmtu >= local:
            continue
        ev = [f"probe of {p.target}: path MTU {p.pmtu} ({p.pmtu_method}"
              + (f", reported by {p.hop}" if p.hop else "") + f") below the interface MTU {local}",
              "PMTU discovery works on this path now (ICMP came back), but every filter that later drops "
              "ICMP type 3 code 4 turns it into a black hole"]
        out.append(Finding("path-mtu-reduced", f"Path MTU to {p.target} is {p.pmtu}, below the local {local}",
                           ev, "high", "warning", network.fixes(p.pmtu, p.family),
                           {"target": p.target, "pmtu": p.pmtu, "local_mtu": local}))
    return out


def synack_below_path(host) -> List[Finding]:
    if host.facts.os in mss.CODES:
        return []   # the legacy-default rule explains a small MSS on these
    out = []
    for p in host.probes:
        synack = p.mss.get("synack")
        if not p.pmtu or not synack:
            continue
        limit = p.pmtu - _header(p.family)
        if "synack-mss-below-path" not in p.codes() and synack >= limit:
            continue
        if clamp_explains(p, synack):
            continue    # mss-clamped names the router that lowered it
        ev = [f"probe of {p.target}: SYN-ACK advertised MSS {synack}; the path carries {limit}",
              "either the host's own setting (route advmss, interface MTU) or a middlebox clamping too low "
              "(ip tcp adjust-mss / iptables TCPMSS with a small value)"]
        out.append(Finding("synack-mss-below-path", f"{p.target} advertises MSS {synack}, below the path's {limit}",
                           ev, "medium", "warning", [],
                           {"target": p.target, "synack": synack, "limit": limit,
                            "impact": impact.mss_change(synack, limit, host.facts.rtt_s, host.facts.loss,
                                                        host.facts.bandwidth_bps)}))
    return out


JUMBO = 9000


def jumbo(host) -> List[Finding]:
    mtu = host.facts.mtu or 0
    if mtu < JUMBO:
        return []
    mss = calc.mss_for(mtu).mss
    probed = [p for p in host.probes if p.pmtu]
    short = [p for p in probed if p.pmtu < mtu]
    ev = [f"interface MTU {mtu}: MSS {mss} (IPv4; {calc.mss_for(mtu, 'ipv6').mss} on IPv6)"]
    conditions = network.allow_icmp()
    conditions.caveats += [
        f"Every host on the LAN must use MTU {mtu}: put hosts that cannot in another LAN ({sources.JUMBO}).",
        f"Every device on the path must pass frames of at least {mtu + 80} bytes with VLAN/MPLS/VXLAN "
        f"overheads ({sources.JUMBO}: 9080 for MTU 9000); check with mssdiag calc mss --mtu 9000 --encap ...",
        "PMTU discovery must work towards sites without jumbo frames: on Linux also net.ipv4.tcp_mtu_probing=1."]
    if short:
        ev += [f"probe of {p.target}: path MTU {p.pmtu} < {mtu}: not jumbo end to end" for p in short]
        return [Finding("jumbo-not-end-to-end", f"Interface MTU {mtu} but the path carries only "
                        f"{min(p.pmtu for p in short)}", ev, "high", "warning", [conditions],
                        {"mtu": mtu, "mss": mss})]
    if probed:
        ev += [f"probe of {p.target}: path MTU {p.pmtu}: jumbo end to end" for p in probed]
    else:
        ev.append("no probe: whether the path carries jumbo frames end to end is not known")
    gain = impact.mss_change(1460, mss, host.facts.rtt_s, host.facts.loss, host.facts.bandwidth_bps)
    conditions.impact = gain
    return [Finding("jumbo-frames", f"Jumbo frames: MTU {mtu} -> MSS {mss}; conditions to keep it working",
                    ev, "high" if probed else "medium", "info", [conditions], {"mtu": mtu, "mss": mss, "impact": gain})]
