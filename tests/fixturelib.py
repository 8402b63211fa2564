"""Fixture pairs: fixtures/netstat/<os>/<name>.txt (raw dump as captured) beside <name>.json.

The JSON is either a list of the expected snapshot objects (OS detected from the text),
or {"os": "<name>", "snapshots": [...]} for an excerpt that only --os can place (the same
`| grep fragment` lines come out of FTX 3.4, HP-UX and the BSDs). `source` is left out.

`python tests/fixturelib.py FILE.txt...` prints what the parsers make of a dump now, as a
starting point for its JSON: check every value against the raw text before saving it.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
NETSTAT = ROOT / "fixtures" / "netstat"

sys.path.insert(0, str(ROOT))
import parsers  # noqa: E402
from parsers.text import open_text  # noqa: E402


def frag(values: Optional[dict]) -> Optional[dict]:
    """The seven fragmentation counters of a counters object (the traffic ones left out)."""
    return None if values is None else {k: v for k, v in values.items() if k in parsers.COUNTERS}


def pairs() -> Iterator[Tuple[Path, Path]]:
    for raw in sorted(NETSTAT.glob("*/*")):
        if raw.suffix == ".json" or raw.name.startswith(".") or raw.name == "SOURCES.md":
            continue
        yield raw, raw.with_suffix(".json")


def actual(raw: Path, os_name: Optional[str] = None) -> List[dict]:
    warnings: List[str] = []
    with open(raw, "rb") as f:
        snaps = list(parsers.iter_parse(open_text(f), source=raw.name, os=os_name, warn=warnings.append))
    out = []
    for s in snaps:
        d = s.to_dict()
        del d["source"]
        out.append(d)
    return out


def expected(path: Path) -> Tuple[Optional[str], List[dict]]:
    data = json.loads(path.read_text())
    if isinstance(data, dict):
        return data.get("os"), data["snapshots"]
    return None, data


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(json.dumps(actual(Path(name)), indent=2))
