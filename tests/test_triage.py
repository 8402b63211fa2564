"""Every triage rule: a case that fires it and a case that must not, and the right command per release."""
from __future__ import annotations

from pathlib import Path

import pytest

import parsers
from toolkit import calc, triage
from toolkit.rules import catalog
from toolkit.rules import captured
from toolkit.hostfile import HostFacts
from toolkit.hosts import Host, deltas
from toolkit.probe.result import ProbeResult
from toolkit.stack import Route
from tests.stacklib import NETNS_ROUTES, outer_fragment_pair, stacked

# --------------------------------------------------------------------------- builders


def probe(target="192.0.2.10", pmtu=1500, method="local", black_hole=False, sent=1460, synack=1460, used=None,
          codes=(), local_mtu=1500, family="ipv4"):
    return ProbeResult(target=target, address=target, family=family, pmtu=pmtu, pmtu_method=method,
                       black_hole=black_hole, mss={"port": 23, "sent": sent, "synack": synack, "used": used},
                       findings=[{"code": c, "text": c, "confidence": "high"} for c in codes], local_mtu=local_mtu)


def clamped(to=536, after="10.0.2.2", ttl=2, **kw):
    """A --trace probe that located a router rewriting our SYN's MSS 1460 to `to`."""
    p = probe(**kw)
    p.clamp = {"sent": 1460, "to": to, "changed_after": after, "changed_after_ttl": ttl, "seen_to_ttl": 3,
               "port": 23, "hops": [{"ttl": 1, "address": "10.0.1.1", "mss": 1460, "quoted": 40},
                                    {"ttl": 2, "address": after, "mss": 1460, "quoted": 40},
                                    {"ttl": 3, "address": "10.0.3.2", "mss": to, "quoted": 40}]}
    return p


def pmtud_checked(verdict, after=1240, df_before=True, df_after=True, **kw):
    p = probe(**kw)
    p.pmtud = {"port": 21, "verdict": verdict, "mtu": 1280, "segment": 1460, "df_before": df_before,
               "after": after, "df_after": df_after, "waited_s": 0.5}
    return p


VOS_TWO = """Sun Nov 22 09:00:01 UTC 2026
netstat -statistics -protocol ip
ip:
          {a}  ipReasmReqds
          {b}  ipReasmOKs
           0  ipReasmFails

Sun Nov 22 10:00:01 UTC 2026
netstat -statistics -protocol ip
ip:
          {c}  ipReasmReqds
          {d}  ipReasmOKs
           0  ipReasmFails
"""

WIN_BLOCK = """Sun 11/22/2026
{time}

IP Statistics

  Packets Received                   = 6268757
  Reassembly Required                = {req}
  Reassembly Successful              = {ok}
  Reassembly Failures                = {fail}
  Datagrams Successfully Fragmented  = {fragok}
  Datagrams Failing Fragmentation    = {fragfail}
  Fragments Created                  = {created}
"""


def win_two(req=(100, 100), ok=(50, 50), fail=(0, 0), fragok=(0, 0), fragfail=(0, 0), created=(0, 0)):
    return "\n".join(WIN_BLOCK.format(time=t, req=req[i], ok=ok[i], fail=fail[i], fragok=fragok[i],
                                      fragfail=fragfail[i], created=created[i])
                     for i, t in enumerate(("09:00 AM", "10:00 AM")))


ROUTER = (Path(__file__).resolve().parent.parent / "fixtures" / "netstat" / "linux"
          / "vincentbernat-frag-counters-h1-r2.txt").read_text().split("On R2")[1]
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(path: str) -> str:
    return (FIXTURES / path).read_text()


def evidence_host(*files, dump=None, os="linux"):
    """A host with the socket tables / route caches of these fixtures/evidence files (and a dump)."""
    h = host(os, dump=fixture(dump) if dump else None)
    for name in files:
        found = []
        list(parsers.iter_parse(fixture(f"evidence/{name}"), source=name, evidence=found.append))
        h.evidence += found
    return h


def host(os=None, release=None, peer=None, probes=(), dump=None, dump_os=None, **facts):
    h = Host(HostFacts("h", os=os, release=release, peer=peer, **facts))
    h.probes = list(probes)
    if dump:
        h.snapshots = parsers.parse(dump, source="t", os=dump_os)
        h.deltas = deltas(h.snapshots)
    return h


