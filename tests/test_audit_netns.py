"""The audit on a real kernel, and its Prometheus file served by a real node_exporter.

    sender --(MTU 1500)-- router --(MTU 1000)-- receiver

`mssdiag audit run --local` runs inside the receiving namespace (`ip netns exec`), where
/proc/net/snmp is that namespace's own. Between runs the sender sends fragmented UDP
through the router, or nothing: the fragmentation event opens when fragments start and
clears when they stop; with the router dropping every non-first fragment and a 1 s
reassembly timeout, reassembly fails and `reassembly-failing` goes critical; deleting and
recreating the receiving namespace (its counters start again from zero, as after a
reboot) is a counter reset, never a spike.

node_exporter runs on loopback inside a namespace of its own, with only its textfile
collector, and must serve the audit's metrics back over HTTP.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditlib import ROOT, rows
from netns import Netns, unavailable

REASON = unavailable()
pytestmark = [pytest.mark.netns, pytest.mark.skipif(REASON is not None, reason=f"real-network test: {REASON}")]

PORT = 40998
SENDER = """
import socket, sys, time
dst, port, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_PMTUDISC_DONT: DF off, the router may fragment
for _ in range(count):
    s.sendto(bytes(size), (dst, port))
    time.sleep(0.002)
"""
CONFIG = 'interval = "1h"\n'     # runs seconds apart must not count as stale


class Lab:
    def __init__(self, net: Netns, tmp: Path):
        self.net, self.tmp = net, tmp
        self.snd, self.rtr = net.ns("asnd"), net.ns("artr", forwarding=True)
        s_end, r_in = net.link(self.snd, self.rtr, 1500)
        net.addr(self.snd, s_end, "10.203.1.1/24")
        net.addr(self.rtr, r_in, "10.203.1.254/24")
        net.route(self.snd, "10.203.2.0/24", "10.203.1.254")
        self.store = tmp / "audit.sqlite"
        self.config = tmp / "audit.toml"
        self.config.write_text(CONFIG)
        self.receiver()

    def receiver(self) -> None:
        """(Re)create the receiving namespace under the same name: fresh counters."""
        name = f"md-arcv-{self.net.tag}"
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        self.rcv = self.net.ns("arcv")
        assert self.rcv == name
        self.r_out, self.v_end = r_out, v_end = self.net.link(self.rtr, self.rcv, 1000)
        self.net.addr(self.rtr, r_out, "10.203.2.254/24")
        self.net.addr(self.rcv, v_end, "10.203.2.1/24")
        self.net.route(self.rcv, "10.203.1.0/24", "10.203.2.254")
        self.net.sysctl(self.rcv, "net.ipv4.ipfrag_time", "1")

    def send(self, count: int, size: int = 1400) -> None:
        # nobody listens: the receiver reassembles, then answers port unreachable (no matter)
        self.net.run(self.snd, [sys.executable, "-c", SENDER, "10.203.2.1", str(PORT), str(count), str(size)],
                     check=True)

    def audit(self, *extra: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test")
        return self.net.run(self.rcv, [sys.executable, "-m", "toolkit", "audit", "run", "--local", "--store",
                                       str(self.store), "--config", str(self.config), *extra], env=env, timeout=60)

    def events(self, run: subprocess.CompletedProcess) -> dict:
        recs = [json.loads(line) for line in run.stdout.splitlines()]
        return {(r["event"], r["state"]): r for r in recs if r["type"] == "event"}


@pytest.fixture
def lab(tmp_path):
    with Netns("aud") as net:
        yield Lab(net, tmp_path)


def test_audit_local_in_a_namespace_fires_clears_and_sees_a_reset(lab):
    lab.send(1, 64)                                  # ARP resolved before anything is counted
    base = lab.audit("--jsonl")
    assert base.returncode == 0, base.stderr
    (snap,) = [json.loads(x) for x in base.stdout.splitlines() if json.loads(x)["type"] == "snapshot"]
    assert snap["host"].endswith(f"@{lab.rcv}") and snap["source"].startswith("local:/proc/net/snmp")
    start = snap["ipv4"]["ReasmReqds"]
    quiet = lab.audit("--jsonl")
    assert quiet.returncode == 0 and not lab.events(quiet), quiet.stdout

    lab.send(40)                                     # 40 x 1400 bytes: 2 fragments each behind the router
    frag = lab.audit("--jsonl")
    assert frag.returncode == 4, frag.stderr
    ev = lab.events(frag)[("fragmentation", "open")]
    assert ev["evidence"]["increases"]["reasm_reqds"] == 80
    assert "first after 1 clean interval(s)" in ev["detail"]
    lab.send(10)                                     # still fragmenting: the same event, updated
    nag = lab.audit("--nagios")
    assert nag.returncode == 1 and nag.stdout.startswith("MSSDIAG WARNING - ") and "fragmentation" in nag.stdout
    assert "'reasm_reqds_per_h'=" in nag.stdout and "'reasm_reqds_per_h'=0;" not in nag.stdout
    assert rows(lab.store, "SELECT state, count FROM events WHERE type = 'fragmentation'") == [("open", 2)]
    ok = lab.audit("--nagios")                       # nothing sent since: cleared
    assert ok.returncode == 0 and ok.stdout.startswith("MSSDIAG OK - "), ok.stdout
    assert rows(lab.store, "SELECT state, cleared_t IS NOT NULL FROM events WHERE type = 'fragmentation'") == \
        [("cleared", 1)]

    # reassembly fails: 3000-byte datagrams leave the sender in 3 fragments, the router drops the
    # non-first ones (it sees them as fragments: it only re-fragments after forwarding), the
    # receiver gets the first one (in 2 pieces) and gives up after 1 s
    lab.net.run(lab.rtr, ["iptables", "-A", "FORWARD", "-f", "-j", "DROP"], check=True)
    lab.send(15, 3000)
    time.sleep(2.5)
    failing = lab.audit("--jsonl")
    assert failing.returncode == 4, failing.stderr
    ev = lab.events(failing)[("reassembly-failing", "open")]
    assert ev["severity"] == "critical" and ev["evidence"]["increases"]["reasm_fails"] == 15
    assert ev["evidence"]["increases"]["reasm_timeout"] == 15
    lab.net.run(lab.rtr, ["iptables", "-D", "FORWARD", "-f", "-j", "DROP"], check=True)

    # "reboot": the receiving namespace is recreated, its counters start from zero
    lab.receiver()
    lab.send(1, 64)
    reboot = lab.audit("--jsonl")
    got = lab.events(reboot)
    assert ("counter-reset", "open") in got, reboot.stdout
    assert ("reassembly-failing", "cleared") not in got          # an unknown interval clears nothing ...
    assert ("fragmentation", "open") not in got                  # ... and is never a spike
    assert rows(lab.store, "SELECT kind, reasm_reqds FROM deltas ORDER BY t DESC LIMIT 1") == [("reset", None)]
    lab.send(25)
    after = lab.audit("--jsonl")
    got = lab.events(after)
    assert got[("counter-reset", "cleared")] and got[("fragmentation", "open")]["evidence"]["increases"] == \
        {"reasm_reqds": 50, "frag_creates": 0}
    assert ("reassembly-failing", "cleared") in got
    # one host, its whole history, in order
    assert rows(lab.store, "SELECT count(*), count(DISTINCT host_id) FROM snapshots") == [(8, 1)]
    assert rows(lab.store, "SELECT ReasmReqds FROM (SELECT json_extract(counters, '$.ipv4.ReasmReqds') AS ReasmReqds,"
                           " t FROM snapshots ORDER BY t) LIMIT 1") == [(start,)]


def test_node_exporter_serves_the_audit_metrics(tmp_path):
    exporter = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if exporter is None:
        pytest.skip("prometheus-node-exporter not installed (Debian package; make system-deps)")
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    store = tmp_path / "audit.sqlite"
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    shutil.copy(ROOT / "fixtures/netstat/linux/netns-cron-date-netstat-s.txt", dumps / "web1-2026-11-22.log")
    shutil.copy(ROOT / "fixtures/netstat/vos/seed_fig6a.txt", dumps / "vos1-before.txt")
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test")
    done = subprocess.run([sys.executable, "-m", "toolkit", "audit", "run", str(dumps), "--store", str(store),
                           "--prom-file", str(textfile / "mssdiag.prom")], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=60)
    assert done.returncode in (0, 4), done.stderr
    with Netns("nx") as net:
        ns = net.ns("nx")
        proc = net.popen(ns, [exporter, "--web.listen-address=127.0.0.1:9100", "--collector.disable-defaults",
                              "--collector.textfile", f"--collector.textfile.directory={textfile}"])
        try:
            fetch = ("import sys, time, urllib.request\n"
                     "for _ in range(100):\n"
                     "    try:\n"
                     "        print(urllib.request.urlopen('http://127.0.0.1:9100/metrics', timeout=2).read().decode())\n"
                     "        sys.exit(0)\n"
                     "    except OSError:\n"
                     "        time.sleep(0.1)\n"
                     "sys.exit('node_exporter did not answer on 127.0.0.1:9100')\n")
            got = net.run(ns, [sys.executable, "-c", fetch], timeout=30)
        finally:
            proc.terminate()
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
    assert got.returncode == 0, got.stderr
    served = got.stdout
    assert 'mssdiag_ip_reasm_reqds_total{family="ipv4",host="web1",os="linux"} 160' in served
    assert 'mssdiag_ip_reasm_oks_total{family="ipv4",host="vos1",os="vos"}' in served
    assert "# TYPE mssdiag_ip_reasm_reqds_total counter" in served
    assert "mssdiag_last_success_timestamp_seconds " in served
    assert "node_textfile_scrape_error 0" in served


def test_live_probes_record_the_path_mtu_and_its_change(lab):
    pytest.importorskip("scapy")
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test")
    store = lab.tmp / "probes.sqlite"

    def probe():
        return lab.net.run(lab.snd, [sys.executable, "-m", "toolkit", "audit", "run", "--probe", "10.203.2.1",
                                     "--store", str(store), "--jsonl"], env=env, timeout=120)
    first = probe()
    recs = [json.loads(x) for x in first.stdout.splitlines()]
    (p,) = [r for r in recs if r["type"] == "probe"]
    assert p["pmtu"] == 1000 and p["host"] == "10.203.2.1" and p["vantage"].endswith(f"@{lab.snd}"), first.stderr
    # the router's link to the receiver grows to 1200: the next probe sees it, and says it changed
    lab.net.run(lab.rtr, ["ip", "link", "set", lab.r_out, "mtu", "1200"], check=True)
    lab.net.run(lab.rcv, ["ip", "link", "set", lab.v_end, "mtu", "1200"], check=True)
    second = probe()
    recs = [json.loads(x) for x in second.stdout.splitlines()]
    (p,) = [r for r in recs if r["type"] == "probe"]
    assert p["pmtu"] == 1200, second.stderr
    (ev,) = [r for r in recs if r["type"] == "event"]
    assert ev["event"] == "pmtu-changed" and ev["evidence"]["from"] == 1000 and ev["evidence"]["to"] == 1200
