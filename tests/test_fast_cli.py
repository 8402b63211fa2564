"""The fast path (toolkit/commands/fast.py): `--version` and the commands toolkit/commands/spec.py
lists run without typer, with exactly the values, output, errors and exit status of the typer
path; the spec is what the typer app says; whatever the fast path is unsure of goes to typer."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "cases" / "demo" / "vos-host"
SMALL = str(DEMO / "netstat-stcp.txt")
FIXTURES = sorted((ROOT / "fixtures" / "netstat").glob("*/*.txt"))
LINUX = str(next(p for p in FIXTURES if p.parent.name == "linux"))
WINDOWS = str(next(p for p in FIXTURES if p.parent.name == "windows"))
FRAMEWORK = ("typer", "click", "rich", "pydantic")

# The run of a command line, either way: the console script's entry (the fast path when it
# can) or the typer CLI itself; the framework modules the run imported go to a file.
RUN = """
import atexit, json, sys
way, args, report = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
sys.argv = ["mssdiag"] + args
def imported():
    with open(report, "w") as out:
        out.write(json.dumps(sorted(m for m in {framework} if m in sys.modules)))
atexit.register(imported)
if way == "entry":
    from toolkit.entry import main
else:
    from toolkit.cli import main
main()
""".format(framework=FRAMEWORK)


def run(way, args, stdin=b""):
    """(exit status, stdout, stderr, framework modules imported) of `mssdiag ARGS`, `way`:
    "entry" (the console script) or "typer" (the typer CLI, never the fast path)."""
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".json") as report:
        env = dict(os.environ, COLUMNS="80", SOURCE_DATE_EPOCH="1700000000")       # a fixed report date
        done = subprocess.run([sys.executable, "-c", RUN, way, json.dumps(args), report.name], cwd=str(ROOT),
                              input=stdin, capture_output=True, timeout=120, env=env)
        imported = json.loads(report.read() or "null")
    return done.returncode, done.stdout, done.stderr, imported


# Command lines the fast path must take (typer not imported) ...
FAST = [
    ["--version"], ["-V"],
    ["parse", SMALL], ["parse", SMALL, "--json"], ["parse", "--json", SMALL], ["parse", SMALL, "-f", "jsonl"],
    ["parse", SMALL, "--format=json"], ["parse", SMALL, "--format", "json", "--format", "table"],
    ["parse", SMALL, LINUX, "-q", "--jobs", "2"], ["parse", SMALL, "-j", "0", "--json"],
    ["parse", SMALL, "--host", "web1", "--json"], ["parse", SMALL, "--host=", "--json"],
    ["parse", SMALL, "--host", "--json"],                       # click takes `--json` as --host's value
    ["parse", "-", "--json"], ["parse", SMALL, "-", "-f", "jsonl"],
    ["parse", SMALL, "--format", "bad"], ["parse", SMALL, "--os", "nope"], ["parse", WINDOWS, "--os", "linux"],
    ["parse", SMALL, "--os", "vos", "--json"], ["parse", str(ROOT / "no-such-file.txt")],
    ["parse", str(ROOT / "no-such-file.txt"), SMALL, "--json"], ["parse", str(DEMO)],
    ["parse", SMALL, "--json", "--json"], ["parse", SMALL, "--jobs", "3"], ["parse", "caf\udce9.txt", "--host", "\u202eh"],
    ["parse", SMALL, "--os", "\x1b[2J", "--json"],
    ["diff", SMALL], ["diff", SMALL, "--json"], ["diff", SMALL, LINUX, "-f", "jsonl"], ["diff", LINUX],
    ["diff", SMALL, "--format", "nope"],
    ["calc", "mss"], ["calc", "mss", "--mtu", "1500", "--encap", "pppoe"], ["calc", "mss", "--mtu=9000", "--json"],
    ["calc", "mss", "--mtu", "-5"], ["calc", "mss", "--mtu", "1500", "--encap", "vlan,bogus"],
    ["calc", "mss", "--family", "ipv6", "--tcp-options", "12", "--ip-options", "4", "--json"],
    ["calc", "mss", "--ip-options", "3"], ["calc", "mss", "--mtu", "40"],
    ["calc", "transfer", "--mss", "536,1460", "--size", "1MB"], ["calc", "transfer", "--mss", "1460", "--json"],
    ["calc", "transfer", "--mss", "536", "--window", "64k", "--ack-every", "1"],
    ["calc", "transfer", "--mss", "0"], ["calc", "transfer", "--mss", "536", "--ack-every", "0"],
    ["calc", "bdp", "--bandwidth", "10G", "--rtt", "20ms"], ["calc", "bdp", "--bandwidth", "1G", "--rtt", "x"],
    ["calc", "bdp", "--bandwidth", "100M", "--rtt", "0.05s", "--factor", "4", "--json"],
    ["calc", "bdp", "--bandwidth", "10G", "--rtt", "20ms", "--factor", "0"],
    ["calc", "mathis", "--mss", "1460", "--rtt", "50ms", "--loss", "0.0001"],
    ["calc", "mathis", "--mss", "1460", "--rtt", "50ms", "--loss", "0.01%", "--json"],
    ["triage", str(DEMO)], ["triage", str(DEMO), "--json"], ["triage", str(DEMO), "--format", "md"],
    ["triage", str(DEMO), "--os", "vos", "--release", "14.6", "--peer", "non-local"], ["triage", str(DEMO), "-f", "x"],
    ["triage", str(DEMO), "--peer", "far"], ["triage", str(DEMO), "--icmp-wait", "200"],
    ["triage", str(DEMO), "--icmp-wait", "2.5", "--port", "0"], ["triage"],
    ["triage", str(DEMO), "--bandwidth", "10G", "--rtt", "20ms", "--loss", "0.0001", "--mtu", "1500", "--json"],
    ["triage", str(DEMO), "-o", str(ROOT / "no-such-dir" / "report.md"), "--format", "md"],
    ["triage", SMALL, "--host", "web1", "--json"],
]

# ... and command lines it must leave to typer (help, completion, every usage error typer words)
TYPER = [
    [], ["--help"], ["-h"], ["--version", "parse"], ["parse"], ["parse", "--help"], ["parse", SMALL, "-h"],
    ["parse", SMALL, "--bogus"], ["parse", SMALL, "--jso"], ["parse", SMALL, "--json=1"], ["parse", SMALL, "-qj", "2"],
    ["parse", SMALL, "-j4"], ["parse", SMALL, "-j=4"], ["parse", SMALL, "--jobs", "-1"], ["parse", SMALL, "--jobs", "x"],
    ["parse", SMALL, "--jobs", " 4"], ["parse", SMALL, "--jobs", "1_0"], ["parse", SMALL, "--jobs", "1e3"],
    ["parse", SMALL, "--jobs", "007"],
    ["parse", SMALL, "--jobs"], ["parse", SMALL, "--host"], ["parse", "--", SMALL], ["parse", SMALL, "--", "-x"],
    ["parse", "-x"], ["parse", SMALL, "-5"], ["pars", SMALL], ["calc"], ["calc", "mss", "extra"],
    ["calc", "mss", "--ip-options", "-4"], ["calc", "transfer"], ["calc", "bdp", "--bandwidth", "10G"],
    ["calc", "--help", "mss"], ["calc", "mss", "--help"], ["calc", "mss", "--mtu"], ["calc", "nope"],
    ["triage", str(DEMO), "--icmp-wait", "1e3"], ["triage", str(DEMO), "--icmp-wait", "-1"],
]


def _same(args, stdin=b""):
    fast, slow = run("entry", args, stdin), run("typer", args, stdin)
    assert fast[:3] == slow[:3], (args, fast, slow)
    assert "typer" in slow[3], slow[3]                      # the typer path did use typer
    return fast


@pytest.mark.parametrize("args", FAST, ids=lambda a: " ".join(Path(x).name if "/" in x else x for x in a) or "-")
def test_fast_path_is_taken_and_answers_as_typer(args):
    code, out, err, imported = _same(args, stdin=Path(SMALL).read_bytes() if "-" in args else b"")
    assert imported == [], f"mssdiag {' '.join(args)} imported {imported}"
    assert out or err


@pytest.mark.parametrize("args", TYPER, ids=lambda a: " ".join(Path(x).name if "/" in x else x for x in a) or "-")
def test_what_the_fast_path_is_unsure_of_goes_to_typer(args):
    code, out, err, imported = _same(args)
    assert "typer" in imported, f"mssdiag {' '.join(args)}: the fast path answered"


def test_completion_goes_to_typer():
    env = {"_MSSDIAG_COMPLETE": "complete_bash", "COMP_WORDS": "mssdiag parse --j", "COMP_CWORD": "2"}
    from toolkit.commands.fast import plan
    assert plan(["parse", SMALL, "--json"], env) is None
    assert plan(["parse", SMALL, "--json"], {}) is not None


def test_spec_is_generated_from_the_typer_app():
    """toolkit/commands/spec.py is what scripts/fast_spec.py makes from the app now (rerun it:
    `make fast-spec`), and each command's work takes exactly the typer command's parameters."""
    import inspect

    from toolkit.cli import app
    from toolkit.cli.startup import describe
    from toolkit.commands import spec

    assert (ROOT / "toolkit" / "commands" / "spec.py").read_text() == describe(app)
    assert {"parse", "diff", "triage", "calc mss", "calc transfer", "calc bdp", "calc mathis"} <= set(spec.COMMANDS)
    for name, found in spec.COMMANDS.items():
        module, _, attr = found["work"].partition(":")
        work = getattr(__import__(module, fromlist=[attr]), attr)
        assert list(inspect.signature(work).parameters) == list(found["params"]) or \
            set(inspect.signature(work).parameters) == set(found["params"]), name


def _typer_values(app, words, args):
    """The keyword arguments the typer CLI passes to a command's work for `args` (or the
    name of the error it raises instead)."""
    from toolkit.cli import startup

    root = startup.command(app, list(words))
    command = root
    for word in words:
        command = command.commands[word]
    signature = startup.plain_part(command.callback)
    got = {}
    saved = signature.plain_work
    signature.plain_work = lambda **values: got.update(values)
    try:
        root.main(list(words) + list(args), prog_name="mssdiag", standalone_mode=False)
    except Exception as exc:          # usage errors: the fast path must have left these to typer
        return type(exc).__name__
    finally:
        signature.plain_work = saved
    return got


VALUE_CASES = {
    "parse": [[SMALL], ["a", "b", "-"], ["a", "--json", "-q", "-j", "0", "--host", "h", "--os", "vos", "-f", "jsonl"],
              ["a", "--host=x=y"], ["a", "--host", "-"], ["a", "--host", ""], ["a", "--jobs", "12"],
              ["a", "--jobs", "-2"], ["a", "--jobs", "+2"], ["a", "--jobs", "٣"], ["a", "--jobs", "0x1"], ["a", "-j", "00"],
              ["a", "--os", "vos", "--os", "linux"], ["a", "--format"], ["a", "--json=yes"], ["-"], ["--json"], [],
              ["a", "--no-json"], ["a", "--", "b"], ["a", "-qq"], ["a", "\udcff.txt"], ["a", "--host", "\udcff"]],
    "calc mss": [[], ["--mtu", "1500"], ["--mtu", "-1500"], ["--ip-options", "4"], ["--ip-options", "4.0"],
                 ["--ip-options", "99999999999999999999"], ["--tcp-options", "012"], ["--json", "--json"], ["x"]],
    "calc transfer": [["--mss", "536"], [], ["--mss", "536", "--window", "64k"], ["--mss", "1", "--ack-every", "3"]],
    "triage": [[], ["d"], ["d", "-t", "a", "--target", "b", "-t=c"], ["d", "-t", "a", "-t", "a"], ["d", "--icmp-wait", "2"],
               ["d", "--icmp-wait", "2.50"], ["d", "--icmp-wait", ".5"], ["d", "--icmp-wait", "5."],
               ["d", "--icmp-wait", "1e3"], ["d", "--icmp-wait", "inf"], ["d", "--probe-targets", "-o", "x"],
               ["--hosts", "h.toml"], ["d", "-p", "21,80", "--send", "x"]],
}


@pytest.mark.parametrize("command", sorted(VALUE_CASES))
def test_values_equal_typers(command):
    """For each command line, the fast path either leaves it to typer or calls the work with
    exactly the values (types included) the typer CLI passes it."""
    from toolkit.cli import app
    from toolkit.commands import fast, spec

    taken = 0
    for args in VALUE_CASES[command]:
        mine = fast._read(spec.COMMANDS[command], args)
        theirs = _typer_values(app, command.split(), args)
        if mine is None:
            continue
        taken += 1
        assert isinstance(theirs, dict), (command, args, theirs)
        assert {k: (type(v), v) for k, v in mine.items()} == {k: (type(v), v) for k, v in theirs.items()}, args
    assert taken >= 3, command


# ---------------------------------------------------------------- help without typer

HELP = [["--help"], ["-h"], ["parse", "--help"], ["probe", "--help"], ["calc", "-h"], ["calc", "mss", "--help"],
        ["triage", "-h"], ["lab", "up", "--help"], ["audit", "--help"]]


@pytest.fixture(scope="module")
def help_cache():
    """toolkit/commands/_help.py made for this checkout as it is now (make does it at install;
    an edit since then makes the fast path leave help to typer until it is made again)."""
    from toolkit.commands import fast
    if fast._help([], {}) is None:
        subprocess.run([sys.executable, str(ROOT / "scripts" / "help_cache.py")], check=True, timeout=300)
        import importlib
        if "toolkit.commands._help" in sys.modules:
            importlib.reload(sys.modules["toolkit.commands._help"])
    assert fast._help([], {}) is not None or os.isatty(0) or os.isatty(1) or os.isatty(2)


def _help_run(way, args, env, stdout=subprocess.PIPE):
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".json") as report:
        done = subprocess.run([sys.executable, "-c", RUN, way, json.dumps(args), report.name], cwd=str(ROOT),
                              stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, timeout=120,
                              env={k: v for k, v in env.items() if not k.endswith("_COMPLETE")})
        return done.returncode, done.stdout, done.stderr, json.loads(report.read() or "null")


@pytest.mark.parametrize("args", HELP, ids=" ".join)
def test_help_without_a_terminal_is_typers_without_typer(help_cache, args):
    from toolkit.cli.startup import HELP_ENV
    env = {k: v for k, v in os.environ.items() if k not in HELP_ENV}
    for extra in ({}, {"TERM": "xterm-256color", "COLORTERM": "truecolor"}, {"TERM": "dumb"}):
        fast = _help_run("entry", args, dict(env, **extra))
        slow = _help_run("typer", args, dict(env, **extra))
        assert fast[:3] == slow[:3] and fast[0] == 0 and b"Usage: mssdiag" in fast[1], (args, extra)
        assert fast[3] == [] and "typer" in slow[3]


def test_help_is_typers_when_its_output_could_differ(help_cache):
    """A variable rich reads, or a terminal on any standard stream: typer renders the help."""
    import pty

    from toolkit.cli.startup import HELP_ENV
    env = {k: v for k, v in os.environ.items() if k not in HELP_ENV}
    for extra in ({"COLUMNS": "100"}, {"NO_COLOR": "1"}, {"TERMINAL_WIDTH": "60"}):
        fast = _help_run("entry", ["parse", "--help"], dict(env, **extra))
        assert "typer" in fast[3] and fast[:3] == _help_run("typer", ["parse", "--help"], dict(env, **extra))[:3]
    primary, secondary = pty.openpty()
    try:
        fast = _help_run("entry", ["--help"], env, stdout=secondary)
    finally:
        os.close(secondary)
        os.close(primary)
    assert "typer" in fast[3] and fast[0] == 0


def test_help_made_from_changed_files_is_not_used(help_cache):
    """Any file the help was made from that changed since (its size or time): typer renders it."""
    from toolkit.commands import _help as made, fast
    assert fast._help(["parse"], {}) is not None
    saved = list(made.STAMP)
    try:
        path, size, mtime = next(s for s in made.STAMP if s[0].endswith(os.path.join("toolkit", "cli", "offline.py")))
        made.STAMP[made.STAMP.index((path, size, mtime))] = (path, size, mtime - 1)
        assert fast._help(["parse"], {}) is None
        made.STAMP[:] = saved
        assert fast._help(["parse"], {"COLUMNS": "80"}) is None
        assert fast._help(["nope"], {}) is None and fast._help(["parse", "x"], {}) is None
    finally:
        made.STAMP[:] = saved


def test_help_cache_holds_what_typer_prints_now(help_cache, tmp_path):
    """The cache holds every command's help exactly as a fresh rendering gives it."""
    from toolkit.commands import _help as made
    subprocess.run([sys.executable, str(ROOT / "scripts" / "help_cache.py"), str(tmp_path / "fresh.py")],
                   check=True, timeout=300)
    fresh: dict = {}
    exec((tmp_path / "fresh.py").read_text(), fresh)
    assert fresh["HELP"] == made.HELP and {"", "parse", "calc mss", "probe", "lab up"} <= set(made.HELP)


