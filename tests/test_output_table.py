"""toolkit/output.py's tables: tabulate's, with text shown as it is (tabulate alone reads
text that looks like a number as one: a host named 007 would become 7) and every cell from
outside made terminal-safe."""
from __future__ import annotations

import io

from tabulate import tabulate

from toolkit import output


def test_text_that_looks_like_a_number_stays_as_it_is():
    rows = [["007", 1500, "web1"], ["1e3", 20, "inf"]]
    lines = output.table_text(rows, ["host", "mtu", "name"]).splitlines()
    assert lines[2].split() == ["007", "1500", "web1"] and lines[3].split() == ["1e3", "20", "inf"]
    assert lines[3].index("20") + 2 == lines[2].index("1500") + 4          # numbers still aligned right


def test_a_table_of_plain_cells_is_tabulates():
    rows = [["web1", 1, None], ["db2", 22, "x"]]
    assert output.table_text(rows, ["host", "n", "note"]) == tabulate(rows, headers=["host", "n", "note"])


def test_table_prints_pages_of_safe_cells():
    out = io.StringIO()
    rows = [[f"h{i}\x1b[2J", i, None] for i in range(7)]
    assert output.table(iter(rows), ["host", "n", "none"], page=3, out=out) == 7
    text = out.getvalue()
    assert "\x1b" not in text and "h6?[2J" in text and text.count("host") == 3     # a header a page
    assert text.splitlines()[2].split() == ["h0?[2J", "0", "-"]
