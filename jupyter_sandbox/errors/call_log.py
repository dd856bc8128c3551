"""Replay against a journal or a call log: a divergence, and a call log that is not one."""

from __future__ import annotations

from typing import Any

from .base import SandboxError, excerpt

__all__ = ["CallLogMismatchError", "InvalidCallLog"]


class CallLogMismatchError(SandboxError):
    """The resumed script did something other than what the journal recorded.

    ``position`` is the slot that diverged; ``recorded`` and ``attempted`` are
    dicts with ``type``, ``name`` and ``input`` (what the journal holds there,
    and what the script asked for now); ``line``/``source_line`` locate the
    attempt in the source. Nothing was served from the journal for it.
    """

    def __init__(
        self,
        position: int,
        recorded: dict | None,
        attempted: dict,
        *,
        line: int | None = None,
        column: int | None = None,
        source: str | None = None,
        run_id: str | None = None,
    ):
        self.position, self.recorded, self.attempted = position, recorded, attempted
        self.line, self.column, self.run_id = line, column, run_id
        self.source_line = excerpt(source, line, column)
        text = (
            f"the script is not deterministic: at position {position} the journal recorded "
            f"{_describe(recorded)} but the script attempted {_describe(attempted)}"
        )
        differs = _difference(recorded, attempted)
        if differs:
            text += f": {differs}"
        if line:
            text += f" (workflow.js:{line}:{column})"
        if self.source_line:
            text += "\n" + self.source_line
        text += "\nBranch only on input, action results, ctx.now() and the recorded Date/Math.random."
        super().__init__(text)

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "position": self.position,
            "recorded": self.recorded,
            "attempted": self.attempted,
            "line": self.line,
            "column": self.column,
            "source_line": self.source_line,
        }


def _difference(recorded: dict | None, attempted: dict | None) -> str:
    """What differs between a recorded and an attempted effect: the kind, the name, or which input fields."""
    if not recorded or not attempted:
        return ""
    if recorded.get("type") != attempted.get("type"):
        return "the kind differs"
    if recorded.get("name") != attempted.get("name"):
        return "the name differs"
    a, b = recorded.get("input"), attempted.get("input")
    if isinstance(a, dict) and isinstance(b, dict):
        fields = sorted((k for k in a.keys() | b.keys() if a.get(k, _MISSING) != b.get(k, _MISSING)), key=str)
        if fields:
            shown = ", ".join(repr(k) for k in fields[:5]) + (f" and {len(fields) - 5} more" if len(fields) > 5 else "")
            return f"only the input differs, in field{'s' if len(fields) > 1 else ''} {shown}"
    return "only the input differs" if a != b else ""


_MISSING = object()


def _describe(entry: dict | None) -> str:
    if entry is None:
        return "nothing"
    kind = entry.get("type", "?")
    if kind in ("action", "delegate", "agent"):
        return f"{kind} {entry.get('name')!r} with input {entry.get('input')!r}"
    return f"a {kind} read" if kind in ("now", "random") else kind


class InvalidCallLog(SandboxError, ValueError):
    """A call log passed to ``eval`` is malformed; ``position`` is the offending slot, if any."""

    def __init__(self, message: str, *, position: int | None = None):
        self.position = position
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "position": self.position}
