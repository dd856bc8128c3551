"""Faults: a full disk, a read-only store, corrupt or truncated store files, SIGKILL during resumes.

Expected everywhere: a clear ``StoreError`` (never a bare sqlite3 / cbor2
exception), nothing half-written, the journal still consistent, and the run
still resumable once the fault is gone. ``bench/stress`` runs 100 SIGKILL
trials and a real full tmpfs; these are the fast versions.

Disk full is simulated with ``PRAGMA max_page_count`` on the store's own
connection (``sb.store._db``); read-only with ``PRAGMA query_only`` (as root,
file permissions do not stop SQLite). Those faults, and files that are not
stores, are SQLite's own (marked ``sqlite_only``); damaged rows and newer
schemas run on both backends (``on_both``), and PostgreSQL adds its own: a
foreign schema and a server restart in the middle of a run.
"""

from __future__ import annotations

import collections
import random
import sqlite3
from pathlib import Path

import pytest
from store_backends import query, set_every_run
from stress_module import stress

from jupyter_sandbox import RunBusyError, RunParked, Sandbox, SandboxError, SandboxInterrupt, StoreError

BULKY = "for (let i = 0; i < 300; i++) await actions.bulky(i); return 'done'"
on_both = pytest.mark.parametrize("good_target", ["sqlite", "postgres"], indirect=True)


def journal_consistent(sb: Sandbox, run_id: str) -> None:
    entries = sb.run(run_id).entries  # every entry decodes
    assert [e["seq"] for e in entries] == list(range(len(entries))), "a gap or a duplicate in the journal"
    calls = {e["slot"] for e in entries if e["kind"] == "call"}
    results = [e["slot"] for e in entries if e["kind"] == "result"]
    assert set(results) <= calls and len(results) == len(set(results)), "a result without its call, or twice"


def with_bulky(sb: Sandbox) -> collections.Counter:
    calls: collections.Counter = collections.Counter()

    @sb.action
    def bulky(i):
        calls[i] += 1
        return "q" * 3000

    return calls


def fill_disk(sb: Sandbox, spare_pages: int = 3) -> None:
    pages = sb.store._db.execute("PRAGMA page_count").fetchone()[0]
    sb.store._db.execute(f"PRAGMA max_page_count = {pages + spare_pages}")


def free_disk(sb: Sandbox) -> None:
    sb.store._db.execute("PRAGMA max_page_count = 1073741823")


def journaled_inputs(sb: Sandbox, run_id: str) -> set:
    entries = sb.run(run_id).entries
    calls = {e["slot"]: e["input"] for e in entries if e["kind"] == "call"}
    return {calls[e["slot"]] for e in entries if e["kind"] == "result" and e["slot"] in calls}


# -- a full disk -------------------------------------------------------------------------------------------


# The defect this guards against: store._tx maps only BEGIN/COMMIT errors; an INSERT
# that hits SQLITE_FULL escapes raw, and since SQLite already rolled back, the ROLLBACK in _tx raises
# sqlite3.OperationalError('cannot rollback - no transaction is active'), hiding the cause
@pytest.mark.sqlite_only
def test_a_full_disk_is_a_store_error(store_path):
    sb = Sandbox(store_path)
    with_bulky(sb)
    sb.eval("return 1")
    fill_disk(sb)
    with pytest.raises(StoreError) as info:
        sb.eval(BULKY)
    assert "full" in str(info.value)


@pytest.mark.sqlite_only
def test_a_full_disk_leaves_the_journal_consistent_and_the_run_resumable(store_path):
    sb = Sandbox(store_path)
    calls = with_bulky(sb)
    sb.eval("return 1")
    fill_disk(sb)
    with pytest.raises(Exception):  # noqa: B017 - which exception is the test above
        sb.eval(BULKY)
    free_disk(sb)
    run = sb.runs()[0]
    assert run.status in ("failed", "stalled")  # resumable; never left "running" by a live-looking lease
    journal_consistent(sb, run.id)
    journaled = journaled_inputs(sb, run.id)
    try:
        result = sb.resume(run.id)
    except RunBusyError:
        result = sb.resume(run.id, force=True)
    assert result.output == "done"
    assert all(calls[i] == 1 for i in journaled), "a journaled action ran again after the disk was freed"
    assert all(calls[i] >= 1 for i in range(300))
    assert sum(n - 1 for n in calls.values()) <= 1  # at most the one in flight when the write failed
    journal_consistent(sb, run.id)


# The defect this guards against: when Store.finish_attempt fails (disk full at the
# end of a run) the run stays 'running', owned by this process and still in store._ACTIVE, so every later resume
# in this process raises RunBusyError ('already being resumed') until force=True
@pytest.mark.sqlite_only
def test_a_full_disk_at_the_end_of_a_run_does_not_leave_it_running(store_path):
    sb = Sandbox(store_path)
    sb.eval("return 1")
    fill_disk(sb, spare_pages=4)
    with pytest.raises(Exception):  # noqa: B017
        sb.eval("return 'x'.repeat(200000)")  # the output is written by finish_attempt
    free_disk(sb)
    run = [r for r in sb.runs() if r.status != "completed"][0]
    assert run.status != "running"
    assert len(sb.resume(run.id).output) == 200000


