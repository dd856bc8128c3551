"""The sandbox as an MCP server: ``jupyter-sandbox mcp --store runs.sqlite --actions mypkg.actions:ACTIONS``.

Also ``python -m jupyter_sandbox.mcp ...``. Serves over stdio, to any MCP client (a desktop assistant, an
IDE, another agent framework), the tools:

* ``run_script {script, input?}``: run a script against the actions (their declarations are in the tool's
  description; with more than ``--describe-limit`` actions, only their names); the result says
  ``completed`` (the output), ``failed`` (the error, its line), ``paused`` (the pending interrupts: an
  approval waits for a human) or ``parked`` (a timer or an event; this server's scheduler wakes it), in the
  vocabulary of ``results.STATUSES``, which ``list_runs`` speaks too;
* ``resume_run {run_id, answers}``: answer a paused run's question (``{interrupt_id: answer}`` for several)
  and go on; ``answers`` is required, so no call approves by leaving it out (a run with no open interrupt,
  stalled say, goes on with ``answers: null``; any other answer to it is ``UnaddressedAnswer``). An approval
  is a human's: the server answers one only when started with ``--allow-approvals`` (then ``true``, ``false``,
  ``{"approved": true, "input": ...}`` or ``{"approved": false, "reason": ...}``);
  without it, ``resume_run`` says where a human approves (the run id, the notebook command);
* ``get_run {run_id}``: how a run stands now, e.g. after a human approved it from a notebook's card;
* ``list_runs {status?, limit?}``: the newest runs;
* ``describe_actions {query?}``: the declarations of the actions matching some words (for large catalogs);
* ``rollback_run {run_id, reason?}``, only when the server is started with ``--allow-rollback``: undo what a
  run did (``Sandbox.rollback``: the reverts of its completed calls, newest first); off by default, since
  a model that may roll back may undo what a human approved;
* ``list_scripts {}`` and ``save_script {name, script, description?, input_schema?, output_schema?}``, and
  ``run_script``'s ``save``, only with ``--allow-save``: the store's saved scripts (``actions.scripts.NAME``,
  declared with the actions either way), and keeping a script for later runs (every client of the store sees it).

The server runs the store's scheduler (as a notebook does): a run parked on a timer or an event wakes by
itself, here or in any other process scheduling the same store (``--no-scheduler`` leaves that to a
``jupyter-sandbox worker``, and every parked result says so).

Runs live in the store given, the same a notebook opens (``Sandbox(store=...)``): a human approves a paused
run from the notebook's card, and ``get_run`` then reports its outcome. Each tool's result has the text for
the model as its content and ``{status, run_id, output, pending, error}`` as its structured content.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from .agents.tool import INTRO
from .cli import load_actions
from .engine.answers import Answers
from .errors import InvalidValue, SandboxError, error_dict
from .results import STATUSES
from .sandbox import Sandbox

__all__ = ["DESCRIBE_LIMIT", "HUMAN_APPROVES", "build_server", "main", "run_script_description"]


def _report(result: Any) -> CallToolResult:
    data = {
        "status": result.status,
        "run_id": result.run_id,
        "output": result.output,
        "pending": result.pending,
        "error": result.error,
        "answers": result.answers,  # who answered what, how and when (README "Who approves")
    }
    return CallToolResult(
        content=[TextContent(type="text", text=result.content)],
        structured_content=data,
        is_error=result.status in ("failed", "cancelled", "rolled_back") or result.error is not None,  # (refused)
    )


DESCRIBE_LIMIT = 40  # more actions than this: run_script's description names them, describe_actions declares them


HUMAN_APPROVES = (
    "An action that needs approval pauses the run until a human approves it in a notebook on the same store "
    "(the run's card, or `%sandbox resume RUN_ID --answer true`); resume_run does not approve, and get_run "
    "reports the outcome once they have answered."
)


TAKE_UP = "A run with no open interrupt (stalled, failed, cancelled) goes on with `answers: null`."


def run_script_description(
    sb: Sandbox, tool: Any, limit: int = DESCRIBE_LIMIT, *, allow_approvals: bool = False
) -> str:
    """The tool's description with every declaration, or for a large catalog the names and where to read more."""
    names = sorted(sb.actions) if tool.actions is None else list(tool.actions)
    who = "" if allow_approvals else "\n" + HUMAN_APPROVES + "\n"
    if len(names) <= limit:
        return str(tool.description) + who
    return (
        INTRO + f"\nThere are {len(names)} actions, too many to declare here: call describe_actions with words "
        'of what you need (e.g. "read file") to read the TypeScript declarations of the matching ones. '
        "The actions: " + ", ".join(names) + "\n" + who
    )


