"""Escape attempts: scripts that try to leave the realm or bend the host's plumbing.

Each probe is a script (a prefix with the attack, then usually a standard
body that calls actions, reads the clock and pauses on an approval) and a
check of what it found. The host's side must stay exactly right whatever the
script does to its own world: the values Python actions receive, the journal
(``sb.run(run_id).entries``), the call log, and the replay on resume. A script
may of course confuse *itself* (it owns its globals); it must not reach the
host's plumbing (settle its own promises, forge a result, call an action it was
not given, rewrite or corrupt the journal), nor Python, the file system or the
network.

A probe that currently finds something is marked ``xfail(strict=True)`` with
``BUG: ...``: it asserts the correct behaviour and flips when the engine is fixed.

Where the realm comes from: ``jupyter_sandbox/engine/realm.py`` + the prelude's parts in ``engine/js/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import quickjs

from jupyter_sandbox import RunResult, Sandbox, SandboxError, SandboxInterrupt

# -- the harness -------------------------------------------------------------------------------------

BODY = """
const a = await actions.echo({n: 1, s: "a"});
const b = await actions.echo([2, "b"]);
const t = Date.now();
const r = Math.random();
console.log("before the gate");
const c = await actions.gate("ok");
return {a, b, c, t, r};
"""

EXPECTED_RECEIVED = [("echo", {"n": 1, "s": "a"}), ("echo", [2, "b"]), ("gate", "ok")]
EXPECTED_CALLS = [("echo", {"n": 1, "s": "a"}), ("echo", [2, "b"]), ("gate", "ok")]
ALLOWED = ["echo", "gate"]  # `secret` is registered but not given to the script


@dataclass
class Found:
    """What one probe run produced (first eval, then a resume with approval if it paused)."""

    first: Any = None  # RunResult or the exception
    resumed: Any = None  # RunResult or the exception, when the first paused
    received: list = field(default_factory=list)  # (action, input) as Python received them
    run_id: str | None = None
    entries: list = field(default_factory=list)
    call_log: list = field(default_factory=list)
    after: Any = None  # a trivial eval on the same Sandbox afterwards

    @property
    def interrupted(self) -> bool:
        return isinstance(self.first, SandboxInterrupt)

    @property
    def output(self) -> Any:
        done = self.resumed if self.interrupted else self.first
        return done.output if isinstance(done, RunResult) else None

    def kind(self, kind: str) -> list[dict]:
        return [e for e in self.entries if e["kind"] == kind]


def run_probe(script: str, *, body: str | None = BODY, resume: bool = True) -> Found:
    sb = Sandbox()
    found = Found()

    @sb.action
    def echo(x):
        found.received.append(("echo", x))
        return {"echoed": x}

    @sb.action
    def secret(x):
        found.received.append(("secret", x))
        return "SECRET"

    @sb.action
    def slow(x):
        import time

        time.sleep(0.05)
        found.received.append(("slow", x))
        return "real"

    @sb.action
    def fail(x):
        found.received.append(("fail", x))
        raise RuntimeError("boom")

    @sb.action(approval=True)
    def gate(x):
        found.received.append(("gate", x))
        return "opened"

    source = script + ("\n" + body if body else "")
    try:
        found.first = sb.eval(source, actions=ALLOWED + ["slow", "fail"])
        found.run_id = found.first.run_id
    except SandboxError as exc:
        found.first = exc
        found.run_id = getattr(exc, "run_id", None)
    except Exception as exc:  # a bare exception is itself a finding: checks assert on it
        found.first = exc
    if resume and isinstance(found.first, SandboxInterrupt):
        try:
            found.resumed = sb.resume(found.run_id, True)
        except Exception as exc:
            found.resumed = exc
    if found.run_id:
        found.entries = sb.run(found.run_id).entries
        found.call_log = list(sb.call_log(found.run_id))
    found.after = sb.eval("return 'usable'").output
    sb.close()
    return found


def no_bare_errors(f: Found) -> None:
    for what in (f.first, f.resumed):
        if isinstance(what, Exception):
            assert isinstance(what, SandboxError), f"a bare {type(what).__name__} escaped: {what}"
    assert f.after == "usable"


def journal_consistent(f: Found) -> None:
    """Every slot holds at most one request and one completion; every result follows its call."""
    requests, completions = {}, {}
    for e in f.entries:
        if e["kind"] in ("call", "timer", "wait"):
            assert e["slot"] not in requests, f"two requests at slot {e['slot']}: {f.entries}"
            requests[e["slot"]] = e
        if e["kind"] in ("result", "fired", "event", "now", "random"):
            assert e["slot"] not in completions, f"two completions at slot {e['slot']}"
            completions[e["slot"]] = e
            if e["kind"] in ("result", "fired", "event"):
                assert e["slot"] in requests, f"a completion without its request at slot {e['slot']}"


def host_intact(f: Found) -> None:
    """The host's side is exactly right: what Python received, the journal, the replay."""
    no_bare_errors(f)
    assert f.interrupted, f"the standard body should pause on the gate; got {f.first!r}"
    assert isinstance(f.resumed, RunResult), f"resume failed: {f.resumed!r}"
    assert f.received == EXPECTED_RECEIVED, "actions were called with other inputs, again, or not allowed"
    journal_consistent(f)
    assert [(e["name"], e["input"]) for e in f.kind("call")] == EXPECTED_CALLS
    results = {e["slot"]: e for e in f.kind("result")}
    calls = f.kind("call")
    assert [results[c["slot"]]["value"] for c in calls] == [
        {"echoed": {"n": 1, "s": "a"}},
        {"echoed": [2, "b"]},
        "opened",
    ]


