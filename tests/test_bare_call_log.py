"""A run started from a bare call log owns what it replayed: nothing recorded there runs twice later.

The defect this guards against: the effects served from a bare call
log were not journaled in the new run, so resuming that run by its id ran them again.
"""

from __future__ import annotations

import json

import pytest

from jupyter_sandbox import Resume, Sandbox, SandboxInterrupt

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)

SOURCE = """
const a = await actions.lookup('p');
const t = Date.now();
await ctx.sleep(5);
const b = await actions.lookup('q');
const first = await actions.gate(a + b);
const second = await actions.gate('again');
return [a, b, t, first, second];
"""

SEED_LOG = [
    {"type": "action", "name": "lookup", "input": "p", "response": "P"},
    {"type": "now", "response": 1_700_000_000_123},
    {"type": "sleep", "input": 5, "response": None},
    {"type": "action", "name": "lookup", "input": "q", "response": "Q"},
    None,  # the interrupted gate: answered by the Resume
]


@pytest.fixture
def world():
    sb = Sandbox()
    calls: list = []

    @sb.action
    def lookup(x):
        calls.append(("lookup", x))
        return x.upper()

    @sb.action
    def gate(x, resume=None):
        if resume is None:
            from jupyter_sandbox import ActionInterrupt

            raise ActionInterrupt(data={"asks": x})
        calls.append(("gate", x, resume.value))
        return resume.value

    sb.calls = calls
    yield sb
    sb.close()


def _start(sb):
    with pytest.raises(SandboxInterrupt) as info:  # the second gate pauses the run it started
        sb.eval(SOURCE, call_log=SEED_LOG, resume=Resume(position=4, value="yes"))
    return info.value


def test_the_effects_a_bare_call_log_served_are_in_the_new_runs_journal(world):
    paused = _start(world)
    log = world.call_log(paused.run_id)
    assert [None if e is None else e["type"] for e in log[:5]] == ["action", "now", "sleep", "action", "action"]
    assert log[0]["response"] == "P" and log[1]["response"] == 1_700_000_000_123 and log[3]["response"] == "Q"


def test_resuming_by_run_id_runs_nothing_the_call_log_recorded(world):
    paused = _start(world)
    assert world.calls == [("gate", "PQ", "yes")]  # the recorded lookups were served, not run
    result = world.resume(paused.run_id, "ok")
    assert result.output == ["P", "Q", 1_700_000_000_123, "yes", "ok"]
    assert world.calls == [("gate", "PQ", "yes"), ("gate", "again", "ok")]


def test_a_run_started_from_a_bare_call_log_checks_deterministic(world):
    paused = _start(world)
    world.resume(paused.run_id, "ok")
    report = world.check(paused.run_id)
    assert report.deterministic and report.checked == report.recorded > 0


LOOP = "for (let i = 0; i < ctx.input; i++) { await actions.lookup(String(i)) } return await actions.gate('end')"


def _counting_deliveries(monkeypatch) -> list[int]:
    from jupyter_sandbox.engine.realm import Realm

    crossings = [0]
    deliver = Realm.deliver

    def counted(self, now):
        crossings[0] += 1
        return deliver(self, now)

    monkeypatch.setattr(Realm, "deliver", counted)
    return crossings


def test_a_bare_call_log_is_served_with_one_crossing_per_entry(world, monkeypatch):
    n = 60
    log = [{"type": "action", "name": "lookup", "input": str(i), "response": i} for i in range(n)] + [None]
    crossings = _counting_deliveries(monkeypatch)
    with pytest.raises(SandboxInterrupt):  # the gate pauses the run it started
        world.eval(LOOP, input=n, call_log=log)
    # one per served entry, and the few that hand over what the script asked for: not a second per entry
    # to hand over what was served (it goes to the host in one batch)
    assert n <= crossings[0] <= n + 3
    assert world.calls == []


def test_the_entries_a_bare_call_log_served_are_journaled_before_the_live_call_after_them(world):
    n = 30
    log = [{"type": "action", "name": "lookup", "input": str(i), "response": i} for i in range(n)] + [None]
    with pytest.raises(SandboxInterrupt) as info:
        world.eval(LOOP, input=n, call_log=log)
    journaled = world.call_log(info.value.run_id)
    assert [e["response"] for e in journaled[:n]] == list(range(n))
    assert [e["order"] for e in journaled[:n]] == list(range(n))
    assert journaled[n] is None  # the gate, interrupted: its call journaled after every served entry
    result = world.resume(info.value.run_id, "done")
    assert result.output == "done" and result.replayed == n and world.calls == [("gate", "end", "done")]


def test_a_value_that_is_not_json_deep_in_a_long_call_log_is_named_at_its_position(world):
    log: list = [{"type": "action", "name": "lookup", "input": str(i), "response": i} for i in range(40)]
    log[27]["response"] = {"bad": float("nan")}
    with pytest.raises(Exception) as info:
        world.eval(LOOP, input=40, call_log=log)
    assert "call_log[27]" in str(info.value) and getattr(info.value, "position", None) == 27


def test_large_values_a_bare_call_log_served_never_cross_back_to_the_host(world, monkeypatch):
    n, big = 12, "x" * 400_000  # 4.8 MB served in all: the host journals them from the plan it handed over
    log = [{"type": "action", "name": "lookup", "input": str(i), "response": big + str(i)} for i in range(n)] + [None]
    crossings = _counting_deliveries(monkeypatch)
    sizes: list[int] = []
    from jupyter_sandbox.engine.realm import Realm

    requests = Realm._requests

    def measured(self, text):
        sizes.append(len(text))
        return requests(self, text)

    monkeypatch.setattr(Realm, "_requests", measured)
    with pytest.raises(SandboxInterrupt) as info:
        world.eval(LOOP, input=n, call_log=log)
    assert crossings[0] <= n + 3
    assert max(sizes) < len(big)  # what the realm hands back names what it served, not its value
    journaled = world.call_log(info.value.run_id)
    assert [e["response"] for e in journaled[:n]] == [big + str(i) for i in range(n)]


def test_a_call_log_of_a_wait_with_a_timeout_resumes_from_the_call_log_alone():
    # The timeout is part of the wait's content key: a call log that left it out could not be replayed alone
    from jupyter_sandbox import ActionInterrupt, RunParked

    sb = Sandbox()

    @sb.action
    def gate(x, resume=None):
        if resume is None:
            raise ActionInterrupt(data=x)
        return [x, resume.value]

    source = "const e = await ctx.waitForEvent({type: 'go'}, {timeout: 60000}); return await actions.gate(e.n)"
    with pytest.raises(RunParked) as parked:
        sb.eval(source)
    with pytest.raises(SandboxInterrupt) as paused:
        sb.signal(parked.value.run_id, {"type": "go", "n": 7})
    bare = json.loads(json.dumps(list(paused.value.call_log)))
    assert bare[0]["timeout"] == 60000
    assert sb.eval(source, call_log=bare, resume=Resume(position=1, value="yes")).output == [7, "yes"]
    sb.close()
