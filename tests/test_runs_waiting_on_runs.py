"""Runs that wait on other runs: an action's ``sb.eval`` nests to the documented depth, and nothing one run
runs in place holds up another run it waits on.

A hang here is what the old code did: each wait below is bounded only so that a regression fails instead of
hanging the suite (the machine's speed decides nothing).
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from pace import bound

from jupyter_sandbox import ActionError, Sandbox
from jupyter_sandbox.engine.loop import MAX_HELPERS
from jupyter_sandbox.engine.nesting import MAX_NESTING
from jupyter_sandbox.engine.pool import ActionPool

HANG = bound(40.0)  # seconds that only bound a hang


def _in_thread(fn) -> list:
    """Run ``fn`` on a thread; its result (or exception) lands in the returned list, empty while it hangs."""
    out: list = []

    def main():
        try:
            out.append(fn())
        except BaseException as exc:  # the test reads it
            out.append(exc)

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    thread.join(HANG)
    return out


def _nesting(sb: Sandbox) -> None:
    @sb.action
    def nest(depth):
        if depth == 0:
            return 0
        return sb.eval("return await actions.nest(ctx.input)", input=depth - 1).output + 1


@pytest.mark.parametrize("workers", [32, 2])
def test_sb_eval_from_actions_on_workers_nests_to_the_documented_depth_whatever_the_pool_size(workers):
    sb = Sandbox()
    sb._engine.executor = ActionPool(workers)
    _nesting(sb)  # never quick: each level runs on a worker, which waits for the level below it
    out = _in_thread(lambda: sb.eval("return await actions.nest(ctx.input)", input=MAX_HELPERS).output)
    assert out == [MAX_HELPERS], "the nested runs deadlocked on the worker pool" if not out else out
    sb.close()


def test_two_chains_of_nested_runs_at_once_both_finish_on_a_small_pool():
    sb = Sandbox()
    sb._engine.executor = ActionPool(2)
    _nesting(sb)
    results: list = []
    threads = [
        threading.Thread(target=lambda: results.append(sb.eval("return await actions.nest(16)").output), daemon=True)
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG)
    assert results == [16, 16]
    sb.close()


def test_a_quick_def_in_place_never_blocks_another_runs_async_action_it_waits_on():
    sb = Sandbox()
    waiting = threading.Event()  # the producer's run is awaiting its lone async action
    consuming = threading.Event()  # the consumer's quick def has started
    produced = threading.Event()

    @sb.action
    async def produce():
        waiting.set()
        while not consuming.is_set():  # needs the loop to go on: it cannot while a def blocks it in place
            await asyncio.sleep(0.005)
        produced.set()
        return "made"

    @sb.action
    def consume(wait):
        if wait:
            consuming.set()
            return produced.wait(HANG)
        return None

    sb.eval("await actions.consume(false); await actions.consume(false)")  # quick: in place from now on
    producer = threading.Thread(target=lambda: sb.eval("return await actions.produce()"), daemon=True)
    producer.start()
    assert waiting.wait(HANG)
    out = _in_thread(lambda: sb.eval("return await actions.consume(true)").output)
    producer.join(HANG)
    assert out == [True], "the def ran in place and held up the async action it waited on"
    sb.close()


def _async_nesting(sb: Sandbox, levels: list[int]) -> None:
    @sb.action
    async def nest(depth):
        levels.append(depth)
        if depth == 0:
            return 0
        return (await sb.aeval("return await actions.nest(ctx.input)", input=depth - 1)).output + 1


def test_sb_aeval_from_async_actions_nests_to_the_documented_depth():
    sb = Sandbox()
    levels: list[int] = []
    _async_nesting(sb, levels)
    assert sb.eval("return await actions.nest(ctx.input)", input=MAX_NESTING - 1).output == MAX_NESTING - 1
    sb.close()


def test_sb_aeval_nested_past_the_bound_fails_naming_the_nesting_not_a_recursion_error():
    sb = Sandbox()
    levels: list[int] = []
    _async_nesting(sb, levels)
    with pytest.raises(ActionError) as caught:
        sb.eval("return await actions.nest(ctx.input)", input=10 * MAX_NESTING)
    assert "nesting" in str(caught.value) and "RecursionError" not in str(caught.value)
    assert len(levels) == MAX_NESTING  # one call per script, the outermost script included; the 65th never started
    sb.close()


CHAIN = (
    "const {n, s, stop} = ctx.input; if (n >= stop) return n; "
    "return await ctx.delegate({script: s, input: {n: n + 1, s, stop}})"
)


def _chain(sb: Sandbox, children: int):
    return sb.eval(
        "return await ctx.delegate({script: ctx.input.s, input: ctx.input})",
        input={"n": 1, "s": CHAIN, "stop": children},
    )


def test_child_runs_nest_to_the_documented_depth_the_outermost_script_included():
    sb = Sandbox()
    assert _chain(sb, MAX_NESTING - 1).output == MAX_NESTING - 1  # the top script and 63 children inside it
    sb.close()


def test_child_runs_nested_past_the_bound_fail_naming_the_nesting_not_a_recursion_error():
    sb = Sandbox()
    with pytest.raises(ActionError) as caught:
        _chain(sb, 3 * MAX_NESTING)
    assert "nesting: scripts nest at most 64 deep" in str(caught.value)
    sb.close()
