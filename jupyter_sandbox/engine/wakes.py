"""Waking parked runs whose timer (or wait timeout) is due: what the scheduler calls (``Engine.run_due``).

A wake is a resume without an answer. Due runs are reserved a batch at a time in the store, so several
workers drain the due runs together without meeting at the claim; a run refused because its rollback
stopped half-way is rolled back the rest of the way here.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import RunStateError, SandboxError
from ..results import RollbackResult, RunResult
from ..stores.base import Store
from .answers import Answers
from .attempt import Observer
from .clock import Clock

__all__ = ["run_due"]

# Due runs one reservation takes, then wakes one by one: few enough that the last is woken well within the
# reservation's lease even on a slow machine (else another worker reserves it again and the two meet at
# the claim), and that N workers finish a drain together; each reservation is one statement. One
# run_due takes batches up to _WAKE_ROUND runs.
_WAKE_BATCH = 20
_WAKE_ROUND = 100


class WakeEngine(Protocol):
    """What a wake asks of the engine (implemented by ``runs.Engine``, which calls it)."""

    store: Store
    clock: Clock

    async def resume(self, run_id: str, answers: Answers, *, observer: Observer | None = None) -> RunResult: ...

    async def rollback(self, run_id: str) -> RollbackResult: ...


async def run_due(engine: WakeEngine, observer: Observer | None = None) -> list[tuple[str, Any]]:
    """Resume the parked top-level runs whose timer (or wait timeout) is due now: up to ``_WAKE_ROUND`` a
    call, reserved ``_WAKE_BATCH`` at a time (the next batch once this one is woken)."""
    woken: list[tuple[str, Any]] = []
    while len(woken) < _WAKE_ROUND:
        batch = engine.store.due_runs(engine.clock.now(), limit=min(_WAKE_BATCH, _WAKE_ROUND - len(woken)))
        for run_id in batch:
            woken.append((run_id, await _wake(engine, run_id, observer)))
        if len(batch) < _WAKE_BATCH:
            break
    return woken


async def _wake(engine: WakeEngine, run_id: str, observer: Observer | None) -> Any:
    try:
        try:
            return await engine.resume(run_id, Answers(), observer=observer)
        except RunStateError:
            # Refused before anything ran: a rollback that stopped half-way (finished here), or another
            # process took it first (fine). Read again only then: a wake reads the run once.
            if engine.store.get_run(run_id).options.get("rollback"):
                return await engine.rollback(run_id)
            raise
    except SandboxError as exc:  # (a RunStateError among them)
        return exc
