"""What a tool call reports: the ``ToolResult``, the notes under each status, and the journal read for them.

The text is the model's (the same on every machine); the fields are the program's.

>>> from jupyter_sandbox import Sandbox
>>> with Sandbox() as sb:
...     result = sb.tool().run({"script": "return 1 + 1"})
>>> result.status, result.output                   # the program's fields
('completed', 2)
>>> print(result)                                  # the text the model reads  # doctest: +ELLIPSIS
status: completed (run r-...)
output:
2
<BLANKLINE>
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import LimitExceeded, LintError, RunStateError, ScriptError, error_dict
from .facade import SandboxLike

__all__ = [
    "PAUSED",
    "ROLLED_BACK",
    "WAITING",
    "Tool",
    "ToolResult",
    "answered",
    "call_line",
    "console_of",
    "describe",
    "pending_of",
]

PAUSED = (
    "The run is paused until a human answers (below). Do not run the script again: "
    "its outcome is reported when they have answered."
)

ROLLED_BACK = (
    "The run was rolled back: the reverts of its completed calls ran, newest first. It will not resume; "
    "run a new script to try again."
)

# The note under each status a run can wait in (results.STATUSES), saying what happens next.
WAITING = {
    "paused": PAUSED,
    "parked": "The run waits for a timer or an event; it goes on by itself when one comes.",
    "parked-unscheduled": "The run waits for a timer or an event; nothing here wakes it: it goes on once a scheduler "
    "on its store runs (a notebook's, or `jupyter-sandbox worker --store STORE`).",
    "stalled": "The run lost its host mid-attempt; resume_run takes it up again (nothing it recorded runs twice).",
    "running": "The run is still running.",
    "created": "The run has not started.",
}


class Tool(Protocol):
    """What a result keeps of the tool that made it: its name and sandbox (a card shows the run there)."""

    name: str
    sandbox: SandboxLike


@dataclass
class ToolResult:
    """One tool call's outcome. ``content`` is the text for the model; the rest is for the program.

    ``pending``: the interrupts waiting for an answer (``id``, ``name``, ``data``, ``approval``), when paused.
    ``error``: ``{name, message, action, issues, line, column, excerpt}`` when failed.
    ``answers``: after ``resume`` or ``result``, the run's answers: ``id``, ``name``, ``approved`` (an
    approval's), ``input`` (an edit's), ``by``, ``via``, ``answered_at``, ``role`` (README "Who approves").
    """

    status: str  # a word of results.STATUSES: completed, paused, parked, stalled, failed, cancelled ...
    run_id: str | None
    content: str
    output: Any = None
    console: list[dict[str, str]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)
    tool: Tool | None = field(default=None, repr=False)
    outcome: Any = field(default=None, repr=False)  # the RunResult or exception it came from, if any
    saved: dict[str, Any] | None = None  # {name, version} when the call's `save` kept the script

    def __str__(self) -> str:
        return self.content

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # In a notebook with the extension loaded, the notebook layer (above this one) shows a
        # ToolResult as its run's card (notebook/tool_card.py registers that display); elsewhere, the text.
        printer.text(self.content)


def console_of(entries: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The run's console lines, ``{level, message}`` each, from its journal entries."""
    return [
        {"level": e.get("level", "log"), "message": e.get("message", "")} for e in entries if e.get("kind") == "console"
    ]


_FOR_THE_MODEL = ("name", "message", "line", "column", "action", "issues", "traceback")


def describe(exc: BaseException) -> dict[str, Any]:
    """The error as the model reads it: its ``to_dict()``, cut to what helps fix the script."""
    record = error_dict(exc)
    if isinstance(exc, LintError):
        problems = "; ".join(f"line {p['line']}: `{p['name']}` {p['hint']}" for p in record["problems"])
        record["message"] = f"the script uses what a sandbox does not have: {problems}"
    elif isinstance(exc, LimitExceeded):
        record["name"] = f"LimitExceeded ({exc.limit})"
    if not isinstance(exc, (ScriptError, LintError, RunStateError)):  # the first line says it; the rest is an excerpt
        record["message"] = record["message"].splitlines()[0] if record["message"] else ""
    return {k: record[k] for k in _FOR_THE_MODEL if k in record}


def call_line(entries: list[dict[str, Any]], action: str) -> int | None:
    """The line of the last call of ``action`` that failed (its call entry records the line)."""
    lines = {e.get("slot"): e.get("line") for e in entries if e.get("kind") == "call"}
    failed = [
        e.get("slot")
        for e in entries
        if e.get("kind") == "result" and not e.get("ok") and (e.get("error") or {}).get("action") == action
    ]
    return lines.get(failed[-1]) if failed else None


def answered(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run's answer entries as who answered what: one dict each (the fields of docs/journal.md)."""
    names = {e.get("slot"): e.get("name") for e in entries if e.get("kind") == "call"}
    keep = ("id", "approved", "input", "reason", "by", "via", "process", "answered_at", "role")
    return [
        {"name": names.get(e.get("slot")), **{k: e[k] for k in keep if k in e}}
        for e in entries
        if e.get("kind") == "answer"
    ]


def pending_of(pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"id": p.get("id"), "name": p.get("name"), "data": p.get("data"), "approval": p.get("approval")}
        for p in pending
    ]
