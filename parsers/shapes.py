"""The per-shape fast path: snapshots that differ from a known one only in their numbers.

A cron log of one host is the same text again and again with other digits (and so are the
one-snapshot files of a fleet's collection), so after the full path (splitter, detection,
the OS parser) has read a snapshot of a shape twice in a run (any text, any file), the
shape is learnt (for the rest of the run: every file, every input): its text
becomes one regular expression in which every number is a possessive digit run (a near miss
never backtracks), and the numbers that feed the output are groups. Every later snapshot of that shape is
one C-level match plus one comparison of its digit-free bytes, and its Snapshot is the
template's with those numbers put in. Anything else -- a line more or less, another word, a
number in a place where the parser does more than copy it -- does not match and goes the
full path, which may learn that shape in turn.

Exact by construction, and checked (tests/test_fast_path.py runs both paths over every fixture,
every real-form case and a generated cron log and requires the same output):

- Only digit runs inside a counter value (what `text.line_shape` replaces: the splitter's
  snapshot signature and grep keys stay the same) may vary, and not on date, command or
  section-header lines (which decide where snapshots start), nor before a tab (its width
  depends on the column). Every other digit is literal. A line the date or command
  candidate patterns pick that is neither (`spoof 5/26 18 2 last mac 00:08:02:...`) may
  vary; each match classifies it again (`Shape.checked`), as the full scan would.
- Which of those numbers feed the output, and how, is found by reading the template again
  with each replaced by a distinct sentinel, and once more with each replaced by 0: a
  number whose sentinel shows up as a counter or raw value (and nowhere else), and which
  changes nothing else, is a group; one that changes nothing at all is free; one that does
  anything else (`Forwarding: 1` sets forwarding, two equal values make a duplicate-line
  warning, a sum) stays literal -- found by splitting the set in halves until the culprits
  are alone, then checking all that vary together. One that may be anything but 0 (a
  forwarded count: above 0 it makes a router), tested with a second set of sentinels,
  varies as `[1-9][0-9]*`.
- A match is accepted only where the full scan would end the snapshot too (a date or
  command line follows, or the end of the text), and with the OS verdict the full path
  would give it: the text's own verdict for the shape's signature, or for a text's first
  snapshot of that signature the verdict reached from the shape's detection scores, kept
  only when its numbers do not change them (parsers/__init__.py checks before using it).

Text no parser reads gets a shape too, once parsers/silent.py has proven its form silent
(learn_silent: matched, it is skipped), and a paste that clean() changes every time gets a
twin for the text as pasted (learn_raw, Shapes.twin: matched, it gives what its shape
gives of the cleaned text, without cleaning).

The regular expression checks where the digit runs are (`.{n}+` between `\\d{1,19}+`, ASCII mode);
the digit-free bytes of what it matched must equal the template's (memcmp), which with
equal segment lengths proves every other character equal.
"""
from __future__ import annotations

import json
import re
from bisect import bisect_left
from typing import Callable, Dict, List, Optional, Tuple

from .paste import LONG, long_line, raw_safety
from .paste import clean as paste_clean
from .model import CounterList, Snapshot
from .text import (MAX_LINE, _CAND_COMMAND, _CAND_DATE, _DAMAGE, _VALUE, FastChunk, Splitter, classify,
                   _lead, fast_date, header_kind, never_a_date)
from .lazyre import lazy


_DIGITS_B = b"0123456789"
_RUN = lazy(r"[0-9]+")
MAX_DIGITS = 19       # a varying number is 1 to 19 digits: below 2**64, so to_int never refuses it
_RUN_TEXT = {False: "\\d{1,%d}+" % MAX_DIGITS, True: "[1-9]\\d{0,%d}+" % (MAX_DIGITS - 1)}
MAX_TEXT = 64 << 10      # a snapshot longer than this is not learnt
MAX_SHAPES = 512         # shapes kept (the oldest go first)


