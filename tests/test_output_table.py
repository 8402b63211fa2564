"""toolkit/output.py writes a table of whole numbers and plain text itself: the same bytes
tabulate writes (what table_text gave before), for every fixture's parse table and for
random tables of the cells tabulate could read otherwise (text that looks like a number or a
boolean, blanks, padding); anything else still goes to tabulate."""
from __future__ import annotations

import random

import pytest
from tabulate import tabulate

import parsers
from fixturelib import NETSTAT, pairs
from toolkit import output
from toolkit.commands import offline


def by_tabulate(rows, headers):
    as_text = sorted({i for r in rows for i, v in enumerate(r) if isinstance(v, str) and v != "-" and output._numeric(v)})
    return tabulate(rows, headers=headers, disable_numparse=as_text or False)


def as_table_rows(rows):
    """The rows as toolkit.output.table hands them to table_text."""
    return [["-" if v is None else output.safe(v) if isinstance(v, str) else v for v in r] for r in rows]


def test_every_fixtures_parse_table_is_tabulates():
    headers = offline._snapshot_headers()
    done = 0
    for raw, _ in pairs():
        snaps = list(parsers.iter_parse(raw.read_text(errors="replace"), source=raw.name))
        rows = as_table_rows([row for s in snaps for row in offline._snapshot_rows(s)])
        if not rows:
            continue
        assert output._plain_cells(rows, headers) is not None, raw
        assert output.table_text(rows, headers) == by_tabulate(rows, headers), raw
        done += 1
    assert done > 50


CELLS = [None, 0, 7, -3, 10 ** 15, "", " ", "-", "web1", "  web1 ", "007", "1e3", "0x10", " 12 ", "1_000", "inf",
         "-inf", "nan", "Infinity", "True", "False", "true", "a b", "2026-11-22T09:00:01+00:00", "x" * 30]


def random_table(seed):
    rnd = random.Random(seed)
    ncols = rnd.randint(1, 6)
    headers = [rnd.choice(["#", "host", "ReasmReqds", "x", "", "a long header"]) for _ in range(ncols)]
    # a column of one kind of cell or of a few: numbers alone, text alone, mixed
    pools = [rnd.sample(CELLS, rnd.randint(1, 4)) for _ in range(ncols)]
    rows = [[rnd.choice(pool) for pool in pools] for _ in range(rnd.randint(1, 8))]
    return rows, headers


@pytest.mark.parametrize("seed", range(300))
def test_random_tables_are_tabulates(seed):
    rows, headers = random_table(seed)
    assert output.table_text(rows, headers) == by_tabulate(rows, headers), (rows, headers)


def test_most_random_tables_are_written_without_tabulate():
    """(else the test above would compare tabulate with itself)"""
    plain = sum(output._plain_cells(*random_table(seed)) is not None for seed in range(300))
    assert plain > 150, plain


def test_the_rest_goes_to_tabulate():
    headers = ["host", "share"]
    for rows in ([["web1", 0.5]], [["web1", True]], [["wéb1", 1]], [["a\tb", 1]], [["True", 1]]):
        assert output._plain_cells(rows, headers) is None
        assert output.table_text(rows, headers) == by_tabulate(as_table_rows(rows), headers)   # text made safe
    assert output._plain_cells([["web1", 1]], headers) == ([["web1", "1"]], {1})


# --- calc's "plain" tables (output.plain_table) ---

def ragged(seed):
    rows, _ = random_table(seed)
    rnd = random.Random(seed)
    return [r[:rnd.randint(1, len(r))] if rnd.random() < 0.3 else r for r in rows]


@pytest.mark.parametrize("seed", range(300))
def test_random_plain_tables_are_tabulates(seed):
    rows = ragged(seed)
    try:
        want = tabulate(rows, tablefmt="plain")
    except ValueError:          # "True" among numbers: tabulate's own error, still raised
        with pytest.raises(ValueError):
            output.plain_table(rows)
        return
    assert output.plain_table(rows) == want, rows


def test_random_plain_tables_are_written_without_tabulate_often_enough():
    """The comparison above is worth something only if many of them are written here."""
    assert sum(output._plain_rows(ragged(seed)) is not None for seed in range(300)) > 50


CALC = [["mss", "--mtu", "1500"], ["mss", "--mtu", "1500", "--encap", "pppoe"], ["mss", "--mtu", "9000", "--family", "ipv6"],
        ["mss", "--mtu", "576"], ["mss", "--mtu", "1500", "--encap", "vlan,gre,ipsec"], ["transfer", "--size", "1M", "--mss", "1460"],
        ["transfer", "--size", "10k", "--mss", "536,1460"], ["transfer", "--size", "1G", "--mss", "1460", "--window", "64k"],
        ["bdp", "--bandwidth", "10G", "--rtt", "20ms"], ["bdp", "--bandwidth", "100M", "--rtt", "250ms"],
        ["mathis", "--mss", "1460", "--rtt", "20ms", "--loss", "0.01%"], ["mathis", "--mss", "536", "--rtt", "1s", "--loss", "0.1"]]


@pytest.mark.parametrize("args", CALC, ids=" ".join)
def test_calc_tables_are_tabulates(monkeypatch, capsys, args):
    """Every calc table as tabulate wrote it before, and written without tabulate."""
    from toolkit.commands import calc
    shown = []
    real = output.plain_table

    def plain(rows):
        shown.append(rows)
        return real(rows)
    monkeypatch.setattr(output, "plain_table", plain)
    from toolkit.cli import main
    monkeypatch.setattr("sys.argv", ["mssdiag", "calc", *args])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None), capsys.readouterr().err
    assert len(shown) == 1 and capsys.readouterr().out == tabulate(shown[0], tablefmt="plain") + "\n"
    assert output._plain_rows(shown[0]) is not None, "left to tabulate"
    assert calc is not None
