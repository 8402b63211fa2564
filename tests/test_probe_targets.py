"""What the prober refuses to probe, and the forms of address it must read right, against
real namespace networks (toolkit.lab): multicast, broadcast, unspecified and loopback
targets get one stderr line each and not one packet (the client namespace's iptables
counters say so); an IPv4-mapped IPv6 address is probed as IPv4; a link-local address
is probed on the interface its zone names and refused without one; extreme rates are
refused before anything runs, and every target's run is bounded in time.

Needs root, iproute2 and iptables (`make system-deps`); skips with the reason otherwise.
"""
from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolkit import lab

ROOT = Path(__file__).resolve().parent.parent
MSSDIAG = str(Path(sys.executable).with_name("mssdiag"))

# the client of every lab is 10.0.1.2 / fd00:1::2 on v1a (10.0.1.0/24)
SPECIAL = {"224.0.0.1": "multicast", "239.255.255.250": "multicast", "ff02::1": "multicast",
           "255.255.255.255": "broadcast", "10.0.1.255": "broadcast", "0.0.0.0": "unspecified",
           "0": "unspecified", "::": "unspecified", "127.0.0.1": "loopback", "::1": "loopback",
           "localhost": "loopback", "10.0.1.2": "this host", "fd00:1::2": "this host",
           "fe80::1": "link-local", "::ffff:224.0.0.1": "multicast"}


@pytest.mark.parametrize("args", [["--rate", "1e-9"], ["--rate", "0.01"], ["--rate", "0"], ["--rate", "nan"],
                                  ["--rate", "1e9"], ["--total-rate", "1e-9"], ["--total-rate", "inf"],
                                  ["--total-rate", "0.5"]])
def test_extreme_rates_are_refused_before_anything_runs(args):
    res = subprocess.run([MSSDIAG, "probe", "10.0.2.2", *args], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2 and res.stdout == "", res.stderr
    line = res.stderr.strip()
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert line.startswith(f"mssdiag: {args[0]} ") and re.search(r"between 1 and 10+ probes a second$", line), line


@pytest.mark.netns
def test_a_targets_time_is_bounded():
    """Every rate and wait is bounded, and so is each target's whole run: the limit comes
    from the options (Options.time_limit), and a target still under way then ends with
    one error. Here the limit is set to 0.3 s against a 0.5 s answer timeout."""
    from toolkit.probe import runner
    opts = runner.Options(timeout=0.5, icmp_wait=30)
    assert 60 < opts.time_limit() < 300 and runner.Options(rate=1).time_limit() == runner.Options().time_limit()
    if lab.missing_tools():
        pytest.skip(f"needs {', '.join(lab.missing_tools())}")
    code = ("import json, sys; from toolkit.probe import runner; runner.Options.time_limit = lambda self: 0.3; "
            "[print(json.dumps(r.to_dict())) for r in runner.run(['10.250.0.1'], runner.Options(raw=False))]")
    # a namespace of its own where 10.250.0.0/24 is routed into its loopback, which does
    # not forward: nobody ever answers, and nothing leaves the namespace
    ns = f"mssdprobe{secrets.token_hex(4)}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"], check=True)
        subprocess.run(["ip", "netns", "exec", ns, "ip", "route", "add", "10.250.0.0/24", "dev", "lo"], check=True)
        t0 = time.monotonic()
        res = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code], capture_output=True,
                             text=True, timeout=60, cwd=str(ROOT))
        took = time.monotonic() - t0
    finally:
        subprocess.run(["ip", "netns", "del", ns])
    d = json.loads(res.stdout)
    assert any("stopped after 0.3 s, the limit for one target" in e for e in d["errors"]), d
    assert took < 10, took


def counting(L: lab.Lab) -> None:
    """Rules that count, in the client namespace, every packet it sends to anything but
    the lab's target (loopback included): IPv4 all, IPv6 all but neighbour discovery and
    multicast listener reports (the kernel's own, not ours)."""
    L.run(L.client, ["iptables", "-A", "OUTPUT", "!", "-d", L.target4], check=True)
    L.run(L.client, ["ip6tables", "-A", "OUTPUT", "!", "-d", L.target6, "!", "-p", "ipv6-icmp"], check=True)
    for kind in ("echo-request", "packet-too-big", "destination-unreachable", "time-exceeded"):
        L.run(L.client, ["ip6tables", "-A", "OUTPUT", "!", "-d", L.target6, "-p", "ipv6-icmp",
                         "--icmpv6-type", kind], check=True)