class Shape:
    """One learnt snapshot shape: how to match it and how to build its Snapshot."""
    __slots__ = ("rx", "strip", "dated", "key", "lines", "checked", "prefix_lines", "size",
                 "module", "note", "sig", "forced", "os", "format", "host", "command", "forwarding",
                 "warnings", "v4", "v6", "raw", "v4_slots", "v6_slots", "raw_slots", "counters", "counter_slots",
                 "by_command", "keys", "headers", "ranked", "raw_ok", "spec", "cleans")

    def match(self, text: str, at: int, limit: int):
        """The match of this shape at `at` (the snapshot's first line after its date line), or None."""
        m = self.rx.match(text, at, limit)
        if m is None:
            return None
        # UTF-8 is one-to-one and no multi-byte sequence holds an ASCII digit byte, so equal
        # digit-free bytes are equal digit-free text (bytes.translate is C; str.translate a dict)
        if text[at:m.end()].encode("utf-8", "surrogatepass").translate(None, _DIGITS_B) != self.strip:
            return None
        if self.checked:
            # lines the candidate patterns pick (`spoof 5/26 18 2 last mac 00:08:02:...`) whose
            # numbers vary: the full scan would start a snapshot at one its numbers made a date
            start, n = at, 0
            for k in self.checked:
                while n < k:
                    start = text.index("\n", start) + 1
                    n += 1
                line = text[start:text.index("\n", start)]
                stamp, command, _ = classify(paste_clean(line + "\n")[:-1] if self.cleans else line)
                if stamp is not None or command:
                    return None
        return m

    def reads_raw(self, text: str, at: int, end: int) -> bool:
        """Whether this shape may match text[at:end], not cleaned yet (text.Splitter.unsettled):
        true when paste.clean() leaves its lines as they are whatever its numbers (the same for
        every text it matches: only digit runs differ, so found once, from the first), or
        whatever its numbers but those that make a line long, and none does in this text."""
        ok = self.raw_ok
        if ok is None:
            ok = self.raw_ok = raw_safety(text[at:end], MAX_DIGITS)
        if ok is LONG:
            return not long_line(text, at, end)
        return ok

    def build(self, chunk: FastChunk, source: str, index: int) -> Snapshot:
        """The Snapshot, its counters (model.LAZY) made by fill() when first read: its JSON can
        come from the shape's without them (toolkit/snapjson.py)."""
        snap = Snapshot.__new__(Snapshot)
        snap.__dict__.update(source=source, index=index, os=self.os, format=self.format, taken_at=chunk.taken_at,
                             host=self.host, warnings=list(self.warnings), line=chunk.line,
                             forwarding=self.forwarding, prompt_host=self.host, _shape=(self, chunk.groups))
        return snap

    def fill(self, fields: dict, g) -> None:
        """A built snapshot's counters, into its `fields` (its __dict__), from its numbers `g`."""
        v4 = v6 = None
        if self.v4 is not None:
            v4 = self.v4.copy()
            for name, i in self.v4_slots:
                v4[name] = int(g[i])
        if self.v6 is not None:
            v6 = self.v6.copy()
            for name, i in self.v6_slots:
                v6[name] = int(g[i])
        raw = self.raw.copy()
        for key, i in self.raw_slots:
            raw[key] = g[i]
        values = self.counters.values
        if self.counter_slots:
            values = list(values)
            for k, i in self.counter_slots:
                values[k] = int(g[i])
            values = tuple(values)
        fields.update(ipv4=v4, ipv6=v6, raw=raw, counters=CounterList(self.counters.layout, values))
        # Its numbers as printed are kept no longer (a snapshot read is written from its fields,
        # not from the shape's JSON, toolkit/snapjson.py): triage and diff keep thousands.
        fields.pop("_shape", None)


