"""Live prober: path MTU, PMTUD black holes and the MSS a host advertises and uses.

Importing this package is cheap: packets are built and read with `struct`, and no
packet library is loaded at all.
"""
from toolkit.probe.result import FINDING_CODES, ProbeResult, finding, mss_info

__all__ = ["FINDING_CODES", "ProbeResult", "finding", "mss_info"]
