"""The engine's thread: one asyncio loop that owns every realm.

QuickJS contexts must stay on one thread, and a cell must be able to end
while a run is paused (the kernel must stay free to take the answer), so all engine work runs on a daemon
thread with its own loop and a stack larger than any realm's stack limit.
Callers submit coroutines and wait; Ctrl-C while waiting cancels the run.

A plain action awaited alone runs on this thread itself (``run_inline``), not
on a worker: the thread hop costs more than most actions. While it runs, the
loop cannot serve a script that action starts (``sb.eval`` inside an action),
so such a run goes to a helper loop on a thread of its own, and a blocked
helper to its own helper in turn.

Who owns it: the Sandboxes that hold it. Each ``Sandbox`` takes a hold when it is made
(``hold_engine_loop``) and gives it back when it closes (``EngineLoop.release``); the last release
stops the loop, its helpers and their threads, so a process whose Sandboxes are all closed runs no
engine thread. The next Sandbox starts a fresh loop. A Sandbox's hold is a ``LoopHold``: it tracks
the Sandbox's own work on the loop, so ``close()`` stops that work (each run records ``cancelled``) before
the store under it closes, even while other Sandboxes keep the loop running.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ..errors import SandboxClosed, StoreError
from .pool import lend_this_thread

__all__ = ["EngineLoop", "LoopHold", "engine_loop", "here", "hold_engine_loop", "run_inline"]

T = TypeVar("T")
_STACK_BYTES = 64 * 1024 * 1024  # far above any realm's stack limit: QuickJS must overflow first
MAX_HELPERS = 64  # helper loops one chain of actions running in place may nest (serving)


_here = threading.local()  # .engine: the EngineLoop whose thread this is


class EngineLoop:
    """An asyncio loop on a thread of its own (with a large stack) that runs realms until ``close()``."""

    def __init__(self) -> None:
        self.holders = 0  # the Sandboxes holding it (hold_engine_loop): the last release closes it
        self.closed = False
        self.inline = 0  # plain actions this loop's thread is running in place (nested: more than one)
        self.moving = 0  # runs on this loop not waiting on one lone call: an action in place would stall them
        self._helper: EngineLoop | None = None
        self.guest: asyncio.AbstractEventLoop | None = None  # the current loop of the actions run in place
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        previous = threading.stack_size()
        threading.stack_size(_STACK_BYTES)
        try:
            self.thread = threading.Thread(target=self._main, args=(ready,), name="jupyter-sandbox-engine", daemon=True)
            self.thread.start()
        finally:
            threading.stack_size(previous)
        ready.wait()

    def _main(self, ready: threading.Event) -> None:
        _here.engine = self
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(ready.set)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def release(self) -> None:
        """Give back a hold taken by ``hold_engine_loop``; the last one closes the loop (``close``)."""
        global _LOOP
        with _LOCK:
            self.holders -= 1
            if self.holders > 0:
                return
            if _LOOP is self:
                _LOOP = None
        self.close()

    def close(self, timeout: float = 10.0) -> None:
        """Stop the loop and end its thread, and its helpers' in turn; work still on it is cancelled first.

        From the loop's own thread (an action closing the last Sandbox) it stops once that action returns.
        """
        with _LOCK:
            if self.closed:
                return
            self.closed = True
            helper, self._helper = self._helper, None
        if helper is not None:
            helper.close(timeout)

        async def finish() -> None:
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            if others:
                await asyncio.wait(others, timeout=timeout)
            self.loop.stop()

        if not self.thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(finish(), self.loop)
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout + 5.0)  # bounds a hang only: cancelled work ends at its next await

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        self._refuse_if_closed(work)
        return asyncio.run_coroutine_threadsafe(work, self.loop)

    def _refuse_if_closed(self, work: Coroutine[Any, Any, Any]) -> None:
        if self.closed:
            work.close()
            raise StoreError("this Sandbox is closed (its store and its engine loop): make a new one")

    def serving(self) -> EngineLoop:
        """The loop that can take work now: this one, or past every loop blocked in an inline action, a helper.

        At most ``MAX_HELPERS`` deep: past that an action is running a script that runs it again without end
        (each level a thread), and the call is refused with a ``RuntimeError`` its action fails with.
        """
        loop, depth = self, 0
        while loop.inline:
            depth += 1
            if depth > MAX_HELPERS:
                raise RuntimeError(
                    f"Sandbox calls nested more than {MAX_HELPERS} deep inside actions running in place: "
                    "does an action run a script that calls it again without end?"
                )
            with _LOCK:
                if loop._helper is None or not loop._helper.thread.is_alive():
                    loop._helper = EngineLoop()
                loop = loop._helper
        return loop

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the engine thread and wait for it; Ctrl-C cancels it and re-raises."""
        self._refuse_if_closed(work)
        if self.inline:
            try:
                serving = self.serving()
            except RuntimeError:
                work.close()
                raise
            return serving.run(work)
        if threading.current_thread() is self.thread:
            work.close()
            raise RuntimeError(
                "a Sandbox method was called from inside an async action; "
                "await the sandbox's async method (e.g. `await sb.aeval(...)`) instead"
            )
        try:
            give_back = lend_this_thread()  # an action's thread waiting on its script: its pool lends a thread
        except RuntimeError:
            work.close()
            raise
        finished = threading.Event()

        async def tracked() -> T:
            try:
                return await work
            finally:
                finished.set()

        future = self.submit(tracked())
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            finished.wait(2.0)  # let the run record that it was cancelled before the cell moves on
            raise
        finally:
            give_back()


