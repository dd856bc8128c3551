"""Resuming a run: what is refused before it is claimed, and the request that drives it on (``Engine.resume``).

A child run is resumed through its top-level run; a finished or rolled-back run never resumes. Answers are
admitted against the journal as read before the claim (``admit``): every answer must reach an open
interrupt, be one this process can carry out and one its approvers allow, so a refused answer records
nothing. A refusal led by another's answer that came first names that answer (``refusal``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..actions import Action
from ..decisions import Approve, decision
from ..errors import InputInvalid, Interrupt, RunStateError
from ..stores.base import RunRow, Store, source_hash
from .answered import earlier_answer
from .answers import Answers
from .attempt import AttemptRequest, Observer
from .journal import Journal
from .realm import Limits

__all__ = ["admit", "refusal", "resume_request"]


class ResumeEngine(Protocol):
    """What a resume asks of the engine (implemented by ``runs.Engine``, which calls it)."""

    store: Store
    actions: dict[str, Action]
    agents: dict[str, Action]
    # Who may answer: ``(identity, channel, interrupt) -> bool``, asked before an answer is recorded.
    approvers: Callable[[str | None, str | None, Interrupt], Any] | None

    def root(self, run_id: str) -> str: ...

    def limits_of(self, run: RunRow) -> Limits: ...

    def check_source(self, source: str, limits: Limits) -> None: ...


def resume_request(
    engine: ResumeEngine,
    run_id: str,
    answers: Answers,
    *,
    source: str | None,
    observer: Observer | None,
    limits: Limits | None,
    force: bool,
) -> tuple[AttemptRequest, tuple[str | None, str | None] | None]:
    """The request that resumes ``run_id``, once every check before the claim has passed, and the run's
    ``(source, source_hash)`` as they were when ``source`` edits it (None otherwise): a resume that fails
    puts them back, so the cell that started the run resumes it still."""
    run = engine.store.get_run(run_id)
    if run.kind != "workflow" or run.parent is not None:
        raise RunStateError(
            f"run {run_id} is a child run; resume its top-level run {engine.root(run_id)} instead",
            run_id=run_id,
            status=run.status,
        )
    if run.status in ("completed", "continued"):
        raise refusal(
            engine.store,
            run_id,
            run.status,
            answers,
            f"run {run_id} is {run.status}; use check() to replay it or fork() to try another answer",
        )
    if run.options.get("rollback"):
        raise refusal(
            engine.store,
            run_id,
            run.status,
            answers,
            f"run {run_id} is rolled back or being rolled back; it never resumes (rollback() finishes "
            "a rollback that stopped half-way; fork() tries the run again)",
        )
    read = None
    if answers.given():  # every answer must reach an open interrupt; checked before anything changes
        answers.check()
        size = engine.store.journal_bytes(run_id)  # before the read: an append after it shows as more bytes
        read = (Journal(engine.store.entries(run_id)), size)
        admit(engine, answers, read[0], run_id, run.status)
    limits = limits or engine.limits_of(run)
    before = None
    if source is not None and source != run.source:
        before = (run.source, run.source_hash)
        engine.check_source(source, limits)
        engine.store.update_run(run_id, source=source, source_hash=source_hash(source))
        run.source, run.source_hash = source, source_hash(source)
    return AttemptRequest(run, answers, observer or Observer(), limits, force=force, read=read), before


def refusal(store: Store, run_id: str, status: str | None, answers: Answers, why: str) -> RunStateError:
    """Why a resume is refused: ``why``, led by whose answer won when ``answers`` came after another answer
    to their interrupt (two clicks, two processes): the loser is told that, not only that the run moved on."""
    earlier = None
    if answers.given():
        earlier = earlier_answer(Journal(store.entries(run_id)), run_id, list(answers.by_id))
    if earlier is None:
        return RunStateError(why, run_id=run_id, status=status)
    text = f"{earlier.text}. This answer was not recorded: {why}"
    return RunStateError(text, run_id=run_id, status=status, answered=earlier.record)


def admit(
    engine: ResumeEngine, answers: Answers, journal: Journal, run_id: str, status: str | None, retry: bool = True
) -> None:
    """Refuse what this process cannot answer as given (``Answers.admit``; ``retry``: whether an answer
    repeating the last recorded one is a retry), then take the store's witness for the answer entries (its
    clock; on PostgreSQL the database role), which refuses a role the store does not let record answers.
    Nothing is recorded by a refusal."""
    answers.admit(
        journal, run_id, status, lambda name: name in engine.actions or name in engine.agents, engine.approvers, retry
    )
    _refuse_an_approval_this_schema_refuses(engine.actions, answers, journal, run_id, status)
    if answers.given():
        answers.stamp = engine.store.answer_stamp(run_id)


def _refuse_an_approval_this_schema_refuses(
    actions: dict[str, Action], answers: Answers, journal: Journal, run_id: str, status: str | None
) -> None:
    """An approval carries the call out with the input it was asked with, valid then: a schema here that
    refuses it is a registration other than the asking process's, and the call would be journaled as
    failed for good. Refused before anything is recorded, so the run waits for the registration."""
    for interrupt, value in answers.addressed(journal, run_id):
        action = actions.get(interrupt.name)
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
