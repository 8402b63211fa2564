"""`mssdiag collect`: what one Linux host knows about its MSS, MTU and fragmentation, gathered
without privilege into one case directory (or archive) that `mssdiag triage` reads offline.

Every source is a read: commands that print kernel state over netlink or /proc, and files
under /proc read directly. Nothing sends a packet (no name lookups either: the host name is
the kernel's, every command runs numeric). A tool that is missing, not permitted without
root, failing or too slow is recorded in the manifest, never fatal. docs/collect.md is the
contract: the files, the manifest, and what --redact changes.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Dict, List, Optional, Tuple

from toolkit.output import write_atomic

SCHEMA = "mssdiag-collect/1"
MANIFEST = "manifest.json"
HOST_FILE = "host.toml"
# Where tools live on Linux, searched after PATH: cron's PATH (/usr/bin:/bin) has no sbin,
# where ip, iptables-save and nft are installed.
SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")
TIMEOUT = 20.0
STDERR_MAX = 2000


@dataclass(frozen=True)
class Source:
    """One thing collected: a command run (its stdout saved), or /proc files read directly
    (`command` then shows the equivalent command)."""
    file: str
    command: Tuple[str, ...]
    listed: bool = True           # named in host.toml: a file triage reads
    counters: bool = False        # IP statistics (netstat -s / nstat)


COMMANDS = (
    Source("netstat-s.txt", ("netstat", "-s"), counters=True),
    # -a: absolute values (not increases since nstat's last run); -s: nstat's history file is
    # left alone; -z: zero counters too
    Source("nstat.txt", ("nstat", "-asz"), counters=True),
    Source("ss-tin.txt", ("ss", "-tin")),
    Source("ip-route-cache.txt", ("ip", "route", "show", "cache")),
    Source("ip6-route-cache.txt", ("ip", "-6", "route", "show", "cache")),
    Source("ip-link.txt", ("ip", "-d", "link", "show")),
    Source("ip-route.txt", ("ip", "route", "show")),
    Source("ip6-route.txt", ("ip", "-6", "route", "show")),
    # the same in JSON, for tools; triage reads each fact once, from the text forms above
    Source("ip-link.json", ("ip", "-d", "-j", "link", "show"), listed=False),
    Source("ip-route.json", ("ip", "-j", "route", "show"), listed=False),
    Source("ip6-route.json", ("ip", "-6", "-j", "route", "show"), listed=False),
    Source("iptables-save.txt", ("iptables-save",)),
    Source("ip6tables-save.txt", ("ip6tables-save",)),
    Source("nft-ruleset.txt", ("nft", "list", "ruleset")),
)
# Read when neither netstat nor nstat gave the counters (the fleet's Linux collection reads
# the same files: toolkit/platforms/linux.py COLLECT).
PROC_COUNTERS = Source("proc-net-snmp.txt", ("cat", "/proc/net/snmp", "/proc/net/snmp6"), counters=True)
# The PMTU-related sysctls (and the IPv6 ones where IPv6 has its own), read from /proc/sys.
SYSCTLS = (
    "net.ipv4.tcp_mtu_probing", "net.ipv4.tcp_base_mss", "net.ipv4.tcp_mtu_probe_floor",
    "net.ipv4.tcp_probe_threshold", "net.ipv4.tcp_probe_interval", "net.ipv4.tcp_min_snd_mss",
    "net.ipv4.ip_no_pmtu_disc", "net.ipv4.ip_forward", "net.ipv4.ip_forward_use_pmtu",
    "net.ipv4.route.min_pmtu", "net.ipv4.route.mtu_expires", "net.ipv4.route.min_adv_mss",
    "net.ipv6.conf.all.forwarding", "net.ipv6.conf.default.mtu", "net.ipv6.conf.all.accept_ra_mtu",
    "net.ipv6.route.mtu_expires", "net.ipv6.route.min_adv_mss",
)
# for the engineer (no reader takes sysctl output; the values are in the manifest too)
SYSCTL = Source("sysctl.txt", ("sysctl",) + SYSCTLS, listed=False)

# What the kernel says when an unprivileged user may not read something (strerror in the C locale).
NOT_PERMITTED = ("Permission denied", "Operation not permitted", "you must be root")


class CollectError(Exception):
    """Nothing could be written (or this is not a Linux host): one line naming why."""


@dataclass
class Item:
    """What became of one source: the manifest's `files` entry."""
    file: str
    command: str
    how: str                        # run | read (mssdiag read the files itself)
    status: str                     # ok | missing | not-permitted | failed | timeout | skipped
    exit: Optional[int] = None
    stderr: str = ""
    bytes: int = 0
    seconds: float = 0.0
    note: str = ""

    def to_dict(self) -> dict:
        return {"file": self.file, "command": self.command, "how": self.how, "status": self.status,
                "exit": self.exit, "stderr": self.stderr, "bytes": self.bytes,
                "seconds": round(self.seconds, 3), "note": self.note}


