"""The per-shape fast path (parsers/shapes.py) gives exactly what the full path gives.

Every fixture dump is read as it is, three times over (a dump of several snapshots teaches
its shapes), then as a cron log of its snapshots with every counter moving (a shape is
learnt from its second snapshot in a text and matched from the third), with and without
--os; and a generated mixed cron log of every OS, whole and as a trickling stream. The fast path's snapshots and
warnings must equal the full path's (`iter_parse(fast=False)`), byte for byte as JSON, and
the fast path must really have matched snapshots (else this test would prove nothing).
"""
from __future__ import annotations

import json
import random
import re
import time

import pytest

import parsers
from fixturelib import NETSTAT, expected, pairs
from parsers.text import decode

NUMBER = re.compile(r"(?<![\w.:/-])\d+(?![\w.:/-])")
FIXTURES = [(raw, expected(want)[0]) for raw, want in pairs()]


def run(text: str, os_name, fast: bool):
    warnings = []
    snaps = [json.dumps(s.to_dict()) for s in parsers.iter_parse(text, source="x", os=os_name, fast=fast,
                                                                   warn=warnings.append)]
    return snaps, warnings


def cron_log(texts, n: int, seed: int = 1) -> str:
    """n dated snapshots cycling through the texts, each counter grown by a random step."""
    rng = random.Random(seed)
    out, step = [], 0
    for i in range(n):
        step += rng.randint(1, 50)
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(1_700_000_000 + 300 * i))
        body = NUMBER.sub(lambda m: str(int(m.group(0)) + step), texts[i % len(texts)])
        out.append(f"{stamp}\n{body}\n")
    return "".join(out)


class Trickle:
    """A text stream that hands out at most 997 characters a read."""

    def __init__(self, text: str):
        self.text, self.at = text, 0

    def read(self, n: int) -> str:
        piece = self.text[self.at:self.at + min(n, 997)]
        self.at += len(piece)
        return piece


@pytest.fixture
def fresh_shapes(monkeypatch):
    shapes = parsers.Shapes()
    monkeypatch.setattr(parsers, "SHAPES", shapes)
    return shapes


@pytest.mark.parametrize("raw,os_name", FIXTURES, ids=[str(r.relative_to(NETSTAT)) for r, _ in FIXTURES])
def test_fast_path_equals_full_path_on_every_fixture(raw, os_name, fresh_shapes):
    text = decode(raw.read_bytes())
    log = cron_log([text], 6)
    for os_choice in {os_name, None}:
        want = run(text, os_choice, fast=False)
        for _ in range(3):
            assert run(text, os_choice, fast=True) == want
        want = run(log, os_choice, fast=False)
        for _ in range(2):
            assert run(log, os_choice, fast=True) == want


def test_fast_path_equals_full_path_on_a_mixed_cron_log_and_is_taken(fresh_shapes):
    texts = []
    for raw, _ in FIXTURES:
        text = decode(raw.read_bytes())
        snaps = list(parsers.iter_parse(text, fast=False))
        # (not a text where some number is no counter: snmp_exporter's ipSystemStatsIPVersion="1" label)
        if len(snaps) == 1 and snaps[0].taken_at is None and len(text) > 400 \
                and len(list(parsers.iter_parse(cron_log([text], 1), fast=False))) == 1:
            texts.append(text)
    assert len(texts) > 20
    log = cron_log(texts, 6 * len(texts))
    want = run(log, None, fast=False)
    assert len(want[0]) >= 6 * len(texts) - 10
    got = run(log, None, fast=True)
    assert got == want
    assert fresh_shapes.hits > len(texts)        # later snapshots of each dump were matched whole
    # the same text as a stream read in small blocks (snapshots straddle block ends)
    warnings = []
    streamed = [json.dumps(s.to_dict()) for s in parsers.iter_parse(Trickle(log), source="x",
                                                                       warn=warnings.append)]
    assert (streamed, warnings) == want


