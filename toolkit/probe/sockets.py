"""Probing without CAP_NET_RAW: what plain UDP sockets allow, the way tracepath works.

DF datagrams are sent with IP_MTU_DISCOVER = IP_PMTUDISC_PROBE (the kernel sets DF and
ignores its cached path MTU for the target), and IP_RECVERR hands back the ICMP errors
they cause: "fragmentation needed" / "packet too big" with the next-hop MTU, "port
unreachable" from the target (the probe got through), "time exceeded" from a router.
The engine reads the error queue from its own loop, so the same search runs on them.
"""
from __future__ import annotations

import errno
import socket
import struct
from typing import List, Optional

from toolkit.probe.reply import UDP_BASE, Reply, unreach_reason
from toolkit.probe.route import sockaddr

IP_RECVERR, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE, IP_TTL = 11, 10, 3, 2
IPV6_RECVERR, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_PROBE, IPV6_UNICAST_HOPS = 25, 23, 3, 16
SO_EE_ORIGIN_LOCAL, SO_EE_ORIGIN_ICMP, SO_EE_ORIGIN_ICMP6 = 1, 2, 3
MSG_ERRQUEUE = 0x2000


SO_TIMESTAMPNS = 35


class SocketTransport:
    """send(method, size, key, ttl) for method "udp" only; `read()` returns the replies
    waiting on the socket's error queue (never blocks). The engine watches `fileno()`."""

    def __init__(self, family: str, address: str):
        self.family, self.address = family, address
        v6 = family == "ipv6"
        self.sock = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
        self.level = socket.IPPROTO_IPV6 if v6 else socket.IPPROTO_IP
        self.sock.setsockopt(self.level, IPV6_RECVERR if v6 else IP_RECVERR, 1)
        self.sock.setsockopt(self.level, IPV6_MTU_DISCOVER if v6 else IP_MTU_DISCOVER,
                             IPV6_PMTUDISC_PROBE if v6 else IP_PMTUDISC_PROBE)
        # the kernel's receive time of each ICMP error comes with it on the error queue
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.setblocking(False)
        self.header = 48 if v6 else 28
        self._ttl = None
        self._anc = socket.CMSG_SPACE(512) + socket.CMSG_SPACE(16)

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, method: str, size: int, key: int, ttl: int) -> None:
        if method != "udp":
            raise OSError(errno.EPERM, "needs CAP_NET_RAW")
        if ttl != self._ttl:
            self.sock.setsockopt(self.level, IPV6_UNICAST_HOPS if self.family == "ipv6" else IP_TTL, ttl)
            self._ttl = ttl
        payload = struct.pack("!H", key) + b"\x00" * max(0, size - self.header - 2)
        # an ICMP error for an earlier probe stays pending on the socket and fails the next
        # send with that error (sock_error): such a failure is not about this datagram, so
        # send again; only a refusal that repeats is the local stack's own
        for attempt in range(3):
            try:
                self.sock.sendto(payload, sockaddr(self.address, UDP_BASE + key))
                return
            except BlockingIOError:
                if attempt == 2:
                    raise
            except OSError as exc:
                if exc.errno not in (errno.EMSGSIZE, errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH):
                    raise
                if attempt == 2 and exc.errno == errno.EMSGSIZE:
                    raise

    def close(self) -> None:
        self.sock.close()

    def read(self) -> List[Reply]:
        out: List[Reply] = []
        while True:
            try:
                data, anc, _flags, _addr = self.sock.recvmsg(256, self._anc, MSG_ERRQUEUE)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                try:        # a normal datagram (someone answered on that port): drain it
                    self.sock.recv(65535, socket.MSG_DONTWAIT)
                    continue
                except OSError:
                    break
            if len(data) < 2:
                continue
            key = struct.unpack("!H", data[:2])[0]
            at = None
            for level, kind, cdata in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= 16:
                    sec, nsec = struct.unpack_from("=qq", cdata)
                    at = sec + nsec * 1e-9
            for level, kind, cdata in anc:
                if kind not in (IP_RECVERR, IPV6_RECVERR) or level == socket.SOL_SOCKET or len(cdata) < 16:
                    continue
                ee_errno, origin, itype, code, _pad, info, _d = struct.unpack_from("=IBBBBII", cdata)
                source = self._offender(cdata[16:])
                reply = self._reply(key, ee_errno, origin, itype, code, info, source)
                if reply is not None:
                    reply.at = at
                    out.append(reply)
        # normal datagrams (a service that answered on that port) are read and dropped
        while True:
            try:
                self.sock.recv(65535, socket.MSG_DONTWAIT)
            except OSError:
                break
        return out

    def _offender(self, raw: bytes) -> Optional[str]:
        if len(raw) >= 8 and struct.unpack_from("=H", raw)[0] == socket.AF_INET:
            return socket.inet_ntop(socket.AF_INET, raw[4:8])
        if len(raw) >= 24 and struct.unpack_from("=H", raw)[0] == socket.AF_INET6:
            return socket.inet_ntop(socket.AF_INET6, raw[8:24])
        return None

    def _reply(self, key, ee_errno, origin, itype, code, info, source) -> Optional[Reply]:
        a = self.address
        if origin == SO_EE_ORIGIN_LOCAL:
            return None
        if ee_errno == errno.EMSGSIZE:
            return Reply(a, "udp", key, "toobig", source or a, mtu=info)
        if ee_errno == errno.ECONNREFUSED:
            return Reply(a, "udp", key, "pass", source or a)
        if (origin == SO_EE_ORIGIN_ICMP and itype == 11) or (origin == SO_EE_ORIGIN_ICMP6 and itype == 3):
            return Reply(a, "udp", key, "ttl", source or a)
        if source == a:          # the target itself refused it: the probe got there
            return Reply(a, "udp", key, "pass", a)
        v6 = origin == SO_EE_ORIGIN_ICMP6
        if (itype == 1 if v6 else itype == 3):
            reason = unreach_reason("ipv6" if v6 else "ipv4", code)
        else:
            reason = f"{errno.errorcode.get(ee_errno, ee_errno)} (ICMP{'v6' if v6 else ''} type {itype} code {code})"
        return Reply(a, "udp", key, "unreach", source or a, reason=reason)
