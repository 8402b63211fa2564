"""Captures as evidence: the capture reader (toolkit/capture) reports per connection what
each side advertised and sent; these rules turn that evidence into findings with advice,
for `mssdiag capture` and for triage (the host model attaches them to the host whose
address `data["host"]` names).

Codes are stable (docs/capture.md). Each finding's data names the connection (`source`,
`flow`) and `host`. A finding that rests on segment sizes is never made of a connection
captured before segmentation (offload) or with frames that could not be decoded: those
sizes are not the wire's.
"""
from __future__ import annotations

from typing import Iterable, List

from toolkit import calc, platforms
from toolkit.findings import Finding, Recommendation
from toolkit.platforms import network

CODES = ("capture-legacy-mss", "capture-small-segments", "capture-above-mss", "capture-offload-oversize",
         "capture-ptb-obeyed", "capture-ptb-ignored", "capture-black-hole", "capture-fragments-no-df",
         "capture-fragments", "capture-mss-clamped", "capture-tunnel-mss")
LEGACY_MSS = {536: "the RFC 879 default (VOS STCP and TCP_OS 14.7+ to non-local peers)",
              512: "TCP_OS before VOS 14.7 (otp-868)",
              1220: "the IPv6 minimum (1280 - 60), a conservative legacy default"}
SMALL = 536
FULL = 1460


def findings(host) -> List[Finding]:
    """Triage's rule: the capture findings attached to this host."""
    return list(host.capture_findings)


def _legacy_recs(path_mtu: int = 1500) -> List[Recommendation]:
    """What raises a legacy default, from every platform whose stack has one."""
    out: List[Recommendation] = []
    for name in platforms.names():
        plat = platforms.get(name)
        if plat is not None and plat.default_mss(None, False)[0] is not None:
            out += plat.raise_mss(path_mtu, None)
    return out


def without_offload() -> Recommendation:
    return Recommendation(
        "capture-without-offload", "Capture again without segmentation offload, or on a mirror port",
        ["ethtool -k IFACE | grep -E 'segmentation-offload|receive-offload'   # what is on now",
         "ethtool -K IFACE tso off gso off gro off",
         "tcpdump -i IFACE -s 128 -w capture.pcap host PEER",
         "ethtool -K IFACE tso on gso on gro on   # afterwards: put them back"],
        applies_to="Linux, on the host that captures", where="a root shell on the capturing host",
        caveats=["A capture on a SPAN / mirror port or a TAP between the hosts shows the frames as they are on "
                 "the wire without touching the hosts.",
                 "Windows: Disable-NetAdapterLso -Name NIC and Disable-NetAdapterRsc -Name NIC (Enable-... after).",
                 "Offload changes nothing on the wire: segments there follow the MSS; only what the capturing "
                 "host's packet socket sees is merged or not yet split."],
        scope="host")


def _hdr(family: str) -> int:
    return (calc.IPV6 if family == "ipv6" else calc.IPV4) + calc.TCP


def for_flow(d: dict, mtu: int, clamped: bool = False) -> List[Finding]:
    """The findings one connection's evidence supports; `clamped`: another capture shows its SYN's
    MSS rewritten on the way, so a legacy-looking MSS is the clamp's doing, not the host's."""
    out: List[Finding] = []
    fam = d["family"]
    sizes_ok = not d["captured_before_segmentation"] and not d["frames_undecoded"]
    sides = (("client_to_server", "server_to_client", "SYN"), ("server_to_client", "client_to_server", "SYN-ACK"))
    for mine, theirs, syn in sides:
        me, peer = d[mine], d[theirs]
        if not _notable(me):
            continue
        where = {"source": d["source"], "flow": d["id"], "host": me["addr"], "peer": peer["addr"],
                 "port": me["port"]}
        who = f"{me['addr']}:{me['port']}"
        if not clamped:
            out += _legacy(me, peer, syn, who, where)
        out += _offload(me, peer, who, where)
        if sizes_ok:
            out += _small(me, peer, who, where)
            out += _above(me, peer, who, where, mtu, fam)
            out += _ptb(me, who, where, fam)
            out += _hole(me, who, where, fam)
        out += _frags(me, who, where, fam)
    if d["encapsulation"]:
        out += _tunnel(d, mtu)
    return out


def _notable(me: dict) -> bool:
    """Whether any rule below can fire for this side (most connections: none)."""
    return bool(me["syn_seen"] and (me["mss"] is None or me["mss"] in LEGACY_MSS) or me["offload_oversize"]
                or me["above_peer_mss"] or me["ptb"] or me["black_hole"] or me["fragments"]
                or me["max_payload_segments"] >= 3 and me["max_payload"] and me["max_payload"] <= SMALL)


