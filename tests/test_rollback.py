"""Rollback: ``sb.rollback(run_id)`` runs the reverts of a run's completed calls, newest first, each journaled,
exactly once across crashes, and ends the run ``rolled_back``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from code_mode_clients import notebook_shell, with_mcp_server
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.utils.capture import capture_output
from pace import bound

from jupyter_sandbox import RunBusyError, RunStateError, Sandbox, SandboxInterrupt, ScriptError


def _booking(sb: Sandbox, undone: list) -> None:
    """``book`` has a revert (it records what it undid); ``note`` has none."""
    sb.action(lambda n: {"booked": n}, name="book", revert=lambda n, result: undone.append((n, result)) or "freed")
    sb.action(lambda n: n, name="note")


@pytest.fixture
def booked(sb):
    sb.undone = []
    _booking(sb, sb.undone)
    return sb


def _failed_run(sb: Sandbox, source: str) -> str:
    with pytest.raises(ScriptError):
        sb.eval(source)
    return sb.runs(limit=1)[0].id


def test_the_reverts_run_newest_first_with_each_calls_input_and_result_and_the_run_ends_rolled_back(booked):
    run_id = _failed_run(booked, "await actions.book(1); await actions.book(2); throw new Error('stop')")
    result = booked.rollback(run_id)
    assert booked.undone == [(2, {"booked": 2}), (1, {"booked": 1})]
    assert [(item["name"], item["input"], item["value"]) for item in result.reverted] == [
        ("book", 2, "freed"),
        ("book", 1, "freed"),
    ]
    assert result.ok and booked.run(run_id).status == "rolled_back"


def test_a_call_without_a_revert_is_listed_as_not_reverted_in_the_result_and_the_journal(booked):
    run_id = booked.eval("await actions.note('hi'); await actions.book(1)").run_id
    result = booked.rollback(run_id)
    assert result.not_reverted == [{"run_id": run_id, "slot": 0, "name": "note", "reason": "the action has no revert"}]
    kinds = [(e["kind"], e.get("of")) for e in booked.run(run_id).entries]
    assert ("not_reverted", 0) in kinds and ("reverted", 1) in kinds


def test_a_second_rollback_runs_no_revert_again_and_returns_what_the_first_did(booked):
    run_id = booked.eval("await actions.book(1); await actions.note(2)").run_id
    first = booked.rollback(run_id)
    second = booked.rollback(run_id)
    assert booked.undone == [(1, {"booked": 1})]
    assert second == first


def test_the_tool_reports_a_rolled_back_run_as_rolled_back_not_as_an_error(booked):
    run_id = booked.eval("await actions.book(1)").run_id
    booked.rollback(run_id)
    result = booked.tool().result(run_id)
    assert result.status == "rolled_back" and result.error is None and "rolled back" in result.content


def test_a_failed_call_and_an_interrupted_call_are_not_reverted(booked):
    booked.action(lambda n: 1 / 0, name="broken", revert=lambda n, r: booked.undone.append("broken"))
    booked.action(lambda n: n, name="ask", approval=True, revert=lambda n, r: booked.undone.append("ask"))
    with pytest.raises(SandboxInterrupt) as paused:
        booked.eval("await actions.book(1); try { await actions.broken(0) } catch (e) {}; await actions.ask(2)")
    booked.rollback(paused.value.run_id)
    assert booked.undone == [(1, {"booked": 1})]


def test_a_child_script_is_rolled_back_in_the_place_of_its_call_newest_first(booked):
    child = "await actions.book(ctx.input * 10); await actions.book(ctx.input * 10 + 1); return 0"
    run_id = booked.eval(
        f"await actions.book(1); await ctx.delegate({{script: {child!r}, input: 2}}); await actions.book(3)"
    ).run_id
    result = booked.rollback(run_id)
    assert [n for n, _ in booked.undone] == [3, 21, 20, 1]
    child_id = booked.store.children(run_id)[0]
    assert [item["run_id"] for item in result.reverted] == [run_id, child_id, child_id, run_id]
    assert booked.run(child_id).status == "rolled_back"


def test_a_continue_as_new_chain_is_rolled_back_whole_newest_run_first_from_any_of_its_runs(booked):
    source = (
        "await actions.book(ctx.input); if (ctx.input < 3) return ctx.continueAsNew(ctx.input + 1); return ctx.input"
    )
    result = booked.eval(source, input=1)
    assert len(result.run_ids) == 3
    booked.rollback(result.run_ids[1])
    assert [n for n, _ in booked.undone] == [3, 2, 1]
    assert {booked.run(r).status for r in result.run_ids} == {"rolled_back"}


def test_an_interrupted_run_rolled_back_never_resumes(booked):
    booked.action(lambda n: n, name="ask", approval=True)
    with pytest.raises(SandboxInterrupt) as paused:
        booked.eval("await actions.book(1); await actions.ask(2); await actions.book(3)")
    run_id = paused.value.run_id
    booked.rollback(run_id)
    with pytest.raises(RunStateError, match="rolled back"):
        booked.resume(run_id, True)
    assert booked.undone == [(1, {"booked": 1})]


def test_a_rejection_with_rollback_rejects_and_rolls_back_in_one_decision(booked):
    booked.action(lambda n: n, name="ask", approval=True)
    with pytest.raises(SandboxInterrupt) as paused:
        booked.eval("await actions.book(1); try { await actions.ask(2) } catch (e) {}; await actions.book(3)")
    run_id = paused.value.run_id
    result = booked.resume(run_id, {"approved": False, "reason": "not today", "rollback": True})
    assert booked.undone == [(1, {"booked": 1})]  # the script did not go on to book 3
    assert result.reason == "not today" and booked.run(run_id).status == "rolled_back"
    marker = next(e for e in booked.run(run_id).entries if e["kind"] == "rollback")
    assert marker["rejected"] == paused.value.interrupts[0].id


def test_a_questions_answer_shaped_like_a_rejection_with_rollback_is_only_its_answer(booked):
    from jupyter_sandbox import ActionInterrupt

    @booked.action
    def ask(question, resume=None):
        if resume is None:
            raise ActionInterrupt(data={"question": question})
        return resume.value

    with pytest.raises(SandboxInterrupt) as paused:
        booked.eval("await actions.book(1); return await actions.ask('which?')")
    answer = {"approved": False, "rollback": True}  # any JSON value answers a question, this one too
    assert booked.resume(paused.value.run_id, answer).output == answer
    assert booked.undone == [] and booked.run(paused.value.run_id).status == "completed"


def test_a_rejection_with_rollback_records_who_rejected_how_and_when(booked):
    booked.action(lambda n: n, name="ask", approval=True)
    with pytest.raises(SandboxInterrupt) as paused:
        booked.eval("await actions.book(1); await actions.ask(2)")
    booked.resume(paused.value.run_id, {"approved": False, "rollback": True}, channel="card")
    marker = next(e for e in booked.run(paused.value.run_id).entries if e["kind"] == "rollback")
    assert (marker["by"], marker["via"]) == (booked.identity, "card")
    assert isinstance(marker["answered_at"], float) and marker["process"].endswith(f":{os.getpid()}")


def test_a_rollback_records_who_asked_for_it_and_how(booked):
    run_id = booked.eval("await actions.book(1)").run_id
    booked.rollback(run_id, channel="magic")
    marker = next(e for e in booked.run(run_id).entries if e["kind"] == "rollback")
    assert (marker["by"], marker["via"], marker["rejected"]) == (booked.identity, "magic", None)


def test_a_decision_object_whose_json_form_rejects_with_rollback_rolls_back(booked):
    from jupyter_sandbox import Reject

    assert Reject("no", rollback=True).to_json() == {"approved": False, "reason": "no", "rollback": True}
    booked.action(lambda n: n, name="ask", approval=True)
    with pytest.raises(SandboxInterrupt) as paused:
        booked.eval("await actions.book(1); await actions.ask(2)")
    assert booked.resume(paused.value.run_id, Reject("no", rollback=True)).reason == "no"
    assert booked.undone == [(1, {"booked": 1})]


def test_a_revert_that_raises_is_listed_failed_the_others_still_run_and_it_is_not_retried(booked):
    tries = []

    def refuse(n, result):
        tries.append(n)
        raise RuntimeError("the room is gone")

    booked.action(lambda n: n, name="room", revert=refuse)
    run_id = booked.eval("await actions.book(1); await actions.room(2); await actions.book(3)").run_id
    result = booked.rollback(run_id)
    assert [n for n, _ in booked.undone] == [3, 1]
    assert not result.ok and result.failed[0]["error"]["message"] == "RuntimeError: the room is gone"
    booked.rollback(run_id)
    assert tries == [2]


def test_a_revert_that_hangs_fails_at_the_actions_timeout_and_one_that_exits_is_its_failure(booked):
    import threading

    release = threading.Event()
    booked.action(lambda n: n, name="stuck", timeout=0.2, revert=lambda n, r: release.wait(60))
    booked.action(lambda n: n, name="quits", revert=lambda n, r: sys.exit(3))
    run_id = booked.eval("await actions.book(1); await actions.stuck(2); await actions.quits(3)").run_id
    try:
        result = booked.rollback(run_id)
    finally:
        release.set()
    assert [(f["name"], f["error"]["name"]) for f in result.failed] == [("quits", "SystemExit"), ("stuck", "Timeout")]
    assert booked.undone == [(1, {"booked": 1})] and booked.run(run_id).status == "rolled_back"


def test_of_two_rollbacks_at_once_one_runs_the_reverts_and_the_other_is_refused(booked):
    import threading

    started, go = threading.Event(), threading.Event()
    booked.action(lambda n: n, name="slow", revert=lambda n, r: started.set() or go.wait(60))
    run_id = booked.eval("await actions.book(1); await actions.slow(2)").run_id
    first = threading.Thread(target=booked.rollback, args=(run_id,))
    first.start()
    try:
        assert started.wait(60)
        with pytest.raises(RunBusyError):
            booked.rollback(run_id)
    finally:
        go.set()
        first.join(60)
    assert booked.undone == [(1, {"booked": 1})] and booked.rollback(run_id).reverted[0]["name"] == "slow"


def test_a_rollback_naming_an_unregistered_action_changes_nothing(booked, store_path):
    with Sandbox(store_path) as first:
        _booking(first, [])
        run_id = first.eval("await actions.book(1)").run_id
    with Sandbox(store_path) as other:
        with pytest.raises(RunStateError, match="book, which this sandbox has not registered"):
            other.rollback(run_id)
        assert other.run(run_id).status == "completed"


def test_a_child_run_is_rolled_back_through_its_top_level_run(booked):
    booked.eval("await ctx.delegate({script: 'await actions.book(1)'})")
    parent = booked.runs(limit=1)[0].id
    with pytest.raises(RunStateError, match="child run"):
        booked.rollback(booked.store.children(parent)[0])


def test_a_run_running_now_cannot_be_rolled_back(booked):
    import threading

    started, go = threading.Event(), threading.Event()
    booked.action(lambda n: started.set() or go.wait(60), name="slow")
    worker = threading.Thread(target=lambda: booked.eval("await actions.slow(1)", name="slow"))
    worker.start()
    try:
        assert started.wait(60)
        with pytest.raises(RunBusyError):
            booked.rollback(booked.runs(limit=1)[0].id)
    finally:
        go.set()
        worker.join(60)


# -- a crash at every store write of a rollback: the property ----------------------------------------------------


class Crash(BaseException):
    """The process died here: nothing after it reaches the store."""


STEPS = st.lists(st.sampled_from(["undo", "keep", "child"]), min_size=1, max_size=4)
ENDS = st.sampled_from(["completed", "failed", "interrupted"])


def _crash_script(steps: list[str], end: str) -> tuple[str, list[int]]:
    """The script, and the inputs of its revertible calls in the order they completed."""
    lines, order, n = [], [], 0
    for step in steps:
        n += 1
        if step == "undo":
            lines.append(f"await actions.undo({n});")
            order.append(n)
        elif step == "keep":
            lines.append(f"await actions.keep({n});")
        else:
            lines.append(
                "await ctx.delegate({script: 'await actions.undo(ctx.input); await actions.keep(0); "
                f"await actions.undo(ctx.input + 1)', input: {n * 100}}});"
            )
            order += [n * 100, n * 100 + 1]
    lines.append(
        {"completed": "return 1;", "failed": "throw new Error('stop');", "interrupted": "await actions.ask(0);"}[end]
    )
    return "\n".join(lines), order


def _crash_actions(sb: Sandbox, undone: list) -> None:
    sb.action(lambda n: n, name="undo", revert=lambda n, result: undone.append(n))
    sb.action(lambda n: n, name="keep")
    sb.action(lambda n: n, name="ask", approval=True)


def _cut_at(sb: Sandbox, k: int, writes: list[str]) -> None:
    """Make the store die just before its ``k``-th write (counted from 0): that write and every later one."""
    store = sb.store
    for name in ("claim", "append", "update_run", "finish_attempt"):
        original = getattr(store, name)

        def cut(*args, _original=original, _name=name, **kwargs):
            if len(writes) >= k:
                writes.append(_name)
                raise Crash()
            writes.append(_name)
            return _original(*args, **kwargs)

        setattr(store, name, cut)


@settings(max_examples=scaled(5), suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=STEPS, end=ENDS)
def test_a_rollback_cut_at_any_store_write_resumes_and_runs_each_revert_once_newest_first(new_store, steps, end):
    """The process dies just before one of the rollback's store writes (each in turn); another process
    rolls back again. Each revert runs once, newest first; the one cut between its ``revert`` entry and
    its outcome runs once more (its start is recorded, its outcome is not), and only that one."""
    url = new_store()
    source, order = _crash_script(steps, end)
    k = 0
    while True:
        first_undone: list[int] = []
        with Sandbox(url) as sb:
            _crash_actions(sb, first_undone)
            try:
                run_id = sb.eval(source).run_id
            except (ScriptError, SandboxInterrupt):
                run_id = sb.runs(limit=1)[0].id
            writes: list[str] = []
            _cut_at(sb, k, writes)
            try:
                sb.rollback(run_id)
                crashed = False
            except Crash:
                crashed = True
        again: list[int] = []
        with Sandbox(url) as other:
            _crash_actions(other, again)
            result = other.rollback(run_id)
            assert other.rollback(run_id) == result and other.run(run_id).status == "rolled_back"
            entries = other.run(run_id).entries
        undone = first_undone + again
        assert sorted(set(undone), key=undone.index) == order[::-1], (k, undone)
        twice = [n for n in set(undone) if undone.count(n) > 1]
        assert len(twice) <= 1 and all(undone.count(n) == 2 for n in twice)
        if twice:  # the cut fell on the outcome of the revert that had just run
            assert first_undone[-1] == twice[0] and writes[-1] == "append"
        assert [i["input"] for i in result.reverted] == order[::-1]
        assert sum(e["kind"] == "rolled_back" for e in entries) == 1
        if not crashed:
            break
        k += 1
    assert k >= 3


# -- a real crash: SIGKILL of the process running the revert ------------------------------------------------------

_KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from jupyter_sandbox import Sandbox
    store, log, run_id = sys.argv[1:]
    def undo(n, result):
        with open(log, "a") as f:
            f.write(f"{n}\\n")
        if n == 2:
            os.kill(os.getpid(), signal.SIGKILL)
    sb = Sandbox(store)
    sb.action(lambda n: n, name="undo", revert=undo)
    sb.rollback(run_id)
    """
)


