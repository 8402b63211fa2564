"""The `mssdiag` console script: interrupts and broken output end in one line, never a
traceback -- even during start-up, before the CLI's own modules are imported.

It also keeps the interpreter's own bookkeeping off a run's clock (docs/architecture.md,
"Start-up"): no garbage collection while the CLI's modules load (they are long-lived,
the collector would walk them again and again for nothing), and no interpreter
teardown after the command has finished and its output is flushed, when nothing is
left that teardown could still run (no other thread, no atexit handler). Together
these are ~10 ms of a quiet run and ~20 ms of a probe, more on a loaded machine (issue 10;
docs/benchmarks.md). So a command must close what it writes (`with`) before it returns:
only stdout and stderr are flushed here.
"""
from __future__ import annotations

import _signal as signal     # the C module: `signal` would import enum (~4 ms) before anything is needed
import gc
import os
import sys


def _stop(signum, frame) -> None:
    name = "interrupted" if signum == signal.SIGINT else "terminated"
    try:
        sys.stderr.write(f"mssdiag: {name}\n")
        sys.stderr.flush()
    finally:
        os._exit(128 + signum)


# Installed on import, the first thing the console script does: until the CLI is loaded an
# interrupt just ends the process with one line; once it is, the CLI turns SIGINT/SIGTERM
# into a clean stop (JSON arrays closed, one line).
signal.signal(signal.SIGINT, _stop)
signal.signal(signal.SIGTERM, _stop)


def _finished(code) -> None:
    """End the process now, skipping the interpreter's teardown, when that is safe: the
    exit status is a number, stdout and stderr are flushed, and nothing is left that
    teardown would still run (another thread to wait for, an atexit handler such as
    logging's or a temporary directory's). Otherwise return, for the normal exit."""
    import _thread
    import atexit

    pending = getattr(atexit, "_ncallbacks", None)           # CPython's; elsewhere: the normal exit
    threads = getattr(_thread, "_count", None)
    if not (code is None or isinstance(code, int)) or pending is None or threads is None \
            or pending() or threads():
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:           # the normal exit reports it, as it always has
        return
    os._exit(code or 0)


def main() -> None:
    gc.disable()        # the CLI's modules, loading now, are never garbage
    try:
        # `--version` and the common offline commands without typer, when the command line
        # is plainly understood (toolkit/commands/fast.py); everything else: the typer CLI
        from toolkit.commands.fast import plan
        run = plan(sys.argv[1:], os.environ)
        if run is None:
            from toolkit.cli import main as run
    finally:
        gc.freeze()     # what exists now lives until exit: the collector need not walk it again
        gc.enable()
    try:
        run()
    except SystemExit as done:
        _finished(done.code)
        raise
    _finished(0)
