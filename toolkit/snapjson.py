"""A snapshot's JSON record from its shape's template: byte for byte what
`output.dumps(snap.to_dict())` gives, for a snapshot matched whole by a known shape
(parsers/shapes.py), without encoding its dicts again.

Such a snapshot is its shape's template with other numbers: so is its JSON. The template is
made once per shape by encoding a snapshot the shape builds from sentinel numbers (with
sentinel source, index, time, host and line) and cutting the text at the sentinels: what
lies between them is the shape's constant JSON (its OS, format, counter names, forwarding,
warnings), escaped by output.dumps itself. A record is then those pieces joined with the
fields and the numbers as the snapshot's match gave them (an int's JSON is its digits unless
they start with a 0) between them: a list copy, two slice assignments and a join, all in C
(a %-format of the same parts took twice as long). Only `parse` uses it, where nothing but the host is
changed on a snapshot after it was built; a snapshot not built by a shape (read in full,
or sent back by a --jobs worker: pickling drops its shape) gets None, and output.dumps.
"""
from __future__ import annotations

import json
import re
from operator import itemgetter
from types import SimpleNamespace
from typing import Optional

from toolkit.output import dumps


_GROUP = 7_310_000_000_000_000         # + group index: a sentinel number (16 digits)
_FIELDS = {"source": "mssdiagSENTsource", "taken_at": "mssdiagSENTtaken", "host": "mssdiagSENThost",
           "prompt_host": "mssdiagSENTprompt"}
_INDEX, _LINE = 7_320_000_000_000_001, 7_320_000_000_000_002
_TOKEN = re.compile(r'"(mssdiagSENT[a-z]+)"|(%d|%d)|("?)(7310000000[0-9]{6})("?)' % (_INDEX, _LINE))
_LEADING_0 = re.compile(r"\|0[0-9]")
_templates: dict = {}                  # shape -> (parts, groups in its order, [(group, is_int)]) or None


def line(snap) -> Optional[str]:
    """output.dumps(snap.to_dict()) for a snapshot built by a shape, else None."""
    shaped = snap.__dict__.get("_shape")
    if shaped is None:
        return None
    shape, groups = shaped
    made = _templates.get(shape, False)
    if made is False:
        made = _templates[shape] = _template(shape)
    if made is None:
        return None
    parts, get, slots = made
    out = parts.copy()
    out[1:12:2] = (_text(snap.source), str(snap.index), _text(snap.taken_at), _text(snap.host),
                   _text(snap.prompt_host), str(snap.line))
    if _LEADING_0.search("|" + "|".join(groups)) is None:
        out[13::2] = get(groups)
    else:
        out[13::2] = [str(int(groups[i])) if is_int else groups[i] for i, is_int in slots]
    return "".join(out)


def _text(value) -> str:
    """dumps() of a str or None: the C encoder's own string form where dumps would escape nothing more."""
    if value is None:
        return "null"
    if value.isascii() and "\x7f" not in value:
        return json.dumps(value, ensure_ascii=False)
    return dumps(value)


def _template(shape):
    groups = tuple(str(_GROUP + i) for i in range(shape.rx.groups))
    fake = SimpleNamespace(groups=groups, taken_at=_FIELDS["taken_at"], line=_LINE)
    snap = shape.build(fake, _FIELDS["source"], _INDEX)
    snap.host, snap.prompt_host = _FIELDS["host"], _FIELDS["prompt_host"]
    text = dumps(snap.to_dict())
    order = ["mssdiagSENTsource", _INDEX, "mssdiagSENTtaken", "mssdiagSENThost", "mssdiagSENTprompt", _LINE]
    # parts: the constant text, with a slot between each two pieces (None there): the six
    # fields, then the numbers; a record is the parts with the slots filled, joined
    parts, slots, fields, at = [], [], [], 0
    for m in _TOKEN.finditer(text):
        if m.group(1) is not None or m.group(2) is not None:
            fields.append(m.group(1) or int(m.group(2)))
            if fields != order[:len(fields)]:
                return None         # the fields as to_dict() orders them, each once, or no template
            parts += [text[at:m.start()], None]
        else:
            quoted = m.group(3)
            if quoted != m.group(5) or len(fields) < len(order):
                return None         # a sentinel inside some other string, or before the line: no template
            slots.append((int(m.group(4)) - _GROUP, not quoted))
            parts += [text[at:m.start()] + quoted, None]
            at = m.end() - len(quoted)
            continue
        at = m.end()
    parts.append(text[at:])
    if fields != order:
        return None
    get = itemgetter(*[i for i, _ in slots]) if len(slots) > 1 else \
        (lambda g, i=slots[0][0]: (g[i],)) if slots else (lambda g: ())
    out = parts.copy()
    out[1:12:2] = [_text(v) if isinstance(v, str) else str(v) for v in
                   (snap.source, snap.index, snap.taken_at, snap.host, snap.prompt_host, snap.line)]
    out[13::2] = get(groups)
    if "".join(out) != text:
        return None
    return parts, get, slots
