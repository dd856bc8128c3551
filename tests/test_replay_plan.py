"""The replay plan as the prelude holds it (by columns, its FIFO per key built at the first miss): what it
serves does not depend on how it is held, nor on what a script does to the intrinsics it could reach."""

from __future__ import annotations

import pytest

from jupyter_sandbox import ActionInterrupt, SandboxInterrupt

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)


@pytest.fixture
def sb(new_sandbox):
    sandbox = new_sandbox()

    @sandbox.action
    def lookup(x):
        raise AssertionError("recorded: must not run")

    @sandbox.action
    def echo(x):
        return x

    @sandbox.action
    def gate(x, resume=None):
        if resume is None:
            raise ActionInterrupt(data=x)
        return resume.value

    yield sandbox
    sandbox.close()


SERVED_BY_KEY = (
    "const x = await actions.lookup('a'); const y = await actions.lookup('a'); return [x, y, await actions.lookup('b')]"
)


def test_entries_of_one_key_served_away_from_their_slots_are_served_in_slot_order(sb):
    # Slot 0 holds another key, so both calls of lookup('a') miss their slots and are served from the
    # FIFO of their key: by slot (the first call gets slot 1's result), not in the order they completed.
    call_log = [
        {"type": "action", "name": "lookup", "input": "b", "response": "B", "order": 2},
        {"type": "action", "name": "lookup", "input": "a", "response": "first", "order": 1},
        {"type": "action", "name": "lookup", "input": "a", "response": "second", "order": 0},
    ]
    source = SERVED_BY_KEY
    assert sb.eval(source, call_log=call_log).output == ["first", "second", "B"]


HOSTILE = """
const TA = Object.getPrototypeOf(Int32Array.prototype);
Object.defineProperty(TA, "length", { get() { return 0; }, configurable: true });
Object.defineProperty(Array.prototype, "0", { set(v) { throw new Error("setter ran"); }, configurable: true });
Array.from = () => { throw new Error("Array.from ran"); };
Int32Array.from = () => { throw new Error("Int32Array.from ran"); };
"""


@pytest.mark.parametrize("hostile", [True, False])
def test_a_script_that_breaks_typed_arrays_and_array_setters_replays_as_it_ran(sb, hostile):
    prefix = HOSTILE if hostile else ""
    source = (
        prefix
        + """
    const [a, b] = await Promise.all([actions.echo('p'), actions.echo('q')]);
    const c = await actions.echo(a + b);
    return [a, b, c, await actions.gate(c)];
    """
    )
    with pytest.raises(SandboxInterrupt) as paused:
        sb.eval(source)
    result = sb.resume(paused.value.run_id, "ok")
    assert result.output == ["p", "q", "pq", "ok"]
    assert result.replayed == 3


@pytest.mark.parametrize("hostile", [True, False])
def test_a_script_that_breaks_them_is_served_by_key_as_any_other(sb, hostile):
    # The FIFO per key is built at the first miss: while the script runs, after the damage.
    call_log = [
        {"type": "action", "name": "lookup", "input": "b", "response": "B", "order": 2},
        {"type": "action", "name": "lookup", "input": "a", "response": "first", "order": 1},
        {"type": "action", "name": "lookup", "input": "a", "response": "second", "order": 0},
    ]
    source = (HOSTILE if hostile else "") + SERVED_BY_KEY
    assert sb.eval(source, call_log=call_log).output == ["first", "second", "B"]
