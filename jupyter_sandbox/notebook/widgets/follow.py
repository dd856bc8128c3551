"""Following a parked run to its end, whichever process wakes it.

Every kernel on a store runs a scheduler and exactly one of them wins a due
run. When this kernel's scheduler wins, ``on_woken`` hands the real outcome
to the view that showed the run parked. When another kernel (a second
notebook in the same folder) wins, nothing here is told: so while any view
waits, a daemon thread reads the store once a second and, once the run has
moved on, shows what the store says: the output (and ``-o``), the pending
interrupts with their panels, the error.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

from ...errors import Interrupt, RunParked, SandboxError, SandboxInterrupt
from ...results import RunResult
from ...sandbox import Sandbox


__all__ = ["on_woken", "pending_interrupts", "stop_waiting", "stored_outcome", "wait_for"]

class FollowedView(Protocol):
    """What following a parked run needs of the view that shows it (run_view.RunView)."""

    context: Any

    def finish(self, outcome: Any, live: bool = ...) -> None: ...


class RunCancelled(SandboxError):
    """The kernel was interrupted while a run was going; the engine marked the run ``cancelled``."""

    def __init__(self, run_id: str | None):
        self.run_id = run_id
        hint = f"; `%sandbox resume {run_id}` runs it again from its journal" if run_id else ""
        super().__init__(f"run {run_id or '?'} cancelled (kernel interrupted){hint}")


INTERVAL = 1.0
_WAITING: dict[str, tuple["FollowedView", int]] = {}  # parked run id -> (its view, the attempt that parked)
_lock = threading.Lock()
_thread: threading.Thread | None = None


def wait_for(view: "FollowedView", run_id: str) -> None:
    """Finish ``view`` when the parked run ``run_id`` moves on."""
    global _thread
    with _lock:
        _WAITING[run_id] = (view, view.context.sandbox.store.get_run(run_id).attempt)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_poll, name="jupyter-sandbox-follow", daemon=True)
            _thread.start()


def stop_waiting(run_id: str) -> "FollowedView | None":
    """Stop following ``run_id``; return the view that waited on it, if any."""
    with _lock:
        entry = _WAITING.pop(run_id, None)
    return entry[0] if entry is not None else None


def on_woken(run_id: str, outcome: Any) -> None:
    """The scheduler's callback: a run it woke ended so; finish the view that waited on it."""
    view = stop_waiting(run_id)
    if view is not None:
        view.finish(outcome, live=False)


def _poll() -> None:
    while True:
        time.sleep(INTERVAL)
        with _lock:
            waiting = list(_WAITING.items())
        if not waiting:
            return  # a later wait_for starts a new thread
        for run_id, (view, attempt) in waiting:
            sb = view.context.sandbox
            try:
                row = sb.store.get_run(run_id)
                moved_on = row.status != "running" and not (row.status == "parked" and row.attempt == attempt)
                outcome = stored_outcome(sb, run_id) if moved_on else None
            except Exception:  # the store was closed or removed: stop following
                outcome = None
                with _lock:
                    _WAITING.pop(run_id, None)
            if outcome is not None:
                on_woken(run_id, outcome)


def pending_interrupts(sb: Sandbox, run_id: str, doc: dict[str, Any] | None = None) -> list[Interrupt]:
    """A run's pending interrupts from its stored timeline (a delegated child's included)."""
    found = []
    for p in (doc or sb.timeline(run_id))["pending"]:
        for item in p.get("interrupts") or [p]:
            found.append(Interrupt(item["id"], run_id, p["position"], item.get("name") or "?",
                                   data=item.get("data"), approval=bool(item.get("approval", p.get("approval")))))
    return found


def stored_outcome(sb: Sandbox, run_id: str) -> Any:
    """How a run ended, read back from the store, shaped as ``Sandbox.eval`` returns or raises it."""
    chain = [run_id]
    row = sb.store.get_run(run_id)
    while row.status == "continued" and row.successor:
        row = sb.store.get_run(row.successor)
        chain.append(row.id)
    doc = sb.timeline(row.id)
    console = [{"level": e.get("level", "log"), "message": e.get("message", "")}
               for e in doc["entries"] if e.get("kind") == "console"]
    if row.status == "completed":
        return RunResult(row.output, console, None, [], row.id, chain)
    if row.status == "interrupted":
        return SandboxInterrupt(run_id=row.id, call_log=[], console=console, data={},
                                interrupts=pending_interrupts(sb, row.id, doc))
    if row.status == "parked":
        return RunParked(run_id=row.id, due=row.wake_at, waiting=[], console=console, data={}, call_log=[])
    if row.status == "cancelled":
        return RunCancelled(row.id)
    error = row.error if isinstance(row.error, dict) else {"message": str(row.error or "")}
    failure = SandboxError(error.get("text") or error.get("message") or f"run {row.id} is {row.status}")
    failure.run_id = row.id  # type: ignore[attr-defined]
    return failure
