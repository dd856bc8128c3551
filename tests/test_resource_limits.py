"""Resource errors are the LimitExceeded they are, wherever they happen.

The host reads values the script hands it (action inputs, ``ctx.log`` data,
return values, thrown errors, console arguments) with its own code, and a
getter on such a value runs the script's code inside the host's. A getter that
exhausts the stack or the memory there is the ``stack`` or ``memory`` limit,
never a ``TypeError`` about the value, and catching it does not let the run go
on. A flood of console lines is the ``console`` limit (lines and bytes, both in
``Limits``), and Python's memory stays bounded while it happens.
"""

from __future__ import annotations

import tracemalloc

import pytest

from jupyter_sandbox import LimitExceeded, Limits, Sandbox, SandboxInterrupt
from jupyter_sandbox.actions import ActionInterrupt

DEEP = "function deep() { return deep() + 1 }\n"
GREEDY = "function greedy() { const a = []; for (;;) a.push('x'.repeat(1 << 20) + a.length) }\n"
GETTERS = {"stack": "{get x() { return deep() }}", "memory": "{get x() { return greedy() }}"}

# Every place the host reads a script's value: `V` is the value with the bad getter.
SITES = {
    "action input": "await actions.echo(V);",
    "ctx.call input": "await ctx.call('echo', V);",
    "ctx.log data": "ctx.log('info', 'message', V);",
    "ctx.plan": "ctx.plan([V]);",
    "waitForEvent match": "await ctx.waitForEvent(V, {timeout: 1});",
    "continueAsNew state": "await ctx.continueAsNew(V);",
    "console argument": "console.log(V);",
    "console Error argument": "const e = new Error('x');"
    "Object.defineProperty(e, 'message', Object.getOwnPropertyDescriptor(V, 'x'));"
    "console.log(e);",
    "console function argument": "const f = () => 0; f.toString = Object.getOwnPropertyDescriptor(V, 'x').get;"
    "console.log(f);",
    "return value": "return V;",
    "thrown error's message": "const e = new Error('x');"
    "Object.defineProperty(e, 'message', Object.getOwnPropertyDescriptor(V, 'x')); throw e;",
}


@pytest.fixture(scope="module")
def sandbox():
    sb = Sandbox(limits=Limits(memory_bytes=16 * 1024 * 1024))  # memory bombs reach a small realm's limit sooner
    sb.action(lambda x: x, name="echo")
    yield sb
    sb.close()


def limit_of(sb: Sandbox, source: str) -> str:
    with pytest.raises(LimitExceeded) as info:
        sb.eval(DEEP + GREEDY + source)
    return info.value.limit


@pytest.mark.parametrize("site", SITES)
@pytest.mark.parametrize("limit", GETTERS)
def test_a_getter_exhausting_a_resource_while_the_host_reads_it_is_that_limit(sandbox, site, limit):
    assert limit_of(sandbox, SITES[site].replace("V", GETTERS[limit]) + "\nreturn 'went on'") == limit


@pytest.mark.parametrize("site", [s for s in SITES if s not in ("return value", "thrown error's message")])
@pytest.mark.parametrize("limit", GETTERS)
def test_catching_a_resource_limit_reached_in_the_host_does_not_let_the_run_go_on(sandbox, site, limit):
    source = f"try {{ {SITES[site].replace('V', GETTERS[limit])} }} catch (e) {{}}\nreturn 'went on'"
    assert limit_of(sandbox, source) == limit


# Many small objects: QuickJS runs out of memory so badly it throws null, not an InternalError.
SMALL_OBJECTS = "function hoard() { const a = []; for (;;) a.push({a: a.length, b: [1, 2, 3]}) }\n"


@pytest.mark.parametrize("site", [s for s in SITES if s != "thrown error's message"])
@pytest.mark.parametrize("caught", [False, True])
def test_a_getter_running_out_of_memory_so_badly_that_null_is_thrown_is_the_memory_limit(sandbox, site, caught):
    read = SITES[site].replace("V", "{get x() { return hoard() }}")
    source = SMALL_OBJECTS + (f"try {{ {read} }} catch (e) {{}}" if caught and "return" not in read else read)
    assert limit_of(sandbox, source + "\nreturn 'went on'") == "memory"


def test_a_null_a_script_that_can_throw_null_throws_from_a_getter_is_still_its_own(sandbox):
    source = "const o = {get x() { throw null }};\ntry { await actions.echo(o) } catch (e) { return e === null }"
    assert sandbox.eval(source).output is True


def test_the_stack_limit_names_the_script_line_that_handed_the_value_over(sandbox):
    with pytest.raises(LimitExceeded) as info:
        sandbox.eval(DEEP + "const v = " + GETTERS["stack"] + ";\nawait actions.echo(v);")
    assert info.value.line == 3


def test_a_getter_that_throws_null_is_rethrown_as_it_is(sandbox):
    # Before: the host read `.message` of what the getter threw: "TypeError: cannot read property 'message' of null".
    out = sandbox.eval("try { await actions.echo({get x() { throw null }}) } catch (e) { return e === null }")
    assert out.output is True


def test_a_bad_value_is_still_a_type_error_naming_the_call(sandbox):
    out = sandbox.eval("try { await actions.echo({x: 1n}) } catch (e) { return [e.name, e.message] }")
    assert out.output == ["TypeError", "actions.echo: input.x is a BigInt, which JSON cannot carry"]


def test_a_data_getter_exhausting_a_resource_is_named_in_data(sandbox):
    # data is read after the outcome, for display: the run keeps its result, data says what happened.
    for limit, getter in GETTERS.items():
        result = sandbox.eval(DEEP + GREEDY + f"data.v = {getter}; return 1")
        assert (result.output, result.data) == (1, {"error": f"the {limit} limit was reached while reading data"})


