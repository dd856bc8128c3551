"""Stores: where runs and their journals live.

``base.py`` is the contract (``Store``, ``RunRow``), ``rows.py`` the journal
row codec every backend shares, ``sqlite.py`` the SQLite backend and
``postgres.py`` the PostgreSQL backend (the ``postgres`` extra), and
``portable.py`` the one-file export format, ``migrations.py`` the schema's versions and
``urls.py`` how a store's URL is shown (no credential). A new backend is one new module
plus a line in ``open_store``.

May import: ``jupyter_sandbox.errors`` only. Never the engine or the notebook.
"""

from __future__ import annotations

import os
import re
from typing import Any, cast

from ..errors import StoreError
from .base import RunRow, Store
from .urls import masked, secrets_of

__all__ = ["RunRow", "Store", "SCHEMES", "open_store"]

SCHEMES = ("sqlite", "postgresql", "postgres")  # URL schemes open_store serves; a bare path is an SQLite file
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_ONE_SLASH = re.compile(rf"^({'|'.join(SCHEMES)}):(?!//)", re.IGNORECASE)


def open_store(spec: Any) -> Store:
    """The store a ``Sandbox(store=...)`` argument names.

    A path (or ``":memory:"``) is an SQLite file; ``sqlite:///path`` too.
    ``postgresql://…`` (or ``postgres://…``) is a PostgreSQL database (libpq
    URL; its ``options=-csearch_path=…`` picks a schema). A string that
    looks like a URL of another scheme is refused, so a database
    URL is never silently taken as a file name. Anything else is taken to be a
    ``Store`` already.

    >>> open_store(":memory:").path
    ':memory:'
    """
    if not isinstance(spec, (str, os.PathLike)):
        return cast(Store, spec)
    text = os.fspath(spec)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    match = _URL.match(text)
    from .sqlite import SQLiteStore

    if match is None:
        one_slash = _ONE_SLASH.match(text)
        if one_slash:  # "postgresql:/u@h/db" is a typo for a URL, never a file of that name
            shown = masked(text, secrets_of(text))
            raise StoreError(
                f"cannot open the store {shown!r}: a {one_slash.group(1)} URL starts with "
                f"{one_slash.group(1)}:// (two slashes)",
                path=shown,
            )
        return SQLiteStore(text)
    scheme = match.group(1).lower()
    shown = masked(text, secrets_of(text))
    if scheme == "sqlite":
        return SQLiteStore(text[len(match.group(0)) :] or ":memory:")
    if scheme in ("postgresql", "postgres"):
        try:
            from .postgres import PostgresStore  # psycopg is an optional extra: imported only when asked for
        except ImportError as exc:
            raise StoreError(f"cannot open the store {shown!r}: {exc}", path=shown) from exc
        return PostgresStore(text)
    raise StoreError(
        f"cannot open the store {shown!r}: the scheme {scheme!r} is not served; "
        f"use a file path or one of: {', '.join(s + '://' for s in SCHEMES)}",
        path=shown,
    )
