"""Helpers for the audit tests: dumps made from a real /proc/net/snmp capture with chosen
counter values, and the CLI run as a separate process (real exit codes, real stdout)."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, Iterable, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
SNMP = (ROOT / "fixtures/netstat/linux/tcpmon-proc-net-snmp.txt").read_text()
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
STEP = timedelta(minutes=15)


def snmp_dump(when: Optional[datetime] = None, **ip: int) -> str:
    """The real /proc/net/snmp capture with some Ip: values replaced, a `date` line before it."""
    lines = SNMP.splitlines()
    header, values = lines[0].split(), lines[1].split()
    for name, value in ip.items():
        values[header.index(name)] = str(value)
    text = "\n".join([lines[0], " ".join(values)] + lines[2:]) + "\n"
    if when is not None:
        text = when.strftime("%a %b %d %H:%M:%S UTC %Y") + "\n" + text
    return text


def cron_log(steps: Iterable[Dict[str, int]], start: datetime = T0, step: timedelta = STEP) -> str:
    """`date; cat /proc/net/snmp` appended every `step`: one dict of Ip: totals per snapshot."""
    return "".join(snmp_dump(start + i * step, **values) for i, values in enumerate(steps))


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def mssdiag(*args: str, stdin: Optional[str] = None, env: Optional[dict] = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    full = dict(os.environ, **(env or {}))
    full.pop("MSSDIAG_STORE", None)
    full.setdefault("XDG_CONFIG_HOME", "/nonexistent-mssdiag-test")
    return subprocess.run([sys.executable, "-m", "toolkit", *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, env=full, timeout=timeout)


def rows(store: Path, sql: str, args: Tuple = ()) -> list:
    db = sqlite3.connect(store)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()
