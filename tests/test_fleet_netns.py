"""`mssdiag fleet` over real SSH: every host a network namespace with its own sshd (Debian
openssh-server), Ansible itself run inside a controller namespace (tests/fleetlab.py).

Collect: 11 live hosts and one address with nothing behind it. The first collection stores
every live host's snapshot (each host's /proc/net/snmp is its namespace's own) and records
the dead one as unreachable (a stale event). Then h01 sends fragmented UDP to h02, and a
second collection a minute later -- stamped with --now, so the minute costs no real time --
shows the growth and the fragmentation event on exactly those two hosts.

Vantage: two vantage namespaces reach one target over two routers whose links to the target
have MTU 1400 and 1300. `mssdiag fleet probe` installs this mssdiag (its wheel, and the
wheels of its dependencies: the vantages have no package index) on both, probes from each,
and the audit report shows both path MTUs, one per vantage -> target.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditlib import ROOT, rows
from fleetlab import FleetLab, _ip, unavailable

REASON = unavailable()
pytestmark = [pytest.mark.netns, pytest.mark.skipif(REASON is not None, reason=f"real-network test: {REASON}")]

SENDER = """
import socket, sys, time
dst, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_PMTUDISC_DONT: DF off, the sender fragments
for _ in range(count):
    s.sendto(bytes(size), (dst, 40999))
    time.sleep(0.002)
"""


def env() -> dict:
    e = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test")
    e.pop("MSSDIAG_STORE", None)
    return e


def mssdiag_in(lab: FleetLab, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The CLI inside the controller namespace: Ansible and its SSH run there."""
    return subprocess.run(["ip", "netns", "exec", lab.ctl, sys.executable, "-m", "toolkit", *args],
                          capture_output=True, text=True, env=env(), cwd=ROOT, timeout=timeout)


