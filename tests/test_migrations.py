"""Migrations are an explicit step: opening a current store runs no DDL and waits on no lock; a team role
with only SELECT/INSERT/UPDATE/DELETE uses a store its owner migrated; an out-of-date store says what to run."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import uuid

import pytest
from store_backends import is_postgres, query

from jupyter_sandbox import RunParked, Sandbox, SandboxInterrupt, StoreError
from jupyter_sandbox.cli import main as cli
from jupyter_sandbox.stores import migrations, open_store
from jupyter_sandbox.stores.base import RunRow, new_run_id

HANG = 120  # seconds: only bounds a hang (a wait behind another process's lock), never a speed


def _in_thread(fn):
    """Run ``fn`` on a thread; ``(done, outcome)`` once it returns or ``HANG`` passes."""
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(_called(fn)), daemon=True)
    thread.start()
    thread.join(HANG)
    return not thread.is_alive(), (outcome[0] if outcome else None)


def _called(fn):
    try:
        return fn()
    except Exception as exc:  # returned, to be asserted on in the test's thread
        return exc


def _schema(url: str) -> str:
    return re.search(r"search_path%3D(\w+)", url).group(1)


def _as_role(url: str, role: str) -> str:
    return re.sub(r"^postgresql://[^@/]*@", f"postgresql://{role}@", url)


@pytest.fixture
def team_role(postgres_url):
    """A store migrated by its owner, and the URL of a LOGIN role granted only what the README lists."""
    Sandbox(postgres_url).close()
    role, schema = f"team_{uuid.uuid4().hex[:8]}", _schema(postgres_url)
    for statement in (
        f"CREATE ROLE {role} LOGIN",
        f"GRANT USAGE ON SCHEMA {schema} TO {role}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}",
    ):
        query(postgres_url, statement)
    yield _as_role(postgres_url, role)
    query(postgres_url, f"DROP OWNED BY {role}")
    query(postgres_url, f"DROP ROLE {role}")


def test_a_team_role_with_only_row_privileges_runs_pauses_resumes_signals_and_wakes(team_role):
    sb = Sandbox(team_role)
    sb.action(lambda x: x * 2, name="double")
    sb.action(lambda x: x, name="pay", approval=True)
    assert sb.eval("return await actions.double(21)").output == 42
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("const x = await actions.double(1); return await actions.pay(x)")
    assert sb.resume(info.value.run_id, True).output == 2
    with pytest.raises(RunParked) as info:
        sb.eval("return await ctx.waitForEvent({kind: 'go'})")
    assert sb.signal(info.value.run_id, {"kind": "go", "n": 1}).output == {"kind": "go", "n": 1}
    with pytest.raises(RunParked) as info:
        sb.eval("await ctx.sleep(1500); return 'woke'")
    done, woken = _in_thread(lambda: _woken(sb, info.value.run_id))
    assert done and woken == "woke"
    assert query(team_role, "SELECT current_user")[0][0].startswith("team_")
    sb.close()


def _woken(sb: Sandbox, run_id: str) -> str:
    while sb.run(run_id).status != "completed":
        sb.run_due()
        threading.Event().wait(0.05)
    return sb.run(run_id).output


def test_a_fresh_schema_a_role_cannot_create_in_names_the_migrate_command(postgres_url):
    role = f"team_{uuid.uuid4().hex[:8]}"
    query(postgres_url, f"CREATE ROLE {role} LOGIN")
    query(postgres_url, f"GRANT USAGE ON SCHEMA {_schema(postgres_url)} TO {role}")
    try:
        with pytest.raises(StoreError, match="jupyter-sandbox migrate --store URL") as info:
            Sandbox(_as_role(postgres_url, role))
        assert "cannot migrate" in str(info.value)
    finally:
        query(postgres_url, f"DROP OWNED BY {role}")
        query(postgres_url, f"DROP ROLE {role}")


@pytest.fixture
def next_version(monkeypatch):
    """This code one schema version ahead: a step that adds a table, as a real upgrade would."""
    step = migrations.Step(
        migrations.latest() + 1,
        "a table for the test",
        sqlite=("CREATE TABLE extra (id TEXT PRIMARY KEY)",),
        postgres=("CREATE TABLE extra (id TEXT PRIMARY KEY)",),
    )
    monkeypatch.setattr(migrations, "STEPS", (*migrations.STEPS, step))
    return step.version


def test_an_out_of_date_store_opened_by_a_team_role_names_the_command_and_the_owner_migrates_it(
    team_role, postgres_url, next_version, capsys
):
    old, new = next_version - 1, next_version
    with pytest.raises(
        StoreError, match=rf"at schema {old}, this jupyter_sandbox needs {new}.*jupyter-sandbox migrate"
    ):
        Sandbox(team_role)
    assert query(postgres_url, "SELECT to_regclass('extra')")[0][0] is None  # nothing half-done
    assert cli(["migrate", "--store", postgres_url]) == 0
    assert f"schema {old} -> {new} (a table for the test)" in capsys.readouterr().out
    assert query(postgres_url, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(new),)]
    role = re.match(r"postgresql://([^@]+)@", team_role).group(1)
    query(postgres_url, f"GRANT SELECT, INSERT, UPDATE, DELETE ON extra TO {role}")
    sb = Sandbox(team_role)  # current again: the role opens it
    assert sb.eval("return 1").output == 1
    sb.close()
    assert cli(["migrate", "--store", postgres_url]) == 0
    assert f"schema {new}, up to date" in capsys.readouterr().out


def test_migrate_brings_an_older_sqlite_file_up_to_date_and_opening_a_current_one_does_not(tmp_path, next_version):
    path = tmp_path / "runs.sqlite"
    store = open_store(str(path))  # a fresh file migrates itself, to the newest version
    assert store.migrated_from == 0 and store.migrate() == (next_version, next_version)
    store.close()
    query(str(path), "DROP TABLE extra")
    query(str(path), "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(next_version - 1),))
    store = open_store(str(path))  # a file's opener may write it: migrated on open
    assert store.migrated_from == next_version - 1
    assert query(str(path), "SELECT name FROM sqlite_master WHERE name = 'extra'") == [("extra",)]
    store.close()


def _hold_the_write_locks(url: str):
    """Another process's connection holding every lock a writer takes: (release, connection)."""
    if is_postgres(url):
        import psycopg

        conn = psycopg.connect(url)
        # EXCLUSIVE lets reads through and stops every write and every DDL (CREATE INDEX's SHARE lock).
        conn.execute("LOCK TABLE meta, runs, run_journal, run_attempts, signals IN EXCLUSIVE MODE")
        return conn
    conn = sqlite3.connect(url, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def test_opening_a_current_store_waits_for_no_writer(store_url):
    Sandbox(store_url).close()
    holder = _hold_the_write_locks(store_url)
    try:
        done, opened = _in_thread(lambda: open_store(store_url))
        assert done and not isinstance(opened, Exception), opened
        assert opened.migrated_from is None
    finally:
        holder.rollback() if is_postgres(store_url) else holder.execute("ROLLBACK")
        holder.close()
    opened.close()


_STOPPING_OPENER = textwrap.dedent(
    """
    import os, signal, sys
    import psycopg
    from jupyter_sandbox.stores.postgres import PostgresStore

    real = psycopg.Connection.execute

    def stopping(self, *args, **kwargs):  # frozen after every statement of the open
        cursor = real(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGSTOP)
        return cursor

    psycopg.Connection.execute = stopping
    store = PostgresStore(sys.argv[1])
    psycopg.Connection.execute = real
    store.close()
    """
)


def test_an_opener_frozen_anywhere_inside_open_blocks_no_other_process_inserting_runs(postgres_url):
    store = open_store(postgres_url)
    opener = subprocess.Popen([sys.executable, "-c", _STOPPING_OPENER, postgres_url])
    stops, inserted = 0, []
    try:
        while True:
            _, status = os.waitpid(opener.pid, os.WUNTRACED)
            if not os.WIFSTOPPED(status):
                opener.returncode = os.waitstatus_to_exitcode(status)
                break
            stops += 1
            run = RunRow(id=new_run_id(), kind="workflow", status="completed")
            done, outcome = _in_thread(lambda run=run: store.create_run(run))
            assert done and not isinstance(outcome, Exception), f"stop {stops}: {outcome!r}"
            inserted.append(run.id)
            os.kill(opener.pid, signal.SIGCONT)
    finally:
        if opener.returncode is None:
            os.kill(opener.pid, signal.SIGCONT)
            opener.kill()
            opener.wait()
    assert opener.returncode == 0 and stops >= 3
    assert {r.id for r in store.list_runs()} == set(inserted)
    store.close()


def test_two_processes_migrating_an_empty_schema_at_once_both_succeed_and_it_is_migrated_once(postgres_url):
    import psycopg

    key = "SELECT hashtext('jupyter_sandbox:' || current_schema())"
    with psycopg.connect(postgres_url, autocommit=True) as holder:  # the migration lock, held while both queue
        holder.execute(f"SELECT pg_advisory_lock(({key}))")
        outcomes: list = []
        threads = [
            threading.Thread(target=lambda: outcomes.append(_called(lambda: open_store(postgres_url))), daemon=True)
            for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        waiting = "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        for _ in range(HANG * 10):  # both have read the schema (empty) and wait for the lock
            if holder.execute(waiting).fetchone()[0] == 2:
                break
            threading.Event().wait(0.1)
        holder.execute(f"SELECT pg_advisory_unlock(({key}))")
        for thread in threads:
            thread.join(HANG)
    assert len(outcomes) == 2 and not any(isinstance(o, Exception) for o in outcomes), outcomes
    # One did the work; the other found it done under the lock.
    assert sorted(store.migrated_from for store in outcomes) == [0, migrations.latest()]
    for store in outcomes:
        store.close()
