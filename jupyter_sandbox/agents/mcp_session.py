"""One stdio MCP server's process and its session, from the client side: started on first use, started
again after a failure, stopped by ``close()``.

A server's session lives on the engine's loop (the loop that runs the scripts), so a call from a script is
awaited in place: no hop to another thread and back, no second thread contending for the interpreter's
lock. A hung server holds up nothing but its own calls there (every wait on it is asynchronous and bounded by
``timeout``). Work from other threads (``sb.mcp`` registering the tools, ``close``) and calls from a run on
another loop (``Sandbox.aeval`` on the caller's loop, a helper loop) are submitted to that loop; a server
registered from inside an action running in place on the engine's thread lives on the helper loop that
serves meanwhile (``EngineLoop.serving``), since the engine's own loop is blocked by that action.

A failure is a ``ServerFailed`` naming the server (and the tool): a protocol error, a server that exits or
does not answer within ``timeout`` seconds (then it is stopped, and the next call starts it again). The
server's stderr is kept in a file and its tail is quoted in the message.

Example (``python server.py`` a stdio MCP server with a tool ``read_file``)::

    server = McpServer("files", ["python", "server.py"])
    [tool.name for tool in server.list_tools()]  # ['read_file']
    server.close()
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ..engine.loop import EngineLoop, engine_loop, here
from ..errors import RegistrationError, ServerFailed
from .mcp_processes import ServerProcess

__all__ = ["IDLE_PING", "START_TIMEOUT", "STDERR_TAIL", "TIMEOUT", "McpServer"]

TIMEOUT = 60.0  # seconds a call (or a start) may take before the server counts as hung
STDERR_TAIL = 2_000  # characters of the server's stderr quoted in a failure
IDLE_PING = 0.25  # seconds without a call after which the next one first pings the server
START_TIMEOUT = 30.0  # seconds a server may take to start (importing an SDK is slow on a loaded machine)


class _Connection:
    """One started server process and its initialized session, owned by one task (anyio's scopes must be
    entered and left by the same task); ``stop`` ends it."""

    def __init__(self) -> None:
        self.session: Any = None
        self.tools: list[Any] = []
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.used = 0.0  # the loop's time when a call last ended
        self.process = ServerProcess()

    @property
    def pids(self) -> list[int]:
        """Its server's process id, once the server has written it (an empty list before)."""
        return self.process.pids

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
            conn.process.kill()  # a server that ignored the SDK's shutdown (or hung in it)
            conn.process.forget()
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
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        program = self.command[0]
        if os.sep not in program and shutil.which(program, path=self.env.get("PATH", os.environ.get("PATH"))) is None:
            raise ServerFailed(f"MCP server {self.name!r} could not start: no program {program!r} on PATH")
        conn, ready = _Connection(), asyncio.get_running_loop().create_future()
        command = conn.process.watched(self.command)
        params = StdioServerParameters(command=command[0], args=command[1:], env=self.env or None, cwd=self.cwd)
        self.starts += 1

        async def own() -> None:
            try:
                async with (
                    stdio_client(params, errlog=self._stderr) as (read, write),
                    _session_class()(read, write) as session,
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
                conn.process.kill()
                conn.process.forget()

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
            conn.process.kill()  # at once, and for certain: it hangs
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


@functools.cache
def _session_class() -> type:
    """The SDK's ``ClientSession`` without its own check of a result against the tool's ``outputSchema``.

    That check raises a bare ``RuntimeError`` (no issues, and a healthy server's answer would pass for its
    failure). The action's ``output_schema`` is the tool's, so ``calling.classify`` judges the value instead:
    a refused one fails the call as ``InvalidOutput`` with its ``issues``, journaled like any failure.
    """
    from mcp import ClientSession

    class Session(ClientSession):
        async def validate_tool_result(self, name: str, result: Any) -> None:
            return None

    return Session


def _connection_closed() -> int:
    from mcp.types import CONNECTION_CLOSED

    return int(CONNECTION_CLOSED)


def _text_of(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)  # an exception group: anyio's task groups wrap what failed in them
    if isinstance(inner, tuple) and inner:
        return "; ".join(_text_of(e) for e in inner)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
