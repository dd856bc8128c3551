"""What a card's buttons do: answer an open interrupt, resume a cancelled run, roll one back.

A click arrives from the labextension's comm (card_comm.py) or the widget view (card_widget.py) alike,
and from ``RunCard.answer`` in a cell: each answers the interrupt only if it is still open in the store,
with the same addressing, ``channel="card"``, and tells every card of the run as the resume goes.

>>> from jupyter_sandbox import Sandbox, SandboxInterrupt
>>> sb = Sandbox()
>>> _ = sb.action(lambda msg: {"sent": msg["to"]}, name="send", approval=True)
>>> try:
...     sb.eval('return await actions.send({to: "a@x"})')
... except SandboxInterrupt as paused:
...     run_id = paused.run_id
>>> click(sb, run_id, {"type": "answer", "choice": "approve"})     # None: it went through (the first open interrupt)
>>> sb.status(run_id)
'completed'
>>> click(sb, run_id, {"type": "answer", "interrupt_id": f"{run_id}:0", "choice": "reject"})  # doctest: +ELLIPSIS
'interrupt r-...:0 was already approved by ... via card: this answer was not given'
>>> click(sb, run_id, {"type": "answer", "choice": "approve"})
'no interrupt is open (the run is completed): nothing was answered'
>>> sb.close()
>>> answer_for({"approval": True}, "edit", {"to": "b@x"})
{'approved': True, 'input': {'to': 'b@x'}}
"""

from __future__ import annotations

from typing import Any

from ..agents.facade import SandboxLike
from ..decisions import Approve, Edit, Reject
from ..engine.attempt import Observer
from ..errors import Interrupt, InvalidEdit, RunParked, SandboxError, SandboxInterrupt
from .card_doc import card_document
from .card_views import cards, publish

__all__ = ["answer_for", "answer_run", "click", "resume_run"]


def answer_for(interrupt: Interrupt | dict[str, Any], choice: str, value: Any = None) -> Any:
    """The answer a button sends, in its JSON form. For an approval: approve → ``Approve()`` (``true``),
    reject → ``Reject(reason)`` (``false``, or ``{"approved": false, "reason": R}``), edit → ``Edit(V)``
    (``{"approved": true, "input": V}``). For another interrupt: approve → ``true``, reject → ``false`` (or
    ``{"approved": false, "reason": R}``), edit → ``V`` itself."""
    approval = interrupt.approval if isinstance(interrupt, Interrupt) else bool(interrupt.get("approval"))
    if choice == "approve":
        return Approve().to_json()
    if choice == "reject":
        return Reject(value or None).to_json()
    if choice == "edit":
        return Edit(value).to_json() if approval else value
    raise ValueError(f"unknown choice {choice!r}: approve, reject or edit")


def resume_run(sb: SandboxLike, run_id: str) -> Any:
    """Resume ``run_id`` (a cancelled run: the card's Resume) as ``sb.resume`` does, its cards told as it goes;
    its outcome (an error is returned, not raised)."""
    doc = card_document(sb, run_id)
    try:
        outcome: Any = sb.resume(doc["chain"][-1], observer=_Fanout(cards(run_id, sb)), channel="card")
    except SandboxError as exc:  # a pause is an outcome too
        outcome = exc
    publish(run_id, sb)
    return outcome


def click(sb: SandboxLike, run_id: str, data: dict[str, Any]) -> str | None:
    """Do what a card's click asks: ``{type: "answer", interrupt_id, choice, reason?, edited?}``,
    ``{type: "resume"}`` or ``{type: "rollback"}``, from the extension's comm or the widget view alike.
    Return why it did not go through (the card shows it until the next click), or None. A click on an
    interrupt that is no longer open (answered meanwhile: another view, another kernel, a cell) answers
    nothing and says so."""
    kind = data.get("type")
    outcome: Any = None
    if kind == "answer":
        choice = data.get("choice", "approve")
        value = data.get("edited") if choice == "edit" else data.get("reason")
        interrupt_id = data.get("interrupt_id")
        if interrupt_id is not None and not isinstance(interrupt_id, str):
            return f"no interrupt has the id {interrupt_id!r:.60}: nothing was answered"
        outcome = answer_run(sb, run_id, interrupt_id, choice, value)
        if outcome is None:
            return _not_open(sb, run_id, interrupt_id)
    elif kind == "resume":  # the card's Resume button (a cancelled run)
        outcome = resume_run(sb, run_id)
    elif kind == "rollback":  # the card's Roll back button (a failed, rejected or cancelled run)
        try:
            sb.rollback(run_id, channel="card")
        except SandboxError as exc:
            outcome = exc
    if isinstance(outcome, Exception) and not isinstance(outcome, (SandboxInterrupt, RunParked)):
        return f"{type(outcome).__name__}: {outcome}"[:2000]
    return None


def _not_open(sb: SandboxLike, run_id: str, interrupt_id: Any) -> str:
    doc = card_document(sb, run_id)
    if interrupt_id is None:  # the click asked for the first open one
        return f"no interrupt is open (the run is {doc.get('status')}): nothing was answered"
    done = next((a for a in doc.get("answered") or [] if a.get("id") == interrupt_id), None)
    if done is None:
        return f"interrupt {interrupt_id} is not open (the run is {doc.get('status')}): nothing was answered"
    how = "approved" if done.get("approved") else "rejected"
    who = "".join(f" {w} {done[k]}" for w, k in (("by", "by"), ("via", "via")) if done.get(k))
    return f"interrupt {interrupt_id} was already {how}{who}: this answer was not given"


def answer_run(sb: SandboxLike, run_id: str, interrupt_id: str | None, choice: str, value: Any = None) -> Any:
    """Resume ``run_id`` with one answer if that interrupt is still open, else refresh its cards; its outcome."""
    doc = card_document(sb, run_id)
    open_ = doc.get("pending") or []
    target = next((p for p in open_ if p["id"] == interrupt_id), None) if interrupt_id else (open_[:1] or [None])[0]
    if target is None:
        publish(run_id, sb)
        return None
    if choice == "edit" and target.get("approval"):  # an edit is checked against the action's schema first
        issues = sb.input_issues(target.get("name", ""), value)
        if issues:
            return InvalidEdit(target.get("name", "?"), issues)
    observer = _Fanout(cards(run_id, sb))
    try:
        outcome: Any = sb.resume(
            doc["chain"][-1],
            answers={target["id"]: answer_for(target, choice, value)},
            observer=observer,
            channel="card",
        )
    except (SandboxError, TypeError, ValueError) as exc:  # a pause is an outcome too
        outcome = exc
    publish(run_id, sb)
    return outcome


class _Fanout(Observer):
    """A resume from a click or a cell tells every card of the run, as the cell that started it was told."""

    def __init__(self, shown: list[Any]):  # RunCards
        self.views = [card.observer() for card in shown]

    def entries(self, run_id: str, entries: list[dict[str, Any]]) -> None:
        for view in self.views:
            view.entries(run_id, entries)

    def progress(self, run_id: str, patch: Any) -> None:
        for view in self.views:
            view.progress(run_id, patch)

    def step(self, run_id: str, note: dict[str, Any]) -> None:
        for view in self.views:
            view.step(run_id, note)