def _unwritable_run(way, args, stdout):
    import tempfile

    from toolkit.cli.startup import HELP_ENV
    env = {k: v for k, v in os.environ.items() if k not in HELP_ENV and not k.endswith("_COMPLETE")}
    with tempfile.NamedTemporaryFile("r", suffix=".json") as report:
        done = subprocess.run([sys.executable, "-c", RUN, way, json.dumps(args), report.name], cwd=str(ROOT),
                              stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, timeout=120, env=env)
        return done.returncode, done.stderr, json.loads(report.read() or "null")


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["parse", SMALL, "--json"], ["parse", SMALL],
                                  ["calc", "mss"], ["calc", "mss", "--json"], ["triage", str(DEMO), "--json"]],
                         ids=lambda a: " ".join(Path(x).name if "/" in x else x for x in a))
def test_an_unwritable_stdout_ends_as_on_the_typer_path(help_cache, args):
    """A full disk, and a reader that left before the first byte: the same line and status."""
    for where in ("full", "pipe"):
        outcomes = []
        for way in ("entry", "typer"):
            if where == "full":
                with open("/dev/full", "w") as out:
                    outcomes.append(_unwritable_run(way, args, out))
            else:
                read, write = os.pipe()
                os.close(read)
                try:
                    outcomes.append(_unwritable_run(way, args, write))
                finally:
                    os.close(write)
        fast, slow = outcomes
        assert fast[:2] == slow[:2] and fast[0] != 0, (where, fast, slow)
        assert fast[2] == [] and "typer" in slow[2]


