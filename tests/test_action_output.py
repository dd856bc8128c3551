"""An action's output schema is a promise to the script: a value it refuses never reaches the script.

The schema comes from the return annotation (pydantic, serialization mode) or from ``output_schema=``; it is
what ``sb.declarations()`` shows a script's author as the call's type. A refused value fails the call as an
``ActionError`` whose ``issues`` name where the value breaks the schema, journaled like any failure.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Annotated

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import validators
from pydantic import BaseModel, Field, PlainSerializer, computed_field, field_validator

from jupyter_sandbox import ActionError, ActionInterrupt, Sandbox, SandboxInterrupt
from jupyter_sandbox.actions import Action
from jupyter_sandbox.agents.catalog import spec_for
from jupyter_sandbox.calling import classify


class Receipt(BaseModel):
    total: int


def declared(fn, output_schema=None) -> Action:
    """An action typed the way registration types it: from its annotations, or by an explicit schema."""
    return Action("result", fn, spec=spec_for(fn, "result", output_schema=output_schema))


def test_a_result_its_return_annotation_refuses_fails_the_call_naming_the_issue():
    def count() -> int:
        return "two"  # type: ignore[return-value]

    outcome = classify(declared(count), "two")
    assert outcome.kind == "error" and outcome.error["name"] == "InvalidOutput"
    assert outcome.error["issues"] == [
        {"path": "$", "message": 'Input should be a valid integer, unable to parse string as an integer (got "two")'}
    ]
    assert "result returned a value its output_schema refuses" in outcome.error["message"]


def test_a_result_that_fits_its_annotation_is_what_the_script_sees():
    def receipt() -> Receipt:
        return Receipt(total=3)

    outcome = classify(declared(receipt), Receipt(total=3))
    assert outcome.kind == "ok" and outcome.value == {"total": 3}


def test_an_untyped_action_returns_anything():
    assert classify(Action("free", lambda: None), ["any", {"thing": 1}]).kind == "ok"


def test_the_script_catches_a_refused_result_as_an_action_error_with_its_issues():
    with Sandbox() as sb:

        @sb.action(output_schema={"type": "object", "required": ["id"]})
        def create():
            return {"name": "x"}

        result = sb.eval("try { await actions.create() } catch (e) { return [e.name, e.action, e.issues] }")
    assert result.output == ["ActionError", "create", [{"path": "$", "message": "'id' is a required property"}]]


def test_an_uncaught_refused_result_reaches_python_with_its_issues():
    with Sandbox() as sb:

        @sb.action
        def total() -> Receipt:
            return {"total": "many"}  # type: ignore[return-value]

        with pytest.raises(ActionError) as info:
            sb.eval("return await actions.total()")
    assert info.value.action == "total"
    assert info.value.issues == [
        {
            "path": "$.total",
            "message": 'Input should be a valid integer, unable to parse string as an integer (got "many")',
        }
    ]


def seen_after_a_pause(fn, read: str):
    """Register ``fn`` as an action, call it in a script that catches its failure and keeps ``e.<read>``, pause
    at a gate, resume: what the script kept, as the replay served it, and how often ``fn`` ran."""
    calls = []

    def counted():
        calls.append(1)
        return fn()

    counted.__annotations__ = fn.__annotations__
    with Sandbox() as sb:
        sb.action(counted, name="returns")

        @sb.action
        def gate(resume=None):
            if resume is None:
                raise ActionInterrupt(data="go on?")
            return True

        script = f"let seen; try {{ await actions.returns() }} catch (e) {{ seen = e.{read} }}\n"
        script += "await actions.gate(); return seen"
        with pytest.raises(SandboxInterrupt) as paused:
            sb.eval(script)
        return sb.resume(paused.value.run_id, True).output, len(calls)


def test_a_refused_result_is_journaled_and_replayed_without_calling_again():
    def count() -> int:
        return "two"  # type: ignore[return-value]

    assert seen_after_a_pause(count, "issues") == (
        [{"path": "$", "message": 'Input should be a valid integer, unable to parse string as an integer (got "two")'}],
        1,
    )


SCHEMAS = st.sampled_from(
    [
        {"type": "integer"},
        {"type": "string"},
        {"type": ["number", "null"]},
        {"type": "array", "items": {"type": "boolean"}},
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    ]
)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["n", "m"]), inner, max_size=2),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None)
@given(schema=SCHEMAS, value=JSON)
def test_a_result_reaches_the_script_exactly_when_its_schema_accepts_it(schema, value):
    outcome = classify(declared(lambda: value, output_schema=schema), value)
    fits = validators.validator_for(schema)(schema).is_valid(value)
    assert (outcome.kind == "ok") == fits
    if fits:
        assert outcome.value == value
    else:
        assert outcome.error["name"] == "InvalidOutput" and outcome.error["issues"]


class User(BaseModel):
    user_name: str = Field(serialization_alias="userName")


class Account(BaseModel):
    public: int
    secret: str = Field(exclude=True)


class Sum(BaseModel):
    a: int

    @computed_field
    def double(self) -> int:
        return 2 * self.a


Stamp = Annotated[datetime.datetime, PlainSerializer(lambda v: int(v.timestamp()), return_type=int)]
NEW_YEAR = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize(
    ("returns", "value", "seen"),
    [
        (User, User(user_name="ada"), {"userName": "ada"}),
        (User, {"user_name": "ada"}, {"userName": "ada"}),  # a model may be returned as its fields
        (Account, Account(public=1, secret="s"), {"public": 1}),
        (Account, {"public": 1, "secret": "hunter2"}, {"public": 1}),  # an excluded field never reaches the script
        (Sum, {"a": 2}, {"a": 2, "double": 4}),
        (Stamp, NEW_YEAR, 1577836800),
        (int, "5", 5),  # validated as the type, as FastAPI's response_model does
    ],
    ids=["alias", "alias-from-dict", "excluded", "excluded-from-dict", "computed", "serializer", "coerced"],
)
def test_the_script_receives_the_value_as_the_declared_type_serializes_it(returns, value, seen):
    def result(): ...

    result.__annotations__["return"] = returns
    outcome = classify(declared(result), value)
    assert outcome.kind == "ok" and outcome.value == seen


def test_what_is_enforced_is_what_the_declarations_show():
    with Sandbox() as sb:

        @sb.action
        def user(_=None) -> User:
            return User(user_name="ada")

        assert "userName: string" in sb.declarations()
        assert sb.eval("return await actions.user()").output == {"userName": "ada"}


class Person(BaseModel):
    name: str
    age: int


class Lookalike(BaseModel):
    name: str
    age: int


class Exploding(BaseModel):
    a: int

    @computed_field
    def boom(self) -> int:
        raise RuntimeError("computed field failed")


class Refusing(BaseModel):
    a: int

    @field_validator("a")
    @classmethod
    def never(cls, value):
        raise KeyError("never")


@dataclasses.dataclass
class Pair:
    left: int


def test_a_model_whose_field_was_set_wrong_after_it_was_built_is_refused():
    def person() -> Person: ...

    changed = Person(name="ada", age=36)
    changed.age = None
    outcome = classify(declared(person), changed)
    assert outcome.error["issues"] == [{"path": "$.age", "message": "Input should be a valid integer (got null)"}]


@pytest.mark.parametrize(
    "value", [Person.model_construct(name=1, age=2), Pair(left="one")], ids=["model_construct", "dataclass"]
)
def test_an_instance_built_unchecked_is_checked_as_it_is_returned(value):
    def result(): ...

    result.__annotations__["return"] = type(value)
    assert classify(declared(result), value).error["name"] == "InvalidOutput"


def test_another_model_with_the_declared_fields_is_taken_as_its_fields():
    def person() -> Person: ...

    assert classify(declared(person), Lookalike(name="ada", age=36)).value == {"name": "ada", "age": 36}


def test_a_failure_in_the_output_types_own_code_is_the_calls_failure_journaled_once():
    def explode() -> Exploding:
        return Exploding(a=1)

    # the failure was journaled: the resume served it and did not call the action again
    assert seen_after_a_pause(explode, "message") == ("RuntimeError: computed field failed", 1)


def test_a_failure_in_the_input_types_own_code_is_the_calls_failure():
    with Sandbox() as sb:

        @sb.action
        def take(x: Refusing) -> int:
            return 1

        assert (
            sb.eval("try { await actions.take({a: 1}) } catch (e) { return e.message }").output == "KeyError: 'never'"
        )


def test_a_hostile_values_issues_are_the_first_twenty_and_a_count():
    """40,000 refused items of a list the script sends: each is seen once (in a set, not a scan of the list), and
    the first 20 are told, with how many more."""
    with Sandbox() as sb:

        @sb.action
        def take(x: list[int]) -> int:
            return 0

        issues = sb.eval("try { await actions.take(Array(40000).fill('x')) } catch (e) { return e.issues }").output
    assert len(issues) == 21 and issues[-1] == {"path": "$", "message": "and 39980 more issues"}
