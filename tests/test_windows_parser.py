"""Windows netstat -s: the rules a fixture alone would not pin down."""
import codecs
import json
import subprocess
import sys
from pathlib import Path

import pytest

import parsers
from parsers import windows
from parsers.model import ParseError
from fixturelib import frag

ROOT = Path(__file__).resolve().parent.parent
MSSDIAG = Path(sys.executable).parent / "mssdiag"

LABELS = ["Packets Received", "Received Header Errors", "Received Address Errors", "Datagrams Forwarded",
          "Unknown Protocols Received", "Received Packets Discarded", "Received Packets Delivered",
          "Output Requests", "Routing Discards", "Discarded Output Packets", "Output Packet No Route",
          "Reassembly Required", "Reassembly Successful", "Reassembly Failures",
          "Datagrams Successfully Fragmented", "Datagrams Failing Fragmentation", "Fragments Created"]


def section(header, values):
    """One IP section as netstat.exe prints it (Vista and later layout)."""
    lines = ["", header, ""]
    lines += [f"  {label:<35}= {value}" for label, value in zip(LABELS, values)]
    return "\n".join(lines) + "\n"


V4 = [9147172, 0, 33, 0, 0, 57251, 9513095, 7343447, 0, 3729, 1154, 46940, 23469, 7, 19244, 2, 38488]
V6 = [5847, 0, 116, 0, 0, 3121, 8173, 7194, 0, 0, 0, 12, 6, 1, 4, 3, 8]
UDP = "\nUDP Statistics for IPv4\n\n  Datagrams Received    = 53860170\n  No Ports              = 25351\n"


def counters(values):
    return {"ReasmReqds": values[11], "ReasmOKs": values[12], "ReasmFails": values[13], "ReasmTimeout": None,
            "FragOKs": values[14], "FragFails": values[15], "FragCreates": values[16],
            "InReceives": values[0], "InDelivers": values[6], "OutRequests": values[7], "ForwDatagrams": values[3]}


def test_ipv6_section_goes_to_ipv6_never_ipv4():
    text = section("IPv4 Statistics", V4) + section("IPv6 Statistics", V6) + UDP
    snaps = parsers.parse(text)
    assert len(snaps) == 1, "IPv6 section must not start a second snapshot"
    assert snaps[0].os == "windows"
    assert snaps[0].ipv4 == counters(V4)
    assert snaps[0].ipv6 == counters(V6)
    assert snaps[0].raw["IPv6 Statistics: Reassembly Required"] == "12"


def test_ipv6_only_output_leaves_ipv4_null():
    snaps = parsers.parse(section("IPv6 Statistics", V6))
    assert snaps[0].ipv4 is None
    assert snaps[0].ipv6 == counters(V6)


def test_ipv6_first_then_ipv4_still_kept_apart():
    reading = windows.read((section("IPv6 Statistics", V6) + section("IPv4 Statistics", V4)).splitlines())
    assert reading.ipv4 == {k: v for k, v in counters(V4).items() if v is not None}
    assert reading.ipv6 == {k: v for k, v in counters(V6).items() if v is not None}


def test_tcp_and_udp_sections_do_not_leak():
    text = "\nTCP Statistics for IPv4\n\n  Fragments Created = 99\n" + UDP
    reading = windows.read(text.splitlines())
    assert reading.ipv4 is None and reading.ipv6 is None


def test_malformed_value_warns_naming_the_label():
    text = section("IPv4 Statistics", V4).replace("= 46940", "= 46k940")
    snap = parsers.parse(text)[0]
    assert snap.ipv4["ReasmReqds"] is None
    assert snap.ipv4["ReasmOKs"] == 23469
    assert any("Reassembly Required" in w and "46k940" in w for w in snap.warnings)


def test_reassembly_timeout_is_a_setting_not_a_count():
    text = section("IPv4 Statistics", V4) + "  Reassembly Timeout                 = 60\n"
    snap = parsers.parse(text)[0]
    assert snap.ipv4["ReasmTimeout"] is None
    assert snap.raw["IPv4 Statistics: Reassembly Timeout"] == "60"
    assert "ReasmTimeout" not in windows.META.ipv4


