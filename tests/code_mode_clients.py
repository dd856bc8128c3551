"""What the rollback and saved-script tests drive: a notebook shell with the extension, and the MCP server."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def notebook_shell(folder: Path, monkeypatch: Any) -> Iterator[Any]:
    """An IPython shell with ``%load_ext jupyter_sandbox``, its default store under ``folder``."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.testing.globalipapp import start_ipython

    import jupyter_sandbox
    from jupyter_sandbox import notebook

    monkeypatch.chdir(folder)
    start_ipython()
    shell = InteractiveShell.instance()
    notebook.close_session()
    jupyter_sandbox.load_ipython_extension(shell)
    try:
        yield shell
    finally:
        notebook.close_session()


def with_mcp_server(store: str, flags: list[str], errlog: Path, work: Callable[[Any, dict], Awaitable[None]]) -> dict:
    """Start ``jupyter-sandbox mcp`` over ``store`` with ``flags``, run ``work(session, tools)``; return the tools."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = ["-m", "jupyter_sandbox.mcp", "--store", store, "--actions", "tests.mcp_actions:register", *flags]
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), args=args)
    tools: dict = {}

    async def client() -> None:
        async with stdio_client(params, errlog=open(errlog, "a")) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            tools.update({t.name: t for t in (await session.list_tools()).tools})
            await work(session, tools)

    anyio.run(client)
    return tools
