"""A replayed effect gives the script exactly the value the live effect gave (docs/replay.md rule 1).

Every test here runs a script live up to an approval, then resumes it from a
fresh ``Sandbox`` on the same store: the resume replays everything before the
approval from the journal. The script journals what it saw (``actions.seen``'s
input is part of the replay key), so a replayed value that differs from the live
one in type or value, ``null`` vs ``undefined`` included, fails the resume with a
``CallLogMismatchError`` instead of passing unnoticed.
"""

from __future__ import annotations

import json

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionInterrupt, ManualClock, RunParked, Sandbox, SandboxInterrupt

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)

# A typed rendering of any JS value: -0, undefined, key order, own `__proto__` keys and
# prototypes all show, which JSON.stringify would hide.
DESCRIBE = r"""
const describe = (v) => {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  switch (typeof v) {
    case "number": return Object.is(v, -0) ? "-0" : "number:" + String(v);
    case "string": return "string:" + JSON.stringify(v);
    case "boolean": return "boolean:" + v;
    case "object": break;
    default: return typeof v;
  }
  if (Array.isArray(v)) return "[" + v.map(describe).join(",") + "]";
  const proto = Object.getPrototypeOf(v) === Object.prototype ? "" : "!proto ";
  const keys = Object.keys(v);
  let out = "{" + proto;
  for (let i = 0; i < keys.length; i++) out += (i ? "," : "") + JSON.stringify(keys[i]) + ":" + describe(v[keys[i]]);
  return out + "}";
};
"""


def world(store, clock) -> Sandbox:
    """A sandbox with the actions these scripts use; a new one per attempt, as after a kernel restart."""
    sb = Sandbox(store, clock=clock)
    sb.seen = []
    sb.given = None

    @sb.action
    def seen(value):
        sb.seen.append(value)
        return None

    @sb.action
    def give(_):
        return sb.given

    @sb.action
    def nothing(_):
        return None

    @sb.action
    def fail(x):
        raise ValueError(f"no {x}")

    @sb.action(approval=True)
    def gate(_):
        return "approved"

    def echo(value):
        return value

    sb.agent(echo)

    def asks(value, resume=None):
        if resume is None:
            raise ActionInterrupt(data=value)
        return resume.value

    sb.agent(asks)
    return sb


class Driver:
    """Runs a script to its end: advances the clock for parked timers, sends signals, approves gates."""

    def __init__(self, tmp_path):
        self.store = tmp_path / "runs.sqlite"
        self.clock = ManualClock(start=1_700_000_000_000)
        self.sandboxes: list[Sandbox] = []
        self.attempts = 0

    def sandbox(self, given=None) -> Sandbox:
        sb = world(self.store, self.clock)
        sb.given = given
        self.sandboxes.append(sb)
        return sb

    def run(self, source: str, signals=(), given=None):
        """The output; every sandbox's ``seen`` calls are in ``self.seen``."""
        signals = list(signals)
        pending = lambda: self.sandbox(given).eval(source)  # noqa: E731
        for _ in range(20):
            self.attempts += 1
            try:
                return pending().output
            except SandboxInterrupt as it:
                run_id = it.run_id
                pending = lambda run_id=run_id: self.sandbox(given).resume(run_id, True)  # noqa: E731
            except RunParked as parked:
                run_id = parked.run_id
                if parked.waiting and any("match" in w for w in parked.waiting) and signals:
                    event = signals.pop(0)
                    pending = lambda run_id=run_id, event=event: self.sandbox(given).signal(run_id, event)  # noqa: E731
                else:
                    self.clock.advance(max((parked.due or self.clock.now()) - self.clock.now(), 0) + 1)
                    pending = lambda run_id=run_id: self.sandbox(given).resume(run_id)  # noqa: E731
        raise AssertionError("the run did not finish")

    @property
    def seen(self) -> list:
        return [value for sb in self.sandboxes for value in sb.seen]

    def close(self):
        for sb in self.sandboxes:
            sb.close()


@pytest.fixture
def driver(tmp_path):
    d = Driver(tmp_path)
    yield d
    d.close()


def through_an_approval(effect: str) -> str:
    """A script that takes one effect's value, journals what it saw, pauses for approval, returns it."""
    return (
        DESCRIBE + f"const v = {effect};\nawait actions.seen(describe(v));\nawait actions.gate(1);\nreturn describe(v);"
    )


