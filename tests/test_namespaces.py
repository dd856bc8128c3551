"""Namespaced actions (``files.read_file``): the script reaches them as ``actions.files.read_file``, and the
declarations nest them the same way (an MCP server's tools are registered under the server's name)."""

from __future__ import annotations

import pytest

from jupyter_sandbox import Sandbox
from jupyter_sandbox.errors import ScriptError


def _sandbox() -> Sandbox:
    sb = Sandbox()
    sb.action(lambda x: {"read": x}, name="files.read_file")
    sb.action(lambda x: x * 2, name="a.b.c")
    sb.action(lambda x: x + 1, name="ping")
    return sb


def test_a_dotted_name_is_a_method_of_its_namespace_object():
    out = (
        _sandbox()
        .eval(
            "return [await actions.files.read_file('x'), await actions.a.b.c(2), "
            "await ctx.call('a.b.c', 3), Object.keys(actions).sort()]"
        )
        .output
    )
    assert out == [{"read": "x"}, 4, 6, ["a", "files", "ping"]]


def test_an_unknown_name_in_a_namespace_is_an_action_error_naming_the_full_name():
    out = _sandbox().eval("try { await actions.files.reed_file(1) } catch (e) { return [e.name, e.message] }").output
    assert out[0] == "ActionError"
    assert '"files.reed_file"' in out[1] and '"files.read_file"' in out[1]


def test_namespace_objects_are_frozen():
    out = _sandbox().eval("'use strict'; return [Object.isFrozen(actions.files), Object.isFrozen(actions.a.b)]")
    assert out.output == [True, True]


def test_a_script_cannot_replace_an_action_in_a_namespace():
    with pytest.raises(ScriptError, match="read-only|not writable"):
        _sandbox().eval("'use strict'; actions.files.read_file = () => 1; return 1")


def test_declarations_nest_a_dotted_name_in_its_namespace():
    text = _sandbox().declarations()
    body = text[text.index("declare const actions") :]
    body = body[: body.index("\n};\n")]
    assert "  files: {\n" in body and "    read_file(input" in body
    assert "  a: {\n    b: {\n" in body and "      c(input" in body
    assert '"files.read_file"' not in body  # the full name is ActionMap's, for ctx.call
