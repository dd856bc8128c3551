"""Errors: every one the package raises is a ``SandboxError`` from ``errors.py``, and turns into data one way."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil

import pytest

import jupyter_sandbox
from jupyter_sandbox import errors
from jupyter_sandbox.actions import ActionInterrupt
from jupyter_sandbox.errors import (
    ActionError,
    CallLogMismatchError,
    LimitExceeded,
    LintError,
    RunNotFound,
    RunStateError,
    SandboxError,
    UnaddressedAnswer,
    error_dict,
)

# Raised by an action's own code to ask for an answer: the one exception a user raises rather than catches.
RAISED_BY_USERS = {ActionInterrupt}


def _package_modules() -> list[object]:
    modules = [jupyter_sandbox]
    for info in pkgutil.walk_packages(jupyter_sandbox.__path__, "jupyter_sandbox."):
        if info.name.startswith("jupyter_sandbox.notebook") or info.name == "jupyter_sandbox.stores.postgres":
            pytest.importorskip("IPython" if "notebook" in info.name else "psycopg")
        modules.append(importlib.import_module(info.name))
    return modules


def test_every_exception_the_package_defines_lives_in_errors_under_sandbox_error():
    outside, loose = [], []
    for module in _package_modules():
        for name, value in vars(module).items():
            if not (inspect.isclass(value) and issubclass(value, BaseException)):
                continue
            if not value.__module__.startswith("jupyter_sandbox") or value.__module__ != module.__name__:
                continue  # foreign, or imported from where it is defined
            if value in RAISED_BY_USERS or name.startswith("_"):
                continue
            if not _in_errors(module.__name__):
                outside.append(f"{module.__name__}.{name}")
            if not issubclass(value, SandboxError):
                loose.append(f"{module.__name__}.{name}")
    assert (outside, loose) == ([], [])


def test_every_error_defined_in_errors_is_exported_there_and_from_the_package():
    defined = {
        name
        for module in _package_modules()
        if _in_errors(module.__name__)
        for name, value in vars(module).items()
        if inspect.isclass(value) and issubclass(value, SandboxError) and value.__module__ == module.__name__
    }
    assert {"SandboxError", "RunStateError", "StoreError", "LimitExceeded"} <= defined  # the walk found the families
    assert defined <= set(errors.__all__)
    assert defined <= set(jupyter_sandbox.__all__)


def _in_errors(module_name: str) -> bool:
    """Whether a module is the errors package or one of its families."""
    return module_name == errors.__name__ or module_name.startswith(errors.__name__ + ".")


def test_unaddressed_answer_is_public_and_a_run_state_error():
    assert "UnaddressedAnswer" in jupyter_sandbox.__all__ and jupyter_sandbox.UnaddressedAnswer is UnaddressedAnswer
    assert issubclass(UnaddressedAnswer, RunStateError) and issubclass(UnaddressedAnswer, ValueError)


def _instances() -> list[SandboxError]:
    """One of each error, with the fields a raise site gives it."""
    return [
        SandboxError("plain"),
        LintError([(2, 5, "fetch", "use an action")], "a\nfetch(x)\n"),
        errors.ScriptError("TypeError", "x is undefined", line=1, column=3, source="x.y", run_id="r-1"),
        ActionError("send", "boom", issues=[{"path": "$.to", "message": "required"}], line=1, source="x"),
        LimitExceeded("memory", "the script used more than 64 MiB", value=64, line=1, source="x"),
        CallLogMismatchError(3, {"type": "action", "name": "a", "input": 1}, {"type": "action", "name": "b"}),
        errors.InvalidCallLog("call_log[2] has no 'response'", position=2),
        errors.InvalidValue("not JSON"),
        errors.InvalidEdit("mail", [{"path": "$.to", "message": "required"}]),
        errors.InputInvalid([{"path": "$.to", "message": "required"}]),
        errors.ChildSpecError("needs `script`"),
        errors.RunPaused("paused", run_id="r-1"),
        errors.RunParked(run_id="r-1", due=None, waiting=[{"key": "wait|{}|null"}], console=[], data={}, call_log=[]),
        errors.RunCancelled("r-1"),
        RunStateError("finished", run_id="r-1", status="completed"),
        errors.RunBusyError("busy", run_id="r-1", status="running"),
        UnaddressedAnswer("nothing", run_id="r-1", status="interrupted", unaddressed=["x"], open=[]),
        RunNotFound("r-1"),
        errors.StoreError("corrupt", path="/tmp/x.sqlite"),
        errors.ServerFailed("MCP server 'files' exited"),
        errors.ToolFailed("files.read: no such file"),
    ]


@pytest.mark.parametrize("error", _instances(), ids=lambda e: type(e).__name__)
def test_to_dict_is_json_with_a_name_and_a_message(error):
    record = error.to_dict()
    assert isinstance(record["name"], str) and isinstance(record["message"], str)
    assert json.loads(json.dumps(record)) == record


def test_to_dict_carries_each_class_s_own_fields():
    assert LimitExceeded("stack", "too deep", line=4).to_dict() == {
        "name": "LimitExceeded",
        "message": "stack: too deep",
        "limit": "stack",
        "line": 4,
    }
    assert RunNotFound("r-9").to_dict() == {
        "name": "RunNotFound",
        "message": "no run 'r-9' in this store",
        "run_id": "r-9",
    }
    mismatch = CallLogMismatchError(3, None, {"type": "now"}).to_dict()
    assert (mismatch["name"], mismatch["position"], mismatch["attempted"]) == (
        "CallLogMismatchError",
        3,
        {"type": "now"},
    )
    script = ActionError("send", "boom").to_dict()
    assert (script["name"], script["message"], script["action"]) == ("ActionError", "boom", "send")
    lint = LintError([(2, 5, "fetch", "use an action")]).to_dict()
    assert lint["problems"] == [{"line": 2, "column": 5, "name": "fetch", "hint": "use an action"}]


def test_error_dict_gives_any_exception_as_a_name_and_its_text():
    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no")

    assert error_dict(KeyError("r-1")) == {"name": "KeyError", "message": "'r-1'"}
    assert error_dict(Unprintable()) == {"name": "Unprintable", "message": "<the exception could not be printed>"}
    assert error_dict(RunNotFound("r-1")) == RunNotFound("r-1").to_dict()


def test_a_limit_that_ends_a_run_is_stored_on_the_run_through_to_dict(sb):
    with pytest.raises(LimitExceeded) as info:
        sb.eval("const a = []; for (;;) a.push('x'.repeat(1 << 20))", name="greedy")
    stored = sb.run(info.value.run_id).error
    assert stored == {**info.value.to_dict(), "text": str(info.value)}


def test_a_determinism_check_that_reaches_the_open_slot_is_deterministic_not_failed(sb):
    @sb.action(approval=True)
    def send(x):
        return x

    with pytest.raises(errors.SandboxInterrupt) as paused:
        sb.eval("const t = Date.now(); return await actions.send(t > 0)")
    report = sb.check(paused.value.run_id)
    assert report.deterministic and report.error is None
