"""The fuzz worker: runs cases on long-lived Sandboxes and answers one JSON line per case.

A worker is a subprocess (``python -m bench.stress --worker``) so that a case that kills it is a crash
and a case that never answers is a hang, not a stuck stress run.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.stress.cases import CALL_LOG_TEMPLATE, deep_list, make_case, py_value
from bench.stress.common import first_line
from bench.stress.mutations import bad_source, corrupt_store_file, mutate_call_log
from jupyter_sandbox import ActionInterrupt, Limits, RunParked, Sandbox, SandboxError, SandboxInterrupt


class BadStr(Exception):
    def __str__(self) -> str:  # an exception whose message itself fails
        raise RuntimeError("str() of the exception failed")


def register_actions(sb: Sandbox, calls: collections.Counter) -> None:
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
            raise AssertionError("asserted")
        if kind == "group":  # a builtin from Python 3.11 on
            group = getattr(builtins, "ExceptionGroup", None)
            raise group("several", [ValueError(1), KeyError(2)]) if group else RuntimeError("several")
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
            return 2**200
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
        data = {
            "plain": {"ok": 1},
            "object": object(),
            "set": {1, 2},
            "nan": float("nan"),
            "deep450": deep_list(450),
            "surrogate": "\ud800",
            "bytes": b"x",
        }[kind]
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
            register_actions(sb, self.calls)
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
                result = sb.resume(run_id, py_value(case["answer_kind"]))
            elif case["category"] == "bad-limits":
                limits = Limits(**eval(case["limits"]))
                probe = Sandbox(limits=limits)
                register_actions(probe, self.calls)
                probe.eval(case["source"])
            else:
                kwargs: dict[str, Any] = {}
                source = case["source"]
                if "input_kind" in case:
                    kwargs["input"] = py_value(case["input_kind"])
                if "source_kind" in case:
                    source = bad_source(case["source_kind"])
                if "mutations" in case:
                    kwargs["call_log"] = mutate_call_log(self.call_log(), case["mutations"])
                result = sb.eval(source, **kwargs)
                run_id = result.run_id
        except BaseException as e:
            exc = e
            # corrupt-store and bad-limits runs live in other Sandboxes: nothing to read back here
            run_id = getattr(e, "run_id", None) if case["category"] not in ("corrupt-store", "bad-limits") else None
            if isinstance(e, SandboxInterrupt) and case["category"] == "action-misbehaves":
                with contextlib.suppress(Exception):  # answer it: resuming must work too
                    sb.resume(e.run_id, "answer")
        outcome, unexpected = classify(exc, case)
        report = {
            "i": case["i"],
            "category": case["category"],
            "label": case["label"],
            "outcome": outcome,
            "unexpected": unexpected,
            "exc": type(exc).__name__ if exc else None,
            "module": type(exc).__module__ if exc else None,
            "msg": first_line(exc)[:300] if exc else None,
        }
        # The same Sandbox must still work, and what it stored must still read back.
        report["poisoned"] = False
        try:
            if run_id:
                sb.run(run_id)
            sb.runs(limit=3)
        except BaseException as e:
            report["poisoned"] = True
            report["poison"] = f"{type(e).__module__}.{type(e).__name__}: {first_line(e)[:200]}"
        try:
            ok = sb.eval("return await actions.sanity(2)").output == 2
            report["usable"] = ok
        except BaseException as e:
            report["usable"] = False
            report["unusable"] = f"{type(e).__name__}: {first_line(e)[:200]}"
        if report["poisoned"] or not report["usable"]:
            self.fresh(profile)  # keep measuring the next cases on a clean Sandbox
        report["seconds"] = round(time.perf_counter() - started, 4)
        return report

    def corrupt_store(self, case: dict[str, Any]) -> Any:
        """Build a small real store, corrupt it one way, then open, list, read and resume through it."""
        workdir = Path(tempfile.mkdtemp(dir=self.tmp))
        path = workdir / "runs.sqlite"
        sb = Sandbox(path)
        register_actions(sb, collections.Counter())
        for k in range(3):
            sb.eval(
                "let s = 0; for (let i = 0; i < 4; i++) s += await actions.echo(i); return {s, k: ctx.input}", input=k
            )
        with contextlib.suppress(SandboxInterrupt):
            sb.eval("await actions.echo(1); return await actions.pause('plain')")
        sb.close()
        corrupt_store_file(path, case)
        try:
            sb = Sandbox(path)
            register_actions(sb, collections.Counter())
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


STDLIB_MESSAGES = (
    "Object of type",
    "Out of range float",
    "Circular reference",
    "embedded null",
    "keys must be",
    "is not JSON serializable",
)


def classify(exc: BaseException | None, case: dict[str, Any]) -> tuple[str, bool]:
    """ok / paused / clear / unclear / bare, and whether it missed the case's stated expectation."""
    expect = case.get("expect")
    if exc is None:
        return "ok", bool(expect)
    if isinstance(exc, (SandboxInterrupt, RunParked)):
        return "paused", bool(expect)
    if isinstance(exc, SandboxError):
        text = first_line(exc)
        return ("clear" if text else "unclear"), bool(expect and expect not in str(exc))
    if type(exc) in (TypeError, ValueError):
        text = first_line(exc)
        return ("unclear" if any(m in text for m in STDLIB_MESSAGES) or not text else "clear"), bool(expect)
    return "bare", bool(expect)


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
        except BaseException as e:
            report = {
                "i": case["i"],
                "category": case["category"],
                "label": case["label"],
                "outcome": "bare",
                "exc": type(e).__name__,
                "msg": f"harness: {first_line(e)}",
                "usable": False,
                "poisoned": False,
                "unexpected": False,
                "seconds": 0,
            }
        out.write(json.dumps(report) + "\n")
        out.flush()
