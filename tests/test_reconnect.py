"""Connections heal: a restarted server, a terminated backend or an idle-session timeout cost a reconnect, not
a failed call or run; a server that stays down is a ``StoreError`` after the store's timeout."""

from __future__ import annotations

import collections
import threading

import psycopg
import pytest

from jupyter_sandbox import RunParked, Sandbox, StoreError

LOOP = "let s = 0; for (let i = 0; i < 4; i++) s += await actions.step(i); return s"


def _terminate_every_other_backend(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        sql = (
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        return int(conn.execute(sql).fetchone()[0])


def _counting(sb: Sandbox, during=None) -> collections.Counter:
    calls: collections.Counter = collections.Counter()

    @sb.action
    def step(i):
        calls[i] += 1
        if i == 2 and calls[i] == 1 and during:
            during()
        return i

    return calls


def test_a_call_after_a_server_restart_reconnects(own_server):
    sb = Sandbox(own_server.url)
    _counting(sb)
    first = sb.eval(LOOP).run_id
    own_server.stop_server()
    own_server.start_server()
    assert sb.run(first).status == "completed"  # a read, then a whole run of writes
    assert sb.eval(LOOP).output == 6
    sb.close()


def test_a_run_whose_action_spans_a_server_restart_completes_running_each_action_once(own_server):
    sb = Sandbox(own_server.url)
    calls = _counting(sb, during=lambda: (own_server.stop_server(), own_server.start_server()))
    assert sb.eval(LOOP).output == 6
    assert calls == {0: 1, 1: 1, 2: 1, 3: 1}
    sb.close()


def test_terminated_backends_cost_a_reconnect_between_calls_and_inside_a_run(own_server):
    sb = Sandbox(own_server.url)
    calls = _counting(sb, during=lambda: _terminate_every_other_backend(own_server.url))
    sb.eval("return 1")
    assert _terminate_every_other_backend(own_server.url) >= 1
    assert sb.runs()[0].output == 1
    assert sb.eval(LOOP).output == 6 and calls == {0: 1, 1: 1, 2: 1, 3: 1}
    sb.close()


def test_an_idle_session_timeout_shorter_than_an_action_costs_a_reconnect(own_server):
    with psycopg.connect(own_server.url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET idle_session_timeout = '1s'")
        conn.execute("SELECT pg_reload_conf()")
    sb = Sandbox(own_server.url)

    @sb.action
    def slow(i):
        threading.Event().wait(1.5)  # longer than the server keeps an idle session
        return i

    assert sb.eval("let s = 0; for (let i = 0; i < 3; i++) s += await actions.slow(i); return s").output == 3
    threading.Event().wait(1.5)
    assert sb.runs()[0].status == "completed"
    sb.close()


def test_a_server_that_stays_down_is_a_store_error_after_the_configured_wait(own_server, monkeypatch):
    monkeypatch.setenv("JUPYTER_SANDBOX_STORE_TIMEOUT", "1")
    sb = Sandbox(own_server.url)
    own_server.stop_server()
    with pytest.raises(StoreError, match="no connection within 1.0 s"):
        sb.runs()
    own_server.start_server()
    assert sb.runs() == []
    sb.close()


@pytest.mark.parametrize("value", ["soon", "0", "-3"])
def test_a_store_timeout_that_is_not_a_number_of_seconds_is_a_store_error(tmp_path, monkeypatch, value):
    monkeypatch.setenv("JUPYTER_SANDBOX_STORE_TIMEOUT", value)
    with pytest.raises(StoreError, match="JUPYTER_SANDBOX_STORE_TIMEOUT|out of range"):
        Sandbox(tmp_path / "runs.sqlite")


def _losing_the_first_append(store, *, before: bool):
    """The store's next append loses its connection: ``before`` the INSERT runs, or after it committed."""
    real = store._insert_entries
    lost = []

    def insert(conn, run_id, entries, fenced=True):
        if not lost and fenced:
            lost.append(run_id)
            if before:
                _kill(conn)
            else:
                real(conn, run_id, entries, fenced)
                _kill(conn)  # committed (autocommit); its answer is what is lost
                raise psycopg.OperationalError("server closed the connection unexpectedly")
        return real(conn, run_id, entries, fenced)

    store._insert_entries = insert
    return lost


def _kill(conn) -> None:
    with psycopg.connect(conn.info.dsn, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
    try:
        conn.execute("SELECT 1")
    except psycopg.OperationalError:
        pass  # now it knows it is gone


@pytest.mark.parametrize("before", [True, False], ids=["lost-before-the-insert", "lost-after-the-commit"])
def test_an_append_whose_connection_is_lost_is_resolved_by_reading_the_journal(postgres_url, before):
    sb = Sandbox(postgres_url)
    calls = _counting(sb)
    lost = _losing_the_first_append(sb.store, before=before)
    with pytest.raises(RunParked):
        sb.eval("await actions.step(0); await actions.step(1); await ctx.sleep(60000)")
    assert lost, "no append lost its connection"
    run_id = sb.runs()[0].id
    seqs = [e["seq"] for e in sb.run(run_id).entries]
    assert seqs == list(range(len(seqs)))  # each entry once: none lost, none twice
    assert calls == {0: 1, 1: 1}
    sb.close()
