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
    ("Tue  3 Mar 10:00:01 GMT 2026", "2026-03-03T10:00:01+00:00"),
    ("Di 3. Mär 10:00:01 CET 2026", "2026-03-03T10:00:01+01:00"),
    ("Di 3. Mär 10:00:01 CEST 2026", "2026-03-03T10:00:01+02:00"),
    ("mar. 3 mars 2026 10:00:01 CET", "2026-03-03T10:00:01+01:00"),
    ("lun. 22 juin 2026 10:00:01 CEST", "2026-06-22T10:00:01+02:00"),
    ("1772532001", "2026-03-03T10:00:01+00:00"),
])
def test_date_lines(line, iso):
    assert parse_date_line(line).iso() == iso


@pytest.mark.parametrize("line", ["15 reassemblies required", "ready 15:19:23", "Ip: 1 64 2026 12",
                                  "2026-13-45 99:99", "", "    1772532001", "17725320011", "772532001"])
def test_not_date_lines(line):
    assert parse_date_line(line) is None


def test_two_snapshots_in_a_row_split_on_the_command_line():
    got = chunks(FIG_6A)
    assert [c.line for c in got] == [1, 9]
    assert got[0].lines[0] == "ip:" and got[1].lines[0] == "ip:"
    assert "          96  ipReasmReqds" in got[1].lines and "          96  ipReasmReqds" not in got[0].lines


def test_repeated_section_header_splits_without_any_command_or_date():
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


FIXTURES = __import__("pathlib").Path(__file__).resolve().parent.parent / "fixtures" / "netstat"


def _fixture(path):
    return decode((FIXTURES / path).read_bytes())


@pytest.mark.parametrize("first,second", [
    ("bsd/macos_big_sur.txt", "linux/tcpmon-netstat-frag-and-reasm.txt"),
    ("linux/tcpmon-netstat-frag-and-reasm.txt", "solaris/bgera_solaris_full.txt"),
    ("windows/kb811003_win2000_crlf.txt", "linux/lkml-2003-nfs-2.6.0-test9.txt"),
    ("solaris/bgera_solaris_full.txt", "windows/net_process_e_s_indented.txt"),
])
def test_two_os_formats_pasted_back_to_back_both_come_out(first, second):
    import parsers
    a, b = _fixture(first), _fixture(second)
    snaps = parsers.parse(a.rstrip("\n") + "\n" + b)
    want = [s.to_dict() for s in parsers.parse(a) + parsers.parse(b)]
    got = [s.to_dict() for s in snaps]
    assert [s["os"] for s in got] == [s["os"] for s in want]
    for g, w in zip(got, want):
        assert (g["ipv4"], g["ipv6"]) == (w["ipv4"], w["ipv6"])


def test_two_greps_at_one_prompt_are_one_moment():
    import parsers
    text = ("[root@web1 ~]# netstat -s | grep frag\n    3 fragments dropped after timeout\n"
            "    184 fragments received ok\n    368 fragments created\n"
            "[root@web1 ~]# netstat -s | grep reass\n    12 reassemblies required\n    6 packets reassembled ok\n"
            "    3 packet reassemblies failed\n[root@web1 ~]#\n")
    (snap,) = parsers.parse(text)
    assert snap.host == "web1"
    assert (snap.ipv4["ReasmTimeout"], snap.ipv4["FragOKs"], snap.ipv4["ReasmReqds"], snap.ipv4["ReasmFails"]) == \
        (3, 184, 12, 3)
    # the same grep twice is two moments
    twice = text.replace("grep reass\n    12 reassemblies required\n    6 packets reassembled ok\n"
                         "    3 packet reassemblies failed", "grep frag\n    4 fragments dropped after timeout")
    assert [s.ipv4["ReasmTimeout"] for s in parsers.parse(twice)] == [3, 4]


def test_findstr_ipv4_then_ipv6_lines_are_one_snapshot_with_both_families():
    import parsers
    text = ("C:\\>netstat -s | findstr Reassembly\n  Reassembly Required = 5668\n  Reassembly Successful = 2834\n"
            "  Reassembly Failures = 1250\n  Reassembly Required = 10\n  Reassembly Successful = 5\n"
            "  Reassembly Failures = 0\n")
    (snap,) = parsers.parse(text)
    assert (snap.ipv4["ReasmReqds"], snap.ipv4["ReasmFails"]) == (5668, 1250)
    assert (snap.ipv6["ReasmReqds"], snap.ipv6["ReasmFails"]) == (10, 0)


def test_a_duplicated_line_is_a_warning_never_a_snapshot():
    import parsers
    text = _fixture("windows/net_process_e_s_indented.txt")
    line = next(l for l in text.splitlines() if "Reassembly Required" in l)
    snaps = parsers.parse(text.replace(line, line + "\n" + line, 1))
    assert len(snaps) == 1
    assert snaps[0].ipv4 == parsers.parse(text)[0].ipv4
    assert any("printed twice" in w for w in snaps[0].warnings)


