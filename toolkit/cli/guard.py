"""Clean ends for commands that run long or print much: SIGINT / SIGTERM / SIGHUP and a
stdout that cannot be written (a full disk, a reader that left, a closed descriptor)
become one stderr line and an exit code, never a traceback or a half-written line.

    with guard.clean_end("probe", detail=lambda: f" after {done} of {n} targets"):
        guard.STDOUT.write(line)
"""

import contextlib
import os
import signal
import sys
import threading
from typing import Callable, Iterator, Optional

import typer

from toolkit.output import Interrupted, error

OUTPUT_FAILED = 1          # exit status when stdout could not be written
SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGHUP: 129, signal.SIGTERM: 143}   # 128 + signal number


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (raised in the main thread, like KeyboardInterrupt)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class OutputError(Exception):
    """stdout refused our output; the message is the reason."""


class Stdout:
    """sys.stdout for our writes: any failure raises OutputError, and nothing is left
    half-written in Python's buffer to fail again at exit."""

    def write(self, text: str) -> int:
        if sys.stdout is None:
            raise OutputError("stdout is closed")
        try:
            return sys.stdout.write(text)
        except (OSError, ValueError) as exc:     # ValueError: write to a closed file
            raise OutputError(getattr(exc, "strerror", None) or str(exc)) from None

    def flush(self) -> None:
        if sys.stdout is None:
            raise OutputError("stdout is closed")
        try:
            sys.stdout.flush()
        except (OSError, ValueError) as exc:
            raise OutputError(getattr(exc, "strerror", None) or str(exc)) from None

    def line(self, text: str = "") -> None:
        self.write(text + "\n")


STDOUT = Stdout()


@contextlib.contextmanager
def terminating_signals() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise Terminated in the main thread (SIGINT raises
    KeyboardInterrupt already), so `finally` blocks and teardowns run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, _frame):
        raise Terminated(signum)
    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so what Python still holds for stdout cannot fail at exit."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)


def _say(message: str) -> None:
    with contextlib.suppress(Exception):
        error(message)


@contextlib.contextmanager
def clean_end(command: str, detail: Optional[Callable[[], str]] = None) -> Iterator[None]:
    """Run a command's body: an interrupt ends it with 'mssdiag: COMMAND: interrupted by
    SIGINT<detail>' (exit 130, 143 for SIGTERM, 129 for SIGHUP), an unwritable stdout with
    'mssdiag: COMMAND: cannot write the output: <reason>' (exit 1). Threads still at work
    (a probe's name lookups) are daemon threads: the exit does not wait for them."""
    with terminating_signals():
        try:
            if sys.stdout is None:
                raise OutputError("stdout is closed")
            yield
            STDOUT.flush()
        except OutputError as exc:
            _silence_stdout()
            _say(f"{command}: cannot write the output: {exc}")
            raise typer.Exit(OUTPUT_FAILED)
        except (KeyboardInterrupt, Terminated, Interrupted) as exc:
            signum = getattr(exc, "signum", signal.SIGINT)
            try:
                STDOUT.flush()
            except OutputError:
                _silence_stdout()
            _say(f"{command}: interrupted by {signal.Signals(signum).name}{detail() if detail else ''}")
            raise typer.Exit(SIGNAL_EXIT[signum])
