"""The learning of parsers/shapes.py as main had it (commit adb0bab) before learning was made
cheaper: tests/test_learn_reference.py requires the shapes learnt now to be exactly these.
Kept word for word but for the pattern, compiled here by re.compile itself, for its gaps,
possessive (`.{n}+`) as they are now, and for every counter a snapshot keeps (slots in
`counters` beside those of ipv4, ipv6 and raw)."""
from __future__ import annotations

import json
import re

from parsers.shapes import MAX_DIGITS, Shape, _plain, _DIGITS_B
from parsers.text import (_CAND_COMMAND, _CAND_DATE, _DAMAGE, _VALUE, MAX_LINE, _lead, classify, fast_date,
                          header_kind, never_a_date)

_RUN = re.compile(r"[0-9]+")


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
    prefix_lines = region.count("\n", 0, origin.body - len(head))

    # Which digit runs may vary: those inside counter values, outside the lines that decide
    # where snapshots start, not before a tab.
    runs = [(m.start(), m.end()) for m in _RUN.finditer(region)]
    vary = set()
    checked_line = {}
    at = 0
    first = 0                   # runs[first:] start at or after the line's start
    for n, line in enumerate(region.split("\n")):
        end = at + len(line)
        while first < len(runs) and runs[first][0] < at:
            first += 1
        low = line.lower()
        candidate = _CAND_DATE.search(low) or _CAND_COMMAND.search(low)
        if candidate:
            date, cmd, _ = classify(line, low)
            if date is not None or cmd:
                line = ""
        if line and header_kind(line) is None:
            tab = line.rfind("\t")
            spans = [(at + m.start(), at + m.end()) for m in _VALUE.finditer(line)]
            here = []
            for r in runs[first:]:
                if r[0] >= end:
                    break
                here.append(r)
            mine = [r for r in here if r[0] - at > tab and any(a <= r[0] and r[1] <= b for a, b in spans)]
            if len(line) + sum(MAX_DIGITS - (b - a) for a, b in mine) < MAX_LINE:
                vary.update(mine)
                if candidate and (_CAND_COMMAND.search(low) or not never_a_date(line)):
                    checked_line.update((r, n) for r in mine)
        at = end + 1
    candidates = [i for i, r in enumerate(runs) if r in vary]
    original = [region[a:b] for a, b in runs]

    def substitute(tokens, values) -> str:
        out, last = [], 0
        for i in tokens:
            a, b = runs[i]
            out.append(region[last:a])
            out.append(values[i])
            last = b
        out.append(region[last:])
        return head + "".join(out)

    ran: Dict[str, Optional[dict]] = {}

    def read(text: str) -> Optional[dict]:
        """run(text), once per distinct text (sorting the numbers out comes back to the same ones)."""
        if text not in ran:
            ran[text] = run(text)
        return ran[text]

    want = read(text)
    if want is None or want != _plain(snap) or want["host"] != host or want["prompt_host"] != host:
        return None
    sentinels = {i: str(7_000_000_000_011 + 7919 * i) for i in range(len(runs))}
    others = {i: str(9_000_000_000_017 + 104_729 * i) for i in range(len(runs))}
    zeros = {i: "0" for i in range(len(runs))}
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

    def expected(slots, tokens, values) -> dict:
        out = json.loads(json.dumps(want))
        for (where, name), i in slots.items():
            if i not in tokens:
                continue
            if where == "raw":
                out["raw"][name] = values[i]
            elif where == "counters":
                out["counters"][name]["value"] = int(values[i])
            else:
                out[where][name] = int(values[i])
        return out

    def same(a: Optional[dict], b: dict) -> bool:
        return a is not None and json.dumps(a) == json.dumps(b)

    slots = slots_of(read(substitute(candidates, sentinels)) or {})

    def fine(anything, nonzero=()) -> bool:
        """The numbers `anything` may be any value (sentinels, then zeros), those in `nonzero`
        any but 0 (sentinels, then other sentinels: `forwarded` > 0 makes a router)."""
        tokens = sorted(set(anything) | set(nonzero))
        mixed = {**{i: zeros[i] for i in anything}, **{i: others[i] for i in nonzero}}
        return all(same(read(substitute(tokens, values)), expected(slots, set(tokens), values))
                   for values in (sentinels, mixed))

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
    # In ASCII mode `\d` is [0-9], and `.` is `.{1}+` (the dots of an SNMP OID): the same
    # pattern, but re's parser (Python) takes half the time over it.
    parts, last = [], 0
    for i, (a, b) in enumerate(runs):
        if a > last:
            parts.append("." if a - last == 1 else ".{%d}+" % (a - last))
        if i in varying:
            run_rx = "[1-9]\\d{0,%d}+" % (MAX_DIGITS - 1) if i in nonzero else "\\d{1,%d}+" % MAX_DIGITS
            parts.append("(%s)" % run_rx if i in group_of else run_rx)   # possessive: no backtracking
        else:
            parts.append(original[i])
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
    shape.dated = taken_at is not None
    shape.key = _lead(region, 0)
    shape.lines = region.count("\n")
    shape.checked = tuple(sorted({checked_line[r] for i, r in enumerate(runs) if i in varying and r in checked_line}))
    shape.spec = tuple((i in nonzero, i in group_of) if i in varying else None for i in range(len(runs)))
    shape.cleans = False
    shape.prefix_lines = prefix_lines
    shape.size = len(text) * 2 + 4096
    shape.module, shape.note, shape.sig, shape.forced = module, note, sig, forced
    shape.os, shape.format, shape.host = want["os"], want["format"], host
    shape.command, shape.forwarding, shape.warnings = command, want["forwarding"], tuple(want["warnings"])
    shape.v4, shape.v6, shape.raw = want["ipv4"], want["ipv6"], want["raw"]
    slot_list = sorted(((where, name, group_of[i]) for (where, name), i in slots.items() if i in group_of),
                       key=lambda s: s[2])
    shape.counters = want["counters"]
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
