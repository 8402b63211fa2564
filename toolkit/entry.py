"""The `mssdiag` console script: the typer CLI (toolkit.cli.main), with an interrupt while
it loads ending in one line too, never a traceback."""
from __future__ import annotations

import signal

STOPS = {signal.SIGINT, signal.SIGTERM}


def main() -> None:
    # An interrupt while the CLI loads waits, blocked, until toolkit.cli.main has installed
    # its handlers and unblocks it: it then ends the run as every interrupt does, in one
    # line. (A handler that raised here could land inside an import, in the middle of
    # defining a class, and come out as a traceback.)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    from toolkit.cli import main as run
    try:
        run()
    finally:
        # the command is over, its output flushed and its status decided: a signal now
        # must not turn the interpreter's exit into a traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