def _legacy(me, peer, syn, who, where) -> List[Finding]:
    if not me["syn_seen"]:
        return []
    mss = me["mss"]
    if mss is None and me["mss_note"] != "absent from the SYN":
        return []      # the options were not seen: an MSS may have been there
    if mss is not None and mss not in LEGACY_MSS:
        return []
    why = LEGACY_MSS.get(mss, "no MSS option: the peer must assume 536 (RFC 879 / RFC 1122)")
    shown = mss if mss is not None else "none"
    ev = [f"{syn} from {who} advertised MSS {shown}: {why}"]
    big = peer["mss"] is not None and peer["mss"] >= FULL
    if big:
        ev.append(f"its peer advertised {peer['mss']}: every segment to {me['addr']} is capped at "
                  f"{mss or 536} although the peer could send {peer['mss']}")
    if peer["max_payload"]:
        ev.append(f"largest segment the peer sent: {peer['max_payload']} bytes")
    ev.append("a middlebox clamping the MSS shows the same in one capture: compare with a capture on the "
              "other side (mssdiag capture A --second B)")
    return [Finding("capture-legacy-mss", f"{who} advertises a legacy MSS ({shown})", ev,
                    "high", "problem" if big or mss is None else "warning",
                    _legacy_recs() if mss != 1220 else [],
                    dict(where, mss=mss, peer_mss=peer["mss"]))]


def _small(me, peer, who, where) -> List[Finding]:
    mine, theirs = me["mss"], peer["mss"]
    if not (mine and theirs and mine >= FULL and theirs >= FULL):
        return []
    if not me["max_payload"] or me["max_payload"] > SMALL or me["max_payload_segments"] < 3:
        return []      # a ceiling hit again and again, not an application writing small messages
    ev = [f"both sides advertised at least {FULL} (SYN/SYN-ACK: {mine} and {theirs}), yet {who} sent "
          f"{me['data_packets']} data segments of at most {me['max_payload']} bytes, {me['max_payload_segments']} of "
          "them exactly that size (a ceiling, not the application's message size)",
          "that is VOS STCP's rule for non-local peers (Stratus, \"Tuning your MSS\"): 536 bytes whatever the peer advertises, "
          "unless min_mss / default_min_mtu was raised"]
    return [Finding("capture-small-segments", f"{who} sends at most {me['max_payload']}-byte segments although "
                    f"both sides advertised >= {FULL}", ev, "high" if me["max_payload_segments"] >= 5 else "medium",
                    "problem", _legacy_recs(), dict(where, max_payload=me["max_payload"], mss=mine, peer_mss=theirs))]


def _offload(me, peer, who, where) -> List[Finding]:
    if not me["offload_oversize"]:
        return []
    ev = [f"{me['offload_oversize']} segment(s) from {who} carried up to {me['offload_max']} bytes"
          + (f", above the peer's MSS {peer['mss']}" if peer["mss"] is not None else "")
          + ": no wire carries those; the capturing host's stack had not split them yet (TSO/GSO on send) "
          "or had merged them (GRO/LRO on receive)",
          me["segmentation"],
          "segment sizes from this capture are not the wire's: no size-based finding is made of this connection"]
    return [Finding("capture-offload-oversize", f"Capture taken with segmentation offload: {who}'s wire segments "
                    "are not visible", ev, "high", "info", [without_offload()],
                    dict(where, count=me["offload_oversize"], max=me["offload_max"]))]


def _above(me, peer, who, where, mtu, fam) -> List[Finding]:
    if not me["above_peer_mss"]:
        return []
    ev = [f"{me['above_peer_mss']} segment(s) from {who} carried up to {me['above_peer_mss_max']} bytes, "
          f"above the {peer['mss']} its peer advertised (and within the capture host's MTU {mtu}, so not "
          "an offload artefact)",
          "a sender must never exceed the peer's MSS: the receiver or a router on a smaller-MTU path drops "
          "or fragments them"]
    return [Finding("capture-above-mss", f"{who} sends segments above its peer's MSS", ev, "high", "problem",
                    [network.clamp(peer["mss"] + _hdr(fam), fam)],
                    dict(where, count=me["above_peer_mss"], max=me["above_peer_mss_max"], peer_mss=peer["mss"]))]


