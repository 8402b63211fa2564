"""Hostile host names from end to end: a real `mssdiag fleet collect` (Ansible, `local`
connection: no root, no packets) over an inventory of 50 names built to break things --
terminal escapes, NUL, BEL, bidi overrides, line and paragraph breaks, names that differ only
in case or in what a file name cannot hold, dots, 300 characters, Jinja -- plus files dropped
by hand with names that are not UTF-8 and a damaged index, then `mssdiag audit run` and
`audit report` in every output format.

Every host must be stored once (none merged, none hidden, none lost), no output meant for a
terminal, a monitoring system or a Markdown page may carry a raw control, bidi or line-break
character, and every output must stay well-formed: Nagios one line with one perfdata label
per metric, Checkmk one line per host, JSON Lines one object a line, Prometheus accepted by
`promtool check metrics`, Markdown tables with their columns, HTML and JSON that parse.
"""
from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from auditlib import ROOT, mssdiag, rows, snmp_dump

PLAYBOOK_BIN = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
INVENTORY_BIN = os.path.join(os.path.dirname(sys.executable), "ansible-inventory")
pytestmark = pytest.mark.skipif(not os.access(PLAYBOOK_BIN, os.X_OK),
                                reason="ansible-core is not installed (pip install -e .[fleet])")

NOW = "2026-03-02T09:00:00Z"

NAMES = [
    # collisions once sanitised for a file name, or by case
    "web 1", "web_1", "web/1", "web\\1", "db-主", "db-从", "Web9", "web9", "WEB9",
    # dots: hidden files, the directory itself, its parent
    ".hidden", ".", "..", "...x", "../../etc/passwd",
    # length: past NAME_MAX in characters and in bytes
    "a" * 300, "é" * 200, "x" * 255,
    # terminal control: OSC titles (BEL, ST), reset, BEL, NUL, DEL, C1 CSI, backspace (no "[":
    # Ansible reads a name with a lone one as a host range and loads no inventory at all)
    "evil\x1b]0;pwned\x07", "reset\x1bc", "st\x1b]2;t\x1b\\end", "bel\x07", "nul\x00x", "del\x7f", "c1\x9b31m",
    "back\x08space",
    # bidi overrides and isolates, zero-width, BOM
    "rlo\u202eexe.txt", "lre\u202ax", "lri\u2066x\u2069", "zwsp\u200bname", "bom\ufeffname",
    # line and paragraph breaks a reader may honour
    "line\nbreak", "cr\rreturn", "ls\u2028sep", "ps\u2029sep", "nel\u0085next", "vt\x0bff\x0c", "tab\there",
    # the syntax of the outputs: Nagios, Checkmk, Markdown, HTML, shells, templates
    "pipe|name", "nagios OK - fake | 'x'=1", 'quote"name', "apos'name", "eq=name", "**bold**", "`code`",
    "<script>alert(1)</script>", "$(touch /tmp/x)", "{{ 'a' | upper }}", "-rf", "star*", "~user",
    # names any table must keep as text
    "007", "1e3",
]
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def _no_raw_control(what: str, data: bytes) -> str:
    """`data` is UTF-8 (no raw byte of a non-UTF-8 name) with no control, bidi or line-break
    character but line ends (and a terminal's CR LF)."""
    text = data.decode("utf-8")              # strict: raw non-UTF-8 bytes fail here
    bad = UNSAFE.search(text.replace("\r\n", "\n"))
    assert bad is None, f"{what}: raw {bad.group()!r} at {bad.start()}: {text[max(0, bad.start() - 80):bad.start() + 20]!r}"
    return text


def _run(*args, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test", COLUMNS="250")
    env.pop("MSSDIAG_STORE", None)
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, cwd=ROOT, env=env,
                          timeout=300, **kw)


def _hand_dir(folder: Path) -> dict:
    """What an engineer drops by hand beside a collection (telnet-only hosts): files whose names
    are not UTF-8, and an index with a line that is not UTF-8, one whose host is a lone
    surrogate, one whose host holds a raw U+2028, and two `ok` lines whose file gives nothing
    (missing, hidden). Returns {stored name: why}."""
    folder.mkdir()
    raw = os.fsencode(folder)
    # counters that cannot be one host over time (neither grows into the other): two hosts
    with open(raw + b"/h\xf4te1--20260302T085900Z.txt", "wb") as fh:        # Latin-1 "hôte1"
        fh.write(snmp_dump(None, ReasmReqds=900, ReasmOKs=1).encode())
    with open(raw + b"/\xff\xfe--20260302T085900Z.txt", "wb") as fh:
        fh.write(snmp_dump(None, ReasmReqds=5, ReasmOKs=400).encode())
    (folder / "sep--20260302T085900Z.txt").write_text(snmp_dump(None, ReasmReqds=7))
    (folder / ".ghost--20260302T085900Z.txt").write_text(snmp_dump(None, ReasmReqds=7))
    line = {"status": "ok", "kind": "collect", "time": NOW, "command": "netstat -s", "rc": 0}
    with open(folder / "index.jsonl", "wb") as fh:
        fh.write(json.dumps(dict(line, host="ls\u2028raw", file="sep--20260302T085900Z.txt"),
                            ensure_ascii=False).encode() + b"\n")
        fh.write(b'{"host": "latin\xe9", "status": "ok"}\n')
        fh.write(json.dumps(dict(line, host="lone\udcf4")).encode() + b"\n")
        fh.write(json.dumps(dict(line, host="missing", file="missing--20260302T085900Z.txt")).encode() + b"\n")
        fh.write(json.dumps(dict(line, host="ghost", file=".ghost--20260302T085900Z.txt")).encode() + b"\n")
    return {"h\\xf4te1--20260302T085900Z": "snapshot", "\\xff\\xfe--20260302T085900Z": "snapshot",
            "ls\u2028raw": "snapshot", "missing": "no-snapshot", "ghost": "no-snapshot"}


