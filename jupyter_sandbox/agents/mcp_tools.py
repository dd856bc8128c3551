"""An MCP server's tools as actions, and their results as the values a script gets.

Each listed tool becomes the action ``SERVER.TOOL`` (its name's characters other than letters, digits and
``_`` become ``_``). Its input schema is the action's (validated where the call enters, declared, and the
card's edit form); its output schema is declared. Its approval follows its annotations unless ``approval=``
says otherwise: a tool that is not ``readOnlyHint`` and is ``destructiveHint`` (the spec's default for both)
needs a human's approval, and the action's ``about`` carries the server, the tool and its annotations, for
the card. A call's result is the tool's ``structuredContent`` when it has one, else its text; a result with
``isError`` is a ``ToolFailed`` quoting its text. The tool's ``outputSchema`` is the action's
``output_schema``, so a result it refuses is ``InvalidOutput`` with ``issues`` (``calling.classify``).

>>> from types import SimpleNamespace as Tool
>>> needs_approval(Tool(name="rm", annotations=None), None)
True
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from ..actions import Action
from ..errors import LimitExceeded, RegistrationError, ToolFailed
from ..schema_limits import check_schema_depth
from .catalog import ActionSpec
from .input_issues import check_schema
from .mcp_session import McpServer
from .validators import schema_output_check

__all__ = ["checked_reverts", "is_tool_of", "needs_approval", "result_value", "tool_actions"]


def is_tool_of(action: Action | None, server: str) -> bool:
    """Whether ``action`` is one of the tools of the MCP server named ``server``."""
    return action is not None and isinstance(action.about, dict) and action.about.get("server") == server


def tool_actions(
    server: McpServer, tools: list[Any], approval: Any, reverts: dict[str, Callable[[Any, Any], Any]]
) -> list[Action]:
    """The actions ``SERVER.TOOL`` the listed tools become (not yet registered)."""
    name = server.name
    unknown = sorted(set(reverts) - {tool.name for tool in tools})
    if unknown:
        raise RegistrationError(f"MCP server {name!r} has no tool {', '.join(map(repr, unknown))} to revert")
    by_key: dict[str, Any] = {}
    for tool in tools:
        key = _action_key(tool.name)
        if key is None:
            warnings.warn(
                f"MCP server {name!r}: tool {tool.name!r} has no name a script can use; skipped", stacklevel=4
            )
        elif key in by_key:
            raise RegistrationError(
                f"MCP server {name!r}: the tools {by_key[key].name!r} and {tool.name!r} would both be the action "
                f"{name}.{key} (a name's characters other than letters, digits and _ become _); rename one"
            )
        else:
            by_key[key] = tool
    actions = []
    for key, tool in by_key.items():
        action_name = f"{name}.{key}"
        needs = needs_approval(tool, approval)
        about = {"server": name, "tool": tool.name, "annotations": _annotations(tool)}
        actions.append(
            Action(
                action_name,
                _caller(server, tool.name),
                approval=needs,
                # No action timeout: ``McpServer`` bounds every wait on the server by ``timeout`` already (the
                # call, a start, a ping), and the engine's bound would cost a task of its own per call.
                timeout=None,
                spec=_spec(action_name, tool, needs),
                about=about,
                revert=reverts.get(tool.name),
            )
        )
    return actions


def checked_reverts(revert: Any) -> dict[str, Callable[[Any, Any], Any]]:
    if revert is None:
        return {}
    if not isinstance(revert, Mapping) or not all(isinstance(k, str) and callable(v) for k, v in revert.items()):
        raise RegistrationError("revert is a mapping of tool name to a callable revert(input, result)")
    return dict(revert)


def _action_key(tool: str) -> str | None:
    from ..naming import RESERVED_NAMES

    key = re.sub(r"\W", "_", tool)
    if key and key[0].isdigit():
        key = "_" + key
    return key if key.isidentifier() and key not in RESERVED_NAMES else None


def _annotations(tool: Any) -> dict[str, Any]:
    a = tool.annotations
    hints = {} if a is None else a.model_dump(exclude_none=True)
    read_only = bool(hints.get("read_only_hint", False))  # the spec's defaults; destructive means nothing if read-only
    return {
        "read_only": read_only,
        "destructive": hints.get("destructive_hint", not read_only),
        "idempotent": hints.get("idempotent_hint", False),
        "open_world": hints.get("open_world_hint", True),
        **({"title": hints["title"]} if "title" in hints else {}),
    }


def needs_approval(tool: Any, approval: bool | Mapping[str, bool] | None) -> bool:
    if isinstance(approval, bool):
        return approval
    if isinstance(approval, Mapping) and tool.name in approval:
        return bool(approval[tool.name])
    hints = _annotations(tool)
    return not hints["read_only"] and bool(hints["destructive"])


def _caller(server: McpServer, tool: str) -> Any:
    async def call(input: Any = None) -> Any:
        result = await server.call(tool, {} if input is None else input)
        return result_value(server.name, tool, result)

    call.__name__ = re.sub(r"\W", "_", tool) or "tool"
    return call


def result_value(server: str, tool: str, result: Any) -> Any:
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    if result.is_error:
        raise ToolFailed(f"{server}.{tool}: " + ("\n".join(texts) or "the tool reported an error"))
    if result.structured_content is not None:
        return result.structured_content
    if len(texts) == len(result.content):
        return "\n".join(texts)
    return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]


def _spec(action_name: str, tool: Any, approval: bool) -> ActionSpec:
    """The catalog entry from the tool's schemas; a schema jsonschema refuses leaves that side unknown."""
    from jsonschema import validators

    description = tool.description or tool.title or None
    output_schema = tool.output_schema if isinstance(tool.output_schema, dict) else None
    if output_schema is not None:
        try:
            check_schema_depth(output_schema, "its outputSchema")
        except LimitExceeded as exc:
            warnings.warn(f"action {action_name}: its output is undeclared ({exc})", stacklevel=4)
            output_schema = None
    # the tool's result is the action's output, checked by the product (the SDK's own check is off: mcp_session)
    check_output = schema_output_check(output_schema) if output_schema else None
    schema = tool.input_schema
    try:
        check_schema_depth(schema, "its inputSchema")
        cls = validators.validator_for(schema)
        cls.check_schema(schema)
        checker = cls(schema)
    except Exception as exc:
        warnings.warn(
            f"action {action_name}: the server's input schema is not usable, so its input is "
            f"unchecked ({str(exc).splitlines()[0]})",
            stacklevel=4,
        )
        return ActionSpec(
            action_name, description, output_schema=output_schema, approval=approval, _check_output=check_output
        )

    def validate(value: Any) -> Any:
        return check_schema(checker, {} if value is None else value)

    return ActionSpec(
        action_name,
        description,
        input_schema=schema,
        output_schema=output_schema,
        input_optional=checker.is_valid({}),  # no input is the empty object of arguments
        approval=approval,
        _validate=validate,
        _check_output=check_output,
    )
