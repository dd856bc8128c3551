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
"""

from __future__ import annotations

import inspect
import json
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import docstring_parser
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic_core import PydanticSerializationError, to_jsonable_python

from ..actions import Action
from ..errors import InputInvalid, InvalidValue, RegistrationError

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

MAX_ISSUES = 20  # a hostile input can fail thousands of ways; the journal keeps the first ones
MAX_MESSAGE = 300
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
    _returns: Any = field(default=None, repr=False)  # the output schema's validator, built at its first use

    @property
    def checks(self) -> bool:
        """Whether ``call_action`` must use this entry (a typed input or output)."""
        return self._validate is not None or self._dump is not None

    def validate(self, value: Any) -> Any:
        """The value the function receives; ``InputInvalid`` with every issue when ``value`` does not fit."""
        return value if self._validate is None else self._validate(value)

    def arguments(self, value: Any) -> tuple[tuple, dict]:
        """The function's positional and keyword arguments for a validated input."""
        return self._bind(value)

    def output_issues(self, value: Any) -> list[dict[str, str]]:
        """The issues ``value`` meets as this action's result: ``[]`` when it fits ``output_schema`` (or none
        is declared). What a saved script's caller is promised (``saved.py``).

        >>> spec_for(lambda: 0, "n", output_schema=int).output_issues("two")[0]["message"]
        "'two' is not of type 'integer'"
        """
        if self.output_schema is None:
            return []
        if self._returns is None:
            from jsonschema import validators

            self._returns = validators.validator_for(self.output_schema)(self.output_schema)
        try:
            check_schema(self._returns, value)
        except InputInvalid as exc:
            return exc.issues
        return []

    def dump(self, value: Any) -> Any:
        """A returned value as JSON values (models, dataclasses, datetimes, enums, UUIDs converted by pydantic)."""
        if self._dump is None:
            return value
        try:
            return self._dump(value)
        except (PydanticSerializationError, ValueError, TypeError) as exc:
            raise InvalidValue(f"the value {self.name} returned is not JSON: {str(exc).splitlines()[0]}") from None


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
            spec.output_schema = TypeAdapter(returned).json_schema(mode="serialization")
            spec._dump = to_jsonable_python  # by the value's own type, with aliases as the schema names them
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
        _fields(spec, params, hints, described)
        return
    first = params[0]
    default = first.default
    spec.input_optional = default is not first.empty
    if first.name not in hints:
        spec.input_optional = True  # untyped: anything goes, nothing too
        return
    adapter = TypeAdapter(hints[first.name])
    schema = adapter.json_schema()
    if described.get(first.name) and "description" not in schema:
        schema["description"] = described[first.name]
    spec.input_schema = schema

    def validate(value: Any) -> Any:
        if value is None and spec.input_optional:
            return default
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            raise InputInvalid(_pydantic_issues(exc, value)) from None

    spec._validate = validate


def _fields(
    spec: ActionSpec, params: list[inspect.Parameter], hints: dict[str, Any], described: dict[str, str]
) -> None:
    # Fields get neutral names with the parameter as alias: a parameter named ``json`` or
    # ``_x`` must not collide with pydantic's own attributes or rules.
    definitions = {
        f"p{i}": (
            hints.get(p.name, Any),
            Field(... if p.default is p.empty else p.default, alias=p.name, description=described.get(p.name)),
        )
        for i, p in enumerate(params)
    }
    model = create_model(f"{spec.name}_input", __config__=ConfigDict(extra="forbid"), **definitions)  # type: ignore[call-overload]
    spec.input_schema = model.model_json_schema()
    spec.input_optional = all(p.default is not p.empty for p in params)
    positional = [p for p in params if p.kind == p.POSITIONAL_ONLY]

    def validate(value: Any) -> Any:
        value = {} if value is None else value
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            raise InputInvalid(_pydantic_issues(exc, value)) from None

    def bind(checked: Any) -> tuple[tuple, dict]:
        values = [getattr(checked, f"p{i}") for i in range(len(params))]
        args = tuple(values[: len(positional)])
        return args, {p.name: v for p, v in zip(params[len(positional) :], values[len(positional) :], strict=True)}

    spec._validate, spec._bind, spec._keywords = validate, bind, tuple(p.name for p in params)