def _ptb(me, who, where, fam) -> List[Finding]:
    if not me["ptb"]:
        return []
    p = me["ptb"][0]
    kind = "ICMPv6 Packet Too Big" if fam == "ipv6" else "ICMP fragmentation-needed"
    after = me["after_ptb"] or {}
    ev = [f"{len(me['ptb'])} {kind} message(s) for this connection from {p['from']}, next-hop MTU {p['mtu']}"
          + (f", quoting sequence {p['seq']} (relative)" if p["seq"] is not None else "")]
    if me["shrank_after_ptb"]:
        ev.append(f"afterwards {who} sent {after.get('fitting')} segment(s) that fit (largest "
                  f"{after.get('largest_fitting')} bytes of data)" +
                  (f" and {after['too_big']} that did not (in flight when the PTB came)" if after.get("too_big") else ""))
        return [Finding("capture-ptb-obeyed", f"{who} obeyed an {kind} (path MTU {p['mtu']})", ev + [
            "PMTU discovery works on this path now; every filter that later drops these ICMP messages turns it "
            "into a black hole"], "high", "warning", network.fixes(p["mtu"], fam),
            dict(where, mtu=p["mtu"], ptbs=len(me["ptb"])))]
    if after.get("too_big"):
        ev.append(f"afterwards {who} still sent {after['too_big']} segment(s) larger than {p['mtu']} bytes and none "
                  "that fit: it ignores PMTU discovery messages")
        return [Finding("capture-ptb-ignored", f"{who} ignored an {kind} (path MTU {p['mtu']})", ev, "high", "problem",
                        [network.clamp(p["mtu"], fam)], dict(where, mtu=p["mtu"], ptbs=len(me["ptb"])))]
    return []


def _hole(me, who, where, fam) -> List[Finding]:
    bh = me["black_hole"]
    if not bh:
        return []
    ev = [f"{who} sent the same {bh['size']}-byte segment {bh['sends']} times; the peer never acknowledged it "
          "and no ICMP fragmentation needed / Packet Too Big arrived in the capture"]
    if bh["then"] == "smaller segments":
        ev.append(f"then it resent the data in smaller segments (IP length {bh['smaller_ip_len']}): the sender's "
                  "own black-hole detection (e.g. Linux tcp_mtu_probing) got it through")
    else:
        ev.append("then the connection died: no acknowledgement for that data to the end of the capture")
    ev.append("a router on the path has a smaller MTU and its ICMP is dropped (PMTUD black hole)")
    recs = [network.allow_icmp(fam)]
    if bh.get("smaller_ip_len"):
        recs.append(network.clamp(bh["smaller_ip_len"], fam))
    return [Finding("capture-black-hole", f"PMTUD black hole: {who}'s full-size segments vanish", ev,
                    "high" if bh["sends"] >= 4 or bh["then"] == "smaller segments" else "medium", "problem", recs,
                    dict(where, **bh))]


def _frags(me, who, where, fam) -> List[Finding]:
    if not me["fragments"]:
        return []
    lost = (f"; {me['incomplete_datagrams']} datagram(s) never completed in the capture"
            if me["incomplete_datagrams"] else "")
    if fam == "ipv4" and me["df_share"] == 0:
        ev = [f"{me['fragments']} fragment(s) of {me['fragmented_datagrams']} datagram(s) from {who}; none of its "
              "packets had DF set" + lost,
              "without DF the host does no PMTU discovery: routers fragment its segments and the receiver "
              "reassembles them (ReasmReqds / ReasmOKs grow in its netstat -s)"]
        biggest = me["max_fragment_ip_len"] or 0
        return [Finding("capture-fragments-no-df", f"{who} sends without DF and its segments are fragmented", ev,
                        "high", "problem", [network.clamp(biggest, fam)] if biggest >= 576 else [],
                        dict(where, fragments=me["fragments"], max_fragment_ip_len=me["max_fragment_ip_len"]))]
    ev = [f"{me['fragments']} fragment(s) of {me['fragmented_datagrams']} datagram(s) from {who}, largest fragment "
          f"{me['max_fragment_ip_len']} bytes" + lost]
    return [Finding("capture-fragments", f"Fragmented segments from {who}", ev, "high", "warning", [],
                    dict(where, fragments=me["fragments"]))]