def test_a_rollback_killed_inside_a_revert_is_finished_by_the_next_one_running_that_revert_again(tmp_path, store_url):
    log = tmp_path / "undone.log"

    def undo(n, result):
        with open(log, "a") as f:
            f.write(f"{n}\n")

    with Sandbox(store_url) as sb:
        sb.action(lambda n: n, name="undo", revert=undo)
        run_id = sb.eval("for (const n of [1, 2, 3]) await actions.undo(n)").run_id
    killed = subprocess.run([sys.executable, "-c", _KILLED, store_url, str(log), run_id], check=False, timeout=300)
    assert killed.returncode == -signal.SIGKILL
    with Sandbox(store_url) as sb:
        sb.action(lambda n: n, name="undo", revert=undo)
        assert sb.run(run_id).status == "stalled"
        with pytest.raises(RunStateError, match="rolled back"):
            sb.resume(run_id)
        result = sb.rollback(run_id)
    assert log.read_text().split() == ["3", "2", "2", "1"]
    assert [i["input"] for i in result.reverted] == [3, 2, 1]


def test_a_worker_finishes_a_rollback_whose_process_was_killed_once_its_lease_lapsed(tmp_path, store_url):
    """The scheduler's due runs include a rollback that stopped half-way: it is finished, not resumed."""
    log = tmp_path / "undone.log"

    def undo(n, result):
        with open(log, "a") as f:
            f.write(f"{n}\n")

    with Sandbox(store_url) as sb:
        sb.action(lambda n: n, name="undo", revert=undo)
        run_id = sb.eval("for (const n of [1, 2, 3]) await actions.undo(n)").run_id
    env = {**os.environ, "JUPYTER_SANDBOX_LEASE_SECONDS": "0.2"}
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED, store_url, str(log), run_id], check=False, timeout=300, env=env
    )
    assert killed.returncode == -signal.SIGKILL
    with Sandbox(store_url) as worker:
        worker.action(lambda n: n, name="undo", revert=undo)
        give_up = time.monotonic() + bound(60)  # only bounds a hang: the lease lapses in 0.2 s
        while worker.run(run_id).status != "rolled_back" and time.monotonic() < give_up:
            worker.run_due()
            time.sleep(0.05)
        assert worker.run(run_id).status == "rolled_back"
    assert log.read_text().split() == ["3", "2", "2", "1"]


