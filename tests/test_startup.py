"""What the `mssdiag` command loads: scapy (the prober's packets) and ansible (the fleet) are
imported only by the commands that send packets or run playbooks, never at start-up, by
help, shell completion or the offline commands; parsing a dump loads no evidence reader and
compiles few of the parsers' patterns; and the version it prints is the package's."""
from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
from importlib.metadata import version as installed_version
from pathlib import Path

import pytest

import toolkit

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "cases" / "demo"
SMALL = DEMO / "vos-host" / "netstat-stcp.txt"
HEAVY = ("scapy", "ansible")

RUN = """
import atexit, json, sys
sys.argv = ["mssdiag"] + json.loads(sys.argv[1])
atexit.register(lambda: print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(%r))), file=sys.stderr))
from toolkit.entry import main
main()
""" % (HEAVY,)


def imported(args, env=None):
    """The heavy packages a run of `mssdiag ARGS` imported, and the run's stdout."""
    done = subprocess.run([sys.executable, "-c", RUN, json.dumps(args)], cwd=str(ROOT), capture_output=True,
                          text=True, env=dict(os.environ, **(env or {})), timeout=120)
    return json.loads(done.stderr.strip().splitlines()[-1]), done.stdout


@pytest.mark.parametrize("args", [
    ["--version"],
    ["--help"],
    ["probe", "--help"],
    ["fleet", "collect", "--help"],
    ["calc", "mss", "--mtu", "1500"],
    ["parse", str(SMALL)],
    ["parse", str(SMALL), "--json"],
    ["diff", str(SMALL)],
    ["triage", str(DEMO), "--json"],
    ["triage", str(DEMO), "--format", "html"],
], ids=lambda a: " ".join(a[:2]))
def test_start_up_help_and_offline_commands_import_neither_scapy_nor_ansible(args):
    got, out = imported(args)
    assert out.strip(), "the command printed nothing"
    assert got == [], f"mssdiag {' '.join(args)} imported {got}"


def test_tab_completion_imports_neither_scapy_nor_ansible():
    got, out = imported([], env={"_MSSDIAG_COMPLETE": "complete_bash", "COMP_WORDS": "mssdiag pa",
                                 "COMP_CWORD": "1"})
    assert "parse" in out.split()
    assert got == []


def test_version_constant_is_the_package_version():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert toolkit.__version__ == cfg["metadata"]["version"]
    assert toolkit.__version__ == installed_version("mssdiag")
    done = subprocess.run([sys.executable, "-m", "toolkit", "--version"], cwd=str(ROOT), capture_output=True,
                          text=True, timeout=60)
    assert done.stdout == f"mssdiag {toolkit.__version__}\n" and done.returncode == 0


READERS = ("sockets", "iproute", "routecache", "iplink", "vpnconf", "containernet", "mssclamp")
PATTERNS = """
import atexit, gc, json, sys
sys.argv = ["mssdiag", "parse", sys.argv[1]]
from parsers.lazyre import lazy


def report():
    patterns = [o for o in gc.get_objects() if isinstance(o, lazy)]
    print(json.dumps({"readers": sorted(m for m in sys.modules if m.split(".")[-1] in %r),
                      "compiled": sum("match" in vars(o) for o in patterns), "patterns": len(patterns)}),
          file=sys.stderr)


atexit.register(report)
from toolkit.entry import main
main()
""" % (READERS,)


def loaded(path):
    done = subprocess.run([sys.executable, "-c", PATTERNS, str(path)], cwd=str(ROOT), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_parsing_a_dump_loads_no_evidence_reader_and_compiles_few_patterns():
    got = loaded(SMALL)
    assert got["readers"] == []
    assert got["patterns"] > 150 and got["compiled"] < got["patterns"] / 4, got


def test_a_socket_table_loads_its_reader():
    got = loaded(ROOT / "fixtures" / "evidence" / "lab-drop-ss-tin.txt")
    assert "parsers.sockets" in got["readers"], got


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping CAP_NET_RAW from a root process needs root")
def test_a_probe_without_raw_sockets_never_loads_scapy():
    """Without CAP_NET_RAW the prober says why (and falls back) before loading scapy."""
    code = ("import sys; from toolkit.probe.runner import raw_allowed; "
            "print(raw_allowed(), 'scapy' in sys.modules)")
    done = subprocess.run(["setpriv", "--bounding-set=-net_raw", "--inh-caps=-net_raw", sys.executable, "-c", code],
                          cwd=str(ROOT), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "no CAP_NET_RAW (not root) False"
