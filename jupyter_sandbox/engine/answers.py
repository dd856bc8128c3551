"""Answers to interrupts: which live call a resume's answer goes to, and what it carries.

An answer is addressed by interrupt id (``RUN_ID:SLOT``) or by position in the
top run. A position answer also reaches a slot a bare call log left open (no
interrupt entry recorded), and a delegated child's interrupt through its
parent's slot. Approval answers are journaled so an approved call is never
asked again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..actions import Resume, to_json
from .journal import Journal

__all__ = ["Answers", "answer_for"]


@dataclass
class Answers:
    """The answers a resume carries: by interrupt id, or by position in the top run."""

    by_id: dict[str, Any] = field(default_factory=dict)
    by_position: dict[int, Resume] = field(default_factory=dict)
    first: Any = None  # answers the first pending interrupt, whichever it is (``Sandbox.resume(run_id, value)``)

    def for_child(self, pending: list[dict[str, Any]], position: int) -> "Answers":
        """Answers to hand a child run: its ids, and a position answer for the delegate's slot."""
        by_id = dict(self.by_id)
        if position in self.by_position and pending:
            by_id.setdefault(pending[0]["id"], self.by_position[position].value)
        return Answers(by_id=by_id)

    def check(self) -> None:
        """Every answer must cross as JSON (it is journaled): raise ``InvalidValue`` naming the one that does not."""
        for key, value in [*self.by_id.items(), ("first", self.first),
                           *((f"position {p}", r.value) for p, r in self.by_position.items()),
                           *((f"state at position {p}", r.state) for p, r in self.by_position.items())]:
            to_json(value, f"the answer for {key}")

    def settle_first(self, journal: Journal) -> None:
        """Turn ``first`` into an answer by id, now that the journal is at hand."""
        if self.first is not None:
            pending = journal.pending_interrupts()
            if pending:
                self.by_id.setdefault(pending[0].body["id"], self.first)
            self.first = None


def answer_for(journal: Journal, answers: Answers, run_id: str, slot: int, approval: bool,
               call_input: Any) -> tuple[Resume | None, bool, Any, dict[str, Any] | None]:
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
        approved = value is True or (isinstance(value, dict) and bool(value.get("approved")))
        body.update(approval=True, approved=approved)
        if approved and isinstance(value, dict) and "input" in value:
            body["input"] = value["input"]
    return Resume(position=slot, value=value, state=state, id=interrupt_id), gate, call_input, body
