"""Live prober: path MTU, PMTUD black holes and the MSS a host advertises and uses.

Importing this package is cheap: scapy is loaded only by the modules that send or
capture raw packets, when they run.
"""
from toolkit.probe.result import FINDING_CODES, ProbeResult, finding, mss_info

__all__ = ["FINDING_CODES", "ProbeResult", "finding", "mss_info"]
