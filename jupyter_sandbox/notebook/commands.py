"""The ``%sandbox`` line subcommands: the line parsed, and each subcommand run (``dispatch``).

Each subcommand is a function ``(magics, args)`` with its own
``@magic_arguments`` parser; ``HELP`` (the line magic's docstring) is built
from them. A RUN may be given as a run id, a run's ``--name`` (its newest run),
or a unique prefix of an id. JSON arguments: quote them with single quotes
when they contain spaces (``--answer '{"approved": true}'``); ``signal`` takes
the rest of the line as JSON, no quotes needed. A run a subcommand resumes is
shown as a cell's is (cell_run.py); ``runs``, ``scripts`` and ``mcp`` have
modules of their own.

>>> from jupyter_sandbox import Sandbox
>>> with Sandbox() as sb:
...     run_id = sb.eval("return 1", name="my-run").run_id
...     resolve_run(sb, "my-run") == resolve_run(sb, run_id[:8]) == run_id
True

In a kernel after ``%load_ext jupyter_sandbox`` (the magics are the shell's, and the card is displayed):

>>> magics = get_ipython().magics_manager.registry["SandboxMagics"]  # doctest: +SKIP
>>> dispatch(magics, "resume my-run --answer true")  # `%sandbox resume my-run --answer true`  # doctest: +SKIP
"""

from __future__ import annotations

import html as _html
import json
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display
from IPython.utils.process import arg_split

from ..errors import RunNotFound, SandboxError
from ..sandbox import Sandbox
from .card_clicks import answer_for
from .card_html import mismatch_html
from .card_views import publish
from .cards import RunCard
from .cell_run import Magics, OutputVar, quiet, show_run
from .mcp_command import mcp
from .runs_command import runs
from .scripts_command import scripts

__all__ = ["HELP", "dispatch", "resolve_run"]


def resolve_run(sb: Sandbox, text: str) -> str:
    """A run id from an id, a run name (its newest top-level run) or a unique id prefix."""
    try:
        return sb.run(text, journal=False).id
    except RunNotFound:
        pass
    runs = sb.runs(limit=100_000)
    named = [r for r in runs if r.name == text]
    if named:
        return named[0].id
    prefixed = [r for r in runs if r.id.startswith(text)]
    if len(prefixed) == 1:
        return prefixed[0].id
    more = f" ({len(prefixed)} runs start with it)" if prefixed else ""
    raise UsageError(f"no run {text!r} in {sb.store_path}{more}: `%sandbox runs` lists them")


def _json(text: str, what: str) -> Any:
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError as exc:
        try:  # the quotes around a JSON argument may be the line's, not the value's
            return json.loads(_unquote(text))
        except ValueError:
            pass
        raise UsageError(f"{what} must be JSON ({exc}); quote it with single quotes: '{{\"ok\": true}}'") from None


# -- subcommands ---------------------------------------------------------------------------


@magic_arguments(name="sandbox show")
@argument("run", help="a run id, a run name, or a unique id prefix")
def show(magics: Magics, sb: Sandbox, args: Any) -> None:
    """Show a run's card (any run, also after a kernel restart): its state, timeline and open interrupts."""
    run_id = resolve_run(sb, args.run)
    RunCard(sb, run_id, f"show {args.run}").show()


