"""What a handler asks the attempt loop to do: small typed values, applied in order by ``Runner.apply``.

The handlers (``requests.handle`` for what the script queued, ``calls.outcome_effects`` for a live
call's outcome) read the attempt's state and return these; only the loop (runner.py) changes the state.
They are values, never changed once made (not ``frozen``: a live call makes several, and a frozen
dataclass costs a ``object.__setattr__`` per field to build).
So a handler is tested by feeding it an item and comparing the effects it returns, with no realm.

Example::

    effects = handle(state, {"t": "now", "s": 3, "value": 1.5e12})
    assert effects == [Append("now", 3, {"value": 1.5e12})]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..actions import Action, Resume
from ..decisions import Decision
from ..errors import Interrupt, SandboxError
from ..stores.rows import Entry
from .answers import Answers
from .waits import EventWait

__all__ = [
    "Append",
    "CallAction",
    "ChildRun",
    "Complete",
    "Continue",
    "Dispatch",
    "Done",
    "Effect",
    "Fail",
    "FailedCall",
    "Hold",
    "Observe",
    "ParkChild",
    "Pause",
    "Progress",
    "ReplaceExecutor",
    "Reopen",
    "Request",
    "Settle",
    "Timer",
    "WaitFor",
    "Work",
]


@dataclass(slots=True)
class Append:
    """Journal an entry (a note, a clock or random read, an answer, an imported effect)."""

    kind: str
    slot: int | None
    body: dict[str, Any]


@dataclass(slots=True)
class Request:
    """Journal a request (``call``, ``timer``, ``wait``) and keep it as the slot's open request."""

    kind: str
    slot: int
    body: dict[str, Any]


@dataclass(slots=True)
class Reopen:
    """Take up the request an earlier attempt left open at this slot (it is not journaled again)."""

    slot: int
    entry: Entry


@dataclass(slots=True)
class Hold:
    """A determinism check reached a request the recorded run left open too: it stays open."""

    slot: int
    entry: Entry


@dataclass(slots=True)
class Settle:
    """Settle the script's promise at ``slot`` with this JSON (``{"ok": ..., ...}``), in turn."""

    slot: int
    result: str


@dataclass(slots=True)
class Complete:
    """Journal a completion and settle the slot with what it gives (``journal.settlement``)."""

    kind: str
    slot: int
    body: dict[str, Any]


@dataclass(slots=True)
class Pause:
    """An interrupt: the attempt pauses once what is in flight has finished."""

    interrupt: Interrupt


@dataclass(slots=True)
class Timer:
    """Wait for a timer due at ``due`` (epoch ms)."""

    slot: int
    due: float


@dataclass(slots=True)
class WaitFor:
    """Wait for an event (or its timeout)."""

    slot: int
    wait: EventWait


@dataclass(slots=True)
class ParkChild:
    """A child run parked: the parent waits with it (its due, the matches of its event waits)."""

    slot: int
    due: float | None
    matches: list[Any]


@dataclass(slots=True)
class CallAction:
    """Live work: call a registered action (``approval`` as ``call_answers.answer_for`` read it)."""

    action: Action
    input: Any
    resume: Resume | None
    approval: Decision | bool


@dataclass(slots=True)
class ChildRun:
    """Live work: run (or resume) a child run at the slot."""

    op: str
    spec: Any
    child_id: str
    answers: Answers
    resumed: bool
    # A saved script's: the failure its output makes (its output schema refuses it), None when it fits.
    returns: Callable[[Any], dict[str, Any] | None] | None = None


@dataclass(slots=True)
class FailedCall:
    """Live work that fails at once with ``error`` (a saved script that is gone, an invalid input)."""

    error: dict[str, Any]


Work = CallAction | ChildRun | FailedCall


@dataclass(slots=True)
class Dispatch:
    """Start live work for the call at ``slot``."""

    slot: int
    work: Work


@dataclass(slots=True)
class Observe:
    """Tell the observer (``Observer.console``, ...); a broken view never breaks the run."""

    hook: str
    args: tuple[Any, ...]


@dataclass(slots=True)
class Progress:
    """Hand a ``ctx.progress`` patch to the observers (never journaled)."""

    patch: Any


@dataclass(slots=True)
class Continue:
    """The script called ``ctx.continueAsNew(state)``."""

    state: Any


@dataclass(slots=True)
class Done:
    """The script settled: ``{"ok": True, "value": ...}`` or ``{"ok": False, "error": ...}``."""

    outcome: dict[str, Any]


@dataclass(slots=True)
class ReplaceExecutor:
    """A plain action timed out: its thread cannot be stopped, so the pool is never reused."""


@dataclass(slots=True)
class Fail:
    """The attempt fails with ``error`` (a mismatch, a damaged row)."""

    error: SandboxError


Effect = (
    Append
    | Request
    | Reopen
    | Hold
    | Settle
    | Complete
    | Pause
    | Timer
    | WaitFor
    | ParkChild
    | Dispatch
    | Observe
    | Progress
    | Continue
    | Done
    | ReplaceExecutor
    | Fail
)