# -- a read-only store ---------------------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_a_read_only_store_is_a_store_error_and_nothing_is_half_written(store_path):
    sb = Sandbox(store_path)
    sb.action(lambda x: x, name="echo")
    first = sb.eval("return await actions.echo(1)")
    with pytest.raises(RunParked) as waiting:  # (a completed run refuses a signal before it writes anything)
        sb.eval("return await ctx.waitForEvent('go')")
    both = {first.run_id, waiting.value.run_id}
    sb.store._db.execute("PRAGMA query_only = 1")
    with pytest.raises(StoreError) as info:
        sb.eval("return await actions.echo(2)")
    assert "readonly" in str(info.value).replace("-", "").replace(" ", "")
    with pytest.raises(StoreError):
        sb.signal(waiting.value.run_id, {"a": 1})
    assert {r.id for r in sb.runs()} == both  # reading still works, nothing new was written
    sb.store._db.execute("PRAGMA query_only = 0")
    assert {r.id for r in sb.runs()} == both
    assert sb.eval("return await actions.echo(3)").output == 3


# -- files that are not stores, or broken ones -------------------------------------------------------------------


@pytest.fixture
def good_target(request, tmp_path):
    """Where ``good_store`` is built: an SQLite file, or (``on_both``) a PostgreSQL schema."""
    if getattr(request, "param", "sqlite") == "postgres":
        return request.getfixturevalue("postgres_url")
    return tmp_path / "good.sqlite"


@pytest.fixture
def good_store(good_target):
    """A store with three finished runs and one paused on an approval."""
    path = good_target
    sb = Sandbox(path)
    stress.register_actions(sb, collections.Counter())
    for k in range(3):
        sb.eval("let s = 0; for (let i = 0; i < 4; i++) s += await actions.echo(i); return s", input=k)
    with pytest.raises(SandboxInterrupt):
        sb.eval("await actions.echo(1); return await actions.pause('plain')")
    sb.close()
    return path


def use_store(path: Path) -> list[str]:
    """Open, list, read every run, resume the paused one, run a new one."""
    sb = Sandbox(path)
    stress.register_actions(sb, collections.Counter())
    statuses = []
    for run in sb.runs():
        sb.run(run.id)
        statuses.append(run.status)
        if run.status == "interrupted":
            sb.resume(run.id, "answer")
    sb.eval("return await actions.echo(1)")
    sb.close()
    return statuses


@pytest.mark.parametrize(
    "content",
    [b"\x00" * 100, b"hello, not a database\n" * 100, bytes(range(256)) * 20, b"SQLite format 3\x00" + b"\xff" * 2000],
)
@pytest.mark.sqlite_only
def test_a_file_that_is_not_a_store_is_a_store_error(tmp_path, content):
    path = tmp_path / "runs.sqlite"
    path.write_bytes(content)
    with pytest.raises(StoreError) as info:
        use_store(path)
    assert str(path) in str(info.value)


@pytest.mark.sqlite_only
def test_an_empty_file_becomes_a_store(tmp_path):
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"")
    assert use_store(path) == []


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.5, 0.75, 0.95, 0.999])
@pytest.mark.sqlite_only
def test_a_truncated_store_is_a_store_error_or_still_reads(good_store, fraction):
    data = good_store.read_bytes()
    good_store.write_bytes(data[: int(len(data) * fraction)])
    try:
        use_store(good_store)
    except SandboxError as exc:
        assert isinstance(exc, StoreError), exc


@pytest.mark.sqlite_only
def test_a_foreign_sqlite_database_is_a_store_error(tmp_path):
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (x INTEGER)")
    db.commit()
    db.close()
    with pytest.raises(StoreError):
        use_store(path)


@on_both
def test_a_store_from_a_newer_version_is_a_store_error(good_store):
    query(str(good_store), "UPDATE meta SET value = '99'")
    with pytest.raises(StoreError, match="newer"):
        use_store(good_store)


@on_both
@pytest.mark.parametrize("junk", [b"\xff\x00\xff", b"\xa0", b"\x01", b""])
def test_a_corrupt_journal_entry_is_a_store_error(good_store, junk):
    query(str(good_store), "UPDATE run_journal SET body = ? WHERE seq = 1", (junk,))
    with pytest.raises(StoreError, match="journal entry"):
        use_store(good_store)


# The defect this guards against: store._row_to_run decodes the runs table's CBOR
# blobs without mapping errors (bare cbor2.CBORDecodeError/EOF) or checking types (options decoded to an int ->
# AttributeError 'int' object has no attribute 'get')
@pytest.mark.parametrize(
    "column, junk",
    [
        ("output", b"\xff\x00\xff"),
        ("input", b"\x9f"),
        ("options", b"\x01"),
        ("options", b"\x5a\xff\xff\x00\x00"),
        ("output", b"\x62\xe9\x41"),
    ],
)
@on_both
def test_a_corrupt_run_row_is_a_store_error(good_store, column, junk):
    query(str(good_store), set_every_run(column), (junk,))
    with pytest.raises(StoreError):
        use_store(good_store)


