"""Triage rules: evidence about one host in, findings with recommendations out.

A rule is a function `rule(host) -> List[Finding]` listed in `catalog.RULES` with the finding
codes it can produce (docs/triage.md documents each). Rules read a `triage.Host`
(facts, snapshots, deltas, probe results) and never print or touch the network.
"""
