"""What the collaborators of one attempt's runner (``Requests``, ``Calls``) read and change on it.

``Runner`` (runner.py) owns the attempt's state and builds its collaborators; they see it through these
protocols rather than the class, so neither imports runner.py and the three modules form no import cycle.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import CallLogMismatchError, Interrupt
from ..stores.base import RunRow, Store
from ..stores.rows import Entry
from .answers import Answers
from .attempt import Attempt, EngineServices, Observer
from .journal import Journal, JournalWriter
from .loop import EngineLoop
from .plan import ReplayPlan
from .realm import Limits
from .waits import Waits

__all__ = ["LiveCalls", "RunnerState"]


class LiveCalls(Protocol):
    """How a request starts live work (implemented by ``calls.Calls``)."""

    def dispatch(self, slot: int, work: Any, *, on_loop: bool = False) -> None:
        """Queue a call's work; ``on_loop``: it runs on the engine's loop."""

    def inline(self, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """Run a plain action in place when it is the lone call."""


class RunnerState(Protocol):
    """One attempt's state as its runner holds it (implemented by ``runner.Runner``)."""

    attempt: Attempt
    engine: EngineServices
    run: RunRow
    journal: Journal
    store: Store
    plan: ReplayPlan
    answers: Answers
    limits: Limits
    observer: Observer
    execute: bool
    writer: JournalWriter
    ready: collections.deque[tuple[int, str]]
    waits: Waits
    requests: dict[int, Entry]
    held: dict[int, Entry]
    interrupts: list[Interrupt]
    continue_state: Any
    outcome: dict[str, Any] | None
    replaying: bool
    here: EngineLoop | None

    @property
    def calls(self) -> LiveCalls: ...

    @property
    def now(self) -> float: ...

    def _flush(self) -> None:
        """Commit the entries written so far (each result before the script sees it)."""

    def _observe(self, hook: str, *args: Any) -> None:
        """Tell the observer, which must never break the run it shows."""

    def _mismatch(self, item: dict[str, Any]) -> CallLogMismatchError: ...

    def _diverged(
        self, slot: int | None = None, item: dict[str, Any] | None = None, recorded: dict[str, Any] | None = None
    ) -> CallLogMismatchError: ...
