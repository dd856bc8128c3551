"""``sb.mcp`` refuses as every registration does, and a refusal changes nothing: a ``RegistrationError``, the
registered actions (and a server of that name started before) as they were, and no server process left.

A name its tools could never be under (``1x``, ``a.b``, ``scripts``, ``__proto__``, an action's name) is refused
before the server starts; a tool whose action would take another kind's name is refused once the server has
listed its tools, before any of them is registered, and that server is stopped. Real servers over stdio
(``tests/mcp_servers/named.py``, its tools named on its command line).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from examples import scaled
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pace import bound

from jupyter_sandbox import Sandbox
from jupyter_sandbox.errors import RegistrationError

pytestmark = pytest.mark.slow
NAMED = str(Path(__file__).resolve().parent / "mcp_servers" / "named.py")


def _named(*tools: str) -> list[str]:
    return [sys.executable, NAMED, *tools]


def _children() -> set[int]:
    """This process's live child processes (an MCP server runs as one)."""
    mine = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            except OSError:
                continue
            if int(ppid) == os.getpid() and state not in ("Z", "X"):
                mine.add(int(entry.name))
    return mine


def _no_new_children(before: set[int]) -> None:
    deadline = time.monotonic() + bound(30)  # only bounds a hang: a stopped server is gone at once
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _children() - before, "a refused server's process is still running"


@pytest.fixture
def sb():
    with Sandbox() as sandbox:
        yield sandbox


@settings(max_examples=scaled(20), suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(name=st.text(max_size=8).filter(lambda n: not n.isidentifier()) | st.sampled_from(["scripts", "__proto__"]))
@example(name="1x")
@example(name="a.b")
@example(name="constructor")
def test_a_server_name_its_tools_cannot_be_under_is_refused_before_it_starts(sb, tmp_path_factory, name):
    started = tmp_path_factory.mktemp("start") / "started"
    command = [sys.executable, "-c", f"open({str(started)!r}, 'w')"]  # leaves a mark if it is ever started
    with pytest.raises(RegistrationError):
        sb.mcp(name, command)
    assert not started.exists() and sb.mcp_servers == {} and sb.actions == {}


def test_a_server_named_as_an_action_is_refused_before_it_starts(sb, tmp_path):
    sb.action(lambda x: x, name="solo")
    command = [sys.executable, "-c", f"open({str(tmp_path / 'started')!r}, 'w')"]
    with pytest.raises(RegistrationError, match="inside 'solo', which is registered as an action"):
        sb.mcp("solo", command)
    assert not (tmp_path / "started").exists() and list(sb.actions) == ["solo"]


def test_a_tool_over_a_python_action_is_refused_none_of_the_servers_tools_registered_and_its_process_stopped(sb):
    sb.action(lambda x: "py", name="srv.read")
    before = _children()
    with pytest.raises(RegistrationError, match="'srv.read' is registered as a Python action"):
        sb.mcp("srv", _named("append", "read", "zap"))
    assert list(sb.actions) == ["srv.read"] and sb.mcp_servers == {}
    _no_new_children(before)
    assert sb.eval("return await actions.srv.read(1)").output == "py"


@pytest.mark.parametrize("options", [{"timeout": 0}, {"approval": "yes"}, {"revert": {"read": 1}}])
def test_a_bad_option_is_a_registration_error_before_the_server_starts(sb, tmp_path, options):
    command = [sys.executable, "-c", f"open({str(tmp_path / 'started')!r}, 'w')"]
    with pytest.raises(RegistrationError):
        sb.mcp("srv", command, **options)
    assert not (tmp_path / "started").exists()


def test_a_revert_for_a_tool_the_server_lacks_is_refused_and_its_process_stopped(sb):
    before = _children()
    with pytest.raises(RegistrationError, match="no tool 'write'"):
        sb.mcp("srv", _named("read"), revert={"write": lambda args, result: None})
    assert sb.actions == {} and sb.mcp_servers == {}
    _no_new_children(before)


def test_two_tools_that_become_one_action_name_are_a_registration_error_and_the_process_stopped(sb):
    before = _children()
    with pytest.raises(RegistrationError, match="'a-b' and 'a_b'"):
        sb.mcp("raw", _named("a-b", "a_b"))
    assert sb.actions == {}
    _no_new_children(before)


def test_a_server_started_again_does_not_take_back_a_name_now_held_by_a_python_action(sb):
    sb.mcp("srv", _named("read", "both"))
    sb.remove_action("srv.read")
    sb.action(lambda x: "py", name="srv.read")
    with pytest.raises(RegistrationError, match="'srv.read' is registered as a Python action"):
        sb.mcp("srv", _named("read", "both"))
    # As it was: the Python action, and the first server still serving its other tool.
    assert sb.eval("return await actions.srv.read(1)").output == "py"
    assert sb.eval("return await actions.srv.both({text: 'hi'})").output == {"result": "both: hi"}
    assert list(sb.mcp_servers) == ["srv"]


def test_a_server_started_again_without_the_conflicting_tool_replaces_its_own_tools_only(sb):
    sb.mcp("srv", _named("read", "both"))
    sb.remove_action("srv.read")
    sb.action(lambda x: "py", name="srv.read")
    assert sb.mcp("srv", _named("both", "more")) == ["srv.both", "srv.more"]
    assert sorted(sb.actions) == ["srv.both", "srv.more", "srv.read"]
    assert sb.eval("return await actions.srv.read(1)").output == "py"
