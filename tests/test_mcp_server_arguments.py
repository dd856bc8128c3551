"""The sandbox's MCP server takes only the arguments its tools declare, and no call approves by omission.

A real server (``python -m jupyter_sandbox.mcp --allow-approvals``) over stdio, driven by the SDK's client: a
``resume_run`` without ``answers``, or with it misspelt (``answer``, ``Answers``), is an error result, the run
stays paused, and the approved action (``tests.mcp_actions:gated``, which logs each run) never runs.
"""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp_portal import served

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``call(tool, arguments)`` on a server that may approve, its tools, and the log of ``gate``'s runs."""
    folder = tmp_path_factory.mktemp("mcp")
    options = ["--allow-approvals", "--allow-rollback", "--allow-save", "--actions", "tests.mcp_actions:gated"]
    env = {"GATE_LOG": str(folder / "gate.log")}
    with served(folder, *options, "--no-scheduler", env=env) as (call, tools):
        call.gate_log = folder / "gate.log"  # type: ignore[attr-defined]
        call.tools = tools  # type: ignore[attr-defined]
        yield call


def _paused(server) -> str:
    paused = server("run_script", {"script": "return await actions.gate(1)"})
    assert paused.structured_content["status"] == "paused"
    return paused.structured_content["run_id"]


def _not_approved(server, run_id: str, outcome) -> None:
    assert outcome.is_error, outcome
    assert server("get_run", {"run_id": run_id}).structured_content["status"] == "paused"
    assert not server.gate_log.exists() or server.gate_log.read_text() == ""


def test_resume_run_without_answers_is_refused_and_never_approves(server):
    run_id = _paused(server)
    outcome = server("resume_run", {"run_id": run_id})
    _not_approved(server, run_id, outcome)
    assert "answers" in outcome.content[0].text and "required" in outcome.content[0].text.lower()


def test_resume_run_with_answer_misspelt_as_a_rejection_is_refused_and_never_approves(server):
    run_id = _paused(server)
    outcome = server("resume_run", {"run_id": run_id, "answer": False})
    _not_approved(server, run_id, outcome)
    assert "answer" in outcome.content[0].text


_keys = st.text(min_size=1, max_size=12).filter(lambda k: k not in ("run_id", "answers"))
_values = st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.lists(st.booleans(), max_size=2)


@settings(max_examples=scaled(15), suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(key=_keys, value=_values | st.dictionaries(st.text(max_size=5), _values, max_size=2))
@example(key="answer", value=False)
@example(key="Answers", value=False)
@example(key="answer", value={"note": 1})
def test_resume_run_with_any_misspelt_key_is_refused_whatever_its_value_and_never_approves(server, key, value):
    run_id = _paused(server)
    _not_approved(server, run_id, server("resume_run", {"run_id": run_id, key: value}))


def test_every_tool_of_the_server_declares_that_it_takes_no_other_argument(server):
    assert {t.name for t in server.tools} >= {"run_script", "resume_run", "rollback_run", "save_script"}
    for tool in server.tools:
        assert tool.input_schema.get("additionalProperties") is False, tool.name
        defaults = {k: p.get("default") for k, p in tool.input_schema.get("properties", {}).items()}
        assert True not in defaults.values(), tool.name  # no parameter decides anything by being left out


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("run_script", {"script": "return 1", "inptu": 2}),
        ("get_run", {"run_id": "r-x", "verbose": True}),
        ("list_runs", {"staus": "paused"}),
        ("describe_actions", {"qeury": "gate"}),
        ("rollback_run", {"run_id": "r-x", "reasn": "oops"}),
        ("list_scripts", {"all": True}),
        ("save_script", {"name": "s", "script": "return 1", "descripton": "d"}),
    ],
)
def test_every_tool_refuses_an_argument_it_does_not_declare(server, tool, arguments):
    outcome = server(tool, arguments)
    assert outcome.is_error and "Extra inputs are not permitted" in outcome.content[0].text


def test_resume_run_with_answers_true_still_approves(server):
    run_id = _paused(server)
    done = server("resume_run", {"run_id": run_id, "answers": True}).structured_content
    assert done["status"] == "completed" and done["output"] == 1
    assert server.gate_log.read_text() == "1\n"
    server.gate_log.unlink()


def test_resume_run_with_answers_null_is_refused_as_no_decision_and_never_approves(server):
    run_id = _paused(server)
    outcome = server("resume_run", {"run_id": run_id, "answers": None})
    _not_approved(server, run_id, outcome)
    assert outcome.structured_content["status"] == "paused" and outcome.structured_content["pending"]
    assert outcome.structured_content["error"]["name"] == "RunStateError"
    assert "None (JSON null) does not answer the approval of 'gate'" in outcome.content[0].text


def test_resume_run_with_answers_null_takes_up_a_run_no_interrupt_holds_and_any_other_answer_is_refused(server):
    parked = server("run_script", {"script": "await ctx.sleep(3600000); return 1"}).structured_content
    assert parked["status"] == "parked"
    refused = server("resume_run", {"run_id": parked["run_id"], "answers": True})
    assert refused.is_error and refused.structured_content["error"]["name"] == "UnaddressedAnswer"
    assert refused.structured_content["status"] == "parked"
    again = server("resume_run", {"run_id": parked["run_id"], "answers": None})  # resumed: it parks again
    assert not again.is_error and again.structured_content["status"] == "parked", again