def findings(h):
    return catalog.evaluate(h)


def codes(h):
    return [f.code for f in findings(h)]


def only(h, code):
    found = [f for f in findings(h) if f.code == code]
    assert len(found) == 1, [f.code for f in findings(h)]
    return found[0]


def commands(f):
    return "\n".join(c for r in f.recommendations for c in r.commands)


# --------------------------------------------------------------------------- fire / must not

FIRE = [
    ("vos probe 536", lambda: host("vos", "14.6", None, [probe(used=536, synack=536, codes=["mss-536-legacy"])]),
     "stcp-536-nonlocal"),
    ("vos non-local facts", lambda: host("vos", "14.7", "non-local"), "stcp-536-nonlocal"),
    ("tcpos non-local", lambda: host("tcpos", "14.6", "non-local"), "tcpos-small-mss"),
    ("536 seen, os unknown", lambda: host(None, None, None, [probe(used=536, synack=536, codes=["mss-536-legacy"])]),
     "mss-536-os-unknown"),
    ("ftx 2.4 non-local", lambda: host("ftx", "2.4", "non-local"), "ftx24-small-mss"),
    ("black hole", lambda: host("linux", None, None, [probe(pmtu=1400, method="inferred", black_hole=True)]),
     "pmtud-black-hole"),
    ("mss above path", lambda: host("linux", None, None, [probe(pmtu=1400, method="icmp", synack=1460, used=1460)]),
     "mss-above-path"),
    ("pmtu reduced", lambda: host("linux", None, None, [probe(pmtu=1400, method="icmp", synack=1360)]),
     "path-mtu-reduced"),
    ("synack below path", lambda: host("linux", None, None, [probe(synack=536, used=536)]), "synack-mss-below-path"),
    ("reassembly growing", lambda: host("vos", dump=VOS_TWO.format(a=92, b=46, c=96, d=48)), "reassembly-active"),
    ("reassembly seen once", lambda: host("vos", dump=VOS_TWO.split("\n\n")[0].replace("{a}", "92").replace("{b}", "46")),
     "reassembly-seen"),
    ("reassembly failing", lambda: host("windows", dump=win_two(req=(100, 300), ok=(50, 140), fail=(0, 9))),
     "reassembly-failing"),
    ("fragmenting outbound", lambda: host("windows", dump=win_two(fragok=(10, 40), created=(20, 80))),
     "fragmenting-outbound"),
    ("df drops", lambda: host("windows", dump=win_two(fragfail=(10, 40))), "df-drops"),
    ("router fragments", lambda: host("linux", dump=ROUTER), "router-fragmenting"),
    ("capture evidence", lambda: captured_host("lab/legacy536_client.pcap"), "capture-legacy-mss"),
    ("probe contradicts local peer", lambda: host("vos", "14.6", "local", [probe(used=536, synack=536,
                                                                                codes=["mss-536-legacy"])],
                                                  source="host.toml"), "facts-contradicted"),
    ("router clamps to 536", lambda: host("linux", None, None, [clamped(synack=536, used=536)]), "mss-clamped"),
    ("target honours ptb", lambda: host("linux", None, None, [pmtud_checked("honours")]), "target-honours-ptb"),
    ("target ignores ptb", lambda: host("vos", "14.7", None, [pmtud_checked("ignores", after=1460)]),
     "target-ignores-ptb"),
    ("target clears df", lambda: host("linux", None, None, [pmtud_checked("clears-df", 512, False, False)]),
     "target-clears-df"),
    ("jumbo", lambda: host("linux", mtu=9000), "jumbo-frames"),
    ("jumbo not end to end", lambda: host("linux", mtu=9000, probes=[probe(pmtu=1500, local_mtu=9000)]),
     "jumbo-not-end-to-end"),
    ("mathis", lambda: host("linux", bandwidth_bps=10e9, rtt_s=0.05, loss=1e-4), "mss-limits-throughput"),
    ("buffers small", lambda: host("linux", bandwidth_bps=10e9, rtt_s=0.02, tcp_rmem_max=6291456), "buffers-below-bdp"),
    ("buffers unknown", lambda: host("linux", bandwidth_bps=10e9, rtt_s=0.02), "buffer-size-for-bdp"),
    ("ptb received, route cache learned", lambda: evidence_host("lab-allow-ip-route-show-cache.txt",
                                                                dump="netstat/linux/netns-client-ptb-netstat-s.txt"),
     "ptb-received"),
    ("router sent frag-needed for its DF drops", lambda: host("linux", dump=fixture("netstat/linux/netns-r1-ptb-netstat-s.txt")),
     "ptb-sent"),
    ("timeouts, no frag-needed", lambda: host("linux", dump=fixture("netstat/linux/netns-client-blackhole-nstat-az.txt")),
     "timeouts-without-ptb"),
    ("plpmtud probing", lambda: host("linux", dump=fixture("netstat/linux/netns-client-probing2-netstat-s.txt")),
     "plpmtud-active"),
    ("aix black-hole detection", lambda: host("aix", dump=fixture("netstat/aix/collector_comment_netstat_s.txt")),
     "blackhole-detected"),
    ("peer sends 536", lambda: evidence_host("lab-allow-ss-tin.txt"), "peers-536"),
    ("peer black hole", lambda: evidence_host("lab-drop-ss-tino.txt"), "peer-black-hole"),
    ("learned pmtu", lambda: evidence_host("lab-allow-ss-tin.txt", "lab-allow-ip-route-show-cache.txt"), "learned-pmtu"),
    ("vxlan above its underlay", lambda: stacked("netns-ip-d-link-show.txt", NETNS_ROUTES), "overlay-mtu-above-underlay"),
    ("vxlan without dev", lambda: stacked("netns-ip-d-link-show.txt"), "tunnel-without-underlay"),
    ("container port above its path", lambda: stacked("netns-ip-d-link-show.txt", NETNS_ROUTES), "port-above-path"),
    ("clamp above path", lambda: stacked("netns-ip-d-link-show.txt", NETNS_ROUTES, clamps="netns-iptables-save-v4-v6.txt"),
     "mss-clamp-above-path"),
    ("overlay fragments its outer packets", lambda: outer_fragment_pair()[0], "overlay-fragmenting-outer"),
    ("probe beside the stack", lambda: stacked("netns-ip-d-link-show.txt", NETNS_ROUTES,
                                               probes=[probe(target="10.0.9.7", pmtu=1500, method="local")]),
     "path-predicted-vs-measured"),
]

