"""The engine: runs as a whole, on the event loop. Starts, resumes, follows
``continueAsNew`` chains, checks and forks; ``children.py`` runs child runs.

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
from ..decisions import Approve, decision
from ..errors import (
    CallLogMismatchError,
    InputInvalid,
    Interrupt,
    LimitExceeded,
    RunBusyError,
    RunNotFound,
    RunParked,
    RunStateError,
    SandboxError,
    SandboxInterrupt,
    ScriptError,
    error_dict,
)
from ..naming import check_action_name, check_replacement
from ..results import CheckReport, RollbackResult, RunResult
from ..source import line_starts
from ..stores.base import RunRow, Store, new_run_id, source_hash
from ..stores.rows import ENDED, RunStatus
from ..values import json_and_copy, json_copy
from . import children
from .answered import earlier_answer
from .answers import NO_ANSWER, Answers
from .attempt import Attempt, AttemptRequest, AttemptResult, Observer, StartRequest
from .clock import Clock, SystemClock
from .divergence import nothing_asked
from .journal import CallLog, Journal, signal_room
from .limits import stored_limits
from .lint import lint
from .plan import ReplayPlan
from .pool import ActionPool
from .realm import Limits
from .rollback import rollback as roll_back
from .runner import Runner
from .waits import accepting, signal_queue

__all__ = ["Engine", "StartRequest"]

log = logging.getLogger("jupyter_sandbox")

RESUMABLE: tuple[RunStatus, ...] = ("interrupted", "parked", "cancelled", "failed", "stalled")
_REWAKES = 8  # attempts one call makes at once for signals that came as the run parked (past that: the scheduler)
# Due runs one reservation takes, then wakes one by one: few enough that the last is woken well within the
# reservation's lease even on a slow machine (else another worker reserves it again and the two meet at
# the claim), and that N workers finish a drain together; each reservation is one statement. One
# run_due takes batches up to _WAKE_ROUND runs.
_WAKE_BATCH = 20
_WAKE_ROUND = 100


class Engine:
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
        if not isinstance(source, str):
            raise TypeError(f"the script must be a string, got {type(source).__name__}")
        size = len(source.encode("utf-8", "surrogatepass"))
        if size > limits.source_bytes:
            raise LimitExceeded(
                "source-size",
                f"the script is {size:,} bytes; the limit is {limits.source_bytes:,} bytes "
                f"({limits.source_bytes / 1024:,.4g} KiB)",
                value=limits.source_bytes,
            )
        _check_characters(source)
        lint(source)

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
        run = self.store.get_run(run_id)
        if run.kind != "workflow" or run.parent is not None:
            raise RunStateError(
                f"run {run_id} is a child run; resume its top-level run {self._root(run_id)} instead",
                run_id=run_id,
                status=run.status,
            )
        if run.status in ("completed", "continued"):
            raise self._refusal(
                run_id,
                run.status,
                answers,
                f"run {run_id} is {run.status}; use check() to replay it or fork() to try another answer",
            )
        if run.options.get("rollback"):
            raise self._refusal(
                run_id,
                run.status,
                answers,
                f"run {run_id} is rolled back or being rolled back; it never resumes (rollback() finishes "
                "a rollback that stopped half-way; fork() tries the run again)",
            )
        read = None
        if answers.given():  # every answer must reach an open interrupt; checked before anything changes
            answers.check()
            size = self.store.journal_bytes(run_id)  # before the read: an append after it shows as more bytes
            read = (Journal(self.store.entries(run_id)), size)
            self.admit(answers, read[0], run_id, run.status)
        limits = limits or self._limits_of(run)
        before = (run.source, run.source_hash)
        edited = source is not None and source != run.source
        if edited and source is not None:  # (edited implies it; said again for the type checker)
            self.check_source(source, limits)
            self.store.update_run(run_id, source=source, source_hash=source_hash(source))
            run.source, run.source_hash = source, source_hash(source)
        try:
            return await self._drive(
                AttemptRequest(run, answers, observer or Observer(), limits, force=force, read=read)
            )
        except SandboxError as exc:
            # A failed edit (a mismatch, an error in the new source) leaves the run's source as it was, so
            # the cell that started it resumes it still; the attempt's journal keeps the edit's source hash.
            if edited and not isinstance(exc, (SandboxInterrupt, RunParked)):
                self.store.update_run(run_id, source=before[0], source_hash=before[1])
            raise

    def _refusal(self, run_id: str, status: str | None, answers: Answers, why: str) -> RunStateError:
        """Why a resume is refused: ``why``, led by whose answer won when ``answers`` came after another answer
        to their interrupt (two clicks, two processes): the loser is told that, not only that the run moved on."""
        earlier = None
        if answers.given():
            earlier = earlier_answer(Journal(self.store.entries(run_id)), run_id, list(answers.by_id))
        if earlier is None:
            return RunStateError(why, run_id=run_id, status=status)
        text = f"{earlier.text}. This answer was not recorded: {why}"
        return RunStateError(text, run_id=run_id, status=status, answered=earlier.record)

    def admit(self, answers: Answers, journal: Journal, run_id: str, status: str | None) -> None:
        """Refuse what this process cannot answer as given (``Answers.admit``), then take the store's
        witness for the answer entries (its clock; on PostgreSQL the database role), which refuses a
        role the store does not let record answers. Nothing is recorded by a refusal."""
        answers.admit(journal, run_id, status, lambda name: name in self.actions or name in self.agents, self.approvers)
        self._refuse_an_approval_this_schema_refuses(answers, journal, run_id, status)
        if answers.given():
            answers.stamp = self.store.answer_stamp(run_id)

    def _refuse_an_approval_this_schema_refuses(
        self, answers: Answers, journal: Journal, run_id: str, status: str | None
    ) -> None:
        """An approval carries the call out with the input it was asked with, valid then: a schema here that
        refuses it is a registration other than the asking process's, and the call would be journaled as
        failed for good. Refused before anything is recorded, so the run waits for the registration."""
        for interrupt, value in answers.addressed(journal, run_id):
            action = self.actions.get(interrupt.name)
            spec = action.spec if action is not None else None
            if not interrupt.approval or spec is None or not spec.checks or decision(value) != Approve():
                continue  # (an edit is checked as it runs, as the asking process would; a rejection runs nothing)
            try:
                spec.validate(interrupt.input)
            except InputInvalid as exc:
                raise RunStateError(
                    f"run {run_id}: {interrupt.name!r} as registered here refuses the input it was asked to "
                    f"approve ({exc}): its schema differs from the asking process's. Nothing was recorded and "
                    f"the run still waits: register {interrupt.name!r} as that process did and answer again",
                    run_id=run_id,
                    status=status,
                ) from None

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
            raise self._refusal(run.id, refused.status, answers, str(refused)) from None
        try:
            size = self.store.journal_bytes(run.id)
            journal = read[0] if read is not None and read[1] == size else Journal(self.store.entries(run.id))
        except SandboxError:  # a journal that does not read (damaged): this process holds nothing
            self.store.release(run.id)
            raise
        if read is not None and journal is not read[0]:  # another process wrote in between: an answer, perhaps
            answers.drop_lost(read[0], journal, run.id)
        answers.settle_first(journal)
        runner = Runner(
            self._attempt_of(
                run,
                journal,
                number,
                request.plan,
                answers,
                request.limits,
                request.recorded_at,
                request.observer,
                self.store,
                size=size,
                input_json=request.input_json,
            )
        )
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
        successor = _like(
            run,
            input=state,
            parent=run.parent,
            predecessor=run.id,
            options={**run.options, "signals": signal_queue(run)},  # a signal to the first run reaches this one
        )
        self.store.create_run(successor)
        self.store.update_run(run.id, successor=successor.id)
        return successor

    def _attempt_of(
        self,
        run: RunRow,
        journal: Journal,
        number: int,
        plan: ReplayPlan | None,
        answers: Answers,
        limits: Limits,
        recorded_at: Callable[[int], dict[str, Any] | None] | None,
        observer: Observer,
        store: Store,
        *,
        size: int = 0,
        execute: bool = True,
        input_json: str | None = None,
    ) -> Attempt:
        """The one place an ``Attempt`` is built: a plan and recorded entries from ``journal`` unless given."""
        return Attempt(
            self,
            run,
            journal,
            number,
            plan=plan or ReplayPlan.from_journal(journal),
            answers=answers,
            strict=bool(run.options.get("strict")),
            action_names=self._action_names(run),
            limits=limits,
            recorded_at=recorded_at or journal.recorded,
            observer=observer,
            store=store,
            size=size,
            execute=execute,
            input_json=input_json,
        )

    def _action_names(self, run: RunRow) -> list[str]:
        if self.sync_scripts is not None:  # another process may have saved (or removed) one since
            self.sync_scripts()
        allowed = run.options.get("actions")
        names = sorted(self.actions)
        return names if allowed is None else [n for n in names if n in allowed]

    def _limits_of(self, run: RunRow) -> Limits:
        return stored_limits(run.id, self.limits, run.options.get("limits") or {})

    def _root(self, run_id: str) -> str:
        run = self.store.get_run(run_id)
        while run.parent is not None:
            run = self.store.get_run(run.parent)
        return run.id

    # -- signals and timers ----------------------------------------------------

    async def signal(self, run_id: str, event: Any, observer: Observer | None = None) -> RunResult | None:
        """Queue an event for a run; if the run that waits on it is parked, resume it now.

        The event reaches whichever run of ``run_id``'s tree waits for it: a child run through its
        top-level run, a successor through the run it continued. A run that completed or was rolled back
        (it never resumes) refuses it.
        """
        event = json_copy(event, "the signal's event")
        queue, top, via = self._addressee(run_id)
        if top.status in ENDED:
            shown = run_id if top.id == run_id else f"{run_id} ({via} {top.id})"
            raise RunStateError(
                f"run {shown} is {top.status.replace('_', ' ')}: nothing will wait for this event any more",
                run_id=top.id,
                status=top.status,
            )
        cap = self._limits_of(top).journal_bytes

        def admit(used: int, held: list[Any]) -> None:  # counted in the store's transaction: senders serialize
            refused = signal_room(event, cap, used, held)
            if refused is not None:
                raise refused

        self.store.add_signal(queue, event, wake=top.id, admit=admit)
        if self.store.get_run(top.id).status != "parked":
            return None  # delivered when the run next reaches a matching wait
        try:
            return await self.resume(top.id, Answers(), observer=observer)
        except (RunBusyError, RunStateError):
            return None  # another resume took the run first; it delivers the signal

    def _addressee(self, run_id: str) -> tuple[str, RunRow, str]:
        """Where a signal to ``run_id`` goes: its queue, the top-level run (its last successor) that waits,
        and how ``run_id`` leads there (``a child of`` or ``continued as``), for messages."""
        run = self.store.get_run(run_id)
        queue, via = signal_queue(run), "continued as"
        while run.parent is not None:
            run, via = self.store.get_run(run.parent), "a child of"
        while run.successor is not None:
            run = self.store.get_run(run.successor)
        return queue, run, via

    async def run_due(self, observer: Observer | None = None) -> list[tuple[str, Any]]:
        """Resume the parked top-level runs whose timer (or wait timeout) is due now: up to ``_WAKE_ROUND`` a
        call, reserved ``_WAKE_BATCH`` at a time (the next batch once this one is woken)."""
        woken: list[tuple[str, Any]] = []
        while len(woken) < _WAKE_ROUND:
            batch = self.store.due_runs(self.clock.now(), limit=min(_WAKE_BATCH, _WAKE_ROUND - len(woken)))
            for run_id in batch:
                woken.append((run_id, await self._wake(run_id, observer)))
            if len(batch) < _WAKE_BATCH:
                break
        return woken

    async def _wake(self, run_id: str, observer: Observer | None) -> Any:
        try:
            try:
                return await self.resume(run_id, Answers(), observer=observer)
            except RunStateError:
                # Refused before anything ran: a rollback that stopped half-way (finished here), or another
                # process took it first (fine). Read again only then: a wake reads the run once.
                if self.store.get_run(run_id).options.get("rollback"):
                    return await self.rollback(run_id)
                raise
        except SandboxError as exc:  # (a RunStateError among them)
            return exc

    # -- determinism check and fork ----------------------------------------------

    async def check(self, run_id: str, source: str | None = None) -> CheckReport:
        """Replay a run in a scratch store, executing nothing; report the first divergence."""
        run = self.store.get_run(run_id)
        journal = Journal(self.store.entries(run_id))
        if source is not None:
            self.check_source(source, self.limits)
            run.source = source
        scratch = self.scratch()
        runner = Runner(
            self._attempt_of(
                run,
                journal,
                journal.attempts + 1,
                None,
                Answers(),
                self._limits_of(run),
                None,
                Observer(),
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
        if not (
            result.status == "reached" or result.status in ("completed", "continued") or _same_failure(run, result)
        ):
            return CheckReport(run_id, False, result.replayed, error=error, checked=checked, recorded=total)
        if unreached:  # the script ended (or waits) without asking for a recorded effect
            position = unreached[0]
            mismatch = nothing_asked(runner.attempt, position)
            return CheckReport(run_id, False, result.replayed, mismatch=mismatch, checked=checked, recorded=total)
        matches = None
        if result.status == "completed" and run.status == "completed":
            matches = result.output == run.output
        elif result.status == "continued" and run.successor is not None:
            matches = result.state == self.store.get_run(run.successor).input
        return CheckReport(run_id, True, result.replayed, output_matches=matches, checked=checked, recorded=total)

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
        """A new run that replays ``run_id``'s journal before ``at_seq`` and runs live after it.

        ``who``: ``by``, ``via``, ``process`` of the answers (``Answers``)."""
        run = self.store.get_run(run_id)
        wanted = Answers(by_id=dict(answers), first=value, **who)
        if wanted.given():  # answers must reach an interrupt open at the fork point; checked before it exists
            wanted.check()
            prefix = Journal([e for e in self.store.entries(run_id) if e.seq < at_seq])
            self.admit(wanted, prefix, run_id, f"at entry {at_seq}")
        fork = _like(
            run,
            kind="workflow",
            name=name or f"{run.name or run.id} fork@{at_seq}",
            input=run.input,
            options={**_own(run.options), "forked_from": [run.id, at_seq]},
        )
        self.store.create_run(fork)
        self._copy_journal(run, fork, at_seq)
        fork.status = "interrupted"
        pending = self.pending(fork.id)
        if value is not NO_ANSWER and pending:
            answers.setdefault(pending[0].id or "", value)
        answered = Answers(by_id=answers, stamp=wanted.stamp, **who)
        return await self._drive(AttemptRequest(fork, answered, observer or Observer(), self._limits_of(run)))

    # -- rollback ----------------------------------------------------------------------

    async def rollback(
        self, run_id: str, reason: str | None = None, rejected: str | None = None, who: dict[str, Any] | None = None
    ) -> RollbackResult:
        """Run the reverts of a run's completed calls, newest first (``rollback.py``)."""
        return await roll_back(self, run_id, reason, rejected, who)

    def _copy_journal(self, source: RunRow, target: RunRow, before_seq: int) -> None:
        """Give ``target`` (a fork, or a forked child) ``source``'s journal before ``before_seq``, and
        children of its own for the child runs that journal left open: a fork shares no run with the original.

        A child paused on an interrupt is forked as it was when its parent recorded that interrupt (its
        journal to the end of the attempt that asked); any other open child runs again in the fork, under
        a new id.
        """
        attempts = self.store.copy_prefix(source.id, target.id, before_seq)
        prefix = Journal([e for e in self.store.entries(target.id) if e.seq < before_seq])
        theirs = source.options.get("children") or {}  # (the source may be a fork: its children are its own)
        children: dict[str, str] = {}
        for slot, state in prefix.slots.items():
            request = state.request
            child_id = request.body.get("child") if request is not None and state.completion is None else None
            if not isinstance(child_id, str):
                continue
            asked = prefix.interrupt_at(slot)
            ids = {i["id"] for i in asked.body.get("interrupts") or [asked.body]} if asked is not None else set()
            children[child_id] = self._fork_child(theirs.get(child_id, child_id), ids, target)
        options = {**target.options, "children": children} if children else target.options
        self.store.update_run(target.id, status="interrupted", attempt=attempts, options=options)
        target.options = options

    def _fork_child(self, child_id: str, interrupt_ids: set[str], parent: RunRow) -> str:
        """The id of the fork's own copy of a child run (a new id, no run yet, if it is to run again)."""
        try:
            child = self.store.get_run(child_id)
        except RunNotFound:
            return new_run_id()
        entries = self.store.entries(child_id)
        asked = [e.attempt for e in entries if e.kind == "interrupt" and e.body.get("id") in interrupt_ids]
        if not asked:
            return new_run_id()
        copy = _like(
            child, input=child.input, parent=parent.id, options={**_own(child.options), "signals": signal_queue(parent)}
        )
        self.store.create_run(copy)
        # To the end of the attempt that asked: calls it had in flight completed after its interrupt
        self._copy_journal(child, copy, 1 + max(e.seq for e in entries if e.attempt <= max(asked)))
        return copy.id

    # -- views ------------------------------------------------------------------

    def document(self, run_id: str) -> dict[str, Any]:
        """The timeline document (docs/journal.md) of a run."""
        run = self.store.get_run(run_id)
        journal = Journal(self.store.entries(run_id))
        pending = []
        if run.status not in ("completed", "continued"):  # a failed resume (a mismatch) leaves its interrupt open
            pending = [
                {
                    "id": e.body["id"],
                    "run_id": run_id,
                    "position": e.slot,
                    "name": e.body.get("name"),
                    "data": e.body.get("data"),
                    "approval": bool(e.body.get("approval")),
                    "interrupts": e.body.get("interrupts"),
                }
                for e in journal.pending_interrupts()
            ]
        return {
            "version": 1,
            "run": {**run.to_dict(), "source": None},
            "attempts": self.store.attempts(run_id),
            "entries": [e.to_dict() for e in journal.entries],
            "pending": pending,
            "source": run.source,
        }

    def pending(self, run_id: str) -> list[Resume]:
        return [
            Resume(position=e.slot, id=e.body["id"]) for e in Journal(self.store.entries(run_id)).pending_interrupts()
        ]


