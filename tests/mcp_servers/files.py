"""A small MCP server for the tests, written with the SDK's server API; run as ``python files.py [NAME]``.

Its tools: ``read_file`` (read-only), ``write_file`` (destructive by the spec's default), ``fail`` (a
result with isError), ``refuse`` (a protocol error), ``crash`` (the process exits mid-call), ``sleep``
(async, for hangs and concurrency), ``meet`` (returns once ``count`` calls are in flight at once:
concurrency without timing).
Every call is appended to the file named by ``$MCP_CALL_LOG`` (when set), so a test can see which calls
reached a server.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, ToolAnnotations
from pydantic import BaseModel

NAME = sys.argv[1] if len(sys.argv) > 1 else "files"
server = MCPServer(NAME, log_level="WARNING")
FILES: dict[str, str] = {"/readme.txt": "hello from " + NAME}
arrived = 0
everyone = anyio.Event()


def logged(tool: str) -> None:
    path = os.environ.get("MCP_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{NAME} {os.getpid()} {tool}\n")


class Page(BaseModel):
    path: str
    text: str
    size: int


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_file(path: str) -> Page:
    """Read a file by its path."""
    logged("read_file")
    if path not in FILES:
        raise ValueError(f"no such file: {path}")
    return Page(path=path, text=FILES[path], size=len(FILES[path]))


@server.tool()
def write_file(path: str, text: str) -> str:
    """Write a file (replacing it)."""
    logged("write_file")
    FILES[path] = text
    return f"wrote {len(text)} characters to {path}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def fail(reason: str) -> str:
    """Always fails, with the reason."""
    logged("fail")
    raise ToolError(f"it failed: {reason}")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def refuse(why: str) -> str:
    """Answers with a protocol error (a JSON-RPC error, not a result)."""
    logged("refuse")
    raise MCPError(INVALID_PARAMS, f"refused: {why}")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def crash() -> str:
    """Writes to stderr and exits the process mid-call."""
    logged("crash")
    print(f"{NAME}: about to crash", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def sleep(seconds: float) -> str:
    """Sleep, then answer."""
    logged("sleep")
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def meet(count: int) -> dict:
    """Return once `count` calls of meet are in flight together (or fail after 20 s)."""
    global arrived
    logged("meet")
    arrived += 1
    if arrived >= count:
        everyone.set()
    with anyio.fail_after(20):
        await everyone.wait()
    return {"met": count}


if __name__ == "__main__":
    print(f"{NAME}: started", file=sys.stderr, flush=True)
    server.run()
