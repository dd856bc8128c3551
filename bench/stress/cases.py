"""The bad-input generator: case ``i`` of seed ``s`` is always the same case, as plain data.

The worker (``worker.py``) builds the Python values a case names (``py_value``): not all of them pickle.
"""

from __future__ import annotations

import json
import random
from typing import Any

HELPERS = (
    "const deep = (n) => { let a = []; for (let i = 0; i < n; i++) a = [a]; return a };\n"
    "const cyclic = () => { const o = {}; o.self = o; return o };\n"
)

NON_JSON_VALUES = [
    "() => 1",
    "function named() {}",
    "Symbol('s')",
    "cyclic()",
    "10n",
    "[1, undefined, 3]",
    "NaN",
    "Infinity",
    "-Infinity",
    "'\\ud800'",
    "'x\\udc00y'",
    "({'\\ud800': 1})",
    "({'a\\udfff': [1]})",
    "new Map([[1, 2]])",
    "new Set([1])",
    "new Date(NaN)",
    "/re/g",
    "new Uint8Array(4)",
    "new Proxy({}, {})",
    "new (class K { constructor() { this.a = 1 } })()",
    "new Error('e')",
    "({get boom() { throw new Error('getter') }})",
    "[, 1]",
    "new ArrayBuffer(8)",
    "Promise.resolve(1)",
    "new WeakMap()",
    "[1.5e308 * 10]",
    "deep(450)",
    "deep(398)",
    "deep(401)",
    "deep(2000)",
    "deep(700)",
    "({toJSON() { throw new Error('toJSON') }})",
    "Object.create(null)",
    "({[Symbol.toPrimitive]() { throw 1 }})",
    "{a: {b: {c: [1, {d: undefined}]}}}",
    "[[[NaN]]]",
    "({x: 1n})",
    "'\\u0000'",
    "'a'.repeat(3e5)",
    "new Proxy([], {get() { throw new Error('trap') }})",
    "Object.freeze([1, 2])",
    "new Number(1)",
    "new String('s')",
    "({__proto__: null, a: 1})",
    "({'__proto__': 1})",
    "({get [Symbol.toStringTag]() { throw 1 }})",
    "-0",
    "1e400",
    "'\\u2028\\u2029'",
    "[Array(3)]",
]

SINKS = [
    ("return", "return {V};"),
    ("action-input", "return await actions.echo({V});"),
    ("action-input-caught", "try { return await actions.echo({V}) } catch (e) { return e.message }"),
    ("data", "data.x = {V}; return 1;"),
    ("ctx.log", "ctx.log('info', 'm', {V}); return 1;"),
    ("ctx.plan", "ctx.plan([{V}]); return 1;"),
    ("continueAsNew", "await ctx.continueAsNew({V});"),
    ("waitForEvent", "return await ctx.waitForEvent({V}, {timeout: 1});"),
    ("delegate", "return await ctx.delegate({script: 'return ctx.input', input: {V}});"),
    ("console", "console.log({V}); return 1;"),
    ("throw", "throw {V};"),
    ("reject", "await Promise.reject({V});"),
    ("description", "return await ctx.call('echo', 1, {description: {V}});"),
    ("parallel", "return await ctx.parallel([() => actions.echo({V}), () => actions.echo(2)]);"),
    ("step-label", "return await ctx.step({V}, () => 1);"),
    ("progress", "ctx.progress({V}); return 1;"),
    ("sleep", "await ctx.sleep({V}); return 1;"),
]

