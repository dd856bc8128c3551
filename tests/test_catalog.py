"""The action catalog (schemas from type hints) and validation where a call enters."""

import dataclasses
import datetime
import enum
import json
import uuid
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from jupyter_sandbox import ActionError, SandboxInterrupt
from jupyter_sandbox.agents.catalog import MAX_ISSUES, check_input, issue_path, spec_for


class Email(BaseModel):
    to: str = Field(description="the recipient")
    body: str
    urgent: bool = False


class Sent(TypedDict):
    sent: bool
    id: str


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def spec(fn, **options):
    return spec_for(fn, fn.__name__, **options)


# -- schemas ---------------------------------------------------------------------------------------


def test_a_model_parameter_gives_the_models_schema_as_the_input():
    def send(msg: Email) -> Sent: ...

    entry = spec(send)
    assert entry.input_schema == Email.model_json_schema()
    assert entry.output_schema["properties"] == {
        "sent": {"title": "Sent", "type": "boolean"},
        "id": {"title": "Id", "type": "string"},
    }
    assert entry.input_optional is False


@pytest.mark.parametrize(
    "hint, value, valid",
    [
        (Sent, {"sent": True, "id": "x"}, True),
        (Sent, {"sent": True}, False),
        (Point, {"x": 1, "y": 2.5}, True),
        (Point, {"x": "far"}, False),
        (Literal["fast", "slow"], "fast", True),
        (Literal["fast", "slow"], "medium", False),
        (Optional[int], None, True),  # noqa: UP045 (the typing forms themselves are tested)
        (Optional[int], "x", False),  # noqa: UP045 (the typing forms themselves are tested)
        (Union[int, str], "x", True),  # noqa: UP007 (the typing forms themselves are tested)
        (Union[int, str], [1], False),  # noqa: UP007 (the typing forms themselves are tested)
        (list[Point], [{"x": 0, "y": 0}], True),
        (tuple[int, str], [1, "a"], True),
        (tuple[int, str], [1, "a", 3], False),
        (Color, "red", True),
        (Color, "green", False),
    ],
)
def test_each_kind_of_hint_validates_as_pydantic_does(hint, value, valid):
    def act(value: hint): ...  # type: ignore[valid-type]

    assert (check_input(spec(act), value) == []) is valid


def test_several_parameters_make_one_object_input_with_their_defaults_and_descriptions():
    def paint(color: Color, where: Point, mode: Literal["fast", "slow"] = "fast") -> None:
        """Paint somewhere.

        Args:
            color: which paint
            where: the spot
        """

    entry = spec(paint)
    schema = entry.input_schema
    assert list(schema["properties"]) == ["color", "where", "mode"]
    assert schema["required"] == ["color", "where"]
    assert schema["properties"]["color"]["description"] == "which paint"
    assert schema["properties"]["mode"]["default"] == "fast"
    assert schema["additionalProperties"] is False  # a misspelt optional field is an error, not ignored
    assert entry.output_schema == {"type": "null"}


def test_parameters_named_like_pydantic_attributes_are_ordinary_fields():
    def odd(json: str, model_config: int, _private: bool = False): ...

    entry = spec(odd)
    assert set(entry.input_schema["properties"]) == {"json", "model_config", "_private"}
    assert entry.arguments(entry.validate({"json": "a", "model_config": 1})) == (
        (),
        {"json": "a", "model_config": 1, "_private": False},
    )


def test_keyword_only_parameters_are_fields_too():
    def tag(*, label: str): ...

    entry = spec(tag)
    assert entry.arguments(entry.validate({"label": "x"})) == ((), {"label": "x"})


def test_the_docstring_gives_the_description_and_what_it_returns():
    def send(msg: Email) -> Sent:
        """Send an email.

        It goes out at once.

        Args:
            msg: the email to send
        Returns:
            whether it went out
        """

    entry = spec(send)
    assert entry.description == "Send an email.\n\nIt goes out at once."
    assert entry.returns == "whether it went out"
    assert entry.input_schema["description"] == "the email to send"


def test_parameter_descriptions_are_read_in_sphinx_style_too():
    def greet(name: str):
        """Greet.

        :param name: the name
        """

    assert spec(greet).input_schema == {"type": "string", "description": "the name"}


