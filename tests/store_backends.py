"""Reading and writing a store's tables behind its back, on either backend (for the conformance suite)."""

from __future__ import annotations

import sqlite3

__all__ = ["is_postgres", "query", "set_every_run"]


def is_postgres(url: str) -> bool:
    return str(url).startswith(("postgresql://", "postgres://"))


def query(url: str, sql: str, args: tuple = ()) -> list[tuple]:
    """Run one statement (``?`` placeholders) on the store at ``url`` and commit it; return its rows."""
    if is_postgres(url):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute(sql.replace("?", "%s"), args)
            return cur.fetchall() if cur.description else []
    db = sqlite3.connect(url)
    try:
        rows = db.execute(sql, args).fetchall()
        db.commit()
        return rows
    finally:
        db.close()


def set_every_run(column: str) -> str:
    """The statement that sets ``column`` of every run to one ``?`` (a stored value as it is, to damage it):
    an ``UPDATE`` of the runs row, or for a run's input and output, their rows of ``run_values``."""
    if column not in ("input", "output"):
        return f"UPDATE runs SET {column} = ?"
    return (
        f"INSERT INTO run_values (run_id, name, value) SELECT id, '{column}', ? FROM runs WHERE true "
        "ON CONFLICT (run_id, name) DO UPDATE SET value = EXCLUDED.value"
    )