def _tunnel(d: dict, mtu: int) -> List[Finding]:
    """An MSS that the encapsulation explains: the outer MTU less the layers' bytes."""
    enc = d["encapsulation"]
    if not enc or not enc["overhead"]:
        return []
    inner = mtu - enc["overhead"]
    want = inner - _hdr(d["family"])
    out = []
    for side, syn in (("client_to_server", "SYN"), ("server_to_client", "SYN-ACK")):
        me = d[side]
        if me["mss"] is None:
            continue
        layers = "/".join(enc["layers"])
        if me["mss"] == want:
            ev = [f"{syn} from {me['addr']}:{me['port']} advertised MSS {me['mss']} = {mtu} (outer MTU) - "
                  f"{enc['overhead']} ({layers}) - {_hdr(d['family'])} (IP and TCP headers)",
                  "the host (or a clamp on the way) sized its segments for the encapsulation: full-size segments "
                  "fit the outer link without fragmentation"]
            out.append(Finding("capture-tunnel-mss", f"MSS {me['mss']} matches the {layers} overhead", ev, "high",
                               "info", [], {"source": d["source"], "flow": d["id"], "host": me["addr"],
                                            "mss": me["mss"], "overhead": enc["overhead"], "inner_mtu": inner}))
        elif me["mss"] > want and not any(x.startswith(("mpls", "pw-")) for x in enc["layers"]):
            # (MPLS links carry the labels on top of a 1500-byte payload as a rule: no warning)
            ev = [f"{syn} from {me['addr']}:{me['port']} advertised MSS {me['mss']}, but inside {layers} "
                  f"({enc['overhead']} bytes) a {mtu}-byte outer MTU carries {want}",
                  "full-size segments must be fragmented or dropped at the tunnel entry unless PMTU discovery "
                  "or an MSS clamp lowers them"]
            out.append(Finding("capture-tunnel-mss", f"MSS {me['mss']} is above what {layers} carries ({want})", ev,
                               "high", "warning", [network.clamp(inner, d["family"])],
                               {"source": d["source"], "flow": d["id"], "host": me["addr"], "mss": me["mss"],
                                "overhead": enc["overhead"], "inner_mtu": inner}))
    return out


def for_loose(frags: Iterable[dict]) -> List[Finding]:
    out = []
    for f in frags:
        if f["family"] == "ipv4" and f["df_packets"] == 0:
            ev = [f"{f['fragments']} {f['protocol']} fragment(s) ({f['datagrams']} datagram(s)) from {f['src']} to "
                  f"{f['dst']} without DF, largest {f['max_ip_len']} bytes",
                  "the sender does no PMTU discovery for this traffic: the receiver reassembles every datagram"]
            out.append(Finding("capture-fragments-no-df", f"{f['src']} sends fragmented {f['protocol']} without DF",
                               ev, "high", "warning", [],
                               {"source": f["source"], "host": f["src"], "peer": f["dst"], "fragments": f["fragments"]}))
        else:
            out.append(Finding("capture-fragments", f"Fragments from {f['src']} to {f['dst']} ({f['protocol']})",
                               [f"{f['fragments']} fragment(s) of {f['datagrams']} datagram(s), largest "
                                f"{f['max_ip_len']} bytes"], "high", "info", [],
                               {"source": f["source"], "host": f["src"], "peer": f["dst"], "fragments": f["fragments"]}))
    return out


def clamped(a: dict, b: dict, rec: dict) -> Finding:
    """The same SYN at two capture points (toolkit/capture/clamp.py matched them) with another MSS."""
    ev = []
    for label, i in (("SYN", "syn_mss"), ("SYN-ACK", "synack_mss")):
        x, y = rec[i]
        if x != y:
            ev.append(f"{label} MSS {x if x is not None else 'none'} in {a['source']} (connection {a['id']}) and "
                      f"{y if y is not None else 'none'} in {b['source']} (connection {b['id']}), same segment "
                      f"(ISN {rec['isn']}, matched by {rec['matched_by'].replace('+', ' and ')})")
    ev.append("a router or firewall between the two capture points rewrites the MSS option (Cisco ip tcp "
              "adjust-mss, iptables TCPMSS)" + (" and translates addresses (NAT)" if rec["nat"] else ""))
    low = min(v for v in rec["syn_mss"] + rec["synack_mss"] if v is not None)
    severity = "problem" if low <= 536 else "warning"
    if low <= 536:
        ev.append(f"clamped to {low}: every segment of these connections carries at most {low} bytes")
    c = a["client_to_server"]
    return Finding("capture-mss-clamped", f"MSS clamped between the capture points (lowest {low})", ev, "high",
                   severity, [], {"source": a["source"], "flow": a["id"], "host": c["addr"],
                                  "peer": a["server_to_client"]["addr"], "second": b["source"],
                                  "second_flow": b["id"], "syn_mss": rec["syn_mss"],
                                  "synack_mss": rec["synack_mss"]})