SYNTAX_TOKENS = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "=>",
    "function",
    "async",
    "await",
    "return",
    "let x =",
    "const",
    "var",
    "'unterminated",
    '"also',
    "`tmpl ${",
    "/*",
    "*/",
    "//",
    "/re",
    "class",
    "yield",
    "super()",
    "new.target",
    "#priv",
    "@dec",
    "\\u{110000}",
    "\u0000",
    "\ufeff",
    "\u2028",
    "\r",
    "\ud800",
    "if",
    "else",
    "for (;;",
    "import x from 'y'",
    "export default 1",
    "<!--",
    "-->",
    "#!/bin/sh",
    "?.",
    "??=",
    "...",
    ",",
    ";",
    "=",
    "1",
    "'ok'",
    "x",
    "actions.echo(",
    "ctx.",
    "try",
    "catch",
    "finally",
    "with (x)",
    "debugger",
    "label:",
    "break label",
    "continue",
    "0x",
    "1e",
    "08",
    "\\",
    "@",
    "%",
    "in",
    "of",
    "delete",
    "void",
    "typeof",
    "let let",
    "enum",
    "implements",
    "static",
    "get",
    "set",
    "`",
    "${",
    "}}",
    "))",
    "]]",
]

NEVER_SETTLE = [
    "await new Promise(() => {});",
    "await new Promise(r => { const keep = r });",
    "await Promise.race([]);",
    "await {then() {}};",
    "return {then() {}};",
    "await Promise.all([new Promise(() => {}), actions.echo(1)]);",
    "for await (const x of {[Symbol.asyncIterator]() { return {next: () => new Promise(() => {})} }}) {}",
    "await (async function* () { await new Promise(() => {}) })().next();",
    "const p = new Promise(() => {}); await p.then(x => x);",
    "await actions.echo(1); await new Promise(() => {});",
    "await ctx.parallel([() => new Promise(() => {})]);",
    "await ctx.step('s', () => new Promise(() => {}));",
    "const a = actions.echo(1); await new Promise(() => {}); await a;",
    "await Promise.any([new Promise(() => {})]);",
]

INFINITE_LOOPS = [
    "while (true) {}",
    "for (;;) {}",
    "do {} while (true);",
    "while (true) { try { for (;;) {} } catch (e) {} }",
    "await actions.echo(1); for (;;) {}",
    "const o = {get x() { for (;;) {} }}; await actions.echo(o);",
    "data.x = {get y() { for (;;) {} }}; return 1;",
    "return {get y() { for (;;) {} }};",
    "[3, 1, 2].sort(() => { for (;;) {} });",
    "JSON.parse('[1]', () => { for (;;) {} });",
    "'aaaa'.replace(/a/g, () => { for (;;) {} });",
    "new Proxy({}, {get() { for (;;) {} }}).x;",
    "console.log({toString() { for (;;) {} }}); return 1;",
    "class A { static { for (;;) {} } }",
    "return /(a+)+$/.test('a'.repeat(40) + 'b');",
    "function* g() { for (;;) yield 1 } for (const x of g()) {}",
    "let i = 0; while (i >= 0) i++;",
    "try { for (;;) {} } finally { for (;;) {} }",
    "throw {get message() { for (;;) {} }};",
    "await ctx.step({toString() { for (;;) {} }}, () => 1);",
]

MICROTASK_LOOPS = [
    "for (;;) await null;",
    "const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {});",
    "const spin = () => queueMicrotask(spin); spin(); return 1;",
    "(async () => { for (;;) await 0 })(); await actions.echo(1); return 1;",
    # each job burns well under the per-job slice, then awaits: only a bound on the whole drain stops it
    "for (;;) { let x = 0; for (let i = 0; i < 3e5; i++) x += i; await null; }",
]

# Built-ins that loop natively without polling the interrupt handler: the fuel slice cannot stop them.
NATIVE_LOOPS = [
    "const a = []; a.length = 2 ** 32 - 1; return a.join('').length;",
    "const a = []; a.length = 2 ** 32 - 1; return a.reverse().length;",
    "const a = []; a.length = 2 ** 32 - 1; return a.sort().length;",
    "const a = []; a.length = 2 ** 32 - 1; return String(a).length;",
    "const a = []; a.length = 2 ** 32 - 1; return a.flat().length;",
]

