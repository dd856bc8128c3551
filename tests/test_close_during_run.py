"""``Sandbox.close()`` while one of its runs is going: the run stops with ``SandboxClosed`` naming it, its attempt
is recorded ``cancelled``, and a Sandbox on the same store resumes it from its journal, running nothing recorded
again. Afterwards the closed Sandbox refuses registering and running alike."""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest

from jupyter_sandbox import Sandbox, SandboxClosed, StoreError
from jupyter_sandbox.actions import Action

SCRIPT = "const a = await actions.first(1); const b = await actions.closing(2); return a + b + (await actions.first(3))"


def counted(calls: dict[str, list], name: str, result):
    """``result`` as an action that notes each input it is called with in ``calls[name]``."""

    def action(n):
        calls.setdefault(name, []).append(n)
        return result(n)

    return action


def resumed_elsewhere(path, run_id: str, calls: dict[str, list]):
    """The run resumed by a new Sandbox on the store, with actions that count their calls."""
    with Sandbox(path) as again:
        again.action(counted(calls, "first", lambda n: n * 10), name="first")
        again.action(counted(calls, "closing", lambda n: n), name="closing")
        assert again.run(run_id, journal=False).status == "cancelled"
        return again.resume(run_id).output


def stopped_run(sb: Sandbox) -> SandboxClosed:
    with pytest.raises(SandboxClosed, match="closed while it ran") as stopped:
        sb.eval(SCRIPT)
    assert stopped.value.run_id is not None
    return stopped.value


def test_close_from_another_thread_stops_the_run_with_sandbox_closed_and_it_resumes_from_its_journal(tmp_path):
    path, calls = tmp_path / "runs.sqlite", {}
    sb = Sandbox(path)
    entered, done = threading.Event(), threading.Event()

    def closing(n):
        entered.set()
        done.wait(60)  # bounds a hang only: set once close() has returned
        return n

    sb.action(counted(calls, "first", lambda n: n * 10), name="first")
    sb.action(closing, name="closing", timeout=120)  # a timeout: it runs on an action thread
    closer = threading.Thread(target=lambda: (entered.wait(60), sb.close(), done.set()))
    closer.start()
    stopped = stopped_run(sb)
    closer.join(60)
    assert resumed_elsewhere(path, stopped.run_id, calls) == 42
    assert calls["first"] == [1, 3]  # the call recorded before the close is served from the journal


@pytest.mark.parametrize("kind", ["plain", "plain on a thread", "async"])
def test_an_action_closing_its_own_sandbox_stops_the_run_and_the_store_closes_after_it(tmp_path, kind):
    path, calls = tmp_path / "runs.sqlite", {}
    sb = Sandbox(path)
    sb.action(counted(calls, "first", lambda n: n * 10), name="first")
    if kind == "async":

        async def closing(n):
            sb.close()
            return n

        sb.action(closing, name="closing")
    else:
        sb.action(lambda n: (sb.close(), n)[1], name="closing", timeout=120 if kind == "plain on a thread" else None)
    stopped = stopped_run(sb)
    assert resumed_elsewhere(path, stopped.run_id, calls) == 42
    assert calls["first"] == [1, 3]  # nothing started after the close; nothing recorded runs again


def test_a_run_awaited_on_the_callers_own_loop_stops_with_sandbox_closed(tmp_path):
    import asyncio

    path, calls = tmp_path / "runs.sqlite", {}
    sb = Sandbox(path)
    sb.action(counted(calls, "first", lambda n: n * 10), name="first")

    async def closing(n):
        sb.close()
        await asyncio.sleep(0)
        return n

    sb.action(closing, name="closing")

    async def main():
        with pytest.raises(SandboxClosed, match="closed while it ran") as stopped:
            await sb.aeval(SCRIPT)
        return stopped.value.run_id

    run_id = asyncio.run(main())
    assert resumed_elsewhere(path, run_id, calls) == 42
    assert calls["first"] == [1, 3]


# What each required parameter of a public method is given: a method added later with a new parameter fails
# here until it is named (so every method is tried after close, by default).
ARGUMENTS = {
    "source": "return 1",
    "run_id": "r-1",
    "run": "r-1",
    "path": "no-such-export.json",  # import_run refuses before it reads the file
    "at": 0,
    "name": "late",
    "command": ["false"],
    "event": {},
    "action": Action("late", lambda n: n),
    "value": 1,
}
CALLS = {  # where the required parameters alone would not reach the method's work
    "action": lambda sb: sb.action(lambda n: n, name="late"),
    "agent": lambda sb: sb.agent(lambda n: n, name="late"),
    "aeval": lambda sb: asyncio.run(sb.aeval("return 1")),
    "input_issues": lambda sb: sb.input_issues("echo", 1),
    "save_script": lambda sb: sb.save_script("late", "return 1"),
}
# What a closed Sandbox still answers: in-memory state and closing itself, nothing that needs the store or engine.
ALLOWED_AFTER_CLOSE = {
    "close",
    "stop_scheduler",
    "actions",
    "mcp_servers",
    "scheduling",
    "store_path",
    "announces_changes",
}
PUBLIC = sorted(name for name, _ in inspect.getmembers(Sandbox) if not name.startswith("_"))


def call(sb: Sandbox, name: str):
    if name in CALLS:
        return CALLS[name](sb)
    member = inspect.getattr_static(Sandbox, name)
    if isinstance(member, property):
        return getattr(sb, name)
    required = [
        p.name
        for p in list(inspect.signature(member).parameters.values())[1:]
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return getattr(sb, name)(*(ARGUMENTS[p] for p in required))


@pytest.mark.parametrize("method", [m for m in PUBLIC if m not in ALLOWED_AFTER_CLOSE])
def test_every_public_method_of_a_closed_sandbox_is_refused_with_sandbox_closed(method):
    sb = Sandbox()
    sb.action(lambda n: n, name="echo")
    sb.close()
    with pytest.raises(SandboxClosed, match="closed") as refused:
        call(sb, method)
    assert isinstance(refused.value, StoreError) and refused.value.run_id is None
    assert "echo" in sb.actions and "late" not in sb.actions  # nothing was changed by the refused call


@pytest.mark.parametrize("method", sorted(ALLOWED_AFTER_CLOSE))
def test_what_a_closed_sandbox_still_answers_runs_without_error(method):
    sb = Sandbox()
    sb.close()
    call(sb, method)


def test_aeval_on_a_closed_sandbox_is_refused_before_anything_runs():
    sb = Sandbox()
    sb.close()
    with pytest.raises(SandboxClosed):
        asyncio.run(sb.aeval("return 1"))
