"""The script's world: what a %%sandbox script sees and how its results come back."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_sandbox import ActionError, LintError, ScriptError


def test_return_sets_the_output(sb):
    assert sb.eval("return {answer: 42}").output == {"answer": 42}


def test_top_level_await_works(sb):
    @sb.action
    def double(x):
        return 2 * x

    assert sb.eval("const a = await actions.double(2); return await actions.double(a)").output == 8


def test_actions_proxy_and_ctx_call_are_the_same_call(sb):
    @sb.action
    def echo(x):
        return x

    result = sb.eval("return [await actions.echo(1), await ctx.call('echo', 2, {description: 'two'})]")
    assert result.output == [1, 2]
    assert [e["name"] for e in result.call_log] == ["echo", "echo"]


def test_action_receives_the_scripts_one_argument(sb):
    seen = []

    @sb.action
    def take(payload):
        seen.append(payload)

    sb.eval("await actions.take({to: 'a@b', body: 'hi', list: [1, 2]})")
    assert seen == [{"to": "a@b", "body": "hi", "list": [1, 2]}]


def test_console_levels_are_captured_in_order(sb):
    result = sb.eval(
        "console.log('a', 1); console.info('b'); console.warn('c'); console.error('d'); console.debug({e: true})"
    )
    assert result.console == [
        {"level": "log", "message": "a 1"},
        {"level": "info", "message": "b"},
        {"level": "warn", "message": "c"},
        {"level": "error", "message": "d"},
        {"level": "debug", "message": '{"e":true}'},
    ]


def test_data_written_by_the_script_comes_back(sb):
    assert sb.eval("data.count = 3; data.items = ['x']").data == {"count": 3, "items": ["x"]}


def test_input_is_ctx_input(sb):
    assert sb.eval("return ctx.input.n + 1", input={"n": 41}).output == 42


def test_run_id_is_ctx_run_id(sb):
    result = sb.eval("return ctx.runId")
    assert result.output == result.run_id


def test_text_encoder_and_decoder_are_provided(sb):
    result = sb.eval("const b = new TextEncoder().encode('héllo ✓'); return [b.length, new TextDecoder().decode(b)]")
    assert result.output == [len("héllo ✓".encode()), "héllo ✓"]


def test_plain_and_async_actions_both_work(sb):
    @sb.action
    def plain(x):
        return x + 1

    @sb.action
    async def later(x):
        await asyncio.sleep(0.01)
        return x * 10

    assert sb.eval("return [await actions.plain(1), await actions.later(2)]").output == [2, 20]


def test_a_failing_action_throws_a_catchable_action_error(sb):
    @sb.action
    def boom(_):
        raise ValueError("no route to host")

    result = sb.eval(
        "try { await actions.boom(1) } catch (e) { return [e instanceof ActionError, e.name, e.action, e.message] }"
    )
    assert result.output == [True, "ActionError", "boom", "ValueError: no route to host"]


def test_an_uncaught_action_failure_raises_action_error_naming_the_action(sb):
    @sb.action
    def boom(_):
        raise RuntimeError("down")

    with pytest.raises(ActionError) as info:
        sb.eval("await actions.boom(1)")
    assert info.value.action == "boom"
    assert "RuntimeError: down" in str(info.value)


def test_an_unknown_action_is_an_action_error_listing_the_known_ones(sb):
    @sb.action
    def known(_):
        return 1

    with pytest.raises(ActionError) as info:
        sb.eval("await ctx.call('unknown', 1)")
    assert 'no action named "unknown"' in str(info.value)
    assert "known" in str(info.value)


def test_script_error_has_line_column_stack_and_caret(sb):
    with pytest.raises(ScriptError) as info:
        sb.eval("const a = 1;\nfunction f() {\n  return a.b.c;\n}\nf();")
    error = info.value
    assert (error.name, error.line, error.column) == ("TypeError", 3, 10)
    assert "workflow.js:3:10" in error.stack
    assert "<input>" not in error.stack
    assert error.source_line == "   3 |   return a.b.c;\n     |          ^"


def test_syntax_error_names_its_line(sb):
    with pytest.raises(ScriptError) as info:
        sb.eval("const ok = 1;\nconst = 2;")
    assert info.value.name == "SyntaxError"
    assert info.value.line == 2


def test_lint_runs_before_anything_executes(sb):
    calls = []

    @sb.action
    def side_effect(_):
        calls.append(1)

    with pytest.raises(LintError) as info:
        sb.eval("await actions.side_effect(1);\nconst r = await fetch('http://x');")
    assert info.value.line == 2 and info.value.name == "fetch"
    assert calls == []


@pytest.mark.parametrize(
    "value, problem",
    [
        ("10n", "$.x is a BigInt"),
        ("NaN", "is NaN"),
        ("Infinity", "is Infinity"),
        ("[1, NaN]", "input.x[1] is NaN"),
        ("new Map()", "is a Map"),
        ("'\\ud800'", "lone surrogate"),
    ],
)
def test_non_json_input_is_a_clear_type_error_naming_the_action(sb, value, problem):
    @sb.action
    def take(_):
        return 1

    result = sb.eval(f"try {{ await actions.take({{x: {value}}}); return 'sent' }} catch (e) {{ return e.message }}")
    assert result.output.startswith("actions.take:")
    assert problem.replace("$.", "input.") in result.output


def test_a_cyclic_input_is_reported_as_cyclic(sb):
    @sb.action
    def take(_):
        return 1

    result = sb.eval("const a = {}; a.self = a; try { await actions.take(a) } catch (e) { return e.message }")
    assert "input.self is a cyclic reference" in result.output


@pytest.mark.parametrize(
    "value, problem",
    [
        (object(), "is a object"),
        ({"n": float("nan")}, "$.n is nan"),
        ({"s": "\ud800"}, "lone surrogate"),
        ({"s": {1, 2}}, "$.s is a set"),
    ],
)
def test_a_non_json_result_is_an_action_error_naming_the_action_and_type(sb, value, problem):
    @sb.action
    def bad(_):
        return value

    result = sb.eval("try { await actions.bad(1) } catch (e) { return [e.action, e.message] }")
    assert result.output[0] == "bad"
    assert "the value bad returned is not JSON" in result.output[1]
    assert problem in result.output[1]


def test_tuples_and_nested_values_arrive_as_json(sb):
    @sb.action
    def pair(_):
        return {"pair": (1, 2), "nested": [{"ok": True}]}

    assert sb.eval("return await actions.pair(null)").output == {"pair": [1, 2], "nested": [{"ok": True}]}


def test_a_non_json_return_value_is_a_script_error(sb):
    with pytest.raises(ScriptError) as info:
        sb.eval("return () => 1")
    assert "the script's return value is a function" in str(info.value)


def test_the_same_sandbox_runs_the_next_script_after_an_error(sb):
    with pytest.raises(ScriptError):
        sb.eval("throw new Error('first')")
    assert sb.eval("return 'second'").output == "second"