def _client(ctx: Context | None) -> str:
    """The channel an MCP answer is recorded with: ``mcp:`` and the client's name from its initialize."""
    try:
        info = ctx.session.client_params.client_info if ctx is not None else None
    except (AttributeError, LookupError, ValueError):
        info = None
    name = getattr(info, "name", None)
    return f"mcp:{name}" if isinstance(name, str) and name else "mcp:unknown"


def approvals_refused(sb: Sandbox, run_id: str, answers: Any) -> str | None:
    """Why this server will not give ``answers``: any that reaches an approval (a human's to give); else None."""
    given = Answers.of(answers)
    pending = sb.run(run_id).pending
    reached = []
    for p in pending:
        for item in p.get("interrupts") or [p]:
            addressed = item["id"] in given.by_id or (given.has_first() and not given.by_id)
            if addressed and item.get("approval", p.get("approval")):
                reached.append(item)
    if not reached:
        return None
    names = ", ".join(f"{i.get('name')!r} ({i['id']})" for i in reached)
    return (
        f"run {run_id} waits for a human's approval of {names}: this MCP server does not approve (it was "
        f"not started with --allow-approvals). A human approves it in a notebook on the same store: the "
        f"run's card (`%sandbox show {run_id}`) or `%sandbox resume {run_id} --answer true`; get_run then "
        "reports the outcome."
    )


def _strict(tool: Tool) -> Tool:
    """``tool`` refusing any argument it does not declare: its schema says ``additionalProperties: false`` and the
    call is validated against it, so a misspelt key (``answer`` for ``answers``) is an error result the model
    reads, never an argument silently dropped (the call going on with the defaults)."""
    loose = tool.fn_metadata.arg_model
    config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")
    tool.fn_metadata.arg_model = type(loose.__name__, (loose,), {"model_config": config, "__module__": __name__})
    tool.parameters = tool.fn_metadata.arg_model.model_json_schema(by_alias=True)
    return tool


