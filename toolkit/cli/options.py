"""Option values that several commands check alike: --jobs, --port and --send."""

import codecs
from typing import List, Optional

import typer

from toolkit.output import error


def check_jobs(jobs: int) -> None:
    """--jobs (parse, diff, triage): 0 is one per CPU, below 0 is refused."""
    if jobs < 0:
        raise typer.BadParameter(f"{jobs} is below 0 (0 means one per CPU)", param_hint="--jobs")


def parse_ports(text: Optional[str]) -> List[int]:
    """'21,80,8000-8002' -> [21, 80, 8000, 8001, 8002]; ValueError names the bad part."""
    if not text:
        return []
    ports: List[int] = []
    for part in text.split(","):
        part = part.strip()
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise ValueError(f"{part!r} is not a port number or range")
        a, b = int(lo), int(hi or lo)
        if a > b:
            raise ValueError(f"{part!r} runs backwards (did you mean {b}-{a}?)")
        if not (1 <= a <= b <= 65535):
            raise ValueError(f"{part!r} is outside 1-65535")
        if b - a >= 1024:
            raise ValueError(f"{part!r} is more than 1024 ports")
        ports.extend(p for p in range(a, b + 1) if p not in ports)
    return ports


def ports_and_text(port: Optional[str], send: Optional[str]):
    """Check --port and --send as `probe` and `triage` do: (ports, text), or one stderr line and exit 2."""
    try:
        ports = parse_ports(port)
    except ValueError as exc:
        error(f"--port {port!r}: {exc}")
        raise typer.Exit(2)
    text = None
    if send is not None:
        try:
            text = codecs.decode(send, "unicode_escape")
        except UnicodeDecodeError as exc:
            error(f"--send {send!r}: bad escape ({exc.reason})")
            raise typer.Exit(2)
    return ports, text
