"""The Linux parser's tricky rules: zero omission versus excerpts, section boundaries,
wording variants, IPv6 separation, bad numbers, nstat modes, detection."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parsers
from parsers import linux
from parsers.model import ALL, COUNTERS
from fixturelib import frag

ZEROS = dict.fromkeys(COUNTERS, 0)

FULL_IP = """Ip:
    Forwarding: 2
    1379 total packets received
    0 forwarded
    0 incoming packets discarded
    1379 incoming packets delivered
    908 requests sent out
{block}Icmp:
    1 ICMP messages received
"""


def one(text, os_name="linux"):
    snaps = parsers.parse(text, os=os_name)
    assert len(snaps) == 1, [s.to_dict() for s in snaps]
    return snaps[0]


def test_full_section_gives_zero_for_lines_net_tools_left_out():
    snap = one(FULL_IP.format(block="    12 reassemblies required\n    6 packets reassembled ok\n"))
    assert frag(snap.ipv4) == dict(ZEROS, ReasmReqds=12, ReasmOKs=6)
    assert snap.format == "netstat -s" and snap.warnings == []


def test_full_section_with_no_fragment_lines_is_all_zero():
    assert one(FULL_IP.format(block="")).ipv4 == dict(ZEROS, InReceives=1379, InDelivers=1379, OutRequests=908,
                                                       ForwDatagrams=0)


def test_traffic_lines_and_forwarding_flag():
    snap = one(FULL_IP.replace("Forwarding: 2", "Forwarding: 1").replace("0 forwarded", "5000 forwarded")
               .format(block=""))
    assert snap.forwarding is True
    assert {k: snap.ipv4[k] for k in ("InReceives", "InDelivers", "OutRequests", "ForwDatagrams")} == \
        {"InReceives": 1379, "InDelivers": 1379, "OutRequests": 908, "ForwDatagrams": 5000}
    assert one(FULL_IP.format(block="")).forwarding is False
    assert one("    12 reassemblies required\n").forwarding is None


def test_grep_excerpt_leaves_unshown_counters_unknown():
    snap = one("$ netstat -s | grep reass\n    12 reassemblies required\n    6 packets reassembled ok\n")
    assert frag(snap.ipv4) == dict.fromkeys(COUNTERS, None) | {"ReasmReqds": 12, "ReasmOKs": 6}
    assert snap.format == "netstat -s excerpt"


def test_grep_that_kept_the_ip_header_is_still_an_excerpt():
    snap = one("Ip:\n    12 reassemblies required\n    6 packets reassembled ok\nIcmp:\n")
    assert snap.ipv4["ReasmFails"] is None and snap.ipv4["FragCreates"] is None
    assert snap.ipv4["ReasmReqds"] == 12


def test_section_cut_short_zero_fills_only_what_the_kernel_orders_before_the_last_line():
    text = FULL_IP.format(block="    3 reassemblies required\n    2 packets reassembled ok\n").split("Icmp:")[0]
    snap = one(text)
    assert frag(snap.ipv4) == {"ReasmTimeout": 0, "ReasmReqds": 3, "ReasmOKs": 2, "ReasmFails": None,
                         "FragOKs": None, "FragFails": None, "FragCreates": None}
    assert any("cut short" in w and "FragCreates" in w for w in snap.warnings)


def test_line_printed_after_the_fragment_block_completes_the_section():
    text = FULL_IP.format(block="    5 fragments created\n    OutTransmits: 908\n").split("Icmp:")[0]
    snap = one(text)
    assert frag(snap.ipv4) == dict(ZEROS, FragCreates=5) and snap.warnings == []


@pytest.mark.parametrize("line,counter", [
    ("7 fragments dropped after timeout", "ReasmTimeout"),
    ("7 reassemblies required", "ReasmReqds"),
    ("7 packets reassembled ok", "ReasmOKs"),
    ("7 packet reassembles failed", "ReasmFails"),        # net-tools <= 1.60
    ("7 packet reassemblies failed", "ReasmFails"),       # later net-tools
    ("7 fragments received ok", "FragOKs"),               # old wording for outgoing datagrams fragmented
    ("7 outgoing packets fragmented ok", "FragOKs"),
    ("7 fragments failed", "FragFails"),
    ("7 outgoing packets failed fragmentation", "FragFails"),
    ("7 fragments created", "FragCreates"),
])
def test_every_wording_maps_to_its_counter(line, counter):
    snap = one(FULL_IP.format(block=f"    {line}\n"))
    assert frag(snap.ipv4) == dict(ZEROS, **{counter: 7})
    assert snap.raw[line[2:]] == "7" and "Forwarding" in snap.raw


def test_udp_udplite_sctp_lines_never_reach_ipv4():
    text = FULL_IP.format(block="    4 reassemblies required\n") + (
        "Udp:\n    99 packets received\n    98 fragments created\nUdpLite:\n    97 packets reassembled ok\n"
        "Sctp:\n    96 Number of messages reassembled \n    95 fragments failed\n")
    snap = one(text)
    assert frag(snap.ipv4) == dict(ZEROS, ReasmReqds=4)
    assert snap.ipv6 is None


def test_udp_section_alone_gives_no_ipv4():
    with pytest.raises(parsers.ParseError):
        parsers.parse("Udp:\n    12 packets received\nUdpLite:\n    3 fragments created\n", os="linux")


NETSTAT_6 = """Ip6:
    10 total packets received
    0 incoming packets discarded
    10 incoming packets delivered
    0 forwarded
    20 requests sent out
    8 reassemblies required
    2 packets reassembled ok
    3 outgoing multicast packets
    Ip6InOctets: 128
