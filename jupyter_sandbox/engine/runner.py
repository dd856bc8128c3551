"""The runner: one attempt of one run, from the script's start to where it stops.

The loop (DESIGN.md "Replay"):

1. drain the realm's job queue; read what the script asked for;
2. serve recorded effects from the journal (inside the realm, in the order
   they completed live, one at a time with the queue drained between);
3. dispatch what is not recorded live, journal it, and commit each result
   before the script sees it;
4. repeat until the script settles, an interrupt pauses it, or it parks on a
   timer or an event.

The runner never imports IPython: the notebook watches it through an
``Observer``.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable
from typing import Any

from ..actions import Outcome, detach
from ..errors import CallLogMismatchError, Interrupt, LimitExceeded, SandboxError, ScriptError
from ..stores.rows import Entry
from .attempt import Attempt, AttemptResult, Observer
from .journal import JournalWriter, settlement
from .loop import EngineLoop, here, run_inline
from .realm import Realm
from .requests import FrontierReached, Requests
from .waits import Waits

__all__ = ["Observer", "AttemptResult", "FrontierReached", "Runner"]


log = logging.getLogger("jupyter_sandbox")


_MISSING = object()
_VISIBLE_AFTER = 0.02  # seconds a lone call runs before its call entry is committed ahead of its result
_TURN_EVERY = 16  # calls run in place between two turns of the event loop
# Not a clock or random read: the call's input may be made of it, and a call re-run after a crash must get
# the same input (an idempotency key built from it dedupes the second effect), so the read commits first.
_DEFERRABLE = frozenset({"call", "console", "log", "step", "plan"})


class Runner:
    """Runs one ``Attempt``: the loop below, with ``Requests`` handling what the script asks for."""

    def __init__(self, attempt: Attempt):
        self.attempt = attempt
        self.engine, self.run, self.journal, self.store = attempt.engine, attempt.run, attempt.journal, attempt.store
        self.source = attempt.run.source or ""
        self.plan, self.answers, self.strict = attempt.plan, attempt.answers, attempt.strict
        self.action_names, self.limits = attempt.action_names, attempt.limits
        self.recorded_at, self.observer = attempt.recorded_at, attempt.observer
        self.execute = attempt.execute
        self.writer = JournalWriter(
            attempt.journal, attempt.number, attempt.limits.journal_entries, attempt.limits.journal_bytes, attempt.size
        )
        self.handlers = Requests(self)  # the request table: one handler per kind the prelude queues
        self.inflight: dict[int, asyncio.Future[Outcome]] = {}
        self.starting: list[tuple[int, Any]] = []  # calls made since the last turn, not started yet
        self.done: collections.deque[tuple[int, asyncio.Future[Outcome]]] = collections.deque()
        self.ready: collections.deque[tuple[int, str]] = collections.deque()
        self.wakeup: asyncio.Future[None] | None = None
        self.waits = Waits()
        self.requests: dict[int, Entry] = {}
        self.held: dict[int, Entry] = {}  # a check: requests the recorded run left open, reached again
        self.interrupts: list[Interrupt] = []
        self.continue_state: Any = _MISSING
        self.outcome: dict[str, Any] | None = None  # how the script settled, once it has
        self.replaying = True  # recorded completions may remain to deliver
        self.ran = True  # JS ran since the requests were last taken
        self.alone = False  # awaiting a lone call: nothing else can happen until it returns
        self.in_place = 0  # calls run in place since the loop last had a turn
        self.here: EngineLoop | None = None  # the engine loop running this attempt (none: the caller's own loop)
        self.realm: Realm | None = None

    @property
    def now(self) -> float:
        return self.engine.clock.now()

    # -- the loop ---------------------------------------------------------------

    async def run_attempt(self) -> AttemptResult:
        self.here = here()
        if self.here is not None:
            self.here.moving += 1  # (not while it waits on one lone call: see _start_calls)
        try:
            return await self._loop()
        except asyncio.CancelledError:
            self._abandon()
            self._flush()
            raise
        except SandboxError as error:
            self._abandon()
            return self._failed(error)
        finally:
            if self.here is not None:
                self.here.moving -= 1

    def _abandon(self) -> None:
        """Stop what is in flight (the run is ending); calls never started are closed, not run."""
        for task in self.inflight.values():
            task.cancel()
        for _, work in self.starting:
            work.close()
        self.starting = []

    async def _loop(self) -> AttemptResult:
        self.realm = realm = Realm(self.source, self.limits)
        realm.start(
            {
                "runId": self.run.id,
                "input": self.run.input,
                "strict": self.strict,
                "actions": self.action_names,
                "plan": self.plan,
            },
            self.now,
        )
        while True:
            if self.ran:
                self._pump()
            if self.starting:
                await self._start_calls()
                continue
            if self.continue_state is not _MISSING or self.interrupts:
                if self.inflight:  # calls already started are real effects: let them finish and record them
                    await self._wait_for_completions(None)
                    continue
                return self._paused()
            if self.outcome is not None:
                if self.inflight:
                    await self._wait_for_completions(None)
                    continue
                return self._settled(self.outcome)
            if self.ready:
                self._settle_one()
                continue
            if self.inflight:
                await self._wait_for_completions(self._seconds_to_next_due() if self.waits else None)
                if self.waits:
                    self._fire_due()
                continue
            if self.waits:
                if self._fire_due() or self._deliver_signals():
                    continue
                due = self.waits.next_due()
                if due is not None and not self.waits.children and due - self.now <= self.limits.inline_sleep_ms:
                    await self.engine.clock.sleep(max(due - self.now, 0.0))
                    continue
                return self._parked()
            if realm.undelivered() > 0:
                raise self._diverged()
            if self.held:  # a check replayed everything recorded and waits where the recorded run did
                raise FrontierReached(min(self.held))
            raise ScriptError(
                "Error",
                "the script is waiting on a promise that nothing will settle (no action, timer or event is pending)",
                run_id=self.run.id,
                source=self.source,
            )

    def _pump(self) -> None:
        """Drain, handle requests, deliver the next recorded completion; repeat while replay makes progress."""
        realm = self.realm
        assert realm is not None
        self.ran = False
        while True:
            realm.drain()
            if not self.replaying:
                items = realm.take()
                if items:
                    self.handlers.handle(items)
                return
            step = realm.replay(self.engine.clock.now)  # delivers (draining between) while it can
            if isinstance(step, list):
                self.handlers.handle(step)
                if self.interrupts or self.continue_state is not _MISSING:
                    return
            elif step == -1:
                self.replaying = False
            elif step == 0:
                return

    def _settle_one(self) -> None:
        slot, result = self.ready.popleft()
        assert self.realm is not None
        self.realm.settle(slot, result, self.now)
        self.ran = True

    # -- live calls ---------------------------------------------------------------------

    def _dispatch(self, slot: int, work: Any) -> None:
        self.starting.append((slot, work))

    async def _start_calls(self) -> None:
        """Start the calls the script just made.

        A lone call, with nothing else that could happen meanwhile (no replay
        left, no timer or event, no other call), is awaited in place: the same
        result, without a task and two turns of the event loop per action.
        A lone action call commits with its result, in one write, unless it is
        still running after ``_VISIBLE_AFTER``: a call the journal has not seen
        runs again on resume exactly as one it has seen without a result does
        (DESIGN.md rule 5), so the earlier write would only buy visibility.
        """
        if self._lone():
            slot, work = self.starting[0]
            self.starting = []
            if self._deferrable(slot):
                timer = asyncio.get_running_loop().call_later(_VISIBLE_AFTER, self._flush_in_flight)
            else:
                timer = None
                try:
                    self._flush()  # a child run's id, an approval's answer: committed before the work starts
                except SandboxError:
                    work.close()
                    raise
            self.alone = True
            if self.here is not None:  # waiting on its lone call (a child run's, say), it cannot be stalled
                self.here.moving -= 1
            try:
                outcome = await work
            finally:
                if self.here is not None:
                    self.here.moving += 1
                self.alone = False
                if timer is not None:
                    timer.cancel()
            self._record_outcome(slot, outcome)
            self._flush()  # committed before the script sees it
            if self.in_place >= _TURN_EVERY:  # a call run in place never yields: let the loop serve the rest
                self.in_place = 0  # (other runs, the scheduler, a cancel from Ctrl-C) now and then
                await asyncio.sleep(0)
            return
        self._flush()  # each entry commits as it happens: a call in flight is in the journal
        starting, self.starting = self.starting, []  # (after the flush: if it fails, _abandon closes them)
        for slot, work in starting:
            task = asyncio.ensure_future(work)
            self.inflight[slot] = task
            task.add_done_callback(lambda done, s=slot: self._completed(s, done))

    def inline(self, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """Run a plain action in place when it is the lone call (``actions.Inline``): no thread hop."""
        if not self.alone:
            return False, None
        self.in_place += 1  # (before: a call that raises ran in place too; one refused only adds a turn)
        return run_inline(fn)

    def _lone(self) -> bool:
        """One call and nothing else that could happen while it runs."""
        return (
            len(self.starting) == 1
            and not self.inflight
            and not self.waits
            and not self.replaying
            and not self.interrupts
            and self.continue_state is _MISSING
            and self.outcome is None
        )

    def _deferrable(self, slot: int) -> bool:
        """Whether the entries up to this call may wait to commit with its result.

        Not a child run's call (its id must be durable before the child writes
        a journal of its own) nor an approval's answer (a crash must not ask the
        human again) nor one after a clock or random read (``_DEFERRABLE``); notes are rebuilt by a replay.
        Nor while the lease may have lapsed (a paused process): an attempt taken over must start no new
        action, and only the call's fenced write can tell it.
        """
        request = self.requests.get(slot)
        fresh = getattr(self.store, "lease_fresh", None)  # (Store) a lapsed lease: the call's write is the fence
        return (
            request is not None
            and request.body.get("op") == "call"
            and all(entry.kind in _DEFERRABLE for entry, _ in self.writer.pending)
            and fresh is not None
            and fresh(self.run.id, self.writer.attempt)
        )

    def _flush_in_flight(self) -> None:
        """The call is still running: commit it now, so views show it in flight."""
        try:
            self._flush()
        except SandboxError:  # the entries are kept; the write after the result tries again and raises
            log.debug("could not yet journal a call in flight", exc_info=True)

    def _completed(self, slot: int, task: asyncio.Future[Outcome]) -> None:
        self.done.append((slot, task))
        if self.wakeup is not None and not self.wakeup.done():
            self.wakeup.set_result(None)

    async def _wait_for_completions(self, timeout: float | None) -> None:
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
            self._record(slot, task)
        self._flush()  # committed before the script sees any of it

    def _record(self, slot: int, task: asyncio.Future[Outcome]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        self._record_outcome(
            slot,
            task.result()
            if exc is None
            else Outcome("error", error={"name": type(exc).__name__, "message": f"{type(exc).__name__}: {exc}"}),
        )

    def _record_outcome(self, slot: int, outcome: Outcome) -> None:
        request = self.requests[slot]
        if outcome.kind == "ok":
            self.writer.append("result", slot, ok=True, value=outcome.value)
            # settlement() of that entry, without encoding the value again: outcome.json is its JSON
            self.ready.append((slot, '{"ok":true,"value":' + outcome.json + "}"))
        elif outcome.kind in ("error", "timeout"):
            if outcome.kind == "timeout":
                self.engine.replace_executor()  # a thread that timed out cannot be stopped: never reuse it
            error = {**(outcome.error or {}), "action": request.body.get("name")}
            self.ready.append((slot, settlement(self.writer.append("result", slot, ok=False, error=error))))
        elif outcome.kind == "parked":
            self.waits.children[slot] = outcome.data
        else:
            self._interrupted(slot, request, outcome)

    def _interrupted(self, slot: int, request: Entry, outcome: Outcome) -> None:
        name = request.body.get("name", "?")
        if outcome.kind == "child-interrupt":  # a delegated child paused: its interrupts become ours
            children: list[Interrupt] = outcome.data
            self.writer.append(
                "interrupt",
                slot,
                name=name,
                input=request.body.get("input"),
                id=children[0].id,
                child=request.body.get("child"),
                data=children[0].data,
                state=None,
                interrupts=[{"id": i.id, "name": i.name, "data": i.data} for i in children],
            )
            for child in children:
                self.interrupts.append(
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
        interrupt_id = f"{self.run.id}:{slot}"
        self.writer.append(
            "interrupt",
            slot,
            name=name,
            input=request.body.get("input"),
            data=outcome.data,
            state=outcome.state,
            id=interrupt_id,
            approval=outcome.approval,
        )
        self.interrupts.append(
            Interrupt(
                interrupt_id,
                self.run.id,
                slot,
                name,
                detach(request.body.get("input")),
                detach(outcome.data),
                detach(outcome.state),
                outcome.approval,
            )
        )

    # -- timers and events -------------------------------------------------------------

    def _seconds_to_next_due(self) -> float | None:
        due = self.waits.next_due()
        return None if due is None else max(due - self.now, 0.0) / 1000.0

    def _fire_due(self) -> bool:
        fired = self.waits.take_due(self.now)
        for slot, kind in fired:
            if kind == "timer":
                entry = self.writer.append("fired", slot)
            else:
                entry = self.writer.append("event", slot, event=None, signal=None)
            self.ready.append((slot, settlement(entry)))
        if fired:
            self._flush()
        return bool(fired)

    def _deliver_signals(self) -> bool:
        """Deliver waiting signals: each signal row and its journal entry commit in one transaction."""
        delivered = False
        for slot, wait in sorted(self.waits.events.items()):
            self._flush()
            written: list[tuple[Entry, bytes]] = []

            def write(
                signal_id: int, event: Any, slot: int = slot, written: list[tuple[Entry, bytes]] = written
            ) -> list[tuple[Entry, bytes]]:  # called at once, inside deliver_signal's transaction
                self.writer.append("event", slot, event=event, signal=signal_id)
                written.extend(self.writer.take())
                return written

            if self.store.deliver_signal(self.run.id, wait.accepts, write):
                del self.waits.events[slot]
                self.ready.append((slot, settlement(written[-1][0])))
                self._notify(written)
                delivered = True
        return delivered

    # -- endings ----------------------------------------------------------------------

    def _flush(self) -> None:
        entries = self.writer.take()
        if entries:
            try:
                self.store.append(self.run.id, entries)
            except SandboxError:
                self.writer.pending[:0] = entries  # not written: keep them, in order, for the final write
                raise
            self._notify(entries)

    def _notify(self, entries: list[tuple[Entry, bytes]] | None = None) -> None:
        if entries and type(self.observer).entries is not Observer.entries:  # nobody watching: no dicts
            self._observe("entries", [e.to_dict() for e, _ in entries])

    def _observe(self, hook: str, *args: Any) -> None:
        try:
            getattr(self.observer, hook)(self.run.id, *args)
        except Exception:  # a broken view must never break the run it shows
            log.exception("observer %s failed", hook)

    def _snapshot(self) -> tuple[list[dict[str, str]], Any]:
        if self.realm is None:
            return [], {}
        snap = self.realm.snapshot()
        return snap.get("console", []), snap.get("data", {})

    def _replayed(self) -> int:
        if self.realm is None:
            return 0
        try:
            return len(self.plan["s"]) - self.realm.undelivered()
        except SandboxError:
            return 0

    def _settled(self, outcome: dict[str, Any]) -> AttemptResult:
        console, data = self._snapshot()
        if not outcome["ok"]:
            assert self.realm is not None
            return self._failed(self.realm.script_error(outcome["error"], self.run.id))
        return AttemptResult(
            "completed", output=outcome["value"], console=console, data=data, replayed=self._replayed()
        )

    def _paused(self) -> AttemptResult:
        console, data = self._snapshot()
        if self.continue_state is not _MISSING:
            return AttemptResult(
                "continued", state=self.continue_state, console=console, data=data, replayed=self._replayed()
            )
        return AttemptResult(
            "interrupted", interrupts=self.interrupts, console=console, data=data, replayed=self._replayed()
        )

    def _parked(self) -> AttemptResult:
        console, data = self._snapshot()
        return AttemptResult(
            "parked",
            due=self.waits.next_due(),
            waiting=self.waits.describe(),
            console=console,
            data=data,
            replayed=self._replayed(),
        )

    def _failed(self, error: SandboxError) -> AttemptResult:
        if getattr(error, "run_id", None) is None:
            error.run_id = self.run.id  # type: ignore[attr-defined]
        record = error.to_dict() if hasattr(error, "to_dict") else {"name": type(error).__name__, "message": str(error)}
        if isinstance(error, LimitExceeded):
            record["limit"] = error.limit
        kind = "mismatch" if isinstance(error, CallLogMismatchError) else "error"
        self._keep_notes()
        self.writer.max_entries += 1  # the record of why it failed always fits, even past the cap
        self.writer.max_bytes += 1 << 20
        if kind == "mismatch":
            self.writer.append("mismatch", error.position, **record)  # type: ignore[attr-defined]
        else:
            self.writer.append("error", None, error=record)
        console, data = self._snapshot()
        return AttemptResult("failed", error=error, console=console, data=data, replayed=self._replayed())

    def _keep_notes(self) -> None:
        """Console lines and logs the script queued but the host never took (it spun until the fuel ran out):
        journal them before the failure, so the console shows what ran up to it."""
        if self.realm is None:
            return
        try:
            for item in self.realm.take():
                if item.get("t") in ("console", "log"):
                    self.handlers._note(item["t"], item)
        except SandboxError:  # a realm that can answer nothing more, or a full journal: the failure still says why
            return

    def _mismatch(self, item: dict[str, Any]) -> CallLogMismatchError:
        slot = item["s"]
        return CallLogMismatchError(
            slot,
            self.recorded_at(slot),
            item["attempted"],
            line=item.get("line"),
            column=item.get("column"),
            source=self.source,
            run_id=self.run.id,
        )

    def _diverged(
        self, slot: int | None = None, item: dict[str, Any] | None = None, recorded: dict[str, Any] | None = None
    ) -> CallLogMismatchError:
        """The replay stopped matching: a live effect in a check, or recorded effects never asked for."""
        if item is not None and slot is not None:
            attempted = {
                "type": item["t"] if item["t"] != "call" else "action",
                "name": item.get("name"),
                "input": item.get("input"),
            }
            recorded = recorded if recorded is not None else self.recorded_at(slot)
            return CallLogMismatchError(
                slot,
                recorded,
                attempted,
                line=item.get("line"),
                column=item.get("column"),
                source=self.source,
                run_id=self.run.id,
            )
        position = max(int(self.realm.pending_slot()), 0) if self.realm is not None else 0  # JS gives a float
        return CallLogMismatchError(
            position, self.recorded_at(position), {"type": "nothing"}, source=self.source, run_id=self.run.id
        )
