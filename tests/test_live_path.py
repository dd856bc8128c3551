"""The live path's two shortcuts: a lone call commits once, and a quick plain action runs in place.

Neither may change what a run does or what its journal holds: these tests pin
that, and where each shortcut must not apply.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import queue
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pace import bound

from jupyter_sandbox import ActionError, ActionInterrupt, RunBusyError, Sandbox, SandboxInterrupt
from jupyter_sandbox.engine import calls as calls_module
from jupyter_sandbox.errors import StoreError
from jupyter_sandbox.stores.sql import SQLStore


class CountingStore:
    """Counts the store's journal writes (the commits a run pays for)."""

    def __init__(self, sb: Sandbox):
        self.appends: list[list[str]] = []
        store = sb.store
        original = store.append

        def append(run_id, entries):
            self.appends.append([e.kind for e, _ in entries])
            return original(run_id, entries)

        store.append = append  # type: ignore[method-assign]


def _thread_names(sb: Sandbox) -> list[str]:
    names: list[str] = []

    @sb.action
    def where(x):
        names.append(threading.current_thread().name)
        return x

    return names


# -- one commit per lone call ------------------------------------------------------------


def test_a_lone_call_commits_with_its_result_in_one_write(sb):
    counted = CountingStore(sb)

    @sb.action
    async def noop(x):
        return x

    assert sb.eval("let t = 0; for (let i = 0; i < 5; i++) t += await actions.noop(i); return t").output == 10
    assert counted.appends[0] == ["attempt", "call"]  # the attempt's start is committed before anything runs
    assert counted.appends[1:] == [["result"]] + [["call", "result"]] * 4


def test_a_lone_call_still_running_is_journaled_before_its_result(sb):
    seen: list[list[str]] = []

    @sb.action
    async def slow(x):
        await asyncio.sleep(0.3)  # far past the 20 ms after which a running call is committed
        run = sb.runs(limit=1)[0]
        seen.append([e["kind"] for e in sb.run(run.id).entries])
        return x

    @sb.action
    async def quick(x):
        return x

    assert sb.eval("await actions.quick(0); return await actions.slow(1)").output == 1  # (an attempt's first
    assert seen == [["attempt", "call", "result", "call"]]  # call always commits before it runs)


def test_quick_lone_calls_share_one_timer_for_their_visibility(sb, monkeypatch):
    timers: list[str] = []
    real = asyncio.BaseEventLoop.call_later

    def counted(loop, delay, callback, *args, **kwargs):
        timers.append(getattr(callback, "__name__", ""))
        return real(loop, delay, callback, *args, **kwargs)

    monkeypatch.setattr(asyncio.BaseEventLoop, "call_later", counted)
    monkeypatch.setattr(calls_module, "_VISIBLE_AFTER", 600.0)  # it never fires while the run lasts

    @sb.action
    async def noop(x):
        return x

    assert sb.eval("for (let i = 0; i < 200; i++) await actions.noop(i); return 1").output == 1
    # One timer (set again only for a call that starts after it fired), not one made and cancelled per call.
    assert len([name for name in timers if name in ("tick", "flush_in_flight")]) == 1


def test_a_child_runs_call_commits_before_the_child_starts(sb):
    seen: list[list[str]] = []

    @sb.action
    def child_step(x):
        parent = next(r for r in sb.runs(include_children=True) if r.parent is None)
        seen.append([e["kind"] for e in sb.run(parent.id).entries])
        return x

    @sb.action
    async def quick(x):
        return x

    sb.eval(
        "await actions.quick(0);"
        "return await ctx.delegate({name: 'c', script: 'return await actions.child_step(ctx.input)', input: 2})"
    )
    assert seen == [["attempt", "call", "result", "call"]]


def test_an_approved_call_commits_its_answer_before_the_action_runs(sb):
    seen: list[list[str]] = []

    @sb.action(approval=True)
    def publish(x):
        seen.append([e["kind"] for e in sb.run(paused.run_id).entries])
        return x

    with pytest.raises(SandboxInterrupt) as caught:
        sb.eval("return await actions.publish(7)")
    paused = caught.value
    assert sb.resume(paused.run_id, True).output == 7
    assert "answer" in seen[0]


