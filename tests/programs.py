"""Generated workflow programs: a Hypothesis strategy and the harness that runs them.

A program is a tree of statements drawn from the script's effect vocabulary
(action calls with latencies, results and failures; ``Date.now()``,
``Math.random()``, ``ctx.now()``; short ``ctx.sleep``; ``ctx.step`` nesting;
``ctx.parallel`` / ``Promise.all`` / ``Promise.race`` / ``ctx.parallelSettled``;
``waitForEvent`` answered by ``Sandbox.signal`` or by its timeout; ``console``
and ``data`` writes; approvals answered approve / reject / with edits) that
renders to a script whose output is a pure function of its effects' results.

Deterministic by construction, so two live runs of one program can be compared:

* Action latency is virtual. Each call carries ``at`` (the virtual time its
  branch reached) and ``ms``; ``Latency`` releases concurrent calls in order
  of ``at + ms`` once the engine's loop is idle. Completion order, hence slot
  order and console interleaving, is the same in every run on any machine.
* The clock is a ``ManualClock``: timers fire only when no action is in
  flight, so a sleep never races an action.
* Clock and random reads cross as ``{"~now": t}`` / ``{"~rand": r}``;
  ``normalize`` blanks them when two runs are compared (they differ between
  live runs), while replay inside one run must reproduce them exactly (they
  flow into later action inputs, where any difference is a mismatch).
* An approval that is interrupted and answered later completes later than an
  auto-answered one, and while it waits the calls in flight finish but no new
  call starts. Where a call starts would then depend on when the human
  answered, so a parallel with a gate in a branch is a plain one: it is not
  inside a branch, each branch makes at most one call and ends with the gate
  (the long profile found both shapes). Sleeps and event waits stay out of
  branches.

``Program.source`` is the script; a failing example prints it (``__repr__``).
``program_runs.py`` runs programs and compares runs.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

T0 = 1_700_000_000_000

# Helpers every generated script starts with. T: a JSON-safe, typed picture of a
# value (undefined and -0 stay distinguishable); E: a caught error; W: an action
# call at the branch's virtual time.
PRELUDE = r"""
function T(x) {
  if (x === undefined) return {"~undefined": 1};
  if (typeof x === "number" && Object.is(x, -0)) return {"~minus0": 1};
  if (x instanceof Error) return E(x);
  if (Array.isArray(x)) return x.map(T);
  if (x !== null && typeof x === "object") {
    const o = {};
    for (const k of Object.keys(x)) Object.defineProperty(o, k, {value: T(x[k]), enumerable: true});
    return o;
  }
  return x;
}
function E(e) {
  const action = e && e.action !== undefined ? e.action : null;
  return {"~err": action, name: String(e && e.name), msg: String(e && e.message)};
}
function W(v, id, ms, val, fail, name) {
  const at = v.t;
  v.t += ms;
  return actions[name]({id, at, ms, val, fail});
}
const b0 = [];
const v0 = {t: 0};
"""


def js(value: Any) -> str:
    """A JS expression for a JSON value (the generated values have no ``__proto__`` keys)."""
    return json.dumps(value)


class Names:
    """Fresh variable numbers while rendering."""

    def __init__(self) -> None:
        self.n = itertools.count(1)

    def __call__(self) -> int:
        return next(self.n)


# -- statements ---------------------------------------------------------------------


@dataclass
class Call:
    """``await actions.work({id, at, ms, val, fail})``; a failure is caught (or fails the run)."""

    id: int
    ms: int
    val: Any
    fail: str = "no"  # "no", "caught", "uncaught"
    name: str = "work"
    repeat: int = 1  # > 1: the same call (same input) in a loop

    def render(self, names: Names, b: str, v: str) -> list[str]:
        ms = 0 if self.repeat > 1 else self.ms  # a repeated call keeps its input (and content key)
        expr = f"W({v}, {self.id}, {ms}, {js(self.val)}, {'true' if self.fail != 'no' else 'false'}, {js(self.name)})"
        line = f"{b}.push(T(await {expr}));"
        if self.fail == "caught":
            line = f"try {{ {line} }} catch (e) {{ {b}.push(E(e)); }}"
        if self.repeat > 1:
            line = f"for (let i = 0; i < {self.repeat}; i++) {{ {line} }}"
        return [line]


@dataclass
class Removed:
    """Where a call was edited out: its branch's virtual time still moves on, so later inputs stay as recorded."""

    id: int
    ms: int

    def render(self, names: Names, b: str, v: str) -> list[str]:
        return [f"{v}.t += {self.ms};"]


