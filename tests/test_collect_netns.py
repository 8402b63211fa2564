"""End to end: `mssdiag collect` on a host namespace with real interfaces and real traffic.

The host (its own UTS namespace, so its own host name) reaches a peer through a router
whose far link has MTU 1400, over IPv4 and IPv6: TCP connections stay open (ss -tin shows
them, pmtu 1400 learnt from the router's "too big"), the route caches hold the learnt MTU,
pings of 3000 bytes leave fragmentation and reassembly counters. The host also has a VXLAN
made without `dev` in a bridge with a container's veth, an interface alias, an iptables
TCPMSS rule and an nft rule with comments. Collected as root and as uid 65534; collected
with --redact, the bundle triages to the same findings, and no address, MAC, name, alias
or comment of the lab is left in any of its files.

Needs root and iproute2, iptables, nft (`make system-deps`); skips with the reason otherwise.
"""
from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

from netns import Netns, unavailable
from toolkit.redact import load_map, redact

pytestmark = pytest.mark.netns
WHY = unavailable()
if WHY is None and (shutil.which("nft") is None or shutil.which("iptables") is None):
    WHY = "needs iptables and nft (make system-deps)"
if WHY:
    pytest.skip(WHY, allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
MSSDIAG = str(Path(sys.executable).with_name("mssdiag"))
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
ALIAS = "uplink to core-sw1 in DC3"
MSS_COMMENT = "clamp for core-sw1"
NFT_COMMENT = "peer db-7 in DC3"

SERVER = """
import socket, sys, threading
def serve(family, address):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((address, 5001)); s.listen(8)
    while True:
        c, _ = s.accept()
        got = 0
        while got < 200000:
            got += len(c.recv(65536))
        c.sendall(b"k")
        threading.Thread(target=c.recv, args=(1,), daemon=True).start()
        keep.append(c)
keep = []
for fam, addr in ((socket.AF_INET, sys.argv[1]), (socket.AF_INET6, sys.argv[2])):
    threading.Thread(target=serve, args=(fam, addr), daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
"""
CLIENT = """
import socket, sys
keep = []
for fam, addr in ((socket.AF_INET, sys.argv[1]), (socket.AF_INET6, sys.argv[2])):
    c = socket.create_connection((addr, 5001), timeout=20)
    c.sendall(b"x" * 200000)
    assert c.recv(1) == b"k"
    keep.append(c)
print("sent", flush=True)
sys.stdin.read()
"""


class Lab:
    """host --1500-- r1 --1400-- r2 --1500-- peer (IPv4 and IPv6), and a container behind a
    bridge on the host."""

    def __init__(self, net: Netns):
        self.net = net
        roles = ("host", "r1", "r2", "peer", "box")
        self.host, self.r1, self.r2, self.peer, self.box = (net.ns(r, forwarding=r in ("r1", "r2")) for r in roles)
        for ns in (self.host, self.r1, self.r2, self.peer, self.box):
            net.sysctl(ns, "net.ipv6.conf.default.router_solicitations", "0")
            net.sysctl(ns, "net.ipv6.conf.all.router_solicitations", "0")
        for ns in (self.r1, self.r2):
            net.sysctl(ns, "net.ipv6.conf.all.forwarding", "1")
        self.up, a1 = net.link(self.host, self.r1)
        a2, b2 = net.link(self.r1, self.r2, mtu=1400)
        b3, p1 = net.link(self.r2, self.peer)
        self.port, c1 = net.link(self.host, self.box)
        for ns, dev, v4, v6 in ((self.host, self.up, "10.0.71.1/24", "fd00:71::1/64"),
                                (self.r1, a1, "10.0.71.254/24", "fd00:71::fe/64"),
                                (self.r1, a2, "10.0.73.1/24", "fd00:73::1/64"),
                                (self.r2, b2, "10.0.73.2/24", "fd00:73::2/64"),
                                (self.r2, b3, "10.0.72.254/24", "fd00:72::fe/64"),
                                (self.peer, p1, "10.0.72.2/24", "fd00:72::2/64")):
            net.addr(ns, dev, v4)
            net.addr(ns, dev, v6)
        net.addr(self.box, c1, "10.0.75.2/24")
        for ns, dest, via in ((self.host, "default", "10.0.71.254"), (self.host, "default", "fd00:71::fe"),
                              (self.r1, "10.0.72.0/24", "10.0.73.2"), (self.r1, "fd00:72::/64", "fd00:73::2"),
                              (self.r2, "default", "10.0.73.1"), (self.r2, "default", "fd00:73::1"),
                              (self.peer, "default", "10.0.72.254"), (self.peer, "default", "fd00:72::fe")):
            net.route(ns, dest, via)
        # the overlay: a VXLAN made without `dev` (MTU 1500 over a 1500 underlay), bridged with
        # a container's veth, the bridge addressed
        ip = lambda *a: net.run(self.host, ["ip", *a], check=True)  # noqa: E731
        ip("link", "add", "vx0", "type", "vxlan", "id", "42", "remote", "10.0.72.2", "local", "10.0.71.1",
           "dstport", "4789")
        ip("link", "add", "br0", "type", "bridge")
        for dev in ("vx0", "br0"):              # no IPv6 chatter (DAD, MLD) through the tunnel
            ip("link", "set", dev, "addrgenmode", "none")
        ip("link", "set", "vx0", "master", "br0")
        ip("link", "set", self.port, "master", "br0")
        for dev in ("vx0", "br0"):
            ip("link", "set", dev, "up")
        ip("addr", "add", "10.0.75.1/24", "dev", "br0")
        ip("link", "set", self.up, "alias", ALIAS)
        ipt = lambda *a: net.run(self.host, ["iptables", *a], check=True)  # noqa: E731
        ipt("-t", "mangle", "-A", "POSTROUTING", "-o", self.up, "-p", "tcp", "--tcp-flags", "SYN,RST", "SYN",
            "-m", "comment", "--comment", MSS_COMMENT, "-j", "TCPMSS", "--set-mss", "1360")
        nft = lambda *a: net.run(self.host, ["nft", *a], check=True)  # noqa: E731
        nft("add", "table", "inet", "mdlab")
        nft("add", "chain", "inet", "mdlab", "input", "{ type filter hook input priority 0; }")
        nft("add", "rule", "inet", "mdlab", "input", "ip", "saddr", "10.0.72.2", "counter", "comment",
            f'"{NFT_COMMENT}"')
        self.procs = []

    def traffic(self):
        """Fragmented pings, then TCP connections left open: the router's "too big" teaches the
        host 1400 for the peer (route caches, ss)."""
        for argv in (["ping", "-c", "3", "-i", "0.2", "-s", "3000", "-W", "2", "10.0.72.2"],
                     ["ping", "-6", "-c", "3", "-i", "0.2", "-s", "3000", "-W", "2", "fd00:72::2"]):
            self.net.run(self.host, argv, timeout=20)
        for ns, script, word in ((self.peer, SERVER, "ready"), (self.host, CLIENT, "sent")):
            p = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", script, "10.0.72.2", "fd00:72::2"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            self.procs.append(p)
            assert p.stdout.readline().strip() == word
        quiet(self.net, self.host)

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()

    def originals(self) -> dict:
        """Every address, MAC and name of the lab, read from the kernel (not from a bundle)."""
        addresses, macs = set(), set()
        for ns in self.net.namespaces:
            for link in json.loads(self.net.run(ns, ["ip", "-j", "addr", "show"], check=True).stdout):
                if link.get("address") and link["address"] not in ("00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff"):
                    macs.add(link["address"])
                for a in link.get("addr_info", []):
                    if not ipaddress.ip_address(a["local"]).is_loopback:
                        addresses.add(a["local"])
                        if not ipaddress.ip_address(a["local"]).is_link_local:      # fe80::/64 is kept: findings need it
                            addresses.add(str(ipaddress.ip_interface(f"{a['local']}/{a['prefixlen']}").network.network_address))
        return {"addresses": addresses, "macs": macs,
                "names": {self.hostname, self.hostname.split(".")[0], "lab.example", *self.net.namespaces},
                "texts": {ALIAS, MSS_COMMENT, NFT_COMMENT, "core-sw1", "db-7"}}


def quiet(net: Netns, ns: str, limit: float = 30.0):
    """Wait until the namespace sends and receives nothing more (IPv6 neighbour and MLD chatter
    settles): two collections in a row then read the same counters."""
    def counters():
        return net.run(ns, ["cat", "/proc/net/snmp", "/proc/net/snmp6"], check=True).stdout
    end, seen = time.monotonic() + limit, [counters()]
    while time.monotonic() < end:
        time.sleep(1.5)
        seen.append(counters())
        if len(seen) >= 3 and seen[-1] == seen[-2] == seen[-3]:         # still for 3 s
            return
    raise AssertionError(f"{ns} still sends or receives after {limit:g} s")


@pytest.fixture(scope="module")
def lab():
    with Netns("col") as net:
        L = Lab(net)
        L.hostname = f"mdweb{os.getpid()}.lab.example"
        try:
            L.traffic()
            yield L
        finally:
            L.stop()


def collect(L: Lab, *args: str, user=(), python=None, env=None, cwd=None) -> subprocess.CompletedProcess:
    """`mssdiag collect ARGS` in the host namespace, under the lab host's own host name."""
    prog = [python, "-m", "toolkit"] if python else [MSSDIAG]
    inner = " ".join(map(shlex.quote, [*user, *prog, "collect", *args]))
    return subprocess.run(["ip", "netns", "exec", L.host, "unshare", "--uts", "sh", "-c",
                           f"hostname {L.hostname} && exec {inner}"],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def triage(path) -> tuple:
    res = subprocess.run([MSSDIAG, "triage", "--json", str(path)], capture_output=True, text=True, timeout=120)
    assert res.returncode in (0, 3, 4) and "Traceback" not in res.stderr, res.stderr
    return res, json.loads(res.stdout)


def files(folder: Path) -> dict:
    return {p.name: p.read_text() for p in folder.iterdir()}


def leaks(texts: dict, originals: dict) -> list:
    """(file, value) for each original found in a file, case-blind: anywhere for MACs, names
    and texts; an address where it is a whole address (10.0.72.2 is not in 10.0.72.254)."""
    found = []
    for kind, values in originals.items():
        for value in values:
            rx = re.compile(rf"(?<![\w:.]){re.escape(value)}(?![\w:]|\.\d)" if kind == "addresses" else re.escape(value),
                            re.I)
            found += [(name, value) for name, text in texts.items() if rx.search(text)]
    return found


def mapped(obj, table: dict):
    """A triage result of the original bundle with every original replaced by its token."""
    text = json.dumps(obj)
    for original in sorted(table, key=len, reverse=True):
        text = re.sub(rf"(?<![\w:.-]){re.escape(original)}(?![\w:-]|\.\d)", table[original], text, flags=re.I)
    return json.loads(text)


def test_collect_redact_triages_the_same_and_leaks_nothing(lab, tmp_path):
    plain, red, key = tmp_path / "plain", tmp_path / "red", tmp_path / "case.map.json"
    res = collect(lab, str(plain), "--json")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    manifest = json.loads(res.stdout)
    assert manifest["written"] == {"directory": str(plain)}
    res = collect(lab, str(red), "--redact", "--map", str(key), "--json")
    assert res.returncode == 0 and res.stderr == "", res.stderr

    # what was collected, as root: every source ran, the host named by its own name
    status = {f["file"]: f["status"] for f in manifest["files"]}
    assert manifest["privileged"] is True and manifest["host"] == lab.hostname
    assert all(status[f] == "ok" for f in ("netstat-s.txt", "nstat.txt", "ss-tin.txt", "ip-route-cache.txt",
                                           "ip6-route-cache.txt", "ip-link.txt", "ip-link.json", "ip-route.txt",
                                           "iptables-save.txt", "nft-ruleset.txt", "sysctl.txt")), status
    assert status["proc-net-snmp.txt"] == "skipped"
    got = files(plain)
    assert f'name = "{lab.hostname}"' in got["host.toml"]
    assert re.search(r"10\.0\.72\.2 via 10\.0\.71\.254 dev \S+ \n?\s*cache expires \d+sec mtu 1400", got["ip-route-cache.txt"])
    assert re.search(r"fd00:72::2 via fd00:71::fe dev \S+ .*\n?\s*.*mtu 1400", got["ip6-route-cache.txt"])
    assert got["ss-tin.txt"].count("pmtu:1400") == 2 and "10.0.72.2:5001" in got["ss-tin.txt"]
    assert "vxlan id 42 remote 10.0.72.2 local 10.0.71.1" in got["ip-link.txt"] and f"alias {ALIAS}" in got["ip-link.txt"]
    assert "--set-mss 1360" in got["iptables-save.txt"] and NFT_COMMENT in got["nft-ruleset.txt"]
    assert "net.ipv4.tcp_mtu_probing = 0" in got["sysctl.txt"]

    # redacted: nothing of the lab is left, the JSON still reads, the map stays outside
    lab_values = lab.originals()
    redacted = files(red)
    assert leaks(redacted, lab_values) == []
    for kind, values in lab_values.items():                         # the check finds what is there
        assert leaks(got, {kind: values}), kind
    for name in ("ip-link.json", "ip-route.json", "ip6-route.json", "manifest.json"):
        json.loads(redacted[name])
    assert sorted(redacted) == sorted(got)
    table = json.loads(key.read_text())
    assert oct(key.stat().st_mode & 0o777) == "0o600" and table["key"] not in "".join(redacted.values())
    tokens = {**table["addresses"], **table["macs"], **table["names"], **table["texts"]}
    assert tokens[lab.hostname.split(".")[0]] in redacted["host.toml"]
    # interface names and kept ranges stay; the router's lines still read the same
    assert "dev br0" in redacted["ip-route.txt"] and "vx0: <" in redacted["ip-link.txt"]
    assert "ff:ff:ff:ff:ff:ff" in redacted["ip-link.txt"] and "lo: <LOOPBACK" in redacted["ip-link.txt"]
    assert "--set-mss 1360" in redacted["iptables-save.txt"] and "pmtu:1400" in redacted["ss-tin.txt"]

    # routes still cover their interfaces' addresses, the peer is still behind the same route
    routes = re.findall(r"^(\S+/\d+) dev (\S+) proto kernel scope link src (\S+)", redacted["ip-route.txt"], re.M)
    assert len(routes) == 2
    for net, _, src in routes:
        assert ipaddress.ip_address(src) in ipaddress.ip_network(net)
    peer = tokens["10.0.72.2"]
    assert re.search(rf"{re.escape(peer)} via {re.escape(tokens['10.0.71.254'])} dev \S+ \n?\s*cache expires \d+sec mtu 1400",
                     redacted["ip-route-cache.txt"])
    assert ipaddress.ip_address(tokens["10.0.71.254"]) in ipaddress.ip_network(
        next(n for n, d, _ in routes if d == lab.up))

    # the same findings, naming the same things by their tokens. Two collections a second
    # apart differ in what time changes (route cache expiry, times): the redacted run has the
    # same findings; the plain bundle redacted with the run's key has them word for word.
    a, da = triage(plain)
    b, db = triage(red)
    (ha,), (hb,) = da["hosts"], db["hosts"]
    assert a.returncode == b.returncode and a.stderr.replace(str(plain), "D") == b.stderr.replace(str(red), "D")
    assert hb["host"] == tokens[lab.hostname.split(".")[0]] + "." + tokens["lab.example"]
    codes = [(f["code"], f["severity"], f["confidence"]) for f in ha["findings"]]
    assert [(f["code"], f["severity"], f["confidence"]) for f in hb["findings"]] == codes
    assert {"reassembly-seen", "fragmenting-outbound"} <= {c for c, _, _ in codes}
    same = tmp_path / "same"
    same.mkdir()
    r = load_map(str(key))
    for name, text in redact(got, r, [lab.hostname]).items():
        (same / name).write_text(text)
    c, dc = triage(same)
    (hc,) = dc["hosts"]
    table = {**r.tokens["addresses"], **r.tokens["macs"], **r.tokens["names"], **r.tokens["texts"]}
    assert hc["findings"] == mapped(ha["findings"], table) and hc["host"] == hb["host"]
    assert c.returncode == a.returncode and c.stderr.replace(str(same), "D") == a.stderr.replace(str(plain), "D")
    assert leaks(files(same), lab_values) == []


def test_unprivileged_collection_records_what_it_could_not_read(lab):
    with tempfile.TemporaryDirectory(prefix="mssdiag-collect-") as tmp:    # pytest's tmp_path is mode 700
        os.chmod(tmp, 0o777)
        python = nobody_python()
        if python is None:
            pytest.skip("uid 65534 cannot run a Python that imports this checkout")
        out = Path(tmp) / "bundle.tar.gz"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *site_packages()]), "PYTHONNOUSERSITE": "1"}
        res = collect(lab, "--redact", "--archive", str(out), "--json", user=NOBODY, python=python, env=env, cwd=tmp)
        assert res.returncode == 0 and res.stderr == "", res.stderr
        manifest = json.loads(res.stdout)
        assert manifest["privileged"] is False and manifest["written"] == {"archive": str(out)}
        status = {f["file"]: f for f in manifest["files"]}
        for name in ("iptables-save.txt", "ip6tables-save.txt", "nft-ruleset.txt"):
            assert status[name]["status"] == "not-permitted" and status[name]["stderr"], status[name]
        for name in ("netstat-s.txt", "nstat.txt", "ss-tin.txt", "ip-route-cache.txt", "ip-link.txt", "sysctl.txt"):
            assert status[name]["status"] == "ok", status[name]
        with tarfile.open(out) as tar:
            names = tar.getnames()
            top = names[0]
            assert all(n == top or n.startswith(top + "/") for n in names)
            assert all(m.uname == "" and m.gname == "" for m in tar.getmembers())
            tar.extractall(tmp, filter="data")
        bundle = files(Path(tmp) / top)
        assert "iptables-save.txt" not in bundle and "nft-ruleset.txt" not in bundle
        assert bundle["ss-tin.txt"].count("pmtu:1400") == 2
        assert leaks(bundle, lab.originals()) == []
        res, doc = triage(Path(tmp) / top)
        (host,) = doc["hosts"]
        assert {"reassembly-seen", "fragmenting-outbound"} <= {f["code"] for f in host["findings"]}


