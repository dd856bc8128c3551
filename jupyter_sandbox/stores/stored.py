"""Stored values outside the journal, read through one validation: meta's schema version, a run's options,
an export's header. Anything foreign is a ``StoreError`` naming the store or run and the field.

The rule for a value from a newer version: a field this version does not know is ignored (a run's option,
a limit ``Limits`` lacks, an export's extra key), so a store or file from a newer minor version still
reads; a known field with a wrong value, or a schema version out of range, is refused. (Journal rows are
checked by ``rows.decode``, built for speed; these values are read once per run or file, and pydantic
states them.)
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from ..errors import StoreError

__all__ = ["ExportHeader", "RunOptions", "export_header", "run_options", "schema_version"]

_DIGITS = frozenset("0123456789")


def schema_version(path: str, raw: Any, latest: int) -> int:
    """``meta.schema_version`` as stored (text of a version from 1 to ``latest``), or a ``StoreError`` naming it.

    >>> schema_version("runs.db", "3", 3)
    3
    """
    text = str(raw) if type(raw) is int else raw if isinstance(raw, str) else None  # SQLite may hand an int
    if text is None or not text or not set(text) <= _DIGITS or len(text) > 9:
        raise StoreError(
            f"{path}: meta.schema_version is {raw!r:.40}, not a version number; the store is damaged", path=path
        )
    version = int(text)
    if version < 1:
        raise StoreError(
            f"{path}: meta.schema_version is {version}, below the first version (1); the store is damaged", path=path
        )
    if version > latest:
        raise StoreError(
            f"{path} was written by a newer jupyter_sandbox (meta.schema_version {version}, "
            f"this version reads {latest}); upgrade jupyter_sandbox",
            path=path,
        )
    return version


_Number = StrictInt | StrictFloat


class RunOptions(BaseModel):
    """How a run was started. Unknown options (a newer version's) are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    strict: StrictBool = False
    actions: list[StrictStr] | None = None
    limits: dict[StrictStr, _Number | None] | None = None
    signals: StrictStr | None = None  # the run whose signal queue this one reads
    children: dict[StrictStr, StrictStr] | None = None  # a fork's child ids: the source's -> its own
    rollback: StrictBool | None = None  # a rollback has started: resume refuses the run


def run_options(run_id: str, value: Any) -> dict[str, Any]:
    """A run's stored options as a plain dict, or a ``StoreError`` naming the run and the option.

    >>> run_options("r-1", {"strict": True, "newer": 1})
    {'strict': True, 'newer': 1}
    """
    if value is None:
        value = {}
    try:
        known = RunOptions.model_validate(value).model_dump(exclude_unset=True)
    except ValidationError as exc:
        raise StoreError(f"run {run_id}: its options{_first(exc)}; the store is damaged") from None
    return {**value, **known}  # a newer version's options kept as they are, unread


class ExportHeader(BaseModel):
    """What ``export_run`` writes around the runs: the format, the store schema, the root run."""

    model_config = ConfigDict(extra="ignore")

    format: Literal["jupyter-sandbox-run"]
    schema_: Annotated[StrictInt, Field(alias="schema", ge=0)] = 0
    root: StrictStr
    runs: list[Any]


def export_header(path: str, doc: Any, latest: int) -> ExportHeader:
    """An export file's decoded document, checked; a ``StoreError`` naming the file and the field."""
    try:
        header = ExportHeader.model_validate(doc)
    except ValidationError as exc:
        raise StoreError(f"{path} is not a jupyter_sandbox run export: its header{_first(exc)}", path=path) from None
    if header.schema_ > latest:
        raise StoreError(
            f"{path} was exported by a newer jupyter_sandbox (schema {header.schema_}, this version reads {latest})",
            path=path,
        )
    return header


def _first(exc: ValidationError) -> str:
    """The first problem pydantic found, as `` field .a.b: what is wrong`` (``: ...`` for the whole value)."""
    error = exc.errors()[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"] if p not in ("int", "float"))
    return f"{' field ' + where if where else ''}: {error['msg'].lower()} (got {error.get('input')!r:.60})"