class _Html(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_hostile_names_from_fleet_collect_through_every_output(tmp_path):
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "mssdiag_os": "linux"}
    inv = tmp_path / "inv.json"
    inv.write_text(json.dumps({"all": {"hosts": {n: local for n in NAMES}}}))
    listed = json.loads(subprocess.run([INVENTORY_BIN, "-i", str(inv), "--list"], capture_output=True, text=True,
                                       timeout=120).stdout)["_meta"]["hostvars"]
    assert sorted(listed) == sorted(NAMES), "Ansible must know each name as written (else the test proves nothing)"
    assert len(NAMES) >= 40 and len(set(NAMES)) == len(NAMES)

    # -- collection: every host a file of its own, none hidden, each name within NAME_MAX
    store = tmp_path / "fleet.sqlite"
    done = _run("fleet", "collect", "-i", str(inv), "--store", str(store), "--dir", str(tmp_path / "runs"),
                "--now", NOW, "--forks", "10")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    _no_raw_control("fleet collect stdout", done.stdout)
    _no_raw_control("fleet collect stderr", done.stderr)
    [run] = list((tmp_path / "runs").iterdir())
    index_text = (run / "index.jsonl").read_text(encoding="utf-8")
    assert index_text.isascii() and len(index_text.splitlines()) == len(NAMES), "a name split an index line"
    index = [json.loads(x) for x in index_text.split("\n") if x]
    assert sorted(x["host"] for x in index) == sorted(NAMES), "the index keeps every inventory name exactly"
    files = [x["file"] for x in index]
    assert all(x["status"] == "ok" for x in index) and len(set(files)) == len(NAMES)
    assert len({f.lower() for f in files}) == len(NAMES), "two names share a file on a case-blind file system"
    assert all(not f.startswith((".", "-")) and "/" not in f and len(f.encode()) <= 255 for f in files), files
    assert sorted(p.name for p in run.iterdir() if not p.name.startswith(".")) == sorted(files + ["index.jsonl"])
    stored = rows(store, "SELECT h.name, count(*) FROM snapshots s JOIN hosts h ON h.id = s.host_id GROUP BY h.id")
    assert sorted(stored) == sorted((n, 1) for n in NAMES), "every host stored once, exactly as named"

    # -- the audit over the collection and the hand-dropped directory, every output
    hand = _hand_dir(tmp_path / "hand")
    expected = sorted(NAMES + list(hand))
    audit = tmp_path / "audit.sqlite"
    prom = tmp_path / "mssdiag.prom"
    inputs = [str(run), str(tmp_path / "hand")]
    first = _run("audit", "run", *inputs, "--store", str(audit), "--now", NOW, "--jsonl", "--prom-file", str(prom))
    assert first.returncode == 3, first.stderr          # the index lines that could not be read
    err = _no_raw_control("audit run stderr", first.stderr)
    assert "line 2: not UTF-8" in err and "line 3: holds \\udcf4, a lone surrogate" in err, err
    assert all(x.startswith("mssdiag: ") for x in err.splitlines()) and "internal error" not in err, err
    names = rows(audit, "SELECT name FROM hosts")
    assert sorted(n for (n,) in names) == expected, "no host merged, hidden, split or lost"
    snaps = dict(rows(audit, "SELECT h.name, count(*) FROM snapshots s JOIN hosts h ON h.id = s.host_id GROUP BY h.id"))
    assert snaps == {n: 1 for n in expected if hand.get(n, "snapshot") == "snapshot"}
    stale = rows(audit, "SELECT h.name, c.status FROM collections c JOIN hosts h ON h.id = c.host_id"
                        " WHERE c.status != 'ok'")
    assert sorted(stale) == [("ghost", "no-snapshot"), ("missing", "no-snapshot")]
    assert sorted(n for (n,) in rows(audit, "SELECT h.name FROM events e JOIN hosts h ON h.id = e.host_id"
                                            " WHERE e.type = 'stale' AND e.state = 'open'")) == ["ghost", "missing"]
    assert rows(audit, "SELECT status FROM runs") == [("ok",)]

    # JSON Lines: one object a line, every name kept exactly (escaped by JSON, not replaced)
    text = first.stdout.decode("utf-8")
    assert text.isascii() or not UNSAFE.search(text), "JSON Lines carry no raw control"
    lines = text.split("\n")[:-1]
    assert len(text.splitlines()) == len(lines), "a raw line break split a record"
    recs = [json.loads(x) for x in lines]
    assert sorted(r["host"] for r in recs if r["type"] == "host") == expected
    assert sorted(r["host"] for r in recs if r["type"] == "snapshot") == sorted(snaps)

    # Prometheus: promtool accepts it; one series per host with its exact name
    series = _prom_hosts(prom.read_bytes().decode("utf-8"))      # as written: read_text would make CR a line end
    assert sorted(series) == expected

    # Nagios: one line, the text and one perfdata label per metric and host, all distinct
    nag = _run("audit", "run", *inputs, "--store", str(audit), "--now", NOW, "--nagios")
    assert nag.returncode in (1, 2), nag.stdout         # stale hosts and unreadable index lines: not OK
    out = _no_raw_control("nagios", nag.stdout)
    assert out.count("\n") == 1 and out.endswith("\n") and nag.stderr == b""
    head, sep, perf = out.rstrip("\n").partition(" | ")
    assert sep and head.startswith("MSSDIAG ") and "|" not in head
    labels = re.findall(r"'([^']*)'=[-0-9.U]+[a-zA-Z%]*;[^ ;]*;[^ ;]*;[^ ;]*;[^ ;]*(?= |$)", perf)
    assert len(labels) == len(re.findall(r"'=", perf)) == len(set(labels))
    assert sum(1 for x in labels if x.endswith(":snapshot_age") or ":snapshot_age~" in x) == len(snaps)

    # Checkmk: one line per host, service names distinct
    cmk = _run("audit", "run", *inputs, "--store", str(audit), "--now", NOW, "--checkmk")
    out = _no_raw_control("checkmk", cmk.stdout)
    services = [re.match(r'^[0-3] "mssdiag ([^"]*)" \S+ .+$', x) for x in out.splitlines()]
    assert all(services) and len(services) == len(expected) == len({m.group(1) for m in services}), out

    # cron: only news, one line each; a terminal: the summary table, one row per host
    cron = _run("audit", "run", *inputs, "--store", str(tmp_path / "cron.sqlite"), "--now", NOW)
    out = _no_raw_control("audit run under cron", cron.stdout)
    assert sorted(x.split(": stale opened")[0] for x in out.splitlines()) == ["ghost", "missing"]
    if shutil.which("script"):
        cmd = " ".join(_quote(a) for a in [sys.executable, "-m", "toolkit", "audit", "run", *inputs, "--store",
                                            str(tmp_path / "tty.sqlite"), "--now", NOW])
        tty = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, cwd=ROOT, timeout=300,
                             env=dict(os.environ, XDG_CONFIG_HOME="/nonexistent", COLUMNS="250"))
        out = _no_raw_control("audit run on a terminal", tty.stdout)
        assert f"{len(expected)} host(s) read, {len(snaps)} new snapshot(s) stored" in out, out[-500:]
        table = [x for x in out.splitlines() if not x.startswith("mssdiag: ")]      # stderr shares the terminal
        assert len(table) == len(expected) + 3, "a name started a row of its own"

    # the report: table, Markdown, HTML, JSON
    report = {f: _run("audit", "report", "--store", str(audit), "--since", "2026-03-01T00:00:00Z", "-f", f)
              for f in ("table", "md", "html", "json")}
    for f, done in report.items():
        assert done.returncode == 0 and done.stderr == b"", (f, done.stderr)
    out = _no_raw_control("report table", report["table"].stdout)
    body = out.split("\n\n")[1].splitlines()
    assert len(body) == len(expected) + 2, "one row per host (and the header)"
    md = _no_raw_control("report md", report["md"].stdout)
    table = md.split("\n\n")[2].splitlines()
    cells = [len(re.findall(r"(?<!\\)\|", row)) for row in table]
    assert len(table) == len(expected) + 2 and len(set(cells)) == 1, "every Markdown row has the header's columns"
    page = _Html()
    page.feed(report["html"].stdout.decode("utf-8"))
    assert "script" not in page.tags and "<script>alert(1)</script>" in "".join(page.text)
    doc = json.loads(report["json"].stdout)
    assert sorted(h["host"] for h in doc["hosts"]) == expected


def _prom_hosts(text: str) -> list:
    promtool = shutil.which("promtool")
    if promtool is not None:
        check = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
        assert check.returncode == 0, check.stderr + check.stdout
    hosts = []
    for line in text.split("\n"):
        m = re.match(r'^mssdiag_host_state\{host="((?:[^"\\]|\\.)*)"\} [0-2]$', line)
        if m:
            hosts.append(re.sub(r"\\(.)", lambda e: {"n": "\n"}.get(e.group(1), e.group(1)), m.group(1)))
    return hosts


def _quote(arg: str) -> str:
    import shlex
    return shlex.quote(arg)
