"""The interface and tunnel stack (toolkit/stack.py): overlays larger than their underlay
carries, tunnels without an underlay device, container ports above the path they are
routed into, MSS clamps above the path, overlays fragmenting their own outer packets, and
the predicted path MTU beside the measured one. docs/stack.md explains each."""
from __future__ import annotations

from typing import List, Optional

from toolkit import calc
from toolkit.findings import Finding
from toolkit.platforms import linux, network
from toolkit.stack import PORT_KINDS, Stack, mss_for

CODES = ("overlay-mtu-above-underlay", "tunnel-without-underlay", "port-above-path", "mss-clamp-above-path",
         "overlay-fragmenting-outer", "path-predicted-vs-measured")
# the outer fragmentation of one endpoint and the reassembly of the other agree when their
# rates per hour are within this factor of each other
RATE_MATCH = 2.0


def _stack(host) -> Optional[Stack]:
    s = getattr(host, "stack", None)
    return s if s else None


def _tunnel_limit(s: Stack, link):
    """(what the tunnel may carry, the underlay device, its limit, the encapsulation, its
    cost, how the underlay is known) or None when the underlay cannot be told."""
    encap, extra, how = s.encap_of(link)
    below, why = s.underlay(link)
    if encap is None or below is None:
        return None
    under, _ = s.allows(below, (link.name,))
    if under is None:
        return None
    cost = calc.ENCAPS[encap].cost(under) + extra
    return under - cost, below, under, encap, cost, why, how


def overlay_above_underlay(host) -> List[Finding]:
    s = _stack(host)
    if s is None:
        return []
    out = []
    for link in s.links.values():
        if not s.is_tunnel(link) or link.mtu is None:
            continue
        limit = _tunnel_limit(s, link)
        if limit is None:
            continue
        right, below, under, encap, cost, why, how = limit
        if link.mtu <= right:
            continue
        e = calc.ENCAPS[encap]
        ev = [f"{link.name} ({link.kind}) has MTU {link.mtu}; its outer packets leave by {below} ({why}), which "
              f"carries {under}: {under} - {cost} ({e.label()}) = {right}",
              f"packets of {right + 1} to {link.mtu} bytes become outer packets larger than {below} carries: the host "
              "fragments them (DF clear) or drops them and sends 'fragmentation needed' (DF set)"]
        severity, conf = "problem", "high" if why == "dev" or why.startswith("route") else "medium"
        if link.kind == "wireguard" and "assumed" in how:
            six = calc.ENCAPS["wireguard6"].cost(under)
            ev.append(f"WireGuard's outer family is not shown: {right} assumes IPv4; over IPv6 it is {under - six}")
        if how and how not in ("kind", "kind and its options") and not how.startswith("endpoint"):
            ev.append(how)
        out.append(Finding(
            "overlay-mtu-above-underlay", f"{link.name} MTU {link.mtu} is above what {below} carries for it: {right}",
            ev, conf, severity,
            [linux.device_mtu(link.name, right, f"{under} on {below} less {cost} bytes of {e.label()}")],
            {"device": link.name, "kind": link.kind, "mtu": link.mtu, "right_mtu": right, "underlay": below,
             "underlay_mtu": under, "encap": encap, "overhead": cost, "underlay_from": why}))
    return out


def without_underlay(host) -> List[Finding]:
    s = _stack(host)
    if s is None:
        return []
    out = []
    for link in s.links.values():
        if link.kind != "vxlan" or link.underlay:
            continue
        fam, _ = s.outer_family(link)
        encap = "vxlan6" if fam == "ipv6" else "vxlan"
        below, why = s.underlay(link)
        under = s.allows(below, (link.name,))[0] if below else None
        right = under - calc.ENCAPS[encap].cost(under) if under else None
        ev = [f"{link.name} (VXLAN {link.vni if link.vni is not None else ''}".rstrip() + ") was made without `dev`: "
              f"the kernel did not size it from an underlay device (MTU {link.mtu})"]
        if below:
            ev.append(f"its outer packets follow the {why} and leave by {below} ({under}), so it should be at most "
                      f"{right}")
        else:
            ev.append("no route or local address here tells which device carries it; give `ip route` output to "
                      f"check it (on a 1500-byte underlay it must be at most {1500 - calc.ENCAPS[encap].mtu_cost})")
        ev.append("if that route changes, the tunnel's outer packets silently move to another device")
        title = (f"{link.name} has no underlay device (VXLAN without dev)"
                 + (f": MTU {link.mtu}, its path allows {right}" if right is not None and link.mtu and link.mtu > right
                    else ""))
        out.append(Finding("tunnel-without-underlay", title, ev, "high", "warning",
                           [linux.tunnel_dev(link.name, link.kind, below, right)],
                           {"device": link.name, "mtu": link.mtu, "underlay": below, "underlay_from": why,
                            "right_mtu": right}))
    return out


