"""Journal rows are validated as they are read: a row that decodes but has the wrong shape is a ``StoreError``
naming the run, the ``seq`` and the field, never a bare TypeError/KeyError/IndexError/MemoryError.

The damage is written into a real SQLite file (a run whose journal holds every kind of docs/journal.md),
then every way of reading the run is tried. The field classes below are docs/journal.md's, written out
here independently of the validator (``stores/rows.py``).
"""

from __future__ import annotations

import datetime
import shutil
import sqlite3
import tracemalloc
from pathlib import Path

import cbor2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_backends import set_every_run

from jupyter_sandbox import ActionInterrupt, ManualClock, Sandbox, SandboxError, StoreError

SOURCE = """
console.log("hello");
ctx.log("info", "a log", {n: 1});
ctx.plan(["one", {title: "two", done: false}]);
const t = Date.now(), r = Math.random();
await ctx.step("outer", async () => { await actions.work({n: 1}); });
try { await actions.fail(1); } catch (e) {}
await ctx.sleep(1);
const e = await ctx.waitForEvent({type: "go"}, {timeout: 5});
const a = await actions.ask("first");
const b = await actions.ask("second");
return [a, b];
"""
MISMATCH = SOURCE.replace("await actions.work({n: 1})", "await actions.work({n: 2})")
THROWS = SOURCE.replace("const b = await", 'throw new Error("edited"); const b = await')

# docs/journal.md: each kind's fields and their class (None: the kind's fields are all checked as listed).
COMMON = {"attempt": ("count", True), "at": ("number", True)}
FIELDS = {
    "attempt": {"n": ("count", True), "source_hash": ("text?", True), "resumed_from": ("list", True)},
    "call": {
        "op": ("enum", True),
        "name": ("text", True),
        "input": ("json", True),
        "key": ("text", True),
        "description": ("text?", False),
    },
    "result": {"ok": ("bool", True), "value": ("json", False), "error": ("map", False)},
    "now": {"value": ("number", True)},
    "random": {"value": ("unit", True)},
    "timer": {"ms": ("number", True), "due": ("number", True), "key": ("text", True)},
    "fired": {},
    "wait": {"match": ("json", True), "timeout": ("number?", True), "due": ("number?", True), "key": ("text", True)},
    "event": {"event": ("json", True), "signal": ("count?", True)},
    "interrupt": {
        "name": ("text", True),
        "input": ("json", True),
        "data": ("json", True),
        "state": ("json", True),
        "id": ("text", True),
    },
    "answer": {"value": ("json", True), "id": ("text", True)},
    "console": {"level": ("text", True), "message": ("text", True)},
    "log": {"level": ("text", True), "message": ("text", True), "data": ("json", False)},
    "step": {"id": ("count", True), "label": ("text", True), "phase": ("enum", True), "parent": ("count?", True)},
    "plan": {"plan": ("list", True)},
    "error": {"error": ("map", True)},
    "mismatch": {"position": ("count", True)},
}
EFFECTS = {"call", "result", "now", "random", "timer", "fired", "wait", "event", "interrupt", "answer"}

# Values no field of the journal may hold: not JSON, or not a value JSON can carry.
NEVER = [
    b"\xff\x00",
    float("nan"),
    float("inf"),
    float("-inf"),
    {1: "int key"},
    {"deep": [b"bytes"]},
    [float("nan")],
    cbor2.CBORTag(4242, 1),
    {1, 2},
    datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc),
    {"nested": {"list": [{"k": float("inf")}]}},
]
BAD = {
    "count": [-1, 2**40, 10**30, "3", 1.5, True, b"\x01"],
    "number": ["1", True, [1], {"n": 1}],
    "unit": [1.0, -0.5, 7, "0.5", True],
    "text": [1, b"text", ["x"], True, {"s": "x"}],
    "bool": [1, 0, "true", b"", [True]],
    "enum": ["no-such-value", 1, ["call"]],
    "map": ["boom", 1, [1], True],
    "list": ["x", 1, {"a": 1}],
    "json": [],
}