@dataclass
class Read:
    """A clock or random read, kept as ``{"~now": t}`` / ``{"~rand": r}``; ``via_action`` passes it to an action."""

    id: int
    how: str  # "Date.now", "new Date", "ctx.now", "random"
    via_action: bool = False

    def render(self, names: Names, b: str, v: str) -> list[str]:
        expr = {
            "Date.now": '{"~now": Date.now()}',
            "new Date": '{"~now": new Date().getTime()}',
            "ctx.now": '{"~now": await ctx.now()}',
            "random": '{"~rand": Math.random()}',
        }[self.how]
        if self.via_action:
            return [f"{b}.push(T(await actions.ident({{id: {self.id}, read: {expr}}})));"]
        return [f"{b}.push({expr});"]


@dataclass
class Dates:
    """Date arithmetic that must not follow the host's timezone."""

    id: int

    def render(self, names: Names, b: str, v: str) -> list[str]:
        return [
            f"{b}.push([new Date(2024, 6, 1, 12, 30).getTime(), new Date(0).getHours(), "
            f"new Date(86400000).getDate(), new Date(2024, 0, 1).getTimezoneOffset(), "
            f"new Date(1e12).toString(), Date.UTC(2020, 1, 29)]);"
        ]


@dataclass
class Sleep:
    """``b.push(T(await ctx.sleep(ms)))`` (short: the manual clock waits in place)."""

    id: int
    ms: int
    record: bool = True  # keep what the sleep resolved to (it must be null live and on replay alike)

    def render(self, names: Names, b: str, v: str) -> list[str]:
        return [f"{b}.push(T(await ctx.sleep({self.ms})));" if self.record else f"await ctx.sleep({self.ms});"]


@dataclass
class Wait:
    """``waitForEvent``: answered by a signal (``payload``), or by its timeout (null)."""

    id: int
    payload: Any = None
    timeout: int | None = None  # set: no signal is sent, the wait times out

    def render(self, names: Names, b: str, v: str) -> list[str]:
        options = "" if self.timeout is None else f", {{timeout: {self.timeout}}}"
        return [f"{b}.push(T(await ctx.waitForEvent({{type: 'e{self.id}'}}{options})));"]


@dataclass
class Log:
    id: int
    level: str

    def render(self, names: Names, b: str, v: str) -> list[str]:
        return [f"console.{self.level}('L{self.id}', JSON.stringify({b}.length ? {b}[{b}.length - 1] : null));"]


@dataclass
class Data:
    id: int

    def render(self, names: Names, b: str, v: str) -> list[str]:
        return [f"data['d{self.id}'] = {b}.length ? {b}[{b}.length - 1] : null;"]


@dataclass
class Gate:
    """``await actions.gate({id, x})``: an approval, answered as ``Program.answers[id]`` says."""

    id: int
    x: Any

    def render(self, names: Names, b: str, v: str) -> list[str]:
        return [
            f"try {{ {b}.push(T(await actions.gate({{id: {self.id}, x: {js(self.x)}}}))); }} "
            f"catch (e) {{ {b}.push(E(e)); }}"
        ]


@dataclass
class Step:
    id: int
    body: list

    def render(self, names: Names, b: str, v: str) -> list[str]:
        inner = f"b{names()}"
        lines = [f"{b}.push(await ctx.step('s{self.id}', async () => {{", f"  const {inner} = [];"]
        lines += ["  " + line for s in self.body for line in s.render(names, inner, v)]
        lines += [f"  return {inner};", "}));"]
        return lines


