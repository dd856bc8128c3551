"""The sandbox as an agent's tool: the model writes a script, the tool runs it durably and says what happened.

>>> from jupyter_sandbox import Sandbox
>>> sb = Sandbox()
>>> @sb.action
... def add(pair: list[int]) -> int:
...     return pair[0] + pair[1]
>>> tool = sb.tool()                      # a SandboxTool over the sandbox's actions
>>> tool.anthropic()["name"]              # or tool.openai(): the definition to hand the model
'sandbox'
>>> result = tool.run({"script": "return await actions.add([1, 2])"})    # the input of the model's tool call
>>> result.status, result.output          # "completed" / "paused" / "failed" ..., and what the script returned
('completed', 3)
>>> print(result.content)                 # the text for the model  # doctest: +ELLIPSIS
status: completed (run r-...)
output:
3
<BLANKLINE>
>>> sb.close()

A ``paused`` result waits for a human (an approval): in a notebook it shows as
the run's card, whose Approve button resumes the run; ``tool.result(run_id)``
then reads how it ended, and ``tool.resume(run_id, answers)`` answers from
code, in any process sharing the store.

This module sits below the facade and the notebook: it drives a ``Sandbox``
handed to it and imports neither.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ..engine.answers import NO_ANSWER, Answers
from ..errors import RunCancelled, RunParked, SandboxError, SandboxInterrupt
from ..results import RollbackResult, RunResult
from .content import excerpt, render
from .facade import SandboxLike
from .tool_result import PAUSED, ROLLED_BACK, WAITING, ToolResult, answered, call_line, console_of, describe, pending_of
from .typescript import declarations

__all__ = ["SandboxTool", "ToolResult"]

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what both OpenAI and Anthropic accept as a tool name
BUDGET = 24_000

INTRO = """\
Run a JavaScript workflow script in a durable sandbox. The script can call only the actions declared below \
(each a Python function on the user's side) and the `ctx` API. Write `script` as the body of an async function: \
use top-level `await`, and `return` the result you need. Pass `input` (any JSON) to read it as `ctx.input`.
The result reports `completed` with the output and the console, `failed` (or `cancelled`, `rolled_back`) with \
the error (its line, and for a refused input the issues), `paused` when an action waits for a human's approval, \
`parked` when the script waits for a timer or an event, or `stalled` when the run lost its host and resume_run \
takes it up again: do not run the script again then, the run goes on from where it stopped.
"""

SAVE = {
    "type": "object",
    "description": "Optional: when the script completes, keep it as actions.scripts.NAME (its input is ctx.input) "
    "for later scripts; saving again makes a new version.",
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
        "description": {"type": "string"},
        "input_schema": {"type": "object", "description": "JSON Schema of ctx.input, checked on every call"},
        "output_schema": {"type": "object", "description": "JSON Schema of what the script returns"},
    },
    "required": ["name"],
}


class SandboxTool:
    """A ``Sandbox`` wrapped as one tool: ``{script, input?}`` in, a ``ToolResult`` out.

    ``actions``: the action names the scripts may call (default: all, as registered when called).
    ``budget``: the most bytes of ``content`` (default 24,000). ``strict``, ``limits``: as ``Sandbox.eval``.
    ``intro``: the text before the declarations in ``description`` (default: how to use the tool).
    ``allow_save``: the parameters take ``save: {name, description?}``, and a script that completes is kept
    as the saved script ``scripts.NAME`` (``Sandbox.save_script``), for the model's later runs (off by default).
    """

    def __init__(
        self,
        sandbox: SandboxLike,
        name: str = "sandbox",
        *,
        actions: Iterable[str] | None = None,
        budget: int = BUDGET,
        strict: bool = False,
        limits: Any = None,
        intro: str | None = None,
        allow_save: bool = False,
    ):
        if not isinstance(name, str) or not NAME.match(name):
            raise ValueError(
                f"a tool name is 1 to 64 letters, digits, '_' or '-' (what model APIs accept), got {name!r}"
            )
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 500:
            raise ValueError(f"budget is a number of bytes, at least 500, got {budget!r}")
        self.sandbox, self.name, self.budget = sandbox, name, budget
        self.strict, self.limits, self.intro = strict, limits, intro
        self.allow_save = bool(allow_save)
        self.actions = None if actions is None else list(actions)
        sandbox.catalog(self.actions)  # an unknown action name is refused now, not at the first call

    # -- what the model reads ------------------------------------------------------------

    @property
    def declarations(self) -> str:
        return declarations(self.sandbox.catalog(self.actions))

    @property
    def description(self) -> str:
        return (self.intro or INTRO) + "\n```typescript\n" + self.declarations + "```\n"

    @property
    def parameters(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "script": {
                    "type": "string",
                    "description": "The script: the body of an async JavaScript function "
                    "(top-level await; `return` the output).",
                },
                "input": {"description": "Any JSON value; the script reads it as ctx.input."},
                **({"save": SAVE} if self.allow_save else {}),
            },
            "required": ["script"],
        }

    def openai(self, api: str = "chat") -> dict[str, Any]:
        """The tool definition for OpenAI: ``api="chat"`` (Chat Completions) or ``"responses"`` (Responses API)."""
        if api == "chat":
            return {
                "type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
            }
        if api == "responses":
            return {
                "type": "function",
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
                "strict": False,
            }
        raise ValueError(f"api is 'chat' or 'responses', got {api!r}")

    def anthropic(self) -> dict[str, Any]:
        """The tool definition for Anthropic's Messages API."""
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}

    # -- running -----------------------------------------------------------------------------

    def run(self, arguments: Any) -> ToolResult:
        """Run the script of one tool call: ``{"script": ..., "input": ...}`` as a dict or its JSON text."""
        if isinstance(arguments, (str, bytes)):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                return self._refused(f"the tool's arguments are not JSON: {exc}")
        if not isinstance(arguments, dict) or not isinstance(arguments.get("script"), str):
            return self._refused(
                f'the tool takes {{"script": string, "input"?: any}}; got {json.dumps(arguments, default=str)[:200]}'
            )
        script, save = arguments["script"], arguments.get("save")
        if save is not None and not self.allow_save:
            return self._refused("this tool does not save scripts (`save` is not one of its parameters)")
        if save is not None and not (isinstance(save, dict) and isinstance(save.get("name"), str)):
            return self._refused(
                '`save` is {"name": identifier, "description"?: string, "input_schema"?: object, '
                '"output_schema"?: object}'
            )
        result = self._outcome(
            lambda: self.sandbox.eval(
                script,
                input=arguments.get("input"),
                strict=self.strict,
                name=self.name,
                actions=self.actions,
                limits=self.limits,
                save=save,
            ),
            script,
        )
        return self._saved(result)

    __call__ = run

    def _saved(self, result: ToolResult) -> ToolResult:
        """A completed run's result with the script its ``save`` kept (on the first attempt or a resume, the
        run asked for it when it started): the content says where it is, or why it was not kept."""
        if result.status != "completed" or result.run_id is None:
            return result
        try:
            kept = self.sandbox.script_kept(result.run_id)
        except (SandboxError, TypeError, ValueError) as exc:
            result.content += f"\nThe script was not saved: {exc}"
            return result
        if kept is None:
            return result
        result.saved = {"name": f"scripts.{kept.name}", "version": kept.version}
        result.content += f"\nSaved as actions.scripts.{kept.name} (version {kept.version}): later scripts may call it."
        return result

    def resume(self, run_id: str, answers: Any = NO_ANSWER, *, channel: str = "tool") -> ToolResult:
        """Answer a paused run and go on: ``answers`` maps interrupt ids to answers, or is the one answer to the
        only open interrupt. An approval takes ``True``, ``False``, ``{"approved": True, "input": ...}`` (an
        edit) or ``{"approved": False, "reason": ...}`` (or ``Approve()``, ``Reject(...)``, ``Edit(...)``);
        anything else (``None`` too), or an id that names no open interrupt, is refused and nothing runs: the
        result has the run's own status (``paused``, with its pending interrupts) and the refusal as its
        ``error``. ``None`` is JSON null: a question receives it. No answer (``answers`` left out) approves
        nothing: the run stays paused and its result asks again.
        ``channel`` is recorded on the answer (``tool``; the MCP server's ``mcp:CLIENT``).

        >>> from jupyter_sandbox import Sandbox
        >>> sb = Sandbox()
        >>> _ = sb.action(lambda order: order, name="pay", approval=True)
        >>> tool = sb.tool()
        >>> paused = tool.run({"script": "return await actions.pay(1)"})
        >>> refused = tool.resume(paused.run_id, "yes")
        >>> refused.status, refused.error["name"], len(refused.pending)
        ('paused', 'RunStateError', 1)
        >>> sb.close()
        """
        given = Answers.of(answers)
        source = self.sandbox.run(run_id, journal=False).source
        result = self._outcome(
            lambda: self.sandbox.resume(run_id, given.first, answers=given.by_id, channel=channel), source
        )
        if result.error is not None and isinstance(result.outcome, Exception):
            try:  # a refused answer: the run still waits as it was
                result = self._result_now(run_id, refusal=result)
            except SandboxError:
                pass  # (the store cannot say: the refusal as it came)
        return self._with_answers(self._saved(result), run_id)

    def _with_answers(self, result: ToolResult, run_id: str) -> ToolResult:
        """The result with who answered the run, as its journal says (for the program: ``content``, the
        model's text, stays as it was, the same on every machine)."""
        try:
            entries = self.sandbox.run(run_id).entries
        except SandboxError:
            return result
        result.answers = answered(entries)
        return result

    def result(self, run_id: str) -> ToolResult:
        """The run as the store has it now (after a human answered in the card, say), as a ToolResult."""
        now = self._saved(self._result_now(run_id))
        return self._with_answers(now, now.run_id or run_id)

    def _result_now(self, run_id: str, refusal: ToolResult | None = None) -> ToolResult:
        """The run as it stands. ``refusal``: a resume's error result; a run that still waits is reported as
        waiting, with the refusal as its error (the answer was refused, the run is not failed), else as is."""
        chain = self.sandbox.chain(run_id)  # a continueAsNew chain stands as its last run does
        console = []
        for rid in chain:
            info = self.sandbox.run(rid)
            console += console_of(info.entries)
        status = self.sandbox.status(info)
        if refusal is not None and status not in WAITING:
            return refusal
        if status == "completed":
            return self._result("completed", info.id, output=info.output, console=console)
        if status in WAITING:
            pending = pending_of(info.pending)
            error, outcome = (refusal.error, refusal.outcome) if refusal is not None else (None, None)
            note = self._note(status)
            return self._result(
                status, info.id, console=console, pending=pending, note=note, error=error, outcome=outcome
            )
        if status == "rolled_back":  # (a rolled-back run that had completed keeps its output; no error)
            return self._result(status, info.id, console=console, note=ROLLED_BACK)
        error = dict(info.error) if isinstance(info.error, dict) else {"name": status, "message": str(info.error)}
        return self._result(status, info.id, console=console, error=self._located(error, info.source, info.id))

    # -- building results ------------------------------------------------------------------------

    def _outcome(self, start: Any, source: str | None) -> ToolResult:
        try:
            outcome = start()
        except SandboxInterrupt as paused:
            return self._result(
                "paused",
                paused.run_id,
                console=paused.console,
                outcome=paused,
                note=PAUSED,
                pending=[
                    {"id": i.id, "name": i.name, "data": i.data, "approval": i.approval} for i in paused.interrupts
                ],
            )
        except RunParked as parked:
            return self._result(
                "parked",
                parked.run_id,
                console=parked.console,
                outcome=parked,
                note=self._note("parked"),
            )
        except (SandboxError, TypeError, ValueError) as exc:  # TypeError/ValueError: an input that is not JSON
            run_id = getattr(exc, "run_id", None)
            console = self._console(run_id)
            return self._result(
                "cancelled" if isinstance(exc, RunCancelled) else "failed",
                run_id,
                console=console,
                outcome=exc,
                error=self._located(describe(exc), source, run_id),
            )
        if isinstance(outcome, RollbackResult):  # a rejection that also rolled the run back
            return self._result_now(outcome.run_id)
        assert isinstance(outcome, RunResult)
        return self._result(
            "completed", outcome.run_id, output=outcome.output, console=outcome.console, outcome=outcome
        )

    def _result(
        self,
        status: str,
        run_id: str | None,
        *,
        output: Any = None,
        console: list | None = None,
        pending: list | None = None,
        error: dict | None = None,
        note: str | None = None,
        outcome: Any = None,
    ) -> ToolResult:
        content = render(
            status, run_id, budget=self.budget, output=output, console=console, error=error, pending=pending, note=note
        )
        return ToolResult(
            status,
            run_id,
            content,
            output=output,
            console=list(console or []),
            pending=list(pending or []),
            error=error,
            tool=self,
            outcome=outcome,
        )

    def _note(self, status: str) -> str:
        """What happens next to a run waiting in ``status``: a parked one wakes only where a scheduler runs."""
        if status == "parked" and not self.sandbox.scheduling:
            return WAITING["parked-unscheduled"]
        return WAITING[status]

    def _refused(self, message: str) -> ToolResult:
        return self._result("failed", None, error={"name": "InvalidArguments", "message": message})

    def _console(self, run_id: str | None) -> list[dict[str, str]]:
        if not run_id:
            return []
        try:
            entries = self.sandbox.run(run_id).entries
        except SandboxError:
            return []
        return console_of(entries)

    def _located(self, error: dict[str, Any], source: str | None, run_id: str | None) -> dict[str, Any]:
        """The error with its line (an action's failure: the line of the call) and a source excerpt."""
        if not error.get("line") and error.get("action") and run_id:
            error["line"] = call_line(self.sandbox.run(run_id).entries, error["action"])
        error["excerpt"] = excerpt(source, error.get("line"), error.get("column"))
        error.pop("source_line", None)
        error.pop("stack", None)
        error.pop("text", None)
        return error
