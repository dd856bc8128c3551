"""A process that decides runs on a shared store, held at a named point on command.

For tests/test_interleaved_decisions.py.

Run as ``python decision_peer.py STORE_URL EFFECTS_FILE``; it reads one JSON command a line,
``{"op": OP, "run": ID, "hold": POINT}``, and answers JSON lines. With ``hold`` it stops at that point of
the operation, says ``{"held": POINT}`` and waits for a line before it goes on, so that the other process
acts there, in an order the test chose (no sleeping). Points: ``claim`` (before the attempt takes the run),
``claimed`` (just after), ``finish`` (before the attempt's last write). Its last line is the outcome:
``{"outcome": "completed" | "rolled_back" | ERROR_CLASS, "message": ...}``; a point the operation never
reached is not waited at.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from jupyter_sandbox import Sandbox
from jupyter_sandbox.errors import SandboxError
from jupyter_sandbox.results import RollbackResult
from jupyter_sandbox.stores.sql import SQLStore

SCRIPT = "try { return await actions.pay({total: 5}) } catch (e) { return {rejected: e.message} }"


def note(effects: str, what: str) -> None:
    """One line per effect, appended by whichever process runs it (O_APPEND: lines never interleave)."""
    fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f"{what}\n".encode())
    finally:
        os.close(fd)


def register(sb: Sandbox, effects: str) -> Sandbox:
    """``pay`` needs approval; ``refund`` is its revert. Both note what they did in ``effects``."""

    def pay(order: dict[str, Any]) -> dict[str, Any]:
        note(effects, "pay")
        return {"paid": order["total"]}

    def refund(order: dict[str, Any], result: Any) -> None:
        note(effects, "refund")

    sb.action(pay, approval=True, revert=refund)
    return sb


def decide(sb: Sandbox, op: str, run_id: str) -> Any:
    """Do ``op`` to the run: a decision through ``resume``, or a rollback."""
    if op == "rollback":
        return sb.rollback(run_id)
    if op == "approve_by_id":  # the id its card showed (the call to pay is the run's first)
        return sb.resume(run_id, answers={f"{run_id}:0": True})
    answers = {"approve": True, "reject": False, "reject_rollback": {"approved": False, "rollback": True}}
    return sb.resume(run_id, answers[op])


def outcome(sb: Sandbox, op: str, run_id: str) -> dict[str, str]:
    """How ``op`` ended: its status, or the SandboxError's class and message."""
    try:
        done = decide(sb, op, run_id)
    except SandboxError as exc:
        return {"outcome": type(exc).__name__, "message": str(exc)}
    return {"outcome": "rolled_back" if isinstance(done, RollbackResult) else "completed", "message": ""}


_hold: dict[str, Any] = {"point": None}


def _say(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


def _at(point: str) -> None:
    if _hold["point"] == point:
        _hold["point"] = None
        _say({"held": point})
        sys.stdin.readline()  # the other process has acted: go on


_claim, _finish = SQLStore.claim, SQLStore.finish_attempt


def _held_claim(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    _at("claim")
    number = _claim(self, *args, **kwargs)
    _at("claimed")
    return number


def _held_finish(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    _at("finish")
    return _finish(self, *args, **kwargs)


def main() -> None:
    SQLStore.claim = _held_claim  # type: ignore[method-assign]
    SQLStore.finish_attempt = _held_finish  # type: ignore[method-assign]
    sb = register(Sandbox(sys.argv[1], identity="peer"), sys.argv[2])  # (the loser is told who won: "peer")
    for line in sys.stdin:
        command = json.loads(line)
        _hold["point"] = command.get("hold")
        result = outcome(sb, command["op"], command["run"])
        _hold["point"] = None
        _say(result)


if __name__ == "__main__":
    main()