def test_a_line_too_long_for_netstat_is_skipped_with_a_note_and_the_rest_read():
    import parsers
    notes = []
    text = "x" * 5_000_000 + "\n" + _fixture("linux/lkml-2003-nfs-2.6.0-test9.txt")
    snaps = list(parsers.iter_parse(io.StringIO(text), warn=notes.append))
    assert len(snaps) == 1 and snaps[0].ipv4["ReasmReqds"] == 2664
    assert any("longer than" in n and "line 1" in n for n in notes)


def test_block_boundaries_never_change_the_result(monkeypatch):
    """The same text read whole and in blocks of every size in a range gives identical snapshots."""
    import glob
    import parsers.text as t
    names = sorted(glob.glob(str(FIXTURES / "*" / "*.txt")))
    text = "\n".join(decode(open(n, "rb").read()) for n in names)
    # pastes mangled the ways parsers/paste.py undoes: HTML, fences, a flattened dump, a PDF break
    import html
    sample = decode(open(names[0], "rb").read())
    text += ("\n<pre>" + html.escape(sample) + "</pre>\n```\n" + sample + "\n```\n" + " ".join(sample.split())
             + "\n" + sample.replace("\n", "\n\fPage 3 of 9\n", 1))

    def run(block):
        monkeypatch.setattr(t, "BLOCK", block)
        return [(c.line, c.lines, c.taken_at, c.host) for c in t.split(io.StringIO(text))]

    whole = run(1 << 24)
    assert len(whole) > 40
    for block in list(range(1, 40)) + list(range(40, 3000, 61)):
        assert run(block) == whole, f"block size {block}"


class _Short(io.RawIOBase):
    """A raw stream that hands out at most `most` bytes a read (a pipe, a slow disk)."""

    def __init__(self, data: bytes, most: int):
        self.data, self.at, self.most = data, 0, most

    def readable(self):
        return True

    def readinto(self, buf):
        piece = self.data[self.at:self.at + min(len(buf), self.most)]
        buf[:len(piece)] = piece
        self.at += len(piece)
        return len(piece)


@pytest.mark.parametrize("seed", range(40))
def test_utf8_text_reads_what_textiowrapper_reads(seed):
    """open_text's UTF-8 reader (parsers.text.Utf8Text) against io.TextIOWrapper(errors="replace",
    newline=None) over random bytes: line ends of every kind cut anywhere, multi-byte characters
    and broken sequences cut anywhere, a BOM; read whole and in random sizes."""
    import random
    rng = random.Random(seed)
    atoms = [b"a", b"7", b" ", b"\n", b"\r", b"\r\n", "é".encode(), "—".encode(), "日".encode(),
             "\U0001f600".encode(), b"\xe2\x82", b"\xff", b"\x80", b"\xc3", b"\t"]
    data = b"".join(rng.choice(atoms) for _ in range(rng.randrange(0, 400)))
    if seed % 5 == 0:
        data = codecs.BOM_UTF8 + data
    want = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig" if seed % 5 == 0 else "utf-8",
                            errors="replace", newline=None).read()
    assert open_text(io.BytesIO(data)).read() == want
    reader = open_text(io.BufferedReader(_Short(data, rng.randrange(1, 9))))
    got = []
    while True:
        piece = reader.read(rng.randrange(1, 40))
        if not piece:
            break
        got.append(piece)
    assert "".join(got) == want


def test_fast_iso_is_fast_date_line_after_line():
    """fast_iso reuses the last line's answer when only the time differs: every line of a
    sequence (times valid and not, days, zones and forms changing) must still give
    fast_date(line).iso(), or None where fast_date gives None."""
    import random
    from parsers.text import fast_date, fast_iso
    rng = random.Random(7)
    forms = ["Wed Nov 15 {t} UTC 2023", "Wed Nov  5 {t} UTC 2023", "Thu Nov 16 {t} CET 2023",
             "Wed Nov 15 {t} UTC 2024", "2023-11-15T{t}Z", "2023-11-15 {t}+01:00", "2023-11-16T{t}"]
    for _ in range(3000):
        form = rng.choice(forms[:2]) if rng.random() < 0.6 else rng.choice(forms)
        t = f"{rng.choice([0, 5, 9, 19, 23, 24, 29, 99]):02d}:{rng.choice([0, 59, 60]):02d}:{rng.choice([0, 7, 59, 61]):02d}"
        line = form.format(t=t)
        stamp = fast_date(line)
        assert fast_iso(line) == (stamp.iso() if stamp is not None else None), line
