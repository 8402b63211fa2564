"""What keeps `mssdiag` quick to start (figures: benchmarks/startup_bench.py, docs/benchmarks.md):
the heavy modules a run must not import, the version constant, the cheap command build and
option conversion (equal to typer's own), and the lazily compiled parser patterns."""
from __future__ import annotations

import configparser
import json
import os
import re
import subprocess
import sys
from importlib.metadata import version as installed_version
from pathlib import Path

import pytest

import toolkit

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "fixtures" / "cases" / "demo" / "vos-host" / "netstat-stcp.txt"
HEAVY = ("rich", "pydantic", "tabulate", "importlib.metadata", "scapy", "parsers", "markdown_it", "pygments",
         "toolkit.capture.flows",      # the capture analysis: only for captures, not for sniffing a dump
         "tomllib")                    # only to read a host file

# the report is an atexit handler: the run's own exit (entry._finished) sees it and leaves
# the interpreter the normal way, which runs it
RUN = """
import atexit, json, sys
sys.argv = ["mssdiag"] + json.loads(sys.argv[1])
atexit.register(lambda: print(json.dumps(sorted(m for m in {heavy} if m in sys.modules)), file=sys.stderr))
from toolkit.entry import main
main()
""".format(heavy=HEAVY)


def imported(args, env=None):
    """The heavy modules a run of `mssdiag ARGS` imported (and the run's stdout)."""
    done = subprocess.run([sys.executable, "-c", RUN, json.dumps(args)], cwd=str(ROOT), capture_output=True,
                          text=True, env=dict(os.environ, **(env or {})), timeout=120)
    return json.loads(done.stderr.strip().splitlines()[-1]), done.stdout


@pytest.mark.parametrize("args, allowed", [
    (["--version"], set()),
    (["calc", "mss", "--mtu", "1500", "--json"], set()),
    (["calc", "bdp", "--bandwidth", "10G", "--rtt", "20ms", "--json"], set()),
    (["calc", "mss", "--mtu", "1500"], {"tabulate"}),          # the table (tabulate < 0.10: no importlib.metadata)
    (["parse", str(SMALL), "--json"], {"parsers"}),
    (["parse", str(SMALL)], {"parsers", "tabulate"}),
    (["probe", "--help"], {"rich", "markdown_it", "pygments"}),                      # help is rendered
])
def test_a_run_imports_only_what_it_uses(args, allowed):
    got, out = imported(args)
    assert out.strip(), "the command printed nothing"
    assert set(got) <= allowed, f"mssdiag {' '.join(args)} imported {sorted(set(got) - allowed)}"


PROBER = ("toolkit.probe.pmtu", "toolkit.probe.packets", "toolkit.probe.runner", "socket", "selectors", "threading",
          "queue")


