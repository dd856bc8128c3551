"""The answer a live call carries out: read, at the call's slot, from the journal and the resume's answers.

The journal governs: whether the call needs approval is read from its recorded request and interrupt, and a
decision recorded earlier (approved, edited or rejected) is carried out as recorded, never asked again. An
answer given now becomes the body of the ``answer`` entry the call journals (who gave it, how and when:
``Answers.entry``). ``answers.py`` reads and admits the answers; this module settles one of them at its call.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..actions import Resume
from ..decisions import Approve, Decision, Edit, Reject, decision
from .journal import Journal

__all__ = ["answer_for", "recorded_decision"]


class GivenAnswers(Protocol):
    """What a call reads of a resume's answers (``answers.Answers``, which re-exports this module's functions)."""

    by_id: dict[str, Any]
    by_position: dict[int, Resume]

    def entry(self, interrupt_id: str, value: Any) -> dict[str, Any]: ...


def recorded_decision(body: dict[str, Any]) -> Decision:
    """The decision an approval's answer entry records (its ``approved``, ``input``, ``reason`` fields)."""
    if body.get("approved"):
        return Edit(body["input"]) if "input" in body else Approve()
    reason = body.get("reason")
    return Reject(reason if isinstance(reason, str) else None)


def answer_for(
    journal: Journal, answers: GivenAnswers, run_id: str, slot: int, call_input: Any, asked: bool | None = None
) -> tuple[Resume | None, Decision | bool, Any, dict[str, Any] | None]:
    """For a live call at ``slot``: ``(resume, approval, input, answer entry)``.

    ``approval`` is the call's approval step, read from the journal: False (none), True (ask a human),
    or the decision to carry out, recorded earlier or given now (``input`` then the approved, possibly
    edited, input). ``resume`` is the answer for the action itself (a question's), or None.
    ``answer entry`` is the body of the ``answer`` journal entry to write, or None. ``asked``: whether the
    call's request (about to be journaled) asks for approval, in place of the journal's open request.
    """
    interrupt = journal.interrupt_at(slot)
    if asked is None:
        request = journal.open_request(slot)
        asked = bool(request is not None and request.body.get("approval"))
    approval: Decision | bool = asked
    decided = journal.decisions.get(slot)
    if decided is not None:
        approval = recorded_decision(decided.body)
        if isinstance(approval, Edit):
            call_input = approval.input
    given = answers.by_position.get(slot)
    if interrupt is not None and interrupt.body["id"] in answers.by_id:
        value, state = answers.by_id[interrupt.body["id"]], interrupt.body.get("state")
    elif given is not None:
        value, state = given.value, interrupt.body.get("state") if interrupt is not None else given.state
    else:
        return None, approval, call_input, None
    interrupt_id = interrupt.body["id"] if interrupt is not None else f"{run_id}:{slot}"
    body = answers.entry(interrupt_id, value)
    if approval is True and (interrupt is None or interrupt.body.get("approval")):
        # The answer is the approval's: a decision (admitted before the claim; a bare call log's is read here).
        approval = decision(value, run_id=run_id, what=f"the approval of the call at position {slot}")
        body.update(approval=True, approved=not isinstance(approval, Reject))
        if isinstance(approval, Edit):
            body["input"] = call_input = approval.input
        elif isinstance(approval, Reject) and approval.reason is not None:
            body["reason"] = approval.reason
        return None, approval, call_input, body
    return Resume(position=slot, value=value, state=state, id=interrupt_id), approval, call_input, body
