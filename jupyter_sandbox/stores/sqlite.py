"""The store: runs, their journals, attempts and signals in one SQLite file.

All SQL lives here. Every write is one ``BEGIN IMMEDIATE`` transaction, so a
killed process leaves either all of a write or none of it; sqlite3 errors are
mapped to ``StoreError`` at this module's edge. Leases and fencing follow
common.py: every journal write checks the attempt (the epoch) in its statement.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import cbor2

from ..errors import RunBusyError, RunNotFound, RunStateError, StoreError
from .base import OWNER, SCHEMA_VERSION, RunRow
from .common import ACTIVE as _ACTIVE
from .common import BLOBS as _BLOBS
from .common import COLUMNS as _COLUMNS
from .common import Heartbeat, lease_held, lease_lost, lease_seconds, run_from_values
from .rows import Entry, decode_journal, decode_value

__all__ = ["SQLiteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    name TEXT,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    source TEXT,
    source_hash TEXT,
    input BLOB,
    output BLOB,
    error BLOB,
    parent TEXT,
    predecessor TEXT,
    successor TEXT,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    wake_at REAL,
    options BLOB,
    lease_until REAL
);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, wake_at);
CREATE INDEX IF NOT EXISTS runs_by_parent ON runs (parent);
CREATE TABLE IF NOT EXISTS run_journal (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS run_attempts (
    run_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    source_hash TEXT,
    started REAL NOT NULL,
    ended REAL,
    outcome TEXT,
    replayed INTEGER,
    first_seq INTEGER NOT NULL,
    PRIMARY KEY (run_id, n)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS signals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    event BLOB NOT NULL,
    created REAL NOT NULL,
    delivered_seq INTEGER
);
CREATE INDEX IF NOT EXISTS signals_pending ON signals (run_id, delivered_seq);
"""

# An append is refused when the run's row says another attempt holds it, or that it is not running; an
# entry for a run this store does not have (a check's scratch store) is written as before.
_FENCE = (
    "(EXISTS (SELECT 1 FROM runs WHERE id = ? AND attempt = ? AND status = 'running') "
    "OR NOT EXISTS (SELECT 1 FROM runs WHERE id = ?))"
)
_MIGRATIONS = {1: ["ALTER TABLE runs ADD COLUMN lease_until REAL"]}  # from version -> statements to the next


# Due: a parked top-level run whose wake time came, not reserved by another worker; or a running one
# whose lease expired. Placeholders: the engine's now (ms), then the store's now (s), this owner, now.
_DUE = (
    "parent IS NULL AND ((status = 'parked' AND wake_at IS NOT NULL AND wake_at <= ? AND (lease_until IS NULL "
    "OR lease_until <= ? OR owner = ?)) OR (status = 'running' AND lease_until <= ?))"
)


def _due_order(rows: list[tuple[Any, ...]]) -> list[str]:
    """Parked runs by wake time, then stalled ones (RETURNING has no order of its own)."""
    return [r[0] for r in sorted(rows, key=lambda r: (r[1] != "parked", r[2] or 0.0, r[3] or 0.0))]


def _row_to_run(row: tuple[Any, ...]) -> RunRow:
    return run_from_values(dict(zip(_COLUMNS, row, strict=False)), time.time())


