"""The audit store: one SQLite file (standard library), WAL mode, a schema version with
migrations, every snapshot's raw text compressed, deltas kept beside the snapshots.

Tables (docs/audit.md shows the full schema):
  runs         one row per `audit run` (tool version, arguments, what it added)
  hosts        one row per host the host model named; `evaluated_t` is how far events went
  dicts/texts  raw snapshot text, zlib-compressed against the host's first text (a netstat
               dump differs from the last one only in its numbers, so most compress to a
               tenth), shared by digest: a text stored once, whatever points at it
  snapshots    host, OS, format, taken_at, collected_at, source, parser version, counters (JSON)
  deltas       per later snapshot: elapsed time, reset/wrap/clock kind, increases summed over
               IPv4 and IPv6 (diff's policy: toolkit/diff.py)
  hourly       per host and hour: the snapshots counted, the deltas rolled up and their rates
               (what `audit report` reads; schema 3, snapshot counts and rates schema 4)
  probes       path MTU / MSS / black hole per target over time (vantage: where it ran from)
  collections  what a fleet index said about a host: ok, failed, unreachable
  events       opened, last seen, cleared; one open event per host, type and key
  findings     the triage rules' findings (their JSON) whenever they change

Idempotent: a snapshot is (host, moment, text digest) and a probe (host, moment, digest);
storing one again does nothing.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import parsers
from parsers.model import ALL, Snapshot
from toolkit.audit.model import COLUMNS, METRIC_COLUMN, METRICS

ENV = "MSSDIAG_STORE"
ZDICT_MAX = 32768
# Boot times of one boot differ by the clock's adjustments and, from `uptime`, by a minute's
# rounding; a later boot time beyond this is a reboot.
BOOT_SLACK_S = 120.0
FAMILIES = ("ipv4", "ipv6")



def encoded(snap: Snapshot) -> Tuple[str, Optional[str], Optional[int]]:
    """A snapshot's counters, warnings and forwarding as the snapshots table stores them
    (reparse compares with these, so both must encode alike)."""
    return (json.dumps({"ipv4": snap.ipv4, "ipv6": snap.ipv6}, separators=(",", ":")),
            json.dumps(snap.warnings) if snap.warnings else None,
            None if snap.forwarding is None else int(snap.forwarding))

class StoreError(RuntimeError):
    """The store cannot be used; the message names the file and the reason."""


def default_path() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "mssdiag", "audit.sqlite")


def resolve(path: Optional[str]) -> str:
    return path or os.environ.get(ENV) or default_path()


# ---------------------------------------------------------------------------- schema

_COUNTER_COLS = ", ".join(f"{c} INTEGER" for c in COLUMNS.values())

# One row per host and hour that has snapshots: how many and the first and last of them;
# of the deltas that have a known increase, the time covered, the increases summed and each
# metric's rate, rounded as the report shows it: sum(increase) * 3600 / sum(elapsed_s). An
# hour without such a delta has elapsed_s 0, intervals 0 and no rates. A delta is its
# snapshot's (same id, host and time).
ROLLUP = ("SELECT s.host_id, CAST(s.t / 3600 AS INTEGER) * 3600 AS h, coalesce(sum(d.elapsed_s), 0) AS elapsed_s,"
          " count(d.snapshot_id) AS intervals, "
          + ", ".join(f"sum(d.{c}) AS {c}" for c in COLUMNS.values())
          + ", count(*) AS snapshots, min(s.t) AS first_t, max(s.t) AS last_t, "
          + ", ".join(f"round(sum(d.{METRIC_COLUMN[m]}) * 3600.0 / sum(d.elapsed_s), 3) AS {m}" for m in METRICS)
          + " FROM snapshots s LEFT JOIN deltas d ON d.snapshot_id = s.id AND d.kind = 'ok' AND d.elapsed_s > 0"
          " WHERE {where} GROUP BY s.host_id, h")
# The roll-up of schema 3 (deltas only), what the schema 4 migration starts from.
_ROLLUP_3 = ("SELECT host_id, CAST(t / 3600 AS INTEGER) * 3600 AS h, sum(elapsed_s) AS elapsed_s, count(*) AS intervals, "
             + ", ".join(f"sum({c}) AS {c}" for c in COLUMNS.values())
             + " FROM deltas WHERE {where} AND kind = 'ok' AND elapsed_s > 0 GROUP BY host_id, h")
HOURLY_COLS = ", ".join(["host_id", "h", "elapsed_s", "intervals", *COLUMNS.values(), "snapshots", "first_t", "last_t",
                         *METRICS])

MIGRATIONS: List[str] = [
    # 0 -> 1
    f"""
    CREATE TABLE runs(id INTEGER PRIMARY KEY, started_t REAL NOT NULL, finished_t REAL, tool TEXT NOT NULL,
        argv TEXT, status TEXT, snapshots INTEGER NOT NULL DEFAULT 0, probes INTEGER NOT NULL DEFAULT 0,
        errors INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE hosts(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE, os TEXT, identity TEXT,
        dict_id INTEGER, first_t REAL, last_t REAL, evaluated_t REAL, probes_evaluated_id INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE dicts(id INTEGER PRIMARY KEY, data BLOB NOT NULL);
    CREATE TABLE texts(id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE, dict_id INTEGER, size INTEGER NOT NULL,
        z BLOB NOT NULL);
    CREATE TABLE snapshots(id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, t REAL NOT NULL, taken_at TEXT NOT NULL,
        time_from TEXT NOT NULL, moment TEXT NOT NULL, collected_t REAL NOT NULL, source TEXT NOT NULL,
        idx INTEGER NOT NULL DEFAULT 0, line INTEGER NOT NULL DEFAULT 0, os TEXT NOT NULL, format TEXT,
        parser_version TEXT NOT NULL, forwarding INTEGER, counters TEXT NOT NULL, warnings TEXT,
        text_id INTEGER NOT NULL, run_id INTEGER, UNIQUE(host_id, moment, text_id));
    CREATE INDEX snapshots_host_t ON snapshots(host_id, t);
    CREATE INDEX snapshots_t ON snapshots(t);
    CREATE TABLE deltas(snapshot_id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, prev_id INTEGER,
        t REAL NOT NULL, elapsed_s REAL, kind TEXT NOT NULL, events TEXT, {_COUNTER_COLS});
    CREATE INDEX deltas_host_t ON deltas(host_id, t);
    CREATE TABLE probes(id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, t REAL NOT NULL, moment TEXT NOT NULL,
        digest BLOB NOT NULL, source TEXT, vantage TEXT, target TEXT NOT NULL, address TEXT, family TEXT,
        pmtu INTEGER, pmtu_method TEXT, black_hole INTEGER, mss_port INTEGER, mss_synack INTEGER,
        mss_used INTEGER, result TEXT NOT NULL, run_id INTEGER, UNIQUE(host_id, moment, digest));
    CREATE INDEX probes_host_target_t ON probes(host_id, target, t);
    CREATE TABLE collections(id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, t REAL NOT NULL,
        status TEXT NOT NULL, command TEXT, rc INTEGER, source TEXT, detail TEXT, run_id INTEGER,
        UNIQUE(host_id, t, status, source));
    CREATE INDEX collections_host_t ON collections(host_id, t);
    CREATE TABLE events(id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, type TEXT NOT NULL,
        key TEXT NOT NULL DEFAULT '', severity TEXT NOT NULL, state TEXT NOT NULL, first_t REAL NOT NULL,
        last_t REAL NOT NULL, cleared_t REAL, count INTEGER NOT NULL DEFAULT 1, value REAL, peak REAL,
        detail TEXT, evidence TEXT, changed_run INTEGER);
    CREATE UNIQUE INDEX events_open ON events(host_id, type, key) WHERE state = 'open';
    CREATE INDEX events_host_t ON events(host_id, first_t);
    CREATE TABLE findings(id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, t REAL NOT NULL, run_id INTEGER,
        digest BLOB NOT NULL, findings TEXT NOT NULL);
    CREATE INDEX findings_host_t ON findings(host_id, t);
    """,
    # 1 -> 2: the host's boot time when the fleet collection gave it (a reboot known, not guessed)
    """
    ALTER TABLE snapshots ADD COLUMN boot_t REAL;
    """,
    # 2 -> 3: the hourly roll-up `audit report` reads (a month of a host is 720 rows, not
    # 2,880 deltas grouped at every report), kept by refresh_deltas and prune; resets indexed,
    # and what a run added (a run's summary no longer scans a month of snapshots).
    f"""
    CREATE TABLE hourly(host_id INTEGER NOT NULL, h INTEGER NOT NULL, elapsed_s REAL NOT NULL,
        intervals INTEGER NOT NULL, {_COUNTER_COLS}, PRIMARY KEY(host_id, h)) WITHOUT ROWID;
    INSERT INTO hourly {_ROLLUP_3.format(where="1")};
    CREATE INDEX deltas_reset ON deltas(host_id, t) WHERE kind = 'reset';
    CREATE INDEX snapshots_run ON snapshots(run_id);
    CREATE INDEX events_changed_run ON events(changed_run);
    """,
    # 3 -> 4: the roll-up counts each hour's snapshots and keeps the first and last of them,
    # so the report never reads the snapshots table (a month of 1,000 hosts is 2.9 million
    # rows); hours with snapshots but no delta with a known increase get a row too; each
    # metric's hourly rate is kept (the report reads 720,000 of them for a month's series).
    f"""
    ALTER TABLE hourly ADD COLUMN snapshots INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE hourly ADD COLUMN first_t REAL;
    ALTER TABLE hourly ADD COLUMN last_t REAL;
    {"; ".join(f"ALTER TABLE hourly ADD COLUMN {m} REAL" for m in METRICS)};
    DELETE FROM hourly;
    INSERT INTO hourly({HOURLY_COLS}) {ROLLUP.format(where="1")};
    """,
    # 4 -> 5: host names compared exactly (BINARY), not without case: `Web9` and `web9` from a
    # fleet inventory are two hosts (names from prompts and file names are matched without
    # case in Store.host_id, as the host model does)
    """
    CREATE TABLE hosts_5(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, os TEXT, identity TEXT,
        dict_id INTEGER, first_t REAL, last_t REAL, evaluated_t REAL, probes_evaluated_id INTEGER NOT NULL DEFAULT 0);
    INSERT INTO hosts_5(id, name, os, identity, dict_id, first_t, last_t, evaluated_t, probes_evaluated_id)
        SELECT id, name, os, identity, dict_id, first_t, last_t, evaluated_t, probes_evaluated_id FROM hosts;
    DROP TABLE hosts;
    ALTER TABLE hosts_5 RENAME TO hosts;
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)
# Identities whose names are DNS names, one host whatever their case (toolkit/hosts.py Builder.host).
FOLDED = ("prompt", "file name", "target")


# ---------------------------------------------------------------------------- helpers

_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: Optional[str]) -> Optional[str]:
    """Text as the store keeps it. SQLite holds UTF-8, and a non-UTF-8 file name (or a host
    name made of one) reaches here with each undecodable byte as a lone surrogate, which
    UTF-8 cannot hold: each becomes `\\xNN`, the byte it stands for (`h\\xf4te1--...txt`),
    so the name is kept, readable, the same at every run."""
    if text is None or text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}" if 0xDC80 <= ord(m.group()) <= 0xDCFF
                          else f"\\u{ord(m.group()):04x}", text)


