"""How dumps arrive: decoding, dates, and cutting a text into snapshots."""
import codecs
import io

import pytest

from parsers.model import ParseError
from parsers.text import decode, open_text, parse_date_line, sniff_encoding, split

FIG_6A = """netstat -statistics -protocol ip
ip:
. . .
          92  ipReasmReqds
          46  ipReasmOKs
           0  ipReasmFails
. . .

netstat -statistics -protocol ip
ip:
. . .
          96  ipReasmReqds
          48  ipReasmOKs
           0  ipReasmFails
. . .
"""


def chunks(text):
    return list(split(text))


@pytest.mark.parametrize("line,iso", [
    ("Sun Nov 22 03:06:45 UTC 2026", "2026-11-22T03:06:45+00:00"),
    ("Sun Nov  2 03:06:45 2026", "2026-11-02T03:06:45"),
    ("Sun 22 Nov 2026 03:06:45 AM UTC", "2026-11-22T03:06:45+00:00"),
    ("Sun 22 Nov 2026 03:06:45 PM CET", "2026-11-22T15:06:45+01:00"),
    ("2026-11-22T03:06:45Z", "2026-11-22T03:06:45+00:00"),
    ("2026-11-22 03:06:45+05:30", "2026-11-22T03:06:45+05:30"),
    ("=== 2026-11-22 03:06:45 ===", "2026-11-22T03:06:45"),
    ("Nov 22, 2026 3:06 PM", "2026-11-22T15:06:00"),
    ("Sun 11/22/2026", "2026-11-22T00:00:00"),
    ("22.11.2026", "2026-11-22T00:00:00"),
    ("So 22.11.2026 15:04", "2026-11-22T15:04:00"),
    ("22/11/2026 15:04:05", "2026-11-22T15:04:05"),
])
def test_date_lines(line, iso):
    assert parse_date_line(line).iso() == iso


@pytest.mark.parametrize("line", ["15 reassemblies required", "ready 15:19:23", "Ip: 1 64 2026 12",
                                  "2026-13-45 99:99", ""])
def test_not_date_lines(line):
    assert parse_date_line(line) is None


def test_two_snapshots_in_a_row_split_on_the_command_line():
    got = chunks(FIG_6A)
    assert [c.line for c in got] == [1, 9]
    assert got[0].lines[0] == "ip:" and got[1].lines[0] == "ip:"
    assert "          96  ipReasmReqds" in got[1].lines and "          96  ipReasmReqds" not in got[0].lines


def test_repeated_counter_lines_split_without_any_command_or_date():
    text = FIG_6A.replace("netstat -statistics -protocol ip\n", "")
    got = chunks(text)
    assert len(got) == 2
    # header lines between the last counter and the repeat belong to the new snapshot
    assert got[0].lines[:2] == ["ip:", ". . ."] and "ip:" not in got[0].lines[1:]
    assert "ip:" in got[1].lines and got[1].lines.index("ip:") < got[1].lines.index("          96  ipReasmReqds")


def test_cron_log_dates_each_snapshot_and_reads_the_prompt_host():
    text = ("Sun Nov 22 03:06:45 UTC 2026\n[root@web1 ~]# netstat -s | grep reassemb\n"
            "    15 reassemblies required\n    5 packets reassembled ok\n"
            "Sun Nov 22 03:11:45 UTC 2026\n[root@web1 ~]# netstat -s | grep reassemb\n"
            "    25 reassemblies required\n    9 packets reassembled ok\n")
    got = chunks(text)
    assert [(c.taken_at, c.host) for c in got] == [
        ("2026-11-22T03:06:45+00:00", "web1"), ("2026-11-22T03:11:45+00:00", "web1")]


def test_windows_date_and_time_lines_make_one_stamp():
    text = "Sun 11/22/2026\n03:06 PM\nIP Statistics\n  Reassembly Required = 5\n"
    (c,) = chunks(text)
    assert c.taken_at == "2026-11-22T15:06:00"
    assert c.lines == ["IP Statistics", "  Reassembly Required = 5"]


def test_email_quoting_blank_lines_and_crlf_are_undone():
    text = "> ip:\r\n>\r\n>           92  ipReasmReqds\r\n>\r\n>           46  ipReasmOKs\r\n"
    (c,) = chunks(text)
    assert c.lines == ["ip:", "          92  ipReasmReqds", "          46  ipReasmOKs"]


def test_ipv6_section_with_the_same_words_is_not_a_new_snapshot():
    text = "ip:\n\t8 fragments received\nip6:\n\t8 fragments received\n"
    assert len(chunks(text)) == 1


def test_line_numbers_survive_block_boundaries(monkeypatch):
    import parsers.text as t
    monkeypatch.setattr(t, "BLOCK", 64)
    body = "".join(f"Sun Nov 22 03:{m:02d}:00 UTC 2026\n  {m} fragments received\n" for m in range(30))
    got = list(split(io.StringIO(body)))
    assert [c.line for c in got] == [1 + 2 * m for m in range(30)]
    assert [c.lines for c in got] == [[f"  {m} fragments received"] for m in range(30)]


def test_text_without_numbers_gives_no_snapshot():
    assert chunks("hello\nworld\n") == []


@pytest.mark.parametrize("data,encoding", [
    (codecs.BOM_UTF16_LE + "IP Statistics\r\n".encode("utf-16-le"), "utf-16"),
    ("IP Statistics\r\n".encode("utf-16-le"), "utf-16-le"),
    (codecs.BOM_UTF8 + b"ip:\n", "utf-8-sig"),
    (b"ip:\n  1 fragments received\n", "utf-8"),
])
def test_encodings_are_sniffed(data, encoding):
    assert sniff_encoding(data) == encoding
    assert "Statistics" in decode(data) or "ip:" in decode(data)


@pytest.mark.parametrize("data", [b"\x7fELF\x02\x01\x01\x00\x00\x00", bytes(range(32)) * 8])
def test_binary_is_refused(data):
    with pytest.raises(ParseError, match="binary"):
        open_text(io.BytesIO(data))
