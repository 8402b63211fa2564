# mssdiag_fleet: Ansible callback plugin shipped with mssdiag (docs/fleet.md).
# Self-contained: it runs inside Ansible (AWX too) and imports nothing from mssdiag.
from __future__ import annotations

DOCUMENTATION = r"""
name: mssdiag_fleet
type: notification
short_description: write each host's mssdiag collection or probe to a directory mssdiag reads
description:
  - Acts only on plays and tasks whose names start with C(mssdiag) (the shipped collect.yml and
    probe.yml); any other play is left alone.
  - For each host writes C(<dir>/<name>--<UTC time>.txt) (the collection command's output) or
    C(.json) (the output of C(mssdiag probe --json)), and appends one line to C(<dir>/index.jsonl)
    with C(host) (the inventory name, exactly), C(status) (ok, failed or unreachable), C(kind)
    (collect or probe), C(file), C(time), C(command), C(rc), C(detail) and C(boot) (what the
    boot-time command printed).
  - C(<name>) is the inventory name when it is plain (lower-case letters, digits and C(.@+-),
    starting with a letter or digit, at most 64 characters), else a readable prefix of it
    (other characters as C(_), at most 48) and C(_) and 12 hex digits of the SHA-256 of the
    exact name, so two hosts never share a file, none is hidden and every name fits a file system.
  - Then C(mssdiag audit run <dir>) stores it; a failed or unreachable host becomes stale evidence.
  - Loaded without configuration from the callback_plugins directory beside the playbook.
options:
  dir:
    description: Directory for the files and index.jsonl (created if missing). Default
      C(./mssdiag-fleet/<UTC time of the run>).
    env:
      - name: MSSDIAG_FLEET_DIR
    ini:
      - section: callback_mssdiag_fleet
        key: dir
  time:
    description: Stamp every file and index line with this UTC time (ISO 8601) instead of the clock
      (replaying, tests).
    env:
      - name: MSSDIAG_FLEET_TIME
    ini:
      - section: callback_mssdiag_fleet
        key: time
"""

import hashlib
import json
import os
import re
import tempfile
from datetime import datetime, timezone

from ansible.plugins.callback import CallbackBase

PREFIX = "mssdiag"
MAX_DETAIL = 300
_PLAIN = re.compile(r"[a-z0-9][a-z0-9.@+-]{0,63}")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]")


def file_stem(host):
    """The file name part for an inventory host name (see DOCUMENTATION): a plain name as it
    is; any other a prefix and a hash of the exact name. A plain name holds no `_` and no
    capital, a hashed one always both a `_`: the two kinds never meet, and names that differ
    only in case or in what is replaced by `_` get different hashes."""
    if _PLAIN.fullmatch(host):
        return host
    prefix = _NAME_UNSAFE.sub("_", host)[:48]
    if prefix[:1] in (".", "-"):
        prefix = "_" + prefix[1:]          # never a hidden file, never an option to a shell command
    return f"{prefix}_{hashlib.sha256(host.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def _utc(when=None):
    return when or datetime.now(timezone.utc).replace(microsecond=0)


def _parse_time(text):
    if not text:
        return None
    value = text.strip().replace("Z", "+00:00")
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).replace(microsecond=0)