@pytest.mark.parametrize("args, absent", [
    (["--version"], {"typing", "re", "json", "enum", "toolkit.output"}),
    (["--help"], {"typing", "re", "json", "enum", "toolkit.output"}),
], ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_the_quickest_runs_stay_small(help_cache, args, absent):
    """`--version` and help import no more than the interpreter's own start does, `calc
    --json` not even `typing` (docs/benchmarks.md: each is a few ms)."""
    from toolkit.cli.startup import HELP_ENV
    code = (f"import atexit, sys; sys.argv = ['mssdiag'] + {args!r}; "
            f"atexit.register(lambda: print(sorted(m for m in {sorted(absent)!r} if m in sys.modules), file=sys.stderr)); "
            "from toolkit.entry import main; main()")
    env = {k: v for k, v in os.environ.items() if k not in HELP_ENV and not k.endswith("_COMPLETE")}
    done = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr


def test_only_commands_under_inert_group_callbacks_are_described():
    """A group callback that does work would be skipped by the fast path: its commands are
    left out of the spec unless the callback is marked `inert`."""
    import typer

    from toolkit.cli.startup import describe, inert, plain
    from toolkit.commands import offline

    def app_with(root_marker):
        app = typer.Typer()

        @app.callback()
        @root_marker
        def root(version: bool = typer.Option(False, "--version", is_eager=True)) -> None:
            """A root."""

        @app.command("parse")
        @plain(offline.parse)
        def parse(paths: List[str] = typer.Argument(...), as_json: bool = typer.Option(False, "--json")) -> None:
            """Parse."""

        @app.command("other")
        def other() -> None:
            """Not plain."""
        return app

    spec: dict = {}
    exec(describe(app_with(inert)), spec)
    assert set(spec["COMMANDS"]) == {"parse"} and spec["COMMANDS"]["parse"]["options"] == {"--json": ("as_json", True)}
    exec(describe(app_with(lambda f: f)), spec)
    assert spec["COMMANDS"] == {}
