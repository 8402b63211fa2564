"""Network devices, SNMP, nstat -j, localized Windows: every format still finds its parser
and its values the way pastes really arrive (prompt, flattened, HTML, fences, collapsed
blanks, a PDF page break), and the splitter cuts device outputs pasted back to back."""
import html
import io
import json
import re
from pathlib import Path

import pytest

import parsers
from parsers import paste
from parsers.model import ParseError, to_int
from parsers.text import split

NETSTAT = Path(__file__).resolve().parent.parent / "fixtures" / "netstat"

# (fixture, a prompt + command line as the device prints it)
FORMATS = [
    ("cisco/genie_iosxe_golden2_fragmenting_router.txt", "R1#show ip traffic"),
    ("cisco/genie_iosxe_show_ipv6_traffic.txt", "R1#sh ipv6 traffic"),
    ("cisco/ftos_z9000_pdf_collapsed.txt", "Dell#show ip traffic"),
    ("cisco/avici_show_ip_traffic_blank_lines.txt", "router>show ip traffic"),
    ("huawei/ne8000_display_ip_statistics_collapsed.txt", "<HUAWEI>display ip statistics"),
    ("huawei/3com_5500_display_ip_statistics.txt", "<3Com>dis ip statistics"),
    ("huawei/usg_display_ipv6_statistics_collapsed.txt", "<USG>display ipv6 statistics"),
    ("snmp/esxi_ip_mib_names_from_diff.txt", "$ snmpwalk -v2c -c public esxi1 ip"),
    ("snmp/netns_snmpwalk_On_ipsystemstats.txt", "$ snmpwalk -On -v2c -c public r1 1.3.6.1.2.1.4.31.1"),
    ("snmp/librenms_ipsystemstats_php_comment.txt", "$ snmpbulkwalk -v2c -c public r1 IP-MIB::ipSystemStats"),
    ("linux/netns-nstat-j-a-one-line.txt", "[root@web1 ~]# nstat -j -a"),
    ("linux/netns-sender-proc-snmp6.txt", "[root@web1 ~]# cat /proc/net/snmp6"),
    ("linux/arista-eos-bash-netstat-s.txt", "veos-dc1-leaf2a#show kernel ip counters vrf VRF21"),
    ("windows/netsh_ipv6_ipstats_japanese.txt", "C:\\>netsh interface ipv6 show ipstats"),
    ("bsd/junos_show_system_statistics.txt", "user@mx1> show system statistics"),
    ("omniswitch/os6250_cli_guide_page_break.txt", "-> show ip traffic"),
    ("omniswitch/omni_switch_router_ips.txt", "OmniS/R> ips"),
]


def _expected(path):
    data = json.loads((NETSTAT / path).with_suffix(".json").read_text())
    return data[0]


def _values(snap):
    d = snap.to_dict() if hasattr(snap, "to_dict") else snap
    return d["os"], d["ipv4"], d["ipv6"]


def _text(path):
    return (NETSTAT / path).read_text(encoding="utf-8")


def _flatten(text):
    return " ".join(text.split())


def _mangle(kind, text, prompt):
    return _mangled(kind, text, prompt).rstrip("\n") + "\n"   # a paste that ends mid-line is a cut one


def _mangled(kind, text, prompt):
    if kind == "prompt":
        return prompt + "\n" + text
    if kind == "flattened":
        return _flatten(prompt + "\n" + text)
    if kind == "html":
        return "<pre>" + html.escape(prompt + "\n" + text) + "</pre>"
    if kind == "fenced":
        return "Here is the output:\n```text\n" + prompt + "\n" + text + "\n```\nthanks"
    if kind == "collapsed":
        return "\n".join(" ".join(line.split()) for line in (prompt + "\n" + text).splitlines())
    if kind == "pdf":
        lines = text.splitlines()
        mid = len(lines) // 2
        return "\n".join(lines[:mid] + ["\f", "Command Reference Guide, Release 12", "page 29-79"] + lines[mid:])
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["prompt", "flattened", "html", "fenced", "collapsed", "pdf"])
@pytest.mark.parametrize("path,prompt", FORMATS, ids=[f for f, _ in FORMATS])
def test_every_format_survives_how_it_is_pasted(path, prompt, kind, request):
    want = _expected(path)
    snaps = parsers.parse(_mangle(kind, _text(path), prompt))
    got = [s for s in snaps if s.os == want["os"]]
    assert got, [s.os for s in snaps]
    os_name, v4, v6 = _values(got[0])
    frag = parsers.COUNTERS
    for fam, have in (("ipv4", v4), ("ipv6", v6)):
        if want[fam] is None:
            continue
        assert have is not None, fam
        assert {k: have[k] for k in frag} == {k: want[fam][k] for k in frag}, fam


