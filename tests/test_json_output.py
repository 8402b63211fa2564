"""JSON output (toolkit/output.py `dumps`) is byte for byte what `json.dumps(obj,
ensure_ascii=False)` then the \\u escapes of C1 and bidi controls wrote before it was made
quicker: over every fixture's snapshots and diffs, every code point, awkward values
(floats, NaN, big ints, keys that are not strings, subclasses) and through the CLI."""
from __future__ import annotations

import json
import random
import struct
import subprocess
import sys
from collections import OrderedDict, namedtuple
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path

import pytest

from toolkit import output

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def stdlib(obj, **kw) -> str:
    """What `dumps` wrote before: the standard library's text, then the escapes."""
    text = json.dumps(obj, ensure_ascii=False, **kw)
    return output._JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def fast(obj):
    """What `dumps` writes on one line."""
    return output.dumps(obj)


def fixture_files():
    return sorted(p for p in (FIXTURES / "netstat").rglob("*") if p.is_file() and p.suffix != ".json"
                  and p.name != "SOURCES.md") + sorted(p for p in (FIXTURES / "cases").rglob("*") if p.is_file())


def test_every_fixture_snapshot_and_diff_is_the_same_text_either_way():
    import parsers
    from parsers.text import open_text
    from toolkit import hosts

    checked = 0
    snaps = []
    for path in fixture_files():
        warnings = []
        try:
            with open(path, "rb") as fh:
                got = list(parsers.iter_parse(open_text(fh), source=str(path), warn=warnings.append))
        except (parsers.ParseError, OSError, UnicodeError):
            continue
        for snap in got:
            snap.host = hosts.identify(snap)[0]
            record = snap.to_dict()
            assert fast(record) == stdlib(record), path
            assert output.dumps(record) == stdlib(record)
            checked += 1
        snaps.extend(got)
    assert checked > 100
    deltas = hosts.deltas(snaps)
    assert deltas
    floats = 0
    for d in deltas:
        record = d.to_dict()
        assert output.dumps(record) == stdlib(record)
        floats += "." in output.dumps(record)
    assert floats, "no diff with a float: the float path went untested"


def test_every_code_point_is_written_and_escaped_the_same():
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(chars), 4096):
        chunk = "".join(chars[i:i + 4096])
        obj = {chunk: [chunk, {"k": chunk}]}
        assert fast(obj) == stdlib(obj), hex(ord(chunk[0]))
    assert (output.dumps(["\x85\u202e\u2028\x7f\x1b\n\t\"\\/"])
            == '["\\u0085\\u202e\\u2028\\u007f\\u001b\\n\\t\\"\\\\/"]')


def test_floats_are_written_as_repr_writes_them():
    rng = random.Random(7)
    values = [0.0, -0.0, 1e-4, 9.999e-5, 1e-5, 1e15, 1e16, 9999999999999998.0, 1e22, 5e-324, 1.7976931348623157e308,
              float("nan"), float("inf"), -float("inf"), 0.1, 2.5, 100.0, 123456.789, 1 / 3]
    values += [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(20000)]
    values += [round(rng.random() * 10 ** rng.randint(-8, 20), rng.randint(0, 9)) for _ in range(20000)]
    for v in values:
        for obj in ({"rate": v, "n": 1}, [v], v):
            assert output.dumps(obj) == stdlib(obj), v
    assert output.dumps([float("nan"), 1e-5, 1e16]) == "[NaN, 1e-05, 1e+16]"


class Colour(str, Enum):
    RED = "red"


@dataclass
class Point:
    x: int


@pytest.mark.parametrize("obj", [
    {}, [], {"a": {}, "b": [], "c": [{}], "d": [[]]}, [[1, [2, [3, {}]]]], (1, 2), {"t": (1, (2,))},
    None, True, False, 0, -1, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63 - 1, 10 ** 30, "x", "",
    {1: "int key"}, {None: 1, True: 2, 1.5: 3}, OrderedDict(b=1, a=2), {"e": Colour.RED}, [Colour.RED],
    {"s": "lone \ud800 surrogate"}, [namedtuple("Pair", "a b")(1, 2.5)], ["\x00\x1f\x7f"],
    {"deep": json.loads("[" * 300 + "]" * 300)},
    ["a, b: c", {"k,:\n": "v\n,  x"}], {"nested": {"x": {"y": {"z": [1, 2.5, None, "s"]}}}},
])
def test_awkward_values_are_written_as_the_standard_library_writes_them(obj):
    assert output.dumps(obj) == stdlib(obj)


