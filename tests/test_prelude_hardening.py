"""Prototype pollution cannot change what the host records or replays.

The prelude reads only own properties of null-prototype records it made, and
uses intrinsics captured before the script ran. Each test pollutes the realm
first, then runs the same body of effects (every kind) up to an approval and
resumes it: the body must see exactly what it sees in a clean realm, live and
replayed. The body itself touches nothing the pollutions replace (it captured
what it uses), so any difference is the host's.
"""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionInterrupt, ManualClock, RunParked, Sandbox, SandboxInterrupt

CAPTURE = r"""
const J = JSON.stringify, keysOf = Object.keys, isArr = Array.isArray, protoOf = Object.getPrototypeOf;
const OP = Object.prototype, is = Object.is, def = Object.defineProperty;
const thenOf = Function.prototype.call.bind(Promise.prototype.then);
const race = (a, b) => new Promise((res, rej) => { thenOf(a, res, rej); thenOf(b, res, rej); });
const describe = (v) => {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  if (typeof v === "number") return is(v, -0) ? "-0" : "number";
  if (typeof v !== "object") return typeof v + ":" + J(v);
  let out = isArr(v) ? "[" : protoOf(v) === OP ? "{" : "{!proto ";
  const keys = keysOf(v);
  for (let i = 0; i < keys.length; i++) out += (i ? "," : "") + J(keys[i]) + ":" + describe(v[keys[i]]);
  return out + (isArr(v) ? "]" : "}");
};
const seen = [];
const saw = (v) => {
  def(seen, seen.length, {__proto__: null, value: describe(v), writable: true, enumerable: true, configurable: true});
};
"""

BODY = r"""
saw(await actions.give(1));
try { await actions.fail(1); } catch (e) { saw([e.name, e.message, e.action]); }
saw(await ctx.sleep(5));
saw(await ctx.sleep(60000));
saw(await ctx.waitForEvent({kind: "never"}, {timeout: 5}));
saw(await ctx.now());
saw(Date.now());
saw(Math.random() < 1);
saw(await ctx.parallel([() => actions.give(2), () => ctx.sleep(1), () => ctx.now()]));
const settled = await ctx.parallelSettled([() => actions.fail(2), () => actions.give(3)]);
saw([settled[0].status, settled[0].reason.name, settled[1].status, settled[1].value]);
saw(await ctx.step("outer", () => ctx.step("inner", () => actions.give(4))));
saw(await ctx.delegate({script: "return [5, null]", name: "kid"}));
saw(await ctx.agent({agent: "echo", input: {x: 6}, name: "agent"}));
saw(await race(actions.give(7), ctx.sleep(600000)));
await actions.seen(seen);
await actions.gate(1);
return seen;
"""

# Every field name of a record the host makes or parses (plan records, settlements,
# error records, FIFO tables, console lines), and the names of what a result carries.
FIELDS = [
    "s",
    "k",
    "v",
    "e",
    "ok",
    "sync",
    "used",
    "done",
    "res",
    "rej",
    "name",
    "kin",
    "op",
    "input",
    "timeout",
    "recs",
    "next",
    "notes",
    "frontier",
    "value",
    "error",
    "action",
    "message",
    "issues",
    "status",
    "reason",
    "level",
    "stack",
    "key",
    "t",
    "event",
    "plan",
    "actions",
    "description",
]

