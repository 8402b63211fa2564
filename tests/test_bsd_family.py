"""BSD-derived `netstat -s` parsers: bsd, aix, hpux, ftx, tcpos (and their shared bsdstyle reader)."""
from pathlib import Path

import pytest

import parsers
from parsers import aix, bsd, bsdstyle, ftx, hpux, tcpos
from parsers.model import ALL, COUNTERS
from toolkit.hosts import deltas
from fixturelib import frag

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "netstat"
FAMILY = ("aix", "bsd", "ftx", "hpux", "tcpos")

# Figures 6d/6e/6f of seed 004: the same three lines from FTX 2.4/3.3, FTX 3.4 and HP-UX 11.
EXCERPT = ("# netstat -s | grep fragment\n8 fragments received\n"
           "0 fragments dropped (dup or out of space)\n0 fragments dropped after timeout\n")

FREEBSD = """\
udp:
\t900 datagrams received
\t7 fragments received
tcp:
\t12 packets sent
ip:
\t5000 total packets received
\t40 fragments received
\t3 fragments dropped (dup or out of space)
\t2 malformed fragments dropped
\t5 fragments dropped after timeout
\t15 packets reassembled ok
\t11 output datagrams fragmented
\t33 fragments created
\t4 datagrams that can't be fragmented
\t1 tunneling packet that can't find gif
icmp:
\t6 fragments created
\t8 datagrams that can't be fragmented
ip6:
\t700 total packets received
\t90 fragments received
\t1 fragment dropped (dup or out of space)
\t6 fragments dropped after timeout
\t2 fragments that exceeded limit
\t30 packets reassembled ok
\t0 output datagrams fragmented
\t0 fragments created
\t0 datagrams that can't be fragmented
sctp:
\t77 fragments received
\t66 output datagrams fragmented
"""


def parse_one(module, text):
    snaps = module.parse(text)
    assert len(snaps) == 1
    return snaps[0]


def test_ip6_never_leaks_into_ipv4_and_other_sections_are_ignored():
    snap = parse_one(bsd, FREEBSD)
    assert frag(snap.ipv4) == {"ReasmReqds": 40, "ReasmOKs": 15, "ReasmFails": 3 + 2, "ReasmTimeout": 5,
                         "FragOKs": 11, "FragFails": 4, "FragCreates": 33}
    # "fragments that exceeded limit" is not added to ReasmFails (it may overlap "dup or out of space")
    assert frag(snap.ipv6) == {"ReasmReqds": 90, "ReasmOKs": 30, "ReasmFails": 1, "ReasmTimeout": 6,
                         "FragOKs": 0, "FragFails": 0, "FragCreates": 0}
    assert snap.raw["fragments received"] == "40"
    assert snap.raw["ip6: fragments received"] == "90"
    assert "77" not in snap.raw.values() and "7" not in snap.raw.values()


@pytest.mark.parametrize("name", FAMILY)
def test_udp_icmp_sctp_words_never_count_in_any_family_member(name):
    text = "udp:\n\t7 fragments received\nicmp:\n\t6 fragments created\nsctp:\n\t66 output datagrams fragmented\n"
    with pytest.raises(parsers.ParseError):
        parsers.get(name).parse(text)
    mixed = text + "ip:\n\t40 fragments received\n"
    snap = parse_one(parsers.get(name), mixed)
    assert snap.ipv4["ReasmReqds"] == 40
    assert snap.ipv4["FragCreates"] in (None, 0)  # never the icmp 6
    assert snap.ipv6 is None


def test_ipv6_section_named_ipv6_goes_to_ipv6_on_aix_and_hpux():
    text = "ip:\n\t10 fragments received\nipv6:\n\t20 fragments received\n\t3 fragments dropped\n"
    assert parse_one(hpux, text).ipv6["ReasmReqds"] == 20
    assert parse_one(hpux, text).ipv6["ReasmFails"] == 3
    assert parse_one(hpux, text).ipv4["ReasmReqds"] == 10
    assert parse_one(aix, text).ipv6["ReasmReqds"] == 20


