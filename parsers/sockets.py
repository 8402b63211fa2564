"""Linux `ss -tin` / `ss -ti` / `ss -tinH` / `ss -tinp` / `ss -tino`: one record per TCP socket.

    State  Recv-Q Send-Q  Local Address:Port   Peer Address:Port Process
    ESTAB  0      0           10.0.1.2:46556       10.0.3.2:5000
             bbr wscale:10,10 rto:204 rtt:0.079/0.04 ato:40 mss:524 pmtu:1500 rcvmss:524
             advmss:1448 cwnd:11 bytes_sent:15 bytes_acked:16 bytes_received:200000 ...

The socket line (a `Netid` and a `State` column when printed, the queues, the two addresses,
`-o`'s `timer:(...)`, `-p`'s `users:((...))`, `-e`'s `ino:`/`sk:`/`uid:`) is followed by the
TCP_INFO line(s) `-i` adds. Per socket that line says what this host sends (`mss`: the
largest segment's payload, after the TCP options both ends agreed on), what it advertised
(`advmss`), what the peer sends (`rcvmss`: the largest segment seen, an estimate that starts at
536 before any data has arrived), the path MTU the socket uses (`pmtu`), retransmission
timeouts in a row (`backoff`), segments retransmitted (`retrans:now/total`) and the bytes
sent, acknowledged and received. Addresses as printed (`10.0.1.2`, `[::ffff:10.0.1.2]`
read as 10.0.1.2, `[2001:db8::1]`, `fe80::1%eth0`); `ss -ti` without `-n` prints service
names for ports (`:https`), kept as printed.

A reader of its own (no Snapshot: these are not counters), tied to a host like a dump by the
host model (parsers/evidence.py); what the fields mean for a peer is triage's
(toolkit/rules/sockets.py). Lines an email or a terminal wrapped are joined: a socket's
record runs until the next socket line.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Tuple

from .model import ParseError, to_int
from dataclasses import dataclass, field
from .lazyre import lazy


STATES = ("ESTAB", "SYN-SENT", "SYN-RECV", "FIN-WAIT-1", "FIN-WAIT-2", "TIME-WAIT", "CLOSE", "CLOSE-WAIT",
          "LAST-ACK", "LISTEN", "CLOSING", "UNCONN", "UNKNOWN")
_STATE = "|".join(re.escape(s) for s in STATES)
# `[tcp] [ESTAB] 0 0 local:port peer:port ...`: a netid and a state, each when printed
_SOCKET = lazy(r"^[ \t]*(?:(?P<netid>tcp6?|mptcp|u_str|udp|raw)[ \t]+)?(?:(?P<state>" + _STATE + r")[ \t]+)?"
               r"(?P<recvq>[0-9]+)[ \t]+(?P<sendq>[0-9]+)(?:[ \t]+(?P<rest>.*?))?[ \t]*$")
_HEADER = lazy(r"^[ \t]*(?:Netid[ \t]+)?(?:State[ \t]+)?Recv-Q[ \t]+Send-Q[ \t]+Local[ \t]+Address", re.I)
_ENDPOINT = lazy(r"^(?P<addr>\[[^\]]+\]|[^\s\[\]]*?)(?:%(?P<scope>[^:\s]+))?:(?P<port>[^\s:\]]+|\*)$")
_KEY_VALUE = lazy(r"^(?P<key>[a-z_]+):(?P<value>\S+)$")
# TCP_INFO words printed with a value after a space (`send 1113846154bps`, `pacing_rate 3.2Gbps`)
_SPACED = frozenset(("send", "pacing_rate", "delivery_rate"))
_RATE = lazy(r"^[0-9][0-9.]*[kKMG]?bps$")       # the value of one of those, wrapped onto the next line
_INTEGERS = ("mss", "advmss", "rcvmss", "pmtu", "backoff", "cwnd", "ssthresh", "bytes_sent", "bytes_acked",
             "bytes_received", "bytes_retrans", "segs_out", "segs_in", "data_segs_out", "data_segs_in",
             "unacked", "lost", "sacked", "notsent", "rcv_space", "rcv_ssthresh", "delivered", "reordering",
             "snd_wnd")


@dataclass
class Socket:
    """One socket of `ss -ti`: its line as printed, and every TCP_INFO field."""
    local: str
    local_port: str
    peer: str
    peer_port: str
    state: Optional[str] = None
    recv_q: Optional[int] = None
    send_q: Optional[int] = None
    info: Dict[str, str] = field(default_factory=dict)   # every `key:value` (and `send 1.2Mbps`) as printed
    flags: List[str] = field(default_factory=list)       # words alone: `ts sack cubic app_limited`
    process: Optional[str] = None          # `-p`: users:((...)) as printed
    timer: Optional[str] = None            # `-o`: timer:(on,204ms,0) as printed

    def number(self, key: str) -> Optional[int]:
        """An integer TCP_INFO field (`mss`, `pmtu`, `backoff`, `bytes_acked` ...), or None."""
        value = self.info.get(key)
        if value is None:
            return None
        try:
            return to_int(value)
        except ParseError:
            return None

    @property
    def retrans(self) -> Tuple[Optional[int], Optional[int]]:
        """`retrans:now/total`: segments retransmitted not yet acknowledged, and all."""
        value = self.info.get("retrans", "")
        now, _, total = value.partition("/")
        try:
            return to_int(now), to_int(total) if total else None
        except ParseError:
            return None, None

    def to_dict(self) -> dict:
        out = {"state": self.state, "recv_q": self.recv_q, "send_q": self.send_q, "local": self.local,
               "local_port": self.local_port, "peer": self.peer, "peer_port": self.peer_port}
        for key in _INTEGERS:
            out[key] = self.number(key)
        out["retrans"], out["retrans_total"] = self.retrans
        out.update(timer=self.timer, process=self.process, flags=self.flags, info=self.info)
        return out


def _address(text: str) -> Optional[Tuple[str, str]]:
    m = _ENDPOINT.match(text)
    if m is None:
        return None
    addr = m["addr"].strip("[]")
    if addr.lower().startswith("::ffff:") and "." in addr:
        addr = addr[7:]                  # an IPv4 peer of an IPv6 socket
    if m["scope"]:
        addr += "%" + m["scope"]
    return addr, m["port"]


def _words(text: str) -> List[str]:
    """Whitespace-separated words, keeping `(...)` groups whole (`bbr:(bw:0bps,mrtt:0.1)`,
    `users:(("curl",pid=1,fd=3))`, `timer:(on, 204ms,0)` as a wrapped paste splits it)."""
    out: List[str] = []
    depth = 0
    for word in text.split():
        if depth and out:
            out[-1] += word
        else:
            out.append(word)
        depth += word.count("(") - word.count(")")
        depth = max(depth, 0)
    return out


def detect(lines: Iterable[str]) -> bool:
    """True when the lines hold an `ss` socket with its TCP_INFO (or an `ss` header)."""
    seen_socket = False
    for line in lines:
        if _HEADER.match(line):
            return True
        m = _SOCKET.match(line)
        if m and (m["state"] or m["netid"]) and (not m["rest"] or _address(m["rest"].split()[0])):
            seen_socket = True      # its addresses on this line, or on the next ones (a wrapped paste)
        elif seen_socket and ("rtt:" in line or "mss:" in line):
            return True
    return False


def read(lines: Iterable[str]) -> Tuple[List[Socket], List[str]]:
    """(sockets, warnings): every socket of `ss -t[i][n][o][p][H]` output."""
    records: List[Tuple[int, List[str]]] = []
    open_ = False
    for n, line in enumerate(lines, 1):
        if _HEADER.match(line):
            open_ = False
            continue
        m = _SOCKET.match(line)
        if m and (m["state"] or m["netid"] or m["rest"] and _address(m["rest"].split()[0])):
            records.append((n, [line]))
            open_ = True
        elif open_ and line.strip():
            first = line.split()[0]
            if line[:1] in (" ", "\t") or ":" in first or _RATE.match(first):
                records[-1][1].append(line)      # its TCP_INFO, or a wrapped part of its line
            else:
                open_ = False                    # something else follows the table
    sockets: List[Socket] = []
    warnings: List[str] = []
    for n, parts in records:
        m = _SOCKET.match(parts[0])
        words = _words(" ".join([m["rest"] or ""] + parts[1:]))
        ends = []
        while words and len(ends) < 2:
            end = _address(words[0])
            if end is None:
                break
            ends.append(end)
            words.pop(0)
        if len(ends) < 2:
            warnings.append(f"socket {parts[0].strip()[:60]!r}: no local and peer address; left out")
            continue
        sock = Socket(local=ends[0][0], local_port=ends[0][1], peer=ends[1][0], peer_port=ends[1][1],
                      state=m["state"], recv_q=int(m["recvq"]), send_q=int(m["sendq"]))
        _info(sock, words)
        sockets.append(sock)
    return sockets, warnings


def _info(sock: Socket, words: List[str]) -> None:
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("timer:("):
            sock.timer = word
        elif word.startswith("users:("):
            sock.process = word
        elif word in _SPACED and i + 1 < len(words):
            sock.info[word] = words[i + 1]
            i += 1
        else:
            kv = _KEY_VALUE.match(word)
            if kv:
                sock.info.setdefault(kv["key"], kv["value"])
            else:
                sock.flags.append(word)
        i += 1


__all__ = ["Socket", "STATES", "detect", "read"]
