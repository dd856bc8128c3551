"""A journal read checks each row by its shape's compiled checks (``stores/shapes.py``), a fast path of
``rows.decode``: it must accept exactly the rows ``decode`` accepts, giving the same entries, and refuse the
others with the same ``StoreError`` (naming run, seq and field).

Rows are the engine's own (a run with every common kind), each put after an intact row of its shape (so the
shape's checks are compiled and cached when the damaged row arrives) and then damaged: a field removed, added,
or given another value, right or wrong.
"""

from __future__ import annotations

import datetime
import math

import cbor2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_sandbox import ActionInterrupt, ManualClock, Sandbox, SandboxError, StoreError
from jupyter_sandbox.stores.rows import MAX_COUNT, MAX_SLOT, decode, decode_journal

SOURCE = """
console.log("hello");
ctx.log("info", "a log", {n: 1});
const t = Date.now(), r = Math.random();
await ctx.step("outer", async () => { await actions.work({n: 1, list: [1, "two", null]}); await actions.work([1]); });
try { await actions.fail(1.5); } catch (e) {}
await ctx.sleep(1);
return await actions.ask("first");
"""


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    sb = Sandbox(":memory:", clock=ManualClock(start=1_764_500_000_000.0))
    sb.action(lambda x: x, name="work")

    @sb.action
    def fail(x):
        raise ValueError("no")

    @sb.action
    def ask(question, resume=None):
        if resume is None:
            raise ActionInterrupt(data={"q": question}, state={"asked": question})
        return resume.value

    try:
        sb.eval(SOURCE)
    except SandboxError as paused:
        run_id = paused.run_id
    sb.resume(run_id, "yes")
    out = [
        cbor2.loads(body)
        for _, body in sb._engine.store._read(
            "SELECT seq, body FROM run_journal WHERE run_id = ? ORDER BY seq", (run_id,)
        )
    ]
    sb.close()
    return out


# Values right for some field and wrong for others: the schema's boundaries and what JSON cannot carry.
VALUES = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            0,
            1,
            -1,
            0.5,
            0.0,
            1.0,
            -0.0,
            0.9999999,
            7,
            1.5,
            MAX_SLOT,
            MAX_SLOT + 1,
            MAX_COUNT,
            MAX_COUNT + 1,
            -MAX_COUNT - 1,
            2**64,
            10**30,
            float("nan"),
            float("inf"),
            float("-inf"),
            "",
            "call",
            "delegate",
            "agent",
            "bogus",
            "start",
            "end",
            "ok",
            "error",
            b"bytes",
            [],
            {},
            [1, "x"],
            {"name": "E", "message": "m"},
            {"name": 1},
            {"message": None},
            {1: "int key"},
            {"deep": [b"bytes"]},
            [float("nan")],
            {"n": {"m": [float("inf")]}},
            [{"id": "a", "name": "b"}],
            [{"id": 1, "name": "b"}],
            ["text"],
            [1],
            cbor2.CBORTag(4242, 1),
            datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc),
        ]
    ),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=6,
    ),
)


def outcome(read):
    try:
        return read()
    except StoreError as exc:
        return str(exc)


def same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return [(e.kind, e.attempt, e.at, e.slot, e.seq, cbor2.dumps(e.body)) for e in a] == [
        (e.kind, e.attempt, e.at, e.slot, e.seq, cbor2.dumps(e.body)) for e in b
    ]


@given(data=st.data())
def test_a_journal_read_accepts_and_refuses_each_row_as_decode_does(rows, data):
    row = data.draw(st.sampled_from(rows))
    damaged = dict(row)
    name = data.draw(st.sampled_from(sorted(row, key=str) + ["extra"]))
    if data.draw(st.integers(0, 4)) == 0:
        damaged.pop(name, None)
    else:
        damaged[name] = data.draw(VALUES)
    blobs = [cbor2.dumps(row), cbor2.dumps(damaged)]
    expected = outcome(lambda: [decode("r-1", seq, blob) for seq, blob in enumerate(blobs)])
    assert same(outcome(lambda: decode_journal("r-1", list(enumerate(blobs)))), expected)


def test_a_row_of_a_cached_shape_with_a_wrong_value_is_refused_naming_the_field(rows):
    call = next(r for r in rows if r["kind"] == "call")
    blobs = [cbor2.dumps(call), cbor2.dumps({**call, "op": "bogus"})]
    with pytest.raises(StoreError, match=r"run r-1: journal entry 1 \(call\): field 'op'"):
        decode_journal("r-1", list(enumerate(blobs)))


def test_a_nan_where_a_number_is_expected_is_refused_even_after_its_shape_is_cached(rows):
    now = next(r for r in rows if r["kind"] == "now")
    assert not math.isnan(now["value"])
    blobs = [cbor2.dumps(now), cbor2.dumps({**now, "value": float("nan")})]
    with pytest.raises(StoreError, match=r"journal entry 1 \(now\): field 'value'"):
        decode_journal("r-1", list(enumerate(blobs)))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [float("-inf")], {"k": b"bytes"}])
def test_a_value_json_cannot_carry_in_a_json_field_is_refused_even_after_its_shape_is_cached(rows, value):
    call = next(r for r in rows if r["kind"] == "call" and type(r["input"]) is type(value))
    blobs = [cbor2.dumps(call), cbor2.dumps({**call, "input": value})]
    with pytest.raises(StoreError, match=r"journal entry 1 \(call\): field 'input' is not JSON"):
        decode_journal("r-1", list(enumerate(blobs)))