def _text(value):
    """Output as text with Unix line ends (raw over SSH runs in a pty: CR LF)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value).replace("\r\n", "\n").replace("\r", "\n")


def _detail(res):
    """One line saying why: the module's message, else the last line of the output."""
    parts = []
    msg = res.get("msg")
    if msg:
        parts.append(" ".join(str(msg).split()))
    for key in ("stderr", "stdout"):
        lines = [ln.strip() for ln in _text(res.get(key)).splitlines() if ln.strip()]
        if lines:
            parts.append(lines[-1])
            break
    text = ": ".join(dict.fromkeys(p for p in parts if p)).removeprefix("Task failed: ")
    return text[:MAX_DETAIL] or None


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "notification"
    CALLBACK_NAME = "mssdiag_fleet"
    CALLBACK_NEEDS_ENABLED = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._dir = None
        self._fixed = None
        self._started = _utc()
        self._kind = None          # collect | probe while a mssdiag play runs
        self._boot = {}            # host -> boot output
        self._written = set()      # hosts with an index line in this play
        self._touched = set()      # hosts a mssdiag task ran on

    def set_options(self, task_keys=None, var_options=None, direct=None):
        super().set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        self._fixed = _parse_time(self.get_option("time"))
        if self.get_option("time") and self._fixed is None:
            self._display.warning(f"mssdiag_fleet: time {self.get_option('time')!r} is not ISO 8601; using the clock")

    # -- where and when

    def _folder(self):
        if self._dir is None:
            configured = self.get_option("dir")
            if configured:
                folder = os.path.abspath(os.path.expanduser(configured))
            else:
                folder = os.path.abspath(os.path.join("mssdiag-fleet", self._started.strftime("%Y%m%dT%H%M%SZ")))
                self._display.warning(f"mssdiag_fleet: MSSDIAG_FLEET_DIR is not set: writing to {folder}")
            os.makedirs(folder, exist_ok=True)
            self._dir = folder
        return self._dir

    def _now(self):
        return self._fixed or _utc()

    # -- writing

    def _write_file(self, name, text):
        folder = self._folder()
        try:            # a host's bytes that were not UTF-8 (Ansible's surrogate escapes) written back as they were
            data = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            data = text.encode("utf-8", "replace")
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, os.path.join(folder, name))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _record(self, host, status, command=None, rc=None, detail=None, output=None):
        if host in self._written:
            return
        self._written.add(host)
        when = self._now()
        line = {"host": host, "status": status, "kind": self._kind or "collect",
                "time": when.strftime("%Y-%m-%dT%H:%M:%SZ")}
        if output is not None:
            ext = "json" if self._kind == "probe" else "txt"
            name = f"{file_stem(host)}--{when.strftime('%Y%m%dT%H%M%SZ')}.{ext}"
            try:
                self._write_file(name, output)
                line["file"] = name
            except OSError as exc:            # the index still says so: a host is never lost silently
                line["status"], detail = "failed", f"cannot write {name}: {exc.strerror or exc}"
        line.update(command=command, rc=rc)
        if detail:
            line["detail"] = detail
        if self._boot.get(host):
            line["boot"] = self._boot[host]
        try:
            # ASCII JSON: a name's U+2028 or U+0085 written raw would split the line for readers
            # that honour Unicode line breaks
            with open(os.path.join(self._folder(), "index.jsonl"), "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")
                fh.flush()
        except OSError as exc:
            self._display.warning(f"mssdiag_fleet: {host!r}: cannot write to {self._dir}: {exc.strerror or exc}")

    # -- Ansible's events

    @staticmethod
    def _parts(result):
        host = getattr(result, "host", None) or result._host
        task = getattr(result, "task", None) or result._task
        res = getattr(result, "result", None)
        if not isinstance(res, dict):
            res = result._result
        return host.get_name(), task, res

    def _step(self, task):
        if self._kind is None:
            return None
        name = (task.get_name() or "").strip()
        return name[len(PREFIX):].strip() or None if name.startswith(PREFIX) else None

    @staticmethod
    def _command(task):
        args = getattr(task, "args", None) or {}
        cmd = args.get("_raw_params") or args.get("cmd") or args.get("argv")
        if isinstance(cmd, (list, tuple)):
            cmd = " ".join(str(c) for c in cmd)
        return None if cmd is None else str(cmd)[:MAX_DETAIL]

    def v2_playbook_on_play_start(self, play):
        name = (play.get_name() or "").strip()
        self._kind = "probe" if name.startswith(f"{PREFIX} probe") else (
            "collect" if name.startswith(PREFIX) else None)
        self._boot, self._written, self._touched = {}, set(), set()

    def v2_runner_on_ok(self, result):
        host, task, res = self._parts(result)
        step = self._step(task)
        if step is None:
            return
        self._touched.add(host)
        if step == "boot":
            out = _text(res.get("stdout")).strip()
            if out:
                self._boot[host] = out[:1000]
        elif step == "collect":
            out = _text(res.get("stdout"))
            if out.strip():
                self._record(host, "ok", self._command(task), res.get("rc"), output=out)
            else:
                self._record(host, "failed", self._command(task), res.get("rc"), "the command printed nothing")
        elif step == "probe":
            out = _text(res.get("stdout"))
            try:                         # one JSON object a line, one line per target
                lines = [ln for ln in out.split("\n") if ln.strip()]
                if not lines:
                    raise ValueError("nothing")
                for ln in lines:
                    json.loads(ln)
            except ValueError:
                self._record(host, "failed", self._command(task), res.get("rc"),
                             "mssdiag probe printed no JSON" + (f": {_detail(res)}" if _detail(res) else ""))
                return
            self._record(host, "ok", self._command(task), res.get("rc"),
                         _detail({"stderr": res.get("stderr")}) if res.get("rc") else None, output=out)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        host, task, res = self._parts(result)
        step = self._step(task)
        if step is None:
            return
        self._touched.add(host)
        if ignore_errors:
            return                       # the boot time is a bonus: its failure costs nothing
        rc = res.get("rc")
        self._record(host, "failed", self._command(task), rc if isinstance(rc, int) else None,
                     (f"{step}: " if step not in ("collect", "probe") else "") + (_detail(res) or "failed"))

    def v2_runner_on_unreachable(self, result):
        host, task, res = self._parts(result)
        if self._step(task) is None:
            return
        self._touched.add(host)
        self._record(host, "unreachable", self._command(task), None, _detail(res) or "unreachable")

    def v2_playbook_on_stats(self, stats):
        if self._kind is None:
            return
        for host in sorted(self._touched - self._written):
            self._record(host, "failed", None, None, "no result: the play ended before this host's " + self._kind)
