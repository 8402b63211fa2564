"""Detectors' patterns behind a substring test.

Each OS's detect() runs a few regular expressions over the whole text, most of them
alternations of phrases under IGNORECASE, which re tries at every position (~0.1-0.4 ms
each on a 4 KiB dump, for every new text and every shape's numbers checked). A pattern
that cannot match without one of a few literal words is given those words: over a text
holding none of them it is not run, and says what it would have said (no match).

Exact by construction: `words` must be necessary (every alternative of the pattern contains
one of them, case aside when `fold`). Under IGNORECASE the words are looked for in the
lower-cased text, after the four characters outside ASCII that re's IGNORECASE matches to
an ASCII letter (dotted and dotless i, long s, the Kelvin sign) are made those letters:
whatever such a pattern matches, that text holds in lower case. tests/test_detect_words.py
checks the words against each pattern and that list against all of Unicode.
"""
from __future__ import annotations
from typing import Iterable, Tuple

from .base import OncePerText


# What re's IGNORECASE matches to an ASCII letter from outside ASCII (re/_casefix.py and the
# simple lower-case mapping); str.lower() makes the others ASCII or leaves them apart.
TO_ASCII = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}
_TO_ASCII_CHARS = "".join(map(chr, TO_ASCII))


@OncePerText
def _folded(text: str) -> str:
    if not text.isascii() and any(c in text for c in _TO_ASCII_CHARS):
        text = text.translate(TO_ASCII)
    return text.lower()


class Needs:
    """A pattern (re.compile's or parsers.lazyre.lazy's) that needs one of `words` to match."""
    __slots__ = ("rx", "words", "fold")

    def __init__(self, rx, words: Iterable[str], fold: bool):
        self.rx = rx
        self.words: Tuple[str, ...] = tuple(words)
        self.fold = fold
        if fold and any(w != w.lower() or not w.isascii() for w in self.words):
            raise ValueError("words of an IGNORECASE pattern are written in ASCII lower case")

    def absent(self, text: str) -> bool:
        """True when the pattern cannot match `text` (False: it may)."""
        if self.fold:
            text = _folded(text)
        for word in self.words:
            if word in text:
                return False
        return True

    def search(self, text: str):
        return None if self.absent(text) else self.rx.search(text)

    def findall(self, text: str):
        return [] if self.absent(text) else self.rx.findall(text)

    def finditer(self, text: str):
        return iter(()) if self.absent(text) else self.rx.finditer(text)

    def match(self, text: str):
        """Not guarded (a reader's per-line use: the words would cost as much as the match)."""
        return self.rx.match(text)


def needs(rx, *words: str, fold: bool) -> Needs:
    return Needs(rx, words, fold)


__all__ = ["Needs", "needs"]
