"""mssdiag capture: every fixture under fixtures/captures/ against its expected JSON, the
synthetic fixtures rebuilt from their scapy builders, the packet_monitor reader against
the printed checksums, bad inputs, and the CLI's contract."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import capturelib
from capturelib import BUILDERS, CAPTURES, SYNTH, actual, pairs
from toolkit import capture
from toolkit.capture import pmtext, record
from toolkit.rules import captured

PAIRS = list(pairs())
MSSDIAG = str(Path(sys.executable).with_name("mssdiag"))


@pytest.mark.parametrize("raw,want", PAIRS, ids=[str(r.relative_to(CAPTURES)) for r, _ in PAIRS])
def test_fixture(raw, want):
    assert want.exists(), f"{raw} has no expected JSON beside it ({want.name})"
    data = json.loads(want.read_text())
    assert actual(raw, data["args"]) == data["expect"]


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_synthetic_fixture_is_what_its_builder_makes(name):
    assert (SYNTH / name).read_bytes() == BUILDERS[name](), f"rebuild with: python tests/capturelib.py build"


def _flow(name, i=0):
    return capture.analyze([str(SYNTH / name)]).flows[i]


def _codes(name, **kw):
    return [f.code for f in capture.analyze([str(SYNTH / name)], **kw).findings]


def test_what_each_synthetic_case_shows():
    f = _flow("legacy536.pcap")
    assert (f["client_to_server"]["mss"], f["server_to_client"]["mss"]) == (1460, 536)
    assert f["server_to_client"]["max_payload"] == 536
    assert _codes("legacy536.pcap") == ["capture-legacy-mss"]
    assert _codes("stcp_small_segments.pcap") == ["capture-small-segments"]
    obeyed, ignored = _flow("ptb_obeyed.pcap")["client_to_server"], _flow("ptb_ignored.pcap")["client_to_server"]
    assert obeyed["ptb"][0]["mtu"] == ignored["ptb"][0]["mtu"] == 1400
    assert (obeyed["shrank_after_ptb"], ignored["shrank_after_ptb"]) == (True, False)
    assert _codes("ptb_obeyed.pcap") == ["capture-ptb-obeyed"] and _codes("ptb_ignored.pcap") == ["capture-ptb-ignored"]
    v4 = _flow("fragments_v4.pcap")["server_to_client"]
    assert (v4["fragments"], v4["fragmented_datagrams"], v4["max_payload"], v4["df_share"]) == (4, 2, 1460, 0.0)
    v6 = _flow("fragments_v6.pcap")
    assert v6["server_to_client"]["fragments"] == 2 and v6["server_to_client"]["max_payload"] == 1440
    assert v6["client_to_server"]["ptb"][0]["mtu"] == 1400 and v6["client_to_server"]["shrank_after_ptb"]
    assert _flow("snaplen96.pcap")["server_to_client"]["max_payload"] == 1460     # from the IP length
    assert _flow("vlan_qinq.pcap")["server_to_client"]["max_payload"] == 1460
    assert _flow("sll2.pcap")["server_to_client"]["mss"] == 1220
    snoop = _flow("snoop_no_mss.snoop")["client_to_server"]
    assert snoop["mss"] is None and snoop["mss_note"] == "absent from the SYN"
    hole = _flow("bsd_loopback_blackhole.pcap")["client_to_server"]["black_hole"]
    assert hole == {"seq": 0, "size": 1440, "sends": 4, "then": "dead connection", "smaller_ip_len": None}


def test_pcapng_interfaces_and_clamping_across_two_captures(tmp_path):
    r = capture.analyze([str(SYNTH / "two_interfaces.pcapng")])
    itf = r.captures[0]["interfaces"]
    assert [(i["linktype"], i["name"], i["ts_resolution"], i["dropped"]) for i in itf] == [
        ("ethernet", "eth-inside", 1e-6, 0), ("raw-ip", "ppp-outside", 1e-9, 2)]
    assert any("dropped 2 packets" in c for c in r.caveats)
    # the same two SYNs split into two files: matched by ISN and IP ID through the NAT
    inside, outside = tmp_path / "inside.pcap", tmp_path / "outside.pcap"
    c_in = capturelib.Conv(cport=40001, sport=80, c_isn=777777)
    c_out = capturelib.Conv(c="198.51.100.7", cport=61000, sport=80, c_isn=777777)
    c_in.handshake(1460, 1460)
    c_out.handshake(1360, 1460)
    inside.write_bytes(capturelib.pcap_bytes(c_in.frames()))
    outside.write_bytes(capturelib.pcap_bytes(c_out.frames()))
    r = capture.analyze([str(inside)], [str(outside)])
    assert len(r.clamping) == 1
    c = r.clamping[0]
    assert (c["syn_mss"], c["matched_by"], c["nat"], c["clamped"]) == ([1460, 1360], "isn+ip_id", True, True)
    assert [f.code for f in r.findings] == ["capture-mss-clamped"]


def test_offload_artefact_versus_violation(tmp_path):
    c = capturelib.Conv(sport=80)
    c.handshake(1460, 1460)
    c.tcp("s", "PA", b"o" * 2920)       # a TSO super-segment seen on the sending host
    c.tcp("s", "PA", b"o" * 1400)
    path = tmp_path / "tso.pcap"
    path.write_bytes(capturelib.pcap_bytes(c.frames()))
    s = capture.analyze([str(path)]).flows[0]["server_to_client"]
    assert (s["offload_oversize"], s["offload_max"], s["above_peer_mss"]) == (1, 2920, 0)
    assert [f.code for f in capture.analyze([str(path)]).findings] == ["capture-offload-oversize"]
    # on a 9000-byte MTU host, 2920 bytes fit: a real violation of the peer's 1460
    r = capture.analyze([str(path)], mtu=9000)
    assert r.flows[0]["server_to_client"]["above_peer_mss"] == 1
    assert [f.code for f in r.findings] == ["capture-above-mss"]


# ---- packet_monitor ---------------------------------------------------------------------
def test_packet_monitor_rebuilds_the_printed_packets():
    pkts = list(pmtext.read(open(CAPTURES / "pm" / "seed004_figure1.txt")))
    assert [p.direction for p in pkts] == ["Rcvd", "Xmit"]
    # the rebuilt headers give back the checksums packet_monitor printed (41b7, 2f2d; 3f01)
    assert all(pmtext.ip_checksum_ok(p.data) for p in pkts)
    assert pmtext.tcp_checksum_ok(pkts[1].data)
    # packet 1's ack field is printed as "n.a." and written as 0: its TCP checksum says the
    # peer left something else there, which is why it alone does not verify
    assert not pmtext.tcp_checksum_ok(pkts[0].data)
    blog = list(pmtext.read(open(CAPTURES / "pm" / "openvos171_blog_syn.txt")))
    assert len(blog) == 1 and pmtext.ip_checksum_ok(blog[0].data) and pmtext.tcp_checksum_ok(blog[0].data)


def test_packet_monitor_cut_mid_packet(tmp_path):
    text = (CAPTURES / "pm" / "seed004_figure1.txt").read_text().rstrip().splitlines()
    cut = tmp_path / "cut.txt"
    cut.write_text("\n".join(text[:-1]) + "\n")     # the last hex dump line is gone
    r = capture.analyze([str(cut)])
    assert len(r.errors) == 1 and "trace cut mid-packet" in r.errors[0] and "hex dump holds 0 of 4 bytes" in r.errors[0]
    assert r.flows[0]["client_to_server"]["mss"] == 1460   # the complete packet is still read


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed (Debian package tshark)")
def test_export_pcap_opens_in_tshark(tmp_path):
    out = tmp_path / "pm.pcap"
    res = subprocess.run([MSSDIAG, "capture", str(CAPTURES / "pm" / "seed004_figure1.txt"), "--export-pcap",
                          str(out), "--json"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    fields = subprocess.run(["tshark", "-r", str(out), "-T", "fields", "-e", "ip.src", "-e", "tcp.dstport",
                             "-e", "tcp.options.mss_val", "-e", "tcp.flags.syn"], capture_output=True, text=True)
    assert fields.stdout.split("\n")[:2] == ["164.152.79.200\t23\t1460\t1", "164.152.77.203\t2315\t536\t1"]


# ---- bad inputs ---------------------------------------------------------------------------
def _bad(tmp_path):
    good = SYNTH / "legacy536.pcap"
    data = good.read_bytes()
    files = {
        "empty.pcap": b"",
        "header.pcap": data[:10],
        "magic.pcap": b"\x00\x11\x22\x33" + data[4:],
        "midrecord.pcap": data[:-7],
        "ng-cut.pcapng": (SYNTH / "two_interfaces.pcapng").read_bytes()[:-30],
    }
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    return good


def test_bad_inputs_one_line_each_rest_read(tmp_path):
    good = _bad(tmp_path)
    names = ["empty.pcap", "header.pcap", "magic.pcap", "midrecord.pcap", "ng-cut.pcapng", "fifo", "dir"]
    argv = [MSSDIAG, "capture", "--json", *[str(tmp_path / n) for n in names], str(good)]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=20)   # a FIFO opened would hang here
    assert res.returncode == 3
    lines = res.stderr.splitlines()
    assert len(lines) == len(names)
    want = {"empty.pcap": "empty file (0 bytes)", "header.pcap": "truncated pcap header (10 of 24 bytes)",
            "magic.pcap": "not a capture file: unknown magic 00112233", "midrecord.pcap": "ends mid-record",
            "ng-cut.pcapng": "ends mid-block", "fifo": "is a FIFO, not a capture file",
            "dir": "is a directory"}
    for line, name in zip(lines, names):
        assert line.startswith(f"mssdiag: {tmp_path / name}: {want[name]}"), line
        assert "Traceback" not in line
    doc = json.loads(res.stdout)
    # the good file, and what came before the damage in the cut ones, were read
    assert [f["source"] for f in doc["flows"]] == [str(tmp_path / "midrecord.pcap"), str(tmp_path / "ng-cut.pcapng"),
                                                   str(tmp_path / "ng-cut.pcapng"), str(good)]


def test_exit_codes(tmp_path):
    _bad(tmp_path)
    run = lambda *a: subprocess.run([MSSDIAG, "capture", *a], capture_output=True, text=True, timeout=20)
    assert run(str(SYNTH / "legacy536.pcap")).returncode == 0
    assert run(str(tmp_path / "empty.pcap")).returncode == 1
    assert run(str(tmp_path / "empty.pcap"), str(tmp_path / "magic.pcap")).returncode == 1
    assert run("--format", "xml", str(SYNTH / "legacy536.pcap")).returncode == 2
    res = run("--format", "jsonl", str(SYNTH / "ptb_obeyed.pcap"))
    recs = [json.loads(x) for x in res.stdout.splitlines()]
    assert [r["record"] for r in recs] == ["capture", "flow", "finding"]
    assert all(r["schema"] == record.SCHEMA for r in recs)


def test_foreign_format_names_the_converter(tmp_path):
    f = tmp_path / "trace.iptrace"
    f.write_bytes(b"iptrace 2.0" + b"\x00" * 64)
    env = dict(os.environ, PATH="/nonexistent")
    res = subprocess.run([sys.executable, "-m", "toolkit", "capture", str(f)], capture_output=True, text=True,
                         env=env, cwd=str(capturelib.ROOT))
    assert res.returncode == 1
    assert res.stderr.strip().startswith(f"mssdiag: {f}: AIX iptrace 2.0 capture: convert it with Wireshark's editcap")


def test_library_api_for_triage():
    r = capture.analyze([str(SYNTH / "legacy536.pcap"), str(SYNTH / "ptb_obeyed.pcap")])
    assert set(r.hosts()) == {"10.1.0.2", "10.2.0.5"}
    flows, findings = r.for_host("10.2.0.5")
    assert len(flows) == 2 and [f.code for f in findings] == ["capture-legacy-mss"]
    assert all(f.code in captured.CODES for f in r.findings)


# ---- every capture fixture beside tshark ---------------------------------------------------
PUBLIC = CAPTURES / "public"
NOT_TSHARK = {"bigtcp-ipv6.pcap": "tshark 4.0 does not decode an IPv6 payload length of 0 without a jumbo option",
              "arcnet-rfc1201-arp-icmp-http.pcap": "a link type mssdiag does not decode (named, not read)"}
CROSS = [raw for raw, _ in PAIRS if raw.parent.name != "pm" and raw.name not in NOT_TSHARK]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed (Debian package tshark)")
@pytest.mark.parametrize("raw", CROSS, ids=[str(r.relative_to(CAPTURES)) for r in CROSS])
def test_fixture_agrees_with_tshark(raw):
    """Per connection: SYN MSS each side, largest payload (or "captured before segmentation"
    where tshark's payload is above the MSS), PTBs tied to it, fragments reassembled."""
    assert capturelib.disagreements(raw) == []


def test_bigtcp_ipv6_without_jumbo_option_as_tcpdump_reads_it():
    # the tcpdump suite's own expected output (tests/bigtcp-ipv6.out): "length 79968"
    f = capture.analyze([str(PUBLIC / "bigtcp-ipv6.pcap")]).flows[0]
    side = next(x for x in (f["client_to_server"], f["server_to_client"]) if x["offload_oversize"])
    assert side["offload_max"] == 79968 and side["max_payload"] is None
    assert side["segmentation"].startswith("captured before segmentation: largest wire segment not visible")


def _public(name):
    return capture.analyze([str(PUBLIC / name)])


def test_offloaded_super_segments_are_never_a_wire_size():
    for name, size in (("bigtcp-ipv4.pcap", 80000), ("bigtcp-ipv6-hbh.pcap", 80000),
                       ("gso-ipv4-vxlan-ipv4.pcap", 6990)):
        r = _public(name)
        f = r.flows[0]
        side = next(x for x in (f["client_to_server"], f["server_to_client"]) if x["offload_oversize"])
        assert (side["max_payload"], side["max_ip_len"], side["max_captured_payload"]) == (None, None, size), name
        assert f["captured_before_segmentation"] is True
        codes = [x.code for x in r.findings]
        assert codes == ["capture-offload-oversize"], (name, codes)
        rec = r.findings[0].recommendations[0]
        assert "ethtool -K IFACE tso off gso off gro off" in rec.commands
    # offloads on in the lab: no small-segment or above-MSS finding from the remaining frames
    r = capture.analyze([str(CAPTURES / "lab" / "bottleneck_client_upload_offloads_on.pcap")])
    assert [x.code for x in r.findings] == ["capture-offload-oversize"]
    assert r.flows[0]["client_to_server"]["segmentation"].endswith("MSS agreed 1460")


def test_encapsulations_and_what_they_take_from_the_mtu():
    enc = {name: [f["encapsulation"] for f in _public(name).flows] for name in
           ("geneve.pcap", "wccp_redirect_gre.pcap", "ipoib.pcap", "gso-ipv6-geneve-ipv6.pcap")}
    assert {e["layers"][-1] for e in enc["geneve.pcap"]} == {"geneve"}
    assert enc["wccp_redirect_gre.pcap"][0]["layers"] == ["gre", "wccp"]
    assert enc["ipoib.pcap"][0]["layers"] == ["ipoib"]
    r = capture.analyze([str(SYNTH / "pppoe.pcap")])
    assert r.flows[0]["encapsulation"] == {"layers": ["pppoe"], "overhead": 8}
    assert [(f.code, f.data["mss"], f.data["inner_mtu"]) for f in r.findings] == [
        ("capture-tunnel-mss", 1452, 1492)] * 2
    r = capture.analyze([str(SYNTH / "mpls.pcap")])
    assert r.flows[0]["encapsulation"] == {"layers": ["mpls x2"], "overhead": 8} and r.findings == []
    r = capture.analyze([str(CAPTURES / "lab" / "vxlan_underlay.pcap")])
    assert r.flows[0]["encapsulation"] == {"layers": ["vxlan"], "overhead": 50}
    assert {f.data["mss"] for f in r.findings if f.code == "capture-tunnel-mss"} == {1410}
    erspan = _public("erspan-type-ii-2.pcap").captures[0]
    assert erspan["undecoded"] == {} and erspan["frames"] == 16


def test_fragments_reassembled_counted_per_flow_and_rfc5722():
    r = capture.analyze([str(SYNTH / "fragmented_syn.pcap")])
    v4, v6 = r.flows[0], r.flows[1]
    # the MSS option arrived in the second of three fragments, the fragments in reverse order
    assert (v4["client_to_server"]["mss"], v4["client_to_server"]["fragments"]) == (1380, 3)
    assert v4["client_to_server"]["fragmented_datagrams"] == 1
    # overlapping fragments: the datagram is discarded, its fragments still counted on the flow
    s = v4["server_to_client"]
    assert (s["fragments"], s["incomplete_datagrams"], s["fragmented_datagrams"]) == (2, 1, 0)
    assert any("overlapping fragments (datagram discarded, RFC 5722)" in c for c in r.caveats)
    # an atomic fragment (IPv6 fragment header, offset 0, no more fragments) is a whole packet
    assert (v6["server_to_client"]["mss"], v6["server_to_client"]["fragments"]) == (1440, 0)
    lab = capture.analyze([str(CAPTURES / "lab" / "fragments_no_df_target_side.pcap")]).flows[0]["client_to_server"]
    assert lab["fragments"] == 2 * lab["fragmented_datagrams"] and lab["max_fragment_ip_len"] == 1396
    assert lab["max_payload"] == 1448 and lab["df_share"] == 0.0


def test_frames_not_decoded_are_named_and_counted(tmp_path):
    r = _public("arcnet-rfc1201-arp-icmp-http.pcap")
    assert r.read_ok == [] and "none of its 26 frames could be decoded" in r.errors[0]
    assert f"{PUBLIC / 'arcnet-rfc1201-arp-icmp-http.pcap'}: 26 frames of LINKTYPE_ARCNET_LINUX not decoded" in r.caveats
    r = _public("nflog.pcap")
    assert r.captures[0]["undecoded"] == {} and r.captures[0]["not_ip"] == {"UDP": 4}
    wifi = _public("ieee802.11_exthdr.pcap").captures[0]
    assert wifi["undecoded"] == {} and wifi["not_ip"]["802.11 management/control"] > 0
    # a header whose length is beyond the captured frame is not trusted
    c = capturelib.Conv(sport=80)
    c.handshake(1460, 1460)
    c.tcp("s", "PA", b"x" * 1000)
    frames = c.frames()
    t, data = frames[-1]
    lie = bytearray(data)
    lie[16:18] = (1400).to_bytes(2, "big")        # IPv4 total length 1400 in a 1054-byte frame
    bad = tmp_path / "lie.pcap"
    bad.write_bytes(capturelib.pcap_bytes(frames[:-1] + [(t, bytes(lie))]))
    r = capture.analyze([str(bad)])
    assert r.captures[0]["undecoded"] == {"length mismatch: IPv4 total length beyond the frame": 1}
    f = r.flows[0]
    assert f["frames_undecoded"] == 1 and f["server_to_client"]["max_payload"] == 0


def test_header_only_pcap_and_files_that_break_their_rules(tmp_path):
    head = (SYNTH / "legacy536.pcap").read_bytes()[:24]
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(head)
    res = subprocess.run([MSSDIAG, "capture", str(empty)], capture_output=True, text=True, timeout=20)
    assert res.returncode == 0 and res.stderr == ""
    assert f"note: {empty}: no packets: a valid pcap file that holds none" in res.stdout
    v1 = tmp_path / "v1.pcap"
    data = bytearray((SYNTH / "legacy536.pcap").read_bytes())
    data[4:6] = (1).to_bytes(2, "little")
    v1.write_bytes(bytes(data))
    res = subprocess.run([MSSDIAG, "capture", "--json", str(v1)], capture_output=True, text=True, timeout=20)
    assert res.returncode == 0 and res.stderr.startswith(f"mssdiag: warning: {v1}: pcap version 1.4")
    assert len(json.loads(res.stdout)["flows"]) == 1
    # a pcapng option longer than its block; a packet naming an interface that does not exist
    ng = (SYNTH / "two_interfaces.pcapng").read_bytes()
    shb = int.from_bytes(ng[4:8], "little")
    idb = int.from_bytes(ng[shb + 4:shb + 8], "little")
    broken = bytearray(ng)
    broken[shb + 16 + 2:shb + 16 + 4] = (200).to_bytes(2, "little")     # if_name's length
    epb = bytes.fromhex("06000000") + (32 + 4).to_bytes(4, "little") + (9).to_bytes(4, "little") + bytes(8) + \
        (4).to_bytes(4, "little") * 2 + b"abcd" + (36).to_bytes(4, "little")
    path = tmp_path / "broken.pcapng"
    path.write_bytes(bytes(broken[:shb + idb]) + epb + bytes(broken[shb + idb:]))
    r = capture.analyze([str(path)])
    assert any("option 2 is longer than its block" in w for w in r.warnings)
    assert r.captures[0]["undecoded"] == {"packet names interface 9, which no interface block describes": 1}
    assert any("1 frame(s) not decoded: packet names interface 9" in c for c in r.caveats)


# ---- each connection's record made once (a million connections: no second pass) -------------
def test_read_then_judged_gives_the_records_and_findings_of_analyze_each_record_made_once(monkeypatch):
    lab = CAPTURES / "lab"
    args = ([str(lab / "clamp536_router_client_side.pcap"), str(PUBLIC / "packets-ip_frag_source.pcapng"),
             str(SYNTH / "ptb_obeyed.pcap")], [str(lab / "clamp536_router_target_side.pcap")])
    whole = capture.analyze(*args)
    made = []
    real = record.flow_dict
    monkeypatch.setattr(record, "flow_dict", lambda an, f: made.append((an.source, f)) or real(an, f))
    part = capture.read(*args)
    matched = len(made)              # --second: the clamping match reads the SYNs of both captures
    assert part.findings == [] and part.clamping == whole.clamping
    records = list(part.judged())
    assert len(made) - matched == len(records) == len(whole.flows)     # one record a connection
    assert len(set(made[matched:])) == len(records)
    assert records == list(whole.flows)
    assert part.to_dict() == whole.to_dict()
    codes = [f.code for f in part.findings]
    assert "capture-mss-clamped" in codes and "capture-legacy-mss" not in codes      # the clamp explains it
    assert "capture-fragments-no-df" in codes or "capture-fragments" in codes         # loose fragments judged too
    assert list(part.judged()) == records and [f.code for f in part.findings] == codes   # judged once


def test_table_columns_keep_their_alignment_whatever_the_cells(tmp_path):
    res = subprocess.run([MSSDIAG, "capture", "-q", str(SYNTH / "legacy536.pcap"), str(PUBLIC / "bigtcp-ipv4.pcap")],
                         capture_output=True, text=True, timeout=20)
    lines = res.stdout.splitlines()
    head, rule = lines[0], lines[1]
    rows = [x for x in lines[2:] if x.strip() and not x.startswith("findings")][:2]
    for name in ("SYN-ACK mss", "max c->s", "max s->c"):      # numbers beside "?" and "offload (N)"
        right = head.index(name) + len(name)
        assert rule[right - 1] == "-" and rule[right:right + 1] in (" ", "")
        cells = [r[:right].split()[-1] for r in rows]
        assert all(r[right - 1] != " " for r in rows), (name, cells)
    assert any("?" in r or "offload" in r for r in rows)
