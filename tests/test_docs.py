"""docs/ stays true: the parser table is generated, every command is documented."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import parsers_doc  # noqa: E402


def test_parsers_md_is_current():
    assert (ROOT / "docs" / "parsers.md").read_text() == parsers_doc.render(), \
        "run: .venv/bin/python scripts/parsers_doc.py > docs/parsers.md"


def test_every_command_is_in_the_cli_reference():
    from toolkit.cli import app
    text = (ROOT / "docs" / "cli.md").read_text()
    names = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
    assert names
    for name in names:
        assert f"mssdiag {name}" in text, f"docs/cli.md does not document `mssdiag {name}`"