@pytest.mark.parametrize("prompt,body,host", [
    ("R1#show ip traffic", "cisco/genie_iosxe_golden3_no_prompt.txt", "R1"),
    ("core-rtr.example>sh ip traffic", "cisco/genie_iosxe_golden3_no_prompt.txt", "core-rtr.example"),
    ("Dell#show ip traffic", "cisco/ftos_mxl_pdf_collapsed.txt", "Dell"),
    ("<HUAWEI>display ip statistics", "huawei/ne8000_display_ip_statistics_collapsed.txt", "HUAWEI"),
    ("user@mx1> show system statistics", "bsd/junos_show_system_statistics.txt", "mx1"),
])
def test_prompt_names_the_device(prompt, body, host):
    lines = [line for line in _text(body).splitlines() if not re.search(r"show ip traffic|display ip stat", line)]
    snap = parsers.parse(prompt + "\n" + "\n".join(lines))[0]
    assert snap.prompt_host == host


def test_two_device_outputs_pasted_one_after_the_other_split_at_their_prompts():
    a = _text("cisco/genie_iosxe_golden2_fragmenting_router.txt")
    b = _text("huawei/ne8000_display_ip_statistics_collapsed.txt")
    c = _text("cisco/genie_iosxe_golden3_no_prompt.txt").replace("show ip traffic", "R2#show ip traffic", 1)
    snaps = parsers.parse(a + b + c)
    assert [(s.os, s.host) for s in snaps] == [("cisco", "R1"), ("huawei", "HUAWEI"), ("cisco", "R2")]
    assert snaps[0].ipv4["FragCreates"] == 550 and snaps[1].ipv4["InReceives"] == 4219578
    assert snaps[2].ipv4["InReceives"] == 2823


def test_two_cisco_outputs_without_prompts_split_at_the_repeated_section_header():
    a = _text("cisco/genie_iosxe_golden3_no_prompt.txt").replace("show ip traffic\n", "")
    b = _text("cisco/genie_iosxe_golden2_fragmenting_router.txt").replace("R1#show ip traffic\n", "")
    snaps = parsers.parse(a + b)
    assert [s.ipv4["InReceives"] for s in snaps] == [2823, 675835453]


def test_router_that_forwarded_says_so_and_snmp_says_it_directly():
    assert parsers.parse(_text("cisco/genie_iosxe_golden2_fragmenting_router.txt"))[0].forwarding is True
    assert parsers.parse(_text("snmp/netns_router_snmpbulkwalk_Oq.txt"))[0].forwarding is True
    assert parsers.parse(_text("snmp/esxi_ip_mib_names_from_diff.txt"))[0].forwarding is False
    assert parsers.parse(_text("cisco/genie_iosxe_golden3_no_prompt.txt"))[0].forwarding is None


def test_reassembly_timeout_setting_is_never_a_count():
    snap = parsers.parse(_text("snmp/netns_snmpget_scalars.txt"))[0]
    assert snap.ipv4["ReasmTimeout"] is None and "ipReasmTimeout" in snap.raw
    snap = parsers.parse(_text("snmp/esxi_ip_mib_names_from_diff.txt"))[0]
    assert snap.raw["ipReasmTimeout"] == "5 seconds" and snap.ipv4["ReasmTimeout"] is None
    snap = parsers.parse(_text("windows/netsh_ipv6_ipstats_japanese.txt"))[0]
    assert snap.raw["再構築のタイムアウト"] == "60" and snap.ipv6["ReasmTimeout"] is None


def test_netsh_without_its_command_line_is_not_given_a_guessed_family():
    text = _text("windows/netsh_ipv6_ipstats_japanese.txt").replace("C:\\>netsh interface ipv6 show ipstats\n", "")
    notes = []
    assert list(parsers.iter_parse(text, warn=notes.append)) == []
    reading = parsers.get("windows").read(text.splitlines())
    assert reading.ipv4 is None and reading.ipv6 is None
    assert any("command line" in w for w in reading.warnings)


def test_cisco_ambiguous_digits_are_refused_not_prefixed():
    text = "IP statistics:\n  Frags: 0 reassembled, 0 timeouts, 0 couldn't reassemble\n         27 5 fragmented, 550 fragments\n"
    snap = parsers.parse(text)[0]
    assert snap.ipv4["FragOKs"] is None and snap.ipv4["FragCreates"] == 550
    assert any("ambiguous" in w for w in snap.warnings)


@pytest.mark.parametrize("shown,value", [("1,234,567", 1234567), ("1.234.567", 1234567), ("1 234 567", 1234567),
                                         ("1\u00a0234\u00a0567", 1234567), ("1\u202f234", 1234), ("18446744073709551616", 2 ** 64)])
def test_grouped_numbers_are_read_when_unambiguous(shown, value):
    assert to_int(shown) == value


@pytest.mark.parametrize("shown", ["1 23", "5 668 1", "1,234.567", "1.234,567", "12,34", "1.5", "\u0661\u0662\u0663",
                                   "\uff11\uff12", "18446744073709551617", "1e6", "+5", ""])
def test_ambiguous_or_foreign_numbers_are_refused(shown):
    with pytest.raises(ParseError):
        to_int(shown)


