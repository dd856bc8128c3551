"""The same error on both backends for the same mistake: a closed store, a NUL in a run's id or name, a
negative limit or one past what the database counts (each checked on SQLite and on PostgreSQL)."""

from __future__ import annotations

import pytest

from jupyter_sandbox import RunNotFound, Sandbox, StoreError


def test_every_call_on_a_closed_store_is_a_store_error_saying_it_is_closed(store_url):
    sb = Sandbox(store_url)
    run_id = sb.eval("return 1").run_id
    sb.close()
    for call in (sb.runs, lambda: sb.run(run_id), lambda: sb.eval("return 2"), lambda: sb.store.change_counter()):
        with pytest.raises(StoreError, match="is closed"):
            call()


@pytest.mark.parametrize("run_id", ["r-\x00", "\x00", "r-1234\x00abcd"])
def test_a_run_id_holding_a_nul_names_no_run(store_url, run_id):
    sb = Sandbox(store_url)
    for call in (lambda: sb.run(run_id), lambda: sb.resume(run_id), lambda: sb.signal(run_id, {"kind": "go"})):
        with pytest.raises(RunNotFound):
            call()
    assert sb.store.entries(run_id) == [] and sb.store.children(run_id) == []
    assert sb.store.pending_signals(run_id) == [] and sb.store.journal_bytes(run_id) == 0
    sb.close()


def test_a_run_name_holding_a_nul_is_refused_and_nothing_is_stored(store_url):
    sb = Sandbox(store_url)
    with pytest.raises(StoreError, match="name cannot hold a NUL"):
        sb.eval("return 1", name="a\x00b")
    assert sb.runs() == []
    sb.close()


@pytest.mark.parametrize("limit", [-5, -1, 1.5, "3", True])
def test_a_limit_that_is_not_a_count_of_runs_is_a_value_error(store_url, limit):
    sb = Sandbox(store_url)
    sb.eval("return 1")
    with pytest.raises(ValueError, match="limit must be a whole number"):
        sb.runs(limit=limit)
    assert len(sb.runs(limit=0)) == 0 and len(sb.runs(limit=1)) == 1
    sb.close()


@pytest.mark.parametrize("limit", [2**63 - 1, 2**63, 2**70])
def test_a_limit_past_what_the_database_counts_lists_every_run(store_url, limit):
    sb = Sandbox(store_url)
    sb.eval("return 1")
    sb.eval("return 2")
    assert len(sb.runs(limit=limit)) == 2
    sb.close()
