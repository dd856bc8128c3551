"""``SandboxLike``: what the agents and notebook layers ask of a ``Sandbox``, typed without importing it.

The layers below the facade (``agents/``) cannot import ``sandbox.py``; the notebook presents runs through the
same calls. The store is not among them: what a view needs of it (a run's row, its journal's size, the store's
change counter and announcements) is a ``Sandbox`` method, so the store stays the facade's own. A ``Sandbox``
satisfies the protocol as it is (mypy checks it where a ``Sandbox`` is passed in).

>>> from jupyter_sandbox import Sandbox
>>> def finished(sb: SandboxLike, run_id: str) -> bool:
...     return sb.status(run_id) == "completed"
>>> sb = Sandbox()
>>> finished(sb, sb.eval("return 1").run_id)
True
>>> sb.close()
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from ..actions import Action, Resume
from ..engine.answers import NO_ANSWER
from ..engine.attempt import Observer
from ..engine.realm import Limits
from ..results import RollbackResult, RunInfo, RunResult

__all__ = ["SandboxLike"]


class SandboxLike(Protocol):
    """The facade's calls that tools, MCP clients and run cards make (implemented by ``Sandbox``)."""

    @property
    def actions(self) -> dict[str, Action]: ...

    @property
    def scheduling(self) -> bool: ...

    def action(self, *args: Any, **options: Any) -> Any:
        """Register a Python callable as an action (``Sandbox.action``'s arguments)."""

    def add_action(self, action: Action) -> None:
        """Register an ``Action`` built whole (``Sandbox.add_action``)."""

    def remove_action(self, name: str) -> bool: ...

    def catalog(self, actions: Iterable[str] | None = None) -> list[Any]: ...

    def input_issues(self, action: str, value: Any) -> list[dict[str, str]]: ...

    def save_script(
        self,
        name: str,
        source: str | None = None,
        *,
        run_id: str | None = None,
        description: str | None = None,
        input_schema: Any = None,
        output_schema: Any = None,
    ) -> Any: ...

    def eval(
        self,
        source: str,
        input: Any = None,
        call_log: list[Any] | None = None,
        resume: Resume | Iterable[Resume] | None = None,
        strict: bool = False,
        *,
        name: str | None = None,
        actions: list[str] | None = None,
        limits: Limits | None = None,
        observer: Observer | None = None,
        save: dict[str, Any] | None = None,
    ) -> RunResult: ...

    def script_kept(self, run_id: str) -> Any:
        """The saved script a run started with ``eval(save=...)`` became (``Sandbox.script_kept``)."""

    def resume(
        self,
        run_id: str,
        value: Any = NO_ANSWER,  # (None is an answer: JSON null)
        *,
        answers: dict[str, Any] | None = None,
        source: str | None = None,
        force: bool = False,
        observer: Observer | None = None,
        channel: str = "api",
    ) -> RunResult | RollbackResult: ...

    def rollback(self, run_id: str, *, reason: str | None = None, channel: str = "api") -> RollbackResult: ...

    def run(self, run_id: str, *, journal: bool = True) -> RunInfo: ...

    def chain(self, run_id: str) -> list[str]: ...

    def status(self, run: str | RunInfo) -> str: ...

    def timeline(self, run_id: str) -> dict[str, Any]: ...

    # what a live view of runs watches (the run cards): never the store itself

    @property
    def store_path(self) -> str: ...

    def journal_bytes(self, run_id: str) -> int: ...

    def change_counter(self) -> int: ...

    @property
    def announces_changes(self) -> bool: ...

    def listen(self) -> Any: ...