def ports_above_path(host) -> List[Finding]:
    """A bridge's container ports (or the bridge) above the path their traffic is routed or
    bridged into."""
    s = _stack(host)
    if s is None:
        return []
    out = []
    for bridge in s.bridges():
        ports = s.ports(bridge.name)
        sources = [p for p in ports if p.kind in PORT_KINDS and not s.is_tunnel(p)]
        if not sources:
            continue
        exits = []          # (mtu, how the traffic leaves, the device)
        for p in ports:
            if s.is_tunnel(p):
                allowed, _ = s.allows(p.name)
                if allowed is not None:
                    exits.append((allowed, f"bridged into {p.name}", p.name))
        own = {p.name for p in ports} | {bridge.name}
        for path in s.paths():
            if path.mtu is None or any(h.device in own for h in path.hops[:1]):
                continue
            exits.append((path.mtu, f"routed into {path.route}", path.limited_by or ""))
        if not exits:
            continue
        narrow = min(exits, key=lambda e: e[0])
        above = [p for p in sources + [bridge] if p.mtu is not None and p.mtu > narrow[0]]
        if not above:
            continue
        names = ", ".join(f"{p.name} ({p.mtu})" for p in above)
        ev = [f"{bridge.name}'s traffic is {narrow[1]}, which carries {narrow[0]}"
              + (f" (limited by {narrow[2]})" if narrow[2] else ""),
              f"above it: {names}: a container sends segments for its own interface's MTU "
              f"(MSS {mss_for(max(p.mtu for p in above))}), the path carries MSS {mss_for(narrow[0])}"]
        configs = [n for n in s.networks if getattr(n, "bridge", None) in (bridge.name, None)]
        for n in configs:
            ev.append(f"{n.format}{' ' + n.name if getattr(n, 'name', None) else ''}: MTU "
                      f"{n.mtu if n.mtu is not None else 'not set (1500)'}")
        docker = bridge.name == "docker0" or bridge.name.startswith("br-") or any(
            n.format.startswith("docker") for n in configs)
        cni = bridge.name in ("cni0", "cbr0") or any(n.format == "cni" for n in configs)
        out.append(Finding(
            "port-above-path", f"{bridge.name}: {names} above the {narrow[0]} of the path its traffic takes "
                               f"({narrow[1]})", ev, "high", "problem",
            [linux.container_mtu(bridge.name, [p.name for p in above if p is not bridge], narrow[0], docker, cni)],
            {"bridge": bridge.name, "ports": [{"device": p.name, "mtu": p.mtu} for p in above],
             "right_mtu": narrow[0], "path": narrow[1], "limited_by": narrow[2]}))
    return out


