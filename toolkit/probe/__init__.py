"""Live prober: path MTU, PMTUD black holes and the MSS a host advertises and uses.

Importing this package is cheap: scapy, which builds and reads the probes, is loaded
only when raw probes are sent (toolkit/probe/packets.py).
"""
from toolkit.probe.result import ProbeResult, finding, mss_info

__all__ = ["ProbeResult", "finding", "mss_info"]