class Shapes:
    """The shapes learnt so far (one registry for a whole run: every file, every input)."""

    def __init__(self) -> None:
        self.by_key: Dict[Tuple[bool, str], List[Shape]] = {}
        self.order: List[Shape] = []
        self.any = False
        self.longest = 0
        self.hits = 0
        self.twin_hits = 0                  # of those, by twins for text as pasted (learn_raw)
        self.seen: Dict[tuple, int] = {}    # full-path readings by shape, every text of the run
        self.twinned: set = set()           # shapes a twin for text not cleaned yet was sought for (twin())

    def lookup(self, dated: bool, key: str) -> List[Shape]:
        return self.by_key.get((dated, key), ())

    def add(self, shape: Shape) -> None:
        if len(self.order) >= MAX_SHAPES:
            old = self.order.pop(0)
            self.by_key[(old.dated, old.key)].remove(old)
            self.twinned.discard(old)
        self.order.append(shape)
        self.by_key.setdefault((shape.dated, shape.key), []).insert(0, shape)
        self.any = True
        self.longest = max(self.longest, shape.size)

    def twin(self, shape: Shape, raw: str, cleaned: str, a: int, b: int) -> None:
        """`shape` matched cleaned[a:b] (whole lines), cleaned by paste.clean from `raw`: learn,
        once per shape, its twin for that text as it comes, not cleaned (learn_raw)."""
        self.twinned.add(shape)
        at = pos = 0
        start = None
        lines = raw.split("\n")
        for k, line in enumerate(lines):
            if k < len(lines) - 1:
                line += "\n"
            if pos == a:
                start = at
            if pos >= b:
                break
            pos += len(paste_clean(line))
            at += len(line)
        if start is None or pos != b or raw[start:at] == cleaned[a:b] or paste_clean(raw[start:at]) != cleaned[a:b]:
            return
        twin = learn_raw(shape, raw[start:at], cleaned[a:b])
        if twin is not None:
            self.add(twin)

    def wants_silent(self, form: str) -> bool:
        """True the first time in this run a text of this silent form (parsers/silent.py) is
        proven so: the time to learn its shape (learn_silent)."""
        key = ("silent", hash(form))
        n = self.seen.get(key, 0) + 1
        self.seen[key] = n
        return n == 1

    def wants(self, origin, module_name: str, note: Optional[str], forced: bool) -> bool:
        """True the second time a snapshot of this shape (module, digits aside) is read in full
        in this run (any text: a directory of one-snapshot files of a host or a fleet repeats
        shapes as a cron log does): a shape is worth learning where it repeats."""
        text = origin.text
        if len(text) > MAX_TEXT:
            return False
        if origin.first_date:       # the date line is not part of the shape (Mon or Tue, Jan or Feb)
            text = text[text.find("\n") + 1:]
        # a hash, not the text: the counts live for the run (a collision only learns early,
        # and learning checks every number itself)
        key = (module_name, note, forced, origin.first_date,
               hash(text.encode("utf-8", "replace").translate(None, _DIGITS_B)))
        seen = self.seen
        n = seen.get(key, 0) + 1
        if len(seen) > 4096:
            seen.clear()
        seen[key] = n
        return n == 2


Run = Callable[[str], Optional[dict]]


