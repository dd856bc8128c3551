"""The runs table's rows: how a run stands (``RunStatus``), and a row's columns checked as it is read.

>>> sorted(ENDED)
['completed', 'rolled_back']
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from ..errors import StoreError
from .row_rules import MAX_COUNT, OPT_NUM, OPT_STR, STR, Rule, count_in, decode_value, finite_number, json_value, one_of
from .stored import run_options

__all__ = ["ENDED", "RUN_BLOBS", "RUN_COLUMNS", "RUN_STATUSES", "RunStatus", "decode_run"]

# How a run stands in its row. The facade shows two of them otherwise (results.STATUSES): ``interrupted`` is
# ``paused``, and ``continued`` (a run that went on as a ``continueAsNew`` successor) shows as its chain's end.
RunStatus = Literal[
    "created",
    "running",
    "completed",
    "failed",
    "interrupted",
    "parked",
    "cancelled",
    "continued",
    "stalled",
    "rolled_back",
]
RUN_STATUSES: frozenset[str] = frozenset(get_args(RunStatus))
# The statuses no resume leaves: a signal to a run in one would never be taken, so it is refused.
ENDED: frozenset[str] = frozenset({"completed", "rolled_back"})


# column -> rule, for the columns SQLite types loosely (a damaged file can hold text in a REAL column).
RUN_COLUMNS: dict[str, Rule] = {
    "id": STR,
    "name": OPT_STR,
    "kind": one_of("workflow", "agent"),
    "status": one_of(*RUN_STATUSES),
    "source": OPT_STR,
    "source_hash": OPT_STR,
    "parent": OPT_STR,
    "predecessor": OPT_STR,
    "successor": OPT_STR,
    "created": finite_number,
    "updated": finite_number,
    "attempt": count_in(0, MAX_COUNT),
    "owner": OPT_STR,
    "wake_at": OPT_NUM,
    "lease_until": OPT_NUM,
}
RUN_BLOBS: dict[str, Rule] = {"input": json_value, "output": json_value, "error": json_value, "options": json_value}


def decode_run(values: dict[str, Any]) -> dict[str, Any]:
    """A runs-table row (column -> stored value) with its blobs decoded, every column checked."""
    run_id = values.get("id")
    if type(run_id) is not str:
        raise StoreError(f"a run has the id {run_id!r:.40}, not a string; the store is damaged")
    for column, rule in RUN_COLUMNS.items():
        problem = rule(values.get(column))
        if problem:
            raise StoreError(f"run {run_id}: its {column} {problem}; the store is damaged")
    for column, rule in RUN_BLOBS.items():
        values[column] = decode_value(run_id, column, values.get(column), rule)
    values["options"] = run_options(run_id, values["options"])  # what each option must be: stored.py
    return values
