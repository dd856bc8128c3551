"""The SQL both store backends speak: each statement written once, rendered to a driver's paramstyle.

A statement is written with SQLite's placeholders (``?``, or ``:name`` where a value is used twice or
the store's clock is read) and ``{fields}`` for the few clauses that truly differ (``Dialect``: the
clock, row locks). ``render`` turns it into the driver's paramstyle, once per statement. ``Connection``
and ``Cursor`` are what the shared methods use of sqlite3's and psycopg's alike.

>>> pg = Dialect("format", now="%(now)s", for_update=" FOR UPDATE", skip_locked="", duplicate=KeyError)
>>> render("SELECT status FROM runs WHERE id = ?{for_update}", pg)
'SELECT status FROM runs WHERE id = %s FOR UPDATE'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar

from ..errors import RunNotFound, StoreError
from .rows import Entry

__all__ = ["C", "Connection", "Cursor", "Dialect", "SQLAccess", "by_run_id", "render", "scalar"]


@dataclass(frozen=True, eq=False)  # one per backend: hashed by identity, cheaply (render's cache key)
class Dialect:
    """What one database spells its own way in the shared statements."""

    paramstyle: str  # "qmark" (sqlite3: ? and :name) or "format" (psycopg: %s and %(name)s)
    now: str  # the store's clock, seconds since the epoch: a bound :now (Python's) or the server's
    for_update: str  # locks the rows a transaction reads to change (SQLite's write lock covers the file)
    skip_locked: str  # due runs: pass by rows another worker is reserving
    duplicate: type[Exception]  # the driver's error for a primary key already taken


_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")  # :name, not a PostgreSQL ::cast


@functools.lru_cache(maxsize=512)  # a few dozen statements, plus the column sets of update_run
def render(template: str, dialect: Dialect) -> str:
    """``template`` in ``dialect``'s paramstyle, with its ``{now}``, ``{for_update}`` and ``{skip_locked}``."""
    text = template
    if dialect.paramstyle == "format":
        text = _NAMED.sub(r"%(\1)s", text.replace("%", "%%")).replace("?", "%s")
    return text.format(now=dialect.now, for_update=dialect.for_update, skip_locked=dialect.skip_locked)


class Cursor(Protocol):
    """What the shared methods read of a statement's result (a DB-API cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """What the shared methods use of a connection: sqlite3's and psycopg's alike."""

    def execute(self, sql: str, args: Any = ..., /) -> Cursor: ...


C = TypeVar("C", bound=Connection)


class SQLAccess(Generic[C]):
    """What a backend supplies the shared methods: its connections, reads and fenced journal writes."""

    dialect: Dialect
    path: str

    def _tx(self) -> AbstractContextManager[C]:
        """A connection inside one transaction: committed when the block ends, rolled back on an error."""
        raise NotImplementedError

    def _statement(self) -> AbstractContextManager[C]:
        """A connection for one write statement (atomic by itself)."""
        raise NotImplementedError

    def _read(self, sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _many(self, conn: C, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """Run ``sql`` once for each of ``rows``."""
        raise NotImplementedError

    def _insert_entries(self, conn: C, run_id: str, entries: list[tuple[Entry, bytes]], fenced: bool = True) -> None:
        raise NotImplementedError

    def _sql(self, template: str) -> str:
        return render(template, self.dialect)


def scalar(conn: Connection, sql: str, args: Any = ()) -> Any:
    """The first column of the one row ``sql`` returns (an aggregate, RETURNING), read to the end."""
    rows = conn.execute(sql, args).fetchall()
    if not rows:
        raise StoreError(f"the run store returned no row for {sql!r:.80}")
    return rows[0][0]


P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def by_run_id(
    absent: Callable[[], Any] | None = None,
) -> Callable[[Callable[Concatenate[S, str, P], R]], Callable[Concatenate[S, str, P], R]]:
    """A run id holding a NUL names no run, on either backend (PostgreSQL's text cannot hold one, so it would
    fail there): ``RunNotFound``, or ``absent()`` where an unknown run reads as empty."""

    def wrap(method: Callable[Concatenate[S, str, P], R]) -> Callable[Concatenate[S, str, P], R]:
        @functools.wraps(method)
        def guarded(self: S, run_id: str, /, *args: P.args, **kwargs: P.kwargs) -> R:
            if isinstance(run_id, str) and "\x00" in run_id:
                if absent is None:
                    raise RunNotFound(run_id)
                return absent()  # type: ignore[no-any-return]
            return method(self, run_id, *args, **kwargs)

        return guarded

    return wrap
