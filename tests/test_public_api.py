"""The public surface: exactly these names, each documented; foreign exceptions never leak."""

from __future__ import annotations

import inspect

import pytest

import jupyter_sandbox
from jupyter_sandbox import ActionError, SandboxError

ISSUE_NAMES = {
    "Sandbox",
    "Resume",
    "ActionInterrupt",
    "SandboxInterrupt",
    "CallLogMismatchError",
    "ActionError",
    "ScriptError",
    "LintError",
    "LimitExceeded",
    "Approve",
    "Reject",
    "Edit",
    "AnswerRefused",
}


def test_the_issue_api_is_exported():
    assert ISSUE_NAMES <= set(jupyter_sandbox.__all__)


def test_all_is_sorted_and_every_name_exists():
    names = [n for n in jupyter_sandbox.__all__ if n != "__version__"]
    assert names == sorted(names)
    for name in jupyter_sandbox.__all__:
        assert hasattr(jupyter_sandbox, name), name


def test_every_public_class_and_function_has_a_docstring():
    for name in jupyter_sandbox.__all__:
        value = getattr(jupyter_sandbox, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name} has no docstring"


def test_every_error_is_a_sandbox_error():
    for name in jupyter_sandbox.__all__:
        value = getattr(jupyter_sandbox, name)
        if inspect.isclass(value) and issubclass(value, Exception) and value is not jupyter_sandbox.ActionInterrupt:
            assert issubclass(value, SandboxError), name


def test_action_error_is_a_script_error_with_the_action_named():
    error = ActionError("send", "boom", line=3)
    assert isinstance(error, jupyter_sandbox.ScriptError) and error.action == "send" and error.line == 3


def test_calling_eval_from_inside_an_async_action_is_a_clear_error(sb):
    @sb.action
    async def nested(_):
        return sb.eval("return 1")

    with pytest.raises(ActionError, match="from inside an async action"):
        sb.eval("await actions.nested(1)")


def test_a_plain_action_may_run_another_script(sb):
    @sb.action
    def nested(x):
        return sb.eval("return ctx.input * 2", input=x).output

    assert sb.eval("return await actions.nested(21)").output == 42
