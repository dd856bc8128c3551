"""Limits at their edges, as properties: the journal's entry cap one under, at and one over what a run needs.

A run of ``k`` calls needs ``E(k)`` journal entries (measured uncapped, its console line aside). Under
any cap from ``E - 1`` to ``E + 1`` it completes exactly when the cap holds them all, with the uncapped
output; otherwise it fails with ``LimitExceeded`` naming ``journal-cap``, every call that ran has its
result journaled, and a resume under the same cap runs none of them again. (Each limit at its default
value: ``test_limits_at_value.py``.)
"""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import LimitExceeded, Limits, Sandbox


def _script(calls: int, together: int) -> str:
    return (
        f"const out = []; for (let i = 0; i < {calls}; i += {together}) out.push(...await Promise.all("
        f"Array.from({{length: Math.min({together}, {calls} - i)}}, (_, k) => actions.tick(i + k)))); "
        "console.log('done'); return out"
    )


def _counted(entries: list[dict]) -> int:
    """The entries the cap counts: console lines are counted by ``console_lines`` instead (README, Limits)."""
    return sum(e["kind"] != "console" for e in entries)


@pytest.fixture(scope="module")
def uncapped():
    with Sandbox() as sb:
        sb.action(lambda i: i, name="tick")
        yield sb


@settings(max_examples=scaled(30), deadline=None)
@given(calls=st.integers(1, 8), together=st.integers(1, 3), edge=st.sampled_from([-1, 0, 1]))
def test_the_entry_cap_one_under_at_and_one_over_what_a_run_needs(uncapped, calls, together, edge):
    source = _script(calls, together)
    done = uncapped.eval(source)
    needed = _counted(uncapped.run(done.run_id).entries)
    cap = needed + edge
    with Sandbox(limits=Limits(journal_entries=cap)) as sb:
        ran: list[int] = []
        sb.action(lambda i: ran.append(i) or i, name="tick")
        if cap >= needed:
            assert sb.eval(source).output == done.output == list(range(calls))
            assert sorted(ran) == list(range(calls))
            return
        with pytest.raises(LimitExceeded) as info:
            sb.eval(source)
        assert info.value.limit == "journal-cap" and "journal" in str(info.value)
        run_id = info.value.run_id
        entries = sb.run(run_id).entries
        assert _counted(entries) <= cap
        answered = sorted(e["slot"] for e in entries if e["kind"] == "result")
        called = {e["slot"]: e["input"] for e in entries if e["kind"] == "call"}
        assert sorted(ran) == sorted(called[s] for s in answered)  # each call that ran has its result
        with pytest.raises(LimitExceeded):
            sb.resume(run_id)
        assert len(ran) == len(set(ran)), "a resume ran a call again"
