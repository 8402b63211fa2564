"""toolkit.calc against the seeds' own figures and the textbook encapsulation sizes."""
import math

import pytest

from toolkit import calc

# seed 004 Table 1: 1 MEG FTP get, packets and bytes both ways (data + the PC's ACKs)
TABLE1 = {536: (3050, 1236066), 1460: (1204, 1121312)}
MEG = 1024 * 1024


def within(value, expected, share):
    return abs(value - expected) <= share * expected


@pytest.mark.parametrize("mss", [536, 1460])
def test_table1_default_ack_model_within_10_percent(mss):
    t = calc.transfer(MEG, mss)          # one ACK per two segments, plus open and close
    packets, wire = TABLE1[mss]
    assert within(t.packets, packets, 0.10), (t.packets, packets)
    assert within(t.wire_bytes, wire, 0.10), (t.wire_bytes, wire)


@pytest.mark.parametrize("mss", [536, 1460])
def test_table1_window_limited_model_within_5_percent(mss):
    # 8 KiB window (STCP advertises window 2000 hex in seed Figure 1): odd segments ACKed alone
    t = calc.transfer(MEG, mss, window=8192)
    packets, wire = TABLE1[mss]
    assert within(t.packets, packets, 0.05), (t.packets, packets)
    assert within(t.wire_bytes, wire, 0.05), (t.wire_bytes, wire)


def test_table1_shape_fewer_packets_and_bytes():
    c = calc.compare_transfer(MEG, 536, 1460)
    # seed: 60.52 % fewer packets, 9.28 % fewer bytes
    assert 55 <= c["fewer_packets_pct"] <= 66
    assert 7 <= c["fewer_bytes_pct"] <= 11


def test_transfer_counts_are_exact_for_a_simple_case():
    t = calc.transfer(1460 * 10, 1460, handshake=False)
    assert (t.segments, t.acks, t.packets) == (10, 5, 15)
    assert t.ip_bytes == 14600 + 15 * 40
    assert t.wire_bytes == 14600 + 15 * 58


def test_seed002_bdp_figures():
    b = calc.bdp(calc.parse_rate("10G"), calc.parse_time("20ms"))
    assert b.bdp_bytes == 25_000_000
    assert b.buffer_bytes == 50_000_000
    assert b.buffer_mib_rounded == 52_428_800
    assert "net.ipv4.tcp_rmem='10240 87380 52428800'" in b.sysctl[0]
    assert calc.bdp(10e9, calc.parse_time("50ms")).bdp_bytes == 62_500_000


def test_bbr_factor_four():
    assert calc.bdp(10e9, 0.02, factor=4).buffer_mib_rounded == 4 * 25 * calc.MIB


@pytest.mark.parametrize("encaps,ip_mtu,mss", [
    ("", 1500, 1460), ("pppoe", 1492, 1452), ("pppoe,vlan", 1492, 1452), ("gre", 1476, 1436),
    ("vxlan", 1450, 1410), ("mpls", 1492, 1452), ("mpls:1", 1496, 1456), ("mpls:3", 1488, 1448),
    ("qinq", 1500, 1460), ("ipsec", 1438, 1398), ("ipsec,gre", 1414, 1374), ("gre,ipsec", 1406, 1366),
])
def test_mss_for_encapsulations(encaps, ip_mtu, mss):
    r = calc.mss_for(1500, encaps=calc.parse_encaps(encaps))
    assert (r.ip_mtu, r.mss) == (ip_mtu, mss)


def test_ipsec_esp_arithmetic():
    # 1438 inner + 2 trailer = 1440 = 90 blocks; 20 + 8 + 16 + 1440 + 12 = 1496 <= 1500; one more block would not fit
    r = calc.mss_for(1500, encaps=[("ipsec", None)])
    assert 20 + 8 + 16 + (r.ip_mtu + 2) + 12 <= 1500
    assert 20 + 8 + 16 + (r.ip_mtu + 2 + 16) + 12 > 1500


def test_vlan_costs_frame_not_mtu():
    plain, tagged = calc.mss_for(1500), calc.mss_for(1500, encaps=[("vlan", None)])
    assert tagged.mss == plain.mss and tagged.frame_overhead == plain.frame_overhead + 4


def test_jumbo_and_ipv6_and_options():
    assert calc.mss_for(9000).mss == 8960
    assert calc.mss_for(1500, "ipv6").mss == 1440
    r = calc.mss_for(1500, tcp_options=12, ip_options=4)
    assert (r.mss, r.payload) == (1456, 1444)
    assert calc.mss_for(1500).vos_min_mss == 1480      # STCP counts the TCP header
    assert calc.mss_for(1500).frame_overhead == calc.SEGMENT_OVERHEAD == 58


def test_overhead_share_seed004():
    assert math.isclose(calc.overhead_share(536), 58 / 594)
    assert calc.overhead_share(1460) < calc.overhead_share(536) / 2


def test_mathis_bound():
    assert math.isclose(calc.mathis(1460, 0.05, 1e-4), 8 * 1460 / 0.05 * 100)
    pts = calc.mathis_curve(0.05, 1e-4, [536, 8960], cap_bps=1e8)
    assert pts[0][1] < pts[1][1] == 1e8


@pytest.mark.parametrize("fn,text,value", [
    (calc.parse_rate, "10G", 10e9), (calc.parse_rate, "100M", 100e6), (calc.parse_rate, "1.5Gbit/s", 1.5e9),
    (calc.parse_rate, "64k", 64e3), (calc.parse_size, "1MB", 10 ** 6), (calc.parse_size, "1MiB", MEG),
    (calc.parse_size, "64KiB", 65536), (calc.parse_size, "1500", 1500), (calc.parse_time, "20ms", 0.02),
    (calc.parse_time, "0.05s", 0.05), (calc.parse_time, "250us", 250e-6), (calc.parse_loss, "0.01%", 1e-4),
    (calc.parse_loss, "1e-4", 1e-4),
])
def test_units(fn, text, value):
    assert math.isclose(fn(text), value)


@pytest.mark.parametrize("fn,text", [
    (calc.parse_rate, "10 furlongs"), (calc.parse_rate, "0"), (calc.parse_rate, "-5M"),
    (calc.parse_size, "1.5"), (calc.parse_size, "lots"), (calc.parse_time, "soon"), (calc.parse_time, "0ms"),
    (calc.parse_loss, "2"), (calc.parse_loss, "0"), (calc.parse_loss, "nan"), (calc.parse_loss, "x%"),
])
def test_bad_units(fn, text):
    with pytest.raises(ValueError):
        fn(text)


@pytest.mark.parametrize("kw", [dict(mtu=40), dict(mtu=1500, ip_options=3), dict(mtu=1500, family="ipx"),
                                dict(mtu=80, encaps=[("vxlan", None)]), dict(mtu=1500, family="ipv6", ip_options=4)])
def test_bad_mss_inputs(kw):
    with pytest.raises(ValueError):
        calc.mss_for(**kw)


def test_unknown_encap():
    with pytest.raises(ValueError, match="unknown encapsulation 'ppp'"):
        calc.parse_encaps("ppp")
