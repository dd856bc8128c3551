"""The field rules the store's rows are checked by: each returns None when a value is right, or what is wrong.

Plain checks rather than a schema library: a resume decodes every row of the journal, and these cost about a
microsecond a row (bench/rows.py). ``rows.SCHEMAS`` (the journal's entries) and ``runs_table.RUN_COLUMNS``
(the runs table) are written in them, and ``decode_value`` checks a blob of a run's row by one.

>>> STR("x"), STR(3)
(None, 'must be a string, not a int')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cbor2

from ..errors import StoreError

__all__ = [
    "ANY",
    "A_LIST",
    "BOOL",
    "BYTES",
    "JSON_SCALARS",
    "MAX_COUNT",
    "MAX_SLOT",
    "OPT_ID",
    "OPT_INT",
    "OPT_NUM",
    "OPT_STR",
    "SLOT",
    "STR",
    "Rule",
    "a_map",
    "count_in",
    "decode_value",
    "error_record",
    "finite_number",
    "is_json",
    "json_problem",
    "json_value",
    "list_of",
    "of_type",
    "one_of",
    "optional",
    "random_unit",
]

MAX_SLOT = 2**20 - 1  # a run's effects; far past the default journal caps, and a call log of at most 8 MiB
MAX_COUNT = 2**31 - 1  # seq, attempt and id numbers: counts, never sizes
BYTES = (bytes, bytearray, memoryview)  # what a database driver hands back for a BLOB / BYTEA


def is_json(value: Any) -> bool:
    """Whether a value is JSON as the engine stores it: dicts with str keys, lists, str, int, finite float,
    bool, None. Iterative (any depth the decoder read); a container's scalars are checked in place."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return kind in JSON_SCALARS or (kind is float and value - value == 0.0)
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
            if kind in JSON_SCALARS:
                continue
            if kind is float:
                if inner - inner != 0.0:  # NaN or an infinity
                    return False
            elif kind is dict or kind is list:
                stack.append(inner)
            else:
                return False
    return True


JSON_SCALARS = frozenset({str, int, bool, type(None)})


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
        elif kind is not float and kind not in JSON_SCALARS:
            return f"{where} is a {kind.__name__}, not a JSON value"
    return ""


Rule = Callable[[Any], "str | None"]


def of_type(*kinds: type, what: str) -> Rule:
    allowed = frozenset(kinds)

    def rule(value: Any) -> str | None:
        return None if type(value) in allowed else f"must be {what}, not a {type(value).__name__}"

    rule.exact = allowed  # type: ignore[attr-defined]  # the type alone decides: decode checks it inline
    return rule


def json_value(value: Any) -> str | None:
    if type(value) in JSON_SCALARS or is_json(value):
        return None
    return f"is not JSON: {json_problem(value)}"


def finite_number(value: Any) -> str | None:
    if type(value) is int or (type(value) is float and value - value == 0.0):
        return None
    return (
        f"must be a finite number, not {value!r:.40}"
        if type(value) is float
        else f"must be a finite number, not a {type(value).__name__}"
    )


def optional(rule: Rule) -> Rule:
    return lambda value: None if value is None else rule(value)


def count_in(low: int, high: int) -> Rule:
    def rule(value: Any) -> str | None:
        if type(value) is not int:
            return f"must be an integer, not a {type(value).__name__}"
        return None if low <= value <= high else f"must be from {low} to {high}, not {value}"

    return rule


def one_of(*choices: str) -> Rule:
    allowed = frozenset(choices)
    return lambda value: (
        None if type(value) is str and value in allowed else f"must be one of {sorted(allowed)}, not {value!r:.40}"
    )


def a_map(value: Any) -> str | None:
    """A map. Its contents are JSON: ``decode`` walks the whole row once, so a row's rules check shapes only."""
    return None if type(value) is dict else f"must be a map, not a {type(value).__name__}"


a_map.exact = frozenset({dict})  # type: ignore[attr-defined]


A_LIST = of_type(list, what="a list")


def list_of(rule: Rule) -> Rule:
    def check(value: Any) -> str | None:
        if type(value) is not list:
            return f"must be a list, not a {type(value).__name__}"
        for i, item in enumerate(value):
            problem = rule(item)
            if problem:
                return f"[{i}] {problem}"
        return None

    return check


def error_record(value: Any) -> str | None:
    """An error as the script sees it: a map whose name and message, where present, are text."""
    problem = a_map(value)
    if problem:
        return problem
    for key in ("name", "message"):
        if key in value and type(value[key]) is not str:
            return f".{key} must be a string, not a {type(value[key]).__name__}"
    return None


def random_unit(value: Any) -> str | None:
    problem = finite_number(value)
    return problem or (None if 0 <= value < 1 else f"must be in [0, 1), not {value!r}")


ANY = None  # any JSON value: the walk over the whole row is its check
STR = of_type(str, what="a string")
OPT_STR = of_type(str, type(None), what="a string or null")
BOOL = of_type(bool, what="true or false")
SLOT = count_in(0, MAX_SLOT)
OPT_INT = optional(count_in(-MAX_COUNT, MAX_COUNT))
OPT_ID = optional(count_in(0, MAX_COUNT))  # a step's id, a signal's: counters, never negative
OPT_NUM = optional(finite_number)


def decode_value(run_id: str, what: str, blob: Any, rule: Rule = json_value) -> Any:
    """A CBOR blob of a run's row (its input, output, error, options, a signal's event), checked by ``rule``."""
    if blob is None:
        return None
    try:
        if type(blob) not in BYTES:
            raise ValueError(f"it is a {type(blob).__name__}, not CBOR bytes")
        value = cbor2.loads(blob)
    except Exception as exc:  # cbor2 raises several types for a damaged blob
        raise StoreError(f"run {run_id}: its {what} cannot be decoded ({exc}); the store is damaged") from exc
    problem = rule(value)
    if problem:
        raise StoreError(f"run {run_id}: its {what} {problem}; the store is damaged")
    return value
