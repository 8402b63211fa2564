"""Every command's help reads as whole paragraphs at 80 and 120 columns: typer renders the
help text as Markdown, so a paragraph is reflowed to the terminal's width, and no line of
it ends early, before a word that would still have fitted (a line break written into a
docstring or an option's help). Examples stay examples (code blocks, one command a line)."""
from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from toolkit.cli import app

BORDER = "│"


def commands():
    found = []

    def walk(command, words):
        found.append(words)
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, words + [name])
    walk(typer.main.get_command(app), [])
    return found


def rendered(words, columns: int) -> str:
    done = CliRunner().invoke(app, words + ["--help"], env={"COLUMNS": str(columns)},
                              prog_name="mssdiag")
    assert done.exit_code == 0, done.output
    return done.output


def _last_cell(line: str):
    """(start column, text) of the last piece of text on a line: after the last run of two
    or more spaces, the box border aside."""
    body = line.rstrip().rstrip(BORDER).rstrip()
    cells = [(m.start(), m.group(0)) for m in re.finditer(r"\S+(?: \S+)*", body)]
    return cells[-1] if cells else (None, "")


def _first_cell(line: str):
    m = re.search(r"\S+(?: \S+)*", line.lstrip(BORDER) if line.startswith(BORDER) else line)
    if not m:
        return None, ""
    return m.start() + (len(line) - len(line.lstrip(BORDER)) if line.startswith(BORDER) else 0), m.group(0)


def early_breaks(text: str, columns: int):
    """Pairs of lines where the first ends although the next one's first word would have
    fitted after it, in the same column: a hard line break inside a paragraph."""
    lines = text.splitlines()
    found = []
    for a, b in zip(lines, lines[1:]):
        a_start, a_text = _last_cell(a)
        b_start, b_text = _first_cell(b)
        if a_start is None or b_start is None or a_start != b_start or a_text.startswith(("Usage:",)):
            continue
        if b_text.startswith(("[", "•", "- ", "* ")) or (not a.startswith(BORDER) and a_start != 1):
            continue        # typer's [default: ...], a list item; top-level text at column 1 only (code is indented)
        edge = (a.rstrip().rfind(BORDER) if a.rstrip().endswith(BORDER) else columns) - 1
        word = b_text.split(" ")[0]
        if a_start + len(a_text) + 1 + len(word) <= edge:
            found.append(f"{a.strip(BORDER + ' ')!r} / {b.strip(BORDER + ' ')!r}")
    return found


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("words", commands(), ids=lambda w: " ".join(w) or "mssdiag")
def test_help_paragraphs_reflow(words, columns):
    text = rendered(words, columns)
    assert max(len(line) for line in text.splitlines()) <= columns
    assert early_breaks(text, columns) == [], "\n".join(early_breaks(text, columns))


def test_the_check_finds_a_hand_wrapped_paragraph():
    good = " One paragraph that the renderer wrapped because the next word did not fit on\n the line before it.\n"
    bad = " A paragraph wrapped by hand\n in the docstring.\n"
    assert early_breaks(good, 80) == [] and len(early_breaks(bad, 80)) == 1
    panel = ("│ --os   OS   Read every dump as this OS                   │\n"
             "│             instead of detecting it.                    │\n")
    assert len(early_breaks(panel, 60)) == 1


def test_examples_stay_one_command_a_line():
    lines = [line.rstrip() for line in rendered(["parse"], 80).splitlines()]
    at = lines.index("  mssdiag parse dump.txt")
    assert lines[at + 1] == "  ssh host netstat -s | mssdiag parse - --json"
