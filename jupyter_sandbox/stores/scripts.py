"""Saved scripts in a store: every save a new version of a name, kept, so a run replays the version it ran.

One table, ``scripts (name, version, source, about, created)``, the same on both SQL backends
(migrations step 3). ``about`` is a CBOR map (``description``, ``input_schema``, ``output_schema``,
``from_run``). Removing a script writes a version without source (a tombstone): the name leaves the
listing, and the versions runs recorded still read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import cbor2

from ..errors import StoreError
from .dialect import scalar
from .row_rules import decode_value

__all__ = ["SavedScript", "ScriptsTable", "SQLITE_TABLE", "POSTGRES_TABLE"]

SQLITE_TABLE = (
    "CREATE TABLE scripts (name TEXT NOT NULL, version INTEGER NOT NULL, source TEXT, about BLOB, "
    "created REAL NOT NULL, PRIMARY KEY (name, version))"
)
POSTGRES_TABLE = (
    "CREATE TABLE scripts (name TEXT NOT NULL, version INTEGER NOT NULL, source TEXT, about BYTEA, "
    "created DOUBLE PRECISION NOT NULL, PRIMARY KEY (name, version))"
)
_COLUMNS = "name, version, source, about, created"
# The next version, numbered and written in one statement (its transaction holds other saves of the name off).
_NEXT = (
    f"INSERT INTO scripts ({_COLUMNS}) SELECT :name, COALESCE(MAX(version), 0) + 1, :source, :about, :created "
    "FROM scripts WHERE name = :name RETURNING version"
)
_LATEST = f"SELECT {_COLUMNS} FROM scripts s WHERE version = (SELECT MAX(version) FROM scripts t WHERE t.name = s.name)"


@dataclass
class SavedScript:
    """One version of a saved script: its ``source`` and what describes it (``about``)."""

    name: str
    version: int
    source: str | None  # None: the version that removed it
    created: float
    about: dict[str, Any] = field(default_factory=dict)

    @property
    def description(self) -> str | None:
        return self.about.get("description")


def _row(row: tuple[Any, ...]) -> SavedScript:
    name, version, source, about, created = row
    value = decode_value(f"script {name}", "about", about) or {}
    if not isinstance(value, dict):
        raise StoreError(f"saved script {name!r} v{version}: its about is not a map; the store is damaged")
    return SavedScript(str(name), int(version), source, float(created), value)


class ScriptsTable:
    """The saved-script methods of a SQL store (``SQLStore`` mixes them in)."""

    dialect: Any
    # (the backend's: its transactions, reads and statements, as sql.py's SQLStore declares them)
    _tx: Any
    _read: Any
    _sql: Any

    def save_script(self, name: str, source: str | None, about: dict[str, Any], *, once: bool = False) -> int:
        """Store a new version of ``name`` (``source`` None: removed); returns its version number.

        ``once``: a version of ``name`` with this very source and about already stored is returned instead,
        and nothing is written. One transaction, with saves of ``name`` held off (``_hold_saves``) from
        before the versions are read until it commits: two saves at once get two consecutive versions, and
        of two ``once`` saves of the same script one writes it and the other finds it.
        """
        with self._tx() as conn:
            self._hold_saves(conn, name)
            if once:
                stored = conn.execute(
                    self._sql(f"SELECT {_COLUMNS} FROM scripts WHERE name = ? AND source = ? ORDER BY version"),
                    (name, source),
                ).fetchall()
                same = next((r[1] for r in stored if _row(r).about == about), None)
                if same is not None:
                    return int(same)
            row = {"name": name, "source": source, "about": cbor2.dumps(about), "created": time.time()}
            return int(scalar(conn, self._sql(_NEXT), row))

    def _hold_saves(self, conn: Any, name: str) -> None:
        """Inside a save's transaction: no other save of ``name`` proceeds until it ends. SQLite's transaction
        holds the file's write lock from its start (``BEGIN IMMEDIATE``), so here nothing more is needed."""

    def script(self, name: str, version: int | None = None) -> SavedScript | None:
        """One version of a saved script (the newest without ``version``); None when there is none or it
        was removed (a version a run recorded still reads after its name is removed)."""
        if version is None:
            rows = self._read(self._sql(f"{_LATEST} AND name = ?"), (name,))
        else:
            rows = self._read(
                self._sql(f"SELECT {_COLUMNS} FROM scripts WHERE name = ? AND version = ?"), (name, version)
            )
        if not rows or rows[0][2] is None:
            return None
        return _row(rows[0])

    def script_heads(self) -> list[tuple[str, int, bool]]:
        """``(name, newest version, removed)`` of every saved script, by name: what a process compares with
        the scripts it registered, without reading (and decoding) their sources and schemas."""
        rows = self._read(self._sql(f"SELECT name, version, source IS NULL FROM ({_LATEST}) latest ORDER BY name"))
        return [(str(name), int(version), bool(gone)) for name, version, gone in rows]

    def script_versions(self, name: str) -> list[SavedScript]:
        """Every version of ``name``, oldest first (a removal's too: its ``source`` is None)."""
        rows = self._read(self._sql(f"SELECT {_COLUMNS} FROM scripts WHERE name = ? ORDER BY version"), (name,))
        return [_row(r) for r in rows]

    def scripts(self, *, removed: bool = False) -> list[SavedScript]:
        """The newest version of every saved script not removed, by name; ``removed``: those removed too
        (their ``source`` is None)."""
        rows = self._read(self._sql(f"{_LATEST}{'' if removed else ' AND source IS NOT NULL'} ORDER BY name"))
        return [_row(r) for r in rows]