def here() -> EngineLoop | None:
    """The EngineLoop whose thread this is, if any."""
    return getattr(_here, "engine", None)


def run_inline(fn: Callable[[], T]) -> tuple[bool, T | None]:
    """Call ``fn`` (a plain action) on this engine thread as a worker thread would: ``(True, its value)``;
    ``(False, None)`` on a thread that is no engine loop's (``Sandbox.aeval`` awaited on the caller's loop),
    or while another run on this loop is under way (``moving``): the action may wait on that run.

    The loop is hidden meanwhile, running and current alike (a worker has neither), so ``asyncio.run``
    and ``asyncio.get_event_loop()`` inside the action work as there, and a ``Sandbox`` call it makes is
    served by a helper loop (``serving``).
    """
    engine = here()
    if engine is None or engine.moving:  # another run under way here may be what the action waits for
        return False, None
    running = asyncio.events._get_running_loop()
    engine.inline += 1
    asyncio.events._set_running_loop(None)
    _make_current(engine.guest)
    try:
        return True, fn()
    finally:
        asyncio.events._set_running_loop(running)
        engine.guest = _current()  # the loop the action left current is its own next time, as a worker keeps it
        _make_current(engine.loop)  # asyncio.run inside the action leaves none set
        engine.inline -= 1


# A plain action runs in place once per call, so hiding the loop must be cheap: with asyncio's own policy
# (whose setter does more only on the main thread, never an engine thread) the current loop is its
# thread-local slot, read and written directly; ``get_event_loop()`` would raise (and format a message)
# on every call that leaves none. Any other policy goes through its public methods.
_PLAIN_POLICY_METHODS = {
    getattr(cls, name)
    for cls in (asyncio.events.BaseDefaultEventLoopPolicy, asyncio.DefaultEventLoopPolicy)
    for name in ("get_event_loop", "set_event_loop")
}
_policy_checked: tuple[object, bool] = (None, False)  # (the policy last looked at, whether its slot is plain)


def _loop_slot() -> Any:
    """This thread's current-loop slot of the event loop policy, or None where only its methods may be used."""
    global _policy_checked
    policy, checked = asyncio.get_event_loop_policy(), _policy_checked  # (one read: other threads may set it)
    if checked[0] is not policy:
        methods = (getattr(type(policy), "get_event_loop", None), getattr(type(policy), "set_event_loop", None))
        checked = _policy_checked = (
            policy,
            all(m in _PLAIN_POLICY_METHODS for m in methods) and hasattr(policy, "_local"),
        )
    return policy._local if checked[1] else None  # type: ignore[attr-defined]


def _current() -> asyncio.AbstractEventLoop | None:
    """This thread's current event loop, or None (where ``get_event_loop()`` raises)."""
    slot = _loop_slot()
    if slot is not None:
        return slot._loop  # type: ignore[no-any-return]
    try:
        return asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        return None


