"""The bounds a JSON Schema keeps to where it enters: a saved script's, an action's, an MCP tool's.

A schema is checked against JSON Schema's meta-schema where it enters, and that check costs work per subschema
and Python frames per level of nesting. So before it: ``check_schema_depth`` bounds the nesting of every
schema that enters (``LimitExceeded("schema-depth")``), and ``bounded_schema`` also bounds a saved script's
size (``LimitExceeded("schema-size")``), since a saved one is checked again by every process on the store.
Both walk without recursion, so a schema of any depth gets the error, never a ``RecursionError``.

>>> check_schema_depth({"type": "array", "items": {"type": "integer"}}, "a schema")
>>> schema_objects({"type": "array", "items": {"type": "integer"}})
2
"""

from __future__ import annotations

import json
from typing import Any

from .errors import LimitExceeded

__all__ = [
    "MAX_SCHEMA_BYTES",
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_OBJECTS",
    "bounded_schema",
    "check_schema_depth",
    "schema_objects",
]

# A saved script's input or output schema, as JSON: an unbounded one (megabytes) would hold a save, and every
# process that registers it, for many seconds; real schemas are a few KiB.
MAX_SCHEMA_BYTES = 64 * 1024
# ...and its JSON objects (each subschema is one): the meta-schema check (JSON Schema 2020-12, whose
# $dynamicRef is resolved again at every subschema) costs 0.3 to 0.4 ms per subschema (measured on a busy
# 2-core machine: half that idle), so 4,000 hold a save, and each process's first registration of that
# version, for about 1.5 s at most (an `anyOf` of 4,000 `{}` or `{"const": 0}`, the slowest shapes within
# 64 KiB); the ~16,000 `{}` that fit in 64 KiB would hold it for six. A large pydantic model (some 600
# objects: dozens of nested models) fits with room to spare.
MAX_SCHEMA_OBJECTS = 4_000
# ...and, for every schema that enters, its nesting in JSON containers (objects and arrays, counted as for
# values.MAX_DEPTH): the meta-schema check descends about eight Python frames per level, so near 120 levels
# it meets Python's recursion limit; 64 leave room for the caller's frames. Real schemas nest a few levels
# (pydantic's refer to their $defs).
MAX_SCHEMA_DEPTH = 64


def check_schema_depth(schema: Any, what: str) -> None:
    """``LimitExceeded("schema-depth")`` when ``schema`` nests more than ``MAX_SCHEMA_DEPTH`` levels of objects
    and arrays; ``what`` names it in the message ("the input_schema of script 'x'")."""
    stack = [(schema, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            items: Any = value.values()
        elif isinstance(value, (list, tuple)):
            items = value
        else:
            continue
        if level > MAX_SCHEMA_DEPTH:
            raise LimitExceeded(
                "schema-depth",
                f"{what} nests objects and arrays more than {MAX_SCHEMA_DEPTH} levels deep (the limit): describe "
                "a deep or recursive shape with $defs and $ref",
                value=MAX_SCHEMA_DEPTH,
            )
        stack.extend((item, level + 1) for item in items)


def bounded_schema(schema: Any, what: str) -> Any:
    """``schema`` if it nests at most ``MAX_SCHEMA_DEPTH`` levels, its JSON is within ``MAX_SCHEMA_BYTES`` and it
    holds at most ``MAX_SCHEMA_OBJECTS`` objects; else ``LimitExceeded`` ("schema-depth", "schema-size")."""
    check_schema_depth(schema, what)
    size = len(json.dumps(schema, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > MAX_SCHEMA_BYTES:
        raise LimitExceeded(
            "schema-size",
            f"{what} is {size:,} bytes of JSON; the limit is {MAX_SCHEMA_BYTES:,} bytes "
            f"({MAX_SCHEMA_BYTES // 1024} KiB): describe the input and output, not every value they may take",
            value=MAX_SCHEMA_BYTES,
        )
    objects = schema_objects(schema)
    if objects > MAX_SCHEMA_OBJECTS:
        raise LimitExceeded(
            "schema-size",
            f"{what} has {objects:,} JSON objects (subschemas); the limit is {MAX_SCHEMA_OBJECTS:,}, since "
            "checking each against JSON Schema's meta-schema costs a fraction of a millisecond: describe the "
            "input and output, not every value they may take (an enum is one object)",
            value=MAX_SCHEMA_OBJECTS,
        )
    return schema


def schema_objects(schema: Any) -> int:
    """How many JSON objects ``schema`` holds, itself included."""
    count, stack = 0, [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            count += 1
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return count
