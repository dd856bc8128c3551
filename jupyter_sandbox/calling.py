"""How one live call of an action is made, in four steps: gate, validate, run, classify.

``call_action`` is the whole call; each step is a function of its own so it can be read and tested alone:

- ``gate``: the approval step as the journal has it (pause for a human, or carry out a ``Reject``);
- ``validate``: the input checked against the action's schema and bound to the function's arguments;
- ``run``: the function itself (on the loop if ``async``, on a worker thread or in place if plain);
- ``classify``: what it returned (or ``failure``: what it raised) as the ``Outcome`` the engine journals.

>>> import asyncio, concurrent.futures
>>> from jupyter_sandbox.actions import Action
>>> pool = concurrent.futures.ThreadPoolExecutor(1)
>>> asyncio.run(call_action(Action("double", lambda x: 2 * x), 21, None, pool, None)).value
42
>>> pool.shutdown()
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from .actions import Action, ActionInterrupt, Outcome, Resume
from .decisions import Reject
from .errors import ActionError, InputInvalid, LimitExceeded, error_dict
from .tracebacks import action_traceback, cut_message
from .values import detach, json_and_copy, json_copy, well_formed

__all__ = [
    "Inline",
    "call_action",
    "classify",
    "describe_exception",
    "failure",
    "gate",
    "needs_approval",
    "run",
    "run_threaded",
    "validate",
]

# How the engine offers to run a plain function in place: (True, its value), or (False, None) when it may not.
Inline = Callable[[Callable[[], Any]], "tuple[bool, Any]"]

QUICK_SECONDS = 0.001  # a plain action whose last call took less may run in place (it blocks the engine meanwhile)


async def call_action(
    action: Action,
    input: Any,
    resume: Resume | None,
    executor: Executor,
    timeout: float | None,
    *,
    approval: Any = False,
    inline: Inline | None = None,
) -> Outcome:
    """Make one live call: gate it, validate its input, run the function and classify what came of it.

    ``approval`` is the call's approval step as the journal has it (``engine/call_answers.answer_for``): False
    for none, True to pause for a human (an interrupt), or the decision to carry out: ``Approve``, ``Edit``
    (the input is the edited one) or ``Reject`` (the function never runs; the script sees ``Rejected``).
    ``inline`` may run a plain function in place instead of on ``executor`` (``Inline``).
    """
    input = detach(input)  # the action may edit its input: the journal's copy stays as the script sent it
    stopped = gate(action, input, approval)
    if stopped is not None:
        return stopped
    bound = validate(action, input)  # an edited approval is checked against the same schema
    if isinstance(bound, Outcome):
        return bound
    args, kwargs = bound
    if action.takes_resume:
        kwargs["resume"] = _detached(resume)
    limit = action.timeout if action.timeout is not None else timeout
    # The call after a human's answer (an approval's decision too) never runs in place: what runs after a
    # human's answer is often the slow part.
    answered = resume is not None or not isinstance(approval, bool)
    try:
        value = await run(action, args, kwargs, executor, limit, None if answered else inline)
    except BaseException as exc:  # any failure of user code, even SystemExit, becomes the script's ActionError
        outcome = failure(action, exc, limit)
        if outcome is None:
            raise
        return outcome
    return classify(action, value)


def gate(action: Action, input: Any, approval: Any) -> Outcome | None:
    """The approval step: the ``Outcome`` that ends the call before its function runs, or None to go on.

    ``approval=True`` pauses for a human (an ``interrupt`` whose data shows the action, its input and its
    ``about``), unless the input is invalid: no human is asked to approve a call that cannot run. A
    ``Reject`` ends the call as the script's ``Rejected`` error. Anything else (False, ``Approve``, ``Edit``)
    goes on.
    """
    if approval is True:
        refused = validate(action, input)
        if isinstance(refused, Outcome):
            return refused
        return Outcome("interrupt", data={**(action.about or {}), "action": action.name, "input": input}, approval=True)
    if isinstance(approval, Reject):
        reason = f": {approval.reason}" if approval.reason else ""
        return Outcome("error", error={"name": "Rejected", "message": f"{action.name} was rejected{reason}"})
    return None


def validate(action: Action, input: Any) -> Outcome | tuple[tuple[Any, ...], dict[str, Any]]:
    """The function's ``(args, kwargs)`` for ``input``, or the ``InvalidInput`` failure naming every issue.

    A typed action (a ``spec`` with checks) validates the input and binds the valid value to its function's
    parameters; an untyped one is passed the input as it is (or nothing, if its function takes none).
    """
    spec = _checking(action)
    if spec is None:
        return ((input,) if action.takes_input else ()), {}
    try:
        args, kwargs = spec.arguments(spec.validate(input))
    except InputInvalid as exc:
        return Outcome(
            "error",
            error={"name": "InvalidInput", "issues": exc.issues, "message": f"{action.name}: invalid input: {exc}"},
        )
    except Exception as exc:  # the input type's own code (a validator raising KeyError ...) failed: the call's failure
        return Outcome("error", error=describe_exception(exc))
    return tuple(args), dict(kwargs)


async def run(
    action: Action,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    executor: Executor,
    limit: float | None,
    inline: Inline | None = None,
) -> Any:
    """Run the function and return its value, or raise what it raised (``asyncio.TimeoutError`` past ``limit``).

    An ``async`` function runs on the loop; a plain one on ``executor``'s threads, or in place through
    ``inline`` when its last call was quick and there is no time limit (a limit needs a thread it can leave
    behind). A plain function's ``BaseException`` (``SystemExit``, ``StopIteration`` ...) arrives as
    ``_Escaped``: raised into an asyncio future it would stop the engine, not the call.
    """
    if action.is_async:
        pending = action.fn(*args, **kwargs)
        return await (asyncio.wait_for(pending, limit) if limit else pending)
    if inline is not None and not limit and action.quick:
        ran, value = inline(functools.partial(_measured, action, args, kwargs))
        if ran:
            return value
    threaded = asyncio.get_running_loop().run_in_executor(executor, _measured, action, args, kwargs)
    return await (asyncio.wait_for(threaded, limit) if limit else threaded)


def classify(action: Action, value: Any) -> Outcome:
    """What the function returned as an ``ok`` Outcome (its schema's ``dump``, then JSON), or the failure that
    names why the script may not have it: a ``TypeError`` for what cannot cross, an ``InvalidOutput`` (with
    ``issues``) for a value its declared output refuses (the type ``sb.declarations()`` promises the script's
    author: the return annotation's, or ``output_schema=``). The value kept is exactly what the script sees
    (tuples as lists, a model as its serialization ...)."""
    spec = _checking(action)
    try:
        if spec is not None:
            value = spec.dump(value)
        text, plain = json_and_copy(value, f"the value {action.name} returned")
    except InputInvalid as exc:
        first = exc.issues[0]
        message = f"{action.name} returned a value its output_schema refuses: {first['path']}: {first['message']}"
        return Outcome("error", error={"name": "InvalidOutput", "issues": exc.issues, "message": message})
    except TypeError as exc:
        return Outcome("error", error={"name": "TypeError", "message": str(exc)})
    except Exception as exc:  # the output type's own code (a computed field, a serializer) failed: the call's failure
        return Outcome("error", error=describe_exception(exc))
    return Outcome("ok", value=plain, json=text)


def failure(action: Action, exc: BaseException, limit: float | None) -> Outcome | None:
    """What the function raised as an Outcome: an interrupt, a timeout or an error; None when the run itself
    is being cancelled (the caller re-raises: that cancel is not the call's failure)."""
    if isinstance(exc, ActionInterrupt):
        return _interrupt(action, exc)
    if isinstance(exc, asyncio.TimeoutError):
        return Outcome(
            "timeout", error={"name": "Timeout", "message": f"{action.name} did not finish within {limit or 0:g} s"}
        )
    if isinstance(exc, asyncio.CancelledError):
        if sys.version_info < (3, 11):  # no Task.cancelling(): the run's cancel cannot be told apart, so it wins
            return None
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            return None
    return Outcome("error", error=describe_exception(exc))


def _checking(action: Action) -> Any:
    """The action's spec when it checks anything, else None."""
    return action.spec if action.spec is not None and action.spec.checks else None


def _detached(resume: Resume | None) -> Resume | None:
    """The resume an action is handed: its own copies of the answer and the state."""
    if resume is None:
        return None
    return dataclasses.replace(resume, value=detach(resume.value), state=detach(resume.state))


class _Escaped(Exception):
    """Carries a BaseException out of a worker thread: SystemExit, GeneratorExit or
    StopIteration raised into an asyncio future would stop the engine, not the call."""

    def __init__(self, original: BaseException):
        self.original = original
        super().__init__(type(original).__name__)


_running = threading.local()  # .action: the plain action this thread is running (on a worker, or in place)


def _measured(action: Action, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run a plain action, and remember whether it was quick enough to run in place next time.

    A call that interrupts says nothing of how long the call after the answer takes: it is not counted.
    """
    started, counted, outer = time.perf_counter(), True, getattr(_running, "action", None)
    _running.action = action
    try:
        return run_threaded(action.fn, args, kwargs)
    except ActionInterrupt:
        counted = False
        raise
    finally:
        _running.action = outer
        if counted:
            action.quick = not action.starts_scripts and time.perf_counter() - started < QUICK_SECONDS


def started_script() -> None:
    """The plain action this thread runs is starting a script (``sb.eval``): it never runs in place again.

    In place it holds the engine's loop, which the script may need (an MCP server's session lives there);
    on a worker it does not.
    """
    action = getattr(_running, "action", None)
    if action is not None:
        action.starts_scripts, action.quick = True, False


def run_threaded(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run a plain action in a worker thread; a BaseException that is not an Exception leaves as ``_Escaped``."""
    try:
        return fn(*args, **kwargs)
    except (ActionInterrupt, _Escaped):
        raise
    except (StopIteration, BaseException) as exc:
        if isinstance(exc, Exception) and not isinstance(exc, StopIteration):
            raise
        raise _Escaped(exc) from None


def describe_exception(exc: BaseException) -> dict[str, str]:
    """``{name, message, limit?, traceback?}`` for any exception, even one whose ``str()`` raises; ``traceback``:
    the action's own frames (``tracebacks.action_traceback``), when it has any. A BaseException carried out of
    a worker thread (``run_threaded``) is described as itself.

    The message reads ``NAME: text`` once: an ``ActionError`` an action passes on (a script it ran failed)
    keeps its message, already so, however deep the scripts nest; ``limit`` is a ``LimitExceeded``'s, or the
    one such an ``ActionError`` carries from its cause. The message is cut past ``MAX_MESSAGE_CHARS``
    (``tracebacks.cut_message``), the traceback past ``MAX_CHARS``. A lone surrogate anywhere in its text is U+FFFD
    (``values.well_formed``), as in console text.

    >>> describe_exception(ActionError("inner", "ValueError: bad"))
    {'name': 'ActionError', 'message': 'ValueError: bad'}
    >>> describe_exception(LimitExceeded("nesting", "too deep"))["limit"]
    'nesting'
    """
    if isinstance(exc, _Escaped):
        exc = exc.original
    record = error_dict(exc)
    name, text = record["name"], record["message"]
    if isinstance(exc, ActionError):
        described = {"name": "ActionError", "message": cut_message(exc.message)}
    else:
        described = {"name": name, "message": cut_message(f"{name}: {text}" if text else name)}
    limit = exc.limit if isinstance(exc, (LimitExceeded, ActionError)) else None
    if isinstance(limit, str):
        described["limit"] = limit
    trace = action_traceback(exc)
    if trace:
        described["traceback"] = trace
    # Journaled as UTF-8, where a lone surrogate cannot be stored: replaced, so the script still catches it
    return {key: well_formed(value) for key, value in described.items()}


def _interrupt(action: Action, interrupt: ActionInterrupt) -> Outcome:
    """An interrupt, once its data and state are known to be JSON (they are stored and shown)."""
    try:  # copies: the action may still hold (and edit) the objects it raised with
        data = json_copy(interrupt.data, f"the data {action.name} interrupted with")
        state = json_copy(interrupt.state, f"the state {action.name} interrupted with")
    except TypeError as exc:
        return Outcome("error", error={"name": "TypeError", "message": str(exc)})
    return Outcome("interrupt", data=data, state=state)


def needs_approval(action: Action, input: Any) -> bool:
    """Whether a call of ``action`` with ``input`` waits for a human: ``approval=True`` always; a callable
    ``approval`` is asked with the validated input (``lambda order: order.total > 100``). A policy that
    fails, or an input its schema refuses, asks for approval: a doubt is settled by a human. The caller
    journals the verdict, so a replay never asks the policy again.
    """
    if not callable(action.approval):
        return bool(action.approval)
    value = input
    spec = _checking(action)
    if spec is not None:
        try:
            value = spec.validate(input)
        except InputInvalid:
            return True  # the call fails unrun at its validation; the approval step before it shows why
    try:
        return action.approval(detach(value)) is not False
    except Exception:
        return True
