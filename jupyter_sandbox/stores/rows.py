"""Journal rows: the ``Entry`` every backend stores, and its CBOR encoding.

One codec for every backend, so a row written by one reads the same in
another (and in a portable file). ``decode`` is where untrusted bytes become
an ``Entry``: it validates the row's shape and names the run, ``seq`` and
field of anything wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cbor2

from ..errors import StoreError

__all__ = ["Entry", "decode", "encode"]


@dataclass(slots=True)
class Entry:
    """One journal row. ``body`` holds the kind's own fields (docs/journal.md)."""

    kind: str
    attempt: int
    at: float
    slot: int | None = None
    body: dict[str, Any] = field(default_factory=dict)
    seq: int = -1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "kind": self.kind, "attempt": self.attempt, "at": self.at}
        if self.slot is not None:
            out["slot"] = self.slot
        out.update(self.body)
        return out


def encode(entry: Entry) -> bytes:
    row = {"kind": entry.kind, "attempt": entry.attempt, "at": entry.at, **entry.body}
    if entry.slot is not None:
        row["slot"] = entry.slot
    return cbor2.dumps(row)


def decode(run_id: str, seq: int, blob: bytes) -> Entry:
    try:
        row = cbor2.loads(blob)
        kind, attempt, at = row.pop("kind"), row.pop("attempt"), row.pop("at")
    except Exception as exc:  # cbor2 raises several types; all mean the same thing here
        raise StoreError(f"run {run_id}: journal entry {seq} cannot be decoded: {exc}") from exc
    return Entry(kind, attempt, at, row.pop("slot", None), row, seq)