def clamp_above_path(host) -> List[Finding]:
    s = _stack(host)
    if s is None or not s.clamps:
        return []
    out = []
    for rule in s.clamps:
        fam = rule.family
        paths = [p for p in s.paths() if p.family == fam and p.mtu is not None]
        if rule.out_interface:
            paths = [p for p in paths if p.hops and _matches(p.hops[0].device, rule.out_interface)]
        if not paths:
            continue
        narrow = min(paths, key=lambda p: p.mtu)
        right = mss_for(narrow.mtu, fam)
        if rule.action == "set-mss" and rule.mss is not None and rule.mss > right:
            ev = [f"{rule.format} rule: {rule.text}",
                  f"the path {narrow.route} carries {narrow.mtu} (limited by {narrow.limited_by}): MSS {right}"]
            out.append(Finding("mss-clamp-above-path", f"MSS clamp {rule.mss} is above the {right} the path "
                                                       f"{narrow.route} carries", ev, "high", "problem",
                               [linux.clamp_rule(rule.text, right, fam)],
                               {"rule": rule.text, "mss": rule.mss, "right_mss": right, "path": narrow.route}))
        elif rule.action == "clamp-to-pmtu":
            wrong = [p for p in paths if p.hops and p.hops[0].mtu is not None and p.hops[0].mtu > p.mtu]
            if not wrong:
                continue
            p = min(wrong, key=lambda p: p.mtu)
            first = p.hops[0]
            ev = [f"{rule.format} rule: {rule.text}",
                  f"it clamps to the outgoing device's MTU: {first.device} {first.mtu} -> MSS {mss_for(first.mtu, fam)}",
                  f"but {p.route} carries only {p.mtu} (limited by {p.limited_by}): MSS {mss_for(p.mtu, fam)}"]
            out.append(Finding("mss-clamp-above-path", f"--clamp-mss-to-pmtu clamps to {mss_for(first.mtu, fam)} on "
                                                       f"{first.device}, above the {mss_for(p.mtu, fam)} its path "
                                                       "carries", ev, "high", "problem",
                               [linux.device_mtu(first.device, p.mtu, "clamp-mss-to-pmtu then clamps to the path"),
                                linux.clamp_rule(rule.text, mss_for(p.mtu, fam), fam)],
                               {"rule": rule.text, "mss": mss_for(first.mtu, fam), "right_mss": mss_for(p.mtu, fam),
                                "path": p.route}))
    return out


def _matches(device: str, pattern: str) -> bool:
    """iptables' interface match: a trailing + matches any suffix."""
    return device.startswith(pattern[:-1]) if pattern.endswith("+") else device == pattern


def outer_fragments(host) -> List[Finding]:
    """An overlay endpoint whose outbound fragmentation grows at the rate the other
    endpoint reassembles: the tunnel fragments its own outer packets."""
    s = _stack(host)
    peers = getattr(host, "stack_peers", None) or []
    if s is None or not peers:
        return []
    from toolkit.rules.fragments import periods
    out = []
    mine = {p.family: p for p in periods(host)}
    for device, peer in peers:
        link = s.link(device)
        fam, _ = s.outer_family(link)
        fam = fam or "ipv4"
        a = mine.get(fam)
        b = next((p for p in periods(peer) if p.family == fam), None)
        if a is None or b is None or not a.observed or not b.observed:
            continue
        frag = a.per_hour("FragOKs") or (a.per_hour("FragCreates") / 2 if a.per_hour("FragCreates") else None)
        reasm = b.per_hour("ReasmOKs")
        if not frag or not reasm or not (1 / RATE_MATCH <= frag / reasm <= RATE_MATCH):
            continue
        limit = _tunnel_limit(s, link)
        ev = [f"on {host.facts.name}, {a.grew('FragOKs'):,} datagrams fragmented into {a.grew('FragCreates'):,} "
              f"fragments ({frag:,.0f}/h) over {a.span}",
              f"on {peer.facts.name} ({device}'s other endpoint), {b.grew('ReasmOKs'):,} datagrams reassembled "
              f"({reasm:,.0f}/h) over {b.span}"]
        right = None
        if limit is not None:
            right, below, under, encap, cost, why, how = limit
            ev.append(f"{device} MTU {link.mtu}: its outer packets are up to {link.mtu + cost} bytes on {below} "
                      f"({under}): each full one leaves in two fragments")
        out.append(Finding(
            "overlay-fragmenting-outer", f"{device} fragments its own outer packets: {host.facts.name} fragments and "
                                         f"{peer.facts.name} reassembles at the same rate", ev, "high", "problem",
            [linux.device_mtu(device, right, "the outer packets then fit the underlay")] if right else [],
            {"device": device, "peer": peer.facts.name, "frag_per_hour": round(frag, 1),
             "reasm_per_hour": round(reasm, 1), "right_mtu": right}))
    return out