def test_one_host_cron_log_is_nearly_all_fast(fresh_shapes):
    linux = [decode(p.read_bytes()) for p in sorted((NETSTAT / "linux").glob("*.txt"))]
    text = next(t for t in linux if "Tcp:" in t and "Ip:" in t)
    log = cron_log([text], 200)
    want = run(log, None, fast=False)
    assert run(log, None, fast=True) == want
    assert fresh_shapes.hits >= 190


def test_a_matched_snapshot_makes_its_counters_when_read_and_equals_the_full_paths(fresh_shapes):
    """Snapshots built by a shape hold no counters until one is read (parse --format jsonl
    writes them from the shape's JSON template); read, compared, copied or pickled (a --jobs
    worker's), they are the full path's."""
    import copy
    import pickle
    linux = [decode(p.read_bytes()) for p in sorted((NETSTAT / "linux").glob("*.txt"))]
    text = next(t for t in linux if "Tcp:" in t and "Ip:" in t)
    log = cron_log([text], 8)
    full = list(parsers.iter_parse(log, source="x", fast=False))
    fast = list(parsers.iter_parse(log, source="x"))
    built = [s for s in fast if "_shape" in s.__dict__]
    assert len(built) >= 5
    assert all("ipv4" not in s.__dict__ and "raw" not in s.__dict__ for s in built)
    last = built[-1]
    assert pickle.loads(pickle.dumps(last)) == full[-1]          # the counters made for the trip
    assert "_shape" not in pickle.loads(pickle.dumps(last)).__dict__
    assert copy.copy(built[-2]).raw == full[-2].raw
    assert fast == full                                          # every field, by value
    assert [s.ipv4 for s in fast] == [s.ipv4 for s in full] and built[0].ipv4 is built[0].ipv4
    with pytest.raises(AttributeError):
        last.no_such_field
    assert getattr(built[0], "no_such_field", 7) == 7


def test_a_shape_that_matches_the_start_of_a_longer_one_lets_the_others_be_tried(fresh_shapes):
    """A real cron capture (4 dated snapshots) appended again and again: its last snapshot
    is its third's text plus a blank line, so the third's shape matches the start of it but
    does not end where the full scan ends it; the fourth's own shape must still be tried."""
    text = decode((NETSTAT / "linux" / "netns-cron-date-netstat-s.txt").read_bytes())
    body = text.split("\n", 1)[1]
    counter = re.compile(r"(?m)^( +|.*: )(\d+)")       # counters move; dates and Forwarding stay
    records = []
    for i in range(40):
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(1_700_000_000 + 300 * i))
        moved = counter.sub(lambda m: m.group(1) + str(int(m.group(2)) + 7 * i), body)
        records.append(f"{stamp}\n{moved.replace('Forwarding: ' + str(2 + 7 * i), 'Forwarding: 2')}\n")
    log = "".join(records)
    want = run(log, None, fast=False)
    assert len(want[0]) == 160
    assert run(log, None, fast=True) == want
    assert fresh_shapes.hits >= 150         # all but the first two of each of the 4 shapes


def _rhel_cron(n: int, line=None, big_from=None, extra=lambda i: ""):
    """A cron log of the RHEL dump, counters moving; `line` (with {a}) first in its
    Ip section, its numbers 19 digits long from snapshot `big_from` on; extra(i) after
    snapshot i."""
    text = decode((NETSTAT / "linux" / "tcpmon-netstat-rhel-zero-omitted.txt").read_bytes())
    out = []
    for i in range(n):
        body = re.sub(r"(?m)^( +)(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + 11 * i), text)
        if line is not None:
            big = big_from is not None and i >= big_from
            a = 9_000_000_000_000_000_000 + i if big else i + 1
            body = body.replace("Ip:\n", "Ip:\n" + line.format(a=a) + "\n", 1)
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(1_700_000_000 + 300 * i))
        out.append(f"{stamp}\n{body}{extra(i)}")
    return "".join(out)


