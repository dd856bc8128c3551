"""Signals: an event queued for the run of a tree that waits for it (``Engine.signal``).

The event reaches whichever run of the tree waits for it: a child run through its top-level run, a
successor through the run it continued. The queue's room is counted in the store's transaction (senders
serialize); a parked run that waits is resumed at once, any other takes the event at its next wait.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import RunBusyError, RunStateError
from ..results import RunResult
from ..stores.base import RunRow, Store
from ..stores.runs_table import ENDED
from ..values import json_copy
from .answers import Answers
from .attempt import Observer
from .journal import signal_room
from .realm import Limits
from .waits import signal_queue

__all__ = ["signal"]


class SignalEngine(Protocol):
    """What a signal asks of the engine (implemented by ``runs.Engine``, which calls it)."""

    store: Store

    def limits_of(self, run: RunRow) -> Limits: ...

    async def resume(self, run_id: str, answers: Answers, *, observer: Observer | None = None) -> RunResult: ...


async def signal(engine: SignalEngine, run_id: str, event: Any, observer: Observer | None = None) -> RunResult | None:
    """Queue an event for a run; if the run that waits on it is parked, resume it now.

    A run that completed or was rolled back (it never resumes) refuses it."""
    event = json_copy(event, "the signal's event")
    queue, top, via = _addressee(engine.store, run_id)
    if top.status in ENDED:
        shown = run_id if top.id == run_id else f"{run_id} ({via} {top.id})"
        raise RunStateError(
            f"run {shown} is {top.status.replace('_', ' ')}: nothing will wait for this event any more",
            run_id=top.id,
            status=top.status,
        )
    cap = engine.limits_of(top).journal_bytes

    def admit(used: int, held: list[Any]) -> None:  # counted in the store's transaction: senders serialize
        refused = signal_room(event, cap, used, held)
        if refused is not None:
            raise refused

    engine.store.add_signal(queue, event, wake=top.id, admit=admit)
    if engine.store.get_run(top.id).status != "parked":
        return None  # delivered when the run next reaches a matching wait
    try:
        return await engine.resume(top.id, Answers(), observer=observer)
    except (RunBusyError, RunStateError):
        return None  # another resume took the run first; it delivers the signal


def _addressee(store: Store, run_id: str) -> tuple[str, RunRow, str]:
    """Where a signal to ``run_id`` goes: its queue, the top-level run (its last successor) that waits,
    and how ``run_id`` leads there (``a child of`` or ``continued as``), for messages."""
    run = store.get_run(run_id)
    queue, via = signal_queue(run), "continued as"
    while run.parent is not None:
        run, via = store.get_run(run.parent), "a child of"
    while run.successor is not None:
        run = store.get_run(run.successor)
    return queue, run, via
