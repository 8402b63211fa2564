"""Arbitrary text and bytes into every parser: only ParseError may come out."""
import io

from hypothesis import HealthCheck, given, settings, strategies as st

import parsers
from parsers.model import ParseError, Reading
from parsers.text import open_text, split

NETSTATISH = st.sampled_from([
    "ip:", "ip6:", "Ip:", "IPv4 Statistics", "IPv6 Statistics", "#kernel", "> ", "\t", "\r\n", " = ",
    "fragments received", "reassemblies required", "Reassembly Required", "ipReasmReqds", "=", ":",
    "Sun Nov 22 03:06:45 UTC 2026", "netstat -s", "12", "4294967295", "1,234", "0x1f", "-3", "\x00",
    "leaf1#show kernel ip counters", "Forwarding: 2", "Arista:", "IpExt:",
])
TEXTS = st.one_of(st.text(), st.lists(st.one_of(NETSTATISH, st.text(max_size=12)), max_size=60).map(" ".join),
                  st.lists(st.one_of(NETSTATISH, st.text(max_size=12)), max_size=60).map("\n".join))
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(TEXTS)
def test_every_parser_takes_any_text(text):
    for name, module in parsers.REGISTRY.items():
        score = module.detect(text)
        assert 0.0 <= score <= 1.0, name
        try:
            snaps = module.parse(text)
        except ParseError:
            continue
        assert snaps, name
        for chunk in split(text):
            assert isinstance(module.read(chunk.lines), Reading)


@SETTINGS
@given(TEXTS)
def test_registry_takes_any_text(text):
    try:
        for snap in parsers.parse(text):
            for family in (snap.ipv4, snap.ipv6):
                assert family is None or all(v is None or (isinstance(v, int) and v >= 0) for v in family.values())
    except ParseError:
        pass


@SETTINGS
@given(st.binary(max_size=3000))
def test_any_bytes(data):
    try:
        list(parsers.iter_parse(open_text(io.BytesIO(data))))
    except ParseError:
        pass
