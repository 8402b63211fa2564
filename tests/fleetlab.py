"""A fleet in network namespaces: one real sshd (Debian openssh-server) per host namespace, a
bridge joining them to a controller namespace where Ansible runs. Used by the fleet tests and
benchmarks/fleet_bench.py.

Safety (CONVENTIONS.md): the lab's 10.N.0.0/16 is chosen so that it overlaps no address or
route of the machine's own namespace other than the default route (`ip route get` must go
via the gateway, never out of a directly connected interface), and before anything is sent
every host address must resolve, inside the controller namespace, over the lab's own link.
Every namespace and sshd this lab starts is removed by close() (also after a failure): the
sshds by their pids, then any process still inside the lab's namespaces (SSH masters), then
the namespaces.
"""
from __future__ import annotations

import ipaddress
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

SSHD = "/usr/sbin/sshd"


def unavailable() -> Optional[str]:
    """Why the fleet lab cannot run here, or None."""
    from netns import unavailable as netns_unavailable
    why = netns_unavailable()
    if why:
        return why
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} is missing (Debian openssh-server; make system-deps installs it)"
    for tool in ("ssh", "ssh-keygen", "ansible-playbook"):
        if shutil.which(tool) is None and not os.access(os.path.join(os.path.dirname(sys.executable), tool), os.X_OK):
            return f"{tool} is missing ({'the fleet extra: pip install -e .[fleet]' if tool.startswith('ansible') else 'openssh-client'})"
    return None