@pytest.mark.parametrize("obj", [{"p": Point(1)}, {"when": datetime(2026, 1, 1)}, {"s": {1, 2}}, object()])
def test_what_the_standard_library_refuses_is_still_refused(obj):
    with pytest.raises(TypeError) as expected:
        json.dumps(obj)
    with pytest.raises(TypeError) as got:
        output.dumps(obj)
    assert str(got.value) == str(expected.value)


def test_a_circular_value_is_refused_and_leaves_nothing_behind():
    loop = {"a": 1}
    loop["self"] = loop
    with pytest.raises(ValueError, match="Circular reference"):
        output.dumps(loop)
    with pytest.raises(TypeError):
        output.dumps([{"x": object()}])
    shared = [1]
    assert output.dumps({"a": shared, "b": shared}) == '{"a": [1], "b": [1]}'     # not a loop


def test_indented_and_compact_forms_stay_the_standard_librarys():
    obj = {"a": [1, 2.5e-7, {"b": "\u202e"}], "c": None}
    assert output.dumps(obj, indent=2) == stdlib(obj, indent=2)
    assert output.dumps(obj, separators=(",", ":")) == stdlib(obj, separators=(",", ":"))


# The CLI as it wrote JSON before: json.dumps for every value (no shape templates), each
# record written alone.
BEFORE = """
import json, sys
from toolkit import output, snapjson
snapjson.line = lambda snap: None
def dumps(obj, indent=None, separators=None, level=0):
    text = json.dumps(obj, ensure_ascii=False, indent=indent, separators=separators)
    text = text.replace("\\n", "\\n" + " " * indent * level) if level else text
    return output._JSON_UNSAFE.sub(lambda m: "\\\\u%04x" % ord(m.group(0)), text)
output.dumps = dumps
output._Batch.SIZE = 0
sys.argv = ["mssdiag"] + sys.argv[1:]
from toolkit.entry import main
main()
"""


@pytest.mark.parametrize("args", [
    ["parse", str(FIXTURES), "--format", "jsonl"],
    ["parse", str(FIXTURES / "netstat"), "--json"],
    ["diff", str(FIXTURES), "--json"],
    ["diff", str(FIXTURES / "cases"), "--format", "jsonl"],
])
def test_commands_print_the_same_bytes_as_with_json_dumps(args):
    now = subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, timeout=300)
    before = subprocess.run([sys.executable, "-c", BEFORE, *args], cwd=ROOT, capture_output=True, timeout=300)
    assert now.returncode == before.returncode
    assert now.stdout == before.stdout and now.stderr == before.stderr
    assert len(now.stdout) > 1000


def test_records_are_written_whole_and_in_order_in_batches(tmp_path):
    out = tmp_path / "out.jsonl"
    items = [{"i": i, "pad": "x" * (i % 300)} for i in range(5000)]
    with open(out, "w") as fh:
        assert output.json_lines(iter(items), fh) == 5000
    assert [json.loads(line) for line in out.read_text().splitlines()] == items
    with open(out, "w") as fh:
        assert output.json_array(iter(items), fh) == 5000
    assert out.read_text() == "[\n" + ",\n".join(stdlib(i) for i in items) + "\n]\n"
    with open(out, "w") as fh:
        assert output.json_array(iter([]), fh) == 0
    assert out.read_text() == "[]\n"


# --- the indented form (triage --json, report json, capture --json): the C encoder, walked ---

def indented_forms():
    """Every fixture's triage document, each host alone as write_json writes it, and each
    snapshot's and diff's record: what the commands print with indent."""
    from toolkit import triage
    docs = []
    for folder in [FIXTURES / "cases", *sorted(p for p in (FIXTURES / "netstat").iterdir() if p.is_dir())]:
        hosts, _ = triage.gather([str(folder)], {})
        triage.run(hosts)
        docs.append(triage.document(hosts))
        docs += [h.to_dict() for h in hosts]
    return docs


