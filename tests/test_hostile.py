"""Hostile and damaged input: a counter is right, or null with a warning -- never another number.

Built from the real fixtures: every dump is damaged the ways files arrive damaged (cut
mid-line, NUL and control bytes, a line duplicated, prose or blank lines pasted in, CRLF),
and every value read from the damaged text must be the original's or null with a warning.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

import parsers
from fixturelib import NETSTAT, expected, pairs
from parsers.text import decode

FIXTURES = [(raw, expected(want)[0]) for raw, want in pairs()]


def read(text, os_name):
    warnings = []
    snaps = list(parsers.iter_parse(text, os=os_name, warn=warnings.append))
    return snaps, warnings


def mutations(text: str, rng: random.Random, n: int):
    """(name, damaged text) pairs: the damage a file picks up on its way to a ticket."""
    lines = text.split("\n")
    for _ in range(n):
        kind = rng.choice(["cut", "nul", "nul-over", "esc", "dup-line", "prose", "blank", "crlf", "c1"])
        if kind == "cut":
            pos = rng.randrange(1, len(text))
            while pos < len(text) and text[pos - 1] == "\n":
                pos += 1                       # mid-line: a cut at a line end is a shorter dump, not damage
            yield kind, text[:pos]
        elif kind in ("nul", "esc", "c1"):
            pos = rng.randrange(len(text))
            ch = {"nul": "\x00", "esc": "\x1b[2J", "c1": "\x9b"}[kind]
            yield kind, text[:pos] + ch + text[pos:]
        elif kind == "nul-over":
            pos = rng.randrange(len(text))
            if text[pos] != "\n":
                yield kind, text[:pos] + "\x00" + text[pos + 1:]
        elif kind == "dup-line":
            i = rng.randrange(len(lines))
            yield kind, "\n".join(lines[:i + 1] + lines[i:])
        elif kind == "prose":
            i = rng.randrange(len(lines) + 1)
            yield kind, "\n".join(lines[:i] + ["see the attached output below for details"] + lines[i:])
        elif kind == "blank":
            i = rng.randrange(len(lines) + 1)
            yield kind, "\n".join(lines[:i] + ["", ""] + lines[i:])
        else:
            yield kind, text.replace("\n", "\r\n")


def _values(snap):
    for fam in ("ipv4", "ipv6"):
        for k, v in (getattr(snap, fam) or {}).items():
            yield fam, k, v


@pytest.mark.parametrize("raw,os_name", FIXTURES, ids=[str(r.relative_to(NETSTAT)) for r, _ in FIXTURES])
def test_damaged_dump_gives_the_original_values_or_null_with_a_warning(raw, os_name):
    text = decode(raw.read_bytes())
    original, _ = read(text, os_name)
    rng = random.Random(raw.name)
    checked = 0
    for kind, bad in mutations(text, rng, int(os.environ.get("MSSDIAG_MUTATIONS", "60"))):
        snaps, warnings = read(bad, os_name)
        said = bool(warnings or any(s.warnings for s in snaps))
        if kind in ("dup-line", "prose", "blank", "crlf"):
            assert len(snaps) == len(original), (kind, [s.line for s in snaps], bad[:300])
        elif len(snaps) != len(original):
            # damage may hit the line that separates or joins two dumps: then a line says so
            assert kind == "cut" and len(snaps) < len(original) or said, (kind, "snapshots changed without a word")
        for got in snaps:
            # every number read is the dump's own: all of a snapshot's values come from one
            # original snapshot (the same family and counter), and a null where it had a value is warned
            values = {(f, k): v for f, k, v in _values(got) if v is not None}
            match = [w for w in original if all(dict(((f, k), v) for f, k, v in _values(w)).get(fk) == v
                                                for fk, v in values.items())]
            if not match:
                pytest.fail(f"{kind}: values no snapshot of the dump holds: {values}\n{bad[:2000]}")
            if len(snaps) == len(original) and any(v is None for _, _, v in _values(got)) and not said:
                lost = [(f, k) for f, k, v in _values(got) if v is None
                        and any(dict(((f2, k2), v2) for f2, k2, v2 in _values(w)).get((f, k)) is not None for w in match)]
                assert not lost, (kind, lost, "nulled without a warning")
            checked += 1
    assert checked


def test_a_repeated_inline_header_line_is_not_a_second_dump():
    text = decode((NETSTAT / "solaris" / "bgera_solaris_full.txt").read_bytes())
    line = next(l for l in text.splitlines() if "ipForwarding" in l)
    snaps, _ = read(text.replace(line, line + "\n" + line, 1), None)
    assert len(snaps) == 1


# ----------------------------------------------------------------------------- the CLI on hostile input

import json  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOOD = (NETSTAT / "linux" / "lkml-2003-nfs-2.6.0-test9.txt").read_text()


def cli(*args, stdin=None, timeout=60, stdout=subprocess.PIPE):
    p = subprocess.run([sys.executable, "-m", "toolkit", *args], input=stdin, stdout=stdout,
                       stderr=subprocess.PIPE, text=True, timeout=timeout, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def one_line_each(err: str, *names):
    lines = err.strip().splitlines()
    assert "Traceback" not in err, err
    for name in names:
        assert sum(name in line for line in lines) >= 1, (name, err)
    return lines


@pytest.mark.parametrize("where", ["alone", "directory", "case", "json"])
def test_a_fifo_never_hangs_anything(tmp_path, where):
    (tmp_path / "good.txt").write_text(GOOD)
    name = "probe.json" if where == "json" else "pipe.txt"
    folder = tmp_path / "case" if where == "case" else tmp_path
    folder.mkdir(exist_ok=True)
    if where == "case":
        (folder / "host.toml").write_text('name = "h"\n')
        (folder / "good.txt").write_text(GOOD)
    os.mkfifo(folder / name)
    target = str(folder / name) if where in ("alone", "json") else str(folder)
    for command in ("parse", "diff", "triage"):
        code, out, err = cli(command, target, str(tmp_path / "good.txt"), timeout=30)
        assert "Traceback" not in err
        if where != "case":
            assert "not a regular file (FIFO)" in err or "skipped" in err, (command, err)


def test_links_that_dangle_or_loop_and_deep_directories(tmp_path):
    (tmp_path / "good.txt").write_text(GOOD)
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling.txt")
    os.symlink(tmp_path / "loop2", tmp_path / "loop1")
    os.symlink(tmp_path / "loop1", tmp_path / "loop2")
    made = []
    deep = tmp_path
    for i in range(1200):
        deep = deep / "d"
        try:
            deep.mkdir()
        except OSError:
            break
        made.append(deep)
    try:
        for flags in ((), ("-q",)):
            code, out, err = cli("parse", str(tmp_path), "--json", *flags)
            one_line_each(err, "broken symbolic link", "symbolic link loop")
            assert code == 3 and len(json.loads(out)) == 1
    finally:
        for d in reversed(made):        # pytest's own clean-up recurses: remove the depth here
            d.rmdir()


@pytest.mark.parametrize("command", [("parse",), ("diff",), ("triage",), ("triage", "--json"), ("calc", "mss", "--mtu", "1500"),
                                     ("parse", "--json")])
def test_an_unwritable_stdout_is_one_line(command):
    demo = str(ROOT / "fixtures" / "cases" / "demo")
    args = list(command) + ([demo] if command[0] in ("parse", "diff", "triage") else [])
    with open("/dev/full", "w") as full:
        code, _, err = cli(*args, stdout=full)
    assert code == 1 and "Traceback" not in err
    assert "cannot write the output: No space left on device" in err


def test_a_closed_pipe_or_stdout_is_one_line():
    p = subprocess.Popen([sys.executable, "-m", "toolkit", "parse", str(NETSTAT), "--json", "-q"], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(100)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 1 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == "mssdiag: cannot write the output: Broken pipe (the reader left)"
    closed = subprocess.run(["sh", "-c", f"{sys.executable} -m toolkit parse {NETSTAT / 'vos'} >&-"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert closed.returncode == 1 and closed.stderr.count("\n") == 1 and "cannot write the output" in closed.stderr


@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_an_interrupted_run_closes_its_json_and_says_so_in_one_line(tmp_path, sig, code, word):
    log = tmp_path / "cron.log"
    with open(log, "w") as fh:
        for i in range(40000):
            fh.write(f"Sun Nov 22 {i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d} UTC 2026\n"
                     f"[root@web1 ~]# netstat -s | grep reass\n    {i} reassemblies required\n")
    p = subprocess.Popen([sys.executable, "-m", "toolkit", "parse", str(log), "--json"], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    first = b""
    while len(first) < 2000:               # it is writing its array (unbuffered here: nothing read ahead)
        first += p.stdout.read(2000 - len(first))
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    text = (first + out).decode()
    assert p.returncode == code and f"mssdiag: {word}" in err.decode() and b"Traceback" not in err
    assert isinstance(json.loads(text), list)


def test_an_interrupt_during_start_up_is_one_line():
    """From the moment mssdiag's own code runs (the interpreter's own start-up is Python's),
    an interrupt ends in one line, whenever it comes while the CLI is being loaded."""
    start = ("import sys; from toolkit.entry import main; sys.stdout.write('.'); sys.stdout.flush(); "
             f"sys.argv = ['mssdiag', 'parse', {str(NETSTAT / 'linux')!r}]; main()")
    # the status of the run left alone (3: some of those dumps give no snapshot), for an
    # interrupt that comes after it finished
    finished = subprocess.run([sys.executable, "-c", start], cwd=ROOT, capture_output=True, timeout=60).returncode
    for delay in (0, 0.002, 0.01, 0.03, 0.06, 0.1):
        p = subprocess.Popen([sys.executable, "-c", start], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert p.stdout.read(1) == b"."
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        assert b"Traceback" not in err, (delay, err)
        assert p.returncode in (finished, 130), (delay, p.returncode, err)
        if p.returncode == 130:
            assert err.strip().splitlines()[-1] == b"mssdiag: interrupted", err


@pytest.mark.parametrize("text,why", [
    ('dumps = ["../outside.txt"]\n', "outside the case directory"),
    ('dumps = ["/etc/passwd"]\n', "outside the case directory"),
    ('dumps = ["/etc/no-such-file"]\n', "outside the case directory"),
    ('probes = ["/proc/self/environ"]\n', "outside the case directory"),
    ("mtu = " + "9" * 400 + "\n", "mtu"),
    ("x = " + "[" * 3000 + "]" * 3000 + "\n", "TOML"),
    ("[hosts]\n", "holds no host"),
])
def test_host_files_cannot_reach_outside_and_say_what_is_wrong(tmp_path, text, why):
    case = tmp_path / "case"
    case.mkdir()
    (tmp_path / "outside.txt").write_text(GOOD)
    (case / "host.toml").write_text(text)
    (case / "good.txt").write_text(GOOD)
    code, out, err = cli("triage", str(case), "--json")
    lines = one_line_each(err, "host.toml")
    assert any(why in line for line in lines), err
    assert "root:" not in out + err and "PATH=" not in out + err
    assert code in (1, 3)


@pytest.mark.parametrize("data", ["host.toml written as UTF-16".encode("utf-16"), bytes(range(256)) * 4])
def test_binary_host_file(tmp_path, data):
    (tmp_path / "host.toml").write_bytes(data)
    code, _, err = cli("triage", str(tmp_path))
    assert "Traceback" not in err and "not UTF-8" in err


def test_listed_targets_are_never_probed_without_the_flag(tmp_path):
    (tmp_path / "host.toml").write_text('name = "h"\ntargets = ["198.51.100.7"]\n')
    (tmp_path / "dump.txt").write_text(GOOD)
    code, out, err = cli("triage", str(tmp_path), "--json", timeout=30)
    assert "not probed; add --probe-targets" in err
    assert json.loads(out)["hosts"][0]["probes"] == []


@pytest.mark.parametrize("content,why", [("", "empty"), ("[]", "no probe result"), ("   \n", "empty")])
def test_an_empty_probe_file_is_not_parsed(tmp_path, content, why):
    (tmp_path / "p.json").write_text(content)
    code, _, err = cli("triage", str(tmp_path / "p.json"), str(ROOT / "fixtures" / "cases" / "demo" / "vos-host"))
    assert code == 3 and why in err


def test_100000_probe_results_are_attributed_in_linear_time(tmp_path):
    one = {"target": "192.0.2.1", "pmtu": 1500, "pmtu_method": "local"}
    with open(tmp_path / "many.json", "w") as fh:
        for i in range(100000):
            fh.write(json.dumps(dict(one, target=f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}")) + "\n")
    code, out, err = cli("triage", str(tmp_path / "many.json"), "--json", timeout=300)
    assert code == 0, err[-500:]
    assert len(json.loads(out)["hosts"]) == 100000


HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J\u202ename\x9b31m"


def test_hostile_names_never_reach_the_output_raw(tmp_path):
    """File names, prompts and dump text with escapes, C1 and bidi overrides: no table, error
    line or Markdown carries them raw, and JSON escapes C1 and bidi."""
    dump = tmp_path / (HOSTILE.replace("/", "") + ".txt")
    dump.write_text(f"[root@{HOSTILE} ~]# netstat -s\n" + GOOD)
    bad = tmp_path / (HOSTILE + "-missing.txt")
    raw = ("\x1b", "\x07", "\u202e", "\x9b")
    for args in (("parse", str(dump), str(bad)), ("diff", str(dump), str(bad)), ("triage", str(dump), str(bad)),
                 ("triage", str(dump), "--format", "md"), ("parse", str(dump), "--json"),
                 ("triage", str(dump), "--json")):
        code, out, err = cli(*args)
        for ch in raw:
            assert ch not in out and ch not in err, (args, repr(ch))
    code, out, _ = cli("parse", str(dump), "--json")
    assert "\\u202e" in out and "\\u009b" in out                     # JSON keeps the data, escaped
    assert "\u202e" in json.loads(out)[0]["source"]


def test_a_report_written_to_a_full_disk_leaves_the_old_one_whole(tmp_path):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small tmpfs (a full disk on demand)")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        old = "old report\n" * 100
        (mnt / "report.md").write_text(old)
        code, _, err = cli("triage", str(ROOT / "fixtures" / "cases" / "demo"), "--format", "html",
                           "-o", str(mnt / "report.md"))
        assert code == 1 and "cannot write" in err and "Traceback" not in err
        assert (mnt / "report.md").read_text() == old
        assert sorted(p.name for p in mnt.iterdir()) == ["report.md"]      # no temporary file left
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_a_real_terminal_shows_hostile_names_harmlessly(tmp_path):
    """Under tmux (a real terminal emulator): the commands print hostile file names, prompts
    and dump text, and the pane shows no cleared screen, no changed title, no colour."""
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed (Debian package tmux; make system-deps installs it as root)")
    dump = tmp_path / (HOSTILE + ".txt")
    dump.write_text(f"[root@{HOSTILE} ~]# netstat -s\n" + GOOD)
    session = f"mssd-hostile-{os.getpid()}"
    script = tmp_path / "run.sh"
    script.write_text(f"""cd {ROOT}
