"""The fast path of ``rows.decode_journal``: a row's checks compiled once per *shape*.

A journal's rows come in a handful of shapes (the writer emits each kind with
the same fields in the same order), and most of a row's checks depend only on
its shape: which fields it has and the type of each value. So the checks of
``rows.decode`` are split once per shape ``(kind, field names, value types)``
into what the shape alone decides (settled at compile time) and the few checks
that read a value (a range, a choice, a float's finiteness, a nested value's
JSON walk), kept as a short list to run on every row of that shape.

It only ever *accepts*: a row it cannot vouch for goes through ``rows.decode``,
which accepts it or names the run, seq and field at fault. So a row is accepted
here only if ``decode`` would accept it, and gives the same ``Entry``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Shapes"]

Check = tuple[str, Callable[[Any], Any]]  # (field, fn): fn(value) is truthy when the value is wrong
_MAX_SHAPES = 256  # a journal of many odd shapes still decodes (through decode), it just isn't cached


class Shapes:
    """Compiled checks by shape; ``checks(kind, row)`` gives a shape's value checks, or None: use the slow path."""

    def __init__(
        self,
        specs: dict[str, tuple[frozenset[str], dict[str, tuple[frozenset[type] | None, Any]]]],
        scalars: frozenset[type],
        is_json: Callable[[Any], bool],
    ):
        self.specs, self.scalars, self.is_json = specs, scalars, is_json
        self.cache: dict[tuple[Any, ...], tuple[Check, ...] | None] = {}

    def checks(self, kind: str, row: dict[Any, Any]) -> tuple[Check, ...] | None:
        keys = tuple(row)
        types = tuple(map(type, row.values()))
        shape = (kind, keys, types)
        try:
            return self.cache[shape]
        except KeyError:
            pass
        compiled = self._compile(kind, keys, types)
        if len(self.cache) < _MAX_SHAPES:
            self.cache[shape] = compiled
        return compiled

    def _compile(self, kind: str, keys: tuple[Any, ...], types: tuple[type, ...]) -> tuple[Check, ...] | None:
        spec = self.specs.get(kind)
        if spec is None:
            return None
        required, rules = spec
        if not required <= set(keys):
            return None
        checks: list[Check] = []
        for name, kind_of in zip(keys, types, strict=True):
            if type(name) is not str:
                return None
            rule = rules.get(name)
            if rule is not None:
                exact, fn = rule
                if exact is None:
                    checks.append((name, fn))  # the rule reads the value (a range, a choice...)
                elif kind_of not in exact:
                    return None
            if kind_of in self.scalars:
                continue
            if kind_of is float:
                checks.append((name, _not_finite))
            elif kind_of is dict or kind_of is list:
                checks.append((name, self._not_json))
            else:
                return None
        if kind == "result":  # it carries the value it completed with (ok) or the error it failed with
            has_value, has_error = "value" in keys, "error" in keys
            if not (has_value and has_error):
                checks.append(("ok", lambda ok: not has_value if ok else not has_error))
        return tuple(checks)

    def _not_json(self, value: Any) -> bool:
        return not self.is_json(value)


def _not_finite(value: float) -> bool:
    return value - value != 0.0  # NaN and the infinities
