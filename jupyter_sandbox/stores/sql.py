"""One store contract over two databases: the methods SQLite and PostgreSQL share.

``SQLStore`` is every ``Store`` method whose logic is the same on both backends, each statement
written once in dialect.py's neutral SQL; saved scripts (scripts.py) and signals (signals.py) are
mixed in. A backend supplies its connections (``_tx``, ``_statement``, ``_read``, ``_many``), its
fenced journal writes (``_insert_entries``) and what is its own: due runs, the change counter,
migrations, NOTIFY.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import cbor2

from ..errors import RunBusyError, RunNotFound, RunStateError, StoreError
from . import migrations
from .base import OWNER, RunRow
from .common import ACTIVE, BLOBS, COLUMNS, ROW, VALUES, Heartbeat, lease_held, lease_lost, run_from_values
from .dialect import C, by_run_id, scalar
from .row_rules import decode_value
from .rows import Entry, decode_journal
from .runs_table import RunStatus
from .scripts import ScriptsTable
from .signals import JOURNAL_BYTES, PENDING, SignalsTable

__all__ = [
    "ATTEMPT_ROW",
    "DUE",
    "FIRST_SEQ",
    "RESERVE_DUE",
    "RESTART",
    "SQLStore",
    "assignments",
    "due_order",
    "insert_run",
    "stored_run",
]


# A run's columns in COLUMNS' order, each value read from its row of run_values (none: NULL, as a column read).
_RUN = ", ".join(
    f"(SELECT value FROM run_values WHERE run_id = runs.id AND name = '{c}')" if c in VALUES else c for c in COLUMNS
)
_PUT_VALUE = (
    "INSERT INTO run_values (run_id, name, value) VALUES (?, ?, ?) "
    "ON CONFLICT (run_id, name) DO UPDATE SET value = EXCLUDED.value"
)
_DROP_VALUE = "DELETE FROM run_values WHERE run_id = ? AND name = ?"
_SELECT_RUN = f"SELECT {_RUN}, {{now}} FROM runs"  # the clock read with the row: the lease is judged by it
_ATTEMPT = ("n", "source_hash", "started", "ended", "outcome", "replayed", "first_seq")
_ATTEMPTS = ", ".join(_ATTEMPT)
_JOURNAL = "FROM run_journal WHERE run_id = ?"
# An upsert both speak (SQLite 3.24+): a row already under this number is started afresh (INSERT OR REPLACE).
ATTEMPT_ROW = "INSERT INTO run_attempts (run_id, n, source_hash, started, first_seq)"
RESTART = (
    "ON CONFLICT (run_id, n) DO UPDATE SET source_hash = EXCLUDED.source_hash, started = EXCLUDED.started, "
    "first_seq = EXCLUDED.first_seq, ended = NULL, outcome = NULL, replayed = NULL"
)
_START_ATTEMPT = f"{ATTEMPT_ROW} VALUES (?, ?, ?, ?, ?) {RESTART}"
FIRST_SEQ = "SELECT COALESCE(MAX(seq) + 1, 0) FROM run_journal WHERE run_id = ?"  # a new attempt's first entry
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


def assignments(fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bytes | None]]:
    """What an update of ``fields`` writes: the columns ``UPDATE runs`` sets (blobs in CBOR, ``updated`` now),
    and the run's values among them (CBOR; None: the value's row removed). Names that are not a run's own
    are refused (they go into the statement)."""
    unknown = set(fields) - set(COLUMNS)
    if unknown:
        raise StoreError(f"runs have no column {sorted(unknown)[0]!r}")
    encoded = {k: cbor2.dumps(v) if k in BLOBS and v is not None else v for k, v in fields.items()}
    row = {k: v for k, v in encoded.items() if k not in VALUES}
    row["updated"] = time.time()
    return row, {k: v for k, v in encoded.items() if k in VALUES}


def stored_run(values: dict[str, Any], *, encode: bool) -> tuple[dict[str, Any], dict[str, bytes]]:
    """A run's columns as its runs row stores them, and its values that are not None (as run_values rows
    store them): blobs CBOR-encoded, or with ``encode`` False already CBOR (an export's)."""

    def stored(c: str) -> Any:
        return cbor2.dumps(values[c]) if encode and c in BLOBS and values[c] is not None else values[c]

    row = {c: stored(c) for c in ROW if c in values}
    return row, {v: stored(v) for v in VALUES if values.get(v) is not None}


def insert_run(row: dict[str, Any]) -> str:
    """The ``INSERT`` of a runs row holding ``row``'s columns."""
    return f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})"


def run_from_row(row: tuple[Any, ...]) -> RunRow:
    """A run from ``_SELECT_RUN``'s row: its columns, then the store's clock."""
    return run_from_values(dict(zip(COLUMNS, row[:-1], strict=True)), row[-1])


