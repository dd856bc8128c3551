"""Saved scripts: ``sb.save_script`` keeps a script in the store as the action ``scripts.NAME``, a durable child
run, versioned, declared with its schemas, shared by every process on the store."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from code_mode_clients import notebook_shell, with_mcp_server
from examples import scaled
from hypothesis import example, given, settings
from hypothesis import strategies as st
from IPython.utils.capture import capture_output

from jupyter_sandbox import ActionError, LintError, RegistrationError, Sandbox, SandboxInterrupt, ScriptError


def test_a_saved_script_is_an_action_that_runs_as_a_child_run_with_the_calls_input(sb):
    sb.save_script("double", "return ctx.input * 2")
    result = sb.eval("return await actions.scripts.double(21)")
    assert result.output == 42
    child = sb.store.children(result.run_id)[0]
    assert sb.run(child).source == "return ctx.input * 2" and sb.run(child).input == 21


def test_a_saved_script_is_declared_with_its_description_and_schemas(sb):
    sb.save_script(
        "greet",
        "return `hi ${ctx.input.name}`",
        description="Greet someone by name.",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        output_schema=str,
    )
    text = sb.declarations()
    assert "Greet someone by name." in text
    assert "greet(input: { name: string }" in text and "Promise<string>" in text


def test_an_input_that_does_not_fit_the_scripts_schema_never_starts_a_child(sb):
    sb.save_script("double", "return ctx.input * 2", input_schema=int)
    with pytest.raises(ActionError) as failed:
        sb.eval("return await actions.scripts.double('two')")
    assert failed.value.issues and failed.value.issues[0]["path"] == "$"
    assert sb.store.children(sb.runs(limit=1)[0].id) == []


def test_each_save_is_a_new_version_and_a_call_records_the_version_it_ran(sb):
    assert sb.save_script("v", "return 1").version == 1
    first = sb.eval("return await actions.scripts.v()")
    assert sb.save_script("v", "return 2").version == 2
    second = sb.eval("return await actions.scripts.v()")
    assert (first.output, second.output) == (1, 2)
    versions = [next(e["version"] for e in sb.run(r.run_id).entries if e["kind"] == "call") for r in (first, second)]
    assert versions == [1, 2]
    assert [(s.name, s.version) for s in sb.scripts()] == [("v", 2)]


def test_a_paused_child_resumes_with_the_version_it_started_with_after_a_newer_save(sb):
    sb.action(lambda x: x, name="ask", approval=True)
    sb.save_script("pick", "const ok = await actions.ask(1); return 'v1'")
    with pytest.raises(SandboxInterrupt) as paused:
        sb.eval("return await actions.scripts.pick()")
    sb.save_script("pick", "return 'v2'")
    assert sb.resume(paused.value.run_id, True).output == "v1"
    assert sb.eval("return await actions.scripts.pick()").output == "v2"


def test_a_script_is_saved_from_a_run_it_ran_in(sb):
    run = sb.eval("return (ctx.input ?? 0) + 1", input=1)
    saved = sb.save_script("inc", run_id=run.run_id, description="Add one.")
    assert saved.source == "return (ctx.input ?? 0) + 1" and saved.about["from_run"] == run.run_id
    assert sb.eval("return await actions.scripts.inc(41)").output == 42


def test_a_removed_script_leaves_the_listing_and_the_declarations_and_a_run_that_used_it_still_checks(sb):
    sb.save_script("gone", "return 1")
    run = sb.eval("return await actions.scripts.gone()")
    assert sb.remove_script("gone") is True and sb.remove_script("gone") is False
    assert sb.scripts() == [] and "gone" not in sb.declarations()
    with pytest.raises(ScriptError):
        sb.eval("return await actions.scripts.gone()")
    assert sb.check(run.run_id).deterministic
    assert sb.save_script("gone", "return 3").version == 3  # the numbers go on after a removal


@pytest.mark.parametrize("name", ["a.b", "__proto__", "", "1x", "two words"])
def test_a_script_name_that_is_not_one_identifier_is_refused(sb, name):
    with pytest.raises(ValueError):
        sb.save_script(name, "return 1")
    assert sb.scripts() == []


def test_a_script_the_lint_refuses_is_refused_before_it_is_shared(sb):
    with pytest.raises(LintError):
        sb.save_script("broken", "return await fetch('https://example.com')")
    assert sb.scripts() == []


def test_a_run_that_called_a_saved_script_rolls_back_the_scripts_calls_too(sb):
    undone = []
    sb.action(lambda n: n, name="book", revert=lambda n, r: undone.append(n))
    sb.save_script("two", "await actions.book(ctx.input); await actions.book(ctx.input + 1)")
    run = sb.eval("await actions.book(1); await actions.scripts.two(10)")
    sb.rollback(run.run_id)
    assert undone == [11, 10, 1]


# -- shared by everyone on the store: two processes, on each backend -------------------------------------------

_OTHER = textwrap.dedent(
    """
    import sys
    from jupyter_sandbox import Sandbox
    store, name, source, then = sys.argv[1:]
    with Sandbox(store) as sb:
        print(sb.save_script(name, source, description="Saved elsewhere.", input_schema=int).version)
        if then:
            print(sb.eval(then, input=5).output)
    """
)


def _other_process(store: str, name: str, source: str, then: str = "") -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _OTHER, store, name, source, then], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_script_saved_in_another_process_is_declared_and_called_here_and_the_other_way(store_url):
    with Sandbox(store_url) as sb:  # open before the other process saves
        assert "triple" not in sb.declarations()
        assert _other_process(store_url, "triple", "return ctx.input * 3") == ["1"]
        assert "Saved elsewhere." in sb.declarations()
        assert sb.eval("return await actions.scripts.triple(4)").output == 12
        sb.save_script("square", "return ctx.input * ctx.input")
        then = "return await actions.scripts.square(ctx.input)"
        assert _other_process(store_url, "triple", "return ctx.input * 30", then) == ["2", "25"]
        assert sb.eval("return await actions.scripts.triple(4)").output == 120


_SAVER = textwrap.dedent(
    """
    import sys
    from jupyter_sandbox import Sandbox
    store, who, times, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    with Sandbox(store) as sb:
        print("ready", flush=True)
        sys.stdin.readline()  # the go: both processes are open, so their saves interleave
        for k in range(times):
            if runs:
                print(sb.save_script("race", run_id=runs[k], description="Kept.").version, flush=True)
            else:
                print(sb.save_script("race", f"return '{who}{k}'").version, flush=True)
    """
)


def _saving_at_once(store: str, times: int, runs: tuple[str, ...] = ()) -> dict[str, list[int]]:
    """Two processes, ``a`` and ``b``, each saving ``race`` ``times`` times, started together: the versions
    each got. With ``runs``: each saves those runs' scripts in turn; else each its own, ``return 'a0'``..."""
    savers = {
        who: subprocess.Popen(
            [sys.executable, "-c", _SAVER, store, who, str(times), *runs],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in "ab"
    }
    for proc in savers.values():
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.communicate()[1]
    for proc in savers.values():  # both told to go before either is waited for
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    returned = {}
    for who, proc in savers.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        returned[who] = [int(v) for v in stdout.split()]
    return returned


def test_two_processes_saving_one_name_at_once_each_get_their_own_versions_and_none_is_lost(store_url):
    times = 15
    Sandbox(store_url).close()  # the store's tables exist before either process opens it
    returned = _saving_at_once(store_url, times)
    with Sandbox(store_url) as sb:
        versions = sb.store.script_versions("race")
    assert [v.version for v in versions] == list(range(1, 2 * times + 1))  # distinct and consecutive
    assert sorted(returned["a"] + returned["b"]) == [v.version for v in versions]
    for who, numbers in returned.items():  # each process's saves in its own order, each under the version it got
        assert numbers == sorted(numbers)
        assert [versions[n - 1].source for n in numbers] == [f"return '{who}{k}'" for k in range(times)]
    assert versions[-1].source in (f"return 'a{times - 1}'", f"return 'b{times - 1}'")


def test_two_processes_saving_the_same_runs_scripts_at_once_store_each_once_under_one_version(store_url):
    with Sandbox(store_url) as sb:
        runs = [sb.eval(f"return {k}").run_id for k in range(20)]
    returned = _saving_at_once(store_url, len(runs), tuple(runs))
    assert returned["a"] == returned["b"] == list(range(1, len(runs) + 1))  # each run's save found by the other
    with Sandbox(store_url) as sb:
        assert [v.about["from_run"] for v in sb.store.script_versions("race")] == runs


def test_two_stores_keep_their_own_scripts(new_store):
    first, second = new_store(), new_store()
    with Sandbox(first) as a, Sandbox(second) as b:
        a.save_script("only_here", "return 1")
        assert [s.name for s in a.scripts()] == ["only_here"] and b.scripts() == []
        with pytest.raises(ScriptError):
            b.eval("return await actions.scripts.only_here()")


# -- the model saves the script that worked: the tool's `save`, the MCP server, the magic ---------------------


def test_the_tool_takes_save_only_when_allowed(sb):
    assert "save" not in sb.tool().parameters["properties"]
    refused = sb.tool().run({"script": "return 1", "save": {"name": "one"}})
    assert refused.status == "failed" and sb.scripts() == []
    assert "save" in sb.tool(allow_save=True).parameters["properties"]


def test_a_script_the_model_saved_through_the_tool_is_declared_and_reused_by_its_next_script(sb):
    tool = sb.tool(allow_save=True)
    first = tool.run(
        {
            "script": "return ctx.input.a + ctx.input.b",
            "input": {"a": 1, "b": 2},
            "save": {"name": "add", "description": "Add a and b."},
        }
    )
    assert first.status == "completed" and first.saved == {"name": "scripts.add", "version": 1}
    assert "actions.scripts.add" in first.content
    assert "Add a and b." in tool.description
    again = tool.run({"script": "return await actions.scripts.add({a: 40, b: 2})"})
    assert again.output == 42


def test_a_script_saved_through_the_tool_keeps_its_schemas_and_its_calls_are_checked_against_them(sb):
    tool = sb.tool(allow_save=True)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    saved = tool.run(
        {"script": "return ctx.input.n * 2", "input": {"n": 1}, "save": {"name": "twice", "input_schema": schema}}
    )
    assert saved.saved == {"name": "scripts.twice", "version": 1}
    assert "twice(input: { n: number }" in tool.description
    refused = tool.run({"script": "return await actions.scripts.twice({n: 'one'})"})
    assert refused.status == "failed" and "the action's schema refused it" in refused.content


def test_a_failed_script_is_not_saved_and_a_bad_name_is_said_in_the_content(sb):
    tool = sb.tool(allow_save=True)
    assert tool.run({"script": "throw new Error('no')", "save": {"name": "nope"}}).status == "failed"
    named = tool.run({"script": "return 1", "save": {"name": "not.one"}})
    assert named.status == "completed" and "not saved" in named.content and named.saved is None
    assert sb.scripts() == []


def test_the_magic_lists_the_saved_scripts_and_removes_one(tmp_path, monkeypatch):
    from jupyter_sandbox.notebook import defaults as notebook

    with notebook_shell(tmp_path, monkeypatch) as shell:
        notebook.default_sandbox().save_script("tidy", "return 1", description="Tidy up.")
        with capture_output() as cap:
            shell.run_cell("%sandbox scripts")
        shown = "".join(o.data.get("text/plain", "") for o in cap.outputs)
        assert "scripts.tidy" in shown and "v1" in shown and "Tidy up." in shown
        with capture_output() as cap:
            shell.run_cell("%sandbox scripts --remove tidy")
        assert "removed scripts.tidy" in cap.stdout and notebook.default_sandbox().scripts() == []


def test_the_mcp_server_saves_and_lists_scripts_only_with_allow_save(tmp_path):
    store, seen = str(tmp_path / "runs.sqlite"), {}

    async def save(session, tools) -> None:
        seen.setdefault("params", []).append(sorted(tools["run_script"].input_schema["properties"]))
        if "save_script" in tools:
            saved = await session.call_tool(
                "save_script", {"name": "inc", "script": "return ctx.input + 1", "input_schema": {"type": "integer"}}
            )
            seen["saved"] = saved.structured_content
            refused = await session.call_tool("run_script", {"script": "return await actions.scripts.inc('1')"})
            seen["refused"] = refused.structured_content
            ran = await session.call_tool(
                "run_script", {"script": "return await actions.scripts.inc(1)", "save": {"name": "two"}}
            )
            seen["ran"] = ran.structured_content
            seen["listed"] = (await session.call_tool("list_scripts", {})).structured_content

    assert "save_script" not in with_mcp_server(store, [], tmp_path / "err", save)
    assert {"save_script", "list_scripts"} <= set(with_mcp_server(store, ["--allow-save"], tmp_path / "err", save))
    assert "save" not in seen["params"][0] and "save" in seen["params"][1]
    assert seen["saved"] == {"name": "scripts.inc", "version": 1}
    assert seen["refused"]["status"] == "failed"  # its input schema took no string
    assert seen["ran"]["status"] == "completed" and seen["ran"]["output"] == 2
    assert [s["name"] for s in seen["listed"]["result"]] == ["scripts.inc", "scripts.two"]


@pytest.mark.parametrize("schema", [{"type": "nonsense"}, "not a schema", 5, True, [1]])
@pytest.mark.parametrize("key", ["input_schema", "output_schema"])
def test_a_schema_that_cannot_be_used_is_refused_as_a_registration_error_and_nothing_is_saved(sb, schema, key):
    with pytest.raises(RegistrationError, match="schema") as refused:
        sb.save_script("bad", "return 1", **{key: schema})
    assert isinstance(refused.value, TypeError)  # what it was before it was a SandboxError
    assert sb.scripts() == [] and sb.eval("return 1").output == 1


# Each is refused by QuickJS's compiler at its own line (whatever precedes or follows it).
BROKEN_LINES = ["const = 1", "let x = ;", '"open', "a b", "return )", "function (", "1 +* 2"]


@settings(max_examples=scaled(30), deadline=None)
@given(before=st.integers(0, 30), broken=st.sampled_from(BROKEN_LINES), after=st.integers(0, 3))
@example(before=0, broken="return (", after=0)  # (open at the end: its error is at the end of the input)
def test_a_script_that_does_not_compile_is_refused_at_save_with_its_line(before, broken, after):
    lines = [f"const a{i} = {i};" for i in range(before)] + [broken] + [f"const z{i} = {i};" for i in range(after)]
    with Sandbox() as sb:
        with pytest.raises(ScriptError, match="SyntaxError") as refused:
            sb.save_script("broken", "\n".join(lines))
        assert refused.value.line == before + 1
        assert sb.scripts() == [] and sb.store.scripts(removed=True) == []


def test_the_tool_says_a_schema_that_cannot_be_used_was_not_saved(sb):
    result = sb.tool(allow_save=True).run(
        {"script": "return 1", "save": {"name": "odd", "input_schema": "not a schema"}}
    )
    assert result.status == "completed" and "not saved" in result.content and result.saved is None
    assert sb.scripts() == []


def test_a_stored_script_whose_schema_this_process_cannot_use_is_left_out_and_the_store_still_runs(sb):
    sb.store.save_script("odd", "return 1", {"description": None, "input_schema": {"type": "nonsense"}})
    sb.save_script("fine", "return 2")  # (registers the store's scripts again)
    assert sb.eval("return await actions.scripts.fine()").output == 2
    assert "scripts.odd" not in sb.declarations()
