"""Every triage rule and the codes it can produce; `evaluate` runs them all on one host.

Kept apart from the package so that one source (the prober's `rules/probed.py`) loads
its own rules without every parser the triage rules read."""
from __future__ import annotations

from typing import Callable, List, Tuple

from toolkit.findings import Finding
from toolkit.rules import buffers, captured, facts, fragments, mss, path, pmtud, probed, sockets, stack

Rule = Callable[[object], List[Finding]]

RULES: List[Tuple[Rule, Tuple[str, ...]]] = [
    (mss.legacy_small_mss, ("stcp-536-nonlocal", "tcpos-small-mss", "ftx24-small-mss", "mss-536-os-unknown")),
    (path.black_hole, ("pmtud-black-hole",)),
    (path.mss_above_path, ("mss-above-path",)),
    (path.pmtu_reduced, ("path-mtu-reduced",)),
    (path.synack_below_path, ("synack-mss-below-path",)),
    (probed.clamped, ("mss-clamped",)),
    (probed.pmtud, probed.PMTUD),
    (fragments.arriving, ("reassembly-active", "reassembly-seen")),
    (fragments.failing, ("reassembly-failing",)),
    (fragments.outbound, ("fragmenting-outbound",)),
    (fragments.df_drops, ("df-drops",)),
    (fragments.router, ("router-fragmenting",)),
    (pmtud.ptb_received, ("ptb-received",)),
    (pmtud.ptb_sent, ("ptb-sent",)),
    (pmtud.timeouts_without_ptb, ("timeouts-without-ptb",)),
    (pmtud.plpmtud, ("plpmtud-active",)),
    (pmtud.blackhole_detected, ("blackhole-detected",)),
    (sockets.legacy_peers, ("peers-536",)),
    (sockets.black_holes, ("peer-black-hole",)),
    (sockets.learned_mtus, ("learned-pmtu",)),
    (facts.contradictions, ("facts-contradicted",)),
    (captured.findings, captured.CODES),
    (path.jumbo, ("jumbo-frames", "jumbo-not-end-to-end")),
    (stack.overlay_above_underlay, ("overlay-mtu-above-underlay",)),
    (stack.without_underlay, ("tunnel-without-underlay",)),
    (stack.ports_above_path, ("port-above-path",)),
    (stack.clamp_above_path, ("mss-clamp-above-path",)),
    (stack.outer_fragments, ("overlay-fragmenting-outer",)),
    (stack.predicted_vs_measured, ("path-predicted-vs-measured",)),
    (buffers.mss_limits_throughput, ("mss-limits-throughput",)),
    (buffers.buffer_size, ("buffers-below-bdp", "buffer-size-for-bdp")),
]

CODES = tuple(code for _, codes in RULES for code in codes)
_ORDER = {"problem": 0, "warning": 1, "info": 2}
_SURE = {"high": 0, "medium": 1, "low": 2}


def evaluate(host) -> List[Finding]:
    """Every rule's findings for one host, worst first (severity, then confidence)."""
    out: List[Finding] = []
    for rule, codes in RULES:
        for f in rule(host):
            assert f.code in codes, f"{rule.__name__} produced undeclared code {f.code}"
            out.append(f)
    return sorted(out, key=_rank)


def _rank(f: Finding):
    return _ORDER[f.severity], _SURE[f.confidence]


def worst(findings: List[Finding]):
    """The finding that leads a host's summary, or None."""
    return min(findings, key=_rank, default=None)
