#!/usr/bin/env python3
"""Write toolkit/commands/spec.py from the typer app: what the fast path needs to know of the
commands it runs without typer (docs/architecture.md, "Start-up"). `--check`: exit 1 when the
file differs from what the app gives."""
from __future__ import annotations

import sys
from pathlib import Path

SPEC = Path(__file__).resolve().parent.parent / "toolkit" / "commands" / "spec.py"


def main() -> None:
    sys.path.insert(0, str(SPEC.parents[2]))
    from toolkit.cli import app
    from toolkit.cli.startup import describe

    text = describe(app)
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if SPEC.exists() and SPEC.read_text() == text else 1)
    SPEC.write_text(text)


if __name__ == "__main__":
    main()
