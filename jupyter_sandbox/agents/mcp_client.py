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

A server's session lives on the engine's loop (the loop that runs the scripts), so a call from a script is
awaited in place: no hop to another thread and back, no second thread contending for the interpreter's
lock. A hung server holds up nothing but its own calls there (every wait on it is asynchronous and bounded by
``timeout``). Work from other threads (``sb.mcp`` registering the tools, ``close``) and calls from a run on
another loop (``Sandbox.aeval`` on the caller's loop, a helper loop) are submitted to that loop; a server
registered from inside an action running in place on the engine's thread lives on the helper loop that
serves meanwhile (``EngineLoop.serving``), since the engine's own loop is blocked by that action.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..actions import Action
from ..engine.loop import EngineLoop, engine_loop, here
from ..errors import RegistrationError, ServerFailed, ToolFailed
from ..naming import check_action_name, check_replacement
from .catalog import ActionSpec
from .facade import SandboxLike
from .input_issues import check_schema

__all__ = ["McpServer", "ServerFailed", "ToolFailed", "close_all", "connect"]

TIMEOUT = 60.0  # seconds a call (or a start) may take before the server counts as hung
STDERR_TAIL = 2_000  # characters of the server's stderr quoted in a failure
IDLE_PING = 0.25  # seconds without a call after which the next one first pings the server
START_TIMEOUT = 30.0  # seconds a server may take to start (importing an SDK is slow on a loaded machine)


# -- the server processes: none outlives close(), a timeout, or this process ------------------------------

_LIVE: set[int] = set()  # every server process started here and not yet seen stopped


def _is_our_live_child(pid: int) -> bool:
    """Whether ``pid`` is still a running child of this process (a reaped one's id may belong to another)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
    except OSError:
        return not os.path.isdir("/proc") and pid in _LIVE  # no /proc: trust the record
    return int(ppid) == os.getpid() and state not in ("Z", "X")


def _kill(pids: list[int]) -> None:
    """Kill each server's process group (the SDK starts each in a session of its own)."""
    for pid in pids:
        if _is_our_live_child(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        _LIVE.discard(pid)


@atexit.register
def _kill_all() -> None:
    _kill(sorted(_LIVE))


# Run first in a server's process: it writes its process id to a file (the SDK's transport does not expose the
# process), so a server that ignores the SDK's shutdown is killed by its id. On Linux the kernel also kills it
# when the thread that started it ends (the thread of the loop its session lives on, which lives as long as
# this process), so not even a SIGKILL of this process leaves a server behind (one that hangs would not notice
# its stdin closing). Then it becomes the server (execvp): the same process.
_WATCHED = (
    "import os, sys\n"
    "if sys.platform.startswith('linux'):\n"
    "    import ctypes\n"
    "    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL\n"
    "os.getppid() == int(sys.argv[1]) or os._exit(1)  # the parent was gone before that\n"
    "with open(sys.argv[2], 'w') as f:\n"
    "    f.write(str(os.getpid()))\n"
    "os.execvp(sys.argv[3], sys.argv[3:])\n"
)


def _watched(command: list[str], pid_file: str) -> list[str]:
    """The command, started so that it records its process id and (on Linux) dies with this process."""
    if sys.platform == "win32":  # no exec there: the SDK's own job object stops the server
        return command
    return [sys.executable, "-S", "-c", _WATCHED, str(os.getpid()), pid_file, *command]


class _Connection:
    """One started server process and its initialized session, owned by one task (anyio's scopes must be
    entered and left by the same task); ``stop`` ends it."""

    def __init__(self) -> None:
        self.session: Any = None
        self.tools: list[Any] = []
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.used = 0.0  # the loop's time when a call last ended
        fd, self.pid_file = tempfile.mkstemp(prefix="mcp-", suffix=".pid")  # its server writes its id there
        os.close(fd)
        self._pids: list[int] = []

    @property
    def pids(self) -> list[int]:
        """Its server's process id, once the server has written it (an empty list before)."""
        if not self._pids:
            try:
                with open(self.pid_file, encoding="ascii") as f:
                    text = f.read().strip()
            except OSError:
                text = ""
            if text.isdigit():
                self._pids.append(int(text))
                _LIVE.add(int(text))
                try:
                    os.unlink(self.pid_file)
                except OSError:
                    pass
        return self._pids

    def forget_pid_file(self) -> None:
        try:
            os.unlink(self.pid_file)
        except OSError:
            pass

    @property
    def alive(self) -> bool:
        # The SDK's dispatcher marks itself closed at the server's EOF: a server that exited (or was killed)
        # between two calls is started again before the next one, which then does not fail.
        closed = getattr(getattr(self.session, "_dispatcher", None), "_closed", False)
        return self.task is not None and not self.task.done() and not self.stop.is_set() and not closed


class McpServer:
    """The client side of one stdio MCP server: starts it (again, after a failure) and calls its tools."""

    def __init__(
        self,
        name: str,
        command: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = TIMEOUT,
    ):
        if isinstance(command, str) or not command or not all(isinstance(c, str) for c in command):
            raise RegistrationError(
                f"command is a list of strings (the program, then its arguments), got {command!r:.80}"
            )
        self.name, self.command, self.env, self.cwd = name, list(command), dict(env or {}), cwd
        self.timeout = timeout
        self.starts = 0
        fd, self.stderr_path = tempfile.mkstemp(prefix=f"mcp-{name}-", suffix=".stderr")
        os.close(fd)
        # Append mode: the child writes at the end whatever this process reads (they share the offset).
        self._stderr = open(self.stderr_path, "a+", encoding="utf-8", errors="replace")
        self._conn: _Connection | None = None
        self._home: EngineLoop | None = None  # the loop its session lives on
        self._starting: asyncio.Lock | None = None  # (bound to that loop)
        self.actions: list[str] = []  # the actions its tools are registered as

    def stderr(self, tail: int = STDERR_TAIL) -> str:
        """The server's stderr so far (the last ``tail`` characters), across its restarts."""
        try:
            with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return ""
        return text[-tail:]

    def list_tools(self) -> list[Any]:
        """Start the server if it is not running and return its tools (``mcp.types.Tool``)."""
        return self._home_loop().submit(self._connected()).result().tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call a tool from any loop: awaited in place on the loop the session lives on, submitted to it from
        any other."""
        home = self._home_loop()
        if asyncio.get_running_loop() is home.loop:
            return await self._call(tool, arguments)
        if home.inline:  # the loop the session lives on is held by an action in place: it cannot serve this now
            raise ServerFailed(
                f"{self.name}.{tool}: a plain action running in place on the engine's thread started this script, "
                "and the server's session lives on that thread's loop, which the action holds until it returns; "
                "the action runs on a worker from now on, so its next call can reach the server (or make it "
                "`async def` and `await sb.aeval(...)`)"
            )
        return await asyncio.wrap_future(home.submit(self._call(tool, arguments)))

    def _home_loop(self) -> EngineLoop:
        """The loop the session lives on: the engine's, chosen once (again only once that loop has closed)."""
        home = self._home
        if home is None or home.closed or not home.thread.is_alive():
            engine = here()
            if engine is None or not engine.inline:
                engine = engine_loop()
            # From inside an action run in place, the engine's loop is blocked by that action: take the loop
            # that serves meanwhile.
            home = self._home = engine.serving()
            self._conn, self._starting = None, None  # a session of a loop that ended is gone with it
        return home

    def close(self) -> None:
        conn = self._conn
        task = conn.task if conn is not None else None
        home = self._home
        if conn is not None and task is not None and home is not None and home.thread.is_alive():

            async def stop() -> None:
                conn.stop.set()
                await asyncio.wait([task], timeout=10)

            if threading.current_thread() is home.thread:  # (closed from inside an action there: no waiting
                home.loop.call_soon(conn.stop.set)  # on the loop this very call blocks)
            else:
                try:
                    home.submit(stop()).result(15)
                except Exception:  # closing: what the SDK did not stop is killed below
                    pass
        if conn is not None:
            _kill(conn.pids)  # a server that ignored the SDK's shutdown (or hung in it)
            conn.forget_pid_file()
        self._conn = None
        self._stderr.close()
        try:
            os.unlink(self.stderr_path)
        except OSError:
            pass

    # -- on the session's loop ------------------------------------------------------------------------

    async def _connected(self) -> _Connection:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:  # concurrent first calls start one process
            conn = self._conn
            if conn is not None and conn.alive and asyncio.get_running_loop().time() - conn.used > IDLE_PING:
                # A server killed since the last call may not have been noticed yet (its EOF is read by a task):
                # a ping tells, so a call after a pause does not fail for a server gone in the meantime.
                try:
                    await asyncio.wait_for(conn.session.send_ping(), min(self.timeout, 10.0))
                except Exception:
                    conn.stop.set()
            if conn is None or not conn.alive:
                self._conn = conn = await self._start()
            return conn

    async def _start(self) -> _Connection:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        program = self.command[0]
        if os.sep not in program and shutil.which(program, path=self.env.get("PATH", os.environ.get("PATH"))) is None:
            raise ServerFailed(f"MCP server {self.name!r} could not start: no program {program!r} on PATH")
        conn, ready = _Connection(), asyncio.get_running_loop().create_future()
        command = _watched(self.command, conn.pid_file)
        params = StdioServerParameters(command=command[0], args=command[1:], env=self.env or None, cwd=self.cwd)
        self.starts += 1

        async def own() -> None:
            try:
                async with (
                    stdio_client(params, errlog=self._stderr) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    if (
                        sys.platform != "win32" and not conn.pids
                    ):  # it has answered, so it wrote its id before it became the server
                        raise RuntimeError("the server's process did not record its id")
                    tools, cursor = [], None
                    while True:
                        from mcp.types import PaginatedRequestParams

                        page = await session.list_tools(
                            params=PaginatedRequestParams(cursor=cursor) if cursor else None
                        )
                        tools += page.tools
                        cursor = page.next_cursor
                        if not cursor:
                            break
                    conn.session, conn.tools = session, tools
                    conn.used = asyncio.get_running_loop().time()
                    ready.set_result(conn)
                    await conn.stop.wait()
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
            finally:
                conn.stop.set()
                _kill(conn.pids)
                conn.forget_pid_file()

        conn.task = asyncio.get_running_loop().create_task(own())
        try:
            return await asyncio.wait_for(asyncio.shield(ready), max(self.timeout, START_TIMEOUT))
        except asyncio.TimeoutError:
            conn.task.cancel()
            took = max(self.timeout, START_TIMEOUT)
            raise ServerFailed(self._said(f"MCP server {self.name!r} did not start within {took:g} s")) from None
        except Exception as exc:
            raise ServerFailed(
                self._said(f"MCP server {self.name!r} could not start ({' '.join(self.command)}): {_text_of(exc)}")
            ) from None

    async def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        conn = self._conn
        now = asyncio.get_running_loop().time()
        if conn is None or not conn.alive or now - conn.used > IDLE_PING:  # else hot: no lock, no ping
            conn = await self._connected()
        try:
            return await self._send(conn, tool, arguments)
        finally:
            conn.used = asyncio.get_running_loop().time()

    async def _send(self, conn: _Connection, tool: str, arguments: dict[str, Any]) -> Any:
        from mcp.shared.exceptions import MCPError

        try:
            if sys.version_info >= (3, 11):  # (no task of its own per call, as wait_for makes on 3.11)
                async with asyncio.timeout(self.timeout):
                    return await conn.session.call_tool(tool, arguments)
            return await asyncio.wait_for(conn.session.call_tool(tool, arguments), self.timeout)
        except asyncio.TimeoutError:
            conn.stop.set()  # a hung server is stopped: the next call starts a fresh one
            _kill(conn.pids)  # at once, and for certain: it hangs
            raise ServerFailed(
                self._said(
                    f"MCP server {self.name!r} did not answer {tool} within "
                    f"{self.timeout:g} s; it was stopped, the next call starts it"
                )
            ) from None
        except MCPError as exc:
            if not conn.alive or exc.code == _connection_closed():
                conn.stop.set()
                raise ServerFailed(
                    self._said(
                        f"MCP server {self.name!r} exited during {tool} ({exc.message}); the next call starts it again"
                    )
                ) from None
            raise ServerFailed(
                f"MCP server {self.name!r}, tool {tool!r}: protocol error {exc.code}: {exc.message}"
            ) from None
        except Exception as exc:
            if not conn.alive:
                raise ServerFailed(
                    self._said(f"MCP server {self.name!r} exited during {tool}: {_text_of(exc)}")
                ) from None
            raise ServerFailed(f"MCP server {self.name!r}, tool {tool!r}: {_text_of(exc)}") from None

    def _said(self, message: str) -> str:
        tail = self.stderr().strip()
        return f"{message}\n--- its stderr (last lines) ---\n{tail}" if tail else message


def _connection_closed() -> int:
    from mcp.types import CONNECTION_CLOSED

    return int(CONNECTION_CLOSED)


def _text_of(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)  # an exception group: anyio's task groups wrap what failed in them
    if isinstance(inner, tuple) and inner:
        return "; ".join(_text_of(e) for e in inner)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# -- tools as actions ----------------------------------------------------------------------------


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
    reverts = _reverts(revert)
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
    own = {n for n in (old.actions if old else ()) if _tool_of(sandbox.actions.get(n), name)}
    _check_server_name(name, {n: a for n, a in sandbox.actions.items() if n not in own})
    server = McpServer(name, command, env, cwd, float(timeout))
    try:
        actions = _tool_actions(server, server.list_tools(), approval, reverts)
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


def _tool_of(action: Action | None, server: str) -> bool:
    return action is not None and isinstance(action.about, dict) and action.about.get("server") == server


def _check_server_name(name: Any, others: Mapping[str, Action]) -> None:
    """Refuse, before the server starts, a name its tools' actions ``NAME.TOOL`` could never take."""
    if not isinstance(name, str) or not name.isidentifier():
        raise RegistrationError(
            f"an MCP server's name is an identifier (its tools become actions.{{name}}.TOOL), got {name!r}"
        )
    # As any tool's action would be (``NAME.TOOL``): a reserved name, the saved scripts' namespace, inside an action.
    check_action_name(f"{name}.TOOL", [n for n in others if not n.startswith(name + ".")])


def _tool_actions(
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
        needs = _needs_approval(tool, approval)
        about = {"server": name, "tool": tool.name, "annotations": _annotations(tool)}
        actions.append(
            Action(
                action_name,
                _caller(server, tool.name),
                approval=needs,
                # No action timeout: every wait on the server is bounded by ``timeout`` here already (the call,
                # a start, a ping), and the engine's bound would cost a task of its own per call.
                timeout=None,
                spec=_spec(action_name, tool, needs),
                about=about,
                revert=reverts.get(tool.name),
            )
        )
    return actions


def _reverts(revert: Any) -> dict[str, Callable[[Any, Any], Any]]:
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


def _needs_approval(tool: Any, approval: bool | Mapping[str, bool] | None) -> bool:
    if isinstance(approval, bool):
        return approval
    if isinstance(approval, Mapping) and tool.name in approval:
        return bool(approval[tool.name])
    hints = _annotations(tool)
    return not hints["read_only"] and bool(hints["destructive"])


def _caller(server: McpServer, tool: str) -> Any:
    async def call(input: Any = None) -> Any:
        result = await server.call(tool, {} if input is None else input)
        return _result_value(server.name, tool, result)

    call.__name__ = re.sub(r"\W", "_", tool) or "tool"
    return call


def _result_value(server: str, tool: str, result: Any) -> Any:
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

    spec = ActionSpec(action_name, tool.description or tool.title or None, approval=approval)
    schema = tool.input_schema
    try:
        cls = validators.validator_for(schema)
        cls.check_schema(schema)
        checker = cls(schema)
    except Exception as exc:
        warnings.warn(
            f"action {action_name}: the server's input schema is not usable, so its input is "
            f"unchecked ({str(exc).splitlines()[0]})",
            stacklevel=4,
        )
    else:
        spec.input_schema = schema
        spec.input_optional = checker.is_valid({})  # no input is the empty object of arguments

        def validate(value: Any) -> Any:
            return check_schema(checker, {} if value is None else value)

        spec._validate = validate
    if isinstance(tool.output_schema, dict):
        spec.output_schema = tool.output_schema
    return spec
