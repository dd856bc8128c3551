"""The call log a journal gives (``Journal.call_log``) holds, at each slot, what ``_call_log_entry`` makes of
it with the slot's completion order, whatever the journal holds, and shares no value with the journal."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jupyter_sandbox.engine.journal import Journal, _call_log_entry
from jupyter_sandbox.stores.rows import Entry

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=5,
)


@st.composite
def journals(draw):
    entries, slot = [], 0
    for _ in range(draw(st.integers(0, 6))):
        what = draw(st.sampled_from(["call", "failed", "open", "now", "timer", "wait"]))
        if what in ("call", "failed", "open"):
            op = draw(st.sampled_from(["call", "delegate", "agent"]))
            entries.append(Entry("call", 1, 0.0, slot, {"op": op, "name": "a", "input": draw(JSON), "key": f"k{slot}"}))
            if what == "call":
                entries.append(Entry("result", 1, 0.0, slot, {"ok": True, "value": draw(JSON)}))
            elif what == "failed":
                entries.append(
                    Entry("result", 1, 0.0, slot, {"ok": False, "error": {"message": "no", "n": draw(JSON)}})
                )
        elif what == "now":
            entries.append(Entry("now", 1, 0.0, slot, {"value": 5}))
        elif what == "timer":
            entries.append(Entry("timer", 1, 0.0, slot, {"key": "t", "ms": 1, "due": 2}))
            entries.append(Entry("fired", 1, 0.0, slot, {}))
        else:
            entries.append(Entry("wait", 1, 0.0, slot, {"key": "w", "match": draw(JSON), "timeout": None, "due": None}))
            entries.append(Entry("event", 1, 0.0, slot, {"event": draw(JSON), "signal": 1}))
        slot += 1
    order = draw(st.permutations(range(len(entries))))  # completions in any order, as parallel branches give
    return Journal(
        [entries[i] for i in order if entries[i].kind == "call"]
        + [entries[i] for i in order if entries[i].kind != "call"]
    )


@given(journals())
def test_each_slot_of_the_call_log_is_what_call_log_entry_makes_of_it(journal):
    log = journal.call_log()
    completed = [e.slot for e in journal.entries if e.kind in ("result", "fired", "event", "now", "random")]
    order = {}
    for slot in completed:
        order[slot] = len(order)
    for slot, state in journal.slots.items():
        expected = None if state.completion is None else _call_log_entry(state, order.get(slot))
        assert log[slot] == expected


def test_the_call_log_shares_no_value_with_the_journal():
    journal = Journal(
        [
            Entry("call", 1, 0.0, 0, {"op": "call", "name": "a", "input": {"x": [1]}, "key": "k"}),
            Entry("result", 1, 0.0, 0, {"ok": True, "value": [{"y": 2}]}),
        ]
    )
    log = journal.call_log()
    log[0]["input"]["x"].append(2)
    log[0]["response"][0]["y"] = 3
    assert journal.entries[0].body["input"] == {"x": [1]}
    assert journal.entries[1].body["value"] == [{"y": 2}]
