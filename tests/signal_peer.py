"""A process that resumes or signals runs on a shared store, on command (tests/test_signal_delivery.py).

Run as ``python signal_peer.py STORE_URL``; it reads one JSON command a line and answers one JSON line:

* ``{"op": "resume", "run": ID, "park_delay_ms": MS}``: approve the run's gate and resume it; the attempt's
  park is held back ``MS`` before it commits (a slow commit: the window a signal must not be lost in);
* ``{"op": "signal", "run": ID, "event": E, "after_ms": MS, "when_waiting": BOOL}``: wait until the run's
  ``waitForEvent`` is journaled (if ``when_waiting``), then ``MS``, then send ``E``.

The answer says how the call ended: ``completed``, ``parked``, ``queued`` (a signal left for another), or
the error's class name.
"""

from __future__ import annotations

import json
import sys
import time

from jupyter_sandbox import RunParked, Sandbox
from jupyter_sandbox.errors import SandboxError
from jupyter_sandbox.stores.sql import SQLStore

SCRIPT = """
await actions.gate(ctx.runId);
const event = await ctx.waitForEvent({go: ctx.runId});
return await actions.after(event);
"""

_delay = {"ms": 0}  # (read on the engine's thread, which runs the park)
_finish = SQLStore.finish_attempt


def _slow_park(self, run_id, attempt, status, entries, **kwargs):  # type: ignore[no-untyped-def]
    if status == "parked":
        time.sleep(_delay["ms"] / 1000)
    return _finish(self, run_id, attempt, status, entries, **kwargs)


def sandbox(store: str) -> Sandbox:
    sb = Sandbox(store)
    sb.action(lambda run_id: run_id, name="gate", approval=True)
    sb.action(lambda event: event, name="after")
    return sb


def _until_waiting(sb: Sandbox, run_id: str) -> None:
    for _ in range(60_000):  # (bounds a hang only: the resume journals the wait within moments)
        if any(e.kind == "wait" for e in sb.store.entries(run_id)):
            return
        time.sleep(0.002)


def main() -> None:
    SQLStore.finish_attempt = _slow_park  # type: ignore[method-assign]
    sb = sandbox(sys.argv[1])
    for line in sys.stdin:
        command = json.loads(line)
        try:
            if command["op"] == "resume":
                _delay["ms"] = command.get("park_delay_ms", 0)
                sb.resume(command["run"], True)
                outcome = "completed"
            else:
                if command.get("when_waiting"):
                    _until_waiting(sb, command["run"])
                time.sleep(command.get("after_ms", 0) / 1000)
                outcome = "completed" if sb.signal(command["run"], command["event"]) is not None else "queued"
        except RunParked:
            outcome = "parked"
        except SandboxError as exc:
            outcome = type(exc).__name__
        print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main()
