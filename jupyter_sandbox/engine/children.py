"""Child runs: ``ctx.delegate`` (a script child) and ``ctx.agent`` (a Python agent).

A child is a run of its own, with its own journal, linked to its parent. To
the parent it is one effect: its output is the result, its failure an
``ActionError``, its interrupt the parent's interrupt. Resuming the parent
resumes the child first; a child that already finished is never run again.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..actions import Outcome, Resume
from ..calling import call_action, describe_exception
from ..errors import ActionError, ChildSpecError, Interrupt, RunNotFound, SandboxError
from ..stores.base import RunRow, source_hash
from ..stores.runs_table import RunStatus
from ..values import detach, to_json
from .answers import Answers
from .attempt import Attempt, AttemptRequest, AttemptResult, EngineServices
from .journal import Journal, JournalWriter
from .nesting import nested
from .waits import signal_queue

__all__ = ["run_child"]


async def run_child(
    engine: EngineServices, parent: Attempt, op: str, spec: Any, child_id: str, answers: Answers
) -> Outcome:
    try:
        existing = engine.store.get_run(child_id)
    except RunNotFound:
        existing = None
    try:
        with nested():  # a child inside a child ... is bounded as scripts started from actions are
            return await _run(engine, parent, op, spec, child_id, existing, answers)
    except SandboxError as exc:
        return Outcome("error", error=describe_exception(exc))


async def _run(
    engine: EngineServices,
    parent: Attempt,
    op: str,
    spec: Any,
    child_id: str,
    existing: RunRow | None,
    answers: Answers,
) -> Outcome:
    if existing is not None and existing.status == "completed":
        return _ok(existing.output, existing.name or child_id)  # finished before the parent recorded it
    if op == "delegate":
        result = await _delegate(engine, parent, spec, child_id, existing, answers)
    else:
        result = await _agent(engine, parent, spec, child_id, existing, answers)
    return _outcome(result, child_id)


def _ok(output: Any, name: str) -> Outcome:
    try:
        text = to_json(output, f"the output of child {name}")
        return Outcome("ok", value=json.loads(text), json=text)  # the parent's copy: shares nothing with the child's
    except TypeError as exc:
        return Outcome("error", error={"name": "TypeError", "message": str(exc)})


_CHILD_FAILED = re.compile(r"child run r-[0-9a-f]+ failed: ")


def _outcome(result: AttemptResult, child_id: str) -> Outcome:
    if result.status == "completed":
        return _ok(result.output, child_id)
    if result.status == "interrupted":
        return Outcome("child-interrupt", data=result.interrupts)
    if result.status == "parked":
        return Outcome("parked", data=result.due, state=result.matchers)
    error = result.error
    message = getattr(error, "message", None) or str(error).split("\n")[0]
    if not _CHILD_FAILED.match(message):  # a grandchild's failure passed on names its run already: said once
        message = f"child run {child_id} failed: {message}"
    failure = {"name": type(error).__name__, "message": message}
    limit = getattr(error, "limit", None)  # a LimitExceeded's, or the one an ActionError carries from its cause
    if isinstance(limit, str):
        failure["limit"] = limit
    if getattr(error, "traceback", None):  # the Python traceback of the agent, or of the child's failed action
        failure["traceback"] = error.traceback  # type: ignore[union-attr]
    return Outcome("error", error=failure)


async def _delegate(
    engine: EngineServices, parent: Attempt, spec: Any, child_id: str, existing: RunRow | None, answers: Answers
) -> AttemptResult:
    if existing is None:
        script = spec.get("script") if isinstance(spec, dict) else None
        if not isinstance(script, str):
            raise ChildSpecError("ctx.delegate({script, input, name}) needs `script`, the child's source as a string")
        engine.check_source(script, parent.limits)
        existing = RunRow(
            id=child_id,
            kind="workflow",
            status="created",
            source=script,
            name=spec.get("name"),
            source_hash=source_hash(script),
            input=spec.get("input"),
            parent=parent.run.id,
            options={
                "strict": parent.strict,
                "actions": parent.run.options.get("actions"),
                "signals": signal_queue(parent.run),
            },
        )
        engine.store.create_run(existing)
    result, _, _ = await engine.run_chain(AttemptRequest(existing, answers, parent.observer, parent.limits))
    return result


async def _agent(
    engine: EngineServices, parent: Attempt, spec: Any, child_id: str, existing: RunRow | None, answers: Answers
) -> AttemptResult:
    name = spec.get("agent") if isinstance(spec, dict) else None
    agent = engine.agents.get(name) if isinstance(name, str) else None
    if agent is None or not isinstance(name, str):  # (a name that is no string finds no agent)
        known = ", ".join(sorted(engine.agents)) or "none"
        raise ChildSpecError(f"no agent named {name!r} is registered (available: {known})")
    agent_input = spec.get("input")
    if existing is None:
        existing = RunRow(
            id=child_id, kind="agent", status="created", name=name, input=agent_input, parent=parent.run.id
        )
        engine.store.create_run(existing)
    allowed: tuple[RunStatus, ...] = (
        ("created",) if existing.status == "created" else ("interrupted", "cancelled", "failed")
    )
    number = engine.store.claim(child_id, allowed, source_hash="")
    journal = Journal(engine.store.entries(child_id))
    writer = JournalWriter(journal, number, parent.limits.journal_entries, parent.limits.journal_bytes)
    writer.append("attempt", None, n=number, source_hash=None, resumed_from=sorted(answers.by_id))
    if journal.open_request(0) is None:
        writer.append("call", 0, op="agent", name=name, input=agent_input, key=f"agent|{name}", description=None)
    interrupt = journal.interrupt_at(0)
    resume = None
    if interrupt is not None and interrupt.body["id"] in answers.by_id:
        value = answers.by_id[interrupt.body["id"]]
        writer.append("answer", 0, **answers.entry(interrupt.body["id"], value))
        resume = Resume(position=0, value=value, state=interrupt.body.get("state"), id=interrupt.body["id"])
    outcome = await call_action(agent, agent_input, resume, engine.executor, parent.limits.action_timeout)
    if outcome.kind == "interrupt":
        interrupt_id = f"{child_id}:0"
        writer.append(
            "interrupt",
            0,
            name=name,
            input=agent_input,
            data=outcome.data,
            state=outcome.state,
            id=interrupt_id,
            approval=outcome.approval,
        )
        shown = Interrupt(
            interrupt_id,
            child_id,
            0,
            name,
            detach(agent_input),
            detach(outcome.data),
            detach(outcome.state),
            outcome.approval,
        )
        result = AttemptResult("interrupted", interrupts=[shown])
        engine.store.finish_attempt(child_id, number, "interrupted", writer.take(), replayed=0)
        return result
    if outcome.kind == "ok":
        writer.append("result", 0, ok=True, value=outcome.value)
        engine.store.finish_attempt(child_id, number, "completed", writer.take(), replayed=0, output=outcome.value)
        return AttemptResult("completed", output=outcome.value)
    writer.append("result", 0, ok=False, error=outcome.error)
    engine.store.finish_attempt(child_id, number, "failed", writer.take(), replayed=0, error=outcome.error)
    failure = outcome.error or {}
    trace, limit = failure.get("traceback"), failure.get("limit")
    return AttemptResult(
        "failed",
        error=ActionError(
            name,
            str(failure.get("message", "failed")),
            traceback=trace if isinstance(trace, str) else None,
            limit=limit if isinstance(limit, str) else None,
        ),
    )
