"""What one wake of a due run costs a PostgreSQL store, counted in statements and transactions.

A worker's drain is bounded by its round trips and commits per run (bench/stores.py times it; no test
does). Counted here instead, on a real server: the claim is its row lock and one write, the attempt's
end one autocommitted statement (its fence, its last entries and its attempt's row), and the run is
read once. Each count is the work, so a change that adds a round trip to every wake shows here.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_sandbox import ManualClock, RunParked, Sandbox


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter[str]]:
    """Every statement (by its first words) and every explicit transaction psycopg sends, from now on."""
    import psycopg

    seen: collections.Counter[str] = collections.Counter()
    execute, transaction = psycopg.Connection.execute, psycopg.Connection.transaction

    def counting_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        seen["statements"] += 1
        seen[" ".join(str(query).split()[:2])] += 1
        return execute(self, query, *args, **kwargs)

    def counting_transaction(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen["transactions"] += 1
        return transaction(self, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counting_execute)
    monkeypatch.setattr(psycopg.Connection, "transaction", counting_transaction)
    yield seen


def parked_on_a_timer(url: str, runs: int) -> tuple[Sandbox, ManualClock, list[str]]:
    """``runs`` runs parked on an hour's timer, then the clock an hour on: each is due."""
    clock = ManualClock(start=1_700_000_000_000)
    sb = Sandbox(url, clock=clock)
    sb.action(lambda run_id: run_id, name="fire")
    ids = []
    for _ in range(runs):
        with pytest.raises(RunParked) as parked:
            sb.eval("await ctx.hours(1); return await actions.fire(ctx.runId)")
        ids.append(parked.value.run_id)
    clock.advance(3_600_000 + 1)
    return sb, clock, ids


def test_waking_a_due_timer_reads_the_run_once_and_commits_its_claim_and_end_in_one_statement_each(
    postgres_url, counted
):
    sb, _, ids = parked_on_a_timer(postgres_url, 3)
    try:
        counted.clear()
        woken = sb.run_due()
        assert sorted(run_id for run_id, _ in woken) == sorted(ids)
        assert [result.output for _, result in woken] == [run_id for run_id, _ in woken]
        # One reservation for the batch; per run: one read of the run, the claim (its row lock, then the run
        # and the attempt's row in one write), the journal's size and rows, the catalog of saved scripts, the
        # timer's entry, the action's entries (its call and result together, or its call first when the
        # engine commits it before the effect) and the attempt's end.
        runs = len(ids)
        assert counted["UPDATE runs"] == 1, counted  # the reservation
        assert counted["SELECT id,"] == runs, counted  # the run is read once per wake
        assert counted["SELECT status,"] == counted["WITH claimed"] == runs, counted  # lock, then one write
        assert counted["WITH ended"] == runs, counted  # the end: one statement
        assert counted["transactions"] == runs, counted  # only the claim's: the end needs none
        assert counted["statements"] <= 1 + 10 * runs, counted
    finally:
        sb.close()


def test_a_run_with_an_input_is_created_in_one_statement_and_no_transaction(postgres_url, counted):
    from jupyter_sandbox.stores import open_store
    from jupyter_sandbox.stores.base import RunRow, new_run_id

    store = open_store(postgres_url)
    try:
        counted.clear()
        run = store.create_run(RunRow(id=new_run_id(), kind="workflow", status="created", input={"a": [1]}))
        assert (counted["statements"], counted["transactions"]) == (1, 0), counted
        assert store.get_run(run.id).input == {"a": [1]}
    finally:
        store.close()
