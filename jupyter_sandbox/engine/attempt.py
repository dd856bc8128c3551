"""What one attempt of one run needs, in one place, and what it reports.

``Attempt`` is everything the runner is handed for one attempt: the run, its
journal, the answers, the limits and the engine's services. ``EngineServices``
is the small protocol the runner and child runs call back into (``runs.Engine``
implements it), so neither imports the engine that drives them.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from ..actions import Action, Outcome
from ..errors import Interrupt, SandboxError
from ..stores.base import RunRow, Store
from .answers import Answers
from .clock import Clock
from .journal import Journal
from .plan import ReplayPlan
from .realm import Limits

__all__ = ["Attempt", "AttemptRequest", "AttemptResult", "EngineServices", "Observer", "StartRequest", "UNSET"]

UNSET: Any = object()  # a value not given yet (an attempt's ``continueAsNew`` state)


class Observer:
    """Hooks for a live view of a run; every method is optional (the defaults do nothing).

    They are called on the engine's thread; an observer that raises is logged and ignored.
    """

    def entries(self, run_id: str, entries: list[dict[str, Any]]) -> None: ...

    def console(self, run_id: str, line: dict[str, str], replayed: bool) -> None: ...

    def progress(self, run_id: str, patch: Any) -> None: ...

    # A ctx.step began or ended ({phase, id, label, ...}), told as the script makes it: its journal entry may
    # commit later (with the next call's result), so a view showing "the current step" reads it here.
    def step(self, run_id: str, note: dict[str, Any]) -> None: ...


# How an attempt ends: the run's stored status (a ``RunStatus``), or ``reached`` for a determinism check.
AttemptStatus = Literal["completed", "failed", "interrupted", "parked", "continued", "cancelled", "reached"]


@dataclass
class AttemptResult:
    """How an attempt ended: ``status`` is completed, failed, interrupted, parked, continued or cancelled.

    A determinism check's attempt may end ``reached``: it replayed everything recorded and now waits where
    the recorded run waits (its open slot), which is the check's end, not a failure.
    """

    status: AttemptStatus
    output: Any = None
    error: SandboxError | None = None
    console: list[dict[str, str]] = field(default_factory=list)
    data: Any = None
    interrupts: list[Interrupt] = field(default_factory=list)
    due: float | None = None
    waiting: list[dict[str, Any]] = field(default_factory=list)
    matchers: list[Any] = field(default_factory=list)  # parked: what its event waits (its children's too) take
    woken: bool = False  # parked, but a signal its waits take was pending as it parked: resume it at once
    state: Any = None
    replayed: int = 0
    call_log: list[dict[str, Any] | None] = field(default_factory=list)


@dataclass(frozen=True)
class StartRequest:
    """A new run to start (``Engine.start``): its script and input, and how to run it.

    ``call_log``: a recorded call log to replay first (a bare one, from another store); ``answers``
    the answers to its interrupts. ``limits`` None: the engine's.

    Example::

        await engine.start(StartRequest("return await actions.add({a: 1})", name="adds"))
    """

    source: str
    input: Any = None
    name: str | None = None
    strict: bool = False
    actions: list[str] | None = None
    limits: Limits | None = None
    call_log: list[dict[str, Any] | None] | None = None
    answers: Answers | None = None
    observer: Observer | None = None
    # Kept on the run for the layer above, read when the run completes (saved.py: keep the script, once).
    save: dict[str, Any] | None = None


@dataclass(frozen=True)
class AttemptRequest:
    """The next attempt of ``run``, as the engine's start, resume and chain paths hand it down.

    ``plan`` and ``recorded_at``: a bare call log's replay plan and entries (None: the run's journal);
    ``force``: take the run though its lease is held; ``read``: its journal as read before the claim, with
    its size in bytes then (the attempt reuses it if nothing was appended since).
    """

    run: RunRow
    answers: Answers
    observer: Observer
    limits: Limits
    plan: ReplayPlan | None = None
    recorded_at: Callable[[int], dict[str, Any] | None] | None = None
    force: bool = False
    read: tuple[Journal, int] | None = None
    input_json: str | None = None  # the run's input as JSON, as a new run's start encoded it

    def again(self, run: RunRow) -> AttemptRequest:
        """The attempt after this one along a chain (or on a wake-up): from ``run``'s journal, no answers."""
        return replace(
            self, run=run, answers=Answers(), plan=None, recorded_at=None, force=False, read=None, input_json=None
        )


class EngineServices(Protocol):
    """What an attempt asks of the engine that runs it (implemented by ``runs.Engine``)."""

    store: Store
    clock: Clock
    actions: dict[str, Action]
    agents: dict[str, Action]
    executor: Executor
    closing: bool  # its Sandbox is closing: the attempt starts no more calls

    def replace_executor(self) -> None:
        """A fresh pool for plain actions (a timed-out thread cannot be stopped, so it is never reused)."""

    def progress(self, run_id: str, patch: Any, observer: Observer) -> None:
        """Hand a ``ctx.progress`` patch to the observers (never journaled)."""

    def new_run_id(self) -> str: ...

    def check_source(self, source: str, limits: Limits) -> None:
        """Size, characters and lint of a script, before it runs."""

    async def run_child(
        self, parent: Attempt, slot: int, op: str, spec: Any, child_id: str, answers: Answers, resumed: bool
    ) -> Outcome:
        """Run (or resume) a child run of ``parent`` at ``slot``; its outcome as the parent's call sees it."""

    async def run_chain(self, request: AttemptRequest) -> tuple[AttemptResult, RunRow, list[str]]:
        """Run attempts along a ``continueAsNew`` chain until one does not continue."""


@dataclass
class Attempt:
    """One attempt of one run: its inputs and the services it calls."""

    engine: EngineServices
    run: RunRow
    journal: Journal
    number: int
    plan: ReplayPlan
    answers: Answers
    strict: bool
    action_names: list[str]
    limits: Limits
    recorded_at: Callable[[int], dict[str, Any] | None]  # the recorded call-log entry at a slot (for mismatches)
    observer: Observer
    store: Store  # where the attempt writes (a scratch store for a determinism check)
    size: int = 0  # the journal's encoded size so far (the journal cap counts from it)
    execute: bool = True  # False: a determinism check; anything live is a divergence
    input_json: str | None = None  # the run's input as JSON, when the caller has it already (a new run)
