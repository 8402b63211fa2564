"""Stratus VOS STCP netstat -statistics: settings among the counters, prompts, detection."""
import pytest

import parsers
from parsers import solaris, vos
from parsers.model import ParseError
from fixturelib import frag

# A whole `ip:` section in STCP's count-first shape with every RFC 1213 ip variable; the
# numbers are made up (no complete public STCP dump was found), the shape is Figure 6a's.
FULL = """>system>stcp>command_library>netstat -statistics
ip:
           2  ipForwarding
          64  ipDefaultTTL
     1234567  ipInReceives
           0  ipInHdrErrors
     1230000  ipInDelivers
      987654  ipOutRequests
          60  ipReasmTimeout
          96  ipReasmReqds
          48  ipReasmOKs
           1  ipReasmFails
          10  ipFragOKs
           2  ipFragFails
          20  ipFragCreates
icmp:
          15  icmpInMsgs
tcp:
        4321  tcpActiveOpens
udp:
          99  udpInDatagrams
ready 15:19:23
"""


def test_full_ip_section_settings_stay_out_of_the_counters():
    s = parsers.parse(FULL)[0]
    assert s.os == "vos"
    assert frag(s.ipv4) == {"ReasmReqds": 96, "ReasmOKs": 48, "ReasmFails": 1, "ReasmTimeout": None,
                      "FragOKs": 10, "FragFails": 2, "FragCreates": 20}
    assert s.raw["ipReasmTimeout"] == "60" and s.raw["ipDefaultTTL"] == "64"
    assert s.ipv6 is None


def test_two_runs_in_a_row_as_in_figure_6a():
    text = FULL + FULL.replace("          96  ipReasmReqds", "         100  ipReasmReqds")
    snaps = parsers.parse(text)
    assert [s.ipv4["ReasmReqds"] for s in snaps] == [96, 100]


def test_ready_lines_and_paths_are_not_counters_or_quotes():
    s = parsers.parse(FULL)[0]
    assert set(s.raw) == {"ipForwarding", "ipDefaultTTL", "ipReasmTimeout", "ipReasmReqds", "ipReasmOKs",
                          "ipReasmFails", "ipFragOKs", "ipFragFails", "ipFragCreates", "ipInReceives",
                          "ipInDelivers", "ipOutRequests"}
    assert s.forwarding is False and s.ipv4["InReceives"] is not None
    assert s.warnings == []


def test_ipv6_lines_are_kept_in_raw_with_a_warning():
    s = parsers.parse(FULL.replace("icmp:", "          7  ipv6ReasmReqds\nicmp:"))[0]
    assert s.ipv6 is None
    assert s.raw["ipv6ReasmReqds"] == "7"
    assert any("ipv6ReasmReqds" in w for w in s.warnings)


def test_malformed_value_warns_naming_the_label():
    s = parsers.parse("ip:\n        9x6  ipReasmReqds\n         48  ipReasmOKs\n", os="vos")[0]
    assert s.ipv4["ReasmReqds"] is None and s.ipv4["ReasmOKs"] == 48
    assert any("ipReasmReqds" in w and "9x6" in w for w in s.warnings)


def test_detection_count_first_is_vos_and_equals_is_solaris():
    assert parsers.detect(FULL)[0][0] == "vos"
    assert solaris.detect(FULL) < 0.2
    sol = "IPv4\tipReasmTimeout      =    60\tipReasmReqds        =    96\n\tipReasmOKs          =    48\n"
    assert vos.detect(sol) == 0.0
    assert parsers.detect(sol)[0][0] == "solaris"


def test_detection_survives_quoting_and_blank_lines():
    quoted = "".join(f"> {line}\n\n" for line in FULL.splitlines())
    assert vos.detect(quoted) >= 0.9
    assert parsers.parse(quoted)[0].ipv4["ReasmOKs"] == 48


def test_other_protocols_only_is_not_an_ip_snapshot():
    with pytest.raises(ParseError):
        vos.parse("tcp:\n        4321  tcpActiveOpens\nudp:\n          99  udpInDatagrams\n")