def learn(origin, taken_at: Optional[str], host: Optional[str], command: Optional[str], snap: Snapshot,
          module, note: Optional[str], sig, forced: bool, run: Run,
          ranked_of: Optional[Callable[[str], object]] = None) -> Optional[Shape]:
    """A Shape for the snapshot `snap` read from `origin`, or None when it cannot be one.
    `run(text)` reads a text alone through the full path with this verdict (None when it does
    not give exactly one snapshot); it is how the numbers are tested. `ranked_of(text)` is
    the detection scores of a text alone (`ranked_of(None)`: of this snapshot, as the full
    path detected it): kept on the shape (`ranked`) when the numbers do not change them, so
    a text's first snapshot of the shape needs no detection."""
    text = origin.text
    where = _region(origin, taken_at)
    if where is None:
        return None
    head, region, prefix_lines = where
    runs, vary, checked_line = _varying(region)
    candidates = [i for i, r in enumerate(runs) if r in vary]
    original = [region[a:b] for a, b in runs]

    def substitute(tokens, values) -> str:
        return _put(head, region, runs, tokens, values)

    ran: Dict[str, Optional[dict]] = {}

    def read(text: str) -> Optional[dict]:
        """run(text), once per distinct text (sorting the numbers out comes back to the same ones)."""
        if text not in ran:
            ran[text] = run(text)
        return ran[text]

    want = read(text)
    if want is None or want != _plain(snap) or want["host"] != host or want["prompt_host"] != host:
        return None
    # only candidates are ever replaced (so only their sentinels can be groups)
    sentinels = {i: str(7_000_000_000_011 + 7919 * i) for i in candidates}
    others = {i: str(9_000_000_000_017 + 104_729 * i) for i in candidates}
    zeros = dict.fromkeys(candidates, "0")
    by_sentinel = {v: i for i, v in sentinels.items()}

    def slots_of(out: dict) -> Dict[tuple, int]:
        """Where each number's sentinel shows up as a value: (family|raw, name) -> run index."""
        found = {}
        for fam in ("ipv4", "ipv6"):
            for name, v in (out.get(fam) or {}).items():
                i = by_sentinel.get(str(v)) if isinstance(v, int) and not isinstance(v, bool) else None
                if i is not None and (want.get(fam) or {}).get(name) == int(original[i]):
                    found[(fam, name)] = i
        for key, v in (out.get("raw") or {}).items():
            i = by_sentinel.get(v) if isinstance(v, str) else None
            if i is not None and want["raw"].get(key) == original[i]:
                found[("raw", key)] = i
        mine = want["counters"]
        for k, c in enumerate(out.get("counters") or ()):
            v = c.get("value")
            i = by_sentinel.get(str(v)) if isinstance(v, int) and not isinstance(v, bool) else None
            if i is not None and k < len(mine) and mine[k]["value"] == int(original[i]) \
                    and {**c, "value": None} == {**mine[k], "value": None}:
                found[("counters", k)] = i
        return found

    # Outputs are compared as JSON text (key order, 1 vs 1.0 vs True all count): a read's once
    # per text, and what is expected from `want` as JSON makes it (loaded back once), a dict
    # copied only where the numbers go in.
    base = json.loads(json.dumps(want))
    base_json = json.dumps(base)
    dumped: Dict[str, str] = {}

    def expected_json(slots, tokens, values) -> str:
        out = None
        for (where, name), i in slots.items():
            if i not in tokens:
                continue
            if out is None:
                out = dict(base)
            if out[where] is base[where]:
                out[where] = list(base[where]) if where == "counters" else dict(base[where])
            if where == "counters":
                out[where][name] = {**base[where][name], "value": int(values[i])}
            else:
                out[where][name] = values[i] if where == "raw" else int(values[i])
        return base_json if out is None else json.dumps(out)

    def same(text: str, tokens, values) -> bool:
        """Whether `text` (the template with `tokens` replaced by `values`) reads as expected."""
        got = dumped.get(text)
        if got is None:
            out = read(text)
            if out is None:
                return False
            got = dumped[text] = json.dumps(out)
        return got == expected_json(slots, tokens, values)

    # A number whose sentinel shows up in the words of the snapshot (a counter's label: `time
    # LRO coalesced 2 packets`, a warning) stays literal: set apart at once, and the slots are
    # found without it (its line's value is one), not by halving the set and a second look
    # at each line (each a read of the whole snapshot, hundreds on a macOS dump).
    while True:
        marked = read(substitute(candidates, sentinels)) or {}
        slots = slots_of(marked)
        words = {k: v for k, v in marked.items() if k not in ("ipv4", "ipv6", "counters", "raw")}
        words["counters"] = [{**c, "value": None} for c in marked.get("counters") or ()]
        words["raw"] = list(marked.get("raw") or ())
        words_text = json.dumps(words)
        kept = [i for i in candidates if sentinels[i] not in words_text]
        if len(kept) == len(candidates):
            break
        candidates = kept

    def fine(anything, nonzero=()) -> bool:
        """The numbers `anything` may be any value (sentinels, then zeros), those in `nonzero`
        any but 0 (sentinels, then other sentinels: `forwarded` > 0 makes a router)."""
        tokens = sorted(set(anything) | set(nonzero))
        mixed = {**{i: zeros[i] for i in anything}, **{i: others[i] for i in nonzero}}
        chosen = set(tokens)
        return all(same(substitute(tokens, values), chosen, values) for values in (sentinels, mixed))

    good: List[int] = []
    nonzero: List[int] = []

    def sort_out(tokens) -> None:
        if not tokens:
            return
        if fine(tokens):
            good.extend(tokens)
        elif len(tokens) > 1:
            half = len(tokens) // 2
            sort_out(tokens[:half])
            sort_out(tokens[half:])
        elif original[tokens[0]] != "0" and fine((), tokens):
            nonzero.extend(tokens)

    if candidates and fine(candidates):
        good.extend(candidates)
    else:
        # Numbers on a line that speaks of forwarding are the likely culprits (`Forwarding: 1`,
        # `N forwarded`: anything but 0): sorted out apart, the rest often passes whole. The
        # order changes how many reads it takes, never what is accepted (all together, below).
        def forwarding(i: int) -> bool:
            a = runs[i][0]
            return "forward" in region[region.rfind("\n", 0, a) + 1:region.find("\n", a)].lower()
        sort_out([i for i in candidates if not forwarding(i)])
        sort_out([i for i in candidates if forwarding(i)])
    if len(good) + len(nonzero) < len(candidates):
        # Some stay literal. The groups were found with every number replaced, so a number
        # inside a label (`packet forwarded (0 packet fast forwarded)`) hid its line's value:
        # each one left gets a second look with the groups found without those.
        kept = set(good) | set(nonzero)
        for i in candidates:
            if i in kept:
                continue
            before = slots
            slots = slots_of(read(substitute(sorted(kept | {i}), sentinels)) or {})
            if fine([i]):
                good.append(i)
            elif original[i] != "0" and fine((), [i]):
                nonzero.append(i)
            else:
                slots = before
                continue
            kept.add(i)
        good.sort()
        nonzero.sort()
        slots = slots_of(read(substitute(sorted(good + nonzero), sentinels)) or {})
    # All of them together, always: halves that each pass can fail together (forwarding is
    # on when either family's forwarded count is above 0). The whole set's first check is
    # read from `ran` when nothing was set apart.
    if not fine(good, nonzero):
        return None
    varying = set(good) | set(nonzero)

    # The pattern: literal digits, varying runs, the characters between them by count only.
    group_of: Dict[int, int] = {}
    for i in sorted(set(slots.values()) & varying):
        group_of[i] = len(group_of)
    shape = _shape(region, runs, varying, nonzero, group_of, checked_line)
    if shape is None:
        return None
    shape.dated = taken_at is not None
    shape.prefix_lines = prefix_lines
    shape.size = len(text) * 2 + 4096
    shape.module, shape.note, shape.sig, shape.forced = module, note, sig, forced
    shape.os, shape.format, shape.host = want["os"], want["format"], host
    shape.command, shape.forwarding, shape.warnings = command, want["forwarding"], tuple(want["warnings"])
    shape.v4, shape.v6, shape.raw = want["ipv4"], want["ipv6"], want["raw"]
    slot_list = sorted(((where, name, group_of[i]) for (where, name), i in slots.items() if i in group_of),
                       key=lambda s: s[2])
    shape.counters = CounterList.of(want["counters"])
    shape.counter_slots = tuple((n, g) for w, n, g in slot_list if w == "counters")
    shape.v4_slots = tuple((n, g) for w, n, g in slot_list if w == "ipv4")
    shape.v6_slots = tuple((n, g) for w, n, g in slot_list if w == "ipv6")
    shape.raw_slots = tuple((n, g) for w, n, g in slot_list if w == "raw")
    shape.by_command, shape.keys, shape.headers = origin.by_command, origin.keys, origin.headers
    shape.raw_ok = None             # found from the first text it meets uncleaned (reads_raw)
    shape.ranked = None             # the detection scores of its texts, when the numbers cannot change them
    if ranked_of is not None and not forced:
        # Now, while the texts just read alone are at hand (the caller's ranked_of detects the
        # lines their reading cut, no second split): the template alone too (its scores were
        # taken in its own text), and the numbers all replaced, by sentinels and by zeros.
        tokens = sorted(varying)
        mixed = {**zeros, **{i: others[i] for i in nonzero}}
        ranked = ranked_of(None)
        if ranked and ranked_of(text) == ranked \
                and all(ranked_of(substitute(tokens, values)) == ranked for values in (sentinels, mixed)):
            shape.ranked = ranked
    return shape


