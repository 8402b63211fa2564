"""Metrics read back: mssdiag's own Prometheus file (round trip) and a real node_exporter's
scrape of two namespaces (two hosts), with its netstat collector widened to the IP
fragmentation counters and real fragments sent inside each namespace."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from auditlib import ROOT
from netns import Netns, unavailable


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-mssdiag-test")
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=120, **kw)


def test_the_audit_prometheus_file_reads_back_as_the_same_counters(tmp_path):
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    shutil.copy(ROOT / "fixtures/netstat/linux/netns-cron-date-netstat-s.txt", dumps / "web1-2026-11-22.log")
    shutil.copy(ROOT / "fixtures/netstat/vos/seed_fig6a.txt", dumps / "vos1-before.txt")
    shutil.copy(ROOT / "fixtures/netstat/windows/kb811003_win2000_crlf.txt", dumps / "win1-before.txt")
    prom = tmp_path / "mssdiag.prom"
    done = cli("audit", "run", str(dumps), "--store", str(tmp_path / "a.sqlite"), "--prom-file", str(prom))
    assert done.returncode in (0, 4), done.stderr
    back = cli("parse", str(prom), "--json")
    assert back.returncode == 0, back.stderr
    read = {s["host"]: s for s in json.loads(back.stdout)}
    direct = {}
    for snap in json.loads(cli("parse", str(dumps), "--json").stdout):
        direct[snap["host"]] = snap                  # each host's latest snapshot (files keep their order)
    assert set(read) == set(direct) == {"web1", "vos1", "win1"}
    for host, snap in direct.items():
        for family in ("ipv4", "ipv6"):
            want = {k: v for k, v in (snap[family] or {}).items() if v is not None}
            got = {k: v for k, v in (read[host][family] or {}).items() if v is not None}
            assert got == want, (host, family)
        assert read[host]["os"] == "prometheus" and read[host]["format"] == "Prometheus exposition"


REASON = unavailable()
FIELDS = ("^(Ip_(Forwarding|InReceives|InDelivers|OutRequests|ForwDatagrams|Reasm.*|Frag.*)|Ip6_(Reasm.*|Frag.*|InReceives)"
          "|Icmp_.*|IcmpMsg_.*|Tcp_(OutSegs|RetransSegs)|TcpExt_(TCPTimeouts|TCPMTUP.*))$")
FETCH = ("import sys, time, urllib.request\n"
         "for _ in range(100):\n"
         "    try:\n"
         "        print(urllib.request.urlopen('http://127.0.0.1:9100/metrics', timeout=2).read().decode())\n"
         "        sys.exit(0)\n"
         "    except OSError:\n"
         "        time.sleep(0.1)\n"
         "sys.exit('node_exporter did not answer on 127.0.0.1:9100')\n")


def scrape(net: Netns, ns: str, exporter: str, fields: str = None) -> str:
    """node_exporter's netstat collector alone, run in the namespace and scraped once; its
    default --collector.netstat.fields unless `fields` is given."""
    argv = [exporter, "--web.listen-address=127.0.0.1:9100", "--collector.disable-defaults", "--collector.netstat"]
    if fields is not None:
        argv.append(f"--collector.netstat.fields={fields}")
    proc = net.popen(ns, argv)
    try:
        got = net.run(ns, [sys.executable, "-c", FETCH], timeout=30)
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    assert got.returncode == 0, got.stderr
    return got.stdout


def exporter_or_skip() -> str:
    exporter = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if exporter is None or shutil.which("ping") is None:
        pytest.skip("prometheus-node-exporter or ping not installed (Debian packages; make system-deps)")
    return exporter


def default_scrape(net: Netns, exporter: str, forwarding: bool) -> str:
    """A default node_exporter scrape of a namespace that reassembled fragments."""
    ns = net.ns("dflt", forwarding=forwarding)
    done = net.run(ns, ["ping", "-c", "2", "-i", "0.2", "-s", "3000", "127.0.0.1"], timeout=30)
    assert done.returncode == 0, done.stderr
    return scrape(net, ns, exporter)


@pytest.mark.netns
@pytest.mark.skipif(REASON is not None, reason=f"real-network test: {REASON}")
def test_a_default_node_exporter_scrape_says_its_counters_are_unknown(tmp_path):
    """node_exporter's default fields carry Ip_Forwarding and octets, none of the fragment
    counters: one snapshot whose counters are null, the forwarding flag read, and a warning
    that names the flag to widen (not "no statistics found", not zeros)."""
    exporter = exporter_or_skip()
    with Netns("nxd") as net:
        text = default_scrape(net, exporter, forwarding=True)
    assert "node_netstat_Ip_Forwarding 1" in text and "node_netstat_Ip_ReasmOKs" not in text
    (tmp_path / "router.prom").write_text(text)
    out = cli("parse", str(tmp_path / "router.prom"), "--json")
    assert out.returncode == 0, out.stderr
    snaps = json.loads(out.stdout)
    assert len(snaps) == 1 and snaps[0]["os"] == "prometheus" and snaps[0]["forwarding"] is True
    assert set(snaps[0]["ipv4"].values()) == {None}
    assert any("--collector.netstat.fields" in w for w in snaps[0]["warnings"])
    # the counters its default fields do carry: TCP's timeouts and retransmissions, ICMP's messages
    names = {c["name"] for c in snaps[0]["counters"] if c["value"] is not None}
    assert {"TcpExtTCPTimeouts", "TcpRetransSegs", "TcpOutSegs", "IcmpInMsgs", "IcmpOutMsgs"} <= names


@pytest.mark.netns
@pytest.mark.skipif(REASON is not None, reason=f"real-network test: {REASON}")
def test_a_real_node_exporter_scrape_is_read_per_host(tmp_path):
    exporter = exporter_or_skip()
    scrapes = {}
    with Netns("nxf") as net:
        for host, pings in (("alpha", 3), ("beta", 5)):
            ns = net.ns(host)
            # fragmented echoes over the namespace's own loopback (MTU lowered): real reassemblies
            net.run(ns, ["ip", "link", "set", "lo", "mtu", "1500"], check=True)
            done = net.run(ns, ["ping", "-c", str(pings), "-i", "0.2", "-s", "3000", "127.0.0.1"], timeout=30)
            assert done.returncode == 0, done.stderr
            scrapes[host] = scrape(net, ns, exporter, FIELDS)
            snmp = net.run(ns, ["cat", "/proc/net/snmp", "/proc/net/netstat"], timeout=10).stdout.splitlines()
            names, values = [line.split()[1:] for line in snmp if line.startswith("Ip:")][:2]
            scrapes[host + ".kernel"] = dict(zip(names, map(int, values)))
            every = {}                 # every counter of the kernel's tables, by nstat name
            for head, row in zip(snmp[::2], snmp[1::2]):
                group = head.split(":")[0]
                every.update({group + k: int(v) for k, v in zip(head.split()[1:], row.split()[1:])})
            scrapes[host + ".every"] = every
    for host in ("alpha", "beta"):
        assert "node_netstat_Ip_ReasmReqds " in scrapes[host]
        (tmp_path / f"{host}-2026-03-03.prom").write_text(scrapes[host])
    out = cli("parse", str(tmp_path / "alpha-2026-03-03.prom"), str(tmp_path / "beta-2026-03-03.prom"), "--json")
    assert out.returncode == 0, out.stderr
    snaps = {s["host"]: s for s in json.loads(out.stdout)}
    assert set(snaps) == {"alpha", "beta"}
    for host, pings in (("alpha", 3), ("beta", 5)):
        got, kernel = snaps[host]["ipv4"], scrapes[host + ".kernel"]
        assert snaps[host]["os"] == "prometheus"
        # the scrape came before the kernel's counters were read again: nothing moved in between
        for name in ("ReasmReqds", "ReasmOKs", "ReasmFails", "ReasmTimeout", "FragOKs", "FragCreates"):
            assert got[name] == kernel[name], (host, name)
        assert got["ReasmOKs"] >= 2 * pings          # every request and reply reassembled
        # every counter the scrape shows, beyond the headline ones: ICMP (the echoes), IcmpMsg, TCP, TcpExt
        counters = {c["name"]: c["value"] for c in snaps[host]["counters"]}
        every = scrapes[host + ".every"]
        for name in ("IcmpInEchos", "IcmpOutEchoReps", "IcmpMsgInType8", "IcmpMsgOutType0", "IcmpInDestUnreachs",
                     "TcpRetransSegs", "TcpExtTCPTimeouts", "TcpExtTCPMTUPFail"):
            assert counters[name] == every[name], (host, name)
        assert counters["IcmpInEchos"] >= pings
        assert not [c for c in snaps[host]["counters"] if c["name"] is None]


if __name__ == "__main__":
    # rewrites the fixture of a default scrape: python tests/test_metric_forms_live.py (root)
    with Netns("nxd") as lab:
        scraped = default_scrape(lab, shutil.which("prometheus-node-exporter") or shutil.which("node_exporter"),
                                 forwarding=False)
    (ROOT / "fixtures/netstat/prometheus/netns_node_exporter_default_fields.txt").write_text(scraped)
