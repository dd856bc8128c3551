"""What a saved script promises its callers: its output fits its ``output_schema``, its schemas are of a bounded
size, and a script the model asked the tool to save is saved once its run completes, however it completes."""

from __future__ import annotations

import json

import pytest
from examples import scaled
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jsonschema import validators

from jupyter_sandbox import ActionError, LimitExceeded, RegistrationError, Sandbox, SandboxInterrupt, saved
from jupyter_sandbox.schema_limits import MAX_SCHEMA_BYTES, MAX_SCHEMA_OBJECTS

POINT = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x"]}

# JSON values as a script returns them (integers a JavaScript number holds exactly; finite floats).
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3),
    max_leaves=8,
)


def test_an_output_its_output_schema_refuses_fails_the_call_naming_the_script_and_the_mismatch(sb):
    sb.save_script("point", "return {x: ctx.input}", output_schema=POINT)
    assert sb.eval("return await actions.scripts.point(1)").output == {"x": 1}
    with pytest.raises(ActionError) as failed:
        sb.eval("return await actions.scripts.point('one')")
    assert failed.value.action == "scripts.point"
    assert "scripts.point returned a value its output_schema refuses" in str(failed.value)
    assert failed.value.issues == [{"path": "$.x", "message": "'one' is not of type 'integer'"}]


def test_the_script_can_catch_the_refused_output_and_a_replay_throws_it_again(sb):
    sb.save_script("point", "return {x: 'one'}", output_schema=POINT)
    run = sb.eval("try { await actions.scripts.point() } catch (e) { return [e.name, e.action, e.issues[0].path] }")
    assert run.output == ["ActionError", "scripts.point", "$.x"]
    assert sb.check(run.run_id).deterministic


def test_an_output_schema_given_as_a_type_is_enforced_too(sb):
    sb.save_script("count", "return ctx.input", output_schema=int)
    assert sb.eval("return await actions.scripts.count(3)").output == 3
    with pytest.raises(ActionError, match="output_schema refuses"):
        sb.eval("return await actions.scripts.count('3')")


def test_a_script_without_an_output_schema_returns_anything(sb):
    sb.save_script("any", "return ctx.input")
    assert sb.eval("return await actions.scripts.any({x: 'one'})").output == {"x": "one"}


def test_a_paused_script_that_returns_a_refused_output_on_resume_fails_the_call_too(sb):
    sb.action(lambda x: x, name="ask", approval=True)
    sb.save_script("point", "await actions.ask(1); return {y: 2}", output_schema=POINT)
    with pytest.raises(SandboxInterrupt) as paused:
        sb.eval("return await actions.scripts.point()")
    with pytest.raises(ActionError, match=r"scripts.point returned .*\$: 'x' is a required property"):
        sb.resume(paused.value.run_id, True)


@settings(max_examples=scaled(40), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON)
def test_any_returned_value_is_the_calls_result_exactly_when_the_output_schema_accepts_it(sb, value):
    """The caller sees the value if and only if it fits: the declaration's type can be trusted."""
    if not sb.scripts():
        sb.save_script("echo", "return ctx.input", output_schema=POINT)
    fits = validators.validator_for(POINT)(POINT).is_valid(value)
    try:
        got = sb.eval("return await actions.scripts.echo(ctx.input)", input=value).output
    except ActionError as exc:
        assert not fits and exc.action == "scripts.echo" and exc.issues
    else:
        assert fits and got == value


# -- a script the model asked to save is saved when its run completes, first attempt or resume, once ----------

ASKS = "const ok = await actions.ask(ctx.input); return ok ? ctx.input * 2 : 0"


def _asking(sb):
    sb.action(lambda n: n, name="ask", approval=True)
    return sb.tool(allow_save=True)


