"""One test walks every captured dump under fixtures/netstat/ against its expected JSON."""
import pytest

import parsers
from fixturelib import NETSTAT, actual, expected, pairs

PAIRS = list(pairs())


@pytest.mark.parametrize("raw,want", PAIRS, ids=[str(r.relative_to(NETSTAT)) for r, _ in PAIRS])
def test_fixture(raw, want):
    assert want.exists(), f"{raw} has no expected JSON beside it ({want.name})"
    forced, snapshots = expected(want)
    assert actual(raw, forced) == snapshots
    if forced is None:
        assert all(s["os"] == raw.parent.name for s in snapshots), "fixture sits under the wrong OS folder"


@pytest.mark.parametrize("name", parsers.names())
def test_every_parser_has_fixtures_from_two_sources(name):
    folder = NETSTAT / name
    raws = [r for r, _ in PAIRS if r.parent == folder]
    assert len(raws) >= 2, f"parser {name!r} needs fixtures from at least two sources in {folder}"


def test_fixture_folders_name_parsers():
    for folder in NETSTAT.iterdir():
        if folder.is_dir():
            assert folder.name in parsers.REGISTRY, f"{folder} is not a parser's name"


def test_every_module_with_a_meta_is_a_listed_parser():
    import importlib
    import pkgutil

    from parsers.model import Meta
    found = set()
    for info in pkgutil.iter_modules(parsers.__path__):
        module = importlib.import_module(f"parsers.{info.name}")
        if isinstance(getattr(module, "META", None), Meta):
            found.add(info.name)
    assert found == set(parsers.PARSERS)
