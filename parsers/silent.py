"""Texts no parser reads, numbers aside: skipped without running every detector again.

A cron job's output often holds more than `netstat -s` (a `route print` table, the mail
the job sends), and that text comes back with every snapshot, its numbers changed:
detecting it again (every OS detector's regexes over it) was a sixth of reading such a
log. The second time a text's form (the text with each value made one 0: where the values
are, not what they are; a value is what `text.line_shape` takes out of a line, never a
digit inside a word, an address or an OID) is found silent (detect() gives no parser), it
is tested as the shapes' numbers are (parsers/shapes.py): detected again with every value
replaced by distinct sentinels, and by zeros; if no parser recognizes either, that form
is remembered for the run and later texts of it are skipped at once. Keyed by the form
itself (never a hash: a collision would lose a dump), within a size budget. The first
text of a form proven so teaches the shapes its form (parsers/shapes.learn_silent), so
that later ones are matched whole by the splitter, not even cut into lines.
"""
from __future__ import annotations
from typing import Callable, Dict

from .text import _VALUE


MAX_TEXT = 64 << 10          # a longer text is detected every time
MAX_KEPT = 8 << 20           # characters of forms remembered (the memo starts over past it)


class Silent:
    """Digit-free forms of texts no parser reads (one for the run, like parsers.SHAPES)."""

    def __init__(self) -> None:
        self.forms: Dict[str, object] = {}       # form -> sightings (1), or the verdict (True / False)
        self.size = 0
        self.skipped = 0
        self._last = ("", "")                    # (text, form) of the last text asked about

    def known(self, text: str) -> bool:
        """True when `text`'s form was proven silent: no parser reads it, whatever its numbers."""
        if not self.forms or len(text) > MAX_TEXT:
            return False
        if self.forms.get(self.form(text)) is True:
            self.skipped += 1
            return True
        return False

    def heard(self, text: str, detect: Callable[[str], list]) -> None:
        """`text` was found silent (detect(text) is empty): the second time its form is, test
        the form with other numbers."""
        if len(text) > MAX_TEXT:
            return
        form = self.form(text)
        seen = self.forms.get(form)
        if seen is True or seen is False:
            return
        if seen is None:
            if self.size + len(form) > MAX_KEPT:
                self.forms.clear()
                self.size = 0
            self.forms[form] = 1
            self.size += len(form)
            return
        runs = [m.span() for m in _VALUE.finditer(text)]

        def other(values) -> str:
            out, last = [], 0
            for i, (a, b) in enumerate(runs):
                out += [text[last:a], values(i)]
                last = b
            out.append(text[last:])
            return "".join(out)
        # the form itself is the text with every value 0
        self.forms[form] = not detect(form) and not detect(other(lambda i: str(7_000_000_000_011 + 7919 * i)))

    def form(self, text: str) -> str:
        """The text with its values made 0 (made once for heard() or the shapes after known())."""
        last = self._last
        if last[0] is not text:
            last = self._last = (text, _VALUE.sub("0", text))
        return last[1]
