"""Who answered first: what an answer that lost a race is told.

Two people (two clicks, two kernels) answer one interrupt; the journal records one answer. The other finds the
interrupt closed, or the run finished, and is told whose answer won, read from the journal: the ``answer`` entry
(``by``, ``via``, ``process``, ``answered_at``, ``role``, and what it decided), or for a rejection that rolled
the run back its ``rollback`` entry. Every place that refuses such an answer (a resume, a rejection with
rollback) names it through ``earlier_answer``, so the loser reads the same sentence whichever way it came:

    run r-1: interrupt r-1:0 ('pay') was already answered by ada via card at 2026-12-02 17:03:09 UTC: approved
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from .journal import Journal

__all__ = ["EarlierAnswer", "earlier_answer"]

_WHO = ("by", "via", "process", "answered_at", "role")


@dataclass(frozen=True)
class EarlierAnswer:
    """An interrupt's recorded answer: ``record`` holds the entry's fields (docs/journal.md), ``text`` says it."""

    record: dict[str, Any]
    text: str


def earlier_answer(journal: Journal, run_id: str, ids: Collection[str] = ()) -> EarlierAnswer | None:
    """The recorded answer to one of ``ids`` in ``journal`` (with no ids, the newest answer), or None.

    ``record``: ``id``, ``name`` (the interrupted action), who answered and how (``by``, ``via``, ``process``,
    ``answered_at``, ``role``, those recorded), and what it decided: ``approved`` with ``input`` or
    ``reason``, ``rolled_back`` for a rejection that rolled the run back, or a question's ``value``.
    """
    names = {e.slot: e.body.get("name") for e in journal.entries if e.kind == "interrupt"}
    found = None
    for entry in journal.entries:
        if entry.kind == "answer" and (not ids or entry.body.get("id") in ids):
            found = {"id": entry.body.get("id"), "name": names.get(entry.slot), **_decided(entry.body)}
        elif entry.kind == "rollback" and entry.body.get("rejected") and (not ids or entry.body["rejected"] in ids):
            interrupt = next((e for e in journal.entries if e.kind == "interrupt" and _asks(e, entry.body)), None)
            name = interrupt.body.get("name") if interrupt is not None else None
            found = {"id": entry.body["rejected"], "name": name, "approved": False, "rolled_back": True}
            found.update({k: entry.body[k] for k in ("reason", *_WHO) if entry.body.get(k) is not None})
        if found is not None and ids:
            break  # the first answer is the one carried out
    if found is None:
        return None
    return EarlierAnswer(found, f"run {run_id}: {_said(found)}")


def _asks(interrupt: Any, rollback: dict[str, Any]) -> bool:
    ids = [interrupt.body.get("id"), *(i.get("id") for i in interrupt.body.get("interrupts") or ())]
    return rollback["rejected"] in ids


def _decided(body: dict[str, Any]) -> dict[str, Any]:
    """An answer entry's decision (a question's value, null too) and who gave it."""
    keep = ("approved", "input", "reason") if body.get("approval") else ("value",)
    return {**{k: body[k] for k in keep if k in body}, **{k: body[k] for k in _WHO if body.get(k) is not None}}


def _said(record: dict[str, Any]) -> str:
    """``interrupt ID ('NAME') was already answered by WHO via CHANNEL at WHEN: WHAT``."""
    name = f" ({record['name']!r})" if record.get("name") else ""
    who = "".join(f" {word} {record[key]}" for word, key in (("by", "by"), ("via", "via")) if record.get(key))
    at = record.get("answered_at")
    when = f" at {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(at))}" if isinstance(at, (int, float)) else ""
    return f"interrupt {record['id']}{name} was already answered{who}{when}: {_what(record)}"


def _what(record: dict[str, Any]) -> str:
    if "approved" not in record:
        return f"answered {_short(record.get('value'))}"
    if record["approved"]:
        return f"approved with input {_short(record['input'])} (an edit)" if "input" in record else "approved"
    reason = f" ({record['reason']})" if isinstance(record.get("reason"), str) and record["reason"] else ""
    return f"rejected{reason}" + (" and rolled back" if record.get("rolled_back") else "")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"
