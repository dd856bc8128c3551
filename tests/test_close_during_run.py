"""``Sandbox.close()`` while one of its runs is going: the run stops with ``SandboxClosed`` naming it, its attempt
is recorded ``cancelled``, and a Sandbox on the same store resumes it from its journal, running nothing recorded
again. Afterwards the closed Sandbox refuses registering and running alike."""

from __future__ import annotations

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


REFUSED = {
    "eval": lambda sb: sb.eval("return 1"),
    "resume": lambda sb: sb.resume("r-1", True),
    "rollback": lambda sb: sb.rollback("r-1"),
    "fork": lambda sb: sb.fork("r-1", 0),
    "check": lambda sb: sb.check("r-1"),
    "signal": lambda sb: sb.signal("r-1", {}),
    "run_due": lambda sb: sb.run_due(),
    "start_scheduler": lambda sb: sb.start_scheduler(),
    "action": lambda sb: sb.action(lambda n: n, name="late"),
    "add_action": lambda sb: sb.add_action(Action("late", lambda n: n)),
    "agent": lambda sb: sb.agent(lambda n: n, name="late"),
    "remove_action": lambda sb: sb.remove_action("echo"),
    "mcp": lambda sb: sb.mcp("late", ["false"]),
}


@pytest.mark.parametrize("method", sorted(REFUSED))
def test_a_closed_sandbox_refuses_registering_and_running_with_sandbox_closed(method):
    sb = Sandbox()
    sb.action(lambda n: n, name="echo")
    sb.close()
    with pytest.raises(SandboxClosed, match="closed") as refused:
        REFUSED[method](sb)
    assert isinstance(refused.value, StoreError) and refused.value.run_id is None
    assert "echo" in sb.actions  # nothing was changed by the refused call


def test_aeval_on_a_closed_sandbox_is_refused_before_anything_runs():
    import asyncio

    sb = Sandbox()
    sb.close()
    with pytest.raises(SandboxClosed):
        asyncio.run(sb.aeval("return 1"))