def utc(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def test_collect_a_namespace_fleet_and_see_fragmentation_on_exactly_two_hosts(tmp_path):
    with FleetLab(11, tmp_path, down=1) as lab:
        inv = lab.inventory(tmp_path / "inventory.yml")
        store = tmp_path / "audit.sqlite"
        t0 = (int(time.time()) // 60) * 60
        first = mssdiag_in(lab, "fleet", "collect", "-i", str(inv), "--store", str(store), "--forks", "12",
                           "--now", utc(t0), "--dir", str(tmp_path / "runs"))
        assert first.returncode == 3, first.stderr                  # one host down, the others stored
        assert first.stderr.splitlines() == [l for l in first.stderr.splitlines() if l.startswith("mssdiag: h12: ")]
        assert first.stderr.startswith("mssdiag: h12: unreachable: ") and first.stderr.count("\n") == 1
        texts = {p.name.split("--")[0]: p.read_text() for p in tmp_path.glob("runs/*/h*--*.txt")}
        assert sorted(texts) == lab.hosts
        for name, text in texts.items():      # the command's output alone: no pty CRs, no ssh chatter
            assert text.startswith("Ip: Forwarding") and "\r" not in text and "Shared connection" not in text, name
        snaps = rows(store, "SELECT h.name, s.counters FROM snapshots s JOIN hosts h ON h.id = s.host_id ORDER BY h.name")
        assert [n for n, _ in snaps] == lab.hosts
        # each host's counters are its own namespace's: a few SSH sessions' worth, nothing like the machine's
        for name, counters in snaps:
            assert json.loads(counters)["ipv4"]["ReasmReqds"] == 0, name
        coll = dict(rows(store, "SELECT h.name, c.status FROM collections c JOIN hosts h ON h.id = c.host_id"))
        assert coll == {**{h: "ok" for h in lab.hosts}, "h12": "unreachable"}
        assert rows(store, "SELECT h.name, e.type FROM events e JOIN hosts h ON h.id = e.host_id"
                           " WHERE e.state = 'open'") == [("h12", "stale")]        # unreachable: stale, not silence

        # fragmented traffic between two of the namespaces (sent inside h01, over the lab's bridge)
        lab.check_routes(lab.host_ns("h01"), [lab.addr["h02"]])
        lab.run(lab.host_ns("h01"), [sys.executable, "-c", SENDER, lab.addr["h02"], "50", "3000"], check=True)

        second = mssdiag_in(lab, "fleet", "collect", "-i", str(inv), "--store", str(store), "--forks", "12",
                            "--now", utc(t0 + 60))
        assert second.returncode == 3, second.stderr
        deltas = {n: d for n, *d in rows(store, "SELECT h.name, d.elapsed_s, d.kind, d.reasm_reqds, d.reasm_oks,"
                                                " d.frag_oks, d.frag_creates FROM deltas d JOIN hosts h"
                                                " ON h.id = d.host_id")}
        assert set(deltas) == set(lab.hosts)
        # 3,000 bytes of UDP are 3 fragments at MTU 1500: 50 datagrams, 150 fragments
        assert deltas["h02"] == [60.0, "ok", 150, 50, 0, 0]
        assert deltas["h01"] == [60.0, "ok", 0, 0, 50, 150]
        for name in lab.hosts[2:]:
            assert deltas[name] == [60.0, "ok", 0, 0, 0, 0], name
        frag = rows(store, "SELECT h.name FROM events e JOIN hosts h ON h.id = e.host_id"
                           " WHERE e.type = 'fragmentation' AND e.state = 'open' ORDER BY h.name")
        assert frag == [("h01",), ("h02",)]
        assert rows(store, "SELECT h.name, e.type FROM events e JOIN hosts h ON h.id = e.host_id WHERE e.state = 'open'"
                           " AND e.type <> 'fragmentation'") == [("h12", "stale")]
        opened = sorted(line.split(":")[0] for line in second.stdout.splitlines())
        assert opened == ["h01", "h02"], second.stdout     # under cron: only the news

        report = subprocess.run([sys.executable, "-m", "toolkit", "audit", "report", "--store", str(store),
                                 "--since", utc(t0 - 3600), "--json"], capture_output=True, text=True, env=env(),
                                cwd=ROOT)
        hosts = {h["host"]: h for h in json.loads(report.stdout)["hosts"]}
        assert hosts["h02"]["totals"]["reasm_reqds"] == 150 and hosts["h01"]["totals"]["frag_creates"] == 150
        assert hosts["h12"]["state"] == "WARNING" and hosts["h03"]["state"] == "OK"
        assert not subprocess.run(["ip", "netns", "pids", lab.ctl], capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory):
    """The wheels of mssdiag's dependencies, for vantages without a package index."""
    from importlib.metadata import requires
    reqs = [r for r in requires("mssdiag") or [] if "extra ==" not in r]
    folder = tmp_path_factory.mktemp("wheelhouse")
    done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary", ":all:", "-d", str(folder),
                           *reqs], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.skip(f"cannot fetch the dependency wheels for the vantages: {done.stderr.strip()[-200:]}")
    return folder


def test_probe_from_two_vantages_shows_both_path_mtus(tmp_path, wheelhouse):
    with FleetLab(2, tmp_path, prefix="v") as lab:
        net = lab.net.network_address
        sub = lambda k, h: str(net + 256 * k + h)  # noqa: E731  (10.N.k.h)
        r1, r2, target_ns = lab.ns("r1"), lab.ns("r2"), lab.ns("t")
        target = sub(9, 9)
        for vantage, router, k, mtu in (("v01", r1, 2, 1400), ("v02", r2, 4, 1300)):
            vns = lab.host_ns(vantage)
            a, b = lab.link(vns, router, 1500)
            _ip("addr", "add", f"{sub(k, 2)}/24", "dev", a, ns=vns)
            _ip("addr", "add", f"{sub(k, 1)}/24", "dev", b, ns=router)
            c, d = lab.link(router, target_ns, mtu)
            _ip("addr", "add", f"{sub(k + 1, 1)}/24", "dev", c, ns=router)
            _ip("addr", "add", f"{sub(k + 1, 2)}/24", "dev", d, ns=target_ns)
            _ip("route", "add", f"{target}/32", "via", sub(k, 1), ns=vns)
            _ip("route", "add", f"{target}/32", "via", sub(k + 1, 2), ns=router)
            _ip("route", "add", f"{sub(k, 0)}/24", "via", sub(k + 1, 1), ns=target_ns)
            lab.sysctl(router, "net.ipv4.ip_forward", "1")
        _ip("addr", "add", f"{target}/32", "dev", "lo", ns=target_ns)
        for vantage in ("v01", "v02"):
            lab.check_routes(lab.host_ns(vantage), [target])
        host_vars = {v: {"mssdiag_venv": str(tmp_path / f"venv-{v}"),
                         "mssdiag_python": os.path.join(sys.base_prefix, "bin", "python3")} for v in lab.hosts}
        inv = lab.inventory(tmp_path / "inventory.yml", groups={"vantages": lab.hosts}, host_vars=host_vars)
        store = tmp_path / "audit.sqlite"
        kept = tmp_path / "runs"
        done = mssdiag_in(lab, "fleet", "probe", "-i", str(inv), "--vantage", "vantages", target, "--wheels",
                          str(wheelhouse), "--store", str(store), "--dir", str(kept), "--json")
        assert done.returncode in (0, 4), done.stderr + "\n" + done.stdout
        for v in lab.hosts:             # installed where the inventory said, from the wheels only
            assert (tmp_path / f"venv-{v}" / "bin" / "mssdiag").exists()
            assert list((tmp_path / f"venv-{v}").glob(".mssdiag-*"))
        got = {(r["vantage"], r["target"]): r for r in map(json.loads, done.stdout.splitlines())}
        assert got[("v01", target)]["pmtu"] == 1400 and got[("v02", target)]["pmtu"] == 1300, got
        assert {r["pmtu_method"] for r in got.values()} == {"icmp"}
        stored = rows(store, "SELECT h.name, p.vantage, p.pmtu FROM probes p JOIN hosts h ON h.id = p.host_id"
                             " ORDER BY p.vantage")
        assert stored == [(target, "v01", 1400), (target, "v02", 1300)]
        report = subprocess.run([sys.executable, "-m", "toolkit", "audit", "report", "--store", str(store)],
                                capture_output=True, text=True, env=env(), cwd=ROOT)
        assert f"v01 -> {target} 1400" in report.stdout and f"v02 -> {target} 1300" in report.stdout, report.stdout
        md = subprocess.run([sys.executable, "-m", "toolkit", "audit", "report", "--store", str(store), "--format",
                             "md"], capture_output=True, text=True, env=env(), cwd=ROOT).stdout
        assert f"| v01 | {target} | 1400 |" in md and f"| v02 | {target} | 1300 |" in md, md
        # triage over the kept directory: both paths' MTUs in the target's findings
        [run] = list(kept.iterdir())
        tri = subprocess.run([sys.executable, "-m", "toolkit", "triage", *map(str, run.glob("*.json")), "--json"],
                             capture_output=True, text=True, env=env(), cwd=ROOT)
        found = [f for h in json.loads(tri.stdout)["hosts"] for f in h["findings"] if f["code"] == "path-mtu-reduced"]
        assert sorted(f["data"]["pmtu"] for f in found) == [1300, 1400], tri.stdout

        # a second run finds mssdiag installed (the wheel's digest marks it): no pip this time
        again = mssdiag_in(lab, "fleet", "probe", "-i", str(inv), "--vantage", "vantages", target, "--wheels",
                           str(wheelhouse), "--store", str(store), "--dir", str(kept))
        assert again.returncode in (0, 4), again.stderr
        log = next(p for p in kept.glob("*/.ansible.log") if p.parent != run).read_text()
        pip = log.split("TASK [mssdiag install (pip)]")[1].split("TASK [")[0]
        assert "skipping: [v01]" in pip and "skipping: [v02]" in pip, log
