"""Journal rows: the ``Entry`` every backend stores, and its CBOR encoding.

One codec for every backend, so a row written by one reads the same in
another (and in a portable file). ``decode`` is where untrusted bytes become
an ``Entry``: it checks the row against its kind's schema (``SCHEMAS``, one per
kind of docs/journal.md) and names the run, ``seq`` and field of anything
wrong, as a ``StoreError``. Nothing is sized from a number a row holds: a slot
is at most ``MAX_SLOT`` (the call log is a list by slot).

Plain checks rather than a schema library: a resume decodes every row of the
journal, and these cost about a microsecond a row (bench/rows.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import cbor2

from ..errors import StoreError
from ..values import detach
from .stored import run_options

__all__ = [
    "Entry",
    "MAX_SLOT",
    "SCHEMAS",
    "decode",
    "decode_journal",
    "decode_run",
    "decode_value",
    "encode",
    "json_problem",
]

MAX_SLOT = 2**20 - 1  # a run's effects; far past the default journal caps, and a call log of at most 8 MiB
MAX_COUNT = 2**31 - 1  # seq, attempt and id numbers: counts, never sizes


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


# -- field rules: each returns None when the value is right, or what is wrong with it ------------------------


def _is_json(value: Any) -> bool:
    """Whether a value is JSON as the engine stores it: dicts with str keys, lists, str, int, finite float,
    bool, None. Iterative (any depth the decoder read); a container's scalars are checked in place."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return kind in _JSON_SCALARS or (kind is float and value - value == 0.0)
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            for key in item:
                if type(key) is not str:
                    return False
            item = item.values()
        for inner in item:
            kind = type(inner)
            if kind in _JSON_SCALARS:
                continue
            if kind is float:
                if inner - inner != 0.0:  # NaN or an infinity
                    return False
            elif kind is dict or kind is list:
                stack.append(inner)
            else:
                return False
    return True


_JSON_SCALARS = frozenset({str, int, bool, type(None)})


def json_problem(value: Any, path: str = "$") -> str:
    """Where and why a value is not JSON ('' if it is); the slow path, run only on a bad value."""
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        kind = type(item)
        if kind is dict:
            for key, inner in item.items():
                if type(key) is not str:
                    return f"{where} has a key of type {type(key).__name__}"
                stack.append((inner, f"{where}.{key}"))
        elif kind is list:
            stack.extend((inner, f"{where}[{i}]") for i, inner in enumerate(item))
        elif kind is float and item - item != 0.0:
            return f"{where} is {item}, which JSON cannot carry"
        elif kind is not float and kind not in _JSON_SCALARS:
            return f"{where} is a {kind.__name__}, not a JSON value"
    return ""


Rule = Callable[[Any], "str | None"]


def _types(*kinds: type, what: str) -> Rule:
    allowed = frozenset(kinds)

    def rule(value: Any) -> str | None:
        return None if type(value) in allowed else f"must be {what}, not a {type(value).__name__}"

    rule.exact = allowed  # type: ignore[attr-defined]  # the type alone decides: decode checks it inline
    return rule


def _json(value: Any) -> str | None:
    if type(value) in _JSON_SCALARS or _is_json(value):
        return None
    return f"is not JSON: {json_problem(value)}"


def _number(value: Any) -> str | None:
    if type(value) is int or (type(value) is float and value - value == 0.0):
        return None
    return (
        f"must be a finite number, not {value!r:.40}"
        if type(value) is float
        else f"must be a finite number, not a {type(value).__name__}"
    )


def _optional(rule: Rule) -> Rule:
    return lambda value: None if value is None else rule(value)


def _count(low: int, high: int) -> Rule:
    def rule(value: Any) -> str | None:
        if type(value) is not int:
            return f"must be an integer, not a {type(value).__name__}"
        return None if low <= value <= high else f"must be from {low} to {high}, not {value}"

    return rule


