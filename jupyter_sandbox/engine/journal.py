"""The journal: entry types, CBOR rows, and the views replay reads from it.

A run's journal is a list of entries in ``seq`` order (docs/journal.md lists
every kind). Two views are derived from it and nothing else:

* the **call log**: ``(entry | None)[]`` by slot, ``None``
  where a slot was reserved but never completed (an interrupted call, a
  sibling still in flight, a timer not yet fired);
* the **replay plan** handed once to the prelude (``plan.ReplayPlan``): every
  completed effect with its content key, result, and the order it completed in live.

Content keys are computed by the prelude (one implementation, in JS); an
entry records the key it was filed under.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import LimitExceeded
from ..stores.rows import MAX_SLOT, Entry, encode
from ..values import detach

__all__ = ["CallLog", "Journal", "JournalWriter", "delivered", "settlement"]

REQUEST_KINDS = frozenset({"call", "timer", "wait"})
COMPLETION_KINDS = frozenset({"result", "fired", "event", "now", "random"})
SYNC_KINDS = frozenset({"now", "random"})  # reads served at once, not delivered in order
_CONTAINERS = (dict, list, tuple)  # what detach copies (a scalar is shared as it is)
NOTE_KINDS = frozenset({"console", "log", "step", "plan"})
# Counted under the caps but never refused by them: an attempt's opening entry (a resume at the cap replays
# and fails where the script next asks for room) and the record of why an attempt failed.
_ADMITTED = frozenset({"attempt", "error", "mismatch"})
_COMPLETION_ROOM = 64  # bytes kept per open request: a completion without a large value (a fired timer, null)


@dataclass(slots=True)
class _Slot:
    request: Entry | None = None  # call / timer / wait
    completion: Entry | None = None  # result / fired / event / now / random
    interrupt: Entry | None = None  # the latest interrupt while open


class Journal:
    """A run's entries with the indices replay needs. Pure: no I/O."""

    def __init__(self, entries: list[Entry] | None = None):
        self.entries: list[Entry] = []
        self.slots: dict[int, _Slot] = {}
        self.decisions: dict[int, Entry] = {}  # slot -> the answer that decided its call's approval (the first)
        self.notes = 0
        self.console = 0  # console lines: bounded per attempt by Limits.console_lines, not by the entry cap
        self.open = 0  # requests without their completion: each has room kept for it under the caps
        for entry in entries or ():
            self.add(entry)

    def add(self, entry: Entry) -> None:
        if entry.seq < 0:
            entry.seq = len(self.entries)
        self.entries.append(entry)
        kind = entry.kind
        if kind in NOTE_KINDS:
            self.notes += 1
            self.console += kind == "console"
            return
        if entry.slot is None:
            return
        slot = self.slots.get(entry.slot)
        if slot is None:
            slot = self.slots[entry.slot] = _Slot()
        if kind in REQUEST_KINDS:
            if slot.request is None and slot.completion is None:
                self.open += 1
            slot.request = entry
        elif kind in COMPLETION_KINDS:
            if slot.request is not None and slot.completion is None:
                self.open -= 1
            slot.completion = entry
            slot.interrupt = None
        elif kind == "interrupt":
            slot.interrupt = entry
        elif kind == "answer" and entry.body.get("approval"):
            self.decisions.setdefault(entry.slot, entry)

    @property
    def attempts(self) -> int:
        return max((e.attempt for e in self.entries), default=0)

    def open_request(self, slot: int) -> Entry | None:
        """The request recorded at a slot that never completed (its call log entry is ``None``)."""
        state = self.slots.get(slot)
        if state is None or state.completion is not None:
            return None
        return state.request

    def interrupt_at(self, slot: int) -> Entry | None:
        state = self.slots.get(slot)
        return state.interrupt if state else None

    def pending_interrupts(self) -> list[Entry]:
        open_ = {n: s.interrupt for n, s in self.slots.items() if s.interrupt is not None and s.completion is None}
        return [open_[n] for n in sorted(open_)]  # (an entry is filed under its own slot)

    def effect_slots(self) -> set[int]:
        """The slots that hold a recorded effect: its request, its completion, or both."""
        return {n for n, s in self.slots.items() if s.request is not None or s.completion is not None}

    def recorded(self, slot: int) -> dict[str, Any] | None:
        """What the call log holds at a slot (for a mismatch report)."""
        state = self.slots.get(slot)
        if state is None or state.completion is None:
            return None
        return _call_log_entry(state, None)

    def call_log(self) -> list[dict[str, Any] | None]:
        """The call log: by slot, ``None`` where a slot is open.

        Entries carry two extra keys for exact replay from the call log
        alone: ``order`` (when it completed) and, for failures, ``error``.
        """
        if not self.slots:
            return []
        order: dict[int, int] = {}
        for entry in self.entries:
            if entry.kind in COMPLETION_KINDS and entry.slot is not None:
                order[entry.slot] = len(order)
        log: list[dict[str, Any] | None] = [None] * (max(self.slots) + 1)
        for number, state in self.slots.items():
            if state.completion is not None:
                log[number] = _call_log_entry(state, order.get(number))
        return log