# -- the other ways in: the magic, the MCP server, an MCP tool's revert -------------------------------------------


def test_the_magic_rolls_a_run_back_and_lists_what_it_reverted(tmp_path, monkeypatch):
    import jupyter_sandbox
    from jupyter_sandbox.notebook import defaults as notebook

    with notebook_shell(tmp_path, monkeypatch) as shell:
        undone: list = []
        jupyter_sandbox.action(lambda n: n, name="book", revert=lambda n, r: undone.append(n))
        run_id = notebook.default_sandbox().eval("await actions.book(1); await actions.book(2)").run_id
        with capture_output() as cap:
            shell.run_cell(f"%sandbox rollback {run_id} --reason tidy")
        assert "2 reverted" in cap.stdout and undone == [2, 1]
        assert notebook.default_sandbox().run(run_id).status == "rolled_back"
        with capture_output() as cap:
            shell.run_cell(f"%sandbox rollback {run_id}")
        assert undone == [2, 1] and "2 reverted" in cap.stdout


def test_the_mcp_server_serves_rollback_run_only_when_started_with_allow_rollback(tmp_path):
    store, seen = str(tmp_path / "runs.sqlite"), {}

    async def roll_back(session, tools) -> None:
        if "rollback_run" in tools:
            ran = await session.call_tool("run_script", {"script": "return await actions.book('blue')"})
            run_id = ran.structured_content["run_id"]
            seen["done"] = (await session.call_tool("rollback_run", {"run_id": run_id})).structured_content
            seen["unknown"] = (await session.call_tool("rollback_run", {"run_id": "r-nope"})).structured_content

    assert "rollback_run" not in with_mcp_server(store, [], tmp_path / "err", roll_back)
    assert "rollback_run" in with_mcp_server(store, ["--allow-rollback"], tmp_path / "err", roll_back)
    assert seen["done"]["status"] == "rolled_back"
    assert seen["done"]["reverted"][0]["value"] == {"cancelled": "blue"}
    assert seen["unknown"]["status"] == "failed" and "r-nope" in seen["unknown"]["error"]["message"]


