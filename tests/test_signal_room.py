"""A signal is bounded when it is sent: one larger than its run can journal is refused with its size and the
limit, so no stored signal can leave a run that fails every resume at delivery."""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import Limits, RunParked, Sandbox
from jupyter_sandbox.errors import LimitExceeded

WAITS_FOR_EVER = "let n = 0; while (true) { await ctx.waitForEvent({kind: 'go'}); n++; ctx.progress(n); }"


def _parked(sb: Sandbox, source: str) -> str:
    with pytest.raises(RunParked) as info:
        sb.eval(source)
    return info.value.run_id


def _send(sb: Sandbox, run_id: str, size: int) -> bool:
    """Send a signal of about ``size`` bytes; whether it was taken (a refusal must say why, with numbers)."""
    try:
        sb.signal(run_id, {"kind": "go", "data": "x" * size})
    except RunParked:
        return True  # taken, delivered, and the run waits for the next one
    except LimitExceeded as exc:
        assert exc.limit == "journal-cap" and f"{exc.value:,}" in str(exc) and "the signal is" in str(exc)
        return False
    return True


def _delivered(sb: Sandbox, run_id: str) -> int:
    return sum(1 for e in sb.run(run_id).entries if e["kind"] == "event")


@settings(max_examples=scaled(40))
@given(
    cap=st.integers(min_value=4_096, max_value=65_536),
    sizes=st.lists(st.integers(min_value=0, max_value=80_000), min_size=1, max_size=8),
    waiting=st.booleans(),
)
def test_no_stored_signal_makes_its_run_unresumable(cap, sizes, waiting):
    sb = Sandbox(limits=Limits(journal_bytes=cap))
    run_id = _parked(sb, WAITS_FOR_EVER if waiting else "await ctx.waitForEvent({kind: 'never'}); " + WAITS_FOR_EVER)
    taken = sum(_send(sb, run_id, size) for size in sizes)
    with pytest.raises(RunParked):  # resumable: it parks again, waiting, never journal-cap
        sb.resume(run_id)
    assert _delivered(sb, run_id) == (taken if waiting else 0)
    assert len(sb.store.pending_signals(run_id)) == (0 if waiting else taken)
    sb.close()


def test_a_signal_larger_than_the_journal_cap_is_refused_at_send_and_the_run_still_resumes(store_url):
    sb = Sandbox(store_url)  # the default cap: 8 MiB
    run_id = _parked(sb, "const e = await ctx.waitForEvent({kind: 'go'}); return e.n")
    with pytest.raises(LimitExceeded, match=r"the signal is 9,437,\d+ bytes .* journal cap is 8,388,608 bytes"):
        sb.signal(run_id, {"kind": "go", "data": "x" * (9 * 2**20)})
    assert sb.store.pending_signals(run_id) == []
    assert sb.signal(run_id, {"kind": "go", "n": 7}).output == 7
    sb.close()


def test_two_signals_sent_at_once_that_together_exceed_the_room_are_not_both_kept(store_url, monkeypatch):
    """Each fits the room alone; the second to commit is refused, because the room is counted in the
    transaction that keeps the signal (a count taken before it would let both in)."""
    first, second = Sandbox(store_url, limits=Limits(journal_bytes=16_384)), Sandbox(store_url)
    run_id = _parked(first, "await ctx.waitForEvent({kind: 'never'}); " + WAITS_FOR_EVER)
    keep = first.store.add_signal

    def racing(*args, **kwargs):  # the other process's signal commits between this one's count and its write
        if not racing.sent:
            racing.sent = True
            second.store.add_signal(run_id, {"kind": "go", "data": "y" * 8_000}, wake=run_id)
        return keep(*args, **kwargs)

    racing.sent = False
    monkeypatch.setattr(first.store, "add_signal", racing)
    assert _send(first, run_id, 8_000) is False
    assert len(first.store.pending_signals(run_id)) == 1
    with pytest.raises(RunParked):  # still resumable: what it holds can be journaled
        first.resume(run_id)
    first.close()
    second.close()