def exact(f: Found) -> None:
    """host_intact, and the script saw exactly the journaled values, on the live run and on replay."""
    host_intact(f)
    out = f.output
    assert out["a"] == {"echoed": {"n": 1, "s": "a"}} and out["b"] == {"echoed": [2, "b"]}
    assert out["c"] == "opened"
    nows = [e["value"] for e in f.kind("now")]
    randoms = [e["value"] for e in f.kind("random")]
    if nows:
        assert out["t"] == nows[0], "the replayed clock differs from the journal"
    if randoms:
        assert out["r"] == randoms[0], "the replayed random differs from the journal"


def as_the_scripts_json(written: Any) -> Callable[[Found], None]:
    """A toJSON the script puts on Object.prototype writes its own objects as JSON.stringify would
    (``written``): its values are its own to define. The host's records stay consistent and replay exact."""

    def check(f: Found) -> None:
        no_bare_errors(f)
        assert f.interrupted and isinstance(f.resumed, RunResult), (f.first, f.resumed)
        journal_consistent(f)
        sent = [(name, written if isinstance(value, (dict, list)) else value) for name, value in EXPECTED_RECEIVED]
        assert f.received == sent

    return check


def raises_cleanly(f: Found) -> None:
    """The script failed (its own doing), with a SandboxError; nothing else went wrong."""
    no_bare_errors(f)
    assert isinstance(f.first, SandboxError) or isinstance(f.resumed, SandboxError) or f.output is not None
    assert ("secret", {"n": 1, "s": "a"}) not in f.received
    journal_consistent(f)


# -- the native functions of a bare QuickJS context, to tell host additions apart -------------------

NATIVE_FUNCTIONS_JS = r"""
(function (root) {
  const seen = new Set(), found = new Set();
  const todo = [root, async function () {}, function* () {}, async function* () {}, () => {}];
  const toText = Function.prototype.toString;
  while (todo.length) {
    const o = todo.pop();
    if (seen.has(o)) continue;
    seen.add(o);
    let keys;
    try { keys = Reflect.ownKeys(o) } catch (e) { continue }
    for (const k of keys) {
      let d;
      try { d = Object.getOwnPropertyDescriptor(o, k) } catch (e) { continue }
      if (!d) continue;
      for (const v of [d.value, d.get, d.set]) {
        if (typeof v === 'function') {
          let text = '';
          try { text = toText.call(v) } catch (e) {}
          if (text.includes('[native code]')) found.add(String(v.name) + '/' + v.length);
        }
        if ((typeof v === 'object' && v !== null) || typeof v === 'function') todo.push(v);
      }
    }
    const proto = Object.getPrototypeOf(o);
    if (proto) todo.push(proto);
  }
  return Array.from(found).sort();
})
"""

# Functions of the prelude that hold the host's plumbing (the request queue, the resolvers, the replay
# plan). The public API (ctx.*, actions.*, Math.random, Date) is deliberately reachable; these are not.
HOST_INTERNALS = [
    "configure",
    "start",
    "deliver",
    "settle",
    "take",
    "takeQueue",
    "snapshot",
    "undelivered",
    "pendingSlot",
    "push",
    "reserve",
    "effect",
    "read",
    "note",
    "settleWith",
    "loadPlan",
    "deliverable",
    "installGlobals",
    "finish",
    "scriptLocation",
    "locationText",
]