def build_server(
    sb: Sandbox,
    name: str = "jupyter-sandbox",
    *,
    describe_limit: int = DESCRIBE_LIMIT,
    allow_rollback: bool = False,
    allow_save: bool = False,
    allow_approvals: bool = False,
    **tool_options: Any,
) -> MCPServer:
    """An ``mcp`` ``MCPServer`` whose tools drive ``sb`` (run it with ``.run()`` for stdio).

    ``allow_rollback`` adds the ``rollback_run`` tool; ``allow_save`` the saved-script tools.
    ``allow_approvals``: whether ``resume_run`` may answer an approval. Off by default: the client that
    wrote a script would otherwise approve its own calls, with no human in between.
    """
    tool = sb.tool("run_script", allow_save=allow_save, **tool_options)
    tools: list[Tool] = []

    def served(**options: Any) -> Any:
        """Serve the function it decorates as a tool that refuses undeclared arguments (``_strict``)."""

        def add(fn: Any) -> Any:
            tools.append(_strict(Tool.from_function(fn, **options)))
            return fn

        return add

    def run_script(script: str, input: Any = None) -> CallToolResult:
        return _report(tool.run({"script": script, "input": input}))

    def run_and_save(script: str, input: Any = None, save: dict[str, Any] | None = None) -> CallToolResult:
        return _report(tool.run({"script": script, "input": input, **({"save": save} if save is not None else {})}))

    served(  # with `save` among its parameters only when the server may save scripts
        name="run_script",
        description=run_script_description(sb, tool, describe_limit, allow_approvals=allow_approvals),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True),
    )(run_and_save if allow_save else run_script)

    @served(
        name="resume_run",
        description=(
            "Answer a paused run and go on: `answers` (required) is the one answer to the only open interrupt, or an "
            "object mapping interrupt ids to answers. An approval takes true, false, "
            '{"approved": true, "input": ...} (an edit) or {"approved": false, "reason": ...}. ' + TAKE_UP
            if allow_approvals
            else "Answer a paused run's question and go on: `answers` (required) is the one answer to the only open "
            "interrupt, or an object mapping interrupt ids to answers. " + TAKE_UP + " " + HUMAN_APPROVES
        ),
    )
    def resume_run(run_id: str, answers: Any, ctx: Context | None = None) -> CallToolResult:
        # `answers` is required: a call without it (or with it misspelt, which `_strict` refuses) never approves
        def resume() -> Any:
            refused = None if allow_approvals else approvals_refused(sb, run_id, answers)
            if refused is not None:
                return tool._result("paused", run_id, note=refused, pending=tool.result(run_id).pending)
            if answers is None and not sb.run(run_id).pending:  # nothing asks: null takes the run up, unanswered
                return tool.resume(run_id, channel=_client(ctx))  # (answers is required: a stalled run needs a way)
            return tool.resume(run_id, answers, channel=_client(ctx))

        return _report(_guarded(resume, tool))

    @served(
        name="get_run",
        description="How a run stands now (completed, failed, or paused with its pending "
        "interrupts): after a human answered it elsewhere, this reports the outcome.",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def get_run(run_id: str) -> CallToolResult:
        return _report(_guarded(lambda: tool.result(run_id), tool))

    @served(
        name="list_runs",
        description="The newest runs in the store: id, name, status, times. `status` keeps only the runs in "
        f"one status: {', '.join(STATUSES)}.",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def list_runs(status: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        try:
            rows = sb.runs(status=status, limit=max(1, min(int(limit), 500)))
        except InvalidValue as exc:  # an unknown status: an error result the model reads
            raise ToolError(str(exc)) from None
        return [
            {"run_id": r.id, "name": r.name, "status": sb.status(r), "created": r.created, "updated": r.updated}
            for r in rows
        ]

    @served(
        name="describe_actions",
        description="TypeScript declarations of the actions whose name or "
        "description matches the words of `query` (all of them when it is empty).",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def describe_actions(query: str = "") -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=sb.declarations(tool.actions, query=query))])

    if allow_rollback:

        @served(
            name="rollback_run",
            description="Undo what a run did: run the reverts of its completed calls, newest first; the run "
            "ends rolled_back. Lists the calls reverted, those with no revert, and reverts that failed.",
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
        )
        def rollback_run(run_id: str, reason: str | None = None, ctx: Context | None = None) -> CallToolResult:
            try:
                done = sb.rollback(run_id, reason=reason, channel=_client(ctx))
            except SandboxError as exc:
                return _report(tool._result("failed", None, error={"name": type(exc).__name__, "message": str(exc)}))
            data = {"status": done.status, "run_id": run_id, "reverted": done.reverted}
            data.update(not_reverted=done.not_reverted, failed=done.failed)
            text = (
                f"run {run_id} is rolled back: {len(done.reverted)} call(s) reverted, "
                f"{len(done.not_reverted)} without a revert, {len(done.failed)} revert(s) failed"
            )
            return CallToolResult(
                content=[TextContent(type="text", text=text)], structured_content=data, is_error=not done.ok
            )

    if allow_save:

        @served(
            name="list_scripts",
            description="The saved scripts every run may call as actions.scripts.NAME: name, version, description.",
            annotations=ToolAnnotations(read_only_hint=True),
        )
        def list_scripts() -> list[dict[str, Any]]:
            return [
                {"name": f"scripts.{s.name}", "version": s.version, "description": s.description} for s in sb.scripts()
            ]

        @served(
            name="save_script",
            description="Keep a script as actions.scripts.NAME for later runs (its input is ctx.input); "
            "saving a name again makes a new version.",
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
        )
        def save_script(
            name: str,
            script: str,
            description: str | None = None,
            input_schema: dict[str, Any] | None = None,
            output_schema: dict[str, Any] | None = None,
        ) -> CallToolResult:
            try:
                kept = sb.save_script(
                    name, script, description=description, input_schema=input_schema, output_schema=output_schema
                )
            except (SandboxError, TypeError, ValueError) as exc:
                error = {"name": type(exc).__name__, "message": str(exc)}
                return CallToolResult(
                    content=[TextContent(type="text", text=str(exc))], structured_content=error, is_error=True
                )
            data = {"name": f"scripts.{kept.name}", "version": kept.version}
            text = f"saved as actions.scripts.{kept.name} (version {kept.version})"
            return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

    return MCPServer(
        name,
        instructions="Durable, approvable code mode: write a JavaScript script against the "
        "declared actions and run it with run_script; a paused run waits for a human.",
        log_level="WARNING",
        tools=tools,
    )


def _guarded(work: Any, tool: Any) -> Any:
    """A run id that names no run (or a store error) is a failed result the model can read, not a crash."""
    try:
        return work()
    except (SandboxError, KeyError) as exc:
        return tool._result("failed", None, error=error_dict(exc))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jupyter-sandbox mcp", description="serve a sandbox over MCP (stdio)")
    parser.add_argument("--store", required=True, help="the store: an SQLite file, or a postgresql:// URL")
    parser.add_argument(
        "--actions",
        action="append",
        default=[],
        metavar="MODULE:OBJECT",
        help="the actions scripts may call (repeatable): a mapping, a list, or a function "
        "that registers them on the Sandbox it is given",
    )
    parser.add_argument("--name", default="jupyter-sandbox", help="the server's name")
    parser.add_argument(
        "--describe-limit",
        type=int,
        default=DESCRIBE_LIMIT,
        metavar="N",
        help="with more actions than N, run_script's description lists their names only and "
        "describe_actions gives their declarations (default %(default)s)",
    )
    parser.add_argument(
        "--allow-rollback",
        action="store_true",
        help="serve rollback_run, which lets the model undo what a run did (off by default)",
    )
    parser.add_argument(
        "--allow-save",
        action="store_true",
        help="serve list_scripts and save_script, and run_script's save (off by default)",
    )
    parser.add_argument(
        "--no-scheduler",
        action="store_true",
        help="do not wake parked runs here (a `jupyter-sandbox worker` on the store does); paused results say so",
    )
    parser.add_argument(
        "--interval", type=float, default=1.0, help="seconds between the scheduler's looks for due runs (default 1)"
    )
    parser.add_argument(
        "--allow-approvals",
        action="store_true",
        help="let resume_run answer approvals (recorded as via mcp:CLIENT); without it a human approves in a "
        "notebook on the same store",
    )
    args = parser.parse_args(argv)
    try:
        sb = Sandbox(args.store)
    except SandboxError as exc:
        print(f"jupyter-sandbox mcp: {exc}", file=sys.stderr)
        return 2
    for spec in args.actions:
        load_actions(sb, spec)
    if not args.no_scheduler:
        sb.start_scheduler(args.interval)  # a parked run wakes by itself, as in a notebook
    try:
        # stdio: stdout is the protocol's, so nothing else prints there
        build_server(
            sb,
            args.name,
            describe_limit=args.describe_limit,
            allow_rollback=args.allow_rollback,
            allow_save=args.allow_save,
            allow_approvals=args.allow_approvals,
        ).run()
    finally:
        sb.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
