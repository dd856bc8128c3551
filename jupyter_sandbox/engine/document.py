"""A run's timeline document (docs/journal.md): the run, its attempts, its journal and its open interrupts,
as the run card and ``Sandbox.document`` show them."""

from __future__ import annotations

from typing import Any

from ..stores.base import Store
from .journal import Journal

__all__ = ["document"]


def document(store: Store, run_id: str) -> dict[str, Any]:
    """The timeline document of ``run_id``, read from ``store``."""
    run = store.get_run(run_id)
    journal = Journal(store.entries(run_id))
    pending = []
    if run.status not in ("completed", "continued"):  # a failed resume (a mismatch) leaves its interrupt open
        pending = [
            {
                "id": e.body["id"],
                "run_id": run_id,
                "position": e.slot,
                "name": e.body.get("name"),
                "data": e.body.get("data"),
                "approval": bool(e.body.get("approval")),
                "interrupts": e.body.get("interrupts"),
            }
            for e in journal.pending_interrupts()
        ]
    return {
        "version": 1,
        "run": {**run.to_dict(), "source": None},
        "attempts": store.attempts(run_id),
        "entries": [e.to_dict() for e in journal.entries],
        "pending": pending,
        "source": run.source,
    }
