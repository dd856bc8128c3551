"""MCP servers' tools as actions: ``sb.mcp("files", command=["python", "server.py"])``.

The server is started over stdio, its tools are listed, and each becomes the action ``files.TOOL``
(``await actions.files.read_file({path})`` in a script, or ``ctx.call("files.read_file", ...)``). Its input
schema is the action's (validated where the call enters, declared, and the card's edit form); its output
schema is declared. A call's result is the tool's ``structuredContent`` when it has one, else its text.

Approval follows the tool's annotations unless ``approval=`` says otherwise: a tool that is not
``readOnlyHint`` and is ``destructiveHint`` (the spec's default for both) needs a human's approval. The
approval's data carries the server, the tool and its annotations, for the card.

Failures are ``ActionError``s naming the server and the tool: a result with ``isError`` (its text), a
protocol error, a server that exits or does not answer within ``timeout`` seconds (then it is stopped, and
the next call starts it again). The server's stderr is kept in a file and its tail is quoted on failure.
Calls are journaled as any action's: replay never contacts the server.

This module registers a server's tools on a sandbox (``connect``) and stops a sandbox's servers
(``close_all``). The rest is in its neighbours: ``mcp_session`` (a server's process and session, on the
engine's loop), ``mcp_processes`` (no server process outlives its owner), ``mcp_tools`` (the tools as
actions, their results as values).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..actions import Action
from ..errors import RegistrationError, ServerFailed, ToolFailed
from ..naming import check_action_name, check_replacement
from .facade import SandboxLike
from .mcp_session import TIMEOUT, McpServer
from .mcp_tools import checked_reverts, is_tool_of, tool_actions

__all__ = ["McpServer", "ServerFailed", "ToolFailed", "close_all", "connect"]


def close_all(servers: dict[str, McpServer]) -> None:
    """Stop every server in ``servers`` (a sandbox's, by name) and forget them."""
    for server in servers.values():
        server.close()
    servers.clear()


def connect(
    sandbox: SandboxLike,
    servers: dict[str, McpServer],
    name: str,
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    approval: bool | Mapping[str, bool] | None = None,
    timeout: float = TIMEOUT,
    revert: Mapping[str, Callable[[Any, Any], Any]] | None = None,
) -> list[str]:
    """Start the server, register each of its tools as ``NAME.TOOL`` on ``sandbox``; return the action names.

    ``revert`` maps a tool's name (as the server lists it) to the compensation of its completed call,
    ``fn(input, result)`` (``Sandbox.rollback``). Every refusal is a ``RegistrationError`` that leaves the
    registered actions (and a server of this name started before) as they were: the name and options are
    checked before the server starts, every tool's action name and kind before any is registered, and a
    server refused after it started is stopped."""
    reverts = checked_reverts(revert)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise RegistrationError(f"timeout is a positive number of seconds, got {timeout!r}")
    if approval is not None and not isinstance(approval, (bool, Mapping)):
        raise RegistrationError(
            f"approval is None (follow the annotations), a bool, or a mapping of tool name to bool, "
            f"got {type(approval).__name__}"
        )
    old = servers.get(name) if isinstance(name, str) else None
    # A server started again replaces its own tools only: a name it once had that now holds an action of
    # another kind (its tool removed, a Python action put there) is not its to take back.
    own = {n for n in (old.actions if old else ()) if is_tool_of(sandbox.actions.get(n), name)}
    _check_server_name(name, {n: a for n, a in sandbox.actions.items() if n not in own})
    server = McpServer(name, command, env, cwd, float(timeout))
    try:
        actions = tool_actions(server, server.list_tools(), approval, reverts)
        table = {n: a for n, a in sandbox.actions.items() if n not in own}
        for action in actions:  # all of them are checked before any is registered
            check_action_name(action.name, table)
            check_replacement(action, table)
            table[action.name] = action
    except BaseException:
        server.close()
        raise
    if old is not None:
        servers.pop(name).close()
        for action_name in own:
            sandbox.remove_action(action_name)
    servers[name] = server
    for action in actions:
        sandbox.add_action(action)
    server.actions = [a.name for a in actions]
    return server.actions


def _check_server_name(name: Any, others: Mapping[str, Action]) -> None:
    """Refuse, before the server starts, a name its tools' actions ``NAME.TOOL`` could never take."""
    if not isinstance(name, str) or not name.isidentifier():
        raise RegistrationError(
            f"an MCP server's name is an identifier (its tools become actions.{{name}}.TOOL), got {name!r}"
        )
    # As any tool's action would be (``NAME.TOOL``): a reserved name, the saved scripts' namespace, inside an action.
    check_action_name(f"{name}.TOOL", [n for n in others if not n.startswith(name + ".")])