def test_text_read_before_it_is_cleaned_gives_what_cleaned_text_gives(fresh_shapes):
    """Snapshots matched whole before paste.clean() has run over them (parsers/paste.py
    normalize_later): PDF page lines and a flattened dump between them are still cleaned
    (the full scan reads them), and the snapshots around them still come from the shapes."""
    flat = " ".join(decode((NETSTAT / "linux" / "tcpmon-netstat-frag-and-reasm.txt").read_bytes()).split("\n"))
    assert len(flat) > 1000

    def extra(i):
        if i % 7 == 3:
            return "Page 3 of 40\n"
        if i == 12:
            return "Tue Nov 14 23:23:20 UTC 2023\n" + flat + "\n"
        return ""
    log = _rhel_cron(60, extra=extra)
    want = run(log, None, fast=False)
    assert len(want[0]) == 61
    assert run(log, None, fast=True) == want
    assert fresh_shapes.hits >= 40
    assert _streamed(log) == want


def _streamed(log: str):
    """run(log, None, fast=True) with the text read as a stream in small blocks: the shapes
    then meet text that is not cleaned yet (a whole str is cleaned where the full scan starts)."""
    warnings = []
    snaps = [json.dumps(s.to_dict()) for s in parsers.iter_parse(Trickle(log), source="x", warn=warnings.append)]
    return snaps, warnings


def test_a_shape_whose_lines_may_grow_long_is_not_read_before_cleaning(fresh_shapes):
    """A line under paste.FLAT_MIN characters with small numbers, over it with 19-digit
    ones: cleaning re-cuts it then (a flattened dump's line), so its shape must not match
    text that is not cleaned yet -- here the re-cut line adds a second "reassemblies
    required", which the full path warns about."""
    line = "    {a} packets dropped " + "by a long explanation " * 6 + "by the way x 7 reassemblies required"
    assert len(line.format(a=1)) < 200 <= len(line.format(a=10 ** 18))
    log = _rhel_cron(30, line, big_from=20)
    want = run(log, None, fast=False)
    assert not json.loads(want[0][19])["warnings"]
    assert "printed twice" in json.loads(want[0][20])["warnings"][0]
    assert run(log, None, fast=True) == want
    assert _streamed(log) == want


def test_text_no_parser_reads_is_skipped_without_detection_once_proven(fresh_shapes, monkeypatch):
    """A cron job's dated mail after every snapshot: its text, numbers changed, is detected twice,
    proven silent with other numbers, then skipped at once (parsers/silent.py); the result
    and the warnings are the full path's."""
    silent = parsers.Silent()
    monkeypatch.setattr(parsers, "SILENT", silent)
    mail = ("Hi,\n\nthe job ran 5 times on host 10.1.2.3 since 12 May; 3 retries, 0 alerts.\n"
            "Queue: 17 messages, 2 deferred\n\nRegards,\ncron\n")

    def extra(i):
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(1_700_000_100 + 300 * i))
        return stamp + "\n" + re.sub(r"(?<![\w.])\d+(?![\w.])", lambda m: str(int(m.group(0)) + i), mail)
    log = _rhel_cron(30, extra=extra)
    skipped, skipped_full = [], []
    want = [json.dumps(s.to_dict()) for s in parsers.iter_parse(log, fast=False, skipped=skipped_full)]
    got = [json.dumps(s.to_dict()) for s in parsers.iter_parse(log, skipped=skipped)]
    assert (got, skipped) == (want, skipped_full)
    assert len(skipped) == 30 and silent.skipped == 28
    # from the third, the mail's shape is learnt (parsers/shapes.learn_silent): the rest are
    # matched whole, as the RHEL dumps are; with --os the mail is read in full by that parser
    assert [shape.key for shape in fresh_shapes.order if shape.module is None] == ["Hi,\n\nthe job ran "]
    assert fresh_shapes.hits >= 2 * 30 - 8
    for os_name in (None, "linux", "bsd"):
        assert run(log, os_name, fast=True) == run(log, os_name, fast=False)


