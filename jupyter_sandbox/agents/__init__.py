"""Code mode: the sandbox as an agent's tool.

- ``catalog``: each action's name, description and input/output JSON Schema (pydantic, from type hints),
  and the validation a call's input meets where it enters.
- ``validators``: the checks an input meets, built from a type (pydantic) or a JSON Schema (jsonschema).
- ``input_issues``: what an input that does not fit is told, alike whichever library checked it.
- ``typescript``: the script's world as TypeScript declarations, for a model to read and ``tsc`` to check.
- ``schema_types``: one JSON Schema as a TypeScript type (the declarations' inputs and outputs).
- ``tool``: ``SandboxTool`` (``Sandbox.tool()``), its OpenAI and Anthropic definitions.
- ``tool_result``: ``ToolResult``, what one tool call reports, and the notes under each status.
- ``content``: the text handed back to the model, cut to a budget by structure.
- ``mcp_client``: an MCP server's tools registered as actions (``Sandbox.mcp``); ``mcp_session``: one server's
  process and session on the engine's loop; ``mcp_processes``: no server process outlives its owner;
  ``mcp_tools``: the tools as actions, their results as values.

Reached through the facade: ``sb.catalog()``, ``sb.declarations()``, ``sb.tool()``.
"""