# --- the console limit -----------------------------------------------------------------------------


def test_a_flood_of_console_lines_is_the_console_limit(sandbox):
    with pytest.raises(LimitExceeded) as info:
        sandbox.eval("for (let i = 0; ; i++) console.log('line', i)")
    assert info.value.limit == "console"
    assert info.value.value == (10_000, 4 * 1024 * 1024)
    assert "console lines" in str(info.value)


@pytest.mark.parametrize("line", ["'x'.repeat(10000)", "'\u00e9'.repeat(1 << 19)", "{i, s: 'y'.repeat(3000)}"])
def test_a_flood_of_console_bytes_is_the_console_limit(sandbox, line):
    # Before: 10,000-character lines ran the realm out of memory as "InternalError: null".
    assert limit_of(sandbox, f"for (let i = 0; ; i++) console.log({line})") == "console"


@pytest.mark.parametrize("lines, written, fails", [(3, 3, False), (3, 4, True), (1, 2, True)])
def test_the_console_line_limit_is_configurable(lines, written, fails):
    sb = Sandbox(limits=Limits(console_lines=lines))
    source = f"for (let i = 0; i < {written}; i++) console.log(i); return 'done'"
    if fails:
        with pytest.raises(LimitExceeded) as info:
            sb.eval(source)
        assert info.value.limit == "console"
    else:
        assert len(sb.eval(source).console) == written


def test_the_console_byte_limit_counts_utf8_bytes():
    sb = Sandbox(limits=Limits(console_bytes=12))
    assert len(sb.eval("console.log('\u00e9'.repeat(6)); return 1").console) == 1  # 12 bytes: fits
    with pytest.raises(LimitExceeded):
        sb.eval("console.log('\u00e9'.repeat(6)); console.log('x')")
    with pytest.raises(LimitExceeded):
        sb.eval("console.log('\u20ac'.repeat(5))")  # 15 bytes in 5 characters


def test_catching_the_console_limit_does_not_let_the_run_go_on():
    sb = Sandbox(limits=Limits(console_lines=2))
    with pytest.raises(LimitExceeded) as info:
        sb.eval("for (let i = 0; i < 10; i++) { try { console.log(i) } catch (e) {} }\nreturn 'went on'")
    assert info.value.limit == "console"


def test_a_caught_console_limit_followed_by_a_busy_loop_is_still_the_console_limit():
    sb = Sandbox(limits=Limits(console_lines=2, fuel_seconds=0.3))
    with pytest.raises(LimitExceeded) as info:
        sb.eval("for (let i = 0; i < 10; i++) { try { console.log(i) } catch (e) {} }\nfor (;;) {}")
    assert info.value.limit == "console"


def test_the_console_limit_counts_one_attempt_so_a_resumed_run_replays_within_it():
    sb = Sandbox(limits=Limits(console_lines=4))

    def gate(value, resume=None):
        if resume is None:
            raise ActionInterrupt(data={"asking": value})
        return resume.value

    sb.action(gate, name="gate")
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("console.log(1); console.log(2); await actions.gate(1); console.log(3); console.log(4); return 'ok'")
    result = sb.resume(info.value.run_id, True)
    assert result.output == "ok" and [line["message"] for line in result.console] == ["1", "2", "3", "4"]


def test_a_console_flood_keeps_pythons_memory_bounded():
    sb = Sandbox(limits=Limits(console_bytes=2 * 1024 * 1024, memory_bytes=256 * 1024 * 1024))
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded) as info:
            sb.eval("for (;;) console.log('x'.repeat(50000))")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.limit == "console"
    assert peak < 32 * 1024 * 1024, f"Python held {peak / 2**20:.1f} MiB for a 2 MiB console"


@pytest.mark.parametrize("field", ["console_lines", "console_bytes"])
@pytest.mark.parametrize("value", [0, -1, 1.5, True, None])
def test_console_limits_must_be_positive_integers(field, value):
    with pytest.raises(ValueError, match=f"Limits.{field}"):
        Limits(**{field: value})


def test_a_bad_value_is_named_with_its_article(sandbox):
    out = sandbox.eval(
        "try { await actions.echo({x: (function () { return arguments })()}) } catch (e) { return e.message }"
    )
    assert out.output == "actions.echo: input.x is an Arguments, which JSON cannot carry"


# A list of many short strings or small objects: QuickJS's JSON.parse of it runs out of memory so badly
# that it throws a bare null, and the memory is freed again before the host hears of it.
TOO_BIG = {"strings": ["ab"] * 2_000_000, "objects": [{"k": [1, {"x": None}]} for _ in range(400_000)]}


@pytest.mark.parametrize("value", TOO_BIG)
def test_an_input_too_big_for_the_realms_memory_is_the_memory_limit(sandbox, value):
    with pytest.raises(LimitExceeded) as info:
        sandbox.eval("return ctx.input.length", input=TOO_BIG[value])
    assert info.value.limit == "memory"
    assert sandbox.eval("return 1 + 1").output == 2


@pytest.mark.parametrize("value", TOO_BIG)
def test_an_action_result_too_big_for_the_realms_memory_is_the_memory_limit(sandbox, value):
    sandbox.action(lambda: TOO_BIG[value], name="load")
    try:
        with pytest.raises(LimitExceeded) as info:
            sandbox.eval("return (await actions.load()).length")
        assert info.value.limit == "memory"
    finally:
        sandbox.remove_action("load")
