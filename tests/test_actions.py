"""Actions: approval, concurrency, and how they are called."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pace import bound

from jupyter_sandbox import ActionInterrupt, Resume, SandboxInterrupt

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)


@pytest.fixture
def mailer(sb):
    sent = []

    @sb.action(approval=True)
    def send_email(message):
        sent.append(message)
        return {"sent": message["to"]}

    sb.sent = sent
    return sb


SEND = """
try {
  return await actions.send_email({to: 'ada@example.com', body: 'hi'});
} catch (e) {
  return {caught: e.message};
}
"""


def test_approval_interrupts_before_the_first_call(mailer):
    with pytest.raises(SandboxInterrupt) as info:
        mailer.eval(SEND)
    assert info.value.interrupt.data == {"action": "send_email", "input": {"to": "ada@example.com", "body": "hi"}}
    assert info.value.interrupt.approval is True
    assert mailer.sent == []


def test_approving_calls_the_action_once(mailer):
    with pytest.raises(SandboxInterrupt) as info:
        mailer.eval(SEND)
    assert mailer.resume(info.value.run_id, True).output == {"sent": "ada@example.com"}
    assert mailer.sent == [{"to": "ada@example.com", "body": "hi"}]


def test_approving_with_edits_calls_the_action_with_the_edited_input(mailer):
    with pytest.raises(SandboxInterrupt) as info:
        mailer.eval(SEND)
    edited = {"to": "grace@example.com", "body": "hello"}
    result = mailer.resume(info.value.run_id, {"approved": True, "input": edited})
    assert result.output == {"sent": "grace@example.com"}
    assert mailer.sent == [edited]


def test_rejecting_throws_a_catchable_action_error_with_the_reason(mailer):
    with pytest.raises(SandboxInterrupt) as info:
        mailer.eval(SEND)
    result = mailer.resume(info.value.run_id, {"approved": False, "reason": "wrong person"})
    assert result.output == {"caught": "send_email was rejected: wrong person"}
    assert mailer.sent == []


def test_a_plain_false_rejects(mailer):
    with pytest.raises(SandboxInterrupt) as info:
        mailer.eval(SEND)
    assert mailer.resume(info.value.run_id, False).output == {"caught": "send_email was rejected"}


def test_an_approved_call_is_replayed_not_asked_again(mailer):
    @mailer.action
    def gate(_, resume=None):
        if resume is None:
            raise ActionInterrupt(data="later")
        return "through"

    source = "const r = await actions.send_email({to: 'a', body: 'b'}); return [r, await actions.gate(1)]"
    with pytest.raises(SandboxInterrupt) as first:
        mailer.eval(source)
    with pytest.raises(SandboxInterrupt) as second:
        mailer.resume(first.value.run_id, True)
    assert second.value.interrupt.name == "gate"
    assert mailer.resume(first.value.run_id, True).output == [{"sent": "a"}, "through"]
    assert len(mailer.sent) == 1


def test_approval_through_eval_with_the_call_log(mailer):
    with pytest.raises(SandboxInterrupt) as info:
        mailer.eval(SEND)
    it = info.value
    result = mailer.eval(SEND, call_log=it.call_log, resume=Resume(position=it.position, value=True))
    assert result.output == {"sent": "ada@example.com"}


def test_concurrent_calls_run_concurrently(sb):
    # Each call returns only once all ten are running at the same time: calls made one after another would
    # each wait at the barrier alone until it gives up.
    together = threading.Barrier(10, timeout=bound(10))

    @sb.action
    def meet(i):
        together.wait()
        return i

    result = sb.eval("return await Promise.all([...Array(10).keys()].map(i => actions.meet(i)))")
    assert result.output == list(range(10))


def test_concurrent_async_calls_run_concurrently(sb):
    arrived: list[int] = []
    everyone = asyncio.Event()

    @sb.action
    async def meet(i):
        arrived.append(i)
        if len(arrived) == 5:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), bound(10))
        return i

    result = sb.eval("return await ctx.parallel([1, 2, 3, 4, 5].map(i => () => actions.meet(i)))")
    assert result.output == [1, 2, 3, 4, 5]


def test_an_action_without_parameters_is_called_without_input(sb):
    @sb.action
    def ping():
        return "pong"

    assert sb.eval("return await actions.ping()").output == "pong"


def test_action_names_can_be_given(sb):
    sb.action(lambda x: x * 3, name="triple")
    assert sb.eval("return await actions.triple(3)").output == 9


def test_an_invalid_action_name_is_refused(sb):
    with pytest.raises(ValueError, match="identifier"):
        sb.action(lambda x: x, name="not valid")