def _put(head: str, text: str, runs, tokens, values) -> str:
    """`head` and `text` with the digit runs `tokens` (indexes into `runs`, in order) replaced
    by `values[i]`."""
    out, last = [head], 0
    for i in tokens:
        a, b = runs[i]
        out += (text[last:a], values[i])
        last = b
    out.append(text[last:])
    return "".join(out)


def _region(origin, taken_at: Optional[str]):
    """(date line, the rest, how many command lines lead the rest) of a snapshot's text, or
    None when it cannot be a shape (control bytes, damage, a date line not its own)."""
    text = origin.text
    if any(c in text for c in "\r\x0b\x0c") or _DAMAGE.search(text):
        return None
    if taken_at is not None:
        if origin.dates != 1 or not origin.first_date:
            return None
        eol = text.find("\n")
        stamp = fast_date(text[:eol]) if eol > 0 else None
        if stamp is None or not stamp.has_time or stamp.iso() != taken_at:
            return None
        head, region = text[:eol + 1], text[eol + 1:]
    else:
        if origin.dates:
            return None
        head, region = "", text
    if not region.endswith("\n") or origin.body < len(head):
        return None
    return head, region, region.count("\n", 0, origin.body - len(head))


def _varying(region: str):
    """The digit runs of `region`; those that may vary: inside counter values, outside the
    lines that decide where snapshots start, not before a tab; and of those, the line of each
    on a line the date or command patterns pick (Shape.checked)."""
    runs = [(m.start(), m.end()) for m in _RUN.finditer(region)]
    starts = [a for a, _ in runs]
    vary = set()
    checked_line: Dict[Tuple[int, int], int] = {}   # a run on a date or command candidate line -> its line
    at = 0
    first = 0                   # runs[first:stop] are the line's (a run never holds a newline)
    for n, line in enumerate(region.split("\n")):
        end = at + len(line)
        stop = bisect_left(starts, end, first)
        if stop > first:        # a line without digits has none to vary
            low = line.lower()
            candidate = _CAND_DATE.search(low) or _CAND_COMMAND.search(low)
            if candidate:
                date, cmd, _ = classify(line, low)
                if date is not None or cmd:
                    line = ""           # a boundary line: its digits stay literal
            if line and header_kind(line) is None:
                tab = line.rfind("\t")
                spans = [(at + m.start(), at + m.end()) for m in _VALUE.finditer(line)]
                mine = [r for r in runs[first:stop]
                        if r[0] - at > tab and any(a <= r[0] and r[1] <= b for a, b in spans)]
                if len(line) + sum(MAX_DIGITS - (b - a) for a, b in mine) < MAX_LINE:
                    vary.update(mine)
                    if candidate and (_CAND_COMMAND.search(low) or not never_a_date(line)):
                        checked_line.update((r, n) for r in mine)
            first = stop
        at = end + 1
    return runs, vary, checked_line


