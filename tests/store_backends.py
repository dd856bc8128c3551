"""Reading and writing a store's tables behind its back, on either backend (for the conformance suite)."""

from __future__ import annotations

import sqlite3

__all__ = ["is_postgres", "query"]


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
