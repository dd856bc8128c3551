"""The QuickJS realm a script runs in: one context per attempt, with its limits.

The realm knows nothing of journals or actions. It loads the prelude
(``js/prelude.js`` with its shims), hands over the settings and the replay
plan once, starts the script, and gives the runner five moves: ``drain`` the
job queue, ``deliver`` the next recorded completion, ``take`` the script's
requests, ``settle`` a live one, and read the ``outcome``.

QuickJS traps that shape this module:

* ``Context.eval`` names every source ``<input>``: the script is placed after
  ``LINE_OFFSET`` blank lines, so any stack frame past that line is the
  script's own and its line number is exact (the wrapper stands on its own
  line, so columns need no shifting either).
* With a time limit set, a JS → Python call throws, so nothing here is an
  ``add_callable``: the script queues requests in a closure and the host reads
  them between jobs.
* The time limit is a fresh CPU budget on every entry into JS: exactly the
  "fuel slice between awaits". Out of memory may leave the context unusable:
  a realm is never reused after a failure.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

# The library's C module itself: its Python wrapper (``quickjs``) starts a worker thread at import, for a
# ``Function`` helper the engine never uses, and that thread would outlive every Sandbox.
import _quickjs as quickjs

from ..errors import LimitExceeded, SandboxError, ScriptError
from ..source import script_lines
from .limits import Limits
from .returns import cannot_throw_null, top_level_returns

__all__ = ["Limits", "Realm", "LINE_OFFSET", "compile_error"]

_JS = Path(__file__).parent / "js"
LINE_OFFSET = 20000  # larger than the prelude and its shims, so frames past it are the script's
_FRAME = re.compile(r"<input>:(\d+):(\d+)")
# The requests' JSON is the prelude's own (one array, nothing around it): read by the decoder's scanner
# alone, without ``json.loads``'s checks for what only another writer would send (a BOM, whitespace).
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


# The prelude's parts, one concern a file, in the order they are joined into one function scope (a part may
# call a function of a later one: only top-level code runs at evaluation, and it reads what is above it).
PRELUDE_PARTS = (
    "textcodec.js",
    "dateparse.js",
    "date.js",
    "prelude.js",
    "canon.js",
    "queue.js",
    "replay.js",
    "settle.js",
    "limits.js",
    "ctx.js",
    "world.js",
    "host.js",
)


def _prelude_source() -> str:
    parts = [(_JS / name).read_text(encoding="utf-8") for name in PRELUDE_PARTS]
    return "(function () {\n" + "\n".join(parts) + "\n})();\n"


_PRELUDE: str | None = None


def compile_error(source: str, limits: Limits) -> ScriptError | None:
    """The ``ScriptError`` (with its line) QuickJS's compiler gives ``source``, or None when it compiles.

    In a bare context, with the realm's limits: compiling defines the script's function and runs none of it.

    >>> compile_error("return (", Limits()).line, compile_error("return 1", Limits())
    (1, None)
    """
    context = quickjs.Context()
    context.set_memory_limit(limits.memory_bytes)
    context.set_max_stack_size(limits.stack_bytes)
    context.set_time_limit(limits.fuel_seconds)
    try:
        context.eval(_wrapped(source))
    except quickjs.JSException as exc:
        return _compile_error(source, str(exc))
    return None


def _wrapped(source: str) -> str:
    """The script as the realm compiles it: an async function's body, its first line at ``LINE_OFFSET``."""
    return "\n" * (LINE_OFFSET - 1) + "(async function () {\n" + source + "\n})"


def _compile_error(source: str, text: str) -> ScriptError:
    name, _, message = text.partition(":")
    first = message.strip().splitlines()[0] if message.strip() else text
    match = _FRAME.search(text)
    line = column = None
    if match and int(match.group(1)) > LINE_OFFSET:
        line, column = int(match.group(1)) - LINE_OFFSET, int(match.group(2))
    last = len(script_lines(source))
    if line is not None and line > last:
        line = last  # "unexpected end of input" points past the wrapper
    return ScriptError(name.strip() or "SyntaxError", first, line=line, column=column, stack="", source=source)