def _ip(*args: str, ns: Optional[str] = None, check: bool = True) -> subprocess.CompletedProcess:
    argv = ["ip"] + (["-n", ns] if ns else []) + list(args)
    done = subprocess.run(argv, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done


def _root_networks() -> List[ipaddress.IPv4Network]:
    nets = []
    for item in json.loads(_ip("-j", "-4", "addr").stdout or "[]"):
        for a in item.get("addr_info", []):
            nets.append(ipaddress.ip_network(f"{a['local']}/{a['prefixlen']}", strict=False))
    for r in json.loads(_ip("-j", "-4", "route", "show", "table", "all").stdout or "[]"):
        dst = r.get("dst")
        if dst and dst != "default" and not dst.startswith(("broadcast", "local")):
            try:
                nets.append(ipaddress.ip_network(dst if "/" in dst else f"{dst}/32", strict=False))
            except ValueError:
                pass
    return nets


def pick_range() -> ipaddress.IPv4Network:
    """A 10.N.0.0/16 that overlaps none of the machine's own addresses and routes, and that the
    machine would only reach through its default gateway (not a connected interface)."""
    used = _root_networks()
    for _ in range(200):
        net = ipaddress.ip_network(f"10.{secrets.randbelow(150) + 100}.0.0/16")
        if any(net.overlaps(u) for u in used):
            continue
        probe = json.loads(_ip("-j", "route", "get", str(net.network_address + 1), check=False).stdout or "[{}]")
        if probe and probe[0].get("dst") and not probe[0].get("gateway") and probe[0].get("dev"):
            continue                    # a directly connected route: someone's real network
        return net
    raise RuntimeError("no free 10.N.0.0/16 for the fleet lab")


class FleetLab:
    """hosts namespaces h01..hNN with sshd, `down` more addresses in the inventory with no host
    behind them, a controller namespace `ctl`; all on one bridge (MTU 1500)."""

    def __init__(self, hosts: int, tmp: Path, down: int = 0, prefix: str = "h"):
        self.tmp = Path(tmp)
        self.tag = secrets.token_hex(3)
        self.namespaces: List[str] = []
        self.sshd: Dict[str, subprocess.Popen] = {}
        self.addr: Dict[str, str] = {}          # host name -> address
        self.links = 0
        self.devs: Dict[str, set] = {}         # namespace -> the devices this lab put there
        self.etc: List[Path] = []              # /etc/netns/<ns> directories this lab made
        try:
            self.net = pick_range()
            self.mgmt = list(self.net.subnets(new_prefix=24))[1]
            base = self.mgmt.network_address
            self.switch = self.ns("sw")
            _ip("link", "add", "br0", "type", "bridge", ns=self.switch)
            _ip("link", "set", "br0", "up", ns=self.switch)
            self.ctl = self.ns("ctl")
            self.ctl_addr = str(base + 1)
            self.attach(self.ctl, self.ctl_addr)
            self._keys()
            self.hosts: List[str] = []
            for i in range(1, hosts + 1):
                name = f"{prefix}{i:02d}"
                ns = self.ns(name)
                self.addr[name] = str(base + 10 + i)
                self.attach(ns, self.addr[name])
                self.hosts.append(name)
            self.dead = []
            for j in range(down):
                name = f"{prefix}{hosts + j + 1:02d}"
                self.addr[name] = str(base + 10 + hosts + j + 1)
                self.dead.append(name)
            self.check_routes(self.ctl, [self.addr[h] for h in self.hosts + self.dead])
            for name in self.hosts:
                self.start_sshd(name)
            self.wait_sshd(self.hosts)
        except BaseException:
            self.close()
            raise

    # -- building

    def ns(self, role: str) -> str:
        name = f"mdf{self.tag}-{role}"
        _ip("netns", "add", name)
        self.namespaces.append(name)
        _ip("link", "set", "lo", "up", ns=name)
        return name

    def host_ns(self, host: str) -> str:
        return f"mdf{self.tag}-{host}"

    def attach(self, ns: str, address: str, prefix: int = 24) -> None:
        """A veth from ns to the bridge, with the address on the ns end."""
        self.links += 1
        a, b = f"mf{self.tag}{self.links}a", f"mf{self.tag}{self.links}b"
        _ip("link", "add", a, "type", "veth", "peer", "name", b)
        _ip("link", "set", a, "netns", ns)
        _ip("link", "set", b, "netns", self.switch)
        _ip("link", "set", a, "name", "lab0", ns=ns)
        _ip("addr", "add", f"{address}/{prefix}", "dev", "lab0", ns=ns)
        _ip("link", "set", "lab0", "up", ns=ns)
        self.devs.setdefault(ns, set()).add("lab0")
        _ip("link", "set", b, "master", "br0", ns=self.switch)
        _ip("link", "set", b, "up", ns=self.switch)

    def link(self, a: str, b: str, mtu: int) -> tuple:
        """A point-to-point veth between two namespaces; returns the two device names."""
        self.links += 1
        ea, eb = f"mf{self.tag}{self.links}a", f"mf{self.tag}{self.links}b"
        _ip("link", "add", ea, "type", "veth", "peer", "name", eb)
        for dev, ns in ((ea, a), (eb, b)):
            _ip("link", "set", dev, "netns", ns)
            _ip("link", "set", dev, "mtu", str(mtu), "up", ns=ns)
            self.devs.setdefault(ns, set()).add(dev)
        return ea, eb

    def check_routes(self, ns: str, addresses: Sequence[str]) -> None:
        """Before anything is sent: every address resolves inside `ns` over the lab's own links."""
        if ns not in self.namespaces:
            raise RuntimeError(f"{ns} is not one of the lab's namespaces")
        for address in addresses:
            if ipaddress.ip_address(address) not in self.net:
                raise RuntimeError(f"{address} is outside the lab's {self.net}")
            got = json.loads(_ip("-j", "route", "get", address, ns=ns).stdout or "[{}]")[0]
            dev = got.get("dev", "")
            if dev not in self.devs.get(ns, ()):
                raise RuntimeError(f"{address} from {ns} resolves via {dev or 'nothing'}: not the lab's link")

    def _keys(self) -> None:
        self.key = self.tmp / "id_ed25519"
        self.host_key = self.tmp / "ssh_host_ed25519_key"
        for path in (self.key, self.host_key):
            if not path.exists():
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "mssdiag-fleet-lab", "-f",
                                str(path)], check=True, capture_output=True)
        shutil.copyfile(f"{self.key}.pub", self.tmp / "authorized_keys")
        os.chmod(self.tmp / "authorized_keys", 0o600)
        # sshd's privilege separation directory (Debian's service creates it at start; it is
        # an empty directory every sshd on this machine shares, so it is left in place)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)

    def _clean_home(self, ns: str) -> None:
        """Root logs in to the lab's hosts with an empty home: `ip netns exec` binds
        /etc/netns/<ns>/passwd over /etc/passwd for what runs in that namespace. The machine's
        own ~/.bashrc (bash reads it for SSH commands) is not run in every session: concurrent
        ones raced there (a `pyenv rehash` message landed in a collected dump)."""
        home = self.tmp / "home"
        home.mkdir(mode=0o700, exist_ok=True)
        lines = []
        for line in Path("/etc/passwd").read_text().splitlines():
            f = line.split(":")
            if len(f) == 7 and f[0] == "root":
                f[5] = str(home)
            lines.append(":".join(f))
        etc = Path("/etc/netns") / ns
        etc.mkdir(parents=True, exist_ok=True)
        self.etc.append(etc)
        (etc / "passwd").write_text("\n".join(lines) + "\n")

    def start_sshd(self, host: str) -> None:
        self._clean_home(self.host_ns(host))
        config = self.tmp / f"sshd_{host}.conf"
        config.write_text("\n".join([
            f"ListenAddress {self.addr[host]}", "Port 22", f"HostKey {self.host_key}",
            f"PidFile {self.tmp / f'sshd_{host}.pid'}", f"AuthorizedKeysFile {self.tmp / 'authorized_keys'}",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "UsePAM no", "StrictModes no", "PrintMotd no", "PrintLastLog no", "UseDNS no",
            "MaxStartups 100:30:200", "MaxSessions 50", "LogLevel ERROR", "Subsystem sftp internal-sftp", ""]))
        self.sshd[host] = subprocess.Popen(["ip", "netns", "exec", self.host_ns(host), SSHD, "-D", "-e", "-f",
                                            str(config)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=open(self.tmp / f"sshd_{host}.log", "wb"))

    def wait_sshd(self, hosts: Sequence[str], timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        pending = list(hosts)
        while pending:
            for host in list(pending):
                if self.sshd[host].poll() is not None:
                    log = (self.tmp / f"sshd_{host}.log").read_text(errors="replace").strip()
                    raise RuntimeError(f"sshd in {host} exited: {log[-300:]}")
                done = subprocess.run(["ip", "netns", "exec", self.host_ns(host), "ss", "-Htln", "sport = :22"],
                                      capture_output=True, text=True)
                if done.stdout.strip():
                    pending.remove(host)
            if pending:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"sshd not listening in {', '.join(pending)}")
                time.sleep(0.05)

    # -- using

    def inventory(self, path: Path, hosts: Optional[Sequence[str]] = None, extra: Optional[Dict] = None,
                  groups: Optional[Dict[str, List[str]]] = None, host_vars: Optional[Dict[str, Dict]] = None) -> Path:
        names = list(hosts) if hosts is not None else self.hosts + self.dead
        common = {"ansible_user": "root", "ansible_ssh_private_key_file": str(self.key),
                  "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                                             "-o ConnectTimeout=5",
                  "ansible_python_interpreter": os.path.join(sys.base_prefix, "bin", "python3"),
                  "mssdiag_os": "linux"}
        common.update(extra or {})
        inv = {"all": {"hosts": {n: {"ansible_host": self.addr[n], **(host_vars or {}).get(n, {})} for n in names},
                       "vars": common}}
        if groups:
            inv["all"]["children"] = {g: {"hosts": {h: {} for h in members}} for g, members in groups.items()}
        path.write_text(json.dumps(inv, indent=1))     # JSON is YAML
        return path

    def run(self, ns: str, argv: Sequence[str], env: Optional[Dict[str, str]] = None, timeout: float = 600,
            check: bool = False) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, env=env,
                              timeout=timeout, check=check)

    def sysctl(self, ns: str, key: str, value: str) -> None:
        path = "/proc/sys/" + key.replace(".", "/")
        self.run(ns, ["sh", "-c", f"echo {value} > {path}"], check=True)

    # -- cleaning

    def close(self) -> None:
        for proc in self.sshd.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.sshd.values():
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.sshd.clear()
        for ns in self.namespaces:       # anything still inside (SSH sessions, masters) was started here
            pids = _ip("netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
        for ns in reversed(self.namespaces):
            _ip("netns", "del", ns, check=False)
        self.namespaces.clear()
        for etc in self.etc:
            shutil.rmtree(etc, ignore_errors=True)
        self.etc.clear()

    def __enter__(self) -> "FleetLab":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