def test_an_untyped_action_is_unknown_and_unchecked():
    def raw(x): ...

    entry = spec(raw)
    assert (entry.input_schema, entry.output_schema, entry.checks) == (None, None, False)
    assert entry.input_optional is True


def test_an_action_without_parameters_takes_no_input():
    def ping() -> int: ...

    entry = spec(ping)
    assert entry.takes_input is False
    assert entry.arguments(entry.validate("ignored")) == ((), {})


def test_an_explicit_json_schema_is_declared_and_enforced():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}

    def count(payload): ...

    entry = spec(count, input_schema=schema, output_schema={"type": "integer"})
    assert (entry.input_schema, entry.output_schema) == (schema, {"type": "integer"})
    assert check_input(entry, {"n": 3}) == []
    assert check_input(entry, {"n": -1}) == [{"path": "$.n", "message": "-1 is less than the minimum of 0"}]


def test_an_explicit_type_schema_replaces_the_hints():
    def send(payload): ...

    entry = spec(send, input_schema=Email)
    assert entry.input_schema == Email.model_json_schema()
    assert isinstance(entry.validate({"to": "a", "body": "b"}), Email)


def test_a_broken_explicit_schema_is_refused_when_registered(sb):
    with pytest.raises(TypeError, match="action bad: its explicit schema is not usable: .*is not valid"):
        sb.action(lambda x: x, name="bad", input_schema={"type": "no-such-type"})


def test_a_hint_that_names_nothing_leaves_the_action_untyped_with_a_warning(sb):
    def act(x: "NoSuchType"):  # noqa: F821
        return x

    with pytest.warns(UserWarning, match="action act: its type hints cannot be read .*NoSuchType"):
        sb.action(act)
    assert sb.eval("return await actions.act(5)").output == 5


def test_a_class_pydantic_cannot_describe_leaves_that_side_unknown_with_a_warning(sb):
    class Opaque:
        pass

    def act(x: Opaque) -> Opaque:
        return {"ok": True}

    with pytest.warns(UserWarning) as caught:
        sb.action(act)
    assert [str(w.message).split(" (")[0] for w in caught] == [
        "action act: its input is unchecked",
        "action act: its output is undeclared",
    ]
    assert sb.catalog(["act"])[0].input_schema is None
    assert sb.eval("return await actions.act(1)").output == {"ok": True}


def test_issue_paths_read_like_the_input():
    assert issue_path(()) == "$"
    assert issue_path(("items", 0, "name")) == "$.items[0].name"
    assert issue_path(("a b",)) == '$["a b"]'


# -- validation where the call enters ----------------------------------------------------------------


@pytest.fixture
def mail(sb):
    sent = []

    @sb.action
    def send(msg: Email) -> Sent:
        sent.append(msg)
        return {"sent": True, "id": f"m{len(sent)}"}

    sb.sent = sent
    return sb


def test_an_invalid_input_is_an_action_error_the_script_catches_with_its_issues(mail):
    result = mail.eval("""
        try { await actions.send({to: 42}); } catch (e) { return [e.name, e.action, e.issues]; }
    """)
    assert result.output == [
        "ActionError",
        "send",
        [
            {"path": "$.to", "message": "Input should be a valid string (got 42)"},
            {"path": "$.body", "message": "Field required"},
        ],
    ]
    assert mail.sent == []  # refused before the action ran


def test_an_uncaught_invalid_input_reaches_python_with_its_issues(mail):
    with pytest.raises(ActionError) as info:
        mail.eval("await actions.send({body: 'x'})")
    assert info.value.action == "send"
    assert info.value.issues == [{"path": "$.to", "message": "Field required"}]


def test_the_action_receives_the_validated_model(mail):
    mail.eval("return await actions.send({to: 'a', body: 'b'})")
    assert mail.sent == [Email(to="a", body="b")]