MUST_NOT = [
    ("vos local peer", lambda: host("vos", "14.6", "local"), "stcp-536-nonlocal"),
    ("vos peer unknown, no probe", lambda: host("vos", "14.6"), "stcp-536-nonlocal"),
    ("vos already tuned", lambda: host("vos", "14.6", "non-local", [probe(used=1460)]), "stcp-536-nonlocal"),
    ("vos path no bigger", lambda: host("vos", "14.6", "non-local", path_mtu=576), "stcp-536-nonlocal"),
    ("tcpos local", lambda: host("tcpos", "14.6", "local"), "tcpos-small-mss"),
    ("os unknown, full segments", lambda: host(None, None, None, [probe(used=1460)]), "mss-536-os-unknown"),
    ("536 seen, os known", lambda: host("vos", "14.6", None, [probe(used=536, synack=536)]), "mss-536-os-unknown"),
    ("ftx 3.4", lambda: host("ftx", "3.4", "non-local"), "ftx24-small-mss"),
    ("linux non-local leaves MSS alone", lambda: host("linux", "RHEL 8", "non-local"), "stcp-536-nonlocal"),
    ("no black hole", lambda: host("linux", None, None, [probe(pmtu=1400, method="icmp", synack=1360)]),
     "pmtud-black-hole"),
    ("mss fits path", lambda: host("linux", None, None, [probe(pmtu=1400, method="icmp", synack=1360, used=1360)]),
     "mss-above-path"),
    ("pmtu full", lambda: host("linux", None, None, [probe()]), "path-mtu-reduced"),
    ("synack full", lambda: host("linux", None, None, [probe(synack=1460, used=1460)]), "synack-mss-below-path"),
    ("synack small on vos is the legacy rule's", lambda: host("vos", "14.6", None, [probe(synack=536, used=536)]),
     "synack-mss-below-path"),
    ("reassembly flat", lambda: host("vos", dump=VOS_TWO.format(a=92, b=46, c=92, d=46)), "reassembly-active"),
    ("nothing ever reassembled is not 'seen'", lambda: host("vos", dump=VOS_TWO.format(a=0, b=0, c=0, d=0)),
     "reassembly-seen"),
    ("no failures", lambda: host("windows", dump=win_two(req=(100, 300), ok=(50, 150))), "reassembly-failing"),
    ("no outbound fragments", lambda: host("windows", dump=win_two()), "fragmenting-outbound"),
    ("no df drops", lambda: host("windows", dump=win_two(fragok=(10, 40), created=(20, 80))), "df-drops"),
    ("a host is not a router", lambda: host("windows", dump=win_two(fragok=(10, 40), created=(20, 80))),
     "router-fragmenting"),
    ("capture of full segments", lambda: captured_host("synthetic/ptb_obeyed.pcap"), "capture-legacy-mss"),
    ("probe agrees with the facts", lambda: host("vos", "14.6", "non-local", [probe(used=536, synack=536)],
                                                 source="host.toml"), "facts-contradicted"),
    ("no clamp seen", lambda: host("linux", None, None, [clamped(to=None, synack=536, used=536)]), "mss-clamped"),
    ("pmtud not checked", lambda: host("linux", None, None, [probe()]), "target-honours-ptb"),
    ("pmtud check without verdict", lambda: host("vos", "14.7", None, [pmtud_checked(None)]), "target-ignores-ptb"),
    ("target that honours does not clear df", lambda: host("linux", None, None, [pmtud_checked("honours")]),
     "target-clears-df"),
    ("mtu 1500 is not jumbo", lambda: host("linux", mtu=1500), "jumbo-frames"),
    ("jumbo end to end", lambda: host("linux", mtu=9000, probes=[probe(pmtu=9000, local_mtu=9000)]),
     "jumbo-not-end-to-end"),
    ("mathis above link", lambda: host("linux", bandwidth_bps=1e6, rtt_s=0.05, loss=1e-4), "mss-limits-throughput"),
    ("mathis without loss", lambda: host("linux", bandwidth_bps=10e9, rtt_s=0.05), "mss-limits-throughput"),
    ("buffers big enough", lambda: host("linux", bandwidth_bps=10e9, rtt_s=0.02, tcp_rmem_max=64 * 2 ** 20),
     "buffers-below-bdp"),
    ("buffers big enough, no advice", lambda: host("linux", bandwidth_bps=10e9, rtt_s=0.02, tcp_rmem_max=64 * 2 ** 20),
     "buffer-size-for-bdp"),
    ("no bandwidth no buffers", lambda: host("linux", rtt_s=0.02), "buffer-size-for-bdp"),
    ("destination unreachables alone are no frag-needed", lambda: host("bsd", dump=fixture("netstat/bsd/macos_big_sur.txt")),
     "ptb-received"),
    ("unreachables sent, nothing DF-dropped", lambda: host("windows", dump=fixture(
        "netstat/windows/net_process_e_s_indented.txt")), "ptb-sent"),
    ("timeouts with frag-needed received", lambda: host("linux", dump=fixture("netstat/linux/netns-client-ptb-netstat-s.txt")),
     "timeouts-without-ptb"),
    ("probing never fired", lambda: host("linux", dump=fixture("netstat/linux/netns-client-blackhole-nstat-az.txt")),
     "plpmtud-active"),
    ("macos detection never fired", lambda: host("bsd", dump=fixture("netstat/bsd/macos_big_sur.txt")),
     "blackhole-detected"),
    ("rcvmss 536 before data, SYN-SENT mss 524", lambda: evidence_host("notes-rhel8-ss-tiepm.txt"), "peers-536"),
    ("pmtu learned is no black hole", lambda: evidence_host("lab-allow-ss-tin.txt"), "peer-black-hole"),
    ("full path everywhere", lambda: evidence_host("notes-rhel8-ss-tiepm.txt"), "learned-pmtu"),
    ("kernel-sized vxlan", lambda: stacked("jp-notes-vxlan.txt"), "overlay-mtu-above-underlay"),
    ("vxlan with dev", lambda: stacked("jp-notes-vxlan.txt"), "tunnel-without-underlay"),
    ("bridge ports at the path's MTU", lambda: stacked("jp-notes-bridge-ports.txt", [Route("default", "br0")]),
     "port-above-path"),
    ("clamp that fits", lambda: stacked("netns-ip-d-link-show.txt", NETNS_ROUTES, clamps="ufw-before-rules-set-mss.txt"),
     "mss-clamp-above-path"),
    ("endpoints not paired", lambda: outer_fragment_pair(peered=False)[0], "overlay-fragmenting-outer"),
    ("no probe beside the stack", lambda: stacked("netns-ip-d-link-show.txt", NETNS_ROUTES),
     "path-predicted-vs-measured"),
]