def test_every_fixtures_triage_document_is_indented_as_json_dumps_does():
    docs = indented_forms()
    assert len(docs) > 50
    nested = 0
    for doc in docs:
        for indent in (2, 1, 4, "\t", 0):
            assert output.dumps(doc, indent=indent) == stdlib(doc, indent=indent)
        assert output.dumps(doc, indent=2, level=2) == stdlib(doc, indent=2).replace("\n", "\n    ")
        nested += output.dumps(doc, indent=2).count("\n          ") > 0
    assert nested > 10, "no deeply nested document: the walk went untested"


def test_every_code_point_is_indented_and_escaped_the_same():
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(chars), 4096):
        chunk = "".join(chars[i:i + 4096])
        obj = {chunk: [chunk, {"k": chunk, chunk[:9]: [chunk[9:20], {}]}], "n": [1, [chunk[:3]]]}
        assert output.dumps(obj, indent=2) == stdlib(obj, indent=2), hex(ord(chunk[0]))


@pytest.mark.parametrize("obj", [
    {}, [], {"a": {}, "b": [], "c": [{}], "d": [[]]}, [[1, [2, [3, {}]]]], (1, 2), {"t": (1, (2,))},
    None, True, False, 0, 2 ** 64, 1e16, float("nan"), "x", "", "\u202e\x85",
    {1: "int key"}, {None: 1, True: 2, False: [3], 1.5: {"x": 1}, 2: [4], float("inf"): [[]]},
    {1: {"a": 1}, "1": {"b": 2}}, OrderedDict(b={"x": 1}, a=[2]), {"e": [Colour.RED], Colour.RED: {"k": Colour.RED}},
    {"s": ["lone \ud800 surrogate", {"\ud800": 1}]}, [namedtuple("Pair", "a b")(1, [2.5])],
    {"deep": json.loads("[" * 300 + "1" + "]" * 300)}, {"deep": json.loads('{"a": ' * 200 + "{}" + "}" * 200)},
    ["a, b: c", {"k,:\n": ["v\n,  x", "]", "}", "[", "{"]}], {"x": [[], {}, [{}], 0.1, -0.0, 1e-05]},
    [{"a": 1}] * 5, {"mixed": [1, "two", None, True, 2.5, [3], {"four": 4}]},
])
def test_awkward_values_are_indented_as_the_standard_library_does(obj):
    for indent in (2, 0, 3, "\t", -1, " x "):
        assert output.dumps(obj, indent=indent) == stdlib(obj, indent=indent)
        pad = " " * indent if isinstance(indent, int) else indent
        for level in (1, 2, 5):      # nested that deep in a larger document (triage's hosts)
            assert output.dumps(obj, indent=indent, level=level) == \
                stdlib(obj, indent=indent).replace("\n", "\n" + pad * level), (indent, level)


@pytest.mark.parametrize("obj", [{"p": [Point(1)]}, {"a": {"when": datetime(2026, 1, 1)}}, [[{1, 2}]], [object()],
                                 {(1, 2): 3}, {"a": {(1, 2): [3]}}, [{"k": [1]}, {(1,): 2}]])
def test_what_the_standard_library_refuses_indented_is_still_refused(obj):
    with pytest.raises(TypeError) as expected:
        json.dumps(obj, indent=2)
    with pytest.raises(TypeError) as got:
        output.dumps(obj, indent=2)
    assert str(got.value) == str(expected.value)


def test_an_indented_circular_value_is_refused():
    loop = {"a": [1]}
    loop["b"] = [loop]
    with pytest.raises(ValueError, match="Circular reference"):
        output.dumps(loop, indent=2)
    shared = {"x": [1]}
    obj = {"a": shared, "b": [shared, shared]}
    assert output.dumps(obj, indent=2) == stdlib(obj, indent=2)     # shared, not a loop


def test_triage_json_is_the_standard_librarys_indented_text():
    now = subprocess.run([sys.executable, "-m", "toolkit", "triage", str(FIXTURES / "cases"), "--json"], cwd=ROOT,
                         capture_output=True, timeout=300)
    before = subprocess.run([sys.executable, "-c", BEFORE, "triage", str(FIXTURES / "cases"), "--json"], cwd=ROOT,
                            capture_output=True, timeout=300)
    strip = lambda b: b"\n".join(l for l in b.split(b"\n") if b'"generated_at"' not in l)   # noqa: E731
    assert now.returncode == before.returncode
    assert strip(now.stdout) == strip(before.stdout) and now.stderr == before.stderr
    assert len(now.stdout) > 10000