DEEP_RECURSION = [
    "function f(n) { return f(n + 1) + 1 } f(0);",
    "function a() { return b() } function b() { return a() } a();",
    "const o = {}; o.toString = () => String(o); String(o);",
    "const p = new Proxy({}, {get: (t, k, r) => r[k]}); p.x;",
    "[1, 2].sort(function s() { return [3, 4].sort(s) });",
    "async function f() { return f() } await f();",
    "eval('('.repeat(1e5) + '1' + ')'.repeat(1e5));",
    "JSON.parse('['.repeat(1e5) + ']'.repeat(1e5));",
    "new RegExp('(?:'.repeat(3e4) + 'a' + ')*'.repeat(3e4)).test('a');",
    "function f() { try { return f() } catch (e) { return f() } } f();",
    "function f() { try { f() } finally { f() } } f();",
    "const g = function* () { yield* g() }; [...g()];",
    "class A extends Array { constructor() { super(); new A() } } new A();",
    "const o = {get x() { return this.x }}; return o;",
    "return await actions.echo({get x() { return this.x }});",
    "function f(n) { return n ? f(n - 1) : 0 } return f(1e6);",
    "return eval('[' .repeat(5000) + ']'.repeat(5000)).length;",
    "const r = (n) => n && r(n - 1); return r(20000);",
]

MEMORY_BOMBS = [
    "const a = []; for (;;) a.push(new Array(1e5).fill(1));",
    "let s = 'xy'; for (;;) s += s;",
    "const m = new Map(); for (let i = 0; ; i++) m.set(i, {i});",
    "return new Array(2 ** 31).length;",
    "return new ArrayBuffer(2 ** 31).byteLength;",
    "return 'x'.repeat(2 ** 28).length;",
    "const a = []; for (;;) { try { a.push('y'.repeat(1 << 16) + a.length) } catch (e) {} }",
    "return Array.from({length: 1e8}).length;",
    "return JSON.parse('[' + '1,'.repeat(5e6) + '1]').length;",
    "await actions.echo('x'.repeat(2e7));",
    "const keep = []; for (let i = 0; i < 1e9; i++) keep.push({i, s: 'abc' + i});",
    "let s = ''; for (let i = 0; ; i++) s += String.fromCharCode(i % 60000);",
    "data.hog = []; for (;;) data.hog.push('z'.repeat(4096));",
    "const a = [1]; for (;;) a.push(...a);",
    "return new Float64Array(1e8).length;",
    "const o = {}; for (let i = 0; ; i++) o['k' + i] = i;",
]

HUGE_VALUES = [
    "return 'x'.repeat({N});",
    "return new Array({N}).fill(1).length;",
    "return new Array({N}).fill(1);",
    "return (await actions.echo('x'.repeat({N}))).length;",
    "console.log('x'.repeat({N})); return 1;",
    "ctx.log('info', 'x'.repeat({N})); return 1;",
    "data.big = 'x'.repeat({N}); return 1;",
    "throw new Error('x'.repeat({N}));",
    "return Array.from({length: Math.min({N}, 3e5)}, (_, i) => ({i, s: 'ab'}));",
    "return Object.fromEntries(Array.from({length: Math.min({N}, 2e5)}, (_, i) => ['k' + i, i]));",
    "let s = ''; for (let i = 0; i < Math.min({N}, 2e5); i++) s += 'r' + i; return await actions.echo(s);",
    "return (await actions.huge({N})).length;",
    "const h = await actions.huge({N}); return h;",
    "await ctx.sleep(1e308); return 1;",
    "return await ctx.waitForEvent({}, {timeout: 1e300});",
]
HUGE_SIZES = [1e3, 1e5, 1e6, 4e6, 9e6, 3e7]

