"""The replay plan (engine/plan.py): one type whether it comes from a run's journal or a call log alone,
and one form the realm reads."""

from __future__ import annotations

import pytest

from jupyter_sandbox import ActionInterrupt, InvalidCallLog, Sandbox, SandboxInterrupt
from jupyter_sandbox.engine.journal import Journal
from jupyter_sandbox.engine.plan import ReplayPlan

RACE = """
const [a, b] = await Promise.all([actions.slow(1), actions.fast(2)]);
const t = Date.now();
await ctx.sleep(1);
try { await actions.broken(3) } catch (e) {}
return await actions.gate([a, b, t]);
"""


@pytest.fixture
def paused():
    sb = Sandbox()

    @sb.action
    async def slow(x):
        import asyncio

        await asyncio.sleep(0.05)
        return x

    @sb.action
    def fast(x):
        return x

    @sb.action
    def broken(x):
        raise ValueError("no")

    @sb.action
    def gate(x, resume=None):
        if resume is None:
            raise ActionInterrupt(data=x)
        return resume.value

    with pytest.raises(SandboxInterrupt) as caught:
        sb.eval(RACE)
    yield sb, caught.value
    sb.close()


def test_a_plan_from_a_journal_serves_every_completion_in_the_order_it_completed_live(paused):
    sb, pause = paused
    plan = ReplayPlan.from_journal(Journal(sb._engine.store.entries(pause.run_id)))
    assert plan.slots == [1, 0, 2, 3, 4]  # fast finished before slow; then the clock, the timer, the failure
    assert plan.keys[2] == "now" and plan.sync == [2]
    assert [index for index, _ in plan.errors] == [4] and plan.values[4] is None
    assert plan.frontier == 6 and not plan.imported and plan.kinds is None


def test_a_plan_from_the_call_log_the_engine_emitted_serves_what_the_journal_plan_serves(paused):
    sb, pause = paused
    from_journal = ReplayPlan.from_journal(Journal(sb._engine.store.entries(pause.run_id)))
    from_log = ReplayPlan.from_call_log(list(pause.call_log))
    assert from_log.slots == from_journal.slots
    assert from_log.values == from_journal.values
    assert from_log.sync == from_journal.sync
    assert [i for i, _ in from_log.errors] == [i for i, _ in from_journal.errors]
    assert from_log.imported and from_log.kinds is not None


def test_a_bare_call_log_without_order_is_served_in_slot_order_and_keyed_by_the_prelude():
    plan = ReplayPlan.from_call_log(
        [
            {"type": "action", "name": "lookup", "input": "a", "response": "A"},
            None,
            {"type": "random", "response": 0.5},
            {"type": "sleep", "input": 5, "response": "ignored"},
        ]
    )
    assert plan.slots == [0, 2, 3]
    assert plan.keys == [None, "random", None]
    assert plan.values == ["A", 0.5, None]  # a timer delivers null, whatever the log says
    assert plan.kinds == [{"op": "call", "name": "lookup", "input": "a"}, None, {"op": "sleep", "input": 5}]


def test_to_js_gives_the_columns_the_prelude_reads():
    plan = ReplayPlan.from_call_log([{"type": "action", "name": "f", "input": 1, "response": None, "error": "bad"}])
    assert plan.to_js() == {
        "s": [0],
        "k": [None],
        "v": [None],
        "e": [[0, {"message": "bad"}]],
        "sync": [],
        "notes": 0,
        "frontier": 0,
        "kin": [{"op": "call", "name": "f", "input": 1}],
        "imp": 1,
    }


def test_the_first_fault_of_a_call_log_named_is_the_first_in_slot_order():
    with pytest.raises(InvalidCallLog) as caught:
        ReplayPlan.from_call_log(
            [{"type": "action", "name": 7, "response": 1}, {"type": "action", "name": "f", "response": 1, "order": "x"}]
        )
    assert caught.value.position == 0
