"""SandboxTool: the definitions a model receives, and the ToolResult each call gives back."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import anthropic.types as anthropic_types
import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import BaseModel, TypeAdapter

from jupyter_sandbox import Sandbox
from jupyter_sandbox.agents.content import CUT, render, shrink
from jupyter_sandbox.agents.tool import SandboxTool, ToolResult

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)


class Email(BaseModel):
    to: str
    body: str


def register(sb, sent):
    @sb.action(approval=True)
    def send_email(msg: Email) -> dict:
        """Send an email."""
        sent.append(msg.to)
        return {"sent": True}

    @sb.action
    def lookup(name: str) -> list[str]:
        """Look a customer up."""
        return [name.upper()]


@pytest.fixture
def tool(sb):
    sb.sent = []
    register(sb, sb.sent)
    return sb.tool()


def conforms(kind, value):
    """``value`` is a valid ``kind`` (an SDK's TypedDict), with no key the type does not know."""
    return TypeAdapter(kind).validate_python(value) == value


# -- what the model receives ----------------------------------------------------------------------------


def test_the_description_carries_the_declarations(tool):
    assert tool.declarations in tool.description
    assert "send_email(input: { to: string; body: string }" in tool.description


def test_the_parameters_are_a_script_and_an_optional_input(tool):
    assert tool.parameters["required"] == ["script"]
    assert set(tool.parameters["properties"]) == {"script", "input"}


def test_the_openai_chat_definition_is_a_function_tool_param(tool):
    definition = tool.openai()
    assert conforms(ChatCompletionFunctionToolParam, definition)
    assert definition["function"]["name"] == "sandbox"


def test_the_openai_responses_definition_is_a_function_tool_param(tool):
    assert conforms(FunctionToolParam, tool.openai("responses"))


def test_the_anthropic_definition_is_a_tool_param(tool):
    definition = tool.anthropic()
    assert conforms(anthropic_types.ToolParam, definition)
    assert definition["input_schema"] == tool.parameters


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dots.not.allowed"])
def test_a_name_model_apis_refuse_is_refused(sb, name):
    with pytest.raises(ValueError, match="tool name"):
        SandboxTool(sb, name)


def test_an_unknown_action_is_refused_when_the_tool_is_made(sb):
    with pytest.raises(KeyError, match="nope"):
        sb.tool(actions=["nope"])


def test_the_tool_offers_only_the_actions_it_was_given(tool):
    narrow = tool.sandbox.tool("lookup_only", actions=["lookup"])
    assert "lookup(" in narrow.description and "send_email(" not in narrow.description
    result = narrow.run({"script": "return await actions.send_email({to: 'a', body: 'b'})"})
    assert result.status == "failed" and "no action named" in result.content


# -- running ----------------------------------------------------------------------------------------------


def test_a_completed_run_gives_its_output_and_console(tool):
    result = tool.run({"script": "console.log('looking');\nreturn await actions.lookup(ctx.input)", "input": "ada"})
    assert (result.status, result.output) == ("completed", ["ADA"])
    assert 'output:\n["ADA"]' in result.content and "[log] looking" in result.content


def test_arguments_may_come_as_the_json_text_openai_sends(tool):
    assert tool.run(json.dumps({"script": "return 1 + 1"})).output == 2


@pytest.mark.parametrize("arguments", ["{not json", [], {"script": 5}, {"code": "return 1"}])
def test_malformed_arguments_fail_with_a_message_for_the_model(tool, arguments):
    result = tool(arguments)
    assert result.status == "failed" and result.run_id is None
    assert "InvalidArguments" in result.content


def test_an_invalid_input_comes_back_with_its_issues_line_and_excerpt(tool):
    script = "const who = 'ada';\nreturn await actions.send_email({to: who, bdy: 'hi'});"
    result = tool.run({"script": script})
    assert result.status == "failed"
    assert result.error["issues"] == [{"path": "$.body", "message": "Field required"}]
    assert result.error["line"] == 2
    assert "- $.body: Field required" in result.content
    assert ">    2 | return await actions.send_email({to: who, bdy: 'hi'});" in result.content
    assert tool.sandbox.sent == []


def test_a_script_error_comes_back_with_its_kind_line_and_caret(tool):
    result = tool.run({"script": "const x = {};\nreturn x.a.b;"})
    assert "error: TypeError: cannot read property 'b' of undefined" in result.content
    assert ">    2 | return x.a.b;" in result.content and "^" in result.content


def test_a_lint_error_names_what_the_sandbox_lacks(tool):
    result = tool.run({"script": "await fetch('https://example.com')"})
    assert result.status == "failed" and "`fetch`" in result.content and ">    1 |" in result.content


def test_an_approval_pauses_with_its_pending_interrupt(tool):
    result = tool.run({"script": "return await actions.send_email({to: 'ada', body: 'hi'})"})
    assert result.status == "paused"
    assert result.pending == [
        {
            "id": f"{result.run_id}:0",
            "name": "send_email",
            "approval": True,
            "data": {"action": "send_email", "input": {"to": "ada", "body": "hi"}},
        }
    ]
    assert "Do not run the script again" in result.content
    assert tool.sandbox.sent == []


def test_resume_approves_and_completes_with_each_action_run_once(tool):
    script = "const [n] = await actions.lookup('ada');\nreturn await actions.send_email({to: n, body: 'hi'})"
    paused = tool.run({"script": script})
    done = tool.resume(paused.run_id, {paused.pending[0]["id"]: True})
    assert (done.status, done.output, tool.sandbox.sent) == ("completed", {"sent": True}, ["ADA"])


def test_resume_without_an_answer_approves_nothing_and_the_run_asks_again(tool):
    paused = tool.run({"script": "return await actions.send_email({to: 'a', body: 'b'})"})
    again = tool.resume(paused.run_id)
    assert (again.status, again.pending, tool.sandbox.sent) == ("paused", paused.pending, [])
    assert again.answers == []


@pytest.mark.parametrize("answer", [None, "no", {"r-nope:9": True}])
def test_a_refused_answer_reports_the_run_still_paused_with_the_refusal_as_its_error(tool, answer):
    paused = tool.run({"script": "return await actions.send_email({to: 'a', body: 'b'})"})
    refused = tool.resume(paused.run_id, answer)
    assert (refused.status, refused.pending, tool.sandbox.sent) == ("paused", paused.pending, [])
    assert refused.error["name"] in ("RunStateError", "UnaddressedAnswer")
    assert refused.error["message"] in refused.content and "status: paused" in refused.content
    assert tool.result(paused.run_id).status == "paused" and tool.sandbox.status(paused.run_id) == "paused"


def test_a_rejection_reaches_the_script_as_an_action_error(tool):
    script = "try { return await actions.send_email({to: 'a', body: 'b'}); } catch (e) { return e.message; }"
    paused = tool.run({"script": script})
    done = tool.resume(paused.run_id, {"approved": False, "reason": "not today"})
    assert done.output == "send_email was rejected: not today"


def test_result_reads_a_run_answered_elsewhere(tool):
    paused = tool.run({"script": "return await actions.send_email({to: 'a', body: 'b'})"})
    assert tool.result(paused.run_id).status == "paused"
    tool.sandbox.resume(paused.run_id, True)  # the card's Approve button does this
    done = tool.result(paused.run_id)
    assert (done.status, done.output) == ("completed", {"sent": True})


def test_result_of_a_failed_run_locates_the_failing_call(tool):
    failed = tool.run({"script": "\n\nawait actions.lookup(5)"})
    again = tool.result(failed.run_id)
    assert again.status == "failed" and again.error["line"] == 3 and again.error["issues"]


def test_another_process_on_the_same_store_resumes_the_paused_call(tmp_path):
    store = tmp_path / "runs.sqlite"
    setup = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_tool import register
        from jupyter_sandbox import Sandbox
        sb = Sandbox({str(store)!r})
        sent = []
        register(sb, sent)
        tool = sb.tool()
    """)
    first = subprocess.run(
        [
            sys.executable,
            "-c",
            setup
            + textwrap.dedent("""
        result = tool.run({"script": "return await actions.send_email({to: 'ada', body: 'hi'})"})
        print(result.status, result.run_id, len(sent))
    """),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    assert first[0] == "paused" and first[2] == "0"
    second = subprocess.run(
        [
            sys.executable,
            "-c",
            setup
            + textwrap.dedent(f"""
        result = tool.resume({first[1]!r}, True)
        print(result.status, len(sent))
    """),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    assert second == ["completed", "1"]


def test_a_tool_result_reads_as_its_content(tool):
    result = tool.run({"script": "return 1"})
    assert isinstance(result, ToolResult) and str(result) == result.content


def test_a_real_sdk_tool_use_block_runs_as_is(tool):
    block = anthropic_types.ToolUseBlock(
        type="tool_use", id="toolu_1", name="sandbox", input={"script": "return await actions.lookup('bo')"}
    )
    assert tool.run(block.input).output == ["BO"]


# -- the content budget -----------------------------------------------------------------------------------


def test_a_huge_output_is_cut_by_structure_with_a_marker(sb):
    tool = sb.tool(budget=2000)
    result = tool.run({"script": "return Array.from({length: 10000}, (_, i) => ({i, text: 'x'.repeat(100)}))"})
    assert len(result.content.encode()) <= 2000
    assert f"{CUT}: " in result.content and "more items]" in result.content
    assert result.output[9999]["i"] == 9999  # the program still has it all


def test_the_console_keeps_its_last_lines(sb):
    tool = sb.tool(budget=1000)
    result = tool.run({"script": "for (let i = 0; i < 500; i++) console.log('line ' + i); return null"})
    assert "line 499" in result.content and "line 0\n" not in result.content
    assert f"{CUT}: " in result.content and "earlier lines]" in result.content


@pytest.mark.parametrize("budget", [100, True, "24k"])
def test_a_budget_too_small_or_not_a_number_is_refused(sb, budget):
    with pytest.raises(ValueError, match="budget"):
        sb.tool(budget=budget)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=30) | st.dictionaries(st.text(max_size=10), inner, max_size=30),
    max_leaves=200,
)


@settings(max_examples=scaled(60))
@given(
    output=json_values,
    console=st.lists(st.text(max_size=800), max_size=60),
    budget=st.integers(500, 5000),
    message=st.text(max_size=3000),
)
def test_content_never_exceeds_its_budget(output, console, budget, message):
    lines = [{"level": "log", "message": m} for m in console]
    for status, error in (("completed", None), ("failed", {"name": "Error", "message": message, "line": 1})):
        text = render(status, "r-1", budget=budget, output=output, console=lines, error=error)
        assert len(text.encode("utf-8")) <= budget
        assert text.startswith(f"status: {status}")


@given(value=json_values, budget=st.integers(40, 3000))
def test_shrunk_json_fits_and_is_json_or_marked(value, budget):
    text = shrink(value, budget)
    assert len(text.encode("utf-8")) <= budget
    try:
        json.loads(text)
    except ValueError:
        assert CUT in text  # cut by length only as the last resort, and then marked


def test_a_sandbox_without_typed_actions_still_makes_a_tool():
    with Sandbox() as sb:
        sb.action(lambda x: x, name="echo")
        assert "echo(input?: unknown, options?: CallOptions): Promise<any>;" in sb.tool().description


def test_a_paused_result_displays_as_its_runs_card_whose_approve_resumes_the_run(tool, capsys):
    from jupyter_sandbox.notebook import tool_card
    from jupyter_sandbox.notebook.cards import cards

    paused = tool.run({"script": "return await actions.send_email({to: 'ada', body: 'hi'})"})
    tool_card.show(paused)
    card = cards()[-1]
    assert card.run_id == paused.run_id
    assert [p["id"] for p in card.doc["pending"]] == [paused.pending[0]["id"]]
    card.approve()
    assert tool.sandbox.sent == ["ada"]
    assert tool.result(paused.run_id).status == "completed"


def test_a_result_without_a_run_displays_as_its_text(tool, capsys):
    from jupyter_sandbox.notebook import tool_card

    tool_card.show(tool.run("{not json"))
    assert "InvalidArguments" in capsys.readouterr().out


def test_the_extension_makes_ipython_display_a_tool_result_as_its_card(tool):
    from types import SimpleNamespace

    from IPython.core.formatters import DisplayFormatter

    from jupyter_sandbox.notebook import tool_card
    from jupyter_sandbox.notebook.cards import cards

    shell = SimpleNamespace(display_formatter=DisplayFormatter())
    tool_card.register(shell)  # what %load_ext jupyter_sandbox does
    paused = tool.run({"script": "return await actions.send_email({to: 'ada', body: 'hi'})"})
    shell.display_formatter.format(paused)
    assert cards()[-1].run_id == paused.run_id


def test_without_the_extension_a_tool_result_prints_as_its_content(tool):
    from IPython.lib.pretty import pretty

    paused = tool.run({"script": "return await actions.send_email({to: 'ada', body: 'hi'})"})
    assert pretty(paused) == paused.content


def test_a_runaway_script_fails_naming_the_limit_and_its_line(sb):
    from jupyter_sandbox import Limits

    tool = sb.tool(limits=Limits(fuel_seconds=0.2))
    result = tool.run({"script": "let i = 0;\nwhile (true) { i++; }"})
    assert result.status == "failed"
    assert result.content.splitlines()[1].startswith("error: LimitExceeded (fuel-exhausted): ")


def test_a_huge_error_message_is_cut_to_the_budget(sb):
    tool = sb.tool(budget=1000)
    result = tool.run({"script": "throw new Error('x'.repeat(1000000))"})
    assert len(result.content.encode()) <= 1000 and f"{CUT}: " in result.content


def test_an_openai_tool_call_runs_from_its_json_arguments(tool):
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {
                                    "name": "sandbox",
                                    "arguments": json.dumps({"script": "return await actions.lookup('cy')"}),
                                },
                            }
                        ],
                    },
                }
            ],
        }
    )
    call = completion.choices[0].message.tool_calls[0]
    assert tool.run(call.function.arguments).output == ["CY"]


@pytest.mark.slow
def test_the_code_mode_benchmark_runs_and_prints_every_row(tmp_path):
    out = tmp_path / "codemode.md"
    run = subprocess.run(
        [sys.executable, "bench/codemode.py", "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parent.parent,
        check=True,
    )
    for row in ("validate + bind + dump, small model", "live call, typed − untyped", "declarations, 100 actions"):
        assert f"| {row} |" in run.stdout
    assert out.read_text(encoding="utf-8") in run.stdout


def test_an_intro_of_ones_own_comes_before_the_declarations(sb):
    tool = sb.tool(intro="Use this to run scripts.\n")
    assert tool.description.startswith("Use this to run scripts.\n\n```typescript\n")
    assert tool.declarations in tool.description