@dataclass
class Bundle:
    """One collection, before it is written: the outputs and what became of each source."""
    host: str
    started: datetime
    kernel: str
    privileged: bool
    outputs: Dict[str, str] = field(default_factory=dict)     # file -> text as saved
    items: List[Item] = field(default_factory=list)
    sysctl: Dict[str, Optional[str]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def stamp(self) -> str:
        return self.started.strftime("%Y%m%dT%H%M%SZ")

    def listed(self) -> List[str]:
        wanted = {s.file for s in COMMANDS + (PROC_COUNTERS, SYSCTL) if s.listed}
        return [i.file for i in self.items if i.file in self.outputs and i.file in wanted]

    def manifest(self, redaction: Optional[dict] = None, host: Optional[str] = None) -> dict:
        import toolkit
        return {
            "schema": SCHEMA,
            "tool": f"mssdiag {toolkit.__version__}",
            "host": host or self.host,
            "os": "linux",
            "kernel": self.kernel,
            "collected_at": iso(self.started),
            "seconds": round(self.seconds, 3),
            "privileged": self.privileged,
            "redaction": redaction,
            "files": [i.to_dict() for i in self.items],
            "sysctl": self.sysctl,
        }

    def files(self, redaction: Optional[dict] = None, host: Optional[str] = None) -> Dict[str, str]:
        """Every file of the bundle: the outputs, host.toml and manifest.json (naming the
        host `host` when given: its token)."""
        files = dict(self.outputs)
        files[HOST_FILE] = host_toml(host or self.host, self.kernel, self.listed(), self.started)
        files[MANIFEST] = json.dumps(self.manifest(redaction, host), indent=1) + "\n"
        return files


def iso(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _toml_str(value: str) -> str:
    return json.dumps(value)       # a JSON string is a TOML basic string


def host_toml(host: str, kernel: str, dumps: List[str], started: datetime) -> str:
    return (f"# mssdiag collect, {iso(started)}: the host these files come from and the files triage\n"
            f"# reads; manifest.json says how each file was made and what could not be read.\n"
            f"name = {_toml_str(host)}\n"
            f'os = "linux"\n'
            f"release = {_toml_str(kernel)}\n"
            f"dumps = [{', '.join(_toml_str(d) for d in dumps)}]\n")


def search_path() -> str:
    """PATH, then the sbin directories (cron's PATH lacks them)."""
    parts = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    return os.pathsep.join(parts + [d for d in SBIN if d not in parts])


def _header(when: datetime, command: Tuple[str, ...]) -> str:
    """The two lines before each output: when it was taken (a date line, as `date; netstat -s`
    leaves in a cron log, so triage knows the time) and the command, as a terminal shows it."""
    return f"{iso(when)}\n$ {' '.join(command)}\n"


def _status(code: int, stderr: str) -> str:
    if code == 0:
        return "ok"
    return "not-permitted" if any(s in stderr for s in NOT_PERMITTED) else "failed"


def run(source: Source, path: str, timeout: float) -> Tuple[Item, Optional[str]]:
    """Run one command: (what became of it, its stdout or None)."""
    command = " ".join(source.command)
    item = Item(source.file, command, "run", "missing")
    exe = shutil.which(source.command[0], path=path)
    if exe is None:
        # not the search path itself: it may name the user's home directory
        item.note = f"{source.command[0]} not found in PATH or {', '.join(SBIN)}"
        return item, None
    env = {"PATH": path, "LC_ALL": "C", "LANG": "C"}
    start = time.monotonic()
    try:
        done = subprocess.run([exe, *source.command[1:]], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        item.status, item.seconds = "timeout", time.monotonic() - start
        item.note = f"stopped after {timeout:g} s"
        item.stderr = _clip((exc.stderr or b"").decode("utf-8", "replace"))
        return item, None
    except OSError as exc:
        item.status, item.stderr = "failed", exc.strerror or str(exc)
        return item, None
    item.seconds = time.monotonic() - start
    item.exit = done.returncode
    item.stderr = _clip(done.stderr.decode("utf-8", "replace"))
    item.status = _status(done.returncode, item.stderr)
    out = done.stdout.decode("utf-8", "surrogateescape")
    return item, (out if item.status == "ok" or out.strip() else None)


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= STDERR_MAX else text[:STDERR_MAX] + " ..."


def read_proc(source: Source, paths: List[str]) -> Tuple[Item, Optional[str]]:
    """Read /proc files as `cat` would print them (a missing one is noted, not fatal)."""
    item = Item(source.file, " ".join(source.command), "read", "ok", exit=None)
    start = time.monotonic()
    parts, missing = [], []
    for p in paths:
        try:
            with open(p, encoding="utf-8", errors="surrogateescape") as fh:
                parts.append(fh.read())
        except OSError as exc:
            missing.append(f"{p}: {exc.strerror or exc}")
    item.seconds = time.monotonic() - start
    if missing:
        item.stderr = "; ".join(missing)
    if not parts:
        item.status = "not-permitted" if any("Permission denied" in m for m in missing) else "failed"
        return item, None
    return item, "".join(parts)


def read_sysctls(keys=SYSCTLS, root: str = "/proc/sys") -> Tuple[Dict[str, Optional[str]], List[str]]:
    """({key: value or None}, why each missing one is missing)."""
    values: Dict[str, Optional[str]] = {}
    why = []
    for key in keys:
        try:
            with open(os.path.join(root, *key.split(".")), encoding="utf-8") as fh:
                values[key] = " ".join(fh.read().split())
        except OSError as exc:
            values[key] = None
            why.append(f"{key}: {exc.strerror or exc}")
    return values, why


def collect(path: Optional[str] = None, timeout: float = TIMEOUT,
            progress: Optional[Callable[[Item], None]] = None) -> Bundle:
    """Collect this host's evidence (nothing is written: see write_directory, write_archive).
    `path`: where to look for the tools (default: PATH, then the sbin directories)."""
    if not sys.platform.startswith("linux"):
        raise CollectError(f"this is {sys.platform}, not Linux: docs/collect.md lists what to run by hand "
                           "on Windows, HP-UX, Solaris, AIX and VOS")
    path = search_path() if path is None else path
    uname = os.uname()
    bundle = Bundle(host=uname.nodename, started=datetime.now(timezone.utc), kernel=uname.release,
                    privileged=os.geteuid() == 0)
    clock = time.monotonic()

    def done(item: Item, text: Optional[str], when: datetime, command: Tuple[str, ...]) -> None:
        if text is not None:
            if text and not text.endswith("\n"):
                text += "\n"
            bundle.outputs[item.file] = text if item.file.endswith(".json") else _header(when, command) + text
            item.bytes = len(text.encode("utf-8", "surrogateescape"))
        bundle.items.append(item)
        if progress:
            progress(item)

    for source in COMMANDS:
        when = datetime.now(timezone.utc)
        item, text = run(source, path, timeout)
        done(item, text, when, source.command)
    when = datetime.now(timezone.utc)
    if any(i.status == "ok" for i in bundle.items if i.file in {s.file for s in COMMANDS if s.counters}):
        done(Item(PROC_COUNTERS.file, " ".join(PROC_COUNTERS.command), "read", "skipped",
                  note="netstat -s or nstat gave the counters"), None, when, PROC_COUNTERS.command)
    else:
        item, text = read_proc(PROC_COUNTERS, list(PROC_COUNTERS.command[1:]))
        done(item, text, when, PROC_COUNTERS.command)
    when = datetime.now(timezone.utc)
    start = time.monotonic()
    bundle.sysctl, why = read_sysctls()
    present = [k for k, v in bundle.sysctl.items() if v is not None]
    item = Item(SYSCTL.file, "sysctl " + " ".join(SYSCTLS), "read", "ok" if present else "failed",
                stderr="; ".join(why), seconds=time.monotonic() - start,
                note="read from /proc/sys; a key this kernel does not have is null in `sysctl`" if why else "")
    text = "".join(f"{k} = {bundle.sysctl[k]}\n" for k in present) if present else None
    done(item, text, when, ("sysctl",) + tuple(present))
    bundle.seconds = time.monotonic() - clock
    return bundle


# --------------------------------------------------------------------------- writing


def default_name(host: str, bundle: Bundle) -> str:
    return f"mssdiag-{host}-{bundle.stamp}"


def write_directory(files: Dict[str, str], target: str) -> None:
    """The bundle as a case directory: made beside `target` under a dot name and renamed,
    so a reader never sees half of it; mode 700, as it holds the host's addresses and
    firewall rules. `target` must not exist, or be an empty directory."""
    target = os.path.abspath(target)
    if os.path.lexists(target):
        if not os.path.isdir(target) or os.listdir(target):
            raise CollectError(f"{target}: exists and is not an empty directory; give a new one")
    parent = os.path.dirname(target)
    tmp = None
    try:
        # named before it is made, so an interrupt at any moment leaves nothing behind
        tmp = os.path.join(parent, f".{os.path.basename(target)}.{os.urandom(8).hex()}")
        os.mkdir(tmp, 0o700)
        for name, text in files.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(text)
        if os.path.isdir(target):
            os.rmdir(target)
        os.rename(tmp, target)
    except BaseException as exc:          # a full disk or an interrupt: nothing half-written is left
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            raise CollectError(f"{exc.filename or target}: cannot write: {exc.strerror or exc}") from None
        raise


def write_archive(files: Dict[str, str], target: str, top: str, when: datetime) -> None:
    """The bundle as a .tar.gz holding one directory `top` (a case directory once unpacked);
    no user or group names in it, every member dated at the collection; mode 600."""
    if os.path.lexists(target):
        raise CollectError(f"{target}: exists; not overwritten")
    mtime = int(when.timestamp())

    def write(raw) -> None:
        with tarfile.open(fileobj=raw, mode="w:gz") as tar:
            info = tarfile.TarInfo(top)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, mtime
            tar.addfile(info)
            for name, text in files.items():
                data = text.encode("utf-8", "surrogateescape")
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size, info.mode, info.mtime = len(data), 0o644, mtime
                tar.addfile(info, io.BytesIO(data))

    try:        # a full disk or an interrupt: nothing half-written is left (write_atomic)
        write_atomic(target, write, mode=0o600, binary=True)
    except OSError as exc:
        raise CollectError(f"{target}: cannot write: {exc.strerror or exc}") from None


def files_of(bundle: Bundle, redactor=None) -> Tuple[str, Dict[str, str]]:
    """(the host name as the bundle names it, every file of the bundle), redacted with
    `redactor` (toolkit/redact.py) when one is given."""
    if redactor is None:
        return bundle.host, bundle.files()
    from toolkit import redact
    host = redactor.name(bundle.host)       # whatever the name: even one no text pass may replace
    return host, redact.redact(bundle.files(redact.summary(), host), redactor, [bundle.host])