@pytest.mark.slow
def test_an_mcp_tools_revert_is_given_the_tools_input_and_result_and_an_unknown_tool_is_refused(tmp_path):
    server = str(Path(__file__).resolve().parent / "mcp_servers" / "files.py")
    undone: list = []
    with Sandbox() as sb:
        with pytest.raises(ValueError, match="no tool 'nope'"):
            sb.mcp("files", [sys.executable, server, "files"], revert={"nope": lambda a, r: None})
        sb.mcp("files", [sys.executable, server, "files"], revert={"write_file": lambda a, r: undone.append((a, r))})
        with pytest.raises(SandboxInterrupt) as paused:  # write_file is destructive: it needs approval
            sb.eval("return await actions.files.write_file({path: '/a', text: 'hi'})")
        run_id = paused.value.run_id
        result = sb.resume(run_id, True)
        sb.rollback(run_id)
    assert undone == [({"path": "/a", "text": "hi"}, result.output)]


# -- the card's Roll back button ---------------------------------------------------------------------------------


def test_a_rejected_runs_card_offers_roll_back_and_the_click_rolls_it_back(tmp_path, monkeypatch):
    from test_card import node_card_html
    from test_magic import attach

    import jupyter_sandbox
    from jupyter_sandbox.notebook import defaults as notebook

    with notebook_shell(tmp_path, monkeypatch):
        undone: list = []
        jupyter_sandbox.action(lambda n: n, name="book", revert=lambda n, r: undone.append(n))
        jupyter_sandbox.action(lambda n: n, name="ask", approval=True)
        sb = notebook.default_sandbox()
        with pytest.raises(SandboxInterrupt) as paused:
            sb.eval("await actions.book(1); await actions.ask(2)")
        with pytest.raises(ScriptError, match="rejected"):
            sb.resume(paused.value.run_id, False)
        comm = attach(paused.value.run_id)
        assert 'data-act="rollback"' in node_card_html(comm.docs()[-1])
        comm.click(type="rollback")
        assert undone == [1] and comm.docs()[-1]["status"] == "rolled_back"
        assert 'data-act="rollback"' not in node_card_html(comm.docs()[-1])


def test_a_roll_back_click_that_fails_says_why_in_the_card(tmp_path, monkeypatch):
    from test_magic import attach

    from jupyter_sandbox.notebook import defaults as notebook

    with notebook_shell(tmp_path, monkeypatch):
        sb = notebook.default_sandbox()
        with Sandbox(sb.store.path) as other:  # a run of an action this kernel has not registered
            other.action(lambda n: n, name="elsewhere")
            run_id = _failed_run(other, "await actions.elsewhere(1); throw new Error('stop')")
        comm = attach(run_id)
        comm.click(type="rollback")
        assert "elsewhere, which this sandbox has not registered" in comm.docs()[-1]["notice"]
        assert sb.run(run_id).status == "failed"
