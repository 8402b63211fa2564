"""Learning a shape (parsers/shapes.learn) gives exactly what main's learning gave before it
was made cheaper (tests/shapes_reference.py, word for word but for re.compile): the same
pattern and compiled pattern, the same groups and slots, the same numbers accepted and
rejected, the same None results, the same detection scores kept.

Every learning of a broad run (every fixture dump as it is, as a cron log with and without
--os, as one-snapshot files of a folder, pasted and damaged, and the hand-made cases of
tests/test_fast_path.py) is done twice, by both, from the same arguments, and compared.
"""
from __future__ import annotations

import random

import parsers
import shapes_reference
from fixturelib import expected, pairs
from parsers import shapes
from parsers.text import decode
from test_fast_path import NUMBER, ROUTER, TWO_FAMILIES, _pasted, _values_log, cron_log
from test_hostile import mutations

FIXTURES = [(raw, expected(want)[0]) for raw, want in pairs()]
FIELDS = [f for f in shapes.Shape.__slots__ if f != "rx"]


def corpus():
    """(text, os) pairs: what the fast path tests read, and more."""
    out = []
    texts = []
    rng = random.Random(11)
    for raw, os_name in FIXTURES:
        text = decode(raw.read_bytes())
        texts.append(text)
        out += [(text, None), (text, None), (text, os_name)]
        out += [(cron_log([text], 4), None), (cron_log([text], 4), os_name)]
        for _ in range(2):      # one-snapshot files of a folder, counters moved
            step = rng.randint(1, 5000)
            out.append((NUMBER.sub(lambda m: str(int(m.group(0)) + step), text), None))
        moved = NUMBER.sub(lambda m: str(int(m.group(0)) + 7), text)
        out += [(bad, None) for _, bad in mutations(moved, random.Random(len(text)), 4)]
        out.append((moved + "\n" + moved, None))
    out.append((cron_log(texts, 2 * len(texts)), None))
    for kind in ("html", "br", "nbsp", "quotes", "md", "pre"):
        out.append((cron_log([_pasted(texts[0], kind), _pasted(texts[-1], kind)], 6), None))
    out += [(_values_log(ROUTER, values), None) for values in ([5, 9, 14, 15], [5, 0, 0, 7], [0, 0, 0])]
    label = ("ip:\n\t{n} total packets received\n\t\t3 fragments received\n"
             "\t\t{n} packet forwarded (0 packet fast forwarded)\n\t\t5 packets reassembled ok\n")
    out.append((_values_log(label, [10, 11, 12]), "bsd"))
    quoted = "> Ip:\n>     Forwarding: 2\n>     {n} total packets received\n>     {n} reassemblies required\n" \
             ">     3 packets reassembled ok\n"
    out.append((_values_log(quoted, [10, 20, 30]), None))
    out.append(("".join(f"Mon Jan  {day} 10:00:00 UTC 2024\n" + TWO_FAMILIES.format(r4=r4, f4=f4, f6=f6)
                        for day, r4, f4, f6 in ((1, 100, 5, 7), (2, 200, 6, 8), (3, 300, 9, 9))), None))
    return out


def _same(new, old) -> None:
    if old is None or new is None:
        assert new is old
        return
    assert new.rx.pattern == old.rx.pattern
    assert new.rx == old.rx and new.rx.groups == old.rx.groups and new.rx.flags == old.rx.flags
    for field in FIELDS:
        assert getattr(new, field) == getattr(old, field), field


def test_shapes_learnt_are_the_reference_ones(monkeypatch):
    monkeypatch.setattr(parsers, "SHAPES", parsers.Shapes())
    seen = {"learns": 0, "none": 0, "searched": 0, "nonzero": 0, "ranked": 0}

    def both(origin, taken_at, host, command, snap, module, note, sig, forced, run, ranked_of=None):
        args = (origin, taken_at, host, command, snap, module, note, sig, forced, run, ranked_of)
        reads = [0]

        def counted(text):
            reads[0] += 1
            return run(text)

        old = shapes_reference.learn(*args[:9], counted, ranked_of)
        new = shapes.learn(*args)
        _same(new, old)
        seen["learns"] += 1
        if old is None:
            seen["none"] += 1
        else:
            pattern = old.rx.pattern
            seen["nonzero"] += "[1-9]" in pattern
            seen["ranked"] += old.ranked is not None
            seen["searched"] += reads[0] > 3     # not all numbers passed at once: sorted out
        return new

    monkeypatch.setattr(parsers, "learn", both)
    for text, os_name in corpus():
        parsers.SHAPES.seen.clear()          # every text may teach (not only the second of its shape)
        for _ in range(2):
            list(parsers.iter_parse(text, source="x", os=os_name))
    # the run went through every kind of outcome (else this test would prove little)
    assert seen["learns"] > 500, seen
    assert seen["none"] > 100 and seen["nonzero"] > 30 and seen["searched"] > 50 and seen["ranked"] > 200, seen