ACTION_FAILURES = [
    "value",
    "key",
    "custom-str",
    "recursion",
    "memory",
    "assert",
    "group",
    "generator-exit",
    "cancelled",
    "stop-iteration",
]
FATAL_FAILURES = ["system-exit", "keyboard-interrupt"]  # BaseExceptions: rare here, each may cost a hang
NONJSON_RETURNS = [
    "set",
    "nan",
    "inf",
    "object",
    "bytes",
    "surrogate",
    "surrogate-key",
    "tuple-key",
    "deep398",
    "deep450",
    "deep2000",
    "cyclic",
    "bigint",
    "generator",
    "coroutine",
    "str-subclass",
    "weird-keys",
]
INTERRUPT_DATA = ["plain", "object", "set", "nan", "deep450", "surrogate", "bytes"]
CALL_PATTERNS = [
    "return await {CALL};",
    "try { return await {CALL} } catch (e) { return 'caught ' + e.name + ': ' + e.message }",
    "return await Promise.all([{CALL}, actions.echo(1)]);",
    "{CALL}; return 1;",
    "return (await ctx.parallelSettled([() => {CALL}, () => {CALL}])).map(r => r.status);",
    "await actions.echo(0); return await {CALL};",
]

BAD_INPUTS = [
    "nan",
    "inf",
    "set",
    "bytes",
    "object",
    "surrogate",
    "surrogate-key",
    "tuple-key",
    "deep398",
    "deep450",
    "deep2000",
    "cyclic",
    "huge5m",
    "huge30m",
    "int-keys",
    "bigint",
    "nested-set",
    "complex",
    "frozenset",
    "none",
    "empty",
]
BAD_SOURCES = [
    "bytes",
    "none",
    "int",
    "nul",
    "surrogate",
    "over-256k",
    "exactly-256k",
    "bom",
    "crlf",
    "comments-only",
    "empty",
    "u2028",
    "bytes-like-list",
    "only-newlines",
    "deep-parens",
    "many-lines",
]

CALL_LOG_TEMPLATE = (
    "const a = await actions.echo(1); const t = Date.now(); const r = Math.random();\n"
    "const b = await actions.echo([a, 2]); await ctx.sleep(1); return [a, b, typeof t, typeof r];"
)

WEIGHTS = {
    "syntax": 9,
    "never-settle": 5,
    "infinite-loop": 4,
    "microtask-loop": 0.1,
    "native-loop": 0.1,
    "deep-recursion": 4,
    "memory-bomb": 3,
    "huge-value": 3,
    "non-json": 20,
    "action-misbehaves": 14,
    "bad-input": 5,
    "bad-source": 3,
    "call-log": 20,
    "corrupt-store": 3,
    "bad-answer": 2,
    "bad-limits": 0.3,
}

BAD_ANSWERS = [
    "object",
    "surrogate",
    "surrogate-key",
    "deep450",
    "deep2000",
    "set",
    "nan",
    "bytes",
    "cyclic",
    "tuple-key",
    "complex",
    "huge5m",
    "none",
    "empty",
    "bigint",
]
BAD_LIMITS = [
    "dict(stack_bytes=256 << 20)",
    "dict(stack_bytes=80 << 20)",
    "dict(memory_bytes=100_000)",
    "dict(stack_bytes=10_000)",
    "dict(stack_bytes=True)",
    "dict(memory_bytes=True)",
    "dict(fuel_seconds=float('nan'))",
    "dict(journal_entries=0)",
    "dict(generations=-1)",
    "dict(action_timeout=-1)",
    "dict(inline_sleep_ms=float('nan'))",
]


def deep_list(n: int) -> list:
    out: list = []
    for _ in range(n):
        out = [out]
    return out