@pytest.mark.parametrize("name,make,code", FIRE, ids=[f[0] for f in FIRE])
def test_rule_fires(name, make, code):
    assert code in codes(make())


@pytest.mark.parametrize("name,make,code", MUST_NOT, ids=[m[0] for m in MUST_NOT])
def test_rule_must_not_fire(name, make, code):
    assert code not in codes(make())


def test_every_code_has_a_firing_and_a_silent_case():
    # the capture codes are the capture analysis's own, each with its cases in tests/test_capture.py;
    # here one passes through the rule that attaches them to a host
    own = set(catalog.CODES) - set(captured.CODES)
    assert {c for _, _, c in FIRE} - set(captured.CODES) == own
    assert {c for _, _, c in MUST_NOT} - set(captured.CODES) == own


def captured_host(name):
    from toolkit import capture
    h = host("vos", "14.6")
    h.capture_findings = capture.analyze([str(Path(__file__).resolve().parent.parent / "fixtures" / "captures"
                                              / name)]).findings
    return h


# --------------------------------------------------------------------------- commands per release

def test_vos_14_6_uses_set_longword_in_hex():
    f = only(host("vos", "14.6.0ak", "non-local"), "stcp-536-nonlocal")
    cmds = commands(f)
    assert "analyze_system -request_line 'set_longword default_min_mtu 5c8' -quit" in cmds
    assert "set_stcp_param" not in cmds
    assert "set_external_variable default_min_mtu -in ip.cp.pm -type integer -to 1480" in cmds
    ext = next(r for r in f.recommendations if r.code == "vos-set-external-variable-ip-cp-pm")
    text = " ".join(ext.caveats)
    assert "before STCP starts" in text and "after every VOS upgrade" in text and "set_pm_version" in text
    assert any("start_stcp.cm" in r.where for r in f.recommendations)