# Every kind of effect a script can await or read, with the value the script must see.
EFFECTS = {
    "result": ("await actions.give(1)", "number:7"),
    "result of None": ("await actions.nothing(1)", "null"),
    "failure": (
        "await actions.fail('x').catch((e) => [e.name, e.action, e.message])",
        '[string:"ActionError",string:"fail",string:"ValueError: no x"]',
    ),
    "fired, inline": ("await ctx.sleep(5)", "null"),
    "fired, parked": ("await ctx.sleep(60000)", "null"),
    "fired, minutes": ("await ctx.minutes(2)", "null"),
    "event": ("await ctx.waitForEvent({kind: 'go'})", '{"kind":string:"go","n":number:1}'),
    "event timeout, inline": ("await ctx.waitForEvent({kind: 'never'}, {timeout: 5})", "null"),
    "event timeout, parked": ("await ctx.waitForEvent({kind: 'never'}, {timeout: 60000})", "null"),
    "now": ("await ctx.now()", "number:1700000000000"),
    # The realm's clock runs on in real time from the last entry into JS: to the second, not the millisecond.
    "Date.now": ("Math.floor((Date.now() - 1700000000000) / 1000)", "number:0"),
    "random": ("Math.random()", None),  # None: whatever the live run saw, to the last digit
    "a timestamp string": ("new Date().toISOString().slice(0, 19)", 'string:"2023-11-14T22:13:20"'),
    "delegate": ("await ctx.delegate({script: 'return [1, null]'})", "[number:1,null]"),
    "delegate returning undefined": ("await ctx.delegate({script: 'return undefined'})", "null"),
    "delegate failing": (
        "await ctx.delegate({script: 'throw new Error(\"child broke\")'}).catch((e) => e.name)",
        'string:"ActionError"',
    ),
    "delegate that parks": ("await ctx.delegate({script: 'await ctx.sleep(60000); return null'})", "null"),
    "agent": ("await ctx.agent({agent: 'echo', input: {a: [true]}})", '{"a":[boolean:true]}'),
    "agent after its approval": ("await ctx.agent({agent: 'asks', input: 1})", "boolean:true"),
    "step": ("await ctx.step('s', async () => await ctx.sleep(1))", "null"),
    "nested steps": ("await ctx.step('a', () => ctx.step('b', () => actions.nothing(1)))", "null"),
    "parallel": (
        "await ctx.parallel([() => ctx.sleep(1), () => actions.nothing(1), () => ctx.now().then(Boolean)])",
        "[null,null,boolean:true]",
    ),
    "parallelSettled": (
        "(await ctx.parallelSettled([() => ctx.sleep(1), () => actions.fail(1)])).map((r) => r.status)",
        '[string:"fulfilled",string:"rejected"]',
    ),
    "race with an open timer": ("await Promise.race([actions.give(1), ctx.sleep(600000)])", "number:7"),
}


@pytest.mark.parametrize("effect, expected", list(EFFECTS.values()), ids=list(EFFECTS))
def test_a_replayed_effect_gives_the_script_the_value_the_live_effect_gave(driver, effect, expected):
    output = driver.run(through_an_approval(effect), signals=[{"kind": "go", "n": 1}], given=7)
    assert driver.seen == [output]  # journaled once, live; the resume replayed it without a mismatch
    if expected is not None:
        assert output == expected
    assert driver.attempts >= 2


def test_the_issues_sleep_then_approval_script_resumes(driver):
    source = "const slept = await ctx.sleep(5);\nawait actions.seen({step: 'waited', slept});\nawait actions.gate(1);"
    assert driver.run(source) is None
    assert driver.seen == [{"step": "waited", "slept": None}]


def test_a_sleep_replayed_from_a_bare_call_log_is_null_too(sb):
    @sb.action(approval=True)
    def gate(_):
        return 1

    source = "const v = await ctx.sleep(1); return [v === null, await actions.gate(v === null)]"
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source)
    from jupyter_sandbox import Resume

    bare = json.loads(json.dumps(list(info.value.call_log)))  # plain JSON: no run identity, the call log alone
    result = sb.eval(source, call_log=bare, resume=Resume(info.value.position, True))
    assert result.output == [True, 1]


# -- for all values: what an action returns or an event carries reaches the script the same way twice --------


def json_values():
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.just(-0.0)
        | st.text(max_size=8)
    )
    keys = st.text(max_size=6) | st.sampled_from(["__proto__", "constructor", "0", "10", "-1", "then"])
    return st.recursive(
        scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=12
    )


@settings(max_examples=scaled(60))
@given(value=json_values())
def test_for_any_json_result_the_replay_gives_the_script_the_live_value(tmp_path_factory, value):
    driver = Driver(tmp_path_factory.mktemp("values"))
    try:
        output = driver.run(through_an_approval("await actions.give(0)"), given=value)
        assert driver.seen == [output]
    finally:
        driver.close()


@settings(max_examples=scaled(25))
@given(value=json_values())
def test_for_any_json_event_the_replay_gives_the_script_the_live_value(tmp_path_factory, value):
    driver = Driver(tmp_path_factory.mktemp("events"))
    try:
        output = driver.run(through_an_approval("await ctx.waitForEvent()"), signals=[value])
        assert driver.seen == [output]
    finally:
        driver.close()


# -- class 13: JS Error values crossing out ----------------------------------------------------------------

