"""A real monitoring agent's JSON from the namespace lab: collectd's protocols plugin reading a
namespace's /proc/net/snmp after fragmented pings, written as JSON by write_log (to its log
file) or write_http (POSTed to a listener in the same namespace).

`python tests/agentlab.py build` (root, collectd-core and libyajl2 installed) rewrites
fixtures/netstat/agentjson/netns_collectd_*.txt; tests/test_agent_json_live.py runs the same
code into a temporary directory and checks mssdiag's reading against the kernel's counters.
"""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from netns import Netns  # noqa: E402

FIXTURES = ROOT / "fixtures" / "netstat" / "agentjson"
CONF = """Hostname "{host}"
FQDNLookup false
Interval 1
BaseDir "{base}"
PIDFile "{base}/collectd.pid"
TypesDB "/usr/share/collectd/types.db"
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "{base}/collectd.log"
  Timestamp true
  PrintSeverity false
</Plugin>
LoadPlugin protocols
<Plugin protocols>
{values}
</Plugin>
{writer}
"""
WRITE_LOG = """LoadPlugin write_log
<Plugin write_log>
  Format JSON
</Plugin>"""
WRITE_HTTP = """LoadPlugin write_http
<Plugin write_http>
  <Node "lab">
    URL "http://127.0.0.1:{port}/collectd"
    Format "JSON"
    StoreRates false
  </Node>
</Plugin>"""
# a listener that appends every POSTed body to a file (collectd's write_http sends JSON arrays)
LISTEN = r"""
import http.server, sys
out = open(sys.argv[2], "ab")
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        out.write(self.rfile.read(int(self.headers["Content-Length"])) + b"\n")
        out.flush()
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def missing() -> Optional[str]:
    """Why collectd cannot run here, or None."""
    if shutil.which("collectd") is None:
        return "collectd is not installed (Debian collectd-core and libyajl2; make system-deps)"
    for plugin in ("protocols", "write_log", "write_http", "logfile"):
        if not Path(f"/usr/lib/collectd/{plugin}.so").exists():
            return f"collectd's {plugin} plugin is not installed"
    return None


def kernel_ip(net: Netns, ns: str) -> Dict[str, int]:
    """The namespace's /proc/net/snmp Ip: counters by field name (ReasmOKs), and every counter of
    its /proc/net/snmp and /proc/net/netstat by nstat name (IpReasmOKs, IcmpInEchos, TcpExtTCPTimeouts)."""
    tables = net.run(ns, ["cat", "/proc/net/snmp", "/proc/net/netstat"], timeout=10).stdout.splitlines()
    names, values = [line.split()[1:] for line in tables if line.startswith("Ip:")][:2]
    out = dict(zip(names, map(int, values)))
    for head, row in zip(tables[::2], tables[1::2]):
        group = head.split(":")[0]
        out.update({group + k: int(v) for k, v in zip(head.split()[1:], row.split()[1:])})
    return out


def capture(net: Netns, ns: str, host: str, writer: str, work: Path, pings: int, seconds: float = 2.6,
            values: tuple = ("/^Ip:/",)):
    """collectd's JSON of namespace `ns` (after `pings` fragmented echoes on its loopback), its
    protocols plugin reading the `values` it matches, and the kernel's counters read right after
    collectd stopped (kernel_ip): (text, counters)."""
    work.mkdir(parents=True, exist_ok=True)
    net.run(ns, ["ip", "link", "set", "lo", "mtu", "1500"], check=True)
    done = net.run(ns, ["ping", "-c", str(pings), "-i", "0.2", "-s", "3000", "127.0.0.1"], timeout=30)
    assert done.returncode == 0, done.stderr
    listener = None
    posted = work / "posted.json"
    if writer == "write_http":
        port = 18080
        listener = net.popen(ns, [sys.executable, "-c", LISTEN, str(port), str(posted)])
        block = WRITE_HTTP.format(port=port)
        time.sleep(0.5)
    else:
        block = WRITE_LOG
    conf = work / "collectd.conf"
    conf.write_text(CONF.format(host=host, base=work, writer=block,
                                values="\n".join(f'  Value "{v}"' for v in values)))
    agent = net.popen(ns, ["collectd", "-f", "-C", str(conf)])
    try:
        time.sleep(seconds)
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            agent.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.communicate()
        if listener is not None:
            listener.terminate()
            listener.communicate(timeout=10)
    counters = kernel_ip(net, ns)
    text = (posted if writer == "write_http" else work / "collectd.log").read_text()
    return text, counters


def build() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with Netns("cdl") as net:
        for host, writer, pings in (("alpha", "write_log", 3), ("beta", "write_http", 4)):
            ns = net.ns(host)
            text, counters = capture(net, ns, host, writer, Path(f"/tmp/agentlab-{host}"), pings)
            name = f"netns_collectd_{writer}_json.txt"
            (FIXTURES / name).write_text(text)
            print(name, {k: counters[k] for k in ("ReasmReqds", "ReasmOKs", "FragOKs", "FragCreates")})


if __name__ == "__main__":
    if sys.argv[1:] == ["build"]:
        build()
    else:
        sys.exit("usage: python tests/agentlab.py build")
