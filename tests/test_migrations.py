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

import cbor2
import pytest
from store_backends import is_postgres, query

from jupyter_sandbox import RunParked, Sandbox, SandboxInterrupt, ScriptError, StoreError
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


# -- schema 4: a run's input and output in run_values -----------------------------------------------------

_SCHEMA_3_NOTIFY = """CREATE OR REPLACE FUNCTION jupyter_sandbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('jupyter_sandbox', TG_TABLE_SCHEMA || ' ' || (to_jsonb(NEW) ->> TG_ARGV[0]));
        RETURN NULL;
    END $$"""


def _runs_of_every_shape(tmp_path) -> tuple[list[dict], str]:
    """Runs made by this code in a scratch file, as ``dump_run`` reads them (each value's CBOR in the run's
    row, as schema 3 kept it): completed with an input and an output, failed, without an input, with a null
    output, and one paused on an approval; and that paused run's id."""
    sb = Sandbox(tmp_path / "scratch.sqlite")
    sb.action(lambda x: x, name="pay", approval=True)
    sb.eval("return {got: ctx.input, n: [1, 2.5, 'é']}", input={"doc": "x" * 5000, "list": [None, True]})
    with pytest.raises(ScriptError):
        sb.eval("throw new Error('no')", input=[1, 2])
    sb.eval("return 'no input'")
    sb.eval("return null", input="s")
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("return {paid: await actions.pay(ctx.input)}", input={"amount": 3})
    dumps = [sb.store.dump_run(run.id) for run in sb.runs(include_children=True)]
    sb.close()
    return dumps, info.value.run_id


def _written_at_schema_3(url: str, dumps: list[dict], monkeypatch) -> None:
    """A store whose tables are schema 3's (a run's input and output columns of its row) holding ``dumps``."""
    with monkeypatch.context() as patched:
        patched.setattr(migrations, "STEPS", tuple(s for s in migrations.STEPS if s.version <= 3))
        open_store(url).close()
    if is_postgres(url):
        query(url, _SCHEMA_3_NOTIFY)  # as schema 3 announced a change: the whole row as JSON
    for dump in dumps:
        run = dump["run"]
        query(url, f"INSERT INTO runs ({', '.join(run)}) VALUES ({', '.join('?' * len(run))})", tuple(run.values()))
        for row in dump["journal"]:
            query(url, "INSERT INTO run_journal (run_id, seq, kind, body) VALUES (?, ?, ?, ?)", (run["id"], *row))
        for row in dump["attempts"]:
            query(url, "INSERT INTO run_attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (run["id"], *row))
    assert query(url, "SELECT value FROM meta WHERE key = 'schema_version'") == [("3",)]


@pytest.fixture
def migrated_from_3(store_url, tmp_path, monkeypatch):
    """A store written at schema 3, then opened by this code (its opener owns it, so it migrates on open):
    ``(url, the runs as dumped before, the paused run's id)``."""
    dumps, paused = _runs_of_every_shape(tmp_path)
    _written_at_schema_3(store_url, dumps, monkeypatch)
    store = open_store(store_url)
    assert store.migrated_from == 3
    store.close()
    return store_url, dumps, paused


def test_a_store_migrated_from_schema_3_reads_every_runs_input_and_output_as_it_was(migrated_from_3):
    url, dumps, _ = migrated_from_3
    store = open_store(url)
    for dump in dumps:
        run = store.get_run(dump["run"]["id"])
        for name in ("input", "output"):
            blob = dump["run"][name]
            assert getattr(run, name) == (None if blob is None else cbor2.loads(blob)), (run.id, name)
        assert store.dump_run(run.id) == dump  # and an export of it carries them as before
    store.close()


def test_a_run_paused_at_schema_3_resumes_after_the_migration_with_its_input(migrated_from_3):
    url, _, paused = migrated_from_3
    sb = Sandbox(url)
    sb.action(lambda x: x, name="pay", approval=True)
    assert sb.resume(paused, True).output == {"paid": {"amount": 3}}
    assert sb.run(paused).input == {"amount": 3}
    sb.close()


def test_the_migration_moves_the_values_out_of_the_runs_row(migrated_from_3):
    url, dumps, _ = migrated_from_3
    stored = sum(d["run"][n] is not None for d in dumps for n in ("input", "output"))
    assert query(url, "SELECT COUNT(*) FROM run_values")[0][0] == stored
    if is_postgres(url):
        import psycopg

        with psycopg.connect(url) as conn:
            names = [c.name for c in conn.execute("SELECT * FROM runs LIMIT 0").description]
    else:
        names = [c[1] for c in query(url, "PRAGMA table_info(runs)")]
    assert "input" not in names and "output" not in names


def test_a_postgres_store_migrated_from_schema_3_announces_a_change_without_copying_the_row(
    postgres_url, tmp_path, monkeypatch
):
    dumps, _ = _runs_of_every_shape(tmp_path)
    _written_at_schema_3(postgres_url, dumps, monkeypatch)
    store = open_store(postgres_url)
    own = (
        "SELECT prosrc FROM pg_proc WHERE proname = 'jupyter_sandbox_notify' "
        "AND pronamespace = current_schema()::regnamespace"
    )
    assert "to_jsonb" not in query(postgres_url, own)[0][0]
    with store.listen() as changes:
        run = store.create_run(RunRow(id=new_run_id(), kind="workflow", status="created", input="x" * 10_000))
        announced: set[str] = set()
        for _ in range(HANG):
            announced |= changes.wait(1.0)
            if run.id in announced:
                break
    assert run.id in announced
    store.close()
