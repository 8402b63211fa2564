"""The public documents behind mssdiag's advice, named so a customer can find them.

Reports and findings cite these, never internal file names.
"""
MSS = 'Stratus, "Tuning your MSS" (Noah Davids)'
MSS_LAB = '"Lab 13: Impact of MSS on Throughput" (Network Tools and Protocols, NSF award 1829698)'
BDP_LAB = '"Lab 8: Bandwidth-delay Product and TCP Buffer Size" (Network Tools and Protocols, NSF award 1829698)'
JUMBO = 'Jisc, "Jumbo Frames" (HEPiX IPv6 working group, CERN, 2023)'
RFC1191 = "RFC 1191 (Path MTU Discovery)"
RFC4890 = "RFC 4890 (ICMPv6 filtering: never drop Packet Too Big)"
