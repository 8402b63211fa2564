"""The ahead-of-time regex cache (parsers/_regex.py, scripts/regex_cache.py): every pattern it
gives is the pattern `re.compile` gives, the fixtures read the same with it and without it,
and a cache written by another Python, or switched off, is not used."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NETSTAT = ROOT / "fixtures" / "netstat"
CASES = ROOT / "fixtures" / "cases"

# Runs `mssdiag ARGS` with the cache file PATH in place of parsers/_regex_built.py ("" = none);
# stderr's last line: how many patterns the run's cache held, how many it was asked for, and
# those of them re's compiler compiled (not found in the cache).
RUN = """
import atexit, importlib.util, json, sys
import re._compiler
real, seen = re._compiler.compile, set()
re._compiler.compile = lambda p, flags=0: seen.add(p) or real(p, flags)
path, args = sys.argv[1], json.loads(sys.argv[2])
if path:
    spec = importlib.util.spec_from_file_location("parsers._regex_built", path)
    built = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(built)
    sys.modules["parsers._regex_built"] = built
def report():
    from parsers import _regex
    missed = sorted(p for p, _ in _regex.asked if p in seen)
    print(json.dumps([len(_regex._built), len(_regex.asked), missed]), file=sys.stderr)
atexit.register(report)
sys.argv = ["mssdiag"] + args
from toolkit.entry import main
main()
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """A cache written now by the script, as make writes it (not the checkout's: that may be absent)."""
    path = tmp_path_factory.mktemp("regex") / "built.py"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "regex_cache.py"), str(path)], cwd=str(ROOT),
                   check=True, capture_output=True, timeout=120)
    return path


def loaded(path: Path) -> dict:
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return ns


def run(args, cache_path, env=None):
    done = subprocess.run([sys.executable, "-c", RUN, str(cache_path or ""), json.dumps(args)], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))
    *said, counts = done.stderr.splitlines()
    out = re.sub(r'"generated_at": "[^"]*"', '"generated_at": "(when)"', done.stdout)       # triage's clock
    return done.returncode, out, said, json.loads(counts)


def test_every_cached_pattern_is_the_pattern_re_compiles(cache):
    from parsers import _regex
    built = loaded(cache)
    assert built["KEY"] == _regex.KEY
    patterns = built["PATTERNS"]
    assert len(patterns) > 100                    # the parsers' patterns, lazy ones included
    _regex._built, saved = patterns, _regex._built
    try:
        for (pattern, flags) in patterns:
            got, want = _regex.compiled(pattern, flags), re.compile(pattern, flags)
            assert got is not want
            # Pattern equality is flags, pattern text and compiled code
            assert got == want, pattern
            assert (got.pattern, got.flags, got.groups, dict(got.groupindex)) == \
                (want.pattern, want.flags, want.groups, dict(want.groupindex)), pattern
    finally:
        _regex._built = saved


def test_the_hot_patterns_are_all_in_it(cache):
    """What `parse` of a small dump compiles all comes from the cache."""
    small = CASES / "demo" / "vos-host" / "netstat-stcp.txt"
    code, out, _, (held, asked, missed) = run(["parse", str(small), "--json"], cache)
    assert code == 0 and out
    assert held > 100 and asked > 100           # the lazy patterns of every parser are asked for at import
    assert missed == [], f"compiled by re, not taken from the cache: {missed}"
    # and without the cache they are compiled by re: the check above can fail
    assert len(run(["parse", str(small), "--json"], cache, env={"MSSDIAG_REGEX_CACHE": "0"})[3][2]) > 30


def commands():
    out = [["parse", str(NETSTAT), str(CASES), "--json"],
           ["parse", str(CASES)],
           ["diff", str(NETSTAT), str(CASES), "--json"],
           ["triage", str(CASES), "--json"]]
    # each OS's parser forced on its own dumps: every parser's (lazy) patterns used
    out += [["parse", "--os", d.name, str(d), "--json"] for d in sorted(NETSTAT.iterdir()) if d.is_dir()]
    return out


