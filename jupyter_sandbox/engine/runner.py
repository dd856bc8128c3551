"""The runner: one attempt of one run, from the script's start to where it stops.

The loop (docs/replay.md has the rules it keeps):

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
from typing import Any

from ..errors import CallLogMismatchError, Interrupt, SandboxError, ScriptError
from ..stores.rows import Entry
from .attempt import UNSET, Attempt, AttemptResult, Observer
from .calls import Calls
from .failures import located
from .journal import JournalWriter, settlement
from .loop import EngineLoop, here
from .realm import Realm
from .requests import Requests
from .waits import Waits, accepting, signal_queue

__all__ = ["Observer", "AttemptResult", "Runner"]


log = logging.getLogger("jupyter_sandbox")

_SIGNAL_POLL_MS = 50.0  # how often a run sleeping in place on a short waitForEvent timeout looks for signals


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
        self.calls = Calls(self)  # the live calls: started, awaited, journaled
        self.ready: collections.deque[tuple[int, str]] = collections.deque()
        self.waits = Waits()
        self.queue = signal_queue(attempt.run)  # the run whose signals this one takes
        self.requests: dict[int, Entry] = {}
        self.held: dict[int, Entry] = {}  # a check: requests the recorded run left open, reached again
        self.interrupts: list[Interrupt] = []
        self.continue_state: Any = UNSET
        self.outcome: dict[str, Any] | None = None  # how the script settled, once it has
        self.replaying = True  # recorded completions may remain to deliver
        self.ran = True  # JS ran since the requests were last taken
        self.here: EngineLoop | None = None  # the engine loop running this attempt (none: the caller's own loop)
        self.realm: Realm | None = None

    @property
    def now(self) -> float:
        return self.engine.clock.now()

    # -- the loop ---------------------------------------------------------------

    async def run_attempt(self) -> AttemptResult:
        self.here = here()
        if self.here is not None:
            self.here.moving += 1  # (not while it waits on one lone call: see Calls.start)
        try:
            return await self._loop()
        except asyncio.CancelledError:
            self.calls.abandon()
            self._flush()
            raise
        except SandboxError as error:
            self.calls.abandon()
            return self._failed(error)
        finally:
            if self.here is not None:
                self.here.moving -= 1

    async def _loop(self) -> AttemptResult:
        self.realm = realm = Realm(self.source, self.limits)
        realm.start(
            {
                "runId": self.run.id,
                "input": self.run.input,
                "strict": self.strict,
                "actions": self.action_names,
                "plan": self.plan.to_js(),
            },
            self.now,
        )
        while True:
            if self.ran:
                self._pump()
            if self.calls.starting:
                await self.calls.start()
                continue
            if self.continue_state is not UNSET or self.interrupts:
                if self.calls.inflight:  # calls already started are real effects: let them finish and record them
                    await self.calls.wait(None)
                    continue
                return self._paused()
            if self.outcome is not None:
                if self.calls.inflight:
                    await self.calls.wait(None)
                    continue
                return self._settled(self.outcome)
            if self.ready:
                self._settle_one()
                continue
            if self.calls.inflight:
                await self.calls.wait(self._seconds_to_next_due() if self.waits else None)
                if self.waits:
                    self._deliver_signals() or self._fire_due()
                continue
            if self.waits:
                # Signals first: an event that came before the runner looked wins over a timeout falling due.
                if self._deliver_signals() or self._fire_due():
                    continue
                due = self.waits.next_due()
                if due is not None and not self.waits.children and due - self.now <= self.limits.inline_sleep_ms:
                    await self._sleep_in_place(due)
                    continue
                return self._parked()
            if realm.undelivered() > 0:
                raise self._diverged()
            if self.held:  # a check replayed everything recorded and waits where the recorded run did
                return AttemptResult("reached", replayed=self._replayed())
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
            step = realm.deliver(self.now)
            if isinstance(step, list):
                self.handlers.handle(step)
                if self.interrupts or self.continue_state is not UNSET:
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

    async def _sleep_in_place(self, due: float) -> None:
        """Sleep until ``due``; while an event is waited for, in slices, until a signal it takes is pending."""
        while True:
            left = max(due - self.now, 0.0)
            if not self.waits.events:
                await self.engine.clock.sleep(left)
                return
            await self.engine.clock.sleep(min(left, _SIGNAL_POLL_MS))
            if self.now >= due or self._signal_pending():
                return

    def _signal_pending(self) -> bool:
        """Whether a pending signal matches a wait (a read: delivery takes the write that marks it)."""
        takes = accepting(self.waits.matchers())
        return any(takes(event) for _, event in self.store.pending_signals(self.queue))

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

            if self.store.deliver_signal(self.run.id, wait.accepts, write, queue=self.queue):
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
            return len(self.plan) - self.realm.undelivered()
        except SandboxError:
            return 0

    def _settled(self, outcome: dict[str, Any]) -> AttemptResult:
        console, data = self._snapshot()
        if not outcome["ok"]:
            assert self.realm is not None
            error = self.realm.script_error(outcome["error"], self.run.id)
            return self._failed(located(error, self.journal.entries, self.source))
        return AttemptResult(
            "completed", output=outcome["value"], console=console, data=data, replayed=self._replayed()
        )

    def _paused(self) -> AttemptResult:
        console, data = self._snapshot()
        if self.continue_state is not UNSET:
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
            matchers=self.waits.matchers(),
            console=console,
            data=data,
            replayed=self._replayed(),
        )

    def _failed(self, error: SandboxError) -> AttemptResult:
        if getattr(error, "run_id", None) is None:
            error.run_id = self.run.id  # type: ignore[attr-defined]
        record = error.to_dict()
        kind = "mismatch" if isinstance(error, CallLogMismatchError) else "error"
        self._keep_notes()
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
