"""A run's bounds (``Limits``), and the README's table of them, generated from the fields themselves.

Each field carries what it bounds and the error past it in its metadata, so the
README's "Limits" table (between its ``limits table`` markers) is
``limits_table()``'s text: ``python tests/test_limits_table.py`` rewrites it,
and the test in that file fails when the two differ.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import StoreError
from ..schema_limits import MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, MAX_SCHEMA_OBJECTS
from ..tracebacks import MAX_CHARS as MAX_TRACEBACK_CHARS
from ..tracebacks import MAX_MESSAGE_CHARS
from ..values import MAX_DEPTH
from .nesting import MAX_NESTING

__all__ = ["Limits", "MAX_DEPTH", "limits_table", "stored_limits"]

MIN_MEMORY = 4 * 1024 * 1024
MIN_STACK = 64 * 1024
MAX_STACK = 16 * 1024 * 1024  # the engine thread has 64 MiB (loop.py)


def _limit(default: Any, unit: str, bounds: str, error: str) -> Any:
    return field(default=default, metadata={"unit": unit, "bounds": bounds, "error": error})


_CAP = "`journal-cap`: use `ctx.continueAsNew`"
_CONSOLE = "`console` (even if the script catches the error `console.log` throws)"


@dataclass(frozen=True)
class Limits:
    """A run's bounds. Each is configurable (and a ``%%sandbox`` option).

    >>> limits = Limits(fuel_seconds=5.0, journal_entries=20_000)
    >>> limits.journal_entries, limits.journal_bytes    # the rest keep their defaults
    (20000, 8388608)
    """

    source_bytes: int = _limit(256 * 1024, "bytes", "the script's source (UTF-8)", '`LimitExceeded("source-size")`')
    memory_bytes: int = _limit(64 * 1024 * 1024, "bytes", "the realm's memory", "`memory`")
    stack_bytes: int = _limit(1024 * 1024, "bytes", "the script's call stack", "`stack`")
    fuel_seconds: float = _limit(2.0, "s", "CPU between awaits, fresh after every await", "`fuel-exhausted`")
    journal_entries: int = _limit(
        5000,
        "entries",
        "a run's journal entries (an action call is two: call and result); console lines are "
        "not counted here but by `console_lines`",
        _CAP,
    )
    journal_bytes: int = _limit(8 * 1024 * 1024, "bytes", "a run's journal, console lines included", _CAP)
    action_timeout: float | None = _limit(
        None, "s", "how long one action call may run (None: for ever)", "the script's call throws `ActionError`"
    )
    inline_sleep_ms: float = _limit(
        1000.0, "ms", "a `ctx.sleep` shorter than this waits in place instead of parking the run", "none: a setting"
    )
    generations: int = _limit(
        100,
        "successors",
        "`ctx.continueAsNew` successors one `eval` or `resume` may start (a chain that never stops "
        "writes its state once per generation)",
        "`generations`",
    )
    # The console one attempt may write: a flood inside one slice never reaches the journal's
    # byte cap, only the realm's memory.
    console_lines: int = _limit(10_000, "lines", "console lines in one attempt", _CONSOLE)
    console_bytes: int = _limit(4 * 1024 * 1024, "bytes", "console text in one attempt (UTF-8)", _CONSOLE)

    def __post_init__(self) -> None:
        for name in (
            "source_bytes",
            "memory_bytes",
            "stack_bytes",
            "journal_entries",
            "journal_bytes",
            "generations",
            "console_lines",
            "console_bytes",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive integer, got {value!r}")
        # The realm needs room for its prelude, and its stack must stay well inside the
        # engine thread's (QuickJS's own check must fire before the real stack overflows).
        if self.memory_bytes < MIN_MEMORY:
            raise ValueError(f"Limits.memory_bytes must be at least {MIN_MEMORY // 2**20} MiB, got {self.memory_bytes}")
        if self.memory_bytes > sys.maxsize:  # QuickJS takes the limit as a C size
            raise ValueError(f"Limits.memory_bytes must be at most {sys.maxsize:,} bytes, got {self.memory_bytes:,}")
        if not MIN_STACK <= self.stack_bytes <= MAX_STACK:
            raise ValueError(
                f"Limits.stack_bytes must be between {MIN_STACK // 1024} KiB and "
                f"{MAX_STACK // 2**20} MiB, got {self.stack_bytes}"
            )
        for name in ("fuel_seconds", "inline_sleep_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
                raise ValueError(f"Limits.{name} must be a positive number, got {value!r}")
        timeout = self.action_timeout
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
        ):
            raise ValueError(f"Limits.action_timeout must be positive or None, got {timeout!r}")


def _shown(value: Any, unit: str) -> str:
    if value is None:
        return "none"
    if unit == "bytes":
        for size, name in ((2**20, "MiB"), (2**10, "KiB")):
            if value % size == 0:
                return f"{value // size:,} {name}"
        return f"{value:,} bytes"
    number = f"{value:,}" if isinstance(value, int) else f"{value:g}"
    return f"{number} {unit}"


def limits_table() -> str:
    """The README's table of every limit: one row per ``Limits`` field, its default, and the fixed bounds."""
    rows = ["| `Limits` field | default | what it bounds | past it |", "| --- | --- | --- | --- |"]
    for item in fields(Limits):
        meta = item.metadata
        rows.append(f"| `{item.name}` | {_shown(item.default, meta['unit'])} | {meta['bounds']} | {meta['error']} |")
    rows.append(
        f"| (fixed) | {MAX_DEPTH} levels | nesting of a value crossing as JSON (the journal's CBOR reads back 400) "
        "| `InvalidValue` (a value from Python); a `TypeError` the script can catch (one from the script) |"
    )
    rows.append(
        f"| (fixed) | {MAX_NESTING} scripts | scripts one inside another (`await sb.aeval` from an `async def` "
        "action, `sb.eval` from a plain one run in place, a child run: `ctx.delegate`, a saved script), "
        "the outermost included "
        '| the innermost call fails naming the nesting (`LimitExceeded("nesting")` inside it); uncaught, it '
        'reaches the top once, as `ActionError: LimitExceeded: nesting: ...` with `.limit == "nesting"` |'
    )
    rows.append(
        f"| (fixed) | {_shown(MAX_SCHEMA_BYTES, 'bytes')} | a saved script's `input_schema` or `output_schema` "
        f"(its JSON, UTF-8), and {MAX_SCHEMA_OBJECTS:,} JSON objects (subschemas) in it: checking that many "
        "against JSON Schema's meta-schema takes up to about 1.5 s "
        '| `LimitExceeded("schema-size")` at save, nothing stored |'
    )
    rows.append(
        f"| (fixed) | {MAX_SCHEMA_DEPTH} levels | nesting of objects and arrays in a JSON Schema: a saved "
        "script's, an action's (`input_schema`, `output_schema`), an MCP tool's (`inputSchema`, `outputSchema`) "
        '| `LimitExceeded("schema-depth")` where it enters: at save or registration, nothing stored or '
        "registered; an MCP tool's schema is left out with a warning (that side unchecked and undeclared) |"
    )
    rows.append(
        f"| (fixed) | {MAX_MESSAGE_CHARS:,} characters | an action's error message (`NAME: ` and the exception's "
        f"text), and {MAX_TRACEBACK_CHARS:,} characters of its Python traceback | cut, not refused: the script still "
        "catches the `ActionError`; the message keeps its start and ends `…[cut: N more characters]`, the "
        "traceback keeps its end (the failing line) after `…[cut: N earlier characters]` |"
    )
    return "\n".join(rows)


def stored_limits(run_id: str, base: Limits, overrides: dict[str, Any]) -> Limits:
    """``base`` with a run's stored ``limits`` overrides; a limit this version lacks (a newer one's) is ignored.

    A known limit with a value ``Limits`` refuses is a ``StoreError`` naming the run and the field.
    """
    known = {f.name for f in fields(Limits)}
    chosen = {name: value for name, value in overrides.items() if name in known}
    if not chosen:
        return base
    try:
        return replace(base, **chosen)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"run {run_id}: its options field .limits: {exc}; the store is damaged") from None
