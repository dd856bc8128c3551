"""The store contract: what the engine may ask of any backend, and the run row it gets back.

A backend is one module (``sqlite.py`` today) with a class that satisfies
``Store``. The engine sees only this protocol; the facade picks the backend
(``open_store``). Every method below says what it guarantees; a conformance
test suite (tests/test_store.py and friends) holds every backend to it.
"""

from __future__ import annotations

import hashlib
import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .migrations import SCHEMA_VERSION
from .rows import Entry
from .runs_table import RunStatus
from .scripts import SavedScript

__all__ = ["OWNER", "SCHEMA_VERSION", "RunRow", "Store", "new_run_id", "source_hash"]


# Who holds a run's lease: host, pid, and a token that tells this process
# apart from an earlier one that had the same pid.
OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def source_hash(source: str) -> str:
    """The short hash an attempt records of the source it ran."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def new_run_id() -> str:
    return "r-" + uuid.uuid4().hex[:16]


@dataclass
class RunRow:
    """A run as stored. ``input``/``output``/``error``/``options`` are plain Python values."""

    id: str
    kind: str
    status: RunStatus
    source: str | None = None
    name: str | None = None
    source_hash: str | None = None
    input: Any = None
    output: Any = None
    error: Any = None
    parent: str | None = None
    predecessor: str | None = None
    successor: str | None = None
    created: float = 0.0
    updated: float = 0.0
    attempt: int = 0
    owner: str | None = None
    wake_at: float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    lease_until: float | None = None  # while running: when the owner's lease expires (the store's clock, s)

    def to_dict(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "id",
                "name",
                "kind",
                "status",
                "source_hash",
                "input",
                "output",
                "error",
                "parent",
                "predecessor",
                "successor",
                "created",
                "updated",
                "attempt",
                "wake_at",
            )
        }


class Store(Protocol):
    """Runs, their journals, attempts and signals. Every error is a ``StoreError`` (or a subclass).

    Each write is one transaction: after a crash it happened whole or not at all.
    Methods may be called from any thread.

    Ownership is a lease (common.py): ``claim`` makes this process the run's owner
    until ``lease_until`` and increments the run's ``attempt``, which is the lease's
    epoch. The store renews the leases it holds while their runs run. Every journal
    write carries its attempt (``Entry.attempt``) and is refused with ``RunBusyError``,
    in the same statement, once another claim took the run over (fencing).

    Optional, found by ``getattr``: ``listen()``, a listener (a connection of its own)
    whose ``wait(timeout)`` returns the ids of runs changed since (a run's row or its
    signals), and ``close()``; and ``closed``, true once the store is closed. The
    scheduler and the run cards wake on it; a store without it is polled. And
    ``now_ms()``: the store's clock in epoch ms (no round trip), which the default clock follows
    for due times. And ``lease_fresh(run_id, epoch)``: true while that attempt's lease was claimed or
    renewed so lately that no takeover without ``force`` can have happened; without
    it, every call is committed before its action runs.
    """

    path: str
    lease_seconds: float  # how long a claim holds without renewal

    def close(self) -> None:
        """Release the connection; the store is unusable afterwards."""

    def migrate(self) -> tuple[int, int]:
        """Bring the store's tables up to this version (migrations.py); returns (version before, after).

        Opening a current store runs no DDL; this is the explicit step an owner runs once per upgrade
        (``jupyter-sandbox migrate --store URL``). A no-op on a current store.

        >>> from jupyter_sandbox.stores import open_store
        >>> before, after = open_store(":memory:").migrate()
        >>> before == after
        True
        """

    # -- runs ----------------------------------------------------------------------

    def create_run(self, run: RunRow) -> RunRow:
        """Insert a new run (status as given) with its creation time; returns it."""

    def get_run(self, run_id: str) -> RunRow:
        """The run, or ``RunNotFound``. A ``running`` run whose lease expired (or whose owner on this
        host is gone) reads as ``stalled``."""

    def list_runs(self, *, status: RunStatus | None = None, top_level: bool = False, limit: int = 200) -> list[RunRow]:
        """Runs, newest first; at most ``limit``, a whole number, 0 or more (anything else is a ``ValueError``)."""

    def due_runs(self, now_ms: float, limit: int = 100) -> list[str]:
        """Parked runs whose wake time is at or before ``now_ms``, then running runs whose lease expired.

        At most ``limit``, each reserved for this process for one lease (owner and ``lease_until`` on
        the row), so other workers' ``due_runs`` pass them by: N workers share the due runs.
        """

    def children(self, run_id: str) -> list[str]:
        """The ids of a run's child runs, oldest first."""

    def update_run(self, run_id: str, **fields: Any) -> None:
        """Set columns of a run in one transaction."""

    def change_counter(self) -> int:
        """A number that grows whenever anything in the store changes (cheap to poll)."""

    # -- ownership -----------------------------------------------------------------

    def claim(self, run_id: str, allowed: tuple[RunStatus, ...], *, source_hash: str, force: bool = False) -> int:
        """Take the run for an attempt: a compare-and-set on its status (one of ``allowed``, or ``stalled``).

        Returns the new attempt's number, the lease's epoch. A run whose lease someone else holds
        raises ``RunBusyError`` (``force`` takes it anyway); a run in another status raises
        ``RunStateError``. Exactly one of two concurrent claims wins. The lease lasts
        ``lease_seconds`` and is renewed until ``finish_attempt`` or ``release``.
        """

    def release(self, run_id: str) -> None:
        """This process no longer runs the run (without writing anything): stop renewing its lease."""

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
        """Append the attempt's last entries and set the run's status and fields, in one transaction.

        Fenced: refused (``RunBusyError``, nothing written) unless ``attempt`` still holds the run.
        The lease is released either way. ``wake_on`` (a run that parks): in the same transaction, after
        the run's row is locked, a pending signal of ``queue`` it accepts makes the run due at once
        (``wake_at`` 0); returns whether one did.
        """

    def attempts(self, run_id: str) -> list[dict[str, Any]]:
        """Each attempt: ``n``, ``source_hash``, ``started``, ``ended``, ``outcome``, ``replayed``, ``first_seq``."""

    # -- the journal -----------------------------------------------------------------

    def entries(self, run_id: str) -> list[Entry]:
        """The run's journal in ``seq`` order, each row validated (``StoreError`` names the run, seq and field)."""

    def journal_bytes(self, run_id: str) -> int:
        """The encoded size of the run's journal."""

    def append(self, run_id: str, entries: list[tuple[Entry, bytes]]) -> None:
        """Commit entries (already encoded) at their ``seq``; durable when this returns.

        Fenced: refused (``RunBusyError``, nothing written) once the entries' attempt no longer
        holds the run. Entries of a run the store does not have (a check's scratch store) are kept.
        """

    def answer_stamp(self, run_id: str) -> dict[str, Any]:
        """The store's witness for an answer about to be recorded in ``run_id``: ``answered_at`` (seconds,
        the store's clock) and, on PostgreSQL, ``role`` (the server's ``current_user``, both taken in one
        statement that tries recording an answer and rolls it back). ``AnswerRefused`` when the store does
        not let this connection record answers (README, "Who approves"); nothing is written either way."""

    def copy_prefix(self, source_id: str, target_id: str, before_seq: int) -> int:
        """Copy the journal before ``before_seq`` and its attempts to another run (a fork); returns attempts copied."""

    # -- signals: delivery and journal entry commit together (exactly once) -----------

    def add_signal(
        self,
        run_id: str,
        event: Any,
        *,
        wake: str | None = None,
        admit: Callable[[int, list[Any]], None] | None = None,
    ) -> int:
        """Keep an event in ``run_id``'s queue (``RunNotFound`` if there is none); returns the signal's id.

        In the same transaction, with its row locked first, the run ``wake`` (if given) is made due at once
        if it is parked, and refuses the signal (``RunStateError``) if it completed; then ``admit`` (if
        given) is called with the journal bytes of ``wake`` (else ``run_id``) and the undelivered events of
        ``run_id``'s queue, and refuses the signal by raising, so that concurrent senders count each other.
        """

    def pending_signals(self, run_id: str) -> list[tuple[int, Any]]:
        """Undelivered signals, oldest first."""

    def deliver_signal(
        self,
        run_id: str,
        accept: Callable[[Any], bool],
        write: Callable[[int, Any], list[tuple[Entry, bytes]]],
        *,
        queue: str | None = None,
    ) -> bool:
        """Deliver the oldest signal of ``queue`` (default ``run_id``'s) ``accept`` takes: mark it and append
        ``write``'s entries to ``run_id``'s journal in one transaction.

        The append is fenced as in ``append``: a signal is never marked delivered to a lost attempt.
        """

    # -- saved scripts (scripts.py) -----------------------------------------------------

    def save_script(self, name: str, source: str | None, about: dict[str, Any], *, once: bool = False) -> int:
        """Store a new version of a saved script (``source`` None removes it); returns its version.

        Atomic: concurrent saves of one name get consecutive versions, none lost. ``once``: if a version
        with this very source and ``about`` is stored already, its number is returned and nothing written
        (decided in the same transaction, so of two such saves at once exactly one writes)."""

    def script(self, name: str, version: int | None = None) -> SavedScript | None:
        """One version of a saved script (the newest without ``version``); None if none, or removed."""

    def scripts(self, *, removed: bool = False) -> list[SavedScript]:
        """The newest version of every saved script not removed (``removed``: those too), by name."""

    def script_heads(self) -> list[tuple[str, int, bool]]:
        """``(name, newest version, removed)`` of every saved script, by name (no source, no schemas read)."""

    def script_versions(self, name: str) -> list[SavedScript]:
        """Every version of a saved script, oldest first (a removal's too: its ``source`` is None)."""

    # -- moving runs between stores (portable.py) --------------------------------------

    def dump_run(self, run_id: str) -> dict[str, Any]:
        """A run's rows as plain values: the run, its journal, attempts and signals."""

    def load_runs(self, dumps: list[dict[str, Any]]) -> None:
        """Insert runs written by ``dump_run``, all or none."""
