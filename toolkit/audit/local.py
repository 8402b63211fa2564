"""This host's own counters for `audit run --local`.

Linux: /proc/net/snmp and /proc/net/snmp6 (both per network namespace: inside
`ip netns exec NS` they are that namespace's). Elsewhere the OS's own `netstat -s`, with
the C locale so the labels are the English ones the parsers know.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from typing import Optional, Tuple

PROC = ("/proc/net/snmp", "/proc/net/snmp6")


class LocalError(RuntimeError):
    """The counters of this host cannot be read; the message says why."""


def netns_name() -> Optional[str]:
    """The name of the named network namespace this process runs in (as `ip netns identify`
    finds it: the /run/netns entry with the same inode), or None."""
    try:
        mine = os.stat("/proc/self/ns/net")
    except OSError:
        return None
    try:
        names = sorted(os.listdir("/run/netns"))
    except OSError:
        return None
    for name in names:
        try:
            st = os.stat(os.path.join("/run/netns", name))
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
            return name
    return None


def host_name() -> str:
    """This host's short name; inside a named network namespace `NAME@NETNS`, because the
    counters are that namespace's, not the machine's."""
    name = socket.gethostname().split(".")[0] or "localhost"
    ns = netns_name() if sys.platform.startswith("linux") else None
    return f"{name}@{ns}" if ns else name


def read() -> Tuple[str, str, Optional[str]]:
    """(text, where it came from, the parser to read it with) for this host's counters."""
    if sys.platform.startswith("linux"):
        parts = []
        for path in PROC:
            try:
                with open(path, encoding="ascii", errors="replace") as fh:
                    parts.append(fh.read())
            except FileNotFoundError:
                continue                          # no IPv6 in this kernel or namespace
            except OSError as exc:
                raise LocalError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if not parts:
            raise LocalError(f"{PROC[0]}: no such file (is /proc mounted?)")
        return "".join(p if p.endswith("\n") else p + "\n" for p in parts), " + ".join(PROC), "linux"
    argv = ["netstat", "-s"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=60,
                              env=dict(os.environ, LC_ALL="C", LANG="C"))
    except FileNotFoundError:
        raise LocalError("netstat: not found; --local needs the OS's netstat -s") from None
    except subprocess.TimeoutExpired:
        raise LocalError("netstat -s: no answer within 60 s") from None
    if done.returncode != 0 or not done.stdout.strip():
        why = done.stderr.decode(errors="replace").strip().splitlines()
        raise LocalError(f"netstat -s: exit {done.returncode}" + (f": {why[0]}" if why else ""))
    from io import BytesIO
    from parsers.text import open_text
    return open_text(BytesIO(done.stdout)).read(), "netstat -s", None
