"""The store on PostgreSQL: the same tables and CBOR rows as SQLite, shared by every process that has the URL.

psycopg 3 with a connection pool; connections autocommit, so a one-statement
write is one round trip, and every multi-statement write is one explicit
transaction. Leases and fencing follow common.py; lease times are the
server's clock (``clock_timestamp()``), so machines with skewed clocks agree.
Opening a current store runs no DDL; migrations (migrations.py) run under
``pg_advisory_xact_lock``, one per schema, and every session waits at most its
``timeout`` for a lock (``lock_timeout``).
Every change to a run or a signal sends ``NOTIFY jupyter_sandbox`` from a
trigger, so in the same transaction (a rolled-back change announces nothing);
``listen()`` hears them. psycopg errors become ``StoreError`` at this module's edge.
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

try:
    import psycopg
    from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout
except ImportError as exc:  # an optional extra
    raise ImportError(
        "a postgresql:// store needs psycopg 3 and psycopg_pool: pip install 'jupyter_sandbox[postgres]'"
    ) from exc

from ..errors import AnswerRefused, StoreError
from . import migrations
from .base import OWNER
from .common import Heartbeat, lease_seconds, store_timeout
from .dialect import Dialect, render, scalar
from .pgsql import NOTIFY, SCHEMA, Changes, reason
from .rows import Entry
from .sql import ATTEMPT_ROW, FIRST_SEQ, RESERVE_DUE, RESTART, SQLStore, assignments, due_order, insert_run
from .urls import masked, secrets_of

__all__ = ["PostgresStore"]

_NOW = "extract(epoch from clock_timestamp())::float8"
# The fence (common.py): FOR SHARE waits for a concurrent claim and re-reads the row it committed, so an
# append racing a takeover is refused, and the claim's first_seq counts every append that got in before it.
_FENCE = (
    "(EXISTS (SELECT 1 FROM runs WHERE id = %(run)s AND attempt = %(epoch)s AND status = 'running' FOR SHARE) "
    "OR NOT EXISTS (SELECT 1 FROM runs WHERE id = %(run)s))"
)
# Lease times on the server's clock; row locks where SQLite's write lock holds the whole file.
_PG = Dialect(
    "format",
    now=_NOW,
    for_update=" FOR UPDATE",
    skip_locked=" FOR UPDATE SKIP LOCKED",
    duplicate=psycopg.errors.UniqueViolation,
)
# A claim's writes in one statement, run after its row lock was taken (so first_seq, read in this
# statement's snapshot, counts every append that got in before the claim): the run, then its attempt's row.
_TAKE = (
    "WITH claimed AS (UPDATE runs SET {sets} WHERE id = ? RETURNING id) "
    f"{ATTEMPT_ROW} SELECT id, ?, ?, ?, ({FIRST_SEQ}) FROM claimed {RESTART}"
)
# An attempt's end in one statement (autocommitted, so one round trip): the run's new status, fenced on the
# attempt that holds it; its values (its output), last entries and attempt row only if that update went in
# (the entries and attempt row also when the store has no such run: a check's scratch store). Returns whether
# they went in. A value is put (_PUTS) or, when None, removed (_END_DROPS) by a clause of its own.
_END = (
    "WITH ended AS (UPDATE runs SET {sets} WHERE id = ? AND attempt = ? AND status = 'running' RETURNING id), "
    "{values}"
    "kept AS (SELECT 1 FROM ended UNION ALL SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM runs WHERE id = ?)), "
    "entries AS (INSERT INTO run_journal (run_id, seq, kind, body) SELECT ?, x.seq, x.kind, x.body "
    "FROM unnest(?::bigint[], ?::text[], ?::bytea[]) AS x(seq, kind, body) WHERE EXISTS (SELECT 1 FROM kept)), "
    "counted AS (UPDATE run_attempts SET ended = ?, outcome = ?, replayed = ? WHERE run_id = ? AND n = ? "
    "AND EXISTS (SELECT 1 FROM kept)) "
    "SELECT EXISTS (SELECT 1 FROM kept)"
)
_PUTS = (  # a clause writing one of a run's values, once the run's own statement went in ({source})
    "put_{name} AS (INSERT INTO run_values (run_id, name, value) SELECT id, '{name}', ? FROM {source} "
    "ON CONFLICT (run_id, name) DO UPDATE SET value = EXCLUDED.value), "
)
_END_DROPS = "drop_{name} AS (DELETE FROM run_values WHERE name = '{name}' AND run_id IN (SELECT id FROM ended)), "
_STORED = "SELECT seq, body FROM run_journal WHERE run_id = %(run)s AND seq = ANY(%(seqs)s::bigint[])"
_HAS_TRIGGER = "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'runs_notify' AND tgrelid = 'runs'::regclass)"


def _alive(conn: psycopg.Connection[Any]) -> None:
    """The pool's check of a connection it hands out: a round trip only when the server has spoken.

    An idle connection has nothing to read unless the server ended it (a restart, a terminated backend,
    ``idle_session_timeout``: each sends an error, then closes). Then the check fails and the pool
    connects afresh, so a call costs a reconnect instead of failing.
    """
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("the connection is closed")
    readable, _, _ = select.select([conn.fileno()], [], [], 0)
    if readable:
        ConnectionPool.check_connection(conn)


class _Lost(StoreError):
    """The session ended under a statement (restart, terminated backend, idle timeout): its outcome unknown."""


_MIGRATION_LOCK = "hashtext('jupyter_sandbox:' || current_schema())"  # one migrator per schema


class PostgresStore(SQLStore["psycopg.Connection[Any]"]):
    """Runs and journals in PostgreSQL: the ``Store`` contract (base.py). ``url`` is a libpq URL.

    ``lease``: seconds a claim holds without renewal (common.py); ``timeout``: seconds a call waits
    for a connection (all ``pool_size`` busy, or the server unreachable) before its ``StoreError``.
    The methods both backends share are sql.py's ``SQLStore``; here are the pool and what is PostgreSQL's own.
    """

    dialect = _PG

    def __init__(self, url: str, *, lease: float | None = None, pool_size: int = 8, timeout: float | None = None):
        self._secrets = secrets_of(url)
        self.path = masked(url, self._secrets)  # for messages: never a credential
        self.lease_seconds = lease_seconds(lease)
        self._heartbeat = Heartbeat(self._renew, self.lease_seconds)
        self._url = url
        self._timeout = timeout = store_timeout(timeout)
        try:  # one direct connection first: its error says why (a pool only says it timed out)
            with psycopg.connect(url, autocommit=True, connect_timeout=self._connect_timeout) as conn:
                self._configure(conn)
                self.schema, server = conn.execute(f"SELECT current_schema(), {_NOW}").fetchall()[0]
                self.schema, self._skew = str(self.schema), float(server) - time.time()
                version = self._version(conn)
                self.migrated_from: int | None = None  # the version opening found, when it migrated
                if version != migrations.latest():  # a current store is opened with no DDL and no lock
                    self.migrated_from = self._migrate(conn, version)[0]
        except psycopg.Error as exc:
            raise StoreError(f"{self.path} is not a usable run store: {self._why(exc)}", path=self.path) from exc
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            check=_alive,
            open=False,
            name="jupyter-sandbox",
            timeout=timeout,
        )
        try:
            self._pool.open(wait=True, timeout=15)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to the run store {self.path}", path=self.path) from exc

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        """Every session waits at most ``timeout`` for a lock another process holds, and ends a transaction
        left idle for a minute (a frozen process's): nothing one process holds blocks the others for ever."""
        conn.execute(
            "SELECT set_config('lock_timeout', %s, false), "
            "set_config('idle_in_transaction_session_timeout', %s, false)",
            (f"{max(1, int(self._timeout * 1000))}ms", "60s"),
        )

    def _migrate(self, conn: psycopg.Connection[Any], version: int) -> tuple[int, int]:
        """Bring the schema up to date under an advisory lock, or say who can (a role without CREATE)."""
        # A session lock, taken before the transaction: a transaction that began before another migrator
        # committed would read the catalog as it was then (tables missing) and create them a second time.
        conn.execute(f"SELECT pg_advisory_lock({_MIGRATION_LOCK})")
        try:
            with conn.transaction():
                fresh = bool(scalar(conn, "SELECT to_regclass('meta') IS NULL"))  # again, now under the lock
                done = self._bring_up_to_date(conn, fresh, SCHEMA)
                if not scalar(conn, _HAS_TRIGGER):  # only once: a trigger change locks the table
                    for statement in NOTIFY:
                        conn.execute(statement)
                elif done[0] != done[1]:  # the function's body may be newer; replacing it locks no table
                    conn.execute(NOTIFY[0])
                return done
        except psycopg.errors.InsufficientPrivilege as exc:
            raise migrations.out_of_date(self.path, version, self._why(exc)) from exc
        finally:
            if not conn.closed and not conn.broken:  # a lost session released it already
                conn.execute(f"SELECT pg_advisory_unlock({_MIGRATION_LOCK})")

    def migrate(self) -> tuple[int, int]:
        """Bring the store up to this version (``Store.migrate``), as the schema's owner."""
        with self._conn() as conn:
            return self._migrate(conn, self._version(conn))

    def _version(self, conn: psycopg.Connection[Any]) -> int:
        return self._stored_version(conn, bool(scalar(conn, "SELECT to_regclass('meta') IS NULL")))

    def close(self) -> None:
        self._heartbeat.stop()
        if hasattr(self, "_pool"):  # not when opening failed
            self._pool.close()

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called (a listener of this store then stops)."""
        return bool(self._pool.closed)

    def listen(self) -> Changes:
        """A listener for this store's changes (a connection of its own); ``wait`` returns changed run ids."""
        return Changes(self._url, self.schema, self.path)

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            conn, pooled = self._pool.getconn(), True
        except PoolClosed as exc:
            raise StoreError(f"the run store {self.path} is closed", path=self.path) from exc
        except PoolTimeout:
            # The pool is still backing off from an outage the server may be over: one direct try.
            try:
                conn = psycopg.connect(self._url, autocommit=True, connect_timeout=self._connect_timeout)
                pooled = False
            except psycopg.Error as exc:
                raise StoreError(
                    f"the run store {self.path} failed: no connection within {self._timeout} s ({self._why(exc)})",
                    path=self.path,
                ) from exc
        try:
            yield conn
        except psycopg.Error as exc:
            if conn.closed or conn.broken:  # the server ended the session: nothing after its last answer ran
                if pooled:
                    self._pool.check()  # the server may have gone away: drop every dead connection, not just this
                raise _Lost(self._mapped(exc).args[0], path=self.path) from exc
            raise self._mapped(exc) from exc
        finally:
            if pooled:
                self._pool.putconn(conn)  # a broken one is discarded, an open transaction rolled back
            else:
                conn.close()

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[Any]]:
        with self._conn() as conn, conn.transaction():
            yield conn

    def _statement(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        return self._conn()  # autocommit: one statement, one round trip

    @property
    def _connect_timeout(self) -> int:
        return max(2, round(self._timeout))  # libpq counts whole seconds; 1 would be too few

    def _read(self, sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
        try:
            with self._conn() as conn:
                return conn.execute(sql, args).fetchall()
        except _Lost:
            pass
        with self._conn() as conn:  # a read is safe to repeat: once, on a connection of its own
            return conn.execute(sql, args).fetchall()

    def _many(self, conn: psycopg.Connection[Any], sql: str, rows: list[tuple[Any, ...]]) -> None:
        with conn.cursor() as cur:
            cur.executemany(sql, rows)

    def _why(self, exc: Exception) -> str:
        return reason(exc, self._secrets)

    def _mapped(self, exc: Exception) -> StoreError:
        return StoreError(f"the run store {self.path} failed: {self._why(exc)}", path=self.path)

    def due_runs(self, now_ms: float, limit: int = 100) -> list[str]:
        """Parked runs due at ``now_ms``, then running ones whose lease expired, reserved for this process.

        ``FOR UPDATE SKIP LOCKED`` and the reservation (owner and lease on the row) let N workers
        share the due runs without a leader: each gets different ones (the claim still decides).
        """
        args = {"owner": OWNER, "lease": self.lease_seconds, "now_ms": now_ms, "limit": limit}
        return due_order(self._read(render(RESERVE_DUE, _PG), args))

    # -- the lease: taken by a claim, released when the attempt ends ------------------------------------

    def _take(
        self, conn: psycopg.Connection[Any], run_id: str, attempt: int, until: float, source_hash: str, clock: float
    ) -> None:
        claimed = {"status": "running", "owner": OWNER, "attempt": attempt, "wake_at": None, "lease_until": until}
        values, _ = assignments(claimed)  # (no run values)
        sql = render(_TAKE.format(sets=", ".join(f"{k} = ?" for k in values)), _PG)
        conn.execute(sql, (*values.values(), run_id, attempt, source_hash, clock, run_id))

    def _create(self, row: dict[str, Any], values: dict[str, bytes]) -> None:
        """A new run's row and its values in one statement, so one round trip as for a run without values."""
        if not values:
            return super()._create(row, values)
        puts = "".join(_PUTS.format(name=name, source="created") for name in values)
        sql = f"WITH created AS ({insert_run(row)} RETURNING id), {puts}done AS (SELECT 1) SELECT 1"
        with self._conn() as conn:
            try:
                conn.execute(render(sql, _PG), (*row.values(), *values.values()))
            except psycopg.errors.UniqueViolation as exc:
                raise self._taken(row["id"]) from exc

    def _end(
        self, run_id: str, attempt: int, ended: dict[str, Any], entries: list[tuple[Entry, bytes]], replayed: int
    ) -> None:
        """An attempt's end in one statement, so one round trip and one commit: the fence, the entries and
        the attempt's row (``_END``); refused as the shared path refuses it."""
        row, blobs = assignments(ended)
        puts = "".join(
            (_END_DROPS if blob is None else _PUTS).format(name=name, source="ended") for name, blob in blobs.items()
        )
        sql = render(_END.format(sets=", ".join(f"{k} = ?" for k in row), values=puts), _PG)
        seqs, kinds, bodies = [e.seq for e, _ in entries], [e.kind for e, _ in entries], [b for _, b in entries]
        stored = [blob for blob in blobs.values() if blob is not None]  # a removal binds nothing
        args = (*row.values(), run_id, attempt, *stored, run_id, run_id, seqs, kinds, bodies)
        with self._conn() as conn:
            if not scalar(conn, sql, (*args, time.time(), ended["status"], replayed, run_id, attempt)):
                raise self._refused(conn, run_id, attempt)

    def change_counter(self) -> int:
        """The server's WAL insert position: it grows with every change (others' too, which is harmless)."""
        return int(self._read("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")[0][0])

    # -- saved scripts ---------------------------------------------------------------

    def _hold_saves(self, conn: psycopg.Connection[Any], name: str) -> None:
        """Hold other saves of ``name`` off until this transaction ends: a transaction-scoped advisory lock on
        (this schema, the name). Taken in a statement of its own, so the save's next statement reads the
        versions committed by any save it waited for (read committed: a snapshot per statement)."""
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext('jupyter_sandbox:' || current_schema()), hashtext(%s))", (name,)
        )

    # -- the journal ---------------------------------------------------------------

    def answer_stamp(self, run_id: str) -> dict[str, Any]:
        """The role and the time from the server, in the one statement that tries to record an answer
        (rolled back): a role the team's grants or row policies keep from recording answers is refused
        here, before the resume claims the run, and nothing is written."""
        with self._conn() as conn:
            try:
                with conn.transaction(force_rollback=True):
                    row = conn.execute(
                        "INSERT INTO run_journal (run_id, seq, kind, body) VALUES (%s, -1, 'answer', ''::bytea) "
                        f"RETURNING current_user::text, {_NOW}",
                        (run_id,),
                    ).fetchone()
            except psycopg.errors.InsufficientPrivilege as exc:
                role = scalar(conn, "SELECT current_user::text")
                raise AnswerRefused(
                    f"run {run_id}: the database role {role!r} may not record answers in {self.path} "
                    f"({reason(exc)}); nothing was recorded and the run still waits",
                    run_id=run_id,
                ) from exc
        assert row is not None
        return {"answered_at": float(row[1]), "role": str(row[0])}

    def append(self, run_id: str, entries: list[tuple[Entry, bytes]]) -> None:
        """Commit entries in one statement (one round trip), refused once their attempt lost the run.

        When the connection is lost before the answer came, whether the entries committed is read back
        from the journal: all there is done, none there is written again (fenced as before), a part is
        an error (it cannot happen: the statement is atomic).
        """
        if not entries:
            return
        try:
            with self._conn() as conn:
                self._insert_entries(conn, run_id, entries)
        except _Lost:
            stored = dict(self._read(_STORED, {"run": run_id, "seqs": [e.seq for e, _ in entries]}))
            if all(stored.get(e.seq) == body for e, body in entries):
                return  # it committed; only its answer was lost
            if stored:
                raise
            with self._conn() as conn:
                self._insert_entries(conn, run_id, entries)

    def _insert_entries(
        self, conn: psycopg.Connection[Any], run_id: str, entries: list[tuple[Entry, bytes]], fenced: bool = True
    ) -> None:
        if not entries:
            return
        epoch = entries[0][0].attempt
        args = {
            "run": run_id,
            "epoch": epoch,
            "seqs": [e.seq for e, _ in entries],
            "kinds": [e.kind for e, _ in entries],
            "bodies": [b for _, b in entries],
        }
        cur = conn.execute(
            "INSERT INTO run_journal (run_id, seq, kind, body) SELECT %(run)s, x.seq, x.kind, x.body "
            "FROM unnest(%(seqs)s::bigint[], %(kinds)s::text[], %(bodies)s::bytea[]) "
            "AS x(seq, kind, body)" + (f" WHERE {_FENCE}" if fenced else ""),
            args,
        )
        if cur.rowcount != len(entries):
            raise self._refused(conn, run_id, epoch)
