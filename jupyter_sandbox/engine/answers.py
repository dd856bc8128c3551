"""Answers to interrupts: which live call a resume's answer goes to, and what it carries.

An answer is addressed by interrupt id (``RUN_ID:SLOT``), by position in the
top run, or as the one answer to the only open interrupt; ``Answers.of`` reads
the one shape every channel sends (an id mapping, or one answer), and
``Answers.admit`` refuses, before anything runs, an answer that reaches no open
interrupt, an approval answer that is not a decision (decisions.py), and an
answer this process could not carry out (it lacks the action). A position
answer also reaches a slot a bare call log left open (no interrupt entry
recorded), and a delegated child's interrupt through its parent's slot.

The journal governs: whether a call needs approval is read from its recorded
call and interrupt, and a recorded decision (approved, edited or rejected) is
carried out as recorded, never asked again and never re-read from what this
process registered. Each answer entry says who gave it (``by``), how
(``via``, ``process``) and when on the store's clock (``answered_at``; on
PostgreSQL also the database ``role``), see docs/journal.md. At a live call, one answer is settled
against the journal by ``call_answers.answer_for`` (re-exported here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..actions import NO_ANSWER, Resume
from ..decisions import as_json, decision
from ..errors import AnswerRefused, Interrupt, InvalidValue, RunStateError, UnaddressedAnswer
from ..values import json_copy
from .answered import EarlierAnswer, earlier_answer
from .call_answers import answer_for, recorded_decision
from .journal import Journal

__all__ = ["NO_ANSWER", "Answers", "answer_for", "recorded_decision"]

# An interrupt id as the engine writes it (``RUN_ID:SLOT``): how a mapping of answers by id is told from one
# answer that happens to be an object (a question's answer may be any JSON value).
INTERRUPT_ID = re.compile(r"^\S+:\d+$")


@dataclass
class Answers:
    """The answers a resume carries: by interrupt id, or by position in the top run."""

    by_id: dict[str, Any] = field(default_factory=dict)
    by_position: dict[int, Resume] = field(default_factory=dict)
    first: Any = NO_ANSWER  # answers the only open interrupt (``Sandbox.resume(run_id, value)``); None is null
    by: str | None = None  # who answers (``Sandbox(identity=...)``)
    via: str | None = None  # the channel: card, magic, api, tool, mcp:CLIENT
    process: str | None = None  # the kernel or process the answer came from
    stamp: dict[str, Any] = field(default_factory=dict)  # the store's witness: answered_at, role (PostgreSQL)
    lost: EarlierAnswer | None = None  # another's answer that came first, found once the run was claimed

    @classmethod
    def of(cls, answers: Any, **who: Any) -> Answers:
        """The answers one request carries, as every channel sends them: a mapping whose keys are
        interrupt ids (``{"r-...:3": true}``) answers by id; any other value (``true``, a decision's JSON
        form, a question's answer, ``None`` for null) is the one answer to the only open interrupt;
        ``NO_ANSWER`` is none. A mapping with any key shaped like an interrupt id is by id, so a mistyped
        id is refused, never taken for an answer.

        >>> Answers.of(None).first is None, Answers.of(NO_ANSWER).given()
        (True, False)
        """
        if isinstance(answers, Mapping) and any(isinstance(k, str) and INTERRUPT_ID.match(k) for k in answers):
            return cls(by_id=dict(answers), **who)
        return cls(first=answers, **who)

    def for_child(self, pending: list[dict[str, Any]], position: int) -> Answers:
        """Answers to hand a child run: its ids, and a position answer for the delegate's slot."""
        by_id = dict(self.by_id)
        if position in self.by_position and pending:
            by_id.setdefault(pending[0]["id"], self.by_position[position].value)
        return Answers(by_id=by_id, by=self.by, via=self.via, process=self.process, stamp=self.stamp)

    def given(self) -> bool:
        return bool(self.by_id or self.by_position or self.has_first())

    def has_first(self) -> bool:
        """Whether there is one answer for the only open interrupt (null is one; ``NO_ANSWER`` is none)."""
        return self.first is not NO_ANSWER

    def check(self) -> None:
        """Every answer must cross as JSON (it is journaled): raise ``InvalidValue`` naming the one that does not.

        Each is then kept as a private copy in JSON's types: the answer journaled and the one handed to the
        action never share an object with the caller's (who may edit it while the run goes on).
        """
        self.by_id = {key: as_json(value) for key, value in self.by_id.items()}
        self.by_position = {p: replace(r, value=as_json(r.value)) for p, r in self.by_position.items()}
        for key in self.by_id:
            if not isinstance(key, str):
                raise InvalidValue(f"answers are keyed by interrupt id (a string like 'r-...:3'), got {key!r:.60}")
        for position in self.by_position:
            if isinstance(position, bool) or not isinstance(position, int) or position < 0:
                raise InvalidValue(
                    f"Resume(position=...) takes a call log position (an int >= 0), got {position!r:.60}"
                )
        self.by_id = {key: json_copy(value, f"the answer for {key}") for key, value in self.by_id.items()}
        if self.has_first():
            self.first = json_copy(as_json(self.first), "the answer")
        self.by_position = {
            p: replace(
                r,
                value=json_copy(r.value, f"the answer for position {p}"),
                state=json_copy(r.state, f"the answer's state at position {p}"),
            )
            for p, r in self.by_position.items()
        }

    def refuse_unaddressed(self, journal: Journal, run_id: str, status: str | None, retry: bool = True) -> None:
        """Every answer must reach an interrupt open in ``journal`` (the top run's): else ``UnaddressedAnswer``,
        listing the open ones. Raised before the run is claimed, so a mistyped answer changes nothing.

        ``first`` is settled here: it answers the only open interrupt; with several open it names none of
        them (a guess would answer one nobody looked at), and with none it answers nothing and is refused
        too (a parked run's ``resume(run_id, True)``), unless it repeats the run's last recorded answer and
        ``retry`` allows that: a retried "resume with True" after a crash that recorded the answer still
        finishes (a fork, a new run, has nothing to retry).
        """
        open_ = open_interrupts(journal)
        positions = {item["position"] for item in open_}
        ids = {i for item in open_ for i in item["ids"]}
        stray = [f"id {key!r}" for key in self.by_id if key not in ids]
        stray += [f"position {p}" for p in self.by_position if p not in positions]
        if self.has_first() and not ids and not self.by_id and not (retry and self._repeats_last_answer(journal)):
            stray.insert(0, "the one answer")
        if self.has_first() and self.by_id:
            self._refuse_disagreeing(journal, open_, run_id, status)
        if self.has_first() and len(ids) > 1:
            raise UnaddressedAnswer(
                f"run {run_id}: one answer for several open interrupts answers none of them: "
                + "; ".join(_listed(item) for item in open_)
                + ". Answer each by its id (answers={id: ...})",
                run_id=run_id,
                status=status,
                unaddressed=["the one answer"],
                open=open_,
            )
        if stray:
            lost = [key for key in self.by_id if key not in ids]  # answered meanwhile, perhaps: then say by whom
            earlier = earlier_answer(journal, run_id, lost) if lost else None
            raise UnaddressedAnswer(
                _unaddressed_message(run_id, status, stray, open_, earlier),
                run_id=run_id,
                status=status,
                unaddressed=stray,
                open=open_,
                answered=earlier.record if earlier is not None else None,
            )
        self.settle_first(journal)

    def _repeats_last_answer(self, journal: Journal) -> bool:
        """Whether ``first`` says what the journal's newest answer entry recorded (a retry of that answer)."""
        last = next((e for e in reversed(journal.entries) if e.kind == "answer"), None)
        if last is None:
            return False
        return _same_answer(last.body.get("value"), self.first, bool(last.body.get("approval")))

    def _refuse_disagreeing(
        self, journal: Journal, open_: list[dict[str, Any]], run_id: str, status: str | None
    ) -> None:
        """``value`` and ``answers=`` given together: they must say the same of the one interrupt they both
        reach, else ``RunStateError`` before anything is recorded (neither silently wins)."""
        if len(open_) != 1:
            return  # several open: the one value answers none of them (refused next)
        item = open_[0]
        named = [i for i in item["ids"] if i in self.by_id]
        approval = {}  # by id: whether it asks for an approval (a delegated child's interrupt says so itself)
        for entry in journal.pending_interrupts():
            if entry.slot == item["position"]:
                approval[entry.body["id"]] = bool(entry.body.get("approval"))
                for child in entry.body.get("interrupts") or ():
                    approval[child["id"]] = bool(child.get("approval", entry.body.get("approval")))
        if any(not _same_answer(self.by_id[i], self.first, approval.get(i, False)) for i in named):
            raise RunStateError(
                f"run {run_id}: the value and answers={{{named[0]!r}: ...}} answer the same interrupt "
                f"({_listed(item)}) differently: give one of them",
                run_id=run_id,
                status=status,
            )

    def admit(
        self,
        journal: Journal,
        run_id: str,
        status: str | None,
        can_answer: Callable[[str], bool],
        approvers: Callable[[str | None, str | None, Interrupt], Any] | None = None,
        retry: bool = True,
    ) -> None:
        """Refuse, before anything is recorded, what this resume cannot carry out as given.

        Each answer must reach an open interrupt (``refuse_unaddressed``, ``retry`` as there); one to an
        approval must be a decision (``decisions.decision``); an interrupt already decided is not decided
        again; the process must have the interrupted action (``can_answer(name)``), else the answer would
        become a failure nobody chose; and ``approvers(by, via, interrupt)``, when set, must allow it.
        """
        self.refuse_unaddressed(journal, run_id, status, retry)
        for interrupt, value in self.addressed(journal, run_id):
            if interrupt.approval:
                decision(value, run_id=run_id, status=status, what=f"the approval of {interrupt.name!r}")
                if interrupt.position in journal.decisions and interrupt.run_id == run_id:
                    earlier = earlier_answer(journal, run_id, [interrupt.id])
                    raise RunStateError(
                        f"{earlier.text if earlier else f'run {run_id}: {interrupt.id} was already answered'}; "
                        "resume without an answer to carry that decision out",
                        run_id=run_id,
                        status=status,
                        answered=earlier.record if earlier else None,
                    )
            if not can_answer(interrupt.name):
                raise RunStateError(
                    f"run {run_id}: this process has no action {interrupt.name!r}, so it cannot carry out an "
                    f"answer to {interrupt.id}; nothing was recorded and the run still waits. Register "
                    f"{interrupt.name!r} here (as the process that started the run did) and answer again",
                    run_id=run_id,
                    status=status,
                )
            if approvers is not None and approvers(self.by, self.via, interrupt) is not True:
                raise AnswerRefused(
                    f"run {run_id}: {self.by or 'this caller'} (via {self.via or 'api'}) may not answer "
                    f"{interrupt.id} ({interrupt.name!r}): the Sandbox's approvers policy refused it; nothing "
                    "was recorded",
                    run_id=run_id,
                    status=status,
                )

    def addressed(self, journal: Journal, run_id: str) -> list[tuple[Interrupt, Any]]:
        """The open interrupts these answers reach, each with its answer (a delegated child's by its own id)."""
        out = []
        for entry in journal.pending_interrupts():
            items = entry.body.get("interrupts") or [entry.body]
            for n, item in enumerate(items):
                given = self.by_id.get(item["id"], NO_ANSWER)
                if given is NO_ANSWER and n == 0 and entry.slot in self.by_position:
                    given = self.by_position[entry.slot].value
                if given is NO_ANSWER:
                    continue
                owner = str(item["id"]).rpartition(":")[0] or run_id
                interrupt = Interrupt(
                    item["id"],
                    owner,
                    entry.slot if entry.slot is not None else -1,
                    str(item.get("name") or entry.body.get("name")),
                    entry.body.get("input"),
                    item.get("data"),
                    None,
                    bool(item.get("approval")),
                )
                out.append((interrupt, given))
        return out

    def entry(self, interrupt_id: str, value: Any) -> dict[str, Any]:
        """The body of the answer entry for ``value``: the answer, and who gave it, how and when."""
        return {"value": value, "id": interrupt_id, **self.who()}

    def who(self) -> dict[str, Any]:
        """Who answers, how and when: the fields an answer entry (or a rollback a rejection asks for) records."""
        who = {"by": self.by, "via": self.via, "process": self.process, **self.stamp}
        return {k: v for k, v in who.items() if v is not None}

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

    def drop_lost(self, admitted: Journal, claimed: Journal, run_id: str) -> None:
        """Drop each answer that another resume beat to its interrupt: answered in ``claimed`` (the journal as
        read once the run was claimed), not in ``admitted`` (the one these answers were admitted against).
        ``lost`` keeps the first such answer, reported once the run has gone on without them."""
        for key in list(self.by_id):
            earlier = earlier_answer(claimed, run_id, [key])
            if earlier is not None and earlier_answer(admitted, run_id, [key]) is None:
                del self.by_id[key]
                self.lost = self.lost or earlier

    def settle_first(self, journal: Journal) -> None:
        """Turn ``first`` into an answer by id, now that the journal is at hand."""
        if self.has_first():
            pending = journal.pending_interrupts()
            if len(pending) == 1:
                self.by_id.setdefault(pending[0].body["id"], self.first)
            self.first = NO_ANSWER


def _json_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, allow_nan=False)


