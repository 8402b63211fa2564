#!/usr/bin/env python3
"""Write toolkit/commands/_help.py: every `mssdiag ... --help` as typer prints it when no standard
stream is a terminal, for the fast path (docs/architecture.md, "Start-up"). Run by `make` at
install and by `make fast-spec`; the file is not in git. `help_cache.py PATH` writes PATH instead. The help is rendered in a child
process with no terminal and none of the variables that change rich's output."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "toolkit" / "commands" / "_help.py"


def main() -> None:
    target = Path(sys.argv[-1]) if len(sys.argv) > 1 and sys.argv[-1] != "--child" else TARGET
    if sys.argv[1:2] == ["--child"]:
        sys.path.insert(0, str(ROOT))
        from toolkit.cli import app
        from toolkit.cli.startup import render_help
        text = render_help(app)
        target.with_suffix(".tmp").write_text(text)
        os.replace(target.with_suffix(".tmp"), target)
        return
    sys.path.insert(0, str(ROOT))
    from toolkit.cli.startup import HELP_ENV
    env = {k: v for k, v in os.environ.items() if k not in HELP_ENV and not k.endswith("_COMPLETE")}
    env.update(PYTHONIOENCODING="utf-8")
    subprocess.run([sys.executable, __file__, "--child", str(target)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, env=env, check=True, cwd=str(ROOT))


if __name__ == "__main__":
    main()