printf 'BEFORE-MARKER\\n'
{sys.executable} -m toolkit parse {tmp_path} '{tmp_path}/{HOSTILE}-missing.txt'
{sys.executable} -m toolkit triage {tmp_path} --format md | head -40
{sys.executable} -m toolkit diff {tmp_path}
printf 'AFTER-MARKER\\n'
sleep 30
""")
    env = dict(os.environ, TERM="xterm-256color")
    subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "220", "-y", "120", f"bash {script}"],
                   check=True, env=env)
    try:
        text = ""
        for _ in range(120):
            text = subprocess.run([tmux, "capture-pane", "-p", "-S", "-", "-t", session], capture_output=True,
                                  text=True).stdout
            if "AFTER-MARKER" in text:
                break
            time.sleep(0.5)
        assert "AFTER-MARKER" in text, text[-2000:]
        assert "BEFORE-MARKER" in text, "the screen was cleared"
        title = subprocess.run([tmux, "display-message", "-p", "-t", session, "#{pane_title}"],
                               capture_output=True, text=True).stdout
        assert "pwned" not in title
        styled = subprocess.run([tmux, "capture-pane", "-p", "-e", "-S", "-", "-t", session], capture_output=True,
                                text=True).stdout
        assert "\x1b[31m" not in styled and "\x1b[2J" not in styled, "a sequence from the input reached the terminal"
        assert "evil?]0;pwned?" in text                    # shown, made visible
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)


@pytest.mark.parametrize("text,counter,want", [
    ("IPv4 Statistics\n\n  Reassembly Required                = 5 668\n", "ReasmReqds", 5668),
    ("IPv4 Statistics\n\n  Reassembly Required                = 5 668 1\n", "ReasmReqds", None),
    ("IPv4    ipForwarding        =     2     ipDefaultTTL        =   255\n"
     "        ipReasmTimeout      =    15     ipReasmReqds        =2 293 219 011\n", "ReasmReqds", 2293219011),
    ("ip:\n\t1\u00a0234 fragments received\n\t0 fragments dropped after timeout\n", "ReasmReqds", 1234),
    ("ip:\n\t1 234 fragments received\n", "ReasmReqds", 1234),
    ("Ip:\n    1 23 reassemblies required\n", "ReasmReqds", None),
    ("Ip:\n    \u0661\u0662 reassemblies required\n", "ReasmReqds", None),          # Arabic-Indic digits
    ("Ip:\n    18446744073709551617 reassemblies required\n", "ReasmReqds", None),  # above 2**64
    ("Ip:\n    " + "9" * 30 + " reassemblies required\n", "ReasmReqds", None),
])
def test_grouped_and_foreign_numbers_are_read_whole_or_refused(text, counter, want):
    snaps, warnings = read(text, None)
    got = snaps[0].ipv4[counter] if snaps and snaps[0].ipv4 else None
    assert got == want
    if want is None:
        assert warnings or (snaps and snaps[0].warnings) or not snaps


def test_an_excerpt_with_its_header_is_not_taken_for_a_whole_section():
    snaps, _ = read("ip:\n\t8 fragments received\n\t0 fragments dropped after timeout\n", "bsd")
    assert snaps[0].ipv4["ReasmReqds"] == 8 and snaps[0].ipv4["ReasmOKs"] is None
