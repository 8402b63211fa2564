"""`mssdiag lab` against damaged state, signals and unwritable output.

Every test keeps its labs in its own state directory (MSSDIAG_LAB_STATE), so `lab down`
without a name never touches labs of other test runs. Tests that build namespaces need
root and skip with the reason otherwise.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolkit import lab

MSSDIAG = str(Path(sys.executable).with_name("mssdiag"))
MISSING = lab.missing_tools()
needs_root = pytest.mark.skipif(bool(MISSING), reason=f"builds namespaces: needs {', '.join(MISSING)} "
                                                      "(run `make system-deps` as root)")


def mssdiag(state: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("capture_output", True)
    return subprocess.run([MSSDIAG, *args], text=True, timeout=120,
                          env={**os.environ, "MSSDIAG_LAB_STATE": str(state)}, **kw)


def prefixes_in_namespaces(prefix: str):
    return [ns for ns in lab.existing_namespaces() if ns.startswith(prefix + "-")]


def test_damaged_state_files_are_listed_and_removable(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "mssd0a0b0c.json").write_text(json.dumps({"scenario": "blackhole", "client": "x"}))  # no prefix
    (state / "mssd111111.json").write_text("{not json")
    (state / "mssd222222.json").write_text(json.dumps({"prefix": "mssd999999", "scenario": "bottleneck"}))
    (state / "mssd333333.json").write_bytes(b"\xff\xfe\x00")
    # a build whose builder was SIGKILLed: listed as incomplete
    dead = subprocess.Popen(["true"])
    dead.wait()
    (state / "mssd444444.json").write_text(json.dumps({"prefix": "mssd444444", "scenario": "multihop",
                                                       "status": "building", "builder_pid": dead.pid}))
    (state / "notes.txt").write_text("not ours")
    res = mssdiag(state, "lab", "list")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    lines = [x for x in res.stdout.splitlines() if x.startswith(("damaged", "incomplete", "up", "building"))]
    assert [x.split(":")[0] + ":" + x.split(":")[1] for x in lines] == [
        "damaged: mssd0a0b0c", "damaged: mssd111111", "damaged: mssd222222", "damaged: mssd333333",
        "incomplete: mssd444444 multihop"], res.stdout
    assert "names lab 'mssd999999'" in res.stdout and "lab down mssd0a0b0c" in res.stdout
    listed = json.loads(mssdiag(state, "lab", "list", "--json").stdout)
    assert [i["prefix"] for i in listed] == ["mssd0a0b0c", "mssd111111", "mssd222222", "mssd333333", "mssd444444"]
    res = mssdiag(state, "lab", "down", "mssd0a0b0c")
    assert res.returncode == 0 and res.stdout == "removed mssd0a0b0c\n", res.stderr
    res = mssdiag(state, "lab", "down")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in state.iterdir()) == ["notes.txt"]


def test_unusable_state_dir_is_one_line(tmp_path):
    state = tmp_path / "a-file"
    state.write_text("")
    for args, code in ((("lab", "list"), 1), (("lab", "down"), 1), (("lab", "down", "mssd333333"), 2)):
        res = mssdiag(state, *args)
        assert res.returncode == code, (args, res.stderr)
        assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert "is not a directory" in mssdiag(state, "lab", "list").stderr
    res = mssdiag(state, "lab", "down", "not-a-lab")
    assert res.returncode == 2 and "is not a lab name" in res.stderr


@needs_root
def test_lab_up_with_unwritable_state_builds_nothing(tmp_path):
    state = tmp_path / "a-file"
    state.write_text("")
    # In a mount namespace of its own with an empty /run/netns, the namespaces listed
    # afterwards are exactly the ones this run created (other test runs build labs meanwhile).
    listing = tmp_path / "created"
    script = ('mkdir -p /run/netns && mount -t tmpfs mssd-test /run/netns && "$0" "$@"; rc=$?; '
              f'ls /run/netns > {shlex.quote(str(listing))}; exit $rc')
    res = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                          MSSDIAG, "lab", "up", "bottleneck"], text=True, capture_output=True, timeout=120,
                         env={**os.environ, "MSSDIAG_LAB_STATE": str(state / "sub")})
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "cannot write lab state" in res.stderr and "Traceback" not in res.stderr
    assert listing.read_text() == ""


def test_state_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    monkeypatch.setattr(lab, "STATE_DIR", tmp_path)
    lab.write_state("mssdabcdef", {"prefix": "mssdabcdef", "status": "up"})
    assert json.loads((tmp_path / "mssdabcdef.json").read_text())["status"] == "up"

    def broken(*_a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(lab.os, "replace", broken)
    with pytest.raises(lab.LabError, match="cannot write lab state .*No space left on device"):
        lab.write_state("mssdabcdef", {"prefix": "mssdabcdef", "status": "building"})
    assert json.loads((tmp_path / "mssdabcdef.json").read_text())["status"] == "up"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mssdabcdef.json"]


def test_lab_down_kills_only_what_it_can_prove_is_its_own(tmp_path):
    """A recorded service pid that now runs something else (pid reuse, an edited state
    file) is left alone; so is one whose start time differs."""
    state = tmp_path / "state"
    state.mkdir()
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        start = lab._start_time(bystander.pid)
        (state / "mssd555555.json").write_text(json.dumps(
            {"prefix": "mssd555555", "scenario": "bottleneck", "status": "up", "service_pid": bystander.pid,
             "service_start": start}))
        (state / "mssd666666.json").write_text(json.dumps(
            {"prefix": "mssd666666", "scenario": "bottleneck", "status": "up", "service_pid": 1,
             "service_start": lab._start_time(1)}))
        res = mssdiag(state, "lab", "down")
        assert res.returncode == 0, res.stderr
        time.sleep(0.2)
        assert bystander.poll() is None, "lab down killed a process that was not the lab's"
        assert not list(state.iterdir())
        # what would prove it: our mark, the lab's name and the recorded start time
        assert not lab._is_our_service(bystander.pid, "mssd555555", start)
    finally:
        bystander.kill()
        bystander.wait()


def test_lab_output_errors_are_one_line(tmp_path):
    state = tmp_path / "state"
    for shell in (f"{shlex.quote(MSSDIAG)} lab list > /dev/full", f"{shlex.quote(MSSDIAG)} lab list >&-"):
        res = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "MSSDIAG_LAB_STATE": str(state)})
        assert res.returncode == 1, (shell, res.stderr)
        assert res.stderr.count("\n") == 1 and "cannot write the output" in res.stderr, res.stderr
    r, w = os.pipe()
    os.close(r)
    try:
        res = mssdiag(state, "lab", "list", stdout=w, stderr=subprocess.PIPE, capture_output=False)
    finally:
        os.close(w)
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "Broken pipe" in res.stderr, res.stderr


@needs_root
@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_interrupted_lab_up_removes_what_it_built(tmp_path, sig, code):
    state = tmp_path / "state"
    proc = subprocess.Popen([MSSDIAG, "lab", "up", "multihop"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "MSSDIAG_LAB_STATE": str(state)})
    prefix, deadline = None, time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        found = [p.stem for p in state.glob("mssd*.json")] if state.is_dir() else []
        if found and prefixes_in_namespaces(found[0]):
            prefix = found[0]
            break
        time.sleep(0.01)
    assert prefix, "the build never got going"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert err.splitlines() == [f"mssdiag: lab up: interrupted by {signal.Signals(sig).name} while building "
                                "multihop; what was built is removed"], err
    assert prefixes_in_namespaces(prefix) == []
    assert not list(state.glob("mssd*")), list(state.iterdir())


@needs_root
def test_killed_build_is_listed_incomplete_and_removed_by_name(tmp_path):
    state = tmp_path / "state"
    proc = subprocess.Popen([MSSDIAG, "lab", "up", "multihop"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "MSSDIAG_LAB_STATE": str(state)})
    prefix, deadline = None, time.monotonic() + 30
    while time.monotonic() < deadline and prefix is None:
        found = [p.stem for p in state.glob("mssd*.json")] if state.is_dir() else []
        if found and len(prefixes_in_namespaces(found[0])) >= 2:
            prefix = found[0]
        time.sleep(0.01)
    proc.kill()                            # SIGKILL: nothing can clean up
    proc.communicate(timeout=30)
    try:
        assert prefix and prefixes_in_namespaces(prefix)
        res = mssdiag(state, "lab", "list")
        assert f"incomplete: {prefix} multihop" in res.stdout, res.stdout
        (state / f"{prefix}.json").unlink()   # even with its state lost, the name removes it
        res = mssdiag(state, "lab", "down", prefix)
        assert res.returncode == 0, res.stderr
        assert prefixes_in_namespaces(prefix) == []
    finally:
        if prefix:
            lab.teardown(prefix)


@needs_root
def test_lab_up_hint_works_and_lab_down_stops_the_service(tmp_path):
    """The printed probe command runs as printed (full path of this mssdiag, which a root
    shell would not find on its PATH for a .venv install); `lab down` stops the service."""
    state = tmp_path / "state"
    res = mssdiag(state, "lab", "up", "bottleneck")
    assert res.returncode == 0, res.stderr
    prefix = res.stdout.split()[1]
    try:
        hint = next(x.split("probe it:", 1)[1] for x in res.stdout.splitlines() if "probe it:" in x)
        argv = shlex.split(hint)
        assert argv[:3] == ["ip", "netns", "exec"] and argv[4] == MSSDIAG, hint
        done = subprocess.run(argv + ["--json"], capture_output=True, text=True, timeout=60, cwd="/",
                              env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["pmtu"] == 1400
        info = json.loads((state / f"{prefix}.json").read_text())
        pid = info["service_pid"]
        assert lab._is_our_service(pid, prefix, info["service_start"])
        res = mssdiag(state, "lab", "down", prefix)
        assert res.returncode == 0 and res.stdout == f"removed {prefix}\n", res.stderr
        time.sleep(0.2)
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        assert prefixes_in_namespaces(prefix) == []
    finally:
        lab.teardown(prefix)
