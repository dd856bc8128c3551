"""MCP both ways, with real servers over stdio: tools of MCP servers as actions (``sb.mcp``), and the sandbox
as an MCP server (``python -m jupyter_sandbox.mcp``) driven by the SDK's own client.

The servers are ``tests/mcp_servers/files.py`` (written with the SDK's server API), one process per name;
each records the calls that reach it in ``$MCP_CALL_LOG`` as ``NAME PID TOOL``. Not covered here: a server whose
tools change while it runs (the actions are registered from the list read when `sb.mcp` starts it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, ImageContent, Implementation, TextContent, Tool, ToolAnnotations
from pace import bound

from jupyter_sandbox import ActionError, Sandbox, SandboxInterrupt
from jupyter_sandbox.agents.catalog import ActionSpec
from jupyter_sandbox.agents.mcp_client import ToolFailed
from jupyter_sandbox.agents.mcp_tools import needs_approval, result_value
from jupyter_sandbox.agents.search import matching
from jupyter_sandbox.errors import RegistrationError, SandboxError, ServerFailed

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
SERVER = str(ROOT / "tests" / "mcp_servers" / "files.py")


def _command(name: str) -> list[str]:
    return [sys.executable, SERVER, name]


def _calls(log: Path) -> list[tuple[str, int, str]]:
    if not log.exists():
        return []
    return [(n, int(pid), tool) for n, pid, tool in (line.split() for line in log.read_text().splitlines())]


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mcp") / "calls.log"


@pytest.fixture(scope="module")
def two(log):
    """A sandbox with two servers, `files` and `notes`."""
    sb = Sandbox()
    for name in ("files", "notes"):
        sb.mcp(name, _command(name), env={"MCP_CALL_LOG": str(log)})
    yield sb
    sb.close()


# -- tools as actions -------------------------------------------------------------------------------------


def test_a_script_calls_two_servers_tools_in_promise_all(two):
    out = two.eval(
        "return await Promise.all([actions.files.read_file({path: '/readme.txt'}), "
        "ctx.call('notes.read_file', {path: '/readme.txt'})])"
    ).output
    assert [o["text"] for o in out] == ["hello from files", "hello from notes"]


def test_concurrent_calls_to_one_server_are_in_flight_together(two):
    # `meet` answers only once three calls are in the server at the same time (else it fails after 20 s)
    out = two.eval("return await Promise.all([1, 2, 3].map(() => actions.notes.meet({count: 3})))").output
    assert len(out) == 3


def test_structured_content_is_the_result_and_text_otherwise(two):
    out = two.eval(
        "return [await actions.files.read_file({path: '/readme.txt'}), await actions.files.sleep({seconds: 0})]"
    ).output
    assert out[0] == {"path": "/readme.txt", "text": "hello from files", "size": 16}
    assert out[1] == {"result": "slept 0.0"}  # the SDK wraps a str return as {"result": ...}


def test_a_tool_schema_feeds_the_declarations_and_a_query_keeps_the_matches(two):
    text = two.declarations(query="read")
    body = text[text.index("declare const actions") : text.index("// The script's world")]
    assert "files: {" in body and "notes: {" in body
    assert (
        "read_file(input: { path: string }, options?: CallOptions): Promise<{ path: string; text: string; "
        "size: number }>" in body
    )
    assert "write_file" not in body and "sleep" not in body


def test_an_input_that_does_not_fit_the_tool_schema_never_reaches_the_server(two, log):
    before = len(_calls(log))
    out = two.eval("try { await actions.files.read_file({path: 3}) } catch (e) { return [e.message, e.issues] }")
    assert out.output[1] == [{"path": "$.path", "message": "3 is not of type 'string'"}]
    assert len(_calls(log)) == before


def test_an_is_error_result_is_an_action_error_carrying_its_text(two):
    out = two.eval("try { await actions.files.fail({reason: 'disk full'}) } catch (e) { return [e.name, e.message] }")
    assert out.output[0] == "ActionError"
    assert out.output[1].startswith("ToolFailed: files.fail: ") and "it failed: disk full" in out.output[1]


def test_a_protocol_error_is_an_action_error_naming_server_and_tool_and_keeps_the_server(two, log):
    out = two.eval("try { await actions.files.refuse({why: 'no'}) } catch (e) { return [e.name, e.message] }")
    assert out.output[0] == "ActionError"
    assert "MCP server 'files', tool 'refuse': protocol error -32602: refused: no" in out.output[1]
    two.eval("return await actions.files.read_file({path: '/readme.txt'})")
    pids = [pid for n, pid, t in _calls(log) if n == "files"]
    assert pids[-1] == pids[-2]  # the same process answered the next call


def test_a_destructive_tool_pauses_for_approval_with_server_and_annotations(two, log):
    with pytest.raises(SandboxInterrupt) as paused:
        two.eval("return await actions.files.write_file({path: '/a.txt', text: 'hi'})")
    data = paused.value.interrupts[0].data
    assert data["server"] == "files" and data["tool"] == "write_file"
    assert data["annotations"]["read_only"] is False and data["annotations"]["destructive"] is True
    assert ("files", "write_file") not in [(n, t) for n, _, t in _calls(log)]  # not called before approval
    assert two.resume(paused.value.run_id, True).output == {"result": "wrote 2 characters to /a.txt"}


def test_an_approval_with_an_edited_input_is_checked_against_the_tool_schema(two, log):
    with pytest.raises(SandboxInterrupt) as paused:
        two.eval(
            "try { return await actions.files.write_file({path: '/b.txt', text: 'hi'}) } catch (e) { return e.issues }"
        )
    before = len(_calls(log))
    out = two.resume(paused.value.run_id, {"approved": True, "input": {"path": 3, "text": "hi"}}).output
    assert out == [{"path": "$.path", "message": "3 is not of type 'string'"}]
    assert len(_calls(log)) == before  # the edited call never reached the server


def test_a_read_only_tool_runs_without_approval(two):
    assert two.actions["files.read_file"].approval is False
    assert two.actions["files.write_file"].approval is True


ANNOTATIONS = st.one_of(
    st.none(),
    st.builds(
        ToolAnnotations,
        read_only_hint=st.one_of(st.none(), st.booleans()),
        destructive_hint=st.one_of(st.none(), st.booleans()),
    ),
)


@given(
    annotations=ANNOTATIONS,
    override=st.one_of(st.none(), st.booleans(), st.dictionaries(st.sampled_from(["t", "u"]), st.booleans())),
)
def test_approval_follows_the_annotations_with_the_specs_defaults_unless_the_user_decides(annotations, override):
    tool = Tool(name="t", input_schema={"type": "object"}, annotations=annotations)
    read_only = bool(annotations and annotations.read_only_hint)
    destructive = annotations is None or annotations.destructive_hint is None or annotations.destructive_hint
    expected = not read_only and destructive
    if isinstance(override, bool):
        expected = override
    elif isinstance(override, dict) and "t" in override:
        expected = override["t"]
    assert needs_approval(tool, override) is expected


TEXT = st.builds(TextContent, type=st.just("text"), text=st.text(max_size=20))
IMAGE = st.builds(ImageContent, type=st.just("image"), data=st.just("AA=="), mime_type=st.just("image/png"))


@given(
    content=st.lists(st.one_of(TEXT, IMAGE), max_size=4),
    structured=st.one_of(st.none(), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)),
    error=st.booleans(),
)
def test_the_result_is_structured_content_else_the_text_and_is_error_raises_the_text(content, structured, error):
    result = CallToolResult(content=content, structured_content=structured, is_error=error)
    texts = [c.text for c in content if isinstance(c, TextContent)]
    if error:
        with pytest.raises(ToolFailed) as failed:
            result_value("s", "t", result)
        assert str(failed.value).startswith("s.t: ") and all(t in str(failed.value) for t in texts)
    elif structured is not None:
        assert result_value("s", "t", result) == structured
    elif len(texts) == len(content):
        assert result_value("s", "t", result) == "\n".join(texts)
    else:  # an image too: the blocks as the protocol has them
        assert [b["type"] for b in result_value("s", "t", result)] == [c.type for c in content]


WORDS = st.sampled_from(["read", "file", "write", "mail", "x"])


@given(names=st.lists(st.tuples(WORDS, WORDS), min_size=1, max_size=6, unique=True), query=st.lists(WORDS, max_size=3))
def test_a_query_keeps_exactly_the_actions_whose_name_or_description_has_one_of_its_words(names, query):
    specs = [ActionSpec(f"{a}_{i}", f"about {b}") for i, (a, b) in enumerate(names)]
    found = matching(specs, " ".join(query))
    if not query:
        assert found == specs
        return
    expected = {s.name for s in specs if any(w in s.name or w in (s.description or "") for w in query)}
    assert {s.name for s in found} == expected


# -- failures: crash, hang, and a server gone between pause and resume ------------------------------------------


FRAGILE_TIMEOUT = round(bound(1.0))  # 3 s on an idle machine: every call but the hung one answers within it


@pytest.fixture(scope="module")
def fragile(log):
    sb = Sandbox()
    sb.mcp("fragile", _command("fragile"), env={"MCP_CALL_LOG": str(log)}, timeout=FRAGILE_TIMEOUT)
    yield sb
    sb.close()


def test_a_server_that_crashes_is_an_action_error_with_its_stderr_and_the_next_call_restarts_it(fragile, log):
    out = fragile.eval("try { await actions.fragile.crash() } catch (e) { return e.message }").output
    assert "MCP server 'fragile' exited during crash" in out
    assert "fragile: about to crash" in out  # its stderr
    again = fragile.eval("return await actions.fragile.read_file({path: '/readme.txt'})").output
    assert again["text"] == "hello from fragile"
    pids = [pid for n, pid, t in _calls(log) if n == "fragile"]
    assert pids[-1] != pids[0]


def test_a_server_that_hangs_is_an_action_error_at_its_timeout_and_the_next_call_restarts_it(fragile, log):
    out = fragile.eval("try { await actions.fragile.sleep({seconds: 60}) } catch (e) { return e.message }").output
    assert f"MCP server 'fragile' did not answer sleep within {FRAGILE_TIMEOUT:g} s" in out
    hung = [pid for n, pid, t in _calls(log) if n == "fragile" and t == "sleep"][-1]
    assert fragile.eval("return await actions.fragile.read_file({path: '/readme.txt'})").output["size"] == 18
    assert [pid for n, pid, t in _calls(log) if n == "fragile"][-1] != hung


def test_a_run_resumes_after_its_server_was_killed_and_replayed_calls_do_not_reach_it(tmp_path):
    log = tmp_path / "calls.log"
    sb = Sandbox(tmp_path / "runs.sqlite")
    try:
        sb.mcp("files", _command("files"), env={"MCP_CALL_LOG": str(log)})
        with pytest.raises(SandboxInterrupt) as paused:
            sb.eval(
                "const page = await actions.files.read_file({path: '/readme.txt'});\n"
                "return await actions.files.write_file({path: '/copy.txt', text: page.text});"
            )
        [(_, first, _)] = _calls(log)
        os.kill(first, signal.SIGKILL)
        time.sleep(0.5)  # the server is gone before the resume (a call after a pause pings an idle server)
        assert sb.resume(paused.value.run_id, True).output == {"result": "wrote 16 characters to /copy.txt"}
        calls = _calls(log)
        assert [t for _, _, t in calls] == ["read_file", "write_file"]  # read_file was replayed, not called
        assert calls[1][1] != first
    finally:
        sb.close()


# -- the sandbox as an MCP server --------------------------------------------------------------------------


def _serve(store: Path, *flags: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        cwd=str(ROOT),
        args=["-m", "jupyter_sandbox.mcp", "--store", str(store), "--actions", "tests.mcp_actions:register", *flags],
    )


def test_an_mcp_client_sees_paused_then_completed_after_an_approval_from_another_sandbox(tmp_path):
    store = tmp_path / "runs.sqlite"
    seen = {}

    async def client() -> None:
        async with (
            stdio_client(_serve(store), errlog=open(tmp_path / "err", "w")) as (r, w),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            seen["tools"] = sorted(tools)
            seen["description"] = tools["run_script"].description
            paused = await session.call_tool(
                "run_script",
                {
                    "script": "const n = await actions.add({a: 2, b: 3});\n"
                    "return await actions.send_email({to: 'ann@example.com', body: `sum ${n}`});"
                },
            )
            seen["paused"] = paused.structured_content
            run_id = paused.structured_content["run_id"]
            with Sandbox(store) as notebook:  # a human approves in a notebook on the same store
                from tests.mcp_actions import register

                register(notebook)
                notebook.resume(run_id, True)
            seen["after"] = (await session.call_tool("get_run", {"run_id": run_id})).structured_content
            seen["runs"] = (await session.call_tool("list_runs", {})).structured_content
            again = await session.call_tool(
                "run_script", {"script": "return await actions.send_email({to: 'bo@example.com', body: 'hi'})"}
            )
            seen["again_id"] = again.structured_content["run_id"]
            resumed = await session.call_tool("resume_run", {"run_id": seen["again_id"], "answers": True})
            seen["resumed"], seen["resumed_text"] = resumed.structured_content, resumed.content[0].text
            described = await session.call_tool("describe_actions", {"query": "email"})
            seen["described"] = described.content[0].text

    anyio.run(client)
    assert seen["tools"] == ["describe_actions", "get_run", "list_runs", "resume_run", "run_script"]
    assert "send_email(input: { to: string; body: string }" in seen["description"]
    assert seen["paused"]["status"] == "paused"
    assert seen["paused"]["pending"][0]["data"]["input"] == {"to": "ann@example.com", "body": "sum 5"}
    assert seen["after"]["status"] == "completed"
    assert seen["after"]["output"] == {"sent": True, "to": "ann@example.com"}
    assert seen["runs"]["result"][0]["status"] == "completed"
    # The client cannot approve its own call: the result says where a human approves, and nothing ran.
    assert seen["resumed"]["status"] == "paused" and seen["resumed"]["output"] is None
    refused = seen["resumed_text"]
    assert "waits for a human's approval" in refused and "--allow-approvals" in refused
    assert f"%sandbox resume {seen['again_id']}" in refused
    assert "resume_run does not approve" in seen["description"]
    assert "send_email" in seen["described"] and "add(" not in seen["described"]


@contextlib.asynccontextmanager
async def _served(tmp_path: Path, *options: str) -> Any:
    """A client session with the sandbox's MCP server over a store in ``tmp_path``."""
    params = _serve(tmp_path / "runs.sqlite")
    params.args.extend(options)
    async with stdio_client(params, errlog=open(tmp_path / "err", "w")) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        yield session


