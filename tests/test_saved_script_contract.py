"""What a saved script promises its callers: its output fits its ``output_schema``, its schemas are of a bounded
size, and a script the model asked the tool to save is saved once its run completes, however it completes."""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import validators

from jupyter_sandbox import ActionError, SandboxInterrupt

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
