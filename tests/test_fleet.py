"""`mssdiag fleet` without root: the shipped content against toolkit/platforms, boot-time
parsing, the fleet index into the audit (boot times, vantages), the wheel, and real
ansible-playbook runs over Ansible's `local` connection (no SSH, no packets: the hosts are
this machine, read through /proc). The namespace fleet with real sshds is
tests/test_fleet_netns.py.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from auditlib import ROOT, mssdiag, rows, snmp_dump

from toolkit import platforms
from toolkit.fleet import CALLBACK, CALLBACKS, COLLECT_PLAYBOOK, PROBE_PLAYBOOK, boot, commands, wheel

PLAYBOOK_BIN = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
HAVE_ANSIBLE = os.access(PLAYBOOK_BIN, os.X_OK)
needs_ansible = pytest.mark.skipif(not HAVE_ANSIBLE, reason="ansible-core is not installed (pip install -e .[fleet])")

# A host "unreachable" without sending anything: ssh runs `false` instead of connecting
# (ProxyCommand), and .invalid never resolves (RFC 6761) -- nor is it looked up.
UNREACHABLE = {"ansible_connection": "ssh", "ansible_host": "nowhere.invalid",
               "ansible_ssh_common_args": "-o ProxyCommand=false"}


def inventory(path: Path, hosts: dict) -> Path:
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inv = {"all": {"hosts": {name: {**local, **v} for name, v in hosts.items()}}}
    path.write_text(json.dumps(inv))
    return path


# ---------------------------------------------------------------------------- shipped content

def test_playbook_commands_are_the_platforms():
    """collect.yml's mssdiag_commands block is rendered from toolkit/platforms, exactly."""
    text = Path(COLLECT_PLAYBOOK).read_text()
    assert commands.shipped_block(text) == commands.vars_block(), \
        "collect.yml is out of date: python -m toolkit.fleet.commands --write"
    table = commands.table()
    assert set(table) == set(platforms.names())
    assert table["vos"]["collect"] == "netstat -statistics -protocol ip"        # seed 004, Figure 6a
    assert table["linux"]["collect"].startswith("cat /proc/net/snmp")
    assert table["windows"]["collect"] == "netstat -s"
    assert all(t["collect"] for t in table.values())


def test_commands_write_rewrites_a_stale_block(tmp_path):
    stale = tmp_path / "collect.yml"
    stale.write_text(Path(COLLECT_PLAYBOOK).read_text().replace('vos: {collect: "netstat -statistics -protocol ip"',
                                                                'vos: {collect: "netstat -s"'))
    assert commands.shipped_block(stale.read_text()) != commands.vars_block()
    assert commands.write(str(stale)) is True
    assert commands.shipped_block(stale.read_text()) == commands.vars_block()
    assert commands.write(str(stale)) is False


