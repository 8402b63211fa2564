"""Detectors' patterns behind a substring test.

Each OS's detect() runs a few regular expressions over the whole text, most of them
alternations of phrases under IGNORECASE, which re tries at every position (~0.1-0.4 ms
each on a 4 KiB dump, for every new text and every shape's numbers checked). A pattern
that cannot match without one of a few literal words is given those words: over a text
holding none of them it is not run, and says what it would have said (no match).

Exact by construction: `words` must be necessary (every alternative of the pattern contains
one of them, case aside when `fold`). Under IGNORECASE the test is made on the lower-cased
text only when the text is ASCII -- there re's case folding is ASCII's, while `ſ` or the
Kelvin sign fold to ASCII letters -- and any other text goes to the pattern itself.
tests/test_detect_words.py checks the words against each pattern over every fixture.
"""
from __future__ import annotations

from typing import Iterable, Tuple

from .base import OncePerText


@OncePerText
def _ascii_lower(text: str):
    return text.lower() if text.isascii() else None


class Needs:
    """A compiled (or lazy) pattern that needs one of `words` to match."""
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
            text = _ascii_lower(text)
            if text is None:
                return False
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
