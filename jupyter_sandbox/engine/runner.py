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
import logging
from typing import Any

from ..actions import Outcome
from ..errors import CallLogMismatchError, SandboxError, ScriptError
from ..stores.rows import Entry
from ..values import to_json
from .attempt import UNSET, Attempt, AttemptResult, Observer
from .calls import Calls, outcome_effects
from .divergence import nothing_asked
from .effects import (
    Append,
    Complete,
    Continue,
    Dispatch,
    Done,
    Effect,
    Fail,
    Hold,
    Observe,
    ParkChild,
    Pause,
    Progress,
    Reopen,
    ReplaceExecutor,
    Request,
    Settle,
    Timer,
    WaitFor,
)
from .failures import located
from .journal import settlement
from .loop import here
from .realm import Realm
from .requests import handle
from .state import AttemptState
from .waits import accepting

__all__ = ["Observer", "AttemptResult", "Runner"]


log = logging.getLogger("jupyter_sandbox")

_SIGNAL_POLL_MS = 50.0  # how often a run sleeping in place on a short waitForEvent timeout looks for signals


class Runner:
    """Runs one ``Attempt``: the loop below, the one owner of the attempt's ``AttemptState``.

    The handlers (``requests.handle``, ``calls.outcome_effects``) return effects; ``apply`` carries them
    out, in order. Nothing else changes ``state``.
    """

    def __init__(self, attempt: Attempt):
        self.attempt = attempt
        self.state = AttemptState.of(attempt)
        self.calls = Calls(self.state, self._flush, self._record)  # the live calls: started, awaited
        self.realm: Realm | None = None

    @property
    def now(self) -> float:
        return self.attempt.engine.clock.now()

    # -- the loop ---------------------------------------------------------------

    async def run_attempt(self) -> AttemptResult:
        self.calls.here = loop = here()
        if loop is not None:
            loop.moving += 1  # (not while it waits on one lone call: see Calls.start)
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
            if loop is not None:
                loop.moving -= 1

    async def _loop(self) -> AttemptResult:
        attempt, state, calls = self.attempt, self.state, self.calls
        self.realm = realm = Realm(attempt.run.source or "", attempt.limits)
        realm.start(
            {
                "runId": attempt.run.id,
                "strict": attempt.strict,
                "actions": attempt.action_names,
                "plan": attempt.plan.to_js(),
                "clockTicks": getattr(attempt.engine.clock, "ticking", True),
            },
            self.now,
            attempt.input_json if attempt.input_json is not None else to_json(attempt.run.input, "the run's input"),
        )
        while True:
            if state.ran:
                self._pump()
            if calls.starting:
                if attempt.engine.closing:  # its Sandbox closed (an action closed it): nothing more starts
                    raise asyncio.CancelledError
                await calls.start()
                continue
            if state.pausing:
                if calls.inflight:  # calls already started are real effects: let them finish and record them
                    await calls.wait(None)
                    continue
                return self._paused()
            if state.outcome is not None:
                if calls.inflight:
                    await calls.wait(None)
                    continue
                return self._settled(state.outcome)
            if state.ready:
                self._settle_one()
                continue
            waits = state.waits
            if calls.inflight:
                await calls.wait(self._seconds_to_next_due() if waits else None)
                if waits:
                    self._deliver_signals() or self._fire_due()
                continue
            if waits:
                # Signals first: an event that came before the runner looked wins over a timeout falling due.
                if self._deliver_signals() or self._fire_due():
                    continue
                due = waits.next_due()
                if due is not None and not waits.children and due - self.now <= attempt.limits.inline_sleep_ms:
                    await self._sleep_in_place(due)
                    continue
                return self._parked()
            if realm.undelivered() > 0:
                position = max(int(realm.pending_slot()), 0)  # JS gives a float
                raise nothing_asked(attempt, position)  # recorded effects the script never asked for
            if state.held:  # a check replayed everything recorded and waits where the recorded run did
                return AttemptResult("reached", replayed=self._replayed())
            raise ScriptError(
                "Error",
                "the script is waiting on a promise that nothing will settle (no action, timer or event is pending)",
                run_id=attempt.run.id,
                source=attempt.run.source or "",
            )

    def _pump(self) -> None:
        """Drain, handle requests, deliver the next recorded completion; repeat while replay makes progress."""
        realm, state = self.realm, self.state
        assert realm is not None
        state.ran = False
        while True:
            realm.drain()
            if not state.replaying:
                items = realm.take()
                if items:
                    self._handle(items)
                return
            step = realm.deliver(self.now)
            if isinstance(step, list):
                self._handle(step)
                if state.pausing:
                    return
            elif step == -1:
                state.replaying = False
            elif step == 0:
                return

    def _handle(self, items: list[dict[str, Any]]) -> None:
        """Each item's effects, applied before the next item is handled (it may read what they changed)."""
        state = self.state
        for item in items:
            self.apply(handle(state, item))

    def _record(self, slot: int, outcome: Outcome) -> None:
        self.apply(outcome_effects(self.state, slot, outcome))

    def apply(self, effects: list[Effect]) -> None:
        """Carry out a handler's effects, in order: the one place the attempt's state changes."""
        state = self.state
        for effect in effects:
            if isinstance(effect, Append):
                state.writer.append(effect.kind, effect.slot, **effect.body)
            elif isinstance(effect, Dispatch):
                self.calls.dispatch(effect.slot, effect.work)
            elif isinstance(effect, Request):
                state.requests[effect.slot] = state.writer.append(effect.kind, effect.slot, **effect.body)
            elif isinstance(effect, Settle):
                state.ready.append((effect.slot, effect.result))
            elif isinstance(effect, Reopen):
                state.requests[effect.slot] = effect.entry
            elif isinstance(effect, Observe):
                self._observe(effect.hook, *effect.args)
            elif isinstance(effect, Complete):
                state.ready.append(
                    (effect.slot, settlement(state.writer.append(effect.kind, effect.slot, **effect.body)))
                )
            elif isinstance(effect, Timer):
                state.waits.timers[effect.slot] = effect.due
            elif isinstance(effect, WaitFor):
                state.waits.events[effect.slot] = effect.wait
            elif isinstance(effect, Pause):
                state.interrupts.append(effect.interrupt)
            elif isinstance(effect, ParkChild):
                state.waits.children[effect.slot] = effect.due
                state.waits.nested[effect.slot] = effect.matches
            elif isinstance(effect, Hold):
                state.held[effect.slot] = effect.entry
            elif isinstance(effect, Progress):
                self.attempt.engine.progress(self.attempt.run.id, effect.patch, self.attempt.observer)
            elif isinstance(effect, Continue):
                state.continue_state = effect.state
            elif isinstance(effect, Done):
                state.outcome = effect.outcome
            elif isinstance(effect, ReplaceExecutor):
                self.attempt.engine.replace_executor()
            elif isinstance(effect, Fail):
                raise effect.error
            else:  # every kind in ``effects.Effect`` is handled above
                raise AssertionError(f"an effect the loop does not know: {effect!r}")

    def _settle_one(self) -> None:
        slot, result = self.state.ready.popleft()
        assert self.realm is not None
        self.realm.settle(slot, result, self.now)
        self.state.ran = True

    # -- timers and events -------------------------------------------------------------

    def _seconds_to_next_due(self) -> float | None:
        due = self.state.waits.next_due()
        return None if due is None else max(due - self.now, 0.0) / 1000.0

    def _fire_due(self) -> bool:
        fired = self.state.waits.take_due(self.now)
        for slot, kind in fired:
            if kind == "timer":
                self.apply([Complete("fired", slot, {})])
            else:
                self.apply([Complete("event", slot, {"event": None, "signal": None})])
        if fired:
            self._flush()
        return bool(fired)

    async def _sleep_in_place(self, due: float) -> None:
        """Sleep until ``due``; while an event is waited for, in slices, until a signal it takes is pending."""
        clock = self.attempt.engine.clock
        while True:
            left = max(due - self.now, 0.0)
            if not self.state.waits.events:
                await clock.sleep(left)
                return
            await clock.sleep(min(left, _SIGNAL_POLL_MS))
            if self.now >= due or self._signal_pending():
                return

    def _signal_pending(self) -> bool:
        """Whether a pending signal matches a wait (a read: delivery takes the write that marks it)."""
        takes = accepting(self.state.waits.matchers())
        return any(takes(event) for _, event in self.attempt.store.pending_signals(self.state.queue))

    def _deliver_signals(self) -> bool:
        """Deliver waiting signals: each signal row and its journal entry commit in one transaction."""
        state, store = self.state, self.attempt.store
        delivered = False
        for slot, wait in sorted(state.waits.events.items()):
            self._flush()
            written: list[tuple[Entry, bytes]] = []

            def write(
                signal_id: int, event: Any, slot: int = slot, written: list[tuple[Entry, bytes]] = written
            ) -> list[tuple[Entry, bytes]]:  # called at once, inside deliver_signal's transaction
                state.writer.append("event", slot, event=event, signal=signal_id)
                written.extend(state.writer.take())
                return written

            if store.deliver_signal(self.attempt.run.id, wait.accepts, write, queue=state.queue):
                del state.waits.events[slot]
                state.ready.append((slot, settlement(written[-1][0])))
                self._notify(written)
                delivered = True
        return delivered

    # -- endings ----------------------------------------------------------------------

    def _flush(self) -> None:
        writer = self.state.writer
        entries = writer.take()
        if entries:
            try:
                self.attempt.store.append(self.attempt.run.id, entries)
            except SandboxError:
                writer.pending[:0] = entries  # not written: keep them, in order, for the final write
                raise
            self._notify(entries)

    def _notify(self, entries: list[tuple[Entry, bytes]] | None = None) -> None:
        if entries and type(self.attempt.observer).entries is not Observer.entries:  # nobody watching: no dicts
            self._observe("entries", [e.to_dict() for e, _ in entries])

    def _observe(self, hook: str, *args: Any) -> None:
        try:
            getattr(self.attempt.observer, hook)(self.attempt.run.id, *args)
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
            return len(self.attempt.plan) - self.realm.undelivered()
        except SandboxError:
            return 0

    def _settled(self, outcome: dict[str, Any]) -> AttemptResult:
        console, data = self._snapshot()
        if not outcome["ok"]:
            assert self.realm is not None
            error = self.realm.script_error(outcome["error"], self.attempt.run.id)
            return self._failed(located(error, self.attempt.journal.entries, self.attempt.run.source or ""))
        return AttemptResult(
            "completed", output=outcome["value"], console=console, data=data, replayed=self._replayed()
        )

    def _paused(self) -> AttemptResult:
        console, data = self._snapshot()
        state = self.state
        if state.continue_state is not UNSET:
            return AttemptResult(
                "continued", state=state.continue_state, console=console, data=data, replayed=self._replayed()
            )
        return AttemptResult(
            "interrupted", interrupts=state.interrupts, console=console, data=data, replayed=self._replayed()
        )

    def _parked(self) -> AttemptResult:
        console, data = self._snapshot()
        waits = self.state.waits
        return AttemptResult(
            "parked",
            due=waits.next_due(),
            waiting=waits.describe(),
            matchers=waits.matchers(),
            console=console,
            data=data,
            replayed=self._replayed(),
        )

    def _failed(self, error: SandboxError) -> AttemptResult:
        if getattr(error, "run_id", None) is None:
            error.run_id = self.attempt.run.id  # type: ignore[attr-defined]
        record = error.to_dict()
        self._keep_notes()
        if isinstance(error, CallLogMismatchError):
            self.state.writer.append("mismatch", error.position, **record)
        else:
            self.state.writer.append("error", None, error=record)
        console, data = self._snapshot()
        return AttemptResult("failed", error=error, console=console, data=data, replayed=self._replayed())

    def _keep_notes(self) -> None:
        """Console lines and logs the script queued but the host never took (it spun until the fuel ran out):
        journal them before the failure, so the console shows what ran up to it."""
        if self.realm is None:
            return
        try:
            self._handle([item for item in self.realm.take() if item.get("t") in ("console", "log")])
        except SandboxError:  # a realm that can answer nothing more, or a full journal: the failure still says why
            return