@needs_ansible
def test_playbooks_pass_ansible_syntax_check(tmp_path):
    inv = inventory(tmp_path / "inv.json", {"a": {}})
    for book in (COLLECT_PLAYBOOK, PROBE_PLAYBOOK):
        done = subprocess.run([PLAYBOOK_BIN, "-i", str(inv), book, "--syntax-check", "-e", "mssdiag_vantage=all"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_callback_is_not_built_on_deprecated_callbacks():
    source = Path(CALLBACKS, f"{CALLBACK}.py").read_text()
    assert "CallbackBase" in source
    for old in ("callback.tree", "callback.oneline", "callback.minimal", "from ansible.plugins.callback.tree"):
        assert old not in source
    assert "import toolkit" not in source and "from toolkit" not in source   # stands alone in AWX


def test_mssdiag_starts_without_ansible():
    code = ("import sys, toolkit.cli; "
            "bad = sorted(m for m in sys.modules if m == 'ansible' or m.startswith('ansible.')); print(bad)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


# ---------------------------------------------------------------------------- boot times

@pytest.mark.parametrize("text, back", [
    ("btime 1762000000", 38000000),                                                # Linux /proc/stat
    ("{ sec = 1762000000, usec = 500000 } Sat Nov  1 12:26:40 2025", 37999999.5),  # FreeBSD, macOS
    ("1762000000", 38000000),                                                      # OpenBSD
    ("unix:0:system_misc:boot_time\t1762000000", 38000000),                        # Solaris kstat
    ("2026-11-01T12:26:40Z", 1800000000 - 1793536000),                            # Windows (PowerShell)
    ("  9:15am  up 2 days,  3:12,  1 user,  load average: 0.10, 0.12, 0.11", 2 * 86400 + 3 * 3600 + 12 * 60),
    ("09:15AM   up 12 days,   3:04,  2 users,  load average: 1.02, 1.10, 1.21", 12 * 86400 + 3 * 3600 + 4 * 60),
    ("  10:00am  up 35 mins,  1 user,  load average: 0.00", 35 * 60),
    ("10:00  up 2 day(s), 1 hr(s),  1 user,  load average: 0.01", 2 * 86400 + 3600),
])
def test_boot_time_formats(text, back):
    t = 1800000000.0
    assert boot.parse(text, t) == pytest.approx(t - back)


@pytest.mark.parametrize("text", ["", "garbage", "up for lunch", "btime 12", "Permission denied",
                                  "9:15am  up 40000 days, 1 user", "2099-01-01T00:00:00Z", "x" * 5000])
def test_boot_time_refuses_what_it_cannot_read(text):
    assert boot.parse(text, 1800000000.0) is None


# ---------------------------------------------------------------------------- the index into the audit

def _fleet_dir(folder: Path, when: str, counters: dict, boot_text: str = None, host: str = "db1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stamp = when.replace("-", "").replace(":", "")
    name = f"{host}--{stamp}.txt"
    (folder / name).write_text(snmp_dump(None, **counters))
    line = {"host": host, "status": "ok", "kind": "collect", "time": when, "file": name,
            "command": "cat /proc/net/snmp", "rc": 0}
    if boot_text:
        line["boot"] = boot_text
    (folder / "index.jsonl").write_text(json.dumps(line) + "\n")
    return folder


def test_a_boot_time_that_changed_is_a_reset_even_when_counters_grew(tmp_path):
    """Counters regrown past their old values would pass for growth; the boot time says reboot."""
    store = tmp_path / "a.sqlite"
    runs = [("2026-03-02T09:00:00Z", {"ReasmReqds": 500}, "btime 1772400000"),
            ("2026-03-02T10:00:00Z", {"ReasmReqds": 500}, "btime 1772400003"),     # same boot (clock jitter)
            ("2026-03-02T11:00:00Z", {"ReasmReqds": 900}, "btime 1772445600")]     # rebooted at 10:00
    for i, (when, counters, text) in enumerate(runs):
        d = _fleet_dir(tmp_path / f"run{i}", when, counters, text)
        done = mssdiag("audit", "run", str(d), "--store", str(store), "--now", when)
        assert done.returncode in (0, 4), done.stderr
    kinds = rows(store, "SELECT kind FROM deltas ORDER BY t")
    assert [k for (k,) in kinds] == ["ok", "reset"]
    assert rows(store, "SELECT count(*) FROM snapshots WHERE boot_t IS NOT NULL")[0][0] == 3
    ev = rows(store, "SELECT type, detail FROM events WHERE type = 'counter-reset'")
    assert ev and "booted at 2026-03-02T10:00:00Z" in ev[0][1], ev
    # the 400 "new" reassemblies across the reboot are no fragmentation event
    assert not rows(store, "SELECT 1 FROM events WHERE type = 'fragmentation'")


def test_uptime_boot_times_a_minute_apart_are_one_boot(tmp_path):
    store = tmp_path / "a.sqlite"
    for i, (when, up) in enumerate([("2026-03-02T09:00:00Z", "up 3 days,  1:00"),
                                    ("2026-03-02T09:15:40Z", "up 3 days,  1:15")]):
        d = _fleet_dir(tmp_path / f"run{i}", when, {"ReasmReqds": 10 + i}, f"  9:00am  {up},  1 user")
        assert mssdiag("audit", "run", str(d), "--store", str(store), "--now", when).returncode in (0, 4)
    assert [k for (k,) in rows(store, "SELECT kind FROM deltas")] == ["ok"]


def test_a_store_of_schema_1_gains_boot_times(tmp_path):
    """Stores written before boot times migrate in place; their snapshots have none."""
    import sqlite3
    from toolkit.audit import store as st
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    for statement in st._statements(st.MIGRATIONS[0]):
        db.execute(statement)
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO hosts(name) VALUES ('old1')")
    db.execute("INSERT INTO snapshots(host_id, t, taken_at, time_from, moment, collected_t, source, os,"
               " parser_version, counters, text_id) VALUES (1, 0, 'x', 'dump', 'x', 0, 's', 'linux', 'v', '{}', 1)")
    db.commit()
    db.close()
    with st.Store(str(path)) as store:
        assert store.schema_version() == st.SCHEMA_VERSION >= 2      # later schemas (3: the hourly roll-up) apply too
        assert store.db.execute("SELECT boot_t FROM snapshots").fetchall() == [(None,)]


def _probe(target: str, pmtu: int) -> dict:
    from toolkit.probe.result import ProbeResult
    return ProbeResult(target=target, address=target, pmtu=pmtu, pmtu_method="icmp", probes=9, local_mtu=1500,
                       probe_method="icmp", confidence="high").to_dict()


def test_probe_files_in_the_index_carry_their_vantage(tmp_path):
    """`fleet probe`'s directory: each vantage's saved results belong to the target, tagged with
    the vantage; a vantage that failed is no collection (it would turn the vantage stale)."""
    d = tmp_path / "probe"
    d.mkdir()
    lines = []
    for vantage, pmtu in (("v1", 1400), ("v2", 1300)):
        name = f"{vantage}--20260302T090000Z.json"
        (d / name).write_text(json.dumps([_probe("10.9.9.9", pmtu)]))
        lines.append({"host": vantage, "status": "ok", "kind": "probe", "time": "2026-03-02T09:00:00Z",
                      "file": name, "command": "mssdiag probe --json -q 10.9.9.9", "rc": 0})
    lines.append({"host": "v3", "status": "unreachable", "kind": "probe", "time": "2026-03-02T09:00:01Z",
                  "detail": "ssh: connect to host v3 port 22: No route to host"})
    (d / "index.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    store = tmp_path / "a.sqlite"
    done = mssdiag("audit", "run", str(d), "--store", str(store), "--now", "2026-03-02T09:00:05Z")
    assert done.returncode in (0, 4), done.stderr
    got = rows(store, "SELECT h.name, p.vantage, p.target, p.pmtu, p.t FROM probes p JOIN hosts h ON h.id = p.host_id"
                      " ORDER BY p.vantage")
    assert [g[:4] for g in got] == [("10.9.9.9", "v1", "10.9.9.9", 1400), ("10.9.9.9", "v2", "10.9.9.9", 1300)]
    assert {g[4] for g in got} == {1772442000.0}                              # the index's time
    assert rows(store, "SELECT count(*) FROM collections")[0][0] == 0
    assert not rows(store, "SELECT 1 FROM hosts WHERE name IN ('v1', 'v2', 'v3')")
    report = mssdiag("audit", "report", "--store", str(store), "--since", "2026-03-01T00:00:00Z")
    assert "v1 -> 10.9.9.9 1400" in report.stdout and "v2 -> 10.9.9.9 1300" in report.stdout, report.stdout
    # the triage rules judge the latest probe from each vantage, not just the last one stored
    findings = json.loads(rows(store, "SELECT findings FROM findings")[0][0])
    assert {f["data"]["pmtu"] for f in findings if f["code"] == "path-mtu-reduced"} == {1400, 1300}


# ---------------------------------------------------------------------------- the wheel for vantages

def test_the_wheel_is_reproducible_and_installs(tmp_path):
    a = wheel.build(str(tmp_path))
    first = wheel.digest(a)
    assert wheel.digest(wheel.build(str(tmp_path))) == first
    with zipfile.ZipFile(a) as z:
        names = set(z.namelist())
        meta = z.read("mssdiag-0.1.0.dist-info/METADATA").decode()
        record = z.read("mssdiag-0.1.0.dist-info/RECORD").decode()
    assert {"toolkit/fleet/ansible/collect.yml", "toolkit/fleet/ansible/probe.yml",
            f"toolkit/fleet/ansible/callback_plugins/{CALLBACK}.py", "parsers/linux.py", "toolkit/cli/fleet.py"} <= names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    assert "Requires-Dist: scapy" in meta and "Requires-Dist: typer" in meta
    assert len(record.splitlines()) == len(names)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    # no pip needed to prove the layout: a wheel is a zip unpacked into site-packages
    site = next((venv / "lib").glob("python3*/site-packages"))
    with zipfile.ZipFile(a) as z:
        z.extractall(site)
    done = subprocess.run([str(venv / "bin" / "python"), "-c", "import toolkit.fleet, os; "
                           "print(os.path.exists(toolkit.fleet.COLLECT_PLAYBOOK))"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.stdout.strip() == "True", done.stderr


# ---------------------------------------------------------------------------- real Ansible, local connection

@needs_ansible
def test_collect_local_hosts_into_the_audit(tmp_path):
    inv = inventory(tmp_path / "inv.json", {
        "alpha": {"mssdiag_os": "linux"},
        "beta": {},                                                 # no mssdiag_os
        "gamma": {"mssdiag_os": "linux", "mssdiag_command": "cat /nonexistent/snmp"},
        "delta": {"mssdiag_os": "hpux", **UNREACHABLE},
    })
    store = tmp_path / "a.sqlite"
    t0 = (int(time.time()) // 60) * 60             # the boot time must come before the collection
    first, later = (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) for t in (t0, t0 + 60))
    done = mssdiag("fleet", "collect", "-i", str(inv), "--store", str(store), "--dir", str(tmp_path / "runs"),
                   "--now", first, "--forks", "4")
    assert done.returncode == 3, done.stderr                        # some hosts failed, the rest stored
    errs = done.stderr.splitlines()
    assert len(errs) == 3, errs                                     # one line per failed host, no traceback
    assert any(e.startswith("mssdiag: beta: failed: check: set mssdiag_os") for e in errs), errs
    assert any(e.startswith("mssdiag: gamma: failed: ") and "(exit status 1)" in e for e in errs), errs
    assert any(e.startswith("mssdiag: delta: unreachable: ") for e in errs), errs
    [run] = list((tmp_path / "runs").iterdir())
    stamp = first.replace("-", "").replace(":", "")
    assert run.name == stamp
    index = [json.loads(x) for x in (run / "index.jsonl").read_text().splitlines()]
    by = {x["host"]: x for x in index}
    assert by["alpha"]["status"] == "ok" and by["alpha"]["rc"] == 0 and by["alpha"]["file"] == f"alpha--{stamp}.txt"
    assert by["alpha"]["command"].startswith("cat /proc/net/snmp") and by["alpha"]["boot"].startswith("btime ")
    assert (by["gamma"]["status"], by["gamma"]["rc"], by["gamma"]["command"]) == ("failed", 1, "cat /nonexistent/snmp")
    assert by["delta"]["status"] == "unreachable" and by["delta"]["rc"] is None
    assert "Ip: Forwarding" in (run / f"alpha--{stamp}.txt").read_text()
    assert (run / ".ansible.log").exists()
    snaps = rows(store, "SELECT h.name, s.os, s.boot_t FROM snapshots s JOIN hosts h ON h.id = s.host_id")
    assert [(n, o) for n, o, _ in snaps] == [("alpha", "linux")] and snaps[0][2] > 0
    stale = rows(store, "SELECT h.name FROM events e JOIN hosts h ON h.id = e.host_id WHERE e.type = 'stale'"
                        " AND e.state = 'open' ORDER BY h.name")
    assert [n for (n,) in stale] == ["beta", "delta", "gamma"]
    coll = rows(store, "SELECT h.name, c.status FROM collections c JOIN hosts h ON h.id = c.host_id ORDER BY h.name")
    assert coll == [("alpha", "ok"), ("beta", "failed"), ("delta", "unreachable"), ("gamma", "failed")]
    # under cron (stdout not a terminal): only news -- the stale events that opened
    assert sorted(x.split(":")[0] for x in done.stdout.splitlines()) == ["beta", "delta", "gamma"]

    # a minute later (stamped, not waited for): the interval is one minute, the stale events stay open
    again = mssdiag("fleet", "collect", "-i", str(inv), "--store", str(store), "--now", later)
    assert again.returncode == 3, again.stderr
    assert rows(store, "SELECT count(*), max(elapsed_s) FROM deltas") == [(1, 60.0)]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("mssdiag-fleet-")]


@needs_ansible
def test_collect_errors_are_one_line(tmp_path):
    missing = mssdiag("fleet", "collect", "-i", str(tmp_path / "nope.yml"), "--store", str(tmp_path / "a.sqlite"))
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1
    assert "nope.yml: no such file or directory" in missing.stderr
    inv = inventory(tmp_path / "inv.json", {"alpha": {"mssdiag_os": "linux"}})
    nomatch = mssdiag("fleet", "collect", "-i", str(inv), "--limit", "zeta*", "--store", str(tmp_path / "a.sqlite"))
    assert nomatch.returncode == 1 and nomatch.stderr.count("\n") == 1 and "Traceback" not in nomatch.stderr
    assert "no hosts" in nomatch.stderr or "no host matched" in nomatch.stderr, nomatch.stderr
    bad = mssdiag("fleet", "collect", "-i", str(inv), "--now", "yesterday", "--store", str(tmp_path / "a.sqlite"))
    assert bad.returncode == 2 and "--now 'yesterday'" in bad.stderr
    quote = mssdiag("fleet", "collect", "-i", str(inv), "--ansible-args", "-u 'x", "--store", str(tmp_path / "a.sqlite"))
    assert quote.returncode == 2 and quote.stderr.startswith("mssdiag: --ansible-args")
    assert not rows(tmp_path / "a.sqlite", "SELECT 1 FROM snapshots") if (tmp_path / "a.sqlite").exists() else True


@needs_ansible
def test_a_hung_host_times_out_alone(tmp_path):
    inv = inventory(tmp_path / "inv.json", {"hung": {"mssdiag_os": "linux", "mssdiag_command": "sleep 30"},
                                            "fine": {"mssdiag_os": "linux"}})
    t0 = time.monotonic()
    done = mssdiag("fleet", "collect", "-i", str(inv), "--timeout", "2", "--store", str(tmp_path / "a.sqlite"))
    assert time.monotonic() - t0 < 25
    assert done.returncode == 3, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("mssdiag: hung: failed: ") and "timed out" in line.lower(), line
    assert rows(tmp_path / "a.sqlite", "SELECT h.name FROM snapshots s JOIN hosts h ON h.id = s.host_id") == [("fine",)]


@needs_ansible
def test_collect_without_ansible_says_how_to_get_it(tmp_path):
    """A Python without ansible-playbook beside it and none on PATH."""
    inv = inventory(tmp_path / "inv.json", {"alpha": {"mssdiag_os": "linux"}})
    code = ("import sys; sys.executable = '/nonexistent/python'; sys.argv = ['mssdiag'] + sys.argv[1:]; "
            "from toolkit.cli import main; main()")
    env = dict(os.environ, PATH="/usr/bin:/bin", XDG_CONFIG_HOME="/nonexistent")
    done = subprocess.run([sys.executable, "-c", code, "fleet", "collect", "-i", str(inv), "--store",
                           str(tmp_path / "a.sqlite")], capture_output=True, text=True, cwd=ROOT, env=env)
    if shutil.which("ansible-playbook", path="/usr/bin:/bin"):
        pytest.skip("a system ansible-playbook is on PATH")
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == ("mssdiag: ansible-playbook: not found; install Ansible with the fleet extra: "
                                   "pip install 'mssdiag[fleet]' (or put ansible-playbook on PATH)")


@needs_ansible
def test_collect_progress_only_on_a_terminal(tmp_path):
    inv = inventory(tmp_path / "inv.json", {"alpha": {"mssdiag_os": "linux"}, "beta": {"mssdiag_os": "linux"}})
    cmd = (f"{sys.executable} -m toolkit fleet collect -i {inv} --store {tmp_path / 'a.sqlite'} "
           f"--now 2026-03-02T09:00:00Z")
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent", COLUMNS="200")
    tty = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=120)
    assert tty.returncode == 0, tty.stdout
    assert "fleet collect: 2 host(s) done, 0 failed" in tty.stdout
    assert "alpha" in tty.stdout and "new snapshot(s)" in tty.stdout            # the audit's summary
    cron = mssdiag("fleet", "collect", "-i", str(inv), "--store", str(tmp_path / "b.sqlite"))
    assert cron.returncode == 0 and cron.stdout == "" and cron.stderr == ""


@needs_ansible
def test_a_stopped_collection_leaves_no_ansible_behind(tmp_path):
    """SIGTERM mid-run: one line, exit 143, ansible-playbook and its workers gone, what was
    recorded kept in --dir."""
    import psutil
    inv = inventory(tmp_path / "inv.json", {"fast": {"mssdiag_os": "linux"},
                                            "slow": {"mssdiag_os": "linux", "mssdiag_command": "sleep 60"}})
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent")
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", "fleet", "collect", "-i", str(inv), "--store",
                             str(tmp_path / "a.sqlite"), "--dir", str(tmp_path / "runs")], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        index = None
        while time.monotonic() < deadline:
            found = list((tmp_path / "runs").glob("*/index.jsonl"))
            if found and "fast" in found[0].read_text():
                index = found[0]
                break
            time.sleep(0.1)
        assert index is not None, "the fast host was never recorded"
        children = psutil.Process(proc.pid).children(recursive=True)
        assert any("ansible-playbook" in " ".join(c.cmdline()) for c in children)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert err.splitlines()[-1] == "mssdiag: terminated" and "Traceback" not in err
    assert "1 host(s) recorded before the stop are kept there" in err
    time.sleep(0.5)
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert json.loads(index.read_text().splitlines()[0])["host"] == "fast"


@needs_ansible
def test_playbook_command_prints_a_runnable_playbook(tmp_path):
    shown = mssdiag("fleet", "playbook")
    assert shown.returncode == 0
    assert shown.stdout.startswith("# Run by hand")
    assert Path(COLLECT_PLAYBOOK).read_text() in shown.stdout
    env = mssdiag("fleet", "playbook", "--env")
    assert "export ANSIBLE_CALLBACK_PLUGINS=" in env.stdout and "export MSSDIAG_FLEET_DIR=" in env.stdout
    assert "probe.yml" in mssdiag("fleet", "playbook", "probe", "--env").stdout
    assert mssdiag("fleet", "playbook", "nope").returncode == 2

    # copied into a project directory (AWX, a cron controller): the callback beside the
    # playbook loads without any configuration, the directory comes from MSSDIAG_FLEET_DIR
    project = tmp_path / "project"
    assert mssdiag("fleet", "playbook", "--copy-to", str(project)).returncode == 0
    inv = inventory(tmp_path / "inv.json", {"alpha": {"mssdiag_os": "linux"}, "omega": {"mssdiag_os": "vos",
                                                                                       **UNREACHABLE}})
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env["MSSDIAG_FLEET_DIR"] = str(out)
    ran = subprocess.run([PLAYBOOK_BIN, "-i", str(inv), str(project / "collect.yml")], capture_output=True,
                         text=True, env=env, timeout=120, cwd=tmp_path)
    assert ran.returncode == 4, ran.stdout                                      # Ansible's "unreachable"
    index = {x["host"]: x for x in map(json.loads, (out / "index.jsonl").read_text().splitlines())}
    assert index["alpha"]["status"] == "ok" and index["omega"]["status"] == "unreachable"
    assert index["omega"]["command"] == "netstat -statistics -protocol ip"
    stored = mssdiag("audit", "run", str(out), "--store", str(tmp_path / "a.sqlite"))
    assert stored.returncode == 4 and "omega: stale opened" in stored.stdout, stored.stderr


def test_the_bundle_carries_the_wheel_and_the_dependencies_only(tmp_path):
    deps = tmp_path / "deps"
    deps.mkdir()
    (deps / "scapy-2.6.1-py3-none-any.whl").write_bytes(b"not really a wheel, only its bytes")
    (deps / "mssdiag-0.0.1-py3-none-any.whl").write_bytes(b"an older mssdiag: left out")
    (deps / "notes.txt").write_text("not a wheel")
    import tarfile
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    a, ida = wheel.bundle(str(tmp_path / "a"), str(deps))
    b, idb = wheel.bundle(str(tmp_path / "b"), str(deps))
    assert ida == idb and Path(a).name == f"mssdiag-bundle-{ida}.tar"      # reproducible: the id says it all
    with tarfile.open(a) as tar:
        assert sorted(tar.getnames()) == ["mssdiag-0.1.0-py3-none-any.whl", "scapy-2.6.1-py3-none-any.whl"]
        assert {m.mtime for m in tar.getmembers()} == {0}
    alone, idc = wheel.bundle(str(tmp_path / "c"))
    assert idc != ida
    with tarfile.open(alone) as tar:
        assert tar.getnames() == ["mssdiag-0.1.0-py3-none-any.whl"]
