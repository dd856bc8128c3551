"""One store contract over two databases: the SQL and the methods SQLite and PostgreSQL share.

Every statement here is written once, with SQLite's placeholders (``?``, or ``:name`` where a value
is used twice or the store's clock is read) and ``{fields}`` for the few clauses that truly differ
(``Dialect``: the clock, row locks). ``render`` turns a statement into a driver's paramstyle, once
per statement. ``SQLStore`` is every ``Store`` method whose logic is the same on both backends; a
backend supplies its connections (``_tx``, ``_statement``, ``_read``, ``_many``), its fenced journal
writes (``_insert_entries``) and what is its own: due runs, the change counter, migrations, NOTIFY.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar

import cbor2

from ..errors import RunBusyError, RunNotFound, RunStateError, StoreError
from . import migrations
from .base import OWNER, RunRow
from .common import ACTIVE, BLOBS, COLUMNS, Heartbeat, lease_held, lease_lost, run_from_values
from .rows import ENDED, Entry, RunStatus, decode_journal, decode_value
from .scripts import ScriptsTable

__all__ = ["DUE", "RESERVE_DUE", "Dialect", "SQLStore", "due_order", "render", "scalar"]


@dataclass(frozen=True, eq=False)  # one per backend: hashed by identity, cheaply (render's cache key)
class Dialect:
    """What one database spells its own way in the shared statements."""

    paramstyle: str  # "qmark" (sqlite3: ? and :name) or "format" (psycopg: %s and %(name)s)
    now: str  # the store's clock, seconds since the epoch: a bound :now (Python's) or the server's
    for_update: str  # locks the rows a transaction reads to change (SQLite's write lock covers the file)
    skip_locked: str  # due runs: pass by rows another worker is reserving
    duplicate: type[Exception]  # the driver's error for a primary key already taken


_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")  # :name, not a PostgreSQL ::cast


@functools.lru_cache(maxsize=512)  # a few dozen statements, plus the column sets of update_run
def render(template: str, dialect: Dialect) -> str:
    """``template`` in ``dialect``'s paramstyle, with its ``{now}``, ``{for_update}`` and ``{skip_locked}``."""
    text = template
    if dialect.paramstyle == "format":
        text = _NAMED.sub(r"%(\1)s", text.replace("%", "%%")).replace("?", "%s")
    return text.format(now=dialect.now, for_update=dialect.for_update, skip_locked=dialect.skip_locked)