REACHABLE_FUNCTION_NAMES_JS = r"""
const seen = new Set(), names = new Set(), todo = [this];
while (todo.length) {
  const o = todo.pop();
  if (seen.has(o)) continue;
  seen.add(o);
  let keys;
  try { keys = Reflect.ownKeys(o) } catch (e) { continue }
  for (const k of keys) {
    let d;
    try { d = Object.getOwnPropertyDescriptor(o, k) } catch (e) { continue }
    if (!d) continue;
    for (const v of [d.value, d.get, d.set]) {
      if (typeof v === 'function') names.add(v.name);
      if ((typeof v === 'object' && v !== null) || typeof v === 'function') todo.push(v);
    }
  }
  const proto = Object.getPrototypeOf(o);
  if (proto) todo.push(proto);
}
return Array.from(names).sort();
"""


def bare_native_functions() -> set[str]:
    context = quickjs.Context()
    return set(json.loads(context.eval(f"JSON.stringify(({NATIVE_FUNCTIONS_JS})(globalThis))")))


# -- the probes ----------------------------------------------------------------------------------------


@dataclass
class Probe:
    name: str
    tries: str
    script: str
    check: Callable[[Found], None]
    body: str | None = BODY
    bug: str | None = None  # set: the probe currently finds something (xfail strict)
    found: str | None = None  # what it found on an earlier revision (fixed since; the probe now guards it)


def global_has_no_plumbing(expression: str) -> str:
    return f"""
    const g = {expression};
    const own = Object.getOwnPropertyNames(g);
    return {{same: g === this, plumbing: own.filter(n => /jsbx|host|settle|deliver|^queue$|^pending$/i.test(n)),
             host: typeof g.__jsbx_host}};
    """


def no_plumbing_found(f: Found) -> None:
    no_bare_errors(f)
    assert f.output["plumbing"] == [] and f.output["host"] == "undefined"


def check_start_not_reachable(f: Found) -> None:
    no_bare_errors(f)
    assert f.output == [], f"host functions reachable through stack frames: {f.output}"


def check_disallowed_never_runs(f: Found) -> None:
    no_bare_errors(f)
    assert not any(name == "secret" for name, _ in f.received), "an action outside actions=[...] ran"
    journal_consistent(f)
    assert all(e["name"] != "secret" for e in f.kind("call"))


def check_no_forged_result(f: Found) -> None:
    no_bare_errors(f)
    journaled = [e["value"] for e in f.kind("result") if e.get("ok")]
    assert f.output == "real" and journaled[-1] == "real", (f.output, journaled)


def check_replay_unforged(f: Found) -> None:
    exact(f)


def check_natives(f: Found) -> None:
    no_bare_errors(f)
    extra = set(f.output) - bare_native_functions()
    assert not extra, f"native functions the host added to the realm: {sorted(extra)}"


def check_names_absent(f: Found) -> None:
    no_bare_errors(f)
    present = {k: v for k, v in f.output.items() if v != "undefined"}
    assert not present, f"present in the realm: {present}"


def check_imports_fail(f: Found) -> None:
    no_bare_errors(f)
    assert all(r.startswith("threw") for r in f.output), f.output


def check_clock_journal(f: Found) -> None:
    """Replacing the clock/random changes the script's view only; the journal holds the real reads."""
    exact(f)
    first_console = [line["message"] for line in f.first.console]
    final_console = [line["message"] for line in f.resumed.console]
    assert final_console[: len(first_console)] == first_console, "replay diverged from the live run"


def check_console_equal(f: Found) -> None:
    no_bare_errors(f)
    assert isinstance(f.resumed, RunResult), f.resumed
    first_console = [line["message"] for line in f.first.console]
    final_console = [line["message"] for line in f.resumed.console]
    assert final_console[: len(first_console)] == first_console, (first_console, final_console)
    journal_consistent(f)


def bare_function_names() -> set[str]:
    context = quickjs.Context()
    code = REACHABLE_FUNCTION_NAMES_JS.replace(
        "return Array.from(names).sort();", "return JSON.stringify(Array.from(names).sort());"
    )
    return set(json.loads(context.eval("(function () {" + code + "}).call(globalThis)")))


def check_internals_unreachable(f: Found) -> None:
    no_bare_errors(f)
    leaked = sorted(set(f.output) & set(HOST_INTERNALS) - bare_function_names())
    assert not leaked, f"host-internal functions reachable from the global object: {leaked}"


def check_typeof_all_undefined(f: Found) -> None:
    no_bare_errors(f)
    assert set(f.output) == {"undefined"}, f.output


def check_action_error_catchable(f: Found) -> None:
    no_bare_errors(f)
    assert f.output == "caught", f"an action failure was not catchable: {f.first!r}"


def check_console_kept(f: Found) -> None:
    no_bare_errors(f)
    result = f.first
    assert isinstance(result, RunResult), result
    assert [line["message"] for line in result.console] == ["hello"], result.console


