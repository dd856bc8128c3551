"""The checks an action's input and output meet, built from a type (pydantic) or a JSON Schema (jsonschema).

Each input builder returns the schema the catalog declares and the function that checks an input against
it: the value the action receives, or ``InputInvalid`` with every issue (``input_issues``). A type's output
builder makes a returned value the JSON its schema declares (or ``InputInvalid``); a JSON Schema's gives the
issues of a returned value against it. Which one serves an action, and how the checked value becomes the
function's arguments, is the catalog's (``catalog.spec_for``).

>>> schema, validate = type_validator(int)
>>> schema, validate("3")
({'type': 'integer'}, 3)
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic_core import PydanticSerializationError

from ..errors import InputInvalid
from .input_issues import check_schema, pydantic_issues

__all__ = [
    "CheckOutput",
    "check_usable",
    "fields_validator",
    "output_schema_of",
    "schema_output_check",
    "schema_validator",
    "type_output",
    "type_validator",
]

Validate = Callable[[Any], Any]
Bind = Callable[[Any], tuple[tuple, dict]]
CheckOutput = Callable[[Any], list[dict[str, str]]]  # the issues of a returned value (JSON values); [] if it fits


def type_validator(annotation: Any) -> tuple[dict[str, Any], Validate]:
    """The JSON Schema of ``annotation`` and the check of an input as that type."""
    adapter = TypeAdapter(annotation)
    schema = adapter.json_schema()

    def validate(value: Any) -> Any:
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            raise InputInvalid(pydantic_issues(exc, value)) from None

    return schema, validate


def fields_validator(
    name: str, params: list[inspect.Parameter], hints: dict[str, Any], described: dict[str, str]
) -> tuple[dict[str, Any], Validate, Bind]:
    """The schema of an input object whose keys are ``params``, its check (no input is the empty object), and
    the arguments a checked input fills: the positional-only parameters by position, the rest by keyword."""
    # Fields get neutral names with the parameter as alias: a parameter named ``json`` or
    # ``_x`` must not collide with pydantic's own attributes or rules.
    definitions = {
        f"p{i}": (
            hints.get(p.name, Any),
            Field(... if p.default is p.empty else p.default, alias=p.name, description=described.get(p.name)),
        )
        for i, p in enumerate(params)
    }
    model = create_model(f"{name}_input", __config__=ConfigDict(extra="forbid"), **definitions)  # type: ignore[call-overload]
    schema = model.model_json_schema()
    positional = [p for p in params if p.kind == p.POSITIONAL_ONLY]

    def validate(value: Any) -> Any:
        value = {} if value is None else value
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            raise InputInvalid(pydantic_issues(exc, value)) from None

    def bind(checked: Any) -> tuple[tuple, dict]:
        values = [getattr(checked, f"p{i}") for i in range(len(params))]
        args = tuple(values[: len(positional)])
        return args, {p.name: v for p, v in zip(params[len(positional) :], values[len(positional) :], strict=True)}

    return schema, validate, bind


def schema_validator(schema: dict[str, Any]) -> tuple[Validate, bool]:
    """The check of an input against an explicit JSON Schema, and whether no input (``None``) fits it.
    A schema that is not usable (``check_usable``) is refused here, where it is registered."""
    from jsonschema import validators

    cls = validators.validator_for(schema)
    check_usable(cls, schema)
    checker = cls(schema)

    def validate(value: Any) -> Any:
        return check_schema(checker, value)

    return validate, checker.is_valid(None)


def output_schema_of(declared: Any) -> dict[str, Any]:
    """The output schema of an explicit JSON Schema (checked usable) or of a type (as pydantic serializes it)."""
    if isinstance(declared, dict):
        from jsonschema import validators

        check_usable(validators.validator_for(declared), declared)
        return declared
    return TypeAdapter(declared).json_schema(mode="serialization")


def type_output(annotation: Any) -> tuple[dict[str, Any], Validate | None]:
    """The serialization schema of ``annotation`` and what makes a returned value that schema's JSON values:
    the value validated as the type (as FastAPI's ``response_model`` does: a model may be returned as a dict,
    an ``int`` as ``"5"``), then serialized as the schema declares it (serialization aliases, excluded
    fields, serializers, computed fields); ``InputInvalid`` with the issues when it is not one. None for
    ``Any`` (the empty schema), which converts by the value's own type and checks nothing.

    >>> schema, dump = type_output(int)
    >>> schema, dump("5")
    ({'type': 'integer'}, 5)
    """
    adapter = TypeAdapter(annotation)
    schema = adapter.json_schema(mode="serialization")
    if not schema:
        return schema, None

    def dump(value: Any) -> Any:
        fields = _fields(value)
        try:  # a model's fields are validated afresh; another object with the type's fields is taken as them
            checked = adapter.validate_python(fields, from_attributes=True, by_alias=True, by_name=True)
        except ValidationError as exc:
            raise InputInvalid(pydantic_issues(exc, fields)) from None
        try:  # an instance of the type is not validated again: a field set wrong after it was built fails here
            return adapter.dump_python(checked, mode="json", by_alias=True, warnings="error")
        except PydanticSerializationError as exc:
            if "SerializationUnexpectedValue" not in str(exc):
                raise  # a value pydantic cannot serialize at all: not JSON (catalog's dump says so)
            raise InputInvalid([{"path": "$", "message": _serialization_problem(exc)}]) from None

    return schema, dump


def schema_output_check(schema: dict[str, Any]) -> CheckOutput:
    """The issues of a returned value (JSON values) against a JSON Schema; its validator is built at the
    first check (an MCP tool's schema, read with its tools, costs nothing until a call returns, and jsonschema
    is imported then)."""
    checker: list[Any] = []

    def issues(value: Any) -> list[dict[str, str]]:
        if not checker:
            from jsonschema import validators

            checker.append(validators.validator_for(schema)(schema))
        try:
            check_schema(checker[0], value)
        except InputInvalid as exc:
            return exc.issues
        return []

    return issues


def check_usable(cls: Any, schema: dict[str, Any]) -> None:
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


def _serialization_problem(exc: Exception) -> str:
    """What pydantic says of a serialization that met a value of another type than its field's: the last line
    of its text, the one that names the field and the value (the first says only that there were warnings)."""
    text = str(exc).strip().splitlines()
    return text[-1].strip() if text else "a value is not of its declared type"


def _fields(value: Any) -> Any:
    """A returned model or dataclass instance as its fields (excluded ones too), so validating it checks them:
    an instance of the declared type would pass as it is, a field set wrong after it was built included, and
    one built by ``model_construct`` unchecked (FastAPI's ``response_model`` validates the fields too)."""
    if isinstance(value, BaseModel):
        return {**value.__dict__, **(value.__pydantic_extra__ or {})}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return value
