"""Running generated programs (``programs.py``): the actions, the driver, and comparing two runs.

``build`` makes a Sandbox with the programs' actions; ``drive`` runs a program
to its end, answering each interrupt and signalling each parked wait as the
program says; ``comparable`` blanks what legitimately differs between two live
runs. ``python program_runs.py STORE RUN_ID PLAN`` resumes a stored run in a
fresh process (the timezone property).
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from programs import T0, Program

from jupyter_sandbox import CallLogMismatchError, ManualClock, RunParked, Sandbox, SandboxInterrupt, ScriptError

# -- the actions --------------------------------------------------------------------


class Latency:
    """Virtual action latency: calls in flight finish in order of ``(at + ms, id)``.

    The next call is released only once the engine's loop has been idle for a
    while (the runner is waiting on completions), so every call the script
    could make before it is already waiting here.
    """

    IDLE_TURNS = 30

    def __init__(self) -> None:
        self.waiting: list = []
        self.registered = 0
        self.task: asyncio.Task | None = None
        self.tie = itertools.count()

    async def wait(self, finish: float, id: int) -> None:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        heapq.heappush(self.waiting, (finish, id, next(self.tie), future))
        self.registered += 1
        if self.task is None or self.task.done():
            self.task = loop.create_task(self._release())
        await future

    async def _release(self) -> None:
        while self.waiting:
            seen, idle = -1, 0
            while idle < self.IDLE_TURNS:
                await asyncio.sleep(0)
                seen, idle = (seen, idle + 1) if self.registered == seen else (self.registered, 0)
            *_, future = heapq.heappop(self.waiting)
            if not future.done():
                future.set_result(None)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class Rejected(Exception):
    """The reference run's stand-in for a rejected approval (``normalize`` equates the two messages)."""


def build(role: str, answers: dict[int, Any], store: Any = ":memory:", *, mutate: bool = False) -> Sandbox:
    """A Sandbox with the programs' actions. ``role="reference"`` answers approvals itself
    (no interrupt); ``"interrupted"`` registers the gate with ``approval=True``.
    ``sb.bodies`` counts action bodies run per (name, input). ``mutate``: the work actions
    change their input in place, and every result they returned before."""
    sb = Sandbox(store, clock=ManualClock(start=T0))
    latency = Latency()
    bodies: collections.Counter = collections.Counter()
    sb.bodies = bodies  # type: ignore[attr-defined]

    returned: list = []

    def worker(name: str):
        async def work(inp):
            await latency.wait(inp["at"] + inp["ms"], inp["id"])
            bodies[(name, canonical(inp))] += 1
            if inp["fail"]:
                raise ValueError(f"{name} {inp['id']} failed")
            result = {"id": inp["id"], "by": name, "val": inp["val"]}
            if mutate:
                inp["val"] = "changed by the action"
                for earlier in returned:
                    earlier["val"] = "changed later"
                returned.append(result)
            return result

        sb.action(work, name=name)

    worker("work")
    worker("work2")

    @sb.action
    async def ident(inp):
        bodies[("ident", canonical(inp))] += 1
        return inp

    def gate_body(inp):
        bodies[("gate", str(inp["id"]))] += 1  # by id: an edited answer changes the input
        return {"gated": inp}

    if role == "reference":

        @sb.action(name="gate")
        async def auto_gate(inp):
            answer = answers[inp["id"]]
            approved = answer is True or (isinstance(answer, dict) and answer.get("approved"))
            if not approved:
                raise Rejected()
            return gate_body(answer.get("input", inp) if isinstance(answer, dict) else inp)
    else:
        sb.action(gate_body, name="gate", approval=True)
    return sb


@dataclass
class Pause:
    kind: str  # "interrupt" or "parked"
    console: list
    data: Any
    call_log: list


@dataclass
class Outcome:
    status: str  # "completed" or "failed"
    run_id: str
    output: Any = None
    console: list = field(default_factory=list)
    data: Any = None
    call_log: list = field(default_factory=list)
    error: dict | None = None
    pauses: list[Pause] = field(default_factory=list)


def signal_for(program: Program, parked: RunParked) -> dict:
    signals = program.signals
    for wait in parked.waiting:
        kind = (wait.get("match") or {}).get("type")
        if kind in signals:
            return signals[kind]
    raise AssertionError(f"the run parked on {parked.waiting!r}, which no signal of the program answers")


def drive(sb: Sandbox, program: Program, first=None, *, stop_after_pauses: int | None = None) -> Outcome | str:
    """Run a program to its end: answer each interrupt as the program says, signal each parked wait.

    ``first`` makes the first attempt (default: ``sb.eval(program.source)``). With
    ``stop_after_pauses`` it returns the run id after that many pauses instead.
    """
    attempt = first or (lambda: sb.eval(program.source))
    pauses: list[Pause] = []
    run_id = None
    for _ in range(500):
        try:
            result = attempt()
        except SandboxInterrupt as it:
            run_id = it.run_id
            pauses.append(Pause("interrupt", list(it.console), it.data, list(it.call_log)))
            chosen = it.interrupts if program.answer_all else it.interrupts[:1]
            answers = {i.id: program.answers[i.input["id"]] for i in chosen}
            attempt = lambda run_id=run_id, answers=answers: sb.resume(run_id, answers=answers)  # noqa: E731
        except RunParked as parked:
            run_id = parked.run_id
            pauses.append(Pause("parked", list(parked.console), parked.data, list(parked.call_log)))
            event = signal_for(program, parked)
            attempt = lambda run_id=run_id, event=event: sb.signal(run_id, event)  # noqa: E731
        except CallLogMismatchError:
            raise
        except ScriptError as error:
            run_id = error.run_id or run_id
            return Outcome(
                "failed",
                run_id,
                error=_error(error),
                pauses=pauses,
                call_log=list(sb.call_log(run_id)),
                console=_console(sb, run_id),
                data=None,
            )
        else:
            if result is None:
                raise AssertionError("a signal to a parked run did not resume it")
            return Outcome(
                "completed",
                result.run_id,
                result.output,
                list(result.console),
                result.data,
                list(result.call_log),
                pauses=pauses,
            )
        if stop_after_pauses is not None and len(pauses) >= stop_after_pauses:
            return run_id
    raise AssertionError("the run did not finish in 500 attempts")