def _measurements(host, s: Stack):
    """(target, measured MTU, how it was measured, the hop that reported it, family): each
    probe's path MTU, and each path MTU this host learned (route cache)."""
    for p in host.probes:
        if p.pmtu:
            yield p.target, p.pmtu, f"probe, {p.pmtu_method}", p.hop, p.family
    for r in s.learned:
        target = r.dst.rsplit("/", 1)[0] if r.dst.endswith(("/32", "/128")) else r.dst
        if target != "default" and "/" not in target:
            yield target, r.mtu, "learned: the route cache (a router's 'fragmentation needed')", None, r.family


def predicted_vs_measured(host) -> List[Finding]:
    """Each measured path MTU (a probe's, or one the host learned) beside the one the stack
    predicts for its route, and what explains the difference."""
    s = _stack(host)
    if s is None:
        return []
    out = []
    for target, measured, how, hop, family in _measurements(host, s):
        path = s.path_to(target)
        if path is None or path.mtu is None:
            continue
        ev = [f"predicted {path.mtu} for {target} ({path.route}), limited by {path.limited_by}"
              + "".join(f"; {h.device} {h.mtu}" + (f" ({h.note})" if h.note else "") for h in path.hops),
              f"measured {measured} ({how}" + (f", reported by {hop}" if hop else "") + ")"]
        tunnel = next((h for h in path.hops if h.encap), None)
        diff = path.mtu - measured
        data = {"target": target, "predicted": path.mtu, "measured": measured, "measured_by": how,
                "route": path.route, "limited_by": path.limited_by, "explained_by": None}
        if diff == 0:
            title = f"Path to {target} measured {measured}, as predicted (limited by {path.limited_by})"
            severity = "info"
            data["explained_by"] = path.limited_by
        elif diff > 0 and tunnel is not None:
            at = path.hops.index(tunnel)
            under_hop = path.hops[at + 1] if at + 1 < len(path.hops) else None
            carried = measured + tunnel.overhead
            who = under_hop.device if under_hop else "the underlay"
            remote = getattr(s.link(tunnel.device), "remote", None)
            ev.append(f"{tunnel.device} adds {tunnel.overhead} bytes: the underlay path carries {carried}, not the "
                      f"{under_hop.mtu if under_hop else '?'} of {who}: a hop beyond {who}"
                      + (f" on the way to {remote}" if remote else "") + " has a smaller MTU")
            title = (f"Path to {target} predicted {path.mtu}, measured {measured}: the underlay beyond {who} "
                     f"carries {carried}")
            severity = "warning"
            data.update(explained_by=f"underlay beyond {who}", underlay_carries=carried, tunnel=tunnel.device)
        elif diff > 0:
            ev.append(f"every device on this host allows {path.mtu}: a hop beyond {path.limited_by}"
                      + (f" ({hop})" if hop else "") + f" carries {measured}")
            title = f"Path to {target} predicted {path.mtu}, measured {measured}: a hop beyond {path.limited_by}"
            severity = "warning"
            data["explained_by"] = hop or f"beyond {path.limited_by}"
        elif tunnel is not None and tunnel.mtu is not None and tunnel.allows is not None and tunnel.mtu > tunnel.allows:
            ev.append(f"{tunnel.device} (MTU {tunnel.mtu}) is larger than its underlay carries ({tunnel.allows}): "
                      f"packets up to {tunnel.mtu} get through because the host fragments the tunnel's outer packets")
            title = (f"Path to {target} measured {measured}, above the predicted {path.mtu}: {tunnel.device} "
                     "fragments its outer packets")
            severity = "warning"
            data["explained_by"] = f"{tunnel.device} fragments its outer packets"
        else:
            ev.append("measured above predicted: a device or route on this host is set lower than the path needs")
            title = f"Path to {target} predicted {path.mtu}, measured {measured}: {path.limited_by} is set low"
            severity = "info"
            data["explained_by"] = path.limited_by
        out.append(Finding("path-predicted-vs-measured", title, ev, "high", severity,
                           [network.clamp(measured, family)] if severity == "warning" else [], data))
    return out