class SQLStore(ScriptsTable, SignalsTable[C]):
    """The ``Store`` methods (base.py) both SQL backends share, over the backend's connections."""

    lease_seconds: float
    _heartbeat: Heartbeat
    _skew = 0.0  # the store's clock less this machine's, s: read with every claim (0 on SQLite: its clock is ours)

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
        self._create(*stored_run({c: getattr(run, c) for c in COLUMNS}, encode=True))
        return run

    def _create(self, row: dict[str, Any], values: dict[str, bytes]) -> None:
        """A new run's row and its values, in one transaction when there are values."""
        with self._writing(bool(values)) as conn:
            self._insert_run(conn, row, values)

    def _writing(self, statements: bool) -> AbstractContextManager[C]:
        """A connection for a write: one transaction when it takes more than one statement (a run's values too)."""
        return self._tx() if statements else self._statement()

    def _insert_run(self, conn: C, row: dict[str, Any], values: dict[str, bytes]) -> None:
        try:
            conn.execute(self._sql(insert_run(row)), [*row.values()])
        except self.dialect.duplicate as exc:
            raise self._taken(row["id"]) from exc
        self._put_values(conn, row["id"], dict(values))

    def _taken(self, run_id: str) -> StoreError:
        return StoreError(f"a run {run_id} already exists in {self.path}", path=self.path)

    def _put_values(self, conn: C, run_id: str, values: dict[str, bytes | None]) -> None:
        """Write a run's values (CBOR) to run_values in ``conn``'s transaction; a None removes the value's row."""
        for name, blob in values.items():
            if blob is None:
                conn.execute(self._sql(_DROP_VALUE), (run_id, name))
            else:
                conn.execute(self._sql(_PUT_VALUE), (run_id, name, blob))

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
        with self._writing(any(v in fields for v in VALUES)) as conn:
            self._update(conn, run_id, fields)

    def _update(self, conn: C, run_id: str, fields: dict[str, Any], where: str = "", args: tuple[Any, ...] = ()) -> int:
        """Update the run's row (and its values' rows, once the row matched ``where``); the rows matched."""
        row, values = assignments(fields)
        sets = ", ".join(f"{k} = ?" for k in row)
        sql = self._sql(f"UPDATE runs SET {sets} WHERE id = ?{where}")
        changed = conn.execute(sql, (*row.values(), run_id, *args)).rowcount
        if changed:
            self._put_values(conn, run_id, values)
        return int(changed)

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
            self._take(conn, run_id, attempt, now + self.lease_seconds, source_hash, clock)
        ACTIVE.add(run_id)  # only once the claim committed: a failed claim leaves nothing held
        self._heartbeat.hold(run_id, attempt)
        return attempt

    def _take(self, conn: C, run_id: str, attempt: int, until: float, source_hash: str, clock: float) -> None:
        """In the claim's transaction, with the run's row locked: make it this process's at ``attempt`` and
        start the attempt's row. Its ``first_seq`` is read now, after the lock: it counts every append
        that got in before the claim."""
        first_seq = scalar(conn, self._sql(FIRST_SEQ), (run_id,))
        claimed = {"status": "running", "owner": OWNER, "attempt": attempt, "wake_at": None, "lease_until": until}
        self._update(conn, run_id, claimed)
        conn.execute(self._sql(_START_ATTEMPT), (run_id, attempt, source_hash, clock, first_seq))

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
        ended = {"status": status, "lease_until": None, **fields}
        try:
            if wake_on is None:  # nothing to read under the run's lock
                self._end(run_id, attempt, ended, entries, replayed)
                return False
            with self._tx() as conn:
                self._end_in(conn, run_id, attempt, ended, entries, replayed)
                for signal_id, blob in conn.execute(self._sql(PENDING), (queue or run_id,)).fetchall():
                    if wake_on(decode_value(run_id, f"signal {signal_id}", blob)):
                        conn.execute(self._sql("UPDATE runs SET wake_at = 0 WHERE id = ?"), (run_id,))
                        return True
                return False
        finally:
            # Even when the write failed (disk full), this process no longer runs it: the
            # next resume may take it over instead of finding it "already being resumed".
            self.release(run_id)

    def _end(
        self, run_id: str, attempt: int, ended: dict[str, Any], entries: list[tuple[Entry, bytes]], replayed: int
    ) -> None:
        """An attempt's end in a transaction of its own (``finish_attempt`` without ``wake_on``)."""
        with self._tx() as conn:
            self._end_in(conn, run_id, attempt, ended, entries, replayed)

    def _end_in(
        self,
        conn: C,
        run_id: str,
        attempt: int,
        ended: dict[str, Any],
        entries: list[tuple[Entry, bytes]],
        replayed: int,
    ) -> None:
        """The run's new status (fenced: only the attempt that holds the run may end it), its last entries and
        its attempt's row, in ``conn``'s transaction."""
        changed = self._update(conn, run_id, ended, " AND attempt = ? AND status = 'running'", (attempt,))
        if changed == 0 and conn.execute(self._sql("SELECT 1 FROM runs WHERE id = ?"), (run_id,)).fetchone():
            raise self._refused(conn, run_id, attempt)  # (a run this store lacks: a check's scratch store)
        self._insert_entries(conn, run_id, entries, fenced=False)
        sql = "UPDATE run_attempts SET ended = ?, outcome = ?, replayed = ? WHERE run_id = ? AND n = ?"
        conn.execute(self._sql(sql), (time.time(), ended["status"], replayed, run_id, attempt))

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
        return int(self._read(self._sql(JOURNAL_BYTES), (run_id,))[0][0])

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
                self._insert_run(conn, *stored_run(values, encode=False))
                rid = values["id"]
                tables = (
                    ("run_journal (run_id, seq, kind, body)", 4, item["journal"]),
                    (f"run_attempts (run_id, {_ATTEMPTS})", 1 + len(_ATTEMPT), item["attempts"]),
                    ("signals (run_id, event, created, delivered_seq)", 4, item["signals"]),
                )
                for table, width, rows in tables:
                    sql = self._sql(f"INSERT INTO {table} VALUES ({', '.join('?' * width)})")
                    self._many(conn, sql, [(rid, *r) for r in rows])