FRAMES_EVERYWHERE = (
    """
await actions.echo(0);
const seen = new Set();
const internals = """
    + json.dumps(HOST_INTERNALS)
    + """;
Error.stackTraceLimit = 1000;
Error.prepareStackTrace = (e, frames) => {
  for (const f of frames) {
    if (f.isNative()) continue;
    const fn = f.getFunction();
    if (typeof fn === 'function' && internals.includes(fn.name)) seen.add(fn.name);
  }
  return '';
};
const probe = () => { new Error().stack; return 1 };
const spy = {get x() { return probe() }};
await actions.echo(spy);
try { await actions.fail(spy) } catch (e) {}
console.log({toString: probe}, spy);
ctx.log('info', 'm', spy);
await ctx.step('s', async () => { probe(); return 1 });
ctx.plan([{get title() { return String(probe()) }}]);
data.spy = spy;
await actions.gate('ok');
Error.prepareStackTrace = undefined;
return [...seen].sort();
"""
)

GATE_BODY_SETTLE = """
let settle = null;
Error.prepareStackTrace = (e, frames) => {
  for (const frame of frames) if (frame.getFunctionName() === 'settle') settle = frame.getFunction();
  return '';
};
try { await actions.fail(0) } catch (e) {}        // ActionError is built inside the host's settle()
Error.prepareStackTrace = undefined;
const p = actions.slow(1);
if (typeof settle === 'function') settle(1, '{"ok":true,"value":"forged"}', 0);
return await p;
"""

