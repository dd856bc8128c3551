"""The live calls of one attempt: started, awaited, and journaled as they complete.

A collaborator of ``Runner`` (runner.py), as ``Requests`` is: the request table
dispatches each call here, and the runner's loop starts them (``start``) and
waits for them (``wait``). Calls made together run as tasks, each journaled
before it starts. A call awaited alone takes two shortcuts (README
"Durability" and "Limits"):

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
from ..calling import describe_exception
from ..errors import Interrupt, SandboxError
from ..stores.rows import Entry
from ..values import detach
from .attempt import UNSET
from .journal import settlement
from .loop import run_inline
from .runner_state import RunnerState

__all__ = ["Calls"]

log = logging.getLogger("jupyter_sandbox")

_VISIBLE_AFTER = 0.02  # seconds a lone call runs before its call entry is committed ahead of its result
_TURN_EVERY = 16  # calls run in place between two turns of the event loop
# Not a clock or random read: the call's input may be made of it, and a call re-run after a crash must get
# the same input (an idempotency key built from it dedupes the second effect), so the read commits first.
_DEFERRABLE = frozenset({"call", "console", "log", "step", "plan"})


class Calls:
    """The calls of one ``Runner``'s attempt that run live."""

    def __init__(self, runner: RunnerState):
        self.runner = runner
        self.inflight: dict[int, asyncio.Future[Outcome]] = {}
        self.starting: list[tuple[int, Any]] = []  # calls made since the last turn, not started yet
        self.on_loop: set[int] = set()  # slots whose work runs on the engine's loop (an async def action)
        self.done: collections.deque[tuple[int, asyncio.Future[Outcome]]] = collections.deque()
        self.wakeup: asyncio.Future[None] | None = None
        self.alone = False  # awaiting a lone call: nothing else can happen until it returns
        self.in_place = 0  # calls run in place since the loop last had a turn
        self.watched: float | None = None  # when the lone call in flight started (loop time), if deferred
        self._ticker: asyncio.TimerHandle | None = None

    def abandon(self) -> None:
        """Stop what is in flight (the run is ending); calls never started are closed, not run."""
        for task in self.inflight.values():
            task.cancel()
        for _, work in self.starting:
            work.close()
        self.starting = []

    def dispatch(self, slot: int, work: Any, *, on_loop: bool = False) -> None:
        """Queue a call's work; ``on_loop``: it runs on the engine's loop, which must stay free for it."""
        self.starting.append((slot, work))
        if on_loop:
            self.on_loop.add(slot)

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
                    self.runner._flush()  # a child run's id, an approval's answer: committed before the work starts
                except SandboxError:
                    work.close()
                    raise
            self.alone = True
            # Waiting on its lone call (a child run's, say), it cannot be stalled by an action in place; unless
            # that call runs on the loop itself (an async def action), which an action in place would block.
            idle = self.runner.here if slot not in self.on_loop else None
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
            self.runner._flush()  # committed before the script sees it
            if self.in_place >= _TURN_EVERY:  # a call run in place never yields: let the loop serve the rest
                self.in_place = 0  # (other runs, the scheduler, a cancel from Ctrl-C) now and then
                await asyncio.sleep(0)
            return
        self.runner._flush()  # each entry commits as it happens: a call in flight is in the journal
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
            and not self.runner.waits
            and not self.runner.replaying
            and not self.runner.interrupts
            and self.runner.continue_state is UNSET
            and self.runner.outcome is None
        )

    def deferrable(self, slot: int) -> bool:
        """Whether the entries up to this call may wait to commit with its result.

        Not a child run's call (its id must be durable before the child writes
        a journal of its own) nor an approval's answer (a crash must not ask the
        human again) nor one after a clock or random read (``_DEFERRABLE``); notes are rebuilt by a replay.
        Nor while the lease may have lapsed (a paused process): an attempt taken over must start no new
        action, and only the call's fenced write can tell it.
        """
        request = self.runner.requests.get(slot)
        fresh = getattr(self.runner.store, "lease_fresh", None)  # (Store) a lapsed lease: the call's write is the fence
        return (
            request is not None
            and request.body.get("op") == "call"
            and all(entry.kind in _DEFERRABLE for entry, _ in self.runner.writer.pending)
            and fresh is not None
            and fresh(self.runner.run.id, self.runner.writer.attempt)
        )

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
            self.runner._flush()
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
        self.runner._flush()  # committed before the script sees any of it

    def record(self, slot: int, task: asyncio.Future[Outcome]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        self.record_outcome(
            slot,
            task.result() if exc is None else Outcome("error", error=describe_exception(exc)),
        )

    def record_outcome(self, slot: int, outcome: Outcome) -> None:
        request = self.runner.requests[slot]
        if outcome.kind == "ok":
            self.runner.writer.append("result", slot, ok=True, value=outcome.value)
            # settlement() of that entry, without encoding the value again: outcome.json is its JSON
            self.runner.ready.append((slot, '{"ok":true,"value":' + outcome.json + "}"))
        elif outcome.kind in ("error", "timeout"):
            if outcome.kind == "timeout":
                self.runner.engine.replace_executor()  # a thread that timed out cannot be stopped: never reuse it
            error = {**(outcome.error or {}), "action": request.body.get("name")}
            self.runner.ready.append(
                (slot, settlement(self.runner.writer.append("result", slot, ok=False, error=error)))
            )
        elif outcome.kind == "parked":
            self.runner.waits.children[slot] = outcome.data
            self.runner.waits.nested[slot] = outcome.state or []
        else:
            self.interrupted(slot, request, outcome)

    def interrupted(self, slot: int, request: Entry, outcome: Outcome) -> None:
        name = request.body.get("name", "?")
        if outcome.kind == "child-interrupt":  # a delegated child paused: its interrupts become ours
            children: list[Interrupt] = outcome.data
            self.runner.writer.append(
                "interrupt",
                slot,
                name=name,
                input=request.body.get("input"),
                id=children[0].id,
                child=request.body.get("child"),
                data=children[0].data,
                state=None,
                interrupts=[{"id": i.id, "name": i.name, "data": i.data, "approval": i.approval} for i in children],
            )
            for child in children:
                self.runner.interrupts.append(
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
            return
        interrupt_id = f"{self.runner.run.id}:{slot}"
        self.runner.writer.append(
            "interrupt",
            slot,
            name=name,
            input=request.body.get("input"),
            data=outcome.data,
            state=outcome.state,
            id=interrupt_id,
            approval=outcome.approval,
        )
        self.runner.interrupts.append(
            Interrupt(
                interrupt_id,
                self.runner.run.id,
                slot,
                name,
                detach(request.body.get("input")),
                detach(outcome.data),
                detach(outcome.state),
                outcome.approval,
            )
        )
