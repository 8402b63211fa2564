"""The `mssdiag` console script: the typer CLI (toolkit.cli.main), with an interrupt while
it loads ending in one line too, never a traceback."""
from __future__ import annotations

import signal
import sys


def _stop(signum, frame) -> None:
    sys.stderr.write(f"mssdiag: {'interrupted' if signum == signal.SIGINT else 'terminated'}\n")
    sys.exit(128 + signum)


# Installed when the console script imports this module, before any of mssdiag's own code
# runs: until the CLI is loaded an interrupt just ends the run; toolkit.cli.main then
# installs its own handlers, which let what is being written finish whole.
signal.signal(signal.SIGINT, _stop)
signal.signal(signal.SIGTERM, _stop)


def main() -> None:
    from toolkit.cli import main as run
    try:
        run()
    finally:
        # the command is over, its output flushed and its status decided: a signal now
        # must not turn the interpreter's exit into a traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
