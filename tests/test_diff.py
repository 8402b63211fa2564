"""Counter deltas: increases, rates, ratios, and counters that go down (wrap, reset)."""
import json
import subprocess
import sys

import parsers
from toolkit.hosts import WRAP32, deltas

VOS = """{date}
netstat -statistics -protocol ip
ip:
          {reqds}  ipReasmReqds
          {oks}  ipReasmOKs
           {fails}  ipReasmFails
"""


def vos(*rows):
    return "".join(VOS.format(date=d, reqds=r, oks=o, fails=f) for d, r, o, f in rows)


def test_increases_rates_and_ratios():
    snaps = parsers.parse(vos(("Sun Nov 22 09:00:00 UTC 2026", 92, 46, 0),
                              ("Sun Nov 22 09:30:00 UTC 2026", 96, 48, 1)))
    (d,) = deltas(snaps)
    assert d.elapsed_s == 1800
    assert d.ipv4["ReasmReqds"] == 4 and d.ipv4["ReasmOKs"] == 2 and d.ipv4["ReasmFails"] == 1
    assert d.ipv4["FragOKs"] is None, "a counter the dump never showed has no increase"
    assert d.per_hour("ipv4")["ReasmReqds"] == 8.0
    assert d.ratios("ipv4") == {"fragments_per_datagram": 2.0, "reasm_fail_share": round(1 / 3, 6)}
    assert d.events == []


def test_32_bit_wrap_is_corrected_and_named():
    snaps = parsers.parse(vos(("2026-11-22 09:00:00", WRAP32 - 10, 100, 0), ("2026-11-22 10:00:00", 5, 107, 0)))
    (d,) = deltas(snaps)
    assert d.ipv4["ReasmReqds"] == 15
    assert d.events == [{"type": "wrap", "family": "ipv4", "counter": "ReasmReqds", "from": WRAP32 - 10, "to": 5}]


def test_reboot_resets_are_named_and_no_increase_is_invented():
    snaps = parsers.parse(vos(("2026-11-22 09:00:00", 5000, 2500, 3), ("2026-11-22 10:00:00", 12, 6, 0)))
    (d,) = deltas(snaps)
    assert {e["type"] for e in d.events} == {"reset"}
    assert set(d.ipv4.values()) == {None}


def test_snapshots_pair_per_host():
    text = ("Sun Nov 22 09:00:00 UTC 2026\n[root@a ~]# netstat -s | grep reass\n  10 reassemblies required\n"
            "Sun Nov 22 09:00:00 UTC 2026\n[root@b ~]# netstat -s | grep reass\n  70 reassemblies required\n"
            "Sun Nov 22 10:00:00 UTC 2026\n[root@a ~]# netstat -s | grep reass\n  15 reassemblies required\n"
            "Sun Nov 22 10:00:00 UTC 2026\n[root@b ~]# netstat -s | grep reass\n  90 reassemblies required\n")
    got = {d.host: d.ipv4["ReasmReqds"] for d in deltas(parsers.parse(text))}
    assert got == {"a": 5, "b": 20}


def test_diff_cli_two_files_json(tmp_path):
    a, b = tmp_path / "before.txt", tmp_path / "after.txt"
    a.write_text(vos(("Sun Nov 22 09:00:00 UTC 2026", 92, 46, 0)))
    b.write_text(vos(("Sun Nov 22 10:00:00 UTC 2026", 96, 48, 0)))
    run = subprocess.run([sys.executable, "-m", "toolkit", "diff", str(a), str(b), "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    (d,) = json.loads(run.stdout)
    for field in ("from", "to", "elapsed_s", "ipv4", "ipv6", "events"):
        assert field in d
    assert d["from"] == "2026-11-22T09:00:00+00:00" and d["elapsed_s"] == 3600
    assert d["ipv4"]["ReasmReqds"] == 4 and d["ipv6"] is None


def test_diff_cli_one_snapshot_says_why(tmp_path):
    a = tmp_path / "one.txt"
    a.write_text(vos(("Sun Nov 22 09:00:00 UTC 2026", 92, 46, 0)))
    run = subprocess.run([sys.executable, "-m", "toolkit", "diff", str(a)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "nothing to pair" in run.stderr and "one (1)" in run.stderr and "Traceback" not in run.stderr