def test_a_run_the_store_refuses_mid_call_fails_with_the_stores_error_and_nothing_runs_twice(sb):
    calls: list[int] = []

    @sb.action
    async def noop(x):
        calls.append(x)
        return x

    original = sb.store.append
    failures = iter([True, False, False, False])

    def flaky(run_id, entries):
        if any(e.kind == "result" for e, _ in entries) and next(failures):
            from jupyter_sandbox.errors import StoreError

            raise StoreError("disk I/O error (injected)")
        return original(run_id, entries)

    sb.store.append = flaky  # type: ignore[method-assign]
    with pytest.raises(Exception, match="injected"):
        sb.eval("await actions.noop(1); return await actions.noop(2)")
    assert calls == [1]


# -- a quick plain action runs in place ---------------------------------------------------


def test_a_quick_plain_action_awaited_alone_runs_on_the_engine_thread_after_its_first_call(sb):
    names = _thread_names(sb)
    sb.eval("for (let i = 0; i < 3; i++) await actions.where(i)")
    assert names[0].startswith("jsbx-action")  # the first call is measured on a worker
    assert names[1:] == ["jupyter-sandbox-engine"] * 2


def test_plain_calls_in_flight_together_run_on_workers(sb):
    names = _thread_names(sb)
    sb.eval("await actions.where(0); await Promise.all([actions.where(1), actions.where(2)])")
    assert all(name.startswith("jsbx-action") for name in names[1:])


def test_a_plain_action_with_a_timeout_never_runs_in_place():
    sb = Sandbox(store=":memory:")
    try:
        names: list[str] = []

        @sb.action(timeout=5)
        def where(x):
            names.append(threading.current_thread().name)
            return x

        sb.eval("for (let i = 0; i < 3; i++) await actions.where(i)")
        assert all(name.startswith("jsbx-action") for name in names)
    finally:
        sb.close()


def test_a_plain_action_that_was_slow_goes_back_to_a_worker(sb):
    names: list[str] = []

    @sb.action
    def sometimes_slow(x):
        names.append(threading.current_thread().name)
        if x == 2:
            time.sleep(0.01)
        return x

    sb.eval("for (let i = 0; i < 5; i++) await actions.sometimes_slow(i)")
    assert names[1:3] == ["jupyter-sandbox-engine"] * 2  # quick: in place, the slow one included
    assert names[3].startswith("jsbx-action")  # after the slow call: a worker again
    assert names[4] == "jupyter-sandbox-engine"  # quick once more


def test_a_plain_action_running_in_place_may_run_another_script(sb):
    @sb.action
    def nested(x):
        if x == 0:
            return 0
        return sb.eval("return (await actions.inner(ctx.input)) * 2", input=x).output

    @sb.action
    def inner(x):
        if x == 0:
            return 0
        return sb.eval("return ctx.input + 1", input=x).output  # a script inside a script inside a script

    sb.eval("await actions.inner(0); await actions.inner(0)")  # inner is quick: in place from now on
    assert sb.eval("await actions.nested(0); return await actions.nested(20)").output == 42


def test_a_plain_action_running_in_place_may_use_asyncio_run(sb):
    @sb.action
    def doubled(x):
        async def twice():
            await asyncio.sleep(0)
            return x * 2

        return asyncio.run(twice())

    assert sb.eval("await actions.doubled(0); await actions.doubled(1); return await actions.doubled(21)").output == 42
    assert sb.eval("return 1 + await actions.doubled(1)").output == 3  # the engine's loop survived it


@pytest.mark.parametrize("raised", [ValueError("bad value"), SystemExit(3)])
def test_a_plain_action_failing_in_place_fails_as_on_a_worker(sb, raised):
    @sb.action
    def fails(x):
        if x:
            raise raised
        return x

    with pytest.raises(ActionError) as caught:
        sb.eval("await actions.fails(0); await actions.fails(0); await actions.fails(1)")
    assert type(raised).__name__ in str(caught.value)