def _class_values(cls: str, required: bool) -> list:
    base, optional = cls.rstrip("?"), cls.endswith("?")
    values = BAD[base] + NEVER
    return values + ([None] if required and not optional else [])


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, str, list[tuple[int, dict]]]:
    """A store file with one interrupted run whose journal has every kind; its id; its rows (seq, row)."""
    path = tmp_path_factory.mktemp("template") / "runs.sqlite"
    sb = with_actions(Sandbox(path, clock=ManualClock(start=1_764_500_000_000.0)))
    try:
        sb.eval(SOURCE)
    except SandboxError as paused:
        run_id = paused.run_id
    for step in ({"answers": None}, {"source": MISMATCH}, {"source": THROWS}, {"source": SOURCE}):
        try:
            if "answers" in step:
                sb.resume(run_id, "yes")
            else:
                sb.resume(run_id, source=step["source"])
        except SandboxError:
            pass
    sb.signal(run_id, {"type": "later"})
    sb.close()
    db = sqlite3.connect(path)
    rows = [
        (seq, cbor2.loads(body))
        for seq, body in db.execute("SELECT seq, body FROM run_journal WHERE run_id = ? ORDER BY seq", (run_id,))
    ]
    db.close()
    kinds = {row["kind"] for _, row in rows}
    assert kinds == set(FIELDS), f"the template lacks {set(FIELDS) - kinds}"
    return path, run_id, rows


def with_actions(sb: Sandbox) -> Sandbox:
    sb.action(lambda x: x, name="work")

    @sb.action
    def fail(x):
        raise ValueError("no")

    @sb.action
    def ask(question, resume=None):
        if resume is None:
            raise ActionInterrupt(data={"q": question}, state={"asked": question})
        return resume.value

    return sb


def damaged(template, tmp_path, sql: str, args: tuple) -> tuple[Sandbox, str]:
    source, run_id, _ = template
    target = tmp_path / f"damaged-{id(args)}.sqlite"
    shutil.copy(source, target)
    db = sqlite3.connect(target)
    db.execute(sql, args)
    db.commit()
    db.close()
    return with_actions(Sandbox(target)), run_id


READS = {
    "run": lambda sb, run_id: sb.run(run_id),
    "call_log": lambda sb, run_id: sb.call_log(run_id),
    "timeline": lambda sb, run_id: sb.timeline(run_id),
    "check": lambda sb, run_id: sb.check(run_id),
    "resume": lambda sb, run_id: sb.resume(run_id, "yes"),
}


def assert_every_read_names(sb: Sandbox, run_id: str, *parts: str) -> None:
    for how, read in READS.items():
        try:
            read(sb, run_id)
        except StoreError as exc:
            message = str(exc)
            for part in (run_id, *parts):
                assert part in message, f"{how}: {part!r} not in {message!r}"
        except BaseException as exc:  # anything else is the defect this file guards against
            pytest.fail(f"{how}: {type(exc).__name__}: {exc}")
        else:
            pytest.fail(f"{how}: read the damaged journal without an error")


@st.composite
def damage(draw, rows):
    """A row, one of its fields, and a value that field may not hold (or its removal, if it is required)."""
    seq, row = draw(st.sampled_from(rows))
    fields = {**COMMON, **FIELDS[row["kind"]]}
    if row["kind"] in EFFECTS:
        fields["slot"] = ("count", True)
    name = draw(st.sampled_from(sorted(fields)))
    cls, required = fields[name]
    if required and draw(st.booleans()) and draw(st.booleans()):
        return seq, row, name, "missing"
    return seq, row, name, draw(st.sampled_from(_class_values(cls, required)))


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_field_with_the_wrong_shape_is_a_store_error_naming_run_seq_and_field(template, tmp_path, data):
    seq, row, name, value = data.draw(damage(template[2]))
    changed = dict(row)
    if value == "missing":
        del changed[name]
    else:
        changed[name] = value
    sb, run_id = damaged(
        template, tmp_path, "UPDATE run_journal SET body = ? WHERE seq = ?", (cbor2.dumps(changed), seq)
    )
    assert_every_read_names(sb, run_id, f"journal entry {seq}", repr(name))


@pytest.mark.parametrize("where", ["input", "value", "data", "event", "match"])
def test_a_value_nested_deep_inside_a_json_field_is_checked_too(template, tmp_path, where):
    seq, row = next((s, r) for s, r in template[2] if where in r and r["kind"] not in ("now", "random"))
    changed = {**row, where: {"ok": [1, 2, {"deeper": [{"bytes": b"\x00"}]}]}}
    sb, run_id = damaged(
        template, tmp_path, "UPDATE run_journal SET body = ? WHERE seq = ?", (cbor2.dumps(changed), seq)
    )
    assert_every_read_names(sb, run_id, f"journal entry {seq}", repr(where), "bytes")


def test_an_unknown_kind_is_a_store_error(template, tmp_path):
    seq, row = template[2][1]
    sb, run_id = damaged(
        template,
        tmp_path,
        "UPDATE run_journal SET body = ? WHERE seq = ?",
        (cbor2.dumps({**row, "kind": "teleport"}), seq),
    )
    assert_every_read_names(sb, run_id, f"journal entry {seq}", "'kind'", "teleport")


