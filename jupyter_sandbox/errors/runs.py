"""A run's state: paused, parked, cancelled, a move its state refuses, an answer that reaches nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import SandboxError

__all__ = [
    "AnswerRefused",
    "Interrupt",
    "RunBusyError",
    "RunCancelled",
    "RunNotFound",
    "RunParked",
    "RunPaused",
    "RunStateError",
    "SandboxInterrupt",
    "UnaddressedAnswer",
]


@dataclass
class Interrupt:
    """One pending interrupt: an action that needs an answer.

    ``id`` is ``"RUN_ID:POSITION"`` of the run that holds the interrupted call
    (a child run's id when a delegated child interrupted); ``position`` is the
    slot in the top run that a ``Resume`` targets.
    """

    id: str
    run_id: str
    position: int
    name: str
    input: Any = None
    data: Any = None
    state: Any = None
    approval: bool = False


class RunPaused(SandboxError):
    """The run stopped and can be resumed later; nothing is lost."""

    def __init__(self, message: str, *, run_id: str):
        self.run_id = run_id
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "run_id": self.run_id}


class SandboxInterrupt(RunPaused):
    """An action raised ``ActionInterrupt``: the run paused for an answer.

    Its fields: ``call_log`` (slots, ``None`` where a call is open),
    ``console``, ``data``, ``interrupt`` (``.data``, ``.state``), ``position``;
    plus ``run_id`` and ``interrupts``, every pending interrupt when parallel
    branches interrupted together (``interrupt`` is the first).
    """

    def __init__(self, *, run_id: str, call_log: list, console: list[dict], data: dict, interrupts: list[Interrupt]):
        self.call_log, self.console, self.data = call_log, console, data
        self.interrupts = interrupts
        self.interrupt = interrupts[0]
        self.position = self.interrupt.position
        names = ", ".join(f"{i.name!r} at position {i.position}" for i in interrupts)
        super().__init__(f"run {run_id} paused: {names} needs an answer", run_id=run_id)


class RunParked(RunPaused):
    """The run is waiting on a timer or an event; a scheduler or a signal resumes it.

    ``due`` is the earliest time (epoch ms) it should wake, or ``None`` when
    only an event without timeout can wake it; ``waiting`` describes the waits.
    """

    def __init__(
        self, *, run_id: str, due: float | None, waiting: list[dict], console: list[dict], data: dict, call_log: list
    ):
        self.due, self.waiting = due, waiting
        self.console, self.data, self.call_log = console, data, call_log
        what = ", ".join(w.get("key", "?") for w in waiting)
        super().__init__(f"run {run_id} parked on {what}", run_id=run_id)


class RunCancelled(SandboxError):
    """The kernel was interrupted while a run was going; the engine marked the run ``cancelled``.

    >>> str(RunCancelled("r-1"))
    'run r-1 cancelled (kernel interrupted); `%sandbox resume r-1` runs it again from its journal'
    """

    def __init__(self, run_id: str | None):
        self.run_id = run_id
        hint = f"; `%sandbox resume {run_id}` runs it again from its journal" if run_id else ""
        super().__init__(f"run {run_id or '?'} cancelled (kernel interrupted){hint}")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "run_id": self.run_id}


class RunStateError(SandboxError):
    """The run is not in a state that allows the operation (for example resuming a finished run).

    ``answered``: for an answer that came after another answered its interrupt (a race lost), that answer as
    the journal records it (``id``, ``name``, ``by``, ``via``, ``process``, ``answered_at``, ``approved``...);
    else None.
    """

    def __init__(self, message: str, *, run_id: str, status: str | None = None, answered: dict[str, Any] | None = None):
        self.run_id, self.status, self.answered = run_id, status, answered
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        extra = {"answered": self.answered} if self.answered is not None else {}
        return {**super().to_dict(), "run_id": self.run_id, "status": self.status, **extra}


class RunBusyError(RunStateError):
    """Another resume of this run is already in progress (a double click, another kernel)."""


class AnswerRefused(RunStateError):
    """An answer this caller may not give: the ``Sandbox(approvers=...)`` policy, or the store (on
    PostgreSQL, a database role without the grant to record answers) refused it. Nothing was recorded;
    the run still waits for an answer."""


class UnaddressedAnswer(RunStateError, ValueError):
    """A resume's answer reaches no open interrupt (a wrong position or id): nothing was run or recorded.

    ``unaddressed`` names the answers that reach nothing; ``open`` lists the interrupts that may be
    answered, each ``{"position", "ids", "name"}``.
    """

    def __init__(
        self,
        message: str,
        *,
        run_id: str,
        status: str | None,
        unaddressed: list[str],
        open: list[dict[str, Any]],
        answered: dict[str, Any] | None = None,
    ):
        self.unaddressed, self.open = unaddressed, open
        super().__init__(message, run_id=run_id, status=status, answered=answered)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "unaddressed": self.unaddressed, "open": self.open}


class RunNotFound(SandboxError):
    """No run with that id in this store."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        super().__init__(f"no run {run_id!r} in this store")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "run_id": self.run_id}