def iso(t: Optional[float]) -> Optional[str]:
    """Epoch seconds as ISO 8601 UTC (`2026-03-03T09:15:00Z`)."""
    if t is None:
        return None
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def epoch(text: str) -> float:
    """An ISO 8601 time as epoch seconds; a time without a zone is taken as UTC (as hosts.when)."""
    t = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.timestamp()


_VERSIONS: Dict[str, str] = {}
_SHARED = ("__init__.py", "base.py", "model.py", "text.py", "bsdstyle.py")


def parser_version(os_name: str) -> str:
    """`<os>-<12 hex>`: a digest of the parser module and the shared parser code, so any
    change to how a format is read gives a new version (what `audit reparse` looks for)."""
    v = _VERSIONS.get(os_name)
    if v is None:
        module = parsers.REGISTRY.get(os_name)
        h = hashlib.blake2b(digest_size=6)
        folder = os.path.dirname(parsers.__file__)
        files = [os.path.join(folder, n) for n in _SHARED]
        if module is not None and getattr(module, "__file__", None):
            files.append(module.__file__)
        for f in files:
            try:
                with open(f, "rb") as fh:
                    h.update(fh.read())
            except OSError:
                pass
        v = _VERSIONS[os_name] = f"{os_name}-{h.hexdigest()}"
    return v


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _sum(snapshot_delta, column_name: str) -> Optional[int]:
    total, known = 0, False
    for fam in FAMILIES:
        values = getattr(snapshot_delta, fam)
        if values is None:
            continue
        v = values.get(column_name)
        if v is not None:
            total += v
            known = True
    return total if known else None


