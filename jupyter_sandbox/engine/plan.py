"""The replay plan: the completions an attempt serves instead of running them again (docs/replay.md).

One type for both sources a plan comes from, a run's journal and a call log alone, and one
form for the realm (``to_js``): the prelude's ``loadPlan`` reads the columns it gives.

>>> plan = ReplayPlan.from_call_log([{"type": "action", "name": "lookup", "input": 1, "response": "one"}])
>>> len(plan), plan.slots, plan.imported
(1, [0], True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidCallLog
from ..values import to_json
from .journal import COMPLETION_KINDS, SYNC_KINDS, Journal, delivered

__all__ = ["ReplayPlan"]

_SEED_TYPES = {"action", "now", "random", "delegate", "agent", "sleep", "event"}


@dataclass(slots=True)
class ReplayPlan:
    """Every completion to serve, by index in the order it completed live (or, without an order, by slot).

    ``keys[i]`` is the content key the completion was filed under (the kind, for a clock or random
    read); ``None`` where a bare call log gives ``kinds[i]`` (what was asked: op, name, input) for
    the prelude to key (the one implementation of content keys is the prelude's).
    """

    slots: list[int] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)  # what each delivers (None where it fails)
    errors: list[tuple[int, Any]] = field(default_factory=list)  # (index, error) of each failure
    sync: list[int] = field(default_factory=list)  # indices of clock and random reads (served at once)
    kinds: list[dict[str, Any] | None] | None = None  # a bare call log's requests, by index
    imported: bool = False  # from a call log alone: journaled as it is served (not in the run's journal yet)
    notes: int = 0  # console lines, logs, steps and plans already journaled (not journaled again)
    frontier: int = 0  # 1 + the last slot the journal reserved: before it, the script is replaying
    _failed: dict[int, Any] | None = field(default=None, repr=False, compare=False)  # errors by index, when asked

    def __len__(self) -> int:
        return len(self.slots)

    @classmethod
    def from_journal(cls, journal: Journal) -> ReplayPlan:
        """Every completed effect of a journal in the order it completed live."""
        plan = cls(notes=journal.notes, frontier=max(journal.slots, default=-1) + 1)
        slots, keys, values, errors, sync = plan.slots, plan.keys, plan.values, plan.errors, plan.sync
        states = journal.slots
        for entry in journal.entries:
            kind = entry.kind
            if kind not in COMPLETION_KINDS or entry.slot is None:
                continue
            if kind in SYNC_KINDS:
                sync.append(len(slots))
                slots.append(entry.slot)
                keys.append(kind)
                values.append(entry.body["value"])
                continue
            request = states[entry.slot].request
            if request is None:
                continue  # a completion without its request cannot be keyed; it runs live again
            ok, value = delivered(entry)
            if not ok:
                errors.append((len(slots), value))
                value = None
            slots.append(entry.slot)
            keys.append(request.body["key"])
            values.append(value)
        return plan

    @classmethod
    def from_call_log(cls, call_log: Any) -> ReplayPlan:
        """A plan from a call log alone (a bare one, or one this engine emitted); ``InvalidCallLog`` if it is not one.

        Without ``order`` the completions are delivered in slot order; key matching
        (docs/replay.md rule 2) is then what keeps parallel branches resumable.
        """
        if not isinstance(call_log, (list, tuple)):
            raise InvalidCallLog(f"call_log must be a list, got {type(call_log).__name__}")
        checked = _all_json(call_log)
        recs: list[tuple[float, int, dict[str, Any], dict[str, Any] | None]] = []
        for i, entry in enumerate(call_log):  # checked in slot order: the first fault named is the first there is
            order = _order(i, entry, checked)
            if order is not None:
                kind = entry["type"]
                recs.append((order, i, entry, None if kind in SYNC_KINDS else _request(i, kind, entry, checked)))
        recs.sort(key=lambda rec: rec[0])
        plan = cls(kinds=[], imported=True)
        assert plan.kinds is not None
        for index, (_, slot, entry, request) in enumerate(recs):
            kind = entry["type"]
            plan.slots.append(slot)
            plan.kinds.append(request)
            if request is None:
                plan.sync.append(index)
                plan.keys.append(kind)
                plan.values.append(entry["response"])
                continue
            plan.keys.append(None)  # keyed by the prelude from the request
            error = entry.get("error")
            if error:
                message = str(error.get("message", error)) if isinstance(error, dict) else str(error)
                plan.errors.append((index, {"message": message}))
                plan.values.append(None)
            else:  # a timer carries no value: null, as delivered() gives it live, whatever the log says
                plan.values.append(None if kind == "sleep" else entry["response"])
        return plan

    def served(self, index: int) -> tuple[dict[str, Any], bool, Any]:
        """What a bare call log's entry at ``index`` asked for, and ``(ok, value or error)`` it delivered,
        for the journal entries that record it as served."""
        kin = self.kinds[index] if self.kinds is not None else None
        if kin is None:
            raise IndexError(f"the plan's entry {index} is not a request from a call log")
        if self._failed is None:
            self._failed = dict(self.errors)
        error = self._failed.get(index)
        return (kin, True, self.values[index]) if error is None else (kin, False, error)

    def served_slots(self) -> set[int]:
        return set(self.slots)

    def to_js(self) -> dict[str, Any]:
        """The plan as the prelude's ``loadPlan`` reads it: by columns, one index per completion."""
        out: dict[str, Any] = {
            "s": self.slots,
            "k": self.keys,
            "v": self.values,
            "e": [list(pair) for pair in self.errors],
            "sync": self.sync,
            "notes": self.notes,
            "frontier": self.frontier,
        }
        if self.kinds is not None:
            out["kin"] = self.kinds
        if self.imported:
            out["imp"] = 1
        return out


def _order(i: int, entry: Any, checked: bool) -> float | None:
    """When a call log entry completed (its slot, without ``order``); None for an open slot. Checks its shape."""
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise InvalidCallLog(f"call_log[{i}] must be a dict or None, got {type(entry).__name__}", position=i)
    kind = entry.get("type")
    if not isinstance(kind, str) or kind not in _SEED_TYPES:
        shown = repr(kind) if isinstance(kind, str) else f"a {type(kind).__name__}"
        raise InvalidCallLog(f"call_log[{i}] has type {shown[:60]}; expected one of {sorted(_SEED_TYPES)}", position=i)
    if "response" not in entry:
        raise InvalidCallLog(f"call_log[{i}] ({kind}) has no 'response'", position=i)
    order = entry.get("order", i)
    if not isinstance(order, (int, float)) or isinstance(order, bool) or not math.isfinite(order):
        raise InvalidCallLog(f"call_log[{i}] has a non-numeric 'order'", position=i)
    for key in () if checked else ("input", "response", "error"):
        _check_json(entry.get(key), i, key)
    if kind in SYNC_KINDS:
        value = entry["response"]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise InvalidCallLog(
                f"call_log[{i}] ({kind}) must have a numeric response, got a {type(value).__name__}", position=i
            )
    return order


def _request(i: int, kind: str, entry: dict[str, Any], checked: bool) -> dict[str, Any]:
    """What a call log entry asked for, as the prelude keys it (``keyOf``) and the journal records it."""
    if kind in ("action", "agent", "delegate"):
        name = entry.get("name")
        if not isinstance(name, str):
            raise InvalidCallLog(f"call_log[{i}] ({kind}) must have a string 'name'", position=i)
        if not checked:
            _check_json(name, i, "name")
        return {"op": "call" if kind == "action" else kind, "name": name, "input": entry.get("input")}
    if kind == "sleep":
        return {"op": "sleep", "input": entry.get("input")}
    return {"op": "wait", "input": entry.get("input"), "timeout": entry.get("timeout")}


def _check_json(value: Any, i: int, key: str) -> None:
    try:
        to_json(value, f"call_log[{i}].{key}")
    except TypeError as exc:
        raise InvalidCallLog(str(exc), position=i) from None


def _all_json(call_log: list[Any] | tuple[Any, ...]) -> bool:
    """Whether every entry's values are JSON, in one encode of them all (a long call log pays one call, not
    three per entry). Nested two levels deeper than alone, so what passes here passes alone; a failure says
    nothing about where, and the entries are then checked one by one to name it."""
    values = [
        [e.get("input"), e.get("response"), e.get("error"), e.get("name")] for e in call_log if isinstance(e, dict)
    ]
    try:
        to_json(values, "call_log")
    except TypeError:
        return False
    return True
