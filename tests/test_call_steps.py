"""One live call's steps, each on its own and without a realm: gate, validate, run, classify (and failure)."""

from __future__ import annotations

import asyncio
import json
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from pydantic import BaseModel

from jupyter_sandbox import ActionInterrupt, Reject
from jupyter_sandbox.actions import Action, Outcome
from jupyter_sandbox.agents.catalog import spec_of
from jupyter_sandbox.calling import classify, failure, gate, run, validate
from jupyter_sandbox.decisions import Approve


class Order(BaseModel):
    total: int


def typed(approval=False) -> Action:
    def place(order: Order) -> dict:
        """Place an order."""
        return {"placed": order.total}

    action = Action("place", place, approval=approval)
    spec_of(action)
    return action


def untyped(fn=lambda x: x) -> Action:
    return Action("echo", fn)


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(1) as executor:
        yield executor


# gate


def test_gate_pauses_a_call_that_needs_approval_showing_its_action_and_input():
    outcome = gate(typed(approval=True), {"total": 5}, True)
    assert outcome.kind == "interrupt" and outcome.approval
    assert outcome.data["action"] == "place" and outcome.data["input"] == {"total": 5}


def test_gate_asks_no_human_to_approve_a_call_whose_input_is_invalid():
    outcome = gate(typed(approval=True), {"total": "many"}, True)
    assert outcome.kind == "error" and outcome.error["name"] == "InvalidInput"


def test_gate_ends_a_rejected_call_as_rejected_with_the_reason():
    outcome = gate(untyped(), 1, Reject("too dear"))
    assert outcome.kind == "error" and outcome.error == {"name": "Rejected", "message": "echo was rejected: too dear"}


@pytest.mark.parametrize("approval", [False, Approve()], ids=["none", "approved"])
def test_gate_lets_an_unguarded_or_approved_call_go_on(approval):
    assert gate(untyped(), 1, approval) is None


# validate


def test_validate_binds_a_valid_input_to_the_functions_parameters():
    (order,), kwargs = validate(typed(), {"total": 3})
    assert order == Order(total=3) and kwargs == {}


def test_validate_names_every_issue_of_an_invalid_input():
    outcome = validate(typed(), {"total": "x"})
    assert isinstance(outcome, Outcome) and outcome.error["issues"] and "invalid input" in outcome.error["message"]


def test_validate_passes_an_untyped_input_as_it_is_and_none_to_a_function_taking_none():
    assert validate(untyped(), [1]) == (([1],), {})
    assert validate(Action("tick", lambda: 1), [1]) == ((), {})


# run


def test_run_awaits_an_async_function_on_the_loop(pool):
    async def double(x):
        return 2 * x

    assert asyncio.run(run(Action("double", double), (21,), {}, pool, None)) == 42


def test_run_runs_a_plain_function_in_place_only_when_its_last_call_was_quick(pool):
    offered = []

    def inline(call):
        offered.append(call)
        return True, call()

    action = untyped()
    assert asyncio.run(run(action, (1,), {}, pool, None, inline)) == 1 and offered == []  # not yet known quick
    assert action.quick
    assert asyncio.run(run(action, (2,), {}, pool, None, inline)) == 2 and len(offered) == 1


def test_run_never_runs_a_call_with_a_time_limit_in_place(pool):
    action = untyped()
    action.quick = True
    assert asyncio.run(run(action, (1,), {}, pool, 5.0, lambda call: pytest.fail("ran in place"))) == 1


def test_run_carries_a_plain_functions_system_exit_out_as_the_calls_failure(pool):
    def leave(_):
        sys.exit(3)

    action = untyped(leave)
    with pytest.raises(Exception) as raised:  # an Exception: a SystemExit in the loop's future would stop it
        asyncio.run(run(action, (1,), {}, pool, None))
    assert failure(action, raised.value, None).error["name"] == "SystemExit"


def test_run_stops_waiting_past_its_limit(pool):
    async def slow(_):
        await asyncio.Event().wait()

    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(run(Action("slow", slow), (1,), {}, pool, 0.01))


# classify and failure


def test_classify_keeps_what_the_script_sees_and_its_json():
    outcome = classify(untyped(), {"pair": (1, 2)})
    assert outcome.kind == "ok" and outcome.value == {"pair": [1, 2]}
    assert json.loads(outcome.json) == {"pair": [1, 2]}  # the text settled with (its spacing is the encoder's)


def test_classify_dumps_a_typed_result_through_its_schema():
    def total() -> Order:
        return Order(total=2)

    action = Action("total", total)
    spec_of(action)
    assert classify(action, Order(total=2)).value == {"total": 2}


def test_classify_names_a_result_that_is_not_json():
    outcome = classify(untyped(), {"when": object()})
    assert outcome.kind == "error" and outcome.error["name"] == "TypeError" and "$.when" in outcome.error["message"]


def test_failure_turns_an_interrupt_into_one_with_copies_of_its_data_and_state():
    data = {"draft": ["x"]}
    outcome = failure(untyped(), ActionInterrupt(data=data, state=1), None)
    data["draft"].append("edited later")
    assert outcome.kind == "interrupt" and outcome.data == {"draft": ["x"]} and outcome.state == 1


def test_failure_names_a_timeout_with_its_limit():
    outcome = failure(untyped(), asyncio.TimeoutError(), 2.5)
    assert outcome.kind == "timeout" and outcome.error["message"] == "echo did not finish within 2.5 s"


def test_failure_describes_any_exception_as_the_scripts_error():
    outcome = failure(untyped(), ZeroDivisionError("division by zero"), None)
    assert outcome.error["name"] == "ZeroDivisionError" and outcome.error["message"].endswith("division by zero")


def test_failure_of_a_run_being_cancelled_is_not_the_calls():
    async def cancelled() -> Outcome | None:
        task = asyncio.current_task()
        task.cancel()
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError as exc:
            return failure(untyped(), exc, None)
        return Outcome("ok")

    assert asyncio.run(cancelled()) is None