def _check_characters(source: str) -> None:
    """Characters the realm cannot read: a NUL, or a lone surrogate (not UTF-8)."""
    if "\0" not in source:
        try:
            source.encode("utf-8")
            return  # the usual case, at C speed
        except UnicodeEncodeError:
            pass
    for number, (start, end) in enumerate(line_starts(source), start=1):  # lines and columns as QuickJS counts
        text = source[start:end]
        for index, char in enumerate(text):
            if char == "\0" or "\ud800" <= char <= "\udfff":
                column = len(text[:index].encode("utf-8", "surrogatepass")) + 1
                what = "a NUL character" if char == "\0" else f"a lone surrogate (U+{ord(char):04X})"
                raise ScriptError(
                    "SyntaxError",
                    f"the script contains {what}, which the realm cannot read; "
                    f"write it as the escape \\u{ord(char):04x} inside a string",
                    line=number,
                    column=column,
                    source=source,
                )


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


def _error_record(error: Exception | None) -> dict[str, Any] | None:
    if error is None:
        return None
    return {**error_dict(error), "text": str(error)}


def _like(run: RunRow, **fields: Any) -> RunRow:
    """A new run (a fresh id, not started) with ``run``'s kind, source and name unless ``fields`` say otherwise."""
    return RunRow(
        **{
            "id": new_run_id(),
            "kind": run.kind,
            "status": "created",
            "source": run.source,
            "name": run.name,
            "source_hash": run.source_hash,
            **fields,
        }
    )


def _own(options: dict[str, Any]) -> dict[str, Any]:
    """A run's options for a fork: the same, but its signals, children and rollback are its own (it shares nothing)."""
    return {k: v for k, v in options.items() if k not in ("signals", "children", "rollback")}


def _limit_overrides(limits: Limits, defaults: Limits) -> dict[str, Any]:
    return {k: v for k, v in limits.__dict__.items() if defaults.__dict__[k] != v}


def _bare_recorded(call_log: list[dict[str, Any] | None]) -> Any:
    def recorded_at(slot: int) -> dict[str, Any] | None:
        return call_log[slot] if 0 <= slot < len(call_log) else None

    return recorded_at
