"""Real captures from the namespace lab (toolkit.lab): tcpdump on the lab's veths while a
client fetches the target's 6000-byte answer.

`python tests/labcapture.py build` (root) rewrites fixtures/captures/lab/*.pcap; the
netns tests run the same code into a temporary directory and check what the kernel did
against mssdiag, tshark and tcptrace. Snaplen 128: headers only, files of a few KB.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from toolkit import lab  # noqa: E402

LAB_DIR = ROOT / "fixtures" / "captures" / "lab"
SNAPLEN = 128
FETCH = r"""
import socket, sys
s = socket.create_connection((sys.argv[1], 80), timeout=float(sys.argv[2]))
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
got = 0
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += len(d)
except OSError:
    pass
print(got)
"""


def offloads(L: lab.Lab, ns: str, dev: str, on: bool) -> None:
    L.run(ns, ["ethtool", "-K", dev, "tso", "on" if on else "off", "gso", "on" if on else "off",
               "gro", "on" if on else "off"], check=True)
    time.sleep(0.3)   # the change can bounce the link; let the first packets pass again


class Tcpdump:
    def __init__(self, L, ns: str, dev: str, out: Path, expr: str = "tcp or icmp or icmp6",
                 snaplen: int = SNAPLEN):
        self.proc = subprocess.Popen(["ip", "netns", "exec", ns, "tcpdump", "--immediate-mode", "-Z", "root", "-i", dev,
                                      "-s", str(snaplen), "-U", "-n", "-w", str(out), expr],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()        # "listening on v1a, ..."
        if "listening" not in line:
            raise RuntimeError(f"tcpdump in {ns} on {dev}: {line.strip()}")
        time.sleep(0.3)   # "listening" comes a moment before the packet socket sees traffic

    def stop(self) -> None:
        time.sleep(0.3)
        self.proc.send_signal(signal.SIGINT)
        err = self.proc.communicate(timeout=10)[1]
        if "\n0 packets captured" in "\n" + err:
            raise RuntimeError(f"tcpdump captured nothing: {err.strip()}")


def fetch(L: lab.Lab, timeout: float = 3.0) -> int:
    res = L.run(L.client, [sys.executable, "-c", FETCH, L.target, str(timeout)], timeout=timeout + 10)
    return int(res.stdout.strip() or 0)


SINK = r"""
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 9)); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); c.settimeout(float(sys.argv[1]))
try:
    while c.recv(65536):
        pass
except OSError:
    pass
c.close()
"""
UPLOAD = r"""
import socket, sys
s = socket.create_connection((sys.argv[1], 9), timeout=float(sys.argv[2]))
try:
    s.sendall(b"u" * 20000)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
except OSError:
    pass
"""


def upload(L: lab.Lab, path: Path, timeout: float = 3.0, at=None, snaplen: int = SNAPLEN) -> None:
    """The client sends 20000 bytes to a sink on the target, whose route advertises MSS
    1460 although its own link is smaller: the client's full-size segments meet the
    router's smaller link (ICMP back, or a black hole when the router drops its ICMP)."""
    L.run(L.target_ns, ["ip", "route", "replace", "default", "via", "10.0.2.1", "advmss", "1460"], check=True)
    sink = subprocess.Popen(["ip", "netns", "exec", L.target_ns, sys.executable, "-c", SINK, str(timeout)],
                            stdout=subprocess.PIPE, text=True)
    try:
        sink.stdout.readline()
        ns, dev = at or (L.client, "v1a")
        cap = Tcpdump(L, ns, dev, path, snaplen=snaplen)
        L.run(L.client, [sys.executable, "-c", UPLOAD, L.target, str(timeout)], timeout=timeout + 10)
        cap.stop()
    finally:
        sink.kill()
        sink.wait(5)


