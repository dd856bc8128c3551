"""Rollback: the compensations of a run's completed calls, newest first, each journaled, exactly once.

A rollback is an attempt of its own: it claims the run (so it is fenced like any attempt), writes
``rollback`` once, then for each completed call in reverse order of completion either ``revert``
(committed before the revert function runs) and ``reverted`` (its outcome), or ``not_reverted``; a
call into a child script (``ctx.delegate``) rolls the child back in its place. ``rolled_back`` ends it
with the run's status. Resumed after a crash, it skips every call that has its ``reverted`` or
``not_reverted`` entry: a revert that started but left no outcome runs again, as an action does.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Protocol

from ..actions import Action, Resume
from ..calling import describe_exception, run_threaded
from ..errors import AnswerRefused, Interrupt, RunBusyError, RunNotFound, RunStateError
from ..results import RollbackResult
from ..stores.base import RunRow, Store
from ..stores.runs_table import RunStatus
from ..values import detach, to_json
from .answered import earlier_answer
from .answers import Answers
from .journal import Journal, JournalWriter
from .realm import Limits

__all__ = ["ROLLBACK_FROM", "rejection_with_rollback", "rollback"]

# Every status a run can rest in: a rollback undoes what a finished, failed or paused run did.
ROLLBACK_FROM: tuple[RunStatus, ...] = (
    "created",
    "interrupted",
    "parked",
    "cancelled",
    "failed",
    "stalled",
    "completed",
    "continued",
)
REJECT_FROM = tuple(s for s in ROLLBACK_FROM if s not in ("created", "completed", "continued"))
_NO_CAP = 2**62  # a rollback writes two entries per call: the run's journal caps bound the script, not it


class RollbackEngine(Protocol):
    """What a rollback asks of the engine that runs it (implemented by ``runs.Engine``, which calls it)."""

    store: Store
    actions: dict[str, Action]
    limits: Limits
    executor: Executor
    # Who may answer: ``(identity, channel, interrupt) -> bool``; a rollback of a paused run decides its interrupts
    approvers: Callable[[str | None, str | None, Interrupt], Any] | None

    def root(self, run_id: str) -> str: ...

    def pending(self, run_id: str) -> list[Resume]: ...


@dataclass
class _Done:
    """One completed call of a run: its slot, the seq it completed at, and what a revert is given."""

    slot: int
    seq: int
    op: str
    name: str
    input: Any
    value: Any
    child: str | None


async def rollback(
    engine: RollbackEngine,
    run_id: str,
    reason: str | None = None,
    rejected: str | None = None,
    who: dict[str, Any] | None = None,
) -> RollbackResult:
    """Roll back a top-level run and its ``continueAsNew`` chain, newest run first.

    ``who`` (``by``, ``via``, ``process``; for a rejection also the store's ``answered_at`` and ``role``) is
    recorded on the ``rollback`` entry, as an answer entry records who answered.
    """
    if reason is not None and not isinstance(reason, str):
        raise TypeError(f"a rollback's reason is a string, got {type(reason).__name__}")
    run = engine.store.get_run(run_id)
    if run.parent is not None:
        raise RunStateError(
            f"run {run_id} is a child run; roll back its top-level run {engine.root(run_id)} instead",
            run_id=run_id,
            status=run.status,
        )
    while run.predecessor is not None:  # the chain's first run: its successors are rolled back with it
        run = engine.store.get_run(run.predecessor)
    chain = [run]
    while chain[-1].successor is not None:
        chain.append(engine.store.get_run(chain[-1].successor))
    for row in chain:
        _check_registered(engine, row)
    if rejected is None:  # (a rejection's answer was admitted already, the approvers asked)
        _refuse_unapproved(engine, chain[-1], who or {})
    result = RollbackResult(run_id)
    for row in reversed(chain):
        result.extend(await _roll_back_run(engine, row, reason, rejected, who or {}))
    return result


async def _roll_back_run(
    engine: RollbackEngine, run: RunRow, reason: str | None, rejected: str | None, who: dict[str, Any]
) -> RollbackResult:
    store = engine.store
    rejecting = rejected if run.successor is None else None  # (the interrupt is in a chain's last run)
    if rejecting is not None:
        _refuse_a_late_rejection(run, Journal(store.entries(run.id)), rejecting)
    elif run.status == "rolled_back":
        return outcome(engine, run.id, Journal(store.entries(run.id)))
    # A rejection takes only a run its approval can still be open in: one that completed meanwhile (the
    # approval won, in another process) is refused by the claim itself, atomically
    allowed = REJECT_FROM if rejecting is not None else ROLLBACK_FROM
    try:
        number = store.claim(run.id, allowed, source_hash=run.source_hash or "")
    except RunBusyError:
        raise
    except RunStateError:
        if rejecting is not None:  # the approval won: say whose it was
            _refuse_a_late_rejection(run, Journal(store.entries(run.id)), rejecting)
        raise
    try:
        journal = Journal(store.entries(run.id))
        if rejecting is not None:  # (decided or rolled back by another since the answer was admitted)
            _refuse_a_late_rejection(run, journal, rejecting)
        writer = JournalWriter(journal, number, _NO_CAP, _NO_CAP, store.journal_bytes(run.id))
        done = _settled(journal)
        writer.append("attempt", None, n=number, source_hash=run.source_hash, resumed_from=[])
        if not any(e.kind == "rollback" for e in journal.entries):
            writer.append("rollback", None, reason=reason, rejected=rejected, **who)
        store.update_run(run.id, options={**run.options, "rollback": True})  # resume refuses it from now on
        store.append(run.id, writer.take())
        for call in _completed(journal):
            if call.slot not in done:
                await _undo(engine, run, call, writer, who)
        result = outcome(engine, run.id, journal)
        writer.append(
            "rolled_back",
            None,
            reverted=len(result.reverted),
            not_reverted=len(result.not_reverted),
            failed=len(result.failed),
        )
        store.finish_attempt(run.id, number, "rolled_back", writer.take(), replayed=0)
    except BaseException:
        store.release(run.id)  # nothing more is written: the next rollback resumes from the journal
        raise
    return result


def _refuse_unapproved(engine: RollbackEngine, run: RunRow, who: dict[str, Any]) -> None:
    """A rollback of a paused run decides its open interrupts (the run never resumes): the ``approvers``
    policy must allow ``who`` to answer each, as for an answer; else ``AnswerRefused``, nothing recorded."""
    if engine.approvers is None or run.status != "interrupted":
        return
    journal = Journal(engine.store.entries(run.id))
    ids = [
        item["id"] for entry in journal.pending_interrupts() for item in entry.body.get("interrupts") or [entry.body]
    ]
    for interrupt, _ in Answers(by_id=dict.fromkeys(ids)).addressed(journal, run.id):
        if engine.approvers(who.get("by"), who.get("via"), interrupt) is not True:
            raise AnswerRefused(
                f"run {run.id}: {who.get('by') or 'this caller'} (via {who.get('via') or 'api'}) may not roll it "
                f"back: that decides {interrupt.id} ({interrupt.name!r}), which the Sandbox's approvers policy "
                "refused them; nothing was recorded",
                run_id=run.id,
                status=run.status,
            )


def _refuse_a_late_rejection(run: RunRow, journal: Journal, rejected: str) -> None:
    """A rejection that arrives once its interrupt was decided (an approval carried out) or the run rolled back
    (another click, another process) decides nothing: it is refused, as a second answer to an approval is,
    rather than rolling back what the approval did or reporting the rollback as its own."""
    won = earlier_answer(journal, run.id, [rejected])  # another answer to it (or this very rejection) came first
    if won is not None:
        raise RunStateError(
            f"{won.text}: this rejection was not recorded and nothing was rolled back",
            run_id=run.id,
            status=run.status,
            answered=won.record,
        )
    earlier = next((e for e in journal.entries if e.kind == "rollback"), None)
    if earlier is not None:
        by = f" by {earlier.body['by']}" if earlier.body.get("by") else ""
        raise RunStateError(f"run {run.id} was already rolled back{by}: this rejection was not recorded", run_id=run.id)
    open_ = {
        interrupt.get("id")
        for entry in journal.pending_interrupts()
        if entry.slot not in journal.decisions
        for interrupt in entry.body.get("interrupts") or [entry.body]
    }
    if rejected not in open_:
        raise RunStateError(
            f"run {run.id}: {rejected} was answered meanwhile: this rejection was not recorded and nothing was "
            "rolled back",
            run_id=run.id,
            status=run.status,
        )


async def _undo(engine: RollbackEngine, run: RunRow, call: _Done, writer: JournalWriter, who: dict[str, Any]) -> None:
    if call.child is not None and call.op == "delegate":
        try:
            child = engine.store.get_run(call.child)
        except RunNotFound:  # the parent recorded the call, then stopped before the child existed
            writer.append("not_reverted", None, of=call.slot, name=call.name, reason="the child run never started")
        else:
            sub = await _roll_back_run(engine, child, None, None, who)
            writer.append("reverted", None, of=call.slot, ok=sub.ok, child=child.id, value=None)
        engine.store.append(run.id, writer.take())
        return
    action = engine.actions.get(call.name) if call.op == "call" else None
    if action is None or action.revert is None:
        why = "an agent's work has no revert" if call.op == "agent" else "the action has no revert"
        writer.append("not_reverted", None, of=call.slot, name=call.name, reason=why)
        engine.store.append(run.id, writer.take())
        return
    writer.append("revert", None, of=call.slot, name=call.name)
    engine.store.append(run.id, writer.take())  # committed before it runs: a crash after it runs it again
    ok, value = await _run_revert(engine, action, call)
    if ok:
        writer.append("reverted", None, of=call.slot, ok=True, value=value)
    else:
        writer.append("reverted", None, of=call.slot, ok=False, error=value)
    engine.store.append(run.id, writer.take())


async def _run_revert(engine: RollbackEngine, action: Action, call: _Done) -> tuple[bool, Any]:
    """Call ``revert(input, result)`` (on a worker thread unless it is async) within the action's timeout
    (else the limits' ``action_timeout``); ``(ok, value or error)``. Whatever it raises is its outcome."""
    revert = action.revert
    assert revert is not None
    limit = action.timeout if action.timeout is not None else engine.limits.action_timeout
    args = (detach(call.input), detach(call.value))
    try:
        if inspect.iscoroutinefunction(revert):
            pending = revert(*args)
        else:
            pending = asyncio.get_running_loop().run_in_executor(engine.executor, run_threaded, revert, args, {})
        value = await (asyncio.wait_for(pending, limit) if limit else pending)
        text = to_json(value, f"the value {action.name}'s revert returned")
    except asyncio.TimeoutError:
        return False, {"name": "Timeout", "message": f"the revert of {action.name} did not finish within {limit:g} s"}
    except Exception as exc:  # the revert's own failure (SystemExit too, carried out of the worker) is its outcome
        return False, describe_exception(exc)
    return True, json.loads(text)


def _completed(journal: Journal) -> list[_Done]:
    """The run's completed calls, newest first; a child script's call counts even when it did not complete
    (its child may have completed calls of its own), at the place it was made."""
    calls: dict[int, _Done] = {}
    for entry in journal.entries:
        if entry.slot is None:
            continue
        body = entry.body
        if entry.kind == "call":
            if body.get("op") == "delegate":
                calls[entry.slot] = _Done(
                    entry.slot, entry.seq, "delegate", body["name"], None, None, body.get("child")
                )
        elif entry.kind == "result" and body.get("ok"):
            request = journal.slots[entry.slot].request
            if request is None or request.kind != "call":
                continue
            req = request.body
            calls[entry.slot] = _Done(
                entry.slot, entry.seq, req["op"], req["name"], req.get("input"), body.get("value"), req.get("child")
            )
    return sorted(calls.values(), key=lambda call: call.seq, reverse=True)


def _settled(journal: Journal) -> set[int]:
    """The slots whose compensation has its outcome in the journal: never run again."""
    return {e.body["of"] for e in journal.entries if e.kind in ("reverted", "not_reverted")}


def _check_registered(engine: RollbackEngine, run: RunRow) -> None:
    """Refuse, before anything is claimed or reverted, a rollback whose calls (its child scripts' too) name
    actions this process has not registered: whether they have a revert is unknown here."""
    if run.status == "rolled_back":
        return
    journal = Journal(engine.store.entries(run.id))
    done = _settled(journal)
    todo = [call for call in _completed(journal) if call.slot not in done]
    missing = sorted({c.name for c in todo if c.op == "call" and c.name not in engine.actions})
    if missing:
        raise RunStateError(
            f"run {run.id} called {', '.join(missing)}, which this sandbox has not registered; register "
            "them (with their revert=) and roll back again: nothing was reverted",
            run_id=run.id,
            status=run.status,
        )
    for call in todo:
        if call.op == "delegate" and call.child is not None:
            try:
                child = engine.store.get_run(call.child)
            except RunNotFound:
                continue
            _check_registered(engine, child)


def outcome(engine: RollbackEngine, run_id: str, journal: Journal) -> RollbackResult:
    """What a run's rollback did, read from its journal (and its child runs'), in the order it did it."""
    calls = {e.slot: e.body for e in journal.entries if e.kind == "call"}
    result = RollbackResult(run_id)
    for entry in journal.entries:
        body = entry.body
        if entry.kind == "rollback":
            result.reason = body.get("reason")
        elif entry.kind == "not_reverted":
            result.not_reverted.append(
                {"run_id": run_id, "slot": body["of"], "name": body["name"], "reason": body["reason"]}
            )
        elif entry.kind == "reverted" and body.get("child"):
            result.extend(outcome(engine, body["child"], Journal(engine.store.entries(body["child"]))))
        elif entry.kind == "reverted":
            call = calls.get(body["of"], {})
            item = {"run_id": run_id, "slot": body["of"], "name": call.get("name"), "input": detach(call.get("input"))}
            if body.get("ok"):
                result.reverted.append({**item, "value": detach(body.get("value"))})
            else:
                result.failed.append({**item, "error": detach(body.get("error"))})
    return result


def rejection_with_rollback(
    engine: RollbackEngine, run_id: str, value: Any, answers: dict[str, Any] | None
) -> tuple[str, Any] | None:
    """``(interrupt id, reason)`` when the answer rejects with ``rollback`` set
    (``{"approved": False, "rollback": True, "reason": ...}``, or a decision object whose JSON form is that)."""

    def reading(answer: Any) -> tuple[bool, Any]:
        to_json = getattr(answer, "to_json", None)  # a decision object (Reject(reason, rollback=True))
        form = to_json() if callable(to_json) else answer
        if isinstance(form, dict):
            return form.get("approved") is False and form.get("rollback") is True, form.get("reason")
        return False, None

    asks = _questions(engine, run_id) if any(reading(a)[0] for a in [value, *(answers or {}).values()]) else set()
    for interrupt_id, answer in (answers or {}).items():
        if reading(answer)[0] and interrupt_id not in asks:
            return interrupt_id, reading(answer)[1]
    if reading(value)[0]:
        pending = engine.pending(run_id)
        if not pending:
            won = earlier_answer(Journal(engine.store.entries(run_id)), run_id)  # the answer that closed it, if any
            if won is not None:
                raise RunStateError(f"{won.text}: this rejection was not recorded", run_id=run_id, answered=won.record)
            raise RunStateError(f"run {run_id} has no open interrupt to reject", run_id=run_id)
        if pending[0].id not in asks:
            return pending[0].id or "", reading(value)[1]
    return None


def _questions(engine: RollbackEngine, run_id: str) -> set[str]:
    """The open interrupts that ask a question (not an approval): any JSON value answers them, that one too."""
    asks = set()
    for entry in Journal(engine.store.entries(run_id)).pending_interrupts():
        for interrupt in entry.body.get("interrupts") or [entry.body]:  # (a child's interrupts, or its own)
            if interrupt.get("approval") is False:
                asks.add(interrupt.get("id"))
    return asks