def _shape(region: str, runs, varying, nonzero, group_of, checked_line) -> Optional[Shape]:
    """A Shape matching `region` with the runs `varying` (`nonzero`: not 0; `group_of`: run ->
    group), its pattern and what _fast looks up, or None when it does not compile."""
    # The pattern: n characters between digit runs (by count only, possessive: no backtracking
    # point is kept for each of them), literal digits, a varying run (`[1-9]` first when it may
    # not be 0), in a group when it feeds the output. A gap of one is `.` (the dots of an SNMP
    # OID); the last gap is always `.{n}+`.
    parts = []
    last = 0
    for i, (a, b) in enumerate(runs):
        if a > last:
            parts.append("." if a - last == 1 else ".{%d}+" % (a - last))
        if i in varying:
            run = _RUN_TEXT[i in nonzero]
            parts.append("(%s)" % run if i in group_of else run)
        else:
            parts.append(region[a:b])
        last = b
    if len(region) > last:
        parts.append(".{%d}+" % (len(region) - last))
    try:
        rx = re.compile("".join(parts), re.S | re.A)
    except (re.error, OverflowError, RecursionError):
        return None
    shape = Shape()
    shape.rx = rx
    shape.strip = region.encode("utf-8", "surrogatepass").translate(None, _DIGITS_B)
    shape.key = _lead(region, 0)
    shape.lines = region.count("\n")
    shape.checked = tuple(sorted({checked_line[r] for i, r in enumerate(runs) if i in varying and r in checked_line}))
    shape.spec = tuple((i in nonzero, i in group_of) if i in varying else None for i in range(len(runs)))
    shape.cleans = False
    return shape