def test_three_line_excerpt_is_ambiguous_and_reads_as_bsd_by_default():
    scores = dict(parsers.detect(EXCERPT))
    for name in FAMILY:
        assert scores[name] >= scores["bsd"] - 0.05, (name, scores)
    assert max(scores, key=scores.get) == "bsd"
    warnings = []
    snaps = list(parsers.iter_parse(EXCERPT.splitlines(), warn=warnings.append))
    assert [s.os for s in snaps] == ["bsd"]
    assert len(warnings) == 1 and "ambiguous" in warnings[0]
    for name in ("bsd", "ftx", "hpux"):
        assert name in warnings[0]
    assert snaps[0].ipv4["ReasmReqds"] == 8
    assert snaps[0].ipv4["ReasmOKs"] is None  # an excerpt: lines it does not show stay null
    forced = list(parsers.iter_parse(EXCERPT.splitlines(), os="hpux", warn=warnings.append))
    assert forced[0].os == "hpux" and len(warnings) == 1


@pytest.mark.parametrize("rel,name", [
    ("bsd/macos_big_sur.txt", "bsd"),
    ("bsd/junos_show_system_statistics.txt", "bsd"),
    ("aix/collector_comment_netstat_s.txt", "aix"),
    ("aix/email_quoted_netstat_ss_p_ip.txt", "aix"),
    ("hpux/notes_11_00_sv.txt", "hpux"),
    ("hpux/white_paper_11iv3_p_ip.txt", "hpux"),
    ("tcpos/seed_fig6b.txt", "tcpos"),
    ("tcpos/email_quoted_seed_fig6b.txt", "tcpos"),
])
def test_distinctive_dumps_win_clearly(rel, name):
    ranked = parsers.detect((FIXTURES / rel).read_text(encoding="utf-8"))
    assert ranked[0][0] == name
    assert all(s < ranked[0][1] - 0.15 for n, s in ranked[1:]), ranked


def test_linux_wording_is_left_to_the_linux_parser():
    linux = ("Ip:\n    10 fragments dropped after timeout\n    76066 reassemblies required\n"
             "    38028 packets reassembled ok\n    38028 fragments received ok\n    76056 fragments created\n")
    for name in FAMILY:
        assert parsers.get(name).detect(linux) == 0.0


@pytest.mark.parametrize("bad", ["8x", "1.5", "12k", "-3", "0x1f", "1 23", "5 668 1", "1,234.567", "n/a"])
def test_malformed_number_warns_and_is_not_guessed_or_zero_filled(bad):
    text = f"ip:\n\t5000 total packets received\n\t{bad} fragments received\n\t15 packets reassembled ok\n"
    snap = parse_one(bsd, text)
    assert snap.ipv4["ReasmReqds"] is None  # not 8, and not the 0 a complete section would give
    assert snap.ipv4["ReasmOKs"] == 15
    assert any("fragments received" in w and bad in w for w in snap.warnings)
    assert snap.raw["fragments received"] == bad


@pytest.mark.parametrize("grouped", ["1 234", "1,234", "1.234", "1\u00a0234"])
def test_grouped_number_in_a_locale_is_read_whole(grouped):
    text = f"ip:\n\t5000 total packets received\n\t{grouped} fragments received\n\t15 packets reassembled ok\n"
    assert parse_one(bsd, text).ipv4["ReasmReqds"] == 1234


def test_a_sum_with_one_unreadable_part_is_no_sum():
    text = "ip:\n\t3 fragments dropped (dup or out of space)\n\t2?? malformed fragments dropped\n"
    snap = parse_one(bsd, text)
    assert snap.ipv4["ReasmFails"] is None
    assert snap.warnings


def test_macos_nested_singular_lines():
    text = ("ip:\n\t100 total packets received\n\t\t1 fragment received\n\t\t\t0 dropped (dup or out of space)\n"
            "\t\t\t1 dropped after timeout\n\t\t\t0 reassembled ok\n\t\t0 output datagram fragmented\n"
            "\t\t0 fragment created\n\t\t0 datagram that can't be fragmented\n")
    snap = parse_one(bsd, text)
    assert frag(snap.ipv4) == {"ReasmReqds": 1, "ReasmOKs": 0, "ReasmFails": 0, "ReasmTimeout": 1,
                         "FragOKs": 0, "FragFails": 0, "FragCreates": 0}


