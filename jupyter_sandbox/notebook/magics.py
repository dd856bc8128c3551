"""``%%sandbox`` and ``%sandbox``: the IPython magics.

``%load_ext jupyter_sandbox`` registers them and starts the default store's
scheduler (parked runs wake on their own). Defaults are traitlets:
``%config SandboxMagics`` lists them, ``%config SandboxMagics.fuel_seconds = 5``
sets one. The magics own presentation only; the ``Sandbox`` does the work.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from traitlets import Bool, Float, Int, Unicode, default, observe
from traitlets.config import Configurable

from ..engine.realm import Limits
from ..sandbox import Sandbox
from . import commands, tool_card
from .card_comm import register_comm_target
from .card_views import publish
from .cell_run import show_run
from .defaults import configured_store, from_namespace, sandbox_for, set_default_store
from .session import close_session, current

__all__ = ["SandboxMagics", "load_ipython_extension", "unload_ipython_extension"]

_MIB = 1024 * 1024


@magics_class
class SandboxMagics(Magics, Configurable):
    """The ``%%sandbox`` cell magic and the ``%sandbox`` line magic."""

    store = Unicode(
        help="The store file for runs, relative to the kernel's working directory "
        "(the notebook's folder); ':memory:' keeps runs in memory only; a postgresql:// URL "
        "shares one database. Default: $JUPYTER_SANDBOX_STORE, else .sandbox/runs.sqlite."
    ).tag(config=True)
    strict = Bool(
        False, help="Run cells in strict mode by default: Math.random and Date throw (use ctx.now() and input instead)."
    ).tag(config=True)
    fuel_seconds = Float(
        2.0, help="CPU seconds a script may run between two awaits before it fails fuel-exhausted."
    ).tag(config=True)
    memory_mb = Int(64, help="Memory limit of a run's QuickJS realm, in MiB.").tag(config=True)
    journal_entries = Int(
        5000, help="Journal entries a run may write before it fails journal-cap (ctx.continueAsNew is the way on)."
    ).tag(config=True)
    action_timeout = Float(
        None,
        allow_none=True,
        help="Seconds an action may take before it fails with a Timeout ActionError; None waits for ever.",
    ).tag(config=True)
    show_timeline = Bool(True, help="Show the timeline in the run card under a %%sandbox cell.").tag(config=True)
    scheduler_interval = Float(
        1.0, help="How often (seconds) each store's scheduler wakes due parked runs; 0 turns the scheduler off."
    ).tag(config=True)

    @default("store")
    def _store_default(self) -> str:
        return configured_store()

    @observe("store")
    def _store_changed(self, change: Any) -> None:
        set_default_store(change["new"])

    def sandbox(self, store: str | None = None) -> Sandbox:
        """The Sandbox of ``store`` (the configured one by default), its scheduler started."""
        sb = sandbox_for(store)
        if self.scheduler_interval > 0:
            sb.start_scheduler(self.scheduler_interval, on_result=lambda run_id, _outcome: publish(run_id, sb))
        return sb

    def _namespace(self) -> dict[str, Any]:
        """The user's namespace (magics are always made with a shell: see ``load_ipython_extension``)."""
        if self.shell is None:
            raise UsageError("the sandbox magics have no IPython shell (load them with %load_ext jupyter_sandbox)")
        return self.shell.user_ns

    def lookup(self, name: str, option: str) -> Any:
        """A variable of the user's namespace, or a UsageError naming the option."""
        try:
            return self._namespace()[name]
        except KeyError:
            raise UsageError(f"{option} {name}: no variable {name!r} in the namespace") from None

    def limits(self, sb: Sandbox, args: Any) -> Limits:
        """The sandbox's limits with the configured defaults and this cell's overrides."""

        def pick(value: Any, default: Any) -> Any:
            return default if value is None else value

        try:
            return dataclasses.replace(
                sb.limits,
                fuel_seconds=pick(args.fuel, self.fuel_seconds),
                memory_bytes=int(pick(args.memory, self.memory_mb) * _MIB),
                journal_entries=pick(args.journal_entries, self.journal_entries),
                action_timeout=pick(args.timeout, self.action_timeout) or None,
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    @no_var_expand
    @cell_magic("sandbox")
    @magic_arguments(name="%sandbox")  # argparse shows it with one more %
    @argument("-i", "--input", metavar="VAR", help="a Python variable whose value (JSON) is the script's ctx.input")
    @argument(
        "-o",
        "--out",
        metavar="VAR",
        help="store the run's output in VAR when it finishes (also when it finishes after an Approve click)",
    )
    @argument("--name", help="a name for the run: %%sandbox resume/show/check accept it in place of the id")
    @argument("--strict", action="store_true", help="strict mode: Math.random and Date throw")
    @argument(
        "--actions",
        metavar="A,B",
        help="only these actions are visible to the script; plain functions "
        "of the namespace named here are registered as actions",
    )
    @argument("--fuel", type=float, metavar="SECONDS", help="CPU seconds between awaits (default: fuel_seconds)")
    @argument("--memory", type=float, metavar="MB", help="the realm's memory limit (default: memory_mb)")
    @argument(
        "--journal-entries", type=int, metavar="N", help="journal entries before journal-cap (default: journal_entries)"
    )
    @argument("--timeout", type=float, metavar="SECONDS", help="seconds an action may take (default: action_timeout)")
    @argument("--store", metavar="PATH", help="the store file for this run (default: SandboxMagics.store)")
    def sandbox_cell(self, line: str, cell: str) -> None:
        """Run the cell as a JavaScript workflow script in a deterministic QuickJS realm.

        The cell is the body of an async function: top-level ``await`` works and
        ``return value`` is the run's output. The script sees ``ctx`` (input,
        call, parallel, step, plan, sleep, waitForEvent, now, log, progress,
        delegate, agent, continueAsNew), ``actions.NAME(input)`` for every
        registered action (``@jupyter_sandbox.action``), ``data`` and ``console``.

        The output is the run's card: its status, console, compact timeline and
        output, read from the store and updated live. When an action needs an
        answer the cell ends and the card shows Approve / Reject / Edit per open
        interrupt; a click resumes the run by replay and the card shows the
        decision and the outcome in place. The card follows the run wherever it
        changes (``%sandbox resume``, the scheduler, another kernel). Errors show the source line
        with a caret; the stop button cancels the run (``%sandbox resume RUN``
        runs it again). Variables are not expanded in the cell (``$``/``{}``
        are JavaScript's).
        """
        args = parse_argstring(self.sandbox_cell, line)
        sb = self.sandbox(args.store)
        value = self.lookup(args.input, "-i") if args.input else None
        names = None
        if args.actions:
            try:
                names = from_namespace(args.actions.split(","), self._namespace(), sb)
            except KeyError as exc:
                raise UsageError(exc.args[0]) from None
        limits = self.limits(sb, args)
        strict = args.strict or self.strict
        script = "\n" + cell  # the %%sandbox line counts: line N of an error is line N of the cell's editor
        show_run(
            self,
            sb,
            args.name or "%%sandbox",
            lambda observer: sb.eval(
                script, value, strict=strict, name=args.name, actions=names, limits=limits, observer=observer
            ),
            out=args.out,
        )

    @no_var_expand
    @line_magic("sandbox")  # type: ignore[arg-type]  # IPython types line_magic(name) as a union, no overloads
    def sandbox_line(self, line: str) -> None:
        commands.dispatch(self, line)

    sandbox_line.__doc__ = commands.HELP  # type: ignore[assignment]  # (that gap again: the method reads as Never)


def load_ipython_extension(ip: Any) -> SandboxMagics:
    """Open the notebook session (or adopt the one ``@jupyter_sandbox.action`` opened before), register the
    magics (with the shell's config) and start the default store's scheduler."""
    current()
    magics = SandboxMagics(shell=ip, config=ip.config)
    ip.register_magics(magics)
    if magics not in ip.configurables:
        ip.configurables.append(magics)  # so %config SandboxMagics... finds it
    set_default_store(magics.store)
    magics.sandbox()
    register_comm_target(ip)  # the cards already in the notebook become live again
    tool_card.register(ip)  # an agent tool's result displays as its run's card
    return magics


def unload_ipython_extension(ip: Any) -> None:
    """``%unload_ext jupyter_sandbox``: close the notebook session (its Sandboxes, schedulers and threads;
    what it registered is forgotten) and take the magics' settings out of ``%config``."""
    close_session()
    ip.configurables[:] = [c for c in ip.configurables if not isinstance(c, SandboxMagics)]
