"""The per-OS commands of the collection playbook, from toolkit/platforms (one place per OS).

collect.yml carries them as its `mssdiag_commands` variable between two marker lines, so a
playbook copied into an AWX project stands alone; `vars_block()` renders that block from
the platform modules and tests/test_fleet.py checks the shipped playbook holds exactly it
(`python -m toolkit.fleet.commands --write` rewrites it after a platform module changed).
"""
from __future__ import annotations

import json
import sys
from typing import Dict, Optional

from toolkit import platforms
from toolkit.fleet import COLLECT_PLAYBOOK

BEGIN = "    # BEGIN mssdiag_commands: generated from toolkit/platforms by `python -m toolkit.fleet.commands --write`"
END = "    # END mssdiag_commands"


def table() -> Dict[str, Dict[str, Optional[str]]]:
    """{os: {"collect": command, "boot": command or None}} for every host platform."""
    out = {}
    for name in platforms.names():
        module = platforms.get(name)
        collect = getattr(module, "COLLECT", None)
        if collect:
            out[name] = {"collect": collect, "boot": getattr(module, "BOOT", None)}
    return out


def vars_block() -> str:
    """The YAML lines between the markers: one flow mapping per OS (JSON strings are YAML)."""
    lines = [BEGIN, "    mssdiag_commands:"]
    for name, cmds in table().items():
        boot = "null" if cmds["boot"] is None else json.dumps(cmds["boot"])
        lines.append(f"      {name}: {{collect: {json.dumps(cmds['collect'])}, boot: {boot}}}")
    lines.append(END)
    return "\n".join(lines) + "\n"


def shipped_block(text: str) -> Optional[str]:
    """The block as it stands in a playbook's text, markers included, or None."""
    start = text.find(BEGIN)
    end = text.find(END, start if start >= 0 else 0)
    if start < 0 or end < 0:
        return None
    return text[start:end + len(END)] + "\n"


def write(path: str = COLLECT_PLAYBOOK) -> bool:
    """Rewrite the block in the playbook; True when it changed."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    old = shipped_block(text)
    if old is None:
        raise SystemExit(f"{path}: no {BEGIN.strip()!r} ... {END.strip()!r} block")
    new = vars_block()
    if old == new:
        return False
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, new))
    return True


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        print("rewritten" if write() else "already current")
    else:
        sys.stdout.write(vars_block())