def test_a_plain_action_interrupting_in_place_pauses_the_run(sb):
    @sb.action
    def ask(x, resume=None):
        if x and resume is None:
            raise ActionInterrupt(data={"question": x})
        return resume.value if resume else x

    with pytest.raises(SandboxInterrupt) as caught:
        sb.eval("await actions.ask(0); await actions.ask(0); return await actions.ask('why?')")
    assert caught.value.interrupts[0].data == {"question": "why?"}
    assert sb.resume(caught.value.run_id, "because").output == "because"


def test_an_interrupting_call_does_not_make_its_action_run_in_place(sb):
    names: list[str] = []

    @sb.action
    def review(x, resume=None):
        names.append(threading.current_thread().name)
        if resume is None:
            raise ActionInterrupt(data=x)  # quick, but says nothing of the work after the answer
        time.sleep(0.005)  # the work after the answer is the slow part
        return resume.value

    for _ in range(2):
        with pytest.raises(SandboxInterrupt) as caught:
            sb.eval("return await actions.review(1)")
        sb.resume(caught.value.run_id, "ok")
    assert all(name.startswith("jsbx-action") for name in names)


# -- found by attacking the shortcuts ---------------------------------------------------------


def test_a_run_awaited_on_the_callers_own_event_loop_makes_quick_calls_as_on_the_engine_loop(sb):
    @sb.action
    def quick(x):
        return x

    async def main():  # Sandbox.aeval on a loop of the caller's (a script's asyncio.run, a notebook's loop)
        return await sb.aeval("let t = 0; for (let i = 0; i < 4; i++) t += await actions.quick(i); return t")

    assert asyncio.run(main()).output == 6


def test_a_plain_action_running_in_place_sees_no_event_loop_as_on_a_worker(sb):
    def run_sync(coroutine):  # the usual "get the thread's loop, or make one" wrapper of sync libraries
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
        return loop.run_until_complete(coroutine)

    async def double(x):
        return x * 2

    @sb.action
    def doubled(x):
        return run_sync(double(x))

    assert sb.eval("const a = []; for (let i = 0; i < 3; i++) a.push(await actions.doubled(i)); return a").output == [
        0,
        2,
        4,
    ]
    assert sb.eval("return await actions.doubled(21)").output == 42  # the engine's loop survived it


def test_a_plain_action_running_in_place_goes_through_an_event_loop_policy_of_the_users_own(sb):
    set_here: list[object] = []  # what the policy's own setter was given on an engine thread

    class RecordingPolicy(asyncio.DefaultEventLoopPolicy):
        def set_event_loop(self, loop):
            if threading.current_thread().name.startswith("jupyter-sandbox-engine"):
                set_here.append(loop)
            super().set_event_loop(loop)

    @sb.action
    def doubled(x):
        try:
            current = asyncio.get_event_loop()  # (a loop an earlier action left current may be, as on a worker)
        except RuntimeError:
            return x * 2
        assert not current.is_running(), "the engine's running loop was current inside an action run in place"
        return x * 2

    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(RecordingPolicy())
    try:
        assert sb.eval("let t = 0; for (let i = 0; i < 4; i++) t += await actions.doubled(i); return t").output == 12
    finally:
        asyncio.set_event_loop_policy(previous)
    assert len(set_here) >= 4  # its own setter hid the engine's loop and put it back, for each call run in place


QUICK_CALLS = 1000  # far more calls than a run makes between two turns of the engine's loop


def _endless_quick_calls(sb: Sandbox, on_call) -> list[int]:
    calls = [0]

    @sb.action
    def step(x):
        calls[0] += 1
        return on_call(calls[0]) or calls[0] >= QUICK_CALLS

    return calls


