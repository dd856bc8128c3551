#!/usr/bin/env python
"""Adversarial stress run: bad input, faults, concurrency and escape probes, with figures.

    python bench/stress.py              # the full run (about 6-9 minutes on 2 cores)
    python bench/stress.py --quick      # a smoke run (well under a minute)
    python bench/stress.py --only fuzz --cases 2000 --seed 7

It prints a summary (cases tried per category, crashes, hangs, bare errors,
double executions, corrupted stores, escapes found, wall time) and writes it to
``bench/results/stress.md``. Every count is bounded and every case is
time-bounded, so the run always ends.

Sections:

* **fuzz** — generated bad input (seeded; case ``i`` of seed ``s`` is always
  the same case): syntax errors, scripts waiting on nothing, infinite loops
  (also in the job queue), deep recursion, memory bombs, huge values, values
  that are not JSON through every sink, actions that raise / hang / return
  junk / interrupt with junk, bad run inputs and sources, corrupted call logs,
  corrupted store files. Cases run in worker subprocesses fed one case at a
  time: a worker that dies is a **crash**, a case with no answer within
  ``--hang-after`` seconds is a **hang** (the worker is killed and replaced).
  Each outcome is classified: ok / paused, a *clear* error (a
  ``SandboxError``, or a TypeError/ValueError raised by our own validation), an
  *unclear* one (a stdlib TypeError/ValueError whose message names no context),
  or *bare* (anything else: AttributeError, KeyError, JSONDecodeError,
  UnicodeEncodeError, RecursionError, sqlite3/cbor2/quickjs exceptions...).
  After every case the same Sandbox must still run a script that calls an
  action, and the run just made (and the run list) must still read back.
* **faults** — SIGKILL at random moments during runs and during resumes
  (0 corrupted stores, 0 journaled actions executed twice), a real full disk
  (an 8 MiB tmpfs mostly taken by a filler file, when ``mount`` works; the run
  is resumed after the filler is deleted) and a read-only remount.
* **concurrency** — threads calling ``eval`` at once on one Sandbox, processes
  sharing one store, double approvals (threads and processes), concurrent
  signals: 0 double executions, 0 lost journal entries.
* **escapes** — every probe of ``tests/test_escapes.py``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import random
import selectors
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from jupyter_sandbox import (ActionInterrupt, Limits, RunParked, Sandbox, SandboxError,  # noqa: E402
                             SandboxInterrupt)

# =====================================================================================================
# The generator: case i of seed s, always the same
# =====================================================================================================

HELPERS = ("const deep = (n) => { let a = []; for (let i = 0; i < n; i++) a = [a]; return a };\n"
           "const cyclic = () => { const o = {}; o.self = o; return o };\n")

NON_JSON_VALUES = [
    "() => 1", "function named() {}", "Symbol('s')", "cyclic()", "10n", "[1, undefined, 3]", "NaN",
    "Infinity", "-Infinity", "'\\ud800'", "'x\\udc00y'", "({'\\ud800': 1})", "({'a\\udfff': [1]})",
    "new Map([[1, 2]])", "new Set([1])", "new Date(NaN)", "/re/g", "new Uint8Array(4)", "new Proxy({}, {})",
    "new (class K { constructor() { this.a = 1 } })()", "new Error('e')",
    "({get boom() { throw new Error('getter') }})", "[, 1]", "new ArrayBuffer(8)", "Promise.resolve(1)",
    "new WeakMap()", "[1.5e308 * 10]", "deep(450)", "deep(398)", "deep(401)", "deep(2000)", "deep(700)",
    "({toJSON() { throw new Error('toJSON') }})", "Object.create(null)", "({[Symbol.toPrimitive]() { throw 1 }})",
    "{a: {b: {c: [1, {d: undefined}]}}}", "[[[NaN]]]", "({x: 1n})", "'\\u0000'", "'a'.repeat(3e5)",
    "new Proxy([], {get() { throw new Error('trap') }})", "Object.freeze([1, 2])", "new Number(1)",
    "new String('s')", "({__proto__: null, a: 1})", "({'__proto__': 1})", "({get [Symbol.toStringTag]() { throw 1 }})",
    "-0", "1e400", "'\\u2028\\u2029'", "[Array(3)]",
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
    "{", "}", "(", ")", "[", "]", "=>", "function", "async", "await", "return", "let x =", "const", "var",
    "'unterminated", '"also', "`tmpl ${", "/*", "*/", "//", "/re", "class", "yield", "super()", "new.target",
    "#priv", "@dec", "\\u{110000}", "\u0000", "\ufeff", "\u2028", "\r", "\ud800", "if", "else", "for (;;",
    "import x from 'y'", "export default 1", "<!--", "-->", "#!/bin/sh", "?.", "??=", "...", ",", ";", "=",
    "1", "'ok'", "x", "actions.echo(", "ctx.", "try", "catch", "finally", "with (x)", "debugger", "label:",
    "break label", "continue", "0x", "1e", "08", "\\", "@", "%", "in", "of", "delete", "void", "typeof",
    "let let", "enum", "implements", "static", "get", "set", "`", "${", "}}", "))", "]]",
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
    "while (true) {}", "for (;;) {}", "do {} while (true);", "while (true) { try { for (;;) {} } catch (e) {} }",
    "await actions.echo(1); for (;;) {}", "const o = {get x() { for (;;) {} }}; await actions.echo(o);",
    "data.x = {get y() { for (;;) {} }}; return 1;", "return {get y() { for (;;) {} }};",
    "[3, 1, 2].sort(() => { for (;;) {} });", "JSON.parse('[1]', () => { for (;;) {} });",
    "'aaaa'.replace(/a/g, () => { for (;;) {} });", "new Proxy({}, {get() { for (;;) {} }}).x;",
    "console.log({toString() { for (;;) {} }}); return 1;", "class A { static { for (;;) {} } }",
    "return /(a+)+$/.test('a'.repeat(40) + 'b');", "function* g() { for (;;) yield 1 } for (const x of g()) {}",
    "let i = 0; while (i >= 0) i++;", "try { for (;;) {} } finally { for (;;) {} }",
    "throw {get message() { for (;;) {} }};", "await ctx.step({toString() { for (;;) {} }}, () => 1);",
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
    "return 'x'.repeat({N});", "return new Array({N}).fill(1).length;", "return new Array({N}).fill(1);",
    "return (await actions.echo('x'.repeat({N}))).length;", "console.log('x'.repeat({N})); return 1;",
    "ctx.log('info', 'x'.repeat({N})); return 1;", "data.big = 'x'.repeat({N}); return 1;",
    "throw new Error('x'.repeat({N}));", "return Array.from({length: Math.min({N}, 3e5)}, (_, i) => ({i, s: 'ab'}));",
    "return Object.fromEntries(Array.from({length: Math.min({N}, 2e5)}, (_, i) => ['k' + i, i]));",
    "let s = ''; for (let i = 0; i < Math.min({N}, 2e5); i++) s += 'r' + i; return await actions.echo(s);",
    "return (await actions.huge({N})).length;", "const h = await actions.huge({N}); return h;",
    "await ctx.sleep(1e308); return 1;", "return await ctx.waitForEvent({}, {timeout: 1e300});",
]
HUGE_SIZES = [1e3, 1e5, 1e6, 4e6, 9e6, 3e7]

ACTION_FAILURES = ["value", "key", "custom-str", "recursion", "memory", "assert", "group", "generator-exit",
                   "cancelled", "stop-iteration"]
FATAL_FAILURES = ["system-exit", "keyboard-interrupt"]  # BaseExceptions: rare here, each may cost a hang
NONJSON_RETURNS = ["set", "nan", "inf", "object", "bytes", "surrogate", "surrogate-key", "tuple-key",
                   "deep398", "deep450", "deep2000", "cyclic", "bigint", "generator", "coroutine",
                   "str-subclass", "weird-keys"]
INTERRUPT_DATA = ["plain", "object", "set", "nan", "deep450", "surrogate", "bytes"]
CALL_PATTERNS = [
    "return await {CALL};",
    "try { return await {CALL} } catch (e) { return 'caught ' + e.name + ': ' + e.message }",
    "return await Promise.all([{CALL}, actions.echo(1)]);",
    "{CALL}; return 1;",
    "return (await ctx.parallelSettled([() => {CALL}, () => {CALL}])).map(r => r.status);",
    "await actions.echo(0); return await {CALL};",
]

BAD_INPUTS = ["nan", "inf", "set", "bytes", "object", "surrogate", "surrogate-key", "tuple-key", "deep398",
              "deep450", "deep2000", "cyclic", "huge5m", "huge30m", "int-keys", "bigint", "nested-set",
              "complex", "frozenset", "none", "empty"]
BAD_SOURCES = ["bytes", "none", "int", "nul", "surrogate", "over-256k", "exactly-256k", "bom", "crlf",
               "comments-only", "empty", "u2028", "bytes-like-list", "only-newlines", "deep-parens", "many-lines"]

CALL_LOG_TEMPLATE = ("const a = await actions.echo(1); const t = Date.now(); const r = Math.random();\n"
                     "const b = await actions.echo([a, 2]); await ctx.sleep(1); return [a, b, typeof t, typeof r];")

WEIGHTS = {
    "syntax": 9, "never-settle": 5, "infinite-loop": 4, "microtask-loop": 0.1, "native-loop": 0.1, "deep-recursion": 4,
    "memory-bomb": 3, "huge-value": 3, "non-json": 20, "action-misbehaves": 14, "bad-input": 5,
    "bad-source": 3, "call-log": 20, "corrupt-store": 3, "bad-answer": 2, "bad-limits": 0.3,
}

BAD_ANSWERS = ["object", "surrogate", "surrogate-key", "deep450", "deep2000", "set", "nan", "bytes", "cyclic",
               "tuple-key", "complex", "huge5m", "none", "empty", "bigint"]
BAD_LIMITS = ["dict(stack_bytes=256 << 20)", "dict(stack_bytes=80 << 20)", "dict(memory_bytes=100_000)",
              "dict(stack_bytes=10_000)", "dict(stack_bytes=True)", "dict(memory_bytes=True)",
              "dict(fuel_seconds=float('nan'))", "dict(journal_entries=0)", "dict(generations=-1)",
              "dict(action_timeout=-1)", "dict(inline_sleep_ms=float('nan'))"]


def deep_list(n: int) -> list:
    out: list = []
    for _ in range(n):
        out = [out]
    return out


def _py_value(kind: str) -> Any:
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
        return 2 ** 80
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
        what = rng.choices(["fail", "nonjson", "interrupt", "hang", "ahang", "flood", "huge"],
                           weights=[30, 25, 15, 6, 6, 0.5, 10])[0]
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
            case["source"] = (f"const rs = await ctx.parallelSettled(Array.from({{length: {arg}}}, () => () => "
                              f"actions.hang(1.0))); return rs.map(r => r.status);")
            case["label"] = f"flood {arg} hung calls"
            return case
        pattern = rng.choice(CALL_PATTERNS)
        case["source"] = pattern.replace("{CALL}", call)
        case["label"] = f"{what}:{arg} / {pattern[:24]}"
    elif category == "bad-input":
        kind = rng.choice(BAD_INPUTS)
        case["input_kind"] = kind
        case["source"] = rng.choice(["return ctx.input;", "return 1;", "return await actions.echo(ctx.input);",
                                     "data.i = ctx.input; return typeof ctx.input;"])
        case["label"] = f"input={kind}"
        case["profile"] = "default"
    elif category == "bad-source":
        kind = rng.choice(BAD_SOURCES)
        case["source_kind"] = kind
        case["label"] = f"source={kind}"
    elif category == "call-log":
        mutations = [_call_log_mutation(rng) for _ in range(rng.randint(1, 3))]
        case["mutations"] = mutations
        case["source"] = CALL_LOG_TEMPLATE if rng.random() < 0.8 else rng.choice(
            ["return 1;", "return await actions.echo(1);", CALL_LOG_TEMPLATE.replace("echo(1)", "echo(9)")])
        case["label"] = "; ".join(m[0] for m in mutations)
    elif category == "bad-answer":
        case["answer_kind"] = rng.choice(BAD_ANSWERS)
        case["label"] = f"resume answer={case['answer_kind']}"
    elif category == "bad-limits":
        case["limits"] = rng.choice(BAD_LIMITS)
        case["source"] = "function f(n) { return f(n + 1) + 1 } return f(0);"
        case["label"] = f"Limits({case['limits']})"
    elif category == "corrupt-store":
        case["corruption"] = rng.choice(["truncate", "flip", "zero-page", "garbage-header", "blob-runs",
                                         "blob-journal", "blob-options", "drop-table", "schema", "delete-wal",
                                         "wal-garbage", "empty-file"])
        case["offset"] = rng.random()
        case["count"] = rng.randint(1, 64)
        case["label"] = case["corruption"]
    return case


def _call_log_mutation(rng: random.Random) -> tuple:
    kind = rng.choice(["whole", "entry", "field", "length"])
    if kind == "whole":
        return ("whole", rng.choice(["int", "str", "dict", "set", "bytes", "tuple", "none-list", "nested-list",
                                     "empty"]))
    if kind == "entry":
        return ("entry", rng.randrange(6), rng.choice(["int", "str", "list", "true", "empty-dict", "type-none",
                                                      "type-int", "type-bogus", "type-list", "type-dict", "none"]))
    if kind == "field":
        field = rng.choice(["response", "name", "type", "input", "order", "error"])
        value = rng.choice(["drop", "nan", "inf", "set", "bytes", "deep2000", "deep450", "surrogate", "int", "none",
                            "list", "dict", "str", "neg", "huge", "true", "empty-str"])
        return ("field", rng.randrange(6), field, value)
    return ("length", rng.choice(["truncate", "extend-none", "extend-dup", "prepend-none", "shuffle", "repeat",
                                  "reverse", "drop-first"]))


# =====================================================================================================
# The worker: runs cases on long-lived Sandboxes, reports one JSON line per case
# =====================================================================================================


class BadStr(Exception):
    def __str__(self) -> str:  # an exception whose message itself fails
        raise RuntimeError("str() of the exception failed")


def _register(sb: Sandbox, calls: collections.Counter) -> None:
    import asyncio

    @sb.action
    def echo(x):
        return x

    @sb.action(timeout=10)
    def sanity(x):  # the "still usable?" probe: a per-action timeout so a loaded machine cannot fail it
        return x

    @sb.action
    def boom(kind):
        calls["boom"] += 1
        if kind == "value":
            raise ValueError("bad value")
        if kind == "key":
            raise KeyError("missing")
        if kind == "custom-str":
            raise BadStr()
        if kind == "recursion":
            def f():
                return f()
            return f()
        if kind == "memory":
            raise MemoryError()
        if kind == "assert":
            assert False, "asserted"
        if kind == "group":
            raise ExceptionGroup("several", [ValueError(1), KeyError(2)])
        if kind == "generator-exit":
            raise GeneratorExit()
        if kind == "cancelled":
            raise asyncio.CancelledError()
        if kind == "stop-iteration":
            return next(iter([]))
        if kind == "system-exit":
            raise SystemExit(3)
        if kind == "keyboard-interrupt":
            raise KeyboardInterrupt()
        raise RuntimeError(kind)

    @sb.action
    def junk(kind):
        if kind == "set":
            return {1, 2}
        if kind == "nan":
            return float("nan")
        if kind == "inf":
            return [float("inf")]
        if kind == "object":
            return object()
        if kind == "bytes":
            return b"x"
        if kind == "surrogate":
            return "\ud800"
        if kind == "surrogate-key":
            return {"\ud800": 1}
        if kind == "tuple-key":
            return {(1, 2): 1}
        if kind.startswith("deep"):
            return deep_list(int(kind[4:]))
        if kind == "cyclic":
            d: dict = {}
            d["d"] = d
            return d
        if kind == "bigint":
            return 2 ** 200
        if kind == "generator":
            return (i for i in range(3))
        if kind == "coroutine":
            async def c():
                return 1
            co = c()
            co.close()
            return co
        if kind == "str-subclass":
            class S(str):
                pass
            return S("s")
        if kind == "weird-keys":
            return {None: 1, True: 2, 1.5: 3}
        return kind

    @sb.action
    def pause(kind, resume=None):
        if resume is not None:
            return resume.value
        data = {"plain": {"ok": 1}, "object": object(), "set": {1, 2}, "nan": float("nan"),
                "deep450": deep_list(450), "surrogate": "\ud800", "bytes": b"x"}[kind]
        raise ActionInterrupt(data=data, state=data if kind != "plain" else None)

    @sb.action
    def hang(seconds):
        time.sleep(seconds)
        return "woke"

    @sb.action
    async def ahang(seconds):
        await asyncio.sleep(seconds)
        return "woke"

    @sb.action
    def huge(n):
        return "y" * int(n)


PROFILES = {
    "fast": Limits(fuel_seconds=0.1, memory_bytes=16 << 20, action_timeout=0.1),
    "default": Limits(fuel_seconds=1.0, action_timeout=0.1),
}


class Worker:
    def __init__(self, seed: int):
        self.seed = seed
        self.sandboxes: dict[str, Sandbox] = {}
        self.calls: collections.Counter = collections.Counter()
        self.template_log: list | None = None
        self.tmp = Path(tempfile.mkdtemp(prefix="jsbx-stress-"))

    def sandbox(self, profile: str) -> Sandbox:
        if profile not in self.sandboxes:
            sb = Sandbox(limits=PROFILES[profile])
            _register(sb, self.calls)
            self.sandboxes[profile] = sb
        return self.sandboxes[profile]

    def fresh(self, profile: str) -> None:
        old = self.sandboxes.pop(profile, None)
        if old is not None:
            with contextlib.suppress(Exception):
                old.close()

    def call_log(self) -> list:
        if self.template_log is None:
            sb = self.sandbox("fast")
            self.template_log = [dict(e) if e else e for e in sb.eval(CALL_LOG_TEMPLATE).call_log]
        return [dict(e) if isinstance(e, dict) else e for e in self.template_log]

    def run(self, case: dict[str, Any]) -> dict[str, Any]:
        self.done = getattr(self, "done", 0) + 1
        if self.done % 150 == 0:  # in-memory stores grow with every run: start over now and then
            for profile in list(self.sandboxes):
                self.fresh(profile)
        started = time.perf_counter()
        profile = case.get("profile", "fast")
        sb = self.sandbox(profile)
        run_id = None
        exc: BaseException | None = None
        result: Any = None
        try:
            if case["category"] == "corrupt-store":
                result = self.corrupt_store(case)
            elif case["category"] == "bad-answer":
                try:
                    sb.eval("return await actions.pause('plain')")
                except SandboxInterrupt as it:
                    run_id = it.run_id
                result = sb.resume(run_id, _py_value(case["answer_kind"]))
            elif case["category"] == "bad-limits":
                limits = Limits(**eval(case["limits"]))  # noqa: S307 - our own fixed strings
                probe = Sandbox(limits=limits)
                _register(probe, self.calls)
                probe.eval(case["source"])
            else:
                kwargs: dict[str, Any] = {}
                source = case["source"]
                if "input_kind" in case:
                    kwargs["input"] = _py_value(case["input_kind"])
                if "source_kind" in case:
                    source = _bad_source(case["source_kind"])
                if "mutations" in case:
                    kwargs["call_log"] = _mutate_call_log(self.call_log(), case["mutations"])
                result = sb.eval(source, **kwargs)
                run_id = result.run_id
        except BaseException as e:  # noqa: BLE001 - classifying everything is the point
            exc = e
            # corrupt-store and bad-limits runs live in other Sandboxes: nothing to read back here
            run_id = getattr(e, "run_id", None) if case["category"] not in ("corrupt-store", "bad-limits") else None
            if isinstance(e, SandboxInterrupt) and case["category"] == "action-misbehaves":
                with contextlib.suppress(Exception):  # answer it: resuming must work too
                    sb.resume(e.run_id, "answer")
        outcome, unexpected = classify(exc, case)
        report = {"i": case["i"], "category": case["category"], "label": case["label"], "outcome": outcome,
                  "unexpected": unexpected, "exc": type(exc).__name__ if exc else None,
                  "module": type(exc).__module__ if exc else None,
                  "msg": _first_line(exc)[:300] if exc else None}
        # The same Sandbox must still work, and what it stored must still read back.
        report["poisoned"] = False
        try:
            if run_id:
                sb.run(run_id)
            sb.runs(limit=3)
        except BaseException as e:  # noqa: BLE001
            report["poisoned"] = True
            report["poison"] = f"{type(e).__module__}.{type(e).__name__}: {_first_line(e)[:200]}"
        try:
            ok = sb.eval("return await actions.sanity(2)").output == 2
            report["usable"] = ok
        except BaseException as e:  # noqa: BLE001
            report["usable"] = False
            report["unusable"] = f"{type(e).__name__}: {_first_line(e)[:200]}"
        if report["poisoned"] or not report["usable"]:
            self.fresh(profile)  # keep measuring the next cases on a clean Sandbox
        report["seconds"] = round(time.perf_counter() - started, 4)
        return report

    def corrupt_store(self, case: dict[str, Any]) -> Any:
        """Build a small real store, corrupt it one way, then open, list, read and resume through it."""
        workdir = Path(tempfile.mkdtemp(dir=self.tmp))
        path = workdir / "runs.sqlite"
        sb = Sandbox(path)
        _register(sb, collections.Counter())
        for k in range(3):
            sb.eval("let s = 0; for (let i = 0; i < 4; i++) s += await actions.echo(i); return {s, k: ctx.input}",
                    input=k)
        with contextlib.suppress(SandboxInterrupt):
            sb.eval("await actions.echo(1); return await actions.pause('plain')")
        sb.close()
        _corrupt(path, case)
        try:
            sb = Sandbox(path)
            _register(sb, collections.Counter())
            out = []
            for run in sb.runs():
                info = sb.run(run.id)
                out.append(len(info.entries))
                if run.status == "interrupted":
                    sb.resume(run.id, "answer")
            sb.eval("return await actions.echo(1)")
            sb.close()
            return out
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


def _first_line(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001
        text = "<str() failed>"
    return text.splitlines()[0] if text else ""


STDLIB_MESSAGES = ("Object of type", "Out of range float", "Circular reference", "embedded null",
                   "keys must be", "is not JSON serializable")


def classify(exc: BaseException | None, case: dict[str, Any]) -> tuple[str, bool]:
    """ok / paused / clear / unclear / bare, and whether it missed the case's stated expectation."""
    expect = case.get("expect")
    if exc is None:
        return "ok", bool(expect)
    if isinstance(exc, (SandboxInterrupt, RunParked)):
        return "paused", bool(expect)
    if isinstance(exc, SandboxError):
        text = _first_line(exc)
        return ("clear" if text else "unclear"), bool(expect and expect not in str(exc))
    if type(exc) in (TypeError, ValueError):
        text = _first_line(exc)
        return ("unclear" if any(m in text for m in STDLIB_MESSAGES) or not text else "clear"), bool(expect)
    return "bare", bool(expect)


