"""Captures as evidence: the findings `mssdiag capture` makes of pcap, pcapng, snoop and VOS
packet_monitor files, attached by the host model to the host they concern (toolkit/capture)."""
from __future__ import annotations

from typing import List

from toolkit.capture.verdicts import CODES  # noqa: F401  (the codes this rule may produce)
from toolkit.findings import Finding


def findings(host) -> List[Finding]:
    return list(host.capture_findings)