@pytest.mark.parametrize("args", commands(), ids=lambda a: " ".join(Path(x).name for x in a))
def test_fixtures_read_the_same_with_the_cache_and_without(cache, args):
    with_cache = run(args, cache)
    without = run(args, None, env={"MSSDIAG_REGEX_CACHE": "0"})
    assert with_cache[3][0] > 100 and not with_cache[3][2], "the cache was not used"
    assert without[3][0] == 0, "the cache was used though switched off"
    assert with_cache[1], "the command printed nothing"
    assert with_cache[:3] == without[:3]


def test_a_cache_from_another_python_is_not_used(cache, tmp_path):
    """A cache whose KEY is not this Python's is ignored whole, even for a pattern it holds
    (here with a wrong code, which would match nothing if it were used)."""
    built = loaded(cache)
    key, patterns = built["KEY"], built["PATTERNS"]
    digit = (r"\d", 0)
    assert digit in patterns
    # the code of `\d` swapped for the code of a pattern that matches only "x"
    wrong = dict(patterns)
    wrong[digit] = (patterns[digit][0], loaded_code("x"), 0, {}, (None,))
    for name, file_key, expect_cache in [("stale", ("3.11.0 (other build)",) + tuple(key[1:]), False),
                                         ("current", key, True)]:
        path = tmp_path / f"{name}.py"
        path.write_text(f"KEY = {tuple(file_key)!r}\nPATTERNS = {wrong!r}\n")
        check = ("import json, sys\n" + RUN.split("def report")[0] +
                 "from parsers import _regex\n"
                 "p = _regex.compiled(r'\\d')\n"
                 "print(json.dumps([len(_regex._built), bool(p.match('7')), bool(p.match('x'))]))\n")
        done = subprocess.run([sys.executable, "-c", check, str(path), "[]"], cwd=str(ROOT), capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        held, digit_matches, x_matches = json.loads(done.stdout)
        if expect_cache:       # the file is read when it is this Python's: the wrong code shows
            assert held and not digit_matches and x_matches
        else:                  # stale: ignored, `\d` compiled by re
            assert held == 0 and digit_matches and not x_matches


def loaded_code(pattern: str) -> bytes:
    """The cache's code bytes for PATTERN, compiled now."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import regex_cache
    finally:
        sys.path.pop(0)
    return regex_cache._arguments(pattern, 0)[1]


def test_the_cache_can_be_switched_off(cache):
    small = CASES / "demo" / "vos-host" / "netstat-stcp.txt"
    assert run(["parse", str(small), "--json"], cache, env={"MSSDIAG_REGEX_CACHE": "0"})[3][0] == 0


def test_parser_modules_compile_nothing_at_import_through_the_cache_either():
    """tests/test_startup.py watches re.compile; the patterns given to parsers._regex are
    compiled by re._compiler when the cache lacks them: at import, only text's and base's
    (and no lazy pattern is used at import)."""
    code = ("import sys, re._compiler as c\n"
            "seen = set()\n"
            "real = c.compile\n"
            "def spy(p, flags=0):\n"
            "    f = sys._getframe(1)\n"
            "    while f.f_globals.get('__name__') == 'parsers._regex':\n"
            "        f = f.f_back\n"
            "    seen.add(f.f_globals.get('__name__', ''))\n"
            "    return real(p, flags)\n"
            "c.compile = spy\n"
            "import parsers\n"
            "print(json.dumps(sorted(n for n in seen if n.startswith('parsers'))))\n")
    done = subprocess.run([sys.executable, "-c", "import json\n" + code], cwd=str(ROOT), capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, MSSDIAG_REGEX_CACHE="0"))
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) <= {"parsers.text", "parsers.base"}, done.stdout
    assert "parsers.text" in json.loads(done.stdout)         # the spy sees them: this test can fail