def test_windows_value_grouped_with_spaces_is_read_whole_and_a_bad_one_refused():
    text = ("IPv4 Statistics\n\n  Reassembly Required                = 1 234 567\n"
            "  Reassembly Successful              = 5 668 1\n  Fragments Created                  = 12\n")
    snap = parsers.parse(text)[0]
    assert snap.ipv4["ReasmReqds"] == 1234567
    assert snap.ipv4["ReasmOKs"] is None and snap.ipv4["FragCreates"] == 12
    assert any("Reassembly Successful" in w for w in snap.warnings)


def test_paste_undoes_entities_tags_fences_quotes_and_page_lines():
    raw = ("<pre>&lt;HUAWEI&gt;display ip statistics<br>Fragment: input 0 output 0</pre>\n```\n"
           "couldn\u2019t fragment\u00a0 0\n\u200bPage 3 of 40\n\f- 12 -\n12\u00a0345 total\n- 7 -\n")
    out = "".join(paste.normalize([raw]))
    assert out == ("<HUAWEI>display ip statistics\nFragment: input 0 output 0\n\n"
                   "couldn't fragment  0\n\n\n\n12\u00a0345 total\n\n")


def test_paste_is_linear_on_hostile_long_lines():
    # a megabyte of blanks, of digits and of `N label` tokens: each cut is one pass
    for line in (" " * 900_000 + "x", "1" * 900_000, "0 fragments " * 80_000, "IP-MIB::ipX.0 = 1 " * 50_000):
        out = "".join(paste.normalize([line + "\n"]))
        assert out.replace("\n", " ").split() == (line + "\n").replace("\n", " ").split()


def test_only_the_long_lines_are_re_cut_whatever_surrounds_them():
    """paste._recut_long (found from each line break) is the line-by-line rule: every line
    of FLAT_MIN characters or more re-cut, the others as they are, first and last included."""
    import random
    flat = _flatten(_text("bsd/junos_show_system_statistics.txt"))
    pieces = ["    5 fragments received", flat, "x" * (paste.FLAT_MIN - 1), "y" * paste.FLAT_MIN, "",
              "Ip: 5 forwarded 6 total packets received " * 10, "\r"]
    rng = random.Random(7)
    for _ in range(2000):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) + rng.choice(["", "\n"])
        want = "\n".join(paste._recut(line) if len(line) >= paste.FLAT_MIN else line for line in text.split("\n"))
        assert paste._recut_long(text) == want


def test_flattened_dump_lines_stay_short_for_the_parsers():
    flat = _flatten(_text("bsd/junos_show_system_statistics.txt"))
    assert len(flat) > 4096          # longer than the splitter's MAX_LINE: re-cut before it
    lines = "".join(paste.normalize([flat + "\n"])).split("\n")
    assert max(len(line) for line in lines) < 300


def test_mangled_pastes_split_the_same_for_any_block_size(monkeypatch):
    import parsers.text as t
    parts = []
    for path, prompt in FORMATS:
        for kind in ("flattened", "html", "fenced", "pdf"):
            parts.append(_mangle(kind, _text(path), prompt))
    text = "\n".join(parts)

    def run(block):
        monkeypatch.setattr(t, "BLOCK", block)
        return [(c.line, c.lines, c.taken_at, c.host, c.command) for c in split(io.StringIO(text))]

    whole = run(1 << 24)
    assert len(whole) >= len(FORMATS)
    for block in (1, 2, 3, 7, 64, 199, 200, 201, 4095, 4097, 65536):
        assert run(block) == whole, f"block size {block}"


@pytest.mark.parametrize("section,family", [("ip", "ipv4"), ("ip6", "ipv6")])
def test_junos_show_system_statistics_of_one_protocol_reads_through_the_bsd_path(section, family):
    text = _text("bsd/junos_show_system_statistics.txt")
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip() == section + ":")
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^\s*[A-Za-z0-9_]+:\s*$", lines[i])), len(lines))
    pasted = f"user@mx1> show system statistics {section}\n" + "\n".join(lines[start:end]) + "\n"
    (snap,) = parsers.parse(pasted)
    want = _expected("bsd/junos_show_system_statistics.txt")[family]
    assert (snap.os, snap.prompt_host) == ("bsd", "mx1")
    assert getattr(snap, family) == want


def test_arista_show_kernel_ip_counters_is_a_command_line():
    """Two `show kernel ip counters` pasted one after the other: two snapshots of the switch
    named by its prompt (before the command was known as one, they had no host)."""
    text = _text("linux/arista-eos-bash-netstat-s.txt")
    body = text[text.index("Ip:"):]
    prompt = "veos-dc1-leaf2a#show kernel ip counters vrf VRF21\n"
    snaps = parsers.parse(prompt + body + "\n" + prompt + body.replace("372 total", "400 total"))
    assert [(s.prompt_host, s.ipv4["InReceives"]) for s in snaps] == [("veos-dc1-leaf2a", 372),
                                                                       ("veos-dc1-leaf2a", 400)]
