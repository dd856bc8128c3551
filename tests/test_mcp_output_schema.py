"""An MCP tool's ``outputSchema`` is the action's output schema, and the product's check enforces it.

A result the schema refuses (structured content that breaks it, or text alone from a tool that declares one)
fails the call as ``InvalidOutput`` with ``issues`` at the value's paths, like any action's; the server is
healthy, so it is neither a ``ServerFailed`` nor restarted. The server is ``tests/mcp_servers/liar.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jupyter_sandbox import ActionError, Sandbox, SandboxInterrupt

pytestmark = pytest.mark.slow
LIAR = [sys.executable, str(Path(__file__).resolve().parent / "mcp_servers" / "liar.py")]
CAUGHT = "try { return {ok: await actions.liar.%s({})} } catch (e) { return {message: e.message, issues: e.issues} }"


def _calls(log: Path) -> list[tuple[int, str]]:
    """The calls that reached a server: its process id and the tool, in order."""
    if not log.exists():
        return []
    return [(int(pid), tool) for pid, tool in (line.split() for line in log.read_text().splitlines())]


@pytest.fixture(scope="module")
def liar(tmp_path_factory):
    log = tmp_path_factory.mktemp("liar") / "calls.log"
    sb = Sandbox()
    sb.mcp("liar", LIAR, env={"MCP_CALL_LOG": str(log)})
    yield sb, log
    sb.close()


def test_structured_content_that_breaks_the_schema_fails_with_issues_and_keeps_the_server(liar):
    sb, log = liar
    starts = sb.mcp_servers["liar"].starts
    out = sb.eval(CAUGHT % "wrong").output
    assert out["issues"] == [{"path": "$.items[1].id", "message": "'two' is not of type 'integer'"}]
    assert out["message"].startswith("liar.wrong returned a value its output_schema refuses: $.items[1].id")
    assert "ServerFailed" not in out["message"]
    assert sb.eval("return await actions.liar.right({})").output == {"n": 1, "items": [{"id": 1}]}
    (wrong_pid, wrong), (right_pid, right) = _calls(log)[-2:]
    assert (wrong, right) == ("wrong", "right") and wrong_pid == right_pid  # the same process answered both
    assert sb.mcp_servers["liar"].starts == starts


def test_an_uncaught_refused_result_reaches_python_as_an_action_error_with_its_issues(liar):
    sb, _ = liar
    with pytest.raises(ActionError) as info:
        sb.eval("return await actions.liar.wrong({})")
    assert info.value.action == "liar.wrong"
    assert info.value.issues == [{"path": "$.items[1].id", "message": "'two' is not of type 'integer'"}]


def test_a_text_only_result_of_a_tool_with_an_output_schema_is_its_text_which_the_schema_refuses(liar):
    sb, _ = liar
    out = sb.eval(CAUGHT % "textonly").output
    assert out["issues"] == [{"path": "$", "message": "'hello' is not of type 'object'"}]
    assert out["message"].startswith("liar.textonly returned a value its output_schema refuses")


def test_structured_content_that_fits_the_schema_is_the_result_unchanged(liar):
    sb, _ = liar
    assert sb.eval(CAUGHT % "right").output == {"ok": {"n": 1, "items": [{"id": 1}]}}


def test_a_replay_after_a_pause_serves_the_recorded_invalid_output_without_calling_the_tool(tmp_path):
    log = tmp_path / "calls.log"
    with Sandbox(tmp_path / "runs.sqlite") as sb:
        sb.mcp("liar", LIAR, env={"MCP_CALL_LOG": str(log)})
        script = "let seen; try { await actions.liar.wrong({}) } catch (e) { seen = e.issues }\n"
        script += "await actions.liar.write({}); return seen"
        with pytest.raises(SandboxInterrupt) as paused:
            sb.eval(script)
        assert [tool for _, tool in _calls(log)] == ["wrong"]
        assert sb.resume(paused.value.run_id, True).output == [
            {"path": "$.items[1].id", "message": "'two' is not of type 'integer'"}
        ]
    assert [tool for _, tool in _calls(log)] == ["wrong", "write"]  # the refused call was replayed from the journal