ERRORS_OUT = {
    "a returned Error": ("new TypeError('bad')", {"name": "TypeError", "message": "bad"}),
    "a parallelSettled reason": (
        "(await ctx.parallelSettled([() => Promise.reject(new RangeError('r'))]))[0]",
        {"status": "rejected", "reason": {"name": "RangeError", "message": "r"}},
    ),
    "an ActionError": (
        "await actions.fail(1).catch((e) => e)",
        {"name": "ActionError", "message": "ValueError: no 1", "action": "fail"},
    ),
    "a child's failure": (
        "await ctx.delegate({script: 'throw new Error(1)', name: 'kid'}).catch((e) => e)",
        {"name": "ActionError", "action": "kid"},
    ),
    "an Error subclass with fields": (
        "(() => { class Oops extends Error { constructor() { super('o'); this.name = 'Oops'; this.code = 42 } }\n"
        "return {e: new Oops()} })()",
        {"e": {"name": "Oops", "message": "o", "code": 42}},
    ),
    "an Error passed to an action": ("await actions.give(new Error('in')).then(() => 'passed')", "passed"),
}


def without_stack(value):
    if isinstance(value, dict):
        return {k: without_stack(v) for k, v in value.items() if k != "stack"}
    return value


@pytest.mark.parametrize("expr, expected", list(ERRORS_OUT.values()), ids=list(ERRORS_OUT))
def test_an_error_crossing_out_is_carried_as_name_and_message_the_same_live_and_on_replay(driver, expr, expected):
    # The same expression on the same line: once in a run that never pauses, once replayed after an
    # approval; each run journals the value it saw, so a replay giving another one is a mismatch.
    live = driver.run(f"const r = {expr};\nawait actions.seen(r);\nawait actions.nothing(1);\nreturn r;")
    replayed = driver.run(f"const r = {expr};\nawait actions.seen(r);\nawait actions.gate(1);\nreturn r;")
    assert driver.seen == [live, replayed]
    shape = without_stack(live)
    if isinstance(expected, dict) and "message" not in expected:  # a child's message names its own run id
        shape = {k: v for k, v in shape.items() if k in expected}
    assert shape == expected
    if "delegate" not in expr:
        assert replayed == live  # stacks included


def test_an_errors_stack_crosses_out_as_the_scripts_own_frames(driver):
    output = driver.run("await actions.gate(1);\nfunction boom() { return new Error('x') }\nreturn boom()")
    assert output["stack"].startswith("    at boom (workflow.js:2:")
    assert "<input>" not in output["stack"] and "prelude" not in output["stack"]


def test_an_error_thrown_by_the_host_has_no_host_frames_in_its_stack(driver):
    output = driver.run("return await ctx.sleep(-1).catch((e) => e)")
    assert output["name"] == "TypeError"
    assert "<input>" not in output.get("stack", "")


def test_an_error_in_data_is_carried_in_the_snapshot(sb):
    result = sb.eval("data.last = new Error('kept'); return 1")
    assert without_stack(result.data) == {"last": {"name": "Error", "message": "kept"}}


def test_an_error_inside_console_arguments_is_shown_as_name_and_message(sb):
    result = sb.eval("console.log('got', {e: new TypeError('t')}, new Error('top')); return 1")
    message = result.console[0]["message"]
    assert message.startswith('got {"e":{"name":"TypeError","message":"t"')
    assert message.endswith("Error: top")


def test_an_error_in_a_log_line_and_the_plan_is_carried(sb):
    result = sb.eval("ctx.log('warn', 'saw', {e: new Error('l')}); return 1")
    entry = [e for e in sb.run(result.run_id).entries if e["kind"] == "log"][0]
    assert without_stack(entry["data"]) == {"e": {"name": "Error", "message": "l"}}


@settings(max_examples=scaled(30))
@given(
    name=st.text(max_size=8),
    message=st.text(max_size=12),
    fields=st.dictionaries(
        st.text(min_size=1, max_size=5).filter(lambda k: k not in ("name", "message", "stack")),
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
        max_size=3,
    ),
)
def test_for_any_error_the_record_it_crosses_out_as_is_the_same_live_and_replayed(
    tmp_path_factory, name, message, fields
):
    driver = Driver(tmp_path_factory.mktemp("errors"))
    body = (
        "const e = new Error(ctx.input.message); e.name = ctx.input.name;\n"
        "for (const k of Object.keys(ctx.input.fields)) Object.defineProperty(e, k, "
        "{value: ctx.input.fields[k], enumerable: true});\n"
    )
    try:
        sb = driver.sandbox()
        live = sb.eval(
            body + "await actions.nothing(1);\nreturn e;", input={"name": name, "message": message, "fields": fields}
        ).output
        with pytest.raises(SandboxInterrupt) as info:
            sb.eval(
                body + "await actions.gate(1);\nreturn e;", input={"name": name, "message": message, "fields": fields}
            )
        replayed = driver.sandbox().resume(info.value.run_id, True).output
    finally:
        driver.close()
    assert without_stack(live) == {**fields, "name": name, "message": message}
    assert replayed == live  # the stack too: the same frames on the same lines
    assert live["stack"].startswith("    at <anonymous> (workflow.js:1:")
