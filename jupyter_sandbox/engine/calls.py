"""The live calls of one attempt: started, awaited, and what their outcomes do.

The attempt loop (runner.py) hands each ``Dispatch`` effect's work to ``Calls``,
starts the calls (``start``) and waits for them (``wait``); ``Calls`` holds the
tasks in flight and reads the attempt's state, but changes none of it: it asks
the loop to commit (``flush``) and to record an outcome (``record``), and the
loop applies ``outcome_effects(state, slot, outcome)``. Calls made together run
as tasks, each journaled before it starts. A call awaited alone takes two
shortcuts (README "Durability" and "Limits"):

* it commits with its result, in one write, unless it runs past
  ``_VISIBLE_AFTER`` (``deferrable`` says when the earlier write matters);
* a quick plain action runs on the engine's own thread (``inline``), with the
  loop given a turn every ``_TURN_EVERY`` such calls.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable
from typing import Any

from ..actions import Outcome
from ..calling import call_action, describe_exception
from ..errors import Interrupt, SandboxError
from ..stores.rows import Entry
from ..values import detach
from .effects import Append, CallAction, ChildRun, Complete, Effect, ParkChild, Pause, ReplaceExecutor, Settle, Work
from .loop import EngineLoop, run_inline
from .state import AttemptState

__all__ = ["Calls", "outcome_effects"]

log = logging.getLogger("jupyter_sandbox")

_VISIBLE_AFTER = 0.02  # seconds a lone call runs before its call entry is committed ahead of its result
_TURN_EVERY = 16  # calls run in place between two turns of the event loop
# Not a clock or random read: the call's input may be made of it, and a call re-run after a crash must get
# the same input (an idempotency key built from it dedupes the second effect), so the read commits first.
_DEFERRABLE = frozenset({"call", "console", "log", "step", "plan"})


class Calls:
    """The calls of one attempt that run live; ``flush`` and ``record`` are the attempt loop's."""

    def __init__(self, state: AttemptState, flush: Callable[[], None], record: Callable[[int, Outcome], None]) -> None:
        self.state = state
        self.flush, self.record_outcome = flush, record
        self.here: EngineLoop | None = None  # the engine loop running the attempt (none: the caller's own loop)
        self.inflight: dict[int, asyncio.Future[Outcome]] = {}
        self.starting: list[tuple[int, Any]] = []  # calls made since the last turn, not started yet
        self.on_loop: set[int] = set()  # slots whose work runs on the engine's loop (an async def action)
        self.done: collections.deque[tuple[int, asyncio.Future[Outcome]]] = collections.deque()
        self.wakeup: asyncio.Future[None] | None = None
        self.alone = False  # awaiting a lone call: nothing else can happen until it returns
        self.in_place = 0  # calls run in place since the loop last had a turn
        self.watched: float | None = None  # when the lone call in flight started (loop time), if deferred
        self._ticker: asyncio.TimerHandle | None = None
        # (Store) whether the lease is certainly still held; a lapsed lease: the call's write fences
        self._fresh: Callable[[str, int], bool] | None = getattr(state.attempt.store, "lease_fresh", None)

    def abandon(self) -> None:
        """Stop what is in flight (the run is ending); calls never started are closed, not run."""
        for task in self.inflight.values():
            task.cancel()
        for _, work in self.starting:
            work.close()
        self.starting = []

    def dispatch(self, slot: int, work: Work) -> None:
        """Queue a call's work, to start at the loop's next turn (``start``)."""
        attempt = self.state.attempt
        engine = attempt.engine
        if isinstance(work, CallAction):
            timeout = attempt.limits.action_timeout
            call = call_action(
                work.action,
                work.input,
                work.resume,
                engine.executor,
                timeout,
                approval=work.approval,
                inline=self.inline,
            )
            if work.action.is_async:  # it runs on the engine's loop, which must stay free for it
                self.on_loop.add(slot)
        elif isinstance(work, ChildRun):
            call = _child(engine, attempt, slot, work)
        else:
            call = _failed(work.error)
        self.starting.append((slot, call))

    async def start(self) -> None:
        """Start the calls the script just made.

        A lone call, with nothing else that could happen meanwhile (no replay
        left, no timer or event, no other call), is awaited in place: the same
        result, without a task and two turns of the event loop per action.
        A lone action call commits with its result, in one write, unless it is
        still running after ``_VISIBLE_AFTER``: a call the journal has not seen
        runs again on resume exactly as one it has seen without a result does
        (docs/replay.md rule 5), so the earlier write would only buy visibility.
        """
        if self.lone():
            slot, work = self.starting[0]
            self.starting = []
            if self.deferrable(slot):
                self.watch()
            else:
                try:
                    self.flush()  # a child run's id, an approval's answer: committed before the work starts
                except SandboxError:
                    work.close()
                    raise
            self.alone = True
            # Waiting on its lone call (a child run's, say), it cannot be stalled by an action in place; unless
            # that call runs on the loop itself (an async def action), which an action in place would block.
            idle = self.here if slot not in self.on_loop else None
            if idle is not None:
                idle.moving -= 1
            try:
                outcome = await work
            finally:
                if idle is not None:
                    idle.moving += 1
                self.on_loop.discard(slot)
                self.alone = False
                self.watched = None
            self.record_outcome(slot, outcome)
            self.flush()  # committed before the script sees it
            if self.in_place >= _TURN_EVERY:  # a call run in place never yields: let the loop serve the rest
                self.in_place = 0  # (other runs, the scheduler, a cancel from Ctrl-C) now and then
                await asyncio.sleep(0)
            return
        self.flush()  # each entry commits as it happens: a call in flight is in the journal
        starting, self.starting = self.starting, []  # (after the flush: if it fails, abandon closes them)
        self.on_loop.clear()  # (tasks: the run keeps moving while they run)
        for slot, work in starting:
            task = asyncio.ensure_future(work)
            self.inflight[slot] = task
            task.add_done_callback(lambda done, s=slot: self.completed(s, done))

    def inline(self, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """Run a plain action in place when it is the lone call (``actions.Inline``): no thread hop."""
        if not self.alone:
            return False, None
        self.in_place += 1  # (before: a call that raises ran in place too; one refused only adds a turn)
        return run_inline(fn)

    def lone(self) -> bool:
        """One call and nothing else that could happen while it runs."""
        return (
            len(self.starting) == 1
            and not self.inflight
            and not self.state.waits
            and not self.state.replaying
            and not self.state.pausing
            and self.state.outcome is None
        )

    def deferrable(self, slot: int) -> bool:
        """Whether the entries up to this call may wait to commit with its result.

        Not a child run's call (its id must be durable before the child writes
        a journal of its own) nor an approval's answer (a crash must not ask the
        human again) nor one after a clock or random read (``_DEFERRABLE``); notes are rebuilt by a replay.
        Nor while the lease may have lapsed (a paused process): an attempt taken over must start no new
        action, and only the call's fenced write can tell it.
        """
        state = self.state
        request = state.requests.get(slot)
        if request is None or request.body.get("op") != "call" or self._fresh is None:
            return False
        for entry, _ in state.writer.pending:
            if entry.kind not in _DEFERRABLE:
                return False
        return self._fresh(state.attempt.run.id, state.writer.attempt)

    def watch(self) -> None:
        """Have the lone call now starting committed if it still runs ``_VISIBLE_AFTER`` from now.

        One timer serves the attempt's calls (``tick``), not one made and cancelled per call: most calls end
        long before it fires, and a run of quick calls would spend more on the timers than on the calls.
        """
        loop = asyncio.get_running_loop()
        self.watched = loop.time()
        if self._ticker is None:
            self._ticker = loop.call_later(_VISIBLE_AFTER, self.tick)

    def tick(self) -> None:
        """Commit the lone call in flight once it has run ``_VISIBLE_AFTER``; else wait until it would have."""
        self._ticker = None
        if self.watched is None:  # no call in flight: the next one to start sets the timer again
            return
        loop = asyncio.get_running_loop()
        left = self.watched + _VISIBLE_AFTER - loop.time()
        if left > 0:  # a later call than the one the timer was set for
            self._ticker = loop.call_later(left, self.tick)
            return
        self.watched = None
        self.flush_in_flight()

    def flush_in_flight(self) -> None:
        """The call is still running: commit it now, so views show it in flight."""
        try:
            self.flush()
        except SandboxError:  # the entries are kept; the write after the result tries again and raises
            log.debug("could not yet journal a call in flight", exc_info=True)

    def completed(self, slot: int, task: asyncio.Future[Outcome]) -> None:
        self.done.append((slot, task))
        if self.wakeup is not None and not self.wakeup.done():
            self.wakeup.set_result(None)

    async def wait(self, timeout: float | None) -> None:
        if not self.done:
            self.wakeup = asyncio.get_running_loop().create_future()
            try:
                if timeout is None:
                    await self.wakeup
                else:
                    await asyncio.wait((self.wakeup,), timeout=timeout)
            finally:
                self.wakeup = None
        while self.done:
            slot, task = self.done.popleft()
            del self.inflight[slot]
            self.record(slot, task)
        self.flush()  # committed before the script sees any of it

    def record(self, slot: int, task: asyncio.Future[Outcome]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        self.record_outcome(
            slot,
            task.result() if exc is None else Outcome("error", error=describe_exception(exc)),
        )


def outcome_effects(state: AttemptState, slot: int, outcome: Outcome) -> list[Effect]:
    """What a live call's outcome does: its result journaled and settled, a parked child waited on, or
    an interrupt (its own, or a delegated child's) journaled and paused on.

    Example::

        outcome_effects(state, 2, Outcome("ok", value=1, json="1"))
        # [Append("result", 2, {"ok": True, "value": 1}), Settle(2, '{"ok":true,"value":1}')]
    """
    request = state.requests[slot]
    if outcome.kind == "ok":
        # settlement() of that entry, without encoding the value again: outcome.json is its JSON
        return [
            Append("result", slot, {"ok": True, "value": outcome.value}),
            Settle(slot, '{"ok":true,"value":' + outcome.json + "}"),
        ]
    if outcome.kind in ("error", "timeout"):
        error = {**(outcome.error or {}), "action": request.body.get("name")}
        done = Complete("result", slot, {"ok": False, "error": error})
        # a thread that timed out cannot be stopped: never reuse it
        return [ReplaceExecutor(), done] if outcome.kind == "timeout" else [done]
    if outcome.kind == "parked":
        return [ParkChild(slot, outcome.data, outcome.state or [])]
    return _interrupted(state, slot, request, outcome)


def _interrupted(state: AttemptState, slot: int, request: Entry, outcome: Outcome) -> list[Effect]:
    name = request.body.get("name", "?")
    if outcome.kind == "child-interrupt":  # a delegated child paused: its interrupts become ours
        children: list[Interrupt] = outcome.data
        body = {
            "name": name,
            "input": request.body.get("input"),
            "id": children[0].id,
            "child": request.body.get("child"),
            "data": children[0].data,
            "state": None,
            "interrupts": [{"id": i.id, "name": i.name, "data": i.data, "approval": i.approval} for i in children],
        }
        paused: list[Effect] = [
            Pause(
                Interrupt(
                    child.id,
                    child.run_id,
                    slot,
                    child.name,
                    detach(child.input),
                    detach(child.data),
                    detach(child.state),
                    child.approval,
                )
            )
            for child in children
        ]
        return [Append("interrupt", slot, body), *paused]
    run_id = state.attempt.run.id
    interrupt_id = f"{run_id}:{slot}"
    body = {
        "name": name,
        "input": request.body.get("input"),
        "data": outcome.data,
        "state": outcome.state,
        "id": interrupt_id,
        "approval": outcome.approval,
    }
    interrupt = Interrupt(
        interrupt_id,
        run_id,
        slot,
        name,
        detach(request.body.get("input")),
        detach(outcome.data),
        detach(outcome.state),
        outcome.approval,
    )
    return [Append("interrupt", slot, body), Pause(interrupt)]


async def _failed(error: dict[str, Any]) -> Outcome:
    return Outcome("error", error=error)


async def _child(engine: Any, attempt: Any, slot: int, work: ChildRun) -> Outcome:
    """A child run's outcome, its value checked by ``work.returns`` when given (a saved script's output schema)."""
    outcome: Outcome = await engine.run_child(
        attempt, slot, work.op, work.spec, work.child_id, work.answers, work.resumed
    )
    failure = work.returns(outcome.value) if work.returns is not None and outcome.kind == "ok" else None
    return outcome if failure is None else Outcome("error", error=failure)