class SQLiteStore:
    """Runs and journals in SQLite (WAL): the ``Store`` contract (base.py). ``path`` may be ``":memory:"``."""

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *, lease: float | None = None):
        self.path = str(path)
        self._lock = threading.RLock()
        self.lease_seconds = lease_seconds(lease)
        self._heartbeat = Heartbeat(self._renew, self.lease_seconds)
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for the run store {self.path}: {exc}", path=self.path) from exc
        try:
            # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so the write
            # lock is taken up front and two writers never deadlock on an upgrade.
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
            self._db.execute("PRAGMA busy_timeout = 10000")  # other processes share the file
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode = WAL")  # readers never block the writer
            # NORMAL in WAL survives a killed process (not a power cut) at ~20 µs a commit;
            # FULL adds an fsync per commit. See README "Durability".
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._tx():
                self._migrate()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise StoreError(f"{self.path} is not a usable run store: {exc}", path=self.path) from exc

    def _migrate(self) -> None:
        """Create the tables, or bring an older store's up to this version (one transaction; the write lock)."""
        fresh = self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is None
        row = None if fresh else self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None and not str(row[0]).isdigit():
            raise StoreError(f"{self.path} has a damaged schema version {row[0]!r}", path=self.path)
        version = int(row[0]) if row is not None else SCHEMA_VERSION
        if row is not None and version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer jupyter_sandbox (schema {row[0]}, "
                f"this version reads {SCHEMA_VERSION}); upgrade jupyter_sandbox",
                path=self.path,
            )
        for step in range(version, SCHEMA_VERSION):
            for statement in _MIGRATIONS[step]:
                self._db.execute(statement)
        for statement in _SCHEMA.split(";"):  # executescript would COMMIT our transaction
            if statement.strip():
                self._db.execute(statement)
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def close(self) -> None:
        self._heartbeat.stop()
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.DatabaseError as exc:
                raise self._mapped(exc) from exc
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as exc:
                if self._db.in_transaction:  # SQLite rolls back by itself on some errors (disk full)
                    self._db.execute("ROLLBACK")
                if isinstance(exc, (sqlite3.DatabaseError, UnicodeDecodeError)):  # damaged TEXT decodes badly
                    raise self._mapped(exc) from exc
                raise

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # a damaged TEXT column decodes badly
                raise self._mapped(exc) from exc

    def _mapped(self, exc: Exception) -> StoreError:
        return StoreError(f"the run store {self.path} failed: {exc}", path=self.path)

    # -- runs --------------------------------------------------------------------

    def create_run(self, run: RunRow) -> RunRow:
        now = time.time()
        run.created = run.created or now
        run.updated = now
        with self._tx() as db:
            self._insert_run(db, run)
        return run

    def _insert_run(self, db: sqlite3.Connection, run: RunRow) -> None:
        values = [getattr(run, c) for c in _COLUMNS]
        for i, column in enumerate(_COLUMNS):
            if column in _BLOBS:
                values[i] = cbor2.dumps(values[i]) if values[i] is not None else None
        try:
            db.execute(f"INSERT INTO runs ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})", values)
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"a run {run.id} already exists in {self.path}", path=self.path) from exc

    def get_run(self, run_id: str) -> RunRow:
        rows = self._read(f"SELECT {', '.join(_COLUMNS)} FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise RunNotFound(run_id)
        return _row_to_run(rows[0])

    def list_runs(self, *, status: str | None = None, top_level: bool = False, limit: int = 200) -> list[RunRow]:
        where, args = [], []
        if status:
            where.append("status = ?")
            args.append(status)
        if top_level:
            where.append("parent IS NULL")
        sql = f"SELECT {', '.join(_COLUMNS)} FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created DESC LIMIT ?"
        return [_row_to_run(r) for r in self._read(sql, (*args, limit))]

    def due_runs(self, now_ms: float, limit: int = 100) -> list[str]:
        """Parked runs due at ``now_ms``, then running ones whose lease expired, reserved for this process.

        The reservation (owner and lease on the row) makes other workers pass these runs by for one
        lease, so N schedulers share the due runs instead of all racing for each (the claim still decides).
        """
        now = time.time()
        if not self._read(f"SELECT 1 FROM runs WHERE {_DUE} LIMIT 1", (now_ms, now, OWNER, now)):
            return []  # the usual tick: nothing due, and no write lock taken to find that out
        with self._tx() as db:
            rows = db.execute(
                f"UPDATE runs SET owner = ?, lease_until = ? WHERE id IN (SELECT id FROM runs WHERE "
                f"{_DUE} ORDER BY wake_at LIMIT ?) RETURNING id, status, wake_at, lease_until",
                (OWNER, now + self.lease_seconds, now_ms, now, OWNER, now, limit),
            ).fetchall()
        return _due_order(rows)

    def change_counter(self) -> int:
        """Other connections' commits (``data_version``) plus the rows this one changed: grows with any change."""
        with self._lock:
            return int(self._db.execute("PRAGMA data_version").fetchone()[0]) + self._db.total_changes

    def children(self, run_id: str) -> list[str]:
        return [r[0] for r in self._read("SELECT id FROM runs WHERE parent = ? ORDER BY created", (run_id,))]

    def update_run(self, run_id: str, **fields: Any) -> None:
        with self._tx() as db:
            self._update(db, run_id, fields)

    def _update(self, db: sqlite3.Connection, run_id: str, fields: dict[str, Any]) -> None:
        fields["updated"] = time.time()
        sets = ", ".join(f"{k} = ?" for k in fields)
        values = [cbor2.dumps(v) if k in _BLOBS and v is not None else v for k, v in fields.items()]
        db.execute(f"UPDATE runs SET {sets} WHERE id = ?", (*values, run_id))

    # -- attempts: the compare-and-set that lets exactly one resume proceed --------

    def claim(self, run_id: str, allowed: tuple[str, ...], *, source_hash: str, force: bool = False) -> int:
        """Take the run for a new attempt; return its number. Exactly one concurrent claim wins."""
        with self._tx() as db:
            row = db.execute("SELECT status, owner, attempt, lease_until FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise RunNotFound(run_id)
            status, owner, until = row[0], row[1], row[3]
            attempt = cast(int, row[2])
            now = time.time()
            stale = status == "running" and (force or not lease_held(owner, until, now, run_id))
            if status not in allowed and not stale:
                if status == "running":
                    raise RunBusyError(
                        f"run {run_id} is already being resumed (by {owner}); wait for that to finish",
                        run_id=run_id,
                        status=status,
                    )
                raise RunStateError(
                    f"run {run_id} is {status}; only a run that is {' or '.join(allowed)} can be resumed",
                    run_id=run_id,
                    status=status,
                )
            attempt += 1
            first_seq = db.execute(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM run_journal WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
            self._update(
                db,
                run_id,
                {
                    "status": "running",
                    "owner": OWNER,
                    "attempt": attempt,
                    "wake_at": None,
                    "lease_until": now + self.lease_seconds,
                },
            )
            db.execute(
                "INSERT OR REPLACE INTO run_attempts (run_id, n, source_hash, started, first_seq) "
                "VALUES (?, ?, ?, ?, ?)",
                (run_id, attempt, source_hash, now, first_seq),
            )
        _ACTIVE.add(run_id)  # only once the claim committed: a failed claim leaves nothing held
        self._heartbeat.hold(run_id, attempt)
        return attempt

    def release(self, run_id: str) -> None:
        _ACTIVE.discard(run_id)
        self._heartbeat.drop(run_id)

    def _renew(self, run_id: str, epoch: int) -> bool:
        """Extend the lease attempt ``epoch`` holds; False once another attempt holds the run."""
        with self._tx() as db:
            cur = db.execute(
                "UPDATE runs SET lease_until = ? WHERE id = ? AND attempt = ? AND status = 'running'",
                (time.time() + self.lease_seconds, run_id, epoch),
            )
            return cur.rowcount == 1

    def _refused(self, db: sqlite3.Connection, run_id: str, epoch: int) -> RunBusyError:
        return lease_lost(
            run_id, epoch, db.execute("SELECT status, attempt, owner FROM runs WHERE id = ?", (run_id,)).fetchone()
        )

    def finish_attempt(
        self,
        run_id: str,
        attempt: int,
        status: str,
        entries: list[tuple[Entry, bytes]],
        *,
        replayed: int,
        **fields: Any,
    ) -> None:
        """Write the attempt's last entries and the run's new status in one transaction."""
        try:
            with self._tx() as db:
                self._fence(db, run_id, attempt)  # only the attempt that holds the run may end it
                self._insert_entries(db, run_id, entries, fenced=False)
                self._update(db, run_id, {"status": status, "lease_until": None, **fields})
                db.execute(
                    "UPDATE run_attempts SET ended = ?, outcome = ?, replayed = ? WHERE run_id = ? AND n = ?",
                    (time.time(), status, replayed, run_id, attempt),
                )
        finally:
            # Even when the write failed (disk full), this process no longer runs it: the
            # next resume may take it over instead of finding it "already being resumed".
            self.release(run_id)

    def attempts(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT n, source_hash, started, ended, outcome, replayed, first_seq FROM run_attempts "
            "WHERE run_id = ? ORDER BY n",
            (run_id,),
        )
        keys = ("n", "source_hash", "started", "ended", "outcome", "replayed", "first_seq")
        return [dict(zip(keys, r, strict=False)) for r in rows]

    # -- the journal ---------------------------------------------------------------

    def entries(self, run_id: str) -> list[Entry]:
        rows = self._read("SELECT seq, body FROM run_journal WHERE run_id = ? ORDER BY seq", (run_id,))
        return decode_journal(run_id, rows)

    def journal_bytes(self, run_id: str) -> int:
        rows = self._read("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM run_journal WHERE run_id = ?", (run_id,))
        return cast(int, rows[0][0])

    def append(self, run_id: str, entries: list[tuple[Entry, bytes]]) -> None:
        """Commit entries, fenced: refused (``RunBusyError``) once their attempt no longer holds the run."""
        if len(entries) == 1:  # one autocommitting INSERT: as atomic, a third of the statements
            entry, blob = entries[0]
            with self._lock:
                try:
                    cur = self._db.execute(
                        f"INSERT INTO run_journal (run_id, seq, kind, body) SELECT ?, ?, ?, ? WHERE {_FENCE}",
                        (run_id, entry.seq, entry.kind, blob, run_id, entry.attempt, run_id),
                    )
                    if cur.rowcount == 0:
                        raise self._refused(self._db, run_id, entry.attempt)
                except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                    raise self._mapped(exc) from exc
        elif entries:
            with self._tx() as db:
                self._insert_entries(db, run_id, entries)

    def _fence(self, db: sqlite3.Connection, run_id: str, epoch: int) -> None:
        """Refuse the write unless attempt ``epoch`` holds the run (inside the write transaction)."""
        if db.execute(f"SELECT {_FENCE}", (run_id, epoch, run_id)).fetchone()[0] == 0:
            raise self._refused(db, run_id, epoch)

    def _insert_entries(
        self, db: sqlite3.Connection, run_id: str, entries: list[tuple[Entry, bytes]], fenced: bool = True
    ) -> None:
        if not entries:
            return
        if fenced:
            self._fence(db, run_id, entries[0][0].attempt)
        db.executemany(
            "INSERT INTO run_journal (run_id, seq, kind, body) VALUES (?, ?, ?, ?)",
            [(run_id, e.seq, e.kind, blob) for e, blob in entries],
        )

    def copy_prefix(self, source_id: str, target_id: str, before_seq: int) -> int:
        """Copy a run's journal entries before ``before_seq`` (and their attempts) to another run (a fork).

        Returns the number of attempts copied.
        """
        with self._tx() as db:
            db.execute(
                "INSERT INTO run_journal (run_id, seq, kind, body) SELECT ?, seq, kind, body FROM run_journal "
                "WHERE run_id = ? AND seq < ?",
                (target_id, source_id, before_seq),
            )
            db.execute(
                "INSERT INTO run_attempts (run_id, n, source_hash, started, ended, outcome, replayed, first_seq)"
                " SELECT ?, n, source_hash, started, ended, outcome, replayed, first_seq FROM run_attempts "
                "WHERE run_id = ? AND first_seq < ?",
                (target_id, source_id, before_seq),
            )
            copied = db.execute("SELECT COUNT(*) FROM run_attempts WHERE run_id = ?", (target_id,)).fetchone()
            return cast(int, copied[0])

    # -- signals: delivery and journal entry commit together (exactly once) --------

    def add_signal(self, run_id: str, event: Any) -> int:
        with self._tx() as db:
            if db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise RunNotFound(run_id)
            cur = db.execute(
                "INSERT INTO signals (run_id, event, created) VALUES (?, ?, ?)",
                (run_id, cbor2.dumps(event), time.time()),
            )
            if cur.lastrowid is None:  # an INSERT always sets it
                raise StoreError(f"the run store {self.path} gave no id for the signal it stored", path=self.path)
            return cur.lastrowid

    def pending_signals(self, run_id: str) -> list[tuple[int, Any]]:
        rows = self._read(
            "SELECT id, event FROM signals WHERE run_id = ? AND delivered_seq IS NULL ORDER BY id", (run_id,)
        )
        return [(i, decode_value(run_id, f"signal {i}", e)) for i, e in rows]

    def deliver_signal(
        self, run_id: str, accept: Callable[[Any], bool], write: Callable[[int, Any], list[tuple[Entry, bytes]]]
    ) -> bool:
        """Deliver the oldest undelivered signal ``accept`` takes: mark it and journal it in one transaction."""
        with self._tx() as db:
            rows = db.execute(
                "SELECT id, event FROM signals WHERE run_id = ? AND delivered_seq IS NULL ORDER BY id", (run_id,)
            ).fetchall()
            for signal_id, blob in rows:
                event = decode_value(run_id, f"signal {signal_id}", blob)
                if accept(event):
                    entries = write(signal_id, event)
                    self._insert_entries(db, run_id, entries)
                    db.execute(
                        "UPDATE signals SET delivered_seq = ? WHERE id = ? AND delivered_seq IS NULL",
                        (entries[-1][0].seq, signal_id),
                    )
                    return True
        return False

    # -- moving a run between stores (the file format is portable.py's) ----------------

    def dump_run(self, run_id: str) -> dict[str, Any]:
        """A run's rows as plain lists: the run, its journal, attempts and signals."""
        row = self._read(f"SELECT {', '.join(_COLUMNS)} FROM runs WHERE id = ?", (run_id,))
        if not row:
            raise RunNotFound(run_id)
        journal = self._read("SELECT seq, kind, body FROM run_journal WHERE run_id = ? ORDER BY seq", (run_id,))
        attempts = self._read(
            "SELECT n, source_hash, started, ended, outcome, replayed, first_seq "
            "FROM run_attempts WHERE run_id = ? ORDER BY n",
            (run_id,),
        )
        signals = self._read("SELECT event, created, delivered_seq FROM signals WHERE run_id = ?", (run_id,))
        return {
            "run": dict(zip(_COLUMNS, row[0], strict=False)),
            "journal": [list(r) for r in journal],
            "attempts": [list(a) for a in attempts],
            "signals": [list(s) for s in signals],
        }

    def load_runs(self, dumps: list[dict[str, Any]]) -> None:
        """Insert runs written by ``dump_run``, all or none. A run that was running is marked interrupted."""
        with self._tx() as db:
            for item in dumps:
                values = dict(item["run"])
                if values.get("status") == "running":
                    values["status"] = "interrupted"  # its owner is on another machine
                values["owner"] = values["lease_until"] = None
                cols = [c for c in _COLUMNS if c in values]
                try:
                    db.execute(
                        f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                        [values[c] for c in cols],
                    )
                except sqlite3.IntegrityError as exc:
                    raise StoreError(f"run {values['id']} already exists in {self.path}", path=self.path) from exc
                db.executemany(
                    "INSERT INTO run_journal (run_id, seq, kind, body) VALUES (?, ?, ?, ?)",
                    [(values["id"], *row) for row in item["journal"]],
                )
                db.executemany(
                    "INSERT INTO run_attempts (run_id, n, source_hash, started, ended, outcome, replayed,"
                    " first_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(values["id"], *row) for row in item["attempts"]],
                )
                db.executemany(
                    "INSERT INTO signals (run_id, event, created, delivered_seq) VALUES (?, ?, ?, ?)",
                    [(values["id"], *row) for row in item["signals"]],
                )
