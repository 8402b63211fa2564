"""The `mssdiag` console script: interrupts and broken output end in one line, never a
traceback -- even during start-up, before the CLI's own modules are imported."""
from __future__ import annotations

import os
import signal
import sys


def _stop(signum, frame) -> None:
    name = "interrupted" if signum == signal.SIGINT else "terminated"
    try:
        sys.stderr.write(f"mssdiag: {name}\n")
        sys.stderr.flush()
    finally:
        os._exit(128 + signum)


def main() -> None:
    # Until the CLI is loaded, an interrupt just ends the process with one line; once it
    # is, the CLI turns SIGINT/SIGTERM into a clean stop (JSON arrays closed, one line).
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    from toolkit.cli import main as run
    run()
