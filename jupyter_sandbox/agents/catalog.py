"""The action catalog: one schema per action, used for declarations, validation and the card's edit form.

Each action's entry (``ActionSpec``) has a name, a description (its
docstring; parameter descriptions from the docstring's parameter section), an
input and an output JSON Schema, derived from its type hints by pydantic, or
given explicitly to ``@sb.action(input_schema=..., output_schema=...)`` (a
JSON Schema dict, or a type pydantic understands). Untyped actions stay
allowed: their input and output are ``None`` here (``unknown`` in the
declarations) and nothing is checked.

How the script's one argument reaches the function:

* ``def f(msg: Email)``: the input is validated as an ``Email`` and passed as
  the one argument (a pydantic model, dataclass, ``TypedDict``... whatever
  was declared). A default makes the input optional.
* ``def f(to: str, body: str)`` (two or more parameters, all annotated or
  required) or ``def f(*, to: str)``: the input is an object with those
  fields, passed as keyword arguments.
* ``def f()``: no input.

``check_input(spec, value)`` is the validation exposed to the approval card:
the issues an edited input would meet, ``[]`` when it is valid.

The checks themselves are built in ``validators`` (from a type or a JSON Schema), and the issues they
report are written in ``input_issues``; this module decides which check serves which function.
"""

from __future__ import annotations

import inspect
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import docstring_parser
from pydantic_core import PydanticSerializationError, to_jsonable_python

from ..actions import Action
from ..errors import InputInvalid, InvalidValue, RegistrationError
from ..schema_limits import check_schema_depth
from .input_issues import MAX_ISSUES, check_schema, input_location, issue_path
from .validators import (
    CheckOutput,
    fields_validator,
    output_schema_of,
    schema_output_check,
    schema_validator,
    type_output,
    type_validator,
)

__all__ = [
    "ActionSpec",
    "MAX_ISSUES",
    "check_input",
    "check_schema",
    "input_location",
    "issue_path",
    "spec_for",
    "spec_of",
]

_NOTHING = object()


@dataclass(eq=False)
class ActionSpec:
    """One action's catalog entry. ``input_schema``/``output_schema`` are JSON Schemas, or None for unknown."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    takes_input: bool = True  # False: the function takes no input at all
    input_optional: bool = True  # the script may call it without an input
    returns: str | None = None  # the docstring's description of what it returns
    approval: bool = False
    _validate: Callable[[Any], Any] | None = field(default=None, repr=False)
    _bind: Callable[[Any], tuple[tuple, dict]] = field(default=lambda value: ((value,), {}), repr=False)
    _dump: Callable[[Any], Any] | None = field(default=None, repr=False)
    _keywords: tuple[str, ...] = field(default=(), repr=False)  # fields mode: the parameters the input's keys fill
    # A JSON Schema output's check (an explicit schema's, an MCP tool's); None for a typed output, which its
    # ``_dump`` checks as it serializes, and for none declared or the empty schema (``Any``).
    _check_output: CheckOutput | None = field(default=None, repr=False)

    @property
    def checks(self) -> bool:
        """Whether ``call_action`` must use this entry (a typed input or output)."""
        return self._validate is not None or self._dump is not None or self.output_schema is not None

    def validate(self, value: Any) -> Any:
        """The value the function receives; ``InputInvalid`` with every issue when ``value`` does not fit."""
        return value if self._validate is None else self._validate(value)

    def arguments(self, value: Any) -> tuple[tuple, dict]:
        """The function's positional and keyword arguments for a validated input."""
        return self._bind(value)

    def output_issues(self, value: Any) -> list[dict[str, str]]:
        """The issues ``value`` meets as this action's result: ``[]`` when it fits ``output_schema`` (or none
        is declared). What the declarations promise a script's author (``calling.classify``) and a saved
        script's caller (``saved.py``).

        >>> spec_for(lambda: 0, "n", output_schema={"type": "integer"}).output_issues("two")[0]["message"]
        "'two' is not of type 'integer'"
        """
        try:
            self.dump(value)
        except InputInvalid as exc:
            return exc.issues
        except InvalidValue:
            return []  # not JSON at all: a TypeError of its own, not an issue of the schema
        return []

    def dump(self, value: Any) -> Any:
        """What the script receives for a value the function returned: JSON values (models, dataclasses,
        datetimes, enums, UUIDs converted by pydantic), as the declared output serializes them.
        ``InputInvalid`` with the issues when the declared output refuses the value, ``InvalidValue`` when it
        cannot be JSON."""
        try:
            out = value if self._dump is None else self._dump(value)
        except (PydanticSerializationError, ValueError, TypeError) as exc:
            raise InvalidValue(f"the value {self.name} returned is not JSON: {str(exc).splitlines()[0]}") from None
        if self._check_output is not None:
            issues = self._check_output(out)
            if issues:
                raise InputInvalid(issues)
        return out


def check_input(spec: ActionSpec, value: Any) -> list[dict[str, str]]:
    """The issues ``value`` would meet as ``spec``'s input (``[]``: it is valid). For the approval card's edits."""
    try:
        spec.validate(value)
    except InputInvalid as exc:
        return exc.issues
    return []