def test_a_script_that_paused_and_completed_on_the_tools_resume_is_saved(sb):
    tool = _asking(sb)
    paused = tool.run({"script": ASKS, "input": 2, "save": {"name": "twice"}})
    assert paused.status == "paused" and paused.saved is None and sb.scripts() == []
    done = tool.resume(paused.run_id, True)
    assert done.status == "completed" and done.saved == {"name": "scripts.twice", "version": 1}
    assert "Saved as actions.scripts.twice" in done.content
    assert "twice(" in tool.description and [s.version for s in sb.store.script_versions("twice")] == [1]


def test_a_run_the_tool_started_and_a_human_approved_elsewhere_is_saved_where_it_completes(store_path):
    with Sandbox(store_path) as model_side, Sandbox(store_path) as card_side:
        tool = _asking(model_side)
        card_side.action(lambda n: n, name="ask", approval=True)
        paused = tool.run({"script": ASKS, "input": 3, "save": {"name": "twice", "description": "Twice."}})
        card_side.resume(paused.run_id, True)  # the card's Approve, in another kernel
        assert [(s.name, s.version, s.description) for s in card_side.scripts()] == [("twice", 1, "Twice.")]
        reported = tool.result(paused.run_id)
        assert reported.saved == {"name": "scripts.twice", "version": 1}
        assert tool.result(paused.run_id).saved == reported.saved  # asked again: the same version
        assert [s.version for s in model_side.store.script_versions("twice")] == [1]


def test_a_parked_run_woken_by_the_scheduler_is_saved_when_it_completes(clock):
    sb = Sandbox(clock=clock)
    tool = sb.tool(allow_save=True)
    parked = tool.run({"script": "await ctx.sleep(60_000); return 7", "save": {"name": "late"}})
    assert parked.status == "parked" and sb.scripts() == []
    clock.advance(60_000)
    assert [status for _, status in sb.run_due()][0].output == 7
    assert [(s.name, s.version) for s in sb.scripts()] == [("late", 1)]
    assert tool.result(parked.run_id).saved == {"name": "scripts.late", "version": 1}


def test_a_save_refused_when_the_run_completes_on_resume_is_said_in_the_content_and_nothing_is_stored(sb):
    tool = _asking(sb)
    paused = tool.run({"script": ASKS, "input": 1, "save": {"name": "not.one"}})
    done = tool.resume(paused.run_id, True)
    assert done.status == "completed" and done.saved is None and "not saved" in done.content
    assert sb.scripts() == []


def test_a_run_that_completes_without_asking_to_save_is_not_saved(sb):
    tool = _asking(sb)
    done = tool.resume(tool.run({"script": ASKS, "input": 1}).run_id, True)
    assert done.status == "completed" and done.saved is None and sb.scripts() == []


def test_a_fork_of_a_run_that_saved_saves_nothing_more(sb):
    tool = _asking(sb)
    paused = tool.run({"script": ASKS, "input": 1, "save": {"name": "twice"}})
    tool.resume(paused.run_id, True)
    entries = sb.run(paused.run_id).entries
    at = next(i for i, e in enumerate(entries) if e["kind"] == "interrupt") + 1
    assert sb.fork(paused.run_id, at, True).output == 2  # "what if": completed, with the same script
    assert [s.version for s in sb.store.script_versions("twice")] == [1]


def test_eval_takes_save_and_refuses_one_that_is_not_a_save(sb):
    assert sb.script_kept(sb.eval("return 1", save={"name": "one"}).run_id).version == 1
    assert sb.script_kept(sb.eval("return 1").run_id) is None
    with pytest.raises(TypeError, match="save="):
        sb.eval("return 1", save={"description": "no name"})