@magic_arguments(name="sandbox resume")
@argument("run", help="a run id, a run name, or a unique id prefix")
@argument("--answer", metavar="JSON", help="the answer to the pending interrupt (e.g. true, or '{\"approved\": true}')")
@argument(
    "--reject", nargs="?", const="", metavar="REASON", help="reject the pending interrupt, with an optional reason"
)
@argument("--id", metavar="INTERRUPT", help="which interrupt to answer (default: the only pending one)")
@argument("--source", metavar="VAR", help="resume with the edited script in this variable (how a mismatch is taught)")
@argument("-o", "--out", metavar="VAR", help="store the output in VAR when the run finishes")
def resume(magics: Magics, sb: Sandbox, args: Any) -> None:
    """Resume a paused, parked, cancelled or failed run by replaying its journal; answer its interrupt."""
    run_id = resolve_run(sb, args.run)
    given: tuple[Any, ...] = ()  # the one answer, when there is one (``None`` is one: --answer null)
    answers = None
    if args.answer is not None or args.reject is not None:
        pending = RunCard(sb, run_id).pending()
        if not pending and sb.status(run_id) == "completed" and not args.id:
            # answered meanwhile (a click on its card): show how it ended, as the resume would have
            print(f"run {run_id} was already answered and has completed")
            if args.out:
                OutputVar(magics.shell.user_ns, args.out)(sb.run(sb.chain(run_id)[-1], journal=False).output)
            RunCard(sb, run_id, f"resume {args.run}", out_name=args.out).show()
            return
        if not pending:
            status = sb.status(run_id)
            raise UsageError(
                f"run {run_id} is {status} and has no pending interrupt to answer"
                + ("; `%sandbox fork` tries another answer" if status == "completed" else "")
            )
        # Which interrupt it answers is the engine's to say (an unknown --id, or no --id with several
        # open, is UnaddressedAnswer listing them): this only shapes a rejection for its kind.
        target = next((i for i in pending if i["id"] == args.id), pending[0])
        value = _json(args.answer, "--answer") if args.answer is not None else answer_for(target, "reject", args.reject)
        given, answers = ((), {args.id: value}) if args.id else ((value,), None)
    source = magics.lookup(args.source, "--source") if args.source else None
    show_run(
        magics,
        sb,
        f"resume {args.run}",
        lambda obs: sb.resume(run_id, *given, answers=answers, source=source, observer=obs, channel="magic"),
        run_id=run_id,
        out=args.out,
    )


@magic_arguments(name="sandbox signal")
@argument("run", help="a run id, a run name, or a unique id prefix")
@argument("event", nargs="*", metavar="JSON", help="the event: the rest of the line, as JSON")
def signal(magics: Magics, sb: Sandbox, args: Any) -> None:
    """Send an event to a run's ctx.waitForEvent; a parked run resumes now, otherwise it waits for the run."""
    run_id = resolve_run(sb, args.run)
    event = _json(args.raw_rest, "the event")
    if sb.run(run_id, journal=False).status != "parked":
        sb.signal(run_id, event)
        print(f"event queued: run {run_id} receives it at its next matching ctx.waitForEvent")
        return
    show_run(magics, sb, f"signal {args.run}", lambda _: sb.signal(run_id, event), run_id=run_id, live=False)


@magic_arguments(name="sandbox check")
@argument("run", help="a run id, a run name, or a unique id prefix")
@argument("--source", metavar="VAR", help="replay with the script in this variable instead of the stored one")
def check(magics: Magics, sb: Sandbox, args: Any) -> None:
    """Replay a run executing nothing; say "deterministic" or show the first divergence as a diff."""
    run_id = resolve_run(sb, args.run)
    source = magics.lookup(args.source, "--source") if args.source else None
    report = sb.check(run_id, source)
    if report.deterministic:
        same = {True: ", same output", False: ", but a different output", None: ""}[report.output_matches]
        html = (
            f"<p>✓ run <code>{_html.escape(run_id)}</code> is <b>deterministic</b>: {report.checked} of "
            f"{report.recorded} recorded effects checked, nothing executed{same}</p>"
        )
    elif report.mismatch is not None:
        html = mismatch_html(report.mismatch.to_dict(), source or sb.run(run_id, journal=False).source)
    else:
        html = f"<pre>{_html.escape(str(report))}</pre>"
    display({"text/plain": str(report), "text/html": html}, raw=True)


@magic_arguments(name="sandbox fork")
@argument("run", help="a run id, a run name, or a unique id prefix")
@argument("--at", type=int, required=True, metavar="SEQ", help="replay the journal before entry SEQ, live after it")
@argument("--answer", metavar="JSON", help="the answer to an interrupt left open at the fork point")
@argument("--name", help="the new run's name (default: NAME fork@SEQ)")
@argument("-o", "--out", metavar="VAR", help="store the output in VAR when the run finishes")
def fork(magics: Magics, sb: Sandbox, args: Any) -> None:
    """A new run from a run's journal position: "what if I had answered otherwise?"."""
    run_id = resolve_run(sb, args.run)
    given = (_json(args.answer, "--answer"),) if args.answer is not None else ()  # (--answer null answers null)
    show_run(
        magics,
        sb,
        f"fork of {args.run} at {args.at}",
        lambda _: sb.fork(run_id, args.at, *given, name=args.name),
        out=args.out,
        live=False,
    )


