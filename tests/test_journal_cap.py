"""The journal cap never costs a second effect: room for a call's result is kept before the action starts.

At the cap a call is refused unrun (``LimitExceeded("journal-cap")``); a call that started always has its
result journaled, so no resume runs it again.
"""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import Limits, Sandbox
from jupyter_sandbox.errors import LimitExceeded

LOOP = "for (let i = 0; i < 1000; i++) await actions.tick(i)"


def _counting(sb: Sandbox, size: int = 0) -> list[int]:
    ran: list[int] = []

    @sb.action
    def tick(i):
        ran.append(i)
        return "x" * size if size else i

    return ran


def _results(sb: Sandbox, run_id: str) -> list[int]:
    return [e["slot"] for e in sb.run(run_id).entries if e["kind"] == "result"]


def test_a_call_whose_result_would_not_fit_in_the_entry_cap_is_refused_unrun(store_url):
    # attempt, call 0, result 0, call 1: the fourth entry fits, the result of call 1 would be the fifth
    sb = Sandbox(store_url, limits=Limits(journal_entries=4))
    ran = _counting(sb)
    with pytest.raises(LimitExceeded) as info:
        sb.eval(LOOP)
    assert info.value.limit == "journal-cap"
    assert ran == [0]
    assert _results(sb, info.value.run_id) == [0]
    sb.close()


def test_a_resume_at_the_entry_cap_runs_no_call_again(store_url):
    sb = Sandbox(store_url, limits=Limits(journal_entries=4))
    ran = _counting(sb)
    with pytest.raises(LimitExceeded) as first:
        sb.eval(LOOP)
    with pytest.raises(LimitExceeded) as again:
        sb.resume(first.value.run_id)
    assert again.value.limit == "journal-cap"
    assert ran == [0]
    assert sb.run(first.value.run_id).status == "failed"
    sb.close()


def test_every_call_that_ran_at_the_byte_cap_has_its_result_journaled(store_url):
    sb = Sandbox(store_url, limits=Limits(journal_bytes=20_000))
    ran = _counting(sb, size=5_000)
    with pytest.raises(LimitExceeded) as info:
        sb.eval(LOOP)
    assert info.value.limit == "journal-cap"
    assert _results(sb, info.value.run_id) == ran
    with pytest.raises(LimitExceeded):
        sb.resume(info.value.run_id)
    assert _results(sb, info.value.run_id) == ran, "the resume ran a call again"
    sb.close()


@settings(max_examples=scaled(30))
@given(
    entries=st.integers(min_value=2, max_value=40),
    kib=st.integers(min_value=1, max_value=24),
    size=st.integers(min_value=0, max_value=3_000),
    together=st.integers(min_value=1, max_value=4),
)
def test_under_any_cap_each_call_that_ran_has_its_result_and_a_resume_runs_none_again(entries, kib, size, together):
    sb = Sandbox(limits=Limits(journal_entries=entries, journal_bytes=kib * 1024))
    ran = _counting(sb, size)
    script = f"for (let i = 0; i < 1000; i += {together}) await Promise.all("
    script += f"Array.from({{length: {together}}}, (_, k) => actions.tick(i + k)))"
    with pytest.raises(LimitExceeded) as info:
        sb.eval(script)
    run_id = info.value.run_id
    assert sorted(ran) == _answered_inputs(sb, run_id)
    with pytest.raises(LimitExceeded):
        sb.resume(run_id)
    assert sorted(ran) == _answered_inputs(sb, run_id), "a call ran without its result journaled"
    assert len(set(ran)) == len(ran), "a resume ran a call again"
    sb.close()


def _answered_inputs(sb: Sandbox, run_id: str) -> list[int]:
    """The inputs of the calls whose result is journaled."""
    entries = sb.run(run_id).entries
    inputs = {e["slot"]: e["input"] for e in entries if e["kind"] == "call"}
    return sorted(inputs[e["slot"]] for e in entries if e["kind"] == "result")