def test_other_work_on_the_engine_loop_gets_a_turn_while_a_run_makes_quick_calls_in_place(sb):
    turned = threading.Event()

    def on_call(n):
        if n == 2:  # in place, on the engine thread: ask the loop for a turn
            sb._loop.loop.call_soon_threadsafe(turned.set)
        return turned.is_set()

    calls = _endless_quick_calls(sb, on_call)
    sb.eval("while (!(await actions.step(0))) {}")
    assert turned.is_set() and calls[0] < QUICK_CALLS  # it had its turn long before the script stopped


@pytest.mark.parametrize("failing", [False, True])
def test_a_run_making_quick_calls_in_place_can_be_cancelled(sb, failing):
    started: list = []

    def on_call(n):
        if n == 2:
            started[0].cancel()  # as Ctrl-C does (EngineLoop.run)
        if failing and n < QUICK_CALLS:
            raise ValueError("failing quickly")
        return False

    calls = _endless_quick_calls(sb, on_call)
    source = "for (;;) { try { if (await actions.step(0)) return } catch (e) {} }"
    started.append(sb._loop.submit(sb.aeval(source, name="endless")))
    with pytest.raises(concurrent.futures.CancelledError):
        started[0].result()
    while sb.runs(limit=1)[0].status == "running":  # the run records that it was cancelled
        time.sleep(0.01)
    assert sb.runs(limit=1)[0].status == "cancelled" and calls[0] < QUICK_CALLS


CRASHING = textwrap.dedent("""
    import os, signal, sys
    from jupyter_sandbox import Sandbox
    sb = Sandbox(sys.argv[1])
    sb.action(lambda: 1, name="first")
    @sb.action
    def charge(x):
        with open(sys.argv[2], "a") as f:
            f.write(x["key"] + "\\n")
        os.kill(os.getpid(), signal.SIGKILL)  # the process dies after the effect, before its result is journaled
    sb.eval(sys.argv[3])
""")


def test_a_call_run_again_after_a_crash_is_given_the_same_clock_and_random_reads(tmp_path):
    """The re-run is the call in flight, with its input: an idempotency key made of them dedupes it."""
    store, effects = str(tmp_path / "runs.sqlite"), tmp_path / "effects.txt"
    source = "await actions.first(); const key = Math.random() + ':' + Date.now(); return await actions.charge({key})"
    subprocess.run([sys.executable, "-c", CRASHING, store, str(effects), source], check=False)
    sb = Sandbox(store)
    try:
        sb.action(lambda: 1, name="first")

        @sb.action
        def charge(x):
            with open(effects, "a") as f:
                f.write(x["key"] + "\n")
            return "charged"

        assert sb.resume(sb.runs()[0].id).output == "charged"
        first, again = effects.read_text().split()
        assert again == first
    finally:
        sb.close()


def test_an_attempt_whose_lease_lapsed_starts_no_new_action(store_url, monkeypatch):
    """A process paused past its lease (a suspended laptop) and taken over may finish the call it was
    running, but starts no other: its next call is committed, and refused, before the action runs."""

    def paused(self, run_id, epoch):
        raise StoreError("this process is paused: it renews nothing")

    monkeypatch.setattr(SQLStore, "_renew", paused)
    monkeypatch.setenv("JUPYTER_SANDBOX_LEASE_SECONDS", "0.2")
    sb, rival = Sandbox(store_url), Sandbox(store_url)
    effects: list[int] = []

    @sb.action
    def effect(i):
        effects.append(i)
        if i == 1:
            time.sleep(0.5)  # past the lease, which nothing renews
        return i

    original = sb.store.append

    def append(run_id, entries):
        original(run_id, entries)
        if [e.slot for e, _ in entries if e.kind == "result"] == [1]:  # between two calls, the run is taken over
            rival.store.claim(run_id, (), source_hash="")

    sb.store.append = append  # type: ignore[method-assign]
    try:
        with pytest.raises(RunBusyError, match="lost its lease"):
            sb.eval("for (let i = 0; i < 4; i++) await actions.effect(i)")
        assert effects == [0, 1]
    finally:
        sb.close()
        rival.close()


