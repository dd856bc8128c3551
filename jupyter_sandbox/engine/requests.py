"""The script's requests: what each kind the prelude queues asks of the host, as effects.

``handle(state, item)`` reads the attempt's state and returns the effects (effects.py) that the
attempt loop applies, in order, before the next item is handled: one handler per kind (``call``,
``delegate``/``agent``, ``sleep``, ``wait``, the notes, ...). A request at a slot an earlier attempt
left open reuses that slot's entry; a determinism check (``execute=False``) starts nothing at all.
To add a kind: write ``_kind(state, item) -> list[Effect]`` and enter it in ``_HANDLERS``.

Example::

    handle(state, {"t": "continue", "state": {"n": 1}})  # [Continue({"n": 1})]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..actions import Action
from ..calling import needs_approval
from ..errors import InputInvalid, StoreError
from ..stores.rows import Entry
from .call_answers import answer_for
from .divergence import diverged, mismatch
from .effects import (
    Append,
    CallAction,
    ChildRun,
    Continue,
    Dispatch,
    Done,
    Effect,
    Fail,
    FailedCall,
    Hold,
    Observe,
    Progress,
    Reopen,
    Request,
    Timer,
    WaitFor,
)
from .state import AttemptState
from .waits import EventWait

__all__ = ["handle"]

Effects = list[Effect]
_REQUEST_KINDS = {"call": "call", "delegate": "call", "agent": "call", "sleep": "timer", "wait": "wait"}
_NOTES = frozenset({"console", "log", "step", "plan"})
_READS = frozenset({"now", "random"})


def handle(state: AttemptState, item: dict[str, Any]) -> Effects:
    """The effects of one item the prelude queued (``item["t"]`` is its kind); unknown kinds do nothing."""
    kind = item["t"]
    if not state.attempt.execute:  # a determinism check starts nothing and records no read
        if kind in _REQUEST_KINDS:
            return _reached(state, item)
        if kind in _READS:
            return _reached_read(state, item)
    handler = _HANDLERS.get(kind)
    return handler(state, item) if handler is not None else []


def _note(state: AttemptState, item: dict[str, Any]) -> Effects:
    """A console line, log, step or plan: shown, and journaled unless the replay gave it again."""
    body = {k: v for k, v in item.items() if k not in ("t", "r")}
    replayed = bool(item["r"])
    effects: Effects = []
    if item["t"] == "console":
        effects.append(Observe("console", ({"level": item["level"], "message": item["message"]}, replayed)))
    elif item["t"] == "step":
        effects.append(Observe("step", (dict(body),)))
    if not replayed:
        effects.append(Append(item["t"], None, body))
    return effects


def _read(state: AttemptState, item: dict[str, Any]) -> Effects:
    return [Append(item["t"], item["s"], {"value": item["value"]})]


def _open_record(entry: Entry) -> dict[str, Any]:
    """An open request as a mismatch shows what the journal recorded at its slot."""
    body = entry.body
    if entry.kind == "call":
        return {
            "type": "action" if body.get("op", "call") == "call" else body["op"],
            "name": body.get("name"),
            "input": body.get("input"),
        }
    return {"type": "sleep" if entry.kind == "timer" else entry.kind, "input": body.get("ms", body.get("match"))}


def _open(state: AttemptState, item: dict[str, Any], kind: str) -> Entry | None:
    """The request an earlier attempt left open at this slot with the same key, if any.

    Raises the divergence when the recorded run left another request open there (the interrupted call,
    one in flight at a crash): its answer or its retry must not go to this one.
    """
    previous = state.attempt.journal.open_request(item["s"])
    if previous is not None and (previous.kind != kind or previous.body.get("key") != item["key"]):
        raise diverged(state.attempt, item["s"], item, recorded=_open_record(previous))
    return previous


def _unchecked(state: AttemptState, slot: int) -> bool:
    """Past every slot a paused run reserved (or after the script settled): nothing to check it against."""
    unfinished = state.attempt.run.status not in ("completed", "continued") or state.outcome is not None
    return slot >= state.attempt.plan.frontier and unfinished


def _reached(state: AttemptState, item: dict[str, Any]) -> Effects:
    """A determinism check met a request the journal has no completion for.

    Open in the recorded run too (a timer a race left running, the interrupted
    call): reached and matched, it stays open and the replay goes on past it.
    Unchecked (``_unchecked``): the recorded run never got there. Anything else is a divergence.
    """
    slot = item["s"]
    previous = state.attempt.journal.open_request(slot)
    if previous is not None and previous.kind == _REQUEST_KINDS[item["t"]] and previous.body.get("key") == item["key"]:
        return [Hold(slot, previous)]
    if _unchecked(state, slot):
        return []
    return [Fail(diverged(state.attempt, slot, item))]


def _reached_read(state: AttemptState, item: dict[str, Any]) -> Effects:
    """A determinism check met a clock or random read the journal has no entry for: unchecked, or a
    divergence (never journaled: a check records nothing)."""
    slot = item["s"]
    if _unchecked(state, slot):
        return []
    return [Fail(diverged(state.attempt, slot, {"t": item["t"], "s": slot}))]


def _call(state: AttemptState, item: dict[str, Any]) -> Effects:
    slot, name = item["s"], item["name"]
    attempt = state.attempt
    action = attempt.engine.actions[name]
    if action.saved is not None:
        return _saved(state, item, action)
    previous = _open(state, item, "call")
    if previous is not None:
        request: Effect = Reopen(slot, previous)
        asked = previous.body.get("approval")
    else:
        # The optional fields only when set: most calls have no description, and every row is read back
        optional = {}
        for field in ("description", "line"):
            if item.get(field) is not None:
                optional[field] = item[field]
        # Whether the call needs approval is decided once, here, and journaled: a resume in a process
        # that registered the action otherwise (or a policy that would now say otherwise) changes nothing.
        if action.approval is not False:
            optional["approval"] = needs_approval(action, item["input"])
        request = Request(
            "call", slot, {"key": item["key"], "op": "call", "name": name, "input": item["input"], **optional}
        )
        asked = optional.get("approval")
    resume, approval, call_input, answer = answer_for(
        attempt.journal, attempt.answers, attempt.run.id, slot, item["input"], asked=bool(asked)
    )
    effects: Effects = [request]
    if answer is not None:
        effects.append(Append("answer", slot, answer))
    effects.append(Dispatch(slot, CallAction(action, call_input, resume, approval)))
    return effects


def _saved(state: AttemptState, item: dict[str, Any], action: Action) -> Effects:
    """A call of a saved script (``actions.scripts.NAME``): a child run of the version the call recorded
    (the newest, when the call is made live)."""
    assert action.saved is not None
    slot = item["s"]
    store, previous = state.attempt.engine.store, state.attempt.journal.open_request(slot)
    version = previous.body.get("version") if previous is not None else action.saved_version
    found = store.script(action.saved, version) if isinstance(version, int) else None  # (Store) saved.py's table
    failure = None
    if found is None:
        failure = _failure(f"{action.name} was removed from the store's saved scripts")
    elif action.spec is not None and action.spec.checks:
        try:
            action.spec.validate(item["input"])
        except InputInvalid as exc:
            failure = _failure(f"{action.name}: invalid input: {exc}", "InvalidInput", exc.issues)
    if failure is not None or found is None:  # the call is journaled, and fails: no child run
        effects: Effects = []
        if previous is None:
            body = {"key": item["key"], "op": "call", "name": action.name, "input": item["input"]}
            effects.append(Request("call", slot, body))
        else:
            effects.append(Reopen(slot, previous))
        effects.append(Dispatch(slot, FailedCall(failure or _failure(action.name))))
        return effects
    spec = {"script": found.source, "input": item["input"], "name": action.name}
    return _child_run(state, "delegate", item, spec, returns=_returns(action), version=found.version)


def _returns(action: Action) -> Callable[[Any], dict[str, Any] | None] | None:
    """The check of a saved script's output against its ``output_schema`` (None: none is declared): the
    caller's declaration promises that type, so a value outside it is the call's failure, journaled."""
    output_issues = getattr(action.spec, "output_issues", None)  # (agents.catalog.ActionSpec)
    if output_issues is None or action.spec.output_schema is None:
        return None

    def returns(value: Any) -> dict[str, Any] | None:
        issues = output_issues(value)
        if not issues:
            return None
        listed = "; ".join(f"{i['path']}: {i['message']}" for i in issues)
        return _failure(f"{action.name} returned a value its output_schema refuses: {listed}", "InvalidOutput", issues)

    return returns


def _child(state: AttemptState, item: dict[str, Any]) -> Effects:
    return _child_run(state, item["t"], item, None)


def _child_run(
    state: AttemptState,
    op: str,
    item: dict[str, Any],
    spec: Any,
    returns: Callable[[Any], dict[str, Any] | None] | None = None,
    **recorded: Any,
) -> Effects:
    slot, attempt = item["s"], state.attempt
    previous = _open(state, item, "call")
    effects: Effects = []
    if previous is not None:
        child_id = previous.body.get("child")
        child_id = (attempt.run.options.get("children") or {}).get(child_id, child_id)  # a fork's own child
        effects.append(Reopen(slot, previous))
    else:
        child_id = attempt.engine.new_run_id()
        body = {
            "key": item["key"],
            "op": op,
            "name": item["name"],
            "input": item["input"],
            "child": child_id,
            "description": None,
            "line": item.get("line"),
            **recorded,
        }
        effects.append(Request("call", slot, body))
    if not isinstance(child_id, str):  # every child call is journaled with its child's id: a damaged row
        raise StoreError(f"run {attempt.run.id}: the journaled call at slot {slot} names no child run")
    interrupt = attempt.journal.interrupt_at(slot)
    pending = interrupt.body.get("interrupts", []) if interrupt is not None else []
    answers = attempt.answers.for_child(pending, slot)
    work = ChildRun(
        op, item["input"] if spec is None else spec, child_id, answers, resumed=previous is not None, returns=returns
    )
    effects.append(Dispatch(slot, work))
    return effects


def _imported(state: AttemptState, item: dict[str, Any]) -> Effects:
    """An effect served from a bare call log: journal its request and completion as if it had run,
    so this run's own journal is complete and a resume by run id never runs it again."""
    slot, key = item["s"], item["key"]
    kin, ok, value = state.attempt.plan.served(item["i"])
    op = kin["op"]
    if op == "sleep":
        ms = kin["input"] if isinstance(kin["input"], (int, float)) else 0
        return [Append("timer", slot, {"key": key, "ms": ms, "due": state.now}), Append("fired", slot, {})]
    if op == "wait":
        return [
            Append("wait", slot, {"key": key, "match": kin["input"], "timeout": kin["timeout"], "due": None}),
            Append("event", slot, {"event": value, "signal": None}),
        ]
    call = {"key": key, "op": op, "name": kin["name"], "input": kin["input"], "description": None, "imported": True}
    if ok:
        result = {"ok": True, "value": value}
    else:
        result = {"ok": False, "error": {**value, "action": kin["name"]}}
    return [Append("call", slot, call), Append("result", slot, result)]