def _one_of(*choices: str) -> Rule:
    allowed = frozenset(choices)
    return lambda value: (
        None if type(value) is str and value in allowed else f"must be one of {sorted(allowed)}, not {value!r:.40}"
    )


def _map(value: Any) -> str | None:
    """A map. Its contents are JSON: ``decode`` walks the whole row once, so a row's rules check shapes only."""
    return None if type(value) is dict else f"must be a map, not a {type(value).__name__}"


_map.exact = frozenset({dict})  # type: ignore[attr-defined]


_list = _types(list, what="a list")


def _list_of(rule: Rule) -> Rule:
    def check(value: Any) -> str | None:
        if type(value) is not list:
            return f"must be a list, not a {type(value).__name__}"
        for i, item in enumerate(value):
            problem = rule(item)
            if problem:
                return f"[{i}] {problem}"
        return None

    return check


def _error_record(value: Any) -> str | None:
    """An error as the script sees it: a map whose name and message, where present, are text."""
    problem = _map(value)
    if problem:
        return problem
    for key in ("name", "message"):
        if key in value and type(value[key]) is not str:
            return f".{key} must be a string, not a {type(value[key]).__name__}"
    return None


def _random(value: Any) -> str | None:
    problem = _number(value)
    return problem or (None if 0 <= value < 1 else f"must be in [0, 1), not {value!r}")


ANY = None  # any JSON value: the walk over the whole row is its check
STR = _types(str, what="a string")
OPT_STR = _types(str, type(None), what="a string or null")
BOOL = _types(bool, what="true or false")
SLOT = _count(0, MAX_SLOT)
OPT_INT = _optional(_count(-MAX_COUNT, MAX_COUNT))
OPT_ID = _optional(_count(0, MAX_COUNT))  # a step's id, a signal's: counters, never negative
OPT_NUM = _optional(_number)


def _interrupt_item(value: Any) -> str | None:
    problem = _map(value)
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
        "n": (True, _count(1, MAX_COUNT)),
        "source_hash": (True, OPT_STR),
        "resumed_from": (True, _list_of(STR)),
    },
    "call": {
        "op": (True, _one_of("call", "delegate", "agent")),
        "name": (True, STR),
        "input": (True, ANY),
        "key": (True, STR),
        "description": (False, OPT_STR),
        "child": (False, STR),
        "line": (False, OPT_INT),
        "imported": (False, BOOL),
        "version": (False, _count(1, MAX_COUNT)),  # a saved script's: the version the call ran
        "approval": (False, BOOL),  # the call waits for a human (decided once, when it was first made)
    },  # served from a bare call log, journaled as served
    "result": {"ok": (True, BOOL), "value": (False, ANY), "error": (False, _error_record)},
    "now": {"value": (True, _number)},
    "random": {"value": (True, _random)},
    "timer": {"key": (True, STR), "ms": (True, _number), "due": (True, _number)},
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
        "interrupts": (False, _list_of(_interrupt_item)),
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
        "answered_at": (False, _number),
        "role": (False, STR),
    },
    "console": {**_NOTE, "level": (True, STR), "message": (True, STR)},
    "log": {**_NOTE, "level": (True, STR), "message": (True, STR), "data": (False, ANY)},
    "step": {
        **_NOTE,
        "id": (True, _count(0, MAX_COUNT)),
        "label": (True, STR),
        "phase": (True, _one_of("start", "end")),
        "parent": (True, OPT_ID),
        "outcome": (False, _one_of("ok", "error")),
        "error": (False, OPT_STR),
    },
    "plan": {**_NOTE, "plan": (True, _list)},
    "error": {"error": (True, _error_record)},
    "rollback": {
        "reason": (False, OPT_STR),
        "rejected": (False, OPT_STR),
        "by": (False, STR),  # who asked, as on an answer entry
        "via": (False, STR),
        "process": (False, STR),
        "answered_at": (False, _number),
        "role": (False, STR),
    },
    "revert": {"of": (True, SLOT), "name": (True, STR)},
    "reverted": {
        "of": (True, SLOT),
        "ok": (True, BOOL),
        "value": (False, ANY),
        "error": (False, _error_record),
        "child": (False, STR),
    },
    "not_reverted": {"of": (True, SLOT), "name": (True, STR), "reason": (True, STR)},
    "rolled_back": {
        "reverted": (True, _count(0, MAX_COUNT)),
        "not_reverted": (True, _count(0, MAX_COUNT)),
        "failed": (True, _count(0, MAX_COUNT)),
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
            name: _JSON_SCALARS if rule is None else rule.exact & _JSON_SCALARS  # type: ignore[attr-defined]
            for name, (_, rule) in schema.items()
            if rule is None or getattr(rule, "exact", None) is not None
        },
    )
    for kind, schema in SCHEMAS.items()
}
_NOTHING: frozenset[type] = frozenset()
_ATTEMPT = _count(1, MAX_COUNT)