def py_value(kind: str) -> Any:
    """A Python value for a run input or a call-log field (built in the worker: not all are picklable)."""
    if kind == "nan":
        return float("nan")
    if kind == "inf":
        return float("inf")
    if kind == "set":
        return {1, 2}
    if kind == "frozenset":
        return frozenset([1])
    if kind == "bytes":
        return b"\x00\xff"
    if kind == "object":
        return object()
    if kind == "surrogate":
        return "a\ud800b"
    if kind == "surrogate-key":
        return {"\udc00": 1}
    if kind == "tuple-key":
        return {(1, 2): 3}
    if kind.startswith("deep"):
        return deep_list(int(kind[4:]))
    if kind == "cyclic":
        x: list = []
        x.append(x)
        return x
    if kind == "huge5m":
        return "h" * 5_000_000
    if kind == "huge30m":
        return "h" * 30_000_000
    if kind == "int-keys":
        return {1: "a", 2: "b"}
    if kind == "bigint":
        return 2**80
    if kind == "nested-set":
        return {"a": [1, {"b": {3}}]}
    if kind == "complex":
        return 1j
    if kind == "none":
        return None
    if kind == "empty":
        return {}
    raise KeyError(kind)


def make_case(seed: int, i: int) -> dict[str, Any]:
    """Case ``i`` of ``seed``: plain data (built into Python values by the worker)."""
    rng = random.Random(f"{seed}:{i}")
    names = list(WEIGHTS)
    category = rng.choices(names, weights=[WEIGHTS[n] for n in names])[0]
    case: dict[str, Any] = {"i": i, "category": category, "profile": "fast", "source": None, "label": ""}
    if category == "syntax":
        tokens = [rng.choice(SYNTAX_TOKENS) for _ in range(rng.randint(1, 12))]
        if rng.random() < 0.3:
            tokens.insert(rng.randrange(len(tokens) + 1), "return await actions.echo(1);")
        case["source"] = " ".join(tokens) if rng.random() < 0.7 else "\n".join(tokens)
        case["label"] = "token soup"
    elif category == "never-settle":
        case["source"] = rng.choice(NEVER_SETTLE)
        case["label"] = case["source"][:40]
        case["expect"] = "nothing will settle"
    elif category == "infinite-loop":
        case["source"] = rng.choice(INFINITE_LOOPS)
        case["label"] = case["source"][:40]
    elif category == "microtask-loop":
        case["source"] = rng.choice(MICROTASK_LOOPS)
        case["label"] = case["source"][:40]
    elif category == "native-loop":
        case["source"] = rng.choice(NATIVE_LOOPS)
        case["label"] = case["source"][:60]
    elif category == "deep-recursion":
        case["source"] = rng.choice(DEEP_RECURSION)
        case["label"] = case["source"][:40]
    elif category == "memory-bomb":
        case["source"] = rng.choice(MEMORY_BOMBS)
        case["label"] = case["source"][:40]
    elif category == "huge-value":
        size = rng.choice(HUGE_SIZES)
        template = rng.choice(HUGE_VALUES)
        case["source"] = template.replace("{N}", repr(int(size)))
        case["label"] = f"{template[:30]} N={int(size)}"
        case["profile"] = "default"
    elif category == "non-json":
        value = rng.choice(NON_JSON_VALUES)
        sink, template = rng.choice(SINKS)
        case["source"] = HELPERS + template.replace("{V}", value)
        case["label"] = f"{sink} <- {value[:30]}"
    elif category == "action-misbehaves":
        what = rng.choices(
            ["fail", "nonjson", "interrupt", "hang", "ahang", "flood", "huge"], weights=[30, 25, 15, 6, 6, 0.5, 10]
        )[0]
        if what == "fail":
            arg = rng.choice(FATAL_FAILURES) if rng.random() < 0.01 else rng.choice(ACTION_FAILURES)
            call = f"actions.boom({json.dumps(arg)})"
        elif what == "nonjson":
            arg = rng.choice(NONJSON_RETURNS)
            call = f"actions.junk({json.dumps(arg)})"
        elif what == "interrupt":
            arg = rng.choice(INTERRUPT_DATA)
            call = f"actions.pause({json.dumps(arg)})"
        elif what in ("hang", "ahang"):
            arg = rng.choice([0.2, 0.4])
            call = f"actions.{what}({arg})"
        elif what == "huge":
            arg = int(rng.choice(HUGE_SIZES))
            call = f"actions.huge({arg})"
        else:  # more hung calls than the action thread pool has threads
            arg = rng.choice([8, 40])
            case["source"] = (
                f"const rs = await ctx.parallelSettled(Array.from({{length: {arg}}}, () => () => "
                f"actions.hang(1.0))); return rs.map(r => r.status);"
            )
            case["label"] = f"flood {arg} hung calls"
            return case
        pattern = rng.choice(CALL_PATTERNS)
        case["source"] = pattern.replace("{CALL}", call)
        case["label"] = f"{what}:{arg} / {pattern[:24]}"
    elif category == "bad-input":
        kind = rng.choice(BAD_INPUTS)
        case["input_kind"] = kind
        case["source"] = rng.choice(
            [
                "return ctx.input;",
                "return 1;",
                "return await actions.echo(ctx.input);",
                "data.i = ctx.input; return typeof ctx.input;",
            ]
        )
        case["label"] = f"input={kind}"
        case["profile"] = "default"
    elif category == "bad-source":
        kind = rng.choice(BAD_SOURCES)
        case["source_kind"] = kind
        case["label"] = f"source={kind}"
    elif category == "call-log":
        mutations = [_call_log_mutation(rng) for _ in range(rng.randint(1, 3))]
        case["mutations"] = mutations
        case["source"] = (
            CALL_LOG_TEMPLATE
            if rng.random() < 0.8
            else rng.choice(
                ["return 1;", "return await actions.echo(1);", CALL_LOG_TEMPLATE.replace("echo(1)", "echo(9)")]
            )
        )
        case["label"] = "; ".join(m[0] for m in mutations)
    elif category == "bad-answer":
        case["answer_kind"] = rng.choice(BAD_ANSWERS)
        case["label"] = f"resume answer={case['answer_kind']}"
    elif category == "bad-limits":
        case["limits"] = rng.choice(BAD_LIMITS)
        case["source"] = "function f(n) { return f(n + 1) + 1 } return f(0);"
        case["label"] = f"Limits({case['limits']})"
    elif category == "corrupt-store":
        case["corruption"] = rng.choice(
            [
                "truncate",
                "flip",
                "zero-page",
                "garbage-header",
                "blob-runs",
                "blob-journal",
                "blob-options",
                "drop-table",
                "schema",
                "delete-wal",
                "wal-garbage",
                "empty-file",
            ]
        )
        case["offset"] = rng.random()
        case["count"] = rng.randint(1, 64)
        case["label"] = case["corruption"]
    return case


