"""Everything one attempt changes as it runs, in one place.

``AttemptState`` is owned by the attempt loop (``runner.Runner``): only the loop changes it, by
applying the effects (effects.py) that the handlers return. The handlers (``requests.handle``,
``calls.outcome_effects``) and the live calls (``calls.Calls``) only read it. What the attempt was
handed and never changes (the run, its journal as read, the answers, the limits) is ``attempt``.

Example::

    state = AttemptState.of(attempt)
    state.ready  # the completions waiting to be settled in the realm, in order
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

from ..errors import Interrupt
from ..stores.rows import Entry
from .attempt import UNSET, Attempt
from .journal import JournalWriter
from .waits import Waits, signal_queue

__all__ = ["AttemptState", "ScriptOutcome"]

# How the script settled, as the prelude reports it: ``{"ok": True, "value": v}`` or ``{"ok": False, "error": e}``.
ScriptOutcome = dict[str, Any]
Ready = collections.deque[tuple[int, str]]


@dataclass(eq=False)
class AttemptState:
    """One attempt's changing state; ``attempt`` holds what it was given."""

    attempt: Attempt
    writer: JournalWriter  # the journal entries written but not committed yet (``writer.pending``)
    queue: str  # the run whose signals this one takes
    ready: Ready = field(default_factory=collections.deque)  # completions to settle in the realm, in order
    waits: Waits = field(default_factory=Waits)  # timers, events and parked child runs waited on
    requests: dict[int, Entry] = field(default_factory=dict)  # slot -> this attempt's request at it
    held: dict[int, Entry] = field(default_factory=dict)  # a check: requests the recorded run left open, reached
    interrupts: list[Interrupt] = field(default_factory=list)
    continue_state: Any = UNSET  # ``ctx.continueAsNew``'s state, once called
    outcome: ScriptOutcome | None = None  # how the script settled, once it has
    replaying: bool = True  # recorded completions may remain to deliver
    ran: bool = True  # JS ran since the requests were last taken

    @classmethod
    def of(cls, attempt: Attempt) -> AttemptState:
        """The state an attempt starts with."""
        writer = JournalWriter(
            attempt.journal, attempt.number, attempt.limits.journal_entries, attempt.limits.journal_bytes, attempt.size
        )
        return cls(attempt, writer, signal_queue(attempt.run))

    @property
    def now(self) -> float:
        """The engine's clock, epoch ms."""
        return self.attempt.engine.clock.now()

    @property
    def pausing(self) -> bool:
        """The script paused (an interrupt, ``continueAsNew``): the attempt ends once its calls finish."""
        return bool(self.interrupts) or self.continue_state is not UNSET
