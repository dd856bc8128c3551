"""What every SQL backend shares: a run's columns and values, decoding a run row, and the lease rules.

A claim is a lease: ``owner`` (host:pid:token), ``lease_until`` (seconds since
the epoch, on the store's clock) and an epoch, which is the run's ``attempt``
number: every claim increments it, and every journal write names the attempt
it belongs to, so a write from an attempt that is no longer the run's current
one is refused in the same statement (fencing). While this process runs a run,
a ``Heartbeat`` thread renews its lease; a paused or partitioned process stops
renewing, its lease expires, and the run reads as ``stalled``.
"""

from __future__ import annotations

import inspect
import logging
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from ..errors import RunBusyError, StoreError
from .base import OWNER, RunRow
from .runs_table import decode_run

__all__ = [
    "ACTIVE",
    "BLOBS",
    "COLUMNS",
    "Heartbeat",
    "ROW",
    "VALUES",
    "lease_held",
    "lease_lost",
    "lease_seconds",
    "run_from_values",
    "store_timeout",
]

log = logging.getLogger("jupyter_sandbox.stores")

BLOBS = ("input", "output", "error", "options")
COLUMNS = (
    "id",
    "name",
    "kind",
    "status",
    "source",
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
    "owner",
    "wake_at",
    "options",
    "lease_until",
)

# A run's values, rows of run_values (migrations step 4) rather than columns of runs: SQLite and PostgreSQL
# rewrite a whole row on every UPDATE, and a run's row is updated at every claim, lease renewal and end.
VALUES = ("input", "output")
ROW = tuple(c for c in COLUMNS if c not in VALUES)  # the columns of the runs table itself

ACTIVE: set[str] = set()  # runs this process is running right now (any store)

DEFAULT_LEASE_SECONDS = 30.0


def lease_seconds(value: float | None = None) -> float:
    """The lease length: ``value``, else ``JUPYTER_SANDBOX_LEASE_SECONDS``, else 30 s."""
    if value is None:
        text = os.environ.get("JUPYTER_SANDBOX_LEASE_SECONDS")
        try:
            value = float(text) if text else DEFAULT_LEASE_SECONDS
        except ValueError as exc:
            raise StoreError(f"JUPYTER_SANDBOX_LEASE_SECONDS={text!r} is not a number of seconds") from exc
    if not 0.05 <= value <= 86_400:
        raise StoreError(f"a lease of {value} s is out of range (0.05 s to a day)")
    return float(value)


def store_timeout(value: float | None = None) -> float:
    """How long a call waits for the server (a connection, a lock): ``value``, else
    ``JUPYTER_SANDBOX_STORE_TIMEOUT``, else 10 s."""
    if value is None:
        text = os.environ.get("JUPYTER_SANDBOX_STORE_TIMEOUT")
        try:
            value = float(text) if text else 10.0
        except ValueError as exc:
            raise StoreError(f"JUPYTER_SANDBOX_STORE_TIMEOUT={text!r} is not a number of seconds") from exc
    if not 0.1 <= value <= 3600:
        raise StoreError(f"a store timeout of {value} s is out of range (0.1 s to an hour)")
    return float(value)


def run_from_values(values: dict[str, Any], now: float) -> RunRow:
    """A ``RunRow`` from a row's columns (blobs still CBOR); ``now`` is the store's clock, for the lease."""
    values = decode_run(values)  # every column and blob checked (rows.py)
    if values["status"] == "running" and not lease_held(values["owner"], values["lease_until"], now, values["id"]):
        # Its process stopped (killed, paused, cut off, or its last write failed) without recording the end.
        values["status"] = "stalled"
    return RunRow(**values)


def lease_held(owner: str | None, lease_until: float | None, now: float, run_id: str) -> bool:
    """Whether some process may still be running the run.

    An expired lease is never held. This process's own lease is held while it
    runs the run. A lease from another process on this host is lost as soon as
    that process is gone. A row without an expiry (written before leases) is
    held while its owner may be alive.
    """
    if lease_until is not None and lease_until <= now:
        return False
    if owner == OWNER:
        return run_id in ACTIVE
    return _owner_alive(owner)


def _owner_alive(owner: str | None) -> bool:
    if not owner:
        return False
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname():
        return True  # another machine: only its lease's expiry tells
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    return True


def lease_lost(run_id: str, epoch: int, current: tuple[Any, ...] | None) -> RunBusyError:
    """The error for a write refused because attempt ``epoch`` no longer holds the run."""
    if current is None:
        now = "it no longer exists"
    else:
        status, attempt, owner = current
        now = f"it is {status} at attempt {attempt}" + (f", held by {owner}" if status == "running" else "")
    return RunBusyError(
        f"run {run_id}: attempt {epoch} lost its lease ({now}): another process took the run over "
        "after this one stopped renewing it, so this write was refused and nothing of it was "
        "recorded",
        run_id=run_id,
        status=current[0] if current else None,
    )


class Heartbeat:
    """Renews the leases a store holds, every third of the lease, on a daemon thread."""

    def __init__(self, renew: Callable[[str, int], bool], seconds: float):
        # Weakly: the thread must not keep its store alive, so a store dropped without close() is
        # collected (its connection closed) and the thread ends at its next beat.
        self._renew: Callable[[], Callable[[str, int], bool] | None] = (
            weakref.WeakMethod(renew) if inspect.ismethod(renew) else lambda: renew
        )
        self.interval = seconds / 3
        self.held: dict[str, int] = {}  # run id -> the epoch (attempt) this store holds it at
        self.renewed: dict[str, float] = {}  # run id -> when (monotonic) its lease was last claimed or renewed
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, run_id: str, epoch: int) -> None:
        with self._lock:
            self.held[run_id] = epoch
            self.renewed[run_id] = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(target=self._main, name="jupyter-sandbox-lease", daemon=True)
                self._thread.start()

    def drop(self, run_id: str) -> None:
        with self._lock:
            self.held.pop(run_id, None)
            self.renewed.pop(run_id, None)

    def fresh(self, run_id: str, epoch: int) -> bool:
        """Whether attempt ``epoch`` certainly still holds the run: claimed or renewed within two beats.

        No claim without ``force`` takes a lease before it expires, so until then nothing can
        have taken the run over; past that (a paused process) it may have been.
        """
        if self.held.get(run_id) != epoch:
            return False
        return time.monotonic() - self.renewed.get(run_id, float("-inf")) < 2 * self.interval

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _main(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                held = list(self.held.items())
            renew = self._renew()
            if renew is None:  # the store is gone
                return
            for run_id, epoch in held:
                try:
                    asked = time.monotonic()  # the lease renewed runs from no earlier than this
                    if renew(run_id, epoch):
                        with self._lock:
                            if self.held.get(run_id) == epoch:
                                self.renewed[run_id] = asked
                    else:  # taken over: its next write will be refused
                        with self._lock:
                            if self.held.get(run_id) == epoch:
                                del self.held[run_id]
                except Exception:  # the store is down: try again next beat; the lease may lapse
                    log.warning("renewing the lease of run %s failed", run_id, exc_info=True)
            del renew  # not held while waiting for the next beat
