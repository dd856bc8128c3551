"""The SQL both store backends share (stores/sql.py): each statement written once, rendered per driver."""

from __future__ import annotations

import cbor2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_sandbox.errors import StoreError
from jupyter_sandbox.stores import open_store
from jupyter_sandbox.stores.base import RunRow
from jupyter_sandbox.stores.dialect import render
from jupyter_sandbox.stores.postgres import PostgresStore
from jupyter_sandbox.stores.rows import Entry, encode
from jupyter_sandbox.stores.sqlite import SQLiteStore

SQLITE, PG = SQLiteStore.dialect, PostgresStore.dialect
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)


@given(names, names)
def test_named_and_positional_placeholders_become_psycopgs_and_casts_stay(name, other):
    statement = f"SELECT :{name}, ?, x::bigint FROM t WHERE a = :{other} AND b LIKE '5%'"
    assert render(statement, PG) == f"SELECT %({name})s, %s, x::bigint FROM t WHERE a = %({other})s AND b LIKE '5%%'"


@given(names)
def test_sqlite_runs_the_statement_as_written(name):
    statement = f"SELECT :{name}, ?, x FROM t WHERE a = ? AND b LIKE '5%'"
    assert render(statement, SQLITE) == statement


def test_the_clock_and_the_row_locks_are_each_backends_own():
    statement = "SELECT {now} FROM runs WHERE id = :id{for_update}"
    assert render(statement, SQLITE) == "SELECT :now FROM runs WHERE id = :id"
    assert render(statement, PG) == (
        "SELECT extract(epoch from clock_timestamp())::float8 FROM runs WHERE id = %(id)s FOR UPDATE"
    )


def _claimed(url: str):
    store = open_store(url)
    store.create_run(RunRow(id="r", kind="workflow", status="parked", source="return 1"))
    return store, store.claim("r", ("parked",), source_hash="h")


def test_an_export_lists_signals_in_the_order_they_arrived_delivered_or_not(store_url):
    store, attempt = _claimed(store_url)
    try:
        for event in ("first", "second", "third"):
            store.add_signal("r", event)

        def write(signal_id: int, event: object) -> list[tuple[Entry, bytes]]:
            entry = Entry("signal", attempt, 0.0, body={"signal": signal_id, "event": event}, seq=0)
            return [(entry, encode(entry))]

        assert store.deliver_signal("r", lambda event: event == "second", write)
        signals = store.dump_run("r")["signals"]
        assert [cbor2.loads(event) for event, _, _ in signals] == ["first", "second", "third"]
        assert [delivered for _, _, delivered in signals] == [None, 0, None]
    finally:
        store.release("r")
        store.close()


def test_an_update_of_a_column_runs_do_not_have_is_refused_naming_it(store_url):
    store, _ = _claimed(store_url)
    try:
        with pytest.raises(StoreError, match="no column 'colour'"):
            store.update_run("r", status="failed", colour="red")
        assert store.get_run("r").status == "running"  # nothing of the update was written
    finally:
        store.release("r")
        store.close()