def delivered(entry: Entry) -> tuple[bool, Any]:
    """What a completion gives the script: ``(True, value)`` or ``(False, error)``.

    The one definition, for the live delivery (``settlement``) and the replay
    plan alike, so a replayed effect can never give another value than the live
    one did. A completion that carries no value (a fired timer) gives ``null``.
    """
    body = entry.body
    if entry.kind == "result":
        if body.get("ok"):
            return True, body.get("value")
        return False, body.get("error") or {"message": "failed"}
    if entry.kind == "event":
        return True, body.get("event")
    if entry.kind in SYNC_KINDS:
        return True, body.get("value")
    return True, None


def settlement(entry: Entry) -> str:
    """The JSON the live path settles a completion with: ``delivered`` as the prelude reads it."""
    ok, value = delivered(entry)
    return json.dumps(
        {"ok": True, "value": value} if ok else {"ok": False, "error": value}, allow_nan=False, ensure_ascii=False
    )


def _call_log_entry(state: _Slot, order: int | None) -> dict[str, Any]:
    """One slot's call log entry; its values are copies (the caller may edit a call log it was handed)."""
    done, request = state.completion, state.request
    assert done is not None
    if done.kind in SYNC_KINDS:
        out: dict[str, Any] = {"type": done.kind, "response": done.body["value"]}
    elif request is not None and request.kind == "timer":
        out = {"type": "sleep", "input": request.body.get("ms"), "response": None}
    elif request is not None and request.kind == "wait":
        out = {"type": "event", "input": detach(request.body.get("match")), "response": detach(done.body.get("event"))}
        if request.body.get("timeout") is not None:  # part of the wait's content key: a call log alone must carry it
            out["timeout"] = request.body["timeout"]
    else:  # an action's (or a child run's) call and its result: most of a journal, so scalars skip detach's call
        req, body = request.body if request is not None else {}, done.body
        op, given, value = req.get("op", "call"), req.get("input"), body.get("value")
        out = {
            "type": "action" if op == "call" else op,
            "name": req.get("name"),
            "input": detach(given) if type(given) in _CONTAINERS else given,
            "response": detach(value) if type(value) in _CONTAINERS else value,
        }
        if not body.get("ok", True):
            out["error"] = detach(body.get("error"))
    if order is not None:
        out["order"] = order
    return out


class CallLog(list[dict[str, Any] | None]):
    """A call log (a plain list) that remembers which run it came from.

    Passed back to ``Sandbox.eval`` it resumes that run from its full journal;
    turned into plain JSON and back it still resumes, from the call log alone.
    """

    def __init__(self, entries: Iterable[dict[str, Any] | None] = (), run_id: str | None = None):
        super().__init__(entries)
        self.run_id = run_id