def test_replay_throws_the_recorded_validation_error_without_validating_or_calling_again(sb):
    seen, approved = [], []

    @sb.action
    def check(n: int) -> int:
        seen.append(n)
        return n

    @sb.action(approval=True)
    def publish(x):
        approved.append(x)
        return "ok"

    entry = sb.actions["check"].spec
    validate = entry._validate
    entry._validate = lambda value: (seen.append("validated"), validate(value))[1]
    script = """
        let error = null;
        try { await actions.check("not a number"); } catch (e) { error = e.issues[0].path; }
        await actions.publish(1);
        return error;
    """
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(script)
    assert seen == ["validated"]
    assert sb.resume(info.value.run_id, True).output == "$"
    assert seen == ["validated"] and approved == [1]  # replayed from the journal: neither validated nor called


def test_results_are_converted_to_json_by_pydantic(sb):
    class Out(BaseModel):
        when: datetime.datetime
        color: Color
        id: uuid.UUID
        at: Point

    @sb.action
    def make() -> Out:
        return Out(when=datetime.datetime(2026, 1, 2, 3, 4), color=Color.RED, id=uuid.UUID(int=7), at=Point(1, 2))

    @sb.action
    def loose(n: int):  # typed input, untyped output: converted by the value's own type
        return {"day": datetime.date(2026, 1, 2), "color": Color.BLUE}

    output = sb.eval("return [await actions.make(), await actions.loose(1)]").output
    assert output == [
        {"when": "2026-01-02T03:04:00", "color": "red", "id": str(uuid.UUID(int=7)), "at": {"x": 1.0, "y": 2.0}},
        {"day": "2026-01-02", "color": "blue"},
    ]


def test_a_result_pydantic_cannot_convert_is_an_action_error_naming_the_action(sb):
    @sb.action
    def odd(n: int) -> dict:
        return {"thing": object()}

    with pytest.raises(ActionError, match="the value odd returned is not JSON"):
        sb.eval("await actions.odd(1)")


def test_an_invalid_call_is_refused_before_anyone_is_asked_to_approve_it(sb):
    @sb.action(approval=True)
    def send(msg: Email):
        return "sent"

    with pytest.raises(ActionError) as info:  # not a SandboxInterrupt: no human sees a call that cannot run
        sb.eval("await actions.send({to: 'a'})")
    assert info.value.issues == [{"path": "$.body", "message": "Field required"}]


def test_an_edited_approval_is_validated_against_the_same_schema(sb):
    sent = []

    @sb.action(approval=True)
    def send(msg: Email):
        sent.append(msg)
        return "sent"

    script = "try { return await actions.send({to: 'a', body: 'b'}); } catch (e) { return e.issues; }"
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(script)
    result = sb.resume(info.value.run_id, {"approved": True, "input": {"to": "a", "body": 5}})
    assert result.output == [{"path": "$.body", "message": "Input should be a valid string (got 5)"}]
    assert sent == []


def test_check_input_gives_the_card_the_issues_of_an_edit(mail):
    entry = mail.catalog(["send"])[0]
    assert check_input(entry, {"to": "a", "body": "b"}) == []
    assert check_input(entry, {"to": "a"}) == [{"path": "$.body", "message": "Field required"}]


def test_a_hostile_input_gets_a_bounded_list_of_issues(sb):
    @sb.action
    def many(values: list[int]) -> int:
        return len(values)

    with pytest.raises(ActionError) as info:
        sb.eval("await actions.many(Array.from({length: 5000}, () => 'x'))")
    assert len(info.value.issues) == MAX_ISSUES + 1
    assert info.value.issues[-1] == {"path": "$", "message": f"and {5000 - MAX_ISSUES} more issues"}


def test_untyped_actions_behave_as_before(sb):
    @sb.action
    def raw(x):
        return {"set": {1}}

    with pytest.raises(ActionError, match="is not JSON"):  # no conversion: a set is still refused
        sb.eval("await actions.raw(1)")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["to", "body", "urgent", "x"]), inner, max_size=4)
    ),
    max_leaves=8,
)


@settings(max_examples=scaled(40))
@given(value=json_values)
def test_a_call_runs_exactly_when_pydantic_accepts_its_input(value):
    from jupyter_sandbox import Sandbox

    adapter = TypeAdapter(Email)
    try:
        expected = adapter.validate_python(value)
    except ValidationError as exc:
        expected = exc
    received = []
    with Sandbox() as sb:
        sb.action(lambda msg: received.append(msg) or "ok", name="send")
        sb.actions["send"].spec = spec_for(lambda msg: None, "send", input_schema=Email)
        script = "try { return await actions.send(ctx.input); } catch (e) { return e.issues; }"
        output = sb.eval(script, input=value).output
    if isinstance(expected, ValidationError):
        assert received == [] and [i["path"] for i in output] == [issue_path(e["loc"]) for e in expected.errors()]
    else:
        assert output == "ok" and received == [expected]
    json.dumps(output)


