"""The sandbox's MCP server (``python -m jupyter_sandbox.mcp``) over stdio, driven from a test's sync code."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def served(folder: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[Any]:
    """A client session with a server over ``folder/runs.sqlite`` started with ``options``: yields
    ``(call, tools)``, ``call(tool, arguments)`` giving the ``CallToolResult`` and ``tools`` the listed tools."""
    from anyio.from_thread import start_blocking_portal
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(ROOT),
        args=["-m", "jupyter_sandbox.mcp", "--store", str(folder / "runs.sqlite"), *options],
        env={**os.environ, **(env or {})},
    )

    @contextlib.asynccontextmanager
    async def session() -> Any:
        with open(folder / "err", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as client:
                await client.initialize()
                yield client

    with start_blocking_portal() as portal, portal.wrap_async_context_manager(session()) as client:
        call: Callable[[str, dict[str, Any]], Any] = lambda tool, arguments: portal.call(  # noqa: E731
            client.call_tool, tool, arguments
        )
        yield call, portal.call(client.list_tools).tools
