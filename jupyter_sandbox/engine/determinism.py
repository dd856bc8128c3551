"""The determinism check: a run replayed in a scratch store, executing nothing, up to its first divergence.

The replay is an attempt like any other (``Engine.attempt_of`` builds it, with ``execute=False``), run in a
throwaway store so the run's own journal is never written. What it reached is compared with what the run
recorded: every completion served and every open request asked for again, then the run's output (or the
input of its successor, for a run that continued as new).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ..errors import CallLogMismatchError, LimitExceeded, SandboxError
from ..results import CheckReport
from ..stores.base import RunRow, Store
from .answers import Answers
from .attempt import Attempt, AttemptRequest, AttemptResult, Observer
from .divergence import nothing_asked
from .journal import Journal
from .realm import Limits
from .runner import Runner

__all__ = ["check"]


class CheckEngine(Protocol):
    """What a determinism check asks of the engine (implemented by ``runs.Engine``, which calls it)."""

    store: Store
    limits: Limits
    scratch: Callable[[], Store]  # a throwaway store (the facade picks the backend)

    def check_source(self, source: str, limits: Limits) -> None: ...

    def limits_of(self, run: RunRow) -> Limits: ...

    def attempt_of(
        self, request: AttemptRequest, journal: Journal, number: int, store: Store, *, execute: bool = True
    ) -> Attempt: ...


async def check(engine: CheckEngine, run_id: str, source: str | None = None) -> CheckReport:
    """Replay a run in a scratch store, executing nothing; report the first divergence."""
    run = engine.store.get_run(run_id)
    journal = Journal(engine.store.entries(run_id))
    if source is not None:
        engine.check_source(source, engine.limits)
        run.source = source
    scratch = engine.scratch()
    runner = Runner(
        engine.attempt_of(
            AttemptRequest(run, Answers(), Observer(), engine.limits_of(run)),
            journal,
            journal.attempts + 1,
            scratch,
            execute=False,
        )
    )
    plan = runner.attempt.plan
    result = await runner.run_attempt()
    scratch.close()
    # What the replay reached: the completions it was served, and the open requests it asked for again.
    recorded = journal.effect_slots()
    served = plan.served_slots()
    try:
        served -= set(runner.realm.unused()) if runner.realm is not None else served
    except SandboxError:  # the realm itself failed: nothing it was served can be counted
        served = set()
    unreached = sorted(recorded - served - set(runner.state.held))
    checked, total = len(recorded) - len(unreached), len(recorded)
    error = result.error
    if isinstance(error, CallLogMismatchError):
        return CheckReport(run_id, False, result.replayed, mismatch=error, checked=checked, recorded=total)
    if not (result.status == "reached" or result.status in ("completed", "continued") or _same_failure(run, result)):
        return CheckReport(run_id, False, result.replayed, error=error, checked=checked, recorded=total)
    if unreached:  # the script ended (or waits) without asking for a recorded effect
        position = unreached[0]
        mismatch = nothing_asked(runner.attempt, position)
        return CheckReport(run_id, False, result.replayed, mismatch=mismatch, checked=checked, recorded=total)
    matches = None
    if result.status == "completed" and run.status == "completed":
        matches = result.output == run.output
    elif result.status == "continued" and run.successor is not None:
        matches = result.state == engine.store.get_run(run.successor).input
    return CheckReport(run_id, True, result.replayed, output_matches=matches, checked=checked, recorded=total)


def _same_failure(run: RunRow, result: AttemptResult) -> bool:
    """A failed run whose replay fails with the very same error: its failure is deterministic too."""
    recorded = run.error if isinstance(run.error, dict) else {}
    return (
        run.status == "failed"
        and result.status == "failed"
        and result.error is not None
        and not isinstance(result.error, LimitExceeded)
        and str(result.error) == recorded.get("text")
    )
