"""Actions: the public types of the Python callables a script may call.

An action is called with the script's one argument. To pause the run for a
human it raises ``ActionInterrupt``; on resume it is called again with
``resume=Resume(value=ANSWER, state=CHECKPOINT)``. ``approval=True`` puts that
pattern in front of any function. How one call is made is ``calling.py``; the
JSON boundary is ``values.py``; the rule for names is ``naming.py``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["NO_ANSWER", "Action", "ActionInterrupt", "Outcome", "OutcomeKind", "Resume"]


class _NoAnswer:
    """The type of ``NO_ANSWER``: shown as ``<no answer>`` in a signature."""

    def __repr__(self) -> str:
        return "<no answer>"


# The default of every answer that may be left out (``Sandbox.resume(run_id)``, ``fork``, the agent tool's
# ``resume``, ``Resume.value``, ``card.answer``'s edit): none was given. ``None`` is not that: it is JSON null,
# an answer a question may ask for (an approval refuses it as it refuses any other value that is no decision).
NO_ANSWER: Any = _NoAnswer()


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
    action saved when it interrupted. ``value`` left out is no answer (``None``
    is one: JSON null): ``Resume(position=p)`` given to ``eval`` answers
    nothing, and the call at ``p`` runs live with no resume value, asking again.

    >>> Resume(position=1)
    Resume(position=1, value=<no answer>, state=None, id=None)
    """

    position: int | None = None
    value: Any = NO_ANSWER  # an action is always handed its answer: only eval's argument may leave it out
    state: Any = None
    id: str | None = None


@dataclass
class Action:
    """``spec``: the catalog entry (``agents.catalog.ActionSpec``) when the action is typed. Where a call
    enters, ``calling.call_action`` asks it to ``validate`` the input, to bind the valid value to the function's
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
        self.quick = False  # a plain action's last call was quick: it may run in place (calling.run)
        self.starts_scripts = False  # it once ran a script (sb.eval): never in place again (calling.started_script)
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
