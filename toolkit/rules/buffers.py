"""Throughput side (seeds 000, 002, 003): Mathis bound against the link, buffers against the BDP."""
from __future__ import annotations

from typing import List

from toolkit import calc, sources
from toolkit.findings import Finding, Recommendation
from toolkit.rules import impact


def current_mss(host) -> int:
    for p in host.probes:
        if p.mss.get("used"):
            return p.mss["used"]
    plat = host.platform
    if plat is not None:
        default, _ = plat.default_mss(host.facts.release, host.facts.local)
        if default:
            return default
    return host.path_mtu()[0] - calc.IPV4 - calc.TCP


def mss_limits_throughput(host) -> List[Finding]:
    f = host.facts
    if not (f.rtt_s and f.loss and f.bandwidth_bps):
        return []
    mss = current_mss(host)
    bound = calc.mathis(mss, f.rtt_s, f.loss)
    if bound >= 0.9 * f.bandwidth_bps:
        return []
    need = f.bandwidth_bps * f.rtt_s * (f.loss ** 0.5) / 8
    ev = [f"Mathis bound MSS/RTT x 1/sqrt(p) = {mss} B / {f.rtt_s * 1e3:g} ms / sqrt({f.loss:g}) = "
          f"{calc.human_rate(bound)}, below the {calc.human_rate(f.bandwidth_bps)} link",
          f"one flow would need an MSS of about {need:,.0f} bytes to fill the link at this loss"]
    path_mss = host.path_mtu()[0] - calc.IPV4 - calc.TCP
    recs = []
    if mss < path_mss:
        at_path = calc.mathis(path_mss, f.rtt_s, f.loss)
        ev.append(f"at the path's MSS {path_mss} the bound is {calc.human_rate(min(at_path, f.bandwidth_bps))}: "
                  "raise the MSS first (see the other findings)")
    base = max(mss, path_mss)   # jumbo frames are advice only when the path's own MSS is not enough
    if base < 8960 and calc.mathis(base, f.rtt_s, f.loss) < 0.9 * f.bandwidth_bps:
        gain = impact.mss_change(base, 8960, f.rtt_s, f.loss, f.bandwidth_bps)
        recs.append(Recommendation(
            "jumbo-frames-for-loss", "Larger segments recover faster from loss: consider MTU 9000 end to end",
            ["mssdiag calc mathis --mss 8960 --rtt %gms --loss %g" % (f.rtt_s * 1e3, f.loss)],
            applies_to="paths you control end to end", where="network design",
            caveats=["Seeds 000/003: jumbo frames roughly doubled throughput on lossy long paths.",
                     "Also cut the loss itself, or use parallel streams: the bound is per flow."],
            impact=gain, scope="network"))
    return [Finding("mss-limits-throughput", f"Loss and RTT cap one flow at {calc.human_rate(bound)} with MSS {mss}",
                    ev, "medium", "warning", recs, {"mss": mss, "mathis_bps": round(bound)})]


def buffer_size(host) -> List[Finding]:
    f = host.facts
    if not (f.bandwidth_bps and f.rtt_s):
        return []
    factor = 4 if (f.congestion or "").lower() == "bbr" and f.loss else 2
    b = calc.bdp(f.bandwidth_bps, f.rtt_s, factor)
    plat = host.platform
    recs = plat.buffers(b) if plat else []
    if not recs:
        return []   # the stack has no buffer knob we know of (VOS, TCP_OS, FTX) or the OS is unknown
    ev = [f"BDP = {calc.human_rate(f.bandwidth_bps)} x {f.rtt_s * 1e3:g} ms = {b.bdp_bytes:,} bytes; "
          f"{factor} x BDP = {b.buffer_bytes:,} bytes ({b.buffer_mib_rounded:,} rounded as {sources.BDP_LAB} does)"]
    if factor == 4:
        ev.append(f"BBR on a lossy path: 4 x BDP so retransmissions do not stall the receive buffer ({sources.BDP_LAB})")
    data = {"bdp_bytes": b.bdp_bytes, "factor": factor, "buffer_bytes": b.buffer_bytes,
            "buffer_mib_rounded": b.buffer_mib_rounded, "sysctl": b.sysctl}
    if f.tcp_rmem_max is not None:
        if f.tcp_rmem_max >= b.buffer_bytes:
            return []
        ev.insert(0, f"host file: tcp_rmem maximum {f.tcp_rmem_max:,} bytes caps the window at about "
                     f"{calc.human_rate(f.tcp_rmem_max / 2 * 8 / f.rtt_s)} at this RTT")
        return [Finding("buffers-below-bdp", "TCP buffers too small for the bandwidth-delay product",
                        ev, "high", "problem", recs, data)]
    return [Finding("buffer-size-for-bdp", f"Buffer sizes for this path: {b.buffer_mib_rounded:,} bytes maximum",
                    ev, "medium", "info", recs, data)]