@pytest.mark.parametrize("body", [cbor2.dumps([1, 2]), cbor2.dumps("text"), cbor2.dumps(None), "a TEXT body"])
def test_a_body_that_is_not_a_cbor_map_is_a_store_error(template, tmp_path, body):
    sb, run_id = damaged(template, tmp_path, "UPDATE run_journal SET body = ? WHERE seq = 2", (body,))
    assert_every_read_names(sb, run_id, "journal entry 2", "'body'")


@pytest.mark.parametrize("seq", ["x", 1.5, -1])
def test_a_seq_that_is_not_a_position_is_a_store_error(template, tmp_path, seq):
    sb, run_id = damaged(template, tmp_path, "UPDATE run_journal SET seq = ? WHERE seq = 3", (seq,))
    assert_every_read_names(sb, run_id, "seq")


def test_a_gap_in_the_seqs_is_a_store_error(template, tmp_path):
    sb, run_id = damaged(template, tmp_path, "DELETE FROM run_journal WHERE seq = 4", ())
    assert_every_read_names(sb, run_id, "journal entry 5", "position 4")


@pytest.mark.parametrize("slot", [2**31, 2**62, 10**40])
def test_a_huge_slot_allocates_nothing_of_its_size(template, tmp_path, slot):
    seq, row = next((s, r) for s, r in template[2] if r["kind"] == "now")
    sb, run_id = damaged(
        template, tmp_path, "UPDATE run_journal SET body = ? WHERE seq = ?", (cbor2.dumps({**row, "slot": slot}), seq)
    )
    tracemalloc.start()
    try:
        assert_every_read_names(sb, run_id, f"journal entry {seq}", "'slot'")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_the_largest_slot_allowed_reads_back_as_a_bounded_call_log(template, tmp_path):
    from jupyter_sandbox.stores.rows import MAX_SLOT

    seq, row = next((s, r) for s, r in template[2] if r["kind"] == "now")
    sb, run_id = damaged(
        template,
        tmp_path,
        "UPDATE run_journal SET body = ? WHERE seq = ?",
        (cbor2.dumps({**row, "slot": MAX_SLOT}), seq),
    )
    assert len(sb.call_log(run_id)) == MAX_SLOT + 1  # at most 8 MiB of None: the bound is the rule's, not the row's


def test_every_row_the_engine_writes_reads_back(template, tmp_path):
    sb, run_id = damaged(template, tmp_path, "SELECT 1", ())
    assert [e["seq"] for e in sb.run(run_id).entries] == [seq for seq, _ in template[2]]
    assert sb.resume(run_id, "yes").output == ["yes", "yes"]


# -- the runs table and the signals -------------------------------------------------------------------------


# (SQLite's column affinity turns a number into text in a TEXT column: bytes are what stays wrong there.)
RUN_DAMAGE = [
    ("attempt", "x"),
    ("attempt", -1),
    ("attempt", 1.5),
    ("created", "yesterday"),
    ("updated", b"\x00"),
    ("status", "bogus"),
    ("status", b"running"),
    ("kind", "teleport"),
    ("name", b"\x00"),
    ("wake_at", "soon"),
    ("source", b"bytes"),
    ("parent", b"r-1"),
]
RUN_BLOB_DAMAGE = [
    ("input", float("nan")),
    ("input", {1: "int key"}),
    ("output", b"bytes"),
    ("input", {"a", "set"}),
    ("error", cbor2.CBORTag(4242, 1)),
    ("options", [1]),
    ("options", {"actions": 5}),
    ("options", {"actions": [1]}),
    ("options", {"strict": "yes"}),
    ("options", {"limits": {"fuel_seconds": "x"}}),
    ("options", {"limits": 3}),
]


@pytest.mark.parametrize("column, value", RUN_DAMAGE)
def test_a_runs_column_with_the_wrong_type_is_a_store_error_naming_it(template, tmp_path, column, value):
    sb, run_id = damaged(template, tmp_path, f"UPDATE runs SET {column} = ?", (value,))
    _assert_run_reads_name(sb, run_id, column)


@pytest.mark.parametrize("column, value", RUN_BLOB_DAMAGE)
def test_a_runs_blob_with_the_wrong_shape_is_a_store_error_naming_it(template, tmp_path, column, value):
    sb, run_id = damaged(template, tmp_path, set_every_run(column), (cbor2.dumps(value),))
    _assert_run_reads_name(sb, run_id, column)


