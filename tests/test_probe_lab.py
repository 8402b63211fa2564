"""The live prober against real namespace networks (toolkit.lab): exact answers per scenario.

Needs root, iproute2 and iptables (`make system-deps`); skips with the reason otherwise.
Each scenario builds its own namespaces (unique names), so runs can overlap.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from toolkit import lab

pytestmark = pytest.mark.netns
MISSING = lab.missing_tools()
if MISSING:
    pytest.skip(f"namespace tests need {', '.join(MISSING)} (run `make system-deps` as root)",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
MSSDIAG = str(Path(sys.executable).with_name("mssdiag"))
GET = "GET / HTTP/1.0\\r\\n\\r\\n"


def probe(L: lab.Lab, *args: str, target: str = None, ports=True, timeout: float = 30):
    argv = [MSSDIAG, "probe", "--json", target or L.target, *args]
    if ports:
        argv += ["--port", ",".join(map(str, L.ports)), "--send", GET]
    res = L.run(L.client, argv, timeout=timeout)
    lines = [json.loads(x) for x in res.stdout.splitlines() if x.strip()]
    return res, lines


def check(d: dict, expect: dict) -> None:
    got = {"pmtu": d["pmtu"], "pmtu_method": d["pmtu_method"], "black_hole": d["black_hole"], "hop": d["hop"]}
    want = {k: expect[k] for k in got}
    assert got == want, json.dumps(d, indent=1)
    if "mss" in expect:
        assert {k: d["mss"][k] for k in ("sent", "synack", "used")} == expect["mss"], json.dumps(d, indent=1)
        assert {f["code"] for f in d["findings"]} == expect["codes"], json.dumps(d["findings"], indent=1)
        for m in d["mss_ports"]:          # both the banner port and the request port
            assert {k: m[k] for k in ("sent", "synack", "used")} == expect["mss"], json.dumps(m)
    assert d["errors"] == [] and d["skipped"] == []


@pytest.mark.parametrize("name", ["bottleneck", "blackhole", "clamp536", "legacy536", "multihop", "ipv6",
                                  "noecho", "smalllocal"])
def test_scenario_exact(name):
    with lab.scenario(name) as L:
        res, out = probe(L)
        assert res.returncode == 0, res.stderr
        assert res.stderr == ""
        assert len(out) == 1
        d = out[0]
        check(d, L.expect)
        assert d["family"] == L.spec.family and d["address"] == L.target
        # the prober's speed goals (sub-millisecond RTT), MSS checks included
        assert d["elapsed_s"] <= (3.0 if d["black_hole"] else 1.5), d["elapsed_s"]
        if name == "noecho":
            assert d["probe_method"] in ("udp", "tcp")
        elif name != "smalllocal":
            assert d["probe_method"] == "icmp"
        if name == "blackhole":
            # 1 s of silence cannot tell a black hole from a router that sends its ICMP
            # less often: medium, and the note says how to tell them apart
            assert d["confidence"] == "medium"
            assert any("--icmp-wait 10" in n for n in d["notes"]), d["notes"]


def test_black_hole_is_high_confidence_only_after_long_silence():
    with lab.scenario("blackhole") as L:
        res, out = probe(L, "--icmp-wait", "10")
        assert res.returncode == 0, res.stderr
        d = out[0]
        check(d, L.expect)
        assert d["confidence"] == "high" and 10 <= d["elapsed_s"] <= 13, (d["confidence"], d["elapsed_s"])


def flush_route_cache(L: lab.Lab) -> None:
    L.run(L.client, ["ip", "-4", "route", "flush", "cache"], check=True)


@pytest.mark.parametrize("name", ["lossy", "lossyhole", "ratelimit", "oldrouter"])
def test_not_fooled_by_loss_or_icmp_rate_limit(name):
    """10% random loss must not make a black hole (nor hide one); a router that sends one
    frag-needed a second is still an ICMP answer, not a black hole; a router that reports
    next-hop MTU 0 still gives the exact PMTU (plateaus, then probing to the byte)."""
    missing = [t for t in lab.SCENARIOS[name].needs if shutil.which(t) is None]
    if missing:
        pytest.skip(f"scenario {name} needs {', '.join(missing)} (make system-deps)")
    with lab.scenario(name) as L:
        for _ in range(2):
            res, out = probe(L, ports=False)
            assert res.returncode == 0, res.stderr
            check(out[0], L.expect)


def test_slow_icmp_is_never_a_confident_black_hole():
    """A router that lets one frag-needed out every 10 s. Two targets behind it
    in one run: the one that got the router's ICMP vouches for the router, so the other's
    silence is rate limiting, never a black hole. Then back-to-back runs (route cache
    flushed, no evidence left): silence of ~1 s is reported, at most, as a medium-confidence
    black hole that says why; the full 20-run figures are in docs/probe.md (benchmark)."""
    with lab.scenario("ratelimit10") as L:
        second = "10.0.2.3"
        L.run(L.target_ns, ["ip", "addr", "add", f"{second}/24", "dev", "v2b"], check=True)
        res = L.run(L.client, [MSSDIAG, "probe", "--json", L.target, second], timeout=60)
        assert res.returncode == 0, res.stderr
        both = [json.loads(x) for x in res.stdout.splitlines()]
        for d in both:
            assert (d["pmtu"], d["black_hole"], d["hop"]) == (1400, False, "10.0.1.1"), json.dumps(d, indent=1)
        assert {d["pmtu_method"] for d in both} <= {"icmp", "inferred"}
        assert any("icmp-rate-limited" in {f["code"] for f in d["findings"]} for d in both), json.dumps(both)
        verdicts = []
        for _ in range(6):
            flush_route_cache(L)
            res, out = probe(L, ports=False)
            assert res.returncode == 0, res.stderr
            d = out[0]
            verdicts.append((d["pmtu_method"], d["black_hole"], d["confidence"]))
            assert d["pmtu"] == 1400, json.dumps(d, indent=1)
            assert not (d["black_hole"] and d["confidence"] == "high"), json.dumps(d, indent=1)
            if d["black_hole"]:
                assert any("less often than once" in n for n in d["notes"]), d["notes"]
        # the runs came faster than the router's ICMP: most of them saw only silence
        assert sum(bh for _m, bh, _c in verdicts) >= 3, verdicts


def test_heavy_loss_never_gives_a_pmtu_below_the_reported_mtu():
    """30 % of what the router forwards is lost, its frag-needed (MTU 1400)
    always gets out: the answer is 1400, never a size below it that loss made look too big."""
    with lab.scenario("lossy30") as L:
        for _ in range(8):
            flush_route_cache(L)
            res, out = probe(L, ports=False)
            assert res.returncode == 0, res.stderr
            d = out[0]
            assert (d["pmtu"], d["pmtu_method"], d["black_hole"]) == (1400, "icmp", False), json.dumps(d, indent=1)


@pytest.mark.skipif(shutil.which("ping") is None, reason="needs ping (iputils-ping, make system-deps)")
def test_cached_pmtu_and_two_targets_in_one_run():
    """After a ping has taught the kernel PMTU 1400, the prober reports that cache and is
    not fooled by it; IPv4 and IPv6 targets are probed concurrently with one capture."""
    with lab.scenario("bottleneck") as L:
        L.run(L.client, ["ping", "-c1", "-W1", "-M", "do", "-s", "1472", L.target4])
        assert "mtu 1400" in L.run(L.client, ["ip", "route", "get", L.target4]).stdout
        res = L.run(L.client, [MSSDIAG, "probe", "--json", L.target4, L.target6, "--port", "21"])
        assert res.returncode == 0, res.stderr
        v4, v6 = [json.loads(x) for x in res.stdout.splitlines()]
        assert (v4["target"], v6["target"]) == (L.target4, L.target6)
        assert (v4["pmtu"], v4["pmtu_method"], v4["local_mtu"], v4["cached_pmtu"]) == (1400, "icmp", 1500, 1400)
        # the kernel advertises MSS from the cached PMTU: the capture shows what was really sent
        assert v4["mss"]["sent"] == 1360 and v4["mss"]["used"] == 1348
        assert any("cached path MTU 1400" in s for s in v4["skipped"])
        assert (v6["family"], v6["pmtu"], v6["pmtu_method"], v6["hop"]) == ("ipv6", 1400, "icmp", "fd00:1::1")


@pytest.mark.parametrize("name", ["noecho", "blackhole"])
def test_many_addresses_of_one_host_in_one_run_all_exact(name):
    """32 targets that are one host (its routers and the target keep Linux's ICMP rate
    limits): the budgets they share toward one prober (the target's port unreachables,
    the routers' 'fragmentation needed' and 'time exceeded') must not cost any target its
    exact answer. Without --port: the TCP probes go to port 80, closed, answered by RSTs."""
    with lab.scenario(name) as L:
        addrs = L.add_addresses(32)
        res = L.run(L.client, [MSSDIAG, "probe", "--json", *addrs], timeout=60)
        assert res.returncode == 0, res.stderr
        out = [json.loads(x) for x in res.stdout.splitlines()]
        assert [d["target"] for d in out] == addrs
        want = [L.expect[k] for k in ("pmtu", "pmtu_method", "black_hole", "hop")]
        for d in out:
            assert [d[k] for k in ("pmtu", "pmtu_method", "black_hole", "hop")] == want, json.dumps(d, indent=1)
            assert d["errors"] == [], d["errors"]
        if name == "noecho":
            assert {d["probe_method"] for d in out} == {"tcp"}


def test_sockets_only_path():
    """--no-raw: UDP socket probes (IP_PMTUDISC_PROBE + IP_RECVERR) and TCP_INFO; says what it skipped."""
    with lab.scenario("bottleneck") as L:
        res, out = probe(L, "--no-raw")
        assert res.returncode == 0, res.stderr
        d = out[0]
        assert (d["pmtu"], d["pmtu_method"], d["hop"], d["probe_method"]) == (1400, "icmp", "10.0.1.1", "udp")
        assert (d["mss"]["sent"], d["mss"]["synack"], d["mss"]["used"]) == (1460, None, 1348)
        assert any("SYN-ACK" in s for s in d["skipped"])


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
# run the CLI as `python -m toolkit` would, and list every module file it loaded at exit
TRACED = ("import atexit, runpy, sys; out = sys.argv.pop(1); atexit.register(lambda: open(out, 'w').write("
          "'\\n'.join(m.__file__ for m in list(sys.modules.values()) if getattr(m, '__file__', None)))); "
          "runpy.run_module('toolkit', run_name='__main__', alter_sys=True)")


def readable_by_nobody(L: lab.Lab, argv, tmp: Path):
    """(argv prefix, cwd, env) that run this checkout's mssdiag as uid 65534. A checkout in
    a directory that user cannot read (a `mktemp -d` clone, mode 700) is copied: the
    project's packages and the installed packages the same command imports (learnt by
    running it once as root with --no-raw, the code path of an unprivileged user), into
    `tmp`, a directory every user can reach. None when even the interpreter cannot run as
    that user."""
    python = os.path.realpath(sys.executable)
    if subprocess.run(NOBODY + [sys.executable, "-c", "import toolkit.cli"], cwd=str(ROOT),
                      capture_output=True).returncode == 0:
        return [sys.executable], str(ROOT), None
    if subprocess.run(NOBODY + [python, "-c", "pass"], cwd="/", capture_output=True).returncode != 0:
        return None
    listing = tmp / "modules.txt"
    L.run(L.client, [sys.executable, "-c", TRACED, str(listing), *argv, "--no-raw"], cwd=str(ROOT), check=True)
    files = listing.read_text().split()
    listing.unlink()
    # that run taught the client's kernel the path MTU: forget it, as a fresh client would
    L.run(L.client, ["ip", "-4", "route", "flush", "cache"], check=True)
    # the most specific first: site-packages may sit inside the checkout (.venv)
    roots = sorted([str(ROOT)] + [p for p in sys.path if "-packages" in p], key=len, reverse=True)
    for f in files:
        base = next((r for r in roots if f.startswith(r + os.sep)), None)
        if base is None:
            continue                      # the standard library: the interpreter's own
        top = Path(f).relative_to(base).parts[0]
        src, dst = Path(base) / top, tmp / top
        if not dst.exists():
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)
    for d in [tmp, *tmp.rglob("*")]:
        d.chmod(0o755 if d.is_dir() else 0o644)
    return [python], str(tmp), {**os.environ, "PYTHONPATH": str(tmp), "PYTHONNOUSERSITE": "1"}


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux) to drop root")
def test_not_root_says_what_was_skipped():
    # not pytest's tmp_path: its parent directory is mode 700
    with tempfile.TemporaryDirectory(prefix="mssdiag-nobody-") as tmp:
        os.chmod(tmp, 0o755)
        _not_root_says_what_was_skipped(Path(tmp))


def _not_root_says_what_was_skipped(tmp: Path):
    with lab.scenario("bottleneck") as L:
        argv = ["probe", "--json", L.target, "--port", "21"]
        how = readable_by_nobody(L, argv, tmp)
        if how is None:
            pytest.skip("uid 65534 cannot run this Python interpreter (it sits in a directory that user cannot read)")
        python, cwd, env = how
        res = L.run(L.client, NOBODY + python + ["-m", "toolkit", *argv], cwd=cwd, env=env)
        assert res.returncode == 0, res.stderr
        assert res.stderr.count("\n") == 1 and "CAP_NET_RAW" in res.stderr and "Traceback" not in res.stderr
        d = json.loads(res.stdout)
        assert (d["pmtu"], d["pmtu_method"]) == (1400, "icmp")
        assert d["mss"]["sent"] == 1460 and d["mss"]["synack"] is None
        assert any("CAP_NET_RAW" in s for s in d["skipped"])


def test_errors_are_one_line_per_target():
    with lab.scenario("legacy536") as L:
        res = L.run(L.client, [MSSDIAG, "probe", "--json", "no-such-host.invalid", L.target, "--port", "21,9"])
        assert res.returncode == 3
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("mssdiag: probe no-such-host.invalid: cannot resolve")
        bad, good = [json.loads(x) for x in res.stdout.splitlines()]
        assert bad["errors"] and bad["pmtu"] is None
        assert good["pmtu"] == 1500 and good["mss_ports"][1]["port"] == 9
        assert {f["code"] for f in good["findings"]} == {"synack-mss-below-path", "mss-536-legacy", "port-closed"}


def test_lab_down_removes_everything():
    built = lab.up("multihop")
    names = set(built.namespaces)
    assert names <= set(lab.existing_namespaces())
    res = subprocess.run([MSSDIAG, "lab", "down", built.prefix], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert not names & set(lab.existing_namespaces())
    assert built.prefix not in [i["prefix"] for i in lab.labs()]


def test_unreachable_and_silent_targets_are_named_and_fail():
    """A router's 'network unreachable' or 'administratively prohibited' is
    named as such, a target that answers nothing is an error too: one stderr line each,
    exit 1 (nothing probed) or 3 (some targets were)."""
    with lab.scenario("bottleneck") as L:
        res = L.run(L.client, [MSSDIAG, "probe", "--json", "10.0.9.9"])
        assert res.returncode == 1, res.stderr
        assert res.stderr.count("\n") == 1 and "10.0.9.9: unreachable: 10.0.1.1 answered 'network unreachable" \
            in res.stderr, res.stderr
        d = json.loads(res.stdout)
        assert d["pmtu"] is None and "unreachable" in {f["code"] for f in d["findings"]}
        # nobody at 10.0.2.9: the router says so once its ARP gives up (~3 s)
        res = L.run(L.client, [MSSDIAG, "probe", "10.0.2.9"])
        assert res.returncode == 1 and "answered 'host unreachable" in res.stderr, res.stderr
        r = L.routers[0]
        L.run(r, ["iptables", "-I", "FORWARD", "-d", L.target, "-j", "REJECT", "--reject-with",
                  "icmp-admin-prohibited"], check=True)
        res = L.run(L.client, [MSSDIAG, "probe", L.target])
        assert res.returncode == 1 and "administratively prohibited" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1
        L.run(r, ["iptables", "-R", "FORWARD", "1", "-d", L.target, "-j", "DROP"], check=True)
        res = L.run(L.client, [MSSDIAG, "probe", "--json", L.target, L.target6])
        assert res.returncode == 3, res.stderr
        assert res.stderr.count("\n") == 1 and f"probe {L.target}: no answer to any of" in res.stderr, res.stderr
        silent, fine = [json.loads(x) for x in res.stdout.splitlines()]
        assert silent["errors"] and "no-answer" in {f["code"] for f in silent["findings"]}
        assert fine["pmtu"] == 1400 and not fine["errors"]


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_interrupted_probe_leaves_whole_lines_and_one_message(sig, code):
    """IPv6 answers at once (PTB), IPv4 waits 30 s of silence for its black-hole verdict:
    the signal arrives while the second target is under way."""
    with lab.scenario("blackhole") as L:
        argv = ["ip", "netns", "exec", L.client, MSSDIAG, "probe", "--json", "--icmp-wait", "30",
                L.target6, L.target4]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2.5)
        proc.send_signal(sig)
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=20)
        assert time.monotonic() - t0 < 2, "the exit waited for the searches"
        assert proc.returncode == code, err
        assert err.splitlines() == [f"mssdiag: probe: interrupted by {signal.Signals(sig).name} "
                                    "after 1 of 2 target(s)"], err
        lines = out.splitlines()
        assert len(lines) == 1 and out.endswith("\n")
        assert json.loads(lines[0])["target"] == L.target6


def test_unwritable_stdout_is_one_line():
    with lab.scenario("bottleneck") as L:
        for shell in (f"{MSSDIAG} probe {L.target} > /dev/full", f"{MSSDIAG} probe --json {L.target} >&-"):
            res = L.run(L.client, ["sh", "-c", shell])
            assert res.returncode == 1, (shell, res.stderr)
            # a closed stdout is refused by the CLI before the command starts (bb3d080)
            assert res.stderr.count("\n") == 1 and "cannot write the output" in res.stderr, res.stderr
        r, w = os.pipe()
        os.close(r)                     # the reader is gone before the first line
        try:
            res = L.run(L.client, [MSSDIAG, "probe", "--json", L.target], stdout=w, capture_output=False,
                        stderr=subprocess.PIPE)
        finally:
            os.close(w)
        assert res.returncode == 1 and res.stderr.count("\n") == 1 and "Broken pipe" in res.stderr, res.stderr


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux) to drop root")
def test_not_root_recognises_a_legacy_host_with_timestamps():
    """As uid 65534 only TCP_INFO is there; the legacy host's segments carry 12
    bytes of timestamps (rcv_mss 524), and it is still recognised as a 536 sender."""
    with tempfile.TemporaryDirectory(prefix="mssdiag-nobody-") as tmp:
        os.chmod(tmp, 0o755)
        with lab.scenario("legacy536") as L:
            argv = ["probe", "--json", L.target, "--port", "21"]
            how = readable_by_nobody(L, argv, Path(tmp))
            if how is None:
                pytest.skip("uid 65534 cannot run this Python interpreter")
            python, cwd, env = how
            res = L.run(L.client, NOBODY + python + ["-m", "toolkit", *argv], cwd=cwd, env=env)
            assert res.returncode == 0, res.stderr
            d = json.loads(res.stdout)
            m = d["mss"]
            assert (m["sent"], m["synack"], m["used"], m["used_options"]) == (1460, None, 524, 12), m
            assert "timestamps" in m["options"]
            assert "mss-536-legacy" in {f["code"] for f in d["findings"]}