def run(name: str, out: Path) -> Dict[str, Path]:
    """One lab capture case; returns the files it wrote."""
    out.mkdir(parents=True, exist_ok=True)
    files: Dict[str, Path] = {}
    if name == "legacy536":
        with lab.scenario("legacy536") as L:
            for ns, dev in ((L.client, "v1a"), (L.target_ns, "v2b")):
                offloads(L, ns, dev, False)
            files["legacy536"] = out / "legacy536_client.pcap"
            cap = Tcpdump(L, L.client, "v1a", files["legacy536"])
            fetch(L)
            cap.stop()
    elif name == "clamp":
        with lab.scenario("clamp536") as L:
            r = L.routers[0]
            for ns, dev in ((L.client, "v1a"), (r, "v1b"), (r, "v2a"), (L.target_ns, "v2b")):
                offloads(L, ns, dev, False)
            files["clamp_inside"] = out / "clamp536_router_client_side.pcap"
            files["clamp_outside"] = out / "clamp536_router_target_side.pcap"
            caps = [Tcpdump(L, r, "v1b", files["clamp_inside"]), Tcpdump(L, r, "v2a", files["clamp_outside"])]
            fetch(L)
            for c in caps:
                c.stop()
    elif name == "blackhole":
        with lab.scenario("blackhole") as L:
            offloads(L, L.client, "v1a", False)
            # Linux falls back to smaller segments once it suspects a black hole
            L.run(L.client, ["sysctl", "-qw", "net.ipv4.tcp_mtu_probing=1"], check=True)
            files["blackhole"] = out / "blackhole_client_upload.pcap"
            upload(L, files["blackhole"], timeout=6.0)
    elif name == "ptb":
        for on in (False, True):
            with lab.scenario("bottleneck") as L:
                offloads(L, L.client, "v1a", on)
                key = "ptb_offload_on" if on else "ptb_offload_off"
                files[key] = out / f"bottleneck_client_upload_offloads_{'on' if on else 'off'}.pcap"
                upload(L, files[key])
    elif name == "fragments":
        # the client does no PMTU discovery (no DF): the router fragments its 1500-byte
        # packets for the 1400-byte link, the target reassembles them
        with lab.scenario("bottleneck") as L:
            for ns, dev in ((L.client, "v1a"), (L.routers[0], "v1b"), (L.routers[0], "v2a"), (L.target_ns, "v2b")):
                offloads(L, ns, dev, False)
            L.run(L.client, ["sysctl", "-qw", "net.ipv4.ip_no_pmtu_disc=1"], check=True)
            files["fragments"] = out / "fragments_no_df_target_side.pcap"
            # whole frames: tshark reassembles only fragments captured in full
            upload(L, files["fragments"], at=(L.target_ns, "v2b"), snaplen=0)
    elif name == "vxlan":
        files["vxlan"] = out / "vxlan_underlay.pcap"
        vxlan(files["vxlan"])
    else:
        raise ValueError(name)
    return files


VXLAN_UNDER = ("10.210.0.1", "10.210.0.2")     # inside the namespaces only
VXLAN_OVER = ("10.211.0.1", "10.211.0.2")


def vxlan(path: Path, timeout: float = 3.0) -> None:
    """Two namespaces joined by a veth (the underlay, MTU 1500) and a VXLAN (VNI 42, UDP 4789)
    over it: the client uploads 20000 bytes through the overlay (MTU 1450, so MSS 1410) while
    tcpdump on the underlay sees every segment inside its VXLAN, UDP, IP and Ethernet headers."""
    from netns import Netns
    with Netns("vx") as n:
        a, b = n.ns("vxa"), n.ns("vxb")
        ea, eb = n.link(a, b, 1500)
        for ns, dev, here, there in ((a, ea, VXLAN_UNDER[0], VXLAN_UNDER[1]), (b, eb, VXLAN_UNDER[1], VXLAN_UNDER[0])):
            n.addr(ns, dev, here + "/24")
            n.run(ns, ["ip", "link", "add", "vx42", "type", "vxlan", "id", "42", "dstport", "4789", "local", here,
                       "remote", there, "dev", dev], check=True)
            over = VXLAN_OVER[0] if ns == a else VXLAN_OVER[1]
            n.addr(ns, "vx42", over + "/24")
            n.run(ns, ["ip", "link", "set", "vx42", "up"], check=True)
            for d in (dev, "vx42"):
                n.run(ns, ["ethtool", "-K", d, "tso", "off", "gso", "off", "gro", "off"], check=False)
        time.sleep(0.3)
        sink = n.popen(b, [sys.executable, "-c", SINK, str(timeout)])
        try:
            sink.stdout.readline()
            cap = Tcpdump(None, a, ea, path, "udp port 4789")
            n.run(a, [sys.executable, "-c", UPLOAD, VXLAN_OVER[1], str(timeout)], timeout=timeout + 10)
            cap.stop()
        finally:
            sink.kill()
            sink.wait(5)


CASES = ("legacy536", "clamp", "blackhole", "ptb", "fragments", "vxlan")

if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        for case in sys.argv[2:] or CASES:
            for key, path in run(case, LAB_DIR).items():
                print(key, path, path.stat().st_size)