def test_triage_of_dumps_loads_none_of_the_prober():
    # the rules read saved probe results (toolkit.probe.findings); the search that makes them
    # (threads, sockets: ~25 ms of a run) is for live targets only
    code = RUN.replace(repr(HEAVY), repr(PROBER))
    done = subprocess.run([sys.executable, "-c", code, json.dumps(["triage", str(SMALL), "--json"])], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=120)
    assert '"hosts"' in done.stdout, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_tab_completion_stays_light():
    got, out = imported([], env={"_MSSDIAG_COMPLETE": "complete_bash", "COMP_WORDS": "mssdiag pa",
                                 "COMP_CWORD": "1"})
    assert "parse" in out.split()
    assert not {"rich", "pydantic", "tabulate", "scapy", "parsers"} & set(got), got
    got, out = imported([], env={"_MSSDIAG_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "mssdiag parse --o"})
    assert "Read every dump as this OS" in out and "windows" in out        # the option help, names filled in


def test_version_constant_is_the_package_version():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert toolkit.__version__ == cfg["metadata"]["version"]
    assert toolkit.__version__ == installed_version("mssdiag")


def test_only_the_named_command_is_built():
    from toolkit.cli import app, startup

    names = lambda view: {startup._name(i) for i in view.registered_commands + view.registered_groups}  # noqa: E731
    everything = names(app)
    assert {"parse", "diff", "calc", "probe", "triage"} <= everything
    assert names(startup._selected(app, ["calc", "mss"])) == {"calc"}
    assert names(startup._selected(app, ["diff", "a", "b"])) == {"diff"}
    assert names(startup._selected(app, ["--version"])) == set()
    for args in ([], ["--help"], ["pars", "x"], ["-h", "parse"]):
        assert names(startup._selected(app, args)) == everything, args
    os.environ["_MSSDIAG_COMPLETE"] = "complete_bash"
    try:
        assert names(startup._selected(app, ["calc"])) == everything
    finally:
        del os.environ["_MSSDIAG_COMPLETE"]


def _params():
    """Every parameter of the full command tree, lightened, by (command, name)."""
    from toolkit.cli import app, startup

    found = {}

    def walk(cmd, path):
        for p in cmd.params:
            found[(path, p.name)] = p
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, f"{path} {name}")
    walk(startup.command(app, []), "mssdiag")
    return found


VALUES = {int: ["1500", "0", "7", "012", " 4", "1_2", "-4", "x", 3, "99999999999999999999"],
          float: ["100", "0.5", "12.25", "0", "1e3", "inf", " 2", ".5", "5.", 100.0, 1, "x"],
          str: ["abc", "", "\udcff.txt", "0.5"],
          bool: [True, False, "true", "0"]}


def test_plain_conversion_equals_typers():
    """The values converted without pydantic come out exactly as typer's conversion gives
    them; every other value gets typer's own result or error."""
    from typer import BadParameter

    from toolkit.cli.startup import _Plain

    params = _params()
    kinds = {}
    for key, p in params.items():
        plain = p.get_runtime_param()
        if isinstance(plain, _Plain):
            kinds.setdefault((plain.kind, plain.many), key)
    assert {(int, False), (float, False), (str, False), (bool, False), (str, True)} <= set(kinds)
    for (kind, many), key in kinds.items():
        p = params[key]
        typers = type(p).get_runtime_param(p)
        assert not isinstance(typers, _Plain)
        for value in VALUES[kind]:
            value = [value, value] if many else value
            outcome = []
            for runtime in (p.get_runtime_param(), typers):
                try:
                    got = runtime.coerce(value, param=p, ctx=None)
                    outcome.append((type(got), got))
                except BadParameter as exc:
                    outcome.append(("error", exc.format_message()))
            assert outcome[0] == outcome[1], (key, value, outcome)
        assert p.get_runtime_param().coerce(None, param=p, ctx=None) == typers.coerce(None, param=p, ctx=None)


EXIT = """
import atexit, gc, os, sys, threading, time
sys.argv = ["mssdiag"] + sys.argv[2:]


how = os.environ["HOW"]
if how == "atexit":
    atexit.register(lambda: os.write(2, f"atexit ran, gc on {gc.isenabled()}, frozen {gc.get_freeze_count() > 0}\\n".encode()))
elif how == "thread":
    def outlive():              # alive until the main thread has finished, however long the command takes
        while threading.main_thread().is_alive():
            time.sleep(0.01)
        os.write(2, b"thread finished\\n")
    threading.Thread(target=outlive).start()
from toolkit.entry import main
main()
"""


@pytest.mark.parametrize("how", ["plain", "atexit", "thread"])
@pytest.mark.parametrize("args, code", [(["calc", "mss", "--mtu", "1500", "--json"], 0),
                                        (["calc", "mss", "--mtu", "x"], 2),
                                        (["parse", str(ROOT / "no-such-dump.txt"), "--json"], 1)])
def test_a_finished_run_skips_teardown_only_when_nothing_needs_it(how, args, code):
    """After the command, entry ends the process at once (no module teardown, no garbage
    collection) with the command's output flushed and its exit status; with an atexit
    handler or another thread alive it leaves the normal way, which runs the one and
    waits for the other."""
    # -v: the interpreter's teardown says what it clears ("# cleanup[2] removing ...")
    done = subprocess.run([sys.executable, "-v", "-c", EXIT, "x", *args], cwd=str(ROOT), capture_output=True, text=True,
                          env=dict(os.environ, HOW=how), timeout=120)
    assert done.returncode == code, done.stderr
    if code == 0:
        assert json.loads(done.stdout)["mss"] == 1460
    else:
        assert any(line.startswith("mssdiag: ") for line in done.stderr.splitlines()), done.stderr
        assert "Traceback" not in done.stderr, done.stderr
    assert ("# cleanup[" in done.stderr) == (how != "plain"), done.stderr[-2000:]
    if how == "atexit":
        assert "atexit ran, gc on True, frozen True" in done.stderr
    if how == "thread":
        assert "thread finished" in done.stderr
