"""The durable store: runs and journals, resumable from another process or machine.

A conformance suite: every test taking ``store_url`` (or ``sb``) runs on an
SQLite file and on a PostgreSQL schema (tests/conftest.py). The few that read
SQLite's own file format are marked ``sqlite_only``; PostgreSQL's counterparts
sit beside them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading

import cbor2
import pytest
from store_backends import query

from jupyter_sandbox import (
    ActionInterrupt,
    ManualClock,
    RunBusyError,
    RunNotFound,
    RunParked,
    RunStateError,
    Sandbox,
    SandboxInterrupt,
    ScriptError,
    StoreError,
)
from jupyter_sandbox.stores.base import SCHEMA_VERSION


@pytest.fixture
def sb(store_url):
    """This module's sandbox: on each backend in turn (conftest's is in memory)."""
    sandbox = Sandbox(store_url)
    yield sandbox
    sandbox.close()


PROGRAM = textwrap.dedent("""
    import json, os, sys, time
    from jupyter_sandbox import Sandbox, ActionInterrupt, SandboxInterrupt, RunBusyError, RunStateError, RunParked
    from jupyter_sandbox import ManualClock
    store, effects, command = sys.argv[1], sys.argv[2], sys.argv[3]
    clock = ManualClock(start=float(os.environ["CLOCK"])) if "CLOCK" in os.environ else None
    sb = Sandbox(store, clock=clock)

    @sb.action
    def effect(i):
        with open(effects, "a") as f:
            f.write(f"{i}\\n")
        time.sleep(float(os.environ.get("EFFECT_SECONDS", "0")))
        return i * i

    @sb.action
    def approve(x, resume=None):
        if resume is None:
            raise ActionInterrupt(data=x)
        with open(effects, "a") as f:
            f.write(f"approve {resume.value}\\n")
        time.sleep(float(os.environ.get("APPROVE_SECONDS", "0")))
        return resume.value

    source = os.environ.get("SOURCE", "")
    def report(**kw):
        print(json.dumps(kw), flush=True)
    try:
        if command == "start":
            result = sb.eval(source)
            report(status="completed", output=result.output, run_id=result.run_id)
        elif command == "resume":
            result = sb.resume(sys.argv[4], json.loads(sys.argv[5]) if len(sys.argv) > 5 else None)
            report(status="completed", output=result.output, run_id=result.run_id)
        elif command == "due":
            sb.start_scheduler(interval=0.05)
            deadline = time.time() + 10
            while sb.run(sys.argv[4]).status != "completed" and time.time() < deadline:
                time.sleep(0.05)
            report(status=sb.run(sys.argv[4]).status, output=sb.run(sys.argv[4]).output)
    except SandboxInterrupt as it:
        report(status="interrupted", run_id=it.run_id, position=it.position)
    except RunParked as parked:
        report(status="parked", run_id=parked.run_id, due=parked.due)
    except RunBusyError as exc:
        report(status="busy", error=str(exc))
    except RunStateError as exc:
        report(status="state", error=str(exc))