def test_a_silent_form_is_kept_only_when_other_numbers_are_silent_too():
    from parsers.silent import Silent
    text = "total 12 of 7 things\n"
    by_zeros = Silent()                 # a detector that would read it were a value 0
    for _ in range(3):
        by_zeros.heard(text, lambda t: [("x", 1.0)] if " 0 " in t else [])
    assert not by_zeros.known(text.replace("12", "99"))
    quiet = Silent()
    for _ in range(2):
        quiet.heard(text, lambda t: [])
    assert quiet.known(text.replace("12", "99")) and not quiet.known("total 12 7 of things\n")
    assert not quiet.known("total 12 of 7.5 things\n")     # 7.5 is no value: another form


@pytest.mark.parametrize("raw,os_name", FIXTURES, ids=[str(r.relative_to(NETSTAT)) for r, _ in FIXTURES])
def test_fast_path_equals_full_path_on_damaged_dumps_once_shapes_are_known(raw, os_name, fresh_shapes):
    from test_hostile import mutations
    text = decode(raw.read_bytes())
    run(text + text + text, None, fast=True)            # its shapes are learnt, if it has any
    run(cron_log([text], 4), None, fast=True)
    for kind, bad in mutations(text + text + text, random.Random(raw.name), 12):
        assert run(bad, None, fast=True) == run(bad, None, fast=False), kind


def _values_log(text: str, values_per_snapshot) -> str:
    """A dated snapshot of `text` per entry, `{n}` in it replaced by that entry's value. A
    shape is learnt from the 2nd snapshot and matched from the 4th (the splitter is one
    snapshot ahead of the parser)."""
    out = []
    for i, value in enumerate(values_per_snapshot):
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(1_700_000_000 + 300 * i))
        out.append(f"{stamp}\n{text.replace('{n}', str(value))}\n")
    return "".join(out)


ROUTER = """Router#show ip traffic
IP statistics:
  Rcvd:  {n}7 total, 12 local destination
         0 format errors, 0 checksum errors, 0 bad hop count
  Frags: 3 reassembled, 0 timeouts, 0 couldn't reassemble
         1 fragmented, 0 couldn't fragment
  Bcast: 4 received, 0 sent
  Sent:  20 generated, {n} forwarded
"""


@pytest.mark.parametrize("values,fast_hits", [
    ([5, 9, 14, 15, 230, 231], 3),       # a router: forwarded > 0 throughout, matched whole
    ([5, 9, 14, 0, 0, 7], None),          # forwarding stops, then starts again: never built from a wrong shape
])
def test_a_number_that_may_be_anything_but_zero(values, fast_hits, fresh_shapes):
    log = _values_log(ROUTER, values)
    want = run(log, None, fast=False)
    assert run(log, None, fast=True) == want
    assert [json.loads(s)["forwarding"] for s in want[0]] == [True if v else None for v in values]
    if fast_hits is not None:
        assert fresh_shapes.hits == fast_hits


def test_a_digit_inside_a_label_does_not_hide_its_lines_value(fresh_shapes):
    # macOS prints "N packet forwarded (M packet fast forwarded)": the label holds a number
    text = ("ip:\n\t{n} total packets received\n\t\t3 fragments received\n"
            "\t\t{n} packet forwarded (0 packet fast forwarded)\n\t\t5 packets reassembled ok\n")
    log = _values_log(text, [10, 11, 12, 13, 14])
    want = run(log, "bsd", fast=False)
    assert run(log, "bsd", fast=True) == want
    assert fresh_shapes.hits == 2


def test_numbers_on_a_line_the_date_pattern_picks_vary_unless_they_make_it_a_date(fresh_shapes):
    # `spoof 5/26 18 2 last mac 00:08:02:...` (an OmniSwitch page) is a date candidate but not
    # a date line: its numbers may vary, and each match checks the line again, since a value
    # that makes it a date (day 23 below) makes the full scan start a snapshot there.
    text = ("$ netstat -s\nIp:\n    Forwarding: 2\n    {n}1 total packets received\n    7 reassemblies required\n"
            "    3 packets reassembled ok\nMon Nov {n} 17:14:25 UTC 2026\n    5 fragments received ok\n")
    for values, snaps, hits in (([91, 92, 93, 94, 95, 96], 6, 3), ([91, 92, 93, 94, 23, 96], 7, 2)):
        fresh_shapes.__init__()
        log = _values_log(text, values)
        want = run(log, None, fast=False)
        assert len(want[0]) == snaps
        assert run(log, None, fast=True) == want
        assert fresh_shapes.hits == hits
        assert [(shape.checked, shape.command) for shape in fresh_shapes.order] == [((6,), "$ netstat -s")]


