"""Solaris / illumos netstat -s: glued numbers, settings that look like counters, IPv6."""
import pytest

import parsers
from parsers import solaris, vos
from parsers.model import ParseError
from fixturelib import frag


def pairs(section, items):
    """Lines as illumos netstat prints them: "\\t%-20s=%6u", two pairs a line."""
    out, line = [], section
    for i, (name, value) in enumerate(items):
        line += "\t%-20s=%6s" % (name, value)
        if i & 1:
            out.append(line)
            line = ""
    if line:
        out.append(line)
    return "\n".join(out) + "\n"


V4 = [("ipForwarding", 2), ("ipDefaultTTL", 255), ("ipInReceives", 3581123456), ("ipInHdrErrors", 0),
      ("ipReasmTimeout", 60), ("ipReasmReqds", 2293219011), ("ipReasmOKs", 1146609505), ("ipReasmFails", 115947),
      ("ipReasmDuplicates", 12075), ("ipReasmPartDups", 2), ("ipFragOKs", 1015010638), ("ipFragFails", 3),
      ("ipFragCreates", 1853742743), ("ipRoutingDiscards", 0), ("udpInCksumErrs", 6538), ("udpInOverflows", 576256)]
V6 = [("ipv6Forwarding", 2), ("ipv6DefaultHopLimit", 255), ("ipv6InReceives", 207293994),
      ("ipv6OutForwDatagrams", 0), ("ipv6OutFragOKs", 11), ("ipv6OutFragFails", 1), ("ipv6OutFragCreates", 22),
      ("ipv6ReasmReqds", 40), ("ipv6ReasmOKs", 20), ("ipv6ReasmFails", 2), ("ipv6ReasmDuplicates", 5),
      ("ipv6ReasmPartDups", 0), ("udpInCksumErrs", 0), ("udpInOverflows", 0)]
SCTP = [("sctpRtoAlgorithm", "vanj"), ("sctpFragUsrMsgs", 777), ("sctpReasmUsrMsgs", 888), ("sctpInClosed", 0)]


def dump():
    return "\n" + pairs("IPv4", V4) + "\n" + pairs("IPv6", V6) + "\n" + pairs("SCTP", SCTP)


def test_glued_wide_numbers_and_ipv6_kept_apart():
    text = dump()
    assert "=2293219011" in text and "=3581123456" in text  # the glue this test is about
    snaps = parsers.parse(text)
    assert len(snaps) == 1, "udp* names repeated in the IPv6 section must not start a new snapshot"
    s = snaps[0]
    assert s.os == "solaris"
    assert frag(s.ipv4) == {"ReasmReqds": 2293219011, "ReasmOKs": 1146609505, "ReasmFails": 115947, "ReasmTimeout": None,
                      "FragOKs": 1015010638, "FragFails": 3, "FragCreates": 1853742743}
    assert frag(s.ipv6) == {"ReasmReqds": 40, "ReasmOKs": 20, "ReasmFails": 2, "ReasmTimeout": None,
                      "FragOKs": 11, "FragFails": 1, "FragCreates": 22}


def test_name_glued_to_equals_sign():
    reading = solaris.read(["\tipv6OutFragCreates=    22\tipv6ReasmReqds      =    40"])
    assert frag(reading.ipv6) == {"FragCreates": 22, "ReasmReqds": 40}


def test_reasm_timeout_is_a_setting_never_a_count():
    s = parsers.parse(dump())[0]
    assert s.ipv4["ReasmTimeout"] is None and s.ipv6["ReasmTimeout"] is None
    assert s.raw["ipReasmTimeout"] == "60"
    assert "ReasmTimeout" not in solaris.META.ipv4 and "ReasmTimeout" not in solaris.META.ipv6
    # an excerpt holding nothing but the setting still reports no timeout count
    only = solaris.read(["        ipReasmTimeout      =    60"])
    assert only.ipv4 == {} and only.raw == {"ipReasmTimeout": "60"}
    warnings = []
    assert list(parsers.iter_parse("# netstat -s | grep Timeout\n        ipReasmTimeout      =    60\n",
                                   os="solaris", warn=warnings.append)) == []
    assert any("holds none of its counters" in w for w in warnings)


def test_sctp_and_icmp_names_do_not_leak():
    s = parsers.parse(dump())[0]
    assert "sctpReasmUsrMsgs" not in s.raw and 888 not in s.ipv4.values() and 777 not in s.ipv6.values()


def test_per_interface_ipv6_sections_are_skipped_for_the_sum():
    per_if = "\nIPv6 for hme0\n" + pairs("", [("ipv6ReasmReqds", 1), ("ipv6ReasmOKs", 1)])
    per_if += "\nIPv6 for lo0\n" + pairs("", [("ipv6ReasmReqds", 39), ("ipv6ReasmOKs", 19)])
    for text in ("\n" + pairs("IPv4", V4) + per_if + "\n" + pairs("IPv6", V6),   # as netstat -s -a prints
                 "\n" + pairs("IPv4", V4) + "\n" + pairs("IPv6", V6) + per_if):  # order must not matter
        snaps = parsers.parse(text)
        assert len(snaps) == 1
        assert snaps[0].ipv6["ReasmReqds"] == 40 and snaps[0].ipv6["ReasmOKs"] == 20


def test_old_solaris_header_alone_on_a_line():
    text = "IP\n \n      ipReasmTimeout      =    60      ipReasmReqds        =     2\n" \
           "      ipReasmOKs          =     1      ipReasmFails        =     0\n"
    s = parsers.parse(text)[0]
    assert (s.ipv4["ReasmReqds"], s.ipv4["ReasmOKs"], s.ipv4["ReasmFails"]) == (2, 1, 0)
    assert s.ipv6 is None


def test_negative_value_from_signed_printing_warns_and_is_left_out():
    s = parsers.parse("\nIP" + "\t%-20s=%6d" % ("ipReasmReqds", -1294967296) + "\n")[0]
    assert s.ipv4["ReasmReqds"] is None
    assert any("ipReasmReqds" in w and "3000000000" in w for w in s.warnings)


def test_malformed_value_warns_naming_the_label():
    s = parsers.parse(pairs("IPv4", [("ipReasmReqds", "12x4"), ("ipReasmOKs", 5)]))[0]
    assert s.ipv4["ReasmReqds"] is None and s.ipv4["ReasmOKs"] == 5
    assert any("ipReasmReqds" in w and "12x4" in w for w in s.warnings)


def test_detection_does_not_confuse_solaris_with_vos_or_snmpwalk():
    sol = dump()
    count_first = "ip:\n          92  ipReasmReqds\n          46  ipReasmOKs\n"
    assert parsers.detect(sol)[0][0] == "solaris"
    assert vos.detect(sol) == 0.0
    assert solaris.detect(count_first) == 0.0
    assert solaris.detect("IP-MIB::ipReasmReqds.0 = Counter32: 0\nIP-MIB::ipReasmOKs.0 = Counter32: 0\n") == 0.0


def test_truncated_section_warns():
    s = parsers.parse("IPv4\tipForwarding        =     2\tipDefaultTTL        =   255\n")[0]
    assert all(v is None for v in s.ipv4.values())
    assert any("truncated" in w for w in s.warnings)


def test_no_ip_section_is_a_parse_error():
    with pytest.raises(ParseError):
        solaris.parse(pairs("UDP", [("udpInDatagrams", 5), ("udpInErrors", 0)]))


def test_names_quoted_in_prose_are_not_netstat_output():
    with pytest.raises(ParseError):
        solaris.parse("On Solaris `ipReasmTimeout = 15` is a setting, not a count.\n")
