"""An MCP server for the tests whose tools break their own ``outputSchema``: ``python liar.py``.

Written with the SDK's low-level server API, which sends a result as given (the high-level one builds
structured content from a function's return type, so it cannot lie). Every tool but ``write`` declares
``{n: integer, items?: [{id: integer}]}``: ``wrong`` returns ``items[1].id`` as a string, ``textonly`` returns
text alone, ``right`` returns what it declares. ``write`` (destructive by the spec's default, no output
schema) is there to pause a run for approval. Each call appends ``PID TOOL`` to ``$MCP_CALL_LOG`` when set.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool, ToolAnnotations

OUT = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}},
    },
    "required": ["n"],
}
READ_ONLY = ToolAnnotations(read_only_hint=True)
TOOLS = [
    Tool(name=name, description=about, input_schema={"type": "object"}, output_schema=OUT, annotations=READ_ONLY)
    for name, about in [("wrong", "items[1].id is a string"), ("textonly", "text only"), ("right", "as declared")]
] + [Tool(name="write", description="needs approval", input_schema={"type": "object"})]
STRUCTURED: dict[str, Any] = {
    "wrong": {"n": 2, "items": [{"id": 1}, {"id": "two"}]},
    "right": {"n": 1, "items": [{"id": 1}]},
}


async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
    return ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: Any) -> CallToolResult:
    if os.environ.get("MCP_CALL_LOG"):
        with open(os.environ["MCP_CALL_LOG"], "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()} {params.name}\n")
    structured = STRUCTURED.get(params.name)
    text = "hello" if structured is None else str(structured)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


server = Server("liar", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
