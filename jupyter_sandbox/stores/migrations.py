"""The store's schema versions: what each one changed, on both SQL backends, and which a store needs.

A store records its version in ``meta`` (``schema_version``). A fresh store is created at
``BASE_VERSION`` (each backend's own ``SCHEMA``) and then brought forward by every later step; an
older store by the steps after its version. Opening a store that is current runs no DDL: migrating
is an explicit step (``Store.migrate()``, ``jupyter-sandbox migrate --store URL``), which a store's
owner runs, and which opening does by itself only when the opener may (a fresh SQLite file, a
database the opener owns).

A new version is one ``Step`` at the end of ``STEPS``, its statements for each backend::

    Step(3, "saved scripts", sqlite=("CREATE TABLE scripts (...)",), postgres=("CREATE TABLE scripts (...)",))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..errors import StoreError
from .scripts import POSTGRES_TABLE, SQLITE_TABLE
from .stored import schema_version

__all__ = [
    "BASE_VERSION",
    "SCHEMA_VERSION",
    "Backend",
    "STEPS",
    "Step",
    "latest",
    "out_of_date",
    "statements",
    "stored_version",
]

Backend = Literal["sqlite", "postgres"]


@dataclass(frozen=True)
class Step:
    """The statements that bring a store from ``version - 1`` to ``version``."""

    version: int
    change: str  # what the version added, for `jupyter-sandbox migrate` to say
    sqlite: tuple[str, ...] = ()
    postgres: tuple[str, ...] = ()


def _run_values(blob: str) -> tuple[str, ...]:
    """Step 4 on one backend: a run's input and output move from its runs row to rows of their own."""
    return (
        f"CREATE TABLE run_values (run_id TEXT NOT NULL, name TEXT NOT NULL, value {blob} NOT NULL, "
        "PRIMARY KEY (run_id, name))",
        *(
            f"INSERT INTO run_values (run_id, name, value) SELECT id, '{name}', {name} FROM runs "
            f"WHERE {name} IS NOT NULL"
            for name in ("input", "output")
        ),
        "ALTER TABLE runs DROP COLUMN input",
        "ALTER TABLE runs DROP COLUMN output",
    )


BASE_VERSION = 2  # the version each backend's SCHEMA creates (PostgreSQL stores began here)
STEPS: tuple[Step, ...] = (
    Step(2, "runs.lease_until (leases with an expiry)", sqlite=("ALTER TABLE runs ADD COLUMN lease_until REAL",)),
    Step(3, "scripts (saved scripts, versioned)", sqlite=(SQLITE_TABLE,), postgres=(POSTGRES_TABLE,)),
    Step(
        4,
        "run_values (a run's input and output, out of its runs row)",
        sqlite=_run_values("BLOB"),
        postgres=_run_values("BYTEA"),
    ),
)
SCHEMA_VERSION = STEPS[-1].version  # the version this jupyter_sandbox writes


def latest() -> int:
    """The version this jupyter_sandbox brings a store to (read at call time: the steps are data)."""
    return STEPS[-1].version


def statements(backend: Backend, version: int) -> list[str]:
    """The statements that bring a store at ``version`` to ``latest()``, in order."""
    return [sql for step in STEPS if step.version > version for sql in getattr(step, backend)]


def stored_version(path: str, row: tuple[Any, ...] | None) -> int:
    """The version a store's ``meta`` row says it is at; a newer one than this code reads is refused."""
    if row is None:
        raise StoreError(f"{path} has no schema version in its meta table", path=path)
    return schema_version(path, row[0], latest())


def out_of_date(path: str, version: int, why: str) -> StoreError:
    """The error for a store this opener cannot bring up to date: what to run, and as whom."""
    return StoreError(
        f"the run store {path} is at schema {version}, this jupyter_sandbox needs {latest()}, and this "
        f"connection cannot migrate it ({why}): run `jupyter-sandbox migrate --store URL` once as the "
        'store\'s owner (README: "Migrations and grants")',
        path=path,
    )