POLLUTIONS = {
    "record fields as data on Object.prototype": "for (const k of FIELDS) OP[k] = {message: 'forged', ok: true};",
    "record fields as throwing getters": (
        "for (const k of FIELDS) Object.defineProperty(OP, k, {get() { throw new Error('polluted ' + k) }, "
        "set(v) {}, configurable: true, __proto__: null});"
    ),
    "record fields as forging getters": (
        "for (const k of FIELDS) Object.defineProperty(OP, k, {get() { return k === 'ok' ? false : 'forged' }, "
        "set(v) {}, configurable: true, __proto__: null});"
    ),
    "Array species": "Object.defineProperty(Array, Symbol.species, {get() { throw new Error('species') }});",
    "Array constructor's species": "Array.prototype.constructor = {[Symbol.species]: function () { return {} }};",
    "Array methods": (
        "for (const m of ['map', 'lastIndexOf', 'indexOf', 'push', 'join', 'sort', 'slice', "
        "'forEach', 'filter', 'concat', Symbol.iterator]) Array.prototype[m] = () => "
        "{ throw new Error('polluted ' + String(m)) };"
    ),
    "Array index setters": (
        "for (let i = 0; i < 8; i++) Object.defineProperty(Array.prototype, i, "
        "{set(v) { throw new Error('index ' + i) }, configurable: true, __proto__: null});"
    ),
    "Promise.prototype.then": (
        "const then0 = Promise.prototype.then; Promise.prototype.then = function (f, r) { "
        "return then0.call(this, (v) => f && f('forged'), r) };"
    ),
    "Promise species and constructor": (
        "try { Object.defineProperty(Promise, Symbol.species, {get() { throw new Error('species') }}) } catch (e) {} "
        "Promise.prototype.constructor = {[Symbol.species]: function () { throw new Error('ctor') }};"
    ),
    "Promise statics": (
        "Promise.all = () => Promise.resolve(['forged']); Promise.allSettled = Promise.all; "
        "Promise.resolve = () => { throw new Error('resolve') }; "
        "Promise.reject = () => { throw new Error('reject') }; Promise.race = Promise.all;"
    ),
    "JSON": "JSON.stringify = () => '\"forged\"'; JSON.parse = () => ({forged: true});",
    "Object statics": (
        "Object.keys = () => ['forged']; Object.defineProperty = () => { throw new Error('dp') }; "
        "Object.create = () => ({}); Object.freeze = (o) => o; Array.isArray = () => false;"
    ),
    "String and RegExp methods": (
        "String.prototype.slice = () => 'forged'; String.prototype.split = () => []; "
        "String.prototype.toLowerCase = () => ''; RegExp.prototype.exec = () => null; "
        "String.prototype.toWellFormed = () => 'forged';"
    ),
    "Function.prototype.call, apply, bind": (
        "Function.prototype.call = () => 'forged'; Function.prototype.apply = () => 'forged'; "
        "Function.prototype.bind = () => () => 'forged';"
    ),
    "Error hasInstance and name": (
        "Object.defineProperty(Error, Symbol.hasInstance, {value: () => true}); Error.prototype.name = 'Forged';"
    ),
    "Reflect": "Reflect.get = () => 'forged'; Reflect.apply = () => 'forged';",
}


def world(store, clock) -> Sandbox:
    sb = Sandbox(store, clock=clock)
    sb.seen = []

    @sb.action
    def give(x):
        return {"gave": x}

    @sb.action
    def fail(x):
        raise ValueError(f"no {x}")

    @sb.action
    def seen(value):
        sb.seen.append(value)

    @sb.action(approval=True)
    def gate(_):
        return True

    def echo(value):
        return value

    sb.agent(echo)
    return sb


def run_through_the_approval(tmp_path, pollution: str) -> tuple[list, list]:
    """Run CAPTURE + pollution + BODY live to the approval, resume it in a fresh Sandbox; (live seen, output)."""
    store, clock = tmp_path / "runs.sqlite", ManualClock(start=1_700_000_000_000)
    source = f"const FIELDS = {FIELDS!r};\n" + CAPTURE + pollution + "\n" + BODY
    first = world(store, clock)
    try:
        run_id = None
        for _ in range(5):
            try:
                first.eval(source) if run_id is None else first.resume(run_id)
                raise AssertionError("the body finished without asking for its approval")
            except RunParked as parked:  # the 60 s sleep parks the run: move the clock on and wake it
                run_id = parked.run_id
                clock.advance(600_001)
            except SandboxInterrupt as it:
                run_id = it.run_id
                break
        live = first.seen
    finally:
        first.close()
    second = world(store, clock)
    try:
        output = second.resume(run_id, True).output
        assert second.seen == []  # everything before the approval was replayed, not run again
    finally:
        second.close()
    return live, output


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    live, output = run_through_the_approval(tmp_path_factory.mktemp("clean"), "")
    assert live == [output]
    return output


