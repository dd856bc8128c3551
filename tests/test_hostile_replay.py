"""A hostile script cannot change what the host records or replays.

Two ways of attacking it, one concern. **Adversaries**: scripts written against the engine, one test per
defect they found; each replay test runs a script live up to an approval and resumes it, the script handing
what it saw to an action (``actions.ident``, recorded; its input is part of the replay key) before the
approval, so anything the script can observe that differs between the live attempt and the replay fails the
resume instead of passing unnoticed. **Pollution**: the prelude reads only own properties of null-prototype
records it made, and uses intrinsics captured before the script ran; each test pollutes the realm first,
then runs the same body of effects (every kind) up to an approval and resumes it: the body must see exactly
what it sees in a clean realm, live and replayed (the body touches nothing the pollutions replace, so any
difference is the host's).

Scripts that try to leave the realm are ``test_escapes.py``'s concern; bad values and inputs,
``test_bad_input.py``'s; what a script can reach at all, ``test_realm_audit.py``'s.
"""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import (
    ActionInterrupt,
    CallLogMismatchError,
    LimitExceeded,
    Limits,
    ManualClock,
    RunParked,
    Sandbox,
    SandboxInterrupt,
)

# =====================================================================================================
# adversaries: one test per defect found
# =====================================================================================================


@pytest.fixture
def gated():
    sb = Sandbox(limits=Limits(memory_bytes=16 * 1024 * 1024))

    @sb.action
    def gate(x, resume=None):
        if resume is None:
            raise ActionInterrupt(data={"saw": x})
        return resume.value

    @sb.action
    def ident(x):
        return x

    @sb.action
    def fail(_):
        raise ValueError("bad")

    yield sb
    sb.close()


def resumed_output(sb, source):
    """Run ``source``, which ends ``await actions.ident(X); await actions.gate(0); return X``, up to its
    approval; resume it; return (what ident was given live, the output replayed)."""
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source)
    live = [e for e in info.value.call_log if e is not None and e.get("name") == "ident"][-1]["input"]
    return live, sb.resume(info.value.run_id, "ok").output


# -- replay gives the script what the live attempt gave it ------------------------------


def test_an_action_errors_stack_is_the_same_live_and_replayed(gated):
    # Live, the ActionError was built under the host's `settle`; replayed, under `deliver`.
    source = (
        "const e = await actions.fail(1).catch((e) => e); const s = String(e.stack);"
        " await actions.ident(s); await actions.gate(0); return s"
    )
    live, output = resumed_output(gated, source)
    assert output == live


def test_an_action_errors_stack_shows_none_of_the_hosts_frames(gated):
    source = "const e = await actions.fail(1).catch((e) => e); await actions.gate(String(e.stack)); return 1"
    with pytest.raises(SandboxInterrupt) as info:
        gated.eval(source)
    assert "settle" not in info.value.interrupt.data["saw"]


def test_a_script_getter_on_error_stack_runs_the_same_live_and_replayed(gated):
    # The host read a new Error's stack (for the call's line) on live calls only, through
    # the script's accessor: the script could count the reads, or read Math.random() in them.
    source = """
        let reads = 0;
        const d = Object.getOwnPropertyDescriptor(Error.prototype, "stack");
        Object.defineProperty(Error.prototype, "stack",
          { get() { reads++; return d.get.call(this); }, set: d.set, configurable: true });
        await actions.ident(1);
        const seen = reads;
        await actions.ident(seen);
        await actions.gate(0);
        return seen;
    """
    live, output = resumed_output(gated, source)
    assert output == live == 0


def test_a_progress_patch_is_read_the_same_live_and_replayed(gated):
    # ctx.progress skipped reading its patch while replaying: its getters ran live only.
    source = """
        let reads = 0;
        await actions.ident(1);
        ctx.progress({ get done() { reads++; return 1; } });
        await actions.ident(reads);
        await actions.gate(0);
        return reads;
    """
    live, output = resumed_output(gated, source)
    assert output == live == 1


def test_a_progress_patch_reading_the_clock_replays(gated):
    source = """
        await actions.ident(1);
        ctx.progress({ get at() { return Math.random(); } });
        await actions.ident(1);
        await actions.gate(0);
        return 1;
    """
    assert resumed_output(gated, source) == (1, 1)


# -- resource errors while the host turns a value into text ------------------------------

REC = "function rec() { return rec() + 1; }\n"


@pytest.mark.parametrize(
    "source",
    [
        "ctx.log('info', { toString() { return rec(); } });",
        "await ctx.step({ toString() { return rec(); } }, () => 1);",
        "await actions.ident(1, { description: { toString() { return rec(); } } });",
        "await ctx.call({ toString() { return rec(); } }, 1).catch(() => 0);",
        "const e = new Error('m');"
        " Object.defineProperty(e, 'name', { get() { return { toString: rec }; } }); return e;",
    ],
    ids=["log message", "step label", "call description", "unknown action name", "error name crossing out"],
)
def test_a_stack_overflow_while_the_host_prints_a_value_is_the_stack_limit(gated, source):
    with pytest.raises(LimitExceeded) as info:
        gated.eval(REC + "try { " + source + " } catch (e) {} return 'went on';")
    assert info.value.limit == "stack"


def test_memory_exhausted_while_the_host_prints_a_value_is_the_memory_limit(gated):
    source = (
        "function mem() { let a = ['x']; for (;;) a = a.concat(a, a); }\n"
        "try { ctx.log('info', { toString() { return mem(); } }); } catch (e) {} return 'went on';"
    )
    with pytest.raises(LimitExceeded) as info:
        gated.eval(source)
    assert info.value.limit == "memory"


# -- an answer applies to the call it was given for --------------------------------------