def test_an_mcp_server_started_with_allow_approvals_answers_and_records_the_client(tmp_path):
    store = tmp_path / "runs.sqlite"

    async def client() -> dict:
        async with (
            stdio_client(_serve(store, "--allow-approvals"), errlog=open(tmp_path / "err", "w")) as (r, w),
            ClientSession(r, w, client_info=Implementation(name="claude-desktop", version="1")) as session,
        ):
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            paused = await session.call_tool(
                "run_script", {"script": "return await actions.send_email({to: 'bo@example.com', body: 'hi'})"}
            )
            run_id = paused.structured_content["run_id"]
            done = await session.call_tool("resume_run", {"run_id": run_id, "answers": True})
            got = await session.call_tool("get_run", {"run_id": run_id})
            return {
                "done": done.structured_content,
                "got": got.structured_content,
                "run_id": run_id,
                "description": tools["run_script"].description,
            }

    out = anyio.run(client)
    assert out["done"]["status"] == "completed" and out["done"]["output"]["to"] == "bo@example.com"
    assert "resume_run does not approve" not in out["description"]
    with Sandbox(store) as sb:
        [answer] = [e for e in sb.run(out["run_id"]).entries if e["kind"] == "answer"]
    assert answer["via"] == "mcp:claude-desktop" and answer["approved"] is True
    [reported] = out["got"]["answers"]  # get_run says who approved
    assert (reported["via"], reported["approved"], reported["name"]) == ("mcp:claude-desktop", True, "send_email")