def _bad_source(kind: str) -> Any:
    return {
        "bytes": b"return 1", "none": None, "int": 42, "nul": "return 'a\x00b'", "surrogate": "return '\ud800'",
        "over-256k": "//" + "x" * (256 * 1024), "exactly-256k": "return 1;" + " " * (256 * 1024 - 9),
        "bom": "\ufeffreturn 1", "crlf": "const a = 1;\r\nreturn a;\r\n", "comments-only": "// nothing\n/* here */",
        "empty": "", "u2028": "const a = 1;\u2028return a;", "bytes-like-list": ["return 1"],
        "only-newlines": "\n" * 10000, "deep-parens": "return " + "(" * 50000 + "1" + ")" * 50000,
        "many-lines": "let x = 0;\n" * 20000 + "return x;",
    }[kind]


def _mutate_call_log(log: list, mutations: list) -> Any:
    out: Any = log
    for m in mutations:
        if m[0] == "whole":
            out = {"int": 7, "str": "call log", "dict": {"0": log[0]}, "set": {1}, "bytes": b"[]",
                   "tuple": tuple(log), "none-list": [None] * 6, "nested-list": [log], "empty": []}[m[1]]
        elif not isinstance(out, list):
            continue
        elif m[0] == "entry":
            if m[1] < len(out):
                out[m[1]] = {"int": 1, "str": "entry", "list": [1], "true": True, "empty-dict": {},
                             "type-none": {"type": None, "response": 1}, "type-int": {"type": 5, "response": 1},
                             "type-bogus": {"type": "bogus", "response": 1}, "type-list": {"type": [], "response": 1},
                             "type-dict": {"type": {}, "response": 1}, "none": None}[m[2]]
        elif m[0] == "field":
            _, index, field, value = m
            if index < len(out) and isinstance(out[index], dict):
                entry = dict(out[index])
                if value == "drop":
                    entry.pop(field, None)
                else:
                    entry[field] = _field_value(value)
                out[index] = entry
        elif m[0] == "length":
            kind = m[1]
            if kind == "truncate":
                out = out[: len(out) // 2]
            elif kind == "extend-none":
                out = out + [None] * 3
            elif kind == "extend-dup":
                out = out + out
            elif kind == "prepend-none":
                out = [None] + out
            elif kind == "shuffle":
                out = list(reversed(out[1:])) + out[:1]
            elif kind == "repeat":
                out = out * 100
            elif kind == "reverse":
                out = list(reversed(out))
            elif kind == "drop-first":
                out = out[1:]
    return out


def _field_value(kind: str) -> Any:
    simple = {"int": 5, "none": None, "list": [1, 2], "dict": {"a": 1}, "str": "text", "neg": -1, "true": True,
              "empty-str": "", "huge": "z" * 2_000_000}
    if kind in simple:
        return simple[kind]
    return _py_value(kind)


def _corrupt(path: Path, case: dict[str, Any]) -> None:
    kind, frac, count = case["corruption"], case["offset"], case["count"]
    rng = random.Random(case["i"])
    if kind in ("blob-runs", "blob-journal", "blob-options", "drop-table", "schema"):
        db = sqlite3.connect(path)
        junk = rng.choice([b"\xff\x00\xff", b"\xa0", b"\x01", b"", b"\x9f", rng.randbytes(count)])
        if kind == "blob-runs":
            db.execute("UPDATE runs SET " + rng.choice(["output", "input", "error"]) + " = ?", (junk,))
        elif kind == "blob-options":
            db.execute("UPDATE runs SET options = ?", (junk,))
        elif kind == "blob-journal":
            db.execute("UPDATE run_journal SET body = ? WHERE seq = ?", (junk, rng.randrange(6)))
        elif kind == "drop-table":
            db.execute("DROP TABLE " + rng.choice(["run_journal", "run_attempts", "signals", "meta"]))
        else:
            db.execute("UPDATE meta SET value = ?", (rng.choice(["abc", "-1", "99", ""]),))
        db.commit()
        db.close()
        return
    wal = Path(str(path) + "-wal")
    if kind == "delete-wal":
        wal.unlink(missing_ok=True)
        return
    if kind == "wal-garbage":
        wal.write_bytes(rng.randbytes(4096))
        return
    if kind == "empty-file":
        path.write_bytes(b"")
        return
    data = bytearray(path.read_bytes())
    if kind == "truncate":
        data = data[: int(len(data) * frac)]
    elif kind == "flip":
        for _ in range(count):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == "zero-page":
        page = 4096
        start = rng.randrange(max(len(data) // page, 1)) * page
        data[start : start + page] = bytes(min(page, len(data) - start))
    elif kind == "garbage-header":
        data[:100] = rng.randbytes(100)
    path.write_bytes(bytes(data))


def worker_main(seed: int) -> None:
    """Read case numbers on stdin, answer one JSON line each on stdout."""
    worker = Worker(seed)
    out = sys.stdout
    sys.stdout = sys.stderr  # anything a case prints stays off the protocol
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        case = make_case(seed, int(line))
        try:
            report = worker.run(case)
        except BaseException as e:  # noqa: BLE001 - the harness itself failed on this case
            report = {"i": case["i"], "category": case["category"], "label": case["label"], "outcome": "bare",
                      "exc": type(e).__name__, "msg": f"harness: {_first_line(e)}", "usable": False,
                      "poisoned": False, "unexpected": False, "seconds": 0}
        out.write(json.dumps(report) + "\n")
        out.flush()


# =====================================================================================================
# The parent: feed workers, time-bound every case, count crashes and hangs
# =====================================================================================================


def run_fuzz(cases: int, seed: int, workers: int, hang_after: float, log: Any,
             exclude: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Run cases 0..cases-1 (skipping the categories in ``exclude``) on ``workers`` subprocesses."""
    pending = collections.deque(i for i in range(cases) if make_case(seed, i)["category"] not in exclude)
    reports: list[dict[str, Any]] = []
    sel = selectors.DefaultSelector()
    procs: dict[int, dict[str, Any]] = {}

    def spawn() -> None:
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", "--seed", str(seed)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, bufsize=1, cwd=str(ROOT))
        state = {"proc": proc, "case": None, "since": 0.0, "buffer": ""}
        procs[proc.pid] = state
        sel.register(proc.stdout, selectors.EVENT_READ, state)
        feed(state)

    def feed(state: dict[str, Any]) -> None:
        if pending:
            i = pending.popleft()
            state["case"], state["since"] = i, time.monotonic()
            state["proc"].stdin.write(f"{i}\n")
            state["proc"].stdin.flush()
        else:
            state["case"] = None

    def retire(state: dict[str, Any]) -> None:
        proc = state["proc"]
        with contextlib.suppress(Exception):
            sel.unregister(proc.stdout)
        with contextlib.suppress(Exception):
            proc.kill()
        proc.wait()
        procs.pop(proc.pid, None)

    for _ in range(min(workers, cases)):
        spawn()
    while procs:
        for key, _ in sel.select(timeout=0.2):
            state = key.data
            line = state["proc"].stdout.readline()
            if not line:  # the worker died: the case it held crashed it
                code = state["proc"].wait()
                if state["case"] is not None:
                    case = make_case(seed, state["case"])
                    reports.append({"i": case["i"], "category": case["category"], "label": case["label"],
                                    "outcome": "crash", "exc": f"exit {code}", "msg": None, "usable": False,
                                    "poisoned": False, "unexpected": True, "seconds": 0})
                retire(state)
                if pending:
                    spawn()
                continue
            reports.append(json.loads(line))
            if len(reports) % 1000 == 0:
                log(f"  fuzz: {len(reports)}/{cases} cases")
            feed(state)
            if state["case"] is None:
                retire(state)
        now = time.monotonic()
        for state in list(procs.values()):
            if state["case"] is not None and now - state["since"] > hang_after:
                case = make_case(seed, state["case"])
                reports.append({"i": case["i"], "category": case["category"], "label": case["label"],
                                "outcome": "hang", "exc": None, "msg": f"no answer within {hang_after:g} s",
                                "usable": False, "poisoned": False, "unexpected": True, "seconds": hang_after})
                retire(state)
                if pending:
                    spawn()
    reports.sort(key=lambda r: r["i"])
    return {"reports": reports}


# =====================================================================================================
# Faults: SIGKILL during runs and resumes, a full disk, a read-only store
# =====================================================================================================

EFFECTS = 40
RUN_SOURCE = f"for (let i = 0; i < {EFFECTS}; i++) {{ await actions.effect(i) }} return 'done'"
RESUME_SOURCE = (f"await actions.gate('go');\n"
                 f"for (let i = 0; i < {EFFECTS}; i++) {{ await actions.effect(i) }} return 'done'")

CHILD = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {root!r})
    from jupyter_sandbox import Sandbox
    store, effects, mode, run_id = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    sb = Sandbox(store)
    def record(tag):
        fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, (tag + "\\n").encode())
        os.close(fd)
    @sb.action
    def effect(i):
        record(str(i))
        time.sleep(0.003)
        return i
    @sb.action(approval=True)
    def gate(x):
        record("gate")
        return x
    print("ready", flush=True)
    if mode == "run":
        sb.eval({run_source!r})
    else:
        sb.resume(run_id, True)
""")


def _recorder(sb: Sandbox, effects: Path) -> None:
    def record(tag: str) -> None:
        with open(effects, "a") as f:
            f.write(tag + "\n")

    @sb.action
    def effect(i):
        record(str(i))
        return i

    @sb.action(approval=True)
    def gate(x):
        record("gate")
        return x


def store_health(path: Path) -> tuple[bool, str]:
    """Whether a store passes SQLite's integrity check and every run and journal entry decodes."""
    try:
        db = sqlite3.connect(path)
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
        db.close()
        if check != "ok":
            return False, f"integrity_check: {check}"
        sb = Sandbox(path)
        for run in sb.runs(include_children=True):
            sb.run(run.id)
        sb.close()
        return True, ""
    except Exception as exc:  # noqa: BLE001
        return False, f"{type(exc).__name__}: {exc}"


def journaled_results(sb: Sandbox, run_id: str) -> set[str]:
    done = set()
    entries = sb.run(run_id).entries
    calls = {e["slot"]: e for e in entries if e["kind"] == "call"}
    for e in entries:
        if e["kind"] == "result" and e["slot"] in calls:
            call = calls[e["slot"]]
            done.add("gate" if call["name"] == "gate" else str(call["input"]))
    return done


def kill_trial(workdir: Path, mode: str, rng: random.Random, kills: int) -> dict[str, Any]:
    """Start (mode=run) or resume (mode=resume) a run in a child, SIGKILL it, repeat, then finish it here."""
    store, effects, program = workdir / "runs.sqlite", workdir / "effects.txt", workdir / "child.py"
    first_mode = mode
    program.write_text(CHILD.format(root=str(ROOT), run_source=RUN_SOURCE))
    effects.touch()
    run_id = "-"
    if mode == "resume":
        sb = Sandbox(store)
        _recorder(sb, effects)
        try:
            sb.eval(RESUME_SOURCE)
        except SandboxInterrupt as it:
            run_id = it.run_id
        sb.close()
    # key -> how many times it had run when its result was first seen journaled: any later run of it is a
    # journaled action executed twice (runs before that point are the at-least-once gap of a killed call)
    baseline: dict[str, int] = {}
    corrupted: list[str] = []
    for _ in range(kills):
        child = subprocess.Popen([sys.executable, str(program), str(store), str(effects), mode, run_id],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        child.stdout.readline()  # "ready": the Sandbox is up, the run is starting
        time.sleep(rng.uniform(0.0, 0.25))
        child.send_signal(signal.SIGKILL)
        child.wait()
        healthy, why = store_health(store)
        if not healthy:
            corrupted.append(why)
            break
        sb = Sandbox(store)
        runs = sb.runs()
        counts_now = collections.Counter(effects.read_text().split())
        if runs:
            run_id = runs[0].id
            for key in journaled_results(sb, run_id):
                baseline.setdefault(key, counts_now[key])
        sb.close()
        if mode == "run" and runs:
            mode = "resume"  # later kills hit resumes of the same run
    output = None
    sb = Sandbox(store)
    _recorder(sb, effects)
    if not corrupted:
        runs = sb.runs()
        for _ in range(5):
            runs = sb.runs()
            if not runs:
                output = sb.eval(RUN_SOURCE).output
                break
            if runs[0].status == "completed":
                output = runs[0].output
                break
            try:
                output = sb.resume(runs[0].id, True).output
                break
            except SandboxInterrupt:
                continue
    sb.close()
    counts = collections.Counter(effects.read_text().split())
    expected = {str(i) for i in range(EFFECTS)} | ({"gate"} if first_mode == "resume" else set())
    twice_journaled = sorted(k for k, n in baseline.items() if counts[k] > n)
    repeats = sorted(k for k, n in counts.items() if n > 1)
    return {"output": output, "corrupted": corrupted, "lost": sorted(expected - set(counts)),
            "journaled_twice": twice_journaled, "repeats": repeats}


def run_kill_trials(trials: int, seed: int, log: Any) -> dict[str, Any]:
    rng = random.Random(seed)
    totals = collections.Counter()
    details = []
    with tempfile.TemporaryDirectory(prefix="jsbx-kill-") as tmp:
        for t in range(trials):
            mode = "run" if t % 2 == 0 else "resume"
            workdir = Path(tmp) / f"t{t}"
            workdir.mkdir()
            result = kill_trial(workdir, mode, rng, kills=rng.choice([1, 1, 2, 3]))
            totals[f"{mode} trials"] += 1
            totals["corrupted stores"] += bool(result["corrupted"])
            totals["journaled actions executed twice"] += len(result["journaled_twice"])
            totals["in-flight actions repeated (at-least-once)"] += len(result["repeats"]) - len(
                result["journaled_twice"])
            totals["runs not finished"] += result["output"] != "done"
            totals["effects lost"] += len(result["lost"])
            if result["corrupted"] or result["journaled_twice"] or result["output"] != "done" or result["lost"]:
                details.append({"trial": t, "mode": mode, **result})
            shutil.rmtree(workdir, ignore_errors=True)
            if (t + 1) % 25 == 0:
                log(f"  kill trials: {t + 1}/{trials}")
    return {"totals": dict(totals), "details": details[:10]}


@contextlib.contextmanager
def tmpfs(size: str):
    """A tmpfs of ``size`` mounted on a fresh directory, or None when mounting is not allowed here."""
    where = Path(tempfile.mkdtemp(prefix="jsbx-tmpfs-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True).returncode == 0
    try:
        yield where if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)
        shutil.rmtree(where, ignore_errors=True)


def run_disk_faults(log: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    effects = Path(tempfile.mkdtemp()) / "effects.txt"
    effects.touch()
    with tmpfs("8m") as where:  # room for SQLite's WAL (up to ~4 MB before its 1000-page checkpoint)
        if where is None:
            out["disk-full"] = "skipped (mount not permitted)"
        else:
            filler = where / "filler"
            filler.write_bytes(b"\0" * 7_700_000)
            store = where / "runs.sqlite"
            sb = Sandbox(store)
            _recorder(sb, effects)

            @sb.action
            def bulky(i):
                with open(effects, "a") as f:
                    f.write(f"b{i}\n")
                return "q" * 3000

            source = "for (let i = 0; i < 120; i++) await actions.bulky(i); return 'done'"
            error: BaseException | None = None
            try:
                sb.eval(source)
            except BaseException as e:  # noqa: BLE001
                error = e
            out["disk-full error"] = f"{type(error).__module__}.{type(error).__name__}" if error else "none"
            out["disk-full error is StoreError"] = type(error).__name__ == "StoreError"
            runs = sb.store.list_runs()
            out["disk-full run status after"] = runs[0].status if runs else None
            journaled = journaled_results(sb, runs[0].id) if runs else set()
            filler.unlink()
            try:
                result = sb.resume(runs[0].id)
                out["disk-full resume after freeing space"] = result.output
            except BaseException as e:  # noqa: BLE001
                out["disk-full resume after freeing space"] = f"{type(e).__name__}: {_first_line(e)[:120]}"
            counts = collections.Counter(effects.read_text().split())
            out["disk-full journaled actions executed twice"] = sum(
                1 for k, n in counts.items() if n > 1 and k[1:] in journaled)
            sb.close()
            out["disk-full store healthy after"] = store_health(store)[0]
            # read-only: remount the same tmpfs read-only and use the store
            subprocess.run(["mount", "-o", "remount,ro", str(where)], capture_output=True)
            try:
                ro = Sandbox(store)
                ro.action(lambda x: x, name="effect")
                ro.eval("return await actions.effect(1)")
                out["read-only"] = "no error (!)"
            except BaseException as e:  # noqa: BLE001
                out["read-only"] = f"{type(e).__module__}.{type(e).__name__}: {_first_line(e)[:100]}"
            out["read-only error is StoreError"] = out["read-only"].startswith("jupyter_sandbox.errors.StoreError")
            subprocess.run(["mount", "-o", "remount,rw", str(where)], capture_output=True)
    log("  disk faults done")
    return out


# =====================================================================================================
# Concurrency
# =====================================================================================================

CONC_SOURCE = ("let s = 0; for (let i = 0; i < 5; i++) s += await actions.work([ctx.input, i]);\n"
               "const r = await Promise.all([1, 2, 3].map(j => actions.work([ctx.input, 100 + j])));\n"
               "return s + r.length;")

PROC_CHILD = textwrap.dedent("""
    import os, sys, json, random, time
    sys.path.insert(0, {root!r})
    from jupyter_sandbox import Sandbox, RunBusyError, RunStateError, SandboxError
    store, effects, mode, arg = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    sb = Sandbox(store)
    def record(tag):
        fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, (tag + "\\n").encode())
        os.close(fd)
    @sb.action
    def work(x):
        record("w:%s:%s" % (x[0], x[1]))
        return x[1]
    @sb.action(approval=True)
    def pay(x):
        record("pay:%s" % x)
        time.sleep(0.002)
        return "paid"
    @sb.action
    def after(x):
        record("after:%s" % x)
        return 1
    outcomes = {{}}
    if mode == "runs":
        for k in range(int(arg)):
            tag = "%d-%d" % (os.getpid(), k)
            outcomes[tag] = sb.eval({conc_source!r}, input=tag).output
    elif mode in ("approve", "signal"):
        ids = json.loads(open(arg).read())
        random.Random(os.getpid()).shuffle(ids)
        for rid in ids:
            try:
                if mode == "approve":
                    sb.resume(rid, True)
                else:
                    sb.signal(rid, {{"go": rid}})
                outcomes[rid] = "ok"
            except (RunBusyError, RunStateError) as e:
                outcomes[rid] = type(e).__name__
            except SandboxError as e:
                outcomes[rid] = "error " + type(e).__name__
    print(json.dumps(outcomes))
""")


def journal_complete(sb: Sandbox, run_id: str) -> bool:
    """A completed run's journal: contiguous seq numbers, every call answered by a result."""
    entries = sb.run(run_id).entries
    if [e["seq"] for e in entries] != list(range(len(entries))):
        return False
    calls = {e["slot"] for e in entries if e["kind"] == "call"}
    results = [e["slot"] for e in entries if e["kind"] == "result"]
    return calls == set(results) and len(results) == len(set(results))


def run_concurrency(threads_runs: int, proc_count: int, runs_per_proc: int, approvals: int, log: Any) -> dict:
    out: dict[str, Any] = {}
    tmp = Path(tempfile.mkdtemp(prefix="jsbx-conc-"))
    try:
        # 1. threads calling eval at once on one Sandbox (one file store)
        sb = Sandbox(tmp / "threads.sqlite")
        lock = threading.Lock()
        work_calls: collections.Counter = collections.Counter()

        @sb.action
        def work(x):
            with lock:
                work_calls[(x[0], x[1])] += 1
            time.sleep(0.001)
            return x[1]

        started = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            results = list(pool.map(lambda k: sb.eval(CONC_SOURCE, input=f"t{k}"), range(threads_runs)))
        out["threads: runs"] = threads_runs
        out["threads: wrong outputs"] = sum(r.output != 13 for r in results)
        out["threads: double executions"] = sum(n - 1 for n in work_calls.values() if n > 1)
        out["threads: lost journal entries"] = sum(not journal_complete(sb, r.run_id) for r in results)
        out["threads: seconds"] = round(time.perf_counter() - started, 2)
        sb.close()
        log("  concurrency: threads done")

        # 2. processes sharing one store
        store = tmp / "shared.sqlite"
        effects = tmp / "effects.txt"
        effects.touch()
        Sandbox(store).close()
        program = tmp / "child.py"
        program.write_text(PROC_CHILD.format(root=str(ROOT), conc_source=CONC_SOURCE))
        started = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, str(program), str(store), str(effects), "runs", str(runs_per_proc)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(proc_count)]
        outputs: dict[str, Any] = {}
        failures = 0
        for p in procs:
            stdout, stderr = p.communicate(timeout=300)
            if p.returncode != 0:
                failures += 1
                out.setdefault("processes: failure", stderr.strip().splitlines()[-1:] or [""])
            else:
                outputs.update(json.loads(stdout.strip().splitlines()[-1]))
        sb = Sandbox(store)
        runs = sb.runs(limit=100000)
        counts = collections.Counter(effects.read_text().split())
        out["processes: processes x runs"] = f"{proc_count} x {runs_per_proc}"
        out["processes: failed processes"] = failures
        out["processes: wrong outputs"] = sum(v != 13 for v in outputs.values())
        out["processes: runs not completed"] = sum(r.status != "completed" for r in runs)
        out["processes: double executions"] = sum(n - 1 for n in counts.values() if n > 1)
        out["processes: lost journal entries"] = sum(not journal_complete(sb, r.id) for r in runs)
        out["processes: seconds"] = round(time.perf_counter() - started, 2)
        sb.close()
        log("  concurrency: processes done")

        # 3. double approvals: threads in one Sandbox, then processes sharing the store
        for how in ("threads", "processes"):
            store = tmp / f"approve-{how}.sqlite"
            effects = tmp / f"approve-{how}.txt"
            effects.touch()
            sb = Sandbox(store)
            _register_conc(sb, effects)
            ids = []
            for k in range(approvals):
                try:
                    sb.eval("const r = await actions.pay(ctx.input); return r", input=k)
                except SandboxInterrupt as it:
                    ids.append(it.run_id)
            outcomes: collections.Counter = collections.Counter()
            if how == "threads":
                def approve(rid: str) -> str:
                    try:
                        sb.resume(rid, True)
                        return "ok"
                    except SandboxError as e:
                        return type(e).__name__

                with ThreadPoolExecutor(12) as pool:
                    for res in pool.map(approve, [rid for rid in ids for _ in range(3)]):
                        outcomes[res] += 1
            else:
                sb.close()
                idfile = tmp / "ids.json"
                idfile.write_text(json.dumps(ids))
                procs = [subprocess.Popen([sys.executable, str(program), str(store), str(effects), "approve",
                                           str(idfile)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                         for _ in range(3)]
                for p in procs:
                    stdout, _ = p.communicate(timeout=300)
                    for res in json.loads(stdout.strip().splitlines()[-1]).values():
                        outcomes[res] += 1
                sb = Sandbox(store)
            counts = collections.Counter(effects.read_text().split())
            paid = [n for k, n in counts.items() if k.startswith("pay:")]
            out[f"double approvals ({how}): runs x clicks"] = f"{len(ids)} x 3"
            out[f"double approvals ({how}): outcomes"] = dict(outcomes)
            out[f"double approvals ({how}): double executions"] = sum(n - 1 for n in paid if n > 1)
            out[f"double approvals ({how}): never executed"] = len(ids) - len(paid)
            out[f"double approvals ({how}): runs not completed"] = sum(
                sb.store.get_run(rid).status != "completed" for rid in ids)
            sb.close()
        # 3b. double clicks through the seed-004 path: eval(call_log=it.call_log, resume=Resume(...)) twice
        from jupyter_sandbox import Resume

        store = tmp / "approve-calllog.sqlite"
        effects = tmp / "approve-calllog.txt"
        effects.touch()
        sb = Sandbox(store)
        _register_conc(sb, effects)
        source = "const r = await actions.pay(ctx.input); return r"
        for k in range(approvals):
            try:
                sb.eval(source, input=k)
            except SandboxInterrupt as it:
                for _ in range(2):
                    with contextlib.suppress(SandboxError):
                        sb.eval(source, call_log=it.call_log, resume=Resume(position=it.position, value=True))
        counts = collections.Counter(effects.read_text().split())
        paid = [n for k, n in counts.items() if k.startswith("pay:")]
        out["double approvals (eval call_log, sequential clicks): runs x clicks"] = f"{approvals} x 2"
        out["double approvals (eval call_log, sequential clicks): double executions"] = sum(paid) - approvals
        sb.close()
        log("  concurrency: double approvals done")

        # 4. concurrent signals to parked runs, from three processes
        store = tmp / "signals.sqlite"
        effects = tmp / "signals.txt"
        effects.touch()
        sb = Sandbox(store)
        _register_conc(sb, effects)
        ids = []
        for k in range(approvals // 2):
            try:
                sb.eval("const e = await ctx.waitForEvent({go: ctx.runId}); await actions.after(ctx.runId); "
                        "return e")
            except RunParked as parked:
                ids.append(parked.run_id)
        sb.close()
        idfile = tmp / "signal-ids.json"
        idfile.write_text(json.dumps(ids))
        procs = [subprocess.Popen([sys.executable, str(program), str(store), str(effects), "signal", str(idfile)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
        for p in procs:
            p.communicate(timeout=300)
        sb = Sandbox(store)
        _register_conc(sb, effects)
        for _ in range(3):  # deliver whatever a busy resume left waiting
            for rid in ids:
                if sb.store.get_run(rid).status == "parked":
                    with contextlib.suppress(SandboxError):
                        sb.resume(rid)
        counts = collections.Counter(effects.read_text().split())
        afters = [n for k, n in counts.items() if k.startswith("after:")]
        out["signals: runs x senders"] = f"{len(ids)} x 3"
        out["signals: double executions"] = sum(n - 1 for n in afters if n > 1)
        out["signals: runs not completed"] = sum(sb.store.get_run(rid).status != "completed" for rid in ids)
        out["signals: delivered more than once"] = sum(
            len([e for e in sb.run(rid).entries if e["kind"] == "event" and e.get("event")]) > 1 for rid in ids)
        sb.close()
        log("  concurrency: signals done")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _register_conc(sb: Sandbox, effects: Path) -> None:
    def record(tag: str) -> None:
        fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, (tag + "\n").encode())
        os.close(fd)

    @sb.action(approval=True)
    def pay(x):
        record(f"pay:{x}")
        return "paid"

    @sb.action
    def after(x):
        record(f"after:{x}")
        return 1

    @sb.action
    def work(x):
        record(f"w:{x[0]}:{x[1]}")
        return x[1]


# =====================================================================================================
# Escapes: the probes of tests/test_escapes.py
# =====================================================================================================


def run_escapes(log: Any) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    import test_escapes  # noqa: E402

    found = []
    for probe in test_escapes.PROBES:
        try:
            probe.check(test_escapes.run_probe(probe.script, body=probe.body))
        except AssertionError as exc:
            found.append((probe.name, _first_line(exc)[:160]))
        except Exception as exc:  # noqa: BLE001
            found.append((probe.name, f"{type(exc).__name__}: {_first_line(exc)[:140]}"))
    log("  escapes done")
    return {"probes": len(test_escapes.PROBES), "found": found}


# =====================================================================================================
# The summary
# =====================================================================================================


def summarize(args: Any, sections: dict[str, Any], wall: float) -> str:
    try:
        rev = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                             text=True).stdout.strip()
    except OSError:
        rev = "?"
    lines = [f"# Stress run ({'quick' if args.quick else 'full'})", "",
             f"`python bench/stress.py{' --quick' if args.quick else ''}` — commit {rev}, seed {args.seed}, "
             f"{os.cpu_count()} CPUs, wall time {wall:.0f} s, "
             f"Python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d %H:%M')}.", ""]
    if "fuzz" in sections:
        reports = sections["fuzz"]["reports"]
        by_cat: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for r in reports:
            c = by_cat[r["category"]]
            c["cases"] += 1
            c[r["outcome"]] += 1
            c["unusable after"] += not r.get("usable", False) and r["outcome"] not in ("crash", "hang")
            c["store poisoned"] += bool(r.get("poisoned"))
            c["seconds"] += r.get("seconds", 0)
        cols = ["cases", "ok", "paused", "clear", "unclear", "bare", "crash", "hang", "unusable after",
                "store poisoned"]
        lines += ["## Bad input (generated, subprocess-isolated)", "",
                  "| category | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        total = collections.Counter()
        for cat in sorted(by_cat):
            total.update(by_cat[cat])
            lines.append(f"| {cat} | " + " | ".join(str(by_cat[cat][c]) for c in cols) + " |")
        lines.append("| **total** | " + " | ".join(f"**{total[c]}**" for c in cols) + " |")
        lines += ["", f"Hang = no answer within {args.hang_after:g} s. *clear* = a `SandboxError`, or a "
                  "TypeError/ValueError from our own validation; *unclear* = a stdlib TypeError/ValueError that "
                  "names no context; *bare* = anything else (AttributeError, KeyError, JSONDecodeError, "
                  "UnicodeEncodeError, RecursionError, sqlite3/cbor2/quickjs exceptions...). *unusable after* = "
                  "the same Sandbox could not run `return await actions.sanity(2)` next; *store poisoned* = the "
                  "run just made or the run list no longer reads back.", ""]
        worst = [r for r in reports if r["outcome"] in ("bare", "crash", "hang", "unclear") or r.get("poisoned")
                 or (not r.get("usable") and r["outcome"] not in ("crash", "hang"))]
        kinds = collections.Counter()
        example = {}
        for r in worst:
            what = r["outcome"] if r["outcome"] in ("crash", "hang") else (
                f"{r['outcome']} {r.get('module') or ''}.{r.get('exc')}" if r["outcome"] in ("bare", "unclear")
                else "poisoned " + r.get("poison", "") if r.get("poisoned") else "unusable " + r.get("unusable", ""))
            key = (r["category"], what[:110])
            kinds[key] += 1
            example.setdefault(key, r)
        if kinds:
            lines += ["Distinct failures (category, what, count, an example case):", "",
                      "| category | failure | count | example |", "|---|---|---|---|"]
            for (cat, what), n in kinds.most_common(40):
                ex = example[(cat, what)]
                label = ex["label"].replace("|", "\\|").replace("\n", " ")[:60]
                msg = (ex.get("msg") or "").replace("|", "\\|")[:80]
                lines.append(f"| {cat} | {what.replace('|', '/')} | {n} | #{ex['i']} `{label}` {msg} |")
            lines.append("")
    if "faults" in sections:
        kill = sections["faults"]["kill"]
        lines += ["## Faults", "", "| measure | value |", "|---|---|"]
        for k, v in kill["totals"].items():
            lines.append(f"| SIGKILL: {k} | {v} |")
        for k, v in sections["faults"]["disk"].items():
            lines.append(f"| {k} | {v} |")
        if kill["details"]:
            lines += ["", "Kill trials with a problem: " + "; ".join(
                f"#{d['trial']} {d['mode']}: corrupted={d['corrupted']} twice={d['journaled_twice']} "
                f"output={d['output']!r} lost={d['lost'][:5]}" for d in kill["details"])]
        lines.append("")
    if "concurrency" in sections:
        lines += ["## Concurrency", "", "| measure | value |", "|---|---|"]
        for k, v in sections["concurrency"].items():
            lines.append(f"| {k} | {v} |")
        lines.append("")
    if "escapes" in sections:
        esc = sections["escapes"]
        lines += ["## Escape probes", "", f"{esc['probes']} probes (tests/test_escapes.py); "
                  f"**{len(esc['found'])} found something**:", ""]
        for name, why in esc["found"]:
            lines.append(f"- `{name}`: {why}")
        lines.append("")
    # the headline
    head = ["## Summary", "", "| | |", "|---|---|"]
    if "fuzz" in sections:
        reports = sections["fuzz"]["reports"]
        c = collections.Counter(r["outcome"] for r in reports)
        head += [f"| bad-input cases | {len(reports)} in {len({r['category'] for r in reports})} categories |",
                 f"| crashes of the Python process | {c['crash']} |", f"| hangs (> {args.hang_after:g} s) | {c['hang']} |",
                 f"| bare (non-SandboxError) exceptions | {c['bare']} |", f"| unclear stdlib errors | {c['unclear']} |",
                 f"| Sandbox unusable afterwards | "
                 f"{sum(1 for r in reports if not r.get('usable') and r['outcome'] not in ('crash', 'hang'))} |",
                 f"| store poisoned (run no longer reads back) | {sum(1 for r in reports if r.get('poisoned'))} |"]
    if "faults" in sections:
        t = sections["faults"]["kill"]["totals"]
        head += [f"| SIGKILL trials (runs + resumes) | {t.get('run trials', 0)} + {t.get('resume trials', 0)} |",
                 f"| corrupted stores | {t.get('corrupted stores', 0)} |",
                 f"| journaled actions executed twice | {t.get('journaled actions executed twice', 0)} |"]
    if "concurrency" in sections:
        conc = sections["concurrency"]
        doubles = sum(v for k, v in conc.items() if k.endswith("double executions") and isinstance(v, int))
        lost = sum(v for k, v in conc.items() if k.endswith("lost journal entries") and isinstance(v, int))
        head += [f"| double executions (threads, processes, approvals, signals) | {doubles} |",
                 f"| lost journal entries | {lost} |"]
    if "escapes" in sections:
        head += [f"| escape probes / found something | {sections['escapes']['probes']} / "
                 f"{len(sections['escapes']['found'])} |"]
    head += [f"| wall time | {wall:.0f} s |", ""]
    return "\n".join(lines[:4] + head + lines[4:]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--cases", type=int, help="bad-input cases (default 10000, quick 300)")
    parser.add_argument("--kills", type=int, help="SIGKILL trials, half runs half resumes (default 100, quick 6)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--hang-after", type=float, default=8.0, help="seconds without an answer that make a hang")
    parser.add_argument("--only", help="comma-separated sections: fuzz,faults,concurrency,escapes")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "stress.md"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_main(args.seed)
        return
    cases = args.cases if args.cases is not None else (300 if args.quick else 10_000)
    kills = args.kills if args.kills is not None else (6 if args.quick else 100)
    only = set((args.only or "fuzz,faults,concurrency,escapes").split(","))

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    sections: dict[str, Any] = {}
    if "escapes" in only:
        log("escapes...")
        sections["escapes"] = run_escapes(log)
    if "fuzz" in only:
        log(f"fuzz: {cases} cases on {args.workers} workers...")
        sections["fuzz"] = run_fuzz(cases, args.seed, args.workers, args.hang_after, log)
    if "faults" in only:
        log(f"faults: {kills} SIGKILL trials...")
        sections["faults"] = {"kill": run_kill_trials(kills, args.seed, log), "disk": run_disk_faults(log)}
    if "concurrency" in only:
        log("concurrency...")
        q = args.quick
        sections["concurrency"] = run_concurrency(threads_runs=40 if q else 300, proc_count=2 if q else 4,
                                                  runs_per_proc=5 if q else 40, approvals=10 if q else 100, log=log)
    wall = time.perf_counter() - started
    text = summarize(args, sections, wall)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    raw = out.with_suffix(".json")
    raw.write_text(json.dumps({k: v for k, v in sections.items()}, default=str, indent=1))
    print(text)


if __name__ == "__main__":
    main()
