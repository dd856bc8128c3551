"""The engine: runs as a whole, on the event loop. ``Engine`` starts a run and drives it: attempt after
attempt along its ``continueAsNew`` chain, each claimed, run and recorded. It owns its state; its other
paths are modules of their own that it calls with what they need: ``resuming`` (what a resume refuses
before the claim), ``signals``, ``wakes`` (due timers), ``determinism`` (the check), ``forks``,
``rollback``, ``document`` and ``source_checks``; ``children`` runs child runs.

Everything here is ``async`` and runs on the engine's loop thread
(``loop.py``); ``Sandbox`` is the synchronous face over it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from ..actions import Action, Resume
from ..errors import (
    Interrupt,
    LimitExceeded,
    RunBusyError,
    RunParked,
    RunStateError,
    SandboxError,
    SandboxInterrupt,
    error_dict,
)
from ..naming import check_action_name, check_replacement
from ..results import CheckReport, RollbackResult, RunResult
from ..stores.base import RunRow, Store, new_run_id, source_hash
from ..stores.runs_table import RunStatus
from ..values import json_and_copy
from . import children, determinism, forks, resuming, signals, wakes
from .answers import Answers
from .attempt import Attempt, AttemptRequest, AttemptResult, Observer, StartRequest
from .clock import Clock, SystemClock
from .document import document
from .journal import CallLog, Journal
from .limits import stored_limits
from .plan import ReplayPlan
from .pool import ActionPool
from .realm import Limits
from .rollback import rollback as roll_back
from .runner import Runner
from .source_checks import check_source
from .waits import accepting, signal_queue

__all__ = ["Engine", "StartRequest"]

log = logging.getLogger("jupyter_sandbox")

RESUMABLE: tuple[RunStatus, ...] = ("interrupted", "parked", "cancelled", "failed", "stalled")
_REWAKES = 8  # attempts one call makes at once for signals that came as the run parked (past that: the scheduler)


class Engine:
    """Starts runs and drives them, attempt by attempt; the one owner of its tables, pool and hooks. The
    modules it delegates to get what they need as arguments (or through its public methods) and return
    what they decided."""

    def __init__(
        self,
        store: Store,
        limits: Limits,
        clock: Clock,
        on_progress: Callable[[str, Any], None] | None = None,
        *,
        scratch: Callable[[], Store],
    ):
        # The machine's clock gives way to the store's: due times are set and compared on one clock.
        self.store, self.limits = store, limits
        self.clock = clock.following(store) if type(clock) is SystemClock else clock
        self.scratch = scratch  # a throwaway store for a determinism check (the facade picks the backend)
        self.actions: dict[str, Action] = {}
        self.agents: dict[str, Action] = {}
        self.executor: Executor = ActionPool()
        self.on_progress = on_progress
        self.sync_scripts: Callable[[], None] | None = None  # registers the store's saved scripts (saved.py)
        # Told of each top-level run that completes, in whichever process completes it (saved.py: eval(save=)).
        self.completed: Callable[[RunRow], None] | None = None
        self.closing = False  # its Sandbox is closing: a run starts no more calls (it stops, resumable)
        # Who may answer: ``(identity, channel, interrupt) -> bool``, asked before an answer is recorded.
        self.approvers: Callable[[str | None, str | None, Interrupt], Any] | None = None

    new_run_id = staticmethod(new_run_id)

    def register_action(self, action: Action) -> None:
        """Put a built ``action`` in the table under its name: the one way an action is registered.

        Its name passes ``naming.check_action_name`` (a ``RegistrationError`` otherwise, and the table is
        unchanged); the same name registered again replaces the action if it is of the same kind
        (``naming.check_replacement``).
        """
        check_action_name(action.name, self.actions, action.saved is not None)
        check_replacement(action, self.actions)
        self.actions[action.name] = action

    def replace_executor(self) -> None:
        """A fresh pool for plain actions; the old one keeps its (stuck) threads until they return."""
        old, self.executor = self.executor, ActionPool()
        old.shutdown(wait=False)

    async def run_child(
        self, parent: Attempt, slot: int, op: str, spec: Any, child_id: str, answers: Answers, resumed: bool
    ) -> Any:
        return await children.run_child(self, parent, op, spec, child_id, answers)

    def progress(self, run_id: str, patch: Any, observer: Observer) -> None:
        for hook in (observer.progress, self.on_progress):
            if hook is None:
                continue
            try:
                hook(run_id, patch)
            except Exception:  # a broken progress bar must not fail the run
                log.exception("progress callback failed")

    # -- starting and resuming ------------------------------------------------

    def check_source(self, source: str, limits: Limits) -> None:
        """Size, characters and lint of a script, before it runs (``source_checks.py``)."""
        check_source(source, limits)

    async def start(self, request: StartRequest) -> RunResult:
        """Start a new run of ``request.source`` and run it until it ends or pauses."""
        limits = request.limits or self.limits
        source, call_log = request.source, request.call_log
        self.check_source(source, limits)
        # As the script sees it (the caller's object is not kept), and its JSON for the realm: one encode.
        input_json, input = json_and_copy(request.input, "the run's input")
        plan = ReplayPlan.from_call_log(call_log) if call_log is not None else None
        answers = request.answers or Answers()
        if answers.given():  # refused before a run exists: a mistyped answer leaves nothing behind
            answers.check()
            answers.refuse_unaddressed_in_call_log(call_log)
        run = RunRow(
            id=new_run_id(),
            kind="workflow",
            status="created",
            source=source,
            name=request.name,
            source_hash=source_hash(source),
            input=input,
            options={
                "strict": request.strict,
                "actions": request.actions,
                "limits": _limit_overrides(limits, self.limits),
                **({"save": request.save} if request.save is not None else {}),
            },
        )
        if answers.given():
            answers.stamp = self.store.answer_stamp(run.id)
        self.store.create_run(run)
        recorded_at = _bare_recorded(call_log) if call_log is not None else None
        return await self._drive(
            AttemptRequest(
                run, answers, request.observer or Observer(), limits, plan, recorded_at, input_json=input_json
            )
        )

    async def resume(
        self,
        run_id: str,
        answers: Answers,
        *,
        source: str | None = None,
        observer: Observer | None = None,
        limits: Limits | None = None,
        force: bool = False,
    ) -> RunResult:
        """Resume a paused, failed or stopped top-level run with ``answers`` (``resuming.py`` refuses what
        cannot resume as given, before anything changes), running ``source`` in place of its own if given."""
        request, before = resuming.resume_request(
            self, run_id, answers, source=source, observer=observer, limits=limits, force=force
        )
        try:
            return await self._drive(request)
        except SandboxError as exc:
            # A failed edit (a mismatch, an error in the new source) leaves the run's source as it was, so
            # the cell that started it resumes it still; the attempt's journal keeps the edit's source hash.
            if before is not None and not isinstance(exc, (SandboxInterrupt, RunParked)):
                self.store.update_run(run_id, source=before[0], source_hash=before[1])
            raise

    def admit(self, answers: Answers, journal: Journal, run_id: str, status: str | None, retry: bool = True) -> None:
        """Refuse what this process cannot answer as given, then take the store's witness for the answer
        entries (``resuming.admit``). Nothing is recorded by a refusal."""
        resuming.admit(self, answers, journal, run_id, status, retry)

    async def _drive(self, request: AttemptRequest) -> RunResult:
        request.answers.check()  # an answer is journaled and handed to an action: JSON, or a clear error now
        result, run, run_ids = await self.run_chain(request)
        if result.status == "completed" and self.completed is not None:
            self.completed(run)
        lost = request.answers.lost
        if lost is not None:  # the run went on (as a resume without that answer would): the loser is told so
            raise RunStateError(
                f"{lost.text}. This answer was not recorded; the run went on without it and is {result.status}",
                run_id=run.id,
                status=result.status,
                answered=lost.record,
            )
        return self._conclude(run, result, run_ids)

    async def run_chain(self, request: AttemptRequest) -> tuple[AttemptResult, RunRow, list[str]]:
        """Run attempts along a ``continueAsNew`` chain until one does not continue."""
        run = request.run
        run_ids = [run.id]
        rewoken = 0
        while True:
            result = await self.attempt(request)
            if result.woken and rewoken < _REWAKES:  # a signal came as it parked: take it now (it is due anyway)
                rewoken += 1
                request = request.again(run)
                continue
            if result.status != "continued":
                return result, run, run_ids
            if len(run_ids) > request.limits.generations:
                raise LimitExceeded(
                    "generations",
                    f"the script continued as new {request.limits.generations} times in one "
                    "call; is its stopping condition right?",
                    value=request.limits.generations,
                    run_id=run.id,
                )
            run = self._successor(run, result.state)
            run_ids.append(run.id)
            request = request.again(run)

    async def attempt(self, request: AttemptRequest) -> AttemptResult:
        """One attempt: claim the run (compare-and-set), run it, record how it ended.

        ``request.read``: the journal as read before the claim, with its size in bytes read before it. The
        journal only grows, so the same size after the claim means nothing was appended in between,
        and the attempt replays that journal instead of reading and decoding it again.
        """
        run, answers, read = request.run, request.answers, request.read
        allowed: tuple[RunStatus, ...] = ("created",) if run.status == "created" else RESUMABLE
        try:
            number = self.store.claim(run.id, allowed, source_hash=run.source_hash or "", force=request.force)
        except RunBusyError:
            raise  # (another attempt holds the run: the answer it carries may not be recorded yet)
        except RunStateError as refused:  # it finished meanwhile: another answer, perhaps, won the race
            raise resuming.refusal(self.store, run.id, refused.status, answers, str(refused)) from None
        try:
            size = self.store.journal_bytes(run.id)
            journal = read[0] if read is not None and read[1] == size else Journal(self.store.entries(run.id))
        except SandboxError:  # a journal that does not read (damaged): this process holds nothing
            self.store.release(run.id)
            raise
        if read is not None and journal is not read[0]:  # another process wrote in between: an answer, perhaps
            answers.drop_lost(read[0], journal, run.id)
        answers.settle_first(journal)
        runner = Runner(self.attempt_of(request, journal, number, self.store, size=size))
        runner.state.writer.append(
            "attempt",
            None,
            n=number,
            source_hash=run.source_hash,
            resumed_from=sorted([*answers.by_id, *map(str, answers.by_position)]),
        )
        try:
            result = await runner.run_attempt()
        except asyncio.CancelledError as stopped:
            self.store.finish_attempt(run.id, number, "cancelled", runner.state.writer.take(), replayed=0)
            stopped.stopped_run = run.id  # type: ignore[attr-defined]  # what a closed Sandbox says to resume
            raise
        except BaseException:
            self.store.finish_attempt(run.id, number, "failed", runner.state.writer.take(), replayed=0)
            raise
        fields: dict[str, Any] = {}
        if result.status == "parked" and run.parent is None and result.matchers:  # only a top-level run is woken
            fields.update(wake_on=accepting(result.matchers), queue=signal_queue(run))
        if result.status == "completed":
            fields.update(output=result.output, error=None)
        elif result.status == "failed":
            fields["error"] = _error_record(result.error)
        elif result.status == "parked":
            fields["wake_at"] = result.due
        status = result.status
        assert status != "reached"  # only a determinism check's attempt ends there, and it stores nothing
        result.woken = self.store.finish_attempt(
            run.id, number, status, runner.state.writer.take(), replayed=result.replayed, **fields
        )
        run.status = status
        result.call_log = runner.attempt.journal.call_log()  # the journal as committed: no second read
        return result

    def _conclude(self, run: RunRow, result: AttemptResult, run_ids: list[str]) -> RunResult:
        if result.status == "completed":
            return RunResult(
                result.output,
                result.console,
                result.data,
                CallLog(result.call_log, run_id=run.id),
                run.id,
                run_ids,
                replayed=result.replayed,
            )
        if result.status == "interrupted":
            raise SandboxInterrupt(
                run_id=run.id,
                call_log=CallLog(result.call_log, run_id=run.id),
                console=result.console,
                data=result.data,
                interrupts=result.interrupts,
            )
        if result.status == "parked":
            raise RunParked(
                run_id=run.id,
                due=result.due,
                waiting=result.waiting,
                console=result.console,
                data=result.data,
                call_log=CallLog(result.call_log, run_id=run.id),
            )
        assert result.error is not None
        raise result.error

    def call_log(self, run_id: str) -> CallLog:
        return CallLog(Journal(self.store.entries(run_id)).call_log(), run_id=run_id)

    def _successor(self, run: RunRow, state: Any) -> RunRow:
        successor = forks.like(
            run,
            input=state,
            parent=run.parent,
            predecessor=run.id,
            options={**run.options, "signals": signal_queue(run)},  # a signal to the first run reaches this one
        )
        self.store.create_run(successor)
        self.store.update_run(run.id, successor=successor.id)
        return successor

    def attempt_of(
        self,
        request: AttemptRequest,
        journal: Journal,
        number: int,
        store: Store,
        *,
        size: int = 0,
        execute: bool = True,
    ) -> Attempt:
        """The one place an ``Attempt`` is built: attempt ``number`` of ``request``, writing to ``store``, with a
        plan and recorded entries from ``journal`` unless the request brings a bare call log's."""
        run = request.run
        return Attempt(
            self,
            run,
            journal,
            number,
            plan=request.plan or ReplayPlan.from_journal(journal),
            answers=request.answers,
            strict=bool(run.options.get("strict")),
            action_names=self._action_names(run),
            limits=request.limits,
            recorded_at=request.recorded_at or journal.recorded,
            observer=request.observer,
            store=store,
            size=size,
            execute=execute,
            input_json=request.input_json,
        )

    def _action_names(self, run: RunRow) -> list[str]:
        if self.sync_scripts is not None:  # another process may have saved (or removed) one since
            self.sync_scripts()
        allowed = run.options.get("actions")
        names = sorted(self.actions)
        return names if allowed is None else [n for n in names if n in allowed]

    def limits_of(self, run: RunRow) -> Limits:
        """The limits ``run`` was started with: the engine's, with the overrides its options record."""
        return stored_limits(run.id, self.limits, run.options.get("limits") or {})

    def root(self, run_id: str) -> str:
        """The top-level run of ``run_id``'s tree (itself, unless it is a child run)."""
        run = self.store.get_run(run_id)
        while run.parent is not None:
            run = self.store.get_run(run.parent)
        return run.id

    # -- signals, timers, checks, forks and rollback: each in its own module ----------------

    async def signal(self, run_id: str, event: Any, observer: Observer | None = None) -> RunResult | None:
        """Queue an event for a run; if the run that waits on it is parked, resume it now (``signals.py``)."""
        return await signals.signal(self, run_id, event, observer)

    async def run_due(self, observer: Observer | None = None) -> list[tuple[str, Any]]:
        """Resume the parked top-level runs whose timer (or wait timeout) is due now (``wakes.py``)."""
        return await wakes.run_due(self, observer)

    async def check(self, run_id: str, source: str | None = None) -> CheckReport:
        """Replay a run in a scratch store, executing nothing; report the first divergence (``determinism.py``)."""
        return await determinism.check(self, run_id, source)

    async def fork(
        self,
        run_id: str,
        at_seq: int,
        value: Any,
        answers: dict[str, Any],
        observer: Observer | None = None,
        name: str | None = None,
        **who: Any,
    ) -> RunResult:
        """A new run that replays ``run_id``'s journal before ``at_seq`` and runs live after it (``forks.py``).

        ``who``: ``by``, ``via``, ``process`` of the answers (``Answers``)."""
        return await self._drive(forks.fork(self, run_id, at_seq, value, answers, observer, name, who))

    async def rollback(
        self, run_id: str, reason: str | None = None, rejected: str | None = None, who: dict[str, Any] | None = None
    ) -> RollbackResult:
        """Run the reverts of a run's completed calls, newest first (``rollback.py``)."""
        return await roll_back(self, run_id, reason, rejected, who)

    # -- views ------------------------------------------------------------------

    def document(self, run_id: str) -> dict[str, Any]:
        """The timeline document (docs/journal.md) of a run (``document.py``)."""
        return document(self.store, run_id)

    def pending(self, run_id: str) -> list[Resume]:
        return [
            Resume(position=e.slot, id=e.body["id"]) for e in Journal(self.store.entries(run_id)).pending_interrupts()
        ]


def _error_record(error: Exception | None) -> dict[str, Any] | None:
    if error is None:
        return None
    return {**error_dict(error), "text": str(error)}


def _limit_overrides(limits: Limits, defaults: Limits) -> dict[str, Any]:
    return {k: v for k, v in limits.__dict__.items() if defaults.__dict__[k] != v}


def _bare_recorded(call_log: list[dict[str, Any] | None]) -> Any:
    def recorded_at(slot: int) -> dict[str, Any] | None:
        return call_log[slot] if 0 <= slot < len(call_log) else None

    return recorded_at