def test_get_run_of_an_unknown_run_is_a_failed_result_not_a_crash(tmp_path):
    async def client() -> dict:
        async with _served(tmp_path) as session:
            result = await session.call_tool("get_run", {"run_id": "r-nope"})
            return {"is_error": result.is_error, **result.structured_content}

    out = anyio.run(client)
    assert out["is_error"] is True and out["status"] == "failed"
    assert "r-nope" in out["error"]["message"]


def test_a_large_catalog_is_named_in_run_script_and_declared_by_describe_actions():
    from jupyter_sandbox.agents.tool import SandboxTool
    from jupyter_sandbox.mcp import HUMAN_APPROVES, run_script_description

    sb = Sandbox()
    for i in range(5):
        sb.action(lambda x: x, name=f"tool_{i}")
    tool = SandboxTool(sb, "run_script")
    assert run_script_description(sb, tool, limit=5, allow_approvals=True) == tool.description
    assert run_script_description(sb, tool, limit=5) == tool.description + "\n" + HUMAN_APPROVES + "\n"
    short = run_script_description(sb, tool, limit=4)
    assert "tool_0, tool_1, tool_2, tool_3, tool_4" in short and "describe_actions" in short
    assert "declare const actions" not in short


# -- %sandbox mcp ----------------------------------------------------------------------------------------------


