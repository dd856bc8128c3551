"""Answers to interrupts: which live call a resume's answer goes to, and what it carries.

An answer is addressed by interrupt id (``RUN_ID:SLOT``) or by position in the
top run. A position answer also reaches a slot a bare call log left open (no
interrupt entry recorded), and a delegated child's interrupt through its
parent's slot. Approval answers are journaled so an approved call is never
asked again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..actions import Resume, json_copy
from ..errors import UnaddressedAnswer
from .journal import Journal

__all__ = ["Answers", "answer_for"]


@dataclass
class Answers:
    """The answers a resume carries: by interrupt id, or by position in the top run."""

    by_id: dict[str, Any] = field(default_factory=dict)
    by_position: dict[int, Resume] = field(default_factory=dict)
    first: Any = None  # answers the first pending interrupt, whichever it is (``Sandbox.resume(run_id, value)``)

    def for_child(self, pending: list[dict[str, Any]], position: int) -> Answers:
        """Answers to hand a child run: its ids, and a position answer for the delegate's slot."""
        by_id = dict(self.by_id)
        if position in self.by_position and pending:
            by_id.setdefault(pending[0]["id"], self.by_position[position].value)
        return Answers(by_id=by_id)

    def given(self) -> bool:
        return bool(self.by_id or self.by_position or self.first is not None)

    def check(self) -> None:
        """Every answer must cross as JSON (it is journaled): raise ``InvalidValue`` naming the one that does not.

        Each is then kept as a private copy in JSON's types: the answer journaled and the one handed to the
        action never share an object with the caller's (who may edit it while the run goes on).
        """
        for key in self.by_id:
            if not isinstance(key, str):
                raise TypeError(f"answers are keyed by interrupt id (a string like 'r-...:3'), got {key!r:.60}")
        for position in self.by_position:
            if isinstance(position, bool) or not isinstance(position, int) or position < 0:
                raise TypeError(f"Resume(position=...) takes a call log position (an int >= 0), got {position!r:.60}")
        self.by_id = {key: json_copy(value, f"the answer for {key}") for key, value in self.by_id.items()}
        self.first = json_copy(self.first, "the answer")
        self.by_position = {
            p: replace(
                r,
                value=json_copy(r.value, f"the answer for position {p}"),
                state=json_copy(r.state, f"the answer's state at position {p}"),
            )
            for p, r in self.by_position.items()
        }

    def refuse_unaddressed(self, journal: Journal, run_id: str, status: str | None) -> None:
        """Every answer must reach an interrupt open in ``journal`` (the top run's): else ``UnaddressedAnswer``,
        listing the open ones. Raised before the run is claimed, so a mistyped answer changes nothing."""
        open_ = open_interrupts(journal)
        positions = {item["position"] for item in open_}
        ids = {i for item in open_ for i in item["ids"]}
        stray = [f"id {key!r}" for key in self.by_id if key not in ids]
        stray += [f"position {p}" for p in self.by_position if p not in positions]
        # ``first`` answers the first open interrupt if there is one: with none it is not addressed to
        # anything, so a retried "resume with True" after a crash that recorded the answer still finishes.
        if stray:
            raise UnaddressedAnswer(
                _unaddressed_message(run_id, status, stray, open_),
                run_id=run_id,
                status=status,
                unaddressed=stray,
                open=open_,
            )

    def refuse_unaddressed_in_call_log(self, call_log: Any) -> None:
        """For a new run from a call log alone: a position answer must be one of its open (``None``) slots,
        and no interrupt id can be answered (they name the run the call log came from, not this new one)."""
        slots = [i for i, entry in enumerate(call_log or ()) if entry is None]
        stray = [f"id {key!r}" for key in self.by_id]
        stray += [f"position {p}" for p in self.by_position if p not in slots]
        if stray:
            where = f"the call log's open slots are {slots}" if slots else "the call log has no open slot"
            how = "" if call_log else "; pass the interrupted run's call_log with the answer"
            raise UnaddressedAnswer(
                f"{_and(stray)} {'answers' if len(stray) == 1 else 'answer'} nothing: "
                f"{where} (Resume(position=...) targets one of them){how}",
                run_id="",
                status=None,
                unaddressed=stray,
                open=[{"position": s, "ids": [], "name": None} for s in slots],
            )

    def settle_first(self, journal: Journal) -> None:
        """Turn ``first`` into an answer by id, now that the journal is at hand."""
        if self.first is not None:
            pending = journal.pending_interrupts()
            if pending:
                self.by_id.setdefault(pending[0].body["id"], self.first)
            self.first = None


def open_interrupts(journal: Journal) -> list[dict[str, Any]]:
    """The interrupts a resume may answer: ``{"position", "ids", "name"}`` each; ``ids`` has the interrupt's
    own and, for a delegated child's, the ids of the child's interrupts it stands for."""
    return [
        {
            "position": entry.slot,
            "name": entry.body.get("name"),
            "ids": [entry.body["id"], *(i["id"] for i in entry.body.get("interrupts") or ())],
        }
        for entry in journal.pending_interrupts()
    ]


def _unaddressed_message(run_id: str, status: str | None, stray: list[str], open_: list[dict[str, Any]]) -> str:
    head = f"run {run_id}: {_and(stray)} {'answers' if len(stray) == 1 else 'answer'} nothing"
    if not open_:
        return f"{head}: the run ({status}) has no open interrupt; resume it without an answer"
    listed = "; ".join(
        f"{item['name']!r} at position {item['position']} (id {', '.join(item['ids'])})" for item in open_
    )
    return f"{head}. Open interrupts: {listed}. Answer one with Resume(position=...) or answers={{id: ...}}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def answer_for(
    journal: Journal, answers: Answers, run_id: str, slot: int, approval: bool, call_input: Any
) -> tuple[Resume | None, bool, Any, dict[str, Any] | None]:
    """For a live call at ``slot``: ``(resume, gate, input, answer entry)``.

    ``gate`` is False when an earlier attempt already approved the call (with
    ``input`` then the approved, possibly edited, input); ``answer entry`` is
    the body of the ``answer`` journal entry to write, or None.
    """
    gate = True
    approved = journal.approvals.get(slot)
    if approved is not None:
        gate, call_input = False, approved.body.get("input", call_input)
    interrupt = journal.interrupt_at(slot)
    given = answers.by_position.get(slot)
    if interrupt is not None and interrupt.body["id"] in answers.by_id:
        value, state = answers.by_id[interrupt.body["id"]], interrupt.body.get("state")
    elif given is not None:
        value, state = given.value, interrupt.body.get("state") if interrupt is not None else given.state
    else:
        return None, gate, call_input, None
    interrupt_id = interrupt.body["id"] if interrupt is not None else f"{run_id}:{slot}"
    body: dict[str, Any] = {"value": value, "id": interrupt_id}
    if interrupt.body.get("approval") if interrupt is not None else approval and gate:
        granted = value is True or (isinstance(value, dict) and bool(value.get("approved")))
        body.update(approval=True, approved=granted)
        if granted and isinstance(value, dict) and "input" in value:
            body["input"] = value["input"]
    return Resume(position=slot, value=value, state=state, id=interrupt_id), gate, call_input, body
