"""What a run waits on besides actions: timers, events, and parked child runs.

The runner asks three things of it: when is the next one due, which are due
now, and does an event match a wait. Journal writes stay with the runner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..stores.base import RunRow

__all__ = ["EventWait", "Waits", "accepting", "matches", "signal_queue"]


def matches(event: Any, match: Any) -> bool:
    """An event matches an object when it has every field of it with an equal value, any other value when
    it equals it (``waitForEvent("go")``); ``null`` or ``{}`` matches every event."""
    if match is None or match == {}:
        return True
    if not isinstance(match, dict):
        return _same(event, match)
    return isinstance(event, dict) and all(k in event and _same(event[k], v) for k, v in match.items())


def _same(a: Any, b: Any) -> bool:
    """JSON equality as the script sees it: ``true`` is not ``1`` (Python's ``True == 1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return bool(a == b)


def accepting(matchers: list[Any]) -> Callable[[Any], bool]:
    """Whether an event matches any of these waits' ``match`` values."""
    return lambda event: any(matches(event, match) for match in matchers)


def signal_queue(run: RunRow) -> str:
    """The run whose signals a run takes: the first of its chain (its top-level run's, for a child run), so
    a signal sent to the id the API returned reaches a child that waits and a successor that waits alike."""
    queue = run.options.get("signals")
    return queue if isinstance(queue, str) else run.id


@dataclass
class EventWait:
    match: Any
    due: float | None  # the timeout, epoch ms; None waits for ever
    key: str

    def accepts(self, event: Any) -> bool:
        return matches(event, self.match)


@dataclass
class Waits:
    timers: dict[int, float] = field(default_factory=dict)  # slot -> due
    events: dict[int, EventWait] = field(default_factory=dict)  # slot -> the wait
    children: dict[int, float | None] = field(default_factory=dict)  # slot -> the parked child's due
    nested: dict[int, list[Any]] = field(default_factory=dict)  # slot -> the parked child's waits' matches

    def __bool__(self) -> bool:
        return bool(self.timers or self.events or self.children)

    def matchers(self) -> list[Any]:
        """The ``match`` of every event wait, a parked child's included: a signal any of them takes wakes it."""
        return [w.match for w in self.events.values()] + [m for ms in self.nested.values() for m in ms]

    def next_due(self) -> float | None:
        dues = [
            *self.timers.values(),
            *(w.due for w in self.events.values() if w.due is not None),
            *(d for d in self.children.values() if d is not None),
        ]
        return min(dues) if dues else None

    def take_due(self, now: float) -> list[tuple[int, str]]:
        """Remove and return what fell due: ``(slot, "timer")`` or ``(slot, "timeout")``, earliest first."""
        due = [(d, s, "timer") for s, d in self.timers.items() if d <= now]
        due += [(w.due, s, "timeout") for s, w in self.events.items() if w.due is not None and w.due <= now]
        due.sort()
        for _, slot, kind in due:
            (self.timers if kind == "timer" else self.events).pop(slot)
        return [(slot, kind) for _, slot, kind in due]

    def describe(self) -> list[dict[str, Any]]:
        """What a parked run waits on, for ``RunParked.waiting``."""
        out: list[dict[str, Any]] = [
            {"slot": s, "key": f"sleep until {d:.0f}", "due": d} for s, d in self.timers.items()
        ]
        out += [{"slot": s, "key": w.key, "match": w.match, "due": w.due} for s, w in self.events.items()]
        out += [{"slot": s, "key": "child run", "due": d} for s, d in self.children.items()]
        return out