def test_a_line_that_is_never_a_date_stays_so_whatever_its_digits():
    """shapes._varying checks a candidate line again at each match unless text.never_a_date
    proves no digits make it a date: every candidate line of every fixture it says so of,
    given digits that make dates (days, hours, years, an epoch), is still no boundary."""
    from parsers.text import _CAND_DATE, classify, never_a_date
    assert never_a_date('"IpReasmReqds":30,') and not never_a_date("  [fe80::1%9]:8080")
    assert not never_a_date("spoof 5/26 18 2 last mac 00:08:02:e2:17:70")
    assert not never_a_date("Mon Nov 99 17:14:25 UTC 2026") and not never_a_date("  12:30:45 2024-01-02")
    rng = random.Random(5)
    values = ["0", "1", "07", "12", "23", "31", "59", "1999", "2024", "1700000000", "123456789012"]
    proven = 0
    for raw, _ in FIXTURES:
        for line in decode(raw.read_bytes()).split("\n"):
            stamp, command, _ = classify(line)
            if stamp is not None or command or not _CAND_DATE.search(line.lower()) or not never_a_date(line):
                continue
            proven += 1
            for _ in range(20):
                other = re.sub(r"[0-9]+", lambda m: rng.choice(values), line)
                assert classify(other)[:2] == (None, False), (line, other)
    assert proven > 10


def test_a_quoted_paste_is_learnt_too(fresh_shapes):
    text = "> Ip:\n>     Forwarding: 2\n>     {n} total packets received\n>     {n} reassemblies required\n" \
           ">     3 packets reassembled ok\n"
    log = _values_log(text, [10, 20, 30, 40, 50])
    want = run(log, None, fast=False)
    assert run(log, None, fast=True) == want
    assert fresh_shapes.hits == 2


def test_one_snapshot_files_reuse_shapes_across_texts(fresh_shapes):
    # a directory of one-snapshot dumps (a fleet's collection, a customer's folder): each file
    # is its own text, so the first snapshot of each is matched by a shape learnt from others
    texts = []
    for raw, os_name in FIXTURES:
        text = decode(raw.read_bytes())
        if len(list(parsers.iter_parse(text, fast=False))) == 1:
            texts.append((text, os_name))
    assert len(texts) > 20
    rng = random.Random(7)
    files = []
    for copy in range(4):
        for text, os_name in texts:
            step = rng.randint(1, 5000)
            files.append((NUMBER.sub(lambda m: str(int(m.group(0)) + step), text), os_name))
    for os_choice in ("auto", "given"):
        fresh_shapes.__init__()
        fast = [run(text, os_name if os_choice == "given" else None, fast=True) for text, os_name in files]
        full = [run(text, os_name if os_choice == "given" else None, fast=False) for text, os_name in files]
        assert fast == full
        assert fresh_shapes.hits > len(texts)      # the 3rd and 4th copies of most were matched whole


def test_files_as_customers_send_them_with_shapes_learnt_from_other_files(fresh_shapes):
    # shapes learnt from clean files of a folder meet, in later files, a grep excerpt, two
    # pastes back to back and damaged copies (cut mid-line, NUL, CRLF, prose...): each file's
    # first snapshot may be matched whole, so every one must read as the full path reads it
    from test_hostile import mutations
    rng = random.Random(3)
    files = []
    for raw, _ in FIXTURES:
        text = decode(raw.read_bytes())
        for _ in range(3):
            step = rng.randint(1, 999)
            files.append(NUMBER.sub(lambda m: str(int(m.group(0)) + step), text))
        moved = NUMBER.sub(lambda m: str(int(m.group(0)) + 7), text)
        files.append("\n".join(line for line in moved.split("\n") if re.search("frag|reass", line, re.I)))
        files.append(moved + "\n" + moved)
        files.extend(bad for _, bad in mutations(moved, random.Random(len(text)), 6))
    for text in files:
        assert run(text, None, fast=True) == run(text, None, fast=False)
    assert fresh_shapes.hits > 100