def learn_silent(origin, taken_at: Optional[str], host: Optional[str], command: Optional[str], sig,
                 detect: Callable[[str], list]) -> Optional[Shape]:
    """A Shape for a text no parser reads (parsers/silent.py proved it so whatever its values),
    or None: matched, the text is skipped as the full path skips it (its `module` is None).
    Its numbers vary as a snapshot's do (_varying); read alone with every one of them
    replaced by sentinels, and by zeros, it must still be one chunk that no parser detects."""
    where = _region(origin, taken_at)
    if where is None:
        return None
    head, region, prefix_lines = where
    runs, vary, checked_line = _varying(region)
    varying = {i for i, r in enumerate(runs) if r in vary}
    tokens = sorted(varying)
    for values in ({i: str(7_000_000_000_011 + 7919 * i) for i in tokens}, dict.fromkeys(tokens, "0")):
        chunks = split_alone(_put(head, region, runs, tokens, values))
        if chunks is None or detect("\n".join(chunks[0].lines)):
            return None
    shape = _shape(region, runs, varying, (), {}, checked_line)
    if shape is None:
        return None
    shape.dated = taken_at is not None
    shape.prefix_lines = prefix_lines
    shape.size = len(origin.text) * 2 + 4096
    shape.module = shape.note = shape.os = shape.format = shape.forwarding = shape.ranked = shape.raw_ok = None
    shape.sig, shape.forced, shape.host, shape.command = sig, False, host, command
    shape.warnings, shape.v4, shape.v6, shape.raw, shape.counters = (), None, None, {}, CounterList((), ())
    shape.v4_slots = shape.v6_slots = shape.raw_slots = shape.counter_slots = ()
    shape.by_command, shape.keys, shape.headers = origin.by_command, origin.keys, origin.headers
    return shape