class Realm:
    """One QuickJS context running one attempt of one script."""

    def __init__(self, source: str, limits: Limits):
        global _PRELUDE
        self.source = source
        self.limits = limits
        self._null_is_memory = False  # set at start: whether the script cannot throw null itself
        self._context = quickjs.Context()
        self._context.set_memory_limit(limits.memory_bytes)
        self._context.set_max_stack_size(limits.stack_bytes)
        if _PRELUDE is None:
            _PRELUDE = _prelude_source()
        self._context.eval(_PRELUDE)
        get = self._context.eval
        self._configure = get("__jsbx_host.configure")
        self._start = get("__jsbx_host.start")
        self._deliver = get("__jsbx_host.deliver")
        self._settle = get("__jsbx_host.settle")
        self._take = get("__jsbx_host.take")
        self._console = get("__jsbx_host.console")
        self._data = get("__jsbx_host.data")
        self._undelivered = get("__jsbx_host.undelivered")
        self._pending_slot = get("__jsbx_host.pendingSlot")
        self._unused = get("__jsbx_host.unused")
        self._limit_hit = get("__jsbx_host.limit")
        get("delete globalThis.__jsbx_host")
        self._context.set_time_limit(limits.fuel_seconds)
        self._job = self._context.execute_pending_job

    # -- starting --------------------------------------------------------------

    def start(self, settings: dict[str, Any], now: float, input_json: str = "null") -> None:
        """Install the script's world, compile the script and run it to its first await.

        ``input_json``: the run's input as JSON text, handed over apart from the settings so a big input is
        neither encoded again nor copied into them: the realm's ``JSON.parse`` of it is all it costs here."""
        self._null_is_memory = cannot_throw_null(self.source)
        settings = {
            **settings,
            "lineOffset": LINE_OFFSET,
            "consoleLines": self.limits.console_lines,
            "consoleBytes": self.limits.console_bytes,
            "nullIsMemory": self._null_is_memory,
        }
        self._hand_over(self._configure, json.dumps(settings, allow_nan=False), input_json, now)
        try:
            fn = self._context.eval(_wrapped(self.source))
        except quickjs.JSException as exc:
            raise _compile_error(self.source, str(exc)) from None
        self._guard(self._start, fn, now)

    # -- the moves the runner makes -------------------------------------------

    def drain(self) -> None:
        """Run queued jobs until none is left.

        Each job gets a fresh slice from QuickJS, and the whole drain one fuel
        budget of this thread's CPU: a script that only awaits itself
        (``for (;;) await null``) waits on nothing the host does, so it is an
        endless loop like any other.
        """
        job = self._job
        try:
            if job() and job():  # a one-job drain (each replayed entry) reads no clock
                self._drain_on()
        except quickjs.JSException as exc:
            raise self._limit_from(exc) from None

    def _drain_on(self) -> None:
        """The rest of a drain that has run two jobs: the fuel clock starts now."""
        job, clock, fuel = self._job, time.thread_time, self.limits.fuel_seconds
        started = clock()
        while job():
            if clock() - started > fuel:  # every job after that: each may take almost a whole slice
                raise self._fuel_exhausted()

    def deliver(self, now: float) -> int | list[dict[str, Any]]:
        """The script's queued requests if any; else deliver the next recorded completion.

        Returns the requests, or 1 (delivered one), 0 (none awaited yet), -1 (none left).
        """
        step = self._guard(self._deliver, now)
        return self._requests(step) if isinstance(step, str) else step

    def settle(self, slot: int, result_json: str, now: float) -> None:
        self._hand_over(self._settle, slot, result_json, now)

    def take(self) -> list[dict[str, Any]]:
        text = self._guard(self._take)
        return self._requests(text) if text else []

    def _requests(self, text: str) -> list[dict[str, Any]]:
        """The script's queued requests; a limit the prelude saw reached fails the run, whatever the script caught."""
        items: list[dict[str, Any]] = _SCAN(text, 0)[0]
        for item in items:
            if item.get("t") == "limit":
                raise self._limit_reached(item.get("limit"), item.get("line"))
        return items

    def undelivered(self) -> int:
        return cast(int, self._guard(self._undelivered))

    def pending_slot(self) -> int:
        """The slot of the first recorded completion the script has not been served yet, or -1."""
        return cast(int, self._guard(self._pending_slot))

    def unused(self) -> list[int]:
        """The recorded slots the replay never asked for, ascending (a determinism check reports the first)."""
        return cast(list[int], json.loads(self._guard(self._unused)))

    def snapshot(self) -> dict[str, Any]:
        """The script's full console and its ``data``, as they are now.

        Read apart: ``data`` belongs to the script (a getter may loop until the
        fuel runs out), the console to the host, so a bad ``data`` never costs the console.
        """
        out: dict[str, Any] = {"console": [], "data": {}}
        for key, read in (("console", self._console), ("data", self._data)):
            try:
                out[key] = json.loads(read())
            except (quickjs.JSException, ValueError) as exc:
                out[key] = [] if key == "console" else {"error": f"could not read data: {str(exc).splitlines()[0]}"}
        return out

    # -- errors ----------------------------------------------------------------

    def _guard(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except quickjs.JSException as exc:
            raise self._limit_from(exc) from None

    def _hand_over(self, fn: Any, *args: Any) -> Any:
        """A move that parses a value the host hands in (the input, an action's result).

        QuickJS throws a bare ``null`` when ``JSON.parse`` cannot even allocate its "out of memory" error,
        and by the time the host hears of it the memory is freed, so no statistic shows it. A script that
        cannot throw null itself leaves one cause only: the value did not fit in the realm's memory.
        """
        try:
            return fn(*args)
        except quickjs.JSException as exc:
            if str(exc).strip() == "null" and self._null_is_memory:
                raise self._memory_exceeded() from None
            raise self._limit_from(exc) from None

    def _limit_from(self, exc: Exception) -> Exception:
        text = str(exc)
        if "out of memory" in text:  # a realm out of memory is asked nothing more
            return self._memory_exceeded()
        reached = self._reached()
        if reached is not None:  # the fuel ran out after a limit the script caught and ignored
            return self._limit_reached(reached)
        if "interrupted" in text:
            return self._fuel_exhausted(self._line_in(text))
        if "stack" in text.lower() and "exceeded" in text.lower():
            return self._stack_exceeded(self._line_in(text))
        return ScriptError("InternalError", text.splitlines()[0] if text else "the realm failed", source=self.source)

    def _reached(self) -> str | None:
        """The limit the prelude saw reached (``console``, ``stack``, ``memory``), if any."""
        try:
            return self._limit_hit() or None
        except Exception:  # a realm out of memory may not answer: then it is the error it raised
            return None

    def _limit_reached(self, limit: Any, line: int | None = None) -> LimitExceeded:
        if limit == "stack":
            return self._stack_exceeded(line, " (while the host read a value the script handed it)")
        if limit == "memory":
            return self._memory_exceeded()
        lines, size = self.limits.console_lines, self.limits.console_bytes
        return LimitExceeded(
            "console",
            f"the script wrote more than {lines} console lines or {size // 1024} KiB "
            "of console text in one attempt (Limits.console_lines, Limits.console_bytes)",
            value=(lines, size),
            line=line,
            source=self.source,
        )

    def near_memory_limit(self) -> bool:
        """Whether the realm has used most of its memory (an allocation failure is then the likely cause)."""
        try:
            return cast(int, self._context.memory()["malloc_size"]) >= 0.75 * self.limits.memory_bytes
        except Exception:  # the binding's statistics are a hint, never a failure
            return False

    def script_error(self, error: dict[str, Any], run_id: str | None = None) -> SandboxError:
        """Turn the prelude's description of an uncaught error into the Python error to raise."""
        reached = self._reached()
        if reached is not None:
            error_limit = self._limit_reached(reached)
            error_limit.run_id = run_id
            return error_limit
        name, message = error.get("name", "Error"), error.get("message", "")
        # QuickJS throws null or an uninitialized value when it cannot even allocate the
        # "out of memory" error; by the time we hear of it, unwinding has freed the memory.
        uninitialized = name == "Error" and message == "uncaught [uninitialized]"
        odd = name == "InternalError" or (name == "Error" and message.startswith("uncaught "))
        if uninitialized or (odd and self.near_memory_limit()):
            return self._memory_exceeded(run_id)
        if name == "Error" and message == "uncaught null":
            message = (
                f"uncaught null: the script threw null, or ran out of memory (the realm's limit is "
                f"{self.limits.memory_bytes // 2**20} MiB) so badly that no error could be made"
            )
        stack, line, column = rewrite_stack(error.get("stack", ""))
        if line is None and error.get("returned") is True:  # the value returned could not cross
            returns = top_level_returns(self.source)
            if len(returns) == 1:
                line, column = returns[0]
        if name == "RangeError" and "call stack" in message:
            return self._stack_exceeded(line, f" ({message})", run_id)
        if name == "InternalError" and "out of memory" in message:
            return self._memory_exceeded(run_id)
        if name == "ActionError":
            from ..errors import ActionError

            issues = error.get("issues")
            return ActionError(
                error.get("action", "?"),
                message,
                line=line,
                column=column,
                stack=stack,
                source=self.source,
                run_id=run_id,
                issues=issues if isinstance(issues, list) else None,
            )
        return ScriptError(name, message, line=line, column=column, stack=stack, source=self.source, run_id=run_id)

    def _fuel_exhausted(self, line: int | None = None) -> LimitExceeded:
        return LimitExceeded(
            "fuel-exhausted",
            f"the script ran for more than {self.limits.fuel_seconds:g} s of CPU "
            "without waiting on an action, a timer or an event"
            # QuickJS keeps a frame's position only at calls (and awaits): the line that loops is not known
            + (
                f", in code running after line {line} (the last position QuickJS recorded: at a call or await)"
                if line
                else ""
            ),
            value=self.limits.fuel_seconds,
            line=line,
            source=self.source,
        )

    def _memory_exceeded(self, run_id: str | None = None) -> LimitExceeded:
        return LimitExceeded(
            "memory",
            f"the script used more than {self.limits.memory_bytes // 2**20} MiB",
            value=self.limits.memory_bytes,
            run_id=run_id,
        )

    def _stack_exceeded(self, line: int | None, detail: str = "", run_id: str | None = None) -> LimitExceeded:
        return LimitExceeded(
            "stack",
            f"the script's call stack went past {self.limits.stack_bytes // 1024} KiB{detail}",
            value=self.limits.stack_bytes,
            line=line,
            source=self.source,
            run_id=run_id,
        )

    def _line_in(self, text: str) -> int | None:
        return rewrite_stack(text)[1]


def rewrite_stack(stack: Any) -> tuple[str, int | None, int | None]:
    """Stack frames as ``workflow.js:LINE:COL``; the prelude's own frames dropped.

    Returns the rewritten stack and the line/column of the innermost script frame.
    """
    out: list[str] = []
    first: tuple[int, int] | None = None
    for frame in str(stack).splitlines():
        match = _FRAME.search(frame)
        if not match:
            continue  # not a frame
        line = int(match.group(1))
        if line <= LINE_OFFSET:
            continue  # a frame inside the prelude: plumbing, not the user's code
        line -= LINE_OFFSET
        if first is None:
            first = (line, int(match.group(2)))
        out.append(frame[: match.start()] + f"workflow.js:{line}:{match.group(2)}" + frame[match.end() :])
    return "\n".join(out), (first[0] if first else None), (first[1] if first else None)
