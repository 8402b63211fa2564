"""Run a shipped playbook with ansible-playbook (a subprocess: Ansible is never imported here)
and follow the index.jsonl its callback writes, host by host.

Ansible's own output goes to `<dir>/.ansible.log` (a dot name: the audit's walk skips it).
ansible-playbook runs in a session of its own, so a terminal's ^C reaches mssdiag only, which
stops it (SIGTERM to its process group, SIGKILL after 10 s) and keeps what was written. Its
SSH control masters live in a private directory and are closed when it ends: a run leaves
no process behind.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

from toolkit.fleet import ENV_DIR, ENV_TIME, INDEX
LOG = ".ansible.log"
POLL_S = 0.2


class FleetError(RuntimeError):
    """The playbook could not run; the message is one line naming why."""


@dataclass
class Outcome:
    rc: int                                              # ansible-playbook's exit status
    lines: List[Dict] = field(default_factory=list)      # the index lines this run wrote
    elapsed_s: float = 0.0
    log: str = ""

    @property
    def failed(self) -> List[Dict]:
        return [x for x in self.lines if x.get("status") != "ok"]


def ansible_playbook() -> str:
    """The ansible-playbook beside this Python first (a venv with the fleet extra that is not
    on PATH, as under cron), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    if os.access(here, os.X_OK):
        return here
    found = shutil.which("ansible-playbook")
    if not found:
        raise FleetError("ansible-playbook: not found; install Ansible with the fleet extra: "
                         "pip install 'mssdiag[fleet]' (or put ansible-playbook on PATH)")
    return found


def ansible_error(log: str) -> Optional[str]:
    """Ansible's own error line (`ERROR! ...`, `[ERROR]: ...`) from its output, if any."""
    try:
        with open(log, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith(("ERROR!", "[ERROR]:")):
            text = s.split(None, 1)[1] if " " in s else s
            more = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if more and not more.startswith(("[", "Origin:", "^")) and len(text) < 80:
                text += " " + more
            return text
    return None


def unsafe_vars(values: Dict) -> str:
    """Extra variables as a YAML document in which every string is tagged `!unsafe`: Ansible
    uses them as they are and never evaluates them as templates. Targets, vantage patterns
    and paths come from a command line, and `{{ lookup('pipe', ...) }}` in one of them would
    otherwise run on the controller. Each string is written double-quoted with every
    character outside printable ASCII escaped (YAML's \\u escape with four hex digits, \\U with eight), so no line
    break, control or separator reaches YAML raw. ValueError for text that is not
    Unicode (a lone surrogate: bytes that were not UTF-8)."""
    def scalar(v) -> str:
        if isinstance(v, bool) or v is None:
            return json.dumps(v)
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return "!unsafe " + _quoted(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(scalar(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{_quoted(str(k))}: {scalar(x)}" for k, x in v.items()) + "}"
        raise TypeError(f"{type(v).__name__} is no extra variable")
    return "".join(f"{_quoted(k)}: {scalar(v)}\n" for k, v in values.items())


def _quoted(text: str) -> str:
    out = []
    for ch in text:
        c = ord(ch)
        if 0xD800 <= c <= 0xDFFF:
            raise ValueError(f"{text!r}: not valid Unicode (bytes that are not UTF-8)")
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= c < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\u{c:04x}" if c <= 0xFFFF else f"\\U{c:08x}")
    return '"' + "".join(out) + '"'


class _Tail:
    """New complete lines of a file that another process appends to."""

    def __init__(self, path: str):
        self.path, self.offset, self.rest = path, 0, b""

    def read(self) -> List[Dict]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        data = self.rest + data
        *complete, self.rest = data.split(b"\n")
        out = []
        for raw in complete:
            try:
                item = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                continue
            if isinstance(item, dict) and isinstance(item.get("host"), str):
                out.append(item)
        return out


def _close_masters(folder: str) -> None:
    """Ask every SSH control master Ansible left in `folder` to exit, then remove it."""
    try:
        sockets = [os.path.join(folder, n) for n in os.listdir(folder)]
    except OSError:
        return
    asked = []
    for sock in sockets:             # all at once: one per host, each a local socket's round trip
        try:
            asked.append(subprocess.Popen(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "mssdiag-fleet"],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        except OSError:
            break
    deadline = time.monotonic() + 10
    for proc in asked:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


def _stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run(playbook: str, inventory: str, folder: str, extra_vars: Dict, limit: Optional[str] = None,
        forks: Optional[int] = None, stamp: Optional[str] = None, ansible_args: Sequence[str] = (),
        each: Callable[[Dict], None] = lambda line: None) -> Outcome:
    """Run the playbook writing into `folder`; `each` sees every index line as it is written."""
    binary = ansible_playbook()
    os.makedirs(folder, exist_ok=True)
    private = tempfile.mkdtemp(prefix="mssdiag-cp-")       # short: SSH socket paths are limited
    try:
        try:
            text = unsafe_vars(extra_vars)
        except ValueError as exc:
            raise FleetError(str(exc)) from None
        vars_file = os.path.join(private, "vars.yml")
        with open(vars_file, "w", encoding="utf-8") as fh:
            fh.write(text)
        control = os.path.join(private, "cp")
        os.mkdir(control, 0o700)
        env = dict(os.environ)
        env.update({ENV_DIR: folder, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
                    "ANSIBLE_RETRY_FILES_ENABLED": "0", "ANSIBLE_SSH_CONTROL_PATH_DIR": control,
                    "PYTHONUNBUFFERED": "1"})
        if stamp:
            env[ENV_TIME] = stamp
        else:
            env.pop(ENV_TIME, None)
        argv = [binary, "-i", inventory, playbook, "-e", f"@{vars_file}"]
        if limit:
            argv += ["--limit", limit]
        if forks:
            argv += ["--forks", str(forks)]
        argv += list(ansible_args)
        log = os.path.join(folder, LOG)
        tail = _Tail(os.path.join(folder, INDEX))
        tail.offset = os.path.getsize(tail.path) if os.path.exists(tail.path) else 0
        out = Outcome(rc=-1, log=log)
        started = time.monotonic()
        with open(log, "ab") as logf:
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                        env=env, start_new_session=True)
            except OSError as exc:
                raise FleetError(f"{binary}: cannot run: {exc.strerror or exc}") from None
            try:
                while True:
                    done = proc.poll() is not None
                    for line in tail.read():
                        out.lines.append(line)
                        each(line)
                    if done:
                        break
                    time.sleep(POLL_S)
            except BaseException:
                _stop(proc)
                for line in tail.read():
                    out.lines.append(line)
                    each(line)
                raise
        out.rc = proc.returncode
        out.elapsed_s = time.monotonic() - started
        if not out.lines and out.rc not in (0, 2, 4):
            why = ansible_error(log) or f"exit status {out.rc}"
            raise FleetError(f"ansible-playbook failed: {why}")
        return out
    finally:
        _close_masters(os.path.join(private, "cp"))
        shutil.rmtree(private, ignore_errors=True)
