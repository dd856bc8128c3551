"""A fork shares nothing with its original: a child run its journal left open is forked with it (or runs
again in the fork), so answering the fork never answers the original, and the other way round."""

from __future__ import annotations

import json

import pytest

from jupyter_sandbox import ActionInterrupt, Sandbox, SandboxInterrupt

CHILD = "return await actions.pay(ctx.input)"
PARENT = f"""
try {{ return await ctx.delegate({{script: {json.dumps(CHILD)}, input: 5}}) }}
catch (e) {{ return "refused: " + e.message }}
"""


def _paying(store: str) -> tuple[Sandbox, list[int]]:
    sb = Sandbox(store)
    paid: list[int] = []

    @sb.action(approval=True)
    def pay(amount):
        paid.append(amount)
        return f"paid {amount}"

    return sb, paid


def _paused(sb: Sandbox) -> str:
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(PARENT)
    return info.value.run_id


def test_answering_a_fork_of_a_parent_paused_on_a_childs_approval_leaves_the_original_waiting(store_url):
    sb, paid = _paying(store_url)
    original = _paused(sb)
    fork = sb.fork(original, len(sb.run(original).entries), True)
    assert fork.output == "paid 5" and paid == [5]
    assert sb.run(original).status == "interrupted" and len(sb.run(original).pending) == 1
    [child] = sb.store.children(original)
    assert sb.run(child).status == "interrupted", "the fork answered the original's child"
    rejected = sb.resume(original, False)
    assert rejected.output.startswith("refused: ") and paid == [5]
    sb.close()


def test_answering_the_original_after_a_fork_leaves_the_fork_waiting(store_url):
    sb, paid = _paying(store_url)
    original = _paused(sb)
    with pytest.raises(SandboxInterrupt) as forked:  # a fork with no answer pauses where the original did
        sb.fork(original, len(sb.run(original).entries))
    assert sb.resume(original, True).output == "paid 5"
    assert sb.resume(forked.value.run_id, False).output.startswith("refused: ")
    assert paid == [5]
    sb.close()


def test_a_fork_of_a_fork_has_a_child_of_its_own(store_url):
    sb, paid = _paying(store_url)
    original = _paused(sb)
    with pytest.raises(SandboxInterrupt) as first:
        sb.fork(original, len(sb.run(original).entries))
    second = sb.fork(first.value.run_id, len(sb.run(first.value.run_id).entries), True)
    assert second.output == "paid 5"
    assert sb.resume(first.value.run_id, False).output.startswith("refused: ")
    assert sb.resume(original, False).output.startswith("refused: ")
    assert paid == [5]
    sb.close()


def test_a_fork_at_a_child_without_an_interrupt_runs_the_child_again_in_the_fork(store_url):
    sb, paid = _paying(store_url)
    original = _paused(sb)
    entries = sb.run(original).entries
    at = next(e["seq"] for e in entries if e["kind"] == "interrupt")  # before the child's interrupt reached it
    with pytest.raises(SandboxInterrupt) as forked:
        sb.fork(original, at)
    [mine] = sb.store.children(forked.value.run_id)
    assert mine not in sb.store.children(original)
    assert sb.resume(forked.value.run_id, True).output == "paid 5"
    assert sb.resume(original, False).output.startswith("refused: ") and paid == [5]
    sb.close()


def test_a_fork_of_a_parent_paused_on_an_agents_question_asks_its_own_agent(store_url):
    sb = Sandbox(store_url)
    answered: list[str] = []

    @sb.agent
    def helper(task, resume=None):
        if resume is None:
            raise ActionInterrupt({"question": "which one?"})
        answered.append(resume.value)
        return f"took {resume.value}"

    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("return await ctx.agent({agent: 'helper', input: 1})")
    original = info.value.run_id
    assert sb.fork(original, len(sb.run(original).entries), "left").output == "took left"
    assert sb.resume(original, "right").output == "took right"
    assert answered == ["left", "right"]
    sb.close()