SIGNAL_RESERVE = 1024  # bytes a run keeps beside its held signals: the attempt entries of the resumes that deliver


def signal_size(event: Any) -> int:
    """The encoded size of the journal entry that delivers ``event``, counted with the largest numbers it may carry."""
    return len(encode(Entry("event", 2**31 - 1, time.time(), MAX_SLOT, {"event": event, "signal": 2**63 - 1}, 2**31)))


def signal_room(event: Any, cap: int, used: int, held: Iterable[Any]) -> LimitExceeded | None:
    """Why a run whose journal is ``used`` of ``cap`` bytes, holding the undelivered signals ``held``, cannot take
    ``event``, or None. Counted when the signal is sent, so every signal a run holds can be journaled when it
    is delivered: one too large is refused here, never left to fail every later resume at delivery."""
    size = signal_size(event)
    pending = sum(signal_size(e) for e in held)
    room = cap - used - pending - SIGNAL_RESERVE
    if size <= room:
        return None
    return LimitExceeded(
        "journal-cap",
        f"the signal is {size:,} bytes as a journal entry and its run can take {max(room, 0):,} more "
        f"(its journal cap is {cap:,} bytes: {used:,} journaled, {pending:,} held by undelivered signals, "
        f"{SIGNAL_RESERVE:,} kept for resumes); send a smaller event, or a reference to where the data is",
        value=cap,
    )


class JournalWriter:
    """Appends entries for one attempt, under the journal caps, in batches the store commits."""

    def __init__(self, journal: Journal, attempt: int, max_entries: int, max_bytes: int, size: int = 0):
        self.journal = journal
        self.attempt = attempt
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self.size = size
        self.pending: list[tuple[Entry, bytes]] = []

    def append(self, kind: str, slot: int | None = None, **body: Any) -> Entry:
        if slot is not None and slot > MAX_SLOT:  # a row the store would refuse to read back is never written
            raise LimitExceeded(
                "journal-cap",
                f"the run reached {MAX_SLOT + 1} effects; use ctx.continueAsNew(state) to carry on in a fresh run",
                value=MAX_SLOT + 1,
            )
        entry = Entry(kind, self.attempt, time.time(), slot, body, len(self.journal.entries))
        blob = encode(entry)
        if kind not in _ADMITTED and not (slot is not None and kind in COMPLETION_KINDS and self._is_open(slot)):
            self._check_room(len(blob), self.journal.open + (kind in REQUEST_KINDS), kind != "console")
        self.size += len(blob)
        self.journal.add(entry)
        self.pending.append((entry, blob))
        return entry

    def _is_open(self, slot: int) -> bool:
        return self.journal.open_request(slot) is not None

    def _check_room(self, size: int, reserved: int, counted: bool = True) -> None:
        """Refuse an entry unless it fits with room kept for the completions of ``reserved`` open requests.

        A request's completion is never refused: the request took its room, so an action that started
        always has its result journaled (a result larger than its room is admitted past the byte cap).
        Console lines (not ``counted``) take no entry of the cap, only bytes: ``Limits.console_lines``
        bounds them, so that limit is the one a script that logs much meets.
        """
        entries = len(self.journal.entries) - self.journal.console
        if counted and entries + 1 + reserved > self.max_entries:
            raise LimitExceeded(
                "journal-cap",
                f"the journal reached {self.max_entries} entries; "
                "use ctx.continueAsNew(state) to carry on in a fresh run",
                value=self.max_entries,
            )
        if self.size + size + reserved * _COMPLETION_ROOM > self.max_bytes:
            raise LimitExceeded(
                "journal-cap",
                f"the journal reached {self.max_bytes // 2**20} MiB; "
                "use ctx.continueAsNew(state) to carry on in a fresh run",
                value=self.max_bytes,
            )

    def take(self) -> list[tuple[Entry, bytes]]:
        out, self.pending = self.pending, []
        return out
