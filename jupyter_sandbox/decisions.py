"""Decisions: the one definition of what answers an approval.

An approval interrupt accepts exactly ``True`` / ``False``, a decision object
(``Approve()``, ``Reject(reason)``, ``Edit(value)``), or their JSON forms:
``true``, ``false``, ``{"approved": true}``, ``{"approved": true, "input": ...}``
(an edit) and ``{"approved": false, "reason": ...}``. Anything else is refused
with a ``RunStateError`` naming what is accepted, before anything runs: a
truthy string, ``1`` or ``[False]`` never approves. A question (an action's own
``ActionInterrupt``) takes any JSON value; a decision object given to one is
sent as its JSON form.

>>> from jupyter_sandbox import Approve, Edit, Reject
>>> decision(True), decision({"approved": False, "reason": "too much"})
(Approve(), Reject(reason='too much', rollback=False))
>>> Edit({"total": 90}).to_json()
{'approved': True, 'input': {'total': 90}}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import RunStateError

__all__ = ["ACCEPTED", "Approve", "Decision", "Edit", "Reject", "as_json", "decision"]

ACCEPTED = (
    'True / False, Approve(), Reject(reason), Edit(input), or as JSON true, false, {"approved": true}, '
    '{"approved": true, "input": ...} (an edit) or {"approved": false, "reason": "..."} '
    '(with "rollback": true to roll the run back)'
)


@dataclass(frozen=True)
class Approve:
    """Approve the call as proposed: ``sb.resume(run_id, Approve())``."""

    def to_json(self) -> Any:
        return True


@dataclass(frozen=True)
class Reject:
    """Reject the call: it never runs, and the script sees an ``ActionError`` ("pay was rejected: REASON").

    ``rollback=True`` also rolls the run back (``Sandbox.rollback``): what it did so far is reverted.

    >>> Reject("over budget").to_json()
    {'approved': False, 'reason': 'over budget'}
    """

    reason: str | None = None
    rollback: bool = False

    def __post_init__(self) -> None:
        if self.reason is not None and not isinstance(self.reason, str):
            raise TypeError(f"Reject(reason) takes a string, got {type(self.reason).__name__}")
        if not isinstance(self.rollback, bool):
            raise TypeError(f"Reject(rollback=...) takes True or False, got {self.rollback!r:.40}")

    def to_json(self) -> Any:
        if self.reason is None and not self.rollback:
            return False
        out: dict[str, Any] = {"approved": False, "reason": self.reason}
        if self.rollback:
            out["rollback"] = True
        return out


@dataclass(frozen=True)
class Edit:
    """Approve the call with another input (checked against the action's schema, like the proposed one).

    >>> Edit([1, 2]).to_json()
    {'approved': True, 'input': [1, 2]}
    """

    input: Any

    def to_json(self) -> Any:
        return {"approved": True, "input": self.input}


Decision = Approve | Reject | Edit


def as_json(value: Any) -> Any:
    """A decision object as its JSON form; any other value as it is."""
    return value.to_json() if isinstance(value, (Approve, Reject, Edit)) else value


def decision(value: Any, *, run_id: str = "", status: str | None = None, what: str = "an approval") -> Decision:
    """The decision an approval answer states, or ``RunStateError`` naming what is accepted.

    Exact, never truthy: only ``True`` and the approved forms approve, only ``False`` and the rejected
    forms reject. A dict has only the keys of its form (a stray key may be a typo of one that matters).
    """
    if isinstance(value, (Approve, Reject, Edit)):
        return value
    if value is True:
        return Approve()
    if value is False:
        return Reject()
    if isinstance(value, dict) and value.get("approved") is True and set(value) <= {"approved", "input"}:
        return Edit(value["input"]) if "input" in value else Approve()
    if isinstance(value, dict) and value.get("approved") is False and set(value) <= {"approved", "reason", "rollback"}:
        reason, rollback = value.get("reason"), value.get("rollback", False)
        if (reason is None or isinstance(reason, str)) and isinstance(rollback, bool):
            return Reject(reason or None, rollback)
    shown = "None (JSON null)" if value is None else f"{value!r:.80}"
    raise RunStateError(f"{shown} does not answer {what}: it takes exactly {ACCEPTED}", run_id=run_id, status=status)
