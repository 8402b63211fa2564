"""mssdiag capture on real captures taken now in the namespace lab (tcpdump on the lab's
veths), checked against what the kernel was told to do and against tshark and tcptrace.

Needs root, iproute2, iptables, tcpdump and ethtool (`make system-deps`); the tshark and
tcptrace cross-checks skip with the reason when those are missing.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import capturelib
import labcapture
from toolkit import capture, lab

pytestmark = pytest.mark.netns
MISSING = lab.missing_tools() + [t for t in ("tcpdump", "ethtool") if shutil.which(t) is None]
if MISSING:
    pytest.skip(f"lab captures need {', '.join(MISSING)} (run `make system-deps` as root)", allow_module_level=True)


@pytest.fixture(scope="module")
def taken(tmp_path_factory):
    out = tmp_path_factory.mktemp("labcaptures")
    files = {}
    for case in labcapture.CASES:
        files.update(labcapture.run(case, out))
    return files


def _one(path, **kw):
    r = capture.analyze([str(path)], **kw)
    assert r.errors == [] and len(r.flows) == 1, (r.errors, r.flows)
    return r, r.flows[0]


def test_legacy536(taken):
    r, f = _one(taken["legacy536"])
    c, s = f["client_to_server"], f["server_to_client"]
    want = lab.SCENARIOS["legacy536"].expect["mss"]       # what the lab's target was set up to do
    assert (c["mss"], s["mss"], s["max_payload"]) == (want["sent"], want["synack"], want["used"])
    assert [x.code for x in r.findings] == ["capture-legacy-mss"]


def test_clamp_seen_on_both_sides_of_the_router(taken):
    r = capture.analyze([str(taken["clamp_inside"])], [str(taken["clamp_outside"])])
    assert r.errors == [] and len(r.clamping) == 1
    c = r.clamping[0]
    # the client's SYN enters the router with 1460 and leaves with 536; the SYN-ACK the other way
    assert (c["syn_mss"], c["synack_mss"], c["matched_by"], c["clamped"]) == ([1460, 536], [536, 1460], "isn+ip_id", True)
    assert [x.code for x in r.findings] == ["capture-mss-clamped"]
    assert r.findings[0].severity == "problem"


def test_black_hole(taken):
    r, f = _one(taken["blackhole"])
    c = f["client_to_server"]
    assert c["ptb"] == [] and c["max_payload"] == 1448 and c["black_hole"]["size"] == 1448
    assert c["black_hole"]["sends"] >= 3
    assert "capture-black-hole" in [x.code for x in r.findings]


def test_ptb_obeyed_with_offloads_off_and_artefacts_with_offloads_on(taken):
    r, f = _one(taken["ptb_offload_off"])
    c = f["client_to_server"]
    assert c["ptb"][0]["mtu"] == 1400 and c["ptb"][0]["from"] == "10.0.1.1"
    assert c["shrank_after_ptb"] is True and c["after_ptb"]["largest_fitting"] == 1348   # 1400 - 40 - 12 (timestamps)
    assert c["offload_oversize"] == 0 and c["above_peer_mss"] == 0
    assert [x.code for x in r.findings] == ["capture-ptb-obeyed"]
    r, f = _one(taken["ptb_offload_on"])
    c = f["client_to_server"]
    assert c["offload_oversize"] > 0 and c["offload_max"] > 1460 and c["above_peer_mss"] == 0
    assert "capture-offload-oversize" in [x.code for x in r.findings]
    assert "capture-ptb-ignored" not in [x.code for x in r.findings]


def _ours(path):
    got = {}
    for f in capture.analyze([str(path)]).flows:
        for d, peer in ((f["client_to_server"], f["server_to_client"]), (f["server_to_client"], f["client_to_server"])):
            # a segment captured before segmentation has no wire size: what the other tool shows
            # must then be above the MSS the peer allowed
            got[(d["addr"], d["port"])] = [d["mss"], d["max_payload"] if not d["segmentation"] else
                                           ("above", peer["mss"])]
    return got


def _same(ours, theirs):
    for key, (mss, seg) in ours.items():
        t = theirs.get(key)
        if t is None or t[0] != mss:
            return False
        if isinstance(seg, tuple) and not t[1] > seg[1] or not isinstance(seg, tuple) and t[1] != seg:
            return False
    return set(ours) == set(theirs)


def test_fragments_from_a_host_without_pmtu_discovery(taken):
    r, f = _one(taken["fragments"])
    c = f["client_to_server"]
    # the router split each 1500-byte packet for the 1400-byte link: 1396 + the rest
    assert c["df_share"] == 0.0 and c["fragmented_datagrams"] > 0
    assert c["fragments"] == 2 * c["fragmented_datagrams"] and c["max_fragment_ip_len"] == 1396
    assert c["max_payload"] == 1448 and c["incomplete_datagrams"] == 0
    assert "capture-fragments-no-df" in [x.code for x in r.findings]


def test_vxlan_underlay(taken):
    r, f = _one(taken["vxlan"])
    assert f["encapsulation"] == {"layers": ["vxlan"], "overhead": 50}
    assert (f["client_to_server"]["mss"], f["server_to_client"]["mss"]) == (1410, 1410)   # overlay MTU 1450
    assert f["client_to_server"]["max_payload"] == 1398       # 1410 less the timestamp option
    assert [x.code for x in r.findings] == ["capture-tunnel-mss", "capture-tunnel-mss"]


CROSS = ["legacy536", "clamp_inside", "clamp_outside", "blackhole", "ptb_offload_off", "ptb_offload_on"]
TSHARK_ALSO = ["fragments", "vxlan"]       # tcptrace neither reassembles nor opens VXLAN


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed (Debian package tshark)")
@pytest.mark.parametrize("key", CROSS + TSHARK_ALSO)
def test_same_connections_as_tshark(taken, key):
    assert capturelib.disagreements(taken[key]) == []


@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace not installed (Debian package tcptrace)")
@pytest.mark.parametrize("key", CROSS)
def test_same_mss_and_max_segment_as_tcptrace(taken, key):
    out = subprocess.run(["tcptrace", "-l", "-n", str(taken[key])], capture_output=True, text=True).stdout
    hosts = re.findall(r"host [ab]:\s+(\S+):(\d+)", out)
    mss = re.findall(r"mss requested:\s+(\d+) bytes\s+mss requested:\s+(\d+) bytes", out)
    seg = re.findall(r"max segm size:\s+(\d+) bytes\s+max segm size:\s+(\d+) bytes", out)
    theirs = {}
    for i, (m, s) in enumerate(zip(mss, seg)):
        a, b = hosts[2 * i], hosts[2 * i + 1]
        theirs[(a[0], int(a[1]))] = [int(m[0]), int(s[0])]
        theirs[(b[0], int(b[1]))] = [int(m[1]), int(s[1])]
    assert theirs and _same(_ours(taken[key]), theirs), (_ours(taken[key]), theirs)