def sent(L: lab.Lab) -> int:
    total = 0
    for tool in ("iptables", "ip6tables"):
        out = L.run(L.client, [tool, "-nvxL", "OUTPUT"], check=True).stdout
        total += sum(int(line.split()[0]) for line in out.splitlines()[2:] if line.strip())
    return total


@pytest.mark.netns
def test_special_targets_are_refused_and_nothing_is_sent_to_them():
    if lab.missing_tools():
        pytest.skip(f"namespace tests need {', '.join(lab.missing_tools())}")
    with lab.scenario("bottleneck") as L:
        counting(L)
        before = sent(L)
        res = L.run(L.client, [MSSDIAG, "probe", "--json", *SPECIAL, L.target], timeout=60)
        assert res.returncode == 3, res.stderr           # some targets probed, the others refused
        lines = res.stderr.splitlines()
        assert len(lines) == len(SPECIAL) and "Traceback" not in res.stderr, res.stderr
        for target, line in zip(SPECIAL, lines):
            assert line.startswith(f"mssdiag: probe {target}: not probed: "), line
        for line, why in zip(lines, SPECIAL.values()):
            word = {"this host": "an address of this host", "unspecified": "unspecified address"}.get(why, why)
            assert word in line, line
        out = [json.loads(x) for x in res.stdout.splitlines()]
        assert [d["target"] for d in out] == [*SPECIAL, L.target]
        for d in out[:-1]:
            assert d["errors"] and d["pmtu"] is None and d["probes"] == 0 and d["findings"] == [], d
        assert (out[-1]["pmtu"], out[-1]["pmtu_method"], out[-1]["errors"]) == (1400, "icmp", [])
        assert sent(L) == before, "packets went to a refused target"
        # the counters do see a probe of this host when it is asked for
        res = L.run(L.client, [MSSDIAG, "probe", "--json", "--loopback", "127.0.0.1", "10.0.1.2"], timeout=60)
        assert res.returncode == 0, res.stderr
        assert [json.loads(x)["pmtu_method"] for x in res.stdout.splitlines()] == ["local", "local"]
        assert sent(L) > before


@pytest.mark.netns
@pytest.mark.parametrize("raw", [True, False])
def test_ipv4_mapped_and_zoned_link_local_targets(raw):
    if lab.missing_tools():
        pytest.skip(f"namespace tests need {', '.join(lab.missing_tools())}")
    with lab.scenario("smalllocal") as L:
        # the router's link-local address on the client's link (MTU 1300)
        out = L.run(L.routers[0], ["ip", "-6", "-o", "addr", "show", "dev", "v1b", "scope", "link"], check=True).stdout
        router = out.split()[3].split("/")[0]
        extra = [] if raw else ["--no-raw"]
        res = L.run(L.client, [MSSDIAG, "probe", "--json", f"::ffff:{L.target4}", f"{router}%v1a", *extra],
                    timeout=60)
        assert res.returncode == 0, res.stderr
        mapped, zoned = [json.loads(x) for x in res.stdout.splitlines()]
        assert (mapped["target"], mapped["address"], mapped["family"]) == (f"::ffff:{L.target4}", L.target4, "ipv4")
        assert (mapped["pmtu"], mapped["pmtu_method"]) == (1300, "local")
        assert (zoned["address"], zoned["family"], zoned["local_mtu"]) == (f"{router}%v1a", "ipv6", 1300)
        assert (zoned["pmtu"], zoned["pmtu_method"], zoned["errors"]) == (1300, "local", [])
        # asked for IPv6 only, an IPv4-mapped address is refused; without its zone the link-local one too
        res = L.run(L.client, [MSSDIAG, "probe", "-6", f"::ffff:{L.target4}", router, *extra], timeout=60)
        assert res.returncode == 1
        assert res.stderr.splitlines() == [
            f"mssdiag: probe ::ffff:{L.target4}: is an ipv4 address but ipv6 was asked for",
            f"mssdiag: probe {router}: not probed: {router} is link-local: name the interface it is on as its zone "
            f"({router}%eth0)"], res.stderr