def _same_answer(a: Any, b: Any, approval: bool) -> bool:
    """Whether two answers say the same: to an approval, the same decision (``true`` is ``{"approved": true}``);
    to a question, the same JSON (``False`` is not ``0``). An approval answer that is no decision is compared as
    JSON too (it is refused next, as not a decision)."""
    if approval:
        try:
            a, b = decision(a).to_json(), decision(b).to_json()
        except RunStateError:
            pass
    return _json_text(a) == _json_text(b)


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


def _unaddressed_message(
    run_id: str, status: str | None, stray: list[str], open_: list[dict[str, Any]], earlier: EarlierAnswer | None
) -> str:
    head = f"run {run_id}: {_and(stray)} {'answers' if len(stray) == 1 else 'answer'} nothing"
    if earlier is not None:  # a race lost: the answer that won, not "no open interrupt"
        head = f"{earlier.text}; this answer was not recorded"
    if not open_:
        state = f" ({status})" if status else ""
        return (
            head
            if earlier is not None
            else f"{head}: the run{state} has no open interrupt; resume it without an answer"
        )
    listed = "; ".join(_listed(item) for item in open_)
    return f"{head}. Open interrupts: {listed}. Answer one with Resume(position=...) or answers={{id: ...}}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _listed(item: dict[str, Any]) -> str:
    return f"{item['name']!r} at position {item['position']} (id {', '.join(item['ids'])})"
