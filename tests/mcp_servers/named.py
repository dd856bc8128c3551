"""An MCP server for the tests whose tools are named on its command line: ``python named.py NAME...``.

Each tool echoes its ``text`` argument with the tool's own name in front, so a test can tell which one ran.
The tool ``stubborn`` (when named) hangs for good: it ignores SIGTERM and keeps the process alive after
its stdin closes, so only SIGKILL ends it. Each call appends ``PID NAME`` to ``$MCP_CALL_LOG`` when set.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("named", log_level="WARNING")


def _echo(name: str):
    def echo(text: str = "") -> str:
        if os.environ.get("MCP_CALL_LOG"):
            with open(os.environ["MCP_CALL_LOG"], "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()} {name}\n")
        if name == "stubborn":
            FOREVER.wait()
        return f"{name}: {text}"

    return echo


FOREVER = threading.Event()  # never set
if "stubborn" in sys.argv[1:]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=FOREVER.wait).start()  # not a daemon: the process outlives its stdin closing

for tool_name in sys.argv[1:]:
    server.tool(name=tool_name, annotations=ToolAnnotations(read_only_hint=True))(_echo(tool_name))

if __name__ == "__main__":
    server.run()
