"""A real agent's JSON read back: collectd (protocols plugin, write_log and write_http JSON)
in namespaces after real fragmented pings, against the namespace's own kernel counters."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import agentlab
from auditlib import ROOT
from netns import Netns, unavailable

REASON = unavailable() or agentlab.missing()
SEVEN = ("ReasmReqds", "ReasmOKs", "ReasmFails", "ReasmTimeout", "FragOKs", "FragFails", "FragCreates")
# the protocols plugin's counters: IP, ICMP and its per-type IcmpMsg, and TcpExt's PMTUD ones
VALUES = ("/^(Ip|Icmp|IcmpMsg):/", "/^TcpExt:TCP(Timeouts|MTUP)/")
BEYOND = ("IcmpInEchos", "IcmpOutEchoReps", "IcmpMsgInType8", "IcmpMsgOutType0", "IcmpInDestUnreachs",
          "TcpExtTCPTimeouts", "IpReasmOKs")     # not the traffic counters: write_http posts over the loopback


@pytest.mark.netns
@pytest.mark.skipif(REASON is not None, reason=f"real-network test: {REASON}")
@pytest.mark.parametrize("writer", ["write_log", "write_http"])
def test_collectd_json_is_read_as_the_kernel_counted(tmp_path, writer):
    with Netns("cdj") as net:
        texts = {}
        for host, pings in (("alpha", 3), ("beta", 5)):
            ns = net.ns(host)
            texts[host] = agentlab.capture(net, ns, host, writer, tmp_path / host, pings, values=VALUES)
    files = []
    for host, (text, _) in texts.items():
        path = tmp_path / f"{host}.json"
        path.write_text(text)
        files.append(str(path))
    done = subprocess.run([sys.executable, "-m", "toolkit", "parse", *files, "--json"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    snaps = json.loads(done.stdout)
    assert {s["host"] for s in snaps} == {"alpha", "beta"}
    for host, pings in (("alpha", 3), ("beta", 5)):
        mine = [s for s in snaps if s["host"] == host]
        assert len(mine) >= 2 and all(s["os"] == "agentjson" and s["format"] == "collectd JSON" for s in mine)
        whole = [s for s in mine if all(s["ipv4"][k] is not None for k in SEVEN)]    # not a read cut by the stop
        last, kernel = whole[-1]["ipv4"], texts[host][1]
        # no fragment moved after the pings: every read holds the kernel's final counts
        assert {k: last[k] for k in SEVEN} == {k: kernel[k] for k in SEVEN}, host
        assert last["ReasmOKs"] == 2 * pings and last["FragCreates"] >= 2 * 2 * pings
        assert whole[-1]["forwarding"] is False
        # every counter collectd sent, beyond the headline ones, under its nstat name
        counters = {c["name"]: c["value"] for c in whole[-1]["counters"]}
        assert {k: counters[k] for k in BEYOND} == {k: kernel[k] for k in BEYOND}, host
        assert counters["IcmpInEchos"] >= pings and not [c for c in whole[-1]["counters"] if c["name"] is None]
        assert {c["section"] for c in whole[-1]["counters"]} >= {"collectd.protocols.Ip", "collectd.protocols.Icmp"}
        times = [s["taken_at"] for s in mine]
        assert times == sorted(times) and len(set(times)) == len(times)