@dataclass
class Par:
    """Concurrent branches: ``ctx.parallel``, ``Promise.all`` or ``ctx.parallelSettled``."""

    id: int
    kind: str
    branches: list  # of statement lists

    def render(self, names: Names, b: str, v: str) -> list[str]:
        numbers = [names() for _ in self.branches]
        lines = [f"const {', '.join(f'v{n} = {{t: {v}.t}}' for n in numbers)};"] if numbers else []
        thunks = []
        for n, body in zip(numbers, self.branches, strict=True):
            inner = [f"const b{n} = [];"] + [line for s in body for line in s.render(names, f"b{n}", f"v{n}")]
            thunks.append("async () => {\n    " + "\n    ".join(inner) + f"\n    return b{n};\n  }}")
        result = f"r{self.id}"
        if self.kind == "Promise.all":
            lines.append(f"const {result} = await Promise.all([" + ", ".join(f"({t})()" for t in thunks) + "]);")
        else:
            lines.append(f"const {result} = await {self.kind}([\n  " + ",\n  ".join(thunks) + "\n]);")
        if numbers:
            lines.append(f"{v}.t = Math.max({', '.join(f'v{n}.t' for n in numbers)});")
        if self.kind == "ctx.parallelSettled":
            lines.append(
                f"{b}.push({result}.map(x => x.status === 'fulfilled' ? {{ok: x.value}} : {{no: E(x.reason)}}));"
            )
        else:
            lines.append(f"{b}.push({result});")
        return lines


@dataclass
class Race:
    """``Promise.race`` of action calls (the earliest ``at + ms`` wins, ties to the lower id);
    ``long_sleep`` adds a timer contender that never wins and stays open."""

    id: int
    calls: list  # of Call
    long_sleep: bool = False

    def render(self, names: Names, b: str, v: str) -> list[str]:
        numbers = [names() for _ in self.calls]
        contenders = [
            f"W(v{n}, {c.id}, {c.ms}, {js(c.val)}, {'true' if c.fail != 'no' else 'false'}, {js(c.name)})"
            for n, c in zip(numbers, self.calls, strict=True)
        ]
        if self.long_sleep:
            contenders.append("ctx.sleep(5000).then(() => 'timer')")
        return [
            f"const {', '.join(f'v{n} = {{t: {v}.t}}' for n in numbers)};",
            f"try {{ {b}.push(T(await Promise.race([{', '.join(contenders)}]))); }} catch (e) {{ {b}.push(E(e)); }}",
            f"{v}.t = Math.min({', '.join(f'v{n}.t' for n in numbers)});",
        ]


# -- programs -----------------------------------------------------------------------


@dataclass
class Program:
    body: list
    answers: dict[int, Any] = field(default_factory=dict)  # gate id -> the answer
    answer_all: bool = False  # answer every pending interrupt at once, or only the first each time
    prefix: str = ""  # source run before the program (e.g. a script polluting Object.prototype)

    @property
    def source(self) -> str:
        names = Names()
        lines = [line for s in self.body for line in s.render(names, "b0", "v0")]
        return PRELUDE.strip() + "\n" + self.prefix + "\n".join(lines) + "\nreturn b0;\n"

    def walk(self, body: list | None = None):
        for s in self.body if body is None else body:
            yield s
            if isinstance(s, Step):
                yield from self.walk(s.body)
            elif isinstance(s, Par):
                for branch in s.branches:
                    yield from self.walk(branch)
            elif isinstance(s, Race):
                yield from s.calls

    @property
    def signals(self) -> dict[str, Any]:
        """Event type -> the signal to send when the run parks on it."""
        return {
            f"e{s.id}": {"type": f"e{s.id}", "payload": s.payload}
            for s in self.walk()
            if isinstance(s, Wait) and s.timeout is None
        }

    def calls(self) -> list[Call]:
        return [s for s in self.walk() if isinstance(s, Call)]

    def __repr__(self) -> str:  # what a failing example prints
        answers = {k: v for k, v in self.answers.items()}
        return f"Program(answers={answers!r}, answer_all={self.answer_all}) with source:\n----\n{self.source}----"


small_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text("abcé☃😀", max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("xyz"), inner, max_size=2),
    max_leaves=4,
)