# -- a crash before any write: the property ---------------------------------------------------

STEPS = st.lists(st.sampled_from(["random", "now", "plain", "async", "log", "all"]), min_size=1, max_size=10)


def _script(steps: list[str]) -> str:
    lines, n = ["const out = []; let r = null;"], 0
    for step in steps:
        n += 1
        lines.append(
            {
                "random": "r = Math.random();",
                "now": "r = Date.now();",
                "plain": f"out.push(await actions.plain({{i: {n}, r}}));",
                "async": f"out.push(await actions.later({{i: {n}, r}}));",
                "log": f"console.log('step {n}');",
                "all": f"out.push(await Promise.all([actions.plain({{i: {n}, r}}), actions.later({{i: {-n}, r}})]));",
            }[step]
        )
    return "\n".join(lines) + "\nreturn out;"


def _effects(sb: Sandbox, ran: list[dict]) -> None:
    sb.action(lambda x: ran.append(x) or x, name="plain")

    async def later(x):
        ran.append(x)
        return x

    sb.action(later, name="later")


@settings(max_examples=scaled(30), suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_after_a_crash_before_any_write_nothing_recorded_runs_again_and_a_call_run_again_has_its_input(steps):
    """The process dies just before one of its journal writes (each in turn): the store as it was then is
    resumed. A call with a journaled result never runs again; one that ran but left none runs again, once,
    with the same input (docs/replay.md rule 5, and what an idempotency key built from the input relies on)."""
    with tempfile.TemporaryDirectory() as folder:
        path, ran = os.path.join(folder, "live.sqlite"), []
        crashes: list[tuple[str, list[dict]]] = []  # the store just before each write, and what had run by then
        sb = Sandbox(path)
        _effects(sb, ran)
        original = sb.store.append

        def append(run_id, entries):
            saved = os.path.join(folder, f"crash{len(crashes)}.sqlite")
            with sqlite3.connect(path) as source, sqlite3.connect(saved) as target:
                source.backup(target)
            crashes.append((saved, list(ran)))
            return original(run_id, entries)

        sb.store.append = append  # type: ignore[method-assign]
        run_id = sb.eval(_script(steps)).run_id
        sb.close()
        for saved, had_run in crashes:
            resumed, again = Sandbox(saved), []
            _effects(resumed, again)
            recorded = {call["input"]["i"] for call in _answered_calls(resumed, run_id)}
            resumed.resume(run_id, force=True)  # (its owner, this process, is alive: taken over by force)
            resumed.close()
            assert not recorded & {x["i"] for x in again}, "a call with a journaled result ran again"
            lost = [x for x in had_run if x["i"] not in recorded]
            assert all(again.count(x) == 1 for x in lost), (lost, again)


def _answered_calls(sb: Sandbox, run_id: str) -> list[dict]:
    """The journal's call entries that have their result."""
    entries = sb.run(run_id).entries
    calls = {e["slot"]: e for e in entries if e["kind"] == "call"}
    return [calls[e["slot"]] for e in entries if e["kind"] == "result" and e["slot"] in calls]


# -- with the shortcuts or without: the same run ----------------------------------------------

# (no clock read: the realm's clock moves between reads of a manual clock too)
SHAPES = st.lists(st.sampled_from(["plain", "async", "fail", "log", "all", "parallel"]), min_size=1, max_size=12)


def _shaped(steps: list[str]) -> str:
    lines, n = ["const out = []; let r = null, n = 0;"], 0
    for step in steps:
        n += 1
        lines.append(f"n = {n};")
        lines.append(
            {
                "plain": f"out.push(await actions.plain({{i: {n}, r}}));",
                "async": f"out.push(await actions.later({{i: {n}, r}}));",
                "fail": f"try {{ await actions.boom({n}) }} catch (e) {{ out.push(e.message); r = n }}",
                "log": f"console.log('step {n}', r);",
                "all": f"out.push(await Promise.all([actions.later({{i: {n}}}), actions.later({{i: {-n}}})]));",
                "parallel": f"out.push(await ctx.parallel([() => actions.later({n}), () => actions.plain({n})]));",
            }[step]
        )
    return "\n".join(lines) + "\nreturn out;"


def _journaled(steps: list[str], monkeypatch, shortcuts: bool) -> tuple:
    from jupyter_sandbox import ManualClock
    from jupyter_sandbox.engine.calls import Calls

    with monkeypatch.context() as patch:
        if not shortcuts:  # every call started as a task and committed before it runs, as before them
            patch.setattr(Calls, "lone", lambda self: False)
        sb = Sandbox(clock=ManualClock(start=1_800_000_000_000))
        try:
            _effects(sb, [])

            @sb.action
            def boom(n):
                raise ValueError(f"boom {n}")

            for _ in range(2):  # the second run: quick plain actions run in place
                result = sb.eval(_shaped(steps))
            journal = sb.run(result.run_id).entries
            entries = [{k: v for k, v in e.items() if k != "at"} for e in journal if e["kind"] != "attempt"]
            return result.output, result.console, entries
        finally:
            sb.close()


@settings(max_examples=scaled(40), suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=SHAPES)
def test_a_run_and_its_journal_are_the_same_with_the_live_shortcuts_and_without(steps, monkeypatch):
    assert _journaled(steps, monkeypatch, shortcuts=True) == _journaled(steps, monkeypatch, shortcuts=False)


def test_a_script_that_runs_itself_again_from_an_action_without_end_fails_naming_the_nesting(sb):
    levels = [0]

    @sb.action
    def again(x):
        if x == 0:
            return 0  # quick: in place from now on, until it starts a script (then on a worker)
        levels[0] += 1
        if levels[0] > 1000:  # (a safety stop for this test: the recursion itself has no end)
            return levels[0]
        return sb.eval("return await actions.again(1)").output

    sb.eval("return await actions.again(0)")
    with pytest.raises(ActionError, match="calls it again without end"):
        sb.eval("return await actions.again(1)")
    assert levels[0] < 1000


def test_a_plain_action_that_started_a_script_runs_on_a_worker_from_then_on(sb):
    threads = []

    @sb.action
    def maybe(n):
        threads.append(threading.current_thread().name)
        return sb.eval("return 1").output if n == 1 else n

    sb.eval("for (let i = 0; i < 4; i++) await actions.maybe(i)")
    assert threads[1] == "jupyter-sandbox-engine"  # quick after its first call: in place
    assert all(name != "jupyter-sandbox-engine" for name in threads[2:])  # it started a script: never again


def test_a_quick_action_that_waits_for_another_run_on_the_loop_does_not_stop_that_run(sb):
    """In place, a wait that another run on the engine's loop must end would never end: with another run
    under way there, the action runs on a worker."""
    handoff: queue.Queue = queue.Queue()
    handoff.put("earlier")  # the first take is quick: the next one would run in place
    producing = threading.Event()

    @sb.action
    def take(x):
        return handoff.get(timeout=bound(5))

    @sb.action
    def put(x):
        handoff.put(x)
        return x

    @sb.action
    def started(x):
        producing.set()
        return x

    source = "await actions.started(0); await ctx.sleep(800); await actions.put('later')"
    producer = threading.Thread(target=sb.eval, args=(source,))
    producer.start()
    assert producing.wait(bound(10))
    try:
        assert sb.eval("await actions.take(0); return await actions.take(0)").output == "later"
    finally:
        producer.join()


def test_an_approved_call_runs_on_a_worker_even_when_its_action_is_quick(sb):
    names: list[str] = []

    @sb.action(approval=True)
    def publish(x):
        names.append(threading.current_thread().name)
        return x

    for _ in range(3):  # each call quick: only the approval keeps it off the engine's thread
        with pytest.raises(SandboxInterrupt) as caught:
            sb.eval("return await actions.publish(1)")
        assert sb.resume(caught.value.run_id, True).output == 1
    assert names and all(name.startswith("jsbx-action") for name in names)