def _error(error: ScriptError) -> dict:
    return {
        "type": type(error).__name__,
        "name": error.name,
        "message": error.message,
        "action": getattr(error, "action", None),
    }


def _console(sb: Sandbox, run_id: str) -> list:
    return [{"level": e["level"], "message": e["message"]} for e in sb.run(run_id).entries if e["kind"] == "console"]


# -- comparing two runs --------------------------------------------------------------

_REJECTED = re.compile(r"(Rejected|\w+ was rejected(: .*)?)", re.S)


def normalize(value: Any) -> Any:
    """Blank what differs between two live runs (clock and random reads, the reference's rejection text)."""
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"~now"}:
            return {"~now": "*"}
        if set(value) == {"~rand"}:
            return {"~rand": "*"}
        out = {k: normalize(v) for k, v in value.items()}
        if "~err" in value and isinstance(value.get("msg"), str) and _REJECTED.fullmatch(value["msg"]):
            out["msg"] = "<rejected>"
        return out
    return value


def normalize_call_log(log: list) -> list:
    out = []
    for entry in log:
        if entry is None:
            out.append(None)
            continue
        entry = {k: v for k, v in entry.items() if k != "order"}  # completion order: see the module docstring
        if entry["type"] in ("now", "random"):
            entry["response"] = "*"
        entry = normalize(entry)
        error = entry.get("error")
        if isinstance(error, dict) and error.get("name") == "Rejected":
            # the reference's stand-in is a Python exception, so it carries a traceback a human's rejection has not
            entry["error"] = {**{k: v for k, v in error.items() if k != "traceback"}, "message": "<rejected>"}
        out.append(entry)
    return out


def normalize_console(lines: list) -> list:
    out = []
    for line in lines:
        label, _, text = line["message"].partition(" ")
        try:
            shown = json.dumps(normalize(json.loads(text)), sort_keys=True) if text else text
        except ValueError:
            shown = text
        out.append({"level": line["level"], "message": f"{label} {shown}"})
    return out


def comparable(outcome: Outcome) -> dict:
    error = outcome.error
    if error is not None and _REJECTED.fullmatch(error["message"]):
        error = {**error, "message": "<rejected>"}
    return {
        "status": outcome.status,
        "output": normalize(outcome.output),
        "console": normalize_console(outcome.console),
        "data": normalize(outcome.data),
        "call_log": normalize_call_log(outcome.call_log),
        "error": error,
    }


def typed(value: Any) -> Any:
    """A picture of a Python value that tells apart what ``==`` does not (1 / 1.0 / True, 0.0 / -0.0)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, (list, tuple)):
        return ("list", [typed(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(k, typed(v)) for k, v in value.items()])
    return ("?", type(value).__name__, repr(value))


# -- resuming in another process --------------------------------------------------------


def plan_of(program: Program) -> dict:
    """What a fresh process needs to drive a stored run on: the answers and the signals."""
    return {
        "answers": {str(k): v for k, v in program.answers.items()},
        "answer_all": program.answer_all,
        "signals": program.signals,
    }


@dataclass
class StoredProgram:
    """A program as a fresh process knows it: its run holds the source."""

    answers: dict
    answer_all: bool
    signals: dict
    source: str = ""


def main(argv: list[str]) -> None:
    """``python programs.py STORE RUN_ID PLAN_JSON``: resume a paused run to its end, print it comparable."""
    store, run_id, plan = argv[0], argv[1], json.loads(argv[2])
    program = StoredProgram({int(k): v for k, v in plan["answers"].items()}, plan["answer_all"], plan["signals"])
    sb = build("interrupted", program.answers, store)
    pending = sb.run(run_id).pending
    if pending:
        chosen = pending if program.answer_all else pending[:1]
        answers = {p["id"]: program.answers[_gate_id(sb, run_id, p)] for p in chosen}
        first = lambda: sb.resume(run_id, answers=answers)  # noqa: E731
    else:  # parked on an event
        waiting = [{"match": e.get("match")} for e in _open_waits(sb, run_id)]
        event = next(program.signals[w["match"]["type"]] for w in waiting if w["match"]["type"] in program.signals)
        first = lambda: sb.signal(run_id, event)  # noqa: E731
    outcome = drive(sb, program, first)  # type: ignore[arg-type]
    print(json.dumps(comparable(outcome)))


def _gate_id(sb: Sandbox, run_id: str, pending: dict) -> int:
    entry = next(e for e in sb.run(run_id).entries if e["kind"] == "call" and e.get("slot") == pending["position"])
    return entry["input"]["id"]


def _open_waits(sb: Sandbox, run_id: str) -> list[dict]:
    entries = sb.run(run_id).entries
    done = {e.get("slot") for e in entries if e["kind"] in ("event", "fired", "result")}
    return [e for e in entries if e["kind"] == "wait" and e.get("slot") not in done]


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