def _call_log_mutation(rng: random.Random) -> tuple:
    kind = rng.choice(["whole", "entry", "field", "length"])
    if kind == "whole":
        return (
            "whole",
            rng.choice(["int", "str", "dict", "set", "bytes", "tuple", "none-list", "nested-list", "empty"]),
        )
    if kind == "entry":
        return (
            "entry",
            rng.randrange(6),
            rng.choice(
                [
                    "int",
                    "str",
                    "list",
                    "true",
                    "empty-dict",
                    "type-none",
                    "type-int",
                    "type-bogus",
                    "type-list",
                    "type-dict",
                    "none",
                ]
            ),
        )
    if kind == "field":
        field = rng.choice(["response", "name", "type", "input", "order", "error"])
        value = rng.choice(
            [
                "drop",
                "nan",
                "inf",
                "set",
                "bytes",
                "deep2000",
                "deep450",
                "surrogate",
                "int",
                "none",
                "list",
                "dict",
                "str",
                "neg",
                "huge",
                "true",
                "empty-str",
            ]
        )
        return ("field", rng.randrange(6), field, value)
    return (
        "length",
        rng.choice(
            ["truncate", "extend-none", "extend-dup", "prepend-none", "shuffle", "repeat", "reverse", "drop-first"]
        ),
    )