@st.composite
def programs(
    draw,
    *,
    max_statements: int = 7,
    gates: bool = True,
    long_races: bool = False,
    uncaught: bool = True,
    sleep_values: bool = True,
) -> Program:
    """A random valid program. ``gates``: approvals at random points; ``long_races``: a race
    may leave a timer open; ``uncaught``: an action failure may end the run;
    ``sleep_values``: the script keeps what ``ctx.sleep`` resolved to."""
    ids = itertools.count(1)
    answers: dict[int, Any] = {}

    def call(in_branch: bool, settled: bool) -> Call:
        fail = draw(st.sampled_from(["no", "no", "no", "caught"]))
        if uncaught and (settled or not in_branch) and draw(st.integers(0, 15)) == 0:
            fail = "uncaught"  # rare: it ends the run (in a parallelSettled branch, only the branch)
        repeat = draw(st.sampled_from([1, 1, 1, 1, 2, 3])) if fail == "no" else 1
        return Call(
            next(ids),
            draw(st.sampled_from([0, 1, 2, 5, 10, 20])),
            draw(small_values),
            fail,
            draw(st.sampled_from(["work", "work", "work2"])),
            repeat,
        )

    def gate() -> Gate:
        g = Gate(next(ids), draw(small_values))
        answers[g.id] = draw(
            st.sampled_from(
                [
                    True,
                    False,
                    {"approved": True},
                    {"approved": True, "input": {"id": g.id, "x": "edited"}},
                    {"approved": False, "reason": "not today"},
                ]
            )
        )
        return g

    def statements(budget: int, depth: int, in_branch: bool, settled: bool = False) -> list:
        out: list = []
        count = draw(st.integers(0 if depth else 1, budget))
        for _ in range(count):
            kinds = ["call", "call", "read", "log", "data", "dates"]
            if not in_branch:
                kinds += ["sleep", "wait", "gate", "gate"] if gates else ["sleep", "wait"]
            if depth < 2:
                kinds += ["step", "par", "race"]
            kind = draw(st.sampled_from(kinds))
            if kind == "call":
                out.append(call(in_branch, settled))
            elif kind == "read":
                out.append(
                    Read(
                        next(ids),
                        draw(st.sampled_from(["Date.now", "new Date", "ctx.now", "random"])),
                        draw(st.booleans()),
                    )
                )
            elif kind == "log":
                out.append(Log(next(ids), draw(st.sampled_from(["log", "info", "warn", "error", "debug"]))))
            elif kind == "data":
                out.append(Data(next(ids)))
            elif kind == "dates":
                out.append(Dates(next(ids)))
            elif kind == "sleep":
                out.append(Sleep(next(ids), draw(st.sampled_from([0, 1, 5, 20])), sleep_values))
            elif kind == "wait":
                if draw(st.booleans()):
                    out.append(Wait(next(ids), payload=draw(small_values)))
                else:
                    out.append(Wait(next(ids), timeout=draw(st.sampled_from([0, 10, 50]))))
            elif kind == "gate":
                out.append(gate())
            elif kind == "step":
                out.append(Step(next(ids), statements(3, depth + 1, in_branch, settled)))
            elif kind == "par":
                par_kind = draw(st.sampled_from(["ctx.parallel", "Promise.all", "ctx.parallelSettled"]))
                branches = []
                gated = gates and not in_branch and draw(st.integers(0, 3)) == 0
                for _ in range(draw(st.integers(1, 3))):
                    if gated:  # see the module docstring: at most one call, then perhaps the gate
                        body = [
                            draw(st.sampled_from([lambda n: Log(n, "info"), Data, Dates]))(next(ids))
                            for _ in range(draw(st.integers(0, 2)))
                        ]
                        if draw(st.booleans()):
                            one = dataclasses.replace(call(True, par_kind == "ctx.parallelSettled"), repeat=1)
                            body.insert(draw(st.integers(0, len(body))), one)
                        if draw(st.booleans()):
                            body.append(gate())
                    else:
                        body = statements(3, depth + 1, True, par_kind == "ctx.parallelSettled")
                    branches.append(body)
                out.append(Par(next(ids), par_kind, branches))
            else:
                contenders = [
                    Call(
                        next(ids),
                        draw(st.sampled_from([1, 3, 7, 15])),
                        draw(small_values),
                        draw(st.sampled_from(["no", "no", "caught"])),
                    )
                    for _ in range(draw(st.integers(1, 3)))
                ]
                out.append(Race(next(ids), contenders, long_races and draw(st.booleans())))
        return out

    body = statements(max_statements, 0, False)
    if long_races and not any(isinstance(s, Race) and s.long_sleep for s in body):
        body.insert(draw(st.integers(0, len(body))), Race(next(ids), [Call(next(ids), 1, 0)], True))
    return Program(body, answers, draw(st.booleans()))