@dataclass
class DeltaRow:
    snapshot_id: int
    host_id: int
    prev_id: int
    t: float
    elapsed_s: Optional[float]
    kind: str                               # ok | reset | clock | undated
    events: List[dict]
    increases: Dict[str, Optional[int]]     # column -> increase (IPv4 + IPv6), None unknown

    def per_hour(self, column: str) -> Optional[float]:
        v = self.increases.get(column)
        if v is None or not self.elapsed_s or self.elapsed_s <= 0 or self.kind not in ("ok",):
            return None
        return v * 3600.0 / self.elapsed_s


# ---------------------------------------------------------------------------- the store

class Store:
    def __init__(self, path: str, create: bool = True, timeout: float = 30.0, readonly: bool = False):
        """The store at `path`, made when missing (`create`). `readonly` (reports): opened
        read-only, so a store in a read-only file or directory can still be read (a store
        of an older schema is upgraded first where it can be written)."""
        self.path = path
        self._dicts: Dict[int, bytes] = {}
        self._host_dicts: Dict[int, int] = {}
        if not create and not os.path.exists(path):
            raise StoreError(f"{path}: no audit store here (run `mssdiag audit run` first, or give --store)")
        if create:
            folder = os.path.dirname(os.path.abspath(path))
            try:
                os.makedirs(folder, mode=0o700, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{folder}: cannot create: {exc.strerror or exc}") from None
        try:
            if readonly:
                self.db = self._reader(timeout)
                version = self.schema_version()
                if version == 0:
                    raise StoreError(f"{path}: not an audit store (an SQLite file without mssdiag's schema)")
                if version >= SCHEMA_VERSION:
                    self._migrate()         # the current schema: nothing to do; a newer one: refused
                    return
                self.db.close()
                try:
                    self._writer(timeout)
                except (sqlite3.DatabaseError, OSError) as exc:
                    raise StoreError(f"{path}: written by an older mssdiag (schema {version}) and it cannot be "
                                     f"upgraded here ({getattr(exc, 'strerror', None) or exc}): run `mssdiag audit "
                                     "run` where it can be written") from None
                return
            self._writer(timeout)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a usable audit store: {exc}") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot open: {exc.strerror or exc}") from None

    def _writer(self, timeout: float) -> None:
        self.db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        self.db.execute("PRAGMA busy_timeout = %d" % int(timeout * 1000))
        mode = self.db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise StoreError(f"{self.path}: cannot switch the store to WAL mode (journal mode {mode})")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self._migrate()

    def _reader(self, timeout: float) -> sqlite3.Connection:
        """The store read-only (`mode=ro`: a run may write meanwhile, WAL). Where even that
        cannot open it (a read-only directory without the WAL's shared-memory file, which a
        reader must create), as an immutable file: SQLite then reads it without any lock."""
        from urllib.parse import quote
        uri = "file:" + quote(os.fsencode(os.path.abspath(self.path)))
        for flags in ("?mode=ro", "?mode=ro&immutable=1"):
            db = sqlite3.connect(uri + flags, uri=True, timeout=timeout, isolation_level=None)
            try:
                db.execute("PRAGMA busy_timeout = %d" % int(timeout * 1000))
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return db
            except sqlite3.OperationalError:
                db.close()
                if "immutable" in flags:
                    raise
        raise AssertionError("unreachable")

    def check(self) -> None:
        """SQLite's own check of every page and b-tree (`PRAGMA quick_check`: integrity_check
        but for the index entries against their rows, in linear time -- about 1.5 CPU s for a
        month of 1,000 hosts, where integrity_check takes 6): a damaged store is refused
        (StoreError naming the first problem SQLite found), never reported from."""
        try:
            rows = self.db.execute("PRAGMA quick_check(3)").fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: damaged ({exc}); restore it from a backup or start a new one") from None
        problems = [line for r in rows if r[0] != "ok" for line in str(r[0]).splitlines()
                    if line.strip() and not line.startswith("***")]      # "*** in database main ***"
        if problems:
            raise StoreError(f"{self.path}: damaged: {problems[0]}" + (" (and more)" if len(problems) > 1 else "")
                             + "; restore it from a backup or start a new one")

    def close(self) -> None:
        try:
            self.db.close()
        except sqlite3.Error:
            pass

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: written by a newer mssdiag (schema {version}; this one knows "
                             f"up to {SCHEMA_VERSION}): upgrade mssdiag")
        if version == SCHEMA_VERSION:
            return
        if version == 0:
            tables = self.db.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
            if tables:
                raise StoreError(f"{self.path}: an SQLite file that is not an audit store (schema 0 with tables)")
        self.db.execute("BEGIN IMMEDIATE")
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]   # another process may have won
            for step in range(version, SCHEMA_VERSION):
                for statement in _statements(MIGRATIONS[step]):
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {step + 1}")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def schema_version(self) -> int:
        return self.db.execute("PRAGMA user_version").fetchone()[0]

    # -- transactions

    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        self._forget()
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    @contextmanager
    def savepoint(self):
        """Inside a transaction: what the block did is undone if it raises (one host's data
        that cannot be stored costs that host, not the batch)."""
        self.db.execute("SAVEPOINT one")
        try:
            yield self
        except BaseException:
            self._forget()
            self.db.execute("ROLLBACK TO one")
            self.db.execute("RELEASE one")
            raise
        self.db.execute("RELEASE one")

    def _forget(self) -> None:
        """Drop the dictionaries cached: an undone insert's id may be given to another one."""
        self._dicts.clear()
        self._host_dicts.clear()

    @contextmanager
    def transaction(self):
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception (a timeout, ^C)."""
        self.begin()
        try:
            yield self
        except BaseException:
            self.rollback()
            raise
        self.commit()

    # -- runs

    def begin_run(self, tool: str, argv: Sequence[str], now: float) -> int:
        cur = self.db.execute("INSERT INTO runs(started_t, tool, argv, status) VALUES (?, ?, ?, 'running')",
                              (now, tool, json.dumps(list(argv))))
        return cur.lastrowid

    def end_run(self, run_id: int, status: str, snapshots: int, probes: int, errors: int, now: float) -> None:
        self.db.execute("UPDATE runs SET finished_t=?, status=?, snapshots=?, probes=?, errors=? WHERE id=?",
                        (now, status, snapshots, probes, errors, run_id))

    def last_success(self) -> Optional[float]:
        row = self.db.execute("SELECT max(finished_t) FROM runs WHERE status='ok'").fetchone()
        return row[0]

    # -- hosts

    def host_id(self, name: str, os_name: Optional[str] = None, identity: Optional[str] = None) -> int:
        """The host's id, made when new. A name is matched exactly; a name the host model read
        from a prompt or a file name (a DNS name) also matches such a host stored with
        another case, as within one run."""
        name = storable(name)
        row = self.db.execute("SELECT id, os, identity FROM hosts WHERE name = ?", (name,)).fetchone()
        if row is None and identity in FOLDED:
            row = self.db.execute(f"SELECT id, os, identity FROM hosts WHERE name = ? COLLATE NOCASE AND identity IN"
                                  f" ({','.join('?' * len(FOLDED))}) ORDER BY id LIMIT 1", (name, *FOLDED)).fetchone()
        if row is None:
            return self.db.execute("INSERT INTO hosts(name, os, identity) VALUES (?, ?, ?)",
                                   (name, os_name, identity)).lastrowid
        if (os_name and os_name != row[1]) or (identity and identity != row[2]):
            self.db.execute("UPDATE hosts SET os = coalesce(?, os), identity = coalesce(?, identity) WHERE id = ?",
                            (os_name, identity, row[0]))
        return row[0]

    def hosts(self, names: Optional[Iterable[str]] = None) -> List[Tuple[int, str, Optional[str]]]:
        rows = self.db.execute("SELECT id, name, os FROM hosts ORDER BY name COLLATE NOCASE, name").fetchall()
        if names is None:
            return rows
        # a name given matches that host exactly, or, when none is spelt so, every host that
        # differs only in case (--host web1 finds WEB1)
        have = {r[1] for r in rows}
        exact = {n for n in names if n in have}
        folded = {n.lower() for n in names if n not in have}
        return [r for r in rows if r[1] in exact or r[1].lower() in folded]

    # -- texts

    def _dict(self, dict_id: Optional[int]) -> bytes:
        if not dict_id:
            return b""
        d = self._dicts.get(dict_id)
        if d is None:
            d = self._dicts[dict_id] = self.db.execute("SELECT data FROM dicts WHERE id=?", (dict_id,)).fetchone()[0]
        return d

    def _text_id(self, host_id: int, data: bytes) -> int:
        key = digest(data)
        row = self.db.execute("SELECT id FROM texts WHERE digest = ?", (key,)).fetchone()
        if row:
            return row[0]
        dict_id = self._host_dicts.get(host_id)          # once set, a host's dictionary never changes
        if dict_id is None:
            dict_id = self.db.execute("SELECT dict_id FROM hosts WHERE id = ?", (host_id,)).fetchone()[0]
        if dict_id is None:
            dict_id = self.db.execute("INSERT INTO dicts(data) VALUES (?)", (data[-ZDICT_MAX:],)).lastrowid
            self.db.execute("UPDATE hosts SET dict_id = ? WHERE id = ?", (dict_id, host_id))
        else:
            self._host_dicts[host_id] = dict_id
        zdict = self._dict(dict_id)
        c = zlib.compressobj(6, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, zdict) if zdict else zlib.compressobj(6)
        z = c.compress(data) + c.flush()
        return self.db.execute("INSERT INTO texts(digest, dict_id, size, z) VALUES (?, ?, ?, ?)",
                               (key, dict_id, len(data), z)).lastrowid

    def text(self, snapshot_id: int) -> str:
        row = self.db.execute("SELECT x.dict_id, x.z FROM snapshots s JOIN texts x ON x.id = s.text_id "
                              "WHERE s.id = ?", (snapshot_id,)).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: no snapshot {snapshot_id}")
        zdict = self._dict(row[0])
        d = zlib.decompressobj(zdict=zdict) if zdict else zlib.decompressobj()
        return (d.decompress(row[1]) + d.flush()).decode("utf-8")

    # -- snapshots

    def add_snapshot(self, host_id: int, snap: Snapshot, text: str, t: float, time_from: str, moment: str,
                     collected_t: float, run_id: Optional[int], boot_t: Optional[float] = None) -> Optional[int]:
        """The new snapshot's id, or None when this host already has it (same moment, same text)."""
        text_id = self._text_id(host_id, text.encode("utf-8"))
        counters, warnings, forwarding = encoded(snap)
        cur = self.db.execute(
            "INSERT OR IGNORE INTO snapshots(host_id, t, taken_at, time_from, moment, collected_t, source, idx, line,"
            " os, format, parser_version, forwarding, counters, warnings, text_id, run_id, boot_t)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (host_id, t, snap.taken_at, time_from, moment, collected_t, storable(snap.source), snap.index, snap.line,
             snap.os, snap.format, parser_version(snap.os), forwarding, counters, warnings, text_id, run_id, boot_t))
        if not cur.rowcount:
            return None
        self.db.execute("UPDATE hosts SET first_t = min(coalesce(first_t, ?), ?), last_t = max(coalesce(last_t, ?), ?)"
                        " WHERE id = ?", (t, t, t, t, host_id))
        return cur.lastrowid

    _SNAP_COLS = "id, source, idx, os, format, taken_at, counters, warnings, line, forwarding, t, boot_t"

    def _snapshot(self, row, host: str) -> Snapshot:
        counters = json.loads(row[6])
        s = Snapshot(source=row[1], index=row[2], os=row[3], format=row[4] or "", taken_at=row[5], host=host,
                     ipv4=counters.get("ipv4"), ipv6=counters.get("ipv6"), raw={},
                     warnings=json.loads(row[7]) if row[7] else [], line=row[8],
                     forwarding=None if row[9] is None else bool(row[9]))
        s.audit_id, s.audit_t, s.audit_boot_t = row[0], row[10], row[11]
        return s

    def history(self, host_id: int, host: str, since_t: Optional[float] = None,
                limit: Optional[int] = None) -> List[Snapshot]:
        """A host's stored snapshots in time order (the latest `limit` when given)."""
        if limit:
            rows = self.db.execute(f"SELECT {self._SNAP_COLS} FROM snapshots WHERE host_id=? AND t >= ?"
                                   " ORDER BY t DESC, id DESC LIMIT ?",
                                   (host_id, since_t if since_t is not None else -math.inf, limit)).fetchall()
            rows.reverse()
        else:
            rows = self.db.execute(f"SELECT {self._SNAP_COLS} FROM snapshots WHERE host_id=? AND t >= ?"
                                   " ORDER BY t, id",
                                   (host_id, since_t if since_t is not None else -math.inf)).fetchall()
        return [self._snapshot(r, host) for r in rows]

    def latest_snapshot(self, host_id: int, host: str) -> Optional[Snapshot]:
        got = self.history(host_id, host, limit=1)
        return got[0] if got else None

    def refresh_deltas(self, host_id: int, host: str, from_t: float) -> int:
        """Recompute the deltas of every snapshot at or after `from_t` (and the one after the
        last snapshot before it) the way `diff` pairs them; returns how many were written."""
        from toolkit import diff, hosts as model
        before = self.db.execute(f"SELECT {self._SNAP_COLS} FROM snapshots WHERE host_id=? AND t < ?"
                                 " ORDER BY t DESC, id DESC LIMIT 1", (host_id, from_t)).fetchone()
        snaps = ([self._snapshot(before, host)] if before else []) + self.history(host_id, host, from_t)
        ordered = model.order(snaps)
        rows = []
        for a, b in model.pairs(ordered):
            d = diff.pair(a, b, parsers.REGISTRY.get(b.os), host)
            if a.audit_boot_t is not None and b.audit_boot_t is not None and \
                    b.audit_boot_t - a.audit_boot_t > BOOT_SLACK_S:
                _rebooted(d, b.audit_boot_t)
            kind = "ok"
            types = {e["type"] for e in d.events}
            if "reset" in types:
                kind = "reset"
            elif "clock" in types:
                kind = "clock"
            elif d.elapsed_s is None:
                kind = "undated"
            rows.append((b.audit_id, host_id, a.audit_id, b.audit_t, d.elapsed_s, kind,
                         json.dumps(d.events, separators=(",", ":")) if d.events else None,
                         *[_sum(d, name) for name in ALL]))
        self.db.executemany(f"INSERT OR REPLACE INTO deltas VALUES ({','.join('?' * (7 + len(ALL)))})", rows)
        self.rollup(host_id, from_t)
        return len(rows)

    def rollup(self, host_id: int, from_t: float) -> None:
        """Recompute the host's hourly rows from the hour holding `from_t` on."""
        h0 = math.floor(from_t / 3600) * 3600 if math.isfinite(from_t) else from_t
        self.db.execute("DELETE FROM hourly WHERE host_id = ? AND h >= ?", (host_id, h0))
        self.db.execute(f"INSERT INTO hourly({HOURLY_COLS}) " + ROLLUP.format(where="s.host_id = ? AND s.t >= ?"),
                        (host_id, h0))

    def deltas(self, host_id: int, after_t: Optional[float] = None, since_t: Optional[float] = None) -> List[DeltaRow]:
        """A host's deltas in time order: after `after_t` (exclusive) or since `since_t` (inclusive)."""
        cols = ", ".join(COLUMNS.values())
        if after_t is not None:
            cond, arg = "t > ?", after_t
        else:
            cond, arg = "t >= ?", since_t if since_t is not None else -math.inf
        rows = self.db.execute(f"SELECT snapshot_id, host_id, prev_id, t, elapsed_s, kind, events, {cols} FROM deltas"
                               f" WHERE host_id = ? AND {cond} ORDER BY t, snapshot_id", (host_id, arg)).fetchall()
        names = list(COLUMNS.values())
        return [DeltaRow(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]) if r[6] else [],
                         dict(zip(names, r[7:]))) for r in rows]

    # -- probes and collections

    def add_probe(self, host_id: int, result, t: float, moment: str, source: str, vantage: Optional[str],
                  run_id: Optional[int]) -> Optional[int]:
        data = result.to_dict()
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        mss = data.get("mss") or {}
        cur = self.db.execute(
            "INSERT OR IGNORE INTO probes(host_id, t, moment, digest, source, vantage, target, address, family, pmtu,"
            " pmtu_method, black_hole, mss_port, mss_synack, mss_used, result, run_id)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            # the same result seen from two vantages at one moment is two probes
            (host_id, t, moment, digest(text.encode() if vantage is None else f"{vantage}\0{text}".encode("utf-8",
                                                                                             "surrogatepass")),
             storable(source), storable(vantage), storable(result.target),
             storable(result.address),
             result.family, result.pmtu, result.pmtu_method, int(bool(result.black_hole)), mss.get("port"),
             mss.get("synack"), mss.get("used"), text, run_id))
        return cur.lastrowid if cur.rowcount else None

    def add_collection(self, host_id: int, t: float, status: str, command: Optional[str], rc: Optional[int],
                       source: str, detail: Optional[str], run_id: Optional[int]) -> bool:
        cur = self.db.execute("INSERT OR IGNORE INTO collections(host_id, t, status, command, rc, source, detail, run_id)"
                              " VALUES (?,?,?,?,?,?,?,?)", (host_id, t, status, storable(command), rc, storable(source),
                                                            storable(detail), run_id))
        return bool(cur.rowcount)

    # -- retention

    def prune(self, cutoff_t: float) -> Dict[str, int]:
        """Forget history before `cutoff_t`, keeping each host's latest snapshot (the baseline of
        the next delta), each target's latest probe, open events and the latest findings."""
        out = {}
        db = self.db
        keep_snap = "SELECT max(id) FROM snapshots GROUP BY host_id"
        out["snapshots"] = db.execute(f"DELETE FROM snapshots WHERE t < ? AND id NOT IN ({keep_snap})",
                                      (cutoff_t,)).rowcount
        out["deltas"] = db.execute("DELETE FROM deltas WHERE snapshot_id NOT IN (SELECT id FROM snapshots)").rowcount
        if out["snapshots"] or out["deltas"]:
            end = math.floor(cutoff_t / 3600) * 3600 + 3600       # hours that may have lost snapshots
            db.execute("DELETE FROM hourly WHERE h < ?", (end,))
            db.execute(f"INSERT INTO hourly({HOURLY_COLS}) " + ROLLUP.format(where="s.t < ?"), (end,))
        out["texts"] = db.execute("DELETE FROM texts WHERE id NOT IN (SELECT text_id FROM snapshots)").rowcount
        out["probes"] = db.execute("DELETE FROM probes WHERE t < ? AND id NOT IN "
                                   "(SELECT max(id) FROM probes GROUP BY host_id, target)", (cutoff_t,)).rowcount
        out["collections"] = db.execute("DELETE FROM collections WHERE t < ? AND id NOT IN "
                                        "(SELECT max(id) FROM collections GROUP BY host_id)", (cutoff_t,)).rowcount
        out["events"] = db.execute("DELETE FROM events WHERE state = 'cleared' AND cleared_t < ?",
                                   (cutoff_t,)).rowcount
        out["findings"] = db.execute("DELETE FROM findings WHERE t < ? AND id NOT IN "
                                     "(SELECT max(id) FROM findings GROUP BY host_id)", (cutoff_t,)).rowcount
        out["runs"] = db.execute("DELETE FROM runs WHERE started_t < ? AND id NOT IN "
                                 "(SELECT max(id) FROM runs WHERE status = 'ok')", (cutoff_t,)).rowcount
        return out


def _rebooted(d, boot_t: float) -> None:
    """The host booted between the two snapshots (its boot time says so): whatever the counters
    did, the increases of the interval are unknown, and a drop was no 32-bit wrap."""
    d.events = [{"type": "reset", "boot": iso(boot_t)}] + [e for e in d.events if e["type"] != "wrap"]
    d.ipv4 = None if d.ipv4 is None else dict.fromkeys(d.ipv4)
    d.ipv6 = None if d.ipv6 is None else dict.fromkeys(d.ipv6)


def _statements(script: str) -> List[str]:
    """A migration script's statements (no semicolons inside them), run one by one inside
    the migration's transaction (executescript would commit on its own)."""
    return [s.strip() for s in script.split(";") if s.strip()]