Icmp6:
    1 ICMP messages received
"""


def test_ip6_section_goes_to_ipv6_only():
    snap = one(NETSTAT_6)
    assert snap.ipv4 is None
    assert frag(snap.ipv6) == dict(ZEROS, ReasmReqds=8, ReasmOKs=2)
    assert snap.raw == {"Ip6: reassemblies required": "8", "Ip6: packets reassembled ok": "2",
                        "Ip6: total packets received": "10", "Ip6: forwarded": "0",
                        "Ip6: incoming packets delivered": "10", "Ip6: requests sent out": "20"}
    assert snap.ipv6["OutRequests"] == 20


def test_ip_and_ip6_sections_stay_apart():
    snap = one(FULL_IP.format(block="    5 reassemblies required\n") + NETSTAT_6)
    assert frag(snap.ipv4) == dict(ZEROS, ReasmReqds=5)
    assert frag(snap.ipv6) == dict(ZEROS, ReasmReqds=8, ReasmOKs=2)


SNMP = ("Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos "
        "InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout ReasmReqds ReasmOKs "
        "ReasmFails FragOKs FragFails FragCreates\n"
        "Ip: 1 64 500 0 0 0 0 0 400 300 0 0 {timeout} 30 10 {fails} 0 0 0\n"
        "Udp: InDatagrams NoPorts InErrors OutDatagrams\nUdp: 5 0 0 5\n")


def test_proc_net_snmp_reasm_timeout_is_a_count():
    snap = one(SNMP.format(timeout=2, fails=2))
    assert snap.format == "/proc/net/snmp"
    assert frag(snap.ipv4) == dict(ZEROS, ReasmTimeout=2, ReasmReqds=30, ReasmOKs=10, ReasmFails=2)


def test_proc_net_snmp6_goes_to_ipv6():
    snap = one("Ip6InReceives                   \t12\nIp6ReasmTimeout \t0\nIp6ReasmReqds   \t6\n"
               "Ip6ReasmOKs \t3\nIp6ReasmFails\t0\nIp6FragOKs\t1\nIp6FragFails\t0\nIp6FragCreates\t4\n")
    assert snap.format == "/proc/net/snmp6"
    assert snap.ipv4 is None
    assert frag(snap.ipv6) == dict(ZEROS, ReasmReqds=6, ReasmOKs=3, FragOKs=1, FragCreates=4)


def test_snmp_column_mismatch_warns_and_reports_nothing():
    text = SNMP.format(timeout=0, fails=0).replace(" 30 10 ", " 30 ", 1)
    warnings = []
    assert list(parsers.iter_parse(text, os="linux", warn=warnings.append)) == []
    assert any("19 names but 18 values" in w and "holds none of its counters" in w for w in warnings)
    reading = linux.read(text.splitlines())
    assert reading.ipv4 == {} and any("19 names but 18 values" in w for w in reading.warnings)


@pytest.mark.parametrize("text,label", [
    (FULL_IP.format(block="    12x reassemblies required\n"), "reassemblies required"),
    (SNMP.format(timeout=0, fails="1O"), "Ip: ReasmFails"),
    ("#kernel\nIpReasmReqds   1e3   0.0\nTcpInSegs  5  0.0\n", "IpReasmReqds"),
])
def test_a_bad_number_warns_instead_of_vanishing(text, label):
    snap = one(text)
    assert any(label in w and "not a whole number" in w for w in snap.warnings), snap.warnings
    name = {"reassemblies required": "ReasmReqds", "Ip: ReasmFails": "ReasmFails", "IpReasmReqds": "ReasmReqds"}[label]
    assert snap.ipv4[name] is None


def test_nstat_full_output_zero_fills_and_warns_about_deltas():
    snap = one("#kernel\nIpInReceives   40   0.0\nIpReasmReqds   12   0.0\nIp6InReceives  3  0.0\n"
               "TcpInSegs   5   0.0\n")
    assert snap.format == "nstat"
    assert frag(snap.ipv4) == dict(ZEROS, ReasmReqds=12)
    assert frag(snap.ipv6) == ZEROS
    assert any("increases since nstat's previous run" in w for w in snap.warnings)


def test_nstat_narrowed_to_a_pattern_leaves_the_rest_unknown():
    snap = one("# nstat -az IpReasm*\n#kernel\nIpReasmTimeout 0 0.0\nIpReasmReqds 4 0.0\n"
               "IpReasmOKs 2 0.0\nIpReasmFails 0 0.0\n")
    assert frag(snap.ipv4) == {"ReasmTimeout": 0, "ReasmReqds": 4, "ReasmOKs": 2, "ReasmFails": 0,
                         "FragOKs": None, "FragFails": None, "FragCreates": None}


@pytest.mark.parametrize("text", [
    "[root@localhost root]# netstat -s | grep reassemb\n15 reassemblies required\n5 packets reassembled ok\n",
    FULL_IP.format(block=""),
    SNMP.format(timeout=0, fails=0),
    "#kernel\nIpReasmReqds 1 0.0\n",
    "Ip6ReasmReqds \t0\nIp6ReasmOKs \t0\n",
    "3 packet reassembles failed\n",
])
def test_detect_scores_linux_forms_high(text):
    assert linux.detect(text) >= 0.8
    assert parsers.detect(text)[0][0] == "linux"


@pytest.mark.parametrize("text", [
    "ip:\n    32 fragments received\n    0 fragments dropped (dup or out of space)\n    0 fragments dropped after timeout\n",
    "# netstat -s | grep fragment\n8 fragments received\n0 fragments dropped (dup or out of space)\n",
    "IP Statistics\n\n  Reassembly Required           = 5668\n  Reassembly Successful         = 2834\n",
    "IPv4 Statistics\n\n  Packets Received = 12\n  Reassembly Required = 4\n",
    "netstat -statistics -protocol ip\nip:\n          92  ipReasmReqds\n          46  ipReasmOKs\n",
])
def test_detect_stays_off_other_stacks(text):
    assert linux.detect(text) == 0.0


def test_detect_is_lukewarm_on_wording_bsd_shares():
    assert 0 < linux.detect("5 packets reassembled ok\n0 fragments dropped after timeout\n") < 0.5


def test_cron_file_diffs_into_the_traffic_sent_between_runs():
    from fixturelib import NETSTAT
    from toolkit.hosts import deltas

    text = (NETSTAT / "linux" / "netns-cron-date-netstat-s.txt").read_text()
    steps = deltas(parsers.parse(text))
    assert [(d.ipv4["ReasmReqds"], d.ipv4["ReasmOKs"], d.ipv4["ReasmFails"]) for d in steps] == \
        [(60, 30, 0), (100, 20, 0), (0, 0, 0)]     # 30 x 2 fragments, then 20 x 5
    assert all(d.elapsed_s and d.elapsed_s > 0 for d in steps)
    assert steps[1].ratios("ipv4")["fragments_per_datagram"] == 5.0


LINUXISH = st.sampled_from([
    "Ip:", "Ip6:", "Icmp:", "Udp:", "UdpLite:", "#kernel", "    Forwarding: 2", "    OutTransmits: 9",
    "    12 reassemblies required", "    3 packets reassembled ok", "    1 packet reassembles failed",
    "    7 fragments created", "    5 total packets received", "    5 incoming packets delivered",
    "    5 requests sent out", "Ip: Forwarding DefaultTTL ReasmReqds ReasmOKs", "Ip: 1 64 3 1",
    "IpReasmReqds 4 0.0", "Ip6ReasmOKs\t2", "Sun Nov 22 03:21:36 UTC 2026", "> Ip:", "",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(LINUXISH, st.text(max_size=40)), max_size=40))
def test_any_text_gives_counters_or_parse_error(pieces):
    text = "\n".join(pieces)
    assert 0.0 <= linux.detect(text) <= 1.0
    try:
        snaps = linux.parse(text)
    except parsers.ParseError:
        return
    for snap in snaps:
        for family in (snap.ipv4, snap.ipv6):
            if family is not None:
                assert set(family) == set(ALL)
                assert all(v is None or (isinstance(v, int) and v >= 0) for v in family.values())


def test_prose_ending_in_a_colon_neither_completes_nor_hides_a_section():
    cut = FULL_IP.format(block="    3 reassemblies required\n").split("Icmp:")[0]
    snap = one(cut + "Output:\n")
    assert snap.ipv4["ReasmOKs"] is None and snap.ipv4["ReasmReqds"] == 3
    assert one("Output:\n15 reassemblies required\n").ipv4["ReasmReqds"] == 15


def test_bsd_text_forced_as_linux_does_not_leak_ip6_into_ipv4():
    text = ("ip:\n    5 packets reassembled ok\nip6:\n    9 packets reassembled ok\n"
            "udp:\n    4 fragments created\n")
    with pytest.raises(parsers.ParseError):
        parsers.parse(text, os="linux")


@pytest.mark.parametrize("line", ["    Forwarding: 2", "    Forwarding: enabled", "    Forwarding is disabled"])
def test_forwarding_line_is_not_a_counter_and_not_the_end_of_the_block(line):
    text = FULL_IP.replace("    Forwarding: 2", line).format(block="    4 reassemblies required\n")
    assert one(text.split("Icmp:")[0]).ipv4["ReasmOKs"] is None     # still cut short: OKs unknown
    assert frag(one(text).ipv4) == dict(ZEROS, ReasmReqds=4)
