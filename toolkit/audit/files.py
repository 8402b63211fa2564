"""Cron-safe file handling: one run at a time (a lock with a bounded wait) and files that are
either wholly old or wholly new (written beside the target, then renamed over it)."""
from __future__ import annotations

import errno
import fcntl
import os
import time



class LockTimeout(RuntimeError):
    """Another run held the lock for longer than we may wait."""


class RunLock:
    """An exclusive flock on `<store>.lock`; the holder's pid and start time are written in it,
    so the one line a waiting run prints names who holds it."""

    def __init__(self, path: str, wait: float):
        self.path, self.wait, self.fd = path, wait, None

    def __enter__(self) -> "RunLock":
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.wait
        delay = 0.05
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
            if time.monotonic() >= deadline:
                holder = ""
                try:
                    holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
                except OSError:
                    pass
                os.close(fd)
                raise LockTimeout(f"{self.path}: another audit run holds the lock"
                                  + (f" ({holder})" if holder else "") + f"; gave up after {self.wait:g} s")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n".encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            try:
                os.ftruncate(self.fd, 0)
            except OSError:
                pass
            os.close(self.fd)          # closing releases the flock
            self.fd = None
