"""The capture readers on damaged input: pcap, pcapng, snoop and packet_monitor fixtures
truncated, bit-flipped, given impossible lengths, pcapng blocks repeated and looping. A
seeded, time-bounded run: no traceback, no internal error, no input that takes seconds
(a hang), no memory growth, and no high-confidence finding from a capture cut before the
evidence that finding needs."""
from __future__ import annotations

import random
import resource
import signal
import struct
import time

import pytest

from capturelib import CAPTURES, SYNTH
from toolkit import capture

SEED = 20240611
SECONDS = 30.0           # the whole run; every mutation is checked until then
BINARY = [SYNTH / n for n in ("legacy536.pcap", "ptb_obeyed.pcap", "ptb_ignored.pcap", "fragments_v4.pcap",
                              "fragments_v6.pcap", "vlan_qinq.pcap", "sll2.pcap", "stcp_small_segments.pcap",
                              "two_interfaces.pcapng", "snoop_no_mss.snoop", "bsd_loopback_blackhole.pcap")] + \
         [CAPTURES / "lab" / "bottleneck_client_upload_offloads_on.pcap", CAPTURES / "lab" / "blackhole_client_upload.pcap"]
TEXT = [CAPTURES / "pm" / "seed004_figure1.txt", CAPTURES / "pm" / "openvos171_blog_syn.txt"]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def run(path, seconds: int = 10):
    """analyze() under an alarm: a hang fails the test instead of stopping it."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        start = time.monotonic()
        r = capture.analyze([str(path)])
        list(r.flows)          # the records are made when read: read them all
        return r, time.monotonic() - start
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def check(r, what: str) -> None:
    for line in r.errors + r.warnings + r.caveats:
        assert "internal error" not in line, f"{what}: {line}"


# ---- mutations --------------------------------------------------------------------------
def truncate(rng, data: bytes) -> bytes:
    return data[:rng.randrange(0, len(data))]


def flip(rng, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def bytes_at(rng, data: bytes) -> bytes:
    """Random bytes over a random stretch: headers and lengths hit as often as payload."""
    b = bytearray(data)
    i = rng.randrange(len(b))
    n = rng.randint(1, 12)
    b[i:i + n] = bytes(rng.randrange(256) for _ in range(n))
    return bytes(b)


def impossible_length(rng, data: bytes, offsets) -> bytes:
    """A length field (record, block, IP total, TCP offset...) set to an extreme value."""
    b = bytearray(data)
    off = rng.choice(offsets)
    value = rng.choice([0, 1, 3, 4, 7, 11, 12, 0xFFFF, 0xFFFFFFFF, 0x7FFFFFFF, 262145, 16 << 20, len(data) * 3])
    size = 4 if off + 4 <= len(b) and rng.random() < 0.7 else 2
    if off + size <= len(b):
        b[off:off + size] = struct.pack("<I" if size == 4 else ">H", value & (0xFFFFFFFF if size == 4 else 0xFFFF))
    return bytes(b)


def length_offsets(data: bytes, kind: str):
    """Where the lengths are: record headers of a pcap / snoop, block lengths of a pcapng, and
    inside frames the IP total length and TCP data offset."""
    out = []
    if kind == "pcap":
        off = 24
        while off + 16 <= len(data):
            incl = struct.unpack_from("<I" if data[0] == 0xD4 else ">I", data, off + 8)[0]
            out += [off + 8, off + 12, off + 16 + 14 + 2, off + 16 + 14 + 20 + 12]
            off += 16 + incl
    elif kind == "pcapng":
        off = 0
        while off + 12 <= len(data):
            blen = struct.unpack_from("<I", data, off + 4)[0]
            out += [off + 4, off + 20, off + 24, off + blen - 4]
            if blen < 12:
                break
            off += blen
    elif kind == "snoop":
        off = 16
        while off + 24 <= len(data):
            reclen = struct.unpack_from(">I", data, off + 8)[0]
            out += [off, off + 4, off + 8]
            if reclen < 24:
                break
            off += reclen
    return [o for o in out if 0 <= o < len(data)] or [0]


def looping_pcapng(rng) -> bytes:
    """Blocks repeated many times, sections restarted, lengths that would send a naive
    reader back onto the same block, and thousands of interface blocks."""
    data = (SYNTH / "two_interfaces.pcapng").read_bytes()
    shb_len = struct.unpack_from("<I", data, 4)[0]
    shb, rest = data[:shb_len], data[shb_len:]
    choice = rng.randrange(5)
    if choice == 0:
        return shb + rest * rng.randint(50, 400)
    if choice == 1:
        return (shb + rest[:rng.randrange(len(rest))]) * rng.randint(20, 200)
    if choice == 2:
        bad = struct.pack("<II", 6, rng.choice([0, 4, 8, 12, 16, 28])) + b"\x00" * 24
        return shb + rest[:100] + bad * rng.randint(1, 50) + rest
    if choice == 3:
        idb = rest[:struct.unpack_from("<I", rest, 4)[0]]
        return shb + idb * 5000 + rest
    epb = struct.pack("<IIIIIII", 6, 32 + 1500, 7, 0, 0, 1500, 1500) + b"\x00" * 1500 + struct.pack("<I", 32 + 1500)
    return shb + epb * rng.randint(1, 20) + rest       # packets naming an interface that does not exist


def pm_mutation(rng, text: str) -> str:
    lines = text.splitlines()
    k = rng.randrange(6)
    if k == 0:
        return "\n".join(lines[:rng.randrange(len(lines))]) + "\n"
    if k == 1:
        i = rng.randrange(len(lines))
        toks = lines[i].split(" ")
        j = rng.randrange(len(toks))
        toks[j] = rng.choice(["zz", "145", "99999", "1" * 40, "-5", "0x", "ffffffffff", "g7.", "", "."])
        lines[i] = " ".join(toks)
        return "\n".join(lines)
    if k == 2:
        return text.replace("Ver/HL 45", "Ver/HL " + rng.choice(["145", "5", "40", "4f", "zz"]), 1)
    if k == 3:
        return text.replace(".2315", "." + rng.choice(["99999", "65536", "x", "0" * 30]), 1)
    if k == 4:
        return text.replace("19:20:16.784", "19:20:16." + "7" * rng.choice([5000, 20, 400]), 1)
    i = rng.randrange(len(text))
    return text[:i] + chr(rng.randrange(32, 127)) * rng.randint(1, 5) + text[i + 1:]


def _kind(path) -> str:
    return "pcapng" if path.suffix == ".pcapng" else "snoop" if path.suffix == ".snoop" else "pcap"


# ---- the run --------------------------------------------------------------------------
def test_fuzz_no_traceback_hang_or_memory_growth(tmp_path):
    rng = random.Random(SEED)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    deadline = time.monotonic() + SECONDS
    originals = {p: p.read_bytes() for p in BINARY}
    texts = {p: p.read_text() for p in TEXT}
    offsets = {p: length_offsets(d, _kind(p)) for p, d in originals.items()}
    count, slowest = 0, 0.0
    target = tmp_path / "m"
    while time.monotonic() < deadline:
        r = rng.random()
        if r < 0.15:
            p = rng.choice(TEXT)
            target = tmp_path / "m.txt"
            target.write_text(pm_mutation(rng, texts[p]))
        elif r < 0.25:
            target = tmp_path / "m.pcapng"
            target.write_bytes(looping_pcapng(rng))
        else:
            p = rng.choice(BINARY)
            data = originals[p]
            m = rng.randrange(4)
            out = (truncate(rng, data) if m == 0 else flip(rng, data) if m == 1 else bytes_at(rng, data) if m == 2
                   else impossible_length(rng, data, offsets[p]))
            target = tmp_path / ("m" + p.suffix)
            target.write_bytes(out)
        try:
            res, took = run(target)
        except Hang:
            pytest.fail(f"mutation {count} (seed {SEED}) hangs: {target.read_bytes()[:64]!r}")
        check(res, f"mutation {count} (seed {SEED})")
        slowest = max(slowest, took)
        count += 1
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert count > 200, f"only {count} mutations in {SECONDS} s"
    assert slowest < 5.0, f"the slowest mutation took {slowest:.1f} s"
    assert grown < 200, f"peak memory grew by {grown:.0f} MiB over {count} mutations"


def _high(r):
    return {(f.code, f.data.get("host"), f.data.get("port")) for f in r.findings if f.confidence == "high"}


@pytest.mark.parametrize("path", BINARY, ids=[p.name for p in BINARY])
def test_a_cut_capture_finds_nothing_the_whole_one_does_not(path, tmp_path):
    """Cut at every byte of the frames' headers and at random places: every high-confidence
    finding of the cut file is one the whole capture makes (nothing is concluded from
    evidence the cut removed)."""
    data = path.read_bytes()
    whole = _high(run(path)[0])
    rng = random.Random(SEED)
    cuts = sorted(set(rng.randrange(len(data)) for _ in range(150)) | set(length_offsets(data, _kind(path))))
    target = tmp_path / ("cut" + path.suffix)
    for cut in cuts:
        target.write_bytes(data[:cut])
        r, _ = run(target)
        check(r, f"{path.name} cut at {cut}")
        extra = _high(r) - whole
        assert not extra, f"{path.name} cut at byte {cut}: {extra}"


@pytest.mark.parametrize("path", TEXT, ids=[p.name for p in TEXT])
def test_a_packet_monitor_trace_cut_anywhere(path, tmp_path):
    """Seed 004's trace cut at every character: no traceback, and no legacy-MSS finding
    unless the hex dump with the MSS option was read whole."""
    text = path.read_text()
    whole = _high(run(path)[0])
    target = tmp_path / "cut.txt"
    for cut in range(1, len(text)):
        target.write_text(text[:cut])
        r, _ = run(target)
        check(r, f"{path.name} cut at {cut}")
        extra = _high(r) - whole
        assert not extra, f"{path.name} cut at character {cut}: {extra}"


def test_packet_monitor_cut_before_the_first_hex_dump(tmp_path):
    text = (CAPTURES / "pm" / "seed004_figure1.txt").read_text()
    cut = text[:text.index("offset 0")]
    target = tmp_path / "cut.txt"
    target.write_text(cut)
    r, _ = run(target)
    f = r.flows[0]["client_to_server"]
    assert f["mss"] is None and f["mss_note"].startswith("options not visible")
    assert [x.code for x in r.findings] == []


def test_hostile_packet_monitor_fields(tmp_path):
    text = (CAPTURES / "pm" / "seed004_figure1.txt").read_text()
    target = tmp_path / "bad.txt"
    for bad in (text.replace("Ver/HL 45", "Ver/HL 145", 1), text.replace(".2315", ".99999"),
                text.replace("19:20:16.784", "19:20:16." + "7" * 5000), text.replace("Len 34", "Len zz"),
                text.replace("seq 800916ce", "seq 8g0916ce")):
        target.write_text(bad)
        r, _ = run(target)
        check(r, bad[:40])
        assert any("could not be rebuilt" in e for e in r.errors) or r.flows, r.errors


@pytest.mark.parametrize("btype,blen", [(6, 12), (6, 28), (1, 12), (1, 16), (5, 20), (3, 12)])
def test_pcapng_ending_in_a_block_too_short_for_its_type(tmp_path, btype, blen):
    data = (SYNTH / "two_interfaces.pcapng").read_bytes()
    block = struct.pack("<II", btype, blen) + b"\x00" * (blen - 12) + struct.pack("<I", blen)
    target = tmp_path / "short.pcapng"
    target.write_bytes(data + block)
    r, _ = run(target)
    check(r, "short block")
    assert len(r.errors) == 1 and "corrupt" in r.errors[0] and f"length {blen}" in r.errors[0]
    assert len(r.flows) == 2       # what came before it is read