def test_vos_14_7_uses_set_stcp_param():
    cmds = commands(only(host("vos", "14.7", "non-local"), "stcp-536-nonlocal"))
    assert "analyze_system -request_line 'set_stcp_param min_mss 1480' -quit" in cmds
    assert "set_longword" not in cmds


def test_vos_release_unknown_gives_both():
    cmds = commands(only(host("vos", None, "non-local"), "stcp-536-nonlocal"))
    assert "set_stcp_param min_mss 1480" in cmds and "set_longword default_min_mtu 5c8" in cmds


def test_vos_min_mss_follows_the_path():
    f = only(host("vos", "14.6", None, [probe(pmtu=1492, method="icmp", used=536, synack=536)]), "stcp-536-nonlocal")
    assert "set_longword default_min_mtu 5d4" not in commands(f)
    assert "set_longword default_min_mtu 5c0" in commands(f)          # 1492 - 20 = 1472 = 0x5c0
    assert f.data["path_mss"] == 1452


def test_tcpos_before_and_after_otp_868():
    old = only(host("tcpos", "14.6", "non-local"), "tcpos-small-mss")
    new = only(host("tcpos", "14.7.1", "non-local"), "tcpos-small-mss")
    assert old.data["default_mss"] == 512 and new.data["default_mss"] == 536
    for f in (old, new):
        cmds = commands(f)
        assert "analyze_system -request_line 'set_longword tcpos_default_mss$ 5b4' -quit" in cmds
        assert "set_external_variable tcpos_default_mss$ -in tcp.pm -type integer -to 1460" in cmds
        assert "1480" not in cmds                                    # no TCP header counted
    assert "otp-868" in " ".join(old.evidence) and "512" in " ".join(old.evidence)
    assert "200 (512)" in " ".join(c for r in old.recommendations for c in r.caveats)
    assert "218 (536)" in " ".join(c for r in new.recommendations for c in r.caveats)


