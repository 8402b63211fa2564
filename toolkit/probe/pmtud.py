"""Whether the target itself does PMTU discovery (`--pmtud-check`, root).

What scamper's `tbit -t pmtud` does, on stock Linux: a real TCP transfer from the target,
driven by raw packets so that nothing of ours acknowledges its data; a forged ICMP
"fragmentation needed" (IPv6: "packet too big") for a smaller MTU that quotes one of
its segments; then what its retransmission of that data looks like:

- smaller segments: it honours the message (`target-honours-ptb`);
- without DF (cleared after the message, or never set, as Linux with
  net.ipv4.ip_no_pmtu_disc=1 does), whatever the size: routers are left to fragment
  (`target-clears-df`);
- the same size with DF: it ignores the message, and behind a smaller MTU its
  connections hang (`target-ignores-ptb`).

Our own kernel sees the target's SYN-ACK and data for a connection it does not know and
would answer with RSTs that end the test. An iptables rule (ip6tables for IPv6) drops
exactly those RSTs — this flow's ports and addresses, packets without our mark — while
the check runs. It is added with signals held, removed when the check ends, when the run
is interrupted (the engine's clean-up), and a rule left by a process that no longer runs
(SIGKILL) is removed by the next check; the RSTs we send ourselves carry the mark.
"""
from __future__ import annotations

import contextlib
import os
import random
import shlex
import shutil
import socket
import subprocess
import time
from typing import Dict, List, Optional

from toolkit.probe import packets as pk
from toolkit.probe.engine import SendRaw, Until
from toolkit.probe.reply import mss_option
from toolkit.probe.route import sockaddr
from toolkit.proc import signals_held, start_time

MARK = 0x4d535344              # "MSSD": our own packets, which the rule lets through
COMMENT = "mssdiag-pmtud"
QUOTE_WAIT = 3.0               # s to wait for the retransmission after the forged message
HEADER = pk.HEADER


def _tool(family: str) -> str:
    return "ip6tables" if family == "ipv6" else "iptables"


