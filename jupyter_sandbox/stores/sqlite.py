"""The store: runs, their journals, attempts and signals in one SQLite file.

The statements both backends share are sql.py's; SQLite's own (its schema, the
fenced append, due runs) live here. Every write is one ``BEGIN IMMEDIATE``
transaction (or one autocommitting statement), so a killed process leaves either
all of a write or none of it; sqlite3 errors are mapped to ``StoreError`` at this
module's edge. Leases and fencing follow common.py: every journal write checks the
attempt (the epoch) in its statement.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ..errors import StoreError
from . import migrations
from .base import OWNER
from .common import Heartbeat, lease_seconds, store_timeout
from .dialect import Dialect, render
from .rows import Entry
from .sql import DUE, RESERVE_DUE, SQLStore, due_order

__all__ = ["SQLiteStore"]

# The tables at migrations.BASE_VERSION; every later change is a migrations.Step.
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
_ONE_STATEMENT = 64  # entries appended by one fenced INSERT; a longer batch is one transaction


@functools.lru_cache(maxsize=_ONE_STATEMENT)
def _append_sql(rows: int) -> str:
    """One INSERT of ``rows`` journal rows that writes all or none of them: none once the fence refuses."""
    values = ", ".join(["(?, ?, ?, ?)"] * rows)
    return f"INSERT INTO run_journal (run_id, seq, kind, body) SELECT * FROM (VALUES {values}) WHERE {_FENCE}"


def _fresh(db: sqlite3.Connection) -> bool:
    """Whether the file has no store's tables yet."""
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is None


# The store's clock is Python's, bound as :now; BEGIN IMMEDIATE holds the whole file, so no row locks.
_SQLITE = Dialect("qmark", now=":now", for_update="", skip_locked="", duplicate=sqlite3.IntegrityError)


class SQLiteStore(SQLStore[sqlite3.Connection]):
    """Runs and journals in SQLite (WAL): the ``Store`` contract (base.py). ``path`` may be ``":memory:"``.

    The methods both backends share are sql.py's ``SQLStore``; here are the connection and what is SQLite's own.
    """

    dialect = _SQLITE

    def __init__(
        self, path: str | os.PathLike[str] = ":memory:", *, lease: float | None = None, timeout: float | None = None
    ):
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
            wait = store_timeout(timeout)  # for the write lock another process holds
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=wait)
            self._db.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")  # other processes share the file
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode = WAL")  # readers never block the writer
            # NORMAL in WAL survives a killed process (not a power cut) at ~20 µs a commit;
            # FULL adds an fsync per commit. See README "Durability".
            self._db.execute("PRAGMA synchronous = NORMAL")
            self.migrated_from: int | None = None  # the version opening found, when it migrated
            if self._version() != migrations.latest():  # a current store is opened without the write lock
                # A file's opener may write it: an older or a new file is brought up to date.
                self.migrated_from = self.migrate()[0]
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise StoreError(f"{self.path} is not a usable run store: {exc}", path=self.path) from exc

    def _version(self) -> int:
        return self._stored_version(self._db, _fresh(self._db))

    def migrate(self) -> tuple[int, int]:
        """Create the tables, or bring an older store's up to this version (one transaction, the write lock)."""
        with self._tx() as db:
            return self._bring_up_to_date(db, _fresh(db), [s for s in _SCHEMA.split(";") if s.strip()])

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

    def _statement(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._tx()  # every write takes the write lock up front

    def _read(self, sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # a damaged TEXT column decodes badly
                raise self._mapped(exc) from exc

    def _many(self, conn: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> None:
        conn.executemany(sql, rows)

    def _mapped(self, exc: Exception) -> StoreError:
        if isinstance(exc, sqlite3.ProgrammingError) and "closed database" in str(exc):
            return StoreError(f"the run store {self.path} is closed", path=self.path)
        return StoreError(f"the run store {self.path} failed: {exc}", path=self.path)

    def due_runs(self, now_ms: float, limit: int = 100) -> list[str]:
        """Parked runs due at ``now_ms``, then running ones whose lease expired, reserved for this process.

        The reservation (owner and lease on the row) makes other workers pass these runs by for one
        lease, so N schedulers share the due runs instead of all racing for each (the claim still decides).
        """
        args = {"now_ms": now_ms, "now": time.time(), "owner": OWNER, "lease": self.lease_seconds, "limit": limit}
        if not self._read(render(f"SELECT 1 FROM runs WHERE {DUE} LIMIT 1", _SQLITE), args):
            return []  # the usual tick: nothing due, and no write lock taken to find that out
        with self._tx() as db:
            return due_order(db.execute(render(RESERVE_DUE, _SQLITE), args).fetchall())

    def change_counter(self) -> int:
        """Other connections' commits (``data_version``) plus the rows this one changed: grows with any change."""
        with self._lock:
            try:
                return int(self._db.execute("PRAGMA data_version").fetchone()[0]) + self._db.total_changes
            except sqlite3.DatabaseError as exc:
                raise self._mapped(exc) from exc

    # -- the journal ---------------------------------------------------------------

    def append(self, run_id: str, entries: list[tuple[Entry, bytes]]) -> None:
        """Commit entries, fenced: refused (``RunBusyError``) once their attempt no longer holds the run."""
        if 0 < len(entries) <= _ONE_STATEMENT:  # one autocommitting INSERT: as atomic, a third of the statements
            epoch = entries[0][0].attempt
            args: list[Any] = []
            for entry, blob in entries:
                args += (run_id, entry.seq, entry.kind, blob)
            args += (run_id, epoch, run_id)
            with self._lock:
                try:
                    cur = self._db.execute(_append_sql(len(entries)), args)
                    if cur.rowcount != len(entries):
                        raise self._refused(self._db, run_id, epoch)
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
