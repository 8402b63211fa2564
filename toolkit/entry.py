"""The `mssdiag` console script: the typer CLI (toolkit.cli.main), with an interrupt while
it loads ending in one line too, never a traceback."""
from __future__ import annotations

import signal
import sys


def _stop(signum, frame) -> None:
    sys.stderr.write(f"mssdiag: {'interrupted' if signum == signal.SIGINT else 'terminated'}\n")
    sys.exit(128 + signum)


# Installed when the console script imports this module, before any of mssdiag's own code
# runs: until main() blocks them, an interrupt just ends the run.
signal.signal(signal.SIGINT, _stop)
signal.signal(signal.SIGTERM, _stop)


def main() -> None:
    # While the CLI loads, SIGINT and SIGTERM wait, blocked, until toolkit.cli.main has
    # installed its own handlers (which let what is being written finish whole) and unblocks
    # them: an interrupt then ends the run in one line. (_stop raising while modules load
    # could land inside an import, in the middle of defining a class, and come out as a
    # RuntimeError traceback.)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    from toolkit.cli import main as run
    try:
        run()
    finally:
        # the command is over, its output flushed and its status decided: a signal now
        # must not turn the interpreter's exit into a traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