def learn_raw(shape: Shape, raw: str, clean: str) -> Optional[Shape]:
    """A twin of `shape` for `raw`, the text (its lines after the date line) paste.clean made
    `clean` of, which `shape` matched: it matches the text as pasted (a flattened `nstat -j`,
    Markdown escapes, a PDF page line), so that text needs no cleaning, and gives what `shape`
    gives of its cleaned text. Its numbers are the raw text's runs that clean() carries to
    `shape`'s varying ones (found with sentinels), in the same order; with every one of them
    at sentinels, 0, 1 and 19 digits, clean() must make of it `shape`'s text with the same
    numbers (as raw_safety, the shortest and longest runs stand for all lengths). Lines
    `shape` classifies again at each match are cleaned alone first (Shape.match), so they must
    be lines of their own in both texts. None when any of this does not hold."""
    if shape.spec is None:
        return None
    if shape.checked:
        # lines to classify again at each match: cleaned one by one, so each must be the same line
        raw_lines, clean_lines = raw.split("\n"), clean.split("\n")
        if len(raw_lines) != len(clean_lines) or \
                any(paste_clean(raw_lines[k] + "\n") != clean_lines[k] + "\n" for k in shape.checked):
            return None
    rruns = [(m.start(), m.end()) for m in _RUN.finditer(raw)]
    cruns = [(m.start(), m.end()) for m in _RUN.finditer(clean)]
    if len(cruns) != len(shape.spec):
        return None

    def put(text: str, runs, values: dict) -> str:
        return _put("", text, runs, sorted(values), values)
    marks = {i: str(6_100_000_000_007 + 7919 * i) for i in range(len(rruns))}
    marked = paste_clean(put(raw, rruns, marks))
    got = [m.group(0) for m in _RUN.finditer(marked)]
    if len(got) != len(cruns):
        return None
    run_of = {v: i for i, v in marks.items()}
    varying, nonzero, group_of, to_raw = set(), set(), {}, {}
    last = -1
    for j, spec in enumerate(shape.spec):
        if spec is None:
            continue
        i = run_of.get(got[j], -1)
        if i <= last:
            return None             # clean() made that number, or moved it
        last = to_raw[j] = i
        varying.add(i)
        if spec[0]:
            nonzero.add(i)
        if spec[1]:
            group_of[i] = len(group_of)
    for value in (lambda j: str(6_300_000_000_011 + 104_729 * j), lambda j: "0", lambda j: "1",
                  lambda j: "9" * MAX_DIGITS):
        values = {j: "1" if shape.spec[j][0] and value(j) == "0" else value(j) for j in to_raw}
        if paste_clean(put(raw, rruns, {to_raw[j]: v for j, v in values.items()})) != put(clean, cruns, values):
            return None
    twin = _shape(raw, rruns, varying, nonzero, group_of, {})
    if twin is None:
        return None
    for name in Shape.__slots__:
        if name not in ("rx", "strip", "key"):
            setattr(twin, name, getattr(shape, name))
    twin.size = max(shape.size, len(raw) * 2 + 4096)
    twin.raw_ok = True
    twin.cleans = True
    twin.spec = None
    return twin


def _plain(snap: Snapshot) -> dict:
    d = snap.to_dict()
    for k in ("source", "index", "line"):
        d.pop(k)
    return d


def split_alone(text: str):
    """The chunks the splitter makes of `text` alone: a list of one, or None."""
    sp = Splitter()
    chunks = list(sp.feed(text)) + list(sp.finish())
    if len(chunks) != 1 or sp.cut or sp.long_lines:
        return None
    return chunks


def read_alone(text: str, finish: Callable, cut: Optional[Dict[str, str]] = None, read=None) -> Optional[dict]:
    """The one snapshot the full path makes of `text` alone (through `finish(chunk)`), as a
    dict without source, index and line; None unless there is exactly one. `cut`, when
    given, keeps the lines of that one chunk, joined (what detection would be given).
    `read` (a chunk and the Snapshot the full path made of it): when the chunk of `text`
    alone gives the parser what that one did (lines, command, stamp, host), that Snapshot's."""
    chunks = split_alone(text)
    if chunks is None:
        return None
    chunk = chunks[0]
    if cut is not None:
        cut[text] = "\n".join(chunk.lines)
    if read is not None:
        was, snap = read
        if chunk.lines == was.lines and chunk.command == was.command and chunk.taken_at == was.taken_at \
                and chunk.host == was.host:
            d = _plain(snap)            # copied: the Snapshot goes on to the caller
            for fam in ("ipv4", "ipv6", "raw"):
                if d[fam] is not None:
                    d[fam] = dict(d[fam])
            d["counters"] = [dict(c) for c in d["counters"]]
            d["warnings"] = list(d["warnings"])
            return d
    snap = finish(chunk)
    return None if snap is None else _plain(snap)


__all__ = ["Shape", "Shapes", "learn", "read_alone", "split_alone"]
