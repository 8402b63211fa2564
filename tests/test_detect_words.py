"""The detectors' substring tests (parsers/_needs.py) never change what a detector says:
every word list is necessary for its pattern (an example of every alternative of every
pattern, generated from the pattern itself, holds one of its words), the characters that
IGNORECASE folds to ASCII letters are the ones listed (checked over all of Unicode), and
over every fixture, case-flipped and non-ASCII copies, each guarded pattern finds what the
pattern alone finds."""
from __future__ import annotations

import random
import re
import re._constants as C
import re._parser as P
from pathlib import Path

import pytest

import parsers
from parsers import _needs

ROOT = Path(__file__).resolve().parent.parent


def guarded():
    out = []
    for module in [*parsers.REGISTRY.values(), parsers.bsdstyle]:
        for name, value in sorted(vars(module).items()):
            if isinstance(value, _needs.Needs):
                out.append((f"{module.__name__}.{name}", value))
    return out


def test_the_slow_detector_patterns_are_guarded():
    names = {n for n, _ in guarded()}
    assert {"parsers.hpux._MARKERS", "parsers.cisco._DETECT_FRAGS", "parsers.omniswitch._DETECT",
            "parsers.bsdstyle._LINUX", "parsers.windows._DETECT_WEAK"} <= names


def _default_char(items, flags) -> str:
    negate = any(op is C.NEGATE for op, _ in items)
    if negate:
        banned = set()
        for op, av in items:
            if op is C.LITERAL:
                banned.add(chr(av))
            elif op is C.CATEGORY and av in (C.CATEGORY_SPACE,):
                banned.update(" \t\n")
        return next(c for c in "x#7 " if c not in banned)
    op, av = next((op, av) for op, av in items if op is not C.NEGATE)
    if op is C.LITERAL:
        return chr(av)
    if op is C.RANGE:
        return chr(av[0])
    return {C.CATEGORY_DIGIT: "7", C.CATEGORY_SPACE: " ", C.CATEGORY_WORD: "a",
            C.CATEGORY_NOT_SPACE: "x", C.CATEGORY_NOT_DIGIT: "x", C.CATEGORY_NOT_WORD: " "}[av]


def variants(seq, flags):
    """Strings the parsed pattern `seq` matches: each alternative and each optional part taken
    at least once (the others at their first choice). The first is the default."""
    items = list(seq)
    per_item = [_item(op, av, flags) for op, av in items]
    defaults = [v[0] for v in per_item]
    out = ["".join(defaults)]
    for i, vs in enumerate(per_item):
        for v in vs[1:]:
            out.append("".join(defaults[:i] + [v] + defaults[i + 1:]))
    return out


def _item(op, av, flags):
    if op is C.LITERAL:
        return [chr(av)]
    if op is C.NOT_LITERAL:
        return ["x" if av != ord("x") else "y"]
    if op is C.ANY:
        return ["x"]
    if op is C.IN:
        return [_default_char(av, flags)]
    if op is C.BRANCH:
        return [v for alt in av[1] for v in variants(alt, flags)]
    if op is C.SUBPATTERN:
        return variants(av[3], flags)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, high, sub = av
        n = max(low, 1)
        inner = variants(sub, flags)
        vs = [v * n for v in inner]
        if low == 0:
            vs.append("")
        return vs
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return [""]
    raise AssertionError(f"pattern element {op} not covered by the test's generator")


@pytest.mark.parametrize("name,guard", guarded(), ids=[n for n, _ in guarded()])
def test_every_alternative_of_the_pattern_holds_one_of_its_words(name, guard):
    rx = re.compile(guard.rx.pattern, guard.rx.flags)
    parsed = P.parse(rx.pattern, rx.flags)
    examples = variants(parsed, rx.flags)
    assert examples
    for example in examples:
        # on a line of its own, after another (re.M) or first (`^` without re.M)
        assert any(rx.search(text) for text in ("head\n" + example + "\n", example + "\n")), (name, example)
        for form in ({example, example.upper(), example.lower(), example.title(), example.swapcase(),
                      example.replace("s", "\u017f").replace("k", "\u212a").replace("i", "\u0131"),
                      example.upper().replace("I", "\u0130"), "\u00e9" + example}
                     if guard.fold else {example, "\u00e9" + example}):
            for text in ("head\n" + form + "\n", form + "\n"):
                if rx.search(text) is not None:    # (a case change may break a case-sensitive part)
                    assert not guard.absent(text), (name, form)


def fixture_texts():
    return [p.read_text(encoding="utf-8", errors="replace")
            for p in sorted((ROOT / "fixtures" / "netstat").rglob("*.txt"))]


def _flip(text: str, rng: random.Random) -> str:
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)


def test_guarded_patterns_find_what_the_patterns_find_over_every_fixture():
    rng = random.Random(10)
    texts = fixture_texts()
    assert len(texts) > 50
    checked = skipped = 0
    for name, guard in guarded():
        for text in texts:
            # the text, case flipped, with the letters re.I folds from outside ASCII (long s,
            # Kelvin sign, dotless and dotted i), with other text outside ASCII, cut short
            forms = [text, _flip(text, rng), text.replace("s", "\u017f").replace("k", "\u212a"),
                     text.replace("i", "\u0131").replace("I", "\u0130"), "\u00e9" + text, text[:300]]
            for form in forms:
                assert guard.findall(form) == guard.rx.findall(form), name
                assert (guard.search(form) is None) == (guard.rx.search(form) is None), name
                assert [m.span() for m in guard.finditer(form)] == [m.span() for m in guard.rx.finditer(form)]
                checked += 1
                skipped += guard.absent(form)
    assert skipped > checked // 4, "the words never spared a pattern"


def test_detection_scores_are_the_same_with_and_without_the_words(monkeypatch):
    texts = fixture_texts()
    with_words = [parsers.detect(t) for t in texts]
    monkeypatch.setattr(_needs.Needs, "absent", lambda self, text: False)
    assert [parsers.detect(t) for t in texts] == with_words
    assert sum(1 for r in with_words if r) > 50


def test_the_characters_ignorecase_folds_to_ascii_letters_are_the_ones_listed():
    everything = "".join(chr(c) for c in range(128, 0x110000) if not 0xD800 <= c <= 0xDFFF)
    found = {}
    for letter in "abcdefghijklmnopqrstuvwxyz":
        for m in re.finditer(letter, everything, re.I):
            found[ord(m.group(0))] = letter
    assert found == _needs.TO_ASCII
    # and what the words are looked for in holds them: "FİX" matches "fix" under re.I
    guard = _needs.needs(re.compile("fix|kept|sums", re.I), "fix", "kept", "sums", fold=True)
    for text in ("F\u0130X", "f\u0131x", "\u212aEPT", "\u017fUM\u017f", "x \u00e9 FIX"):
        assert guard.rx.search(text) and not guard.absent(text), text
    assert guard.absent("F\u00cdX \u00e9t\u00e9") and guard.rx.search("F\u00cdX \u00e9t\u00e9") is None


def test_words_of_a_case_blind_pattern_are_lower_case_ascii():
    with pytest.raises(ValueError):
        _needs.needs(re.compile("x", re.I), "Fragments", fold=True)
