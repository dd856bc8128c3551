"""Journal rows: the ``Entry`` every backend stores, and its CBOR encoding.

One codec for every backend, so a row written by one reads the same in
another (and in a portable file). ``decode`` is where untrusted bytes become
an ``Entry``: it checks the row against its kind's schema (``SCHEMAS``, one per
kind of docs/journal.md) and names the run, ``seq`` and field of anything
wrong, as a ``StoreError``. Nothing is sized from a number a row holds: a slot
is at most ``MAX_SLOT`` (the call log is a list by slot).

The rules a row's fields are checked by are ``row_rules``'s; the runs table's
rows are ``runs_table``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cbor2

from ..errors import StoreError
from ..values import detach
from .row_rules import (
    A_LIST,
    ANY,
    BOOL,
    BYTES,
    JSON_SCALARS,
    MAX_COUNT,
    MAX_SLOT,
    OPT_ID,
    OPT_INT,
    OPT_NUM,
    OPT_STR,
    SLOT,
    STR,
    Rule,
    a_map,
    count_in,
    error_record,
    finite_number,
    is_json,
    json_value,
    list_of,
    one_of,
    random_unit,
)

__all__ = [
    "Entry",
    "MAX_SLOT",
    "SCHEMAS",
    "decode",
    "decode_journal",
    "encode",
]


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
        """The row as a plain dict that shares no mutable value with the journal (a view may edit it)."""
        out: dict[str, Any] = {"seq": self.seq, "kind": self.kind, "attempt": self.attempt, "at": self.at}
        if self.slot is not None:
            out["slot"] = self.slot
        for key, value in self.body.items():
            out[key] = detach(value)
        return out


def encode(entry: Entry) -> bytes:
    row = {"kind": entry.kind, "attempt": entry.attempt, "at": entry.at, **entry.body}
    if entry.slot is not None:
        row["slot"] = entry.slot
    return cbor2.dumps(row)


def _interrupt_item(value: Any) -> str | None:
    problem = a_map(value)
    if problem:
        return problem
    for key, rule in (("id", STR), ("name", STR)):
        problem = rule(value.get(key))
        if problem:
            return f".{key} {problem}"
    return None


# One schema per kind (docs/journal.md): field -> (required, rule). Every value of a row is JSON (one walk
# over the row checks that); a rule checks the field's shape. Fields a schema does not name are kept (JSON,
# otherwise unchecked), so a row written by a newer minor version still reads; an unknown kind does not.
Schema = dict[str, tuple[bool, "Rule | None"]]  # None: any JSON value
_NOTE: Schema = {"step": (False, OPT_ID)}
SCHEMAS: dict[str, Schema] = {
    "attempt": {
        "n": (True, count_in(1, MAX_COUNT)),
        "source_hash": (True, OPT_STR),
        "resumed_from": (True, list_of(STR)),
    },
    "call": {
        "op": (True, one_of("call", "delegate", "agent")),
        "name": (True, STR),
        "input": (True, ANY),
        "key": (True, STR),
        "description": (False, OPT_STR),
        "child": (False, STR),
        "line": (False, OPT_INT),
        "imported": (False, BOOL),
        "version": (False, count_in(1, MAX_COUNT)),  # a saved script's: the version the call ran
        "approval": (False, BOOL),  # the call waits for a human (decided once, when it was first made)
    },  # served from a bare call log, journaled as served
    "result": {"ok": (True, BOOL), "value": (False, ANY), "error": (False, error_record)},
    "now": {"value": (True, finite_number)},
    "random": {"value": (True, random_unit)},
    "timer": {"key": (True, STR), "ms": (True, finite_number), "due": (True, finite_number)},
    "fired": {},
    "wait": {"key": (True, STR), "match": (True, ANY), "timeout": (True, OPT_NUM), "due": (True, OPT_NUM)},
    "event": {"event": (True, ANY), "signal": (True, OPT_ID)},
    "interrupt": {
        "name": (True, STR),
        "input": (True, ANY),
        "data": (True, ANY),
        "state": (True, ANY),
        "id": (True, STR),
        "approval": (False, BOOL),
        "child": (False, STR),
        "interrupts": (False, list_of(_interrupt_item)),
    },
    "answer": {
        "value": (True, ANY),
        "id": (True, STR),
        "approval": (False, BOOL),
        "approved": (False, BOOL),
        "input": (False, ANY),  # an edit's: the input that ran
        "reason": (False, OPT_STR),
        # who, how and when (docs/journal.md): the identity, the channel, host:pid, the store's clock, the DB role
        "by": (False, STR),
        "via": (False, STR),
        "process": (False, STR),
        "answered_at": (False, finite_number),
        "role": (False, STR),
    },
    "console": {**_NOTE, "level": (True, STR), "message": (True, STR)},
    "log": {**_NOTE, "level": (True, STR), "message": (True, STR), "data": (False, ANY)},
    "step": {
        **_NOTE,
        "id": (True, count_in(0, MAX_COUNT)),
        "label": (True, STR),
        "phase": (True, one_of("start", "end")),
        "parent": (True, OPT_ID),
        "outcome": (False, one_of("ok", "error")),
        "error": (False, OPT_STR),
    },
    "plan": {**_NOTE, "plan": (True, A_LIST)},
    "error": {"error": (True, error_record)},
    "rollback": {
        "reason": (False, OPT_STR),
        "rejected": (False, OPT_STR),
        "by": (False, STR),  # who asked, as on an answer entry
        "via": (False, STR),
        "process": (False, STR),
        "answered_at": (False, finite_number),
        "role": (False, STR),
    },
    "revert": {"of": (True, SLOT), "name": (True, STR)},
    "reverted": {
        "of": (True, SLOT),
        "ok": (True, BOOL),
        "value": (False, ANY),
        "error": (False, error_record),
        "child": (False, STR),
    },
    "not_reverted": {"of": (True, SLOT), "name": (True, STR), "reason": (True, STR)},
    "rolled_back": {
        "reverted": (True, count_in(0, MAX_COUNT)),
        "not_reverted": (True, count_in(0, MAX_COUNT)),
        "failed": (True, count_in(0, MAX_COUNT)),
    },
    "mismatch": {
        "position": (True, SLOT),
        "recorded": (False, ANY),
        "attempted": (False, ANY),
        "line": (False, OPT_INT),
        "column": (False, OPT_INT),
        "source_line": (False, OPT_STR),
    },
}
EFFECTS = frozenset({"call", "result", "now", "random", "timer", "fired", "wait", "event", "interrupt", "answer"})
# A result carries the value it completed with, or the error it failed with.
_RESULT_NEEDS = {True: "value", False: "error"}


# Each schema compiled for the decode below (on every resume's path, once a row): the names a row must have,
# per field the types that alone decide it (checked inline) or the rule to call, and per field the types
# that alone make it right, its rule and JSON's both (most values of most rows: one test settles them).
_SPECS = {
    kind: (
        frozenset(name for name, (required, _) in schema.items() if required),
        {name: (getattr(rule, "exact", None), rule) for name, (_, rule) in schema.items() if rule is not None},
        {
            name: JSON_SCALARS if rule is None else rule.exact & JSON_SCALARS  # type: ignore[attr-defined]
            for name, (_, rule) in schema.items()
            if rule is None or getattr(rule, "exact", None) is not None
        },
    )
    for kind, schema in SCHEMAS.items()
}
_NOTHING: frozenset[type] = frozenset()
_ATTEMPT = count_in(1, MAX_COUNT)


def decode(run_id: str, seq: Any, blob: Any) -> Entry:
    """One stored row as an ``Entry``, or a ``StoreError`` naming the run, the seq and the field at fault."""
    if type(seq) is not int or not 0 <= seq <= MAX_COUNT:
        raise StoreError(f"run {run_id}: a journal entry has the seq {seq!r:.40}, not a position; the store is damaged")
    if type(blob) not in BYTES:
        raise _bad(run_id, seq, None, "body", f"must be CBOR bytes, not a {type(blob).__name__}")
    try:
        row = cbor2.loads(blob)
    except Exception as exc:  # cbor2 raises several types; all mean the same thing here
        raise StoreError(f"run {run_id}: journal entry {seq} cannot be decoded: {exc}") from exc
    if type(row) is not dict:
        raise _bad(run_id, seq, None, "body", f"must be a map, not a {type(row).__name__}")
    kind = row.pop("kind", None)
    spec = _SPECS.get(kind) if type(kind) is str else None
    if spec is None:
        raise _bad(run_id, seq, None, "kind", f"must be one of {sorted(SCHEMAS)}, not {kind!r:.40}")
    attempt, at, slot = row.pop("attempt", None), row.pop("at", None), row.pop("slot", None)
    if type(attempt) is not int or not 1 <= attempt <= MAX_COUNT:
        raise _bad(run_id, seq, kind, "attempt", _ATTEMPT(attempt) or "is wrong")
    if (type(at) is not float and type(at) is not int) or at - at != 0:  # NaN and infinities too
        raise _bad(run_id, seq, kind, "at", finite_number(at) or "is wrong")
    if slot is None:
        if kind in EFFECTS:
            raise _bad(run_id, seq, kind, "slot", "is missing (an effect has a slot)")
    elif type(slot) is not int or not 0 <= slot <= MAX_SLOT:
        raise _bad(run_id, seq, kind, "slot", SLOT(slot) or "is wrong")
    required, checks, settled = spec
    if not required <= row.keys():
        raise _bad(run_id, seq, kind, min(required - row.keys()), "is missing")
    nested = False
    for name, value in row.items():  # one pass: each field's shape, and that its value is JSON at the top
        kind_of = type(value)
        if kind_of in settled.get(name, _NOTHING):
            continue
        check = checks.get(name)
        if check is not None and (kind_of not in check[0] if check[0] is not None else check[1](value)):
            raise _bad(run_id, seq, kind, name, check[1](value) or "is wrong")
        if kind_of in JSON_SCALARS:
            if type(name) is not str:
                raise _not_json(run_id, seq, kind, row)
        elif kind_of is dict or kind_of is list:
            nested = True
        elif kind_of is not float or value - value != 0.0:
            raise _not_json(run_id, seq, kind, row)
    if nested and not is_json(row):
        raise _not_json(run_id, seq, kind, row)
    if kind == "result" and _RESULT_NEEDS[row["ok"]] not in row:
        raise _bad(run_id, seq, kind, _RESULT_NEEDS[row["ok"]], "is missing")
    return Entry(kind, attempt, at, slot, row, seq)


def decode_journal(run_id: str, rows: Any) -> list[Entry]:
    """A run's journal from its ``(seq, blob)`` rows in ``seq`` order: each row decoded, and the seqs
    checked to run 0, 1, 2, ... (the writer appends at the journal's length: a gap or a repeat breaks it)."""
    entries = []
    for position, (seq, blob) in enumerate(rows):
        entry = decode(run_id, seq, blob)
        if entry.seq != position:
            raise StoreError(
                f"run {run_id}: journal entry {entry.seq} is at position {position}; the seqs must "
                "run 0, 1, 2, ... without a gap or a repeat; the store is damaged"
            )
        entries.append(entry)
    return entries


def _not_json(run_id: str, seq: int, kind: str, row: dict[Any, Any]) -> StoreError:
    """The first field of a row that is not JSON (the slow path: the row was found wrong)."""
    for name, value in row.items():
        if type(name) is not str:
            return _bad(run_id, seq, kind, repr(name), "is not a field name (a string)")
        problem = json_value(value)
        if problem:
            return _bad(run_id, seq, kind, name, problem)
    return _bad(run_id, seq, kind, "body", "is not JSON")


def _bad(run_id: str, seq: int, kind: str | None, name: str, problem: str) -> StoreError:
    what = f"journal entry {seq}" + (f" ({kind})" if kind else "")
    return StoreError(f"run {run_id}: {what}: field {name!r} {problem}; the store is damaged")
