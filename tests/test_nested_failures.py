"""A failure that passes through scripts nested inside actions reads once at the top, whatever the depth:
``ActionError: NAME: text`` of the innermost failure, with ``.limit`` naming the limit when one caused it."""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionError, Sandbox
from jupyter_sandbox.engine.nesting import MAX_NESTING


@pytest.fixture(scope="module")
def sb():
    with Sandbox() as sandbox:

        @sandbox.action
        async def deeper(n):  # a script that starts itself again from an async action, without end
            return (await sandbox.aeval("return await actions.deeper(ctx.input + 1)", n)).output

        @sandbox.action
        def fails(why):
            raise ValueError(why)

        @sandbox.action
        async def passes_on(spec):  # an async action running a script one level further in
            depth, why = spec
            source = (
                "return await actions.fails(ctx.input[1])"
                if depth == 0
                else "return await actions.passes_on(ctx.input)"
            )
            return (await sandbox.aeval(source, [depth - 1, why])).output

        @sandbox.action
        def passes_on_plainly(spec):  # the same with a plain action and sb.eval (an action thread per level)
            depth, why = spec
            source = (
                "return await actions.fails(ctx.input[1])"
                if depth == 0
                else "return await actions.passes_on_plainly(ctx.input)"
            )
            return sandbox.eval(source, [depth - 1, why]).output

        sandbox.save_script("again", "return await actions.scripts.again(ctx.input + 1)")
        yield sandbox


def one_level_in(action: str, depth: int) -> str:
    """The script one level further in: the failing action at the bottom, else ``action`` again."""
    return "return await actions.fails(ctx.input[1])" if depth == 0 else f"return await actions.{action}(ctx.input)"


def failure(sb: Sandbox, source: str, input=None) -> ActionError:
    with pytest.raises(ActionError) as failed:
        sb.eval(source, input)
    return failed.value


def test_scripts_nested_past_the_bound_from_async_actions_fail_once_naming_the_nesting_limit(sb):
    error = failure(sb, "return await actions.deeper(0)")
    assert error.limit == "nesting"
    assert error.message.startswith("LimitExceeded: nesting: scripts nest at most 64 deep")
    assert str(error).count("ActionError") == 1 and str(error).count("LimitExceeded") == 1
    assert error.to_dict()["limit"] == "nesting"


def test_saved_scripts_calling_themselves_past_the_bound_fail_once_naming_the_nesting_limit(sb):
    error = failure(sb, "return await actions.scripts.again(0)", 0)
    assert error.limit == "nesting"
    assert str(error).count("ActionError") == 1 and str(error).count("nesting:") == 1


def test_an_action_failure_of_its_own_has_no_limit(sb):
    assert failure(sb, "return await actions.fails('no')").limit is None


@settings(max_examples=scaled(10), deadline=None)
@given(
    depth=st.integers(min_value=0, max_value=6),
    why=st.text(max_size=40).filter(lambda t: "\n" not in t and "\r" not in t),
    action=st.sampled_from(["passes_on", "passes_on_plainly"]),
)
def test_a_failure_passed_on_through_nested_scripts_reads_as_the_innermost_one_at_any_depth(sb, depth, why, action):
    error = failure(sb, f"return await actions.{action}(ctx.input)", [depth, why])
    assert error.message == (f"ValueError: {why}" if why else "ValueError")
    assert error.limit is None
    assert depth < MAX_NESTING