""")


@pytest.fixture
def program(tmp_path, store_url):
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    effects = tmp_path / "effects.txt"
    effects.touch()

    def run(command, *args, env=None, wait=True):
        full_env = {**os.environ, **(env or {})}
        argv = [sys.executable, str(path), store_url, str(effects), command, *args]
        if not wait:
            return subprocess.Popen(argv, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        done = subprocess.run(argv, env=full_env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    run.effects = lambda: effects.read_text().split()
    run.store = store_url
    return run


WORKFLOW = (
    "const a = await actions.effect(2); const b = await actions.approve(a); "
    "const c = await actions.effect(3); return [a, b, c]"
)


def test_a_run_interrupted_in_one_process_resumes_in_another(program):
    first = program("start", env={"SOURCE": WORKFLOW})
    assert first["status"] == "interrupted"
    second = program("resume", first["run_id"], "true", env={"SOURCE": WORKFLOW})
    assert second == {"status": "completed", "output": [4, True, 9], "run_id": first["run_id"]}
    assert program.effects() == ["2", "approve", "True", "3"]  # the recorded effect(2) did not run again


def test_the_resumed_output_equals_an_uninterrupted_run(program, tmp_path):
    interrupted = program("start", env={"SOURCE": WORKFLOW})
    resumed = program("resume", interrupted["run_id"], "true")
    sb = Sandbox()
    sb.action(lambda i: i * i, name="effect")
    sb.action(lambda x: True, name="approve")
    assert sb.eval(WORKFLOW).output == resumed["output"]


def test_two_processes_resuming_at_once_execute_the_action_once(program):
    first = program("start", env={"SOURCE": WORKFLOW})
    env = {"APPROVE_SECONDS": "1.0"}
    racers = [program("resume", first["run_id"], "true", env=env, wait=False) for _ in range(2)]
    outcomes = [json.loads(p.communicate(timeout=60)[0].strip().splitlines()[-1]) for p in racers]
    statuses = sorted(o["status"] for o in outcomes)
    assert statuses[0] == "busy" or statuses == ["completed", "state"], outcomes
    assert statuses.count("completed") == 1
    busy = [o for o in outcomes if o["status"] != "completed"][0]
    assert "already being resumed" in busy["error"] or "completed" in busy["error"]
    assert program.effects().count("approve") == 1


def test_two_threads_resuming_at_once_execute_the_action_once(store_url):
    import time

    sb = Sandbox(store_url)
    calls = []

    @sb.action
    def approve(x, resume=None):
        if resume is None:
            raise ActionInterrupt(data=x)
        calls.append(resume.value)
        time.sleep(0.5)
        return resume.value

    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("return await actions.approve(1)")
    outcomes = []

    def resume():
        try:
            outcomes.append(sb.resume(info.value.run_id, "click").output)
        except RunBusyError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=resume) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["click"]
    assert sorted(map(type, outcomes), key=str) == sorted([str, RunBusyError], key=str)
    assert "already being resumed" in str([o for o in outcomes if isinstance(o, RunBusyError)][0])


def test_a_parked_timer_is_woken_by_another_processs_scheduler(program):
    start = 1_700_000_000_000
    parked = program(
        "start", env={"SOURCE": "await actions.effect(1); await ctx.hours(1); return 'woke'", "CLOCK": str(start)}
    )
    assert parked["status"] == "parked" and parked["due"] == pytest.approx(start + 3_600_000, abs=5)
    woken = program("due", parked["run_id"], env={"CLOCK": str(start + 3_600_001)})
    assert woken == {"status": "completed", "output": "woke"}
    sb = Sandbox(program.store)
    assert [e["kind"] for e in sb.run(parked["run_id"]).entries].count("fired") == 1
    assert program.effects() == ["1"]


def test_export_and_import_move_a_paused_run_to_another_store(program, tmp_path):
    first = program("start", env={"SOURCE": WORKFLOW})
    exported = Sandbox(program.store).export_run(first["run_id"], tmp_path / "run.jsbx")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sb = Sandbox(elsewhere / "other.sqlite")  # from either backend to an SQLite file
    calls = []
    sb.action(lambda i: calls.append(i) or i * i, name="effect")
    sb.action(
        lambda x, resume=None: resume.value if resume else (_ for _ in ()).throw(ActionInterrupt()), name="approve"
    )
    run_id = sb.import_run(exported)
    assert run_id == first["run_id"] and sb.run(run_id).status == "interrupted"
    assert sb.resume(run_id, "moved").output == [4, "moved", 9]
    assert calls == [3]


def test_an_export_carries_a_runs_input_and_output_and_names_this_schema(sb, tmp_path):
    given = {"doc": "é" * 3000, "n": [1, 2.5, None]}
    result = sb.eval("return {echo: ctx.input}", input=given)
    path = sb.export_run(result.run_id, tmp_path / "x.jsbx")
    doc = cbor2.loads((tmp_path / "x.jsbx").read_bytes())
    assert doc["schema"] == SCHEMA_VERSION
    other = Sandbox(tmp_path / "other.sqlite")
    run = other.run(other.import_run(path))
    assert (run.input, run.output) == (given, {"echo": given})
    other.close()


def test_an_export_written_at_schema_3_imports_with_its_input_and_output(sb, tmp_path):
    result = sb.eval("return {echo: ctx.input}", input=[1, "two"])
    sb.export_run(result.run_id, tmp_path / "x.jsbx")
    doc = cbor2.loads((tmp_path / "x.jsbx").read_bytes())
    (tmp_path / "old.jsbx").write_bytes(cbor2.dumps({**doc, "schema": 3}))  # the same shape: values in the run
    other = Sandbox(tmp_path / "other.sqlite")
    run = other.run(other.import_run(tmp_path / "old.jsbx"))
    assert (run.input, run.output) == ([1, "two"], {"echo": [1, "two"]})
    other.close()


def test_a_runs_output_updated_and_cleared_reads_back(sb):
    run_id = sb.eval("return 1", input=[1]).run_id
    sb.store.update_run(run_id, output={"later": True})
    assert (sb.store.get_run(run_id).input, sb.store.get_run(run_id).output) == ([1], {"later": True})
    sb.store.update_run(run_id, output=None, input=None)
    assert (sb.store.get_run(run_id).input, sb.store.get_run(run_id).output) == (None, None)


def test_a_resume_leaves_the_runs_input_unwritten(postgres_url):
    sb = Sandbox(postgres_url)
    sb.action(lambda x: x, name="pay", approval=True)
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("return await actions.pay(ctx.input.length)", input="x" * 100_000)
    version = "SELECT xmin::text FROM run_values WHERE run_id = ? AND name = 'input'"  # the row's last writer
    before = query(postgres_url, version, (info.value.run_id,))
    assert sb.resume(info.value.run_id, True).output == 100_000  # claimed and ended
    assert query(postgres_url, version, (info.value.run_id,)) == before != []
    sb.close()


def test_importing_twice_is_a_clear_error(sb, tmp_path):
    result = sb.eval("return 1")
    path = sb.export_run(result.run_id, tmp_path / "x.jsbx")
    with pytest.raises(StoreError, match="already exists"):
        sb.import_run(path)


def test_importing_a_file_that_is_not_an_export_is_a_clear_error(sb, tmp_path):
    bad = tmp_path / "bad.jsbx"
    bad.write_bytes(b"not cbor at all")
    with pytest.raises(StoreError, match="not a jupyter_sandbox run export"):
        sb.import_run(bad)


@pytest.mark.sqlite_only
def test_the_store_is_a_wal_sqlite_file_with_the_documented_tables(tmp_path):
    path = tmp_path / "runs.sqlite"
    Sandbox(path).eval("return 1")
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"runs", "run_values", "run_journal", "run_attempts", "signals", "meta"} <= tables
    pk = [r[1] for r in db.execute("PRAGMA table_info(run_journal)") if r[5]]
    assert pk == ["run_id", "seq"]


def test_the_postgres_store_has_the_same_tables_and_journal_key(postgres_url):
    Sandbox(postgres_url).eval("return 1")
    tables = {
        r[0]
        for r in query(
            postgres_url, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    }
    assert {"runs", "run_values", "run_journal", "run_attempts", "signals", "meta"} <= tables
    pk = [
        r[0]
        for r in query(
            postgres_url,
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON "
            "a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indisprimary "
            "AND i.indrelid = 'run_journal'::regclass ORDER BY array_position(i.indkey, "
            "a.attnum)",
        )
    ]
    assert pk == ["run_id", "seq"]


def test_journal_rows_are_cbor(store_url):
    import cbor2

    sb = Sandbox(store_url)
    sb.action(lambda x: x + 1, name="inc")
    run_id = sb.eval("return await actions.inc(1)").run_id
    rows = query(store_url, "SELECT kind, body FROM run_journal WHERE run_id = ? ORDER BY seq", (run_id,))
    decoded = [(kind, cbor2.loads(body)) for kind, body in rows]
    assert [k for k, _ in decoded] == ["attempt", "call", "result"]
    assert decoded[2][1]["value"] == 2 and decoded[1][1]["key"] == "tool|inc|1"


def test_a_store_from_a_newer_version_is_refused(store_url):
    Sandbox(store_url).close()
    query(store_url, "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer jupyter_sandbox"):
        Sandbox(store_url)


@pytest.mark.sqlite_only
def test_a_file_that_is_not_a_store_is_a_clear_error(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable run store"):
        Sandbox(path)


def test_runs_lists_runs_newest_first_with_names_and_status(store_url):
    sb = Sandbox(store_url)
    sb.eval("return 1", name="first")
    with pytest.raises(ScriptError):
        sb.eval("throw new Error('x')", name="second")
    listed = [(r.name, r.status) for r in sb.runs()]
    assert listed == [("second", "failed"), ("first", "completed")]


def test_run_returns_entries_as_plain_dicts(sb):
    run_id = sb.eval("console.log('hi'); return 1").run_id
    info = sb.run(run_id)
    assert info.status == "completed" and info.output == 1
    assert [e["kind"] for e in info.entries] == ["attempt", "console"]
    assert all(isinstance(e, dict) for e in info.entries)


def test_an_unknown_run_is_run_not_found(sb):
    with pytest.raises(RunNotFound):
        sb.resume("r-nope")


def test_resuming_a_completed_run_is_a_clear_state_error(sb):
    run_id = sb.eval("return 1").run_id
    with pytest.raises(RunStateError, match="completed; use check"):
        sb.resume(run_id)


def test_each_attempt_records_the_source_hash_it_ran(sb):
    sb.action(lambda x, resume=None: resume.value if resume else (_ for _ in ()).throw(ActionInterrupt()), name="gate")
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("return await actions.gate(1)")
    sb.resume(info.value.run_id, True, source="// edited\nreturn await actions.gate(1)")
    attempts = sb.run(info.value.run_id).attempts
    assert len(attempts) == 2 and attempts[0]["source_hash"] != attempts[1]["source_hash"]
    assert sb.run(info.value.run_id).source.startswith("// edited")


def test_parked_runs_survive_a_new_sandbox_on_the_same_file(store_url):
    clock = ManualClock(start=0)
    path = store_url
    with pytest.raises(RunParked) as info:
        Sandbox(path, clock=clock).eval("await ctx.hours(2); return 'later'")
    later = Sandbox(path, clock=ManualClock(start=2 * 3_600_000))
    [(run_id, result)] = later.run_due()
    assert run_id == info.value.run_id and result.output == "later"


# -- choosing the backend by URL ------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_a_postgresql_url_opens_the_postgres_store(postgres_url, scheme):
    from jupyter_sandbox.stores.postgres import PostgresStore

    sb = Sandbox(scheme + postgres_url[len("postgresql") :])
    assert isinstance(sb.store, PostgresStore)
    assert sb.eval("return 41 + 1").output == 42


def test_a_url_whose_scheme_is_not_served_names_the_schemes_that_are(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match="'mysql' is not served.*sqlite://, postgresql://, postgres://"):
        Sandbox("mysql://user@db/runs")
    assert list(tmp_path.iterdir()) == []  # no file named after the URL


def test_an_unreachable_database_is_a_store_error_that_hides_the_password():
    with pytest.raises(StoreError) as info:
        Sandbox("postgresql://team:s3cret@127.0.0.1:1/runs?connect_timeout=2")
    assert "not a usable run store" in str(info.value) and "127.0.0.1" in str(info.value)
    assert "s3cret" not in str(info.value) and "s3cret" not in info.value.path


def test_the_notebook_store_comes_from_JUPYTER_SANDBOX_STORE(postgres_url, monkeypatch):
    from jupyter_sandbox import notebook
    from jupyter_sandbox.stores.postgres import PostgresStore

    monkeypatch.setenv("JUPYTER_SANDBOX_STORE", postgres_url)
    notebook.close_session()
    try:
        assert isinstance(notebook.default_sandbox().store, PostgresStore)
    finally:
        notebook.close_session()


def test_the_change_counter_grows_with_every_change_from_any_connection(store_url):
    watcher, writer = Sandbox(store_url), Sandbox(store_url)
    before = watcher.store.change_counter()
    run_id = writer.eval("return 1").run_id  # another connection's commit
    seen = watcher.store.change_counter()
    assert seen > before
    watcher.store.update_run(run_id, name="renamed")  # and this connection's own
    assert watcher.store.change_counter() > seen


# -- PostgreSQL announces changes (LISTEN/NOTIFY); SQLite is polled -------------------------------------


def test_a_committed_change_is_announced_to_listeners_of_that_schema_only(postgres_url, postgres_server):
    from postgres_server import with_schema

    other = with_schema(postgres_server, "announce_elsewhere")
    query(postgres_server, "CREATE SCHEMA IF NOT EXISTS announce_elsewhere")
    sb, elsewhere = Sandbox(postgres_url), Sandbox(other)
    with sb.store.listen() as changes:
        assert changes.wait(0.1) == set()
        run_id = sb.eval("return 1").run_id  # another connection's commits
        elsewhere.eval("return 2")  # another schema: not this store's change
        assert changes.wait(30) == {run_id}


def test_a_rolled_back_change_announces_nothing(postgres_url):
    sb = Sandbox(postgres_url)
    run_id = sb.eval("return 1").run_id
    dump = sb.store.dump_run(run_id)
    fresh = {**dump, "run": {**dump["run"], "id": "r-fresh"}}
    with sb.store.listen() as changes:
        with pytest.raises(StoreError, match="already exists"):
            sb.store.load_runs([fresh, dump])  # the second is a duplicate: neither is written
        sb.store.add_signal(run_id, {"after": "the rollback"})
        assert changes.wait(30) == {run_id}  # the signal's announcement, and nothing of r-fresh


def test_a_change_wakes_a_postgres_scheduler_before_its_interval(postgres_url):
    import time

    worker = Sandbox(postgres_url)
    worker.action(lambda x: x + 1, name="inc")
    worker.start_scheduler(interval=120)  # it polls once now, then would sleep two minutes
    try:
        two_hours_ago = ManualClock(start=(time.time() - 7200) * 1000)
        with pytest.raises(RunParked) as info:  # parked on a timer already due: a change announced
            Sandbox(postgres_url, clock=two_hours_ago).eval("await ctx.hours(1); return await actions.inc(1)")
        deadline = time.time() + 60  # half the interval: only the announcement can wake it in time
        while worker.store.get_run(info.value.run_id).status != "completed":
            assert time.time() < deadline, "the scheduler slept through the change"
            time.sleep(0.05)
    finally:
        worker.stop_scheduler()
    assert worker.run(info.value.run_id).output == 2


def test_a_postgresql_url_without_psycopg_installed_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the postgres extra were not installed
    monkeypatch.delitem(sys.modules, "jupyter_sandbox.stores.postgres", raising=False)
    with pytest.raises(StoreError, match=r"jupyter_sandbox\[postgres\]") as info:
        Sandbox("postgresql://team:s3cret@db.internal/runs")
    assert "s3cret" not in str(info.value)
