"""`mssdiag audit reparse`: read stored snapshots again from their raw text with today's parsers.

A snapshot is re-read when the parser version it was read with differs from today's (or
every one with --all). Its time stays what it was (the text may not carry it: fleet file
names, the clock of --local). When any snapshot of a host changed, the host's deltas are
recomputed and its counter events (thresholds, resets) judged again from the start.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional

import parsers
from toolkit.audit import events
from toolkit.audit.config import Config
from toolkit.audit.model import THRESHOLD_EVENTS
from toolkit.audit.store import Store, encoded, parser_version


@dataclass
class Done:
    read: int = 0
    changed: int = 0
    failed: int = 0
    hosts: int = 0


def reparse(store: Store, cfg: Config, everything: bool, hosts: Optional[Iterable[str]],
            error: Callable[[str], None]) -> Done:
    done = Done()
    derived = tuple(THRESHOLD_EVENTS) + ("counter-reset",)
    for hid, name, _ in store.hosts(hosts):
        rows = store.db.execute("SELECT id, os, parser_version, source, counters, format, warnings, forwarding"
                                " FROM snapshots WHERE host_id = ? ORDER BY t, id", (hid,)).fetchall()
        with store.transaction():
            changed = False
            for sid, os_name, version, source, counters, fmt, warnings, forwarding in rows:
                if not everything and version == parser_version(os_name):
                    continue
                done.read += 1
                text = store.text(sid)
                notes = []
                got = list(parsers.iter_parse(text, source=source, prefer=os_name, warn=notes.append))
                if not got:
                    done.failed += 1
                    error(f"{name}: snapshot from {source}: no IP counters in its text any more"
                          + (f" ({notes[0]})" if notes else "") + "; kept as it was")
                    continue
                s = got[0]
                if len(got) > 1:
                    s.warnings.append(f"its text now reads as {len(got)} snapshots; the first one kept")
                new_counters, new_warnings, new_fwd = encoded(s)
                if (new_counters, s.os, s.format, new_warnings, new_fwd) != (counters, os_name, fmt, warnings,
                                                                             forwarding):
                    done.changed += 1
                    changed = True
                store.db.execute("UPDATE snapshots SET counters = ?, os = ?, format = ?, warnings = ?, forwarding = ?,"
                                 " parser_version = ? WHERE id = ?",
                                 (new_counters, s.os, s.format, new_warnings, new_fwd, parser_version(s.os), sid))
            if changed:
                done.hosts += 1
                store.db.execute("DELETE FROM deltas WHERE host_id = ?", (hid,))
                store.refresh_deltas(hid, name, float("-inf"))
                store.db.execute(f"DELETE FROM events WHERE host_id = ? AND type IN ({','.join('?' * len(derived))})",
                                 (hid, *derived))
                store.db.execute("UPDATE hosts SET evaluated_t = NULL WHERE id = ?", (hid,))
                events.judge_deltas(store, hid, cfg.for_host(name), None)
    return done