def test_an_answer_is_not_applied_to_an_interrupted_call_whose_input_changed(gated):
    # Resumed with an edited source, the approved call now asks for something else: the
    # human approved {"amount": 1}; running it with {"amount": 1000} must be refused.
    calls = []

    @gated.action
    def pay(order, resume=None):
        calls.append(order)
        if resume is None:
            raise ActionInterrupt(data=order)
        return "paid"

    source = "return await actions.pay({amount: 1})"
    with pytest.raises(SandboxInterrupt) as info:
        gated.eval(source)
    with pytest.raises(CallLogMismatchError) as mismatch:
        gated.resume(info.value.run_id, True, source=source.replace("1}", "1000}"))
    assert mismatch.value.recorded["input"] == {"amount": 1}
    assert mismatch.value.attempted["input"] == {"amount": 1000}
    assert calls == [{"amount": 1}]


# -- events ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [{"k": True}, {"k": [True]}, {"k": {"n": False}}],
    ids=["true for 1", "[true] for [1]", "false for 0, nested"],
)
def test_an_event_matches_a_wait_only_with_the_values_the_script_asked_for(gated, event):
    # Python's True == 1 let {k: true} satisfy a wait for {k: 1}; in the script they differ.
    from jupyter_sandbox import RunParked

    wanted = {"k": 1} if event["k"] is True else {"k": [1]} if isinstance(event["k"], list) else {"k": {"n": 0}}
    source = f"return await ctx.waitForEvent({wanted!r}, {{timeout: 1e9}})".replace("'", '"')
    with pytest.raises(RunParked) as info:
        gated.eval(source)
    with pytest.raises(RunParked):  # not delivered: the run parks on the same wait again
        gated.signal(info.value.run_id, event)
    assert gated.signal(info.value.run_id, wanted).output == wanted


# -- known open: out of memory is catchable in the script's own code --------------------


@pytest.mark.xfail(
    strict=True,
    reason="quickjs-ng throws a catchable InternalError when an allocation in the "
    "script's own code fails, and the realm has no hook to learn of it afterwards; a resumed realm "
    "holds the replay plan, so a script that catches it sees less memory replayed than live",
)
def test_out_of_memory_caught_by_the_script_is_still_the_memory_limit():
    sb = Sandbox(limits=Limits(memory_bytes=16 * 1024 * 1024))
    try:
        with pytest.raises(LimitExceeded) as info:
            sb.eval(
                "let n = 0; try { const a = []; for (;;) { a.push('x'.repeat(1e5) + n); n++; } } catch (e) {} return n"
            )
        assert info.value.limit == "memory"
    finally:
        sb.close()


# -- the intrinsic Date stays out of reach ----------------------------------------------


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_replacing_reflect_construct_does_not_hand_the_script_the_intrinsic_date(gated, strict):
    # Date's constructor called Reflect.construct(OrigDate, ...) through the global, which a
    # script may replace: its replacement got the intrinsic, whose construct reads the host clock.
    source = """
        let target = null;
        const construct = Reflect.construct;
        Reflect.construct = function (t, args, newTarget) { target = t; return construct(t, args, newTarget); };
        new Date(0);
        Reflect.construct = construct;
        return target === null || target === Date;
    """
    assert gated.eval(source, strict=strict).output is True


# -- check() ------------------------------------------------------------------------------


@pytest.mark.parametrize("read", ["Math.random()", "Date.now()"])
def test_a_check_reports_a_new_clock_or_random_read_as_attempted_not_recorded(gated, read):
    # The check journaled the edited script's live read, then counted it as recorded and said
    # "the journal recorded a random read but the script attempted nothing": the reverse.
    run_id = gated.eval("await actions.ident(1); return 1").run_id
    report = gated.check(run_id, f"await actions.ident(1); {read}; return 1")
    assert not report.deterministic
    assert report.recorded == 1
    assert report.mismatch.position == 1
    assert report.mismatch.recorded is None and report.mismatch.attempted["type"] == (
        "random" if "random" in read else "now"
    )


# -- ctx.parallelSettled has allSettled semantics ---------------------------------------


def test_a_thunk_that_throws_is_a_rejected_outcome_of_parallel_settled(gated):
    # It threw out of ctx.parallelSettled synchronously: no .catch could see it, the run failed,
    # and the thunks after it never started.
    source = """
        return await ctx.parallelSettled([() => { throw new TypeError("t"); }, () => actions.ident(1)]);
    """
    first, second = gated.eval(source).output
    assert first["status"] == "rejected" and first["reason"]["message"] == "t"
    assert second == {"status": "fulfilled", "value": 1}


def test_ctx_parallel_given_no_array_rejects_instead_of_throwing(gated):
    source = "const p = ctx.parallel(5); return await p.then(() => 'resolved', (e) => e.message)"
    assert gated.eval(source).output == "ctx.parallel takes an array of functions"


# -- a run started from a bare call log --------------------------------------------------


def test_a_failure_served_from_a_bare_call_log_is_journaled_as_it_was_served(gated):
    # The served failure was journaled through the global String, which the script replaced:
    # the run's own journal then held the script's text, and a resume by run id diverged.
    from jupyter_sandbox import Resume

    source = (
        "String = () => 'forged'; const m = await actions.fail(1).catch((e) => e.message);"
        " await actions.gate(m); return await actions.gate(m + '!')"
    )
    with pytest.raises(SandboxInterrupt) as first:
        gated.eval(source)
    with pytest.raises(SandboxInterrupt) as second:
        gated.eval(source, call_log=list(first.value.call_log), resume=Resume(position=1, value="ok"))
    assert gated.resume(second.value.run_id, "ok").output == "ok"


# =====================================================================================================
# pollution: a polluted realm records and replays what a clean one does
# =====================================================================================================

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
