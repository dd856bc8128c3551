"""One registration step: every kind of action enters the engine's table through ``Engine.register_action``.

A decorated action (``Sandbox.action``), an MCP server's tool (``Sandbox.mcp``) and a saved script
(``saved.sync``) each build their ``Action`` whole (spec, about, revert, saved given at construction) and hand
it to that one step, which checks its name (``naming.check_action_name``) and puts it in the table. So each
is refused the same way for a bad or taken name, and none has its fields set after it was registered.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st
from test_action_names import NAMES

from jupyter_sandbox import Sandbox
from jupyter_sandbox.actions import Action
from jupyter_sandbox.engine.runs import Engine

NAMED = str(Path(__file__).resolve().parent / "mcp_servers" / "named.py")


def _undo(input, result):
    return None


def test_a_decorated_action_an_mcp_tool_and_a_saved_script_are_each_registered_whole_by_the_one_step(sb, monkeypatch):
    seen = {}
    register = Engine.register_action

    def spy(engine, action):
        # What the step was handed, as it was handed: nothing may be filled in afterwards.
        seen[action.name] = (action.spec is not None, action.about, action.revert, action.saved)
        register(engine, action)

    monkeypatch.setattr(Engine, "register_action", spy)
    sb.action(lambda n: n, name="plain")
    sb.mcp("raw", [sys.executable, NAMED, "echo"], revert={"echo": _undo})
    sb.save_script("twice", "return ctx.input * 2")
    assert seen["plain"] == (False, None, None, None)
    has_spec, about, revert, saved = seen["raw.echo"]
    assert has_spec and revert is _undo and saved is None
    assert about is not None and (about["server"], about["tool"]) == ("raw", "echo")
    assert seen["scripts.twice"] == (True, None, None, "twice")
    assert {name: sb.actions[name].about for name in seen} == {name: entry[1] for name, entry in seen.items()}
    assert sb.eval("return [await actions.raw.echo({text: 'a'}), await actions.scripts.twice(4)]").output == [
        {"result": "echo: a"},
        8,
    ]


def test_an_mcp_tool_inside_a_registered_action_is_refused_as_a_decorated_action_would_be(sb):
    sb.action(lambda n: n, name="raw")
    with pytest.raises(ValueError) as decorated:
        sb.action(lambda n: n, name="raw.echo")
    with pytest.raises(ValueError) as tool:
        sb.mcp("raw", [sys.executable, NAMED, "echo"])
    assert (
        str(tool.value)
        == str(decorated.value)
        == "action name 'raw.echo' is inside 'raw', which is registered as an action"
    )
    assert sorted(sb.actions) == ["raw"]


@pytest.mark.parametrize("taken", ["scripts", "scripts.mine"])
def test_a_saved_script_beside_or_under_a_registered_action_is_refused_when_saved(sb, taken):
    sb.action(lambda n: n, name=taken)
    with pytest.raises(ValueError):
        sb.save_script("mine", "return 1")
    assert sorted(sb.actions) == [taken] and sb.scripts() == []


def test_a_script_saved_elsewhere_inside_an_action_registered_here_is_not_registered_and_the_action_stays(
    store_path,
):
    with Sandbox(store_path) as here, Sandbox(store_path) as elsewhere:
        here.action(lambda n: n + 1, name="scripts")  # the saving sandbox does not know of it
        elsewhere.save_script("report", "return 1")
        assert here.eval("return [Object.keys(actions), await actions.scripts(1)]").output == [["scripts"], 2]
        assert sorted(here.actions) == ["scripts"]
        assert elsewhere.eval("return await actions.scripts.report()").output == 1


TAKEN = ("ping", "files.read")


def _outcome(register, name):
    try:
        register(name)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)
    return "registered"


@settings(max_examples=scaled(100))
@given(name=st.one_of(NAMES, st.sampled_from(["files", "files.read.more", "ping.x", "files.write"])))
def test_any_name_is_refused_or_taken_alike_by_the_decorator_and_by_an_action_built_whole(name):
    decorated, built = Sandbox(), Sandbox()
    for sb in (decorated, built):
        for taken in TAKEN:
            sb.action(lambda n: n, name=taken)
    by_decorator = _outcome(lambda n: decorated.action(lambda x: x, name=n), name)
    by_action = _outcome(lambda n: built.add_action(Action(n, lambda x: x)), name)
    assert by_decorator == by_action
    assert sorted(decorated.actions) == sorted(built.actions)
    assert set(built.actions) == set(TAKEN) | ({name} if by_action == "registered" else set())