def decode(run_id: str, seq: Any, blob: Any) -> Entry:
    """One stored row as an ``Entry``, or a ``StoreError`` naming the run, the seq and the field at fault."""
    if type(seq) is not int or not 0 <= seq <= MAX_COUNT:
        raise StoreError(f"run {run_id}: a journal entry has the seq {seq!r:.40}, not a position; the store is damaged")
    if type(blob) not in _BYTES:
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
        raise _bad(run_id, seq, kind, "at", _number(at) or "is wrong")
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
        if kind_of in _JSON_SCALARS:
            if type(name) is not str:
                raise _not_json(run_id, seq, kind, row)
        elif kind_of is dict or kind_of is list:
            nested = True
        elif kind_of is not float or value - value != 0.0:
            raise _not_json(run_id, seq, kind, row)
    if nested and not _is_json(row):
        raise _not_json(run_id, seq, kind, row)
    if kind == "result" and _RESULT_NEEDS[row["ok"]] not in row:
        raise _bad(run_id, seq, kind, _RESULT_NEEDS[row["ok"]], "is missing")
    return Entry(kind, attempt, at, slot, row, seq)


_BYTES = (bytes, bytearray, memoryview)  # what a database driver hands back for a BLOB / BYTEA


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
        problem = _json(value)
        if problem:
            return _bad(run_id, seq, kind, name, problem)
    return _bad(run_id, seq, kind, "body", "is not JSON")


def _bad(run_id: str, seq: int, kind: str | None, name: str, problem: str) -> StoreError:
    what = f"journal entry {seq}" + (f" ({kind})" if kind else "")
    return StoreError(f"run {run_id}: {what}: field {name!r} {problem}; the store is damaged")


def decode_value(run_id: str, what: str, blob: Any, rule: Rule = _json) -> Any:
    """A CBOR blob of a run's row (its input, output, error, options, a signal's event), checked by ``rule``."""
    if blob is None:
        return None
    try:
        if type(blob) not in _BYTES:
            raise ValueError(f"it is a {type(blob).__name__}, not CBOR bytes")
        value = cbor2.loads(blob)
    except Exception as exc:  # cbor2 raises several types for a damaged blob
        raise StoreError(f"run {run_id}: its {what} cannot be decoded ({exc}); the store is damaged") from exc
    problem = rule(value)
    if problem:
        raise StoreError(f"run {run_id}: its {what} {problem}; the store is damaged")
    return value


# -- the runs table ---------------------------------------------------------------------------------------------

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
    "kind": _one_of("workflow", "agent"),
    "status": _one_of(*RUN_STATUSES),
    "source": OPT_STR,
    "source_hash": OPT_STR,
    "parent": OPT_STR,
    "predecessor": OPT_STR,
    "successor": OPT_STR,
    "created": _number,
    "updated": _number,
    "attempt": _count(0, MAX_COUNT),
    "owner": OPT_STR,
    "wake_at": OPT_NUM,
    "lease_until": OPT_NUM,
}
RUN_BLOBS: dict[str, Rule] = {"input": _json, "output": _json, "error": _json, "options": _json}


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