# The defect this guards against: Store.__init__ does int(schema_version) unguarded
# (bare ValueError) and Path.mkdir on a parent that is a file raises a bare FileExistsError
@pytest.mark.parametrize(
    "good_target, how",
    [("sqlite", "schema-not-a-number"), ("postgres", "schema-not-a-number"), ("sqlite", "parent-is-a-file")],
    indirect=["good_target"],
)
def test_odd_store_paths_and_schemas_are_store_errors(good_store, how):
    if how == "schema-not-a-number":
        query(str(good_store), "UPDATE meta SET value = 'abc'")
        path = good_store
    else:
        path = good_store / "runs.sqlite"  # good_store is a file
    with pytest.raises(StoreError):
        Sandbox(path)


@pytest.mark.sqlite_only
def test_a_missing_wal_file_loses_at_most_the_uncheckpointed_tail(good_store):
    Path(str(good_store) + "-wal").unlink(missing_ok=True)
    statuses = use_store(good_store)
    assert len(statuses) <= 4


# -- SIGKILL during resumes ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.sqlite_only  # kill_trial checks the file's health with SQLite's integrity_check
def test_sigkill_during_resumes_corrupts_nothing_and_repeats_no_journaled_action(tmp_path):
    """A run paused on an approval is resumed in a child that is killed (1-3 times), then finished here."""
    rng = random.Random(20261130)
    for trial in range(5):
        workdir = tmp_path / f"t{trial}"
        workdir.mkdir()
        result = stress.kill_trial(workdir, "resume", rng, kills=1 + trial % 3)
        assert result["corrupted"] == [], result
        assert result["journaled_twice"] == [], result
        assert result["output"] == "done", result
        assert result["lost"] == [], result
        assert len(result["repeats"]) <= 1 + trial % 3  # at most the call in flight at each kill


class _FailingCommits:
    """The store's connection, except that COMMITs fail as on a full disk (SQLite rolls back) while ``failing``."""

    def __init__(self, db: sqlite3.Connection, skip: int = 0):
        self._real, self.skip, self.failing = db, skip, True

    def execute(self, sql: str, *args):
        if sql == "COMMIT" and self.failing:
            if self.skip > 0:
                self.skip -= 1
            else:
                self._real.execute("ROLLBACK")
                raise sqlite3.OperationalError("database or disk is full")
        return self._real.execute(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self._real, name)


# The defect this guards against: Store.claim adds the run to store._ACTIVE inside
# its transaction, before COMMIT. A run left 'running' by a failed attempt (shown 'stalled') whose next claim
# fails at COMMIT (disk still full) stays in _ACTIVE, so it looks leased by this process: every later resume
# raises RunBusyError until force=True (move _ACTIVE.add after the commit)
@pytest.mark.sqlite_only
def test_a_claim_whose_commit_fails_leaves_the_run_resumable(store_path):
    sb = Sandbox(store_path)
    stress.register_actions(sb, collections.Counter())
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("await actions.echo(1); return await actions.pause('plain')")
    run_id = info.value.run_id
    real = sb.store._db
    sb.store._db = _FailingCommits(real, skip=1)  # the claim commits, every later write fails: a full disk
    with pytest.raises(StoreError):
        sb.resume(run_id, "yes")
    sb.store._db = _FailingCommits(real)  # the disk is still full when the next resume claims the run
    with pytest.raises(StoreError):
        sb.resume(run_id, "yes")
    sb.store._db = real  # space again
    assert sb.store.get_run(run_id).status in ("stalled", "interrupted", "failed")
    assert sb.resume(run_id, "yes").output == "yes"


# -- PostgreSQL's own faults ----------------------------------------------------------------------------------


def test_a_foreign_postgres_schema_is_a_store_error(postgres_url):
    query(postgres_url, "CREATE TABLE runs (x INTEGER)")
    with pytest.raises(StoreError) as info:
        use_store(postgres_url)
    assert "not a usable run store" in str(info.value)


def test_a_postgres_restart_mid_run_is_a_store_error_then_the_run_resumes(own_server):
    from jupyter_sandbox.stores.postgres import PostgresStore

    sb = Sandbox(PostgresStore(own_server.url, timeout=2))  # while the server is down, fail in 2 s
    calls: collections.Counter = collections.Counter()

    @sb.action
    def step(i):
        calls[i] += 1
        if i == 3 and calls[i] == 1:
            own_server.stop_server()  # the server dies while the action runs: its result cannot be written
        return i

    with pytest.raises(StoreError) as info:
        sb.eval("for (let i = 0; i < 6; i++) await actions.step(i); return 'done'")
    assert own_server.url.split("?")[0] in str(info.value)
    own_server.start_server()
    run = sb.runs()[0]
    assert run.status == "stalled"  # its attempt could not record its end; this process no longer runs it
    journal_consistent(sb, run.id)
    assert sb.resume(run.id).output == "done"
    assert [calls[i] for i in range(6)] == [1, 1, 1, 2, 1, 1]  # only the call in flight ran again
    journal_consistent(sb, run.id)
    sb.close()
