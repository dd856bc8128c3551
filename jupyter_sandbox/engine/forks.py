"""Forks: a new run that replays another's journal up to an entry and runs live after it.

A fork shares no run with the original: it gets a copy of the journal before the fork point, children of
its own for the child runs that journal left open, and its own signal queue and rollback. ``fork`` builds
the fork and the request that drives it; the engine drives it (``Engine.fork``).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..actions import Resume
from ..errors import RunNotFound
from ..stores.base import RunRow, Store, new_run_id
from .answers import NO_ANSWER, Answers
from .attempt import AttemptRequest, Observer
from .journal import Journal
from .realm import Limits
from .waits import signal_queue

__all__ = ["fork", "like"]


class ForkEngine(Protocol):
    """What a fork asks of the engine (implemented by ``runs.Engine``, which calls it)."""

    store: Store

    def admit(
        self, answers: Answers, journal: Journal, run_id: str, status: str | None, retry: bool = True
    ) -> None: ...

    def pending(self, run_id: str) -> list[Resume]: ...

    def limits_of(self, run: RunRow) -> Limits: ...


def fork(
    engine: ForkEngine,
    run_id: str,
    at_seq: int,
    value: Any,
    answers: dict[str, Any],
    observer: Observer | None,
    name: str | None,
    who: dict[str, Any],
) -> AttemptRequest:
    """Create the fork of ``run_id`` at ``at_seq`` with its journal copied; the request that drives it.

    ``who``: ``by``, ``via``, ``process`` of the answers (``Answers``). The answers are admitted against the
    journal before the fork point, before the fork exists: a refused answer leaves nothing behind."""
    run = engine.store.get_run(run_id)
    wanted = Answers(by_id=dict(answers), first=value, **who)
    if wanted.given():  # answers must reach an interrupt open at the fork point; checked before it exists
        wanted.check()
        prefix = Journal([e for e in engine.store.entries(run_id) if e.seq < at_seq])
        engine.admit(wanted, prefix, run_id, f"at entry {at_seq}", retry=False)  # (a new run retries nothing)
    forked = like(
        run,
        kind="workflow",
        name=name or f"{run.name or run.id} fork@{at_seq}",
        input=run.input,
        options={**_own(run.options), "forked_from": [run.id, at_seq]},
    )
    engine.store.create_run(forked)
    _copy_journal(engine.store, run, forked, at_seq)
    forked.status = "interrupted"
    pending = engine.pending(forked.id)
    if value is not NO_ANSWER and pending:
        answers.setdefault(pending[0].id or "", value)
    answered = Answers(by_id=answers, stamp=wanted.stamp, **who)
    return AttemptRequest(forked, answered, observer or Observer(), engine.limits_of(run))


def like(run: RunRow, **fields: Any) -> RunRow:
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


def _copy_journal(store: Store, source: RunRow, target: RunRow, before_seq: int) -> None:
    """Give ``target`` (a fork, or a forked child) ``source``'s journal before ``before_seq``, and
    children of its own for the child runs that journal left open: a fork shares no run with the original.

    A child paused on an interrupt is forked as it was when its parent recorded that interrupt (its
    journal to the end of the attempt that asked); any other open child runs again in the fork, under
    a new id.
    """
    attempts = store.copy_prefix(source.id, target.id, before_seq)
    prefix = Journal([e for e in store.entries(target.id) if e.seq < before_seq])
    theirs = source.options.get("children") or {}  # (the source may be a fork: its children are its own)
    children: dict[str, str] = {}
    for slot, state in prefix.slots.items():
        request = state.request
        child_id = request.body.get("child") if request is not None and state.completion is None else None
        if not isinstance(child_id, str):
            continue
        asked = prefix.interrupt_at(slot)
        ids = {i["id"] for i in asked.body.get("interrupts") or [asked.body]} if asked is not None else set()
        children[child_id] = _fork_child(store, theirs.get(child_id, child_id), ids, target)
    options = {**target.options, "children": children} if children else target.options
    store.update_run(target.id, status="interrupted", attempt=attempts, options=options)
    target.options = options


def _fork_child(store: Store, child_id: str, interrupt_ids: set[str], parent: RunRow) -> str:
    """The id of the fork's own copy of a child run (a new id, no run yet, if it is to run again)."""
    try:
        child = store.get_run(child_id)
    except RunNotFound:
        return new_run_id()
    entries = store.entries(child_id)
    asked = [e.attempt for e in entries if e.kind == "interrupt" and e.body.get("id") in interrupt_ids]
    if not asked:
        return new_run_id()
    copy = like(
        child, input=child.input, parent=parent.id, options={**_own(child.options), "signals": signal_queue(parent)}
    )
    store.create_run(copy)
    # To the end of the attempt that asked: calls it had in flight completed after its interrupt
    _copy_journal(store, child, copy, 1 + max(e.seq for e in entries if e.attempt <= max(asked)))
    return copy.id