def test_the_magic_adds_a_server_and_lists_its_tools_with_their_approval(tmp_path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output

    import jupyter_sandbox
    from jupyter_sandbox.notebook import session

    monkeypatch.chdir(tmp_path)
    start_ipython()
    shell = InteractiveShell.instance()
    session.close_session()
    jupyter_sandbox.load_ipython_extension(shell)
    with capture_output() as added:  # the words after -- are the command's, -u included
        shell.run_line_magic("sandbox", f"mcp add shelf --approval all -- {sys.executable} -u {SERVER} shelf")
    assert "MCP server 'shelf': 7 tools as actions" in added.stdout
    sb = jupyter_sandbox.default_sandbox()
    assert sb.actions["shelf.read_file"].approval is True  # --approval all
    with capture_output() as listed:
        shell.run_line_magic("sandbox", "mcp list")
    text = listed.stdout + "".join(o.data.get("text/plain", "") for o in listed.outputs)
    assert "shelf.read_file" in text and "approval: yes" in text
    sb.close()
    session.close_session()


def test_a_run_parked_under_the_mcp_server_wakes_by_itself_and_every_tool_says_its_status_alike(tmp_path):
    seen: dict[str, Any] = {}

    async def client() -> None:
        async with _served(tmp_path) as session:
            parked = await session.call_tool("run_script", {"script": "await ctx.sleep(1500); return 'woke'"})
            seen["parked"] = parked.structured_content
            seen["parked_text"] = parked.content[0].text
            run_id = parked.structured_content["run_id"]
            for _ in range(600):  # only bounds a hang: the server's own scheduler must wake the run
                now = (await session.call_tool("get_run", {"run_id": run_id})).structured_content
                if now["status"] not in ("parked", "running"):
                    break
                await anyio.sleep(0.1)
            seen["woken"] = now
            paused = await session.call_tool(
                "run_script", {"script": "return await actions.send_email({to: 'a', body: 'b'})"}
            )
            seen["paused"] = paused.structured_content["status"]
            seen["listed"] = (await session.call_tool("list_runs", {})).structured_content["result"]
            seen["filtered"] = (await session.call_tool("list_runs", {"status": "paused"})).structured_content["result"]
            seen["unknown"] = await session.call_tool("list_runs", {"status": "pased"})

    anyio.run(client)
    assert seen["parked"]["status"] == "parked" and "goes on by itself" in seen["parked_text"]
    assert (seen["woken"]["status"], seen["woken"]["output"]) == ("completed", "woke")
    assert seen["paused"] == "paused"
    assert [r["status"] for r in seen["listed"]] == ["paused", "completed"]
    assert [r["status"] for r in seen["filtered"]] == ["paused"]
    assert seen["unknown"].is_error and "no run status 'pased'" in seen["unknown"].content[0].text


def test_without_its_scheduler_the_mcp_server_says_a_worker_must_wake_a_parked_run(tmp_path):
    async def client() -> str:
        async with _served(tmp_path, "--no-scheduler") as session:
            parked = await session.call_tool("run_script", {"script": "await ctx.sleep(60000); return 1"})
            got = await session.call_tool("get_run", {"run_id": parked.structured_content["run_id"]})
            return parked.content[0].text + got.content[0].text

    text = anyio.run(client)
    assert text.count("jupyter-sandbox worker") == 2


def test_a_sandbox_owns_the_servers_it_started_and_closing_it_stops_them(tmp_path):
    log = tmp_path / "calls.log"
    sb = Sandbox()
    sb.mcp("files", _command("files"), env={"MCP_CALL_LOG": str(log)})
    assert sb.eval("return (await actions.files.read_file({path: '/readme.txt'})).size").output > 0
    [pid] = {pid for _, pid, _ in _calls(log)}
    assert list(sb.mcp_servers) == ["files"] and sb.mcp_servers["files"].command == _command("files")
    sb.close()
    assert sb.mcp_servers == {}
    deadline = time.monotonic() + bound(10)
    while _alive(pid):
        assert time.monotonic() < deadline, f"the server (pid {pid}) outlived its sandbox"
        time.sleep(0.05)


def test_a_scripts_tool_call_is_awaited_on_the_engines_own_thread_with_no_hop(two, monkeypatch):
    import threading

    threads = []
    original = ClientSession.call_tool

    async def recorded(self, *args, **kwargs):
        threads.append(threading.current_thread().name)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(ClientSession, "call_tool", recorded)
    two.eval(
        "await actions.files.read_file({path: '/readme.txt'}); await actions.notes.read_file({path: '/readme.txt'})"
    )
    assert threads == ["jupyter-sandbox-engine"] * 2


def test_the_sdks_transport_is_used_as_published_and_each_server_records_its_own_process_id(two, log):
    from mcp.client import stdio

    assert not hasattr(stdio._create_platform_compatible_process, "_jupyter_sandbox")  # not replaced
    two.eval("await actions.files.read_file({path: '/readme.txt'})")
    served = {pid for name, pid, _ in _calls(log) if name == "files"}
    [pid] = two.mcp_servers["files"]._conn.pids
    assert pid in served and _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


# -- client hygiene: names, re-registering, processes ------------------------------------------------------

NAMED = str(ROOT / "tests" / "mcp_servers" / "named.py")


def _named(*tools: str) -> list[str]:
    return [sys.executable, NAMED, *tools]


@pytest.mark.parametrize("tools", [("a-b", "a_b"), ("a.b", "a_b", "ok"), ("x y", "x-y")])
def test_two_tools_that_become_one_action_name_are_an_error_naming_both(sb, tools):
    with pytest.raises(RegistrationError) as error:
        sb.mcp("raw", _named(*tools))
    first, second = [t for t in tools if t != "ok"][:2]
    assert repr(first) in str(error.value) and repr(second) in str(error.value)
    assert not [name for name in sb.actions if name.startswith("raw.")]
    assert isinstance(error.value, SandboxError)


def test_registering_a_server_again_replaces_its_whole_set_of_tools(sb):
    sb.mcp("raw", _named("old_one", "both"))
    sb.mcp("raw", _named("both", "new_one"))
    assert sorted(n for n in sb.actions if n.startswith("raw.")) == ["raw.both", "raw.new_one"]
    assert sb.eval("return await actions.raw.both({text: 'hi'})").output == {"result": "both: hi"}
    with pytest.raises(ActionError, match="no action named"):
        sb.eval("await actions.raw.old_one({})")


def _wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + bound(30)  # only bounds a hang: a killed process is gone at once
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _assert_gone(pid: int) -> None:
    try:
        assert _wait_gone(pid), f"the server's process {pid} is still running"
    finally:  # a failure must not leave a stubborn server on the machine
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def test_a_hung_server_is_killed_when_its_call_times_out(tmp_path):
    log = tmp_path / "calls"
    with Sandbox() as sb:
        sb.mcp("files", _command("files"), env={"MCP_CALL_LOG": str(log)}, timeout=2)
        with pytest.raises(ActionError, match="did not answer"):
            sb.eval("await actions.files.sleep({seconds: 3600})")
        assert _wait_gone(_calls(log)[0][1])


def test_no_server_process_outlives_the_process_even_hung(tmp_path):
    log = tmp_path / "calls"
    program = f"""
import sys, threading, time
from jupyter_sandbox import Sandbox
sb = Sandbox()
sb.mcp("raw", {_named("stubborn")!r}, env={{"MCP_CALL_LOG": {str(log)!r}}})
threading.Thread(target=lambda: sb.eval("await actions.raw.stubborn({{}})"), daemon=True).start()
while "stubborn" not in open({str(log)!r}).read():
    time.sleep(0.05)
sys.exit(0)  # no close(): the server hangs in a call, deaf to SIGTERM and to its stdin closing
"""
    log.write_text("")
    subprocess.run([sys.executable, "-c", program], check=True, timeout=300, cwd=str(ROOT))
    pid = int(log.read_text().split()[0])
    _assert_gone(pid)


def test_a_stubborn_server_is_killed_by_close(tmp_path):
    log = tmp_path / "calls"
    sb = Sandbox()
    sb.mcp("raw", _named("stubborn"), env={"MCP_CALL_LOG": str(log)}, timeout=2)
    with pytest.raises(ActionError, match="did not answer"):
        sb.eval("await actions.raw.stubborn({})")
    pid = int(log.read_text().split()[0])
    sb.close()
    _assert_gone(pid)


def test_no_server_process_outlives_a_killed_process(tmp_path):
    log = tmp_path / "calls"
    program = f"""
import time
from jupyter_sandbox import Sandbox
sb = Sandbox()
sb.mcp("raw", {_named("stubborn")!r}, env={{"MCP_CALL_LOG": {str(log)!r}}})
sb.eval("await actions.raw.stubborn({{}})")
"""
    log.write_text("")
    parent = subprocess.Popen([sys.executable, "-c", program], cwd=str(ROOT))
    try:
        for _ in range(3000):  # only bounds a hang
            if "stubborn" in log.read_text() or parent.poll() is not None:
                break
            time.sleep(0.05)
        pid = int(log.read_text().split()[0])
    finally:
        parent.kill()
        parent.wait()
    _assert_gone(pid)


def test_a_server_that_cannot_start_is_a_sandbox_error(sb):
    with pytest.raises(ServerFailed, match="no program 'no-such-program-here' on PATH") as error:
        sb.mcp("raw", ["no-such-program-here", "x"])
    assert isinstance(error.value, SandboxError)
    assert not [name for name in sb.actions if name.startswith("raw.")]


def test_a_server_program_given_by_path_that_is_missing_is_a_sandbox_error_with_its_stderr(sb, tmp_path):
    with pytest.raises(ServerFailed, match="could not start"):
        sb.mcp("raw", [str(tmp_path / "missing-server")], timeout=5)


def test_a_script_started_by_an_action_in_place_reaches_mcp_from_the_actions_next_call_and_fails_fast_before(
    tmp_path,
):
    sb = Sandbox()
    sb.mcp("files", _command("files"), env={"MCP_CALL_LOG": str(tmp_path / "calls.log")})

    @sb.action
    def lookup(n: int):
        if n < 3:
            return n  # quick: in place from the second call on
        return sb.eval("return await actions.files.read_file({path: '/readme.txt'})").output["text"]

    script = "const a = []; for (let i = 0; i < 5; i++) a.push(await actions.lookup(i)); return a"
    with pytest.raises(ActionError, match="the action runs on a worker from now on"):
        sb.eval(script)  # held by the action, the session's loop cannot serve: said at once, not at a timeout
    assert sb.eval(script).output == [0, 1, 2, "hello from files", "hello from files"]
    sb.close()
