"""This process and others, as Linux shows them: what the lab and the prober's PMTUD check
both need to leave nothing behind."""
from __future__ import annotations

import contextlib
import signal
from typing import Iterator, Optional


def start_time(pid: int) -> Optional[int]:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22): with the
    pid, it names one process even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT/SIGTERM/SIGHUP wait until the block inside is done (a set-up and the
    registration of its clean-up, or a teardown): an interrupt cannot fall between the two."""
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
