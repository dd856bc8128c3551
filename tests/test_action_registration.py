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

from jupyter_sandbox import RegistrationError, Sandbox, SandboxError
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
    # Refused before the server starts, so for any of its tools (``raw.TOOL``).
    assert str(decorated.value) == "action name 'raw.echo' is inside 'raw', which is registered as an action"
    assert str(tool.value) == str(decorated.value).replace("raw.echo", "raw.TOOL")
    assert sorted(sb.actions) == ["raw"] and isinstance(tool.value, RegistrationError)


@pytest.mark.parametrize("name", ["scripts", "scripts.mine", "scripts.mine.deeper"])
def test_no_action_but_a_saved_script_may_take_a_name_in_the_scripts_namespace(sb, name):
    with pytest.raises(RegistrationError, match="the namespace 'scripts' is the saved scripts'"):
        sb.action(lambda n: n, name=name)
    with pytest.raises(RegistrationError, match="saved scripts'"):
        sb.add_action(Action(name, lambda n: n))
    assert sb.actions == {}
    sb.save_script("mine", "return 1")
    assert sb.eval("return await actions.scripts.mine()").output == 1


def test_an_action_registered_after_a_saved_script_of_its_name_is_refused_and_the_script_still_runs(sb):
    sb.save_script("x", "return 'saved'")
    with pytest.raises(RegistrationError, match="saved scripts'"):
        sb.action(lambda: "python", name="scripts.x")
    assert sb.eval("return await actions.scripts.x()").output == "saved"


def test_an_mcp_server_named_scripts_is_refused(sb):
    with pytest.raises(RegistrationError, match="saved scripts'"):
        sb.mcp("scripts", [sys.executable, NAMED, "echo"])
    assert sb.actions == {}


def test_an_action_built_with_saved_is_refused_by_add_action_and_nothing_is_registered(sb):
    with pytest.raises(RegistrationError, match="sb.save_script"):
        sb.add_action(Action("scripts.mine", lambda n: n, saved="mine", saved_version=1))
    with pytest.raises(RegistrationError, match="saved="):
        sb.add_action(Action("mine", lambda n: n, saved="mine"))
    assert sb.actions == {}


def test_a_cell_run_again_replaces_its_action_each_time(sb):
    for n in range(3):

        @sb.action
        def ping(x: int, n=n) -> int:
            return x + n

        assert sb.eval("return await actions.ping(10)").output == 10 + n
    assert list(sb.actions) == ["ping"]


def test_a_python_action_over_an_mcp_tool_is_refused_and_the_tool_stays(sb):
    sb.mcp("raw", [sys.executable, NAMED, "echo"])
    before = sb.actions["raw.echo"]
    with pytest.raises(RegistrationError, match="registered as a tool of the MCP server 'raw'; a Python action"):
        sb.action(lambda x: x, name="raw.echo")
    assert sb.actions["raw.echo"] is before
    sb.remove_action("raw.echo")  # meant: remove it first
    sb.action(lambda x: ["python", x], name="raw.echo")
    assert sb.eval("return await actions.raw.echo(1)").output == ["python", 1]


def test_an_mcp_tool_over_a_python_action_is_refused(sb):
    sb.action(lambda x: x, name="raw.echo")
    with pytest.raises(RegistrationError, match="registered as a Python action; a tool of the MCP server 'raw'"):
        sb.mcp("raw", [sys.executable, NAMED, "echo"])
    assert sb.eval("return await actions.raw.echo(1)").output == 1


@pytest.mark.parametrize("name", [5, "", "two words", "a..b", "__proto__", "x." * 70])
def test_a_bad_name_is_a_registration_error_that_is_still_the_value_or_type_error_it_was(sb, name):
    for register in (lambda: sb.action(lambda x: x, name=name), lambda: sb.add_action(Action(name, lambda x: x))):
        with pytest.raises(RegistrationError) as refused:
            register()
        assert isinstance(refused.value, SandboxError)
        assert isinstance(refused.value, TypeError if not isinstance(name, str) else ValueError)
    with pytest.raises(RegistrationError):
        sb.agent(lambda x: x, name=name)


def test_a_script_name_that_is_not_one_identifier_is_a_registration_error(sb):
    with pytest.raises(RegistrationError, match="one identifier"):
        sb.save_script("a.b", "return 1")


TAKEN = ("ping", "files.read")


def _outcome(register, name):
    try:
        register(name)
    except RegistrationError as exc:  # (any other error fails the property)
        return type(exc), str(exc)
    return "registered"


@settings(max_examples=scaled(100))
@given(name=st.one_of(NAMES, st.sampled_from(["files", "files.read.more", "ping.x", "files.write", "scripts.x"])))
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


KINDS = {  # an Action of each kind a user can register by hand, as Sandbox.action and Sandbox.mcp build them
    "python": lambda name: Action(name, lambda x: x),
    "mcp files": lambda name: Action(name, lambda x: x, about={"server": "files", "tool": "t"}),
    "mcp other": lambda name: Action(name, lambda x: x, about={"server": "other", "tool": "t"}),
}


@settings(max_examples=scaled(50))
@given(first=st.sampled_from(sorted(KINDS)), then=st.sampled_from(sorted(KINDS)), name=st.sampled_from(["a", "n.a"]))
def test_a_name_registered_again_is_replaced_by_its_own_kind_and_refused_to_another(first, then, name):
    with Sandbox() as sb:
        sb.add_action(KINDS[first](name))
        kept = sb.actions[name]
        again = KINDS[then](name)
        if first == then:
            sb.add_action(again)
            assert sb.actions[name] is again
        else:
            with pytest.raises(RegistrationError, match="would replace it"):
                sb.add_action(again)
            assert sb.actions[name] is kept


@settings(max_examples=scaled(20), deadline=None)
@given(
    thing=st.one_of(
        st.none(),
        st.text(max_size=10),
        st.integers(),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
        st.just(lambda x: x),
    )
)
def test_add_action_given_anything_but_an_action_is_a_registration_error_naming_what_it_got(thing):
    with Sandbox() as sb:
        with pytest.raises(RegistrationError, match=f"add_action takes an Action.*got {type(thing).__name__}"):
            sb.add_action(thing)
        assert sb.actions == {}
