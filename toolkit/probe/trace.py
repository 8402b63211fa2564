"""Where: the per-hop MTU trace (`--trace`) and the hop that rewrites the MSS.

Both run after the PMTU search, through the same Search (its keys, its reply plumbing,
its rounds), so the engine serves them like any other round of probes.

Per-hop MTU, as scamper's `trace -M` does it, every TTL at once: probes of the size the
path carried so far go out with TTL 1..H (H from the reply TTL of the search), beside a
small probe per TTL that names the hop even when the big one dies. A router checks the
TTL before the MTU, so the big probe with TTL t reaches hop t unless a router before it
cannot forward it: that router answers "fragmentation needed" with its next-hop MTU M,
and the TTLs from there on are asked again at M. A big probe that vanishes while the small
one of the same TTL is answered is a black hole: bracketed between the last hop that
answered at that size and the first that did not, and the trace goes on at the size the
search found.

MSS rewriting: TTL-limited SYNs carrying our MSS option. The router where one expires
quotes it in its "time exceeded" (Linux quotes the whole header, RFC 792 routers only 8
bytes): the MSS it shows is the MSS as the SYN left the hop before. The first hop whose
quote differs from what we sent names the router after which it changed.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from toolkit.probe.pmtu import MIN_MTU, SMALL, Search, plateau_below
from toolkit.probe.reply import mss_option

MAX_TTL = 30


def _hop(ttl: int) -> Dict:
    return {"ttl": ttl, "address": None, "rtt_ms": None, "mtu": None, "reported_mtu": None,
            "silent": True, "silent_at": None}


def _rtt(search: Search, key: int, r) -> Optional[float]:
    s = search.sent.get(key)
    if s is None or r.at is None:
        return None
    return round(max(0.0, r.at - s.at) * 1000, 3)


def trace(search: Search, method: str, local_mtu: int, target: str):
    """Generator (rounds through `search`); returns (hops, black_hole, notes)."""
    notes: List[str] = []
    hops: Dict[int, Dict] = {}
    last = min(MAX_TTL, search._hops() if search.v.reply_ttl else 16)
    end: Optional[int] = None            # the TTL at which the target answered
    size, first = local_mtu, 1
    black_hole = None
    small = SMALL[search.family]
    for _ in range(16):
        ttls = range(first, (end or last) + 1)
        probes = [(method, size, t) for t in ttls]
        if size > small:
            probes += [(method, small, t) for t in ttls if t not in hops or hops[t]["address"] is None]
        answers = yield from search._round(probes)
        big: Dict[int, list] = {}
        for key, replies in answers.items():
            s = search.sent[key]
            h = hops.setdefault(s.ttl, _hop(s.ttl))
            if s.size == size:
                big[s.ttl] = replies
            for r in replies:
                if r.kind not in ("ttl", "pass"):
                    continue
                h["silent"] = False
                if h["address"] is None:
                    h["address"] = r.source
                if h["rtt_ms"] is None:
                    h["rtt_ms"] = _rtt(search, key, r)
                if r.kind == "pass" and r.source == target:
                    end = s.ttl if end is None else min(end, s.ttl)
        if end is None:
            if last < MAX_TTL:           # the target is further than its reply TTL said
                last = min(MAX_TTL, last + 4)
                continue
            end = last
            notes.append(f"the target did not answer within {last} hops")
        # walk the TTLs at this size: who got it, who said it is too big, where it vanished
        nxt = None
        for t in range(first, end + 1):
            replies = big.get(t, [])
            if any(r.kind in ("ttl", "pass") for r in replies):
                if hops[t]["mtu"] is None:
                    hops[t]["mtu"] = size
                continue
            toobig = [r for r in replies if r.kind == "toobig"]
            if toobig:
                r = toobig[0]
                at = next((x for x in sorted(hops) if hops[x]["address"] == r.source), t - 1)
                if at in hops:
                    hops[at]["reported_mtu"] = r.mtu
                valid = r.mtu is not None and MIN_MTU[search.family] <= r.mtu < size
                if not valid:
                    notes.append(f"{r.source} said 'too big' about {size}-byte probes without a usable next-hop "
                                 f"MTU ({r.mtu}): the RFC 1191 plateau below is tried next")
                nxt = (t, r.mtu if valid else plateau_below(size))
                break
            if t in hops and hops[t]["address"] is not None:
                # this TTL's small probe was answered, its big one vanished: a black hole
                prev = max((x for x in hops if x < t and hops[x]["mtu"] == size), default=None)
                hops[t]["silent_at"] = size
                if black_hole is None:
                    black_hole = {"size": size, "after_ttl": prev, "after": hops[prev]["address"] if prev else None,
                                  "before_ttl": t, "before": hops[t]["address"]}
                pmtu = search.v.pmtu
                nxt = (t, pmtu if pmtu is not None and pmtu < size else plateau_below(size))
                break
            # a hop that answers nothing at all (or whose answers were rate-limited): no
            # evidence about the size here; the next TTL tells whether it passed
        if nxt is None:
            break
        first, size = nxt
        if size < small:
            break
    else:
        notes.append("the trace did not settle in 16 rounds")
    out = [hops[t] for t in sorted(hops) if t <= (end or last)]
    if any(h["address"] is None for h in out):
        notes.append("hops shown without an address answered nothing: filtered, or their 'time exceeded' was "
                     "rate-limited (Linux routers send 6 at once, then 1 a second, to one prober)")
    return out, black_hole, notes


def clamp_location(search: Search, our_mss: int, hops: int):
    """Generator: TTL-limited SYNs (method "syn", the size field is the MSS option) to the
    routers before the target; returns the clamp record of docs/probe.md."""
    record = {"sent": our_mss, "changed_after": None, "changed_after_ttl": None, "to": None,
              "seen_to_ttl": None, "hops": []}
    if hops < 2:
        record["note"] = "the target is one hop away: no router to ask"
        return record
    answers = yield from search._round([("syn", our_mss, t) for t in range(1, hops)])
    seen: Dict[int, Dict] = {}
    for key, replies in answers.items():
        s = search.sent[key]
        for r in replies:
            if r.kind != "ttl":
                continue
            quoted = r.quoted          # the TCP header the router quoted, as scapy read it
            mss = mss_option(quoted) if quoted is not None else None
            seen[s.ttl] = {"ttl": s.ttl, "address": r.source, "mss": mss,
                           "quoted": r.quote if quoted is not None else 0}
    record["hops"] = [seen[t] for t in sorted(seen)]
    before, read = our_mss, 0           # the last MSS seen and the hop that showed it (0: us)
    for t in sorted(seen):
        h = seen[t]
        if h["mss"] is None:
            continue
        record["seen_to_ttl"] = t
        if h["mss"] != before:
            # the SYN that expired at hop t left hop t - 1 with this MSS
            record["to"] = h["mss"]
            if t == 1:
                record["changed_after_ttl"] = 0
                record["note"] = "our own host rewrote it before it left (a local MSS rule)"
            elif read == t - 1:
                record["changed_after_ttl"] = t - 1
                record["changed_after"] = seen[t - 1]["address"]
            else:
                record["note"] = (f"changed by a router between hop {max(1, read)} and hop {t - 1} (the hops in "
                                  "between quoted too little, or did not answer)")
            break
        before, read = h["mss"], t
    if record["seen_to_ttl"] is None:
        record["note"] = ("no router quoted enough of our SYN to show its MSS option (routers that quote only "
                          "8 bytes, as RFC 792 asks, cannot show options)" if seen else
                          "no router answered the TTL-limited SYNs (filtered, or their 'time exceeded' is "
                          "rate-limited)")
    elif record["to"] is None:
        last = seen[record["seen_to_ttl"]]
        record["note"] = (f"the MSS was unchanged as far as hop {record['seen_to_ttl']} ({last['address']}); "
                          "a rewrite, if any, happens after it (in that router's forwarding, a later hop, "
                          "or the target itself)")
    return record