def test_zero_omitted_lines_are_zero_in_a_full_section_and_null_in_an_excerpt():
    full = "ip:\n\t100 total packets received\n\t40 fragments received\n"   # netstat -ss
    assert parse_one(bsd, full).ipv4["ReasmFails"] == 0
    assert parse_one(aix, full).ipv4["FragFails"] == 0
    excerpt = "40 fragments received\n"                                       # | grep
    assert parse_one(bsd, excerpt).ipv4["ReasmFails"] is None
    # HP-UX prints every line: nothing is filled in
    assert parse_one(hpux, full).ipv4["ReasmFails"] is None


def test_a_line_printed_twice_in_one_section_is_read_once_or_unknown_with_a_warning():
    same = bsdstyle.read(["ip:", "\t40 fragments received", "\t0 fragments created", "\t40 fragments received"],
                         "netstat -s")
    assert same.ipv4["ReasmReqds"] == 40 and same.ipv6 is None
    assert any("printed twice" in w for w in same.warnings)
    differ = bsdstyle.read(["ip:", "\t40 fragments received", "\t0 fragments created", "\t41 fragments received"],
                           "netstat -s", zero_fill=COUNTERS)
    assert "ReasmReqds" not in differ.ipv4 and differ.ipv4["FragCreates"] == 0
    assert any("different values" in w for w in differ.warnings)


def test_singular_and_plural_of_one_line_are_never_summed():
    reading = bsdstyle.read(["ip:", "\t3 fragment received", "\t3 fragments received"], "netstat -s")
    assert reading.ipv4["ReasmReqds"] == 3


def test_headerless_excerpt_second_block_is_ipv6():
    reading = bsdstyle.read(["\t8 fragments received", "\t1 fragments dropped after timeout",
                             "\t5 fragments received", "\t0 fragments dropped after timeout"], "netstat -s")
    assert (reading.ipv4["ReasmReqds"], reading.ipv6["ReasmReqds"]) == (8, 5)
    assert (reading.ipv4["ReasmTimeout"], reading.ipv6["ReasmTimeout"]) == (1, 0)
    dup = bsdstyle.read(["\t8 fragments received", "\t8 fragments received", "\t1 fragments dropped after timeout"],
                        "netstat -s")
    assert dup.ipv6 is None and dup.ipv4["ReasmReqds"] == 8


def test_tcpos_counts_both_fragments_and_datagrams():
    snap = parse_one(tcpos, (FIXTURES / "tcpos" / "seed_fig6b.txt").read_text())
    assert (snap.ipv4["ReasmReqds"], snap.ipv4["ReasmOKs"]) == (20, 10)
    assert tcpos.META.reasm_unit == "both"


def test_hpux_and_ftx34_unit_is_datagrams_and_no_ratio_is_taken():
    assert hpux.META.reasm_unit == "datagrams"
    assert "datagrams" in hpux.META.semantics and "Figure 6f" in hpux.META.semantics
    assert "ReasmOKs" not in hpux.META.ipv4
    assert ftx.META.reasm_unit != "both"
    assert "FTX 3.4 counts reassembled datagrams" in ftx.META.semantics
    assert "ReasmOKs" not in ftx.META.ipv4
    text = EXCERPT + "# netstat -s | grep fragment\n20 fragments received\n0 fragments dropped (dup or out of space)\n" \
                     "0 fragments dropped after timeout\n"
    snaps = parsers.parse(text, os="hpux")
    (delta,) = deltas(snaps)
    assert delta.ipv4["ReasmReqds"] == 12
    assert delta.ratios("ipv4")["fragments_per_datagram"] is None


@pytest.mark.parametrize("name", FAMILY)
def test_meta_names_only_ip_mib_counters(name):
    meta = parsers.get(name).META
    assert set(meta.ipv4) <= set(ALL) and set(meta.ipv6) <= set(ALL)
    assert meta.reasm_unit in ("both", "fragments", "datagrams")
    assert meta.semantics