def _make_current(loop: asyncio.AbstractEventLoop | None) -> None:
    slot = _loop_slot()
    if slot is None:
        asyncio.set_event_loop(loop)
    else:
        slot._loop = loop


_LOOP: EngineLoop | None = None
_LOCK = threading.RLock()


def engine_loop() -> EngineLoop:
    """The process's engine loop, started on first use (without a hold: for work of a Sandbox that holds it)."""
    global _LOOP
    with _LOCK:
        if _LOOP is None or _LOOP.closed or not _LOOP.thread.is_alive():
            _LOOP = EngineLoop()
        return _LOOP


class LoopHold:
    """One holder's share of the engine loop (a ``Sandbox``'s): the work it runs there, which ``stop`` ends.

    Each coroutine run or submitted through it is tracked while it runs. ``stop`` cancels what is still
    running and waits until each has recorded how it ended (a cancelled attempt writes ``cancelled`` to its
    store), so the holder may close its store afterwards without cutting a run's last writes short. Work it
    stopped fails with ``SandboxClosed`` naming the run (``stopped_run``), and later work is refused.

    >>> hold = LoopHold()
    >>> async def two() -> int:
    ...     return 2
    >>> hold.run(two())
    2
    >>> hold.stop()  # nothing of its own left running
    True
    >>> hold.release()
    """

    def __init__(self) -> None:
        self.engine = hold_engine_loop()
        self.closed = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._changed = threading.Condition()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The engine's asyncio loop this hold is on."""
        return self.engine.loop

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """``EngineLoop.run`` for this holder: tracked, and refused once stopped."""
        self._refuse_if_closed(work)
        return self.engine.run(self.tracked(work))

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        self._refuse_if_closed(work)
        return self.engine.submit(self.tracked(work))

    def _refuse_if_closed(self, work: Coroutine[Any, Any, Any]) -> None:
        if self.closed:
            work.close()
            raise SandboxClosed()

    async def tracked(self, work: Coroutine[Any, Any, T]) -> T:
        """Await ``work`` as this holder's (on any loop: the engine's, a helper, the caller's own)."""
        if self.closed:
            work.close()
            raise SandboxClosed()
        task = asyncio.current_task()
        if task is None:  # (not in a task: nothing that stop() could cancel)
            return await work
        with self._changed:
            self._tasks.add(task)
        try:
            return await work
        except asyncio.CancelledError as stopped:
            if self.closed:  # stopped by stop(), not by the caller: say so, and which run to resume
                raise SandboxClosed(getattr(stopped, "stopped_run", None)) from None
            raise
        finally:
            with self._changed:
                self._tasks.discard(task)
                self._changed.notify_all()

    def stop(self, timeout: float = 30.0) -> bool:
        """Refuse new work, cancel the work running, and wait (``timeout`` bounds a hang only) until it has
        ended; True when none is left. Called on a thread that runs some of that work (from inside an action),
        it cannot wait for it: it returns False at once, and ``wait`` is for another thread to call.
        """
        with self._changed:
            self.closed = True
            running = list(self._tasks)
        for task in running:  # (a task that ends before the loop gets to this ends as it would have)
            task.get_loop().call_soon_threadsafe(task.cancel)
        if here() is not None or any(_runs_here(t.get_loop()) for t in running):
            return not running
        return self.wait(timeout)

    def wait(self, timeout: float = 30.0) -> bool:
        """Wait until no tracked work runs (at most ``timeout`` seconds); True when none is left."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._tasks, timeout)

    def release(self) -> None:
        self.engine.release()


def _runs_here(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether this thread runs ``loop`` (also while an action in place hides it)."""
    engine = here()
    return loop is asyncio.events._get_running_loop() or (engine is not None and loop is engine.loop)


def hold_engine_loop() -> EngineLoop:
    """The process's engine loop with one more hold on it; the holder gives it back with ``release()``.

    >>> loop = hold_engine_loop()
    >>> loop.thread.is_alive()
    True
    >>> loop.release()  # the last hold (if no Sandbox is open): its thread ends
    >>> loop.thread.is_alive() == (loop.holders > 0)
    True
    """
    with _LOCK:
        loop = engine_loop()
        loop.holders += 1
        return loop