@magic_arguments(name="sandbox rollback")
@argument("run", help="a run id, a run name, or a unique id prefix")
@argument("--reason", help="why, recorded in the run's journal")
def rollback(magics: Magics, sb: Sandbox, args: Any) -> None:
    """Run the reverts of a run's completed calls, newest first; the run ends rolled_back (a second
    rollback runs nothing again)."""
    run_id = resolve_run(sb, args.run)
    done = sb.rollback(run_id, reason=args.reason, channel="magic")
    lines = [f"run {run_id} rolled back: {len(done.reverted)} reverted, {len(done.not_reverted)} without a revert"]
    lines += [f"  reverted {i['name']} {i['input']!r}" for i in done.reverted]
    lines += [f"  not reverted {i['name']}: {i['reason']}" for i in done.not_reverted]
    lines += [f"  the revert of {i['name']} failed: {i['error'].get('message')}" for i in done.failed]
    print("\n".join(lines))
    publish(run_id, sb)
    RunCard(sb, run_id, f"rollback {args.run}").show()


@magic_arguments(name="sandbox export")
@argument("run", help="a run id, a run name, or a unique id prefix")
@argument("path", help="the file to write")
def export(magics: Magics, sb: Sandbox, args: Any) -> None:
    """Write a run (with its children and journals) to one portable file."""
    run_id = resolve_run(sb, args.run)
    print(f"exported run {run_id} to {sb.export_run(run_id, args.path)}")


@magic_arguments(name="sandbox import")
@argument("path", help="a file written by %%sandbox export")
def import_(magics: Magics, sb: Sandbox, args: Any) -> None:
    """Load an exported run into this store, ready to show, resume or check."""
    run_id = sb.import_run(args.path)
    print(f"imported run {run_id} ({sb.status(run_id)}): `%sandbox show {run_id}`")


COMMANDS = {
    "runs": runs,
    "show": show,
    "resume": resume,
    "signal": signal,
    "check": check,
    "fork": fork,
    "export": export,
    "import": import_,
    "mcp": mcp,
    "rollback": rollback,
    "scripts": scripts,
}

HELP = """Inspect and drive stored runs: ``%sandbox SUBCOMMAND ...``.

Every subcommand takes ``--store PATH`` first (``%sandbox --store x.sqlite runs``)
to use another store than the default. A RUN is a run id, a run's name (its
newest run), or a unique id prefix. Quote JSON that contains spaces with single
quotes. Subcommands:

""" + "\n".join(f"{name}\n{'-' * len(name)}\n{fn.__doc__}" for name, fn in COMMANDS.items())


def dispatch(magics: Magics, line: str) -> None:
    """Run ``%sandbox LINE``."""
    tokens = arg_split(line)
    store = None
    if tokens[:1] == ["--store"]:
        if len(tokens) < 2:
            raise UsageError("--store needs a PATH")
        store, tokens = _unquote(tokens[1]), tokens[2:]
    if not tokens or tokens[0] not in COMMANDS:
        raise UsageError(f"%sandbox needs a subcommand: {', '.join(COMMANDS)} (see %sandbox?)")
    fn = COMMANDS[tokens[0]]
    rest = tokens[1:]
    if fn is signal:  # the event is raw JSON: the line after the run, quotes and spaces kept
        args = fn.parser.parse_args(rest[:1])
        words, end = arg_split(line), 0
        for token in words[: len(words) - len(rest) + 1]:  # up to and including the run
            end = line.index(token, end) + len(token)
        args.raw_rest = line[end:]
    else:
        args = fn.parser.parse_args([_unquote(t) for t in rest])
    sb = magics.sandbox(store)
    try:
        fn(magics, sb, args)
    except SandboxError as exc:
        raise quiet(exc) from None


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    return token