def test_ftx_24_invents_no_command():
    f = only(host("ftx", "2.4", "non-local"), "ftx24-small-mss")
    assert "\n".join(c for r in f.recommendations if r.code != "measure-path-mtu" for c in r.commands) == ""
    assert any("3.x" in r.title for r in f.recommendations)


@pytest.mark.parametrize("os_name,release,expect,absent", [
    ("linux", "RHEL 8", "sysctl -w net.ipv4.tcp_mtu_probing=1", "netsh"),
    ("linux", "RHEL 8", "advmss 1360", "netsh"),
    ("windows", "Windows Server 2003", r"Interfaces\{<interface GUID>}", "netsh interface"),
    ("windows", "Windows Server 2019", 'set subinterface "<interface name>" mtu=1400 store=persistent', "Interfaces\\{"),
    ("windows", "Windows Server 2019", "EnablePMTUBHDetect /t REG_DWORD /d 1", "ndd"),
    ("hpux", "11.31", "ndd -set /dev/ip ip_pmtu_strategy", "sysctl"),
])
def test_black_hole_fixes_per_os(os_name, release, expect, absent):
    f = only(host(os_name, release, None, [probe(pmtu=1400, method="inferred", black_hole=True)]), "pmtud-black-hole")
    cmds = commands(f)
    assert expect in cmds and absent not in cmds
    # the network fixes come with every OS
    assert "--icmp-type fragmentation-needed -j ACCEPT" in cmds and "packet-too-big" in cmds
    assert "ip tcp adjust-mss 1360" in cmds and "TCPMSS" in cmds


def test_pmtud_os_leave_mss_alone_without_evidence():
    for os_name in ("linux", "windows", "hpux"):
        found = codes(host(os_name, None, "non-local"))
        assert not any(c in found for c in ("stcp-536-nonlocal", "tcpos-small-mss", "ftx24-small-mss",
                                             "synack-mss-below-path", "mss-above-path")), (os_name, found)


# --------------------------------------------------------------------------- numbers in the findings

def test_reassembly_rate_per_hour():
    f = only(host("vos", dump=VOS_TWO.format(a=92, b=46, c=96, d=48)), "reassembly-active")
    assert f.data["increase"]["ReasmReqds"] == 4 and f.data["per_hour"]["ReasmReqds"] == 4.0
    assert "4 per hour" in f.evidence[0]
    assert any("packet_monitor" in c for r in f.recommendations for c in r.caveats)


def test_reassembly_failing_share():
    f = only(host("windows", dump=win_two(req=(100, 300), ok=(50, 140), fail=(0, 10))), "reassembly-failing")
    assert f.data["fails"] == 10
    assert "10% of reassemblies failed in that time" in " ".join(f.evidence)   # +10 failed, +90 reassembled
    assert "+10 reassemblies failed (10 per hour)" in f.evidence[0]


def test_jumbo_mss_8960():
    f = only(host("linux", mtu=9000), "jumbo-frames")
    assert "8960" in f.title
    text = " ".join(c for r in f.recommendations for c in r.caveats)
    assert "9080" in text and "tcp_mtu_probing=1" in text


def test_buffers_seed002_sysctl_lines():
    f = only(host("linux", bandwidth_bps=10e9, rtt_s=0.02, tcp_rmem_max=6291456), "buffers-below-bdp")
    assert f.data["bdp_bytes"] == 25_000_000 and f.data["buffer_mib_rounded"] == 52_428_800
    assert "sysctl -w net.ipv4.tcp_rmem='10240 87380 52428800'" in commands(f)
    assert "sysctl -w net.ipv4.tcp_wmem='10240 87380 52428800'" in commands(f)


def test_buffers_bbr_under_loss_factor_4():
    f = only(host("linux", bandwidth_bps=10e9, rtt_s=0.02, loss=1e-4, congestion="bbr"), "buffer-size-for-bdp")
    assert f.data["factor"] == 4 and f.data["buffer_mib_rounded"] == 100 * calc.MIB


def test_impact_reproduces_table1_shape():
    f = only(host("vos", "14.6", "non-local"), "stcp-536-nonlocal")
    i = f.data["impact"]
    assert (i["mss_before"], i["mss_after"]) == (536, 1460)
    assert abs(i["packets_before"] - 3050) / 3050 <= 0.10 and abs(i["packets_after"] - 1204) / 1204 <= 0.10
    assert i["overhead_pct_before"] == round(100 * 58 / 594, 2)
    assert all(r.impact is i for r in f.recommendations if r.code.startswith("vos-"))