def test_the_notebooks_decorator_takes_explicit_schemas_too():
    import jupyter_sandbox
    from jupyter_sandbox.notebook import defaults, session

    defaults.set_default_store(":memory:")
    try:

        @jupyter_sandbox.action(name="scored", input_schema={"type": "integer", "maximum": 10})
        def scored(n):
            return n

        with pytest.raises(ActionError) as info:
            jupyter_sandbox.default_sandbox().eval("await actions.scored(11)")
        assert info.value.issues == [{"path": "$", "message": "11 is greater than the maximum of 10"}]
    finally:
        session.close_session()


def test_an_issue_quoting_a_huge_value_is_cut(sb):
    sb.action(lambda n: n, name="count", input_schema={"type": "integer"})
    with pytest.raises(ActionError) as info:
        sb.eval("await actions.count('x'.repeat(100000))")
    [issue] = info.value.issues
    assert issue["message"].endswith("…") and len(issue["message"]) <= 301


def test_a_result_uses_the_field_names_its_declared_schema_shows(sb):
    class Out(BaseModel):
        x: int = Field(alias="the-x")

    @sb.action
    def aliased() -> Out:
        return Out(**{"the-x": 1})

    assert sb.catalog(["aliased"])[0].output_schema["properties"].keys() == {"the-x"}
    assert sb.eval("return await actions.aliased()").output == {"the-x": 1}


# -- issues at the input's own paths ---------------------------------------------------------------


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool


@pytest.fixture
def pets(sb):
    @sb.action
    def adopt(
        pet: Cat | Dog, v: int | str, m: dict[str, Cat | Dog], tagged: Annotated[Cat | Dog, Field(discriminator="kind")]
    ):
        return "ok"

    return sb.catalog(["adopt"])[0]


@pytest.mark.parametrize(
    "value, paths",
    [
        ({"pet": {"lives": "x"}}, {"$.pet.lives", "$.pet.good"}),  # not a Cat (lives), not a Dog (good)
        ({"pet": {}}, {"$.pet.lives", "$.pet.good"}),
        ({"pet": 3}, {"$.pet"}),
        ({"v": 3.5}, {"$.v"}),
        ({"m": {"tom": {"lives": "x"}}}, {"$.m.tom.lives", "$.m.tom.good"}),
        ({"tagged": {"kind": "cat", "lives": "x"}}, {"$.tagged.lives"}),
        ({"tagged": {"kind": "cow"}}, {"$.tagged"}),
    ],
)
def test_an_issue_inside_a_union_is_at_the_inputs_own_path_without_the_branchs_name(pets, value, paths):
    base = {"pet": {"lives": 1}, "v": 1, "m": {}, "tagged": {"kind": "dog", "good": True}}
    assert {i["path"] for i in check_input(pets, {**base, **value})} == paths


@settings(max_examples=scaled(50))
@given(st.lists(st.integers(0, 30), max_size=40), st.sampled_from(["x", 1.5, None, [1]]))
def test_every_issue_path_names_a_place_in_the_input_or_a_missing_key(places, bad):
    values: list[Any] = [1] * 40
    for i in places:
        values[i] = bad
    spec = spec_for(lambda items: None, "f", input_schema=list[int | Literal["ok"]])
    for issue in check_input(spec, values):
        if issue["message"].startswith("and "):
            continue
        index = int(issue["path"].removeprefix("$[").removesuffix("]"))
        assert values[index] == bad


def test_the_tool_says_how_many_issues_it_left_out(sb):
    @sb.action
    def many(values: list[int]) -> int:
        return len(values)

    result = sb.tool()({"script": "await actions.many(Array.from({length: 500}, () => 'x'))"})
    assert result.content.count("\n  - $[") == MAX_ISSUES
    assert f"and {500 - MAX_ISSUES} more issues" in result.content