def spec_of(action: Action) -> ActionSpec:
    """The catalog entry of a registered action (an untyped one gets an ``unknown`` entry here)."""
    if action.spec is None:
        action.spec = spec_for(action.fn, action.name)
    action.spec.approval = action.approval
    return action.spec


def spec_for(fn: Callable[..., Any], name: str, *, input_schema: Any = None, output_schema: Any = None) -> ActionSpec:
    """Derive ``fn``'s entry from its signature, type hints and docstring; explicit schemas win."""
    for key, given in (("input_schema", input_schema), ("output_schema", output_schema)):
        check_schema_depth(given, f"the {key} of action {name}")  # before the checks that recurse through it
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = inspect.Signature()
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    described = {p.arg_name: p.description for p in doc.params if p.description}
    text = "\n\n".join(t for t in (doc.short_description, doc.long_description) if t) or None
    spec = ActionSpec(name, text, returns=doc.returns.description if doc.returns else None)
    # Hints that give no schema (a name defined nowhere, a class pydantic cannot describe) leave that side
    # unknown, with a warning: an annotation never stops a function that worked untyped from registering.
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        _unchecked(name, "its type hints cannot be read", exc)
        hints = {}
    params = [
        p
        for p in signature.parameters.values()
        if p.name != "resume" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    try:
        _derive_input(spec, params, hints, described, signature)
    except Exception as exc:
        _unchecked(name, "its input is unchecked", exc)
    returned = hints.get("return", _NOTHING)
    if output_schema is None and returned is not _NOTHING:
        try:
            _typed_output(spec, returned)
        except Exception as exc:
            _unchecked(name, "its output is undeclared", exc)
    try:  # explicit schemas were asked for: one that does not work is an error
        if input_schema is not None:
            _explicit_input(spec, input_schema)
        if output_schema is not None:
            _explicit_output(spec, output_schema)
    except Exception as exc:
        why = str(exc).splitlines()[0]  # (a RegistrationError: a SandboxError, and the TypeError it was before)
        raise RegistrationError(f"action {name}: its explicit schema is not usable: {why}") from None
    if spec._validate is not None and spec._dump is None:
        spec._dump = to_jsonable_python
    return spec


def _unchecked(name: str, what: str, exc: Exception) -> None:
    warnings.warn(f"action {name}: {what} (no schema from its type hints: {str(exc).splitlines()[0]})", stacklevel=4)


def _fields_mode(params: list[inspect.Parameter], hints: dict[str, Any]) -> bool:
    required = [p for p in params if p.default is p.empty and p.kind != p.KEYWORD_ONLY]
    return (
        any(p.kind == p.KEYWORD_ONLY for p in params)
        or len(required) >= 2
        or (len(params) >= 2 and all(p.name in hints for p in params))
    )


def _derive_input(
    spec: ActionSpec,
    params: list[inspect.Parameter],
    hints: dict[str, Any],
    described: dict[str, str],
    signature: inspect.Signature,
) -> None:
    if not params:
        # ``def f(*args)`` still gets the input, untyped, as the action always did; ``def f()`` none
        spec.takes_input = any(p.kind == p.VAR_POSITIONAL for p in signature.parameters.values())
        spec._bind = (lambda value: ((value,), {})) if spec.takes_input else (lambda value: ((), {}))
        return
    if _fields_mode(params, hints):
        spec.input_schema, fields, bind = fields_validator(spec.name, params, hints, described)
        spec.input_optional = all(p.default is not p.empty for p in params)
        spec._validate, spec._bind, spec._keywords = fields, bind, tuple(p.name for p in params)
        return
    first = params[0]
    default = first.default
    spec.input_optional = default is not first.empty
    if first.name not in hints:
        spec.input_optional = True  # untyped: anything goes, nothing too
        return
    schema, checked = type_validator(hints[first.name])
    if described.get(first.name) and "description" not in schema:
        schema["description"] = described[first.name]
    spec.input_schema = schema

    def validate(value: Any) -> Any:
        if value is None and spec.input_optional:
            return default
        return checked(value)

    spec._validate = validate


def _explicit_input(spec: ActionSpec, schema: Any) -> None:
    if isinstance(schema, dict):
        spec._validate, spec.input_optional = schema_validator(schema)
        spec.input_schema = schema
        if spec._keywords:  # fields mode: the keys become keyword arguments
            names = set(spec._keywords)
            spec._bind = lambda value: ((), {k: v for k, v in (value or {}).items() if k in names})
        return
    spec.input_schema, spec._validate = type_validator(schema)
    spec._bind, spec.input_optional = (lambda value: ((value,), {})), False


def _explicit_output(spec: ActionSpec, schema: Any) -> None:
    if not isinstance(schema, dict):  # a type, as a return annotation gives it
        _typed_output(spec, schema)
        return
    spec.output_schema, spec._dump = output_schema_of(schema), to_jsonable_python
    spec._check_output = schema_output_check(spec.output_schema) if spec.output_schema else None


def _typed_output(spec: ActionSpec, declared: Any) -> None:
    spec.output_schema, dump = type_output(declared)
    # ``Any``: converted by the value's own type, with aliases as the schema names them, and not checked
    spec._dump = to_jsonable_python if dump is None else dump