def nobody_python():
    """An interpreter uid 65534 can run with this checkout and its packages on PYTHONPATH:
    this one, else the system's of the same version (this one may sit under /root, mode 700)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *site_packages()]), "PYTHONNOUSERSITE": "1"}
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (os.path.realpath(sys.executable), shutil.which(version)):
        if python and subprocess.run(NOBODY + [python, "-c", "import toolkit.cli"], cwd="/", env=env,
                                     capture_output=True).returncode == 0:
            return python
    return None


def site_packages():
    return [p for p in sys.path if p.endswith("-packages")]


def test_a_host_without_any_tool(lab, tmp_path):
    """/usr/bin and /usr/sbin hidden (a private mount namespace): every command is missing,
    the counters come from /proc, the sysctls too, and the bundle is still written."""
    out = tmp_path / "bare"
    inner = (f"mount -t tmpfs none /usr/sbin && mount -t tmpfs none /usr/local/sbin && mount -t tmpfs none /usr/bin"
             f" && exec {shlex.quote(MSSDIAG)} collect {shlex.quote(str(out))} --json")
    res = subprocess.run(["ip", "netns", "exec", lab.host, "unshare", "--mount", "--propagation", "private",
                          "sh", "-c", inner], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    status = {f["file"]: f for f in json.loads(res.stdout)["files"]}
    for source in ("netstat-s.txt", "nstat.txt", "ss-tin.txt", "ip-link.txt", "iptables-save.txt", "nft-ruleset.txt"):
        assert status[source]["status"] == "missing", status[source]
    assert status["proc-net-snmp.txt"]["status"] == "ok" and status["sysctl.txt"]["status"] == "ok"
    assert sorted(p.name for p in out.iterdir()) == ["host.toml", "manifest.json", "proc-net-snmp.txt", "sysctl.txt"]
    res, doc = triage(out)
    (host,) = doc["hosts"]
    assert res.returncode in (0, 4) and res.stderr == ""
    assert {"reassembly-seen", "fragmenting-outbound"} <= {f["code"] for f in host["findings"]}