@pytest.mark.parametrize("name", FAMILY)
@pytest.mark.parametrize("text", ["", "\x00\x01garbage", "ip:\n", "tcp:\n\t5 packets sent\n", "fragments received\n"])
def test_unreadable_text_raises_only_parse_error(name, text):
    with pytest.raises(parsers.ParseError):
        parsers.get(name).parse(text)


def test_an_excerpt_after_a_full_hpux_dump_stays_hpux_without_an_ambiguity_warning():
    full = (FIXTURES / "hpux" / "white_paper_11iv3_p_ip.txt").read_text().split("# netstat -p ipv6")[0]
    text = "Mon Mar  2 09:00:00 EST 2009\n" + full + "Mon Mar  2 09:15:00 EST 2009\n" + EXCERPT
    warnings = []
    snaps = list(parsers.iter_parse(text.splitlines(), warn=warnings.append))
    assert [s.os for s in snaps] == ["hpux", "hpux"]
    assert [s.ipv4["ReasmReqds"] for s in snaps] == [257, 8]
    assert snaps[1].taken_at == "2009-03-02T09:15:00-05:00"
    assert warnings == []


@pytest.mark.parametrize("module", [ftx, tcpos])
def test_stacks_without_ipv6_say_so_when_forced_on_a_dump_with_ip6(module):
    snap = parse_one(module, FREEBSD)
    assert snap.ipv6 is None and snap.ipv4["ReasmReqds"] == 40
    assert any("no IPv6" in w for w in snap.warnings)


def test_svr4_wording_of_bsd_descent_reads_the_same_counters():
    """SCO's netstat -s (Lachman/SVR4 TCP/IP) says 'packets reassembled', 'packets delivered',
    'total packets sent', 'packets fragmented' and 'packets not fragmentable' where 4.4BSD says
    'packets reassembled ok', 'packets for this host'...: the same kernel counters."""
    text = ("ip:\n  900 total packets received\n  12 fragments received\n  0 fragments dropped (dup or out of space)\n"
            "  1 fragments dropped after timeout\n  4 packets reassembled\n  3 packets forwarded\n  800 packets delivered\n"
            "  700 total packets sent\n  5 packets fragmented\n  2 packets not fragmentable\n  10 fragments created\nicmp:\n")
    (snap,) = parsers.iter_parse(text, os="bsd")
    assert {k: snap.ipv4[k] for k in ("ReasmReqds", "ReasmOKs", "ReasmTimeout", "FragOKs", "FragFails", "FragCreates",
                                      "InReceives", "InDelivers", "OutRequests", "ForwDatagrams")} == \
        {"ReasmReqds": 12, "ReasmOKs": 4, "ReasmTimeout": 1, "FragOKs": 5, "FragFails": 2, "FragCreates": 10,
         "InReceives": 900, "InDelivers": 800, "OutRequests": 700, "ForwDatagrams": 3}


def test_a_plain_netstat_s_section_leaves_the_lines_its_stack_lacks_unknown():
    """netstat -ss drops zero lines, so a complete section's missing counter is 0; but a section
    printing a line with 0 is a plain netstat -s, which prints every counter the stack keeps:
    4.3BSD-derived stacks (MachTen) have no reassembled, fragmented, delivered or sent lines."""
    plain = ("ip:\n57 total packets received\n0 bad header checksums\n3 fragments received\n"
             "0 fragments dropped (dup or out of space)\n0 fragments dropped after timeout\n0 packets forwarded\nicmp:\n")
    (snap,) = parsers.iter_parse(plain, os="bsd")
    assert (snap.ipv4["ReasmReqds"], snap.ipv4["ReasmOKs"], snap.ipv4["FragOKs"], snap.ipv4["InDelivers"]) == (3, None, None, None)
    terse = "ip:\n57 total packets received\n3 fragments received\nicmp:\n"          # netstat -ss
    (snap,) = parsers.iter_parse(terse, os="bsd")
    assert (snap.ipv4["ReasmReqds"], snap.ipv4["ReasmOKs"], snap.ipv4["FragOKs"]) == (3, 0, 0)