def test_the_clean_body_sees_every_effect_kind(clean):
    assert clean[0] == '{"gave":number}'
    assert clean[1] == '["0":string:"ActionError","1":string:"ValueError: no 1","2":string:"fail"]'
    assert clean[2:5] == ["null", "null", "null"]
    assert clean[-1] == '{"gave":number}'


@pytest.mark.parametrize("pollution", list(POLLUTIONS.values()), ids=list(POLLUTIONS))
def test_a_polluted_realm_records_and_replays_what_a_clean_one_does(tmp_path, clean, pollution):
    live, output = run_through_the_approval(tmp_path, pollution)
    assert live == [clean]
    assert output == clean


SCRIPT_NAMES = st.from_regex(r"[a-z][a-zA-Z0-9_]{0,7}", fullmatch=True).filter(
    lambda n: n not in ("then", "constructor", "toString", "valueOf", "toJSON", "length", "prototype")
)
FORGED = st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.just({"message": "forged"})


@settings(max_examples=scaled(30))
@given(names=st.lists(st.sampled_from(FIELDS) | SCRIPT_NAMES, min_size=1, max_size=6, unique=True), forged=FORGED)
def test_for_any_names_and_value_put_on_object_prototype_replay_is_unchanged(tmp_path_factory, clean, names, forged):
    import json

    pollution = f"for (const k of {json.dumps(names)}) OP[k] = {json.dumps(forged)};"
    live, output = run_through_the_approval(tmp_path_factory.mktemp("polluted"), pollution)
    assert live == [clean]
    assert output == clean


def test_a_step_nests_under_its_parent_with_array_methods_replaced(sb):
    result = sb.eval(
        "Array.prototype.lastIndexOf = () => -1;\n"
        "await ctx.step('a', () => ctx.step('b', async () => 1)); await ctx.step('c', async () => 2)"
    )
    steps = [(e["label"], e["phase"], e["parent"]) for e in sb.run(result.run_id).entries if e["kind"] == "step"]
    assert steps == [
        ("a", "start", None),
        ("b", "start", 1),
        ("b", "end", 1),
        ("a", "end", None),
        ("c", "start", None),
        ("c", "end", None),
    ]


def test_promise_species_cannot_be_redefined_and_says_so(sb):
    with pytest.raises(Exception) as info:
        sb.eval("Object.defineProperty(Promise, Symbol.species, {get() { return Object }})")
    assert "not configurable" in str(info.value)


def test_action_error_is_frozen_so_the_host_always_builds_its_own(sb):
    @sb.action
    def fail(_):
        raise ValueError("x")

    result = sb.eval(
        "try { Object.setPrototypeOf(ActionError, function () { return {forged: true} }) } catch (e) {}\n"
        "try { await actions.fail(1) } catch (e) { return [e instanceof ActionError, e.name] }"
    )
    assert result.output == [True, "ActionError"]


def test_an_interrupt_resumes_with_object_prototype_polluted_before_it(tmp_path):
    sb = Sandbox(tmp_path / "runs.sqlite")

    def ask(value, resume=None):
        if resume is None:
            raise ActionInterrupt(data=value)
        return resume.value

    def plain(value):
        return value

    sb.action(ask)
    sb.action(plain)
    source = (
        "Object.prototype.e = {message: 'forged'}; Object.prototype.ok = false;\n"
        "const a = await actions.plain(1);\nreturn [a, await actions.ask(2)]"
    )
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source)
    assert sb.resume(info.value.run_id, "yes").output == [1, "yes"]
    sb.close()