def _run(argv: List[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=20)


def sweep(family: str) -> List[str]:
    """Remove rules of this check left by mssdiag processes that no longer run (killed
    outright); returns the rules removed."""
    tool = _tool(family)
    res = _run([tool, "-w", "5", "-S", "OUTPUT"])
    removed = []
    for line in res.stdout.splitlines():
        if COMMENT not in line or not line.startswith("-A OUTPUT"):
            continue
        words = shlex.split(line)
        note = next((w for w in words if w.startswith(COMMENT)), "")
        fields = dict(x.split("=", 1) for x in note.split()[1:] if "=" in x)
        pid = int(fields.get("pid", "0") or 0)
        started = start_time(pid) if pid > 0 else None
        if started is not None and str(started) == fields.get("start"):
            continue                      # its owner still runs
        if _run([tool, "-w", "5", "-D", *words[1:]]).returncode == 0:
            removed.append(line)
    return removed


class RstRule:
    """The rule that keeps our kernel's RSTs off one flow."""

    def __init__(self, family: str, src: str, sport: int, dst: str, dport: int):
        self.family = family
        pid = os.getpid()
        self.spec = ["-p", "tcp", "-s", pk.bare(src), "--sport", str(sport), "-d", pk.bare(dst), "--dport", str(dport),
                     "--tcp-flags", "RST", "RST", "-m", "mark", "!", "--mark", hex(MARK),
                     "-m", "comment", "--comment", f"{COMMENT} pid={pid} start={start_time(pid)}", "-j", "DROP"]
        self.added = False
        self.made_table = False

    def add(self) -> None:
        tool = _tool(self.family)
        # with the nf_tables backend the first rule of a network namespace creates the
        # filter table (so does listing it: only the plain save is asked): remember, so that
        # removing the rule can remove the table again
        self.made_table = "*filter" not in _run([f"{tool}-save"]).stdout
        if sweep(self.family) and self._as_created():
            self.made_table = True        # a killed run made it and left only its rule in it
        res = _run([tool, "-w", "5", "-I", "OUTPUT", "1", *self.spec])
        if res.returncode != 0:
            raise OSError(f"{tool} could not add the rule: {res.stderr.strip()[:200]}")
        self.added = True

    def remove(self) -> None:
        if not self.added:
            return
        tool = _tool(self.family)
        with signals_held():
            _run([tool, "-w", "5", "-D", "OUTPUT", *self.spec])
            self.added = False
            # only while it is still as created: no rules, every policy ACCEPT
            if self.made_table and self._as_created() and shutil.which("nft") \
                    and "nf_tables" in _run([tool, "-V"]).stdout:
                _run(["nft", "delete", "table", "ip6" if self.family == "ipv6" else "ip", "filter"])

    def _as_created(self) -> bool:
        return _run([_tool(self.family), "-w", "5", "-S"]).stdout.split("\n") == [
            "-P INPUT ACCEPT", "-P FORWARD ACCEPT", "-P OUTPUT ACCEPT", ""]


def unavailable(family: str) -> Optional[str]:
    if shutil.which(_tool(family)) is None:
        return f"{_tool(family)} is not installed (the check needs it to hold back our kernel's RSTs)"
    return None


class Flow:
    """The target's side of our raw connection, as the capture sees it."""

    def __init__(self, family: str):
        self.family = family
        self.synack = None
        self.segments: List[Dict] = []

    def segment(self, pkt, outgoing: bool, payload: int, seg: int) -> None:
        """From the capture: one TCP segment of this flow, as scapy dissected it."""
        if outgoing:
            return
        tcp = pkt.payload
        if tcp.flags.S and tcp.flags.A:
            if self.synack is None:
                self.synack = {"seq": tcp.seq, "ack": tcp.ack, "mss": mss_option(tcp)}
            return
        if payload <= 0 or tcp.flags.R:
            return
        head = HEADER[self.family] + tcp.dataofs * 4
        df = True if self.family == "ipv6" else bool(pkt.flags.DF)
        self.segments.append({"seq": tcp.seq, "len": seg, "df": df, "ip_len": seg + head, "at": pkt.time or time.time(),
                              "raw": pkt.original[:1280], "options": tcp.dataofs * 4 - 20})


def choose_mtu(family: str, ip_len: int) -> Optional[int]:
    """The MTU the forged message announces: 1280 when the segments are larger than that,
    else 64 bytes below them; never below what the protocol guarantees (576 / 1280) —
    a host whose segments are already that small cannot be tested."""
    floor = 1280 if family == "ipv6" else 576
    mtu = 1280 if ip_len >= 1280 + 40 else ip_len - 64
    return mtu if floor <= mtu < ip_len else None


def check(job, port: int, send_text: Optional[str], timeout: float, local_mtu: int):
    """Generator run inside a probe Job (raw mode); returns the `pmtud` record."""
    e = job.engine
    fam, src, dst = job.family, job.source, job.address
    rec: Dict = {"port": port, "verdict": None, "mtu": None, "segment": None, "df_before": None,
                 "after": None, "df_after": None, "waited_s": None}
    why = unavailable(fam)
    if why:
        rec["error"] = why
        return rec
    reserve = socket.socket(socket.AF_INET6 if fam == "ipv6" else socket.AF_INET, socket.SOCK_STREAM)
    flow = Flow(fam)
    rule = None
    state = {"lport": None, "seq": None}      # what the clean-up needs to end the connection
    try:
        reserve.bind(sockaddr(src, 0))             # the port is ours: no connection of the kernel's gets it
        lport = state["lport"] = reserve.getsockname()[1]
        rule = RstRule(fam, src, lport, dst, port)
        with signals_held():
            rule.add()
            e.cleanups.append(rule.remove)
        e.capture.follow((dst, port, lport), flow.segment)
        isn = random.getrandbits(32)
        hdr = HEADER[fam]
        syn = pk.segment(fam, src, dst, lport, port, isn, 0, "S", mss=local_mtu - hdr - 20)
        t0 = time.time()
        yield SendRaw(fam, dst, [syn], mark=True)
        if not (yield Until(lambda: flow.synack is not None, time.time() + timeout)):
            yield SendRaw(fam, dst, [syn], mark=True)          # one more SYN, as a kernel would
            if not (yield Until(lambda: flow.synack is not None, time.time() + timeout + 1.0)):
                rec["error"] = f"port {port}: no SYN-ACK"
                return rec
        rtt = time.time() - t0
        seq, ack = isn + 1, flow.synack["seq"] + 1
        state["seq"] = seq
        yield SendRaw(fam, dst, [pk.segment(fam, src, dst, lport, port, seq, ack, "A")], mark=True)
        quiet = max(0.05, 3 * rtt + 0.03)
        if not (yield Until(lambda: bool(flow.segments), time.time() + quiet)) and send_text:
            data = send_text.encode("latin-1", "replace")
            yield SendRaw(fam, dst, [pk.segment(fam, src, dst, lport, port, seq, ack, "PA", payload=data)], mark=True)
            seq += len(data)
            state["seq"] = seq
        if not (yield Until(lambda: bool(flow.segments), time.time() + timeout)):
            rec["error"] = f"port {port}: the host sent no data (use --send for services that wait for a request)"
            return rec
        # the first flight lands (nothing of ours acknowledges it)
        count = -1
        while count != len(flow.segments):
            count = len(flow.segments)
            yield Until(lambda: len(flow.segments) > count, time.time() + quiet)
        first = min(flow.segments, key=lambda s: (s["seq"] - flow.synack["seq"]) % (1 << 32))
        big = max(flow.segments, key=lambda s: s["len"])
        rec["segment"], rec["df_before"] = big["len"], all(s["df"] for s in flow.segments)
        mtu = choose_mtu(fam, big["ip_len"])
        if mtu is None:
            rec["error"] = (f"its segments are {big['ip_len']} bytes of IP packet, already at the smallest "
                            f"{'IPv6' if fam == 'ipv6' else 'IPv4'} path MTU worth announcing: nothing to test")
            return rec
        rec["mtu"] = mtu
        quote = first["raw"]
        before = len(flow.segments)
        sent = yield SendRaw(fam, dst, [pk.too_big(fam, src, dst, mtu, quote)], mark=True)
        at = sent[0] or time.time()
        # its reaction: a retransmission of the quoted data (at once when it honours the
        # message; after its retransmission timeout when it does not)
        resent = lambda: [s for s in flow.segments[before:] if s["seq"] == first["seq"]]  # noqa: E731
        yield Until(lambda: bool(resent()), at + QUOTE_WAIT)
        again = resent()
        rec["waited_s"] = round(time.time() - at, 3)
        if not again:
            rec["error"] = f"no retransmission of the quoted data within {QUOTE_WAIT:g} s"
            return rec
        r = again[0]
        rec["after"], rec["df_after"] = r["len"], r["df"]
        limit = mtu - hdr - 20 - r["options"]
        if not (r["df"] and rec["df_before"]):
            # no DF, before or after: whatever size it resends, routers are left to fragment
            # (Linux with ip_no_pmtu_disc=1 also drops to min_pmtu, 552, on the message)
            rec["verdict"] = "clears-df"
        elif r["len"] <= limit:
            rec["verdict"] = "honours"
        else:
            rec["verdict"] = "ignores"
        return rec
    except OSError as exc:
        rec["error"] = str(exc.strerror or exc)
        return rec
    finally:
        if state["lport"] is not None:
            e.capture.unfollow((dst, port, state["lport"]))
        if state["seq"] is not None:
            # end it on the target's side too (our RST carries the mark: the rule lets it out)
            with contextlib.suppress(Exception):
                e.raw.send(fam, pk.segment(fam, src, dst, state["lport"], port, state["seq"], 0, "R", window=0),
                           dst, mark=True)
        if rule is not None:
            rule.remove()
            with contextlib.suppress(ValueError):
                e.cleanups.remove(rule.remove)
        reserve.close()