@settings(max_examples=scaled(10), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pauses=st.integers(0, 3), looks=st.integers(1, 3), answer=st.sampled_from(["tool", "sandbox"]))
def test_whatever_the_pauses_and_the_looks_a_completed_run_saves_its_script_exactly_once(sb, pauses, looks, answer):
    """However many approvals the run waits on, answered through the tool or not, and however often its
    result is read afterwards, its script is stored once."""
    sb.action(lambda n: n, name="ask", approval=True)
    tool = sb.tool(allow_save=True)
    name = f"s{len(sb.store.scripts(removed=True))}"
    script = f"for (let i = 0; i < {pauses}; i++) await actions.ask(i); return {pauses}"
    result = tool.run({"script": script, "save": {"name": name}})
    while result.status == "paused":
        if answer == "tool":
            result = tool.resume(result.run_id, True)
        else:  # a human answers in the card: the tool only reads the result afterwards
            _answered(sb, result.run_id)
            result = tool.result(result.run_id)
    assert result.status == "completed"
    for _ in range(looks):
        assert tool.result(result.run_id).saved == {"name": f"scripts.{name}", "version": 1}
    assert [s.version for s in sb.store.script_versions(name)] == [1]


def _answered(sb, run_id):
    try:
        sb.resume(run_id, True)
    except SandboxInterrupt:
        pass  # the next approval


# -- a schema's size is bounded, and a save checks it once ---------------------------------------------------


def _schema_of_size(size):
    """An object schema whose JSON is exactly ``size`` bytes (its description padded)."""
    schema = {"type": "object", "description": ""}
    schema["description"] = "x" * (size - len(json.dumps(schema)))
    assert len(json.dumps(schema).encode()) == size
    return schema


def test_a_schema_past_the_bound_is_refused_at_save_before_it_is_checked_and_nothing_is_stored(sb, monkeypatch):
    checked = []
    monkeypatch.setattr(saved, "_spec", lambda *a: checked.append(a))
    for key in ("input_schema", "output_schema"):
        with pytest.raises(LimitExceeded) as refused:
            sb.save_script("big", "return 1", **{key: _schema_of_size(MAX_SCHEMA_BYTES + 1)})
        assert refused.value.limit == "schema-size" and refused.value.value == MAX_SCHEMA_BYTES
        assert f"the {key} of script 'big' is 65,537 bytes" in str(refused.value)
    assert checked == [] and sb.scripts() == []


def test_a_megabytes_schema_from_the_tool_is_said_not_saved(sb):
    big = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(100_000)}}
    result = sb.tool(allow_save=True).run({"script": "return 1", "save": {"name": "big", "input_schema": big}})
    assert result.status == "completed" and "schema-size" in result.content and sb.scripts() == []


