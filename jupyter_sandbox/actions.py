"""Actions: the Python callables a script may call, and how one call is made.

An action is called with the script's one argument. To pause the run for a
human it raises ``ActionInterrupt``; on resume it is called again with
``resume=Resume(value=ANSWER, state=CHECKPOINT)``. ``approval=True`` puts that
pattern in front of any function.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import re
import sys
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Literal

from .decisions import Reject
from .errors import InputInvalid, InvalidValue, error_dict
from .tracebacks import action_traceback

__all__ = [
    "Action",
    "ActionInterrupt",
    "InputInvalid",
    "Resume",
    "Outcome",
    "call_action",
    "check_name",
    "detach",
    "json_copy",
    "needs_approval",
    "to_json",
]


class ActionInterrupt(Exception):
    """Raised by an action to pause the run until a caller answers.

    ``data`` is shown to the person answering (the approval panel renders
    it); ``state`` is the action's private checkpoint, handed back on resume.

    >>> def send(msg, resume=None):
    ...     if resume is None:
    ...         raise ActionInterrupt(data={"draft": msg}, state={"attempt": 1})
    ...     return {"sent": resume.value}
    """

    def __init__(self, data: Any = None, state: Any = None):
        self.data, self.state = data, state
        super().__init__("action needs an answer")


@dataclass(frozen=True)
class Resume:
    """An answer to an interrupt.

    Passed to ``Sandbox.eval(resume=...)`` it targets the interrupted call at
    ``position`` (or, with parallel or child interrupts, the interrupt ``id``);
    passed to an action it carries the answer ``value`` and the ``state`` the
    action saved when it interrupted.
    """

    position: int | None = None
    value: Any = None
    state: Any = None
    id: str | None = None


@dataclass
class Action:
    """``spec``: the catalog entry (``agents.catalog.ActionSpec``) when the action is typed. Where a call
    enters, ``call_action`` asks it to ``validate`` the input, to bind the valid value to the function's
    ``arguments``, and to ``dump`` the result to JSON values: the engine needs no knowledge of types."""

    name: str
    fn: Callable[..., Any]
    approval: bool | Callable[[Any], Any] = False  # True, or a policy of the validated input (needs_approval)
    timeout: float | None = None
    description: str | None = None
    spec: Any = None
    about: dict[str, Any] | None = None  # shown beside an approval (an MCP tool's server and annotations)
    revert: Callable[[Any, Any], Any] | None = None  # the compensation of a completed call: revert(input, result)
    saved: str | None = None  # a saved script's name (saved.py): a call runs it as a child run
    saved_version: int = 0

    def __post_init__(self) -> None:
        params = inspect.signature(self.fn).parameters.values()
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
        self.takes_input = bool(positional) and positional[0].name != "resume"
        self.takes_resume = any(p.name == "resume" or p.kind == p.VAR_KEYWORD for p in params)
        self.is_async = inspect.iscoroutinefunction(self.fn)
        self.quick = False  # a plain action's last call was quick: it may run in place (call_action)
        self.description = self.description or (inspect.getdoc(self.fn) or "").split("\n")[0] or None


# What a live call produced; a child run's call may also stop at its interrupt or park.
OutcomeKind = Literal["ok", "error", "timeout", "interrupt", "child-interrupt", "parked"]


@dataclass
class Outcome:
    """What one live call produced: a value (with its JSON), a failure, or an interrupt."""

    kind: OutcomeKind
    value: Any = None
    json: str = "null"
    error: dict[str, Any] | None = None  # name, message; issues (a list) for an invalid input
    data: Any = None
    state: Any = None
    approval: bool = False


# The rule for action and agent names. A script reaches an action as ``actions.NAME``, a property of a plain
# object in the realm: a name that is a member of ``Object.prototype`` would corrupt that object (``__proto__``
# replaces its prototype; ``constructor``, ``toString``, ``hasOwnProperty`` ... shadow what JavaScript itself
# calls on it), so none may be one, nor ``prototype``. A dotted name (``files.read_file``) is a namespaced
# one, each segment under the same rule; a name may not also be the namespace of another (``files`` beside
# ``files.read_file``), so ``actions.files.read_file`` can always address it.
RESERVED_NAMES = frozenset(
    {
        "__proto__",
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
        "prototype",
    }
)
MAX_NAME = 128


def check_name(name: Any, taken: Any = (), what: str = "action") -> str:
    """``name`` if it is a valid action (or agent) name beside the names ``taken``; else a clear error.

    The rule (``RESERVED_NAMES`` above): 1 to 128 characters; one or more segments joined by dots, each an
    identifier (``str.isidentifier``) and not a member of ``Object.prototype`` nor ``prototype``; not the
    namespace of another registered name, nor inside a registered name's namespace. Registering a name again
    replaces it.
    """
    if not isinstance(name, str):
        raise TypeError(f"an {what} name must be a string, got {type(name).__name__}")
    if not name or len(name) > MAX_NAME:
        raise ValueError(f"an {what} name must have 1 to {MAX_NAME} characters, got {len(name)}")
    for segment in name.split("."):
        if not segment.isidentifier():
            raise ValueError(
                f"{what} name {name!r}: {segment!r} is not an identifier (names are identifiers, "
                "or identifiers joined by dots: 'files.read_file')"
            )
        if segment in RESERVED_NAMES:
            raise ValueError(
                f"{what} name {name!r}: {segment!r} is reserved (a member of JavaScript's "
                "Object.prototype, which would corrupt the script's `actions` object); choose another"
            )
    for other in taken:
        if other == name:
            continue
        if other.startswith(name + "."):
            raise ValueError(f"{what} name {name!r} is already the namespace of {other!r}")
        if name.startswith(other + "."):
            raise ValueError(f"{what} name {name!r} is inside {other!r}, which is registered as an {what}")
    return name


MAX_DEPTH = 256  # below the 400 levels the journal's CBOR decoder reads back
_LONG_NUMBER = re.compile(r"\d{309}")  # as many digits as the largest double has: maybe past it


_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False)  # json.dumps with options builds one per call


def to_json(value: Any, what: str) -> str:
    """JSON for the realm; a clear TypeError naming ``what`` and the offending part if it is not JSON."""
    if value is None:
        return "null"
    try:
        text = _ENCODER.encode(value)
        text.encode("utf-8")  # a lone surrogate cannot be stored
        # An int the script would read as Infinity; a text shorter than 309 characters holds none (no scan).
        if len(text) >= 309 and _LONG_NUMBER.search(text) and _first_problem(value, "$"):
            raise ValueError("an integer past the double range")
        if isinstance(value, (dict, list, tuple)) and _too_deep(value, MAX_DEPTH):
            raise ValueError("too deep")
        return text
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        raise InvalidValue(f"{what} is not JSON: {_first_problem(value, '$')}") from None


def json_copy(value: Any, what: str) -> Any:
    """``value`` as the script sees it (JSON's types: tuples as lists, keys as text), sharing nothing with it.

    What enters from Python (a run's input, an answer, an interrupt's data, a signal) is kept in this form, so
    the caller's later edits of their object change nothing recorded.
    """
    text = to_json(value, what)
    return value if type(value) in _SCALARS else json.loads(text)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def detach(value: Any) -> Any:
    """A copy of a JSON value sharing no dict or list with it (scalars are immutable and shared).

    Values kept in the journal and values handed to Python never share a mutable object, in either
    direction: an action that edits its input, or a caller who edits a call log, changes nothing recorded.
    """
    kind = type(value)
    if kind is dict:
        return {k: detach(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if kind is list or kind is tuple:
        return [detach(v) if type(v) in _CONTAINERS else v for v in value]
    return value


_CONTAINERS = frozenset({dict, list, tuple})


def _too_deep(value: Any, room: int) -> bool:
    if room <= 0:
        return True
    items = value.values() if isinstance(value, dict) else value
    return any(isinstance(v, (dict, list, tuple)) and _too_deep(v, room - 1) for v in items)


def _first_problem(value: Any, path: str, depth: int = 0) -> str:
    if depth >= MAX_DEPTH:
        return f"{path} nests deeper than {MAX_DEPTH} levels"
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path} has a key of type {type(key).__name__}"
            if _unstorable(key):
                return f"{path} has a key with a lone surrogate"
            found = _first_problem(item, f"{path}.{key}", depth + 1)
            if found:
                return found
        return ""
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _first_problem(item, f"{path}[{i}]", depth + 1)
            if found:
                return found
        return ""
    if type(value) is int and abs(value) > sys.float_info.max:
        return f"{path} is an integer past the double range (the script would read it as Infinity)"
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return f"{path} is {value}, which JSON cannot carry"
    if isinstance(value, str):
        return f"{path} is a string with a lone surrogate" if _unstorable(value) else ""
    if value is None or isinstance(value, (bool, int, float)):
        return ""
    return f"{path} is a {type(value).__name__}"


def _unstorable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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
    """Make one live call: run the function (threaded if plain, on the loop if async) and classify the result.

    ``approval`` is the call's approval step as the journal has it (``engine/answers.answer_for``): False
    for none, True to pause for a human (an interrupt), or the decision to carry out: ``Approve``, ``Edit``
    (the input is the edited one) or ``Reject`` (the function never runs; the script sees ``Rejected``).
    ``inline`` may run a plain function in place instead of on ``executor`` (``Inline``).
    """
    input = detach(input)  # the action may edit its input: the journal's copy stays as the script sent it
    # The call after a human's answer (an approval's decision too): never in place
    answered = resume is not None or not isinstance(approval, bool)
    if resume is not None:
        resume = dataclasses.replace(resume, value=detach(resume.value), state=detach(resume.state))
    spec = action.spec if action.spec is not None and action.spec.checks else None
    if approval is True:
        refused = _checked(action, spec, input) if spec is not None else None
        if isinstance(refused, Outcome):  # no human is asked to approve a call that cannot run
            return refused
        return Outcome("interrupt", data={**(action.about or {}), "action": action.name, "input": input}, approval=True)
    if isinstance(approval, Reject):
        return Outcome(
            "error",
            error={
                "name": "Rejected",
                "message": f"{action.name} was rejected" + (f": {approval.reason}" if approval.reason else ""),
            },
        )
    args: tuple[Any, ...] = (input,) if action.takes_input else ()
    kwargs: dict[str, Any] = {}
    if spec is not None:  # an edited approval is checked against the same schema
        bound = _checked(action, spec, input)
        if isinstance(bound, Outcome):
            return bound
        args, kwargs = bound
    if action.takes_resume:
        kwargs["resume"] = resume
    limit = action.timeout if action.timeout is not None else timeout
    try:
        if action.is_async:
            pending = action.fn(*args, **kwargs)
            value = await (asyncio.wait_for(pending, limit) if limit else pending)
        else:
            ran, value = False, None
            # In place only without a timeout (it needs a thread it can leave behind), and not the answered
            # call of an interrupt: what runs after a human's answer is often the slow part.
            if inline is not None and not limit and not answered and action.quick:
                ran, value = inline(functools.partial(_measured, action, args, kwargs))
            if not ran:
                pending = asyncio.get_running_loop().run_in_executor(executor, _measured, action, args, kwargs)
                value = await (asyncio.wait_for(pending, limit) if limit else pending)
    except ActionInterrupt as interrupt:
        return _interrupt(action, interrupt)
    except _Escaped as escaped:
        return Outcome("error", error=describe_exception(escaped.original))
    except asyncio.TimeoutError:
        return Outcome(
            "timeout", error={"name": "Timeout", "message": f"{action.name} did not finish within {limit:g} s"}
        )
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if sys.version_info < (3, 11):  # no Task.cancelling(): the run's cancel cannot be told apart, so it wins
            raise
        if task is not None and task.cancelling():
            raise  # the run itself is being cancelled
        return Outcome("error", error=describe_exception(asyncio.CancelledError()))
    except BaseException as exc:  # any failure of user code, even SystemExit, becomes the script's ActionError
        return Outcome("error", error=describe_exception(exc))
    try:
        if spec is not None:
            value = spec.dump(value)
        text = to_json(value, f"the value {action.name} returned")
    except TypeError as exc:
        return Outcome("error", error={"name": "TypeError", "message": str(exc)})
    # The journal keeps exactly what the script sees (tuples as lists, and so on).
    plain = json.loads(text) if isinstance(value, (dict, list, tuple)) else value
    return Outcome("ok", value=plain, json=text)


def _checked(action: Action, spec: Any, input: Any) -> Outcome | tuple[tuple, dict]:
    """The function's arguments for a valid input, or the failure naming every issue (the script's ActionError)."""
    try:
        return spec.arguments(spec.validate(input))
    except InputInvalid as exc:
        return Outcome(
            "error",
            error={"name": "InvalidInput", "issues": exc.issues, "message": f"{action.name}: invalid input: {exc}"},
        )


class _Escaped(Exception):
    """Carries a BaseException out of a worker thread: SystemExit, GeneratorExit or
    StopIteration raised into an asyncio future would stop the engine, not the call."""

    def __init__(self, original: BaseException):
        self.original = original
        super().__init__(type(original).__name__)


# How the engine offers to run a plain function in place: (True, its value), or (False, None) when it may not.
Inline = Callable[[Callable[[], Any]], "tuple[bool, Any]"]

QUICK_SECONDS = 0.001  # a plain action whose last call took less may run in place (it blocks the engine meanwhile)


def _measured(action: Action, args: tuple, kwargs: dict) -> Any:
    """Run a plain action, and remember whether it was quick enough to run in place next time.

    A call that interrupts says nothing of how long the call after the answer takes: it is not counted.
    """
    started, counted = time.perf_counter(), True
    try:
        return _threaded(action.fn, args, kwargs)
    except ActionInterrupt:
        counted = False
        raise
    finally:
        if counted:
            action.quick = time.perf_counter() - started < QUICK_SECONDS


def _threaded(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Run a plain action in a worker thread."""
    try:
        return fn(*args, **kwargs)
    except (ActionInterrupt, _Escaped):
        raise
    except (StopIteration, BaseException) as exc:
        if isinstance(exc, Exception) and not isinstance(exc, StopIteration):
            raise
        raise _Escaped(exc) from None


def describe_exception(exc: BaseException) -> dict[str, str]:
    """``{name, message, traceback?}`` for any exception, even one whose ``str()`` raises; ``traceback``: the
    action's own frames (``tracebacks.action_traceback``), when it has any."""
    record = error_dict(exc)
    name, text = record["name"], record["message"]
    described = {"name": name, "message": f"{name}: {text}" if text else name}
    trace = action_traceback(exc)
    if trace:
        described["traceback"] = trace
    return described


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
    if action.spec is not None and action.spec.checks:
        try:
            value = action.spec.validate(input)
        except InputInvalid:
            return True  # the call fails unrun at its validation; the approval step before it shows why
    try:
        return action.approval(detach(value)) is not False
    except Exception:
        return True
