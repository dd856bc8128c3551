"""Saved scripts: ``sb.save_script`` keeps a script in the store as the action ``scripts.NAME``, a durable child
run, versioned, declared with its schemas, shared by every process on the store."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from jupyter_sandbox import ActionError, LintError, Sandbox, SandboxInterrupt, ScriptError


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


def test_a_saved_script_cannot_hide_an_action_registered_under_its_name(sb):
    sb.action(lambda x: x, name="scripts.mine")
    with pytest.raises(ValueError, match="registered"):
        sb.save_script("mine", "return 1")


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


def test_two_stores_keep_their_own_scripts(new_store):
    first, second = new_store(), new_store()
    with Sandbox(first) as a, Sandbox(second) as b:
        a.save_script("only_here", "return 1")
        assert [s.name for s in a.scripts()] == ["only_here"] and b.scripts() == []
        with pytest.raises(ScriptError):
            b.eval("return await actions.scripts.only_here()")
