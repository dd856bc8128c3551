"""Signals in a SQL store: events queued for a run, delivered into its journal exactly once.

One table, ``signals (id, run_id, event, created, delivered_seq)``: an event is queued with
``add_signal`` and, in one transaction, marked delivered and journaled by ``deliver_signal``, so a
signal is never lost between the queue and the journal, nor delivered twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import cbor2

from ..errors import RunNotFound, RunStateError
from .dialect import C, SQLAccess, by_run_id, scalar
from .row_rules import decode_value
from .rows import Entry
from .runs_table import ENDED

__all__ = ["JOURNAL_BYTES", "PENDING", "SignalsTable"]

PENDING = "SELECT id, event FROM signals WHERE run_id = ? AND delivered_seq IS NULL ORDER BY id"
# LENGTH of a BLOB (SQLite) and of a bytea (PostgreSQL) counts bytes. (Also a run's own size: journal_bytes.)
JOURNAL_BYTES = "SELECT COALESCE(SUM(LENGTH(body)), 0) FROM run_journal WHERE run_id = ?"


class SignalsTable(SQLAccess[C]):
    """The signal methods of a SQL store (``SQLStore`` mixes them in)."""

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
                used = conn.execute(self._sql(JOURNAL_BYTES), (wake or run_id,)).fetchone()
                held = conn.execute(self._sql(PENDING), (run_id,)).fetchall()
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
        rows = self._read(self._sql(PENDING), (run_id,))
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
            for signal_id, blob in conn.execute(self._sql(PENDING + "{for_update}"), (queue or run_id,)).fetchall():
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