TWO_FAMILIES = """show ip traffic
IP statistics:
  Rcvd:  {r4} total, 2823 local destination
         0 format errors, 0 checksum errors, 0 bad hop count
  Frags: 0 reassembled, 0 timeouts, 0 couldn't reassemble
         0 fragmented, 0 fragments, 0 couldn't fragment
  Sent:  2799 generated, {f4} forwarded
  Drop:  1 encapsulation failed, 0 unresolved, 0 no adjacency

IPv6 statistics:
        Rcvd:  2 total, 112 total_bytes, 2 local destination
               0 fragments, 0 total reassembled
        Sent:  161 total, 18670 total_bytes
               162 generated, {f6} forwarded
               0 fragmented into 0 fragments, 0 failed
"""


def test_numbers_that_pass_apart_but_not_together_stay_literal(fresh_shapes):
    # forwarding is on when either family's forwarded count is above 0: each may be 0 alone,
    # not both -- a shape that let both vary would call the last snapshot a router
    log = "".join(f"Mon Jan  {day} 10:00:00 UTC 2024\n" + TWO_FAMILIES.format(r4=r4, f4=f4, f6=f6)
                  for day, r4, f4, f6 in ((1, 100, 5, 7), (2, 200, 6, 8), (3, 300, 9, 9), (4, 400, 0, 0)))
    want = run(log, None, fast=False)
    assert [json.loads(s)["forwarding"] for s in want[0]] == [True, True, True, None]
    assert run(log, None, fast=True) == want


def _pasted(text: str, kind: str) -> str:
    """`text` as a paste mangled it (parsers/paste.py undoes each of these)."""
    if kind == "html":
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if kind == "br":
        return text.replace("\n", "<br>\n")
    if kind == "nbsp":
        return re.sub(r"(?<=[a-z]) (?=[a-z])", "\u00a0", text)
    if kind == "zw":
        return text.replace("packets", "pack\u200bets")
    if kind == "quotes":
        return text.replace("'", "\u2019")
    if kind == "md":
        return text.replace("<", "\\<").replace(">", "\\>")
    if kind == "pre":
        return "<pre>" + text + "</pre>\n"
    return text


TEMPLATES = ["linux/tcpmon-netstat-rhel-zero-omitted.txt", "huawei/3com_5500_display_ip_statistics.txt",
             "huawei/h3c_comware_markdown_escaped.txt", "windows/q155758_nt4_tabs.txt",
             "linux/tcpmon-proc-net-snmp.txt", "snmp/librenms_ipsystemstats_php_comment.txt"]


@pytest.mark.parametrize("kind,every", [("html", 3), ("br", 3), ("nbsp", 3), ("zw", 3), ("quotes", 3), ("md", 3),
                                        ("pre", 3), ("html", 1), ("br", 1)])