def _explicit_input(spec: ActionSpec, schema: Any) -> None:
    if isinstance(schema, dict):
        from jsonschema import validators

        cls = validators.validator_for(schema)
        _check_usable(cls, schema)  # a broken schema is refused where it is registered
        checker = cls(schema)
        spec.input_schema = schema

        def validate(value: Any) -> Any:
            return check_schema(checker, value)

        spec._validate = validate
        spec.input_optional = checker.is_valid(None)
        if spec._keywords:  # fields mode: the keys become keyword arguments
            names = set(spec._keywords)
            spec._bind = lambda value: ((), {k: v for k, v in (value or {}).items() if k in names})
        return
    adapter = TypeAdapter(schema)
    spec.input_schema = adapter.json_schema()

    def validate_type(value: Any) -> Any:
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            raise InputInvalid(_pydantic_issues(exc, value)) from None

    spec._validate, spec._bind, spec.input_optional = validate_type, (lambda value: ((value,), {})), False


def _explicit_output(spec: ActionSpec, schema: Any) -> None:
    if isinstance(schema, dict):
        from jsonschema import validators

        _check_usable(validators.validator_for(schema), schema)
        spec.output_schema, spec._dump = schema, to_jsonable_python
        return
    spec.output_schema, spec._dump = TypeAdapter(schema).json_schema(mode="serialization"), to_jsonable_python


def _check_usable(cls: Any, schema: dict[str, Any]) -> None:
    """``SchemaError`` unless ``schema`` is valid and each of its ``$ref`` resolves within it: a reference to
    nowhere (or elsewhere: nothing is fetched) would otherwise fail every later check with the referencing
    library's own error instead of an issue."""
    from jsonschema import SchemaError
    from referencing import Registry, Resource
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import specification_with

    cls.check_schema(schema)
    resource = Resource.from_contents(schema, default_specification=specification_with(cls.META_SCHEMA["$schema"]))
    resolver = Registry().resolver_with_root(resource)
    for ref in _refs(schema):
        try:
            resolver.lookup(ref)
        except Unresolvable as exc:
            raise SchemaError(f"$ref {ref!r:.80} does not resolve within the schema ({exc!s:.80})") from None


def _refs(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        own = [schema["$ref"]] if isinstance(schema.get("$ref"), str) else []
        return own + [ref for value in schema.values() for ref in _refs(value)]
    if isinstance(schema, list):
        return [ref for value in schema for ref in _refs(value)]
    return []


def issue_path(location: Any) -> str:
    """``$.items[0].name`` from a location's parts (``$`` is the input itself)."""
    path = "$"
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            path += f".{part}"
        else:
            path += f"[{json.dumps(str(part))}]"
    return path


def check_schema(checker: Any, value: Any) -> Any:
    """``value`` if it fits a ``jsonschema`` validator's schema, else ``InputInvalid`` with its issues."""
    found = sorted(checker.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    if found:
        raise InputInvalid(_capped([{"path": issue_path(e.absolute_path), "message": e.message} for e in found]))
    return value


def input_location(value: Any, location: Any) -> list[Any]:
    """The parts of a pydantic error location that are the input's own: pydantic puts the name of a union's
    branch (``Cat``, ``int``, a tag) in the location too (``pet.Cat.lives`` for the input's ``pet.lives``).
    A part is the input's when the input there has that key or index; a last part that is not is a key
    missing from an object (``Field required``); any other part is a branch's name, and left out."""
    kept: list[Any] = []
    for i, part in enumerate(location):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, (list, tuple)) and isinstance(part, int) and -len(value) <= part < len(value):
            value = value[part]
        elif i == len(location) - 1 and isinstance(value, dict) and isinstance(part, str):
            pass  # the missing key itself
        else:
            continue
        kept.append(part)
    return kept


def _pydantic_issues(exc: ValidationError, value: Any) -> list[dict[str, str]]:
    issues: list[dict[str, str]] = []
    for error in exc.errors(include_url=False, include_context=False):
        message = error["msg"]
        if error["type"] != "missing":
            shown = _short(error.get("input"))
            if shown is not None:
                message += f" (got {shown})"
        issue = {"path": issue_path(input_location(value, error["loc"])), "message": message}
        if issue not in issues:  # two branches can fail alike at one place
            issues.append(issue)
    return _capped(issues)


def _short(value: Any, width: int = 40) -> str | None:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    return text if len(text) <= width else None


def _capped(issues: list[dict[str, str]]) -> list[dict[str, str]]:
    """At most MAX_ISSUES issues of at most MAX_MESSAGE characters each (jsonschema quotes the whole value)."""
    kept = [
        {
            "path": i["path"][:MAX_MESSAGE],
            "message": i["message"] if len(i["message"]) <= MAX_MESSAGE else i["message"][:MAX_MESSAGE] + "…",
        }
        for i in issues[:MAX_ISSUES]
    ]
    if len(issues) > MAX_ISSUES:
        kept.append({"path": "$", "message": f"and {len(issues) - MAX_ISSUES} more issues"})
    return kept