PROBES = [
    # -- the global object ----------------------------------------------------------------------------
    Probe(
        "this-at-top-level",
        "`this` in the cell body is the global object; it must hold no host plumbing",
        global_has_no_plumbing("this"),
        no_plumbing_found,
        body=None,
    ),
    Probe(
        "function-constructor",
        "Function('return this')() reaches the global object",
        global_has_no_plumbing("Function('return this')()"),
        no_plumbing_found,
        body=None,
    ),
    Probe(
        "indirect-eval",
        "(0, eval)('this') reaches the global object",
        global_has_no_plumbing("(0, eval)('this')"),
        no_plumbing_found,
        body=None,
    ),
    Probe(
        "constructor-chain",
        "({}).constructor.constructor('return this')()",
        global_has_no_plumbing("({}).constructor.constructor('return this')()"),
        no_plumbing_found,
        body=None,
    ),
    Probe(
        "async-function-constructor",
        "the AsyncFunction constructor via (async () => {}).constructor",
        global_has_no_plumbing("await (async () => {}).constructor('return this')()"),
        no_plumbing_found,
        body=None,
    ),
    Probe(
        "arguments-callee-caller",
        "arguments.callee (sloppy wrapper) and its .caller: the host's start()",
        "let caller; try { caller = typeof arguments.callee.caller } catch (e) { caller = 'threw' }\n"
        "return {callee: typeof arguments.callee, caller, host: typeof arguments.callee.__jsbx_host};",
        lambda f: (no_bare_errors(f), _assert(f.output["caller"] in ("threw", "undefined"), f.output)),
        body=None,
    ),
    Probe(
        "function-caller-of-api",
        "ctx.call.caller / ctx.call.arguments while inside a call",
        "const seen = [];\n"
        "const o = {get x() { for (const fn of [ctx.call, actions.echo]) { try { seen.push(typeof fn.caller,"
        " typeof fn.arguments) } catch (e) { seen.push('threw') } } return 1 }};\n"
        "await actions.echo(o);\nreturn seen;",
        lambda f: (
            no_bare_errors(f),
            _assert(set(f.output) <= {"threw", "undefined", "object"} and "function" not in f.output, f.output),
        ),
        body=None,
    ),
    Probe(
        "host-names-through-eval",
        "reading the prelude's closure variables by name (direct and indirect eval)",
        "const names = "
        + json.dumps(HOST_INTERNALS + ["queue", "pending", "recorded", "byKey", "order"])
        + ";\nreturn names.flatMap(n => [eval('typeof ' + n), (0, eval)('typeof ' + n)]);",
        check_typeof_all_undefined,
        body=None,
    ),
    Probe(
        "reachable-functions",
        "walk every object reachable from the global object for host-internal functions",
        REACHABLE_FUNCTION_NAMES_JS,
        check_internals_unreachable,
        body=None,
    ),
    Probe(
        "stack-frames-at-top-level",
        "Error.prepareStackTrace's CallSite.getFunction() before the first await, while the host's start() "
        "is on the stack",
        "const found = [];\n"
        "try { Error.prepareStackTrace = (e, frames) => { for (const f of frames) { const fn = f.getFunction();"
        " if (fn && " + json.dumps(HOST_INTERNALS) + ".includes(fn.name)) found.push(fn.name) } return '' } }"
        " catch (e) {}\nnew Error().stack;\nreturn found;",
        check_start_not_reachable,
        body=None,
        found="quickjs-ng's CallSite.getFunction() handed the script the host's start()/settle()/deliver(); "
        "the prelude locks Error.prepareStackTrace",
    ),
    Probe(
        "callsite-through-object-prototype-getters",
        "getters on Object.prototype named like V8 CallSite methods quickjs-ng lacks (getThis, getTypeName, "
        "isToplevel...): if the host's stack formatter ever asks a frame for one, the script receives the "
        "CallSite and its getFunction()",
        "const got = [];\nfor (const k of ['getThis', 'getTypeName', 'getMethodName', 'getEvalOrigin', "
        "'isToplevel', 'isEval', 'isAsync', 'getScriptNameOrSourceURL', 'getPosition', 'getPromiseIndex', "
        "'isPromiseAll', 'getEnclosingLineNumber'])\n"
        "  Object.defineProperty(Object.prototype, k, {configurable: true, get() { got.push(k); return () => "
        "undefined }});\n"
        "try { await actions.fail(1) } catch (e) {}\nawait actions.echo({get x() { new Error().stack; return 1 "
        "}});\nnew Error().stack;\nreturn got;",
        lambda f: (no_bare_errors(f), _assert(f.output == [], f.output)),
        body=None,
    ),
    Probe(
        "stack-frames-everywhere",
        "CallSite.getFunction() on every stack the script can observe after its first await: errors the "
        "prelude builds, getters it reads while serialising inputs, data and the return value, console, "
        "ctx.log/step/plan, failed and replayed calls",
        FRAMES_EVERYWHERE,
        lambda f: (no_bare_errors(f), _assert(f.output == [], f"host functions seen on the stack: {f.output}")),
        body=None,
        found="CallSite.getFunction() (quickjs-ng's Error.prepareStackTrace API) returns the prelude's own "
        "functions from stack frames, e.g. __jsbx_host.settle and settleWith while an ActionError is built",
    ),
    Probe(
        "stack-frames-in-settle",
        "CallSite.getFunction() while the host settles a failed call (ActionError built inside settle()): "
        "the host's settle(), used to resolve a pending call with a forged value",
        "",
        check_no_forged_result,
        body=GATE_BODY_SETTLE,
        found="CallSite.getFunction() exposes __jsbx_host.settle; the script resolves its own call with a forged"
        " value the journal never saw",
    ),
    Probe(
        "capture-stack-trace-in-input-getter",
        "Error.captureStackTrace from a getter the prelude reads while serialising an action input (after "
        "the first await, so only call-path frames are on the stack)",
        "await actions.echo(0);\nconst names = [];\n"
        "Error.prepareStackTrace = (e, frames) => { for (const f of frames) { const fn = f.getFunction(); "
        "if (fn && " + json.dumps(HOST_INTERNALS) + ".includes(fn.name)) names.push(fn.name) } return '' };\n"
        "const o = {get x() { const t = {}; Error.captureStackTrace(t); t.stack; return 1 }};\n"
        "await actions.echo(o);\nError.prepareStackTrace = undefined;\nreturn names;",
        lambda f: (no_bare_errors(f), _assert(f.output == [], f.output)),
        body=None,
    ),
    # -- the host plumbing: replace what the prelude uses, then check the host side is exact -------------
    Probe(
        "promise-then",
        "override Promise.prototype.then before calling actions",
        "const then0 = Promise.prototype.then;\n"
        "Promise.prototype.then = function (f, r) { return then0.call(this, v => f ? f(v) : v, r) };",
        exact,
    ),
    Probe(
        "json-parse-stringify",
        "replace JSON.parse and JSON.stringify with forgers",
        "JSON.parse = () => ({forged: true}); JSON.stringify = () => '\"forged\"';",
        exact,
    ),
    Probe(
        "map-set-methods",
        "break Map.prototype.get/set/has/delete and Set.prototype.has/add/delete",
        "Map.prototype.get = function () { return undefined }; Map.prototype.set = function () { return this };"
        "Map.prototype.has = () => false; Map.prototype.delete = () => false;"
        "Set.prototype.has = () => true; Set.prototype.add = function () { return this };"
        "Set.prototype.delete = () => false;",
        exact,
    ),
    Probe(
        "array-methods",
        "break Array.prototype.push/join/sort/map/slice/concat",
        "Array.prototype.push = function () { throw new Error('no push') };"
        "Array.prototype.join = function () { return 'J' };"
        "Array.prototype.sort = function () { return this.reverse() };"
        "Array.prototype.map = function () { return [] }; Array.prototype.slice = function () { return [] };"
        "Array.prototype.concat = function () { return [] };",
        exact,
    ),
    Probe(
        "string-methods",
        "break String.prototype.slice/replace/split/repeat",
        "String.prototype.slice = function () { return '{}' };"
        "String.prototype.replace = function () { return '\"x\"' };"
        "String.prototype.split = function () { return [] }; String.prototype.repeat = () => '';",
        exact,
    ),
    Probe(
        "function-call-bind-apply",
        "break Function.prototype.call/bind/apply",
        "Function.prototype.call = function () { throw new Error('call') };"
        "Function.prototype.bind = function () { throw new Error('bind') };"
        "Function.prototype.apply = function () { throw new Error('apply') };",
        exact,
    ),
    Probe(
        "object-statics",
        "replace Object.keys/freeze/defineProperty/getPrototypeOf",
        "Object.keys = () => ['forged']; Object.freeze = (o) => o;"
        "Object.defineProperty = () => { throw new Error('no') }; Object.getPrototypeOf = () => null;",
        exact,
    ),
    Probe(
        "regexp-exec",
        "RegExp.prototype.exec returning null (the prelude's validators use regexes)",
        "RegExp.prototype.exec = function () { return null };",
        exact,
    ),
    Probe(
        "regexp-exec-lone-surrogate",
        "RegExp.prototype.exec returning null, so the prelude's lone-surrogate scrub (String.replace, which "
        "calls the live exec) lets a lone surrogate through to the journal",
        "RegExp.prototype.exec = function () { return null };\nconsole.log('lone \\ud800 surrogate');",
        check_console_equal,
        found="prelude str() uses String.prototype.replace, which calls the script's RegExp.prototype.exec; "
        "a lone surrogate reaches cbor2 and a bare UnicodeEncodeError escapes",
    ),
    Probe(
        "regexp-symbol-replace-undefined",
        "RegExp.prototype[Symbol.replace] returning undefined: the prelude's str() emits `undefined` into "
        "the request JSON",
        "RegExp.prototype[Symbol.replace] = function () { return undefined };\nconsole.log('x');",
        check_console_equal,
        found="prelude str() calls the live RegExp.prototype[Symbol.replace]; invalid request JSON -> bare "
        "json.JSONDecodeError from realm.take()",
    ),
    Probe(
        "regexp-symbol-replace-object-stack",
        "RegExp.prototype[Symbol.replace] returning an object, then an uncaught Error: the error's stack "
        "reaches Python as a dict",
        "RegExp.prototype[Symbol.replace] = function () { return {a: 1} };\nthrow new Error('x');",
        lambda f: (no_bare_errors(f), _assert(isinstance(f.first, SandboxError), f.first)),
        body=None,
        found="realm.rewrite_stack() gets a dict as the stack -> bare AttributeError ('dict' has no 'splitlines')",
    ),
    Probe(
        "array-iterator",
        "replace Array.prototype[Symbol.iterator]: the prelude destructures `const [s, rec] = reserved`",
        "const it0 = Array.prototype[Symbol.iterator];\n"
        "Array.prototype[Symbol.iterator] = function* () { if (this.length === 2 && typeof this[0] === "
        "'number') { yield 0; yield null } else { yield* it0.call(this) } };",
        exact,
    ),
    Probe(
        "array-index-setter",
        "a setter on Array.prototype[0]: the prelude's `queue[queue.length] = text` calls it with the "
        "request text, which the script rewrites to call `secret`",
        "Object.defineProperty(Array.prototype, '0', {configurable: true, set(v) {\n"
        '  const forged = typeof v === \'string\' ? v.replace(\'"name":"echo"\', \'"name":"secret"\') : v;\n'
        "  Object.defineProperty(this, '0', {value: forged, writable: true, enumerable: true, "
        "configurable: true}) }});",
        exact,
        found="prelude writes requests with `arr[i] = x`, which runs inherited setters: the script rewrites its "
        "requests and runs an action outside actions=[...]",
    ),
    Probe(
        "array-species-proxy",
        "Array[Symbol.species] returning a Proxy: the prelude's arrayMap() over console lines builds it, "
        "and arrayJoin() reads the script's junk into the snapshot JSON",
        "Object.defineProperty(Array, Symbol.species, {configurable: true, get() { return function () {\n"
        "  return new Proxy({}, {defineProperty() { return true }, get(t, k) { return k === 'length' ? 1 : "
        "'}}]} junk' }}) } }});\nconsole.log('x');",
        check_console_equal,
        found="prelude arrayMap() honours Array[Symbol.species]; the snapshot JSON is broken -> bare "
        "json.JSONDecodeError from realm.snapshot()",
    ),
    Probe(
        "promise-species",
        "Promise.prototype.constructor with a throwing species before the first await "
        "(the host's start() calls then() on the script's promise)",
        "Promise.prototype.constructor = function () { throw new Error('species') };\n"
        "Promise.prototype.constructor[Symbol.species] = Promise.prototype.constructor;",
        raises_cleanly,
    ),
    Probe(
        "frozen-error-prototype",
        "freeze Error.prototype: the prelude's ActionError assigns this.name, which then throws "
        "(the 'override mistake')",
        "Object.freeze(Error.prototype);\ntry { await actions.fail(1) } catch (e) { return 'caught' }\n"
        "return 'not thrown';",
        check_action_error_catchable,
        body=None,
        found="ActionError's constructor assigns this.name; with Error.prototype frozen it throws inside the "
        "host's settle() and the run dies with an uncatchable InternalError",
    ),
    # -- the recorded clock and random source ----------------------------------------------------------
    Probe(
        "replace-date-now",
        "Date.now replaced with a constant before reading it",
        "Date.now = () => 42;",
        check_clock_journal,
    ),
    Probe(
        "replace-math-random", "Math.random replaced with a constant", "Math.random = () => 0.5;", check_clock_journal
    ),
    Probe(
        "replace-date-class",
        "the global Date replaced by a class with a fixed now()",
        "Date = class { static now() { return 7 } };",
        check_clock_journal,
    ),
    Probe(
        "replace-clock-after-reading",
        "read the recorded clock and random, then swap in fakes and read again; the replay must match the "
        "live run line for line",
        "console.log('real', Date.now(), Math.random());\nDate.now = () => 1; Math.random = () => 0;\n"
        "console.log('fake', Date.now(), Math.random());",
        lambda f: (host_intact(f), check_console_equal(f)),
    ),
    # -- prototype pollution that would alter how the engine reads results -----------------------------
    Probe(
        "object-prototype-tojson",
        "Object.prototype.toJSON / Array.prototype.toJSON returning 'forged'",
        "Object.prototype.toJSON = function () { return 'forged' };\n"
        "Array.prototype.toJSON = function () { return 'forged' };",
        as_the_scripts_json("forged"),
    ),
    Probe(
        "object-prototype-tojson-snapshot",
        "Object.prototype.toJSON returning undefined while `data` is not JSON: the snapshot's fallback "
        "JSON.stringify({error}) returns undefined",
        "Object.prototype.toJSON = () => undefined;\ndata.bad = 1n;",
        as_the_scripts_json(None),
        found="prelude snapshot() falls back to JSON.stringify({error}), which honours Object.prototype.toJSON; "
        "`undefined` -> bare json.JSONDecodeError from realm.snapshot()",
    ),
    Probe(
        "object-prototype-then",
        "Object.prototype.then makes every object a thenable (the script's own view of results changes; "
        "the host's must not)",
        "Object.prototype.then = function (res) { delete Object.prototype.then; res('forged') };",
        host_intact,
    ),
    Probe(
        "object-prototype-accessors",
        "getters/setters on Object.prototype for value/ok/error/v/e/k/s/name/rej/res/done/used/action/sync",
        "for (const k of ['value', 'ok', 'error', 'v', 'e', 'k', 's', 'name', 'rej', 'res', 'done', 'used',"
        " 'action', 'sync', 'kin', 'message'])\n"
        "  Object.defineProperty(Object.prototype, k, {__proto__: null, configurable: true, "
        "get() { return 'FORGED' }, set(x) {}});",
        lambda f: (
            no_bare_errors(f),
            _assert(f.received[:2] == EXPECTED_RECEIVED[:2]),
            journal_consistent(f),
            _assert(all(n != "secret" for n, _ in f.received)),
        ),
    ),
    Probe(
        "object-prototype-setter-captures-replay-records",
        "a setter on Object.prototype.rej: the prelude assigns rec.rej on its replay records, handing them "
        "to the script, which rewrites the recorded values it is about to be served",
        "Object.defineProperty(Object.prototype, 'rej', {__proto__: null, configurable: true, set(x) {\n"
        "  Object.defineProperty(this, 'rej', {__proto__: null, value: x, writable: true, configurable: true});"
        "\n  if ('v' in this) this.v = {forged: true} }});",
        check_replay_unforged,
        found="prelude effect() assigns rec.rej/rec.name on plan records without own slots, so an inherited "
        "setter receives the record; the replay serves values the journal never held",
    ),
    Probe(
        "object-prototype-get-set",
        "`get`/`set` on Object.prototype: a property descriptor written as an object literal inherits them, "
        "so the host's Object.defineProperty(list, i, {value, ...}) becomes an invalid descriptor",
        "Object.prototype.get = function () { return 'forged' };\nObject.prototype.set = function (v) {};",
        exact,
        found="prelude append() and ActionError define properties with descriptor literals that inherit "
        "Object.prototype.get/set: every action call with an object input, every console line and every "
        "ActionError throws 'Invalid property descriptor' (use {__proto__: null, ...} descriptors)",
    ),
    Probe(
        "object-prototype-get-vs-action-error",
        "Object.prototype.get defined, then a failing action: the host builds the ActionError inside settle()",
        "Object.prototype.get = undefined;\ntry { await actions.fail(1) } catch (e) { return 'caught' }\n"
        "return 'not thrown';",
        check_action_error_catchable,
        body=None,
        found="ActionError's constructor calls Object.defineProperty(this, 'action', {value, ...}) with a descriptor "
        "literal: an inherited `get` makes it invalid, so the failure is an uncatchable InternalError",
    ),
    Probe(
        "array-prototype-index-getters",
        "getters (no setters) on Array.prototype indexes 0..9: the prelude's `queue[queue.length] = text` "
        "silently does nothing, so the script's requests vanish",
        "for (let i = 0; i < 10; i++) Object.defineProperty(Array.prototype, String(i), "
        "{configurable: true, get() { return 'forged' }});",
        exact,
        found="prelude push() writes `queue[queue.length] = text`, which honours inherited accessors: every "
        "request is swallowed and the run fails 'waiting on a promise that nothing will settle'",
    ),
    # -- Python, the file system, the network -----------------------------------------------------------
    Probe(
        "io-globals-absent",
        "std, os, print, scriptArgs, require, process, fetch, XMLHttpRequest, WebAssembly...",
        "const names = ['std', 'os', 'print', 'scriptArgs', 'require', 'process', 'fetch', 'XMLHttpRequest', "
        "'WebAssembly', 'Deno', 'Bun', '__loadScript', 'gc', 'bjson', 'setTimeout', 'setInterval', "
        "'importScripts', 'Worker', 'navigator', 'location', 'globalThis', '__jsbx_host'];\n"
        "const out = {}; for (const n of names) out[n] = typeof this[n]; return out;",
        check_names_absent,
        body=None,
    ),
    Probe(
        "nondeterministic-globals-absent",
        "performance, WeakRef, FinalizationRegistry, SharedArrayBuffer, Atomics",
        "const out = {}; for (const n of ['performance', 'WeakRef', 'FinalizationRegistry', "
        "'SharedArrayBuffer', 'Atomics']) out[n] = typeof this[n]; return out;",
        check_names_absent,
        body=None,
    ),
    Probe(
        "dynamic-import",
        "import() of 'os', 'std' and a file path, smuggled past the linter through eval",
        "const out = [];\nfor (const m of ['os', 'std', '/etc/passwd', 'qjs:os']) {\n"
        "  try { await (0, eval)('imp' + 'ort(' + JSON.stringify(m) + ')'); out.push('imported ' + m) }\n"
        "  catch (e) { out.push('threw ' + e.message) } }\n"
        "try { await Function('return imp' + 'ort(\"os\")')(); out.push('imported') } "
        "catch (e) { out.push('threw ' + e.message) }\nreturn out;",
        check_imports_fail,
        body=None,
    ),
    Probe(
        "no-python-callables",
        "any native function the host added to the realm (a Python callable would be one)",
        f"return ({NATIVE_FUNCTIONS_JS})(this);",
        check_natives,
        body=None,
    ),
    Probe(
        "data-getter-loop",
        "make `data` a getter that never returns: the host reads it once at the end (fuel stops it) and must "
        "still report the console",
        "Object.defineProperty(this, 'data', {get() { for (;;) {} }});\nconsole.log('hello');\nreturn 1;",
        check_console_kept,
        body=None,
        found="realm.snapshot() drops the console too when serialising `data` runs out of fuel",
    ),
]


def _assert(condition: bool, detail: Any = None) -> None:
    assert condition, detail


def _params():
    for probe in PROBES:
        marks = [pytest.mark.xfail(strict=True, reason=f"BUG: {probe.bug}")] if probe.bug else []
        yield pytest.param(probe, id=probe.name, marks=marks)


def test_there_are_at_least_thirty_probes_and_each_says_what_it_tries():
    assert len(PROBES) >= 30
    assert len({p.name for p in PROBES}) == len(PROBES)
    assert all(p.tries for p in PROBES)


@pytest.mark.parametrize("probe", list(_params()))
def test_escape_probe_finds_nothing(probe: Probe):
    found = run_probe(probe.script, body=probe.body)
    probe.check(found)


def test_the_baseline_body_is_exact():
    """The harness itself: with no attack the body pauses, resumes and replays exactly."""
    exact(run_probe(""))