def test_pasted_damage_in_a_cron_log_is_cleaned_where_the_shapes_meet_it(kind, every, fresh_shapes):
    """A cron log of several hosts' dumps, every third snapshot (or every one) mangled by a paste: text is
    cleaned only where it is read in full or where the shapes stop (parsers/text.py
    Splitter._settle_ahead), yet every snapshot is what the full path, which cleans
    everything first, makes of it; whole or streamed in small reads. The shapes must have
    read most snapshots (mangled ones too, once cleaned), or this would prove nothing."""
    texts = [decode((NETSTAT / name).read_bytes()) for name in TEMPLATES]
    rng = random.Random(kind)
    out, step = [], 0
    for i in range(90):
        step += rng.randint(1, 50)
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(1_700_000_000 + 300 * i))
        body = NUMBER.sub(lambda m: str(int(m.group(0)) + step), texts[i % len(texts)])
        out.append(f"{stamp}\n{_pasted(body, kind) if i % every == every // 2 else body}\n")
    log = "".join(out)
    want = run(log, None, fast=False)
    assert len(want[0]) >= 80
    assert run(log, None, fast=True) == want
    assert fresh_shapes.hits >= 40 if every > 1 else fresh_shapes.hits >= 60   # all mangled: the shapes still read them
    # mangled snapshots of a shape met once cleaned are read as pasted by its twin
    # (shapes.learn_raw; where every one is mangled, the shapes mostly meet text cleaned ahead)
    if every > 1:
        assert fresh_shapes.twin_hits >= 5
    assert _streamed(log) == want


@pytest.mark.parametrize("name", ["linux/netns-nstat-j-a-one-line.txt", "linux/blog-nstat-j-increments.txt",
                                  "huawei/h3c_comware_markdown_escaped.txt"])
def test_a_paste_cleaned_every_time_is_read_as_pasted_by_a_twin(name, fresh_shapes):
    """A flattened `nstat -j` (re-cut at its JSON keys) or a Markdown-escaped dump in every
    snapshot of a mixed cron log: once its shape matched the cleaned text, its twin
    (shapes.learn_raw) reads the text as pasted, and every snapshot is still what the full
    path makes of it, whole or streamed."""
    pasted = decode((NETSTAT / name).read_bytes())
    other = decode((NETSTAT / "linux" / "tcpmon-netstat-rhel-zero-omitted.txt").read_bytes())
    log = cron_log([pasted, other], 60)
    want = run(log, None, fast=False)
    assert len(want[0]) == 60
    assert run(log, None, fast=True) == want
    assert fresh_shapes.twin_hits >= 20
    assert [s for s in fresh_shapes.order if s.cleans]
    assert _streamed(log) == want


def test_raw_safety_of_a_shape_text():
    from parsers.paste import LONG, raw_safety
    assert raw_safety("Ip:\n    12 total packets received\n", 19) is True
    assert raw_safety("<HUAWEI> display ip statistics\n  Input: 12 packets\n", 19) is True   # a prompt, not a tag
    assert raw_safety("  &#12; 5 packets\n", 19) is False             # an entity: cleaning decodes it
    assert raw_safety("  &amp; 5 packets\n", 19) is False
    assert raw_safety("Page 3 of 40\n", 19) is False
    wide = "Ip: " + " ".join(["1"] * 60) + "\n"                        # long with 19-digit numbers only
    assert len(wide) < 200 and raw_safety(wide, 19) == LONG


@pytest.mark.parametrize("seed", range(25))
def test_random_pastes_of_three_hosts_read_as_the_full_path_reads_them(seed, fresh_shapes, monkeypatch):
    """Three fixture dumps in a random cron log: counters moving, some snapshots undated,
    some mangled by a paste, some with lines flattened together; read whole with the shapes,
    then streamed in small reads with the shapes already learnt, against the full path."""
    monkeypatch.setattr(parsers, "SILENT", parsers.Silent())
    rng = random.Random(seed)
    chosen = rng.sample([decode(raw.read_bytes()) for raw, _ in FIXTURES], 3)
    kinds = ["html", "br", "nbsp", "zw", "quotes", "md", "pre", "none", "none", "none"]
    out, step = [], 0
    for i in range(rng.randrange(6, 30)):
        step += rng.randint(1, 50)
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(1_700_000_000 + 300 * i))
        body = _pasted(NUMBER.sub(lambda m: str(int(m.group(0)) + step), rng.choice(chosen)), rng.choice(kinds))
        if rng.random() < 0.1:
            body = body.replace("\n", " ", rng.randrange(1, 30))
        out.append(f"{stamp}\n{body}\n" if rng.random() < 0.8 else body)
    log = "".join(out)
    want = run(log, None, fast=False)
    assert run(log, None, fast=True) == want
    assert _streamed(log) == want