def _assert_run_reads_name(sb: Sandbox, run_id: str, column: str) -> None:
    for how, read in {
        "run": lambda: sb.run(run_id),
        "runs": lambda: sb.runs(include_children=True),
        "resume": lambda: sb.resume(run_id, "yes"),
    }.items():
        with pytest.raises(StoreError) as info:
            read()
        assert run_id in str(info.value) and column in str(info.value), f"{how}: {info.value}"


@pytest.mark.parametrize("event", [cbor2.dumps(float("nan")), cbor2.dumps({1: 2}), b"\xff\xff", "text"])
def test_a_damaged_signal_is_a_store_error_naming_it(template, tmp_path, event):
    sb, run_id = damaged(template, tmp_path, "UPDATE signals SET event = ?", (event,))
    with pytest.raises(StoreError, match=rf"run {run_id}: its signal \d+"):
        sb.store.pending_signals(run_id)


@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=10,
    )
)
def test_any_json_value_in_a_json_field_is_accepted(value):
    from jupyter_sandbox.stores.rows import decode

    row = {"kind": "call", "attempt": 1, "at": 1.0, "slot": 0, "op": "call", "name": "a", "key": "k", "input": value}
    assert decode("r-x", 0, cbor2.dumps(row)).body["input"] == value


def test_the_resume_after_a_refused_read_names_the_damage_not_a_busy_run(template, tmp_path):
    seq, row = next((s, r) for s, r in template[2] if r["kind"] == "result")
    sb, run_id = damaged(
        template, tmp_path, "UPDATE run_journal SET body = ? WHERE seq = ?", (cbor2.dumps({**row, "ok": "yes"}), seq)
    )
    for answer in (None, None, "yes"):  # the claim a failed read made is let go: never "already being resumed"
        with pytest.raises(StoreError, match=f"journal entry {seq}"):
            sb.resume(run_id, answer)


def test_a_mismatch_where_the_script_stopped_asking_reads_back():
    """The position of a 'nothing attempted' mismatch came from the realm as a float: its row read back damaged."""
    from jupyter_sandbox import CallLogMismatchError

    sb = with_actions(Sandbox())
    with pytest.raises(SandboxError) as paused:
        sb.eval("await Promise.all([actions.work(1), actions.ask('a')])")
    with pytest.raises(CallLogMismatchError):
        sb.resume(paused.value.run_id, "yes", source="await new Promise(() => {})")
    mismatch = [e for e in sb.run(paused.value.run_id).entries if e["kind"] == "mismatch"]
    assert [(type(e["slot"]), e["position"]) for e in mismatch] == [(int, 0)]


def test_the_writer_refuses_a_slot_the_store_would_not_read_back():
    from jupyter_sandbox import LimitExceeded
    from jupyter_sandbox.engine.journal import Journal, JournalWriter
    from jupyter_sandbox.stores.rows import MAX_SLOT

    writer = JournalWriter(Journal(), 1, max_entries=10, max_bytes=2**20)
    writer.append("now", MAX_SLOT, value=1)
    with pytest.raises(LimitExceeded, match="continueAsNew") as info:
        writer.append("now", MAX_SLOT + 1, value=1)
    assert info.value.limit == "journal-cap"


def test_an_export_with_a_damaged_row_is_refused_whole_naming_the_row(template, tmp_path):
    source, run_id, rows = template
    with with_actions(Sandbox(source)) as sb:
        exported = Path(sb.export_run(run_id, tmp_path / "run.jsbx"))
    doc = cbor2.loads(exported.read_bytes())
    seq, body = next((seq, row) for seq, row in rows if row["kind"] == "result")
    doc["runs"][0]["journal"][seq][2] = cbor2.dumps({**body, "slot": -3})
    exported.write_bytes(cbor2.dumps(doc))
    with Sandbox(tmp_path / "other.sqlite") as other:
        with pytest.raises(StoreError) as info:
            other.import_run(exported)
        assert all(part in str(info.value) for part in (str(exported), run_id, f"journal entry {seq}", "'slot'"))
        assert other.runs(include_children=True) == []


@pytest.mark.parametrize(
    "runs",
    [
        5,
        [5],
        [{"run": {}, "journal": 5, "attempts": [], "signals": []}],
        [{"run": {}, "journal": [[0, "call"]], "attempts": [], "signals": []}],
    ],
)
def test_an_export_not_shaped_as_dump_run_writes_it_is_a_store_error(tmp_path, runs):
    path = tmp_path / "bad.jsbx"
    path.write_bytes(cbor2.dumps({"format": "jupyter-sandbox-run", "schema": 1, "root": "r-x", "runs": runs}))
    with Sandbox() as sb, pytest.raises(StoreError, match="not a jupyter_sandbox run export"):
        sb.import_run(path)
