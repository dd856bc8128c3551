"""The store on PostgreSQL: the same tables and CBOR rows as SQLite, shared by every process that has the URL.

psycopg 3 with a connection pool; connections autocommit, so a one-statement
write is one round trip, and every multi-statement write is one explicit
transaction. Leases and fencing follow common.py; lease times are the
server's clock (``clock_timestamp()``), so machines with skewed clocks agree.
Schema migrations run under ``pg_advisory_xact_lock``, one per schema.
Every change to a run or a signal sends ``NOTIFY jupyter_sandbox`` from a
trigger, so in the same transaction (a rolled-back change announces nothing);
``listen()`` hears them. psycopg errors become ``StoreError`` at this module's edge.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import cbor2

try:
    import psycopg
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # an optional extra
    raise ImportError(
        "a postgresql:// store needs psycopg 3 and psycopg_pool: pip install 'jupyter_sandbox[postgres]'"
    ) from exc

from ..errors import RunBusyError, RunNotFound, RunStateError, StoreError
from .base import OWNER, SCHEMA_VERSION, RunRow
from .common import ACTIVE, BLOBS, COLUMNS, Heartbeat, lease_held, lease_lost, lease_seconds, run_from_values
from .pgsql import MIGRATIONS, NOTIFY, SCHEMA, Changes, reason
from .rows import Entry, decode_journal, decode_value

__all__ = ["PostgresStore"]

_NOW = "extract(epoch from clock_timestamp())::float8"
# The fence (common.py): FOR SHARE waits for a concurrent claim and re-reads the row it committed, so an
# append racing a takeover is refused, and the claim's first_seq counts every append that got in before it.
_FENCE = (
    "(EXISTS (SELECT 1 FROM runs WHERE id = %(run)s AND attempt = %(epoch)s AND status = 'running' FOR SHARE) "
    "OR NOT EXISTS (SELECT 1 FROM runs WHERE id = %(run)s))"
)
_SELECT_RUN = f"SELECT {', '.join(COLUMNS)}, {_NOW} FROM runs"
_PASSWORD = re.compile(r"(://[^:/@]*:)[^@]*@")


class PostgresStore:
    """Runs and journals in PostgreSQL: the ``Store`` contract (base.py). ``url`` is a libpq URL.

    ``lease``: seconds a claim holds without renewal (common.py); ``timeout``: seconds a call waits
    for a connection (all ``pool_size`` busy, or the server unreachable) before its ``StoreError``.
    """

    def __init__(self, url: str, *, lease: float | None = None, pool_size: int = 8, timeout: float = 10.0):
        self.path = _PASSWORD.sub(r"\1***@", url)  # for messages: never the password
        self.lease_seconds = lease_seconds(lease)
        self._heartbeat = Heartbeat(self._renew, self.lease_seconds)
        self._url = url
        try:  # one direct connection first: its error says why (a pool only says it timed out)
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                with conn.transaction():
                    self._migrate(conn)
                self.schema = str(_scalar(conn, "SELECT current_schema()"))
        except psycopg.Error as exc:
            raise StoreError(f"{self.path} is not a usable run store: {reason(exc)}", path=self.path) from exc
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            open=False,
            name="jupyter-sandbox",
            timeout=timeout,
        )
        self._timeout = timeout
        try:
            self._pool.open(wait=True, timeout=15)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to the run store {self.path}", path=self.path) from exc

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('jupyter_sandbox:' || current_schema()))")
        fresh = _scalar(conn, "SELECT to_regclass('meta') IS NULL")
        row = None if fresh else conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None and not str(row[0]).isdigit():
            raise StoreError(f"{self.path} has a damaged schema version {row[0]!r}", path=self.path)
        version = int(row[0]) if row is not None else SCHEMA_VERSION
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer jupyter_sandbox (schema {version}, "
                f"this version reads {SCHEMA_VERSION}); upgrade jupyter_sandbox",
                path=self.path,
            )
        for step in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[step]:
                conn.execute(statement)
        for statement in SCHEMA:
            conn.execute(statement)
        if not _scalar(
            conn, "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'runs_notify' AND tgrelid = 'runs'::regclass)"
        ):  # only once: a trigger change locks the table
            for statement in NOTIFY:
                conn.execute(statement)
        conn.execute(
            "INSERT INTO meta VALUES ('schema_version', %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (str(SCHEMA_VERSION),),
        )

    def close(self) -> None:
        self._heartbeat.stop()
        self._pool.close()

    def listen(self) -> Changes:
        """A listener for this store's changes (a connection of its own); ``wait`` returns changed run ids."""
        return Changes(self._url, self.schema, self.path)

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            conn, pooled = self._pool.getconn(), True
        except PoolTimeout:
            # The pool is still backing off from an outage the server may be over: one direct try.
            try:
                conn, pooled = psycopg.connect(self._url, autocommit=True, connect_timeout=10), False
            except psycopg.Error as exc:
                raise StoreError(
                    f"the run store {self.path} failed: no connection within {self._timeout} s ({reason(exc)})",
                    path=self.path,
                ) from exc
        try:
            yield conn
        except psycopg.Error as exc:
            if isinstance(exc, psycopg.OperationalError) and pooled:
                self._pool.check()  # the server went away: drop the pool's dead connections, not just this one
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

    def _read(self, sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
        with self._conn() as conn:
            return conn.execute(sql, args).fetchall()

    def _mapped(self, exc: Exception) -> StoreError:
        return StoreError(f"the run store {self.path} failed: {reason(exc)}", path=self.path)

    # -- runs --------------------------------------------------------------------

    def create_run(self, run: RunRow) -> RunRow:
        now = time.time()
        run.created = run.created or now
        run.updated = now
        with self._conn() as conn:
            self._insert_run(conn, {c: getattr(run, c) for c in COLUMNS}, encode=True)
        return run

    def _insert_run(self, conn: psycopg.Connection[Any], values: dict[str, Any], *, encode: bool) -> None:
        cols = [c for c in COLUMNS if c in values]
        args = [cbor2.dumps(values[c]) if encode and c in BLOBS and values[c] is not None else values[c] for c in cols]
        try:
            conn.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})", args)
        except psycopg.errors.UniqueViolation as exc:
            raise StoreError(f"a run {values['id']} already exists in {self.path}", path=self.path) from exc

    def get_run(self, run_id: str) -> RunRow:
        rows = self._read(f"{_SELECT_RUN} WHERE id = %s", (run_id,))
        if not rows:
            raise RunNotFound(run_id)
        return _row_to_run(rows[0])

    def list_runs(self, *, status: str | None = None, top_level: bool = False, limit: int = 200) -> list[RunRow]:
        where, args = [], []
        if status:
            where.append("status = %s")
            args.append(status)
        if top_level:
            where.append("parent IS NULL")
        sql = _SELECT_RUN + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY created DESC LIMIT %s"
        return [_row_to_run(r) for r in self._read(sql, (*args, limit))]

    def due_runs(self, now_ms: float, limit: int = 100) -> list[str]:
        """Parked runs due at ``now_ms``, then running ones whose lease expired, reserved for this process.

        ``FOR UPDATE SKIP LOCKED`` and the reservation (owner and lease on the row) let N workers
        share the due runs without a leader: each gets different ones (the claim still decides).
        """
        due = (
            "parent IS NULL AND ((status = 'parked' AND wake_at IS NOT NULL AND wake_at <= %(now_ms)s AND "
            f"(lease_until IS NULL OR lease_until <= {_NOW} OR owner = %(owner)s)) OR (status = 'running' AND "
            f"lease_until <= {_NOW}))"
        )
        rows = self._read(
            f"UPDATE runs SET owner = %(owner)s, lease_until = {_NOW} + %(lease)s WHERE id IN "
            f"(SELECT id FROM runs WHERE {due} ORDER BY wake_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED) "
            "RETURNING id, status, wake_at, lease_until",
            {"owner": OWNER, "lease": self.lease_seconds, "now_ms": now_ms, "limit": limit},
        )
        return [r[0] for r in sorted(rows, key=lambda r: (r[1] != "parked", r[2] or 0.0, r[3] or 0.0))]

    def change_counter(self) -> int:
        """The server's WAL insert position: it grows with every change (others' too, which is harmless)."""
        return int(self._read("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")[0][0])

    def children(self, run_id: str) -> list[str]:
        return [r[0] for r in self._read("SELECT id FROM runs WHERE parent = %s ORDER BY created", (run_id,))]

    def update_run(self, run_id: str, **fields: Any) -> None:
        with self._conn() as conn:
            self._update(conn, run_id, fields)

    @staticmethod
    def _update(
        conn: psycopg.Connection[Any], run_id: str, fields: dict[str, Any], where: str = "", args: tuple[Any, ...] = ()
    ) -> int:
        unknown = set(fields) - set(COLUMNS)
        if unknown:
            raise StoreError(f"runs have no column {sorted(unknown)[0]!r}")
        fields["updated"] = time.time()
        sets = ", ".join(f"{k} = %s" for k in fields)
        values = [cbor2.dumps(v) if k in BLOBS and v is not None else v for k, v in fields.items()]
        return conn.execute(f"UPDATE runs SET {sets} WHERE id = %s{where}", (*values, run_id, *args)).rowcount

    # -- attempts: the compare-and-set that lets exactly one resume proceed --------

    def claim(self, run_id: str, allowed: tuple[str, ...], *, source_hash: str, force: bool = False) -> int:
        """Take the run for a new attempt; return its number (the lease's epoch). Exactly one claim wins."""
        with self._tx() as conn:
            row = conn.execute(
                f"SELECT status, owner, attempt, lease_until, {_NOW} FROM runs WHERE id = %s FOR UPDATE", (run_id,)
            ).fetchone()
            if row is None:
                raise RunNotFound(run_id)
            status, owner, attempt, until, now = row
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
            first_seq = _scalar(conn, "SELECT COALESCE(MAX(seq) + 1, 0) FROM run_journal WHERE run_id = %s", (run_id,))
            self._update(
                conn,
                run_id,
                {
                    "status": "running",
                    "owner": OWNER,
                    "attempt": attempt,
                    "wake_at": None,
                    "lease_until": now + self.lease_seconds,
                },
            )
            conn.execute(
                "INSERT INTO run_attempts (run_id, n, source_hash, started, first_seq) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (run_id, n) DO UPDATE SET source_hash = "
                "EXCLUDED.source_hash, started = EXCLUDED.started, first_seq = EXCLUDED.first_seq, "
                "ended = NULL, outcome = NULL, replayed = NULL",
                (run_id, attempt, source_hash, time.time(), first_seq),
            )
        ACTIVE.add(run_id)  # only once the claim committed: a failed claim leaves nothing held
        self._heartbeat.hold(run_id, attempt)
        return int(attempt)

    def release(self, run_id: str) -> None:
        ACTIVE.discard(run_id)
        self._heartbeat.drop(run_id)

    def _renew(self, run_id: str, epoch: int) -> bool:
        with self._conn() as conn:
            return (
                conn.execute(
                    f"UPDATE runs SET lease_until = {_NOW} + %s WHERE id = %s AND attempt = %s AND status = 'running'",
                    (self.lease_seconds, run_id, epoch),
                ).rowcount
                == 1
            )

    @staticmethod
    def _refused(conn: psycopg.Connection[Any], run_id: str, epoch: int) -> RunBusyError:
        return lease_lost(
            run_id, epoch, conn.execute("SELECT status, attempt, owner FROM runs WHERE id = %s", (run_id,)).fetchone()
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
        """Write the attempt's last entries and the run's new status in one transaction, fenced."""
        try:
            with self._tx() as conn:
                changed = self._update(
                    conn,
                    run_id,
                    {"status": status, "lease_until": None, **fields},
                    " AND attempt = %s AND status = 'running'",
                    (attempt,),
                )
                if changed == 0 and conn.execute("SELECT 1 FROM runs WHERE id = %s", (run_id,)).fetchone():
                    raise self._refused(conn, run_id, attempt)  # only the attempt that holds the run may end it
                self._insert_entries(conn, run_id, entries, fenced=False)
                conn.execute(
                    "UPDATE run_attempts SET ended = %s, outcome = %s, replayed = %s WHERE run_id = %s AND n = %s",
                    (time.time(), status, replayed, run_id, attempt),
                )
        finally:
            self.release(run_id)  # even when the write failed: the next resume may take it over

    def attempts(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT n, source_hash, started, ended, outcome, replayed, first_seq FROM run_attempts "
            "WHERE run_id = %s ORDER BY n",
            (run_id,),
        )
        keys = ("n", "source_hash", "started", "ended", "outcome", "replayed", "first_seq")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    # -- the journal ---------------------------------------------------------------

    def entries(self, run_id: str) -> list[Entry]:
        rows = self._read("SELECT seq, body FROM run_journal WHERE run_id = %s ORDER BY seq", (run_id,))
        return decode_journal(run_id, rows)

    def journal_bytes(self, run_id: str) -> int:
        return int(
            self._read("SELECT COALESCE(SUM(octet_length(body)), 0) FROM run_journal WHERE run_id = %s", (run_id,))[0][
                0
            ]
        )

    def append(self, run_id: str, entries: list[tuple[Entry, bytes]]) -> None:
        """Commit entries in one statement (one round trip), refused once their attempt lost the run."""
        if entries:
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

    def copy_prefix(self, source_id: str, target_id: str, before_seq: int) -> int:
        """Copy a run's journal before ``before_seq`` (and its attempts) to another run (a fork); attempts copied."""
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO run_journal (run_id, seq, kind, body) SELECT %s, seq, kind, body "
                "FROM run_journal WHERE run_id = %s AND seq < %s",
                (target_id, source_id, before_seq),
            )
            conn.execute(
                "INSERT INTO run_attempts (run_id, n, source_hash, started, ended, outcome, replayed, "
                "first_seq) SELECT %s, n, source_hash, started, ended, outcome, replayed, first_seq "
                "FROM run_attempts WHERE run_id = %s AND first_seq < %s",
                (target_id, source_id, before_seq),
            )
            return int(_scalar(conn, "SELECT COUNT(*) FROM run_attempts WHERE run_id = %s", (target_id,)))

    # -- signals: delivery and journal entry commit together (exactly once) --------

    def add_signal(self, run_id: str, event: Any) -> int:
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM runs WHERE id = %s", (run_id,)).fetchone() is None:
                raise RunNotFound(run_id)
            return int(
                _scalar(
                    conn,
                    "INSERT INTO signals (run_id, event, created) VALUES (%s, %s, %s) RETURNING id",
                    (run_id, cbor2.dumps(event), time.time()),
                )
            )

    def pending_signals(self, run_id: str) -> list[tuple[int, Any]]:
        rows = self._read(
            "SELECT id, event FROM signals WHERE run_id = %s AND delivered_seq IS NULL ORDER BY id", (run_id,)
        )
        return [(int(i), decode_value(run_id, f"signal {i}", e)) for i, e in rows]

    def deliver_signal(
        self, run_id: str, accept: Callable[[Any], bool], write: Callable[[int, Any], list[tuple[Entry, bytes]]]
    ) -> bool:
        """Deliver the oldest undelivered signal ``accept`` takes: mark it and journal it in one transaction."""
        with self._tx() as conn:
            # FOR UPDATE: a second deliverer waits, then sees the signal delivered.
            rows = conn.execute(
                "SELECT id, event FROM signals WHERE run_id = %s AND delivered_seq IS NULL ORDER BY id FOR UPDATE",
                (run_id,),
            ).fetchall()
            for signal_id, blob in rows:
                event = decode_value(run_id, f"signal {signal_id}", blob)
                if accept(event):
                    entries = write(int(signal_id), event)
                    self._insert_entries(conn, run_id, entries)
                    conn.execute(
                        "UPDATE signals SET delivered_seq = %s WHERE id = %s AND delivered_seq IS NULL",
                        (entries[-1][0].seq, signal_id),
                    )
                    return True
        return False

    # -- moving a run between stores (the file format is portable.py's) ----------------

    def dump_run(self, run_id: str) -> dict[str, Any]:
        """A run's rows as plain lists: the run, its journal, attempts and signals."""
        row = self._read(f"SELECT {', '.join(COLUMNS)} FROM runs WHERE id = %s", (run_id,))
        if not row:
            raise RunNotFound(run_id)
        journal = self._read("SELECT seq, kind, body FROM run_journal WHERE run_id = %s ORDER BY seq", (run_id,))
        attempts = self._read(
            "SELECT n, source_hash, started, ended, outcome, replayed, first_seq "
            "FROM run_attempts WHERE run_id = %s ORDER BY n",
            (run_id,),
        )
        signals = self._read(
            "SELECT event, created, delivered_seq FROM signals WHERE run_id = %s ORDER BY id", (run_id,)
        )
        return {
            "run": dict(zip(COLUMNS, row[0], strict=True)),
            "journal": [list(r) for r in journal],
            "attempts": [list(a) for a in attempts],
            "signals": [list(s) for s in signals],
        }

    def load_runs(self, dumps: list[dict[str, Any]]) -> None:
        """Insert runs written by ``dump_run``, all or none. A run that was running is marked interrupted."""
        with self._tx() as conn:
            for item in dumps:
                values = dict(item["run"])
                if values.get("status") == "running":
                    values["status"] = "interrupted"  # its owner is on another machine
                values["owner"] = values["lease_until"] = None
                self._insert_run(conn, values, encode=False)
                rid = values["id"]
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO run_journal (run_id, seq, kind, body) VALUES (%s, %s, %s, %s)",
                        [(rid, *r) for r in item["journal"]],
                    )
                    cur.executemany(
                        "INSERT INTO run_attempts (run_id, n, source_hash, started, ended, outcome, "
                        "replayed, first_seq) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                        [(rid, *r) for r in item["attempts"]],
                    )
                    cur.executemany(
                        "INSERT INTO signals (run_id, event, created, delivered_seq) VALUES (%s, %s, %s, %s)",
                        [(rid, *r) for r in item["signals"]],
                    )


def _scalar(conn: psycopg.Connection[Any], sql: str, args: Any = ()) -> Any:
    """The first column of the one row ``sql`` returns (an aggregate, RETURNING)."""
    row = conn.execute(sql, args).fetchone()
    assert row is not None, sql
    return row[0]


def _row_to_run(row: tuple[Any, ...]) -> RunRow:
    return run_from_values(dict(zip(COLUMNS, row[:-1], strict=True)), row[-1])
