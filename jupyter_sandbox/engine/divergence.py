"""The errors a replay raises when the script stops matching its journal (docs/replay.md)."""

from __future__ import annotations

from typing import Any

from ..errors import CallLogMismatchError
from .attempt import Attempt

__all__ = ["diverged", "mismatch", "nothing_asked"]


def mismatch(attempt: Attempt, item: dict[str, Any]) -> CallLogMismatchError:
    """The prelude found a recorded effect unlike the one the script asked for (a ``mismatch`` item)."""
    slot = item["s"]
    return CallLogMismatchError(
        slot,
        attempt.recorded_at(slot),
        item["attempted"],
        line=item.get("line"),
        column=item.get("column"),
        source=attempt.run.source or "",
        run_id=attempt.run.id,
    )


def diverged(
    attempt: Attempt, slot: int, item: dict[str, Any], recorded: dict[str, Any] | None = None
) -> CallLogMismatchError:
    """A live effect where the replay allows none (a check), or another request than the one left open."""
    attempted = {
        "type": item["t"] if item["t"] != "call" else "action",
        "name": item.get("name"),
        "input": item.get("input"),
    }
    return CallLogMismatchError(
        slot,
        recorded if recorded is not None else attempt.recorded_at(slot),
        attempted,
        line=item.get("line"),
        column=item.get("column"),
        source=attempt.run.source or "",
        run_id=attempt.run.id,
    )


def nothing_asked(attempt: Attempt, position: int) -> CallLogMismatchError:
    """The script settled or waits without asking for the effect recorded at ``position``."""
    return CallLogMismatchError(
        position,
        attempt.recorded_at(position),
        {"type": "nothing"},
        source=attempt.run.source or "",
        run_id=attempt.run.id,
    )