@settings(max_examples=scaled(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(over=st.integers(-3, 3))
def test_a_schema_is_saved_exactly_when_its_json_is_within_the_bound(sb, over):
    schema = _schema_of_size(MAX_SCHEMA_BYTES + over)
    try:
        kept = sb.save_script("edge", "return ctx.input", input_schema=schema)
    except LimitExceeded:
        assert over > 0
    else:
        assert over <= 0 and kept.about["input_schema"] == schema


def test_a_save_checks_its_schemas_once_and_later_runs_not_again(sb, monkeypatch):
    built = []
    real = saved._spec
    monkeypatch.setattr(saved, "_spec", lambda *a: built.append(a[0]) or real(*a))
    sb.save_script("typed", "return ctx.input", input_schema=int, output_schema=int)
    for _ in range(3):
        assert sb.eval("return await actions.scripts.typed(2)").output == 2
    assert built == ["scripts.typed"]


def test_a_stored_schema_past_the_bound_is_left_out_with_a_warning_and_the_store_still_runs(sb, caplog):
    sb.store.save_script(
        "huge", "return 1", {"description": None, "input_schema": _schema_of_size(MAX_SCHEMA_BYTES + 1)}
    )
    sb.save_script("fine", "return 2")
    assert sb.eval("return await actions.scripts.fine()").output == 2
    assert "scripts.huge" not in sb.declarations() and "schema-size" in caplog.text


SCHEMAS = [
    {},
    {"type": "object"},
    {"type": "string"},
    {"type": "integer"},
    {"type": "array", "items": {"type": "integer"}},
    {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
    POINT,
]


def _completed(tool, run: dict):
    result = tool.run(run)
    while result.status == "paused":
        result = tool.resume(result.run_id, True)
    assert result.status == "completed", result.content
    return result


@settings(max_examples=scaled(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON, schema=st.sampled_from(SCHEMAS), pauses=st.booleans())
def test_the_tool_keeps_a_script_only_if_its_own_output_fits_the_output_schema_it_is_saved_with(
    sb, value, schema, pauses
):
    """Kept, a call that returns what its run returned succeeds; one whose run broke the schema is not kept
    (the content says why), since every call doing the same would fail."""
    sb.action(lambda n: n, name="ask", approval=True)
    tool = sb.tool(allow_save=True)
    name = f"s{len(sb.store.scripts(removed=True))}_{len(sb.runs())}"
    script = "return await actions.ask(ctx.input)" if pauses else "return ctx.input"
    result = _completed(tool, {"script": script, "input": value, "save": {"name": name, "output_schema": schema}})
    if validators.validator_for(schema)(schema).is_valid(result.output):
        assert result.saved == {"name": f"scripts.{name}", "version": 1}
        again = _completed(tool, {"script": f"return await actions.scripts.{name}(ctx.input)", "input": value})
        assert again.output == result.output
    else:
        assert result.saved is None and sb.store.script_versions(name) == []
        assert "not saved" in result.content and "breaks the output_schema" in result.content


@settings(max_examples=scaled(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON, schema=st.sampled_from(SCHEMAS))
def test_a_run_given_an_input_its_input_schema_refuses_keeps_no_script(sb, value, schema):
    name = f"s{len(sb.store.scripts(removed=True))}_{len(sb.runs())}"
    run = sb.eval("return 1", input=value, save={"name": name, "input_schema": schema})
    fits = value is None or validators.validator_for(schema)(schema).is_valid(value)
    if fits:
        assert sb.script_kept(run.run_id).version == 1
    else:
        with pytest.raises(RegistrationError, match="breaks the input_schema"):
            sb.script_kept(run.run_id)
        assert sb.store.script_versions(name) == []


SHAPES = {  # a schema of exactly n JSON objects, within 64 KiB past the bound: the costliest to check per byte
    "anyOf": lambda n: {"anyOf": [{"const": i % 10} for i in range(n - 1)]},
    "properties": lambda n: {"type": "object", "properties": {f"p{i}": {} for i in range(n - 2)}},
}


@settings(max_examples=scaled(10), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(objects=st.integers(2, MAX_SCHEMA_OBJECTS + 100), shape=st.sampled_from(sorted(SHAPES)))
@example(objects=MAX_SCHEMA_OBJECTS, shape="anyOf").via("the largest under the bound")
@example(objects=MAX_SCHEMA_OBJECTS + 1, shape="anyOf").via("the smallest past it")
def test_a_schema_of_more_objects_than_the_bound_is_refused_before_its_meta_schema_check(
    sb, monkeypatch, objects, shape
):
    """The meta-schema check costs about the same for each subschema: the work a save may do is bounded by
    counting objects, so at most MAX_SCHEMA_OBJECTS are ever checked, and a schema past it is refused unchecked."""
    from jupyter_sandbox.agents import validators

    checked = []
    real = validators.check_usable
    monkeypatch.setattr(validators, "check_usable", lambda cls, schema: checked.append(schema) or real(cls, schema))
    schema = SHAPES[shape](objects)
    name = f"s{len(sb.store.scripts(removed=True))}_{objects}"
    try:
        sb.save_script(name, "return 1", output_schema=schema)
    except LimitExceeded as refused:
        assert objects > MAX_SCHEMA_OBJECTS and refused.limit == "schema-size"
        assert refused.value == MAX_SCHEMA_OBJECTS and f"{objects:,} JSON objects" in str(refused)
        assert checked == [] and sb.store.script_versions(name) == []
    else:
        assert objects <= MAX_SCHEMA_OBJECTS and checked == [schema]