class Cursor(Protocol):
    """What the shared methods read of a statement's result (a DB-API cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """What the shared methods use of a connection: sqlite3's and psycopg's alike."""

    def execute(self, sql: str, args: Any = ..., /) -> Cursor: ...


C = TypeVar("C", bound=Connection)

_RUN = ", ".join(COLUMNS)
_SELECT_RUN = f"SELECT {_RUN}, {{now}} FROM runs"  # the clock read with the row: the lease is judged by it
_ATTEMPT = ("n", "source_hash", "started", "ended", "outcome", "replayed", "first_seq")
_ATTEMPTS = ", ".join(_ATTEMPT)
_JOURNAL = "FROM run_journal WHERE run_id = ?"
# LENGTH of a BLOB (SQLite) and of a bytea (PostgreSQL) counts bytes.
_JOURNAL_BYTES = "SELECT COALESCE(SUM(LENGTH(body)), 0) FROM run_journal WHERE run_id = ?"
_PENDING = "SELECT id, event FROM signals WHERE run_id = ? AND delivered_seq IS NULL ORDER BY id"
# An upsert both speak (SQLite 3.24+): a row already under this number is started afresh (INSERT OR REPLACE).
_START_ATTEMPT = (
    "INSERT INTO run_attempts (run_id, n, source_hash, started, first_seq) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (run_id, n) DO UPDATE SET source_hash = EXCLUDED.source_hash, started = EXCLUDED.started, "
    "first_seq = EXCLUDED.first_seq, ended = NULL, outcome = NULL, replayed = NULL"
)
# Due: a parked top-level run whose wake time came, not reserved by another worker; or a running one
# whose lease expired. :now_ms is the engine's clock (ms), {now} the store's (s).
DUE = (
    "parent IS NULL AND ((status = 'parked' AND wake_at IS NOT NULL AND wake_at <= :now_ms AND (lease_until IS NULL "
    "OR lease_until <= {now} OR owner = :owner)) OR (status = 'running' AND lease_until <= {now}))"
)
RESERVE_DUE = (
    f"UPDATE runs SET owner = :owner, lease_until = {{now}} + :lease WHERE id IN (SELECT id FROM runs WHERE {DUE} "
    "ORDER BY wake_at LIMIT :limit{skip_locked}) RETURNING id, status, wake_at, lease_until"
)


def due_order(rows: list[tuple[Any, ...]]) -> list[str]:
    """Parked runs by wake time, then stalled ones (RETURNING has no order of its own)."""
    return [r[0] for r in sorted(rows, key=lambda r: (r[1] != "parked", r[2] or 0.0, r[3] or 0.0))]


def scalar(conn: Connection, sql: str, args: Any = ()) -> Any:
    """The first column of the one row ``sql`` returns (an aggregate, RETURNING), read to the end."""
    rows = conn.execute(sql, args).fetchall()
    if not rows:
        raise StoreError(f"the run store returned no row for {sql!r:.80}")
    return rows[0][0]


P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def by_run_id(
    absent: Callable[[], Any] | None = None,
) -> Callable[[Callable[Concatenate[S, str, P], R]], Callable[Concatenate[S, str, P], R]]:
    """A run id holding a NUL names no run, on either backend (PostgreSQL's text cannot hold one, so it would
    fail there): ``RunNotFound``, or ``absent()`` where an unknown run reads as empty."""

    def wrap(method: Callable[Concatenate[S, str, P], R]) -> Callable[Concatenate[S, str, P], R]:
        @functools.wraps(method)
        def guarded(self: S, run_id: str, /, *args: P.args, **kwargs: P.kwargs) -> R:
            if isinstance(run_id, str) and "\x00" in run_id:
                if absent is None:
                    raise RunNotFound(run_id)
                return absent()  # type: ignore[no-any-return]
            return method(self, run_id, *args, **kwargs)

        return guarded

    return wrap


def run_from_row(row: tuple[Any, ...]) -> RunRow:
    """A run from ``_SELECT_RUN``'s row: its columns, then the store's clock."""
    return run_from_values(dict(zip(COLUMNS, row[:-1], strict=True)), row[-1])


class SQLStore(ScriptsTable, Generic[C]):
    """The ``Store`` methods (base.py) both SQL backends share, over the backend's connections."""

    dialect: Dialect
    path: str
    lease_seconds: float
    _heartbeat: Heartbeat
    _skew = 0.0  # the store's clock less this machine's, s: read with every claim (0 on SQLite: its clock is ours)

    # -- what a backend supplies ---------------------------------------------------

    def _tx(self) -> AbstractContextManager[C]:
        """A connection inside one transaction: committed when the block ends, rolled back on an error."""
        raise NotImplementedError

    def _statement(self) -> AbstractContextManager[C]:
        """A connection for one write statement (atomic by itself)."""
        raise NotImplementedError

    def _read(self, sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _many(self, conn: C, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """Run ``sql`` once for each of ``rows``."""
        raise NotImplementedError

    def _insert_entries(self, conn: C, run_id: str, entries: list[tuple[Entry, bytes]], fenced: bool = True) -> None:
        raise NotImplementedError

    def _sql(self, template: str) -> str:
        return render(template, self.dialect)

    def now_ms(self) -> float:
        """The store's clock, epoch ms: this machine's corrected by the skew the last claim read (no round trip).

        Due times (timers, event timeouts) are set and compared on it, so processes whose clocks disagree
        agree on when a timer is due.
        """
        return (time.time() + self._skew) * 1000.0

    # -- the schema (migrations.py) -----------------------------------------------

    def _stored_version(self, conn: C, fresh: bool) -> int:
        """The version the store is at: 0 for a store with no tables yet."""
        if fresh:
            return 0
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return migrations.stored_version(self.path, row)

    def _bring_up_to_date(self, conn: C, fresh: bool, base: list[str]) -> tuple[int, int]:
        """Inside the backend's migration lock: run the steps the store lacks; (version before, after).

        ``base`` is the backend's tables at ``BASE_VERSION`` (``IF NOT EXISTS``), created for a fresh
        store and for one from before the base.
        """
        before = self._stored_version(conn, fresh)
        if before == migrations.latest():
            return before, before
        backend: migrations.Backend = "sqlite" if self.dialect.paramstyle == "qmark" else "postgres"
        if before == 0:
            todo = [*base, *migrations.statements(backend, migrations.BASE_VERSION)]
        else:
            todo = migrations.statements(backend, before)
            todo += base if before < migrations.BASE_VERSION else []
        for statement in todo:
            conn.execute(statement)
        upsert = "INSERT INTO meta VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
        conn.execute(self._sql(upsert), (str(migrations.latest()),))
        return before, migrations.latest()

    # -- runs --------------------------------------------------------------------

    def create_run(self, run: RunRow) -> RunRow:
        for what, text in (("id", run.id), ("name", run.name)):
            if isinstance(text, str) and "\x00" in text:  # refused on both backends alike (PostgreSQL's text cannot)
                raise StoreError(f"a run's {what} cannot hold a NUL character: {text!r:.80}", path=self.path)
        now = time.time()
        run.created = run.created or now
        run.updated = now
        with self._statement() as conn:
            self._insert_run(conn, {c: getattr(run, c) for c in COLUMNS}, encode=True)
        return run

    def _insert_run(self, conn: C, values: dict[str, Any], *, encode: bool) -> None:
        cols = [c for c in COLUMNS if c in values]
        args = [cbor2.dumps(values[c]) if encode and c in BLOBS and values[c] is not None else values[c] for c in cols]
        try:
            conn.execute(self._sql(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"), args)
        except self.dialect.duplicate as exc:
            raise StoreError(f"a run {values['id']} already exists in {self.path}", path=self.path) from exc

    @by_run_id()
    def get_run(self, run_id: str) -> RunRow:
        rows = self._read(self._sql(f"{_SELECT_RUN} WHERE id = :id"), {"id": run_id, "now": time.time()})
        if not rows:
            raise RunNotFound(run_id)
        return run_from_row(rows[0])

    def list_runs(self, *, status: RunStatus | None = None, top_level: bool = False, limit: int = 200) -> list[RunRow]:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"limit must be a whole number of runs, 0 or more, not {limit!r:.40}")
        where: list[str] = []
        # Past a 64-bit integer neither database can bind it; no table holds that many runs anyway.
        args: dict[str, Any] = {"now": time.time(), "limit": min(limit, 2**63 - 1)}
        if status:
            where.append("status = :status")
            args["status"] = status
        if top_level:
            where.append("parent IS NULL")
        sql = _SELECT_RUN + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY created DESC LIMIT :limit"
        return [run_from_row(r) for r in self._read(self._sql(sql), args)]

    @by_run_id(list)
    def children(self, run_id: str) -> list[str]:
        return [r[0] for r in self._read(self._sql("SELECT id FROM runs WHERE parent = ? ORDER BY created"), (run_id,))]

    def update_run(self, run_id: str, **fields: Any) -> None:
        with self._statement() as conn:
            self._update(conn, run_id, fields)

    def _update(self, conn: C, run_id: str, fields: dict[str, Any], where: str = "", args: tuple[Any, ...] = ()) -> int:
        unknown = set(fields) - set(COLUMNS)
        if unknown:  # the names go into the statement: only the table's own
            raise StoreError(f"runs have no column {sorted(unknown)[0]!r}")
        fields["updated"] = time.time()
        sets = ", ".join(f"{k} = ?" for k in fields)
        values = [cbor2.dumps(v) if k in BLOBS and v is not None else v for k, v in fields.items()]
        return conn.execute(self._sql(f"UPDATE runs SET {sets} WHERE id = ?{where}"), (*values, run_id, *args)).rowcount

    # -- attempts: the compare-and-set that lets exactly one resume proceed --------

    @by_run_id()
    def claim(self, run_id: str, allowed: tuple[RunStatus, ...], *, source_hash: str, force: bool = False) -> int:
        """Take the run for a new attempt; return its number (the lease's epoch). Exactly one claim wins."""
        with self._tx() as conn:
            clock = time.time()  # inside the transaction: not before a wait for the write lock
            row = conn.execute(
                self._sql("SELECT status, owner, attempt, lease_until, {now} FROM runs WHERE id = :id{for_update}"),
                {"id": run_id, "now": clock},
            ).fetchone()
            if row is None:
                raise RunNotFound(run_id)
            status, owner, attempt, until, now = row
            self._skew = now - clock  # the store's clock, read in the claim (PostgreSQL's; SQLite's is ours)
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
            attempt = int(attempt) + 1
            first_seq = scalar(
                conn, self._sql("SELECT COALESCE(MAX(seq) + 1, 0) FROM run_journal WHERE run_id = ?"), (run_id,)
            )
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
            conn.execute(self._sql(_START_ATTEMPT), (run_id, attempt, source_hash, clock, first_seq))
        ACTIVE.add(run_id)  # only once the claim committed: a failed claim leaves nothing held
        self._heartbeat.hold(run_id, attempt)
        return attempt

    def release(self, run_id: str) -> None:
        ACTIVE.discard(run_id)
        self._heartbeat.drop(run_id)

    def lease_fresh(self, run_id: str, epoch: int) -> bool:
        """Whether attempt ``epoch`` certainly still holds the run (``Heartbeat.fresh``): no takeover
        without ``force`` can have happened, so an effect may start before its call is committed."""
        return self._heartbeat.fresh(run_id, epoch)

    def _renew(self, run_id: str, epoch: int) -> bool:
        """Extend the lease attempt ``epoch`` holds; False once another attempt holds the run."""
        with self._statement() as conn:
            sql = (
                "UPDATE runs SET lease_until = {now} + :lease "
                "WHERE id = :id AND attempt = :epoch AND status = 'running'"
            )
            args = {"now": time.time(), "lease": self.lease_seconds, "id": run_id, "epoch": epoch}
            return conn.execute(self._sql(sql), args).rowcount == 1

    def _refused(self, conn: C, run_id: str, epoch: int) -> RunBusyError:
        row = conn.execute(self._sql("SELECT status, attempt, owner FROM runs WHERE id = ?"), (run_id,)).fetchone()
        return lease_lost(run_id, epoch, row)

    def finish_attempt(
        self,
        run_id: str,
        attempt: int,
        status: RunStatus,
        entries: list[tuple[Entry, bytes]],
        *,
        replayed: int,
        wake_on: Callable[[Any], bool] | None = None,
        queue: str | None = None,
        **fields: Any,
    ) -> bool:
        """Write the attempt's last entries and the run's new status in one transaction, fenced.

        ``wake_on`` (a run that parks): read the pending signals of ``queue`` in that transaction, after the
        run's row is locked; if one is accepted, the run parks due at once (``wake_at`` 0) and this returns
        True. ``add_signal`` locks the same row first, so a signal is seen either here or by its sender.
        """
        try:
            with self._tx() as conn:
                ended = {"status": status, "lease_until": None, **fields}
                fence = " AND attempt = ? AND status = 'running'"  # only the attempt that holds the run may end it
                changed = self._update(conn, run_id, ended, fence, (attempt,))
                if changed == 0 and conn.execute(self._sql("SELECT 1 FROM runs WHERE id = ?"), (run_id,)).fetchone():
                    raise self._refused(conn, run_id, attempt)  # (a run this store lacks: a check's scratch store)
                self._insert_entries(conn, run_id, entries, fenced=False)
                sql = "UPDATE run_attempts SET ended = ?, outcome = ?, replayed = ? WHERE run_id = ? AND n = ?"
                conn.execute(self._sql(sql), (time.time(), status, replayed, run_id, attempt))
                if wake_on is None:
                    return False
                for signal_id, blob in conn.execute(self._sql(_PENDING), (queue or run_id,)).fetchall():
                    if wake_on(decode_value(run_id, f"signal {signal_id}", blob)):
                        conn.execute(self._sql("UPDATE runs SET wake_at = 0 WHERE id = ?"), (run_id,))
                        return True
                return False
        finally:
            # Even when the write failed (disk full), this process no longer runs it: the
            # next resume may take it over instead of finding it "already being resumed".
            self.release(run_id)

    @by_run_id(list)
    def attempts(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._read(self._sql(f"SELECT {_ATTEMPTS} FROM run_attempts WHERE run_id = ? ORDER BY n"), (run_id,))
        return [dict(zip(_ATTEMPT, r, strict=True)) for r in rows]

    # -- the journal ---------------------------------------------------------------

    @by_run_id(list)
    def entries(self, run_id: str) -> list[Entry]:
        rows = self._read(self._sql(f"SELECT seq, body {_JOURNAL} ORDER BY seq"), (run_id,))
        return decode_journal(run_id, rows)

    @by_run_id(int)
    def journal_bytes(self, run_id: str) -> int:
        return int(self._read(self._sql(_JOURNAL_BYTES), (run_id,))[0][0])

    def answer_stamp(self, run_id: str) -> dict[str, Any]:
        return {"answered_at": time.time()}  # the store is a file on this machine: its clock is this one's

    def copy_prefix(self, source_id: str, target_id: str, before_seq: int) -> int:
        """Copy a run's journal before ``before_seq`` (and its attempts) to another run (a fork); attempts copied."""
        with self._tx() as conn:
            conn.execute(
                self._sql(
                    "INSERT INTO run_journal (run_id, seq, kind, body) SELECT ?, seq, kind, body FROM run_journal "
                    "WHERE run_id = ? AND seq < ?"
                ),
                (target_id, source_id, before_seq),
            )
            conn.execute(
                self._sql(
                    f"INSERT INTO run_attempts (run_id, {_ATTEMPTS}) SELECT ?, {_ATTEMPTS} FROM run_attempts "
                    "WHERE run_id = ? AND first_seq < ?"
                ),
                (target_id, source_id, before_seq),
            )
            return int(scalar(conn, self._sql("SELECT COUNT(*) FROM run_attempts WHERE run_id = ?"), (target_id,)))

    # -- signals: delivery and journal entry commit together (exactly once) --------

    @by_run_id()
    def add_signal(
        self,
        run_id: str,
        event: Any,
        *,
        wake: str | None = None,
        admit: Callable[[int, list[Any]], None] | None = None,
    ) -> int:
        """Queue an event for ``run_id``; the run ``wake``, if given and parked, is made due at once.

        The ``wake`` run's row is locked first: a run parking at the same moment (``finish_attempt`` with
        ``wake_on``) either sees this signal or is parked already, and is made due here. A ``wake`` run that
        completed refuses the signal (``RunStateError``): nothing would ever take it. ``admit`` is called
        after that lock with the journal bytes of ``wake`` (else ``run_id``) and the undelivered events of
        ``run_id``'s queue, and refuses the signal by raising: two senders at once each count the other's.
        """
        with self._tx() as conn:
            if wake is not None:
                self._wake_for_signal(conn, wake)
            if conn.execute(self._sql("SELECT 1 FROM runs WHERE id = ?"), (run_id,)).fetchone() is None:
                raise RunNotFound(run_id)
            if admit is not None:
                used = conn.execute(self._sql(_JOURNAL_BYTES), (wake or run_id,)).fetchone()
                held = conn.execute(self._sql(_PENDING), (run_id,)).fetchall()
                admit(int(used[0]), [decode_value(run_id, f"signal {i}", e) for i, e in held])
            sql = self._sql("INSERT INTO signals (run_id, event, created) VALUES (?, ?, ?) RETURNING id")
            return int(scalar(conn, sql, (run_id, cbor2.dumps(event), time.time())))

    def _wake_for_signal(self, conn: C, run_id: str) -> None:
        """Lock the run a signal is for: refuse it if the run completed, make the run due if it is parked."""
        row = conn.execute(self._sql("SELECT status FROM runs WHERE id = ?{for_update}"), (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(run_id)
        if row[0] in ENDED:
            raise RunStateError(
                f"run {run_id} is {row[0].replace('_', ' ')}: a signal to it would never be delivered",
                run_id=run_id,
                status=row[0],
            )
        if row[0] == "parked":
            conn.execute(self._sql("UPDATE runs SET wake_at = 0 WHERE id = ?"), (run_id,))

    @by_run_id(list)
    def pending_signals(self, run_id: str) -> list[tuple[int, Any]]:
        rows = self._read(self._sql(_PENDING), (run_id,))
        return [(int(i), decode_value(run_id, f"signal {i}", e)) for i, e in rows]

    def deliver_signal(
        self,
        run_id: str,
        accept: Callable[[Any], bool],
        write: Callable[[int, Any], list[tuple[Entry, bytes]]],
        *,
        queue: str | None = None,
    ) -> bool:
        """Deliver the oldest undelivered signal of ``queue`` (default: the run's own) ``accept`` takes:
        mark it and journal it in ``run_id``'s journal in one transaction."""
        with self._tx() as conn:
            # {for_update}: a second deliverer waits, then sees the signal delivered.
            for signal_id, blob in conn.execute(self._sql(_PENDING + "{for_update}"), (queue or run_id,)).fetchall():
                event = decode_value(run_id, f"signal {signal_id}", blob)
                if accept(event):
                    entries = write(int(signal_id), event)
                    self._insert_entries(conn, run_id, entries)
                    conn.execute(
                        self._sql("UPDATE signals SET delivered_seq = ? WHERE id = ? AND delivered_seq IS NULL"),
                        (entries[-1][0].seq, signal_id),
                    )
                    return True
        return False

    # -- moving a run between stores (the file format is portable.py's) ----------------

    @by_run_id()
    def dump_run(self, run_id: str) -> dict[str, Any]:
        """A run's rows as plain lists: the run, its journal, attempts and signals."""
        row = self._read(self._sql(f"SELECT {_RUN} FROM runs WHERE id = ?"), (run_id,))
        if not row:
            raise RunNotFound(run_id)
        journal = self._read(self._sql(f"SELECT seq, kind, body {_JOURNAL} ORDER BY seq"), (run_id,))
        attempts = self._read(self._sql(f"SELECT {_ATTEMPTS} FROM run_attempts WHERE run_id = ? ORDER BY n"), (run_id,))
        signals = self._read(
            self._sql("SELECT event, created, delivered_seq FROM signals WHERE run_id = ? ORDER BY id"), (run_id,)
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
                tables = (
                    ("run_journal (run_id, seq, kind, body)", 4, item["journal"]),
                    (f"run_attempts (run_id, {_ATTEMPTS})", 1 + len(_ATTEMPT), item["attempts"]),
                    ("signals (run_id, event, created, delivered_seq)", 4, item["signals"]),
                )
                for table, width, rows in tables:
                    sql = self._sql(f"INSERT INTO {table} VALUES ({', '.join('?' * width)})")
                    self._many(conn, sql, [(rid, *r) for r in rows])