def test_impact_mathis_when_rtt_and_loss_known():
    f = only(host("vos", "14.6", "non-local", rtt_s=0.05, loss=1e-4), "stcp-536-nonlocal")
    assert f.data["impact"]["mathis_bps_before"] == round(calc.mathis(536, 0.05, 1e-4))
    assert f.data["impact"]["mathis_bps_after"] == round(calc.mathis(1460, 0.05, 1e-4))


def test_probe_file_forms(tmp_path):
    one = probe().to_dict()
    (tmp_path / "a.json").write_text(__import__("json").dumps(one))
    (tmp_path / "b.json").write_text(__import__("json").dumps([one, one]))
    (tmp_path / "c.json").write_text("\n".join(__import__("json").dumps(one) for _ in range(3)))
    assert [len(triage.load_probes(str(tmp_path / n))) for n in ("a.json", "b.json", "c.json")] == [1, 2, 3]
    (tmp_path / "bad.json").write_text('{"pmtu": 1500}')
    with pytest.raises(triage.InputError, match="bad.json: item 0: not a probe result"):
        triage.load_probes(str(tmp_path / "bad.json"))


def test_clamp_found_by_trace_replaces_the_legacy_and_synack_guesses():
    """A VOS host behind a router that clamps to 536: the 536 is the router's doing, so no
    stcp-536-nonlocal and no synack-mss-below-path; the router is named, with the fix there."""
    h = host("vos", "14.6", None, [clamped(synack=536, used=536, codes=["synack-mss-below-path"])])
    assert codes(h) == ["mss-clamped"]
    f = only(h, "mss-clamped")
    assert (f.severity, f.confidence) == ("warning", "high")
    assert "after hop 2 (10.0.2.2: that router" in f.title and f.data["changed_after"] == "10.0.2.2"
    assert f.data["impact"]["mss_before"] == 536 and f.data["impact"]["mss_after"] == 1460
    assert f.recommendations[0].code == "net-raise-clamp" and "--set-mss 1460" in commands(f)
    # without the trace the same host is the legacy case
    assert "stcp-536-nonlocal" in codes(host("vos", "14.6", None, [probe(synack=536, used=536)]))
    # a clamp to what the path carries is only information; one not located is medium
    ok = only(host("linux", None, None, [clamped(to=1360, pmtu=1400, method="icmp", synack=1360)]), "mss-clamped")
    assert (ok.severity, ok.recommendations) == ("info", [])
    vague = only(host("linux", None, None, [clamped(after=None, ttl=None)]), "mss-clamped")
    assert vague.confidence == "medium"


def test_pmtud_verdicts_carry_the_hosts_own_advice():
    vos = only(host("vos", "14.7", None, [pmtud_checked("ignores", after=1460)]), "target-ignores-ptb")
    assert (vos.severity, vos.confidence) == ("problem", "high")
    assert [r.code for r in vos.recommendations][0] == "vos-set-stcp-param-min-mss"
    assert "set_stcp_param min_mss 1480" in commands(vos)
    linux = only(host("linux", None, None, [pmtud_checked("clears-df", 512, False, False)]), "target-clears-df")
    assert linux.severity == "warning" and "sysctl -w net.ipv4.ip_no_pmtu_disc=0" in commands(linux)
    assert only(host("linux", None, None, [pmtud_checked("honours")]), "target-honours-ptb").severity == "info"


def test_finding_and_recommendation_dicts_hold_every_field_in_order():
    # to_dict is written out by hand (asdict deep-copies, most of triage --json's time): a
    # field added to either dataclass must show up in its JSON too
    from dataclasses import asdict, fields
    from toolkit.findings import Finding, Recommendation
    r = Recommendation("c", "t", ["a"], "x", "w", ["cv"], {"k": {"n": 1}}, "network")
    f = Finding("c", "t", ["e"], "low", "info", [r], {"d": [1, {"x": 2}]})
    for obj in (r, f):
        assert list(obj.to_dict()) == [x.name for x in fields(obj)]
        assert obj.to_dict() == asdict(obj)