def test_unknown_language_warns_that_labels_were_not_recognised():
    text = ("\nStatistiques IPv4\n\n  Paquets recus                      = 100\n"
            "  Reassemblage requis                = 5\n")
    reading = windows.read(text.splitlines())
    assert reading.ipv4 == {} and any("localized" in w for w in reading.warnings)
    warnings = []   # forced, it reads no counter: one line says so (and why), no empty row
    assert list(parsers.iter_parse(text, os="windows", warn=warnings.append)) == []
    assert any("holds none of its counters" in w and "localized" in w for w in warnings)


def test_german_labels():
    text = ("\nIPv4-Statistik\n\n  Reassemblierung erforderlich         = 3393\n"
            "  Reassemblierung erfolgreich          = 1677\n"
            "\nIPv6-Statistik\n\n  Reassemblierung erforderlich         = 4\n")
    snap = parsers.parse(text)[0]
    assert (snap.ipv4["ReasmReqds"], snap.ipv4["ReasmOKs"], snap.ipv6["ReasmReqds"]) == (3393, 1677, 4)


def test_headerless_excerpt_is_ipv4_with_a_warning():
    text = "  Reassembly Required                = 3095\n  Reassembly Successful              = 1534\n"
    snap = parsers.parse(text)[0]
    assert snap.ipv4["ReasmReqds"] == 3095 and snap.ipv6 is None
    assert snap.format == "netstat -s excerpt"
    assert any("header" in w for w in snap.warnings)


def test_date_and_time_lines_from_a_scheduled_task():
    text = ("Sun 11/22/2026 \n03:15 PM\n" + section("IPv4 Statistics", V4)
            + "Sun 11/22/2026 \n03:30 PM\n" + section("IPv4 Statistics", [v + 10 for v in V4]))
    snaps = parsers.parse(text)
    assert [s.taken_at for s in snaps] == ["2026-11-22T15:15:00", "2026-11-22T15:30:00"]
    assert snaps[1].ipv4["ReasmReqds"] == V4[11] + 10


def test_detection_keeps_windows_apart_from_solaris_and_vos():
    text = section("IPv4 Statistics", V4)
    assert parsers.detect(text)[0][0] == "windows"
    assert windows.detect("          92  ipReasmReqds\n          46  ipReasmOKs\n") == 0.0
    assert windows.detect("        ipReasmTimeout      =    15     ipReasmReqds        =     2\n") == 0.0


def test_detection_survives_quoting_and_prompt():
    text = "C:\\>netstat -s\n" + "".join("> " + line + "\n" for line in section("IP Statistics", V4).splitlines())
    assert windows.detect(text) >= 0.9
    assert parsers.parse(text)[0].ipv4["ReasmReqds"] == V4[11]


def test_not_a_windows_dump():
    with pytest.raises(ParseError):
        windows.parse("Active Connections\n\n  Proto  Local Address  Foreign Address  State\n")


def _utf16_file(path: Path) -> Path:
    text = (section("IPv4 Statistics", V4) + section("IPv6 Statistics", V6)).replace("\n", "\r\n")
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    return path


def test_powershell_utf16_file_through_toolkit_inputs(tmp_path):
    from toolkit.hosts import walk
    from toolkit.inputs import Outcome, read
    path = _utf16_file(tmp_path / "netstat.txt")
    errors = []
    snaps = [s for s, _ in read(walk([str(path)], errors.append)[0], None, Outcome(), errors.append)]
    assert errors == []
    assert len(snaps) == 1
    assert snaps[0].ipv4 == counters(V4) and snaps[0].ipv6 == counters(V6)


@pytest.mark.skipif(not MSSDIAG.exists(), reason="mssdiag console script not installed in this venv")
def test_powershell_utf16_file_through_mssdiag_parse(tmp_path):
    path = _utf16_file(tmp_path / "netstat.txt")
    done = subprocess.run([str(MSSDIAG), "parse", str(path), "--json"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data[0]["os"] == "windows"
    assert data[0]["ipv4"]["ReasmReqds"] == V4[11]
    assert data[0]["ipv6"]["ReasmReqds"] == V6[11]


def test_unicode_case_folding_does_not_match_labels():
    # U+017F (long s) folds to "s" under Unicode IGNORECASE; it is not the English label
    reading = windows.read(["IPv4 Statistics", "  Rea\u017f\u017fembly Required = 5"])
    assert frag(reading.ipv4) == {} and reading.raw == {}
