"""Every bad input gets one stderr line naming it; the good ones are still read."""
import codecs
import json
import os
import subprocess
import sys

import pytest

GOOD = "netstat -statistics -protocol ip\nip:\n    92  ipReasmReqds\n    46  ipReasmOKs\n"


def mssdiag(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "toolkit", *args], input=stdin, capture_output=True, text=True)


@pytest.fixture
def files(tmp_path):
    made = {
        "good.txt": GOOD.encode(),
        "empty.txt": b"",
        "binary.bin": b"\x7fELF\x02\x01\x01" + bytes(200),
        "uptime.txt": b" 10:01:02 up 3 days,  2:03,  1 user,  load average: 0.00, 0.01, 0.05\n",
        "truncated.txt": GOOD.encode()[:40],
        "ps.txt": "PowerShell netstat -s > x.txt\r\n".encode("utf-16-le"),
    }
    for name, data in made.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


@pytest.mark.parametrize("name,reason", [
    ("empty.txt", "no netstat IP statistics found"),
    ("binary.bin", "binary data"),
    ("uptime.txt", "no netstat IP statistics found"),
    ("truncated.txt", "no netstat IP statistics found"),
    ("missing.txt", "no such file or directory"),
])
def test_bad_input_one_line_named_and_others_still_read(files, name, reason):
    run = mssdiag("parse", str(files / name), str(files / "good.txt"), "--json")
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and str(files / name) in lines[0] and reason in lines[0], run.stderr
    assert run.returncode == 3
    (snap,) = json.loads(run.stdout)
    assert snap["ipv4"]["ReasmReqds"] == 92


def test_nothing_parsed_exits_1(files):
    run = mssdiag("parse", str(files / "empty.txt"))
    assert run.returncode == 1 and run.stdout == ""


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(files):
    path = files / "good.txt"
    path.chmod(0)
    run = mssdiag("parse", str(path))
    assert run.returncode == 1 and "cannot read" in run.stderr


def test_directory_is_read_recursively_and_stdin_works(files):
    (files / "sub").mkdir()
    (files / "sub" / "again.txt").write_text(GOOD)
    run = mssdiag("parse", str(files / "sub"), "-", "--format", "jsonl", stdin=GOOD)
    assert run.returncode == 0, run.stderr
    sources = [json.loads(line)["source"] for line in run.stdout.splitlines()]
    assert sources == [str(files / "sub" / "again.txt"), "-"]


def test_utf16_with_bom_and_crlf(files):
    path = files / "win.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + GOOD.replace("\n", "\r\n").encode("utf-16-le"))
    run = mssdiag("parse", str(path), "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)[0]["ipv4"]["ReasmOKs"] == 46


@pytest.mark.parametrize("args,needle", [
    (["parse", "x", "--os", "plan9"], "unknown OS 'plan9'"),
    (["parse", "x", "--format", "xml"], "'xml' is not one of"),
    (["parse"], "Missing argument"),
    (["frobnicate"], "No such command"),
])
def test_usage_errors_are_one_line(args, needle):
    run = mssdiag(*args)
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1 and needle in run.stderr, run.stderr


def test_version_comes_from_package_metadata():
    from importlib.metadata import version
    run = mssdiag("--version")
    assert run.stdout.strip() == f"mssdiag {version('mssdiag')}"


def test_cli_start_up_does_not_import_scapy():
    code = "import sys, toolkit.cli; print('scapy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def _peak_rss_kib(path):
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", "parse", str(path), "--format", "jsonl"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, proc.stderr.read()
    return usage.ru_maxrss


def test_memory_does_not_follow_file_size(tmp_path):
    """A cron log 8 times bigger must not need more memory: the reader streams."""
    one = "Sun Nov 22 03:06:45 UTC 2026\n" + GOOD + "".join(f"   {i}  ipOther{i}\n" for i in range(60))
    small, big = tmp_path / "small.log", tmp_path / "big.log"
    small.write_text(one * (4 * 2**20 // len(one)))
    big.write_text(one * (32 * 2**20 // len(one)))
    small_kib, big_kib = _peak_rss_kib(small), _peak_rss_kib(big)
    assert big_kib < small_kib + 16 * 1024, f"peak RSS {small_kib} KiB for 4 MiB, {big_kib} KiB for 32 MiB"


def test_progress_bar_on_a_terminal_only(tmp_path):
    """stderr on a pseudo-terminal and a big input: a progress bar, and the same data."""
    import pty

    one = "Sun Nov 22 03:06:45 UTC 2026\n" + GOOD
    path = tmp_path / "big.log"
    path.write_text(one * (40 * 2**20 // len(one)))
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", "parse", str(path), "--format", "jsonl"],
                            stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []

    def drain():  # keep the terminal read so the child never blocks writing to it
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    import threading
    reader = threading.Thread(target=drain)
    reader.start()
    lines = sum(1 for _ in proc.stdout)
    assert proc.wait() == 0
    reader.join(10)
    seen = b"".join(chunks)
    assert lines == 40 * 2**20 // len(one)
    assert b"reading" in seen and b"%" in seen and b"Traceback" not in seen


@pytest.mark.parametrize("name", ["007", "1e3", "1_000", "nan"])
def test_a_host_name_that_looks_like_a_number_is_printed_as_it_is(name):
    """tabulate reads text that looks like a number as one (007 became 7, 1e3 1000.0)."""
    dump = os.path.join(os.path.dirname(__file__), "..", "fixtures", "netstat", "linux",
                        "tcpmon-netstat-rhel-zero-omitted.txt")
    out = mssdiag("parse", dump, "--host", name).stdout.splitlines()
    cells = out[2].split()
    assert cells[3] == name and cells[6] == "2"          # the host as given; counters still numbers
