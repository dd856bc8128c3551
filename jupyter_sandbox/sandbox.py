"""``Sandbox``: register actions, run and resume scripts, list and inspect runs.

>>> sb = Sandbox()                       # runs kept in memory; Sandbox(store="runs.sqlite") to keep them
>>> @sb.action
... def add(pair):
...     return pair[0] + pair[1]
>>> sb.eval("return await actions.add([1, 2])").output
3
>>> sb.close()                           # or `with Sandbox() as sb:`
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import Any, cast

from .actions import Action, Resume
from .calling import started_script
from .decisions import as_json
from .engine.answers import NO_ANSWER, Answers
from .engine.attempt import Observer, StartRequest
from .engine.clock import Clock, SystemClock
from .engine.journal import CallLog, Journal
from .engine.loop import LoopHold
from .engine.nesting import nested
from .engine.realm import Limits
from .engine.rollback import rejection_with_rollback
from .engine.runs import Engine
from .errors import SandboxClosed, StoreError
from .registering import action_decorator, agent_decorator, check_addable
from .results import CheckReport, RollbackResult, RunInfo, RunResult, status_word, stored_status
from .run_arguments import answers_of, check_arguments, checked_save, default_identity, is_stored_run, who
from .stores import Store, open_store, portable
from .stores.runs_table import RunStatus
from .stores.sqlite import SQLiteStore

__all__ = ["Sandbox"]


class Sandbox:
    """Actions, a store and limits; runs scripts in a deterministic QuickJS realm.

    ``store``: a path to an SQLite file (created on first use), or
    ``":memory:"`` (the default). ``limits``: a ``Limits``. ``clock``: where
    timers read the time (a ``ManualClock`` in tests). ``on_progress(run_id,
    patch)`` receives ``ctx.progress`` calls (never journaled, never replayed).
    ``identity``: who answers through this Sandbox, recorded on every answer
    (default: the JupyterHub user if ``JUPYTERHUB_USER`` is set, else
    ``user@host``). ``approvers(identity, channel, interrupt) -> bool``: who
    may answer; asked before an answer is recorded, a refusal is
    ``AnswerRefused`` and records nothing (README, "Who approves").

    >>> sb = Sandbox(identity="ada@lab", approvers=lambda who, via, it: via != "mcp:cursor")
    >>> sb.close()
    """

    def __init__(
        self,
        store: str | os.PathLike[str] | Store = ":memory:",
        *,
        limits: Limits | None = None,
        clock: Clock | None = None,
        on_progress: Callable[[str, Any], None] | None = None,
        identity: str | None = None,
        approvers: Callable[[str | None, str | None, Any], bool] | None = None,
    ):
        if identity is not None and (not isinstance(identity, str) or not identity.strip()):
            raise TypeError(f"identity names who answers (a non-empty string), got {identity!r:.60}")
        if approvers is not None and not callable(approvers):
            raise TypeError(f"approvers is a callable (identity, channel, interrupt) -> bool, got {approvers!r:.60}")
        self._store: Store = open_store(store)
        self.identity = identity or default_identity()
        self.limits = limits or Limits()
        self._engine = Engine(
            self._store, self.limits, clock or SystemClock(), on_progress, scratch=lambda: SQLiteStore(":memory:")
        )
        self._engine.approvers = approvers
        self._loop = LoopHold()  # given back by close(): the last Sandbox closed stops the loop's thread
        self._closed = False
        self._engine.sync_scripts = self._sync_scripts
        self._engine.completed = self._completed
        self._scheduler: Any = None
        self._mcp_servers: dict[str, Any] = {}  # name -> agents.mcp_client.McpServer, started by mcp()

    # -- registering ------------------------------------------------------------

    def action(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        approval: bool | Callable[[Any], bool] = False,
        timeout: float | None = None,
        input_schema: Any = None,
        output_schema: Any = None,
        revert: Callable[[Any, Any], Any] | None = None,
    ) -> Any:
        """Register a Python callable as an action (a decorator, bare or with options).

        The script calls it as ``await actions.NAME(input)`` or ``await ctx.call("NAME", input)``.
        ``approval=True`` pauses the run for a human before the first call; a callable of the validated
        input (``approval=lambda order: order.total > 100``) decides per call, its verdict journaled so a
        replay never asks it again;
        ``timeout`` (seconds) turns a hung call into an ``ActionError``.
        Type hints (or ``input_schema``/``output_schema``: a JSON Schema dict or a type) make it typed:
        each call's input is validated before it runs, and its declaration says what it takes and
        returns (``agents/catalog.py``).
        ``name`` (default: the function's name) is one or more identifiers joined by dots
        (``files.read_file``), none a member of JavaScript's ``Object.prototype`` (``__proto__``,
        ``constructor``, ``toString``, ...), not the namespace of another action, nor in ``scripts`` (the saved
        scripts'): else ``RegistrationError``, also a ``ValueError`` (``naming.check_name``). Registering a name
        again (a cell run again) replaces the action; over an MCP tool of that name it is refused.
        The action gets its own copy of each input and answer.
        ``revert(input, result)`` undoes a completed call: ``rollback(run_id)`` runs it (README "Code mode").
        """
        register = action_decorator(
            self._engine,
            self._refuse_if_closed,
            self.add_action,
            name,
            approval=approval,
            timeout=timeout,
            input_schema=input_schema,
            output_schema=output_schema,
            revert=revert,
        )
        return register(fn) if fn is not None else register

    def add_action(self, action: Action) -> None:
        """Register an ``Action`` built whole (its ``spec``, ``about``, ``revert`` given): the step ``action``,
        and MCP tools take (``Engine.register_action``). A bad or taken name is the ``RegistrationError`` of
        ``action``; the same name again replaces an action of the same kind (a Python function, an MCP server's
        tool), and refuses one of another kind. A saved script is registered from the store
        (``save_script``): an ``Action`` with ``saved=`` is refused here.

        >>> sb = Sandbox()
        >>> sb.add_action(Action("files.echo", lambda x: x, about={"server": "files"}))
        >>> sb.actions["files.echo"].about
        {'server': 'files'}
        >>> sb.close()
        """
        self._refuse_if_closed()
        check_addable(action)
        self._engine.register_action(action)

    def agent(self, fn: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
        """Register a Python agent: ``ctx.agent({agent: NAME, input})`` runs it as a child run."""
        register = agent_decorator(self._engine, self._refuse_if_closed, name)
        return register(fn) if fn is not None else register

    def mcp(
        self,
        name: str,
        command: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        approval: bool | dict[str, bool] | None = None,
        timeout: float = 60.0,
        revert: dict[str, Callable[[Any, Any], Any]] | None = None,
    ) -> list[str]:
        """Start a stdio MCP server and register each of its tools as the action ``NAME.TOOL``; return their names.

        ``approval``: None follows each tool's annotations (not read-only and destructive, the spec's defaults,
        needs approval), a bool decides for every tool, a dict by tool name. ``timeout``: seconds a call may
        take before the server counts as hung (it is stopped; the next call starts it again). See
        ``agents/mcp_client.py``. ``revert``: tool name -> ``fn(input, result)``, its calls' compensation
        (``rollback``).
        """
        from .agents.mcp_client import connect

        self._refuse_if_closed()  # a server started now would outlive this Sandbox
        return connect(
            self, self._mcp_servers, name, command, env=env, cwd=cwd, approval=approval, timeout=timeout, revert=revert
        )

    @property
    def mcp_servers(self) -> dict[str, Any]:
        """The MCP servers started by ``mcp``, by name (a copy): ``sb.mcp_servers["files"].command``."""
        return dict(self._mcp_servers)

    @property
    def actions(self) -> dict[str, Action]:
        return dict(self._engine.actions)

    def remove_action(self, name: str) -> bool:
        """Unregister an action (a run that calls it later fails as for any unknown name); False if none.

        >>> sb = Sandbox()
        >>> _ = sb.action(lambda x: x, name="echo")
        >>> sb.remove_action("echo"), "echo" in sb.actions
        (True, False)
        >>> sb.close()
        """
        self._refuse_if_closed()
        return self._engine.actions.pop(name, None) is not None

    # -- code mode (agents/) ------------------------------------------------------------

    def catalog(self, actions: Iterable[str] | None = None) -> list[Any]:
        """The actions' catalog entries (``agents.catalog.ActionSpec``: name, description, schemas), by name."""
        from .agents.catalog import spec_of
        from .saved import removed

        self._refuse_if_closed()
        self._sync_scripts()
        shown = {n: a for n, a in self._engine.actions.items() if not removed(a)}
        return [spec_of(shown[n]) for n in _chosen(shown, actions)]

    def input_issues(self, action: str, value: Any) -> list[dict[str, str]]:
        """The issues ``value`` would meet as ``action``'s input: ``[]`` when it is valid (or the action is untyped).

        What the run card checks an edited approval against before it resumes the run:

        >>> sb = Sandbox()
        >>> @sb.action
        ... def double(n: int) -> int:
        ...     return 2 * n
        >>> sb.input_issues("double", "two")[0]["path"]
        '$'
        >>> sb.close()
        """
        from .agents.catalog import check_input, spec_of

        self._refuse_if_closed()
        if action not in self._engine.actions:
            return []  # not registered here (this kernel has not defined it yet): the resume says so
        return check_input(spec_of(self._engine.actions[action]), value)

    def declarations(self, actions: Iterable[str] | None = None, *, query: str | None = None) -> str:
        """TypeScript declarations of a script's world: the actions, ``ctx``, the globals and the rules.

        ``query`` (words) keeps only the actions whose name or description matches (``agents/search.py``).
        """
        from .agents.typescript import declarations

        specs = self.catalog(actions)
        if query is not None:
            from .agents.search import matching

            specs = matching(specs, query)
        return declarations(specs)

    def tool(self, name: str = "sandbox", *, actions: Iterable[str] | None = None, **options: Any) -> Any:
        """This sandbox as an agent's tool (``agents.tool.SandboxTool``).

        The model writes a script, the tool runs it.
        """
        from .agents.tool import SandboxTool

        self._refuse_if_closed()
        return SandboxTool(self, name, actions=actions, **options)

    # -- saved scripts (saved.py) ----------------------------------------------------------

    def save_script(
        self,
        name: str,
        source: str | None = None,
        *,
        run_id: str | None = None,
        description: str | None = None,
        input_schema: Any = None,
        output_schema: Any = None,
    ) -> Any:
        """Keep a script in the store as the action ``scripts.NAME``; returns the ``SavedScript`` (its version).

        ``source``, or ``run_id=`` to save the script a run ran. Every run on the store may call it
        (``await actions.scripts.NAME(input)``, a durable child run whose ``ctx.input`` is the call's input);
        it is declared with ``description`` and its schemas (a JSON Schema dict or a type). Each save is a
        new version; a run records the version it ran, and a replay runs that one.

        >>> sb = Sandbox()
        >>> sb.save_script("double", "return ctx.input * 2", input_schema=int).version
        1
        >>> sb.eval("return await actions.scripts.double(21)").output
        42
        >>> sb.close()
        """
        from .saved import save

        self._refuse_if_closed()
        return save(
            self._engine,
            name,
            source,
            run_id=run_id,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
        )

    def scripts(self) -> list[Any]:
        """The store's saved scripts, newest version of each (``SavedScript``: name, version, source, about)."""
        return self.store.scripts()

    def remove_script(self, name: str) -> bool:
        """Take a saved script out of the store's listing (runs that recorded a version still replay it)."""
        from .saved import remove

        self._refuse_if_closed()
        return remove(self._engine, name)

    def script_kept(self, run_id: str) -> Any:
        """The ``SavedScript`` a run started with ``eval(save=...)`` was kept as once it completed (saved now if
        it was not yet); None when it asked for no save. A save refused (a bad name, a schema that cannot be
        used) raises its error, the same on every ask.

        >>> sb = Sandbox()
        >>> run = sb.eval("return 1", save={"name": "one"})
        >>> sb.script_kept(run.run_id).version, sb.script_kept(run.run_id).version
        (1, 1)
        >>> sb.close()
        """
        from .saved import kept

        self._refuse_if_closed()
        return kept(self._engine, run_id)

    def _sync_scripts(self) -> None:
        from .saved import sync

        sync(self._engine)

    def _completed(self, run: Any) -> None:
        from .saved import on_completed

        on_completed(self._engine, run)

    # -- running -------------------------------------------------------------------

    def eval(
        self,
        source: str,
        input: Any = None,
        call_log: list | None = None,
        resume: Resume | Iterable[Resume] | None = None,
        strict: bool = False,
        *,
        name: str | None = None,
        actions: list[str] | None = None,
        limits: Limits | None = None,
        observer: Observer | None = None,
        save: dict[str, Any] | None = None,
    ) -> RunResult:
        """Run a script, or resume one from its call log; return its result.

        Raises ``SandboxInterrupt`` when an action needs an answer: pass its
        ``call_log`` back with ``resume=Resume(position=it.position, value=...)``
        (or call ``resume(it.run_id, value)``). Also raises ``RunParked``,
        ``CallLogMismatchError``, ``ScriptError``, ``LintError``, ``LimitExceeded``.
        ``save={"name": ..., "description"?, "input_schema"?, "output_schema"?}`` keeps the script as
        ``scripts.NAME`` when the run completes, now or on a later resume in any process, once
        (``script_kept(run_id)`` says as what, or why not).
        """
        started_script()  # (from inside a plain action: it runs on a worker from now on)
        return self._loop.run(
            self._aeval(source, input, call_log, resume, strict, name, actions, limits, observer, save)
        )

    async def aeval(
        self,
        source: str,
        input: Any = None,
        call_log: list | None = None,
        resume: Resume | Iterable[Resume] | None = None,
        strict: bool = False,
        *,
        name: str | None = None,
        actions: list[str] | None = None,
        limits: Limits | None = None,
        observer: Observer | None = None,
        save: dict[str, Any] | None = None,
    ) -> RunResult:
        """``eval``, awaited on the caller's own loop (or from an ``async def`` action: ``await sb.aeval(...)``)."""
        return await self._loop.tracked(
            self._aeval(source, input, call_log, resume, strict, name, actions, limits, observer, save)
        )

    async def _aeval(
        self,
        source: str,
        input: Any,
        call_log: list | None,
        resume: Resume | Iterable[Resume] | None,
        strict: bool,
        name: str | None,
        actions: list[str] | None,
        limits: Limits | None,
        observer: Observer | None,
        save: dict[str, Any] | None = None,
    ) -> RunResult:
        check_arguments(name=name, actions=actions, limits=limits)
        save = checked_save(save)
        answers = answers_of(resume)
        answers.by, answers.via, answers.process = self._who("api").values()
        run_id = getattr(call_log, "run_id", None)
        with nested():  # an async action awaiting this counts one level (docs: README, "Limits")
            if isinstance(call_log, CallLog) and run_id and is_stored_run(self.store, self._engine, run_id, call_log):
                return await self._engine.resume(run_id, answers, source=source, observer=observer, limits=limits)
            request = StartRequest(source, input, name, strict, actions, limits, call_log, answers, observer, save)
            return await self._engine.start(request)

    def resume(
        self,
        run_id: str,
        value: Any = NO_ANSWER,
        *,
        answers: dict[str, Any] | None = None,
        source: str | None = None,
        force: bool = False,
        observer: Observer | None = None,
        channel: str = "api",
    ) -> RunResult | RollbackResult:
        """Resume a paused run from its stored source and journal, from any process.

        ``value`` answers the only open interrupt; ``answers`` maps
        interrupt ids (``SandboxInterrupt.interrupts[i].id``) to answers, for
        several at once. Leaving ``value`` out gives no answer; ``None`` is an
        answer (JSON null), which a question receives as ``null``. An approval
        takes exactly ``True``/``False``, ``Approve()``, ``Reject(reason)``,
        ``Edit(input)`` or their JSON forms (else ``RunStateError``, ``None``
        too, before anything runs). ``channel`` says how
        the answer came (``api``, ``card``, ``magic``, ``tool``, ``mcp:CLIENT``);
        the answer entry records it with ``identity`` and the store's clock.
        ``source`` resumes with edited source. Exactly one of
        two concurrent resumes proceeds; the other raises ``RunBusyError``.
        An id (or a ``Resume`` position passed to ``eval``) that names no open
        interrupt raises ``UnaddressedAnswer`` listing the open ones, before
        anything runs; so does ``value`` (``None`` too) with no interrupt open
        (a parked run), unless it repeats the run's last recorded answer (a
        retried resume after the answer was recorded finishes the run). ``value`` and ``answers`` given together
        must say the same of an interrupt they both reach (else ``RunStateError``, nothing recorded).
        A rejection that also rolls back (``{"approved": False, "reason": ..., "rollback": True}``) ends
        the run there, without the script seeing it, and returns ``rollback``'s ``RollbackResult``.
        """
        value, answers = as_json(value), {k: as_json(v) for k, v in (answers or {}).items()}
        given = Answers(by_id=dict(answers), first=value, **self._who(channel))
        rejection = rejection_with_rollback(self._engine, run_id, value, answers)
        if rejection is not None:  # a rejection that also rolls the run back: one decision, journaled once
            given.check()  # who may answer is asked the same way first
            self._engine.admit(given, Journal(self.store.entries(run_id)), run_id, None)
            return self._loop.run(self._engine.rollback(run_id, rejection[1], rejected=rejection[0], who=given.who()))
        return self._loop.run(self._engine.resume(run_id, given, source=source, observer=observer, force=force))

    def _who(self, channel: str) -> dict[str, Any]:
        return who(self.identity, channel)

    def signal(self, run_id: str, event: Any) -> RunResult | None:
        """Send an event to a run; delivered exactly once to a matching ``ctx.waitForEvent``.

        If the run is parked it resumes now and this returns its result (or
        raises its next pause); otherwise the event waits for the run.
        """
        return self._loop.run(self._engine.signal(run_id, event))

    def run_due(self) -> list[tuple[str, Any]]:
        """Resume every parked run whose timer is due on this Sandbox's clock."""
        return self._loop.run(self._engine.run_due())

    def start_scheduler(self, interval: float = 1.0, on_result: Callable[[str, Any], None] | None = None) -> None:
        """Wake due runs every ``interval`` seconds in the background (also runs overdue ones now)."""
        from .engine.scheduler import Scheduler

        if self._scheduler is None:
            self._scheduler = Scheduler(self._engine, self._loop, interval, on_result)
        self._scheduler.start()

    @property
    def scheduling(self) -> bool:
        """Whether this Sandbox's scheduler is running (``start_scheduler``): its parked runs wake by themselves."""
        return self._scheduler is not None and self._scheduler.running

    def stop_scheduler(self) -> None:
        if self._scheduler is not None:
            self._scheduler.stop()

    def rollback(self, run_id: str, *, reason: str | None = None, channel: str = "api") -> RollbackResult:
        """Undo what a run did: the reverts of its completed calls, newest first, each exactly once.

        Each call's action's ``revert(input, result)`` runs (``@sb.action(revert=...)``); a call into a
        child script rolls the child back in its place; a ``continueAsNew`` chain is rolled back whole,
        its newest run first. The run ends ``rolled_back`` and never resumes. A call whose action has no
        revert is listed in ``not_reverted``. Allowed on a run that is finished, failed, paused or
        cancelled (not on one running now: ``RunBusyError``). A rollback that stopped half-way (a
        crash) is finished by the next ``rollback``, which runs no recorded revert again; a revert that
        started but recorded no outcome runs again. A second rollback runs nothing. The ``rollback``
        entry records who asked for it (``identity``), how (``channel``) and from which process.

        >>> sb = Sandbox()
        >>> undone = []
        >>> sb.action(lambda n: n, name="book", revert=lambda n, result: undone.append(n))  # doctest: +ELLIPSIS
        <function ...>
        >>> run = sb.eval("await actions.book(1); await actions.book(2)")
        >>> [item["input"] for item in sb.rollback(run.run_id).reverted], undone
        ([2, 1], [2, 1])
        >>> sb.close()
        """
        return self._loop.run(self._engine.rollback(run_id, reason, who=self._who(channel)))

    def check(self, run_id: str, source: str | None = None) -> CheckReport:
        """Replay a run without executing anything; report "deterministic" or the first divergence."""
        return self._loop.run(self._engine.check(run_id, source))

    def fork(
        self,
        run_id: str,
        at: int,
        value: Any = NO_ANSWER,
        *,
        answers: dict[str, Any] | None = None,
        name: str | None = None,
    ) -> RunResult:
        """A new run replaying ``run_id``'s journal before entry ``at`` and live after it.

        ``value`` answers the interrupt left open at the fork point: "what if I had said no?"
        (``None`` answers null; leave ``value`` out for no answer). Where none is open, a ``value`` is
        ``UnaddressedAnswer``, as an ``answers={id: ...}`` is, before the fork is made.
        """
        if isinstance(at, bool) or not isinstance(at, int) or at < 0:
            raise TypeError(f"fork(at=...) takes a journal position (a non-negative int), got {at!r}")
        return self._loop.run(self._engine.fork(run_id, at, value, dict(answers or {}), name=name, **self._who("api")))

    # -- inspecting ---------------------------------------------------------------

    def runs(self, *, status: str | None = None, limit: int = 200, include_children: bool = False) -> list[RunInfo]:
        """Stored runs, newest first; ``status`` filters by a word of ``results.STATUSES`` (``InvalidValue`` for
        any other)."""
        stored = None if status is None else cast(RunStatus, stored_status(status))  # a word it checked
        rows = self.store.list_runs(status=stored, top_level=not include_children, limit=limit)
        return [_info(row) for row in rows]

    def run(self, run_id: str, *, journal: bool = True) -> RunInfo:
        """One run with its journal entries (plain dicts), attempts and pending interrupts.

        ``journal=False`` reads the run's row alone (its status, attempt, output, source and links, with
        ``entries``, ``attempts`` and ``pending`` left empty): what a caller polling a run needs, at the cost
        of one row whatever the journal's length. ``sb.run(run_id, journal=False).status``
        """
        info = _info(self.store.get_run(run_id))
        if journal:
            doc = self._engine.document(run_id)
            info.entries, info.attempts, info.pending = doc["entries"], doc["attempts"], doc["pending"]
        return info

    def chain(self, run_id: str) -> list[str]:
        """The run and the successors it continued as (``ctx.continueAsNew``), in order; the last one says how
        the chain stands.

        >>> sb = Sandbox()
        >>> r = sb.eval("if (!ctx.input) await ctx.continueAsNew(1); return ctx.input")
        >>> sb.chain(r.run_ids[0]) == r.run_ids
        True
        >>> sb.close()
        """
        chain = [run_id]
        row = self.store.get_run(run_id)
        while row.status == "continued" and row.successor and len(chain) <= 1000:
            row = self.store.get_run(row.successor)
            chain.append(row.id)
        return chain

    def status(self, run: str | RunInfo) -> str:
        """How the run (an id, or a ``RunInfo`` already read) stands, a word of ``results.STATUSES``: a continued
        run's is its chain's last run's."""
        if isinstance(run, RunInfo) and run.status != "continued":
            return status_word(run.status)
        run_id = run.id if isinstance(run, RunInfo) else run
        return status_word(self.store.get_run(self.chain(run_id)[-1]).status)

    # -- watching the store (what a live view of runs asks) ------------------------------

    @property
    def store_path(self) -> str:
        """The store's file path, or its URL without the password: what messages and run cards name it by.

        >>> with Sandbox() as sb:
        ...     sb.store_path
        ':memory:'
        """
        return str(self._store.path)

    def journal_bytes(self, run_id: str) -> int:
        """The encoded size of the run's journal: it grows while the run runs, its row unchanged, so a view
        of a running run watches it.

        >>> sb = Sandbox()
        >>> sb.journal_bytes(sb.eval("console.log('hi')").run_id) > 0
        True
        >>> sb.close()
        """
        return self.store.journal_bytes(run_id)

    def change_counter(self) -> int:
        """A number that grows whenever anything in the store changes: one cheap read to poll for changes.

        >>> sb = Sandbox()
        >>> before = sb.change_counter()
        >>> _ = sb.eval("return 1")
        >>> sb.change_counter() > before
        True
        >>> sb.close()
        """
        return self.store.change_counter()

    @property
    def announces_changes(self) -> bool:
        """Whether the store is open and announces its changes (PostgreSQL's ``NOTIFY``): then ``listen()``
        works; otherwise a view polls ``change_counter()``.

        >>> with Sandbox() as sb:
        ...     sb.announces_changes
        False
        """
        return callable(getattr(self._store, "listen", None)) and not getattr(self._store, "closed", False)

    def listen(self) -> Any:
        """A listener on a connection of its own: ``wait(timeout)`` returns the ids of the runs changed since
        (a set, empty when none), ``close()`` ends it. Only where ``announces_changes``; else a ``StoreError``.

        >>> sb = Sandbox("postgresql://localhost/runs")  # doctest: +SKIP
        >>> changes = sb.listen()  # doctest: +SKIP
        >>> changed = changes.wait(1.0)  # doctest: +SKIP
        >>> changes.close()  # doctest: +SKIP
        """
        listen = getattr(self.store, "listen", None)
        if not callable(listen):
            raise StoreError(f"the run store {self.store_path} does not announce changes: poll change_counter()")
        return listen()

    def timeline(self, run_id: str) -> dict[str, Any]:
        """The run's timeline document (docs/journal.md), as the widgets render it."""
        self._refuse_if_closed()
        return self._engine.document(run_id)

    def call_log(self, run_id: str) -> CallLog:
        self._refuse_if_closed()
        return self._engine.call_log(run_id)

    def export_run(self, run_id: str, path: str | os.PathLike[str]) -> str:
        """Write a run (with its children and journals) to one portable file."""
        return str(portable.export_run(self.store, run_id, path))

    def import_run(self, path: str | os.PathLike[str]) -> str:
        """Load a run exported by ``export_run``; returns its id, ready to ``resume``."""
        return portable.import_run(self.store, path)

    def close(self) -> None:
        """Stop what this Sandbox started (its runs, its scheduler, its MCP servers, its action threads), give
        back its hold on the engine loop (the last Sandbox to close stops the loop's thread) and close the store.

        A run still going (``eval`` on another thread, or the run of the action calling ``close``) stops at its
        next effect: its attempt is recorded ``cancelled``, its caller gets ``SandboxClosed`` naming the run, and
        a Sandbox on the same store resumes it from its journal. The store closes once those runs have
        recorded that (from inside an action, just after the action returns). A second ``close()`` does
        nothing; afterwards every call that needs the store or the engine (registering, running, resuming, reading
        runs, saving scripts, ``store`` itself) is a ``SandboxClosed`` (a ``StoreError``).

        >>> with Sandbox() as sb:
        ...     sb.eval("return 1").output
        1
        """
        if self._closed:
            return
        self._closed = True
        self._engine.closing = True
        if self._loop.stop():
            self._release()
        else:  # called by one of its own runs (an action): the rest waits for them, off their threads
            threading.Thread(target=self._release_when_stopped, name="jupyter-sandbox-close", daemon=True).start()

    def _release_when_stopped(self) -> None:
        self._loop.wait()
        self._release()

    def _release(self) -> None:
        """What ``close`` gives back once no run of this Sandbox is going."""
        self.stop_scheduler()
        if self._mcp_servers:
            from .agents.mcp_client import close_all

            close_all(self._mcp_servers)
        self._engine.executor.shutdown(wait=False, cancel_futures=True)  # its idle threads end now
        self._loop.release()
        self._store.close()

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise SandboxClosed(path=self.store_path)

    @property
    def store(self) -> Store:
        """The run store (``stores.base.Store``): after ``close()``, a ``SandboxClosed``, as for every call
        that needs it."""
        self._refuse_if_closed()
        return self._store

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _chosen(registered: dict[str, Action], actions: Iterable[str] | None) -> list[str]:
    """The names asked for (every registered action when None), sorted; an unknown name is a KeyError naming it."""
    names = sorted(registered) if actions is None else list(actions)
    unknown = [n for n in names if n not in registered]
    if unknown:
        raise KeyError(f"no action named {unknown[0]!r} is registered (available: {', '.join(sorted(registered))})")
    return names


def _info(row: Any) -> RunInfo:
    return RunInfo(
        id=row.id,
        name=row.name,
        kind=row.kind,
        status=row.status,
        created=row.created,
        updated=row.updated,
        attempt=row.attempt,
        source=row.source,
        input=row.input,
        output=row.output,
        error=row.error,
        parent=row.parent,
        predecessor=row.predecessor,
        successor=row.successor,
        wake_at=row.wake_at,
    )