def _sleep(state: AttemptState, item: dict[str, Any]) -> Effects:
    slot = item["s"]
    previous = _open(state, item, "timer")
    if previous is not None:
        return [Reopen(slot, previous), Timer(slot, previous.body["due"])]
    due = state.now + item["ms"]
    return [Request("timer", slot, {"key": item["key"], "ms": item["ms"], "due": due}), Timer(slot, due)]


def _wait(state: AttemptState, item: dict[str, Any]) -> Effects:
    slot = item["s"]
    previous = _open(state, item, "wait")
    if previous is not None:
        return [Reopen(slot, previous), WaitFor(slot, EventWait(item["match"], previous.body["due"], item["key"]))]
    timeout = item["timeout"]
    due = None if timeout is None else state.now + timeout
    body = {"key": item["key"], "match": item["match"], "timeout": timeout, "due": due}
    return [Request("wait", slot, body), WaitFor(slot, EventWait(item["match"], due, item["key"]))]


def _progress(state: AttemptState, item: dict[str, Any]) -> Effects:
    return [Progress(item["patch"])]


def _continue(state: AttemptState, item: dict[str, Any]) -> Effects:
    return [Continue(item["state"])]


def _done(state: AttemptState, item: dict[str, Any]) -> Effects:
    return [Done(item["outcome"])]


def _mismatch(state: AttemptState, item: dict[str, Any]) -> Effects:
    return [Fail(mismatch(state.attempt, item))]


def _failure(message: str, name: str = "ActionError", issues: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"name": name, "message": message}
    if issues is not None:
        error["issues"] = issues
    return error


_HANDLERS: dict[str, Callable[[AttemptState, dict[str, Any]], Effects]] = {
    **dict.fromkeys(_NOTES, _note),
    **dict.fromkeys(_READS, _read),
    "call": _call,
    "imported": _imported,
    "delegate": _child,
    "agent": _child,
    "sleep": _sleep,
    "wait": _wait,
    "progress": _progress,
    "continue": _continue,
    "done": _done,
    "mismatch": _mismatch,
}
